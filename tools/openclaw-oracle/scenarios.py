"""The corpus: what the real OpenClaw is made to do (driven by oracle.py corpus).

Each scenario is a few `openclaw agent --local` turns; the first opens a session under a session
key of its own (`--session-key agent:<agent>:<name>`), later ones resume it by id
(`--session-id ID`, as the goldens do). The mock's replies for a prompt are SCRIPT[step], chosen
by the `[[step]]` marker in the prompt (see mock.py).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import oracle
from oracle import Namespace, OUT, RUN, SCRATCH, log, reset_scratch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools/, for oracle_png.py
from oracle_png import png  # noqa: E402

SCRIPT = {
    "plain": [[{"text": "notes-app is a tiny notes CLI (see README.md)."}]],
    "tools": [
        [{"exec": "ls"}],
        [{"exec": "cat TODO.md"}],  # there is none: exit 1
        [{"exec": "seq 1 400"}],  # a tool result over 1 KiB: stored zstd-compressed
        [{"text": "There is no TODO.md; the project has README.md and notes.txt."}],
    ],
    "t1": [[{"text": "First answer: notes are kept in notes.txt."}]],
    "t2": [[{"exec": "wc -l notes.txt"}], [{"text": "notes.txt has 3 lines."}]],
    "t3": [[{"text": "Third answer: add a line with `echo ... >> notes.txt`."}]],
    "t4": [[{"text": "Fourth answer, on a new branch: use `notes add`."}]],
    "t5": [[{"text": "Fifth answer, after the compaction."}]],
    "helper": [[{"exec": "pwd"}], [{"text": "The helper agent works in /home/dev/scratch."}]],
    "image": [[{"tool": "read", "args": {"path": "logo.png"}}], [{"text": "The logo is a small red square."}]],
    "fail": [[{"error": 500, "message": "scripted upstream failure"}]],
    "retry": [[{"text": "Second try worked."}]],
    "r1": [[{"text": "Before the reset."}]],
    "r2": [[{"text": "After the reset: a fresh session."}]],
    "d1": [[{"text": "This session is deleted next."}]],
    # the `blocks` part: assistant turns of several blocks, and empty tool output
    "b1": [[{"text": "Let me look first."}, {"exec": "ls"}, {"text": "Listing asked for."}],
           [{"text": "There are two files."}]],
    "b2": [[{"reasoning": "The user wants a short answer."}, {"text": "Short answer one."},
            {"reasoning": "Add a second part."}, {"text": "Short answer two."}]],
    "b3": [[{"exec": "true"}], [{"text": "The command printed nothing."}]],
    # the `more` part: parallel calls, file edits, long sessions compacted twice
    "m1": [[{"text": "Three things at once."}, {"exec": "ls"}, {"exec": "wc -l notes.txt"},
            {"tool": "read", "args": {"path": "README.md"}}],
           [{"text": "Two files; notes.txt has 3 lines; the README names the CLI."}]],
    "m2": [[{"tool": "write", "args": {"path": "TODO.md", "content": "- sort notes\n"}}],
           [{"tool": "edit", "args": {"path": "TODO.md", "edits": [{"oldText": "- sort notes", "newText": "- sort notes by date"}]}}],
           [{"tool": "edit", "args": {"path": "TODO.md", "edits": [{"oldText": "no such text", "newText": "x"}]}}],
           [{"text": "TODO.md written and edited; the second edit found nothing to replace."}]],
    "m3": [[{"text": "Turn three of the long session."}]],
    "m4": [[{"exec": "cat notes.txt"}], [{"text": "Turn four: notes.txt read."}]],
    "m5": [[{"text": "Turn five, after the first compaction."}]],
    "m6": [[{"text": "Turn six, after the second compaction."}]],
}

# name -> (agent, what it covers, steps). A step is ("turn", PROMPT) (the first opens the
# session under the key agent:<agent>:<name>, later ones resume the key's current session with
# --session-id), or ("rpc", METHOD, PARAMS) through the gateway, where PARAMS may name
# "@user:N" / "@tip:N" (the id of the N-th user message / of the last row of the N-th turn of
# the session as it is then).
SCENARIOS = [
    ("plain", "main", "one plain text turn", [("turn", "Hello! What is notes-app? [[plain]]")]),
    ("tools", "main", "exec tool calls: `ls`, a failing `cat TODO.md` (exit 1), `seq 1 400` (a >1 KiB tool result: an event_zstd row)",
     [("turn", "Look around the project and read the TODO [[tools]]")]),
    ("turns", "main", "three turns, the 2nd and 3rd resumed with --session-id (the 2nd with an exec call)",
     [("turn", "Where are notes kept? [[t1]]"), ("turn", "How many notes are there? [[t2]]"), ("turn", "How do I add one? [[t3]]")]),
    ("helper", "helper", "a second agent (agent id `helper`: its own DB under agents/helper/, workspace /home/dev/scratch), one exec call",
     [("turn", "Where do you work? [[helper]]")]),
    ("image", "main", "the read tool on a PNG: a tool result with an image block (sent as a tool message plus a user image_url message)",
     [("turn", "Describe logo.png [[image]]")]),
    ("error", "main", "a model request that fails (HTTP 500, retried 8 times): an assistant row with stopReason error and no content, then a resumed turn that works",
     [("turn", "This one fails [[fail]]"), ("turn", "Try again [[retry]]")]),
    ("compact", "main", "three turns, then gateway sessions.compact (a compaction row, firstKeptEntryId), then a turn after it",
     [("turn", "Where are notes kept? [[t1]]"), ("turn", "How many notes are there? [[t2]]"), ("turn", "How do I add one? [[t3]]"),
      ("rpc", "sessions.compact", {"key": "@key"}), ("turn", "And now? [[t5]]")]),
    ("cut", "main", "three turns, gateway sessions.rewind at the 3rd user message (a new session id: the rows copied plus a `leaf` row), "
     "a turn there (a branch: its parentId is the leaf's target), then sessions.branches.switch back to the old tip (another session, another leaf row)",
     [("turn", "Where are notes kept? [[t1]]"), ("turn", "How many notes are there? [[t2]]"), ("turn", "How do I add one? [[t3]]"),
      ("rpc", "sessions.rewind", {"sessionKey": "@key", "entryId": "@user:3"}), ("turn", "Another way to add one? [[t4]]"),
      ("rpc", "sessions.branches.switch", {"sessionKey": "@key", "leafEntryId": "@tip:3"})]),
    ("reset", "main", "a turn, gateway sessions.reset (a new session id for the key; the old transcript archived), a turn in the new session",
     [("turn", "Remember this [[r1]]"), ("rpc", "sessions.reset", {"key": "@key"}), ("turn", "Fresh start [[r2]]")]),
    ("gone", "main", "a turn, then gateway sessions.delete: the rows leave the DB, an archived JSONL stays under agents/main/sessions/",
     [("turn", "Short-lived [[d1]]"), ("rpc", "sessions.delete", {"key": "@key"})]),
]


# The second corpus (OPENCLAW_ORACLE_PART=blocks, testdata/openclaw-<version>/blocks/).
BLOCKS = [
    ("texts", "main", "an assistant turn streamed as text, an exec call, more text (two text blocks around a call)",
     [("turn", "List the project [[b1]]")]),
    ("reasoning", "main", "an assistant turn streamed as reasoning, text, reasoning, text",
     [("turn", "Answer in two parts [[b2]]")]),
    ("empty", "main", "an exec call that prints nothing (`true`)",
     [("turn", "Run true [[b3]]")]),
]
# The third corpus (OPENCLAW_ORACLE_PART=more, testdata/openclaw-<version>/more/).
MORE = [
    ("parallel", "main", "one reply with text and three calls (two exec, one read), then the answer",
     [("turn", "Look at three things at once [[m1]]")]),
    ("edits", "main", "the write tool, the edit tool, an edit whose old text is not there (an error result)",
     [("turn", "Write a TODO and edit it [[m2]]")]),
    ("long", "main", "six turns, compacted after the 4th and again after the 5th",
     [("turn", "Long session, part one [[m1]]"), ("turn", "Part two [[m2]]"), ("turn", "Part three [[m3]]"),
      ("turn", "Part four [[m4]]"), ("rpc", "sessions.compact", {"key": "@key"}), ("turn", "Part five [[m5]]"),
      ("rpc", "sessions.compact", {"key": "@key"}), ("turn", "Part six [[m6]]")]),
]
PARTS = {"": SCENARIOS, "blocks": BLOCKS, "more": MORE}


def write_project():
    p = SCRATCH / "notes-app"
    p.mkdir(parents=True, exist_ok=True)
    (p / "README.md").write_text("# notes-app\n\nA tiny notes CLI: `notes add TEXT`, `notes list`.\n")
    (p / "notes.txt").write_text("buy milk\ncall Bob\nwrite the README\n")
    (p / "logo.png").write_bytes(png(4, 4, (220, 30, 30)))
    (SCRATCH / "scratch").mkdir(parents=True, exist_ok=True)


def turn(ns, agent, message, session_key=None, session_id=None):
    args = ["agent", "--local", "--agent", agent, "-m", message, "--json"]
    if session_key:
        args += ["--session-key", session_key]
    if session_id:
        args += ["--session-id", session_id]
    n = ns.request_count()
    r = ns.openclaw(args, check=False)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = {}
    sid = ((out.get("meta") or {}).get("agentMeta") or {}).get("sessionId")
    log(f"{agent} {session_key or session_id}: exit {r.returncode}, {ns.request_count() - n} request(s), session {sid}")
    if r.returncode != 0:
        log(r.stderr[-1500:])
    return sid, r


def agent_dbs(root: Path):
    return sorted(root.glob("agents/*/agent/openclaw-agent.sqlite"))


def checkpoint(db: Path):
    """Fold the WAL into the main file (OpenClaw has exited; its -wal is then usually empty)."""
    c = sqlite3.connect(db)
    mode = c.execute("pragma journal_mode").fetchone()[0]
    res = c.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()
    c.close()
    return mode, res


def session_ids(db: Path):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = c.execute("select session_id, session_key from session_windows order by created_at").fetchall()
    c.close()
    return rows


def copy_state(src: Path, dst: Path):
    """The state dir as OpenClaw left it, less lock files, temp files and the memory reindex
    scratch: each agent's openclaw-agent.sqlite (checkpointed), its sessions/ folder if any,
    and openclaw.json."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    shutil.copy2(src / "openclaw.json", dst / "openclaw.json")
    for db in agent_dbs(src):
        rel = db.relative_to(src)
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        # copy the db with its -wal, then checkpoint the copy
        for suffix in ("", "-wal", "-shm"):
            f = Path(str(db) + suffix)
            if f.exists():
                shutil.copy2(f, Path(str(dst / rel) + suffix))
        mode, res = checkpoint(dst / rel)
        log(f"{rel}: journal_mode {mode}, wal_checkpoint(TRUNCATE) {res}")
        for suffix in ("-wal", "-shm"):
            Path(str(dst / rel) + suffix).unlink(missing_ok=True)
        sessions = db.parent.parent / "sessions"
        if sessions.is_dir():
            shutil.copytree(sessions, dst / rel.parent.parent / "sessions")
    # not state/openclaw.sqlite (the shared state DB: plugin catalog, config state, and the
    # agent_databases registry; nothing of the transcripts, 1.6 MB)


