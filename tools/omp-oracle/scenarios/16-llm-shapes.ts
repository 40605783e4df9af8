// 16-llm-shapes: every kind of message omp's convertToLlm turns into what its provider is sent
// (session/messages.ts `convertOne`, pi-agent-core's `convertMessageToLlm`), written by omp's own
// SessionManager after one real turn: the user's `!` and `$` runs (output, none, an exit code,
// cancelled, left out of the context, images, a truncation notice), file mentions (text and an
// image), custom messages (a collaborator's steering prompt as a string, as blocks and empty, a
// skill the user invoked, one the agent loaded, image-bearing ones, a plain note), a legacy hook
// message, a steering user message, a developer message, a pruned tool result with and without
// text, an assistant turn interrupted while thinking with its continuity note, a branch summary
// and compactions (handoff and soft) whose texts exercise omp's prompt formatter (blank-line
// runs, trailing blanks, tables, code fences, closing tags).
import { finish, makePng, setup, turn } from "../lib";

const s = await setup({ mock: { handler: () => ({ content: ["Noted."], usage: { input: 10, output: 2 } }) } });
await turn(s, "Start here");
const m = s.manager;
const now = () => Date.now();
const image = { type: "image", data: makePng(4, 3, 7), mimeType: "image/png" };
const bash = (extra: Record<string, unknown>) =>
	m.appendMessage({ role: "bashExecution", command: "ls", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: now(), ...extra } as any);
