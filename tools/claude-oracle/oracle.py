#!/usr/bin/env python3
"""The real Claude Code as the oracle for its session format.

usage:
  python3 tools/claude-oracle/oracle.py install          # the pinned client, from npm
  python3 tools/claude-oracle/oracle.py corpus [NAME...] # run the scenarios: session files
  python3 tools/claude-oracle/oracle.py goldens [FILE...] # resume every entry: the requests

Claude Code 2.1.332 runs inside a loopback-only network namespace with a private mount
namespace, against the scripted Anthropic server in mock.py, which logs every request. Inside
the namespace `/home/dev` is a scratch folder of this machine, so the project the scenarios work
in is `/home/dev/todo-cli` and Claude Code's files are under `/home/dev/.claude`: the paths in
the corpus are those fictional ones and nothing has to be rewritten.

`corpus` writes testdata/claude-code-2.1.332/<name>.jsonl (and a subagent's transcripts under
<name>/subagents/). `goldens` resumes each file at each entry Claude Code can resume at (on a
scratch copy: resuming appends to the file) with one more prompt, and writes the `messages`
of the request it sent, less the new turn, to testdata/claude-code-2.1.332/requests/. The
tests read only the committed files. Scenarios: scenarios.py.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VERSION = "2.1.332"
OUT = REPO / "testdata" / f"claude-code-{VERSION}"
CACHE = Path(os.environ.get("PISCES_CLIENTS", Path.home() / ".cache" / "pisces-clients"))
CLAUDE = CACHE / "claude" / "node_modules" / ".bin" / "claude"
RUN = CACHE / "claude-oracle"  # the namespace's pid, logs, the scratch /home/dev
SCRATCH = RUN / "home-dev"
PORT = 8795
HOME = "/home/dev"
PROJECT = HOME + "/todo-cli"


def log(msg):
    print(f"claude-oracle: {msg}", file=sys.stderr, flush=True)


def install():
    subprocess.run(["npm", "install", "--prefix", str(CACHE / "claude"), "--ignore-scripts", "--no-audit", "--no-fund",
                    f"@anthropic-ai/claude-code@{VERSION}"], check=True)
    # install.cjs only links the native binary of @anthropic-ai/claude-code-linux-x64 into bin/
    subprocess.run(["node", str(CACHE / "claude" / "node_modules" / "@anthropic-ai" / "claude-code" / "install.cjs")], check=True)


class Namespace:
    """A loopback-only network namespace whose mount namespace has a tmpfs on /home with the
    scratch folder bound at /home/dev, a DNS sink that fails every look-up, and mock.py."""

    def __init__(self, script: Path):
        RUN.mkdir(parents=True, exist_ok=True)
        (RUN / "resolv.conf").write_text("nameserver 127.0.0.1\n")
        SCRATCH.mkdir(parents=True, exist_ok=True)
        inner = (f"ip link set lo up; mount --bind {RUN}/resolv.conf /etc/resolv.conf; "
                 f"mount -t tmpfs tmpfs /home; mkdir -p {HOME}; mount --bind {SCRATCH} {HOME}; "
                 f"python3 {HERE}/dnslog.py {RUN}/dns.log & exec sleep infinity")
        self.anchor = subprocess.Popen(["unshare", "-n", "-m", "--propagation", "private", "bash", "-c", inner],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        self.requests = RUN / "requests.jsonl"
        self.server = subprocess.Popen(self.enter(["python3", str(HERE / "mock.py"), str(PORT), str(self.requests), str(script)]),
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        line = self.server.stdout.readline().decode()
        if "mock on" not in line:
            raise SystemExit(f"claude-oracle: the mock did not start: {line}")

    def enter(self, argv, cwd=PROJECT):
        return ["nsenter", "-t", str(self.anchor.pid), "-n", "-m", "--", "sh", "-c", 'cd "$0" 2>/dev/null || cd /; exec "$@"', cwd, *argv]

    def close(self):
        for p in (self.server, self.anchor):
            p.send_signal(signal.SIGTERM)
            p.wait()
        subprocess.run(["pkill", "-f", f"dnslog.py {RUN}/dns.log"], check=False)

    def requests_since(self, n):
        lines = self.requests.read_text().splitlines() if self.requests.exists() else []
        return [json.loads(l) for l in lines[n:]]

    def request_count(self):
        return len(self.requests.read_text().splitlines()) if self.requests.exists() else 0

    def env(self, extra=None):
        env = {
            "HOME": HOME, "PATH": f"{CLAUDE.parent}:/usr/local/bin:/usr/bin:/bin", "TERM": "dumb",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{PORT}", "ANTHROPIC_API_KEY": "sk-test",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1", "CLAUDE_CODE_MODEL_CATALOG": "off",
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
        }
        env.update(extra or {})
        return ["env", "-i", *[f"{k}={v}" for k, v in env.items()]]

    def claude(self, args, timeout=180, input=None, env=None, check=True):
        r = subprocess.run(self.enter([*self.env(env), str(CLAUDE), *args]),
                           capture_output=True, text=True, timeout=timeout, input=input)
        if r.returncode != 0 and check:
            raise SystemExit(f"claude-oracle: claude {' '.join(args)} exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return r.stdout


def reset_scratch():
    """An empty /home/dev: no Claude state, no project."""
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    SCRATCH.mkdir(parents=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "install":
        return install()
    if not CLAUDE.exists():
        raise SystemExit(f"claude-oracle: no client at {CLAUDE}; run `python3 {Path(__file__).relative_to(REPO)} install`")
    import scenarios
    if cmd == "corpus":
        scenarios.corpus(rest)
    elif cmd == "goldens":
        import goldens
        goldens.run(rest)
    else:
        raise SystemExit(f"claude-oracle: unknown command {cmd}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
