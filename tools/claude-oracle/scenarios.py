"""The corpus scenarios: what the scripted model says and how Claude Code is driven.

Each scenario starts from an empty /home/dev with the todo-cli project (a failing `npm test`),
runs the real client one or more times, and keeps the session files it wrote. Replies are in
SCRIPT, chosen by the `[[step]]` marker in each prompt (see mock.py).
"""
import json
import shutil

import oracle
from oracle import PROJECT, log

P = PROJECT

# The project: `npm test` fails because parseDue drops the day of the month.
FILES = {
    "package.json": '{\n  "name": "todo-cli",\n  "version": "0.3.0",\n  "scripts": {"test": "node test/todo.test.js"}\n}\n',
    "src/todo.js": (
        "function parseDue(s) {\n"
        "  const [y, m] = s.split('-').map(Number);\n"
        "  return new Date(Date.UTC(y, m - 1, 1));\n"
        "}\n\n"
        "function dedupe(todos) {\n"
        "  const seen = new Set();\n"
        "  return todos.filter((t) => !seen.has(t.title) && seen.add(t.title));\n"
        "}\n\n"
        "module.exports = { parseDue, dedupe };\n"
    ),
    "test/todo.test.js": (
        "const assert = require('assert');\n"
        "const { parseDue, dedupe } = require('../src/todo');\n"
        "assert.strictEqual(parseDue('2026-03-14').getUTCDate(), 14);\n"
        "assert.deepStrictEqual(dedupe([{ title: 'a' }, { title: 'a' }]).length, 1);\n"
        "console.log('2 tests passed');\n"
    ),
    "README.md": "# todo-cli\n\nA small todo list for the shell.\n",
}

FIXED = FILES["src/todo.js"].replace(
    "  const [y, m] = s.split('-').map(Number);\n  return new Date(Date.UTC(y, m - 1, 1));",
    "  const [y, m, d] = s.split('-').map(Number);\n  return new Date(Date.UTC(y, m - 1, d));",
)


def text(t):
    return {"type": "text", "text": t}


def tool(name, **args):
    return {"type": "tool_use", "name": name, "input": args}


SCRIPT = {
    "tools": [
        {"blocks": [text("I'll look at the code, where parseDue is used, and the files."),
                    tool("Read", file_path=f"{P}/src/todo.js"),
                    tool("Grep", pattern="parseDue", path=P, output_mode="content"),
                    tool("Glob", pattern="**/*.js", path=P)]},
        {"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
        {"blocks": [text("The test fails on the day of the month. I'll note it."),
                    tool("Write", file_path=f"{P}/NOTES.md", content="# Notes\n\n- parseDue drops the day\n")]},
        {"blocks": [tool("Edit", file_path=f"{P}/NOTES.md", old_string="- parseDue drops the day\n",
                         new_string="- parseDue drops the day of the month (test/todo.test.js:3)\n")]},
        {"blocks": [text("`npm test` fails: `parseDue` ignores the day. I wrote NOTES.md with the cause.")]},
    ],
    "thanks": [{"blocks": [text("You're welcome.")]}],
}


def write_project():
    for rel, body in FILES.items():
        f = oracle.SCRATCH / "todo-cli" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(body)


ALLOWED = ["--allowedTools", "Bash", "Read", "Edit", "Write", "Grep", "Glob", "Task"]


def prompt(ns, text_, *extra):
    out = ns.claude(["-p", text_, "--output-format", "json", *ALLOWED, *extra])
    return json.loads(out)


def s01_tools(ns):
    """Several tool calls in one reply (Read, Grep, Glob), then Bash, Write, Edit; a second prompt."""
    first = prompt(ns, "Look around the project and run the tests [[tools]]")
    prompt(ns, "Thanks [[thanks]]", "--resume", first["session_id"])
    return first["session_id"]


SCENARIOS = {
    "01-tool-calls": s01_tools,
}


def corpus(names):
    names = names or list(SCENARIOS)
    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(SCRIPT))
    oracle.OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        oracle.reset_scratch()
        write_project()
        ns = oracle.Namespace(script)
        try:
            log(f"{name}: running")
            sid = SCENARIOS[name](ns)
        finally:
            ns.close()
        keep(name, sid)


def keep(name, sid):
    """Copies the scenario's session file (and its subagents) into the corpus."""
    src = oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli"
    shutil.copyfile(src / f"{sid}.jsonl", oracle.OUT / f"{name}.jsonl")
    sub = src / sid / "subagents"
    if sub.is_dir():
        dst = oracle.OUT / name / "subagents"
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(sub, dst)
    log(f"{name}: {sid} -> {(oracle.OUT / f'{name}.jsonl').relative_to(oracle.REPO)}")
