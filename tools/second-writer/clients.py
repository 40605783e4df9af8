#!/usr/bin/env python3
"""clients.py: the real Claude Code or Codex CLI writes a session while pisces reads it.

usage: python3 tools/second-writer/clients.py {claude|codex|openclaw} [TURNS] [--out FILE]

The client runs as its oracle runs it (tools/claude-oracle, tools/codex-oracle,
tools/openclaw-oracle: inside a loopback-only namespace, against the scripted model server), and
resumes one session TURNS times (default 20), each turn a tool call, its result and a reply.
Meanwhile pisces, on this side of the namespace, reads the same session over and over: `path @
--format json`, `tree`, `leaves --format json`, `grep`, `check`, and tries `label @` (which must
refuse: none of these formats lets another program append). Then:

- no pisces run died of a signal, and every run that failed said why on stderr;
- `label` refused every time and nothing in the session is pisces's;
- `pisces check` finds the final session clean; for a file, every line is whole JSON;
- every context `path` printed during the run is one the client had written: for a file, the
  context at some prefix of the final file (a whole number of its lines); for OpenClaw's
  database, where a session is rows, a prefix of the final context's messages (the session
  only grows here, one turn after another).

Prints a summary as JSON (also to --out), and exits 1 if a check failed. Needs what the oracle
needs (root, unshare, the client installed with `oracle.py install`); not part of CI.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PISCES = REPO / "target" / "release" / "pisces"


def start(oracle_dir):
    """The oracle's modules (`tools/<oracle_dir>/`: `oracle.py`, `scenarios.py`), a fresh
    scratch home with the scenarios' project, and its namespace with the scripted model."""
    sys.path.insert(0, str(REPO / "tools" / oracle_dir))
    import oracle
    import scenarios

    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(scenarios.SCRIPT))
    oracle.reset_scratch()
    scenarios.write_project()
    return oracle, scenarios, oracle.Namespace(script)


def claude_client(turns):
    """Runs Claude Code: a first prompt, then `--resume` TURNS times. Yields the session file
    once it exists (from the generator's first step), then runs to the end."""
    oracle, scenarios, ns = start("claude-oracle")
    try:
        sid = scenarios.prompt(ns, "List the project [[b-start]]")["session_id"]
        yield oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli" / f"{sid}.jsonl"
        for i in range(turns):
            scenarios.prompt(ns, f"Turn {i + 1}: list it again [[b-start]]", "--resume", sid)
    finally:
        ns.close()


def codex_client(turns):
    """Runs Codex CLI: `exec`, then `exec resume` TURNS times."""
    oracle, scenarios, ns = start("codex-oracle")
    try:
        tid = scenarios.new(ns, "Why does npm test fail? [[look]]")
        files = [f for f in oracle.rollouts() if tid in f.name]
        if len(files) != 1:
            raise SystemExit(f"second-writer: rollout of {tid} not found: {oracle.rollouts()}")
        yield files[0]
        for i in range(turns):
            scenarios.resume(ns, tid, f"Turn {i + 1}: why does it fail? [[look]]")
    finally:
        ns.close()


def openclaw_client(turns):
    """Runs OpenClaw: `agent --local`, then `--session-id` TURNS times; the session is
    named `openclaw:main/<id>` in the state folder, which `OPENCLAW_STATE_DIR` names."""
    oracle, scenarios, ns = start("openclaw-oracle")
    try:
        sid, r = scenarios.turn(ns, "main", "How many notes are there? [[t2]]", session_key="agent:main:main")
        if not sid:
            raise SystemExit(f"second-writer: no session: {r.stderr[-2000:]}")
        os.environ["OPENCLAW_STATE_DIR"] = str(oracle.SCRATCH / ".openclaw")
        yield f"openclaw:main/{sid}"
        for i in range(turns):
            scenarios.turn(ns, "main", f"Turn {i + 1}: how many now? [[t2]]", session_id=sid)
    finally:
        ns.close()


READS = [
    ("path", ["path", "{f}", "@", "--format", "json"]),
    ("tree", ["tree", "{f}"]),
    ("leaves", ["leaves", "{f}", "--format", "json"]),
    ("grep", ["grep", "Turn", "{f}", "--format", "json"]),
    ("check", ["check", "{f}"]),
    ("label", ["label", "{f}", "@", "second-writer"]),
]


def context_key(out):
    """A context `path --format json` printed, without the file's name (the prefixes are
    copies elsewhere)."""
    d = json.loads(out)
    d["session"].pop("file", None)
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()


def prefix_contexts(f, lines):
    """A function of a `path` output: the number of lines of the final file whose context it
    is (`None`: no prefix gives it)."""
    contexts = {}
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / f.name
        for k in range(1, len(lines) + 1):
            p.write_bytes(b"\n".join(lines[:k]) + b"\n")
            code, out, _ = run_pisces(["path", str(p), "@", "--format", "json"])
            if code == 0:
                contexts.setdefault(context_key(out), k)
    return lambda out: contexts.get(context_key(out))


