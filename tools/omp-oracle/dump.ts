// dump.ts FILE [--rel NAME] [--out OUT]: omp 18.2.3's own reading of one session file, as JSON
// (to OUT, else stdout).
//
// The file is opened with omp's SessionManager.open (session-manager.ts: loadSessionFile ->
// parseSessionContent folds the 256-byte title slot into the header, migrateToCurrentVersion,
// resolveBlobRefsInEntries against getBlobsDir() = $HOME/.omp/agent/blobs, builds the entry
// index whose leaf is the last entry). Every context is omp's buildSessionContext from
// session-context.ts in the LLM-context mode (not transcript mode), called as
// SessionManager.buildSessionContext calls it: buildSessionContext(manager.getEntries(), leaf,
// undefined, {resolveFrameData}), where resolveFrameData is omp's lazyImageDataSync over the blob
// store (getBlobsDir()). That option is how omp itself puts a snapcompact archive's frames back
// from their blobs when it rebuilds the context (the loader leaves frames as references).
// Nothing here reimplements omp's rules.
//
// A `.jsonl.gz` (omp gc's archive) is gunzipped to a scratch `.jsonl` beside it first: omp itself
// only ever reads archived sessions' headers (gc-cli.ts scanArchivedSession), so the golden of an
// archive is omp's reading of its decompressed bytes.
//
// Run it with HOME set to a scratch copy of the fake home (oracle.py goldens does), so the
// blobs come from that home and omp's side files (breadcrumbs, title index) land in scratch.
import * as fs from "node:fs";
import * as path from "node:path";
import { gunzipSync } from "node:zlib";
import { getBlobsDir } from "@oh-my-pi/pi-utils";
import { BlobStore, lazyImageDataSync } from "@oh-my-pi/pi-coding-agent/session/blob-store";
import { convertToLlm } from "@oh-my-pi/pi-coding-agent/session/messages";
import { buildSessionContext } from "@oh-my-pi/pi-coding-agent/session/session-context";
import type { SessionTreeNode } from "@oh-my-pi/pi-coding-agent/session/session-entries";
import { listSessions } from "@oh-my-pi/pi-coding-agent/session/session-listing";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";
import { FileSessionStorage } from "@oh-my-pi/pi-coding-agent/session/session-storage";

const args = process.argv.slice(2);
let file = args[0];
if (!file) {
	console.error("usage: dump.ts FILE [--rel NAME] [--out OUT]");
	process.exit(2);
}
const relIdx = args.indexOf("--rel");
const rel = relIdx >= 0 ? args[relIdx + 1] : file;
const outIdx = args.indexOf("--out");
const outFile = outIdx >= 0 ? args[outIdx + 1] : undefined;

let archived = false;
if (file.endsWith(".jsonl.gz")) {
	archived = true;
	const plain = file.slice(0, -".gz".length);
	fs.writeFileSync(plain, gunzipSync(fs.readFileSync(file)));
	file = plain;
}

const manager = await SessionManager.open(path.resolve(file), undefined, undefined, { suppressBreadcrumb: true });
const entries = manager.getEntries();
const header = manager.getHeader();

// omp's list view (session-listing.ts scanSessionFile): the title it shows in /resume, which
// falls back to a compaction's shortSummary when there is no title.
let listTitle: string | null = null;
let listFound = false;
if (!archived) {
	const infos = await listSessions(path.dirname(path.resolve(file)), new FileSessionStorage());
	const info = infos.find(i => path.resolve(i.path) === path.resolve(file));
	if (info) {
		listFound = true;
		listTitle = info.title ?? null;
	}
}

function flatten(nodes: SessionTreeNode[], depth: number, out: unknown[]): void {
	for (const node of nodes) {
		const row: Record<string, unknown> = {
			id: node.entry.id,
			parentId: node.entry.parentId,
			type: node.entry.type,
			depth,
		};
		if (node.label !== undefined) row.label = node.label;
		out.push(row);
		flatten(node.children, depth + 1, out);
	}
}
const tree: unknown[] = [];
flatten(manager.getTree(), 0, tree);

const defaultLeaf = manager.getLeafId();
const blobs = new BlobStore(getBlobsDir());
function context(leaf: string | null, isDefault = false) {
	const ctx = buildSessionContext(entries, leaf, undefined, {
		resolveFrameData: (data: string) => lazyImageDataSync(blobs, data),
	});
	const row: Record<string, unknown> = { leaf };
	if (isDefault) row.default = true;
	// What omp's agent hands its provider for these messages (session/messages.ts): omp's own
	// conversion, not pi's (developer messages, bash and python runs, file mentions, …).
	return { ...row, ...ctx, llm: convertToLlm(ctx.messages) };
}
const contexts = [context(null), context(defaultLeaf, true), ...entries.map(e => context(e.id))];

const out = {
	file: rel,
	omp: "18.2.3",
	archived: archived || undefined,
	sessionId: manager.getSessionId(),
	title: manager.getSessionName() ?? null,
	titleSource: header?.titleSource ?? null,
	listTitle: listFound ? listTitle : undefined,
	header,
	leafId: defaultLeaf,
	tree,
	contexts,
};
// One line per top-level key, per tree row and per context: small and diffable.
const lines: string[] = [];
const keys = Object.entries(out).filter(([, v]) => v !== undefined);
keys.forEach(([k, v], i) => {
	const comma = i < keys.length - 1 ? "," : "";
	if (Array.isArray(v) && (k === "tree" || k === "contexts")) {
		lines.push(`${JSON.stringify(k)}: [`);
		v.forEach((row, j) => lines.push(`  ${JSON.stringify(row)}${j < v.length - 1 ? "," : ""}`));
		lines.push(`]${comma}`);
	} else {
		lines.push(`${JSON.stringify(k)}: ${JSON.stringify(v)}${comma}`);
	}
});
const text = `{\n${lines.join("\n")}\n}\n`;
if (outFile) fs.writeFileSync(outFile, text);
else await Bun.write(Bun.stdout, text);
// No flush/close: reading must not rewrite the file (a migrated file would be rewritten on the
// next append; nothing is appended here).
process.exit(0);
