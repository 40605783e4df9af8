#!/usr/bin/env python3
"""A scripted Anthropic Messages API for driving the real Claude Code offline.

usage: mock.py PORT LOGFILE SCRIPT.json

Every request (method, path, headers without keys, JSON body) is appended to LOGFILE, one JSON
line each: the request Claude Code sends when it resumes a session at an entry is the golden for
`pisces path` there.

SCRIPT.json maps step names to the replies of one prompt:

    {"fix-a": [ {"blocks": [...], "stop": "tool_use"}, {"blocks": [...]} ], ...}

A prompt chooses its step with a marker `[[STEP]]` in its text. The reply to a request is
`script[STEP][k]`, where k counts the assistant messages after the last user message that
carries the marker (so a tool round trip moves to the next reply, and resuming a session at an
entry replays the same reply). A block is Anthropic's content block: `text`, `thinking`
(a signature is added), `tool_use` and `server_tool_use` (an id is added when it has none),
`redacted_thinking` and `web_search_tool_result` (sent whole). A reply may say
`"error": [status, type]` with `"times": N`: its first N requests fail with that error (Claude
Code retries them), and `"usage": {...}` (merged into the reported usage).

A compaction request (its last user message is the summary prompt) gets a scripted summary.
Requests without a marker: after a compaction (the summary message has no marker) "Going on
after the compaction.", a request without tools (titles, topic checks) a short JSON reply, anything else "Scripted reply".
POST /v1/messages/count_tokens answers a rough count.
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
FAILED = {}  # (step, k) -> failures served so far
MARK = re.compile(r"\[\[([A-Za-z0-9_.-]+)\]\]")


def texts(content):
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def step_of(msgs):
    """(step, k): the marked prompt's step and how many assistant replies follow it."""
    for i in range(len(msgs) - 1, -1, -1):
        m = msgs[i]
        if m.get("role") != "user":
            continue
        # The last marker of the message: a prompt sent on resuming at a user message is
        # merged into that message, after its text.
        found = [f for t in texts(m.get("content"))
                 for f in MARK.findall(re.sub(r"<system-reminder>.*?</system-reminder>", "", t, flags=re.S))]
        if found:
            k = sum(1 for x in msgs[i + 1:] if x.get("role") == "assistant")
            return found[-1], k
    return None, 0


def stable_id(prefix, *parts):
    return prefix + hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:24]


def reply_for(req):
    """(blocks, stop, extra usage, error or None)."""
    msgs = req.get("messages") or []
    lastu = next((m for m in reversed(msgs) if m.get("role") == "user"), {})
    lt = " ".join(texts(lastu.get("content")))
    if re.search(r"Respond with TEXT ONLY", lt) and re.search(r"summary", lt, re.I):
        summary = ("<analysis>Scripted analysis of the conversation.</analysis>\n<summary>1. Primary Request and Intent: "
                   "the user asked for the scripted tasks.\n2. Pending Tasks: none.\n3. Current Work: a scripted "
                   "compaction summary.</summary>")
        return [{"type": "text", "text": summary}], "end_turn", {}, None
    step, k = step_of(msgs)
    if step is not None and step in SCRIPT:
        replies = SCRIPT[step]
        r = replies[min(k, len(replies) - 1)]
        err = r.get("error")
        if err:
            with LOCK:
                n = FAILED.get((step, k), 0)
                if n < r.get("times", 1):
                    FAILED[(step, k)] = n + 1
                    return None, None, None, err
        blocks = []
        for j, b in enumerate(r["blocks"]):
            b = dict(b)
            if b["type"] == "tool_use" and "id" not in b:
                b["id"] = stable_id("toolu_", step, k, j)
            if b["type"] == "server_tool_use" and "id" not in b:
                b["id"] = stable_id("srvtoolu_", step, k, j)
            if b["type"] == "thinking" and "signature" not in b:
                b["signature"] = stable_id("sig", step, k, j)
            blocks.append(b)
        return blocks, r.get("stop", "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"), r.get("usage", {}), None
    if any("This session is being continued from a previous conversation" in t for m in msgs if m.get("role") == "user"
           for t in texts(m.get("content"))):
        return [{"type": "text", "text": "Going on after the compaction."}], "end_turn", {}, None
    if not req.get("tools"):
        return [{"type": "text", "text": '{"title": "Scripted session", "isNewTopic": false}'}], "end_turn", {}, None
    return [{"type": "text", "text": "Scripted reply."}], "end_turn", {}, None


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, code, obj, ctype="application/json"):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock: no " + self.path}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            req = json.loads(raw) if raw else None
        except ValueError:
            req = None
        rec = {"t": time.time(), "method": self.command, "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in ("x-api-key", "authorization")},
               "body": req if req is not None else raw.decode(errors="replace")[:2000]}
        with LOCK:
            LOG.write(json.dumps(rec) + "\n")
        path = self.path.split("?")[0]
        if path.endswith("/v1/messages/count_tokens"):
            return self._send(200, {"input_tokens": max(1, len(raw) // 4)})
        if not path.endswith("/v1/messages") or not isinstance(req, dict):
            return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock: no " + self.path}})
        blocks, stop, extra, err = reply_for(req)
        if err:
            status, kind = err
            return self._send(status, {"type": "error", "error": {"type": kind, "message": "Scripted %s" % kind}})
        model = req.get("model", "claude-mock")
        mid = "msg_" + uuid.uuid4().hex[:24]
        out_tok = sum(len(json.dumps(b)) // 4 for b in blocks)
        usage0 = {"input_tokens": max(1, len(raw) // 4), "output_tokens": 1, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0}
        usage0.update({k: v for k, v in extra.items() if k != "output_tokens"})
        out_tok = extra.get("output_tokens", out_tok)
        if not req.get("stream"):
            return self._send(200, {"id": mid, "type": "message", "role": "assistant", "model": model, "content": blocks,
                                    "stop_reason": stop, "stop_sequence": None, "usage": dict(usage0, output_tokens=out_tok)})
        out = [sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage0}})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
                t = b["text"]
                for j in range(0, len(t), 40):
                    out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": t[j:j + 40]}}))
            elif b["type"] == "thinking":
                out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": b["thinking"]}}))
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": b["signature"]}}))
            elif b["type"] in ("redacted_thinking", "web_search_tool_result"):
                # Blocks the API sends whole in their start event.
                out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": b}))
            else:
                out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": b["type"], "id": b["id"], "name": b["name"], "input": {}}}))
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
            out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
        out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": out_tok}}))
        out.append(sse("message_stop", {"type": "message_stop"}))
        self._send(200, b"".join(out), "text/event-stream")


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    print("claude-oracle mock on 127.0.0.1:%d" % PORT, flush=True)
    srv.serve_forever()
