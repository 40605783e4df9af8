#!/usr/bin/env python3
"""`pisces export --html` pages in a real browser: headless Chromium driven over WebDriver
(chromedriver), with the standard library only.

Checks, on pages exported from the corpus and from a session made to attack the page:
  - clicking each leaf shows exactly the messages `pisces path LEAF --format json` gives, in
    order (the page's data for each drawn message, and its text in the drawn element);
  - folding hides a branch and unfolding brings it back;
  - search finds a message and clicking the hit shows it;
  - the compare view marks the side whose last test run passed, as `pisces diff` reads it;
  - the diff report the page puts together for a pair of leaves is `pisces diff`'s, for
    every pair of a corpus session and of one with 25 leaves (many_leaves.py);
  - a deep link (#ID) opens at that entry;
  - nothing is fetched but the page itself (the browser's own network log);
  - script, image and link payloads in session text stay inert text.
Screenshots (light and dark, at a laptop's width) go to the artifacts folder.

Usage: export_page.py --pisces BIN --out DIR   (exit 0: all passed)
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import many_leaves  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg, flush=True)


def find(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


class Driver:
    """A minimal WebDriver client (W3C protocol, JSON over HTTP)."""

    def __init__(self, chromedriver, chromium):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([chromedriver, f"--port={self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                self._req("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                 "--window-size=1366,820", "--no-first-run", "--disable-background-networking"],
                    },
                    "goog:loggingPrefs": {"performance": "ALL", "browser": "ALL"},
                }
            }
        }
        self.sid = self._req("POST", "/session", caps)["sessionId"]

    def _req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            value = json.loads(e.read() or b"{}").get("value", {})
            raise WebDriverError(value.get("error", str(e)), value.get("message", ""))

    def cmd(self, method, path, body=None):
        return self._req(method, f"/session/{self.sid}{path}", body)

    def go(self, url):
        self.cmd("POST", "/url", {"url": url})
        self.wait("return document.body && document.body.dataset.ready === '1'")

    def js(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait(self, script, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            if self.js(script):
                return True
            time.sleep(0.05)
        raise WebDriverError("timeout", script)

    def el(self, css):
        v = self.cmd("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(v.values()))

    def click(self, css):
        # (The tree redraws its rows as it scrolls: a row found a moment ago may be gone.)
        for attempt in range(5):
            try:
                self.cmd("POST", f"/element/{self.el(css)}/click", {})
                return
            except WebDriverError as e:
                if e.error != "stale element reference" or attempt == 4:
                    raise
                time.sleep(0.1)

    def type(self, css, text):
        self.cmd("POST", f"/element/{self.el(css)}/value", {"text": text})

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.cmd("GET", "/screenshot")))

    def alert_text(self):
        try:
            return self.cmd("GET", "/alert/text")
        except WebDriverError as e:
            if e.error == "no such alert":
                return None
            raise

    def log(self, kind):
        return self.cmd("POST", "/se/log", {"type": kind}) or []

    def quit(self):
        try:
            self.cmd("DELETE", "")
        except Exception:
            pass
        self.proc.terminate()
        self.proc.wait(10)


class WebDriverError(Exception):
    def __init__(self, error, message):
        super().__init__(f"{error}: {message[:300]}")
        self.error = error


def pisces(binary, *args, ok=(0,)):
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    if r.returncode not in ok:
        raise RuntimeError(f"pisces {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def export(binary, session, out_dir):
    name = os.path.splitext(os.path.basename(session))[0] + ".html"
    path = os.path.abspath(os.path.join(out_dir, name))
    pisces(binary, "export", session, "--html", "-o", path, "--force")
    return path


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def shown_texts(m):
    """Texts a message must show (each cut to its first 60 characters, whitespace folded)."""
    role = m.get("role")
    out = []
    if role in ("user", "toolResult", "custom"):
        out.append(text_of(m.get("content")))
    elif role == "assistant":
        for b in m.get("content") or []:
            if isinstance(b, dict) and b.get("type") == "text":
                out.append(str(b.get("text", "")))
            elif isinstance(b, dict) and b.get("type") == "toolCall":
                out.append(str(b.get("name", "")))
    elif role in ("compactionSummary", "branchSummary"):
        out.append(str(m.get("summary", "")))
    elif role == "bashExecution":
        out.append(str(m.get("command", "")))
    return [" ".join(t.split())[:60] for t in out if t.strip()]


DRAWN = """
// The messages before the window, then the ones after it.
for (let i = 0; i < 4000 && document.querySelector('#messages .earlier'); i++) document.querySelector('#messages .earlier').click();
const view = document.getElementById('view');
for (let i = 0; i < 400 && document.querySelector('#messages .sentinel'); i++) {
  view.scrollTop = view.scrollHeight;
  document.querySelector('#messages .sentinel').scrollIntoView();
  await new Promise(r => setTimeout(r, 20));
}
"""


def drawn_messages(d):
    """The drawn messages in document order: (index, data, role, text content)."""
    d.cmd("POST", "/execute/async", {"script": "const done = arguments[arguments.length - 1]; (async () => {" + DRAWN + "})().then(done);", "args": []})
    return d.js("""
      const data = window.pisces.data;
      return [...document.querySelectorAll('#messages [data-msg]')].map(e => [Number(e.dataset.msg), data.msgs[Number(e.dataset.msg)][1], e.dataset.role, e.textContent.replace(/\\s+/g, ' ')]);
    """)


def check_leaves(d, binary, session, page):
    d.go("file://" + page)
    data = d.js("return window.pisces.data")
    for leaf in data["leaves"]:
        e = leaf["e"]
        leaf_id = data["ids"][e]
        if leaf_id is None:
            continue
        want = json.loads(pisces(binary, "path", session, leaf_id, "--format", "json"))["messages"]
        # Click the leaf's row (scrolled into view first: the tree draws only what is on
        # screen), or pick it from the list of leaves when the tree's filter hides it.
        drawn_row = d.js("""
          const rows = window.pisces.data.rows;
          const k = rows.findIndex(r => r[0] === arguments[0]);
          if (k < 0) return false;
          document.getElementById('tree').scrollTop = Math.max(0, k * 20 - 100);
          document.getElementById('tree').dispatchEvent(new Event('scroll'));
          return true;
        """, e)
        if drawn_row:
            d.wait(f"return !!document.querySelector('.row[data-entry=\"{e}\"]')")
            d.click(f'.row[data-entry="{e}"]')
        else:
            k = data["leaves"].index(leaf)
            d.click("#leaf-pick")  # (the list is filled when first opened)
            d.click(f'#leaf-pick option[value="{k}"]')
        d.wait(f"return document.getElementById('leaf-pick').value === '{data['leaves'].index(leaf)}'")
        got = drawn_messages(d)
        where = f"{os.path.basename(session)} leaf {leaf_id}"
        if [g[1] for g in got] != want:
            fail(f"{where}: the page shows {len(got)} messages, `pisces path` gives {len(want)} (or they differ)")
            continue
        for (_, m, role, text) in got:
            if role != m.get("role"):
                fail(f"{where}: a {m.get('role')} message drawn as {role}")
            for t in shown_texts(m):
                if t not in text:
                    fail(f"{where}: {t!r} not shown in its {role} message")
    print(f"ok: {os.path.basename(session)}: {len(data['leaves'])} leaves show `pisces path`'s messages", flush=True)
    return data


def check_fold(d, data):
    rows = data["rows"]
    k = next((k for k, r in enumerate(rows) if r[2] > k + 1 and k > 0), None)
    if k is None:
        return
    inside = rows[k + 1][0]
    d.js("document.getElementById('tree').scrollTop = 0; document.getElementById('tree').dispatchEvent(new Event('scroll'))")
    d.wait(f"return !!document.querySelector('[data-fold=\"{k}\"]')")
    d.click(f'[data-fold="{k}"]')
    if d.js(f"return !!document.querySelector('.row[data-entry=\"{inside}\"]')"):
        fail("folding a branch left its rows drawn")
    d.click(f'[data-fold="{k}"]')
    if not d.js(f"return !!document.querySelector('.row[data-entry=\"{inside}\"]')"):
        fail("unfolding a branch did not draw its rows again")
    print("ok: fold and unfold", flush=True)


def check_search(d, word):
    d.type("#q", word)
    d.wait("return !document.getElementById('results').classList.contains('hidden') && document.querySelectorAll('#results .hit[data-entry]').length > 0")
    d.click("#results .hit[data-entry]")
    d.wait("return !!document.querySelector('#messages .target')")
    text = d.js("return document.querySelector('#messages .target').textContent")
    if word.lower() not in text.lower():
        fail(f"search: the hit's message does not hold {word!r}")
    d.js("const q = document.getElementById('q'); q.value = ''; q.dispatchEvent(new Event('input'))")
    d.wait("return document.getElementById('results').classList.contains('hidden')")
    print(f"ok: search for {word!r}", flush=True)


def check_compare(d, binary, session, data, a_id, b_id, shots):
    d.click("#cmp-toggle")
    ka = next(k for k, l in enumerate(data["leaves"]) if data["ids"][l["e"]] == a_id)
    kb = next(k for k, l in enumerate(data["leaves"]) if data["ids"][l["e"]] == b_id)
    d.js("""
      const a = document.getElementById('cmp-a'), b = document.getElementById('cmp-b');
      a.value = String(arguments[0]); b.value = String(arguments[1]);
      b.dispatchEvent(new Event('change'));
    """, ka, kb)
    # (`diff` exits 1 when the sides differ, as diff(1) does.)
    report = json.loads(pisces(binary, "diff", session, a_id, b_id, "--format", "json", ok=(0, 1)))
    runs = [report["summary"][s]["lastTestRun"] for s in ("a", "b")]
    passed = [bool(r) and r["outcome"] == "ok" and r.get("exitCode") in (0, None) for r in runs]
    better = d.js("return [...document.querySelectorAll('#cmp-out > .sides > .side')].map(s => s.classList.contains('better'))")
    want = [passed[0] and not passed[1], passed[1] and not passed[0]]
    if better != want:
        fail(f"compare {a_id} vs {b_id}: marked {better}, but `pisces diff` says the tests passed on {passed}")
    if not any(want):
        fail("compare: the corpus pair was expected to have one passing side")
    # The page holds the report of this pair: its turns, aligned as `pisces diff` aligns them.
    turns = d.js("return [...document.querySelectorAll('#compare .turn')].map(t => Number(t.dataset.turn))")
    if turns != [t["index"] for t in report["turns"]]:
        fail(f"compare: turns {turns}, `pisces diff` has {[t['index'] for t in report['turns']]}")
    d.screenshot(os.path.join(shots, "compare.png"))
    d.click("#cmp-toggle")
    print(f"ok: compare marks the passing side ({'A' if want[0] else 'B'})", flush=True)


LAST_COMMANDS = 8  # diff::sides::LAST_COMMANDS


def digest(side):
    """What the page shows of a side's summary in `pisces diff --format json`: the numbers,
    the models and files, the last commands (diff::sides::Digest)."""
    run = lambda command, r: {"command": command, "outcome": r["outcome"], "exitCode": r.get("exitCode")}
    cmds = side["commands"]
    last = side["lastTestRun"]
    return {
        "entries": side["entries"], "turns": side["turns"], "modelCalls": side["modelCalls"],
        "toolCalls": side["toolCalls"], "errors": len(side["errors"]), "tokens": side["usage"]["tokens"],
        "cost": side["usage"]["cost"], "models": side["models"], "filesModified": side["filesModified"],
        "commandCount": len(cmds), "commands": [run(c["command"], c["last"]) for c in cmds[-LAST_COMMANDS:]],
        "lastTestRun": run(last["command"], last) if last else None,
    }


def check_reports(d, binary, session, data, pairs):
    """The page's diff report of each pair (`window.pisces.report`, what the compare view
    draws) is `pisces diff`'s: the two summaries and the turns, aligned alike."""
    ids = [data["ids"][l["e"]] for l in data["leaves"]]
    aligned = 0
    for a, b in pairs:
        got = d.js("return window.pisces.report(arguments[0], arguments[1])", a, b)
        want = json.loads(pisces(binary, "diff", session, ids[a], ids[b], "--format", "json", ok=(0, 1)))
        want = {"summary": {k: digest(want["summary"][k]) for k in ("a", "b")},
                "turns": [{k: t[k] for k in ("index", "a", "b", "samePrompt")} for t in want["turns"]]}
        if got != want:
            part = "summaries" if got and got["summary"] != want["summary"] else "turns"
            fail(f"{os.path.basename(session)}: the page's report of leaves {ids[a]} and {ids[b]} differs from `pisces diff` in its {part}")
            return
        aligned += sum(1 for t in want["turns"] if t["samePrompt"])
    print(f"ok: {os.path.basename(session)}: {len(pairs)} pairs of {len(ids)} leaves report as `pisces diff` does "
          f"({aligned} turns paired by their prompts)", flush=True)
    return aligned


