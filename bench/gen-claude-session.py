#!/usr/bin/env python3
"""A large Claude Code session for the benchmark, made from the lines the real client wrote.

usage: gen-claude-session.py --mb 100 --seed 1 --out FILE

Takes the line shapes of testdata/claude-code-2.1.332/01-tool-calls.jsonl (a prompt, its
attachments, a reply split into a text line and tool_use lines, tool results written under
their calls, metadata lines without uuid) and repeats them with new uuids and message ids:
every ~200 lines a turn branches from an earlier reply (as `--resume-session-at` does), and
every ~3,000 lines a compaction starts (a compact_boundary and its summary). The last line is
a `last-prompt` naming the newest leaf. Prints a JSON summary on stderr.
"""
import argparse
import copy
import json
import random
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "testdata" / "claude-code-2.1.332" / "01-tool-calls.jsonl"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--branch-every", type=int, default=200)
    ap.add_argument("--compact-every", type=int, default=3000)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    lines = [json.loads(l) for l in SOURCE.open()]
    by_type = {}
    for d in lines:
        by_type.setdefault(d["type"], []).append(d)
    prompt = next(d for d in lines if d["type"] == "user" and isinstance(d["message"]["content"], str))
    attachment = next(d for d in lines if d["type"] == "attachment" and d["attachment"]["type"] == "date")
    text = next(d for d in lines if d["type"] == "assistant" and d["message"]["content"][0]["type"] == "text")
    call = next(d for d in lines if d["type"] == "assistant" and d["message"]["content"][0]["type"] == "tool_use"
                and d["message"]["content"][0]["name"] == "Bash")
    result = next(d for d in lines if d["type"] == "user" and isinstance(d["message"]["content"], list)
                  and d["message"]["content"][0].get("tool_use_id") == call["message"]["content"][0]["id"])
    meta = [d for d in lines if "uuid" not in d and d["type"] in ("queue-operation", "api-request", "cost-state")]
    sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
    filler = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz     \n") for _ in range(1500))

    def new_id():
        return str(uuid.UUID(int=rnd.getrandbits(128), version=4))

    out = open(a.out, "w")
    limit = int(a.mb * 1e6)
    size = 0
    n = 0
    replies = []  # uuids of reply text lines, branch points
    parent = None
    leaf = None
    turn = 0
    since_branch = since_compact = 0
    compactions = branches = 0

    depth = {}
    entries = 0

    def emit(d):
        nonlocal size, n, entries
        if "uuid" in d:
            entries += 1
            depth[d["uuid"]] = depth.get(d.get("parentUuid"), 0) + 1
        s = json.dumps(d, ensure_ascii=False, separators=(",", ":"))
        out.write(s + "\n")
        size += len(s) + 1
        n += 1

    def entry(tmpl, par, **changes):
        d = copy.deepcopy(tmpl)
        d["uuid"] = new_id()
        d["parentUuid"] = par
        d["sessionId"] = sid
        d.update(changes)
        return d

    while size < limit:
        turn += 1
        if since_compact >= a.compact_every and parent:
            b = {"parentUuid": None, "logicalParentUuid": parent, "isSidechain": False, "type": "system",
                 "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                 "timestamp": text["timestamp"], "uuid": new_id(), "level": "info",
                 "compactMetadata": {"trigger": "auto", "preTokens": 160000}, "sessionId": sid}
            emit(b)
            s = entry(prompt, b["uuid"], isCompactSummary=True)
            s["message"] = {"role": "user", "content": "This session is being continued from a previous conversation. Summary: " + filler[:800]}
            emit(s)
            parent = s["uuid"]
            replies = []
            since_compact = 0
            compactions += 1
        elif since_branch >= a.branch_every and len(replies) > 2:
            parent = rnd.choice(replies[:-1])
            since_branch = 0
            branches += 1
        start = n
        for m in meta[:2]:
            emit({**m, "sessionId": sid})
        u = entry(prompt, parent)
        u["message"] = {"role": "user", "content": f"Turn {turn}: run the tests and fix what fails"}
        emit(u)
        att = entry(attachment, u["uuid"])
        emit(att)
        mid = f"msg_{new_id().replace('-', '')[:24]}"
        t = entry(text, att["uuid"])
        t["message"] = {**t["message"], "id": mid, "content": [{"type": "text", "text": f"Reply {turn}: " + filler[:300]}]}
        emit(t)
        replies.append(t["uuid"])
        prev = t["uuid"]
        calls = []
        for k in range(2):
            c = entry(call, prev)
            cid = f"toolu_{new_id().replace('-', '')[:24]}"
            c["message"] = {**c["message"], "id": mid,
                            "content": [{"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": f"npm test -- {turn}.{k}"}}]}
            emit(c)
            calls.append((c["uuid"], cid))
            prev = c["uuid"]
        last = None
        for cu, cid in calls:
            r = entry(result, cu)
            r["message"] = {"role": "user", "content": [{"tool_use_id": cid, "type": "tool_result", "content": filler, "is_error": False}]}
            emit(r)
            last = r["uuid"]
        mid2 = f"msg_{new_id().replace('-', '')[:24]}"
        f = entry(text, last)
        f["message"] = {**f["message"], "id": mid2, "content": [{"type": "text", "text": f"Done with turn {turn}."}]}
        emit(f)
        replies.append(f["uuid"])
        emit({**meta[-1], "sessionId": sid})
        parent = leaf = f["uuid"]
        since_branch += n - start
        since_compact += n - start
    emit({"type": "last-prompt", "lastPrompt": f"Turn {turn}: run the tests and fix what fails", "leafUuid": leaf, "sessionId": sid})
    out.close()
    # path_len: the leaf's chain up the parentUuids (to the last compaction), as the client
    # builds its context.
    print(json.dumps({"bytes": size, "lines": n, "entries": entries, "turns": turn, "forks": branches,
                      "compactions": compactions, "path_len": depth[leaf]}), file=sys.stderr)


if __name__ == "__main__":
    main()
