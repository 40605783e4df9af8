#!/usr/bin/env python3
"""The pages of `pisces export --html` on the benchmark sessions: how long the export takes,
how large the page is, and how long Chromium takes to make it usable.

    python3 bench/export.py [--runs 3] [--write BENCHMARKS.md]

For each session (the ~100 MB Claude Code file and the ~100 MB pi files of bench/run.py,
generated the same way): the export's wall time (median of --runs), the page's size, and,
in headless Chromium (tests/browser/export_page.py's driver), the time from navigation to
the page being ready (its tree and the default leaf's first messages drawn; the page notes
it as `data-ready-ms`, read from `performance.now()`), median of --runs loads, and the time
to scroll the tree by 50 screens. The target: ready in under 3 s. Prints a Markdown section
(and with --write replaces the `## Export` section of that file).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
spec = importlib.util.spec_from_file_location("bench_run", HERE / "run.py")
run = importlib.util.module_from_spec(spec)
sys.modules["bench_run"] = run
assert spec.loader is not None
spec.loader.exec_module(run)
sys.path.insert(0, str(REPO / "tests" / "browser"))
import export_page  # noqa: E402  (the browser tests' WebDriver client)

TARGET_S = 3.0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "target" / "bench")
    ap.add_argument("--sizes", default="claude,100m,100m-linear")
    ap.add_argument("--write", type=Path)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    exe = run.cargo_build([])[0]
    if exe is None:
        raise SystemExit("bench: cargo build --release failed")
    shared = REPO.parent / "shared"
    chromium, driver = export_page.find("chromium", "chromium-browser"), export_page.find("chromedriver")
    if not chromium or not driver:
        raise SystemExit("bench: Chromium and chromedriver are needed (apt-get install chromium chromium-driver)")
    rows, fails = [], 0
    d = export_page.Driver(driver, chromium)
    try:
        for spec_ in a.sizes.split(","):
            ds = run.parse_size(spec_, 1)
            run.ensure_dataset(ds, a.out, shared / "bench" / "gen-session.py")
            page = (a.out / f"{Path(ds.path).stem}.html").resolve()
            times = []
            for _ in range(a.runs):
                t = time.perf_counter()
                subprocess.run([exe, "export", str(ds.path), "--html", "-o", str(page), "--force"], check=True,
                               stdout=subprocess.DEVNULL)
                times.append(time.perf_counter() - t)
            ready, scroll = [], []
            for _ in range(a.runs):
                d.cmd("POST", "/url", {"url": "about:blank"})
                d.go("file://" + str(page))
                ready.append(int(d.js("return document.body.dataset.readyMs")) / 1000)
                t = time.perf_counter()
                d.js("const t = document.getElementById('tree'); for (let i = 0; i < 50; i++) "
                     "{ t.scrollTop += t.clientHeight; t.dispatchEvent(new Event('scroll')); }")
                scroll.append(time.perf_counter() - t)
            leaves = d.js("return window.pisces.data.leaves.length")
            r = statistics.median(ready)
            met = r < TARGET_S
            fails += not met
            rows.append([f"`{spec_}` ({os.path.getsize(ds.path) / 1e6:.0f} MB, {leaves} leaves)",
                         f"{statistics.median(times):.2f} s", f"{page.stat().st_size / 1e6:.1f} MB",
                         f"{r:.2f} s", "yes" if met else "NO", f"{statistics.median(scroll) * 1000:.0f} ms"])
            run.log(f"{spec_}: {rows[-1]}")
    finally:
        d.quit()
    out = ["## Export", "",
           f"`python3 bench/export.py --runs {a.runs}` (bench/export.py): `pisces export --html` on the benchmark "
           "sessions; the page opened in headless Chromium, ready = its tree and the default leaf's first messages "
           f"drawn (median of {a.runs} loads; target under {TARGET_S:.0f} s); scroll = 50 screens of the tree. "
           f"Commit `{run.capture(['git', 'rev-parse', '--short', 'HEAD'])}`, "
           f"{run.capture(['date', '-u', '+%Y-%m-%d %H:%M UTC'])}, {os.cpu_count()} CPUs.", "",
           run.table(["session", "export", "page", "ready in Chromium", "under 3 s", "scroll"], rows), ""]
    text = "\n".join(out)
    print(text)
    if a.write:
        run.replace_section(a.write, "## Export", text)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
