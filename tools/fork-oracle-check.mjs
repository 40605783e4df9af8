#!/usr/bin/env node
// Live check of `pisces fork` against the real pi (run through tools/fork-oracle-check.sh).
//
// For every leaf pi computed a golden for (testdata/<corpus>/expected/<stem>/<leaf>.context.json,
// except the null leaf), in every corpus:
//   1. `pisces fork FILE REV -o NEW`;
//   2. pi opens NEW: its context at NEW's default leaf (messages, llm, model, thinking level)
//      must equal pi's context of FILE at the leaf (context.mjs NEWFILE == context.mjs FILE LEAF),
//      and its path must be FILE's path without label entries (plus the re-emitted labels);
//   3. pi's resolved labels in NEW (entries.mjs NEWFILE) must be FILE's labels of the kept path
//      entries, with the same timestamps;
//   4. pi's own createBranchedSession(LEAF) (fork.mjs) is compared line by line with NEW: the
//      same entries (as JSON values; and how many lines are byte-identical), the same header
//      fields except id and timestamp, the same labels apart from their new ids.
// Per corpus file: `pisces fork FILE --all` and `pisces fork FILE @ --linear` reopened by pi
// (every entry, the default context). Prints one line per failure and the counts.
//
// usage: node tools/fork-oracle-check.mjs PISCES SHARED_DIR [CORPUS_DIR...]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pisces, shared, ...corpusArgs] = process.argv.slice(2);
if (!pisces || !shared) {
	console.error("usage: node tools/fork-oracle-check.mjs PISCES SHARED_DIR [CORPUS_DIR...]");
	process.exit(2);
}
const oracle = (f) => pathToFileURL(resolve(shared, "pi-oracle", f)).href;
const lib = await import(oracle("lib/pi.mjs"));
lib.cli(); // re-executes under a Node that pi 1.6.0 supports
const { contextFor } = await import(oracle("context.mjs"));
const { entriesOf } = await import(oracle("entries.mjs"));
const { forkAt } = await import(oracle("fork.mjs"));

const root = resolve(new URL("..", import.meta.url).pathname);
const corpora = corpusArgs.length
	? corpusArgs.map((c) => resolve(c))
	: readdirSync(join(root, "testdata"))
			.map((d) => join(root, "testdata", d))
			.filter((d) => existsSync(join(d, "expected")))
			.sort();
const work = mkdtempSync(join(tmpdir(), "fork-oracle-"));
let n = 0;
const counts = { leaves: 0, pass: 0, refused: 0, fail: 0, piForks: 0, sameJson: 0, sameBytes: 0, lines: 0, whole: 0, wholePass: 0, piLoops: 0, wholeSkipped: 0, before: 0, beforePass: 0 };
const failures = [];

function same(a, b) {
	return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}
function canon(v) {
	if (Array.isArray(v)) return v.map(canon);
	if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]));
	return v;
}
function fail(what, detail) {
	failures.push(`${what}: ${detail}`);
	return false;
}
function runPisces(args) {
	const r = spawnSync(pisces, args, { encoding: "utf8", env: { ...process.env, HOME: "/nonexistent-home" } });
	return r;
}
function readLines(f) {
	return readFileSync(f, "utf8").split("\n").filter((l) => l.length);
}

