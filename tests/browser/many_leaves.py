"""A pi session with many leaves, for the page's compare view past a handful of branches.

make(template, out, branches) copies a corpus session written by pi (its entries as they
are) and adds `branches` attempts, each under an entry of the original path (several under
the same one): a prompt, a `npm test` call and its result (passing or failing by turn), a
reply; some attempts go on with more turns whose prompts recur across attempts ("Run the
tests once more", "Check the linter"), so that `pisces diff` aligns their turns by prompt,
and some add a turn the others lack, so that the alignment is not the order. The new
entries are copies of the template's own user, assistant and tool-result entries with new
ids, texts and times: the shapes are pi's.
"""
import copy
import hashlib
import json


def _id(*parts):
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:8]


def make(template, out, branches=24):
    lines = [json.loads(l) for l in open(template, encoding="utf-8") if l.strip()]
    entries = [d for d in lines if d.get("type") != "session"]
    msgs = [d for d in entries if d.get("type") == "message"]
    user = next(d for d in msgs if d["message"]["role"] == "user")
    call = next(d for d in msgs if d["message"]["role"] == "assistant"
                and any(b.get("type") == "toolCall" and b.get("name") == "bash" for b in d["message"]["content"]))
    result = next(d for d in msgs if d["message"]["role"] == "toolResult" and d["message"].get("toolName") == "bash")
    reply = next(d for d in msgs if d["message"]["role"] == "assistant"
                 and all(b.get("type") == "text" for b in d["message"]["content"]))
    # Fork points: entries of the original first path (every third one from the first
    # prompt), each taking a few attempts.
    path_ids = [d["id"] for d in entries]
    start = path_ids.index(user["id"])
    points = path_ids[start::3][:8]
    ms = 1796000000000
    new = []

    def add(kind, parent, text, k, *extra):
        nonlocal ms
        ms += 1000
        d = copy.deepcopy({"user": user, "call": call, "result": result, "reply": reply}[kind])
        d["id"], d["parentId"] = _id(kind, k, *extra), parent
        d["timestamp"] = f"2026-12-0{1 + (ms // 86400000) % 5}T10:{(ms // 60000) % 60:02d}:{(ms // 1000) % 60:02d}.000Z"
        m = d["message"]
        m["timestamp"] = ms
        if kind == "user":
            m["content"] = [{"type": "text", "text": text}]
        elif kind == "reply":
            m["content"] = [{"type": "text", "text": text}]
        elif kind == "call":
            m["content"] = [{"type": "text", "text": text},
                            {"type": "toolCall", "id": "toolu_" + _id("c", k, *extra), "name": "bash", "arguments": {"command": "npm test"}}]
        else:
            m["toolCallId"] = "toolu_" + _id("c", k, *extra)
            m["isError"] = text != "pass"
            m["content"] = [{"type": "text", "text": "# pass 3\n# fail 0\n" if text == "pass" else "# pass 2\n# fail 1\nCommand exited with code 1"}]
        new.append(d)
        return d["id"]

    for k in range(branches):
        at = add("user", points[k % len(points)], f"Attempt {k}: fix the failing test another way", k)
        turns = [None]
        if k % 3 == 1:
            turns.append("Run the tests once more")
        if k % 4 == 2:
            turns.append("Explain the change first")
        if k % 3 != 0:
            turns.append("Check the linter")
        for t, prompt in enumerate(turns):
            if prompt:
                at = add("user", at, prompt, k, t)
            at = add("call", at, f"Running the tests (attempt {k}, turn {t}).", k, t)
            at = add("result", at, "pass" if (k + t) % 2 == 0 else "fail", k, t)
            at = add("reply", at, f"Attempt {k}, turn {t}: done.", k, t)
    with open(out, "w", encoding="utf-8") as f:
        for d in lines + new:
            f.write(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n")
