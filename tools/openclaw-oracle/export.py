#!/usr/bin/env python3
"""export.py AGENT_SQLITE OUTDIR : each session's transcript_events rows, in seq order, as
OUTDIR/<session_id>.jsonl (one pi entry per line, re-serialized compactly), read-only.

Like ../../../shared/clients/openclaw_export_jsonl.py, but decodes event_zstd rows with the
`zstandard` module if it is there, else with the `zstd` command (no Python dependency)."""
import json
import os
import sqlite3
import subprocess
import sys


def unzstd(blob):
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompress(blob).decode()
    except ImportError:
        return subprocess.run(["zstd", "-d", "-c", "-q"], input=blob, capture_output=True, check=True).stdout.decode()


def rows(db):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    for sid, seq, ej, ez in c.execute("select session_id, seq, event_json, event_zstd from transcript_events order by session_id, seq"):
        yield sid, seq, ej if ej is not None else unzstd(ez)
    c.close()


def main():
    db, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    files = {}
    for sid, _seq, text in rows(db):
        files.setdefault(sid, []).append(json.dumps(json.loads(text), separators=(",", ":")))
    for sid, lines in files.items():
        with open(os.path.join(out, sid + ".jsonl"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(sid, len(lines))


if __name__ == "__main__":
    main()