async function checkLeaf(file, golden, leafName) {
	const v1 = golden.idsRenamedToLines === true;
	let rev, spec;
	if (leafName === "default") {
		rev = "@";
		spec = undefined;
	} else if (v1) {
		rev = `#${golden.leafLine}`;
		spec = `line:${golden.leafLine}`;
	} else {
		rev = golden.leafId;
		spec = golden.leafId;
	}
	const what = `${file.replace(root + "/", "")} ${rev}`;
	const out = join(work, `f${n++}.jsonl`);
	const r = runPisces(["fork", file, rev, "-o", out, "--format", "json"]);
	if (r.status !== 0) {
		// A leaf that is not an entry object (pi's "leaf" `42`) cannot be forked.
		if (golden.leafId === undefined && r.status === 2) {
			counts.refused++;
			return true;
		}
		return fail(what, `pisces fork exit ${r.status}: ${r.stderr.trim()}`);
	}
	const src = await contextFor(file, spec, { lineIds: true });
	const got = await contextFor(out, undefined, { lineIds: true });
	for (const k of ["messages", "llm", "model", "thinkingLevel"]) {
		if (!same(got[k], src[k])) return fail(what, `context.mjs NEWFILE differs in ${k}`);
	}
	// pi's entries.mjs walks every branch; on a parent cycle it loops (pi has no guard), so
	// then the entry types come from the raw lines and the labels are not compared.
	let srcEntries;
	try {
		srcEntries = await entriesOf(file, { lineIds: true });
	} catch (e) {
		counts.piLoops++;
		const entries = [];
		for (const l of readFileSync(file, "utf8").split("\n")) {
			try {
				const v = JSON.parse(l);
				if (v && typeof v === "object" && v.type !== "session") entries.push(v);
			} catch {}
		}
		srcEntries = { entries, labels: null, defaultLeafId: src.leafId };
	}
	const newEntries = await entriesOf(out);
	const typeOf = new Map(srcEntries.entries.map((e) => [e.id, e.type]));
	const keptPath = src.pathIds.filter((id) => typeOf.get(id) !== "label");
	const newTypes = new Map(newEntries.entries.map((e) => [e.id, e.type]));
	const newPath = got.pathIds.filter((id) => newTypes.get(id) !== "label");
	if (!same(newPath, keptPath)) return fail(what, `path ${JSON.stringify(newPath)} != ${JSON.stringify(keptPath)}`);
	const kept = new Set(keptPath);
	if (srcEntries.labels === null) return true;
	const wantLabels = Object.fromEntries(Object.entries(srcEntries.labels).filter(([t]) => kept.has(t)));
	const wantTimes = Object.fromEntries(Object.entries(srcEntries.labelTimestamps).filter(([t]) => kept.has(t)));
	if (!same(newEntries.labels, wantLabels)) return fail(what, `labels ${JSON.stringify(newEntries.labels)} != ${JSON.stringify(wantLabels)}`);
	if (!same(newEntries.labelTimestamps, wantTimes)) return fail(what, "label timestamps differ");
	if (newEntries.header.parentSession !== resolve(file)) return fail(what, `parentSession ${newEntries.header.parentSession}`);

	// --before the last user message of the path (pi's /fork): the context at its parent,
	// and its text (text blocks joined with nothing) on stdout.
	const byId = new Map(srcEntries.entries.map((e) => [e.id, e]));
	const k = src.pathIds.findLastIndex((id) => byId.get(id)?.type === "message" && byId.get(id).message?.role === "user");
	if (k >= 0) {
		const u = byId.get(src.pathIds[k]);
		const before = join(work, `b${n++}.jsonl`);
		const rb = runPisces(["fork", file, v1 ? `#${u.line}` : u.id, "--before", "-o", before]);
		const c = u.message.content;
		const text = typeof c === "string" ? c : c.filter((p) => p.type === "text" && typeof p.text === "string").map((p) => p.text).join("");
		if (rb.status !== 0) return fail(`${what} --before`, rb.stderr.trim());
		if (rb.stdout !== (text.endsWith("\n") ? text : `${text}\n`)) return fail(`${what} --before`, `printed ${JSON.stringify(rb.stdout)}`);
		counts.before++;
		const be = await entriesOf(before);
		if (k === 0) {
			if (be.entries.length !== 0 || be.header.parentSession !== resolve(file)) return fail(`${what} --before`, "not an empty session");
		} else {
			const parent = byId.get(src.pathIds[k - 1]);
			const want = await contextFor(file, v1 ? `line:${parent.line}` : parent.id, { lineIds: true });
			const gotB = await contextFor(before, undefined);
			for (const key of ["messages", "llm", "model", "thinkingLevel"]) {
				if (!same(gotB[key], want[key])) return fail(`${what} --before`, `context differs in ${key}`);
			}
		}
		counts.beforePass++;
		rmSync(before, { force: true });
	}

	// pi's own fork of the same leaf, line by line (v1 files: pi's ids are random, skip).
	if (!v1) {
		const piDir = join(work, `pi${n}`);
		const pi = await forkAt(file, spec ?? srcEntries.defaultLeafId, piDir);
		if (pi.written) {
			counts.piForks++;
			const a = readLines(out);
			const b = readLines(pi.file);
			if (a.length !== b.length) return fail(what, `${a.length} lines, pi's fork has ${b.length}`);
			const ha = JSON.parse(a[0]);
			const hb = JSON.parse(b[0]);
			if (!same({ ...ha, id: 0, timestamp: 0 }, { ...hb, id: 0, timestamp: 0 }) || Object.keys(ha).join() !== Object.keys(hb).join())
				return fail(what, `header ${a[0]} vs pi ${b[0]}`);
			let jsonSame = true;
			let bytesSame = 0;
			const labelIds = new Map(); // our new label id -> pi's
			for (let i = 1; i < a.length; i++) {
				const ea = JSON.parse(a[i]);
				const eb = JSON.parse(b[i]);
				if (ea.type === "label" && eb.type === "label" && !typeOf.has(ea.id)) {
					labelIds.set(ea.id, eb.id);
					ea.id = eb.id;
					if (labelIds.has(ea.parentId)) ea.parentId = labelIds.get(ea.parentId);
				} else if (a[i] === b[i]) bytesSame++;
				if (!same(ea, eb) || Object.keys(ea).join() !== Object.keys(eb).join()) {
					jsonSame = false;
					fail(what, `line ${i + 1} differs from pi's fork:\n    ours ${a[i].slice(0, 200)}\n    pi's ${b[i].slice(0, 200)}`);
					break;
				}
			}
			if (!jsonSame) return false;
			counts.sameJson++;
			counts.lines += a.length - 1 - labelIds.size;
			counts.sameBytes += bytesSame;
		}
		rmSync(piDir, { recursive: true, force: true });
	}
	rmSync(out, { force: true });
	return true;
}

