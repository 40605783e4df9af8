// 14-snapcompact: a manual compaction with omp's default method order (remote, snapcompact,
// handoff, shake, soft). The mock takes images and there is no server compaction, so omp
// picks snapcompact: no model call, the older history is rendered onto PNG frames kept as
// blobs (`preserveData.snapcompact`), with its oldest and newest text kept as text. Enough
// turns that the frames cost less than the text (else omp refuses, "would not reduce
// context locally"); a small keepRecentTokens keeps the tail short.
//
// A second file is DERIVED from it: the same lines, one frame's blob reference pointing at a
// blob that is not in the store, as when the blobs folder lost a file, and a session id of its
// own. omp's context then shows that frame as "unavailable here".
import * as fs from "node:fs";
import * as path from "node:path";
import { finish, prose, setup, turn } from "../lib";

let n = 0;
const s = await setup({
	mock: {
		contextWindow: 200000,
		handler: (ctx: any) => {
			if (!ctx.tools || ctx.tools.length === 0) {
				return { content: ["## Goal\nA summary.\n## Progress\nDone."], usage: { input: 500, output: 30 } };
			}
			n++;
			return { content: [`Answer ${n}. ${prose(6000, n)}`], usage: { input: 1000 * n, output: 2000 } };
		},
	},
	settings: { "compaction.keepRecentTokens": 2000 },
});
for (let i = 1; i <= 5; i++) await turn(s, `Question ${i}: ${prose(150, 100 + i)}`);
const r = await s.session.compact();
console.log("COMPACT", JSON.stringify(r).slice(0, 300));
const compaction = s.manager.getEntries().find((e: any) => e.type === "compaction") as any;
if (compaction?.method !== "snapcompact") throw new Error(`not a snapcompact compaction: ${compaction?.method}`);
console.log("FRAMES", compaction.preserveData.snapcompact.frames.length);
await turn(s, "Question after the compaction");
const file = s.manager.getSessionFile()!;
await finish(s, "14-snapcompact");

const lines = fs.readFileSync(file, "utf8").split("\n");
const k = lines.findIndex(l => l.includes('"type":"compaction"'));
const entry = JSON.parse(lines[k]);
const frames = entry.preserveData.snapcompact.frames;
frames[frames.length - 1].data = `blob:sha256:${"0".repeat(64)}`;
lines[k] = JSON.stringify(entry);
// A session id of its own (the header's last 12 digits), so that the two are two sessions.
const h = lines.findIndex(l => l.startsWith('{"type":"session"'));
const header = JSON.parse(lines[h]);
header.id = `${header.id.slice(0, -12)}000000000001`;
lines[h] = JSON.stringify(header);
const derived = path.join(path.dirname(file), `${path.basename(file).split("_")[0]}_${header.id}.jsonl`);
fs.writeFileSync(derived, lines.join("\n"));
console.log(`SESSION_FILE 14-snapcompact-missing-frame ${derived}`);
