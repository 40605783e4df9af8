"""One resume of a corpus file at one entry, on a scratch copy: the request Claude Code sends.

usage: python3 tools/claude-oracle/probe.py FILE [UUID]   (no UUID: `--resume` at its leaf)

Prints the main-loop request's `messages` (the one with tools and the probe's marker).
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

PROBE = "One more question [[probe]]"


def session_id(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and d.get("sessionId"):
            return d["sessionId"]
    raise SystemExit(f"{path}: no sessionId")


def restore_instructions(path):
    """Writes back the instruction files (CLAUDE.md, ...) the session's `instructions`
    attachments recorded, as they recorded them. The scratch project is reset for every
    resume; without them the client would find them gone and tell the model so
    ("Instructions no longer present"), which is not the session's context."""
    for line in open(path, encoding="utf-8", errors="replace"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        a = d.get("attachment") if isinstance(d, dict) else None
        if not isinstance(a, dict) or a.get("type") != "instructions":
            continue
        for f in a.get("files") or []:
            if isinstance(f, dict) and isinstance(f.get("content"), str) and str(f.get("path", "")).startswith(oracle.HOME + "/"):
                dst = oracle.SCRATCH / f["path"][len(oracle.HOME) + 1:]
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(f["content"])


def resume(ns, path, uuid=None, extra_lines=(), keep_lines=None):
    """The main request Claude Code sends resuming `path` at `uuid` (None: at its leaf), or
    (None, error text) when it refuses. The copy it resumes is `path`'s first `keep_lines`
    lines (None: all) and then `extra_lines` (dicts, e.g. a `last-prompt` naming a leaf)."""
    sid = session_id(path)
    d = oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    dst = d / f"{sid}.jsonl"
    if keep_lines is None:
        shutil.copyfile(path, dst)
    else:
        with open(path, "rb") as f:
            dst.write_bytes(b"".join(f.readlines()[:keep_lines]))
    sub = path.parent / path.stem / "subagents"
    if sub.is_dir():
        shutil.copytree(sub, d / sid / "subagents")
    if extra_lines:
        with open(dst, "a") as f:
            for l in extra_lines:
                f.write(json.dumps(l) + "\n")
    restore_instructions(path)
    n = ns.request_count()
    args = ["-p", PROBE, "--output-format", "json", "--resume", sid, "--allowedTools", "Bash"]
    if uuid:
        args += ["--resume-session-at", uuid]
    try:
        ns.claude(args, timeout=120)
    except SystemExit as e:
        return None, str(e)
    for r in ns.requests_since(n):
        b = r.get("body")
        if isinstance(b, dict) and b.get("tools") and "[[probe]]" in json.dumps(b.get("messages", [])[-3:]):
            return b, None
    return None, "no main request"


if __name__ == "__main__":
    from pathlib import Path
    import scenarios
    f = Path(sys.argv[1]).resolve()
    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(scenarios.SCRIPT))
    oracle.reset_scratch()
    scenarios.write_project()
    ns = oracle.Namespace(script)
    try:
        body, err = resume(ns, f, sys.argv[2] if len(sys.argv) > 2 else None)
    finally:
        ns.close()
    if err:
        raise SystemExit(err)
    json.dump(body["messages"], sys.stdout, indent=1)
    print()