async function checkWhole(file) {
	const what = `${file.replace(root + "/", "")}`;
	let src;
	try {
		src = await entriesOf(file, { lineIds: true });
	} catch {
		counts.wholeSkipped++;
		return true; // pi cannot list this file's entries (it loops on a cycle): nothing to compare with
	}
	// --all: every entry (migrated), reopened by pi, with the same default context.
	const all = join(work, `a${n++}.jsonl`);
	let r = runPisces(["fork", file, "--all", "--cwd", "/tmp/elsewhere", "-o", all]);
	if (r.status !== 0) return fail(`${what} --all`, r.stderr.trim());
	const got = await entriesOf(all);
	const strip = (es) => es.map(({ line, ...e }) => e);
	if (!same(strip(got.entries), strip(src.entries))) return fail(`${what} --all`, "entries differ");
	if (got.header.cwd !== "/tmp/elsewhere" || got.header.parentSession !== resolve(file)) return fail(`${what} --all`, "header");
	if (src.entries.length) {
		const a = await contextFor(all, undefined);
		const b = await contextFor(file, undefined, { lineIds: true });
		for (const k of ["messages", "llm", "model", "thinkingLevel"]) if (!same(a[k], b[k])) return fail(`${what} --all`, `context differs in ${k}`);
	}
	// --linear: pi's /export shape: same id, no parentSession, the branch chained.
	const lin = join(work, `l${n++}.jsonl`);
	r = runPisces(["fork", file, "@", "--linear", "-o", lin]);
	if (r.status !== 0) {
		if (src.entries.length && typeof src.defaultLeafId === "string") return fail(`${what} --linear`, r.stderr.trim());
	} else {
		const le = await entriesOf(lin);
		if (le.header.id !== src.header.id || "parentSession" in le.header) return fail(`${what} --linear`, "header");
		const a = await contextFor(lin, undefined);
		const b = await contextFor(file, undefined, { lineIds: true });
		for (const k of ["messages", "llm", "model", "thinkingLevel"]) if (!same(a[k], b[k])) return fail(`${what} --linear`, `context differs in ${k}`);
		const chain = le.entries.every((e, i) => e.parentId === (i ? le.entries[i - 1].id : null));
		if (!chain) return fail(`${what} --linear`, "not chained linearly");
	}
	return true;
}

for (const corpus of corpora) {
	const stems = readdirSync(join(corpus, "expected")).sort();
	for (const stem of stems) {
		const file = join(corpus, `${stem}.jsonl`);
		if (!existsSync(file)) continue;
		const goldens = readdirSync(join(corpus, "expected", stem))
			.filter((g) => g.endsWith(".context.json") && g !== "null.context.json")
			.sort();
		for (const g of goldens) {
			const golden = JSON.parse(readFileSync(join(corpus, "expected", stem, g), "utf8"));
			counts.leaves++;
			let ok;
			try {
				ok = await checkLeaf(file, golden, g.replace(/\.context\.json$/, ""));
			} catch (e) {
				ok = fail(`${stem} ${g}`, `threw ${e?.stack ?? e}`);
			}
			if (ok) counts.pass++;
			else counts.fail++;
		}
		counts.whole++;
		try {
			if (await checkWhole(file)) counts.wholePass++;
		} catch (e) {
			fail(`${stem} --all/--linear`, `threw ${e?.stack ?? e}`);
		}
	}
}
rmSync(work, { recursive: true, force: true });
for (const f of failures) console.log(`FAIL ${f}`);
console.log(
	`leaves: ${counts.pass - counts.refused}/${counts.leaves} forks pass, ${counts.refused} refused (pi's leaf there is not an entry), ${counts.fail} fail` +
		` (${counts.piLoops} with labels not compared: pi's entries.mjs loops on the source's cycle)\n` +
		`--before the last user message of each leaf's path: ${counts.beforePass}/${counts.before} pass\n` +
		`pi's own createBranchedSession: ${counts.sameJson}/${counts.piForks} forks with the same entries as JSON; ` +
		`${counts.sameBytes}/${counts.lines} copied lines byte-identical to pi's\n` +
		`files: ${counts.wholePass - counts.wholeSkipped}/${counts.whole} pass --all and --linear` +
		` (${counts.wholeSkipped} not comparable: pi loops reading the source)`,
);
process.exit(failures.length ? 1 : 0);
