#!/usr/bin/env python3
"""Writes edge-cases.jsonl (stdout): a hand-written pi 1.6 session that reaches request-building
branches the generated corpus does not (see ../README.md). Deterministic: fixed ids and times."""
import json

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SONNET = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

def tool(name, description, properties, required, strict=None):
    t = {"name": name, "description": description,
         "parameters": {"type": "object", "required": required, "properties": properties}}
    if strict:
        t["constrainedSampling"] = {"type": "json_schema", "strict": strict}
    return t

READ = tool("read", "Read a file.", {"path": {"type": "string"}, "limit": {"type": "number"}}, ["path"], "prefer")
COUNT = tool("count", "Count to n.", {"n": {"type": "number", "minimum": 1}}, ["n"], "prefer")
COUNT2 = tool("count", "Count to n (v2).", {"n": {"type": "integer"}}, ["n"], "prefer")
BASH = tool("bash", "Run a command.", {"command": {"type": "string"}}, ["command"])
GREP = tool("grep", "Search files.", {"pattern": {"type": "string"}}, ["pattern"])

n = 0
def ts():
    global n
    n += 1
    return 1796000000000 + n * 1000

def assistant(content, stop, model=SONNET):
    return {"role": "assistant", "content": content, **model, "usage": USAGE, "stopReason": stop, "timestamp": ts()}

def result(call_id, name, content, is_error=False):
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": content, "isError": is_error, "timestamp": ts()}

def user(content):
    return {"role": "user", "content": content, "timestamp": ts()}

image = {"type": "image", "data": PNG, "mimeType": "image/png"}
entries = [
    {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
    {"type": "thinking_level_change", "thinkingLevel": "off"},
    {"message": {"role": "system", "content": "", "sections": {"preamble": "You are a test assistant.", "cwd": "<cwd>\n/home/dev/todo-cli\n</cwd>"},
                 "timestamp": ts(), "toolsAdded": [READ, COUNT, BASH]}},
    {"message": user("   ")},
    {"message": user([image])},
    {"message": assistant([
        {"type": "thinking", "thinking": "I should look."},
        {"type": "thinking", "thinking": "", "thinkingSignature": "REDACTED", "redacted": True},
        {"type": "text", "text": "Looking.", "textSignature": "sig-t"},
        {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.png"}},
        {"type": "toolCall", "id": "toolu_2", "name": "count", "arguments": {"n": 1.0}},
    ], "toolUse")},
    {"message": {"role": "system", "content": "Mind the images.", "sections": {"extra": "Extra rules.", "cwd": None},
                 "timestamp": ts(), "toolsAdded": [COUNT2, GREP], "toolsRemoved": [{"name": "count"}]}},
    {"message": result("toolu_1", "read", [image])},
    {"message": result("toolu_2", "count", [{"type": "text", "text": "boom"}, image, image], True)},
    {"message": assistant([
        {"type": "thinking", "thinking": "",
         "thinkingSignature": json.dumps([{"type": "reasoning.encrypted", "data": "enc", "id": "rs_1", "format": "openai-responses-v1", "index": 0}])},
        {"type": "text", "text": ""},
        {"type": "toolCall", "id": "call_abc|fc_xyz+/=", "name": "bash", "arguments": {"command": "ls"}, "thoughtSignature": "ts"},
    ], "toolUse", {"api": "openai-responses", "provider": "openai", "model": "gpt-5"})},
    {"message": result("call_abc|fc_xyz+/=", "bash", [])},
    {"message": assistant([
        {"type": "thinking", "thinking": "deep thoughts", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Done."},
    ], "stop", {"api": "openai-completions", "provider": "ollama", "model": "gpt-oss:20b"})},
    {"message": user([{"type": "text", "text": ""}, {"type": "text", "text": "Next?"}])},
    {"message": assistant([{"type": "text", "text": "   "}], "stop")},
    {"message": user("Call a tool.")},
    {"message": assistant([{"type": "toolCall", "id": "toolu_3", "name": "bash", "arguments": {"command": "sleep 9"}}], "toolUse")},
    {"message": user("Never mind.")},
    {"message": assistant([{"type": "text", "text": "OK."}, {"type": "toolCall", "id": "toolu_4", "name": "bash", "arguments": {"command": "true"}}], "aborted")},
    {"message": result("toolu_4", "bash", [{"type": "text", "text": "Operation aborted"}], True)},
]

print(json.dumps({"type": "session", "version": 3, "id": "edge-cases-0001", "timestamp": "2026-12-01T00:00:00.000Z", "cwd": "/home/dev/todo-cli"}))
parent = None
for i, e in enumerate(entries, 1):
    eid = f"e{i:02d}"
    time = f"2026-12-01T00:00:{i:02d}.000Z"
    if "message" in e:
        line = {"type": "message", "id": eid, "parentId": parent, "timestamp": time, "message": e["message"]}
    else:
        line = {"type": e["type"], "id": eid, "parentId": parent, "timestamp": time, **{k: v for k, v in e.items() if k != "type"}}
    print(json.dumps(line))
    parent = eid
