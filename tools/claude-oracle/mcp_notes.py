#!/usr/bin/env python3
"""A tiny MCP server over stdio for the corpus: one tool, `echo`, that answers with its text.

Claude Code starts it from the scenario's `--mcp-config` (server name `notes`), so the model
can call `mcp__notes__echo`. Newline-delimited JSON-RPC 2.0, as the MCP stdio transport is.
"""
import json
import sys

TOOL = {
    "name": "echo",
    "description": "Says the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def answer(msg):
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return None  # a notification
    if method == "initialize":
        result = {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "notes", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = msg.get("params", {}).get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    out = answer(msg)
    if out is not None:
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
