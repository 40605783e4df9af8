#!/usr/bin/env bash
# Optional, needs the project's shared checkout beside this repository (../shared) with the
# pi oracle installed (../shared/pi-oracle/install.sh): every fork pisces makes of every leaf
# of every corpus in testdata/, reopened by the real pi 1.6.0 (same context, same labels), and
# compared with pi's own createBranchedSession of the same leaf; then --all and --linear per
# file. Sources are never written (the check also compares their sha256 before and after).
#
#   bash tools/fork-oracle-check.sh                       # every corpus in testdata/
#   bash tools/fork-oracle-check.sh testdata/pi-1.6.0     # one corpus
#   bash tools/fork-oracle-check.sh /some/dir/of/sessions-with-expected/
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${PISCES_SHARED:-../shared}
if [ ! -d "$shared/pi-oracle" ]; then
  echo "fork-oracle-check: $shared/pi-oracle not found; this check needs the shared checkout" >&2
  exit 2
fi
cargo build --quiet
sums() { find "${@:-testdata}" -name '*.jsonl' -print0 | sort -z | xargs -0 sha256sum; }
before=$(sums "$@")
status=0
node tools/fork-oracle-check.mjs "$PWD/target/debug/pisces" "$shared" "$@" || status=$?
if [ "$before" != "$(sums "$@")" ]; then
  echo "FAIL a source file changed during the check" >&2
  status=1
fi
exit $status