def export(state: Path, out: Path):
    """exports/<session-id>.jsonl: each session's rows, event_zstd decoded (export.py)."""
    if out.exists():
        shutil.rmtree(out)
    for db in agent_dbs(state):
        subprocess.run(["python3", str(oracle.HERE / "export.py"), str(db), str(out)], check=True, stdout=subprocess.DEVNULL)


def db_of(agent):
    return SCRATCH / ".openclaw" / "agents" / agent / "agent" / "openclaw-agent.sqlite"


def current_session(agent, key):
    c = sqlite3.connect(db_of(agent))
    row = c.execute("select current_session_id from session_nodes where session_key = ?", (key,)).fetchone()
    c.close()
    return row[0] if row else None


def resolve(agent, key, sid, params):
    """@key, @user:N (the N-th user message's id), @tip:N (the last row of turn N: the row
    before the (N+1)-th user message, or the last row) in the session's rows, in seq order."""
    c = sqlite3.connect(db_of(agent))
    rows = [json.loads(t) for (t,) in c.execute(
        "select event_json from transcript_events where session_id = ? and event_json is not null order by seq", (sid,))]
    c.close()
    users = [i for i, r in enumerate(rows) if r.get("type") == "message" and r["message"].get("role") == "user"]
    out = {}
    for k, v in params.items():
        if v == "@key":
            v = key
        elif isinstance(v, str) and v.startswith("@user:"):
            v = rows[users[int(v[6:]) - 1]]["id"]
        elif isinstance(v, str) and v.startswith("@tip:"):
            n = int(v[5:])
            end = users[n] if n < len(users) else len(rows)
            v = next(r["id"] for r in reversed(rows[:end]) if r.get("type") not in ("leaf", "session"))
        out[k] = v
    return out


