#!/usr/bin/env python3
"""The real Codex CLI as the oracle for its rollout format.

usage:
  python3 tools/codex-oracle/oracle.py install           # the pinned client, from npm
  python3 tools/codex-oracle/oracle.py corpus [NAME...]  # run the scenarios: rollout files
  python3 tools/codex-oracle/oracle.py goldens [FILE...] # resume / fork every thread end: the requests
  python3 tools/codex-oracle/oracle.py run ARG...        # one `codex ARG...` in a fresh namespace (experiments)

Codex CLI 0.171.0 runs inside a loopback-only network namespace with a private mount namespace,
against the scripted Responses API in mock.py, which logs every request. Inside the namespace
`/home` is a tmpfs, `/home/dev` is a scratch folder of this machine and `/opt/codex` the npm
install, so the project the scenarios work in is `/home/dev/todo-cli`, CODEX_HOME is
`/home/dev/.codex`, and the paths in the corpus are those fictional ones: nothing is rewritten.

`corpus` writes testdata/codex-0.171.0/<name>/sessions/YYYY/MM/DD/rollout-*.jsonl (every file
of a family, in the store's layout). `goldens` resumes (and forks) each thread of a family on a
scratch copy with one more prompt and writes the `input` of the request it sent, less the new
turn's own items, to testdata/codex-0.171.0/requests/<name>.json. The tests read only the
committed files. Scenarios: scenarios.py.
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
VERSION = "0.171.0"
OUT = REPO / "testdata" / f"codex-{VERSION}"
CACHE = Path(os.environ.get("PISCES_CLIENTS", Path.home() / ".cache" / "pisces-clients"))
INSTALL = CACHE / "codex"  # npm --prefix; mounted at /opt/codex inside the namespace
RUN = CACHE / "codex-oracle"  # the namespace's pids, logs, the scratch /home/dev
SCRATCH = RUN / "home-dev"
PORT = 8796
HOME = "/home/dev"
CODEX_HOME = HOME + "/.codex"
PROJECT = HOME + "/todo-cli"
CODEX = "/opt/codex/node_modules/.bin/codex"  # the npm package's wrapper, which execs its static binary

CONFIG = f"""# written by tools/codex-oracle/oracle.py (after ../shared/clients/codex-config.toml)
model = "mock-model"
model_provider = "mock"
# the model's metadata (MODEL_CATALOG below): without it Codex uses fallback metadata, which
# offers no apply_patch tool
model_catalog_json = "{CODEX_HOME}/mock-models.json"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:{PORT}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 20000

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
daemon_auto_start = false

[tui]
screen_reader_detection_done = true
show_tooltips = false

