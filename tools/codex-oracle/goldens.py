"""Goldens: the context Codex builds from a family of rollout files at a point, taken from the
request it sends when it resumes (or forks) that thread there with one more prompt.

For each family (testdata/codex-0.171.0/NAME/sessions/...) and each thread (rollout file) in it,
on a scratch CODEX_HOME holding a copy of the family's files:

- at the thread's end: `codex exec resume ID PROBE` and `codex exec fork ID PROBE`;
- at the end of each earlier turn of the thread's own file (after a `task_complete` line): the
  thread's file cut after that line, then `codex exec resume ID PROBE` (`codex exec fork` takes
  no ordinal: a cut copy is how the thread looked when that turn had ended).

The golden is the request's `input`, less the new turn's own items: the response_item lines the
client wrote for the probe's turn before the model's reply (its user message, and any context
it re-sent for that turn). They are taken from the end of the input, each checked to be there.

Writes testdata/codex-0.171.0/requests/NAME.json:
  {"client", "probe", "how", "threads": {ID: {"file", "points": [{"at", "via", "ordinal_exclusive",
   "byte_offset", "input" | "same_input_as" (+ "ids_differ": [[index, resume id, fork id]]),
   "new_items", "tools", "instructions"} | {..., "refused"}]}}}
"""
import json
import shutil
from pathlib import Path

import oracle
import scenarios
from oracle import log

PROBE = "One more question [[probe]]"
MODEL_OUTPUT = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call")


def load(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


def thread_of(path):
    return load(path)[0]["payload"]["id"]


def turn_ends(path):
    """(ordinal after, byte offset after) of each task_complete line but the last turn's."""
    out, off = [], 0
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    for l in lines[:-1]:
        off += len(l) + 1
        d = json.loads(l)
        if d["type"] == "event_msg" and d["payload"].get("type") == "task_complete":
            out.append((d["ordinal"] + 1, off))
    return out[:-1] if out and out[-1][1] == len(data) else out


def is_output(p):
    return p.get("type") in MODEL_OUTPUT or (p.get("type") == "message" and p.get("role") == "assistant")


def new_turn_items(lines):
    """The response_items the client wrote for the probe's turn before the model's reply."""
    out = []
    for d in lines:
        if d["type"] != "response_item":
            continue
        p = d["payload"]
        if is_output(p):
            break
        out.append(p)
    return out


def same_item(req_item, file_item):
    keys = ("type", "role", "content", "call_id", "output", "name", "arguments", "input")
    return all(req_item.get(k) == file_item.get(k) for k in keys if k in file_item or k in req_item)


def golden(body, added):
    inp = list(body["input"])
    unmatched = []
    for it in reversed(added):
        if inp and same_item(inp[-1], it):
            inp.pop()
        else:
            unmatched.append(it)
    return {"input": inp, "new_items": len(added), **({"unmatched": unmatched} if unmatched else {})}


def strip_ids(items):
    return [{k: v for k, v in it.items() if k != "id"} for it in items]


class Probe:
    def __init__(self, ns, family):
        self.ns, self.family = ns, family

    def setup(self, cut=None):
        """A fresh CODEX_HOME with the family's files (one of them cut: (rel, byte offset))."""
        for d in (oracle.SCRATCH / ".codex", oracle.SCRATCH / "todo-cli"):
            shutil.rmtree(d, ignore_errors=True)
        home = oracle.SCRATCH / ".codex"
        home.mkdir(parents=True)
        (home / "config.toml").write_text(oracle.CONFIG)
        (home / "mock-models.json").write_text(json.dumps(oracle.MODEL_CATALOG, indent=1) + "\n")
        shutil.copytree(self.family / "sessions", home / "sessions")
        if cut:
            rel, off = cut
            f = home / rel
            f.write_bytes(f.read_bytes()[:off])
        scenarios.write_project()
        restore_agents_md(self.family)

    def run(self, tid, via, cut=None):
        self.setup(cut)
        before = {f: len(f.read_bytes()) for f in oracle.rollouts()}
        n = self.ns.request_count()
        args = [*scenarios.EXEC, via, tid, PROBE]
        r = self.ns.codex(args, check=False, timeout=120)
        if r.returncode != 0:
            return {"refused": (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:300]}
        body = None
        for q in self.ns.requests_since(n):
            b = q.get("body")
            if isinstance(b, dict) and b.get("tools") and "[[probe]]" in json.dumps(b.get("input", [])[-3:]):
                body = b
                break
        if body is None:
            return {"refused": "no request with the probe"}
        after = oracle.rollouts()
        if via == "resume":
            f = next(f for f in after if tid in f.name)
            data = f.read_bytes()[before[f]:]
        else:
            f = next(f for f in after if f not in before)
            data = f.read_bytes()
        lines = [json.loads(l) for l in data.decode().splitlines() if l.strip()]
        g = golden(body, new_turn_items(lines))
        g["tools"] = [t.get("name") or t.get("type") for t in body.get("tools") or []]
        g["instructions"] = body.get("instructions")
        return g


def restore_agents_md(family):
    """Writes back the AGENTS.md files the family's `world_state` lines recorded, as they
    recorded them: the scratch project is reset for every run, and without them the client
    would resume in a project whose instructions are gone."""
    found = {}
    for f in sorted((family / "sessions").rglob("rollout-*.jsonl")):
        for d in load(f):
            a = ((d.get("payload") or {}).get("state") or {}).get("agents_md") if d.get("type") == "world_state" else None
            if isinstance(a, dict) and isinstance(a.get("text"), str) and str(a.get("directory", "")).startswith(oracle.HOME + "/"):
                found[a["directory"]] = a["text"]
    for directory, text in found.items():
        dst = oracle.SCRATCH / directory[len(oracle.HOME) + 1:] / "AGENTS.md"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text)