def corpus(names):
    todo = [s for s in PARTS[os.environ.get("OPENCLAW_ORACLE_PART", "")] if not names or s[0] in names]
    RUN.mkdir(parents=True, exist_ok=True)
    script = RUN / "script.json"
    script.write_text(json.dumps(SCRIPT))
    reset_scratch()
    write_project()
    if (RUN / "requests.jsonl").exists():
        (RUN / "requests.jsonl").unlink()
    ns = Namespace(script)
    made = {}
    try:
        for name, agent, what, steps in todo:
            key = f"agent:{agent}:{name}"
            sid = None
            history = []
            for step in steps:
                if step[0] == "turn":
                    if ns_gateway(ns):
                        ns.stop_gateway()
                    got, _ = turn(ns, agent, step[1], session_key=None if sid else key, session_id=sid)
                    sid = sid or got or current_session(agent, key)
                    history.append(["turn", step[1], sid])
                else:
                    if not ns_gateway(ns):
                        ns.start_gateway()
                    params = resolve(agent, key, sid, step[2])
                    rc, out = ns.call(step[1], params)
                    log(f"{step[1]} {json.dumps(params)}: exit {rc}: {json.dumps(out)[:300]}")
                    new = current_session(agent, key)
                    history.append(["rpc", step[1], params, new])
                    sid = new or sid
            made[name] = {"agent": agent, "session_key": key, "what": what, "steps": history}
    finally:
        ns.close()
    state = OUT / "state"
    copy_state(SCRATCH / ".openclaw", state)
    export(state, OUT / "exports")
    sessions = []
    for db in agent_dbs(state):
        agent = db.parent.parent.name
        for sid, key in session_ids(db):
            name = key.split(":")[2] if key.count(":") >= 2 else key
            sessions.append({"name": name, "agent": agent, "session_id": sid, "session_key": key})
    drop_sidecars(state)
    (OUT / "sessions.json").write_text(json.dumps({"scenarios": made, "sessions": sessions}, indent=1) + "\n")
    log(f"wrote {state} and {OUT / 'sessions.json'}")


def ns_gateway(ns):
    return getattr(ns, "gw", None) is not None


def drop_sidecars(state):
    """Readers of a WAL database create -wal/-shm beside it: remove them (the .sqlite holds everything)."""
    for f in list(state.rglob("*.sqlite-wal")) + list(state.rglob("*.sqlite-shm")):
        f.unlink()