[projects."{PROJECT}"]
trust_level = "trusted"
"""

BASE_INSTRUCTIONS = ("You are a coding agent running in the Codex CLI, a terminal-based coding assistant. "
                     "(The codex-oracle's short base instructions for its scripted mock-model.)")

# One model, `mock-model`, in the shape of the catalog Codex 0.171.0 bundles (its gpt-5.5 entry,
# with the shell tool `exec_command` (unified exec) as the fallback metadata has it, the freeform
# apply_patch tool, reasoning summaries, and short base instructions).
MODEL_CATALOG = {"models": [{
    "slug": "mock-model", "display_name": "Mock model", "description": "The codex-oracle's scripted model.",
    "prefer_websockets": False, "support_verbosity": False, "default_verbosity": None,
    "apply_patch_tool_type": "freeform", "web_search_tool_type": "text", "input_modalities": ["text", "image"],
    "supports_image_detail_original": False, "truncation_policy": {"mode": "tokens", "limit": 10000},
    "supports_parallel_tool_calls": True, "tool_mode": None, "multi_agent_version": None,
    "multi_agent_reasoning_effort": None, "use_responses_lite": False, "supports_reasoning_effort_updates": False,
    "include_skills_usage_instructions": False, "include_apps_usage_instructions": False,
    "include_plugin_usage_instructions": False, "guardian": None, "node_repl_auto_review_required": False,
    "node_repl_disabled": True, "requires_sandboxed_review": False, "auto_review_model_override": None,
    "model_specialty": None, "context_window": 272000, "max_context_window": 272000,
    "auto_compact_token_limit": None, "comp_hash": "0000", "default_reasoning_summary": "auto",
    "default_reasoning_level": "medium",
    "supported_reasoning_levels": [{"effort": "low", "description": "low"}, {"effort": "medium", "description": "medium"},
                                   {"effort": "high", "description": "high"}],
    "shell_type": "unified_exec", "visibility": "list", "minimal_client_version": "0.124.0", "supported_in_api": True,
    "availability_nux": None, "upgrade": None, "priority": 1, "model_messages": None,
    # the instructions Codex's fallback metadata sends (its prompt.md), shortened
    "base_instructions": BASE_INSTRUCTIONS,
    "experimental_supported_tools": [], "available_in_plans": [], "supports_search_tool": False,
    "supports_experimental_context": False, "default_service_tier": None, "service_tiers": [],
    "additional_speed_tiers": [], "supports_reasoning_summary_parameter": True, "supports_reasoning_summaries": True,
}]}


def log(msg):
    print(f"codex-oracle: {msg}", file=sys.stderr, flush=True)


def install():
    subprocess.run(["npm", "install", "--prefix", str(INSTALL), "--ignore-scripts", "--no-audit", "--no-fund",
                    f"@openai/codex@{VERSION}"], check=True)


def binary_on_host():
    return INSTALL / "node_modules" / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"


class Namespace:
    """A loopback-only network namespace whose mount namespace has a tmpfs on /home with the
    scratch folder bound at /home/dev, the install at /opt/codex, a DNS sink that fails every
    look-up, and mock.py."""

    def __init__(self, script: Path):
        RUN.mkdir(parents=True, exist_ok=True)
        (RUN / "resolv.conf").write_text("nameserver 127.0.0.1\n")
        SCRATCH.mkdir(parents=True, exist_ok=True)
        inner = (f"ip link set lo up; mount --bind {RUN}/resolv.conf /etc/resolv.conf; "
                 f"mount -t tmpfs tmpfs /home; mkdir -p {HOME}; mount --bind {SCRATCH} {HOME}; "
                 f"mount -t tmpfs tmpfs /opt; mkdir -p /opt/codex; mount --bind {INSTALL} /opt/codex; "
                 f"python3 {HERE.parent / 'claude-oracle'}/dnslog.py {RUN}/dns.log & echo $! > {RUN}/dns.pid; exec sleep infinity")
        self.anchor = subprocess.Popen(["unshare", "-n", "-m", "--propagation", "private", "bash", "-c", inner],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        self.requests = RUN / "requests.jsonl"
        self.server = subprocess.Popen(self.enter(["python3", str(HERE / "mock.py"), str(PORT), str(self.requests), str(script)]),
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        line = self.server.stdout.readline().decode()
        if "mock on" not in line:
            raise SystemExit(f"codex-oracle: the mock did not start: {line}")

    def enter(self, argv, cwd=PROJECT):
        return ["nsenter", "-t", str(self.anchor.pid), "-n", "-m", "--", "sh", "-c", 'cd "$0" 2>/dev/null || cd /; exec "$@"', cwd, *argv]

    def close(self):
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
            "HOME": HOME, "CODEX_HOME": CODEX_HOME, "PATH": "/usr/local/bin:/usr/bin:/bin", "TERM": "dumb",
            "MOCK_API_KEY": "sk-test", "LANG": "C.UTF-8", "USER": "dev", "SHELL": "/bin/bash",
            "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false",
        }
        env.update(extra or {})
        return ["env", "-i", *[f"{k}={v}" for k, v in env.items()]]

    def codex(self, args, timeout=180, input=None, env=None, check=True, cwd=PROJECT):
        r = subprocess.run(self.enter([*self.env(env), CODEX, *args], cwd=cwd),
                           capture_output=True, text=True, timeout=timeout, input=input if input is not None else "")
        if r.returncode != 0 and check:
            raise SystemExit(f"codex-oracle: codex {' '.join(args)} exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        return r


def reset_scratch():
    """An empty /home/dev with only CODEX_HOME/config.toml: no Codex state, no project."""
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    (SCRATCH / ".codex").mkdir(parents=True)
    (SCRATCH / ".codex" / "config.toml").write_text(CONFIG)
    (SCRATCH / ".codex" / "mock-models.json").write_text(json.dumps(MODEL_CATALOG, indent=1) + "\n")


def sessions_dir():
    return SCRATCH / ".codex" / "sessions"


def rollouts():
    """Every rollout file under the scratch CODEX_HOME/sessions, oldest name first."""
    d = sessions_dir()
    return sorted(d.rglob("rollout-*.jsonl")) if d.exists() else []


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "install":
        return install()
    if not binary_on_host().exists():
        raise SystemExit(f"codex-oracle: no client at {binary_on_host()}; run `python3 {Path(__file__).relative_to(REPO)} install`")
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
        reset_scratch()
        scenarios.write_project()
        ns = Namespace(script)
        try:
            r = ns.codex(rest, check=False)
            print(r.stdout)
            print(r.stderr, file=sys.stderr)
        finally:
            ns.close()
    else:
        raise SystemExit(f"codex-oracle: unknown command {cmd}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
