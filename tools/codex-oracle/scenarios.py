"""The corpus scenarios: what the scripted model says and how Codex CLI is driven.

Each scenario starts from an empty /home/dev with the todo-cli project (a failing `npm test`:
parseDue drops the day of the month), runs the real client one or more times, and keeps every
rollout file it wrote. Replies are in SCRIPT, chosen by the `[[step]]` marker in each prompt (see
mock.py).
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

FIX_RIGHT = """*** Begin Patch
*** Update File: src/todo.js
@@
 function parseDue(s) {
-  const [y, m] = s.split('-').map(Number);
-  return new Date(Date.UTC(y, m - 1, 1));
+  const [y, m, d] = s.split('-').map(Number);
+  return new Date(Date.UTC(y, m - 1, d));
 }
*** End Patch"""

FIX_WRONG = """*** Begin Patch
*** Update File: src/todo.js
@@
-  return new Date(Date.UTC(y, m - 1, 1));
+  return new Date(Date.UTC(y, m, 1));
*** End Patch"""

NOTES_PATCH = """*** Begin Patch
*** Add File: NOTES.md
+# Notes
+
+- parseDue drops the day of the month (test/todo.test.js:3)
*** End Patch"""


def text(t):
    return {"text": t}


def run(cmd):
    return {"exec": cmd}


def patch(p):
    return {"patch": p}


def think(t):
    return {"reasoning": t}


SCRIPT = {
    "hello": [[text("Hello back.")]],
    # 01-exec-and-patch
    "look": [
        [text("I'll run the tests first."), run("npm test")],
        [run("cat src/todo.js")],
        [text("`npm test` fails: parseDue('2026-03-14') gives day 1, not 14, because it ignores the day.")],
    ],
    "fix": [
        [text("I'll parse the day as well."), patch(FIX_RIGHT)],
        [run("npm test")],
        [text("Fixed: parseDue parses the day and `npm test` passes.")],
    ],
    "note": [
        [patch(NOTES_PATCH)],
        [text("I wrote NOTES.md.")],
    ],
    # 02-reasoning
    "think": [
        [think("The user wants to know why the tests fail. Run npm test first."), run("npm test")],
        [think("The assertion on getUTCDate fails: parseDue ignores the day."),
         text("The test fails because `parseDue` drops the day of the month.")],
    ],
    "think-more": [
        [think("A short answer is enough here."), text("Yes: use the third part of the date as the day.")],
    ],
    # 03-forks
    "f-start": [
        [run("ls")],
        [text("The project has README.md, package.json, src and test.")],
    ],
    "f-a2": [[text("In the main thread: I would start with src/todo.js.")]],
    "f-b": [[text("Fork B: I would start with the tests.")]],
    "f-c": [[run("cat README.md")], [text("Fork C: the README says it is a small todo list.")]],
    "f-d": [[text("Fork D (a fork of fork B): test/todo.test.js has two asserts.")]],
    "f-b2": [[text("Back in fork B after it was forked: still the tests first.")]],
    "f-a3": [[text("Back in the main thread after the forks.")]],
    # 04-compact
    "c-start": [
        [run("cat src/todo.js")],
        [text("src/todo.js has parseDue and dedupe.")],
    ],
    "c-tests": [
        [run("npm test")],
        [text("The tests fail on the day of the month.")],
    ],
    "c-after": [[text("After the compaction: parseDue still needs the day.")]],
    # 05-two-fixes
    "t-look": [
        [run("npm test")],
        [text("`npm test` fails: parseDue('2026-03-14') gives day 1, not 14.")],
    ],
    "fix-a": [
        [text("I'll shift the month."), patch(FIX_WRONG)],
        [run("npm test")],
        [text("That did not fix it: the test still fails.")],
    ],
    "fix-b": [
        [text("I'll parse the day as well."), patch(FIX_RIGHT)],
        [run("npm test")],
        [text("Fixed: parseDue parses the day and `npm test` passes.")],
    ],
    # 06-mixed
    "x-image": [[text("The picture is a small red square.")]],
    "x-plan": [
        [text("I'll plan, then look at the code and the tests at once."),
         {"call": "update_plan", "args": {"explanation": "Find the bug", "plan": [
             {"step": "Read the code", "status": "in_progress"}, {"step": "Run the tests", "status": "pending"}]}},
         run("cat src/todo.js"), run("npm test")],
        [patch("*** Begin Patch\n*** Update File: src/todo.js\n@@\n-no such line\n+still none\n*** End Patch\n")],
        [text("The patch did not apply: that line is not in src/todo.js. parseDue drops the day.")],
    ],
    "x-more": [[run("seq 1 3000")], [text("That printed three thousand lines.")]],
    # 07-compact-fork
    "k-fork": [[run("cat test/todo.test.js")], [text("In the fork after the compaction: the test checks the day.")]],
    "k-fork2": [[text("A fork of the fork, still after the compaction.")]],
    "k-src": [[text("Back in the compacted source thread.")]],
    # 08-interrupt
    "i-slow": [[text("I'll run the slow check."), run("node -e \"setTimeout(() => {}, 30000)\"")],
               [text("unused: the call is interrupted")]],
    "i-after": [[text("Fine, I stopped the slow check.")]],
    # 09-search
    "w-search": [[think("Look it up first.", ), {"search": "Date.UTC day argument"},
                  text("Date.UTC takes the day of the month as its third argument.")]],
    "w-plain": [[{"reasoning": "No need to encrypt this one.", "encrypted": False}, text("A reasoning item without encrypted content.")]],
    # 10-tui-inputs
    "u-bash": [[text("Your ls listed the project's files.")]],
    "u-paste": [[text("The pasted log says the build failed twice, then passed.")]],
    "u-slow": [[text("I'll run the slow check."), run("node -e \"setTimeout(() => {}, 8000)\"")],
               [text("The slow check finished.")]],
    "u-queued": [[text("About your queued question: README.md calls it a small todo list.")]],
}

# A log pasted into the TUI (a bracketed paste, as a terminal sends one).
PASTE = "".join(f"2026-12-07T08:{k:02d}:00Z build step {k}: {'failed' if k in (3, 7) else 'ok'} (x{k * 7})\n"
                for k in range(40))


def write_project():
    d = oracle.SCRATCH / "todo-cli"
    if d.exists():
        shutil.rmtree(d)
    for rel, body in FILES.items():
        f = d / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(body)


EXEC = ["exec", "--skip-git-repo-check", "--json"]


def thread_id(out):
    """The thread id from `codex exec --json` output."""
    for l in out.splitlines():
        try:
            d = json.loads(l)
        except ValueError:
            continue
        if d.get("type") == "thread.started":
            return d["thread_id"]
    raise SystemExit(f"codex-oracle: no thread.started in:\n{out[-2000:]}")


def new(ns, prompt):
    return thread_id(ns.codex([*EXEC, prompt]).stdout)


def resume(ns, tid, prompt):
    r = ns.codex([*EXEC, "resume", tid, prompt])
    return thread_id(r.stdout) if "thread.started" in r.stdout else tid


def resume_last(ns, prompt):
    return thread_id(ns.codex([*EXEC, "resume", "--last", prompt]).stdout)


def fork(ns, tid, prompt):
    return thread_id(ns.codex([*EXEC, "fork", tid, prompt]).stdout)


NOTES = {}  # scenario -> {thread id: role} for MANIFEST.md


def s01(ns):
    """`npm test` fails (exec_command), the code is read; resumed: an apply_patch fix and a
    passing `npm test`; resumed with --last: apply_patch adds a file."""
    a = new(ns, "Why does npm test fail? [[look]]")
    resume(ns, a, "Fix it [[fix]]")
    resume_last(ns, "Write a note about it [[note]]")
    return {a: "the thread: `[[look]]` (`exec`), `[[fix]]` (`exec resume ID`), `[[note]]` (`exec resume --last`)"}


def s02(ns):
    """Reasoning items (summary and encrypted_content) before a call and before the answer."""
    a = new(ns, "Why does npm test fail? [[think]]")
    resume(ns, a, "Can it be fixed simply? [[think-more]]")
    return {a: "the thread: `[[think]]`, `[[think-more]]` (resumed)"}


def s03(ns):
    """A thread A; forks B and C of it; D a fork of B; B resumed after it was forked; A resumed
    after the forks."""
    a = new(ns, "What is in the project? [[f-start]]")
    resume(ns, a, "Where would you start? [[f-a2]]")
    b = fork(ns, a, "Where else could you start? [[f-b]]")
    c = fork(ns, a, "And a third way? [[f-c]]")
    d = fork(ns, b, "Tell me more about the tests [[f-d]]")
    resume(ns, b, "And now, in fork B? [[f-b2]]")
    resume(ns, a, "Back to the main thread [[f-a3]]")
    return {a: "A, the source: `[[f-start]]`, `[[f-a2]]`, after the forks `[[f-a3]]` (resumed)",
            b: "B, `exec fork A` at A's end (after `[[f-a2]]`): `[[f-b]]`; after D was forked from it, `[[f-b2]]` (resumed)",
            c: "C, `exec fork A` again: `[[f-c]]` (exec_command)",
            d: "D, `exec fork B` (a fork of a fork, at B's end after `[[f-b]]`): `[[f-d]]`"}


class Tmux:
    """The interactive client in a detached tmux session (inside the namespace)."""

    def __init__(self, ns, args):
        self.name = f"codex-oracle-{os.getpid()}"
        cmd = shlex.join(ns.enter([*ns.env({"TERM": "xterm-256color", "COLORTERM": "truecolor"}), oracle.CODEX, *args]))
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
            time.sleep(0.5)
        raise SystemExit(f"codex-oracle: tmux: no {needle!r} on the screen:\n{self.screen()}")

    def keys(self, *keys):
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=False, capture_output=True)
        time.sleep(0.4)

    def type(self, text_, enter=True):
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text_], check=True)
        time.sleep(0.6)
        if enter:
            self.keys("Enter")

    def paste(self, text_):
        """`text_` pasted as a terminal pastes (bracketed), not typed."""
        subprocess.run(["tmux", "set-buffer", "-b", "oracle-paste", text_], check=True)
        subprocess.run(["tmux", "paste-buffer", "-p", "-b", "oracle-paste", "-t", self.name], check=True)

    def wait_exit(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end and self.screen() is not None:
            time.sleep(0.5)

    def close(self):
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def compacted_count(tid):
    f = rollout_of(tid)
    return sum(1 for l in f.read_text().splitlines() if '"type":"compacted"' in l)


def rollout_of(tid):
    for f in oracle.rollouts():
        if tid in f.name:
            return f
    raise SystemExit(f"codex-oracle: no rollout for {tid}")


def s04(ns):
    """Two turns with exec_command; `/compact` in the TUI (tmux, `codex resume ID`); one more
    prompt after it (exec resume)."""
    a = compacted_thread(ns)
    return {a: "the thread: `[[c-start]]`, `[[c-tests]]`, `/compact` (TUI), `[[c-after]]` (exec resume)"}


def compacted_thread(ns):
    """Two turns with exec_command, `/compact` in the TUI (tmux, `codex resume ID`), one more
    prompt after it (exec resume): the thread's id."""
    a = new(ns, "Read src/todo.js [[c-start]]")
    resume(ns, a, "Run the tests [[c-tests]]")
    tui = Tmux(ns, ["resume", a])
    try:
        time.sleep(3)
        tui.wait("tests fail on the day", timeout=60)
        tui.type("/compact", enter=False)
        time.sleep(0.5)
        tui.keys("Enter")
        end = time.time() + 60
        while compacted_count(a) == 0 and time.time() < end:
            time.sleep(0.5)
        if compacted_count(a) == 0:
            raise SystemExit(f"codex-oracle: /compact wrote no compacted line:\n{tui.screen()}")
        time.sleep(2)
        tui.keys("C-c")  # quits the idle TUI
        tui.wait_exit()
    finally:
        tui.close()
    resume(ns, a, "What now? [[c-after]]")
    return a


