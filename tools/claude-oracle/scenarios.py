"""The corpus scenarios: what the scripted model says and how Claude Code is driven.

Each scenario starts from an empty /home/dev with the todo-cli project (a failing `npm test`),
runs the real client one or more times, and keeps the session files it wrote. Replies are in
SCRIPT, chosen by the `[[step]]` marker in each prompt (see mock.py).
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import oracle
from oracle import PROJECT, log

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools/, for oracle_png.py
from oracle_png import png  # noqa: E402

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
    # 02-thinking
    "think": [
        {"blocks": [{"type": "thinking", "thinking": "The user wants the test status. I should run npm test first."},
                    text("I'll run the tests."),
                    tool("Bash", command="npm test", description="Run the tests")]},
        {"blocks": [{"type": "thinking", "thinking": "The assertion on getUTCDate fails: parseDue ignores the day."},
                    text("The test fails because `parseDue` drops the day of the month.")]},
    ],
    "think-more": [
        {"blocks": [{"type": "thinking", "thinking": "A short answer is enough here."},
                    text("Yes: use the third part of the date as the day.")]},
    ],
    # 03-api-error-retry
    "overloaded": [
        {"error": [529, "overloaded_error"], "times": 1, "blocks": [tool("Bash", command="npm test", description="Run the tests")]},
        {"error": [500, "api_error"], "times": 1, "blocks": [text("The tests fail on the day of the month.")]},
    ],
    "bad-request": [
        {"error": [400, "invalid_request_error"], "times": 99, "blocks": [text("unused")]},
    ],
    "again": [{"blocks": [text("This time it worked: the tests fail on parseDue.")]}],
    # 04-branches
    "b-start": [
        {"blocks": [tool("Bash", command="ls", description="List the project")]},
        {"blocks": [text("The project has package.json, src, test and README.md.")]},
    ],
    "b-first": [{"blocks": [text("First branch: I would start with src/todo.js.")]}],
    "b-second": [{"blocks": [text("Second branch: I would start with the tests.")]}],
    "b-more": [{"blocks": [text("More on the second branch: test/todo.test.js has two asserts.")]}],
    "b-rewind": [{"blocks": [text("Rewound branch: I would read the README first.")]}],
    # 05-compact, 06-autocompact
    "c-start": [
        {"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]},
        {"blocks": [text("src/todo.js has parseDue and dedupe.")]},
    ],
    "c-after": [{"blocks": [text("After the compaction: parseDue still needs the day.")]}],
    "big1": [{"blocks": [text("First turn of a big context.")], "usage": {"input_tokens": 180000}}],
    "big2": [{"blocks": [tool("Bash", command="npm test", description="Run the tests")], "usage": {"input_tokens": 180000}},
             {"blocks": [text("Second turn of a big context: the tests fail.")], "usage": {"input_tokens": 185000}}],
    "big3": [{"blocks": [text("Third turn, after the automatic compaction.")]}],
    # 07-fork-session
    "f-start": [
        {"blocks": [tool("Read", file_path=f"{P}/README.md")]},
        {"blocks": [text("README.md says it is a todo list for the shell.")]},
    ],
    "f-fork": [{"blocks": [text("In the fork: I'll try another approach.")]}],
    "f-fork-more": [{"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
                    {"blocks": [text("In the fork, the tests still fail.")]}],
    "f-source-more": [{"blocks": [text("Back in the source session.")]}],
    # 08-subagent
    "delegate": [
        {"blocks": [text("I'll ask a subagent to look at the tests."),
                    tool("Agent", description="Inspect the tests", subagent_type="general-purpose",
                         prompt="Read test/todo.test.js and say what it checks [[sub]]", run_in_background=False)]},
        {"blocks": [text("The subagent says the test checks parseDue's day and dedupe.")]},
    ],
    "sub": [
        {"blocks": [tool("Read", file_path=f"{P}/test/todo.test.js")]},
        {"blocks": [text("It checks that parseDue keeps the day (14) and that dedupe drops a duplicate title.")]},
    ],
    # 09-two-fixes
    "look": [
        {"blocks": [text("I'll read the code and the test."),
                    tool("Read", file_path=f"{P}/src/todo.js"),
                    tool("Read", file_path=f"{P}/test/todo.test.js")]},
        {"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
        {"blocks": [text("`npm test` fails: parseDue('2026-03-14') gives day 1, not 14.")]},
    ],
    "fix-a": [
        {"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]},
        {"blocks": [text("I'll shift the month."),
                    tool("Edit", file_path=f"{P}/src/todo.js", old_string="Date.UTC(y, m - 1, 1)", new_string="Date.UTC(y, m, 1)")]},
        {"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
        {"blocks": [text("That did not fix it: the test still fails.")]},
    ],
    "fix-b": [
        {"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]},
        {"blocks": [text("I'll parse the day as well."),
                    tool("Edit", file_path=f"{P}/src/todo.js",
                         old_string="  const [y, m] = s.split('-').map(Number);\n  return new Date(Date.UTC(y, m - 1, 1));",
                         new_string="  const [y, m, d] = s.split('-').map(Number);\n  return new Date(Date.UTC(y, m - 1, d));")]},
        {"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
        {"blocks": [text("Fixed: parseDue parses the day and `npm test` passes.")]},
    ],
    # 10-compact-twice
    "m-tests": [
        {"blocks": [{"type": "thinking", "thinking": "Run the tests and read the test file at once."},
                    text("I'll run the tests and read the test file."),
                    tool("Bash", command="npm test", description="Run the tests"),
                    tool("Read", file_path=f"{P}/test/todo.test.js")]},
        {"blocks": [text("The tests fail on the day of the month.")]},
    ],
    "m-next": [{"blocks": [text("Next I would fix parseDue.")]}],
    "m-branch": [{"blocks": [tool("Glob", pattern="src/*.js", path=P)]},
                 {"blocks": [text("On this branch: only src/todo.js needs a change.")]}],
    "m-after2": [{"blocks": [text("After the second compaction: still parseDue.")]}],
    # 11-mixed
    "x-look": [
        {"blocks": [text("I'll read the code and the logo."),
                    tool("Read", file_path=f"{P}/src/todo.js"),
                    tool("Read", file_path=f"{P}/logo.png")]},
        {"blocks": [tool("TodoWrite", todos=[
            {"content": "Fix parseDue", "status": "in_progress", "activeForm": "Fixing parseDue"},
            {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}])]},
        {"blocks": [tool("Edit", file_path=f"{P}/src/todo.js", old_string="no such text", new_string="x")]},
        {"blocks": [tool("WebFetch", url="http://127.0.0.1:9/docs", prompt="Summarize the docs")]},
        {"blocks": [tool("NoSuchTool", anything=1)]},
        {"blocks": [text("The Edit found nothing to replace and WebFetch was refused. parseDue drops the day.")]},
    ],
    "x-after": [{"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]},
                {"blocks": [text("I see the comment you added to src/todo.js.")]}],
    "x-branch": [{"blocks": [text("Resumed at the todo list's result: going on from there.")]}],
    "x-image": [{"blocks": [text("The picture is a small red square.")]}],
    # 12-interrupt
    "i-slow": [{"blocks": [text("I'll run the slow check."),
                           tool("Bash", command="node -e \"setTimeout(() => {}, 30000)\"", description="A slow check")]},
               {"blocks": [text("unused: the call is interrupted")]}],
    "i-after": [{"blocks": [text("Fine, I stopped the slow check.")]}],
    "i-more": [{"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
               {"blocks": [text("The tests still fail on parseDue.")]}],
    # 13-hooks-mcp
    "h-mcp": [{"blocks": [text("I'll ask the notes server, then run the tests."),
                          tool("mcp__notes__echo", text="hello from the model")]},
              {"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
              {"blocks": [text("The notes server echoed; the tests fail on parseDue.")]}],
    "h-doc": [{"blocks": [text("The PDF says: Hello PDF.")]}],
    "h-more": [{"blocks": [text("The hooks added their notes again.")]}],
    # 14-plan-background
    "p-plan": [{"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]},
               {"blocks": [text("Here is the plan."), tool("ExitPlanMode", plan="1. Parse the day in parseDue.\n2. Run npm test.")]},
               {"blocks": [text("Planned: parse the day, then run the tests.")]}],
    "p-bg": [{"blocks": [tool("Bash", command="node -e \"setTimeout(() => console.log('slow check done'), 1500)\"",
                              description="A slow check", run_in_background=True)]},
             {"blocks": [text("The slow check runs in the background.")]}],
    "p-after": [{"blocks": [text("The background check has finished by now.")]}],
    # 15-skills
    "k-user": [{"blocks": [text("Following the notes skill: one line per note.")]}],
    "k-model": [{"blocks": [tool("Skill", skill="notes")]},
                {"blocks": [text("The skill says to keep one line per note.")]}],
    # 16-summaries
    "s1": [{"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]}, {"blocks": [text("First: src/todo.js read.")]}],
    "s2": [{"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
           {"blocks": [text("Second: the tests fail on parseDue.")]}],
    "s3": [{"blocks": [text("Third: parseDue needs the day.")]}],
    "s4": [{"blocks": [text("Fourth, after the summary: still parseDue.")]}],
    "s5": [{"blocks": [text("Fifth, after the compaction with instructions.")]}],
    "u4": [{"blocks": [text("After summarizing up to there: the latest turn stays.")]}],
    # 18-parallel-agents
    "pa": [{"blocks": [text("Two subagents at once."),
                       tool("Agent", description="Read the code", subagent_type="general-purpose",
                            prompt="Read src/todo.js and say what parseDue does [[pa-code]]", run_in_background=False),
                       tool("Agent", description="Read the test", subagent_type="Explore",
                            prompt="Read test/todo.test.js and say what it checks [[pa-test]]", run_in_background=False)]},
           {"blocks": [text("Both subagents reported: parseDue drops the day, and the test checks it.")]}],
    "pa-code": [{"blocks": [tool("Read", file_path=f"{P}/src/todo.js")]},
                {"blocks": [text("parseDue builds a date from the year and month only.")]}],
    "pa-test": [{"blocks": [tool("Read", file_path=f"{P}/test/todo.test.js")]},
                {"blocks": [text("The test checks the day of the month and dedupe.")]}],
    "pa-more": [{"blocks": [text("In the fork of the branch: the plan stands.")]}],
    "pa-branch": [{"blocks": [text("A branch at the report: no subagents this time.")]}],
    # 19-blocks-outputs
    "o-think": [{"blocks": [{"type": "thinking", "thinking": "Some of this reasoning is redacted."},
                            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
                            text("I thought about it, partly in private.")]}],
    "o-search": [{"blocks": [{"type": "server_tool_use", "id": "srvtoolu_0123456789abcdef01234567", "name": "web_search", "input": {"query": "parseDue day of month"}},
                             {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_0123456789abcdef01234567",
                              "content": [{"type": "web_search_result", "title": "Date.UTC", "url": "https://example.com/date-utc",
                                           "encrypted_content": "EqgfCioIARgBIiQ3YTAw", "page_age": None}]},
                             text("The search says Date.UTC takes the day as its third argument.")]}],
    "o-big": [{"blocks": [tool("Bash", command="seq 1 40000", description="Print many lines")]},
              {"blocks": [text("That printed forty thousand lines.")]}],
    # 20-shapes
    "t-a": [{"blocks": [text("I'll read the code and the test."), tool("Read", file_path=f"{P}/src/todo.js"),
                        tool("Read", file_path=f"{P}/test/todo.test.js")]},
            {"blocks": [text("A: both files read.")]}],
    "t-b": [{"blocks": [text("B: a branch at the first call.")]}],
    "t-c": [{"blocks": [text("C: resumed at the first prompt itself.")]}],
    "t-d": [{"blocks": [text("D: a fork of branch B.")]}],
    "t-e": [{"blocks": [text("E: after compacting branch C.")]}],
    # 21-tui-inputs
    "b-bash": [{"blocks": [text("Your ls listed the project's files.")]}],
    "b-paste": [{"blocks": [text("The pasted log says the build failed twice, then passed.")]}],
    "b-slow": [{"blocks": [text("I'll run the slow check."),
                           tool("Bash", command="node -e \"setTimeout(() => {}, 8000)\"", description="A slow check")]},
               {"blocks": [text("The slow check finished.")]}],
    "b-queued": [{"blocks": [text("About your queued question: README.md calls it a small todo list.")]}],
    "b-last": [{"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
               {"blocks": [text("Last: the tests still fail on parseDue.")]}],
    # 22-tui-permissions
    "r-edit": [{"blocks": [text("I'll edit parseDue."),
                           tool("Edit", file_path=f"{P}/src/todo.js", old_string="Date.UTC(y, m - 1, 1)",
                                new_string="Date.UTC(y, m, 1)")]},
               {"blocks": [text("unused: the edit is refused")]}],
    "r-after": [{"blocks": [text("Understood, no edit: parseDue should read the day instead.")]}],
    "r-mention": [{"blocks": [text("README.md calls it a small todo list for the shell.")]}],
    "r-run": [{"blocks": [tool("Bash", command="npm test", description="Run the tests")]},
              {"blocks": [text("Allowed once: the tests still fail.")]}],
    # 23-tui-model-clear
    "m-one": [{"blocks": [text("First answer, from the first model.")]}],
    "m-two": [{"blocks": [tool("Read", file_path=f"{P}/README.md")]}, {"blocks": [text("Second answer, after /model.")]}],
    "m-three": [{"blocks": [text("Third answer, after /clear.")]}],
}

# A log pasted into the TUI: long enough that it shows as "[Pasted text #1 +N lines]".
PASTE = "".join(f"2026-12-07T08:{k:02d}:00Z build step {k}: {'failed' if k in (3, 7) else 'ok'} (x{k * 7})\n"
                for k in range(40))


def write_project():
    for rel, body in FILES.items():
        f = oracle.SCRATCH / "todo-cli" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(body)


ALLOWED = ["--allowedTools", "Bash", "Read", "Edit", "Write", "Grep", "Glob", "Task", "Agent"]


def prompt(ns, text_, *extra, env=None, check=True):
    out = ns.claude(["-p", text_, "--output-format", "json", *ALLOWED, *extra], env=env, check=check)
    try:
        return json.loads(out)
    except ValueError:
        return {"raw": out}


def lines(sid):
    f = oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli" / f"{sid}.jsonl"
    return [json.loads(l) for l in f.read_text().splitlines() if l.strip()]


def newest_session():
    """The id of the session file the client wrote last (an interactive run's)."""
    src = oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli"
    return max(src.glob("*.jsonl"), key=lambda f: f.stat().st_mtime).stem


def last_reply(sid, needle):
    """The uuid of the last assistant line whose text contains `needle`."""
    for d in reversed(lines(sid)):
        if d.get("type") == "assistant" and needle in json.dumps(d["message"].get("content")):
            return d["uuid"]
    raise SystemExit(f"claude-oracle: no reply with {needle!r} in {sid}")


NOTES = {}  # scenario -> notes for MANIFEST.md (leaves, commands)


def s01_tools(ns):
    """Several tool calls in one reply (Read, Grep, Glob), then Bash, Write, Edit; a second prompt."""
    first = prompt(ns, "Look around the project and run the tests [[tools]]")
    prompt(ns, "Thanks [[thanks]]", "--resume", first["session_id"])
    return first["session_id"]


def s02_thinking(ns):
    """Replies with a thinking block before the text (and a tool call after thinking); a second prompt."""
    first = prompt(ns, "Why does npm test fail? [[think]]")
    prompt(ns, "Can it be fixed simply? [[think-more]]", "--resume", first["session_id"])
    return first["session_id"]


def s03_api_error(ns):
    """A 529 overloaded error, then a 500, each once (the client retries and goes on); then a 400
    the client does not retry (the prompt fails), and the same question again."""
    first = prompt(ns, "Run the tests [[overloaded]]", env={"CLAUDE_CODE_MAX_RETRIES": "3"})
    sid = first["session_id"]
    r = prompt(ns, "And now? [[bad-request]]", "--resume", sid, check=False, env={"CLAUDE_CODE_MAX_RETRIES": "1"})
    NOTES["03-api-error-retry"] = [f"the 400 prompt's result: is_error={r.get('is_error')}, subtype={r.get('subtype')}"]
    prompt(ns, "Try again [[again]]", "--resume", sid)
    return sid


def s04_branches(ns):
    """A run and a second prompt, then `--resume-session-at` the first run's last reply with
    another prompt: two children of one reply in the same file. Then interactively (tmux): one
    more prompt, `/rewind` to before it (Restore conversation), another prompt: two children of
    the second branch's reply."""
    first = prompt(ns, "What is in the project? [[b-start]]")
    sid = first["session_id"]
    prompt(ns, "Where would you start? [[b-first]]", "--resume", sid)
    at = last_reply(sid, "The project has")
    prompt(ns, "Where else could you start? [[b-second]]", "--resume", sid, "--resume-session-at", at)
    second = last_reply(sid, "Second branch")
    # Interactive: one more prompt, /rewind to before it, another prompt in its place.
    seed_home()
    tui = Tmux(ns, ["--resume", sid, *ALLOWED])
    try:
        tui.wait("Second branch")
        tui.type("Tell me more [[b-more]]")
        tui.wait("More on the second branch")
        tui.type("/rewind")
        tui.wait("Restore the code and/or conversation")
        tui.keys("Up")  # the newest prompt, above "(current)"
        tui.keys("Enter")
        tui.wait("Restore conversation")
        tui.keys("Enter")  # 1. Restore conversation
        time.sleep(1)
        tui.keys("C-u")  # the rewound prompt is put back in the input box
        tui.type("Rewound: what else? [[b-rewind]]")
        tui.wait("Rewound branch")
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    NOTES["04-branches"] = [
        f"branch point 1 (`--resume-session-at`; the reply with two user children): `{at}`",
        f"leaf of branch 1 (`[[b-first]]`): `{last_reply(sid, 'First branch')}`",
        f"branch point 2 (interactive `/rewind`; the reply of branch 2 with two user children): `{second}`",
        f"leaf of the rewound-away prompt (`[[b-more]]`): `{last_reply(sid, 'More on the second branch')}`",
        f"leaf of the prompt after /rewind (`[[b-rewind]]`; the newest): `{last_reply(sid, 'Rewound branch')}`",
    ]
    return sid


def seed_home():
    """~/.claude.json that lets the interactive client skip onboarding and the trust dialog."""
    p = oracle.SCRATCH / ".claude.json"
    d = json.loads(p.read_text()) if p.exists() else {}
    d.update({"hasCompletedOnboarding": True, "lastOnboardingVersion": oracle.VERSION, "theme": "dark",
              "customApiKeyResponses": {"approved": ["sk-test"], "rejected": []}})
    d.setdefault("projects", {})[P] = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True, "allowedTools": []}
    p.write_text(json.dumps(d, indent=2))


