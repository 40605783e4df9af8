#!/usr/bin/env python3
"""forkcheck.py [NAME...]: does omp reopen pisces's forks with the context pisces meant?

For every file of testdata/omp-18.2.3 (files.json), `pisces fork FILE ID` at every message
entry (what omp's createBranchedSession writes) and `pisces fork FILE --all` (what omp's
fork() writes), each into a scratch copy of the fake home; then omp 18.2.3 reads each fork with
dump.ts (SessionManager.open + buildSessionContext at its default leaf). Records, per file,
testdata/omp-18.2.3/forks/NAME.json:

  {"name", "source", "forks": [{"rev": ID or null, "shape": "branch" | "whole",
     "slot": the fork's first line, "header": its header (parsed), "lines": the entry lines,
     "omp": {"sessionId", "title", "leafId", "header", "messages": omp's context at its
     default leaf}}]}

The test (tests/cli/omp.rs) checks that omp's context of each fork is pisces's context of the
source at REV, and that pisces still writes the same lines. Needs the omp install
(oracle.py install) and a built pisces (target/debug/pisces, or $PISCES).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle  # noqa: E402

PISCES = Path(os.environ.get("PISCES", oracle.REPO / "target" / "debug" / "pisces"))


def main(names):
    oracle.need_install()
    files = json.loads((oracle.OUT / "files.json").read_text())
    before = oracle.digest(oracle.OUT / "home")
    # The neutral home the corpus was written in, so that the forks' parentSession paths
    # read /home/dev/... as the corpus's do.
    scratch = oracle.HOME
    shutil.rmtree(scratch / ".omp", ignore_errors=True)
    shutil.copytree(oracle.OUT / "home" / ".omp", scratch / ".omp")
    out_dir = oracle.OUT / "forks"
    out_dir.mkdir(exist_ok=True)
    for name, rel in files.items():
        if names and name not in names:
            continue
        golden = json.loads(oracle.read_record(oracle.OUT / "goldens" / f"{name}.json"))
        source = scratch / Path(rel).relative_to("home")
        points = [(n["id"], "branch") for n in golden["tree"] if n["type"] == "message"] + [(None, "whole")]
        forks = []
        for k, (rev, shape) in enumerate(points):
            target = scratch / ".omp" / "agent" / "sessions" / "-forks" / f"{name}-{k}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            args = [str(PISCES), "fork", str(source), "-o", str(target), "--format", "json"]
            args += ["--all"] if shape == "whole" else [rev]
            subprocess.run(args, check=True, capture_output=True, env={**os.environ, "HOME": str(scratch)})
            dumped = scratch / "dump.json"
            oracle.bun(oracle.TOOL / "dump.ts", scratch, scratch, [target, "--out", dumped])
            d = json.loads(dumped.read_text())
            default = next(c for c in d["contexts"] if c.get("default"))
            text = target.read_text().split("\n")
            forks.append({
                "rev": rev,
                "shape": shape,
                "slot": text[0],
                "header": json.loads(text[1]),
                "lines": [l for l in text[2:] if l],
                "omp": {"sessionId": d["sessionId"], "title": d["title"], "leafId": d["leafId"],
                        "header": d["header"], "messages": default["messages"]},
            })
        doc = {"name": name, "source": rel, "forks": forks}
        oracle.write_record(out_dir / f"{name}.json", json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"forks {name}: {len(forks)}", flush=True)
    if oracle.digest(oracle.OUT / "home") != before:
        raise SystemExit("the corpus changed while the forks were made")
    oracle.check_paths(out_dir)


if __name__ == "__main__":
    main(sys.argv[1:])
