// 15-snapcompact-shapes: odd and old snapcompact archives, as omp reads them. omp writes a small
// session with a compaction (method "soft", two turns before it and one after); the files
// named `15-shape-*` are DERIVED from it: the compaction's `method` set to "snapcompact" and its
// `preserveData` replaced by one archive shape each (frames that are not frames, a reference
// that names no valid blob, frames over the request budget, an archive from before
// frames carried their shape, data URLs in the archived text, text fields of the wrong type),
// and a session id of its own. They check how omp's context rebuilds such archives
// (`historyBlocks`: notices, budget, elision), which a live run writes only rarely.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { finish, prose, setup, turn } from "../lib";

const s = await setup({
	mock: {
		handler: (ctx: any) => {
			if (!ctx.tools || ctx.tools.length === 0) return { content: ["## Goal\nShapes.\n## Progress\nDone."], usage: { input: 50, output: 5 } };
			return { content: [`An answer. ${prose(120, ctx.messages.length)}`], usage: { input: 100, output: 20 } };
		},
	},
	settings: { "compaction.keepRecentTokens": 100, "compaction.methodOrder": ["soft"] },
});
await turn(s, "First question");
await turn(s, "Second question");
await s.session.compact();
await turn(s, "After the compaction");
const file = s.manager.getSessionFile()!;
await finish(s, "15-snapcompact-shapes");

// A blob priced over the 3,000,000-byte budget by its size alone (2,300,000 bytes are
// 3,066,668 of base64): omp leaves such a frame out without reading it, so it holds zeros.
const BIG = "b".repeat(64);
fs.mkdirSync(path.join(os.homedir(), ".omp", "agent", "blobs"), { recursive: true });
fs.writeFileSync(path.join(os.homedir(), ".omp", "agent", "blobs", BIG), Buffer.alloc(2_300_000));
const frame = (data: string, extra: Record<string, unknown> = {}) => ({ data, mimeType: "image/png", cols: 196, rows: 71, chars: 13916, ...extra });
const shaped = { font: "8x13", variant: "bw" };
const shapes: Record<string, unknown> = {
	"not-frames": { snapcompact: { frames: [null, 1, "s", [], { data: 5 }, { data: "" }], textHead: "head only" } },
	"bad-refs": {
		snapcompact: {
			frames: [frame("blob:sha256:../../etc/passwd", shaped), frame(`blob:sha256:${"A".repeat(64)}`, shaped), frame("iVBORw0KGgo=", { ...shaped, detail: "high" })],
			textTail: "the tail",
		},
	},
	"over-budget": {
		snapcompact: {
			frames: [frame(`blob:sha256:${BIG}`, shaped), frame(`blob:sha256:${BIG}`, shaped), frame("iVBORw0KGgo=", shaped)],
			textHead: "head",
			textTail: "tail",
		},
	},
	legacy: {
		snapcompact: {
			frames: Array.from({ length: 16 }, (_, k) => frame(`F${k}`)),
			truncatedChars: 2_000_000,
			textHead: "old head",
			textTail: "old tail",
		},
	},
	"data-urls": {
		snapcompact: {
			textHead:
				"a ![shot](data:image/png;base64,iVBORw0KGgo=) b [doc]( \u00a0DATA:text/plain;charset=utf-8;BASE64,QUJD [\u2026123ch elided\u2026] REVG) c data:image/png;base64, ](data:a/b;base64,ZZ",
			textTail: "\u2588\u000e\u000fend \u00e9 data:image/png;base64,AAAA)",
			truncatedChars: 10,
		},
	},
	"wrong-types": { snapcompact: { textHead: 5, textTail: null, text: [], truncatedChars: "9" } },
};
const lines = fs.readFileSync(file, "utf8").split("\n");
const k = lines.findIndex(l => l.includes('"type":"compaction"'));
const h = lines.findIndex(l => l.startsWith('{"type":"session"'));
let n = 0;
for (const [name, preserveData] of Object.entries(shapes)) {
	n++;
	const entry = JSON.parse(lines[k]);
	entry.method = "snapcompact";
	entry.preserveData = preserveData;
	const header = JSON.parse(lines[h]);
	header.id = `${header.id.slice(0, -12)}${String(n).padStart(12, "0")}`;
	const out = [...lines];
	out[k] = JSON.stringify(entry);
	out[h] = JSON.stringify(header);
	const derived = path.join(path.dirname(file), `${path.basename(file).split("_")[0]}_${header.id}.jsonl`);
	fs.writeFileSync(derived, out.join("\n"));
	console.log(`SESSION_FILE 15-shape-${name} ${derived}`);
}
