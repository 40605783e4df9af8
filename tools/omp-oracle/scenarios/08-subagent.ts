// 08-subagent: omp's `task` tool spawns a subagent (agent "task", name "Helper") whose transcript
// omp writes to <session>/Helper.jsonl (header with parentSession = the parent's file path, a
// session_init entry, its turns) plus <session>/Helper.md. The task runs as a background job; its
// result comes back to the parent as a custom_message "async-result". Provider "mock" is
// registered in omp's ModelRegistry so the subagent's model pattern resolves to the mock.
import { finish, setup, turn, writeWork } from "../lib";

const input = writeWork("input.txt", "hello from input.txt\n");
const s = await setup({
	registerProvider: true,
	mock: {
		responses: [
			{
				content: [
					"Delegating.",
					{ type: "toolCall", name: "task", arguments: { agent: "task", name: "Helper", task: "Read input.txt and report." } },
				],
			},
		],
		handler: (ctx: any) => {
			const tools: string[] = (ctx.tools ?? []).map((t: any) => t.name);
			const results = ctx.messages.filter((m: any) => m.role === "toolResult").map((m: any) => m.toolName);
			if (tools.includes("yield")) {
				// the subagent: read, then yield
				if (!results.includes("read"))
					return { content: ["Reading.", { type: "toolCall", id: "sub-tc-1", name: "read", arguments: { path: input } }] };
				if (!results.includes("yield"))
					return {
						content: [
							"Done.",
							{ type: "toolCall", id: "sub-tc-2", name: "yield", arguments: { data: { says: "hello from input.txt" } } },
						],
					};
				return { content: ["Submitted."] };
			}
			return { content: ["The helper reports: hello from input.txt."] };
		},
	},
	toolNames: ["read", "task"],
});
await turn(s, "Ask a helper to read input.txt");
await s.session.settleAsyncWork();
await Bun.sleep(2000);
await s.session.agent.waitForIdle();
await finish(s, "08-subagent");
