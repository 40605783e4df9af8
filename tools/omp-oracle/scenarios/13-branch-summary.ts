// 13-branch-summary: /tree navigation with a summary (AgentSession.navigateTree(target,
// {summarize: true})): omp asks the model to summarize the abandoned branch and writes a
// branch_summary entry (fromId, summary) as a child of the target; the next turn continues
// from it.
import { finish, findEntry, isAssistant, setup, turn } from "../lib";

const s = await setup({
	mock: {
		handler: (ctx: any) => {
			// omp's summarizer calls offer no tools
			if (!ctx.tools || ctx.tools.length === 0)
				return { content: ["## Branch summary\nThe user asked about plan B; it was dropped."] };
			const n = ctx.messages.filter((m: any) => m.role === "user").length;
			return { content: [`Answer ${n}.`] };
		},
	},
});
await turn(s, "Plan A please");
await turn(s, "Now plan B");
const first = findEntry(s, isAssistant("Answer 1."));
const nav = await s.session.navigateTree(first.id, { summarize: true });
console.log("NAV", JSON.stringify(nav).slice(0, 300));
await turn(s, "Back to plan A, continue");
await finish(s, "13-branch-summary");