class Tmux:
    """The interactive client in a detached tmux session (inside the namespace)."""

    def __init__(self, ns, args):
        self.name = f"claude-oracle-{os.getpid()}"
        cmd = shlex.join(ns.enter([*ns.env({"TERM": "xterm-256color"}), str(oracle.CLAUDE), *args]))
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "160", "-y", "50", cmd], check=True)

    def screen(self):
        r = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else None

    def wait(self, needle, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            s = self.screen()
            if s and needle in s:
                return s
            time.sleep(0.3)
        raise SystemExit(f"claude-oracle: tmux: no {needle!r} on the screen:\n{self.screen()}")

    def keys(self, *keys):
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)
        time.sleep(0.3)

    def type(self, text_):
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text_], check=True)
        time.sleep(0.5)
        self.keys("Enter")

    def paste(self, text_):
        """`text_` pasted as a terminal pastes (bracketed), not typed."""
        subprocess.run(["tmux", "set-buffer", "-b", "oracle-paste", text_], check=True)
        subprocess.run(["tmux", "paste-buffer", "-p", "-b", "oracle-paste", "-t", self.name], check=True)

    def wait_exit(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end and self.screen() is not None:
            time.sleep(0.3)

    def close(self):
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def s05_compact(ns):
    """A tool call, `-p /compact` with `--resume`, one more prompt."""
    first = prompt(ns, "Read src/todo.js [[c-start]]")
    sid = first["session_id"]
    ns.claude(["-p", "/compact", "--output-format", "json", "--resume", sid])
    prompt(ns, "What now? [[c-after]]", "--resume", sid)
    return sid


def s06_autocompact(ns):
    """Replies that report 180,000 input tokens with `--autocompact 100000`: the client compacts
    on its own before the next turn."""
    auto = ["--autocompact", "100000"]
    first = prompt(ns, "First turn [[big1]]", *auto)
    sid = first["session_id"]
    prompt(ns, "Second turn [[big2]]", "--resume", sid, *auto)
    prompt(ns, "Third turn [[big3]]", "--resume", sid, *auto)
    return sid


def s07_fork(ns):
    """A run, `--resume SID --fork-session -p ...` (a new file), the fork continued, and the
    source continued too."""
    first = prompt(ns, "Read the README [[f-start]]")
    src = first["session_id"]
    fork = prompt(ns, "Try something else [[f-fork]]", "--resume", src, "--fork-session")["session_id"]
    prompt(ns, "Run the tests in the fork [[f-fork-more]]", "--resume", fork)
    prompt(ns, "And in the source? [[f-source-more]]", "--resume", src)
    NOTES["07-fork-session"] = [f"source session `{src}` -> `07-fork-source.jsonl`", f"fork session `{fork}` -> `07-fork-copy.jsonl`"]
    return {"07-fork-source": src, "07-fork-copy": fork}


def s08_subagent(ns):
    """An Agent tool call (run_in_background false): the subagent reads a file and answers."""
    first = prompt(ns, "Ask a subagent about the tests [[delegate]]")
    return first["session_id"]


def s09_two_fixes(ns):
    """Reads and runs the failing tests; attempt A (`--resume-session-at` the reply after the
    failing test) edits src/todo.js wrongly and `npm test` still fails; src/todo.js is reset;
    attempt B (`--resume-session-at` the same reply) applies the real fix and `npm test` passes."""
    first = prompt(ns, "Why does npm test fail? [[look]]")
    sid = first["session_id"]
    at = last_reply(sid, "`npm test` fails")
    write_project()
    prompt(ns, "Fix it [[fix-a]]", "--resume", sid, "--resume-session-at", at)
    write_project()
    prompt(ns, "Try again, properly [[fix-b]]", "--resume", sid, "--resume-session-at", at)
    for d in lines(sid):
        for b in d.get("message", {}).get("content") or [] if d.get("type") == "user" else []:
            if isinstance(b, dict) and b.get("type") == "tool_result" and "todo-cli@" in json.dumps(b):
                log(f"09-two-fixes: npm test -> is_error={b.get('is_error')}: {json.dumps(b.get('content'))[-120:]}")
    NOTES["09-two-fixes"] = [
        f"branch point (the reply after the failing `npm test`): `{at}`",
        f"attempt A leaf (wrong fix, `npm test` still fails): `{last_reply(sid, 'That did not fix it')}`",
        f"attempt B leaf (the real fix, `npm test` passes): `{last_reply(sid, 'Fixed: parseDue')}`",
    ]
    write_project()
    return sid


def s10_compact_twice(ns):
    """Thinking with two parallel calls; `/compact`; two prompts, then a branch from the first
    reply after the compaction (`--resume-session-at`); `/compact` again (on the branch); one
    more prompt."""
    first = prompt(ns, "Read src/todo.js [[c-start]]")
    sid = first["session_id"]
    prompt(ns, "Run the tests [[m-tests]]", "--resume", sid)
    ns.claude(["-p", "/compact", "--output-format", "json", "--resume", sid])
    prompt(ns, "What now? [[c-after]]", "--resume", sid)
    at = last_reply(sid, "After the compaction")
    prompt(ns, "And next? [[m-next]]", "--resume", sid)
    prompt(ns, "Which files need a change? [[m-branch]]", "--resume", sid, "--resume-session-at", at)
    ns.claude(["-p", "/compact", "--output-format", "json", "--resume", sid])
    prompt(ns, "And now? [[m-after2]]", "--resume", sid)
    NOTES["10-compact-twice"] = [
        f"branch point (the first reply after the first compaction): `{at}`",
        f"leaf of the rewound-away branch: `{last_reply(sid, 'Next I would fix')}`",
        f"leaf after the second compaction (the default): `{last_reply(sid, 'After the second compaction')}`",
    ]
    return sid


def s11_mixed(ns):
    """A project with CLAUDE.md. One reply reads the code and a PNG; then TodoWrite (disabled in
    this version: an error result), an Edit that fails, a WebFetch the run may not use, a tool
    that does not exist. The code is changed outside between turns, and `--continue` reads it
    again. Then `--resume-session-at` the first Read's result (a branch at a tool-result line),
    and a prompt with an image (stream-json)."""
    proj = oracle.SCRATCH / "todo-cli"
    (proj / "CLAUDE.md").write_text("# For agents\n\nRun `npm test` before you say a fix works.\n")
    (proj / "logo.png").write_bytes(png())
    allowed = [*ALLOWED, "TodoWrite"]
    first = prompt(ns, "Look at the code and the logo [[x-look]]", *allowed)
    sid = first["session_id"]
    src = proj / "src" / "todo.js"
    src.write_text(src.read_text() + "// checked by hand\n")
    prompt(ns, "I changed the code, look again [[x-after]]", "--continue", *allowed)
    # The result of the first Read (src/todo.js), the first of the two results of one reply.
    read = next(d["uuid"] for d in lines(sid)
                if d.get("type") == "user" and "function parseDue" in json.dumps(d["message"].get("content")))
    prompt(ns, "Go on from here [[x-branch]]", "--resume", sid, "--resume-session-at", read, *allowed)
    import base64
    msg = {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "What is in this picture? [[x-image]]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png(4, 4)).decode()}}]}}
    ns.claude(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--resume", sid, *allowed],
              input=json.dumps(msg) + "\n")
    NOTES["11-mixed"] = [
        f"branch point (`--resume-session-at` the result of the first Read, src/todo.js): `{read}`",
        f"leaf of the `--continue` turn: `{last_reply(sid, 'I see the comment')}`",
        f"leaf of the branch at the tool result: `{last_reply(sid, 'Resumed at the')}`",
        f"leaf of the image prompt (the newest): `{last_reply(sid, 'small red square')}`",
    ]
    return sid


def s12_interrupt(ns):
    """Interactive (tmux): a Bash call of `sleep 30` interrupted with Escape, another prompt,
    then a turn with a tool call that runs."""
    seed_home()
    tui = Tmux(ns, ["--permission-mode", "default", *ALLOWED])
    try:
        tui.wait("\u276f")
        tui.type("Run the slow check [[i-slow]]")
        tui.wait("setTimeout")
        time.sleep(2)
        tui.keys("Escape")
        tui.wait("Interrupted")
        tui.type("Never mind [[i-after]]")
        tui.wait("I stopped the slow check")
        tui.type("Run the tests instead [[i-more]]")
        tui.wait("still fail on parseDue")
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    return newest_session()


def pdf():
    """A one-page PDF that says "Hello PDF"."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            None, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    stream = b"BT /F1 18 Tf 20 40 Td (Hello PDF) Tj ET"
    objs[3] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    out, offsets = b"%PDF-1.4\n", []
    for k, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)


HOOKS = {
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'Session hook: the release is on Friday.'"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"UserPromptSubmit\", \"additionalContext\": \"Prompt hook: keep answers short.\"}}'"}]}],
    "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"Post hook: Bash ran.\"}}'"}]}],
}


def s13_hooks_mcp(ns):
    """Project hooks (.claude/settings.json: SessionStart and UserPromptSubmit adding context,
    PostToolUse on Bash), an MCP server (`--mcp-config`: `notes`, tool `echo`, mcp_notes.py);
    a reply calling the MCP tool, then Bash; resumed with a prompt holding a PDF document
    (stream-json); resumed once more."""
    proj = oracle.SCRATCH / "todo-cli"
    (proj / ".claude").mkdir(exist_ok=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": HOOKS}, indent=2))
    cfg = oracle.RUN / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"notes": {"command": "python3", "args": [str(oracle.HERE / "mcp_notes.py")]}}}))
    mcp = ["--mcp-config", str(cfg), "--allowedTools", "mcp__notes__echo"]
    first = prompt(ns, "Ask the notes server and run the tests [[h-mcp]]", *mcp)
    sid = first["session_id"]
    import base64
    msg = {"type": "user", "message": {"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(pdf()).decode()}},
        {"type": "text", "text": "What does this PDF say? [[h-doc]]"}]}}
    ns.claude(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--resume", sid, *ALLOWED, *mcp],
              input=json.dumps(msg) + "\n")
    prompt(ns, "Anything else? [[h-more]]", "--resume", sid, *mcp)
    return sid


def s14_plan_background(ns):
    """`--permission-mode plan`: a Read, then ExitPlanMode with a plan; resumed (default mode):
    a Bash call with `run_in_background`; resumed once more after it finished."""
    first = prompt(ns, "Plan the fix [[p-plan]]", "--permission-mode", "plan")
    sid = first["session_id"]
    prompt(ns, "Start the slow check in the background [[p-bg]]", "--resume", sid)
    time.sleep(3)
    prompt(ns, "Is it done? [[p-after]]", "--resume", sid)
    return sid


def s15_skills(ns):
    """A project skill (.claude/skills/notes/SKILL.md): the user invokes it (`/notes ...`),
    then the model calls the Skill tool for it."""
    d = oracle.SCRATCH / "todo-cli" / ".claude" / "skills" / "notes"
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text("---\nname: notes\ndescription: How to write notes in this project\n---\n\n"
                                "Write one line per note, newest last.\n")
    first = prompt(ns, "/notes how do I add a note? [[k-user]]", "--allowedTools", "Skill")
    sid = first["session_id"]
    prompt(ns, "Use the notes skill yourself [[k-model]]", "--resume", sid, "--allowedTools", "Skill")
    return sid


def three_turns_then_rewind(ns):
    """Three turns (`[[s1]]` to `[[s3]]`), then the TUI on the session with its /rewind menu
    open: the session id and the TUI."""
    sid = prompt(ns, "Read the code [[s1]]")["session_id"]
    prompt(ns, "Run the tests [[s2]]", "--resume", sid)
    prompt(ns, "What is wrong? [[s3]]", "--resume", sid)
    seed_home()
    tui = Tmux(ns, ["--resume", sid, "--permission-mode", "default", *ALLOWED])
    try:
        tui.wait("parseDue needs the day")
        tui.type("/rewind")
        tui.wait("Restore the code and/or conversation")
    except BaseException:
        tui.close()
        raise
    return sid, tui


def s16_summaries(ns):
    """Three turns; in the TUI, /rewind to the second prompt and "Summarize from here" (the
    turns from there replaced by a summary), one more prompt; then `-p "/compact <instructions>"`
    and a prompt after it."""
    sid, tui = three_turns_then_rewind(ns)
    try:
        tui.keys("Up")
        tui.keys("Up")  # the second prompt
        tui.keys("Enter")
        tui.wait("Summarize from here")
        tui.keys("Down")
        tui.keys("Enter")  # 2. Summarize from here
        time.sleep(1)
        screen = tui.screen() or ""
        if "instructions" in screen.lower() or "context" in screen.lower():
            tui.keys("Enter")  # no instructions
        time.sleep(4)
        tui.keys("C-u")
        tui.type("After the summary [[s4]]")
        tui.wait("Fourth, after the summary")
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    ns.claude(["-p", "/compact Keep only what the tests say", "--output-format", "json", "--resume", sid])
    prompt(ns, "And now? [[s5]]", "--resume", sid)
    return sid


def s17_summarize_up_to(ns):
    """Three turns; in the TUI, /rewind to the third prompt and "Summarize up to here" (the
    turns before it replaced by a summary), then one more prompt."""
    sid, tui = three_turns_then_rewind(ns)
    try:
        tui.keys("Up")  # the third prompt
        tui.keys("Enter")
        tui.wait("Summarize up to here")
        tui.keys("Down")
        tui.keys("Down")
        tui.keys("Enter")  # 3. Summarize up to here
        time.sleep(1)
        screen = tui.screen() or ""
        if "instructions" in screen.lower() or "context" in screen.lower():
            tui.keys("Enter")
        time.sleep(4)
        tui.keys("C-u")
        tui.type("Go on [[u4]]")
        tui.wait("the latest turn stays")
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    return sid


def s18_parallel_agents(ns):
    """One reply with two Agent calls (general-purpose and Explore), each subagent reading a
    file; a branch at the reply after them (`--resume-session-at`); that branch copied with
    `--fork-session` and continued (kept as 18-parallel-agents-fork)."""
    first = prompt(ns, "Ask two subagents [[pa]]")
    sid = first["session_id"]
    at = last_reply(sid, "Both subagents reported")
    prompt(ns, "Anything else? [[pa-branch]]", "--resume", sid, "--resume-session-at", at)
    fork = prompt(ns, "Go on in a fork [[pa-more]]", "--resume", sid, "--fork-session")["session_id"]
    NOTES["18-parallel-agents"] = [f"branch point (the reply after both subagents): `{at}`",
                                   f"source `{sid}` -> `18-parallel-agents.jsonl`, fork `{fork}` -> `18-parallel-agents-fork.jsonl`"]
    return {"18-parallel-agents": sid, "18-parallel-agents-fork": fork}


def s19_blocks_outputs(ns):
    """A reply with a thinking and a redacted_thinking block; a reply with the server's own web
    search (server_tool_use and web_search_tool_result blocks); a Bash call whose output is
    too large to keep whole."""
    sid = prompt(ns, "Think it over [[o-think]]")["session_id"]
    prompt(ns, "Search the web [[o-search]]", "--resume", sid)
    prompt(ns, "Print a lot [[o-big]]", "--resume", sid)
    return sid


def s20_shapes(ns):
    """Branches at other points: a reply's call line (`--resume-session-at` the first of two
    calls), a `--fork-session` copy made at branch B's end, the first prompt itself (the new
    prompt joins it), then `/compact` on the newest branch and a prompt after it."""
    sid = prompt(ns, "Read the code and the test [[t-a]]")["session_id"]
    call = next(d["uuid"] for d in lines(sid)
                if d.get("type") == "assistant" and "todo.js" in json.dumps(d["message"].get("content")))
    first = next(d["uuid"] for d in lines(sid) if d.get("type") == "user" and "[[t-a]]" in json.dumps(d["message"]))
    prompt(ns, "Another way [[t-b]]", "--resume", sid, "--resume-session-at", call)
    b = last_reply(sid, "B: a branch")
    # While B is the loaded chain (`--resume-session-at` takes only an entry of it).
    fork = prompt(ns, "Fork branch B [[t-d]]", "--resume", sid, "--resume-session-at", b, "--fork-session")["session_id"]
    prompt(ns, "Start over [[t-c]]", "--resume", sid, "--resume-session-at", first)
    ns.claude(["-p", "/compact", "--output-format", "json", "--resume", sid])
    prompt(ns, "After the compaction [[t-e]]", "--resume", sid)
    NOTES["20-shapes"] = [f"branch at the first call line: `{call}`", f"branch at the first prompt: `{first}`",
                          f"leaf of branch B: `{b}`", f"fork of branch B -> `20-shapes-fork.jsonl` (`{fork}`)"]
    return {"20-shapes": sid, "20-shapes-fork": fork}


def s21_tui_inputs(ns):
    """Interactive (tmux): a `!` command (bash mode: its input and output become user lines), a
    prompt about it, a prompt with a long pasted log (shown as "[Pasted text #1]"), a prompt
    typed while a slow tool call runs (queued), and a last turn with a tool call."""
    seed_home()
    tui = Tmux(ns, ["--permission-mode", "default", *ALLOWED])
    try:
        tui.wait("\u276f")
        tui.keys("!")
        time.sleep(1)
        tui.type("ls")
        tui.wait("package.json")
        tui.type("What did it show? [[b-bash]]")
        tui.wait("listed the project")
        tui.paste(PASTE)
        tui.wait("Pasted text")
        tui.type(" Summarize this log [[b-paste]]")
        tui.wait("failed twice")
        tui.type("Run the slow check [[b-slow]]")
        tui.wait("setTimeout")
        tui.type("What is in README.md? [[b-queued]]")
        tui.wait("small todo list", timeout=90)
        time.sleep(2)
        tui.type("Run the tests [[b-last]]")
        tui.wait("Last: the tests")
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    return newest_session()


def s22_tui_permissions(ns):
    """Interactive (tmux), with Edit and Bash not allowed beforehand: an Edit the user refuses
    at the permission prompt, a prompt after it, a prompt with an `@README.md` mention (the
    client reads the file in), and a Bash call the user allows once."""
    seed_home()
    tui = Tmux(ns, ["--permission-mode", "default", "--allowedTools", "Read", "Grep", "Glob"])
    try:
        tui.wait("\u276f")
        tui.type("Fix parseDue [[r-edit]]")
        tui.wait("Do you want to make this edit", timeout=60)
        time.sleep(1)
        tui.keys("Escape")
        tui.wait("Rejected update", timeout=30)
        time.sleep(1)
        tui.type("Do not edit it, just say what to change [[r-after]]")
        tui.wait("no edit", timeout=60)
        tui.type("What does @README.md say? [[r-mention]]")
        tui.wait("for the shell", timeout=60)
        tui.type("Run the tests [[r-run]]")
        tui.wait("Do you want to proceed", timeout=60)
        time.sleep(1)
        tui.keys("Enter")  # 1. Yes (this once)
        tui.wait("Allowed once", timeout=60)
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    return newest_session()


def s23_tui_model_clear(ns):
    """Interactive (tmux): a turn, `/model sonnet` (a local command: its name and output are
    written as user lines), a turn with the other model, `/clear`, and a turn after it."""
    seed_home()
    src = oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli"
    tui = Tmux(ns, ["--permission-mode", "default", *ALLOWED])
    try:
        tui.wait("\u276f")
        tui.type("First question [[m-one]]")
        tui.wait("from the first model", timeout=60)
        tui.type("/model sonnet")
        end = time.time() + 30
        while "Set model to" not in (tui.screen() or "") and time.time() < end:
            if "Switch model?" in (tui.screen() or ""):
                tui.keys("Enter")  # 1. Yes, switch
            time.sleep(0.5)
        tui.wait("Set model to", timeout=5)
        time.sleep(3)
        tui.type("Second question [[m-two]]")
        tui.wait("after /model", timeout=60)
        tui.type("/clear")
        time.sleep(3)
        tui.type("Third question [[m-three]]")
        tui.wait("after /clear", timeout=60)
        tui.type("/exit")
        tui.wait_exit()
    finally:
        tui.close()
    files = sorted(src.glob("*.jsonl"), key=lambda f: f.stat().st_mtime)
    NOTES["23-tui-model-clear"] = [f"session files written: {len(files)}"]
    if len(files) == 1:
        return files[0].stem
    return {"23-tui-model-clear": files[0].stem, "23-tui-model-clear-after": files[-1].stem}


SCENARIOS = {
    "01-tool-calls": s01_tools,
    "02-thinking": s02_thinking,
    "03-api-error-retry": s03_api_error,
    "04-branches": s04_branches,
    "05-compact": s05_compact,
    "06-autocompact": s06_autocompact,
    "07-fork-session": s07_fork,
    "08-subagent": s08_subagent,
    "09-two-fixes": s09_two_fixes,
    "10-compact-twice": s10_compact_twice,
    "11-mixed": s11_mixed,
    "12-interrupt": s12_interrupt,
    "13-hooks-mcp": s13_hooks_mcp,
    "14-plan-background": s14_plan_background,
    "15-skills": s15_skills,
    "16-summaries": s16_summaries,
    "17-summarize-up-to": s17_summarize_up_to,
    "18-parallel-agents": s18_parallel_agents,
    "19-blocks-outputs": s19_blocks_outputs,
    "20-shapes": s20_shapes,
    "21-tui-inputs": s21_tui_inputs,
    "22-tui-permissions": s22_tui_permissions,
    "23-tui-model-clear": s23_tui_model_clear,
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
            sids = SCENARIOS[name](ns)
        finally:
            ns.close()
        for out, sid in (sids.items() if isinstance(sids, dict) else [(name, sids)]):
            keep(out, sid)
        if name in NOTES:
            (oracle.RUN / f"notes-{name}.json").write_text(json.dumps(NOTES[name]))


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
