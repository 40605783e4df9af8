#!/usr/bin/env bash
# tools/fuzz.sh MINUTES [TARGET...]: runs every fuzz target (or the ones named) for an equal
# share of MINUTES with libFuzzer (cargo fuzz, on stable Rust: see FUZZING.md), one after
# the other, and appends what each did to fuzz/log.md: executions, coverage, crashes.
#
# Seed corpora are built from testdata/ (and fuzz/seeds/) into target/fuzz-corpus/, where
# libFuzzer keeps what it finds between runs. A crash or timeout is saved by libFuzzer under
# fuzz/artifacts/TARGET/; this script moves it to fuzz/regressions/TARGET/, which the
# normal test suite replays (tests/cli/fuzz_regressions.rs), so commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:?usage: tools/fuzz.sh MINUTES [TARGET...]}
shift
all=(load pi claude codex omp openclaw rev sse tool_args cache)
targets=("${@:-${all[@]}}")
if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --version 0.13.2 --locked
fi
root=$PWD
corpus=$root/target/fuzz-corpus
mkdir -p "$corpus" fuzz/regressions

# seed TARGET FILE...: copies the files (up to 512 KiB each) into TARGET's corpus.
seed() {
    local t=$1
    shift
    mkdir -p "$corpus/$t"
    local f
    for f in "$@"; do
        [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 524288 ] || continue
        cp "$f" "$corpus/$t/seed-$(sha1sum "$f" | cut -c1-16)"
    done
}
shopt -s globstar nullglob
seed pi testdata/pi-*/*.jsonl testdata/edge/*.jsonl testdata/real/*.jsonl
seed load testdata/pi-1.6.0/*.jsonl testdata/edge/*.jsonl testdata/claude-code-2.1.332/*.jsonl \
    testdata/codex-0.171.0/**/*.jsonl testdata/omp-18.2.3/**/*.jsonl testdata/openclaw-*/exports/*.jsonl
seed claude testdata/claude-code-2.1.332/**/*.jsonl testdata/claude-code-log/**/*.jsonl
seed codex testdata/codex-0.171.0/**/*.jsonl testdata/codex-older/**/*.jsonl
seed omp testdata/omp-18.2.3/**/*.jsonl
seed openclaw testdata/openclaw-*/**/*.jsonl
seed rev fuzz/seeds/rev/*
seed sse fuzz/seeds/sse/*
seed tool_args fuzz/seeds/tool_args/*
# The cache target reads a cache file's body: make one from the corpora's sessions.
if [ ! -e "$corpus/cache/seed-made" ]; then
    cargo build --quiet --release
    tmp=$(mktemp -d)
    for dir in testdata/pi-1.6.0 testdata/claude-code-2.1.332 testdata/codex-0.171.0/03-forks; do
        XDG_CACHE_HOME=$tmp target/release/pisces stats --by session "$dir"/**/*.jsonl >/dev/null 2>&1 || true
        XDG_CACHE_HOME=$tmp target/release/pisces ls "$dir"/**/*.jsonl >/dev/null 2>&1 || true
    done
    mkdir -p "$corpus/cache"
    for f in "$tmp"/pisces/*; do
        # Less the 16-byte magic and the 8-byte checksum (fuzzing::cache frames them).
        size=$(stat -c %s "$f")
        tail -c +17 "$f" | head -c $((size - 24)) >"$corpus/cache/seed-$(basename "$f")"
    done
    rm -rf "$tmp"
    touch "$corpus/cache/seed-made"
fi

(cd fuzz && cargo fuzz build -s none -O 2>&1 | tail -1)
share=$((minutes * 60 / ${#targets[@]}))
log=fuzz/log.md
{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): $minutes min over ${#targets[@]} targets, commit $(git rev-parse --short HEAD)"
    echo
    echo "| target | seconds | executions | exec/s | coverage (cov) | features (ft) | corpus | peak RSS | crashes |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >>"$log"
for t in "${targets[@]}"; do
    out=$(mktemp)
    mkdir -p "fuzz/artifacts/$t"
    # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: memory must stay
    # bounded; -max_len: session lines up to 256 KiB.
    (cd fuzz && cargo fuzz run -s none -O "$t" "$corpus/$t" -- \
        -max_total_time="$share" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
        -print_final_stats=1 -artifact_prefix="$root/fuzz/artifacts/$t/") >"$out" 2>&1 || true
    stat() { sed -n "s/.*stat::$1: *\([0-9]*\).*/\1/p" "$out" | tail -1; }
    execs=$(stat number_of_executed_units)
    rate=$(stat average_exec_per_sec)
    rss=$(stat peak_rss_mb)
    last=$(grep -E '#[0-9]+.*cov: ' "$out" | tail -1 || true)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
    units=$(sed -n 's/.*corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
    crashes=0
    for a in fuzz/artifacts/"$t"/*; do
        crashes=$((crashes + 1))
        mkdir -p "fuzz/regressions/$t"
        mv "$a" "fuzz/regressions/$t/$(basename "$a")"
    done
    echo "| $t | $share | ${execs:-0} | ${rate:-0} | ${cov:-?} | ${ft:-?} | ${units:-?} | ${rss:-?} MB | $crashes |" >>"$log"
    if [ "$crashes" -gt 0 ]; then
        echo "$t: $crashes input(s) saved in fuzz/regressions/$t/ (libFuzzer's output: $out)" >&2
        grep -m1 -A15 -E 'panicked|ERROR: libFuzzer' "$out" >&2 || true
    else
        rm -f "$out"
    fi
done
tail -n $((${#targets[@]} + 4)) "$log"
