#!/usr/bin/env python3
"""A large Codex CLI store for the benchmark: one ~100 MB thread and 50 forks of it, made from
the lines the real client wrote.

usage: gen-codex-family.py --mb 100 --forks 50 --seed 1 --out DIR

Takes the line shapes of testdata/codex-0.171.0/01-exec-and-patch (one turn: task_started,
turn_context, the user message, a call and its output, the answer, token records and counts,
task_complete) and repeats them with new ids and ordinals in
DIR/sessions/2026/12/02/rollout-…-<thread id>.jsonl. Each fork starts at the end of a turn of
the thread (one in five at a turn of an earlier fork: a fork of a fork) and adds a few turns of
its own, as `codex exec fork` writes one (a `session_meta` with `history_base`, no copied
history). Every ~3,000 lines the thread is compacted (a `compacted` line, as the client writes
one when the context fills up). Prints a JSON summary on stderr: the files, the root, and the fork whose history is
longest (`deep_fork`, for `pisces path`).
"""
import argparse
import copy
import json
import random
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = next((REPO / "testdata" / "codex-0.171.0" / "01-exec-and-patch").rglob("rollout-*.jsonl"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--forks", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compact-every", type=int, default=3000, help="lines between compactions of the thread")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    lines = [json.loads(l) for l in SOURCE.open()]
    meta = lines[0]
    # One turn's lines: from the first task_started to the first task_complete.
    start = next(k for k, d in enumerate(lines) if d["type"] == "event_msg" and d["payload"]["type"] == "task_started")
    end = next(k for k, d in enumerate(lines) if d["type"] == "event_msg" and d["payload"]["type"] == "task_complete")
    turn = lines[start:end + 1]
    # A compaction (as the client writes one when the context is full): its `compacted` line.
    compact_src = next((REPO / "testdata" / "codex-0.171.0" / "04-compact").rglob("rollout-*.jsonl"))
    compacted = next(json.loads(l) for l in compact_src.open() if '"type":"compacted"' in l)
    filler = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz     \n") for _ in range(3000))
    day = Path(a.out) / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True, exist_ok=True)
    clock = [0]

    def new_uuid():
        # UUIDv7-like: a time-ordered first half (the client's thread ids are UUIDv7, and a
        # fork's is newer than its parent's), random rest.
        clock[0] += 1
        hi = (0x01a238f7 << 96) | (clock[0] << 80) | (0x7 << 76)
        return str(uuid.UUID(int=hi | (rnd.getrandbits(62) | (0b10 << 62))))

    def ts():
        return "2026-12-02T22:54:%02d.%03dZ" % (clock[0] // 1000 % 60, clock[0] % 1000)

    def write_turn(out, ordinal, thread):
        """One turn's lines at `ordinal`; returns the next ordinal and the bytes written."""
        n = 0
        call = "call_" + uuid.UUID(int=rnd.getrandbits(128)).hex[:24]
        for d in turn:
            d = copy.deepcopy(d)
            d["ordinal"] = ordinal
            d["timestamp"] = ts()
            p = d.get("payload", {})
            if "thread_id" in p:
                p["thread_id"] = thread
            if d["type"] == "response_item":
                if "id" in p:
                    p["id"] = p["id"].split("_")[0] + "_" + uuid.UUID(int=rnd.getrandbits(128)).hex[:24]
                if "call_id" in p:
                    p["call_id"] = call
                if p.get("type") == "function_call_output":
                    p["output"] = p["output"] + filler[: rnd.randint(500, 3000)]
                if p.get("type") == "message" and p.get("role") == "assistant":
                    p["content"][0]["text"] = "Answer " + filler[: rnd.randint(100, 1500)]
                if p.get("type") == "message" and p.get("role") == "user" and "[[" in json.dumps(p):
                    p["content"][0]["text"] = f"Prompt {ordinal}: why does npm test fail?"
            b = (json.dumps(d, separators=(",", ":")) + "\n").encode()
            out.write(b)
            n += len(b)
            ordinal += 1
        return ordinal, n

    def new_file(thread):
        return day / f"rollout-2026-12-02T22-54-{clock[0] // 1000 % 60:02d}-{thread}.jsonl"

    # The root thread.
    root = new_uuid()
    files = {root: new_file(root)}
    ends = {root: []}  # (ordinal after a turn, byte offset) of each thread's turns
    base = {}
    with files[root].open("wb") as out:
        m = copy.deepcopy(meta)
        m["payload"]["id"] = m["payload"]["session_id"] = root
        b = (json.dumps(m, separators=(",", ":")) + "\n").encode()
        out.write(b)
        size, ordinal = len(b), 1
        since = 0
        compactions = 0
        while size < a.mb * 1e6:
            ordinal, n = write_turn(out, ordinal, root)
            size += n
            since += len(turn)
            if since >= a.compact_every:
                c = copy.deepcopy(compacted)
                c["ordinal"], c["timestamp"] = ordinal, ts()
                b = (json.dumps(c, separators=(",", ":")) + "\n").encode()
                out.write(b)
                size += len(b)
                ordinal += 1
                since = 0
                compactions += 1
            ends[root].append((ordinal, size))
    # The forks.
    forks = []
    for k in range(a.forks):
        parents = [root] + [f for f in forks]
        parent = root if k < 5 or rnd.random() < 0.8 else rnd.choice(forks)
        point, offset = rnd.choice(ends[parent])
        thread = new_uuid()
        files[thread] = new_file(thread)
        with files[thread].open("wb") as out:
            m = copy.deepcopy(meta)
            p = m["payload"]
            p["id"] = p["session_id"] = thread
            p["forked_from_id"] = parent
            p["forked_from_ordinal_exclusive"] = point
            p["history_base"] = {"thread_id": parent, "end_ordinal_exclusive": point, "end_byte_offset": offset}
            m["ordinal"] = point
            b = (json.dumps(m, separators=(",", ":")) + "\n").encode()
            out.write(b)
            size, ordinal = len(b), point + 1
            ends[thread] = []
            for _ in range(rnd.randint(3, 12)):
                ordinal, n = write_turn(out, ordinal, thread)
                size += n
                ends[thread].append((ordinal, size))
        base[thread] = parent
        forks.append(thread)
        del parents

    def depth(t):
        return 0 if t not in base else 1 + depth(base[t])

    deep = max(forks, key=lambda t: (depth(t), t))
    chain = [deep]
    while chain[-1] in base:
        chain.append(base[chain[-1]])
    def lines(f):
        with f.open("rb") as h:
            return sum(1 for _ in h)

    # The deep fork's history: its own lines and each ancestor's up to the fork point.
    path_len = lines(files[deep])
    for child, parent in zip(chain, chain[1:]):
        hb = json.loads(files[child].open().readline())["payload"]["history_base"]
        with files[parent].open("rb") as h:
            path_len += h.read(hb["end_byte_offset"]).count(b"\n")
    summary = {
        "entries": sum(lines(f) for f in files.values()),
        "path_len": path_len,
        "compactions": compactions,
        "root": str(files[root]),
        "deep_fork": str(files[deep]),
        "deep_fork_reads": [str(files[t]) for t in chain],
        "files": [str(f) for f in files.values()],
        "bytes": sum(f.stat().st_size for f in files.values()),
        "forks": len(forks),
        "forks_of_forks": sum(1 for t in forks if base[t] != root),
    }
    print(json.dumps(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
