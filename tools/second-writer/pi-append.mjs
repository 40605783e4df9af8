#!/usr/bin/env node
// pi-append.mjs FILE N: the real pi (the shared pi-oracle's install) opens FILE itself (not
// a copy: this is the second writer) and appends N user messages to it, one entry per
// append, as its SessionManager does in a live session. pisces appends to the same file
// meanwhile (tools/second-writer/run.sh). Prints the ids pi wrote, one per line.
import { resolve } from "node:path";
import { loadPi, ensureNode } from "../../../shared/pi-oracle/lib/pi.mjs";

ensureNode();
const [file, n] = process.argv.slice(2);
if (!file || !n) {
	console.error("usage: pi-append.mjs FILE N");
	process.exit(2);
}
const pi = await loadPi();
const sm = pi.index.SessionManager.open(resolve(file), resolve(file, "..", "sessions"));
for (let i = 0; i < Number(n); i++) {
	const id = sm.appendMessage({ role: "user", content: [{ type: "text", text: `pi append ${i}` }], timestamp: Date.now() });
	console.log(id);
	// A few milliseconds apart, as a live session's entries are, so that pisces's appends
	// land between them.
	await new Promise((r) => setTimeout(r, 8));
}
