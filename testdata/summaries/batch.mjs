#!/usr/bin/env node
// batch.mjs CASES.json: runs many pi-oracle cases in one Node process (loading pi once)
// and writes each golden. A case is {out, script, file, args}: the golden is what
// `node ORACLE/<script> testdata/<file> <args> --line-ids` prints (the same exported
// function, the same options), re-indented with 1 space, with `file` relative to
// testdata/ and `oracle: {script, args}` added; real/ goldens leave out the message arrays
// (their counts stay) and branch goldens the raw entries (they are in the session file).
// Cases with --apply run as separate processes (pi's AgentSession on a temp copy).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TESTDATA = path.dirname(HERE);
const ORACLE = process.env.PI_ORACLE_DIR ?? path.join(path.dirname(path.dirname(TESTDATA)), "shared", "pi-oracle");
const { ensureNode, parseArgs } = await import(path.join(ORACLE, "lib", "pi.mjs"));
ensureNode();
const { compactionOf } = await import(path.join(ORACLE, "compaction.mjs"));
const { branchEntries } = await import(path.join(ORACLE, "branch-entries.mjs"));

const num = (v) => (v === undefined ? undefined : Number(v));

function options(script, args) {
	if (script === "compaction.mjs") {
		const { positionals, flags } = parseArgs(args, ["keep-recent", "reserve", "custom-instructions"]);
		return [positionals, {
			keepRecentTokens: num(flags["keep-recent"]),
			reserveTokens: num(flags.reserve),
			customInstructions: flags["custom-instructions"],
			apply: !!flags.apply,
			lineIds: true,
		}];
	}
	const { positionals, flags } = parseArgs(args, ["context-window", "reserve-tokens", "budget", "custom-instructions", "label"]);
	return [positionals, {
		contextWindow: num(flags["context-window"]),
		reserveTokens: num(flags["reserve-tokens"]),
		budget: num(flags.budget),
		customInstructions: flags["custom-instructions"],
		replaceInstructions: !!flags["replace-instructions"],
		label: flags.label,
		apply: !!flags.apply,
		lineIds: true,
	}];
}

function finish(d, c) {
	d.file = c.file;
	d.oracle = { script: c.script, args: c.args };
	if (c.file.startsWith("real/")) {
		const p = d.preparation ?? {};
		for (const k of ["messagesToSummarize", "turnPrefixMessages"]) if (k in p) p[k] = null;
		if (d.prepared) d.prepared.messages = null;
	}
	if (c.script === "branch-entries.mjs") delete d.entries;
	const dest = path.join(HERE, c.out);
	fs.mkdirSync(path.dirname(dest), { recursive: true });
	fs.writeFileSync(dest, `${JSON.stringify(d, null, 1)}\n`);
}

const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
let failures = [];
for (const [n, c] of cases.entries()) {
	const file = path.join(TESTDATA, c.file);
	const before = fs.readFileSync(file);
	try {
		let d;
		if (c.args.includes("--apply")) {
			const r = spawnSync(process.execPath, [path.join(ORACLE, c.script), file, ...c.args, "--line-ids"], {
				encoding: "utf8",
				maxBuffer: 1 << 30,
				timeout: 120000,
			});
			if (r.status !== 0) throw new Error(r.stderr.trim().split("\n").slice(-3).join(" | "));
			d = JSON.parse(r.stdout);
		} else {
			const [pos, opts] = options(c.script, c.args);
			d = c.script === "compaction.mjs" ? await compactionOf(file, pos[0], opts) : await branchEntries(file, pos[0], pos[1], opts);
			d = JSON.parse(JSON.stringify(d));
		}
		finish(d, c);
	} catch (e) {
		failures.push(`${c.out}\t${String(e.message ?? e).split("\n")[0]}`);
		process.stderr.write(`${c.out}: the oracle failed: ${e.message ?? e}\n`);
	}
	if (!fs.readFileSync(file).equals(before)) throw new Error(`the oracle modified ${c.file}`);
	if ((n + 1) % 100 === 0) process.stderr.write(`${n + 1}/${cases.length}\n`);
}
fs.writeFileSync(path.join(HERE, "oracle-failures.txt"), failures.length ? `${failures.join("\n")}\n` : "");
process.stderr.write(`${cases.length - failures.length} goldens, ${failures.length} failures\n`);