def check_compare_view(d, data):
    """The compare view of two leaves past the 16th draws the report's turns."""
    d.click("#cmp-toggle")
    n = len(data["leaves"])
    d.js("""
      const a = document.getElementById('cmp-a'), b = document.getElementById('cmp-b');
      a.value = String(arguments[0]); b.value = String(arguments[1]);
      b.dispatchEvent(new Event('change'));
    """, n - 1, n - 2)
    want = d.js("return window.pisces.report(arguments[0], arguments[1]).turns.map(t => t.index)", n - 1, n - 2)
    turns = d.js("return [...document.querySelectorAll('#compare .turn')].map(t => Number(t.dataset.turn))")
    if turns != want or not turns:
        fail(f"compare view of leaves {n - 1} and {n - 2}: turns {turns}, the report has {want}")
    print(f"ok: the compare view draws leaves {n - 1} and {n - 2}'s report ({len(turns)} turns)", flush=True)


def check_deep_link(d, page, data):
    # An entry in the middle of some leaf's path that has a message of its own.
    target = None
    for leaf in data["leaves"]:
        ms = leaf["m"]
        if len(ms) > 4:
            target = data["msgs"][ms[len(ms) // 2]][0]
            break
    if target is None or data["ids"][target] is None:
        return
    d.go("file://" + page + "#" + data["ids"][target])
    d.wait("return !!document.querySelector('#messages .target')")
    got = d.js("return Number(document.querySelector('#messages .target').dataset.entry)")
    if got != target:
        fail(f"deep link #{data['ids'][target]}: shows entry {got}, not {target}")
    if not d.js(f"return document.querySelector('.row.selected') && Number(document.querySelector('.row.selected').dataset.entry) === {target}"):
        fail("deep link: the tree does not select the entry")
    print("ok: deep link", flush=True)


def hostile_session(path):
    """A pi session whose text tries to run script, load images and open links."""
    payloads = [
        "</script><script>window.__pwned = 1; alert(1)</script>",
        "<img src=x onerror=\"window.__pwned = 2; alert(2)\">",
        "[click](javascript:window.__pwned=3) <a href=\"javascript:window.__pwned=4\">link</a>",
        "<svg onload=\"window.__pwned=5\"></svg> <iframe src=\"https://example.com/\"></iframe>",
        "\u2028\u2029 <!-- --> ]]> <style>body{display:none}</style> <link rel=stylesheet href=https://example.com/x.css>",
    ]
    lines = [{"type": "session", "version": 3, "id": "0000-hostile", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/dev/p"}]
    parent = None
    for k, p in enumerate(payloads):
        uid, aid = f"u{k:07d}", f"a{k:07d}"
        lines.append({"type": "message", "id": uid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user", "content": [{"type": "text", "text": p}], "timestamp": 1767225601000}})
        lines.append({"type": "message", "id": aid, "parentId": uid, "timestamp": "2026-01-01T00:00:02.000Z",
                      "message": {"role": "assistant", "content": [{"type": "text", "text": "echo " + p},
                                                                   {"type": "toolCall", "id": f"c{k}", "name": "bash", "arguments": {"command": p}}],
                                  "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                                  "stopReason": "toolUse", "timestamp": 1767225602000}})
        rid = f"r{k:07d}"
        lines.append({"type": "message", "id": rid, "parentId": aid, "timestamp": "2026-01-01T00:00:03.000Z",
                      "message": {"role": "toolResult", "toolCallId": f"c{k}", "toolName": "bash", "content": [{"type": "text", "text": p}],
                                  "isError": False, "timestamp": 1767225603000}})
        parent = rid
    with open(path, "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")
    return payloads


def check_hostile(d, binary, tmp, shots):
    session = os.path.join(tmp, "hostile.jsonl")
    payloads = hostile_session(session)
    page = export(binary, session, tmp)
    d.go("file://" + page)
    drawn_messages(d)
    d.js("document.querySelectorAll('details').forEach(x => x.open = true)")
    time.sleep(0.3)
    if d.alert_text() is not None:
        fail("hostile: an alert opened")
    pwned = d.js("return window.__pwned === undefined ? null : window.__pwned")
    if pwned is not None:
        fail(f"hostile: payload {pwned} ran")
    bad = d.js("""return [...document.querySelectorAll('#messages img, #messages script, #messages iframe, #messages svg, #messages a, #messages style, #messages link')].length""")
    if bad:
        fail(f"hostile: {bad} elements made from session text")
    text = d.js("return document.getElementById('messages').textContent")
    for p in payloads:
        first = p.split()[0]
        if first not in text:
            fail(f"hostile: {first!r} is not shown as text")
    d.screenshot(os.path.join(shots, "hostile.png"))
    print("ok: hostile text stays text", flush=True)
    return page


def check_network(d, pages):
    """Every request the browser made while the pages were open: only the pages themselves
    (and data: URLs the page makes for images)."""
    urls = []
    for entry in d.log("performance"):
        try:
            msg = json.loads(entry["message"])["message"]
        except (KeyError, ValueError):
            continue
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    allowed = {"file://" + p for p in pages}
    stray = sorted({u for u in urls if u.split("#")[0] not in allowed and not u.startswith("data:")})
    if stray:
        fail(f"network: the pages asked for {stray[:5]}")
    if not urls:
        fail("network: the browser's log shows no request at all (is the log on?)")
    print(f"ok: {len(urls)} requests, none but the pages", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pisces", required=True)
    ap.add_argument("--out", required=True, help="folder for the pages and screenshots")
    args = ap.parse_args()
    chromium = find("chromium", "chromium-browser", "google-chrome")
    chromedriver = find("chromedriver")
    if not chromium or not chromedriver:
        print("Chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    os.environ["OPENCLAW_STATE_DIR"] = os.path.join(REPO, "testdata/openclaw-2026.9.6/state")
    tmp = tempfile.mkdtemp(prefix="pisces-browser-")
    d = Driver(chromedriver, chromium)
    pages = []
    try:
        two = os.path.join(REPO, "testdata/pi-1.6.0/22-two-fix-attempts.jsonl")
        for session in [
            two,
            os.path.join(REPO, "testdata/pi-1.6.0/03-tree-branches.jsonl"),
            os.path.join(REPO, "testdata/pi-1.6.0/07-compaction-manual.jsonl"),
            os.path.join(REPO, "testdata/pi-1.6.0/11-bash-and-images.jsonl"),
            os.path.join(REPO, "testdata/claude-code-2.1.332/01-tool-calls.jsonl"),
            os.path.join(REPO, "testdata/codex-0.171.0/05-two-fixes"),
            os.path.join(REPO, "testdata/omp-18.2.3/home/.omp/agent/sessions/-projects-05-errors-dangling-work"),
            os.path.join(REPO, "testdata/omp-18.2.3/home/.omp/agent/sessions/-projects-13-branch-summary-work"),
            # (A session in OpenClaw's database, named as pisces names it there.)
            "openclaw:main/3eca4d2c-96e2-4ce8-a857-a78a504cf6d9",
        ]:
            if os.path.isdir(session):
                session = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(session) for f in fs if f.endswith(".jsonl"))[0]
            page = export(args.pisces, session, args.out)
            pages.append(page)
            data = check_leaves(d, args.pisces, session, page)
            if session == two:
                check_fold(d, data)
                check_search(d, "parseDue")
                check_deep_link(d, page, data)
                d.go("file://" + page)
                d.screenshot(os.path.join(args.out, "two-fix-attempts-light.png"))
                d.click("#theme")
                d.screenshot(os.path.join(args.out, "two-fix-attempts-dark.png"))
                d.go("file://" + page)
                check_compare(d, args.pisces, session, data, "3cdc3441", *[
                    data["ids"][l["e"]] for l in data["leaves"] if data["ids"][l["e"]] != "3cdc3441"][:1], shots=args.out)
            n = len(data["leaves"])
            check_reports(d, args.pisces, session, data, [(a, b) for a in range(n) for b in range(n) if a != b])
        # Past a handful of leaves (the page once held whole reports for up to 16): every
        # pair's report is put together in the page.
        many = os.path.join(tmp, "many-leaves.jsonl")
        many_leaves.make(two, many)
        page = export(args.pisces, many, args.out)
        pages.append(page)
        data = check_leaves(d, args.pisces, many, page)
        n = len(data["leaves"])
        if n <= 16:
            fail(f"many-leaves.jsonl has {n} leaves; it was made to have more than 16")
        if check_reports(d, args.pisces, many, data, [(a, b) for a in range(n) for b in range(a + 1, n)] + [(n - 1, 0), (5, 2)]) == 0:
            fail("many-leaves.jsonl: no turns were paired by their prompts; the alignment went untested")
        check_compare_view(d, data)
        d.screenshot(os.path.join(args.out, "many-leaves-compare.png"))
        pages.append(check_hostile(d, args.pisces, tmp, args.out))
        check_network(d, pages)
    except Exception as e:
        fail(f"{type(e).__name__}: {e}")
    finally:
        d.quit()
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failures", file=sys.stderr)
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
