#!/usr/bin/env bash
# Computes the goldens of testdata/summaries/ (listed in cases.json, written by make.py)
# with the real pi 1.6.0: batch.mjs runs each case's oracle function in one Node process
# (pi is loaded once; --apply cases run as their own processes), exactly as
# `node ORACLE/<script> testdata/<file> <args> --line-ids` would, and checks that no
# session file changed. Cases the oracle cannot run are listed in oracle-failures.txt.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$HERE/compaction" "$HERE/branch" "$HERE/apply"
node "$HERE/batch.mjs" "$HERE/cases.json"
echo "$(find "$HERE/compaction" "$HERE/branch" "$HERE/apply" -name '*.json' | wc -l) goldens"
