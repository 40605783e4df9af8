// 18-compaction-shapes: compactions a mock run cannot make, written with omp's own
// `SessionManager.appendCompaction` on branches of one session, so that omp's context reads
// each: an OpenAI remote compaction (`preserveData.openaiRemoteCompaction` with its replacement
// history, which replaces the kept entries; with and without `providerReplayThroughEntryId`),
// one whose history holds a non-object (ignored), an Anthropic server compaction
// (`anthropicCompaction`, its summary dated just before the first kept entry; with the
// optional fields, and with an empty provider: ignored), a context rollover (`details.kind:
// "experimental-context-rollover"`: the last user request comes back when it is older than
// the kept entries), and `firstKeptEntryId: ""`.
import { finish, setup, turn } from "../lib";

const s = await setup({ mock: { handler: () => ({ content: ["Noted."], usage: { input: 10, output: 2 } }) } });
const m = s.manager;
await turn(s, "First request");
const first = m.getLeafId()!;
await turn(s, "Second request");
await turn(s, "Third request");
const base = m.getLeafId()!;
const entries = () => m.getEntries() as any[];
const assistants = () => entries().filter(e => e.type === "message" && e.message.role === "assistant").map(e => e.id);
const users = () => entries().filter(e => e.type === "message" && e.message.role === "user").map(e => e.id);
const [, secondAnswer] = assistants();
const [, secondUser, thirdUser] = users();
const history = [
	{ type: "message", role: "user", content: [{ type: "input_text", text: "Second request" }] },
	{ type: "compaction", encrypted_content: "opaque" },
];
const branches: Array<[string, () => void]> = [
	["openai-remote", () => m.appendCompaction("Remote summary", "remote", thirdUser, 500, { method: "remote", preserveData: { openaiRemoteCompaction: { provider: "openai", replacementHistory: history } } })],
	[
		"openai-replay-through",
		() =>
			m.appendCompaction("Remote summary", "remote", thirdUser, 500, {
				method: "remote",
				providerReplayThroughEntryId: secondAnswer,
				preserveData: { openaiRemoteCompaction: { provider: "openai", replacementHistory: history } },
			}),
	],
	["openai-bad-history", () => m.appendCompaction("Remote summary", "remote", thirdUser, 500, { method: "remote", preserveData: { openaiRemoteCompaction: { provider: "openai", replacementHistory: [history[0], "not an item"] } } })],
	[
		"anthropic",
		() =>
			m.appendCompaction("Anthropic summary", "server", secondUser, 400, {
				method: "remote",
				preserveData: { anthropicCompaction: { provider: "anthropic", content: "Server-side summary", encryptedContent: "enc", filesText: "", extra: 1 } },
			}),
	],
	["anthropic-no-provider", () => m.appendCompaction("Anthropic summary", "server", secondUser, 400, { method: "remote", preserveData: { anthropicCompaction: { provider: "", content: "x" } } })],
	["rollover", () => m.appendCompaction("Rollover summary", "rollover", thirdUser, 300, { method: "soft", details: { kind: "experimental-context-rollover" } })],
	["rollover-kept-answer", () => m.appendCompaction("Rollover summary", "rollover", base, 300, { method: "soft", details: { kind: "experimental-context-rollover" } })],
	["rollover-kept-first", () => m.appendCompaction("Rollover summary", "rollover", first, 300, { method: "soft", details: { kind: "experimental-context-rollover" } })],
	["empty-first-kept", () => m.appendCompaction("Nothing kept", "none", "", 300, { method: "soft" })],
];
for (const [name, compact] of branches) {
	m.branch(base);
	compact();
	await turn(s, `After the ${name} compaction`);
}
await finish(s, "18-compaction-shapes");
