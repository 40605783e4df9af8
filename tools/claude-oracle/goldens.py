"""Goldens: the context Claude Code builds from a file at each entry, taken from the request it
sends when it resumes there with one more prompt.

For each corpus file and each conversation entry (user, assistant, attachment, system lines
with a uuid), on a scratch copy of the file: `claude -p PROBE --resume SID
--resume-session-at UUID` (and once `--resume SID` alone, at the leaf the client picks). The
request's `messages`, with `cache_control` markers taken out, less what the client added for
the new turn, is the golden. What it added is read from the lines it appended to the copy: the
probe's user line and the attachment lines after it, whose `rendered` texts are the reminders
and system messages it sent; each is taken out of the request once, from the end. An entry the
client refuses to resume at is recorded with its error.

Writes testdata/claude-code-2.1.332/requests/<file>.json:
  {"client", "probe", "leaf": {...}, "at": {"<uuid>": {"messages": [...], "added": N} | {"refused": "..."}}}
"""
import copy
import json
import re
from pathlib import Path

import oracle
import probe
import scenarios
from oracle import log

PROBE_TEXT = probe.PROBE
WRAP = re.compile(r"^<system-reminder>\n?(.*?)\n?</system-reminder>$", re.S)


def strip_cache_control(v):
    if isinstance(v, dict):
        return {k: strip_cache_control(x) for k, x in v.items() if k != "cache_control"}
    if isinstance(v, list):
        return [strip_cache_control(x) for x in v]
    return v


def added_texts(new_lines):
    """The rendered texts of the attachments the client made for the probe's turn."""
    out = []
    seen_probe = False
    for l in new_lines:
        try:
            d = json.loads(l)
        except ValueError:
            continue
        if d.get("type") == "user" and probe.PROBE in json.dumps(d.get("message")):
            seen_probe = True
            continue
        if not seen_probe:
            continue
        if d.get("type") in ("assistant", "api-request"):
            break
        if d.get("type") == "attachment":
            for r in d.get("rendered") or []:
                c = r.get("content")
                if isinstance(c, str):
                    out.append(c)
    return out


def block_texts(m):
    c = m.get("content")
    if isinstance(c, str):
        return [c]
    return [b.get("text") for b in c if isinstance(b, dict) and b.get("type") == "text"]


def norm(text):
    """A reminder as rendered in the file, as the request carries it: without its wrapper when
    it goes as a system message, and without the newline a merge adds."""
    t = text.strip("\n")
    m = WRAP.match(t)
    return (m.group(1) if m else t).strip("\n")


def cut_part(whole, part):
    """`whole` (system texts joined by blank lines) without one `part`, from the end, or None."""
    if whole == part:
        return ""
    if whole.endswith("\n\n" + part):
        return whole[: -len(part) - 2]
    if whole.startswith(part + "\n\n"):
        return whole[len(part) + 2:]
    k = whole.rfind("\n\n" + part + "\n\n")
    if k >= 0:
        return whole[:k] + whole[k + len(part) + 2:]
    return None


def remove_once(msgs, text):
    """Removes, from the end, one text block or string content that is `text` as the request
    carries it (see `norm`); in a system message, where the client joins neighbouring system
    texts with a blank line, one of the joined parts. Returns whether it was found."""
    want = norm(text)
    for i in range(len(msgs) - 1, -1, -1):
        c = msgs[i].get("content")
        if msgs[i].get("role") == "system":
            blocks = [{"type": "text", "text": c}] if isinstance(c, str) else c
            for j in range(len(blocks) - 1, -1, -1):
                b = blocks[j]
                if not (isinstance(b, dict) and b.get("type") == "text"):
                    continue
                rest = cut_part(b.get("text", ""), want)
                if rest is None:
                    continue
                if rest:
                    if isinstance(c, str):
                        msgs[i]["content"] = rest
                    else:
                        b["text"] = rest
                elif isinstance(c, str) or len(c) == 1:
                    del msgs[i]
                else:
                    del c[j]
                return True
            continue
        if isinstance(c, str):
            if norm(c) == want:
                del msgs[i]
                return True
            continue
        for j in range(len(c) - 1, -1, -1):
            b = c[j]
            if isinstance(b, dict) and b.get("type") == "text" and norm(b.get("text", "")) == want:
                del c[j]
                if not c:
                    del msgs[i]
                return True
    return False


def unmerge(msgs):
    """The probe, sent on resuming at a user message, is merged into that message, and the
    merge ends the text block before it with a newline: take that newline out again.
    Returns whether the probe was merged."""
    for m in reversed(msgs):
        c = m.get("content")
        if m.get("role") != "user" or not isinstance(c, list):
            continue
        k = next((j for j, b in enumerate(c) if isinstance(b, dict) and b.get("text") == PROBE_TEXT), None)
        if k is None:
            continue
        if k == 0:
            return False
        # The merge ends the text block at the seam (only that one) with a newline.
        b = c[k - 1]
        if isinstance(b, dict) and b.get("type") == "text" and b.get("text", "").endswith("\n"):
            b["text"] = b["text"][:-1]
        return True
    return False


def golden(body, new_lines):
    msgs = strip_cache_control(copy.deepcopy(body["messages"]))
    merged = unmerge(msgs)
    if not remove_once(msgs, probe.PROBE):
        raise SystemExit("claude-oracle: the probe is not in its own request")
    added = added_texts(new_lines)
    missing = [t[:80] for t in added if not remove_once(msgs, t)]
    return {"messages": msgs, "added": len(added), "merged": merged, **({"unmatched": missing} if missing else {})}


def entries(path):
    out = []
    for l in open(path, encoding="utf-8"):
        try:
            d = json.loads(l)
        except ValueError:
            continue
        if isinstance(d, dict) and d.get("uuid") and d.get("type") in ("user", "assistant", "attachment", "system"):
            out.append(d["uuid"])
    return out


def one(ns, path, uuid):
    sid = probe.session_id(path)
    copy_path = oracle.SCRATCH / ".claude" / "projects" / "-home-dev-todo-cli" / f"{sid}.jsonl"
    before = path.read_bytes().count(b"\n")
    body, err = probe.resume(ns, path, uuid)
    if err:
        return {"refused": err.splitlines()[-1][:300] if err.strip() else err}
    new_lines = copy_path.read_text().splitlines()[before:]
    return golden(body, new_lines)


def run(names):
    files = [Path(n).resolve() for n in names] or sorted(oracle.OUT.glob("*.jsonl"))
    script = oracle.RUN / "script.json"
    oracle.RUN.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(scenarios.SCRIPT))
    (oracle.OUT / "requests").mkdir(parents=True, exist_ok=True)
    for f in files:
        oracle.reset_scratch()
        scenarios.write_project()
        ns = oracle.Namespace(script)
        doc = {"client": f"claude-code {oracle.VERSION}", "probe": probe.PROBE, "leaf": None, "at": {}}
        try:
            doc["leaf"] = one(ns, f, None)
            ids = entries(f)
            for k, u in enumerate(ids):
                doc["at"][u] = one(ns, f, u)
                log(f"{f.name}: {k + 1}/{len(ids)} {u[:8]}: " + ("refused" if "refused" in doc["at"][u] else f"{len(doc['at'][u]['messages'])} messages"))
        finally:
            ns.close()
        out = oracle.OUT / "requests" / f"{f.stem}.json"
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        log(f"{f.name}: {out.relative_to(oracle.REPO)}")
