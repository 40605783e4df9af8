#!/usr/bin/env bash
# Optional, needs the project's shared checkout beside this repository (../shared) and
# the npm registry: re-checks the goldens in testdata/ against the real pi, live, then
# compares pisces with them.
#
#   bash tools/live-oracle.sh            # every corpus in testdata/ with an expected/ folder
#
# 1. installs pi 1.6.0 and 0.73.1 (../shared/pi-oracle/install.sh, cached in ~/.cache);
# 2. `make-expected.mjs --check`: pi recomputes every golden of the pi-written corpora
#    and must print exactly what is committed (testdata/edge/ is checked with its own
#    make-expected.sh, which lists its leaves);
# 3. `fidelity.py`: `pisces path` against those goldens.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared
if [ ! -d "$shared/pi-oracle" ]; then
  echo "live-oracle: $shared/pi-oracle not found; this check needs the shared checkout" >&2
  exit 2
fi
bash "$shared/pi-oracle/install.sh"
cargo build --quiet
node "$shared/pi-oracle/make-expected.mjs" testdata/pi-1.6.0 testdata/pi-0.73.1 testdata/real --check
python3 "$shared/tools/fidelity.py" target/debug/pisces testdata/pi-1.6.0 testdata/pi-0.73.1 testdata/real testdata/edge
# 4. sessions written by `pisces agent` (against the scripted model server) read by the real pi,
#    pi's JSON mode beside `pisces agent --mode json`, and pi's request body for every prompt
#    the agent appended (which must be the body pisces sent)
PISCES_LIVE_ORACLE=1 cargo test --quiet --test cli -- live_oracle
PISCES_LIVE_ORACLE=1 cargo test --quiet --test cli -- agent_payload
# 5. the built-in tools against pi's own (tools/pi-tools.mjs): every result, file and log
#    (grep/find scenarios need rg and a recent fd on PATH, as pi itself does)
PISCES_LIVE_ORACLE=1 cargo test --quiet --test cli -- tools_live
