#!/usr/bin/env python3
"""Sessions crafted to be slow, each with a stated bound (issue: hostile input).

    python3 bench/hostile.py [--scales 0.1,1] [--runs 3] [--out target/bench/hostile] [--write BENCHMARKS.md]

Generates, deterministically:
  line-2g       one message whose text is one 2 GB line (`--scales` sets the sizes run);
  tiny-10m      10 million tiny entries, each the child of the one before (a 10M-deep chain);
  chain-100k    a 100,000-deep chain of user/assistant messages;
  siblings-100k 100,000 children of one entry;
  nested-100k   an entry holding JSON nested 100,000 levels deep (past any parser's limit);
and times `path`, `tree`, `leaves` and `grep` on each, beside `wc -l` on the same file in the
same run, plus `grep` with pathological regexes (nested quantifiers, which backtracking
engines take exponential time on; the regex crate is linear). Each row's bound is linear time:
a fixed cost plus a cost per byte and per line (FIXED_S, PER_BYTE_S, PER_LINE_S); the peak
heap, from the alloc-stats build (bench/run.py), must grow no faster than the file. Prints a Markdown section
(and with --write replaces the `## Hostile sessions` section of that file).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("bench_run", HERE / "run.py")
run = importlib.util.module_from_spec(spec)
sys.modules["bench_run"] = run  # its dataclasses look their module up
assert spec.loader is not None
spec.loader.exec_module(run)

HEADER = '{"type":"session","version":3,"id":"01a2b3c4-0000-7000-8000-00000000beef","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/home/dev/proj"}\n'
TS = "2026-11-01T10:00:00.000Z"


def msg(i: int, parent: int | None, role: str, text: str) -> str:
    p = "null" if parent is None else f'"{parent:08x}"'
    if role == "user":
        m = f'{{"role":"user","content":"{text}","timestamp":1}}'
    else:
        m = ('{"role":"assistant","content":[{"type":"text","text":"' + text + '"}],"api":"anthropic-messages",'
             '"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,'
             '"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},'
             '"stopReason":"stop","timestamp":1}')
    return f'{{"type":"message","id":"{i:08x}","parentId":{p},"timestamp":"{TS}","message":{m}}}\n'


def gen_line(path: Path, size: int) -> None:
    with path.open("w") as f:
        f.write(HEADER)
        f.write(msg(0, None, "user", "start"))
        head = f'{{"type":"message","id":"00000001","parentId":"00000000","timestamp":"{TS}","message":{{"role":"user","content":"'
        f.write(head)
        chunk = "abcdefgh" * (1 << 17)  # 1 MiB
        left = size
        while left > 0:
            f.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
        f.write('","timestamp":1}}\n')


def gen_tiny(path: Path, n: int) -> None:
    with path.open("w") as f:
        f.write(HEADER)
        buf = []
        for i in range(n):
            p = "null" if i == 0 else f'"{i - 1:08x}"'
            buf.append(f'{{"type":"custom","id":"{i:08x}","parentId":{p},"timestamp":"{TS}","customType":"t"}}\n')
            if len(buf) == 100_000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))


def gen_chain(path: Path, n: int) -> None:
    with path.open("w") as f:
        f.write(HEADER)
        for i in range(n):
            f.write(msg(i, None if i == 0 else i - 1, "user" if i % 2 == 0 else "assistant", f"turn {i}"))


def gen_siblings(path: Path, n: int) -> None:
    with path.open("w") as f:
        f.write(HEADER)
        f.write(msg(0, None, "user", "root"))
        for i in range(1, n + 1):
            f.write(msg(i, 0, "assistant", f"attempt {i}"))


def gen_nested(path: Path, depth: int) -> None:
    with path.open("w") as f:
        f.write(HEADER)
        f.write(msg(0, None, "user", "start"))
        f.write(f'{{"type":"custom","id":"00000001","parentId":"00000000","timestamp":"{TS}","customType":"deep","data":')
        f.write("[" * depth + "]" * depth)
        f.write("}\n")
        f.write(msg(2, 1, "user", "after"))


# name -> (generator, size argument at scale 1, what it is)
CASES = {
    "line-2g": (gen_line, 2 << 30, "one 2 GiB line"),
    "tiny-10m": (gen_tiny, 10_000_000, "10M tiny entries, a 10M-deep chain"),
    "chain-100k": (gen_chain, 100_000, "a 100,000-deep chain of messages"),
    "siblings-100k": (gen_siblings, 100_000, "100,000 children of one entry"),
    "nested-100k": (gen_nested, 100_000, "JSON nested 100,000 levels deep"),
}

# Pathological patterns for backtracking engines; linear for the regex crate.
REGEXES = [r"(a*)*b", r"(x+x+)+y", r"(a|aa)+$", r"(\w+\s?)+\d{40}"]

# The bound for every command on every case: linear time, stated as a fixed cost plus a
# cost per byte and per line (entry), so that a file crafted to be slow can only be as slow
# as its size: a long line costs its bytes, millions of tiny entries their number.
FIXED_S, PER_BYTE_S, PER_LINE_S = 0.2, 8e-9, 6e-6


def bound_of(bytes_: int, lines: int) -> float:
    return FIXED_S + PER_BYTE_S * bytes_ + PER_LINE_S * lines


def count_lines(path: Path) -> int:
    """Reads the file once (which also puts it in the page cache) and counts its lines."""
    n = 0
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(16 << 20):
            n += chunk.count(b"\n")
    return n


def commands(exe: str, f: str, case: str) -> list[tuple[str, list[str], tuple]]:
    out = [
        ("path", [exe, "path", f, "--format", "json"], (0,)),
        ("tree", [exe, "tree", f], (0,)),
        ("leaves", [exe, "leaves", f, "--format", "json"], (0,)),
        ("grep", [exe, "grep", "-c", "-F", "zzzz", f], (0, 1)),
    ]
    if case in ("line-2g", "chain-100k"):
        for r in REGEXES:
            out.append(("grep-regex", [exe, "grep", "-c", r, f], (0, 1)))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", default="0.1,1", help="sizes as fractions of the full cases, smallest first (heap growth is compared between them)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=run.REPO / "target" / "bench" / "hostile")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--write", type=Path)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    exe, alloc, what = run.build_pisces(a.out)
    scales = [float(x) for x in a.scales.split(",")]
    rows, fails, results = [], 0, {}
    for case in a.cases.split(","):
        gen, size, desc = CASES[case]
        for scale in scales:
            n = max(1, int(size * scale))
            f = a.out / f"{case}-{n}.jsonl"
            if not f.exists():
                run.log(f"generating {f.name}")
                tmp = f.with_suffix(".tmp")
                gen(tmp, n)
                os.replace(tmp, f)
            lines = count_lines(f)
            bytes_ = f.stat().st_size
            wc = statistics.median(run.run_once(["wc", "-l", str(f)], run.REPO)[0] for _ in range(a.runs))
            for k, (name, argv_, ok) in enumerate(commands(exe, str(f), case)):
                times, rss = [], []
                for _ in range(a.runs):
                    dt, _, r, _ = run.run_once(argv_, run.REPO, ok_codes=ok)
                    times.append(dt)
                    rss.append(r)
                peak = None
                if alloc:
                    m = run.parse_alloc(run.run_once([alloc, *argv_[1:]], run.REPO, ok_codes=ok)[3])
                    peak = m.get("heap_peak")
                med = statistics.median(times)
                bound = bound_of(bytes_, lines)
                met = med <= bound
                fails += not met
                growth = ""
                prev = results.get((case, k))
                if prev and peak and prev[1]:
                    size_x = bytes_ / prev[0]
                    heap_x = peak / prev[1]
                    linear = heap_x <= 1.15 * size_x
                    fails += not linear
                    growth = f"{heap_x:.1f}× for {size_x:.1f}× the bytes: {'linear' if linear else '**FASTER THAN THE FILE**'}"
                results[(case, k)] = (bytes_, peak)
                shown = " ".join(argv_[1:]).replace(str(f), f.name)
                heap = f"{run.fmt_mb(peak)} ({100 * peak / bytes_:.0f} %)" if peak else "?"
                rows.append([case, f"{bytes_:,} / {lines:,}", f"`pisces {shown}`", run.fmt_s(med), run.fmt_s(wc),
                             f"≤ {run.fmt_s(bound)}", "yes" if met else "**NO**", heap, growth, f"{max(rss) // 1024:,} MiB"])
                run.log(f"{case} {bytes_:,} {name}: {run.fmt_s(med)} (bound {run.fmt_s(bound)}) heap {heap} {growth}")
    out = ["## Hostile sessions", "",
           f"`python3 bench/hostile.py --scales {a.scales} --runs {a.runs}` (bench/hostile.py: what each file is, the bounds: "
           f"each command's median within {FIXED_S} s + {PER_BYTE_S * 1e9:.0f} ns per byte + {PER_LINE_S * 1e6:.0f} µs per line, "
           "linear time whatever the file is made of (`wc -l` on the same file for scale); the heap peak, from the "
           "alloc-stats build, growing no faster than the file from one size to the next, within 15 %). "
           f"pisces {what}. Commit `{run.capture(['git', 'rev-parse', '--short', 'HEAD'])}`, "
           f"{run.capture(['date', '-u', '+%Y-%m-%d %H:%M UTC'])}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at the end.",
           ""]
    tbl = run.table(["case", "bytes / lines", "command", "median", "wc -l", "bound", "met", "heap peak (% of file)", "heap growth", "max RSS"], rows)
    out += [tbl, "", f"{fails} bound{'s' if fails != 1 else ''} missed.", ""]
    text = "\n".join(out)
    print(text)
    if a.write:
        run.replace_section(a.write, "## Hostile sessions", text)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