def s05(ns):
    """`npm test` fails; fork 1 (`exec fork`) applies a wrong fix and `npm test` still fails;
    the project is reset; fork 2 (`exec fork` of the same thread end) applies the real fix and
    `npm test` passes."""
    a = new(ns, "Why does npm test fail? [[t-look]]")
    write_project()
    b = fork(ns, a, "Fix it [[fix-a]]")
    write_project()
    c = fork(ns, a, "Try again, properly [[fix-b]]")
    write_project()
    return {a: "the source: `[[t-look]]` (`npm test` fails)",
            b: "fix attempt A (`exec fork`): a wrong patch (`Date.UTC(y, m, 1)`), `npm test` still FAILS",
            c: "fix attempt B (`exec fork` of the same point): the real patch, `npm test` PASSES"}


def s06(ns):
    """A project with AGENTS.md. A prompt with an image (`-i`); resumed: one reply with an
    update_plan call and two exec_command calls, then an apply_patch that does not apply;
    resumed with another sandbox mode and reasoning effort: a long output."""
    proj = oracle.SCRATCH / "todo-cli"
    (proj / "AGENTS.md").write_text("# Agents\n\nRun `npm test` before you say a fix works.\n")
    (proj / "logo.png").write_bytes(png())
    a = thread_id(ns.codex([*EXEC, "What is in this picture? [[x-image]]", "-i", f"{oracle.PROJECT}/logo.png"]).stdout)
    resume(ns, a, "Look around and plan [[x-plan]]")
    ns.codex([*EXEC, "-s", "danger-full-access", "-c", "model_reasoning_effort=\"high\"", "resume", a, "Count to three thousand [[x-more]]"])
    return {a: "the thread: `[[x-image]]` (`exec -i logo.png`), `[[x-plan]]` (resumed: update_plan and two exec_command calls in one reply, an apply_patch that fails), `[[x-more]]` (resumed with `-s danger-full-access -c model_reasoning_effort=high`: `seq 1 3000`)"}


