#!/usr/bin/env python3
"""Chooses the summary cases for every corpus file under testdata/ and writes cases.json,
from which make.sh computes their goldens with the real pi 1.6.0 (the oracle in
../shared/pi-oracle). Each golden is what `node ORACLE/<script> testdata/<file> <args>
--line-ids` prints (its `oracle` field says which script and arguments):

- compaction/<corpus>/<stem>/<leaf>.keep<N>[.custom].json
      compaction.mjs FILE LEAF --keep-recent N [--custom-instructions T]
- branch/<corpus>/<stem>/<from>__<to>[.<variant>].json
      branch-entries.mjs FILE FROM TO [--context-window N] [--custom-instructions T]
      [--replace-instructions]
- apply/<corpus>/<stem>/<name>.json: the same with --apply (pi's own navigateTree /
  compact on a temp copy: the entries it appended and the context after them).

Leaves and targets are named by id (v1 files: by line, `line:N`, printed as `L<N>`).
Cases per file (see `cases()`): compaction at the default leaf with several keepRecent
values (and at the other leaves), branch summaries between every pair of leaves, from the
default leaf to user messages of its own path (first, middle, last), to the root entry, to
its parent (an ancestor that is not a user message), from an ancestor to the leaf (nothing
to summarize), from another leaf to a user message after the fork; on one pair per file
with custom and replacing instructions and with small context windows (token budgets that
cut the branch, so the rule for summary entries over the budget is exercised).

    python3 testdata/summaries/make.py            # writes cases.json (~2 min)
    bash testdata/summaries/make.sh               # runs the oracle on every case

Standard library only; the case list is deterministic (it depends only on the files).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)
ORACLE = os.environ.get("PI_ORACLE_DIR", os.path.join(os.path.dirname(os.path.dirname(TESTDATA)), "shared", "pi-oracle"))
CORPORA = ["pi-1.6.0", "pi-0.73.1", "real", "edge", "sessions"]
# Where each corpus is, under testdata/ (`sessions`: hand-written files, see README.md).
DIRS = {"sessions": "summaries/sessions"}
CUSTOM = "Focus on the tests and on what still fails."
REPLACE = "List every file that was changed, one per line."


def entries_of(rel):
    out = subprocess.run(
        ["node", os.path.join(ORACLE, "entries.mjs"), os.path.join(TESTDATA, rel), "--line-ids"],
        capture_output=True, text=True, timeout=120,
    )
    if out.returncode != 0:
        print(f"skipped {rel}: entries.mjs failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout)


def cases(corpus, stem, info):
    """[(kind, name, script args after FILE)]"""
    v1 = info.get("idsAreRandom", False)
    entries = [e for e in info["entries"] if e.get("type") != "session"]
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}

    def arg(i):  # how the oracle is told about an entry
        return f"line:{by_id[i]['line']}" if v1 else i

    def name(i):
        return i

    def role(e):
        return e.get("message", {}).get("role") if e.get("type") == "message" else None

    def path_to(i):
        out, seen = [], set()
        while i in by_id and i not in seen:
            seen.add(i)
            out.append(i)
            i = by_id[i].get("parentId")
        return out[::-1]

    def summarizes(a, b):  # navigating from a to b leaves entries behind
        return a != b and a not in set(path_to(b))

    default = info.get("defaultLeafId")
    if not isinstance(default, str) or default not in by_id:
        return []
    leaves = [l for l in dict.fromkeys(info.get("leaves", [])) if l in by_id]
    path = info["branches"].get(default) or []
    path = [i for i in path if i in by_id]
    out = []

    # Compaction.
    keeps = {"pi-1.6.0": [100, 500, 5000], "pi-0.73.1": [100, 500, 2000, 5000], "real": [2000, 50000],
             "edge": [1, 2000], "sessions": [10, 100]}[corpus]
    for k in keeps:
        out.append(("compaction", f"{name(default)}.keep{k}", [arg(default), "--keep-recent", str(k)]))
    if corpus == "pi-1.6.0":
        out.append(("compaction", f"{name(default)}.keep500.custom",
                    [arg(default), "--keep-recent", "500", "--custom-instructions", CUSTOM]))
    if corpus != "real":
        for l in leaves:
            if l != default:
                out.append(("compaction", f"{name(l)}.keep300", [arg(l), "--keep-recent", "300"]))

    # Branch summaries.
    pairs = []
    for a in leaves:
        for b in leaves:
            if a != b:
                pairs.append((a, b, ""))
    users = [i for i in path if role(by_id[i]) == "user"]
    picks = [users[0], users[len(users) // 2], users[-1]] if users else []
    for u in dict.fromkeys(picks):
        pairs.append((default, u, ""))
    if path:
        pairs.append((default, path[0], ""))
        if len(path) > 1:
            pairs.append((default, path[-2], ""))
            pairs.append((path[len(path) // 2], default, ""))
    for l in leaves:
        if l == default:
            continue
        other = info["branches"].get(l) or []
        shared = set(other)
        after_fork = [i for i in path if i not in shared and role(by_id[i]) == "user"]
        if after_fork:
            pairs.append((l, after_fork[0], ""))
    if corpus == "real":
        pairs = [(default, users[-1], "")] if users else []
    # Variants on the first pair with a non-empty branch (leaf pairs first).
    base = next(((a, b) for a, b, _ in pairs if summarizes(a, b)), None)
    if base and corpus != "real":
        a, b = base
        pairs.append((a, b, "custom"))
        pairs.append((a, b, "replace"))
        if corpus != "edge":
            for w in [16484, 16884, 17384, 10000]:
                pairs.append((a, b, f"window{w}"))
    seen = set()
    for a, b, variant in pairs:
        if (a, b, variant) in seen or a == b:
            continue
        seen.add((a, b, variant))
        extra = []
        if variant == "custom":
            extra = ["--custom-instructions", CUSTOM]
        elif variant == "replace":
            extra = ["--custom-instructions", REPLACE, "--replace-instructions"]
        elif variant.startswith("window"):
            extra = ["--context-window", variant[len("window"):]]
        suffix = f".{variant}" if variant else ""
        out.append(("branch", f"{name(a)}__{name(b)}{suffix}", [arg(a), arg(b)] + extra))
    return out


APPLY = [
    # (corpus, stem, kind, name, args)
    ("pi-1.6.0", "02-tool-use", "compaction", "keep500", ["--keep-recent", "500"]),
    ("pi-1.6.0", "19-cache-warming", "compaction", "keep2000", ["--keep-recent", "2000"]),
    ("pi-1.6.0", "21-compaction-checkpoints", "compaction", "keep100", ["--keep-recent", "100"]),
    ("pi-1.6.0", "07-compaction-manual", "compaction", "keep100", ["--keep-recent", "100"]),
    ("pi-1.6.0", "09-auto-compaction", "compaction", "keep100.custom",
     ["--keep-recent", "100", "--custom-instructions", CUSTOM]),
    ("pi-1.6.0", "20-context-edits", "compaction", "keep100", ["--keep-recent", "100"]),
    ("pi-0.73.1", "11-bash-and-images", "compaction", "keep500", ["--keep-recent", "500"]),
    ("pi-1.6.0", "08-compaction-split-turn", "compaction", "keep100", ["--keep-recent", "100"]),
    ("pi-1.6.0", "16-errors-and-aborts", "compaction", "keep100", ["--keep-recent", "100"]),
    ("pi-1.6.0", "18-system-prompt-updates", "compaction", "keep100", ["--keep-recent", "100"]),
    ("edge", "30-compaction-retain-none", "compaction", "keep1", ["--keep-recent", "1"]),
    ("edge", "34-compaction-system-in-kept-range", "compaction", "keep1", ["--keep-recent", "1"]),
    ("sessions", "root-user-two-branches", "compaction", "keep10", ["--keep-recent", "10"]),
]


def apply_cases(infos):
    out = []
    for corpus, stem, kind, name, args in APPLY:
        info = infos.get((corpus, stem))
        if not info:
            continue
        default = info["defaultLeafId"]
        out.append((corpus, stem, "compaction", f"{default}.{name}", [default] + args + ["--apply"]))
    # Branch summaries: every pi-1.6.0 leaf pair, the first user message of the default path
    # (a root target: the summary becomes a new root), and a labelled one.
    for (corpus, stem), info in sorted(infos.items()):
        if corpus not in ("pi-1.6.0", "sessions"):
            continue
        default = info["defaultLeafId"]
        leaves = list(dict.fromkeys(info.get("leaves", [])))
        for l in leaves:
            if l != default:
                out.append((corpus, stem, "branch", f"{default}__{l}", [default, l, "--apply"]))
                out.append((corpus, stem, "branch", f"{l}__{default}", [l, default, "--apply"]))
        path = info["branches"].get(default) or []
        by_id = {e["id"]: e for e in info["entries"] if isinstance(e.get("id"), str)}
        users = [i for i in path if by_id[i].get("type") == "message" and by_id[i]["message"].get("role") == "user"]
        if users and stem in ("03-tree-branches", "20-context-edits", "21-compaction-checkpoints", "root-user-two-branches"):
            out.append((corpus, stem, "branch", f"{default}__{users[0]}", [default, users[0], "--apply"]))
        if stem == "04-branch-summary":
            out.append((corpus, stem, "branch", f"{default}__{path[-2]}.label",
                        [default, path[-2], "--label", "checkpoint", "--apply"]))
    return out


def main():
    infos = {}
    lines = []
    for corpus in CORPORA:
        d = DIRS.get(corpus, corpus)
        files = sorted(f for f in os.listdir(os.path.join(TESTDATA, d)) if f.endswith(".jsonl"))
        for f in files:
            stem = f[:-len(".jsonl")]
            info = entries_of(f"{d}/{f}")
            if info is None:
                continue
            infos[(corpus, stem)] = info
            for kind, name, args in cases(corpus, stem, info):
                script = "compaction.mjs" if kind == "compaction" else "branch-entries.mjs"
                lines.append((f"{kind}/{corpus}/{stem}/{name}.json", script, f"{d}/{f}", args))
    for corpus, stem, kind, name, args in apply_cases(infos):
        script = "compaction.mjs" if kind == "compaction" else "branch-entries.mjs"
        lines.append((f"apply/{corpus}/{stem}/{name}.json", script, f"{DIRS.get(corpus, corpus)}/{stem}.jsonl", args))

    cases_out = [{"out": out, "script": script, "file": rel, "args": args} for out, script, rel, args in lines]
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(cases_out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(lines)} goldens in cases.json", file=sys.stderr)


if __name__ == "__main__":
    main()
