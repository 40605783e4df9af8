// 05-errors-dangling: failed assistant turns and tool calls without results on the path.
// - q1: the provider ends the turn with stopReason "error" after some text (retry off);
// - q2: an "error" turn that had emitted a tool call (omp pairs it with a synthetic result);
// - q3: the stream throws at once: an empty "error" turn (isEmptyErrorTurn);
// - q4: the user aborts (AgentSession.abort) a slow reply: stopReason "aborted";
// - q5: a normal read call, result, answer;
// - navigateTree back to q5's assistant turn (the one with the call) and a new question q6:
//   the call's result is now on a sibling branch;
// - navigateTree to q5's assistant turn again and dispose: the default leaf (session_exit) is a
//   child of the assistant turn, so its call has no result on the default path.
import { finish, findEntry, isAssistant, setup, turn, writeWork } from "../lib";

const input = writeWork("input.txt", "hello from input.txt\n");
const s = await setup({
	mock: {
		responses: [
			{ content: ["Partial answer before the failure"], stopReason: "error", errorMessage: "upstream overloaded" },
			{
				content: ["Let me read it.", { type: "toolCall", id: "call-err", name: "read", arguments: { path: input } }],
				stopReason: "error",
				errorMessage: "stream cut mid-turn",
			},
			{ throw: "connection reset" },
			{ content: ["This reply takes long"], delayMs: 5000 },
			{ content: ["Reading it.", { type: "toolCall", id: "call-ok", name: "read", arguments: { path: input } }] },
			{ content: ["It says hello."] },
			{ content: ["Answer on the new branch."] },
		],
	},
});
await turn(s, "q1: tell me something");
await turn(s, "q2: read input.txt");
await turn(s, "q3: try again");
const p = s.session.prompt("q4: a slow one").catch(e => console.log("PROMPT4_ERR", String(e).slice(0, 200)));
await Bun.sleep(800);
await s.session.abort();
await p;
await s.session.agent.waitForIdle();
await turn(s, "q5: read input.txt again");
const withCall = findEntry(s, isAssistant("Reading it."));
console.log("NAV1", JSON.stringify(await s.session.navigateTree(withCall.id)).slice(0, 200));
await turn(s, "q6: a question from the assistant turn with the call");
console.log("NAV2", JSON.stringify(await s.session.navigateTree(withCall.id)).slice(0, 200));
await finish(s, "05-errors-dangling");
