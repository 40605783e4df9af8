#!/usr/bin/env bash
# Regenerates the /tree goldens of testdata/edge/ with the real pi (1.6.0, the oracle in
# ../shared/pi-oracle): for each session file and each of pi's five filters,
# expected/<stem>/tree.<filter>.txt = exactly what `tree.mjs FILE --filter <filter>` prints
# (pi's default leaf, HOME /home/dev, no width limit), the same names make-expected.mjs uses
# for the other corpora. Files pi cannot open are in errors/ and have no goldens.
# Checks with sha256 that the oracle left each file untouched. About 4 minutes.
# Where pi's selector itself throws (e.g. a branch_summary without `summary`: pi calls
# `normalize(undefined)`), there is no golden for that file and filter; the script says so.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ORACLE="${PI_ORACLE_DIR:-$HERE/../../../shared/pi-oracle}"

# Arguments: session files to do (default: all of edge/).
if [ $# -gt 0 ]; then files=("$@"); else files=("$HERE"/*.jsonl); fi
for f in "${files[@]}"; do
	stem="$(basename "$f" .jsonl)"
	mkdir -p "$HERE/expected/$stem"
	before="$(sha256sum "$f")"
	for filter in default no-tools user-only labeled-only all; do
		out="$HERE/expected/$stem/tree.$filter.txt"
		if timeout 60 node "$ORACLE/tree.mjs" "$f" --filter "$filter" > "$out.tmp" 2> "$out.err"; then
			mv "$out.tmp" "$out"
			echo "expected/$stem/tree.$filter.txt"
		else
			rm -f "$out.tmp" "$out"
			echo "no golden: pi's /tree fails on $stem --filter $filter: $(grep -m1 Error "$out.err")" >&2
		fi
		rm -f "$out.err"
	done
	[ "$(sha256sum "$f")" = "$before" ] || { echo "oracle modified $f" >&2; exit 1; }
done