def s07(ns):
    """04's story (two turns, `/compact` in the TUI, a turn after it), then `exec fork` of the
    compacted thread (its history crosses the compaction), a fork of that fork, and the source
    resumed after the forks."""
    a = compacted_thread(ns)
    b = fork(ns, a, "Fork after the compaction [[k-fork]]")
    c = fork(ns, b, "And a fork of that [[k-fork2]]")
    resume(ns, a, "Back to the source [[k-src]]")
    return {a: "the source: `[[c-start]]`, `[[c-tests]]`, `/compact` (TUI), `[[c-after]]`; after the forks `[[k-src]]` (resumed)",
            b: "`exec fork` of the compacted source at its end: `[[k-fork]]` (`cat test/todo.test.js`)",
            c: "`exec fork` of that fork: `[[k-fork2]]`"}


def resumed_in_tui(ns):
    """A thread started with exec (`[[f-start]]`), then resumed in the TUI, its answer on the
    screen: the thread id and the TUI."""
    a = new(ns, "What is in the project? [[f-start]]")
    tui = Tmux(ns, ["resume", a])
    try:
        time.sleep(3)
        tui.wait("README.md, package.json", timeout=60)
    except BaseException:
        tui.close()
        raise
    return a, tui


def s08(ns):
    """A thread started with exec; resumed in the TUI, a prompt whose command runs 30 s is
    interrupted with Escape; another prompt in the TUI."""
    a, tui = resumed_in_tui(ns)
    try:
        tui.type("Run the slow check [[i-slow]]")
        tui.wait("to interrupt", timeout=60)
        time.sleep(2)
        tui.keys("Escape")
        time.sleep(2)
        tui.type("Never mind [[i-after]]")
        tui.wait("I stopped the slow check", timeout=60)
        time.sleep(1)
        tui.keys("C-c")
        tui.wait_exit()
    finally:
        tui.close()
    return {a: "the thread: `[[f-start]]` (exec); in the TUI (`codex resume ID`): `[[i-slow]]`, its command interrupted with Escape; `[[i-after]]`"}


