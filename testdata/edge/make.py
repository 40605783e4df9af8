#!/usr/bin/env python3
"""Writes the hand-made edge-case session files of testdata/edge/ (the pi spec's §10 groups
1-8 and 13: loading a file and projecting the context at a leaf) and testdata/edge/errors/
(files pi cannot open or hangs on; see ERRORS.md).

Standard library only, deterministic: entry ids are the first 8 hex digits of
sha1("<stem>/<name>"), timestamps come from a per-file clock. Lines are written as pi writes
them (compact JSON, keys in pi's order, `\n` after every line) except where a case breaks the
format on purpose. Goldens: `bash make-expected.sh` (runs the real pi through the oracle).

    python3 testdata/edge/make.py
"""

import datetime
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CWD = "/home/dev/todo-cli"
SESSIONS = "/home/dev/.pi/agent/sessions/--home-dev-todo-cli--"
MODEL = ("anthropic", "claude-sonnet-4-5", "anthropic-messages")
RAW_STOP = {"stop": "end_turn", "toolUse": "tool_use", "length": "max_tokens"}

# stem -> {"leaves": [...], "v1": bool}, filled by the cases; make-expected.sh is written from it
CASES = {}
ERRORS = []


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def h(*parts, n=8):
    return hashlib.sha1("/".join(parts).encode()).hexdigest()[:n]


def usage(inp, out, cache_read=0, cache_write=0):
    """pi 1.6.0 usage object (claude-sonnet-4-5 prices). Costs are kept >= 1e-4 or 0 so that
    Python and JavaScript print them the same way (no exponent notation)."""
    def cost(n, per_mtok):
        c = round(n * per_mtok / 1e6, 10)
        assert c == 0 or c >= 1e-4, (n, per_mtok)
        return c if c else 0
    costs = {"input": cost(inp, 3), "output": cost(out, 15), "cacheRead": cost(cache_read, 0.3),
             "cacheWrite": cost(cache_write, 3.75)}
    total = round(sum(costs.values()), 10)
    return {"input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": inp + out + cache_read + cache_write,
            "cost": {**costs, "total": total if total else 0, "totalFromProvider": False}, "cacheWrite1h": 0}


ZERO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

# A short but realistic pi 1.6.0 system prompt (sections) and tool declarations.
SECTIONS = {
    "preamble": "You are a coding assistant running inside pi, a coding agent harness. Help users inspect files, run commands, and modify code.",
    "tools": "<tools>\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits with exact text replacement, including multiple disjoint edits in one call\n- write: Create or overwrite files\n\nAdditional tools may be available.\n</tools>",
    "rules": "<rules>\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>",
    "cwd": "<cwd>\n/home/dev/todo-cli\n</cwd>",
}


