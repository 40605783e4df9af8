#!/usr/bin/env python3
"""A scripted OpenAI Chat Completions API for driving the real OpenClaw offline.

usage: mock.py PORT LOGFILE SCRIPT.json

Every request (method, path, headers without keys, JSON body) is appended to LOGFILE, one JSON
line each: the request OpenClaw sends when it resumes a session with one more prompt is the
golden for `pisces path` there.

SCRIPT.json maps step names to the replies of one prompt:

    {"fix-a": [ REPLY, REPLY, ... ], ...}

A prompt chooses its step with a marker `[[STEP]]` in its text. The reply to a request is
`script[STEP][k]`, where k counts the assistant messages after the last user message that
carries the marker, so a tool round trip moves on to the next reply and replaying a session at
the same point gives the same reply. A REPLY is a list of ITEMs:
  {"text": "..."}                 assistant text
  {"reasoning": "..."}            reasoning text (streamed as `reasoning_content`)
  {"exec": "CMD"}                 a call of the `exec` tool {command: CMD}
  {"tool": NAME, "args": {...}}   a call of any tool the request offers
  {"error": 500, "message": ".."} answer the request with an HTTP error instead
A streamed reply sends its items in the order listed (text, then a call, then text again makes
the client start a second text block); a reply that is not streamed joins its texts.
A request with no script for its step answers "Tool said: ..." after a tool result, else
"Scripted reply to: <first line of the last user text>". A summarization request (OpenClaw's
compaction: the system prompt is a "context summarization assistant") gets a scripted summary. The user message
OpenClaw appends per request (<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>) is ignored for all this.
"""
import hashlib
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
LOG = open(sys.argv[2], "a", buffering=1)
SCRIPT = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else {}
LOCK = threading.Lock()
MARK = re.compile(r"\[\[([A-Za-z0-9_.-]+)\]\]")
INTERNAL = "OPENCLAW_INTERNAL_CONTEXT"
SUMMARY = ("Scripted compaction summary: the user asked where the notes of notes-app are kept "
           "(notes.txt) and how many there are (3).")


def text_of(c):
    if isinstance(c, str):
        return c
    return "\n".join(b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") in ("text", "input_text"))


def real_messages(msgs):
    return [m for m in msgs if not (m.get("role") == "user" and INTERNAL in text_of(m.get("content")))]


def step_of(msgs):
    """(step, k): the last marked user message's step and how many assistant messages follow it."""
    for i in range(len(msgs) - 1, -1, -1):
        m = msgs[i]
        if m.get("role") != "user":
            continue
        found = MARK.findall(text_of(m.get("content")))
        if found:
            return found[-1], sum(1 for x in msgs[i + 1:] if x.get("role") == "assistant")
    return None, 0


def stable(prefix, *parts):
    return prefix + hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:24]


def plan(req):
    msgs = real_messages(req.get("messages") or [])
    last = msgs[-1] if msgs else {}
    users = [m for m in msgs if m.get("role") == "user"]
    ut = text_of(users[-1].get("content")).strip() if users else ""
    system = "\n".join(text_of(m.get("content")) for m in msgs if m.get("role") in ("system", "developer"))
    if "summarization assistant" in system or (re.search(r"summar", ut, re.I) and not MARK.search(ut)):
        return [{"text": SUMMARY}], ("summary", 0)
    step, k = step_of(msgs)
    if step is not None and step in SCRIPT:
        replies = SCRIPT[step]
        return replies[min(k, len(replies) - 1)], (step, k)
    if last.get("role") == "tool":
        return [{"text": "Tool said: " + text_of(last.get("content")).strip()[:200]}], ("-", len(msgs))
    return [{"text": "Scripted reply to: " + (ut.splitlines()[0][:80] if ut else "")}], ("-", len(msgs))


def reply(req):
    items, key = plan(req)
    text, calls, order = [], [], []
    for j, it in enumerate(items):
        if "error" in it:
            return it
        if "text" in it:
            text.append(it["text"])
            order.append(("content", it["text"]))
        elif "reasoning" in it:
            order.append(("reasoning_content", it["reasoning"]))
        else:
            name, args = ("exec", {"command": it["exec"]}) if "exec" in it else (it["tool"], it.get("args", {}))
            calls.append({"id": stable("call_", key[0], key[1], j, len(req.get("messages") or [])), "type": "function",
                          "function": {"name": name, "arguments": json.dumps(args)}})
            order.append(("call", len(calls) - 1))
    return {"content": "\n".join(text) if text else None, "tool_calls": calls, "order": order}


def chat(req, raw):
    r = reply(req)
    if "error" in r:
        return r, None
    cid = "chatcmpl-" + uuid.uuid4().hex[:20]
    model = req.get("model", "mock-model")
    now = int(time.time())
    mk = lambda delta, fin=None: {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]}
    usage = {"prompt_tokens": max(1, len(raw) // 4), "completion_tokens": 12}
    usage["total_tokens"] = usage["prompt_tokens"] + 12
    chunks = [mk({"role": "assistant", "content": ""})]
    for field, value in r["order"]:
        if field == "call":
            chunks.append(mk({"tool_calls": [dict(r["tool_calls"][value], index=value)]}))
            continue
        for j in range(0, len(value), 40):
            chunks.append(mk({field: value[j:j + 40]}))
    fin = "tool_calls" if r["tool_calls"] else "stop"
    chunks.append(mk({}, fin))
    chunks.append({"id": cid, "object": "chat.completion.chunk", "created": now, "model": model, "choices": [], "usage": usage})
    msg = {"role": "assistant", "content": r["content"]}
    if r["tool_calls"]:
        msg["tool_calls"] = r["tool_calls"]
    whole = {"id": cid, "object": "chat.completion", "created": now, "model": model,
             "choices": [{"index": 0, "message": msg, "finish_reason": fin}], "usage": usage}
    return chunks, whole


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, code, data, ctype="application/json"):
        if not isinstance(data, bytes):
            data = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:16])
        self.end_headers()
        self.wfile.write(data)

    def _log(self, body, raw):
        rec = {"t": time.time(), "method": self.command, "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in ("authorization", "x-api-key", "api-key")},
               "body": body if body is not None else raw.decode(errors="replace")[:2000]}
        with LOCK:
            LOG.write(json.dumps(rec) + "\n")

    def do_GET(self):
        self._log(None, b"")
        if self.path.split("?")[0].endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]})
        self._send(404, {"error": {"message": "mock: no " + self.path, "type": "not_found"}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._log(body, raw)
        if not isinstance(body, dict):
            return self._send(400, {"error": {"message": "mock: unparsable body", "type": "invalid_request_error"}})
        if not self.path.split("?")[0].endswith("/chat/completions"):
            return self._send(404, {"error": {"message": "mock: no " + self.path, "type": "not_found"}})
        try:
            chunks, whole = chat(body, raw)
        except Exception as e:  # a script error: say so to the client and in the log
            return self._send(500, {"error": {"message": "mock: %r" % e, "type": "server_error"}})
        if whole is None:
            return self._send(chunks["error"], {"error": {"message": chunks.get("message", "scripted error"), "type": "server_error"}})
        if not body.get("stream"):
            return self._send(200, whole)
        data = b"".join(("data: %s\n\n" % json.dumps(c)).encode() for c in chunks) + b"data: [DONE]\n\n"
        self._send(200, data, "text/event-stream")


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    print("openclaw-oracle mock on 127.0.0.1:%d" % PORT, flush=True)
    srv.serve_forever()
