#!/usr/bin/env python3
"""Benchmark pisces against `wc -l` and pi itself on generated session files.

Generates sessions of about 100 MB and 1 GB with ../shared/bench/gen-session.py (cached
under --out), then runs the commands of COMMANDS on every file, interleaved round-robin over
files and commands (pisces, wc, pi, pisces, wc, pi, ...), and reports wall-clock
min/median/max, CPU time, the ratios of medians, pisces's peak heap (from a build with
`--features alloc-stats`), growth from file to file, and whether the issue's targets are met
(ratio_checks, growth_rows). Prints a Markdown report to stdout and writes it to BENCHMARKS.md
(unless --no-write). Progress goes to stderr.

    python3 bench/run.py                      # everything (~1.5 min, plus ~1.5 min of builds and generation the first time)
    python3 bench/run.py --sizes 100m --runs 5 --no-write
    python3 bench/run.py --sizes 10m,100m,1g  # any <N>m / <N>g, "-linear" for a single chain

Python 3.9+, standard library only. See bench/README.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent
CLAUDE_GEN = REPO / "bench" / "gen-claude-session.py"
CODEX_GEN = REPO / "bench" / "gen-codex-family.py"
DEFAULT_SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
ALLOC_LINE = re.compile(r"^pisces-alloc: peak=(\d+) total=(\d+)\s*$", re.M)

# pi reads the whole file into one JS string: V8 caps strings at 2^29-24 characters (~512 MiB),
# so pi cannot load the 1 GB file at all (ERR_STRING_TOO_LONG). Larger files get no pi rows.
PI_MAX_BYTES = 400_000_000
HEAP_RUNS = 3  # runs of the alloc-stats build per pisces row (its peak barely varies)


# ----------------------------------------------------------------------------------------
# Session files


@dataclasses.dataclass
class Dataset:
    """One generated session file. `spec` is what --sizes names it (100m, 1g, 100m-linear)."""

    spec: str
    entries: int
    branch_every: int
    seed: int
    path: Path = Path()
    meta: dict = dataclasses.field(default_factory=dict)  # gen-session's summary + bytes
    agent: str = "pi"  # whose format: "claude" files come from bench/gen-claude-session.py, "codex" stores from bench/gen-codex-family.py

    @property
    def bytes(self) -> int:
        return self.meta["bytes"]

    @property
    def path_len(self) -> int:
        return self.meta["summary"]["path_len"]

    @property
    def linear(self) -> bool:
        return self.branch_every == 0

    def gen_args(self) -> list[str]:
        if self.agent == "claude":
            return ["--mb", "100", "--branch-every", str(self.branch_every), "--seed", str(self.seed)]
        if self.agent == "codex":
            return ["--mb", "100", "--forks", str(self.branch_every), "--seed", str(self.seed)]
        return ["--entries", str(self.entries), "--branch-every", str(self.branch_every), "--seed", str(self.seed)]


def parse_size(spec: str, seed: int) -> Dataset:
    """`100m` = 55,000 entries (~100 MB), `1g` = 550,000 (~1 GB), forking every 200 entries
    (the final leaf's path is about half the file); `-linear` = one chain (path = every entry)."""
    if spec.strip().lower() == "claude":
        # A ~100 MB Claude Code session made from the real client's lines: a branch every
        # ~200 lines, a compaction every ~3,000.
        return Dataset(spec="claude", entries=0, branch_every=200, seed=seed, agent="claude")
    if spec.strip().lower() == "codex":
        # A Codex CLI store: a ~100 MB thread (compacted every ~3,000 lines) and 50 forks of
        # it (some forks of forks), from the real client's lines. `path` reads the fork with
        # the longest history; `tree` draws the whole family from the thread.
        return Dataset(spec="codex", entries=0, branch_every=50, seed=seed, agent="codex")
    if spec.strip().lower() == "diff":
        # Two long branches (paths of ~52,000 entries, ~12,000 of them divergent on each
        # side) for `pisces diff`.
        return Dataset(spec="diff", entries=105_000, branch_every=52_000, seed=seed)
    m = re.fullmatch(r"(\d+)([mg])(-linear)?", spec.strip().lower())
    if not m:
        raise SystemExit(f"bench: bad size {spec!r} (want e.g. 100m, 1g, 100m-linear)")
    n, unit, linear = int(m.group(1)), m.group(2), bool(m.group(3))
    entries = n * (550 if unit == "m" else 550_000)
    return Dataset(spec=m.group(0), entries=entries, branch_every=0 if linear else 200, seed=seed)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ensure_dataset(ds: Dataset, out: Path, gen: Path) -> None:
    """Generates ds into out (or reuses the cached file if it was made with the same
    arguments by the same generator and has the recorded size)."""
    if ds.agent == "claude":
        gen = CLAUDE_GEN
        ds.path = out / f"claude-100m-b{ds.branch_every}-s{ds.seed}.jsonl"
    elif ds.agent == "codex":
        gen = CODEX_GEN
        ds.path = out / f"codex-100m-f{ds.branch_every}-s{ds.seed}"
    else:
        ds.path = out / f"session-{ds.entries}e-b{ds.branch_every}-s{ds.seed}.jsonl"
    meta_path = ds.path.with_suffix(".meta.json")
    gen_sha = sha256(gen)
    if ds.path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            if meta["args"] == ds.gen_args() and meta["generator_sha256"] == gen_sha and size_of(ds.path) == meta["bytes"]:
                ds.meta = meta
                log(f"{ds.spec}: reusing {rel(ds.path)} ({meta['bytes']:,} bytes)")
                return
        except (OSError, ValueError, KeyError):
            pass
    # ~1.84 KB per entry; keep 10% slack.
    need = int(ds.entries * 1840 * 1.1) if ds.agent == "pi" else 110_000_000
    free = shutil.disk_usage(out).free
    if free < need:
        raise SystemExit(f"bench: {ds.spec} needs about {need / 1e9:.1f} GB in {out}, only {free / 1e9:.1f} GB free (use --out)")
    log(f"{ds.spec}: generating {rel(ds.path)} (python3 {rel(gen)} {' '.join(ds.gen_args())}) ...")
    tmp = ds.path.with_name(ds.path.name + ".tmp")
    if tmp.is_dir():
        shutil.rmtree(tmp)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, str(gen), *ds.gen_args(), "--out", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise SystemExit(f"bench: gen-session.py failed ({r.returncode}):\n{r.stderr}")
    summary = None
    for line in reversed(r.stderr.splitlines()):
        try:
            summary = json.loads(line)
            break
        except ValueError:
            continue
    if not isinstance(summary, dict) or "path_len" not in summary:
        raise SystemExit(f"bench: no summary line from gen-session.py:\n{r.stderr}")
    if ds.path.is_dir():
        shutil.rmtree(ds.path)
    tmp.replace(ds.path)
    if ds.agent == "codex":
        # The generator names files under the folder it wrote: rename them to the cache's.
        summary = json.loads(json.dumps(summary).replace(str(tmp), str(ds.path)))
    ds.meta = {"args": ds.gen_args(), "generator_sha256": gen_sha, "bytes": size_of(ds.path), "summary": summary}
    meta_path.write_text(json.dumps(ds.meta, indent=2) + "\n")
    log(f"{ds.spec}: {ds.bytes:,} bytes in {time.perf_counter() - t0:.0f} s")


def size_of(path: Path) -> int:
    """A file's size, or the size of all files under a folder (a Codex store)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*.jsonl"))
    return path.stat().st_size


def warm_page_cache(path: Path) -> None:
    for p in sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]:
        with open(p, "rb", buffering=0) as f:
            while f.read(16 << 20):
                pass


# ----------------------------------------------------------------------------------------
# Commands: add a row by appending to COMMANDS.


@dataclasses.dataclass
class Env:
    repo: Path
    shared: Path
    out: Path
    pisces: str  # the timed binary, as passed to subprocess (relative to repo when possible)
    pisces_alloc: Optional[str]  # the alloc-stats build, run untimed for the heap (None: read pisces's own stderr)
    pi: bool  # pi measurements enabled and installed
    pi_core_script: Optional[Path]
    args: argparse.Namespace


@dataclasses.dataclass
class Command:
    """One row per session file.

    argv(env, ds): the command, run with cwd = the repo root, stdout to /dev/null.
    skip(env, ds): None to run it on this file, else the reason it does not.
    runs(env): how many timed runs (after one untimed warm-up).
    parse_stderr(text): per-run metrics read from its stderr (medians are reported).
    heap: run it HEAP_RUNS more times with argv[0] = the alloc-stats build (untimed) and
        report the peak heap it prints (`pisces-alloc: peak=... total=...`).
    messages(stdout, stderr): the number of context messages it found, read from the output
        of its warm-up run; compared with gen-session.py's count of pi's buildSessionContext
        messages so that a command that silently does nothing is not timed.
    """

    name: str
    argv: Callable[[Env, Dataset], list[str]]
    skip: Callable[[Env, Dataset], Optional[str]] = lambda env, ds: None
    runs: Callable[[Env], int] = lambda env: env.args.runs
    parse_stderr: Optional[Callable[[str], dict]] = None
    heap: bool = False
    messages: Optional[Callable[[bytes, str], int]] = None
    ok_codes: tuple = (0,)  # exit statuses that are success (`diff` exits 1 on differences)
    output: bool = False  # record the size of its warm-up run's stdout (bytes, lines)


def parse_alloc(text: str) -> dict:
    m = None
    for m in ALLOC_LINE.finditer(text):
        pass
    return {"heap_peak": int(m.group(1)), "heap_total": int(m.group(2))} if m else {}


def parse_pi_core(text: str) -> dict:
    for line in reversed(text.splitlines()):
        if line.startswith("pi-core: "):
            return json.loads(line[len("pi-core: "):])
    return {}


def json_messages(stdout: bytes, stderr: str) -> int:
    return len(json.loads(stdout)["messages"])


def first_leaf(env: Env, ds: Dataset) -> str:
    """The first leaf of the file (in file order), found with `pisces leaves` once."""
    if "first_leaf" not in ds.meta:
        out = subprocess.run([env.pisces, "leaves", rel(ds.path), "--format", "json"], capture_output=True, check=True, cwd=env.repo)
        leaves = json.loads(out.stdout)["leaves"]
        ds.meta["first_leaf"] = min(leaves, key=lambda l: l["line"])["id"]
    return ds.meta["first_leaf"]


def only_diff(env: Env, ds: Dataset) -> Optional[str]:
    return None if ds.spec == "diff" else "the diff file only"


def not_diff(env: Env, ds: Dataset) -> Optional[str]:
    return "not on the diff file" if ds.spec == "diff" else None


def only_claude(env: Env, ds: Dataset) -> Optional[str]:
    return None if ds.agent == "claude" else "the Claude Code file only"


def only_codex(env: Env, ds: Dataset) -> Optional[str]:
    return None if ds.agent == "codex" else "the Codex store only"


def session_file(ds: Dataset) -> str:
    """The file `path` reads: the session, or in the Codex store the fork with the longest
    history (which reads its ancestors' files up to its fork points)."""
    return rel(Path(ds.meta["summary"]["deep_fork"])) if ds.agent == "codex" else rel(ds.path)


def tree_file(ds: Dataset) -> str:
    """The file `tree` draws: the session, or the Codex store's thread (with all its forks)."""
    return rel(Path(ds.meta["summary"]["root"])) if ds.agent == "codex" else rel(ds.path)


def wc_files(ds: Dataset) -> list[str]:
    """What `wc -l` reads beside `pisces path`: the session, or the files the fork's path reads."""
    if ds.agent == "codex":
        return [rel(Path(p)) for p in ds.meta["summary"]["deep_fork_reads"]]
    return [rel(ds.path)]


def no_pi(env: Env, ds: Dataset) -> Optional[str]:
    if ds.agent in ("claude", "codex"):
        return "pi does not read Claude Code or Codex files"
    if ds.spec == "diff":
        return "not on the diff file"
    if not env.pi:
        return "--no-pi"
    if ds.bytes > PI_MAX_BYTES:
        return "pi cannot load a file this large (it reads it into one JS string: ERR_STRING_TOO_LONG)"
    return None


# Every pisces row reads its file whole (`--no-cache`): these rows measure reading a session,
# not the kept index that a second read of a large session uses (bench/kept.py measures that).
COMMANDS: list[Command] = [
    Command("pisces path", lambda env, ds: [env.pisces, "--no-cache", "path", session_file(ds), "@", "--format", "json"], heap=True, messages=json_messages, skip=not_diff),
    Command("wc -l", lambda env, ds: ["wc", "-l", *wc_files(ds)]),
    # pi's SessionManager load + buildSessionContext + convertToLlm, as the oracle runs it
    # (it also copies the file to a temp dir and reads/parses it once more for line numbers).
    Command(
        "pi context.mjs",
        # realpath: the oracle's scripts only run main() when argv[1] is their real path
        lambda env, ds: ["node", rel(Path(os.path.realpath(env.shared / "pi-oracle" / "context.mjs"))), rel(ds.path)],
        skip=no_pi,
        runs=lambda env: env.args.pi_runs,
        messages=json_messages,
    ),
    # Only pi's own work, timed inside node: SessionManager.open + buildSessionContext +
    # JSON.stringify(messages) (what `pisces path --format json` does); see PI_CORE_JS.
    Command(
        "pi core (in-process)",
        lambda env, ds: ["node", rel(env.pi_core_script), rel(ds.path)],
        skip=no_pi,
        runs=lambda env: env.args.pi_runs,
        parse_stderr=parse_pi_core,
        messages=lambda stdout, stderr: parse_pi_core(stderr)["messages"],
    ),
    # The whole tree as pi's /tree draws it (deep gutters folded into `│×N`), to /dev/null...
    Command("pisces tree", lambda env, ds: [env.pisces, "--no-cache", "tree", tree_file(ds)], heap=True, skip=not_diff, output=True),
    # ...and through a pipe, as a user runs `pisces tree FILE | less` (the target: ≤ 1.0 s at 1 GB).
    Command("pisces tree | cat", lambda env, ds: ["sh", "-c", '"$0" --no-cache tree "$1" | cat >/dev/null', env.pisces, tree_file(ds)], skip=not_diff),
    # Every file of the Codex family, which its tree reads (the target: tree ≤ 3× this).
    Command("wc -l (family)", lambda env, ds: ["wc", "-l", *[rel(Path(p)) for p in ds.meta["summary"]["files"]]], skip=only_codex),
    # Every branch tip of the Claude Code file, with its tokens and cost (the target: ≤ 4× wc -l).
    Command("pisces leaves", lambda env, ds: [env.pisces, "--no-cache", "leaves", rel(ds.path)], heap=True, skip=only_claude),
    # Two ~52,000-entry paths: the file's first leaf against pi's current leaf.
    Command("pisces diff --stat", lambda env, ds: [env.pisces, "--no-cache", "diff", rel(ds.path), first_leaf(env, ds), "@", "--stat"], skip=only_diff, ok_codes=(0, 1)),
    Command("pisces diff (text)", lambda env, ds: [env.pisces, "--no-cache", "diff", rel(ds.path), first_leaf(env, ds), "@"], skip=only_diff, ok_codes=(0, 1)),
]

SUBJECT = "pisces path"  # the row whose heap and ratios the targets check

# pi-core timing script, written to --out: imports pi through the oracle's lib/pi.mjs
# (same pinned pi 1.6.0, same Node re-exec) and times its phases with performance.now().
PI_CORE_JS = r"""// Generated by bench/run.py: times pi's own phases for `pisces path`'s job.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNode, loadPi } from "__PI_MJS__";
ensureNode(); // pi 1.6.0 needs Node >= 22.19: re-executes this script under it if needed
const file = process.argv[2];
const t0 = performance.now();
const pi = await loadPi();
const t1 = performance.now();
// pi may rewrite a file it opens (migration, a missing final newline): open a copy.
const dir = mkdtempSync(join(tmpdir(), "pisces-bench-pi-"));
try {
	const copy = join(dir, "session.jsonl");
	copyFileSync(file, copy);
	const t2 = performance.now();
	const sm = pi.index.SessionManager.open(copy, join(dir, "sessions"));
	const t3 = performance.now();
	const ctx = sm.buildSessionContext();
	const t4 = performance.now();
	const json = JSON.stringify({ leafId: sm.getLeafId(), messages: ctx.messages });
	const t5 = performance.now();
	const ms = (x) => Math.round(x * 10) / 10;
	process.stderr.write(`pi-core: ${JSON.stringify({ import_ms: ms(t1 - t0), open_ms: ms(t3 - t2), build_ms: ms(t4 - t3), stringify_ms: ms(t5 - t4), core_ms: ms(t5 - t2), messages: ctx.messages.length, json_bytes: json.length })}\n`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
"""


# ----------------------------------------------------------------------------------------
# Targets


@dataclasses.dataclass
class Check:
    target: str
    file: str
    measured: str
    required: str
    result: str  # PASS, FAIL, NOT MEASURED


def ratio_checks(results: dict, datasets: list[Dataset]) -> list[Check]:
    checks = []
    for ds in datasets:
        r = results[ds.spec]
        p, w, pi = r.get(SUBJECT), r.get("wc -l"), r.get("pi context.mjs")
        if p and w:
            q = p.median / w.median
            checks.append(Check("pisces path within 2× of wc -l", ds.spec, f"{q:.2f}× ({fmt_s(p.median)} / {fmt_s(w.median)})", "≤ 2×", ok(q <= 2)))
        if p and pi:
            q = pi.median / p.median
            checks.append(Check("pisces path ≥ 100× faster than pi", ds.spec, f"{q:.0f}× ({fmt_s(pi.median)} / {fmt_s(p.median)})", "≥ 100×", ok(q >= 100)))
        if p:
            peak = p.metric("heap_peak", max)
            if peak is None:
                checks.append(Check("pisces heap ≤ 10% of file", ds.spec, "no `pisces-alloc:` line (build without alloc-stats)", "≤ 10 %", "NOT MEASURED"))
            else:
                pct = 100 * peak / ds.bytes
                checks.append(Check("pisces heap ≤ 10% of file", ds.spec, f"{fmt_mb(peak)} = {pct:.1f} %", "≤ 10 %", ok(pct <= 10)))
        t, wf = r.get("pisces tree"), r.get("wc -l (family)")
        if t and wf:
            q = t.median / wf.median
            checks.append(Check("pisces tree of a fork family within 3× of wc -l over its files", ds.spec, f"{q:.2f}× ({fmt_s(t.median)} / {fmt_s(wf.median)})", "≤ 3×", ok(q <= 3)))
        lv = r.get("pisces leaves")
        if lv and w:
            q = lv.median / w.median
            checks.append(Check("pisces leaves within 4× of wc -l", ds.spec, f"{q:.2f}× ({fmt_s(lv.median)} / {fmt_s(w.median)})", "≤ 4×", ok(q <= 4)))
        t, tc = r.get("pisces tree"), r.get("pisces tree | cat")
        if t and t.out_lines:
            per = t.out_bytes / t.out_lines
            checks.append(Check("pisces tree ≤ 200 bytes per row", ds.spec, f"{per:.0f} B ({t.out_bytes:,} B / {t.out_lines:,} rows)", "≤ 200 B", ok(per <= 200)))
        if tc and ds.bytes >= 500e6:
            checks.append(Check("pisces tree | cat ≤ 1.0 s", ds.spec, f"{fmt_s(tc.median)} (`wc -l`: {fmt_s(w.median) if w else '?'})", "≤ 1.0 s", ok(tc.median <= 1.0)))
        if t and ds.bytes >= 500e6:
            peak = t.metric("heap_peak", max)
            if peak is not None:
                pct = 100 * peak / ds.bytes
                checks.append(Check("pisces tree heap ≤ 10% of file", ds.spec, f"{fmt_mb(peak)} = {pct:.1f} %", "≤ 10 %", ok(pct <= 10)))
    return checks


GROWTH_TOLERANCE = 1.15  # n log n from 100 MB to 1 GB would already be ~1.2


def growth_pairs(datasets: list[Dataset]) -> list[tuple[Dataset, Dataset]]:
    """Same shape, growing size (file-size growth); same size, branching vs linear (path-length growth)."""
    pairs = []
    datasets = [d for d in datasets if d.spec != "diff" and d.agent == "pi"]  # other shapes
    for linear in (False, True):
        same_shape = sorted((d for d in datasets if d.linear == linear), key=lambda d: d.bytes)
        pairs += list(zip(same_shape, same_shape[1:]))
    for d in datasets:
        if not d.linear:
            for e in datasets:
                if e.linear and e.entries == d.entries:
                    pairs.append((d, e))
    return pairs


def growth_rows(results: dict, datasets: list[Dataset]) -> tuple[list[list[str]], list[Check]]:
    rows, checks = [], []
    for a, b in growth_pairs(datasets):
        pa, pb = results[a.spec].get(SUBJECT), results[b.spec].get(SUBJECT)
        if not (pa and pb):
            continue
        size_x, path_x = b.bytes / a.bytes, b.path_len / a.path_len
        bound = max(size_x, path_x)
        wall_x = pb.median / pa.median
        cpu_x = pb.cpu_median / pa.cpu_median
        ha, hb = pa.metric("heap_peak", max), pb.metric("heap_peak", max)
        heap_x = hb / ha if ha and hb else None
        good = cpu_x <= GROWTH_TOLERANCE * bound and (heap_x is None or heap_x <= GROWTH_TOLERANCE * bound)
        what = "file size" if a.linear == b.linear else "path length"
        heap = f"{heap_x:.2f}×" if heap_x else "n/a"
        rows.append([f"{a.spec} → {b.spec}", what, f"{size_x:.2f}×", f"{path_x:.2f}×", f"{wall_x:.2f}×", f"{cpu_x:.2f}×", heap, ok(good)])
        checks.append(Check(f"growth linear in {what}", f"{a.spec} → {b.spec}", f"CPU time {cpu_x:.2f}×, heap {heap} (wall {wall_x:.2f}×)",
                            f"≤ {GROWTH_TOLERANCE} × {bound:.2f}", ok(good)))
    return rows, checks


def ok(b: bool) -> str:
    return "PASS" if b else "FAIL"


# ----------------------------------------------------------------------------------------
# Running


@dataclasses.dataclass
class Series:
    command: Command
    argv: list[str]
    times: list[float] = dataclasses.field(default_factory=list)
    cpu: list[float] = dataclasses.field(default_factory=list)
    rss_kb: list[int] = dataclasses.field(default_factory=list)
    metrics: list[dict] = dataclasses.field(default_factory=list)  # from parse_stderr and the heap runs
    heap_argv: Optional[list[str]] = None
    messages: Optional[int] = None  # context messages its warm-up run found
    out_bytes: Optional[int] = None  # stdout of its warm-up run (Command.output)
    out_lines: Optional[int] = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    def metric(self, key: str, agg=statistics.median):
        vals = [m[key] for m in self.metrics if key in m]
        return agg(vals) if vals else None


def run_once(argv: list[str], cwd: Path, stdout=subprocess.DEVNULL, ok_codes: tuple = (0,)) -> tuple[float, float, int, str]:
    """Runs argv; returns (wall seconds, CPU seconds (user + system), max RSS in KiB, stderr),
    CPU and RSS of the process and its descendants."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    if p.returncode not in ok_codes:
        raise SystemExit(f"bench: `{shlex.join(argv)}` exited with {p.returncode}:\n{text[-4000:]}")
    return dt, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, text


def prepare(env: Env, ds: Dataset) -> dict[str, Series]:
    """The commands for one file, each run once untimed (page cache of the binaries, node's
    module files), which also checks its answer: the number of messages pi's
    buildSessionContext returns at the leaf; then the heap runs of the alloc-stats build."""
    series = {}
    for c in COMMANDS:
        why = c.skip(env, ds)
        if why:
            log(f"{ds.spec}: skip {c.name}: {why}")
            continue
        s = series[c.name] = Series(c, c.argv(env, ds))
        if c.heap and env.pisces_alloc:
            s.heap_argv = [env.pisces_alloc, *s.argv[1:]]
    want = ds.meta["summary"].get("context_messages")
    for s in series.values():
        if s.command.output:
            with tempfile.TemporaryFile() as out:
                run_once(s.argv, env.repo, stdout=out, ok_codes=s.command.ok_codes)
                out.seek(0)
                s.out_bytes, s.out_lines = 0, 0
                while chunk := out.read(1 << 20):
                    s.out_bytes += len(chunk)
                    s.out_lines += chunk.count(b"\n")
            continue
        if not s.command.messages:
            run_once(s.argv, env.repo, ok_codes=s.command.ok_codes)
            continue
        with tempfile.TemporaryFile() as out:
            _, _, _, err = run_once(s.argv, env.repo, stdout=out)
            out.seek(0)
            try:
                got = s.command.messages(out.read(), err)
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f"bench: `{display(s.argv)}` printed no context ({type(e).__name__}: {e}); stderr:\n{err[-2000:]}")
        s.messages = got
        if want is not None and got != want:
            log(f"{ds.spec}: WARNING: {s.command.name} found {got} messages, gen-session.py says pi's buildSessionContext returns {want}")
    for s in series.values():
        if s.command.heap and s.heap_argv:
            for _ in range(HEAP_RUNS):
                s.metrics.append(parse_alloc(run_once(s.heap_argv, env.repo, ok_codes=s.command.ok_codes)[3]))
            if not s.metrics[-1]:
                log(f"{ds.spec}: WARNING: {s.heap_argv[0]} printed no `pisces-alloc:` line")
    return series


def measure(env: Env, datasets: list[Dataset]) -> dict[str, dict[str, Series]]:
    """Times every command on every file, interleaved round-robin over files and commands, so
    that a slow period of the machine is spread over all rows instead of hitting one."""
    for ds in datasets:
        log(f"{ds.spec}: warming the page cache")
        warm_page_cache(ds.path)
    results = {ds.spec: prepare(env, ds) for ds in datasets}
    todo = [(ds, s) for ds in datasets for s in results[ds.spec].values()]
    rounds = max((s.command.runs(env) for _, s in todo), default=0)
    for i in range(rounds):
        done = []
        for ds, s in todo:
            if i >= s.command.runs(env):
                continue
            dt, cpu, rss, err = run_once(s.argv, env.repo, ok_codes=s.command.ok_codes)
            s.times.append(dt)
            s.cpu.append(cpu)
            s.rss_kb.append(rss)
            if s.command.parse_stderr:
                s.metrics.append(s.command.parse_stderr(err))
            if s.command.heap and not s.heap_argv:
                s.metrics.append(parse_alloc(err))
            done.append(f"{ds.spec} {s.command.name} {fmt_s(dt)}")
        log(f"round {i + 1}/{rounds}: " + ", ".join(done))
    return results


# ----------------------------------------------------------------------------------------
# Report


def fmt_s(x: float) -> str:
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def fmt_x(q: float) -> str:
    return f"{q:.2f}×" if q < 10 else f"{q:.0f}×"


def fmt_mb(b: float) -> str:
    return f"{b / 1e6:,.1f} MB"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    # A `|` inside a cell (`pisces tree | cat`) would end the cell.
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def medians_table(times: dict, fmt: Callable[[float], str]) -> str:
    """Each command's median (bold) and every run, for the scripts that time commands in
    rounds (store.py, kept.py)."""
    return table(["command", "median", "runs"],
                 [[k, f"**{fmt(statistics.median(v))}**", ", ".join(fmt(x) for x in v)] for k, v in times.items()])


def display(argv: list[str]) -> str:
    return shlex.join(argv) + " >/dev/null"


INTRO = """\
# Benchmarks

`python3 bench/run.py` (see [bench/README.md](bench/README.md)) measures `pisces path FILE @
--format json` on generated pi sessions of about 100 MB and 1 GB against two references on
the same file:

* `wc -l FILE`, the floor for anything that reads every line of the file;
* pi itself: `node ../shared/pi-oracle/context.mjs FILE` loads the file with pi 1.6.0's
  `SessionManager` and runs `buildSessionContext` + `convertToLlm` (the oracle also copies the
  file to a temp dir and parses it a second time for line numbers, and prints its JSON with
  indentation), and "pi core" times, inside node, only `SessionManager.open` +
  `buildSessionContext` + `JSON.stringify(messages)` (pi's share of the command's wall clock,
  without Node start-up and module loading). pi cannot load the 1 GB file (it reads it into one
  JS string).

Files come from `python3 ../shared/bench/gen-session.py` (deterministic: same arguments, same
bytes) and are cached in `target/bench/`. A linear 100 MB file (`--branch-every 0`, its leaf's
path is every entry) next to the branching one (path ≈ half the entries) shows growth in path
length at equal file size; 100 MB → 1 GB shows growth in file size.

Method: the page cache is warmed (each file is read once; they all fit in RAM), every command
runs once untimed (its output is checked: it must find the context messages pi finds), then all
commands on all files run interleaved round-robin (pisces, wc, pi on 100 MB, the same on the
linear file, pisces and wc on 1 GB, then again), each process timed with `time.perf_counter()`
(wall clock) and `wait4` (CPU time, max RSS), stdout to `/dev/null`. The machine is small (2
cores) and shared with other work, so timings are noisy: interleaving spreads a slow period over
all rows instead of one, and only medians are compared. pisces scans on two threads and `wc` on
one, so other load slows pisces more than `wc`. The timed pisces is a plain `cargo build
--release`. The heap is measured in separate untimed runs of a build with `--features
alloc-stats` (src/alloc_stats.rs: a counting global allocator, a few % slower), which prints
the peak of live heap bytes at exit; the memory-mapped session file is not heap. Max RSS is shown
for information only: it includes the pages of the mapped file that were touched.

Targets (from the issue): `pisces path` within 2× of `wc -l` at both sizes, at least 100× faster
than pi at 100 MB (`pi context.mjs`), peak heap at most 10 % of the file size, and growth linear
in file size and in path length. For growth, from one file to the next pisces's median CPU time
and peak heap may grow by at most 1.15× the larger of the file-size ratio and the path-length
ratio (n log n over 10× would be ~1.2×); CPU time rather than wall clock because other load on the
machine stretches the wall clock of one run more than another but adds little CPU time (the
wall-clock growth is shown too).

`pisces tree FILE` is timed twice, to /dev/null and through a pipe into `cat` (what a user
piping it into `less` or `grep` waits for), beside `wc -l` on the same file; its warm-up run's
output is counted (bytes per row). Its targets: at most 200 bytes per row on average, `tree |
cat` within 1.0 s and a peak heap of at most 10 % of the file on the 1 GB file.
"""


def report(env: Env, datasets: list[Dataset], results: dict, info: dict) -> str:
    out = [INTRO, f"## Results ({info['date']})", ""]
    out.append(f"Commit {info['commit']}. pisces: `{env.pisces}`, {info['build']}. Run as `{info['argv']}`.")
    out.append("")
    if env.args.note:
        out.append(f"Note: {env.args.note}")
        out.append("")
    out.append(f"Machine: {info['nproc']} CPUs (`nproc`), {info['cpu']}, {info['mem']} RAM, Linux {info['kernel']}, "
               f"load average {info['load']} at start; {info['versions']}.")
    out.append("")

    out.append("### Session files")
    out.append("")
    rows = []
    for ds in datasets:
        s = ds.meta["summary"]
        rows.append([ds.spec, f"{ds.bytes:,}", f"{s['entries']:,}", f"{s.get('forks', 0):,}", f"{s.get('compactions', 0):,}",
                     f"{s['path_len']:,}", str(s.get('context_messages', '?')),
                     f"`python3 {rel({'claude': CLAUDE_GEN, 'codex': CODEX_GEN}.get(ds.agent, env.shared / 'bench' / 'gen-session.py'))} {' '.join(ds.gen_args())} --out {rel(ds.path)}`"])
    out.append(table(["file", "bytes", "entries", "forks", "compactions", "path length", "context messages", "generated by"], rows))
    out.append("")
    out.append("`path length` = entries from the root to the last entry (pi's default leaf, `@`); context messages = what "
               "pi's buildSessionContext returns there, according to gen-session.py. Each command's warm-up run is checked "
               "to find that many (column `msgs` below).")
    out.append("")

    out.append("### Times")
    out.append("")
    rows = []
    for ds in datasets:
        for name, s in results[ds.spec].items():
            notes = []
            peak = s.metric("heap_peak", max)
            if peak is not None:
                notes.append(f"heap peak {fmt_mb(peak)} ({100 * peak / ds.bytes:.1f} % of file), {fmt_mb(s.metric('heap_total', max))} allocated in all")
            if s.out_lines:
                notes.append(f"stdout {s.out_bytes:,} B in {s.out_lines:,} lines ({s.out_bytes / s.out_lines:.0f} B a line)")
            if s.metric("core_ms") is not None:
                notes.append("medians inside node: " + ", ".join(f"{k[:-3]} {fmt_s(s.metric(k) / 1000)}" for k in ("import_ms", "open_ms", "build_ms", "stringify_ms", "core_ms")))
            rows.append([ds.spec, name, len(s.times), fmt_s(min(s.times)), f"**{fmt_s(s.median)}**", fmt_s(max(s.times)),
                         fmt_s(s.cpu_median), f"{max(s.rss_kb) / 1024:,.0f} MiB", "" if s.messages is None else s.messages,
                         "; ".join(notes)])
    out.append(table(["file", "command", "runs", "min", "median", "max", "CPU²", "max RSS¹", "msgs", "notes"], rows))
    out.append("")
    out.append("min / median / max: wall clock. ¹ Max RSS of the process and its children, including the touched pages "
               "of the memory-mapped file: for information, not the heap target. ² Median CPU time (user + system, with "
               "children): less sensitive than the wall clock to other load. `core` = open + build + stringify.")
    out.append("")

    rows = []
    for ds in datasets:
        r = results[ds.spec]
        p = r.get(SUBJECT)
        if not p:
            continue
        for other, s in r.items():
            if other == SUBJECT:
                continue
            slow, fast = (p, s) if p.median >= s.median else (s, p)
            rows.append([ds.spec, f"{slow.command.name} / {fast.command.name}", fmt_x(slow.median / fast.median)])
        core = r.get("pi core (in-process)")
        if core and core.metric("core_ms") is not None:
            rows.append([ds.spec, f"pi core inside node (open + build + stringify) / {SUBJECT}", fmt_x(core.metric("core_ms") / 1000 / p.median)])
    out.append(table(["file", "ratio of medians", "ratio"], rows))
    out.append("")

    checks = ratio_checks(results, datasets)
    grows, gchecks = growth_rows(results, datasets)
    if grows:
        out.append("### Growth")
        out.append("")
        out.append(table(["files", "growth in", "file size", "path length", "pisces wall", "pisces CPU", "pisces heap",
                          f"CPU and heap ≤ {GROWTH_TOLERANCE} × max(size, path)"], grows))
        out.append("")
    checks += gchecks

    out.append("### Targets")
    out.append("")
    npass = sum(c.result == "PASS" for c in checks)
    out.append(table(["target", "file", "measured", "required", "result"], [[c.target, c.file, c.measured, c.required, f"**{c.result}**"] for c in checks]))
    out.append("")
    out.append(f"{npass} of {len(checks)} checks pass.")
    out.append("")
    scale = []
    for ds in datasets:
        r = results[ds.spec]
        if "pi context.mjs" in r and "wc -l" in r:
            scale.append(f"{ds.spec}: {fmt_x(r['pi context.mjs'].median / r['wc -l'].median)}")
    if scale:
        out.append(f"For scale, `pi context.mjs` / `wc -l` ({', '.join(scale)}) is the ratio pisces would reach if it ran "
                   "as fast as `wc -l`.")
        out.append("")

    out.append("### Commands")
    out.append("")
    out.append("Run from the repository root (`wc` is " + info["wc"] + "):")
    out.append("")
    out.append("```sh")
    for ds in datasets:
        out.append(f"# {ds.spec}")
        for s in results[ds.spec].values():
            out.append(display(s.argv))
    out.append("```")
    out.append("")
    if env.pi:
        out.append(f"`{rel(env.pi_core_script)}` is written by bench/run.py (`PI_CORE_JS`); it imports pi through "
                   "the oracle's `lib/pi.mjs` and prints its phase times to stderr.")
        out.append("")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------
# Setup


def replace_section(path: Path, title: str, text: str) -> None:
    """Replaces the `title` section (from its heading to the next `## `) of the Markdown
    file at `path` with `text`, or adds it at the end."""
    doc = path.read_text() if path.exists() else ""
    start = doc.find(title)
    if start >= 0:
        end = doc.find("\n## ", start + 1)
        # A blank line before the next section, however `text` ends.
        doc = doc[:start] + (text.rstrip("\n") + "\n\n" + doc[end + 1:] if end >= 0 else text)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    path.write_text(doc)


def write_report(path: Path, text: str) -> None:
    """Writes run.py's part of the report (the top of the file, to the end of its "## Results"
    section) and keeps the sections the other scripts write after it (hostile.py's,
    export.py's, store.py's, kept.py's)."""
    doc = path.read_text() if path.exists() else ""
    start = doc.find("## Results")
    end = doc.find("\n## ", start + 1) if start >= 0 else -1
    rest = doc[end + 1:] if end >= 0 else ""
    path.write_text(text.rstrip("\n") + "\n\n" + rest if rest else text)


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def rel(p: Path) -> str:
    """p relative to the repo root (the commands' cwd) when that is short, else absolute."""
    p = Path(os.path.abspath(p))  # not resolve(): keep symlinked paths as given
    r = os.path.relpath(p, REPO)
    return r if not r.startswith("../../") else str(p)


def capture(argv: list[str], cwd: Path = REPO) -> str:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def cargo_build(features: list[str]) -> tuple[Optional[Path], str]:
    """Runs cargo build --release [features]; returns (the pisces executable, stderr)."""
    argv = ["cargo", "build", "--release", *features]
    log(f"building: {shlex.join(argv)}")
    r = subprocess.run([*argv, "--message-format=json-render-diagnostics"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None, r.stderr
    exe = None
    for line in r.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "pisces":
            exe = Path(msg["executable"])
    if exe is None:
        raise SystemExit(f"bench: {shlex.join(argv)} built no pisces executable")
    return exe, r.stderr


def build_pisces(out: Path) -> tuple[str, Optional[str], str]:
    """Builds the alloc-stats binary (copied to OUT/pisces-alloc-stats: it only reports the
    heap, since counting costs a few % of time) and then the plain release binary, the one
    timed. Returns (timed binary, alloc-stats binary or None, description)."""
    alloc = None
    exe, err = cargo_build(["--features", "alloc-stats"])
    if exe is None:
        if "contain this feature" not in err and "contains these features" not in err:
            raise SystemExit(f"bench: cargo build --release --features alloc-stats failed:\n{err[-4000:]}")
        log("WARNING: this crate has no `alloc-stats` feature (see bench/README.md): the heap is not measured")
    else:
        copy = out / "pisces-alloc-stats"
        shutil.copy2(exe, copy)
        alloc = rel(copy)
    exe, err = cargo_build([])
    if exe is None:
        raise SystemExit(f"bench: cargo build --release failed:\n{err[-4000:]}")
    what = "built with `cargo build --release` (timed)"
    if alloc:
        what += "; heap from `cargo build --release --features alloc-stats`, copied to `" + alloc + "` and run untimed"
    return rel(exe), alloc, what


def ensure_pi(shared: Path) -> bool:
    if shutil.which("node") is None:
        raise SystemExit("bench: node (>= 20) is needed for the pi measurement (or pass --no-pi)")
    home = Path(os.environ.get("PI_ORACLE_HOME") or Path.home() / ".cache" / "pi-oracle")
    if not (home / "pi-1.6.0" / ".pi-oracle-stamp").exists():
        argv = ["bash", str(shared / "pi-oracle" / "install.sh"), "1.6.0"]
        log(f"installing pi for the oracle: {shlex.join(argv)}")
        if subprocess.run(argv).returncode != 0:
            raise SystemExit("bench: pi-oracle install.sh failed (needs npm and the registry; or pass --no-pi)")
    return True


def without_note(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--note":
            skip = True
        elif not a.startswith("--note="):
            out.append(a)
    return out


def machine_info(env: Env, argv: list[str], build: str) -> dict:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, AttributeError):
        pass
    commit = f"`{capture(['git', 'rev-parse', '--short', 'HEAD']) or 'unknown'}`"
    if capture(["git", "status", "--porcelain", "--untracked-files=no"]):
        commit += " (with uncommitted changes to tracked files)"
    versions = [capture(["rustc", "--version"]), "python " + platform.python_version()]
    if env.pi:
        versions.append("node " + capture(["node", "--version"]) + " (pi 1.6.0 runs under the oracle's Node 22)")
    return {
        "date": "started " + datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "build": build,
        "argv": shlex.join(["python3", "bench/run.py", *without_note(argv)]) + (" --note …" if env.args.note else ""),
        "nproc": capture(["nproc"]) or str(os.cpu_count()),
        "cpu": cpu,
        "mem": mem,
        "kernel": platform.release(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": ", ".join(v for v in versions if v),
        "wc": capture(["wc", "--version"]).splitlines()[0] if capture(["wc", "--version"]) else "wc",
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See bench/README.md.")
    ap.add_argument("--sizes", default="100m,100m-linear,1g,diff,claude,codex", help="files to measure: <N>m (N*550 entries, ~N MB), <N>g, with -linear for a single chain, diff (two ~52,000-entry branches), claude (a ~100 MB Claude Code session), codex (a ~100 MB Codex thread and 50 forks) (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs per command (default: %(default)s)")
    ap.add_argument("--pi-runs", type=int, default=3, help="timed runs of the pi commands, which take seconds (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="gen-session.py seed (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=REPO / "target" / "bench", help="where session files are generated and cached (default: target/bench)")
    ap.add_argument("--pisces", help="pisces binary to time, and to read the heap from if it prints `pisces-alloc:` "
                    "(default: time `cargo build --release`, heap from a `--features alloc-stats` build)")
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ directory with bench/gen-session.py and pi-oracle/ (default: ../shared)")
    ap.add_argument("--no-pi", action="store_true", help="skip the pi measurements")
    ap.add_argument("--write", type=Path, default=REPO / "BENCHMARKS.md", help="Markdown report to write (default: BENCHMARKS.md)")
    ap.add_argument("--no-write", action="store_true", help="only print the report")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target fails")
    ap.add_argument("--note", help="a sentence to add to the report (what was measured, if not just the commit)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.pi_runs < 1:
        ap.error("--runs and --pi-runs must be at least 1")

    shared = Path(os.path.abspath(args.shared))
    gen = shared / "bench" / "gen-session.py"
    if not gen.is_file():
        raise SystemExit(f"bench: {gen} not found: the shared/ directory (gen-session.py, pi-oracle) must sit next to the repository, or pass --shared DIR")
    if not args.no_pi and not (shared / "pi-oracle" / "context.mjs").is_file():
        raise SystemExit(f"bench: {shared / 'pi-oracle' / 'context.mjs'} not found (pass --shared DIR, or --no-pi)")
    datasets = [parse_size(s, args.seed) for s in args.sizes.split(",") if s.strip()]
    if len({d.spec for d in datasets}) != len(datasets):
        ap.error("--sizes names a file twice")
    out = Path(os.path.abspath(args.out))
    out.mkdir(parents=True, exist_ok=True)

    pisces_alloc = None
    if args.pisces:
        pisces, build = args.pisces, "given with `--pisces` (heap read from its own stderr, if it prints `pisces-alloc:`)"
        if not (shutil.which(pisces) or Path(pisces).is_file()):
            raise SystemExit(f"bench: --pisces {pisces}: not found")
        if Path(pisces).is_file():
            pisces = rel(Path(pisces))
    else:
        pisces, pisces_alloc, build = build_pisces(out)
    pi = False if args.no_pi else ensure_pi(shared)
    pi_core = None
    if pi:
        pi_core = out / "pi-core.mjs"
        pi_core.write_text(PI_CORE_JS.replace("__PI_MJS__", (shared / "pi-oracle" / "lib" / "pi.mjs").as_uri()))
    env = Env(repo=REPO, shared=shared, out=out, pisces=pisces, pisces_alloc=pisces_alloc, pi=pi, pi_core_script=pi_core, args=args)
    info = machine_info(env, argv, build)

    for ds in datasets:
        ensure_dataset(ds, out, gen)
    results = measure(env, datasets)

    text = report(env, datasets, results, info)
    print(text)
    if not args.no_write:
        write_report(args.write, text)
        log(f"wrote {rel(args.write)}")
    failed = any(c.result == "FAIL" for c in ratio_checks(results, datasets) + growth_rows(results, datasets)[1])
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
