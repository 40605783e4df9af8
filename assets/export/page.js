// pisces export: the page's behaviour. Session text is data: it only ever reaches the page
// as text nodes (textContent, createTextNode), never as markup, and nothing here loads
// anything (the Content-Security-Policy forbids it too).
"use strict";
// The session: JSON, gzipped, base64 (see src/render/html.rs), inflated by the browser.
async function piscesData() {
  const text = document.getElementById("pisces-data").textContent.trim();
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

piscesData().then((D) => {
  // (For scripts and the browser tests: the page's data, as read.)
  window.pisces = { data: D };
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const n = D.ids.length;
  const ROW = 20;

  // ---- The tree ------------------------------------------------------------------------
  // Rows come in `pisces tree`'s order (depth first), each with the end of its subtree, so
  // folding hides a contiguous run.
  const rowOf = new Int32Array(n).fill(-1);
  D.rows.forEach((r, k) => { rowOf[r[0]] = k; });
  const idIndex = new Map();
  D.ids.forEach((id, i) => { if (id !== null && !idIndex.has(id)) idIndex.set(id, i); });
  const folded = new Set();
  let visible = [];
  const leafIndex = new Map();
  D.leaves.forEach((l, k) => leafIndex.set(l.e, k));

  // For each entry, the leaf shown when it is clicked: the newest leaf below it.
  const leafFor = new Int32Array(n).fill(-1);
  const byTime = D.leaves.map((l, k) => k).sort((a, b) => (D.leaves[b].time ?? -Infinity) - (D.leaves[a].time ?? -Infinity) || b - a);
  for (const k of byTime) {
    let e = D.leaves[k].e;
    while (e >= 0 && leafFor[e] < 0) { leafFor[e] = k; e = D.parents[e]; }
  }

  function computeVisible() {
    visible = [];
    for (let k = 0; k < D.rows.length; k++) {
      visible.push(k);
      if (folded.has(k)) k = D.rows[k][2] - 1;
    }
    $("spacer").style.height = visible.length * ROW + "px";
  }

  let current = -1; // the leaf shown (index into D.leaves)
  let selected = -1; // the entry selected
  let onPath = new Set();

  // Only the rows on screen exist; a row keeps its element while it stays there (so that a
  // click is not lost to a redraw), and is updated in place.
  const drawnRows = new Map();
  function rowElement(k) {
    const [entry, text, end, tone] = D.rows[k];
    const r = el("div", "row");
    r.dataset.entry = entry;
    if (tone) r.classList.add("t-" + tone);
    if (leafIndex.has(entry)) r.classList.add(entry === D.defaultLeaf ? "default-leaf" : "leaf");
    if (end > k + 1) {
      const f = el("span", "fold");
      f.dataset.fold = k;
      r.appendChild(f);
    }
    r.appendChild(el("span", "txt", text));
    return r;
  }

  function drawTree() {
    const box = $("tree");
    const spacer = $("spacer");
    const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 10);
    const last = Math.min(visible.length, Math.ceil((box.scrollTop + box.clientHeight) / ROW) + 10);
    const keep = new Set();
    for (let v = first; v < last; v++) {
      const k = visible[v];
      keep.add(k);
      let r = drawnRows.get(k);
      if (!r) {
        r = rowElement(k);
        spacer.appendChild(r);
        drawnRows.set(k, r);
      }
      r.style.top = v * ROW + "px";
      const entry = D.rows[k][0];
      r.classList.toggle("on-path", onPath.has(entry));
      r.classList.toggle("selected", entry === selected);
      const f = r.querySelector(".fold");
      if (f) {
        f.textContent = folded.has(k) ? "⊞" : "⊟";
        f.title = folded.has(k) ? "unfold" : "fold";
      }
    }
    for (const [k, r] of drawnRows) {
      if (!keep.has(k)) { r.remove(); drawnRows.delete(k); }
    }
  }

  $("tree").addEventListener("scroll", () => requestAnimationFrame(drawTree));
  $("tree").addEventListener("click", (ev) => {
    const f = ev.target.closest("[data-fold]");
    if (f) {
      const k = Number(f.dataset.fold);
      if (folded.has(k)) folded.delete(k); else folded.add(k);
      computeVisible();
      drawTree();
      return;
    }
    const r = ev.target.closest(".row");
    if (r) select(Number(r.dataset.entry), true);
  });

  function revealRow(entry) {
    let k = rowOf[entry];
    if (k < 0) return;
    // Unfold what hides it.
    let changed = false;
    for (const f of [...folded]) if (f < k && D.rows[f][2] > k) { folded.delete(f); changed = true; }
    if (changed) computeVisible();
    const v = visible.indexOf(k);
    const box = $("tree");
    if (v >= 0 && (v * ROW < box.scrollTop || v * ROW > box.scrollTop + box.clientHeight - ROW)) {
      box.scrollTop = Math.max(0, v * ROW - box.clientHeight / 3);
    }
  }

  // ---- Messages --------------------------------------------------------------------------
  const CUT_CHARS = 3000, CUT_LINES = 40;

  function longText(cls, text) {
    const box = el("div", cls);
    text = String(text ?? "");
    const lines = text.split("\n");
    if (text.length <= CUT_CHARS && lines.length <= CUT_LINES) { box.textContent = text; return box; }
    let cut = lines.slice(0, CUT_LINES).join("\n");
    if (cut.length > CUT_CHARS) cut = cut.slice(0, CUT_CHARS);
    box.textContent = cut;
    const more = el("button", "more", `show all (${text.length.toLocaleString()} characters, ${lines.length.toLocaleString()} lines)`);
    more.addEventListener("click", () => { box.textContent = text; });
    const wrap = el("div");
    wrap.append(box, more);
    return wrap;
  }

  const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
  function image(block) {
    const mime = String(block.mimeType ?? block.mediaType ?? "");
    const data = typeof block.data === "string" ? block.data : "";
    if (!IMAGE_TYPES.has(mime) || !/^[A-Za-z0-9+/=\s]*$/.test(data)) return el("div", "text", `[image ${mime || "of unknown type"}]`);
    const img = el("img", "inline");
    img.alt = "image";
    img.src = "data:" + mime + ";base64," + data.replace(/\s+/g, "");
    return img;
  }

  function content(parent, c, cls) {
    if (typeof c === "string") { parent.appendChild(longText(cls || "text", c)); return; }
    if (!Array.isArray(c)) return;
    for (const b of c) {
      if (!b || typeof b !== "object") continue;
      if (b.type === "text") parent.appendChild(longText(cls || "text", b.text));
      else if (b.type === "image") parent.appendChild(image(b));
      else parent.appendChild(longText("out", JSON.stringify(b, null, 2)));
    }
  }

  function textOf(c) {
    if (typeof c === "string") return c;
    if (!Array.isArray(c)) return "";
    return c.filter((b) => b && b.type === "text").map((b) => String(b.text ?? "")).join("\n");
  }

  function callLine(b) {
    const a = b.arguments && typeof b.arguments === "object" ? b.arguments : {};
    const arg = a.command ?? a.path ?? a.file_path ?? a.pattern ?? a.url ?? a.query ?? "";
    let s = String(arg).split("\n")[0];
    if (s.length > 100) s = s.slice(0, 99) + "…";
    return `${b.name}(${s})`;
  }

  function roleLine(m, k, what) {
    const r = el("div", "role");
    r.appendChild(el("span", null, what));
    const e = D.msgs[k][0];
    const id = D.ids[e];
    r.appendChild(el("span", "id", (id ?? "#" + D.lines[e]) + " · line " + D.lines[e]));
    return r;
  }

  function resultBody(box, m) {
    if (m.isError) box.classList.add("error");
    content(box, m.content, "out");
  }

  // One message element (a tool result answering a call of the reply just above is drawn
  // under that call, collapsible; `data-msg` still marks it as a message of its own).
  // `pending` holds the calls of the last reply drawn that a result may still go under:
  // only in the calls' order, and only until another message comes, so that the page keeps
  // the context's order.
  function message(k, pending) {
    const m = D.msgs[k][1];
    const role = m.role ?? "?";
    if (role !== "toolResult") { pending.clear(); pending.last = -1; }
    const box = el("div", "msg " + role);
    box.dataset.msg = k;
    box.dataset.role = role;
    box.dataset.entry = D.msgs[k][0];
    switch (role) {
      case "user":
        box.appendChild(roleLine(m, k, "user"));
        content(box, m.content);
        break;
      case "assistant": {
        const model = m.model ? ` · ${m.provider ? m.provider + "/" : ""}${m.model}` : "";
        box.appendChild(roleLine(m, k, "assistant" + model));
        for (const b of Array.isArray(m.content) ? m.content : []) {
          if (!b || typeof b !== "object") continue;
          if (b.type === "text") box.appendChild(longText("text", b.text));
          else if (b.type === "thinking") {
            const d = el("details", "thinking");
            d.appendChild(el("summary", null, b.redacted ? "thinking (redacted)" : "thinking"));
            d.appendChild(longText("text", b.thinking));
            box.appendChild(d);
          } else if (b.type === "toolCall") {
            const d = el("details", "call");
            d.appendChild(el("summary", null, callLine(b)));
            d.appendChild(longText("out", JSON.stringify(b.arguments ?? {}, null, 2)));
            d.dataset.call = String(b.id ?? "");
            box.appendChild(d);
            pending.set(String(b.id ?? ""), { d, at: pending.size });
          } else if (b.type === "image") box.appendChild(image(b));
        }
        if (m.stopReason === "error" || m.stopReason === "aborted") {
          box.classList.add("error");
          box.appendChild(el("div", "text", `${m.stopReason}: ${m.errorMessage ?? ""}`));
        }
        break;
      }
      case "toolResult": {
        const call = pending.get(String(m.toolCallId ?? ""));
        if (call && call.at > (pending.last ?? -1)) {
          box.className = "nested" + (m.isError ? " error" : "");
          box.appendChild(roleLine(m, k, "result" + (m.isError ? " (error)" : "")));
          resultBody(box, m);
          call.d.appendChild(box);
          call.d.open = !!m.isError;
          pending.last = call.at;
          return null;
        }
        pending.clear();
        pending.last = -1;
        box.appendChild(roleLine(m, k, `tool result · ${m.toolName ?? ""}${m.isError ? " (error)" : ""}`));
        resultBody(box, m);
        break;
      }
      case "bashExecution":
        box.appendChild(roleLine(m, k, `bash · exit ${m.exitCode ?? "none"}${m.cancelled ? " (cancelled)" : ""}`));
        box.appendChild(el("pre", null, "$ " + String(m.command ?? "")));
        box.appendChild(longText("out", m.output));
        if (m.exitCode !== 0 && m.exitCode !== undefined) box.classList.add("error");
        break;
      case "compactionSummary":
        box.appendChild(roleLine(m, k, `compaction summary${m.tokensBefore ? " · " + Number(m.tokensBefore).toLocaleString() + " tokens before" : ""}`));
        box.appendChild(longText("text", m.summary));
        break;
      case "branchSummary":
        box.appendChild(roleLine(m, k, "branch summary"));
        box.appendChild(longText("text", m.summary));
        break;
      case "custom":
        box.appendChild(roleLine(m, k, "custom · " + String(m.customType ?? "")));
        content(box, m.content);
        break;
      default:
        box.appendChild(roleLine(m, k, role));
        box.appendChild(longText("out", JSON.stringify(m, null, 2)));
    }
    return box;
  }

  // The context at the shown leaf: a window of it, drawn a batch at a time as it scrolls
  // into view, the messages before the window behind a button (a context of a hundred
  // thousand messages is never drawn whole to show its end).
  const BATCH = 150;
  let first = 0, drawn = 0, pendingCalls = new Map(), sentinel = null, earlier = null;
  const observer = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) drawMore(drawn + BATCH); }, { root: $("view"), rootMargin: "800px" });

  function drawFrom(from) {
    if (sentinel) { observer.unobserve(sentinel); sentinel = null; }
    $("messages").replaceChildren();
    first = drawn = from;
    pendingCalls = new Map();
    earlier = null;
    if (from > 0) {
      earlier = el("button", "more earlier");
      earlier.addEventListener("click", drawEarlier);
      $("messages").appendChild(earlier);
      earlier.textContent = `show ${from.toLocaleString("en-US")} earlier messages`;
    }
    drawMore(from + BATCH);
  }

  function drawEarlier() {
    const list = D.leaves[current].m;
    const from = Math.max(0, first - BATCH);
    const frag = document.createDocumentFragment();
    const pending = new Map();
    for (let k = from; k < first; k++) {
      const m = message(list[k], pending);
      if (m) frag.appendChild(m);
    }
    earlier.after(frag);
    first = from;
    if (first === 0) { earlier.remove(); earlier = null; } else earlier.textContent = `show ${first.toLocaleString("en-US")} earlier messages`;
  }

  function drawMore(upTo) {
    const list = D.leaves[current].m;
    upTo = Math.min(upTo, list.length);
    if (upTo <= drawn) return;
    const box = $("messages");
    if (sentinel) { observer.unobserve(sentinel); sentinel.remove(); sentinel = null; }
    const frag = document.createDocumentFragment();
    for (; drawn < upTo; drawn++) {
      const m = message(list[drawn], pendingCalls);
      if (m) frag.appendChild(m);
    }
    box.appendChild(frag);
    if (drawn < list.length) {
      sentinel = el("div", "sentinel", "…");
      box.appendChild(sentinel);
      observer.observe(sentinel);
    }
  }

  function fmtNum(x) { return Number(x ?? 0).toLocaleString("en-US"); }
  function fmtCost(x) { return "$" + Number(x ?? 0).toFixed(x >= 1 ? 2 : 4); }
  function fmtTime(ms) { return ms === null || ms === undefined ? "" : new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC"; }

  function testBadge(run) {
    if (!run) return el("span", "badge none", "no test run");
    const ok = run.outcome === "ok" && (run.exitCode === null || run.exitCode === 0);
    const b = el("span", "badge " + (ok ? "pass" : "fail"), `${ok ? "✓ tests pass" : "✗ tests fail"} · exit ${run.exitCode ?? run.outcome}`);
    b.title = run.command;
    return b;
  }

  function fact(box, k, v) {
    const s = el("span");
    s.append(el("span", "k", k), typeof v === "object" ? v : document.createTextNode(String(v)));
    box.appendChild(s);
  }

  let leafPick = null;
  function drawFacts(l) {
    const box = $("facts");
    box.replaceChildren();
    // Every leaf, also those the tree's filter does not draw (Codex's closing events); the
    // list is made when first opened (a session of a hundred thousand branches has as many).
    if (!leafPick) {
      leafPick = el("select");
      leafPick.id = "leaf-pick";
      leafPick.setAttribute("aria-label", "Leaf");
      const fill = () => {
        if (leafPick.options.length === D.leaves.length) return;
        const frag = document.createDocumentFragment();
        D.leaves.forEach((x, k) => { const o = el("option", null, leafName(k)); o.value = k; frag.appendChild(o); });
        leafPick.replaceChildren(frag);
        leafPick.value = String(current);
      };
      for (const ev of ["mousedown", "focus", "keydown"]) leafPick.addEventListener(ev, fill);
      leafPick.addEventListener("change", () => select(D.leaves[Number(leafPick.value)].e, true));
    }
    if (leafPick.options.length !== D.leaves.length) {
      const o = el("option", null, leafName(current));
      o.value = current;
      leafPick.replaceChildren(o);
    }
    leafPick.value = String(current);
    fact(box, "leaf", leafPick);
    if (l.label) fact(box, "label", l.label);
    fact(box, "model", l.model ?? "–");
    fact(box, "tokens", fmtNum(l.tokens));
    fact(box, "cost", fmtCost(l.cost));
    fact(box, "time", fmtTime(l.time));
    const b = l.branch;
    fact(box, "files changed", b.filesModified.length ? b.filesModified.length + " (" + b.filesModified.join(", ") + ")" : "0");
    fact(box, "last test", testBadge(b.lastTestRun));
    fact(box, "messages", fmtNum(l.m.length));
  }

  function showLeaf(k) {
    if (current === k) return;
    current = k;
    const l = D.leaves[k];
    onPath = new Set();
    for (let e = l.e; e >= 0; e = D.parents[e]) onPath.add(e);
    drawFacts(l);
    drawn = -1; // (nothing of this leaf drawn yet: `select` draws the window it needs)
  }

  // Selects an entry: shows the leaf below it (the one shown already when the entry is on
  // its path, else the newest), and the entry's first message there.
  function select(entry, push) {
    if (entry < 0 || entry >= n) return;
    selected = entry;
    let k = current >= 0 && onPath.has(entry) ? current : leafFor[entry];
    if (k < 0) k = current >= 0 ? current : 0;
    showCompare(false);
    showLeaf(k);
    const list = D.leaves[current].m;
    let at = list.findIndex((m) => D.msgs[m][0] === entry);
    const note = $("note");
    if (at < 0 && entry !== D.leaves[current].e) {
      note.textContent = `Entry ${D.ids[entry] ?? "#" + D.lines[entry]} adds no message of its own to the context at this leaf (it is not a message, or the context no longer holds it, as after a compaction).`;
      note.classList.remove("hidden");
    } else note.classList.add("hidden");
    document.querySelectorAll(".msg.target, .nested.target").forEach((m) => m.classList.remove("target"));
    if (drawn < 0 || (at >= 0 && (at < first || at > drawn + BATCH))) drawFrom(at < BATCH ? 0 : at - 20);
    if (at >= 0) {
      drawMore(at + BATCH);
      const m = document.querySelector(`[data-msg="${list[at]}"]`);
      if (m) {
        m.classList.add("target");
        const call = m.closest("details");
        if (call) call.open = true;
        m.scrollIntoView({ block: "start" });
      }
    } else $("view").scrollTop = 0;
    revealRow(entry);
    drawTree();
    if (push && D.ids[entry] !== null) history.replaceState(null, "", "#" + encodeURIComponent(D.ids[entry]));
  }

  function fromHash() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (h && idIndex.has(h)) { select(idIndex.get(h), false); return true; }
    return false;
  }
  window.addEventListener("hashchange", fromHash);

  // ---- Search, as `pisces grep` on this session -------------------------------------------
  function pieces(m) {
    const out = [];
    const role = m.role;
    if (role === "user") out.push(["user", textOf(m.content)]);
    else if (role === "assistant") {
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (!b) continue;
        if (b.type === "text") out.push(["assistant", String(b.text ?? "")]);
        else if (b.type === "thinking") out.push(["thinking", String(b.thinking ?? "")]);
        else if (b.type === "toolCall") out.push(["tool-call", String(b.name ?? "") + " " + JSON.stringify(b.arguments ?? {})]);
      }
    } else if (role === "toolResult") out.push(["tool-result", textOf(m.content)]);
    else if (role === "bashExecution") out.push(["tool-result", String(m.command ?? "") + "\n" + String(m.output ?? "")]);
    else if (role === "compactionSummary" || role === "branchSummary") out.push(["assistant", String(m.summary ?? "")]);
    else if (role === "custom") out.push(["user", textOf(m.content)]);
    return out;
  }

  function runSearch() {
    const q = $("q").value;
    const res = $("results");
    res.replaceChildren();
    if (!q) { res.classList.add("hidden"); $("tree").classList.remove("hidden"); return; }
    let re;
    try {
      re = $("regex").checked ? new RegExp(q, "gi") : new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi");
    } catch (e) {
      res.appendChild(el("div", "hit", "bad pattern: " + e.message));
      res.classList.remove("hidden");
      return;
    }
    const want = $("role").value;
    const seen = new Set();
    let count = 0;
    for (let k = 0; k < D.msgs.length && count < 500; k++) {
      const [entry, m] = D.msgs[k];
      for (const [role, text] of pieces(m)) {
        if (want && role !== want) continue;
        re.lastIndex = 0;
        const hit = re.exec(text);
        if (!hit) continue;
        const key = entry + "/" + role;
        if (seen.has(key)) continue;
        seen.add(key);
        count++;
        const h = el("div", "hit");
        h.dataset.entry = entry;
        h.appendChild(el("div", "where", `${D.ids[entry] ?? "#" + D.lines[entry]} · ${role} · line ${D.lines[entry]}`));
        const from = Math.max(0, hit.index - 40);
        const snip = el("div");
        const flat = (s) => s.replace(/\s+/g, " ");
        snip.append(document.createTextNode((from > 0 ? "…" : "") + flat(text.slice(from, hit.index))));
        snip.appendChild(el("mark", null, flat(hit[0])));
        snip.append(document.createTextNode(flat(text.slice(hit.index + hit[0].length, hit.index + hit[0].length + 80))));
        h.appendChild(snip);
        res.appendChild(h);
      }
    }
    if (!count) res.appendChild(el("div", "hit", "no match"));
    res.classList.remove("hidden");
    $("tree").classList.add("hidden");
  }
  let searchTimer = 0;
  $("q").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(runSearch, 150); });
  $("regex").addEventListener("change", runSearch);
  $("role").addEventListener("change", runSearch);
  $("results").addEventListener("click", (ev) => {
    const h = ev.target.closest("[data-entry]");
    if (h) select(Number(h.dataset.entry), true);
  });

  // ---- Compare two leaves, as `pisces diff` ---------------------------------------------
  function leafName(k) {
    const l = D.leaves[k];
    const id = D.ids[l.e] ?? "#" + D.lines[l.e];
    let p = String(l.prompt ?? "").replace(/\s+/g, " ");
    if (p.length > 50) p = p.slice(0, 49) + "…";
    return `${id}${l.label ? " [" + l.label + "]" : ""}${l.e === D.defaultLeaf ? " @" : ""} ${p}`;
  }

  function fillPickers() {
    if ($("cmp-a").options.length) return;
    for (const id of ["cmp-a", "cmp-b"]) {
      const s = $(id);
      s.replaceChildren();
      D.leaves.forEach((l, k) => { const o = el("option", null, leafName(k)); o.value = k; s.appendChild(o); });
    }
  }

  function ancestors(e) { const s = []; for (; e >= 0; e = D.parents[e]) s.push(e); return s; }

  function side(k, shared) {
    const l = D.leaves[k];
    const b = l.branch;
    const box = el("div", "side");
    const h = el("h2", null, leafName(k));
    h.appendChild(testBadge(b.lastTestRun));
    box.appendChild(h);
    const t = el("table");
    const row = (a, v) => { const r = el("tr"); r.append(el("td", null, a), el("td", null, v)); t.appendChild(r); };
    row("model", l.model ?? "–");
    row("tokens", fmtNum(l.tokens));
    row("cost", fmtCost(l.cost));
    row("tool calls", fmtNum(b.toolCalls));
    row("errors", fmtNum(b.errors));
    row("files changed", b.filesModified.join(", ") || "–");
    row("last test", b.lastTestRun ? `${b.lastTestRun.command} → exit ${b.lastTestRun.exitCode ?? b.lastTestRun.outcome}` : "–");
    box.appendChild(t);
    const own = l.m.filter((m) => !shared.has(D.msgs[m][0]));
    box.appendChild(el("div", "role", `${own.length} messages after the fork point`));
    const pending = new Map();
    for (const m of own.slice(0, 400)) { const e = message(m, pending); if (e) box.appendChild(e); }
    if (own.length > 400) box.appendChild(el("div", "text", `… ${own.length - 400} more`));
    return box;
  }

  // `pisces diff A B`'s report (its summaries and turns), put together from its parts
  // (`diff::sides`): the two sides cut at the leaves' common ancestor, their turns paired
  // as the page says, else in order (the leads together, then one by one). `null` when
  // the page lacks a part (a session past the export's budget).
  function lca(x, y) {
    const on = new Set(ancestors(x));
    for (let e = y; e >= 0; e = D.parents[e]) if (on.has(e)) return e;
    return -1;
  }

  function report(a, b) {
    const fork = lca(D.leaves[a].e, D.leaves[b].e);
    const sa = D.sides[`${fork},${a}`], sb = D.sides[`${fork},${b}`];
    if (!sa || !sb) return null;
    const turn = (side, i) => (i === null || i < 0 ? null : D.turnViews[side[1][i]]);
    const prompts = (side) => new Set(side[1].map((t) => D.turnViews[t].prompt).filter(Boolean).map((p) => p.kind + "\0" + p.text));
    let pairs = D.aligns[`${Math.min(a, b)},${Math.max(a, b)}`];
    if (pairs && a > b) pairs = pairs.map(([x, y]) => [y, x]);
    if (!pairs) {
      // (Without the page's alignment the turns pair in order, unless the export stopped
      // short of aligning every pair and these have prompts in common.)
      if (!D.aligned) { const pb = prompts(sb); if ([...prompts(sa)].some((k) => pb.has(k))) return null; }
      const lead = (side) => side[1].length > 0 && !D.turnViews[side[1][0]].prompt;
      const [la, lb] = [lead(sa), lead(sb)];
      pairs = [];
      if (la || lb) pairs.push([la ? 0 : -1, lb ? 0 : -1]);
      const [ra, rb] = [sa[1].length - la, sb[1].length - lb];
      for (let d = 0; d < Math.max(ra, rb); d++) pairs.push([d < ra ? la + d : -1, d < rb ? lb + d : -1]);
    }
    const same = (x, y) => !!x && !!y && (x.prompt && y.prompt ? x.prompt.kind === y.prompt.kind && x.prompt.text === y.prompt.text : !x.prompt && !y.prompt);
    return {
      summary: { a: sa[0], b: sb[0] },
      turns: pairs.map(([i, j], k) => {
        const [ta, tb] = [turn(sa, i), turn(sb, j)];
        return { index: k + 1, a: ta, b: tb, samePrompt: same(ta, tb) };
      }),
    };
  }

  window.pisces.report = report;

  const passed = (run) => (run ? run.outcome === "ok" && (run.exitCode === null || run.exitCode === 0) : null);

  function turnSide(t) {
    const box = el("div", "side");
    if (!t) { box.appendChild(el("div", "role", "—")); return box; }
    if (t.prompt) box.appendChild(el("div", "text", "▸ " + t.prompt.text));
    for (const c of t.toolCalls) {
      const line = el("div", "out", `${c.name}(${c.target ?? ""}) → ${c.exitCode ?? c.outcome}`);
      if (c.outcome !== "ok") line.classList.add("error");
      box.appendChild(line);
    }
    if (t.reply) box.appendChild(longText("text", t.reply.text));
    return box;
  }

  function drawCompare() {
    const a = Number($("cmp-a").value), b = Number($("cmp-b").value);
    const pa = ancestors(D.leaves[a].e), pb = new Set(ancestors(D.leaves[b].e));
    const common = pa.find((e) => pb.has(e));
    const shared = new Set(common === undefined ? [] : ancestors(common));
    const out = $("cmp-out");
    out.replaceChildren();
    out.appendChild(el("p", "text", common === undefined ? "The two leaves share no entry." :
      `Shared: ${shared.size} entries, up to ${D.ids[common] ?? "#" + D.lines[common]} (line ${D.lines[common]}).`));
    const r = report(a, b);
    const sides = el("div", "sides");
    let sa, sb, pa_, pb_;
    if (r) {
      // The diff report: each side after the fork point, then the turns aligned.
      const sum = (k, s) => {
        const box = el("div", "side");
        const h = el("h2", null, leafName(k));
        h.appendChild(testBadge(s.lastTestRun ?? D.leaves[k].branch.lastTestRun));
        box.appendChild(h);
        const t = el("table");
        const row = (x, v) => { const tr = el("tr"); tr.append(el("td", null, x), el("td", null, v)); t.appendChild(tr); };
        row("entries, turns", `${fmtNum(s.entries)}, ${fmtNum(s.turns)}`);
        row("model calls, tool calls", `${fmtNum(s.modelCalls)}, ${fmtNum(s.toolCalls)}`);
        row("errors", fmtNum(s.errors));
        row("tokens, cost", `${fmtNum(s.tokens)}, ${fmtCost(s.cost)}`);
        row("models", s.models.join(", ") || "–");
        row("files changed", s.filesModified.join(", ") || "–");
        const more = s.commandCount > s.commands.length ? `${fmtNum(s.commandCount)} commands, the last: ` : "";
        row("commands", more + s.commands.map((c) => `${c.command} → ${c.exitCode ?? c.outcome}`).join("; ") || "–");
        box.appendChild(t);
        return box;
      };
      sa = sum(a, r.summary.a);
      sb = sum(b, r.summary.b);
      pa_ = passed(r.summary.a.lastTestRun ?? D.leaves[a].branch.lastTestRun);
      pb_ = passed(r.summary.b.lastTestRun ?? D.leaves[b].branch.lastTestRun);
      sides.append(sa, sb);
      out.appendChild(sides);
      const turns = el("div");
      turns.id = "cmp-turns";
      for (const t of r.turns || []) {
        const pair = el("div", "sides turn");
        pair.dataset.turn = t.index;
        pair.append(turnSide(t.a), turnSide(t.b));
        turns.appendChild(el("div", "role", `turn ${t.index}${t.samePrompt ? " · same prompt" : ""}`));
        turns.appendChild(pair);
      }
      out.appendChild(turns);
    } else {
      out.appendChild(el("p", "role", "This pair's diff report is not in the page (the export stops at a size); `pisces diff " +
        `${D.ids[D.leaves[a].e] ?? "#" + D.lines[D.leaves[a].e]} ${D.ids[D.leaves[b].e] ?? "#" + D.lines[D.leaves[b].e]}\` gives it.`));
      sa = side(a, shared);
      sb = side(b, shared);
      pa_ = passed(D.leaves[a].branch.lastTestRun);
      pb_ = passed(D.leaves[b].branch.lastTestRun);
      sides.append(sa, sb);
      out.appendChild(sides);
    }
    if (pa_ === true && pb_ !== true) sa.classList.add("better");
    if (pb_ === true && pa_ !== true) sb.classList.add("better");
  }

  function showCompare(on) {
    $("compare").classList.toggle("hidden", !on);
    $("path").classList.toggle("hidden", on);
    $("cmp-toggle").setAttribute("aria-pressed", on ? "true" : "false");
    if (on) {
      fillPickers();
      $("view").scrollTop = 0;
      $("cmp-a").value = String(current);
      if ($("cmp-b").value === $("cmp-a").value) $("cmp-b").value = String(current === 0 ? Math.min(1, D.leaves.length - 1) : 0);
      drawCompare();
    }
  }
  $("cmp-toggle").addEventListener("click", () => showCompare($("compare").classList.contains("hidden")));
  $("cmp-a").addEventListener("change", drawCompare);
  $("cmp-b").addEventListener("change", drawCompare);

  // ---- Theme ----------------------------------------------------------------------------
  $("theme").addEventListener("click", () => {
    const dark = getComputedStyle(document.documentElement).colorScheme === "dark";
    document.documentElement.dataset.theme = dark ? "light" : "dark";
  });

  // ---- Start ------------------------------------------------------------------------------
  const s = D.session;
  $("title").textContent = s.name || s.file;
  $("meta").textContent = `${s.agent} · ${s.id} · ${s.cwd ?? ""} · ${D.leaves.length} leaves · ${n.toLocaleString()} entries`;
  $("meta").title = `${s.file} — exported by ${D.generator}`;
  document.title = (s.name || s.file) + " · pisces";
  computeVisible();
  if (!D.leaves.length) {
    $("messages").appendChild(el("p", "text", "This session has no entries."));
    drawTree();
  } else if (!fromHash()) {
    const start = leafIndex.get(D.defaultLeaf) ?? D.leaves.length - 1;
    select(D.leaves[start].e, false);
  }
  // (When the page was ready, for the benchmark: milliseconds since navigation started.)
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
});