def s09(ns):
    """The server's own web search (a web_search_call item between reasoning and the answer);
    resumed: a reasoning item without encrypted content."""
    a = new(ns, "Look it up [[w-search]]")
    resume(ns, a, "And now without a search [[w-plain]]")
    return {a: "the thread: `[[w-search]]` (reasoning, web_search_call, answer), `[[w-plain]]` (resumed: reasoning without encrypted_content)"}


def s10(ns):
    """A thread started with exec; in the TUI (`codex resume ID`): a `!ls` (the user's own shell
    command), a prompt about it, a pasted log with a prompt, and a prompt typed while a slow
    command runs."""
    a, tui = resumed_in_tui(ns)
    try:
        tui.type("!ls")
        tui.wait("test", timeout=30)
        time.sleep(2)
        tui.type("What did it show? [[u-bash]]")
        tui.wait("listed the project", timeout=60)
        tui.paste(PASTE)
        time.sleep(2)
        tui.type(" Summarize this log [[u-paste]]")
        tui.wait("failed twice", timeout=60)
        tui.type("Run the slow check [[u-slow]]")
        tui.wait("to interrupt", timeout=60)
        time.sleep(1)
        tui.type("What is in README.md? [[u-queued]]")
        tui.wait("small todo list", timeout=90)
        time.sleep(2)
        tui.keys("C-c")
        tui.wait_exit()
    finally:
        tui.close()
    return {a: "the thread: `[[f-start]]` (exec); in the TUI (`codex resume ID`): `!ls` (a shell command of the user's), `[[u-bash]]`, a 40-line log pasted then `[[u-paste]]`, `[[u-slow]]` (an 8 s command) with `[[u-queued]]` typed while it runs"}


SCENARIOS = {
    "01-exec-and-patch": s01,
    "02-reasoning": s02,
    "03-forks": s03,
    "04-compact": s04,
    "05-two-fixes": s05,
    "06-mixed": s06,
    "07-compact-fork": s07,
    "08-interrupt": s08,
    "09-search": s09,
    "10-tui-inputs": s10,
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
            roles = SCENARIOS[name](ns)
        finally:
            ns.close()
        keep(name, roles)


def keep(name, roles):
    """Copies every rollout file of the scenario into testdata/codex-0.171.0/NAME/sessions/..."""
    dst = oracle.OUT / name
    shutil.rmtree(dst, ignore_errors=True)
    files = {}
    for f in oracle.rollouts():
        rel = f.relative_to(oracle.SCRATCH / ".codex")
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst / rel)
        tid = next((t for t in roles if t in f.name), None)
        files[str(rel)] = {"thread": tid, "role": roles.get(tid, "?")}
        log(f"{name}: {(dst / rel).relative_to(oracle.REPO)}")
    (oracle.RUN / f"notes-{name}.json").write_text(json.dumps(files, indent=1))
