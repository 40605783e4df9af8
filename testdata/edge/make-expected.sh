#!/usr/bin/env bash
# Regenerates testdata/edge/expected/ with the real pi (the oracle in ../shared/pi-oracle).
# Written by make.py (python3 testdata/edge/make.py); every leaf is listed explicitly.
# Each golden is exactly what context.mjs printed, re-indented with 1 space and with `file`
# made relative to testdata/ (edge/<stem>.jsonl).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ORACLE="${PI_ORACLE_DIR:-$HERE/../../../shared/pi-oracle}"

golden() {  # golden STEM NAME [ARGS...]
	local stem="$1" name="$2"; shift 2
	local f="$HERE/$stem.jsonl" out="$HERE/expected/$stem/$name.context.json"
	mkdir -p "$HERE/expected/$stem"
	local before; before="$(sha256sum "$f")"
	timeout 60 node "$ORACLE/context.mjs" "$f" "$@" --line-ids > "$out"
	[ "$(sha256sum "$f")" = "$before" ] || { echo "oracle modified $f" >&2; exit 1; }
	python3 - "$out" "edge/$stem.jsonl" <<'EOF'
import json, sys
p, rel = sys.argv[1], sys.argv[2]
d = json.load(open(p, encoding='utf-8'))
d['file'] = rel
with open(p, 'w', encoding='utf-8') as f:
    json.dump(d, f, indent=1, ensure_ascii=False)
    f.write('\n')
EOF
	echo "expected/$stem/$name.context.json"
}

rm -rf "$HERE/expected"

