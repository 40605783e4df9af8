#!/usr/bin/env bash
# pi's own /tree renders of verified-tree.jsonl, the session the pi spec's §3.2 describes
# ("Verified render (1.6.0, default filter, width 100, leaf "That worked")"), with the leaf
# a0000013 ("That worked") selected. Needs the project's shared checkout beside the repo.
set -euo pipefail
cd "$(dirname "$0")"
tree=../../../shared/pi-oracle/tree.mjs
node "$tree" verified-tree.jsonl a0000013 --width 100 > tree.default.w100.txt
node "$tree" verified-tree.jsonl a0000013 --width 100 --filter all > tree.all.w100.txt
node "$tree" verified-tree.jsonl a0000013 --width 100 --filter user-only > tree.user-only.w100.txt
node "$tree" verified-tree.jsonl a0000013 --width 30 > tree.default.w30.txt
