"""Forks reopened by the real client: `pisces fork FILE UUID` at each entry, then
`claude -p PROBE --resume <new id>` on the fork; what it sends (less the probe's turn, as in
goldens.py) is written to testdata/claude-code-2.1.332/forks/<stem>.json as {uuid: messages}.
tests/cli/claude.rs checks that it is what the client sent resuming the source at UUID.

usage: python3 tools/claude-oracle/forkcheck.py FILE.jsonl...   (build target/debug/pisces first)
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import goldens  # noqa: E402
import oracle  # noqa: E402
import scenarios  # noqa: E402

PISCES = oracle.REPO / "target" / "debug" / "pisces"


def main(names):
    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(scenarios.SCRIPT))
    (oracle.OUT / "forks").mkdir(exist_ok=True)
    for name in names:
        f = Path(name).resolve()
        oracle.reset_scratch()
        scenarios.write_project()
        ns = oracle.Namespace(script)
        out = {}
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for k, u in enumerate(goldens.entries(f)):
                    fork = Path(tmp) / f"{k}.jsonl"
                    subprocess.run([str(PISCES), "fork", str(f), u, "-o", str(fork)], check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    g = goldens.one(ns, fork, None)
                    out[u] = g.get("messages", g)
                    oracle.log(f"{f.name}: fork {k + 1} at {u[:8]}: " + ("refused" if "refused" in g else "resumed"))
        finally:
            ns.close()
        dst = oracle.OUT / "forks" / f"{f.stem}.json"
        dst.write_text(json.dumps({"client": f"claude-code {oracle.VERSION}", "probe": goldens.PROBE_TEXT, "at": out},
                                  indent=1, ensure_ascii=False) + "\n")
        oracle.log(f"{f.name}: {dst.relative_to(oracle.REPO)}")


if __name__ == "__main__":
    main(sys.argv[1:])
