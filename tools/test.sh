#!/usr/bin/env bash
# The test command (README.md): installs what the tests need that a fresh machine lacks,
# then runs every test. Beyond Rust and Python 3, the tests of `pisces export` need
# Chromium and chromedriver (Debian's chromium, chromium-driver: the page in a browser)
# and DuckDB's Python package (PyPI: queries over the Parquet tables).
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q "$@" >/dev/null 2>&1 \
    || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "$@" >/dev/null; }
}
if ! command -v chromedriver >/dev/null || ! { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; then
  echo "tools/test.sh: installing Chromium and chromedriver for the browser tests (apt-get)" >&2
  apt_install chromium chromium-driver
fi
if ! python3 -c 'import duckdb' 2>/dev/null; then
  echo "tools/test.sh: installing DuckDB's Python package for the Parquet tests (pip)" >&2
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  python3 -m pip install --quiet duckdb 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages duckdb \
    || python3 -m pip install --quiet --user --break-system-packages duckdb
fi
cargo test --locked
