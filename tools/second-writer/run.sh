#!/usr/bin/env bash
# tools/second-writer/run.sh [N]: the real pi and pisces append to one session file at the
# same time, N entries each (default 300): pi's SessionManager appends user messages
# (pi-append.mjs) while `pisces label` labels the current leaf N times and, every fifth
# label, `pisces agent` runs a turn (against model.py, a scripted model). Then: every line
# is whole and parses, pi reopens the file and sees every entry both wrote, and pisces checks
# it clean. Needs the shared checkout beside this repository (../shared, for the
# real pi) and the npm registry once; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-300}
bash ../shared/pi-oracle/install.sh 1.6.0 >/dev/null
cargo build --release --quiet
tmp=$(mktemp -d)
f=$tmp/s.jsonl
# The agent's tools run in the session's cwd: one that exists here.
sed 's|"cwd":"/home/dev/todo-cli"|"cwd":"/tmp"|' testdata/pi-1.6.0/22-two-fix-attempts.jsonl >"$f"
before=$(grep -c . "$f")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 tools/second-writer/model.py "$port" &
model=$!
trap 'kill $model 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
node tools/second-writer/pi-append.mjs "$f" "$n" >"$tmp/pi-ids" &
pi=$!
# Start once pi is writing (Node takes a second to load pi), so that the two interleave.
while [ ! -s "$tmp/pi-ids" ] && kill -0 "$pi" 2>/dev/null; do sleep 0.05; done
for i in $(seq "$n"); do
    target/release/pisces label "$f" @ "pisces-$i" >/dev/null 2>&1
    if [ $((i % 5)) -eq 0 ]; then
        SECOND_WRITER_KEY=x target/release/pisces agent --session "$f" -p "agent turn $i" \
            --model anthropic/claude-sonnet-4-5 --base-url "http://127.0.0.1:$port" \
            --api-key-env SECOND_WRITER_KEY >/dev/null
    fi
done
wait "$pi"
node ../shared/pi-oracle/entries.mjs "$f" >"$tmp/pi.json"
# pisces reads it back without a warning.
target/release/pisces check "$f" >/dev/null
python3 - "$f" "$before" "$n" "$tmp/pi-ids" "$tmp/pi.json" <<'PY'
import json, sys
f, before, n, ids, pi_json = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
lines = open(f, "rb").read().split(b"\n")
assert lines[-1] == b"", "the file does not end with a newline"
entries = [json.loads(l) for l in lines[:-1]]  # raises on a damaged line
labels = {e["label"] for e in entries if e.get("type") == "label" and str(e.get("label", "")).startswith("pisces-")}
pi_ids = open(ids).read().split()
def text(e):
    c = e.get("message", {}).get("content")
    return c[0].get("text", "") if isinstance(c, list) and c and isinstance(c[0], dict) else ""
ours = [e for e in entries if e.get("type") == "message" and text(e).startswith("pi append ")]
# Interleaved: how often the writer changes from one line to the next.
turns = [e for e in entries if e.get("type") == "message" and text(e).startswith("agent turn ")]
replies = [e for e in entries if e.get("type") == "message" and text(e) == "agent reply"]
assert len(turns) == len(replies) == n // 5, f"{len(turns)} agent prompts and {len(replies)} replies of {n // 5}"
who = ["pi" if text(e).startswith("pi append ") else "pisces" for e in entries[before:]]
switches = sum(1 for a, b in zip(who, who[1:]) if a != b)
# The agent also records its system prompt where the path it continues lacks it (pi 1.6's
# system messages): pi's appends move the leaf between branches.
systems = sum(1 for e in entries[before:] if e.get("type") == "message" and e["message"].get("role") == "system")
want = before + 2 * n + 2 * (n // 5) + systems
assert len(entries) == want, f"{len(entries)} lines, expected {want}"
assert labels == {f"pisces-{i}" for i in range(1, n + 1)}, f"{len(labels)} of pisces's {n} labels"
assert len(ours) == n and {e["id"] for e in ours} == set(pi_ids), f"{len(ours)} of pi's {n} messages"
pi = json.load(open(pi_json))
assert pi["entryCount"] == len(entries) - 1, f"pi reopened {pi['entryCount']} entries of {len(entries) - 1}"
print(f"second writer: {n} pi appends, {n} pisces labels and {n // 5} agent turns ({systems} system prompts recorded), the writer changing {switches} times; {len(entries)} whole lines; pi reopens {pi['entryCount']} entries")
PY
