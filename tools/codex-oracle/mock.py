#!/usr/bin/env python3
"""A scripted OpenAI Responses API for driving the real Codex CLI offline.

usage: mock.py PORT LOGFILE SCRIPT.json

Every request (method, path, headers without keys, JSON body) is appended to LOGFILE, one JSON
line each: the request Codex sends when it resumes (or forks) a thread with one more prompt is
the golden for `pisces path` there.

SCRIPT.json maps step names to the replies of one prompt:

    {"fix-a": [ [ITEM, ...], [ITEM, ...], ... ], ...}

A prompt chooses its step with a marker `[[STEP]]` in its text. The reply to a request is
`script[STEP][k]`, where k counts the model's replies after the last user message that carries
the marker (a run of reasoning / assistant message / tool call items is one reply), so a tool
round trip moves to the next reply, and replaying a thread at the same point gives the same
reply. An ITEM is one of
  {"text": "..."}                      an assistant message
  {"reasoning": "...", "encrypted": true}  a reasoning item: its summary text, and an opaque
                                       `encrypted_content` as the API gives it
  {"exec": "npm test"}                 a call of the request's shell tool (exec_command {cmd},
                                       shell_command {command}, shell {command: [bash, -lc, ..]})
  {"call": NAME, "args": {...}}        a function call of any other tool (update_plan, ...)
  {"search": "query"}                  the server's own web search (a web_search_call item)
  {"patch": "*** Begin Patch ..."}     an apply_patch call (a custom/freeform tool call when the
                                       request offers apply_patch as `custom`, else a function call)

A compaction request (its last user message is the summary prompt) gets a scripted summary.
A request whose last input item is a tool output and has no script answers "Tool said: ...".
Anything else: "Scripted reply to: <first line>".
POST .../responses/compact answers a one-message summary too (remote compaction, if asked).
"""
import base64
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
OUTPUT_TYPES = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call")
SUMMARY = ("Scripted compaction summary: the user asked about the failing `npm test` in todo-cli; "
           "parseDue drops the day of the month.")


def text_of(c):
    if isinstance(c, str):
        return c
    return "\n".join(b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") in ("input_text", "text", "output_text"))


def is_output(it):
    return it.get("type") in OUTPUT_TYPES or (it.get("type", "message") == "message" and it.get("role") == "assistant")


def is_user(it):
    return it.get("type", "message") == "message" and it.get("role") == "user"


def step_of(items):
    """(step, k): the last marked user message's step and how many model replies follow it."""
    for i in range(len(items) - 1, -1, -1):
        it = items[i]
        if not is_user(it):
            continue
        found = MARK.findall(text_of(it.get("content")))
        if found:
            k, prev = 0, False
            for x in items[i + 1:]:
                o = is_output(x)
                if o and not prev:
                    k += 1
                prev = o
            return found[-1], k
    return None, 0


def is_compaction(items):
    users = [i for i in items if is_user(i)]
    t = text_of(users[-1].get("content")) if users else ""
    return bool(re.search(r"CONTEXT CHECKPOINT|handoff summary|summar(y|ize) (of )?(the|this) conversation", t, re.I)) and not MARK.search(t)


def stable(prefix, *parts):
    return prefix + hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:24]


def tool_kinds(tools):
    out = {}
    for t in tools or []:
        out[t.get("name") or t.get("type")] = t.get("type")
    return out


def shell_item(cmd, tools, cid):
    kinds = tool_kinds(tools)
    if "exec_command" in kinds:
        args = {"cmd": cmd}
        name = "exec_command"
    elif "shell_command" in kinds:
        name, args = "shell_command", {"command": cmd}
    else:
        name, args = "shell", {"command": ["bash", "-lc", cmd]}
    return {"type": "function_call", "id": "fc_" + cid[5:], "call_id": cid, "name": name, "arguments": json.dumps(args), "status": "completed"}


def patch_item(patch, tools, cid):
    if tool_kinds(tools).get("apply_patch") == "custom":
        return {"type": "custom_tool_call", "id": "ctc_" + cid[5:], "call_id": cid, "name": "apply_patch", "input": patch, "status": "completed"}
    return {"type": "function_call", "id": "fc_" + cid[5:], "call_id": cid, "name": "apply_patch", "arguments": json.dumps({"input": patch}), "status": "completed"}


def plan(req):
    """The output items of the reply."""
    items = req.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    tools = req.get("tools")
    if is_compaction(items):
        return [{"text": SUMMARY}]
    step, k = step_of(items)
    if step is not None and step in SCRIPT:
        replies = SCRIPT[step]
        return replies[min(k, len(replies) - 1)], (step, k)
    last = items[-1] if items else {}
    if last.get("type") in ("function_call_output", "custom_tool_call_output"):
        out = last.get("output")
        out = out if isinstance(out, str) else json.dumps(out)
        return [{"text": "Tool said: " + out.strip()[:200]}]
    users = [i for i in items if is_user(i)]
    ut = text_of(users[-1].get("content")).strip() if users else ""
    return [{"text": "Scripted reply to: " + (ut.splitlines()[0][:80] if ut else "")}]


