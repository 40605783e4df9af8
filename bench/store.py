#!/usr/bin/env python3
"""Every session at once: `pisces ls`, `grep` and `stats` over a generated store of many
sessions of every agent, side by side with `wc -l`, `rg -c` and ccusage on the same files.

    python3 bench/store.py [--sessions 10000] [--runs 3] [--write BENCHMARKS.md]

The store (target/bench/store-<N>/home, made once and reused): Claude Code sessions
(bench/gen-claude-session.py), Codex CLI rollout families (bench/gen-codex-family.py), pi
sessions (../shared/bench/gen-session.py, else the pi corpus), oh-my-pi sessions (the omp
corpus) and the OpenClaw corpus's state folder. A few dozen files of each are generated
with different sizes and seeds; the rest are copies of them with every id changed (uuids,
8-hex ids, `msg_`/`req_`/`toolu_`/`call_`/`resp_` ids, the same length, so a Codex fork's byte
offsets into its parent still hold), so that no two sessions share an entry or a response.

Measured, each command once per round, round after round (so that a slow moment of the
machine falls on every row), page cache warm:
  - `pisces ls --all` cold (`--no-cache`) against `wc -l` over every session file;
  - `pisces ls --all` warm (the cache filled by a run before);
  - `pisces grep -F LITERAL` (every session; every hit with its REV) against `rg -c -F LITERAL`;
  - `pisces stats --all --agent claude` and `--agent codex`, cold and warm, against ccusage
    20.0.24 (`claude session` and `codex session`, `--offline`), with the totals compared.
Targets (issue "every session at once"): warm `ls` ≤ 0.3 s, cold `ls` ≤ 2× `wc -l`, `grep`
≤ 1.5× `rg -c`, `stats` ≥ 10× faster than ccusage. Needs `rg` (apt-get install ripgrep) and
npm (for ccusage, installed under target/bench/ccusage).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# run.py's report helpers (tables, the commit, replacing a section), as export.py uses them.
spec = importlib.util.spec_from_file_location("bench_run", HERE / "run.py")
run_py = importlib.util.module_from_spec(spec)
sys.modules["bench_run"] = run_py
assert spec.loader is not None
spec.loader.exec_module(run_py)
BENCH = REPO / "target" / "bench"
PISCES = REPO / "target" / "release" / "pisces"
SHARED_GEN = REPO.parent / "shared" / "bench" / "gen-session.py"
CCUSAGE_VERSION = "20.0.24"

ID_HEX = re.compile(rb'(?<=")[0-9a-f]{8}(?=[-"])')
ID_TOKEN = re.compile(rb"((?:msg|req|toolu|call|resp)_)([A-Za-z0-9]{12,})")
SESSION_ID = re.compile(rb'"(?:sessionId|id)":"([0-9a-f-]{36})"')
NAME_HEX = re.compile(r"[0-9a-f]{8}(?=-[0-9a-f]{4}-)")
B36 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def log(msg: str) -> None:
    print(f"store: {msg}", file=sys.stderr, flush=True)


def mask_of(copy: int) -> int:
    return int.from_bytes(hashlib.sha256(f"copy{copy}".encode()).digest()[:4], "big")


def rewrite(data: bytes, copy: int) -> bytes:
    """`data` with every id changed for copy number `copy` (copy 0: as it is), lengths kept."""
    if copy == 0:
        return data
    mask = mask_of(copy)
    tag = "".join(B36[(copy // 62**k) % 62] for k in range(4)).encode()
    data = ID_HEX.sub(lambda m: b"%08x" % (int(m.group(0), 16) ^ mask), data)
    return ID_TOKEN.sub(lambda m: m.group(1) + m.group(2)[:-4] + tag, data)


def rename(name: str, copy: int) -> str:
    if copy == 0:
        return name
    mask = mask_of(copy)
    return NAME_HEX.sub(lambda m: "%08x" % (int(m.group(0), 16) ^ mask), name)


def templates(tmp: Path, rng: random.Random) -> dict[str, list[tuple[Path, list[Path]]]]:
    """A few dozen generated sessions per agent: {agent: [(root folder, files)]}."""
    out: dict[str, list[tuple[Path, list[Path]]]] = {"claude": [], "codex": [], "pi": [], "omp": []}
    for k in range(40):
        f = tmp / f"claude-{k}.jsonl"
        mb = rng.choice([0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.2, 2.0])
        subprocess.run([sys.executable, str(HERE / "gen-claude-session.py"), "--mb", str(mb), "--seed", str(k + 1),
                        "--branch-every", "120", "--out", str(f)], check=True, stderr=subprocess.DEVNULL)
        out["claude"].append((tmp, [f]))
    for k in range(30):
        d = tmp / f"codex-{k}"
        mb = rng.choice([0.05, 0.1, 0.2, 0.4, 0.8, 1.5])
        subprocess.run([sys.executable, str(HERE / "gen-codex-family.py"), "--mb", str(mb), "--forks", str(1 + k % 3),
                        "--seed", str(k + 1), "--out", str(d)], check=True, stderr=subprocess.DEVNULL)
        out["codex"].append((d, sorted(d.rglob("*.jsonl"))))
    if SHARED_GEN.exists():
        for k in range(30):
            f = tmp / f"pi-{k}.jsonl"
            entries = rng.choice([60, 150, 300, 600, 1000])
            subprocess.run([sys.executable, str(SHARED_GEN), "--entries", str(entries), "--branch-every",
                            str(rng.choice([0, 200])), "--seed", str(k + 1), "--out", str(f)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out["pi"].append((tmp, [f]))
    else:
        for f in sorted((REPO / "testdata" / "pi-1.6.0").glob("*.jsonl")):
            out["pi"].append((f.parent, [f]))
    for f in sorted((REPO / "testdata" / "omp-18.2.3" / "home" / ".omp" / "agent" / "sessions").rglob("*.jsonl")):
        out["omp"].append((f.parent, [f]))
    return out


def make_store(home: Path, n: int, seed: int) -> dict:
    """Writes the store under `home`; returns what it holds."""
    rng = random.Random(seed)
    tmp = home.parent / "templates"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log("generating templates")
    tpl = templates(tmp, rng)
    share = {"claude": 0.42, "codex": 0.28, "pi": 0.25, "omp": 0.05}
    counts = {a: 0 for a in share}
    files = 0
    size = 0
    log(f"writing {n} sessions under {home}")
    for k in range(n):
        agent = rng.choices(list(share), weights=list(share.values()))[0]
        root, group = tpl[agent][k % len(tpl[agent])]
        copy = k + 1
        project = f"proj{k % 97}"
        for f in group:
            data = rewrite(f.read_bytes(), copy)
            name = rename(f.name, copy)
            sid = SESSION_ID.search(data)
            sid = sid.group(1).decode() if sid else f"{k:08x}-0000-4000-8000-000000000000"
            if agent == "claude":
                dst = home / ".claude" / "projects" / f"-home-dev-{project}" / f"{sid}.jsonl"
            elif agent == "codex":
                dst = home / ".codex" / rename(str(f.parent.relative_to(root)), copy) / name
            elif agent == "pi":
                dst = home / ".pi" / "agent" / "sessions" / f"--home-dev-{project}--" / f"2026-12-01T10-00-00-000Z_{sid}.jsonl"
            else:
                dst = home / ".omp" / "agent" / "sessions" / f"-{project}" / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
            files += 1
            size += len(data)
        counts[agent] += 1
    state = REPO / "testdata" / "openclaw-2026.9.6" / "state"
    shutil.copytree(state, home / ".openclaw", dirs_exist_ok=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"sessions": counts, "files": files, "bytes": size}


def session_files(home: Path) -> list[str]:
    return sorted(str(p) for d in (".claude", ".codex", ".pi", ".omp") for p in (home / d).rglob("*.jsonl"))


def ccusage() -> Path:
    prefix = BENCH / "ccusage"
    exe = prefix / "node_modules" / ".bin" / "ccusage"
    if not exe.exists():
        subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent",
                        f"ccusage@{CCUSAGE_VERSION}"], check=True)
    return exe


def run(argv, env, stdout=subprocess.DEVNULL) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=stdout, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"store: {' '.join(map(str, argv[:4]))} … exited {r.returncode}: {r.stderr.decode()[-2000:]}")
    return dt


def fmt(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--literal", default="parseDue")
    ap.add_argument("--write")
    args = ap.parse_args()
    if not shutil.which("rg"):
        raise SystemExit("store: needs rg (apt-get install ripgrep)")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    top = BENCH / f"store-{args.sessions}-s{args.seed}"
    home = top / "home"
    meta_file = top / "meta.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
        log(f"reusing {home}")
    else:
        shutil.rmtree(top, ignore_errors=True)
        meta = make_store(home, args.sessions, args.seed)
        meta_file.write_text(json.dumps(meta))
    files = session_files(home)
    log(f"{len(files)} files, {sum(os.path.getsize(f) for f in files) / 1e9:.2f} GB; warming the page cache")
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 22):
                pass
    cache = top / "cache"
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(cache), "PATH": os.environ["PATH"], "TZ": "UTC", "LANG": "C.UTF-8"}
    cc = ccusage()
    listing = top / "files.txt"
    listing.write_text("\n".join(files) + "\n")
    p = str(PISCES)
    dirs = [str(home / d) for d in (".claude", ".codex", ".pi", ".omp")]
    commands = {
        "wc -l": ["sh", "-c", f"xargs -a '{listing}' wc -l >/dev/null"],
        "pisces ls --all (cold)": [p, "ls", "--all", "--no-cache", "--format", "json"],
        "pisces ls --all (warm)": [p, "ls", "--all", "--format", "json"],
        "rg -c": ["rg", "-c", "-F", args.literal, *dirs],
        "pisces grep": [p, "grep", "-F", args.literal],
        "ccusage claude session": [str(cc), "claude", "session", "--json", "--offline"],
        "pisces stats --agent claude (cold)": [p, "stats", "--all", "--agent", "claude", "--no-cache", "--format", "json"],
        "pisces stats --agent claude (warm)": [p, "stats", "--all", "--agent", "claude", "--format", "json"],
        "ccusage codex session": [str(cc), "codex", "session", "--json", "--offline"],
        "pisces stats --agent codex (cold)": [p, "stats", "--all", "--agent", "codex", "--no-cache", "--format", "json"],
        "pisces stats --agent codex (warm)": [p, "stats", "--all", "--agent", "codex", "--format", "json"],
    }
    cenv = dict(env, CLAUDE_CONFIG_DIR=str(home / ".claude"), CODEX_HOME=str(home / ".codex"))
    # One run each first: fills the cache for the warm rows, and gives the answers.
    answers = {}
    for name, argv in commands.items():
        with open(top / "out.json", "wb") as out:
            dt = run(argv, cenv if name.startswith("ccusage") else env, stdout=out)
        answers[name] = (top / "out.json").read_bytes()
        log(f"first run: {name}: {fmt(dt)}")
    times: dict[str, list[float]] = {k: [] for k in commands}
    for i in range(args.runs):
        for name, argv in commands.items():
            times[name].append(run(argv, cenv if name.startswith("ccusage") else env))
        log(f"round {i + 1}/{args.runs}")
    med = {k: statistics.median(v) for k, v in times.items()}

    def totals_pisces(raw):
        d = json.loads(raw)
        u = (d.get("total") or {}).get("usage") or {}
        return u.get("tokens"), u.get("cost"), d.get("sessions")

    def totals_ccusage(raw):
        d = json.loads(raw)
        t = d.get("totals") or {}
        return t.get("totalTokens"), t.get("totalCost", t.get("costUSD")), len(d.get("sessions") or [])

    ls_lines = None
    try:
        ls = json.loads(answers["pisces ls --all (cold)"])
        ls_lines = len(ls["sessions"] if isinstance(ls, dict) else ls)
    except (ValueError, KeyError, TypeError):
        pass
    checks = [
        ("warm `ls --all` ≤ 0.3 s", fmt(med["pisces ls --all (warm)"]), med["pisces ls --all (warm)"] <= 0.3),
        ("cold `ls --all` ≤ 2× `wc -l`", f"{med['pisces ls --all (cold)'] / med['wc -l']:.2f}×",
         med["pisces ls --all (cold)"] <= 2 * med["wc -l"]),
        ("`grep` of every session ≤ 1.5× `rg -c`", f"{med['pisces grep'] / med['rg -c']:.2f}×",
         med["pisces grep"] <= 1.5 * med["rg -c"]),
    ]
    for agent in ("claude", "codex"):
        cc_t = med[f"ccusage {agent} session"]
        for kind in ("cold", "warm"):
            ours = med[f"pisces stats --agent {agent} ({kind})"]
            checks.append((f"`stats` {agent} {kind} ≥ 10× faster than ccusage", f"{cc_t / ours:.1f}×", cc_t >= 10 * ours))
    total_rows = []
    for agent in ("claude", "codex"):
        ours = totals_pisces(answers[f"pisces stats --agent {agent} (cold)"])
        theirs = totals_ccusage(answers[f"ccusage {agent} session"])
        total_rows.append([agent, f"{ours[2]} sessions, {ours[0]:,} tokens, ${ours[1]:,.2f}",
                           f"{theirs[2]} sessions, {theirs[0]:,} tokens, ${theirs[1]:,.2f}"]
                          if None not in ours + theirs else [agent, str(ours), str(theirs)])
    commit = run_py.capture(["git", "rev-parse", "--short", "HEAD"])
    s = meta["sessions"]
    report = [
        "## Store",
        "",
        f"`python3 bench/store.py --sessions {args.sessions} --runs {args.runs}` (bench/store.py): a generated store of "
        f"{sum(s.values()):,} sessions ({', '.join(f'{v:,} {k}' for k, v in s.items())}, and the OpenClaw corpus's "
        f"database), {meta['files']:,} files, {meta['bytes'] / 1e9:.2f} GB; page cache warm; each command once a round, "
        f"median of {args.runs} rounds. Commit `{commit}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} CPUs. `ls` listed {ls_lines if ls_lines is not None else '?'} sessions.",
        "",
        run_py.medians_table(times, fmt),
        "",
        run_py.table(["target", "measured", ""], [[c, m, f"**{'PASS' if ok else 'FAIL'}**"] for c, m, ok in checks]),
        "",
        "Totals over the same files (pisces counts each response once, a fork's inherited ones with its parent; ccusage "
        "as it counts, with its own prices offline; the sessions are generated, so these only show that both read them: "
        "README's `stats` section compares the two on the clients' own files):",
        "",
        run_py.table(["agent", "pisces stats", "ccusage"], total_rows),
        "",
    ]
    text = "\n".join(report)
    print(text)
    if args.write:
        run_py.replace_section(Path(args.write), "## Store", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