def tool(name):
    decl = {
        "read": ("Read the contents of a file. Supports text files and images.",
                 {"type": "object", "required": ["path"], "properties": {"path": {"type": "string", "description": "Path to the file to read (relative or absolute)"}, "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"}, "limit": {"type": "number", "description": "Maximum number of lines to read"}}}),
        "bash": ("Execute a bash command in the current working directory. Returns stdout and stderr.",
                 {"type": "object", "required": ["command"], "properties": {"command": {"type": "string", "description": "Bash command to execute"}, "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}}}),
        "edit": ("Edit a single file using exact text replacement.",
                 {"type": "object", "required": ["path", "edits"], "properties": {"path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"}, "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"], "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}}}}),
        "write": ("Write content to a file. Creates the file if it doesn't exist, overwrites if it does.",
                  {"type": "object", "required": ["path", "content"], "properties": {"path": {"type": "string", "description": "Path to the file to write (relative or absolute)"}, "content": {"type": "string", "description": "Content to write to the file"}}}),
        "ls": ("List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories.",
               {"type": "object", "properties": {"path": {"type": "string", "description": "Directory to list (default: current directory)"}}}),
        "grep": ("Search file contents for patterns (respects .gitignore).",
                 {"type": "object", "required": ["pattern"], "properties": {"pattern": {"type": "string", "description": "Search pattern (regex or literal string)"}, "path": {"type": "string", "description": "Directory or file to search (default: current directory)"}}}),
        "todo_stats": ("Count open, done and overdue todos.", {"type": "object", "properties": {}}),
    }[name]
    return {"name": name, "description": decl[0], "parameters": decl[1]}


class Session:
    def __init__(self, stem, start, version=3, subdir=""):
        self.stem = stem
        self.subdir = subdir
        self.lines = []          # raw lines without the line terminator
        self.names = {}          # symbolic name -> id
        self.clock = datetime.datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.last = None         # name of the last entry written (default parent)
        self.version = version
        self.leaves = []         # extra leaves for make-expected.sh: ids (v3) or "line:N" (v1)

    # --- ids, time ---------------------------------------------------------------------
    def id(self, name):
        if name is None:
            return None
        if name not in self.names:
            self.names[name] = h(self.stem, name)
        return self.names[name]

    def tick(self, ms=1000):
        self.clock += datetime.timedelta(milliseconds=ms)
        return self.iso()

    def iso(self):
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock.microsecond // 1000:03d}Z"

    def ms(self, delta=0):
        return int(self.clock.timestamp() * 1000) + delta

    # --- raw lines -----------------------------------------------------------------------
    def raw(self, text):
        self.lines.append(text)

    def obj(self, o):
        self.lines.append(dumps(o))

    @property
    def line_no(self):
        """1-based physical line number of the last line written."""
        return len(self.lines)

    # --- header ----------------------------------------------------------------------------
    def header(self, **extra):
        o = {"type": "session"}
        if self.version is not None and self.version != 1:
            o["version"] = self.version
        o["id"] = extra.pop("id", None) or f"01a2{h(self.stem, 'session', n=4)}-{h(self.stem, 's1', n=4)}-7{h(self.stem, 's2', n=3)}-a{h(self.stem, 's3', n=3)}-{h(self.stem, 's4', n=12)}"
        o["timestamp"] = self.iso()
        o["cwd"] = CWD
        o.update(extra)
        self.obj(o)
        return o

    # --- entries ---------------------------------------------------------------------------
    _DEFAULT = object()

    def entry(self, type_, name, payload, parent=_DEFAULT, ts=None, advance=True):
        """A v2/v3 entry: type, id, parentId, timestamp, <payload>. parent: a name, None
        (root), or a literal id given as ("id", "...")."""
        if parent is Session._DEFAULT:
            parent = self.last
        pid = parent[1] if isinstance(parent, tuple) else self.id(parent)
        if ts is None:
            ts = self.tick()
        o = {"type": type_, "id": self.id(name), "parentId": pid, "timestamp": ts}
        if type_ in ("custom", "custom_message"):
            o = {"type": type_, **payload, "id": self.id(name), "parentId": pid, "timestamp": ts}
        else:
            o.update(payload)
        self.obj(o)
        if advance:
            self.last = name
        return o

    def v1(self, type_, payload, ts=None):
        """A version-1 entry: no id, no parentId."""
        o = {"type": type_, "timestamp": ts or self.tick()}
        o.update(payload)
        self.obj(o)
        return self.line_no

    # convenience wrappers -------------------------------------------------------------------
    def msg(self, name, message, **kw):
        return self.entry("message", name, {"message": message}, **kw)

    def model_change(self, name="model", provider=MODEL[0], model=MODEL[1], **kw):
        return self.entry("model_change", name, {"provider": provider, "modelId": model}, **kw)

    def thinking(self, name="thinking", level="off", **kw):
        return self.entry("thinking_level_change", name, {"thinkingLevel": level}, **kw)

    def user(self, name, text, **kw):
        self.tick()
        return self.msg(name, {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self.ms()}, ts=self.iso(), **kw)

    def assistant(self, name, content, stop="stop", u=None, error=None, model=MODEL, thinking_level="off", **kw):
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        self.tick(2500)
        m = {"role": "assistant", "content": content, "api": model[2], "provider": model[0], "model": model[1],
             "usage": u or usage(40, 60, 1200, 80), "stopReason": stop, "timestamp": self.ms(-3)}
        if error:
            m["errorMessage"] = error
        if stop not in ("error",):
            m["responseId"] = "msg_01" + h(self.stem, name, "resp", n=22)
        if stop in RAW_STOP:
            m["rawStopReason"] = RAW_STOP[stop]
        m["durationMs"] = 2100
        if thinking_level is not None:
            m["thinkingLevel"] = thinking_level
        return self.msg(name, m, ts=self.iso(), **kw)

    def call(self, name, tool_name, arguments):
        return {"type": "toolCall", "id": self.call_id(name), "name": tool_name, "arguments": arguments}

    def call_id(self, name):
        return "toolu_01" + h(self.stem, name, "call", n=22)

    def result(self, name, call_name, tool_name, text, is_error=False, details=None, **kw):
        self.tick(300)
        m = {"role": "toolResult", "toolCallId": self.call_id(call_name), "toolName": tool_name,
             "content": [{"type": "text", "text": text}]}
        if details is not None:
            m["details"] = details
        m.update({"isError": is_error, "durationMs": 40, "timestamp": self.ms()})
        return self.msg(name, m, ts=self.iso(), **kw)

    def system(self, name, sections=None, tools_added=None, tools_removed=None, content="", **kw):
        self.tick(5)
        m = {"role": "system", "content": content}
        if sections is not None:
            m["sections"] = sections
        m["timestamp"] = self.ms()
        if tools_added is not None:
            m["toolsAdded"] = [tool(t) if isinstance(t, str) else t for t in tools_added]
        if tools_removed is not None:
            m["toolsRemoved"] = [{"name": t} for t in tools_removed]
        return self.msg(name, m, ts=self.iso(), **kw)

    def full_system(self, name="system", **kw):
        return self.system(name, dict(SECTIONS), ["read", "bash", "edit", "write"], **kw)

    def bash(self, name, command, output, exit_code=0, cancelled=False, truncated=False, full_output_path=None,
             exclude=None, **kw):
        self.tick()
        m = {"role": "bashExecution", "command": command, "output": output}
        if exit_code != "absent":
            m["exitCode"] = exit_code
        m.update({"cancelled": cancelled, "truncated": truncated})
        if full_output_path:
            m["fullOutputPath"] = full_output_path
        m["timestamp"] = self.ms()
        if exclude is not None:
            m["excludeFromContext"] = exclude
        return self.msg(name, m, ts=self.iso(), **kw)

    def custom_message(self, name, custom_type, content=_DEFAULT, display=True, details=None, **kw):
        p = {"customType": custom_type}
        if content is not Session._DEFAULT:
            p["content"] = content
        p["display"] = display
        if details is not None:
            p["details"] = details
        return self.entry("custom_message", name, p, **kw)

    def compaction(self, name, summary, first_kept, tokens_before, system_message=None, details=None,
                   u=None, from_hook=False, omit_first_kept=False, **kw):
        p = {"summary": summary}
        if not omit_first_kept:
            p["firstKeptEntryId"] = self.id(first_kept)
        p["tokensBefore"] = tokens_before
        p["details"] = details if details is not None else {"readFiles": ["src/todo.js"], "modifiedFiles": []}
        p["usage"] = u or usage(120, 180, 0, 1400)
        p["fromHook"] = from_hook
        if system_message is not None:
            p["systemMessage"] = system_message
        return self.entry("compaction", name, p, **kw)

    def checkpoint(self, sections=None, tools=("read", "bash", "edit", "write"), content=""):
        """A compaction systemMessage: the replay of the system messages so far."""
        m = {"role": "system", "content": content, "sections": dict(sections or SECTIONS), "timestamp": self.ms(1000)}
        m["toolsAdded"] = [tool(t) for t in tools]
        return m

    def branch_summary(self, name, from_id, summary, **kw):
        p = {"fromId": from_id}
        if summary is not None:
            p["summary"] = summary
        p["details"] = {"readFiles": [], "modifiedFiles": []}
        p["usage"] = usage(90, 140, 0, 600)
        p["fromHook"] = False
        return self.entry("branch_summary", name, p, **kw)

    def context_edit(self, name, target, replacement, **kw):
        tid = target[1] if isinstance(target, tuple) else self.id(target)
        return self.entry("context_edit", name, {"targetId": tid, "replacement": replacement}, **kw)

    def label(self, name, target, label=None, **kw):
        p = {"targetId": self.id(target)}
        if label is not None:
            p["label"] = label
        return self.entry("label", name, p, **kw)

    def session_info(self, name, session_name, **kw):
        return self.entry("session_info", name, {"name": session_name}, **kw)

    def usage_entry(self, name, **kw):
        return self.entry("usage", name, {"kind": "cache_warm", "provider": MODEL[0], "model": MODEL[1],
                                          "usage": usage(40, 10, 2400, 0)}, **kw)

    def std_start(self, system=True, level="off"):
        """header, model_change, thinking_level_change[, system message] as pi 1.6.0 writes them."""
        self.header()
        self.model_change(parent=None)
        self.thinking(level=level)
        if system:
            self.full_system()

    def leaf(self, name_or_line):
        """Record a non-default leaf for make-expected.sh (a name, or a line number for v1)."""
        self.leaves.append(name_or_line if isinstance(name_or_line, int) else self.id(name_or_line))

    # --- output ----------------------------------------------------------------------------
    def write(self, eol="\n", final_eol=True, raw_bytes=None):
        d = os.path.join(HERE, self.subdir)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, self.stem + ".jsonl")
        data = raw_bytes if raw_bytes is not None else (eol.join(self.lines) + (eol if final_eol and self.lines else "")).encode("utf-8")
        with open(path, "wb") as f:
            f.write(data)
        if not self.subdir and self.version != 1:
            # a listed leaf must not be the default leaf (pi's default = the last entry in file order)
            last_id = None
            for line in self.lines:
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                if o:
                    last_id = o.get("id") if isinstance(o, dict) else None
            assert last_id not in self.leaves, (self.stem, last_id)
            assert len(set(self.leaves)) == len(self.leaves), self.stem
        if self.subdir:
            ERRORS.append(self.stem)
        else:
            CASES[self.stem] = {"leaves": self.leaves, "v1": self.version == 1}
        return path


def summary_text(goal, done, nxt):
    return (f"## Goal\n- {goal}\n\n## Constraints & Preferences\n- Keep the existing CLI interface stable\n\n"
            f"## Progress\n### Done\n" + "".join(f"- [x] {d}\n" for d in done) +
            f"\n### In Progress\n- [ ] {goal}\n\n### Blocked\n- (none)\n\n## Key Decisions\n- **Small, test-driven changes**\n\n"
            f"## Next Steps\n1. {nxt}\n\n<read-files>\nsrc/todo.js\n</read-files>")


def conversation(s, prefix="", n=2, first_parent=Session._DEFAULT):
    """n user/assistant exchanges about the todo CLI."""
    qa = [
        ("What does `todo list` print for an empty list?", "It prints nothing: `list` loops over the todos and an empty array means no output."),
        ("And `todo done 7` when there is no todo 7?", "`markDone` finds no todo with id 7, so nothing changes and the CLI still prints `ok`."),
        ("Should it fail instead?", "Yes: exit with code 1 and print `no todo with id 7` so scripts can tell."),
        ("Where is the id parsed?", "In `src/cli.js`, `Number(args[0])` inside the `done` case."),
        ("Add a test for the missing id.", "Added `test/done.test.js` with one case for a missing id; it fails until `markDone` reports it."),
    ]
    for i in range(n):
        q, a = qa[i % len(qa)]
        kw = {"parent": first_parent} if i == 0 and first_parent is not Session._DEFAULT else {}
        s.user(f"{prefix}u{i + 1}", q, **kw)
        s.assistant(f"{prefix}a{i + 1}", a)


# =====================================================================================
# 1. Broken files that pi still loads
# =====================================================================================

def case_malformed_middle_line():
    s = Session("01-malformed-middle-line", "2026-11-30T09:00:00.000Z")
    s.std_start()
    s.user("u1", "Why does `todo add` crash when I pass `--due` without a value?")
    s.assistant("a1", "`args[dueIndex + 1]` is `undefined`, so `parseDue` returns an Invalid Date and `toISOString()` throws.")
    s.raw('{"type":"message","id":"5d1e0a77","parentId":')  # a half-written object
    s.raw("this line is not JSON at all")
    s.raw('{"type":"message" "id":"0c0ffee0"}')                 # missing comma
    s.user("u2", "Fix it so a missing value gives a friendly message.")
    s.assistant("a2", "Done: `todo add x --due` now prints `usage: todo add <title> --due <YYYY-MM-DD>` and exits 2.")
    s.write()


def case_crlf():
    s = Session("02-crlf-line-endings", "2026-11-30T09:10:00.000Z")
    s.std_start()
    s.user("u1", "List the source files.")
    s.assistant("a1", [s.call("a1", "bash", {"command": "ls src"})], stop="toolUse")
    s.result("r1", "a1", "bash", "cli.js\nstore.js\ntodo.js\n")
    s.assistant("a2", "Three files: `cli.js`, `store.js` and `todo.js`.")
    s.write(eol="\r\n")


def case_no_final_newline():
    s = Session("03-no-final-newline", "2026-11-30T09:20:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.write(final_eol=False)


def case_truncated_last_line():
    s = Session("04-truncated-last-line", "2026-11-30T09:30:00.000Z")
    s.std_start()
    conversation(s, n=1)
    s.user("u2", "Now make `todo rm` ask for confirmation.")
    s.tick(2500)
    # pi was killed while writing the assistant reply: the last line stops mid-string, no newline
    s.raw('{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"assistant","content":[{"type":"text","text":"I\'ll add a `--yes` flag and prompt with `readline` when it'
          % (s.id("a2"), s.id("u2"), s.iso()))
    s.write(final_eol=False)


def case_blank_lines():
    s = Session("05-blank-and-whitespace-lines", "2026-11-30T09:40:00.000Z")
    s.raw("")                       # a blank line before the header
    s.std_start()
    s.raw("")
    s.raw("   ")
    s.user("u1", "Is `store.js` synchronous?")
    s.raw("\t")
    s.raw("\r")                     # a lone carriage return (CRLF remnant)
    s.raw(" \t \u00a0 ")            # spaces, a tab, a no-break space
    s.assistant("a1", "Yes: `load` and `save` use `readFileSync` / `writeFileSync`.")
    s.raw("")
    s.raw("")
    s.user("u2", "Fine, keep it that way.")
    s.assistant("a2", "Keeping it synchronous.")
    s.raw("    ")
    s.raw("")
    s.write()


def case_garbage_before_header():
    s = Session("06-garbage-before-header", "2026-11-30T09:50:00.000Z")
    s.raw("\u0000\u0000\u0000\u0000")   # NUL bytes left by a crashed write: not JSON, skipped
    s.raw("{\"type\":\"sess")
    s.std_start()
    conversation(s, n=1)
    s.write()


def case_duplicate_header_0731():
    # pi 0.73.1's duplicate-header bug: a loaded file without an assistant message was flushed
    # again (header and every entry) at the first assistant reply. No system messages (0.73.1).
    s = Session("07-duplicate-header-0.73.1", "2026-11-30T10:00:00.000Z")
    start = len(s.lines)
    hdr = s.header()
    s.model_change(parent=None)
    s.thinking()
    s.user("u1", "Rename the `rm` command to `remove`, keep `rm` as an alias.")
    before = list(s.lines[start:])
    # the user reopens the file and prompts again: pi re-writes everything, header first
    s.lines.extend(before)
    s.user("u2", "Go ahead.", parent="u1")
    s.assistant("a2", "Done: `remove` is the command and `rm` is an alias in `src/cli.js`.", thinking_level=None)
    s.user("u3", "Update the README too.")
    s.assistant("a3", "README now documents `todo remove <id>` (alias `rm`).", thinking_level=None)
    s.write()


def case_second_header():
    s = Session("08-second-header-mid-file", "2026-11-30T10:10:00.000Z")
    s.std_start()
    conversation(s, n=1)
    # a header of another session pasted into the middle: pi ignores every header after the first
    s.obj({"type": "session", "version": 2, "id": "0199aa00-1111-7222-8333-444455556666",
           "timestamp": "2026-11-29T08:00:00.000Z", "cwd": "/home/dev/other-project"})
    s.user("u2", "What changed since yesterday?")
    s.assistant("a2", "Nothing in `src/`; only `todos.json` was modified.")
    s.write()


def case_json_scalar_lines():
    s = Session("09-json-non-object-lines", "2026-11-30T10:20:00.000Z")
    s.std_start()
    s.user("u1", "How many todos are overdue?")
    s.raw("42")
    s.raw('"a JSON string"')
    s.assistant("a1", "One: #2 *fix date parsing* (due 2025-03-01).")
    s.raw("[1,2,3]")
    s.raw("true")
    s.raw("{}")
    s.user("u2", "Mark it done.")
    s.assistant("a2", "Marked #2 as done.")
    s.write()


def case_json_falsy_lines():
    s = Session("10-json-null-and-falsy-lines", "2026-11-30T10:30:00.000Z")
    s.std_start()
    s.user("u1", "Does `todo list` sort by due date?")
    s.raw("null")
    s.raw("0")
    s.assistant("a1", "No, it prints todos in insertion order.")
    s.raw("false")
    s.raw('""')
    s.user("u2", "Sort by due date, undated last.")
    s.assistant("a2", "Done: `list` sorts by `due`, todos without a due date come last.")
    s.write()


def case_trailing_scalar():
    s = Session("11-trailing-non-object-line", "2026-11-30T10:40:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.raw("42")
    s.leaf("a2")
    s.write()


def case_damaged_tail():
    s = Session("12-damaged-entry-tail", "2026-11-30T10:50:00.000Z")
    s.std_start()
    s.user("u1", "Run the tests.")
    s.assistant("a1", [s.call("a1", "bash", {"command": "npm test 2>&1 | tail -3"})], stop="toolUse")
    s.result("r1", "a1", "bash", "# pass 5\n# fail 1\n", is_error=False)
    s.assistant("a2", "5 pass, 1 fails: `parseDue` rejects `2025-02-29`.")
    s.tick()
    # valid first keys, then a damaged tail that still ends with "}": JSON.parse fails, the
    # entry is lost and its children become orphans (roots of their own path)
    s.raw('{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"user","content":[{"type":"text","text":"Is 2025-02-29 a valid date?"}],"timestamp":%d},BROKEN}'
          % (s.id("u2"), s.id("a2"), s.iso(), s.ms()))
    s.last = "u2"
    s.assistant("a3", "No: 2025 is not a leap year, so the test's expectation is wrong.")
    s.user("u3", "Then fix the test.")
    s.assistant("a4", "Changed the test date to `2024-02-29`; all 6 tests pass.")
    s.leaf("a2")
    s.leaf("a3")
    s.write()


# =====================================================================================
# 2. Old formats
# =====================================================================================

def v1_assistant(s, text, stop="stop", content=None):
    s.tick(2500)
    return s.v1("message", {"message": {"role": "assistant", "content": content or [{"type": "text", "text": text}],
                                        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                                        "usage": {"input": 40, "output": 60, "cacheRead": 1200, "cacheWrite": 80,
                                                  "cost": {"input": 0.00012, "output": 0.0009, "cacheRead": 0.00036, "cacheWrite": 0.0003, "total": 0.00168}},
                                        "stopReason": stop, "timestamp": s.ms(-3)}}, ts=s.iso())


def v1_user(s, text):
    s.tick()
    return s.v1("message", {"message": {"role": "user", "content": text, "timestamp": s.ms()}}, ts=s.iso())


def case_v1_basic():
    s = Session("13-v1-basic", "2025-11-20T09:00:00.000Z", version=1)
    s.header(branchedFrom="/home/dev/.pi/agent/sessions/--home-dev-todo-cli--/2025-11-19T17-02-11-100Z_0b5e2a6c-8d4f-4a57-9b0e-3f2c1d0e9a88.jsonl",
             provider="anthropic", modelId="claude-sonnet-4-5", thinkingLevel="off", id="6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")
    v1_user(s, "What does `parseDue` accept?")                                          # index 1
    v1_assistant(s, "ISO dates (`YYYY-MM-DD`); anything else becomes an Invalid Date.")   # 2
    s.v1("thinking_level_change", {"thinkingLevel": "medium"})                           # 3
    kept = v1_user(s, "Make it accept `today` and `tomorrow`.")                          # 4
    s.tick(2500)
    v1_assistant(s, None, stop="toolUse", content=[{"type": "toolCall", "id": "toolu_01v1call0001", "name": "read", "arguments": {"path": "src/todo.js"}}])  # 5
    s.tick(300)
    s.v1("message", {"message": {"role": "toolResult", "toolCallId": "toolu_01v1call0001", "toolName": "read",
                                 "content": [{"type": "text", "text": "export function parseDue(s) {\n\treturn new Date(s);\n}\n"}],
                                 "isError": False, "timestamp": s.ms()}})                   # 6
    s.tick(2500)
    before = v1_assistant(s, "`parseDue` now maps `today`/`tomorrow` to dates before parsing.")  # 7
    s.v1("model_change", {"provider": "openai", "modelId": "gpt-5.1-codex"})              # 8
    s.v1("compaction", {"summary": summary_text("Make parseDue accept today/tomorrow.", ["Read `src/todo.js`", "Edited `parseDue`"], "Add tests"),
                        "firstKeptEntryIndex": 4, "tokensBefore": 5120})                     # 9 -> keeps index 4 (line 5)
    v1_user(s, "Add tests for both keywords.")
    s.tick(2500)
    s.v1("message", {"message": {"role": "assistant", "content": [{"type": "text", "text": "Added two tests in `test/todo.test.js`; both pass."}],
                                 "api": "openai-responses", "provider": "openai", "model": "gpt-5.1-codex",
                                 "usage": {"input": 900, "output": 40, "cacheRead": 0, "cacheWrite": 0,
                                           "cost": {"input": 0.001125, "output": 0.0004, "cacheRead": 0, "cacheWrite": 0, "total": 0.001525}},
                                 "stopReason": "stop", "timestamp": s.ms(-3)}})
    assert kept == 5
    s.leaf(before)
    s.write()


def case_v1_compaction_header_and_self():
    s = Session("14-v1-compaction-index-header-and-self", "2025-11-21T09:00:00.000Z", version=1)
    s.header(provider="anthropic", modelId="claude-sonnet-4-5", thinkingLevel="off", id="7a2e3d4c-5b6f-4071-9b8c-0d1e2f3a4b5c")
    v1_user(s, "Summarise the CLI commands.")                                   # 1
    v1_assistant(s, "`add`, `done`, `rm` and `list`.")                           # 2
    s.v1("compaction", {"summary": "The user asked for the CLI commands: add, done, rm, list.",
                        "firstKeptEntryIndex": 0, "tokensBefore": 2100})          # 3: index 0 = the header
    after_first = v1_user(s, "Which one is the slowest?")                        # 4
    v1_assistant(s, "`list`, because it re-reads `todos.json` each time.")       # 5
    s.v1("compaction", {"summary": "CLI commands: add, done, rm, list. `list` is the slowest (re-reads todos.json).",
                        "firstKeptEntryIndex": 6, "tokensBefore": 2600})          # 6: index of itself
    v1_user(s, "Cache it then.")                                                  # 7
    v1_assistant(s, "`list` now reads the file once per process.")               # 8
    s.leaf(after_first + 1)
    s.write()


def case_v1_compaction_past():
    s = Session("15-v1-compaction-index-past", "2025-11-22T09:00:00.000Z", version=1)
    s.header(provider="anthropic", modelId="claude-sonnet-4-5", thinkingLevel="off", id="8b3f4e5d-6c70-4182-8c9d-1e2f3a4b5c6d")
    v1_user(s, "Is `todos.json` pretty-printed?")                                # 1
    v1_assistant(s, "Yes, `save` uses `JSON.stringify(list, null, 2)`.")         # 2
    s.v1("compaction", {"summary": "todos.json is pretty-printed with 2 spaces.",
                        "firstKeptEntryIndex": 5, "tokensBefore": 1800})          # 3: index 5 = a later entry
    v1_user(s, "Use tabs instead.")                                               # 4
    mid = v1_assistant(s, "`save` now indents with a tab.")                      # 5
    s.v1("compaction", {"summary": "todos.json is indented with tabs now.",
                        "firstKeptEntryIndex": 99, "tokensBefore": 2000})         # 6: index out of range
    v1_user(s, "Thanks.")                                                         # 7
    v1_assistant(s, "You're welcome.")                                           # 8
    s.leaf(mid)
    s.write()


def case_v1_with_ids():
    # a version-1 header (no "version") over entries that already carry ids and a branch:
    # the v1->v2 migration overwrites every id and chains the entries in file order
    s = Session("16-v1-header-with-tree-entries", "2025-11-23T09:00:00.000Z", version=1)
    s.header(id="9c405f6e-7d81-4293-9dae-2f3a4b5c6d7e")
    s.user("u1", "Which Node version does the project need?", parent=None)
    s.assistant("a1", "Node 18 or newer (`node:test`).", thinking_level=None)
    s.user("u2", "Can it run on Node 16?", parent="u1")           # sibling branch of a1
    s.assistant("a2", "No: `node:test` is missing there.", thinking_level=None)
    s.user("u3", "Add an engines field then.", parent="a1")
    s.assistant("a3", 'Added `"engines": {"node": ">=18"}` to `package.json`.', thinking_level=None)
    s.leaf(5)   # line of a2
    s.write()


def case_v2_hookmessage():
    s = Session("17-v2-hookmessage", "2025-12-10T09:00:00.000Z", version=2)
    s.header()
    s.model_change(parent=None)
    s.thinking()
    s.user("u1", "Show me my todos.")
    s.tick()
    s.msg("h1", {"role": "hookMessage", "customType": "todo-snapshot", "content": "Snapshot: 2 open todos (#2, #3).",
                 "display": True, "details": {"count": 3}, "timestamp": s.ms()}, ts=s.iso())
    s.assistant("a1", "#2 fix date parsing (overdue) and #3 add --json output.", thinking_level=None)
    s.tick()
    s.msg("h2", {"role": "hookMessage", "customType": "reminder",
                 "content": [{"type": "text", "text": "Reminder: the release is on Friday."}],
                 "display": False, "timestamp": s.ms()}, ts=s.iso())
    s.user("u2", "Which first?")
    s.assistant("a2", "#2: it is overdue and blocks the release.", thinking_level=None)
    s.user("u3", "Skip the reminders.", parent="a1")
    s.assistant("a3", "Okay, no reminders.", thinking_level=None)
    s.leaf("a2")
    s.write()


def case_v3_custom_role():
    s = Session("18-v3-custom-role-messages", "2025-12-11T09:00:00.000Z")
    s.std_start(system=False)
    s.user("u1", "How many todos are open?")
    s.tick()
    s.msg("c1", {"role": "custom", "customType": "todo-snapshot", "content": "Snapshot: 2 open, 1 done.",
                 "display": True, "details": {"open": 2, "done": 1}, "timestamp": s.ms()}, ts=s.iso())
    s.assistant("a1", "Two are open.", thinking_level=None)
    s.tick()
    s.msg("c2", {"role": "custom", "customType": "reminder",
                 "content": [{"type": "text", "text": "Reminder: #2 is overdue."}], "display": False, "timestamp": s.ms()}, ts=s.iso())
    s.tick()
    s.msg("c3", {"role": "custom", "customType": "empty-note", "content": None, "display": True, "timestamp": s.ms()}, ts=s.iso())
    s.user("u2", "Thanks.")
    s.assistant("a2", "You're welcome.", thinking_level=None)
    s.write()


# =====================================================================================
# 3. Leaf: metadata entries as the last line
# =====================================================================================

def case_leaf_label():
    s = Session("19-leaf-label", "2026-11-30T11:00:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.label("l1", "u1", "start-here")
    s.leaf("a1")
    s.write()


def case_leaf_session_info():
    s = Session("20-leaf-session-info", "2026-11-30T11:10:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.session_info("n1", "Fix done for missing ids")
    s.write()


def case_leaf_usage():
    s = Session("21-leaf-usage", "2026-11-30T11:20:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.usage_entry("w1")
    s.write()


def case_leaf_context_edit():
    s = Session("22-leaf-context-edit", "2026-11-30T11:30:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.context_edit("e1", "u1", {"content": "What does `todo list` print? (edited)"})
    s.leaf("a2")   # the leaf before the edit: the original prompt is back
    s.write()


# =====================================================================================
# 4. Structure
# =====================================================================================

def case_orphans():
    s = Session("23-orphans", "2026-11-30T12:00:00.000Z")
    s.std_start()
    conversation(s, n=1)
    # parent "9f9f9f9f" does not exist: an orphan with two generations of children
    s.user("o1", "Continue from where we left off: the `done` command.", parent=("id", "9f9f9f9f"))
    s.assistant("o2", "`done` marks a todo finished; it ignores unknown ids.")
    # parentId "" (empty string): pi's path walk stops there, getTree treats it as an orphan
    s.user("p1", "Second attempt: what does `rm` do?", parent=("id", ""))
    s.assistant("p2", "`rm` deletes a todo by id.")
    s.user("o3", "Make it fail on unknown ids.", parent="o2")
    s.assistant("o4", "`done` now exits 1 with `no todo with id N` for unknown ids.")
    s.leaf("a1")
    s.leaf("o2")
    s.leaf("p2")
    s.write()


def case_duplicate_ids():
    s = Session("24-duplicate-ids", "2026-11-30T12:10:00.000Z")
    s.std_start()
    s.user("u1", "What is the default priority?")
    s.assistant("dup", "2 (medium).")
    s.user("u2", "Good.", parent="dup")       # child of the FIRST entry with this id (when written)
    s.assistant("a2", "Anything else?")
    # a later entry reuses the id of "dup" (pi's id map keeps the last one)
    s.user("dup", "Actually, what is the highest priority?", parent="u1")
    s.assistant("a3", "1 (high).", parent="dup")
    s.user("u4", "Use 1 for overdue todos.")
    s.assistant("a4", "Overdue todos now get priority 1.")
    s.leaf("a2")
    s.leaf("dup")
    s.write()


def case_out_of_order():
    s = Session("25-children-out-of-order", "2026-11-30T12:20:00.000Z")
    s.std_start()
    s.user("u1", "Suggest a name for the `--json` flag.")
    base = s.clock
    # two answers (siblings) written newest first
    s.clock = base + datetime.timedelta(seconds=20)
    s.assistant("b1", "`--format json`, leaving room for `--format csv`.", parent="u1")
    s.clock = base + datetime.timedelta(seconds=5)
    s.assistant("c1", "Just `--json`.", parent="u1")
    # a child written BEFORE its parent (the parent is on a later line)
    s.clock = base + datetime.timedelta(seconds=40)
    s.assistant("d2", "`--format csv` can come later.", parent="d1")
    s.clock = base + datetime.timedelta(seconds=30)
    s.user("d1", "Go with `--format`.", parent="b1")
    s.clock = base + datetime.timedelta(seconds=10)
    s.user("c2", "Go with `--json`.", parent="c1")
    s.leaf("d2")
    s.leaf("c1")
    s.write()


def case_sibling_timestamps():
    s = Session("26-equal-and-invalid-timestamps", "2026-11-30T12:30:00.000Z")
    s.std_start()
    s.user("u1", "Explain the store format.")
    same = s.tick()
    # three siblings with the SAME entry timestamp, two with invalid ones, one with an offset
    s.custom_message("x1", "note", "Note: todos.json is an array of objects.", ts=same, parent="u1")
    s.custom_message("x2", "note", "Note: dates are ISO strings.", ts=same, parent="u1")
    s.custom_message("x3", "note", "Note: ids are never reused.", ts=same, parent="u1")
    s.custom_message("y1", "note", "Note with an invalid timestamp.", ts="not a timestamp", parent="u1")
    s.branch_summary("y2", s.id("x1"), "The user looked at the store format on another branch.", ts="yesterday", parent="u1")
    s.branch_summary("z1", s.id("x2"), "Summary written with a +02:00 offset.", ts="2026-11-30T14:30:30.000+02:00", parent="u1")
    s.assistant("y3", "The store is a JSON array; each todo has id, title, done and due.", parent="y2")
    s.leaf("x1")
    s.leaf("x3")
    s.leaf("y1")
    s.leaf("z1")
    s.write()


def case_cycle_off_path():
    # a self-parent entry and an A<->B cycle that the default leaf's path never reaches:
    # pi loads and projects the file; a path INTO them would hang pi (see errors/)
    s = Session("27-cycles-off-path", "2026-11-30T12:40:00.000Z")
    s.std_start()
    s.user("u1", "Which tests are slow?")
    s.assistant("a1", "None take more than 50 ms.")
    s.user("self", "A self-parented prompt.", parent="self")
    s.assistant("cyc_a", "Cycle entry A.", parent="cyc_b")
    s.assistant("cyc_b", "Cycle entry B.", parent="cyc_a")
    s.user("u2", "Then run them in watch mode.", parent="a1")
    s.assistant("a2", "Use `node --test --watch test/`.")
    s.write()


# =====================================================================================
# 5. Compaction
# =====================================================================================

def case_compaction_first_kept_missing():
    s = Session("28-compaction-first-kept-missing", "2026-11-30T13:00:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.compaction("c1", "## Checkpoint\n- `done` ignores unknown ids; it should fail.", None, 2400,
                 system_message=s.checkpoint(), omit_first_kept=True, from_hook=True,
                 details={"source": "checkpoint-extension"})
    s.user("u3", "So what's next?")
    s.assistant("a3", "Make `done` exit 1 on unknown ids.")
    s.write()


def case_compaction_off_path():
    s = Session("29-compaction-first-kept-off-path", "2026-11-30T13:10:00.000Z")
    s.std_start()
    conversation(s, n=1)
    s.user("b_u2", "Branch B: add a `--due` shortcut `-d`.")
    s.assistant("b_a2", "Added `-d` as an alias of `--due`.")
    s.user("a_u2", "Branch A: add a `--priority` flag.", parent="a1")
    s.assistant("a_a2", "Added `--priority <1-3>` to `add`.")
    # compaction on branch A whose firstKeptEntryId names an entry on branch B
    s.compaction("a_c", summary_text("Add a --priority flag.", ["Edited `src/cli.js`"], "Test it"), "b_u2", 3100,
                 system_message=s.checkpoint())
    s.user("a_u3", "Test it.")
    s.assistant("a_a3", "`todo add x --priority 1` stores priority 1.")
    # compaction on branch B whose firstKeptEntryId is its own child (after the compaction)
    s.compaction("b_c", summary_text("Add a -d shortcut.", ["Edited `src/cli.js`"], "Document it"), "b_u3", 2900,
                 system_message=s.checkpoint(), parent="b_a2")
    s.user("b_u3", "Document `-d` in the README.")
    s.assistant("b_a3", "README mentions `-d` next to `--due`.")
    s.leaf("a_a3")
    s.leaf("b_a2")
    s.write()


def case_compaction_retain_none():
    s = Session("30-compaction-retain-none", "2026-11-30T13:20:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.context_edit("e1", "a1", None)
    s.system("s2", {"rules": SECTIONS["rules"].replace("</rules>", "- Prefer small commits\n</rules>")})
    s.compaction("c1", "## Checkpoint\n\n- `done` should fail on unknown ids.\n- Next: implement it.", "c1", 2600,
                 system_message=s.checkpoint(sections={**SECTIONS, "rules": SECTIONS["rules"].replace("</rules>", "- Prefer small commits\n</rules>")}),
                 from_hook=True, details={"source": "checkpoint-extension", "reason": "user requested /checkpoint"})
    s.user("u3", "Implement it.")
    s.assistant("a3", "`markDone` now throws for unknown ids and the CLI exits 1.")
    s.leaf("s2")
    s.write()


def case_two_compactions():
    s = Session("31-two-compactions", "2026-11-30T13:30:00.000Z")
    s.std_start()
    conversation(s, prefix="x", n=2)
    s.compaction("c1", summary_text("Understand `done`.", ["Read `src/cli.js`"], "Decide on errors"), "xu2", 3000,
                 system_message=s.checkpoint())
    s.user("u3", "Write the failing test first.")
    s.assistant("a3", "Added `test/done.test.js`; it fails as expected.")
    s.user("u4", "Now fix it.")
    s.assistant("a4", "`markDone` throws on unknown ids; the test passes.")
    s.compaction("c2", summary_text("Make `done` fail on unknown ids.", ["Added `test/done.test.js`", "Fixed `markDone`"], "Release"), "u4", 3600,
                 system_message=s.checkpoint())
    s.user("u5", "Bump the version.")
    s.assistant("a5", "`package.json` is now 0.4.0.")
    s.leaf("a3")
    s.leaf("c1")
    s.write()


def case_older_compaction_in_kept_range():
    s = Session("32-older-compaction-in-kept-range", "2026-11-30T13:40:00.000Z")
    s.std_start()
    conversation(s, prefix="x", n=2)
    s.compaction("c1", summary_text("Understand `done`.", ["Read `src/cli.js`"], "Fix it"), "xu2", 3000,
                 system_message=s.checkpoint())
    s.system("s2", {"rules": SECTIONS["rules"].replace("</rules>", "- Run the tests after every change\n</rules>")})
    s.user("u3", "Fix it.")
    s.assistant("a3", "Fixed: unknown ids now fail.")
    # the newer compaction keeps from xu1, which lies BEFORE c1: c1 is inside the kept range
    s.compaction("c2", "## Checkpoint\n- Fixed `done`.", "xu1", 4100,
                 system_message=s.checkpoint(sections={**SECTIONS, "rules": SECTIONS["rules"].replace("</rules>", "- Run the tests after every change\n</rules>")}))
    s.user("u4", "Release it.")
    s.assistant("a4", "Tagged v0.4.0.")
    s.write()


def case_compaction_sibling_branch():
    s = Session("33-compaction-on-sibling-branch", "2026-11-30T13:50:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.compaction("c1", summary_text("Make `done` fail.", ["Read `src/cli.js`"], "Fix it"), "u2", 2800,
                 system_message=s.checkpoint())
    s.user("u3", "Fix it now.")
    s.assistant("a3", "Fixed.")
    # the other branch (from a1) has no compaction
    s.user("b_u2", "Leave `done` as it is; document the behaviour instead.", parent="a1")
    s.assistant("b_a2", "README says `done` ignores unknown ids.")
    s.leaf("a3")
    s.write()


def case_compaction_system_kept():
    s = Session("34-compaction-system-in-kept-range", "2026-11-30T14:00:00.000Z")
    s.std_start()
    s.user("u1", "Disable the write tool for now.")
    s.system("s1", {"tools": SECTIONS["tools"].replace("- write: Create or overwrite files\n", "")}, tools_removed=["write"])
    s.assistant("a1", "`write` is disabled; I'll only edit existing files.")
    s.system("s2", {"project": "<project>\ntodo-cli: a tiny command-line todo list\n</project>"})
    s.user("u2", "Add a `help` command.")
    s.assistant("a2", "Added `todo help`.")
    # branch 1: compaction WITH systemMessage; s1/s2 lie in the kept range and are dropped
    s.compaction("c1", summary_text("Add a help command.", ["Edited `src/cli.js`"], "Test it"), "u1", 3300,
                 system_message=s.checkpoint(sections={**SECTIONS, "tools": SECTIONS["tools"].replace("- write: Create or overwrite files\n", ""),
                                                       "project": "<project>\ntodo-cli: a tiny command-line todo list\n</project>"},
                                             tools=("read", "bash", "edit")))
    s.system("s3", {"cwd": "<cwd>\n/home/dev/todo-cli/packages/core\n</cwd>"})
    s.user("u3", "Run it.")
    s.assistant("a3", "`todo help` prints the usage line.")
    # branch 2: compaction WITHOUT systemMessage (0.73.1 style) keeping the same range
    s.compaction("d1", summary_text("Add a help command.", ["Edited `src/cli.js`"], "Test it"), "u1", 3300, parent="a2")
    s.user("d_u3", "Run it here too.")
    s.assistant("d_a3", "Same output: the usage line.")
    s.leaf("a3")
    s.write()


# =====================================================================================
# 6. System messages
# =====================================================================================

def case_system_replay():
    s = Session("35-system-replay", "2026-11-30T14:10:00.000Z")
    s.std_start()
    s.user("u1", "Let's start.")
    s.assistant("a1", "Ready.")
    # updated rules keep their position; docs added; tools section removed (null)
    s.system("s1", {"rules": SECTIONS["rules"].replace("</rules>", "- Ask before deleting files\n</rules>"),
                    "docs": "<docs>\nProject docs: README.md\n</docs>", "tools": None})
    s.user("u2", "Use grep instead of bash.")
    # toolsRemoved runs before toolsAdded: "bash" removed and re-added (moves to the end),
    # "grep" added, "write" removed, "ls" removed although it was never added
    s.system("s2", {"tools": "<tools>\n- read, edit, bash, grep\n</tools>"},
             tools_added=["bash", "grep"], tools_removed=["write", "bash", "ls"])
    s.assistant("a2", "Switched to grep for searches.")
    # content text: a string, then text blocks, then null content (normalised to "")
    s.system("s3", content="Extra instruction: answer in English.")
    s.system("s4", content=[{"type": "text", "text": "Block one."}, {"type": "text", "text": "Block two."}])
    s.system("s5", content=None)
    # preamble removed and re-added: moves to the end
    s.system("s6", {"preamble": None})
    s.system("s7", {"preamble": "You are pi, re-added.", "cwd": None})
    s.user("u3", "What tools do you have?")
    s.assistant("a3", "read, edit, bash and grep.")
    s.leaf("a1")
    s.leaf("a2")
    s.write()


def case_system_in_tool_round():
    # a pre-1.x conversation (no system message at the start) resumed under 1.6.0: a full
    # system message mid-branch, then an update between a tool call and its result
    s = Session("36-system-mid-branch-and-tool-round", "2026-11-30T14:20:00.000Z")
    s.std_start(system=False)
    s.user("u1", "Hi, what's this project?")
    s.assistant("a1", "A tiny todo CLI.", thinking_level=None)
    s.full_system("s1")
    s.user("u2", "Read the CLI entry point.")
    s.assistant("a2", [{"type": "text", "text": "Reading it."}, s.call("a2", "read", {"path": "src/cli.js"})], stop="toolUse")
    s.system("s2", {"rules": SECTIONS["rules"].replace("</rules>", "- Never print secrets\n</rules>")})
    s.result("r2", "a2", "read", "#!/usr/bin/env node\nimport { load, save } from \"./store.js\";\n")
    s.assistant("a3", "It loads the store and dispatches on the first argument.")
    s.write()


# =====================================================================================
# 7. Context edits
# =====================================================================================

def case_edit_replacements():
    s = Session("37-context-edit-replacements", "2026-11-30T14:30:00.000Z")
    s.std_start()
    s.user("u1", "Print the README, please.")
    s.assistant("a1", "Here is the README: ...")
    s.user("u2", "Now list the tests and the sources.")
    s.assistant("a2", [s.call("a2a", "bash", {"command": "ls test"}), s.call("a2b", "bash", {"command": "ls src"})], stop="toolUse")
    s.result("r2a", "a2a", "bash", "todo.test.js\n")
    s.result("r2b", "a2b", "bash", "cli.js\nstore.js\ntodo.js\n")
    s.custom_message("cm1", "todo-snapshot", "Snapshot: 3 todos.", details={"count": 3})
    s.custom_message("cm2", "reminder", [{"type": "text", "text": "Reminder: release on Friday."}], display=False)
    s.assistant("a3", "One test file, three sources.")
    s.user("u3", "Thanks.")
    s.assistant("a4", "You're welcome.")
    s.leaf("a4")   # the leaf before every edit: nothing is edited
    s.context_edit("e1", "u1", {"content": "Summarise the README."})                     # user: string stays a string
    s.context_edit("e2", "a1", {"content": "README summary: a tiny todo CLI."})          # assistant: string -> one text block
    s.context_edit("e3", "r2a", {"content": "[test listing elided]"})                    # toolResult: string -> one text block
    s.context_edit("e4", "r2b", {"content": [{"type": "text", "text": "3 files"}]})      # toolResult: array
    s.context_edit("e5", "cm1", {"content": "Snapshot (edited)."})                       # custom: string stays a string
    s.context_edit("e6", "cm2", None)                                                    # custom: omitted
    s.context_edit("e7", "u2", {"content": [{"type": "text", "text": "List the tests."}]})  # user: array
    s.context_edit("e8", "a3", None)
    s.leaf("e8")
    s.context_edit("e9", "a3", {"content": "Edited: one test file."})                    # several edits: the last wins
    s.context_edit("e10", "u3", {"content": "Thanks (first edit)."})
    s.context_edit("e11", "u3", None)                                                    # ... and the last one is an omission
    s.context_edit("e12", "a4", {})                                                      # replacement without content
    s.context_edit("e13", ("id", "0badf00d"), None)                                      # unknown target: no effect
    s.write()


def case_edit_sibling_branch():
    s = Session("38-context-edit-sibling-branch", "2026-11-30T14:40:00.000Z")
    s.std_start()
    conversation(s, n=2)
    # branch B (from a2) omits u1 and replaces a2; branch A (also from a2) has no edit
    s.context_edit("e1", "u1", None)
    s.context_edit("e2", "a2", {"content": "Edited on branch B."})
    s.user("b_u3", "Branch B question.")
    s.assistant("b_a3", "Branch B answer.")
    s.user("a_u3", "Branch A question.", parent="a2")
    s.assistant("a_a3", "Branch A answer.")
    s.leaf("b_a3")
    s.write()


def case_edit_compaction():
    s = Session("39-context-edit-on-compaction", "2026-11-30T14:50:00.000Z")
    s.std_start()
    conversation(s, n=2)
    s.compaction("c1", summary_text("Make `done` fail.", ["Read `src/cli.js`"], "Fix it"), "u2", 2800,
                 system_message=s.checkpoint())
    s.user("u3", "Fix it.")
    s.assistant("a3", "Fixed.")
    # branch 1: omit the newest compaction (drops its systemMessage AND its summary)
    s.context_edit("e1", "c1", None)
    s.user("u4", "Next?")
    s.assistant("a4", "Release.")
    # branch 2: a content replacement on the compaction changes nothing
    s.context_edit("f1", "c1", {"content": "ignored replacement"}, parent="a3")
    s.user("f_u4", "Next, on branch 2?")
    s.assistant("f_a4", "Also release.")
    s.leaf("a4")
    s.write()


def case_edit_before_kept_range():
    s = Session("40-context-edit-outside-kept-range", "2026-11-30T15:00:00.000Z")
    s.std_start()
    s.user("u1", "Read `src/todo.js`.")
    s.assistant("a1", "It exports addTodo, markDone, removeTodo and parseDue.")
    # an edit BEFORE the kept range, targeting an entry that is kept (a2): ignored
    s.context_edit("e1", "a2", None)
    s.user("u2", "Which one parses dates?")
    s.assistant("a2", "`parseDue`.")
    s.user("u3", "Show it.")
    s.assistant("a3", "`export function parseDue(s) { return new Date(s); }`")
    # an edit INSIDE the kept range targeting an entry before it (a1): nothing to edit
    s.context_edit("e2", "a1", {"content": "edited a1"})
    # an edit INSIDE the kept range targeting a kept entry (u3): applied
    s.context_edit("e3", "u3", {"content": "Show `parseDue` (edited)."})
    s.compaction("c1", summary_text("Understand parseDue.", ["Read `src/todo.js`"], "Fix it"), "u2", 2700,
                 system_message=s.checkpoint())
    s.user("u4", "Fix it.")
    s.assistant("a4", "`parseDue` now rejects invalid dates.")
    s.leaf("e3")
    s.write()


def case_edit_other_roles():
    s = Session("41-context-edit-system-bash-summary", "2026-11-30T15:10:00.000Z")
    s.std_start()
    s.system("s_omit", {"docs": "<docs>\nomitted section\n</docs>"})
    s.system("s_repl", {"project": "<project>\ntodo-cli\n</project>"})
    s.bash("b_omit", "git status --short", " M src/cli.js\n")
    s.bash("b_repl", "git log --oneline -1", "a1b2c3d fix parseDue\n")
    s.branch_summary("bs_omit", "root", "The user tried a different approach first.")
    s.branch_summary("bs_repl", "root", "Another abandoned attempt.")
    s.user("u1", "Commit it.")
    s.assistant("a1", "Committed as `fix: reject invalid due dates`.")
    s.context_edit("e1", "s_omit", None)
    s.context_edit("e2", "s_repl", {"content": "replaced system content"})
    s.context_edit("e3", "b_omit", None)
    s.context_edit("e4", "b_repl", {"content": "replaced bash content"})
    s.context_edit("e5", "bs_omit", None)
    s.context_edit("e6", "bs_repl", {"content": "replaced summary content"})
    s.write()


# =====================================================================================
# 8. Message variants
# =====================================================================================

def case_branch_summaries():
    s = Session("42-branch-summary-variants", "2026-11-30T15:20:00.000Z")
    s.std_start()
    s.user("u1", "Try a regex for `parseDue`.")
    s.assistant("a1", "`/^\\d{4}-\\d{2}-\\d{2}$/` validates the shape first.")
    s.user("x_u2", "Try `Date.parse` instead.")
    s.assistant("x_a2", "`Date.parse` accepts too much (`2025-02-30` rolls over).")
    # back to a1 with an empty summary (no message), then a 1.6-style summary (fromId = old leaf),
    # then a 0.73.1-style one (fromId = its parent), then one without a summary key
    s.branch_summary("bs_empty", s.id("x_a2"), "", parent="a1")
    s.branch_summary("bs_new", s.id("x_a2"), "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n`Date.parse` accepts invalid dates such as 2025-02-30.")
    s.branch_summary("bs_old", s.id("bs_new"), "Old-style summary: fromId is the entry it hangs from.")
    s.branch_summary("bs_missing", s.id("bs_old"), None)
    s.user("u3", "Keep the regex then.")
    s.assistant("a3", "Kept the regex and added a round-trip check.")
    # a summary at the very start of a second root: fromId "root"
    s.branch_summary("bs_root", "root", "The user started over from the beginning.", parent=None)
    s.user("r_u1", "New start: add a `--version` flag.")
    s.assistant("r_a1", "`todo --version` prints 0.3.0.")
    s.leaf("a3")
    s.write()


def case_bash_variants():
    s = Session("43-bash-execution-variants", "2026-11-30T15:30:00.000Z")
    s.std_start()
    s.bash("ok", "node --version", "v22.21.1\n")
    s.bash("excluded", "cat ~/.npmrc", "//registry.npmjs.org/:_authToken=REDACTED\n", exclude=True)
    s.bash("included_false", "pwd", "/home/dev/todo-cli\n", exclude=False)
    s.bash("null_exit", "sleep 1 & kill %1", "", exit_code=None)
    s.bash("absent_exit", "true", "", exit_code="absent")
    s.bash("fail", "npm test 2>&1 | tail -2", "# pass 5\n# fail 1\n", exit_code=1)
    s.bash("cancelled", "npm run watch", "watching src/ ...\n", exit_code=None, cancelled=True)
    s.bash("cancelled_exit", "sleep 100", "", exit_code=130, cancelled=True)
    s.bash("trunc_path", "seq 1 3000", "2999\n3000\n", truncated=True, full_output_path="/home/dev/.tmp/pi-bash-1a2b3c4d.log")
    s.bash("trunc_nopath", "yes | head -100000", "y\ny\n", truncated=True)
    s.bash("empty", "touch todos.json", "")
    s.user("u1", "What do these outputs tell you?")
    s.assistant("a1", "Node 22, one failing test, and the watcher was cancelled.")
    s.write()


def case_custom_message_variants():
    s = Session("44-custom-message-variants", "2026-11-30T15:40:00.000Z")
    s.std_start()
    s.user("u1", "Show the extension messages.")
    s.custom_message("m_str", "note", "A string note.")
    s.custom_message("m_blocks", "snapshot", [{"type": "text", "text": "Snapshot:"},
                                              {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "mimeType": "image/png"}],
                     details={"todos": 3})
    s.custom_message("m_hidden", "reminder", "Hidden reminder: release on Friday.", display=False, details={"source": "remind"})
    s.custom_message("m_missing", "heartbeat")            # no content key at all
    s.custom_message("m_null", "heartbeat", None)          # content null
    s.custom_message("m_empty", "note", "")
    s.assistant("a1", "Five extension messages, one hidden.")
    s.write()


def case_null_content():
    s = Session("45-null-content", "2026-11-30T15:50:00.000Z")
    s.std_start()
    s.tick()
    s.msg("u_null", {"role": "user", "content": None, "timestamp": s.ms()}, ts=s.iso())
    s.tick()
    s.msg("u_missing", {"role": "user", "timestamp": s.ms()}, ts=s.iso())
    s.assistant("a_null", None, stop="toolUse")
    s.tick()
    s.msg("r_null", {"role": "toolResult", "toolCallId": "toolu_01nullcontent0000000000", "toolName": "bash",
                     "content": None, "isError": False, "timestamp": s.ms()}, ts=s.iso())
    s.tick()
    s.msg("s_null", {"role": "system", "content": None, "sections": {"note": "<note>\nnull content\n</note>"}, "timestamp": s.ms()}, ts=s.iso())
    s.tick()
    s.msg("s_missing", {"role": "system", "sections": {"note2": "<note2>\nmissing content\n</note2>"}, "timestamp": s.ms()}, ts=s.iso())
    s.tick()
    s.msg("c_null", {"role": "custom", "customType": "note", "content": None, "display": True, "timestamp": s.ms()}, ts=s.iso())
    s.user("u1", "Still there?")
    s.assistant("a1", "Yes.")
    s.write()


# =====================================================================================
# 13. Error and aborted assistants
# =====================================================================================

def case_error_aborted():
    s = Session("46-error-and-aborted-assistants", "2026-11-30T16:00:00.000Z")
    s.std_start()
    s.user("u1", "Explain `store.js`.")
    s.assistant("err", [], stop="error", u=dict(ZERO_USAGE),
                error='529: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    # 1.6.0 retry: an omission edit, the retry as its child
    s.context_edit("omit", "err", None)
    s.assistant("retry", "`store.js` loads and saves `todos.json`.")
    s.user("u2", "And the date handling?")
    s.assistant("abort", "Dates are revived in `load`: each `due` string", stop="aborted", error="This operation was aborted")
    s.user("u3", "Sorry, go on.")
    s.assistant("a3", "Each `due` string becomes a `Date`; `save` writes ISO strings back.")
    # 0.73.1 retry: directly under the error entry, no edit
    s.assistant("retry073", "`store.js` reads and writes `todos.json` (0.73.1-style retry).", parent="err", thinking_level=None)
    s.leaf("a3")
    s.leaf("err")
    s.write()


def case_trailing_toolcall():
    s = Session("47-unanswered-tool-calls", "2026-11-30T16:10:00.000Z")
    s.std_start()
    s.user("u1", "Read both source files.")
    s.assistant("a1", [s.call("c1", "read", {"path": "src/todo.js"}), s.call("c2", "read", {"path": "src/cli.js"})], stop="toolUse")
    s.result("r1", "c1", "read", "export function addTodo(list, title, due) {\n")
    # c2 never got a result: the user interrupted with a new prompt
    s.user("u2", "Stop, only the first one.")
    s.assistant("a2", [{"type": "text", "text": "Reading `package.json` instead."}, s.call("c3", "read", {"path": "package.json"})], stop="toolUse")
    s.leaf("r1")
    s.write()


# =====================================================================================
# errors/: files pi cannot handle (no golden)
# =====================================================================================

def errors():
    E = "errors"
    Session("empty", "2026-11-30T17:00:00.000Z", subdir=E).write(raw_bytes=b"")
    Session("whitespace-only", "2026-11-30T17:00:00.000Z", subdir=E).write(raw_bytes=b"  \n\n\t\n \r\n")

    s = Session("no-header", "2026-11-30T17:00:00.000Z", subdir=E)
    s.user("u1", "Hello?", parent=None)
    s.assistant("a1", "Hi.")
    s.write()

    s = Session("header-on-second-line", "2026-11-30T17:00:00.000Z", subdir=E)
    s.user("u1", "Hello?", parent=None)
    s.header()
    s.assistant("a1", "Hi.", parent="u1")
    s.write()

    s = Session("header-id-not-string", "2026-11-30T17:00:00.000Z", subdir=E)
    s.header(id=None)
    s.lines[-1] = s.lines[-1].replace('"id":"' + json.loads(s.lines[-1])["id"] + '"', '"id":20261130')
    conversation(s, n=1, first_parent=None)
    s.write()

    s = Session("header-id-missing", "2026-11-30T17:00:00.000Z", subdir=E)
    s.obj({"type": "session", "version": 3, "timestamp": s.iso(), "cwd": CWD})
    conversation(s, n=1, first_parent=None)
    s.write()

    s = Session("utf8-bom", "2026-11-30T17:00:00.000Z", subdir=E)
    s.std_start()
    conversation(s, n=1)
    s.write(raw_bytes=b"\xef\xbb\xbf" + ("\n".join(s.lines) + "\n").encode())

    s = Session("self-parent", "2026-11-30T17:00:00.000Z", subdir=E)
    s.std_start()
    s.user("u1", "Which tests are slow?")
    s.assistant("a1", "None.")
    s.user("self", "A prompt whose parentId is its own id.", parent="self")
    s.assistant("a2", "An answer below it.")
    s.write()

    s = Session("parent-cycle", "2026-11-30T17:00:00.000Z", subdir=E)
    s.std_start()
    s.user("cyc_a", "Cycle entry A (parent: B).", parent="cyc_b")
    s.assistant("cyc_b", "Cycle entry B (parent: A).", parent="cyc_a")
    s.user("u3", "A child of B.")
    s.assistant("a3", "The leaf.")
    s.write()

    s = Session("v1-non-object-line", "2025-11-20T09:00:00.000Z", version=1, subdir=E)
    s.header(id="5e0c1b2a-3948-4e5f-8a6b-7c8d9e0f1a2b")
    v1_user(s, "Hello?")
    s.raw("42")
    v1_assistant(s, "Hi.")
    s.write()

    s = Session("message-entry-without-message", "2026-11-30T17:00:00.000Z", subdir=E)
    s.std_start()
    s.user("u1", "Hello?")
    s.entry("message", "m1", {})
    s.assistant("a1", "Hi.")
    s.write()


# =====================================================================================

def write_make_expected():
    out = ["#!/usr/bin/env bash",
           "# Regenerates testdata/edge/expected/ with the real pi (the oracle in ../shared/pi-oracle).",
           "# Written by make.py (python3 testdata/edge/make.py); every leaf is listed explicitly.",
           "# Each golden is exactly what context.mjs printed, re-indented with 1 space and with `file`",
           "# made relative to testdata/ (edge/<stem>.jsonl).",
           "set -euo pipefail",
           'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
           'ORACLE="${PI_ORACLE_DIR:-$HERE/../../../shared/pi-oracle}"',
           "",
           "golden() {  # golden STEM NAME [ARGS...]",
           '\tlocal stem="$1" name="$2"; shift 2',
           '\tlocal f="$HERE/$stem.jsonl" out="$HERE/expected/$stem/$name.context.json"',
           '\tmkdir -p "$HERE/expected/$stem"',
           '\tlocal before; before="$(sha256sum "$f")"',
           '\ttimeout 60 node "$ORACLE/context.mjs" "$f" "$@" --line-ids > "$out"',
           '\t[ "$(sha256sum "$f")" = "$before" ] || { echo "oracle modified $f" >&2; exit 1; }',
           '\tpython3 - "$out" "edge/$stem.jsonl" <<\'EOF\'',
           "import json, sys",
           "p, rel = sys.argv[1], sys.argv[2]",
           "d = json.load(open(p, encoding='utf-8'))",
           "d['file'] = rel",
           "with open(p, 'w', encoding='utf-8') as f:",
           "    json.dump(d, f, indent=1, ensure_ascii=False)",
           "    f.write('\\n')",
           "EOF",
           '\techo "expected/$stem/$name.context.json"',
           "}",
           "",
           'rm -rf "$HERE/expected"',
           ""]
    for stem, c in CASES.items():
        out.append(f"golden {stem} default")
        out.append(f"golden {stem} null --null")
        for leaf in c["leaves"]:
            if c["v1"]:
                out.append(f"golden {stem} L{leaf} line:{leaf}")
            else:
                out.append(f"golden {stem} {leaf} {leaf}")
    path = os.path.join(HERE, "make-expected.sh")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    os.chmod(path, 0o755)


def main():
    cases = [case_malformed_middle_line, case_crlf, case_no_final_newline, case_truncated_last_line, case_blank_lines,
             case_garbage_before_header, case_duplicate_header_0731, case_second_header, case_json_scalar_lines,
             case_json_falsy_lines, case_trailing_scalar, case_damaged_tail,
             case_v1_basic, case_v1_compaction_header_and_self, case_v1_compaction_past, case_v1_with_ids,
             case_v2_hookmessage, case_v3_custom_role,
             case_leaf_label, case_leaf_session_info, case_leaf_usage, case_leaf_context_edit,
             case_orphans, case_duplicate_ids, case_out_of_order, case_sibling_timestamps, case_cycle_off_path,
             case_compaction_first_kept_missing, case_compaction_off_path, case_compaction_retain_none,
             case_two_compactions, case_older_compaction_in_kept_range, case_compaction_sibling_branch,
             case_compaction_system_kept,
             case_system_replay, case_system_in_tool_round,
             case_edit_replacements, case_edit_sibling_branch, case_edit_compaction, case_edit_before_kept_range,
             case_edit_other_roles,
             case_branch_summaries, case_bash_variants, case_custom_message_variants, case_null_content,
             case_error_aborted, case_trailing_toolcall]
    for fn in cases:
        fn()
    errors()
    write_make_expected()
    for stem in CASES:
        print(f"{stem}.jsonl")
    for stem in ERRORS:
        print(f"errors/{stem}.jsonl")


if __name__ == "__main__":
    sys.exit(main())
