// 01-tools-branch: a read tool call and its result with omp's `custom` tool_execution_start entry
// between them; a user rename (title line + title_change), a second rename (previousTitle), a
// label, and a branch: two children of the first user message.
import { finish, findEntry, isAssistant, isUser, setup, turn, writeWork } from "../lib";

const input = writeWork("input.txt", "hello from input.txt\n");
const s = await setup({
	mock: {
		responses: [
			{
				content: [
					{ type: "thinking", thinking: "I should read the file." },
					"Reading it.",
					{ type: "toolCall", name: "read", arguments: { path: input } },
				],
				usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120 },
			},
			{ content: ["The file says hello."], usage: { input: 150, output: 10, totalTokens: 160 } },
			{ content: ["Second branch answer."], usage: { input: 90, output: 5, totalTokens: 95 } },
		],
	},
});
await turn(s, "Please read input.txt");
await s.manager.setSessionName("Reading input", "user");
await s.manager.setSessionName("Scripted omp run", "user", "rename");
// an auto title after a user title is ignored by omp (setSessionName returns false)
console.log("AUTO_TITLE_ACCEPTED", await s.manager.setSessionName("auto title", "auto"));
const answer = findEntry(s, isAssistant("The file says hello."));
s.manager.appendLabelChange(answer.id, "first answer");
const firstUser = findEntry(s, isUser("Please read"));
s.manager.branch(firstUser.id);
await turn(s, "Another question on a branch");
await finish(s, "01-tools-branch");
