"""The goldens: resume every session of the corpus once more and record the request.

For each session in testdata/openclaw-2026.9.6/sessions.json, on a scratch state dir that is a
fresh copy of the committed one (the workspace is the one the corpus run left), run
`openclaw agent --local --agent AGENT --session-id ID -m PROBE --json` and take the first Chat
Completions request the mock got: its `messages`, as sent, are the golden. The parts OpenClaw
builds for the request and never stores are listed in `per_request` (indices into
request_messages) and removed in `expected_context`:

  - the system prompt (messages[0], role system): built per run (system-prompt.ts), not a row;
  - the `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` user message at the end: the runtime context
    carrier (runtime-context-prompt.ts prependRuntimeContextForModel), not a row;
  - the probe turn: the user message holding PROBE (it is written as a row only by this run).

Everything else should be the session's stored messages on the active branch, converted.
"""
import json
import shutil

from oracle import OUT, RUN, SCRATCH, Namespace, log
import scenarios

PROBE = "One more question [[probe]]"
INTERNAL = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


def text_of(c):
    if isinstance(c, str):
        return c
    return "\n".join(b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") == "text")


def per_request(messages):
    out = []
    for i, m in enumerate(messages):
        t = text_of(m.get("content"))
        if i == 0 and m.get("role") in ("system", "developer"):
            out.append(i)
        elif m.get("role") == "user" and t.startswith(INTERNAL):
            out.append(i)
        elif m.get("role") == "user" and PROBE in t:
            out.append(i)
    return out


def fresh_state():
    dst = SCRATCH / ".openclaw"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(OUT / "state", dst)
    if not (SCRATCH / "notes-app").exists():
        scenarios.write_project()


def run(names):
    sessions = json.loads((OUT / "sessions.json").read_text())["sessions"]
    todo = [s for s in sessions if not names or s["name"] in names or s["session_id"] in names]
    script = RUN / "script.json"
    script.write_text(json.dumps(scenarios.SCRIPT))
    gdir = OUT / "goldens"
    gdir.mkdir(parents=True, exist_ok=True)
    ns = Namespace(script)
    try:
        for s in todo:
            fresh_state()
            n = ns.request_count()
            r = ns.openclaw(["agent", "--local", "--agent", s["agent"], "--session-id", s["session_id"], "-m", PROBE, "--json"], check=False)
            reqs = [q for q in ns.requests_since(n) if q["method"] == "POST" and q["path"].endswith("/chat/completions")]
            if not reqs:
                log(f"{s['name']}: no request (exit {r.returncode})\n{r.stderr[-2000:]}")
                continue
            msgs = reqs[0]["body"]["messages"]
            per = per_request(msgs)
            g = {
                "session_id": s["session_id"],
                "agent": s["agent"],
                "scenario": s["name"],
                "probe": PROBE,
                "request_messages": msgs,
                "per_request": per,
                "expected_context": [m for i, m in enumerate(msgs) if i not in per],
            }
            (gdir / f"{s['session_id']}.json").write_text(json.dumps(g, indent=1, ensure_ascii=False) + "\n")
            log(f"{s['name']} {s['session_id']}: {len(msgs)} messages, per_request {per}, exit {r.returncode}")
    finally:
        ns.close()
