#!/usr/bin/env bash
# ccusage 20.0.24 (npm; a native binary) on the corpora, its JSON written to
# testdata/ccusage-20.0.24/, which `pisces stats`'s tests compare with. Run from the
# repository's root; needs npm and nothing else (ccusage reads files only, and --offline
# keeps it from fetching prices).
set -euo pipefail
root=$(pwd)
out=$root/testdata/ccusage-20.0.24
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm install --prefix "$work/npm" --no-audit --no-fund --silent ccusage@20.0.24 >/dev/null
ccusage=$work/npm/node_modules/.bin/ccusage
mkdir -p "$out"
# Sorted keys and two-space indents, so that a rerun changes only what ccusage changed.
pretty() { python3 -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout, indent=2, sort_keys=True); print()'; }

# Claude Code: every top-level session of the corpus, in one project folder.
mkdir -p "$work/claude/projects/-home-dev-todo-cli"
cp testdata/claude-code-2.1.332/*.jsonl "$work/claude/projects/-home-dev-todo-cli/"
CLAUDE_CONFIG_DIR=$work/claude TZ=UTC "$ccusage" claude session --json --offline | pretty >"$out/claude-code-2.1.332.json"

# pi: the fork family (a source, its /fork, /clone and --fork).
mkdir -p "$work/pi/--home-dev-todo-cli--"
cp testdata/pi-1.6.0/1[2-5]-*.jsonl "$work/pi/--home-dev-todo-cli--/"
TZ=UTC "$ccusage" pi session --pi-path "$work/pi" --json --offline | pretty >"$out/pi-fork-family.json"

# Codex: a rollout with no forks, and a fork family.
for corpus in 01-exec-and-patch 03-forks; do
    CODEX_HOME=$root/testdata/codex-0.171.0/$corpus TZ=UTC "$ccusage" codex session --json --offline \
        | pretty >"$out/codex-$corpus.json"
done
echo "wrote $(ls "$out" | wc -l) files to testdata/ccusage-20.0.24/"
