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
    # The model the session was using at the point, when it is not the client's default:
    # `/model` saves the model it picks as the default, so the user resumes on it (and what
    # the client adds for the next turn, an attribution naming the model, depends on it).
    last = model_at(dst, uuid)
    if last and last != DEFAULT_MODEL:
        args += ["--model", last]
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


# The model the client uses when no `/model` was saved (the mock's catalog's default).
DEFAULT_MODEL = "claude-opus-5-5"


def model_at(path, uuid):
    """The model of the last turn on the chain to `uuid` (by `parentUuid`, and
    `logicalParentUuid` across a compaction), or of the file's last one without `uuid`: its
    `model` attachment's, or its reply's (the client's `<synthetic>` replies aside). None
    without either."""
    lines = []
    for line in open(path, encoding="utf-8"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and isinstance(d.get("uuid"), str):
            lines.append(d)

    def model(d):
        # A turn's `model` attachment names the model it runs on; a reply, the one it came from.
        a = d.get("attachment") if d.get("type") == "attachment" else None
        if isinstance(a, dict) and a.get("type") == "model" and isinstance(a.get("identity"), dict):
            return a["identity"].get("modelId")
        m = d.get("message") if d.get("type") == "assistant" else None
        if isinstance(m, dict) and isinstance(m.get("model"), str) and m["model"] != "<synthetic>":
            return m["model"]
        return None

    if uuid is None:
        return next((model(d) for d in reversed(lines) if model(d)), None)
    by = {d["uuid"]: d for d in lines}
    cur, seen = by.get(uuid), set()
    while cur is not None and cur["uuid"] not in seen:
        seen.add(cur["uuid"])
        if model(cur):
            return model(cur)
        cur = by.get(cur.get("parentUuid") or cur.get("logicalParentUuid"))
    return None


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