golden 01-malformed-middle-line default
golden 01-malformed-middle-line null --null
golden 02-crlf-line-endings default
golden 02-crlf-line-endings null --null
golden 03-no-final-newline default
golden 03-no-final-newline null --null
golden 04-truncated-last-line default
golden 04-truncated-last-line null --null
golden 05-blank-and-whitespace-lines default
golden 05-blank-and-whitespace-lines null --null
golden 06-garbage-before-header default
golden 06-garbage-before-header null --null
golden 07-duplicate-header-0.73.1 default
golden 07-duplicate-header-0.73.1 null --null
golden 08-second-header-mid-file default
golden 08-second-header-mid-file null --null
golden 09-json-non-object-lines default
golden 09-json-non-object-lines null --null
golden 10-json-null-and-falsy-lines default
golden 10-json-null-and-falsy-lines null --null
golden 11-trailing-non-object-line default
golden 11-trailing-non-object-line null --null
golden 11-trailing-non-object-line 637643a7 637643a7
golden 12-damaged-entry-tail default
golden 12-damaged-entry-tail null --null
golden 12-damaged-entry-tail 2fdee5bd 2fdee5bd
golden 12-damaged-entry-tail 7384f6d0 7384f6d0
golden 13-v1-basic default
golden 13-v1-basic null --null
golden 13-v1-basic L8 line:8
golden 14-v1-compaction-index-header-and-self default
golden 14-v1-compaction-index-header-and-self null --null
golden 14-v1-compaction-index-header-and-self L6 line:6
golden 15-v1-compaction-index-past default
golden 15-v1-compaction-index-past null --null
golden 15-v1-compaction-index-past L6 line:6
golden 16-v1-header-with-tree-entries default
golden 16-v1-header-with-tree-entries null --null
golden 16-v1-header-with-tree-entries L5 line:5
golden 17-v2-hookmessage default
golden 17-v2-hookmessage null --null
golden 17-v2-hookmessage 2f5baf35 2f5baf35
golden 18-v3-custom-role-messages default
golden 18-v3-custom-role-messages null --null
golden 19-leaf-label default
golden 19-leaf-label null --null
golden 19-leaf-label 82d89883 82d89883
golden 20-leaf-session-info default
golden 20-leaf-session-info null --null
golden 21-leaf-usage default
golden 21-leaf-usage null --null
golden 22-leaf-context-edit default
golden 22-leaf-context-edit null --null
golden 22-leaf-context-edit ad457bad ad457bad
golden 23-orphans default
golden 23-orphans null --null
golden 23-orphans 256ae15f 256ae15f
golden 23-orphans 22492146 22492146
golden 23-orphans f69b09b6 f69b09b6
golden 24-duplicate-ids default
golden 24-duplicate-ids null --null
golden 24-duplicate-ids 811797c2 811797c2
golden 24-duplicate-ids 4f555d82 4f555d82
golden 25-children-out-of-order default
golden 25-children-out-of-order null --null
golden 25-children-out-of-order 2702855a 2702855a
golden 25-children-out-of-order 03220fd7 03220fd7
golden 26-equal-and-invalid-timestamps default
golden 26-equal-and-invalid-timestamps null --null
golden 26-equal-and-invalid-timestamps 557c1ce0 557c1ce0
golden 26-equal-and-invalid-timestamps ab24005b ab24005b
golden 26-equal-and-invalid-timestamps 3437e2f1 3437e2f1
golden 26-equal-and-invalid-timestamps 896c1457 896c1457
golden 27-cycles-off-path default
golden 27-cycles-off-path null --null
golden 28-compaction-first-kept-missing default
golden 28-compaction-first-kept-missing null --null
golden 29-compaction-first-kept-off-path default
golden 29-compaction-first-kept-off-path null --null
golden 29-compaction-first-kept-off-path 8e694e10 8e694e10
golden 29-compaction-first-kept-off-path edf59074 edf59074
golden 30-compaction-retain-none default
golden 30-compaction-retain-none null --null
golden 30-compaction-retain-none 65fec922 65fec922
golden 31-two-compactions default
golden 31-two-compactions null --null
golden 31-two-compactions 398453d5 398453d5
golden 31-two-compactions 398a56cc 398a56cc
golden 32-older-compaction-in-kept-range default
golden 32-older-compaction-in-kept-range null --null
golden 33-compaction-on-sibling-branch default
golden 33-compaction-on-sibling-branch null --null
golden 33-compaction-on-sibling-branch 98c76c56 98c76c56
golden 34-compaction-system-in-kept-range default
golden 34-compaction-system-in-kept-range null --null
golden 34-compaction-system-in-kept-range 023f4b42 023f4b42
golden 35-system-replay default
golden 35-system-replay null --null
golden 35-system-replay 453d9b22 453d9b22
golden 35-system-replay 68f3f046 68f3f046
golden 36-system-mid-branch-and-tool-round default
golden 36-system-mid-branch-and-tool-round null --null
golden 37-context-edit-replacements default
golden 37-context-edit-replacements null --null
golden 37-context-edit-replacements 929db089 929db089
golden 37-context-edit-replacements e4fc26e9 e4fc26e9
golden 38-context-edit-sibling-branch default
golden 38-context-edit-sibling-branch null --null
golden 38-context-edit-sibling-branch 30d3ce55 30d3ce55
golden 39-context-edit-on-compaction default
golden 39-context-edit-on-compaction null --null
golden 39-context-edit-on-compaction 800836b2 800836b2
golden 40-context-edit-outside-kept-range default
golden 40-context-edit-outside-kept-range null --null
golden 40-context-edit-outside-kept-range c7786d17 c7786d17
golden 41-context-edit-system-bash-summary default
golden 41-context-edit-system-bash-summary null --null
golden 42-branch-summary-variants default
golden 42-branch-summary-variants null --null
golden 42-branch-summary-variants 0073213e 0073213e
golden 43-bash-execution-variants default
golden 43-bash-execution-variants null --null
golden 44-custom-message-variants default
golden 44-custom-message-variants null --null
golden 45-null-content default
golden 45-null-content null --null
golden 46-error-and-aborted-assistants default
golden 46-error-and-aborted-assistants null --null
golden 46-error-and-aborted-assistants 49bb1afd 49bb1afd
golden 46-error-and-aborted-assistants 54f91562 54f91562
golden 47-unanswered-tool-calls default
golden 47-unanswered-tool-calls null --null
golden 47-unanswered-tool-calls 77e5c5e1 77e5c5e1
