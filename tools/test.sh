#!/usr/bin/env bash
# The test command (README.md): installs what the tests need that a fresh machine lacks,
# then runs every test. Only the browser tests of `pisces export --html` need something
# beyond Rust and Python 3: Chromium and chromedriver (Debian's chromium, chromium-driver).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromedriver >/dev/null || ! { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; then
  echo "tools/test.sh: installing Chromium and chromedriver for the browser tests (apt-get)" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "tools/test.sh: need root (or sudo) to apt-get install chromium chromium-driver" >&2; exit 2; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
    || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q chromium chromium-driver >/dev/null; }
fi
cargo test --locked
