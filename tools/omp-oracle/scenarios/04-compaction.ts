// 04-compaction: two compactions through AgentSession.compact() (method "soft": the summary
// comes from the mock), with turns before, between and after. compaction.keepRecentTokens is
// small so the first compaction keeps a short tail (firstKeptEntryId) and the second one keeps
// what omp decides.
import { finish, prose, setup, turn } from "../lib";

const answers = [
	`First answer. ${prose(150, 1)}`,
	`Second answer. ${prose(150, 2)}`,
	`Third answer. ${prose(150, 3)}`,
	`Fourth answer. ${prose(150, 4)}`,
	"Fifth answer, after two compactions.",
];
let summaries = 0;
const s = await setup({
	mock: {
		contextWindow: 200000,
		handler: (ctx: any) => {
			// omp's summarizer calls offer no tools
			if (!ctx.tools || ctx.tools.length === 0) {
				summaries++;
				return {
					content: [`## Goal\nTest compaction ${summaries}.\n## Progress\nDone ${summaries}.`],
					usage: { input: 500, output: 30 },
				};
			}
			const a = answers.shift() ?? "fallback";
			return { content: [a], usage: { input: 1000, output: 300 } };
		},
	},
	settings: { "compaction.keepRecentTokens": 200, "compaction.methodOrder": ["soft"] },
});
await turn(s, "Question one");
await turn(s, "Question two");
try {
	const r = await s.session.compact("keep it short");
	console.log("COMPACT1", JSON.stringify(r).slice(0, 300));
} catch (e) {
	console.log("COMPACT1_ERR", String(e).slice(0, 300));
}
await turn(s, "Question three");
await turn(s, "Question four");
try {
	const r = await s.session.compact();
	console.log("COMPACT2", JSON.stringify(r).slice(0, 300));
} catch (e) {
	console.log("COMPACT2_ERR", String(e).slice(0, 300));
}
await turn(s, "Question five");
await finish(s, "04-compaction");
