#!/usr/bin/env bash
# Installs omp 18.2.3 (@oh-my-pi/pi-coding-agent) and the Bun it runs on (@oven/bun-linux-x64
# 1.4.4) from npm into $CLIENTS_HOME/omp (default ~/.cache/pisces-clients/omp): the same pinned
# packages as ../../../shared/clients/install.sh's `omp` case. About 1.5 GB. For regenerating
# testdata/omp-18.2.3 only; never run in CI (the tests read the committed files).
set -euo pipefail
CLIENTS_HOME=${CLIENTS_HOME:-$HOME/.cache/pisces-clients}
npm install --prefix "$CLIENTS_HOME/omp" --ignore-scripts --no-audit --no-fund \
  @oven/bun-linux-x64@1.4.4 @oh-my-pi/pi-coding-agent@18.2.3
ln -sfn "$CLIENTS_HOME/omp/node_modules" "$(dirname "$0")/node_modules"
