#!/usr/bin/env python3
"""writer.py: a concurrent writer for OpenClaw agent databases, so a test can read while one writes.

usage: writer.py SRC DST [--session ID] [--seconds N] [--interval S] [--pairs K] [--no-copy] [--crash]

Copies the agent database SRC (e.g. testdata/openclaw-2026.9.6/state/agents/main/agent/
openclaw-agent.sqlite) to DST (never SRC itself; with --no-copy DST must already be a copy),
opens DST read-write in WAL mode with the pragmas OpenClaw uses (journal_mode=WAL,
wal_autocheckpoint=1000, journal_size_limit=64 MiB, busy_timeout=30000, foreign_keys=ON) and,
for N seconds (default 5), keeps appending transcript_events rows that continue one session:
each transaction (BEGIN IMMEDIATE) adds K user/assistant message pairs (default 1), each entry a
pi entry `{type: message, id, parentId, timestamp, message}` whose parentId is the session's
current append point (the previous entry; after a `leaf` row, its appendParentId or targetId),
at seq = max(seq) + 1, stored as identity JSON (event_json, event_utf8_bytes; never zstd), with
its transcript_event_identities row, and bumps session_windows.updated_at /
transcript_updated_at, as OpenClaw's appends do. It sleeps S seconds (default 0.05) between
transactions. The session is ID, or else the most recently updated one.

It prints one JSON line when it is ready (before the first write) and one when it is done:
  {"ready": true, "db": DST, "session": ID, "seq": LAST_SEQ_BEFORE}
  {"done": true, "session": ID, "rows": ROWS_WRITTEN, "commits": N, "last_seq": SEQ, "last_id": ID}
SIGTERM / SIGINT end it early (after the current transaction). It closes the database at the
end (SQLite then checkpoints the WAL into the file and removes it), unless --crash: then it
exits without closing, leaving the last transactions only in DST-wal (a reader must read the
WAL to see them, as after an OpenClaw crash).
"""
import argparse
import json
import os
import shutil
import signal
import sqlite3
import sys
import time
import uuid
from datetime import datetime, timezone

STOP = []


def iso(ms):
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def dumps(obj):
    # JSON.stringify's shape: no spaces, non-ASCII kept
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def append_point(db, sid):
    """The id the next entry hangs off: the last row in seq order (a leaf row: its appendParentId,
    else its targetId), skipping the session header."""
    for (text,) in db.execute("select coalesce(event_json, '') from transcript_events where session_id = ? order by seq desc", (sid,)):
        if not text:  # a zstd row: its id is in the identity table
            row = db.execute("select event_id from transcript_event_identities where session_id = ? order by seq desc limit 1", (sid,)).fetchone()
            return row[0] if row else None
        e = json.loads(text)
        if e.get("type") == "session":
            return None
        if e.get("type") == "leaf":
            return e.get("appendParentId", e.get("targetId"))
        if e.get("appendMode") == "side":
            continue
        return e.get("id")
    return None


def entries(parent, n, now):
    user_id, asst_id = str(uuid.uuid4()), str(uuid.uuid4())
    user = {"type": "message", "id": user_id, "parentId": parent, "timestamp": iso(now),
            "message": {"role": "user", "content": f"writer line {n}", "timestamp": now}}
    asst = {"type": "message", "id": asst_id, "parentId": user_id, "timestamp": iso(now + 1),
            "message": {"role": "assistant", "content": [{"type": "text", "text": f"writer reply {n}"}],
                        "api": "openai-completions", "provider": "mock", "model": "mock-model",
                        "usage": {"input": 10, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 13,
                                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                        "stopReason": "stop", "timestamp": now + 1}}
    return [user, asst], asst_id


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--session")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--interval", type=float, default=0.05)
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--no-copy", action="store_true")
    ap.add_argument("--crash", action="store_true")
    a = ap.parse_args()
    if os.path.abspath(a.src) == os.path.abspath(a.dst):
        sys.exit("writer.py: DST must be a copy, not SRC itself")
    if not a.no_copy:
        for suffix in ("-wal", "-shm"):
            if os.path.exists(a.dst + suffix):
                os.unlink(a.dst + suffix)
        shutil.copyfile(a.src, a.dst)
        for suffix in ("-wal",):
            if os.path.exists(a.src + suffix) and os.path.getsize(a.src + suffix) > 0:
                shutil.copyfile(a.src + suffix, a.dst + suffix)
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: STOP.append(1))

    db = sqlite3.connect(a.dst, isolation_level=None, timeout=30)
    # OpenClaw's CHECK constraints call octet_length(), which SQLite has since 3.43; an older
    # SQLite under Python gets the same function here.
    db.create_function("octet_length", 1, lambda v: None if v is None else len(v if isinstance(v, bytes) else str(v).encode()), deterministic=True)
    db.execute("pragma busy_timeout = 30000")
    mode = db.execute("pragma journal_mode = WAL").fetchone()[0]
    if mode != "wal":
        sys.exit(f"writer.py: could not enable WAL (journal_mode={mode})")
    db.execute("pragma wal_autocheckpoint = 1000")
    db.execute("pragma journal_size_limit = 67108864")
    db.execute("pragma foreign_keys = ON")
    sid = a.session or db.execute("select session_id from session_windows order by updated_at desc limit 1").fetchone()[0]
    seq = db.execute("select coalesce(max(seq), -1) from transcript_events where session_id = ?", (sid,)).fetchone()[0]
    if seq < 0:
        sys.exit(f"writer.py: no rows for session {sid}")
    print(dumps({"ready": True, "db": a.dst, "session": sid, "seq": seq}), flush=True)

    rows = commits = n = 0
    last_id = None
    end = time.monotonic() + a.seconds
    while time.monotonic() < end and not STOP:
        db.execute("begin immediate")
        try:
            parent = append_point(db, sid)
            for _ in range(a.pairs):
                n += 1
                now = int(time.time() * 1000)
                pair, parent = entries(parent, n, now)
                for e in pair:
                    seq += 1
                    text = dumps(e)
                    db.execute("insert into transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json)"
                               " values (?, ?, ?, ?, null, ?, null)", (sid, seq, text, now, len(text.encode())))
                    db.execute("insert into transcript_event_identities (session_id, event_id, seq, event_type, parent_id, message_idempotency_key, created_at)"
                               " values (?, ?, ?, ?, ?, null, ?)", (sid, e["id"], seq, e["type"], e["parentId"], now))
                    rows += 1
                    last_id = e["id"]
            db.execute("update session_windows set updated_at = ?, transcript_updated_at = ? where session_id = ?", (now, now, sid))
            db.execute("commit")
            commits += 1
        except BaseException:
            db.execute("rollback")
            raise
        time.sleep(a.interval)
    print(dumps({"done": True, "session": sid, "rows": rows, "commits": commits, "last_seq": seq, "last_id": last_id}), flush=True)
    if a.crash:
        os._exit(0)
    db.close()


if __name__ == "__main__":
    main()