bash({ output: "a.txt\nb.txt" });
bash({ command: "make", output: "", exitCode: 2 });
bash({ command: "sleep 9", output: "partial", exitCode: undefined, cancelled: true });
bash({ command: "secret", output: "hidden", excludeFromContext: true });
bash({ command: "cat shot", output: "drawn", images: [image] });
bash({
	command: "seq 100",
	output: "81\n82",
	truncated: true,
	meta: {
		truncation: { direction: "tail", truncatedBy: "lines", totalLines: 100, totalBytes: 292, outputLines: 20, outputBytes: 60, shownRange: { start: 81, end: 100 }, artifactId: "4" },
		limits: { matchLimit: { reached: 50, suggestion: 100 }, columnTruncated: { maxColumn: 512 } },
	},
});
bash({
	command: "yes | head -c 5000000",
	output: "y\ny",
	truncated: true,
	meta: {
		truncation: { direction: "middle", truncatedBy: "middle", totalLines: 2500000, totalBytes: 5000000, outputLines: 4, outputBytes: 8, headRange: { start: 1, end: 2 }, tailRange: { start: 2499999, end: 2500000 } },
		artifactError: "9",
	},
});
bash({
	command: "cat big.min.js",
	output: "x",
	truncated: true,
	meta: { truncation: { direction: "head", truncatedBy: "bytes", totalLines: 1, totalBytes: 3000000, outputLines: 1, outputBytes: 51200, partialLine: true, shownRange: { start: 1, end: 1 }, artifactId: "5" } },
});
m.appendMessage({ role: "pythonExecution", code: "print(6 * 7)", output: "42", exitCode: 0, cancelled: false, truncated: false, timestamp: now() } as any);
m.appendMessage({ role: "pythonExecution", code: "1/0", output: "", exitCode: 1, cancelled: false, truncated: false, timestamp: now() } as any);
m.appendMessage({ role: "pythonExecution", code: "while True: pass", output: "", exitCode: undefined, cancelled: true, truncated: false, timestamp: now() } as any);
m.appendMessage({ role: "pythonExecution", code: "import os", output: "", exitCode: 0, cancelled: false, truncated: false, excludeFromContext: true, timestamp: now() } as any);
m.appendMessage({
	role: "fileMention",
	files: [
		{ path: "notes.md", content: "# Notes\nsome text", lineCount: 2 },
		{ path: "empty.txt", content: "" },
		{ path: "shot.png", content: "", image },
	],
	timestamp: now(),
} as any);
m.appendMessage({ role: "fileMention", files: [{ path: "only.md", content: "only" }], timestamp: now() } as any);
m.appendCustomMessageEntry("collab-prompt", "Please also check the tests", true, undefined, "user");
m.appendCustomMessageEntry("collab-prompt", [{ type: "text", text: "first" }, image, { type: "text", text: "second" }] as any, true, undefined, "user");
m.appendCustomMessageEntry("collab-prompt", "", true, undefined, "user");
m.appendCustomMessageEntry("collab-prompt", "from the agent", true, undefined, "agent");
m.appendCustomMessageEntry("skill-prompt", "Skill body the user invoked", true, { name: "review", path: "skills/review.md", lineCount: 1 }, "user");
m.appendCustomMessageEntry("skill-prompt", "Skill body the agent loaded", false, { name: "lint", path: "skills/lint.md", lineCount: 1 }, "agent");
m.appendCustomMessageEntry("screenshot", [{ type: "text", text: "Here is the screen" }, image] as any, true, undefined, "agent");
m.appendCustomMessageEntry("only-image", [image] as any, true, undefined, "user");
m.appendCustomMessageEntry("note", "A plain note", false);
m.appendMessage({ role: "hookMessage", customType: "legacy-hook", content: "hook text", display: true, timestamp: now() } as any);
m.appendMessage({ role: "hookMessage", customType: "legacy-shot", content: [{ type: "text", text: "hook shot" }, image], display: true, attribution: "user", timestamp: now() } as any);
m.appendMessage({ role: "user", content: "steer this way", steering: true, timestamp: now() } as any);
m.appendMessage({ role: "user", content: [{ type: "text", text: "by the agent" }], attribution: "agent", timestamp: now() } as any);
m.appendMessage({ role: "developer", content: [{ type: "text", text: "developer note" }], timestamp: now() } as any);
const call = (id: string) => ({
	role: "assistant",
	content: [{ type: "toolCall", id, name: "read", arguments: { path: "a.txt" } }],
	api: "mock",
	provider: "mock",
	model: "mock-model",
	usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
	stopReason: "toolUse",
	timestamp: now(),
});
m.appendMessage(call("call-pruned-1") as any);
m.appendMessage({ role: "toolResult", toolCallId: "call-pruned-1", toolName: "read", content: [{ type: "text", text: "one " }, image, { type: "text", text: "two" }], isError: false, prunedAt: now(), timestamp: now() } as any);
m.appendMessage(call("call-pruned-2") as any);
m.appendMessage({ role: "toolResult", toolCallId: "call-pruned-2", toolName: "read", content: [image], isError: false, prunedAt: now(), timestamp: now() } as any);
m.appendMessage({
	...call("unused"),
	content: [
		{ type: "text", text: "Working on it" },
		{ type: "thinking", thinking: "signed thought", thinkingSignature: "sig" },
		{ type: "thinking", thinking: "half a thought" },
		{ type: "text", text: "  " },
	],
	stopReason: "aborted",
	errorMessage: "Interrupted by user",
} as any);
m.appendCustomMessageEntry("interrupted-thinking", "You were thinking: half a thought", false, { interruptedAt: now(), provider: "mock", model: "mock-model", blockCount: 1 }, "agent");
await turn(s, "Carry on");
const leaf = m.getLeafId()!;
const tricky = [
	"Line one   ",
	"",
	"",
	"",
	"After a gap\t",
	"| a  |  b |",
	"|---| :--: |",
	"|  x | y  |",
	"```",
	"  code   ",
	"",
	"",
	"```",
	"",
	"</summary>",
	"\u00a0",
	"<note kind=\"x\">",
	"",
	"</note>",
	"end\r",
	"",
].join("\n");
m.branchWithSummary(leaf, tricky);
await turn(s, "After the summary");
const keep = m.getLeafId()!;
m.appendCompaction(`Handoff\n\n\n${tricky}`, "short", keep, 1234, { method: "handoff" });
await turn(s, "After the handoff");
const keep2 = m.getLeafId()!;
m.appendCompaction(`${tricky}\n\n`, undefined, keep2, 99, { method: "soft" });
await turn(s, "After the soft compaction");
await finish(s, "16-llm-shapes");