def run(names):
    fams = [Path(n).resolve() for n in names] or sorted(p for p in oracle.OUT.iterdir() if (p / "sessions").is_dir())
    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(scenarios.SCRIPT))
    (oracle.OUT / "requests").mkdir(parents=True, exist_ok=True)
    for fam in fams:
        if (fam / "sessions").is_dir() is False:  # a file of a family: its family
            fam = next(p for p in fam.parents if (p / "sessions").is_dir())
        oracle.reset_scratch()
        ns = oracle.Namespace(script)
        probe = Probe(ns, fam)
        doc = {"client": f"codex-cli {oracle.VERSION}", "probe": PROBE,
               "how": ("input of the request `codex exec resume ID PROBE` / `codex exec fork ID PROBE` sent, on a scratch "
                       "CODEX_HOME holding the family's files, less the probe turn's own items (the response_items the "
                       "client wrote for that turn before the reply). `end`: the thread's file as committed. `turn`: the "
                       "thread's file cut after the task_complete line ending that turn (ordinal_exclusive / byte_offset "
                       "say where), then resumed."),
               "threads": {}}
        try:
            for f in sorted((fam / "sessions").rglob("rollout-*.jsonl")):
                rel = str(f.relative_to(fam))
                tid = thread_of(f)
                size = len(f.read_bytes())
                last = load(f)[-1]["ordinal"] + 1
                pts = []
                g = probe.run(tid, "resume")
                pts.append({"at": "end", "via": "exec resume", "ordinal_exclusive": last, "byte_offset": size, **g})
                h = probe.run(tid, "fork")
                if "input" in h and "input" in g and strip_ids(h["input"]) == strip_ids(g["input"]):
                    ids = [[i, a.get("id"), b.get("id")] for i, (a, b) in enumerate(zip(g["input"], h["input"])) if a.get("id") != b.get("id")]
                    h = {"same_input_as": "exec resume at end", **({"ids_differ": ids} if ids else {}),
                         **{k: v for k, v in h.items() if k != "input"}}
                pts.append({"at": "end", "via": "exec fork", "ordinal_exclusive": last, "byte_offset": size, **h})
                for ordx, off in turn_ends(f):
                    c = probe.run(tid, "resume", cut=(rel, off))
                    pts.append({"at": "turn", "via": "exec resume (file cut)", "ordinal_exclusive": ordx, "byte_offset": off, **c})
                for p in pts:
                    log(f"{fam.name} {tid[:13]} {p['at']} {p['via']} @{p['ordinal_exclusive']}: "
                        + (p["refused"] if "refused" in p else f"{len(p['input'])} items" if "input" in p else "same input")
                        + (" UNMATCHED" if p.get("unmatched") else ""))
                doc["threads"][tid] = {"file": rel, "points": pts}
        finally:
            ns.close()
        out = oracle.OUT / "requests" / f"{fam.name}.json"
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        log(f"{fam.name}: {out.relative_to(oracle.REPO)}")
