"""Forks made by `pisces fork`, resumed by the real client.

For each family (testdata/codex-0.171.0/NAME/) and each line of each thread's own file that a
user may fork at (a response item, a `compacted` line, the end of a turn), on a scratch
CODEX_HOME holding the family: `pisces fork ROLLOUT :ORDINAL` writes a new rollout into the
store, then `codex exec resume <new id> PROBE` resumes it. What the client sent, less the
probe's own items, is recorded with the fork's `session_meta` line as pisces wrote it:

  testdata/codex-0.171.0/forks/NAME.json:
    {"client", "pisces", "probe", "forks": [{"thread", "file", "rev", "meta", "input" | "refused"}]}

The tests (tests/cli/codex.rs) put each `meta` line in a copy of the family and check that
`pisces path` on it gives that input, and that it is the source's context at REV.

  python3 tools/codex-oracle/forkcheck.py [PISCES] [NAME...]   (PISCES: default target/release/pisces)
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import oracle
import scenarios
from goldens import PROBE, Probe, golden, load, new_turn_items, thread_of
from oracle import log


def points(path):
    """Ordinals a fork may be made at in this file: items, compactions, turn ends."""
    out = []
    for d in load(path):
        t, p = d["type"], d.get("payload") or {}
        if t in ("response_item", "compacted") or (t == "event_msg" and p.get("type") == "task_complete"):
            out.append(d["ordinal"])
    return out


def run(pisces, names):
    fams = [oracle.OUT / n for n in names] or sorted(p for p in oracle.OUT.iterdir() if (p / "sessions").is_dir())
    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(scenarios.SCRIPT))
    (oracle.OUT / "forks").mkdir(parents=True, exist_ok=True)
    version = subprocess.run([pisces, "--version"], capture_output=True, text=True).stdout.strip()
    for fam in fams:
        oracle.reset_scratch()
        ns = oracle.Namespace(script)
        probe = Probe(ns, fam)
        doc = {"client": f"codex-cli {oracle.VERSION}", "pisces": version, "probe": PROBE, "forks": []}
        try:
            for f in sorted((fam / "sessions").rglob("rollout-*.jsonl")):
                rel = str(f.relative_to(fam))
                tid = thread_of(f)
                for ordinal in points(f):
                    probe.setup()
                    home = oracle.SCRATCH / ".codex"
                    before = set(oracle.rollouts())
                    r = subprocess.run([pisces, "fork", str(home / rel), f":{ordinal}", "--format", "json"],
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        raise SystemExit(f"pisces fork failed: {r.stderr}")
                    new = [p for p in oracle.rollouts() if p not in before]
                    meta_line = new[0].read_text().splitlines()[0]
                    fork_id = json.loads(meta_line)["payload"]["id"]
                    n = ns.request_count()
                    rr = ns.codex([*scenarios.EXEC, "resume", fork_id, PROBE], check=False, timeout=120)
                    entry = {"thread": tid, "file": rel, "rev": f":{ordinal}", "meta": meta_line}
                    body = next((q["body"] for q in ns.requests_since(n)
                                 if isinstance(q.get("body"), dict) and "[[probe]]" in json.dumps(q["body"].get("input", [])[-3:])), None)
                    if rr.returncode != 0 or body is None:
                        entry["refused"] = ((rr.stderr.strip().splitlines() or ["exit %d" % rr.returncode])[-1])[:300]
                    else:
                        data = new[0].read_text()
                        lines = [json.loads(l) for l in data.splitlines()[1:] if l.strip()]
                        entry.update(golden(body, new_turn_items(lines)))
                    log(f"{fam.name} {tid[:13]} :{ordinal}: " + (entry.get("refused") or f"{len(entry['input'])} items"))
                    doc["forks"].append(entry)
        finally:
            ns.close()
        out = oracle.OUT / "forks" / f"{fam.name}.json"
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        log(f"{fam.name}: {out.relative_to(oracle.REPO)}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    args = sys.argv[1:]
    pisces = str(oracle.REPO / "target" / "release" / "pisces")
    if args and ("/" in args[0] or args[0].endswith("pisces")):
        pisces = str(Path(args.pop(0)).resolve())
    run(pisces, args)