def prefix_messages(final):
    """A function of a `path` output: how many of the final context's messages it has, when
    its messages are the first of them (`None` otherwise)."""
    def of(out):
        got = json.loads(out)["messages"]
        return len(got) if got == final[: len(got)] else None
    return of


def run_pisces(argv):
    r = subprocess.run([str(PISCES), *argv], capture_output=True, timeout=60)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def reader(f, stop, runs):
    """pisces's reads, round after round, until `stop` is set."""
    while not stop.is_set():
        for name, argv in READS:
            code, out, err = run_pisces([a.replace("{f}", str(f)) for a in argv])
            runs.append({"command": name, "code": code, "stdout": out if name in ("path", "check") else b"", "stderr": err})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agent", choices=["claude", "codex", "openclaw"])
    ap.add_argument("turns", nargs="?", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    if not PISCES.exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)

    client = {"claude": claude_client, "codex": codex_client, "openclaw": openclaw_client}[args.agent](args.turns)
    f = next(client)
    stop, runs = threading.Event(), []
    t = threading.Thread(target=reader, args=(f, stop, runs))
    t0 = time.time()
    t.start()
    try:
        for _ in client:
            pass
    finally:
        stop.set()
        t.join()
    seconds = time.time() - t0

    failures = []
    code, _, err = run_pisces(["check", str(f)])
    if code != 0:
        failures.append(f"pisces check on the final session exited {code}: {err.strip()}")
    lines, final = [], b""
    if isinstance(f, Path):
        final = f.read_bytes()
        lines = final.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        else:
            failures.append("the final file does not end with a newline")
        for k, line in enumerate(lines, 1):
            try:
                json.loads(line)
            except ValueError as e:
                failures.append(f"line {k} is not whole JSON: {e}")
            if b"second-writer" in line:
                failures.append(f"line {k} holds pisces's label")
        snapshot = prefix_contexts(f, lines)
    else:
        code, out, err = run_pisces(["path", f, "@", "--format", "json"])
        if code != 0:
            failures.append(f"pisces path on the final session exited {code}: {err.strip()}")
        snapshot = prefix_messages(json.loads(out)["messages"] if code == 0 else [])
        _, tree, _ = run_pisces(["tree", f])
        if b"second-writer" in tree:
            failures.append("the session holds pisces's label")

    counts, outcomes = {}, {}
    seen_prefixes = set()
    for r in runs:
        c = counts.setdefault(r["command"], {"runs": 0, "ok": 0})
        c["runs"] += 1
        code = r["code"]
        if code < 0:
            failures.append(f"pisces {r['command']} died of signal {-code}")
            continue
        if r["command"] == "label":
            if code == 0:
                failures.append("pisces label appended to the client's file")
            elif "not supported" not in r["stderr"] and "does not write" not in r["stderr"]:
                failures.append(f"pisces label failed without saying why: {r['stderr'].strip()[:300]}")
            else:
                c["ok"] += 1
            continue
        if r["command"] == "check" and code == 1:
            # Findings (on stdout): what the file holds at that moment, e.g. a line the
            # client has not finished writing.
            found = [l for l in r["stdout"].decode("utf-8", "replace").splitlines() if l.strip()][1:2]
            what = found[0].split(": ", 1)[-1] if found else "(no finding printed)"
            outcomes.setdefault("check findings", {}).setdefault(what, 0)
            outcomes["check findings"][what] += 1
            if not found:
                failures.append("pisces check exited 1 without a finding")
            c["ok"] += 1
            continue
        if r["command"] == "grep" and code == 1 and not r["stderr"].strip():
            # No match, as ripgrep says it (before the first resumed turn).
            outcomes.setdefault("grep", {}).setdefault("no match", 0)
            outcomes["grep"]["no match"] += 1
            c["ok"] += 1
            continue
        if code != 0:
            first = r["stderr"].strip().splitlines()[:1]
            outcomes.setdefault(r["command"], {}).setdefault(first[0] if first else "(nothing on stderr)", 0)
            outcomes[r["command"]][first[0] if first else "(nothing on stderr)"] += 1
            if not first or not first[0].startswith("pisces:"):
                failures.append(f"pisces {r['command']} exited {code} without an error message")
            continue
        c["ok"] += 1
        if r["command"] == "path":
            k = snapshot(r["stdout"])
            if k is None:
                failures.append("pisces path printed a context the client never wrote")
            else:
                seen_prefixes.add(k)

    summary = {
        "agent": args.agent,
        "turns": args.turns,
        "seconds": round(seconds, 1),
        "final_lines": len(lines),
        "final_bytes": len(final),
        "runs": counts,
        "failed_runs": outcomes,
        "distinct_snapshots_read_by_path": len(seen_prefixes),
        "failures": failures[:50],
        "ok": not failures,
    }
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