def build(req):
    p = plan(req)
    key = ("-", 0)
    if isinstance(p, tuple):
        p, key = p
    tools = req.get("tools")
    n = len(req.get("input") or [])
    out = []
    for j, spec in enumerate(p):
        cid = stable("call_", key[0], key[1], j, n)
        if "text" in spec:
            out.append({"type": "message", "id": stable("msg_", key[0], key[1], j, n), "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": spec["text"], "annotations": []}]})
        elif "reasoning" in spec:
            it = {"type": "reasoning", "id": stable("rs_", key[0], key[1], j, n),
                  "summary": [{"type": "summary_text", "text": spec["reasoning"]}]}
            if spec.get("encrypted", True):
                it["encrypted_content"] = "gAAAAB" + base64.urlsafe_b64encode(
                    hashlib.sha256(("enc/" + spec["reasoning"]).encode()).digest() * 2).decode().rstrip("=")
            out.append(it)
        elif "exec" in spec:
            out.append(shell_item(spec["exec"], tools, cid))
        elif "patch" in spec:
            out.append(patch_item(spec["patch"], tools, cid))
        elif "search" in spec:
            out.append({"type": "web_search_call", "id": stable("ws_", key[0], key[1], j, n), "status": "completed",
                        "action": {"type": "search", "query": spec["search"]}})
        elif "call" in spec:
            out.append({"type": "function_call", "id": stable("fc_", key[0], key[1], j, n), "status": "completed",
                        "name": spec["call"], "arguments": json.dumps(spec.get("args", {})), "call_id": cid})
        else:
            raise ValueError(spec)
    return out


def sse_events(req, raw):
    out = build(req)
    rid = "resp_" + uuid.uuid4().hex[:20]
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": req.get("model", "mock-model")}
    reasoning_tokens = sum(len(s.get("summary", [{}])[0].get("text", "")) // 4 for s in out if s["type"] == "reasoning")
    usage = {"input_tokens": max(1, len(raw) // 4), "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 12 + reasoning_tokens, "output_tokens_details": {"reasoning_tokens": reasoning_tokens}}
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    ev = [("response.created", {"type": "response.created", "response": dict(base, status="in_progress", output=[])}),
          ("response.in_progress", {"type": "response.in_progress", "response": dict(base, status="in_progress", output=[])})]
    for i, it in enumerate(out):
        t = it["type"]
        if t == "message":
            text = it["content"][0]["text"]
            ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": dict(it, status="in_progress", content=[])}))
            ev.append(("response.content_part.added", {"type": "response.content_part.added", "item_id": it["id"], "output_index": i,
                                                        "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
            for j in range(0, len(text), 40):
                ev.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": it["id"], "output_index": i,
                                                           "content_index": 0, "delta": text[j:j + 40]}))
            ev.append(("response.output_text.done", {"type": "response.output_text.done", "item_id": it["id"], "output_index": i,
                                                      "content_index": 0, "text": text}))
            ev.append(("response.content_part.done", {"type": "response.content_part.done", "item_id": it["id"], "output_index": i,
                                                       "content_index": 0, "part": it["content"][0]}))
        elif t == "reasoning":
            ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": {"type": "reasoning", "id": it["id"], "summary": []}}))
            s = it["summary"][0]["text"]
            ev.append(("response.reasoning_summary_part.added", {"type": "response.reasoning_summary_part.added", "item_id": it["id"],
                                                                  "output_index": i, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}))
            ev.append(("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta", "item_id": it["id"],
                                                                  "output_index": i, "summary_index": 0, "delta": s}))
            ev.append(("response.reasoning_summary_text.done", {"type": "response.reasoning_summary_text.done", "item_id": it["id"],
                                                                 "output_index": i, "summary_index": 0, "text": s}))
            ev.append(("response.reasoning_summary_part.done", {"type": "response.reasoning_summary_part.done", "item_id": it["id"],
                                                                 "output_index": i, "summary_index": 0, "part": it["summary"][0]}))
        elif t == "function_call":
            ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": dict(it, arguments="", status="in_progress")}))
            ev.append(("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "item_id": it["id"],
                                                                   "output_index": i, "delta": it["arguments"]}))
            ev.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done", "item_id": it["id"],
                                                                  "output_index": i, "arguments": it["arguments"]}))
        elif t == "custom_tool_call":
            ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": dict(it, input="", status="in_progress")}))
            ev.append(("response.custom_tool_call_input.delta", {"type": "response.custom_tool_call_input.delta", "item_id": it["id"],
                                                                  "output_index": i, "delta": it["input"]}))
            ev.append(("response.custom_tool_call_input.done", {"type": "response.custom_tool_call_input.done", "item_id": it["id"],
                                                                 "output_index": i, "input": it["input"]}))
        ev.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": it}))
    whole = dict(base, status="completed", output=out, usage=usage)
    ev.append(("response.completed", {"type": "response.completed", "response": whole}))
    return ev, whole


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
            return self._send(200, {"object": "list", "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}], "models": []})
        self._send(404, {"error": {"message": "mock: no " + self.path, "type": "not_found"}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding") == "zstd":
            try:
                import zstandard
                raw = zstandard.ZstdDecompressor().decompress(raw)
            except Exception:
                pass
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._log(body, raw)
        path = self.path.split("?")[0]
        if not isinstance(body, dict):
            return self._send(400, {"error": {"message": "mock: unparsable body", "type": "invalid_request_error"}})
        if path.endswith("/responses/compact"):
            msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": SUMMARY}]}
            return self._send(200, {"output": [msg]})
        if path.endswith("/responses"):
            try:
                ev, whole = sse_events(body, raw)
            except Exception as e:  # a script error: say so to the client and in the log
                return self._send(500, {"error": {"message": "mock: %r" % e, "type": "server_error"}})
            if not body.get("stream"):
                return self._send(200, whole)
            data = b"".join(("event: %s\ndata: %s\n\n" % (e, json.dumps(d))).encode() for e, d in ev)
            return self._send(200, data, "text/event-stream")
        self._send(404, {"error": {"message": "mock: no " + self.path, "type": "not_found"}})


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    print("codex-oracle mock on 127.0.0.1:%d" % PORT, flush=True)
    srv.serve_forever()
