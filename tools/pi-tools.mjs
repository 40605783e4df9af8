#!/usr/bin/env node
// Runs tool calls through the real pi's built-in tools (read, bash, edit, write, grep, find, ls)
// and prints what pi's agent loop would record for each as its toolResult message:
// `{content, details?, isError}` (tests/cli/tools_live.rs compares them with `pisces agent`'s).
//
// usage: node tools/pi-tools.mjs PI_PACKAGE_DIR CWD CALLS_JSON
//   PI_PACKAGE_DIR  pi 1.6.0's `@earendil-works/pi-coding-agent` package directory
//                   (or set PI_TOOLS_PI_DIR and pass "-")
//   CWD             the project directory the tools work in
//   CALLS_JSON      a file with `[{name, args}, ...]`, run one after another in order
// Prints a JSON array with one `{content, details?, isError}` per call, in call order.
// Run it with a Node that pi 1.6.0 supports (>= 22.19: the oracle's node22, as the test does).
//
// Each call goes through pi-agent-core's own `runToolCall`: `Tool <name> not found`, the tool's
// `prepareArguments` (edit's legacy forms), schema validation, execution, and a thrown error
// turned into `{content: [{type: "text", text: message}], details: {}, isError: true}` exactly as
// the agent loop does (agent-loop.js `createErrorToolResult`). The `afterToolCall` hook mirrors
// what pi's AgentSession installs without extensions: image blocks normalized by
// `normalizeToolResultImages`. The message keeps `content ?? []`, `details` and `isError`, as
// agent-loop.js `createToolResultMessage` does (`structuredContent` is not part of it).
//
// The tools are built as AgentSession builds them (`createAllToolDefinitions(cwd, {read:
// {autoResizeImages}, bash: {commandPrefix, shellPath}})` with pi's default settings) and get a
// tool context like the session's: cwd, model (anthropic/claude-sonnet-4-5), thinking level and
// a session manager (bash exports PI_SESSION_ID, PI_MODEL, ... from it).
//
// pi runs with a private temp PI_CODING_AGENT_DIR and PI_OFFLINE=1: grep and find use rg and
// fd (or fdfind) from PATH and never download them.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dirArg, cwdArg, callsArg] = process.argv.slice(2);
if (!dirArg || !cwdArg || !callsArg) {
	process.stderr.write("usage: node tools/pi-tools.mjs PI_PACKAGE_DIR CWD CALLS_JSON\n");
	process.exit(2);
}
const piDir = resolve(dirArg === "-" ? (process.env.PI_TOOLS_PI_DIR ?? "") : dirArg);
if (!existsSync(join(piDir, "package.json"))) {
	process.stderr.write(`pi-tools: no pi package at ${piDir}\n`);
	process.exit(2);
}
const cwd = resolve(cwdArg);
const calls = JSON.parse(readFileSync(callsArg, "utf8"));

// Before pi is imported: its tools manager reads the agent dir when it loads.
const agentDir = mkdtempSync(join(tmpdir(), "pi-tools-agentdir-"));
process.on("exit", () => rmSync(agentDir, { recursive: true, force: true }));
process.env.PI_CODING_AGENT_DIR = agentDir;
process.env.PI_OFFLINE = "1";
process.env.PI_SKIP_VERSION_CHECK = "1";

/** A package next to pi (node_modules lookup from pi's directory upwards). */
function findPackage(name) {
	for (let cur = piDir; ; cur = dirname(cur)) {
		const cand = join(cur, "node_modules", name);
		if (existsSync(join(cand, "package.json"))) return cand;
		if (dirname(cur) === cur) throw new Error(`cannot find ${name} next to ${piDir}`);
	}
}
const scope = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8")).name.split("/")[0];
const imp = (file) => import(pathToFileURL(file).href);
const tools = await imp(join(piDir, "dist/core/tools/index.js"));
const { wrapToolDefinition } = await imp(join(piDir, "dist/core/tools/tool-definition-wrapper.js"));
const { normalizeToolResultImages } = await imp(join(piDir, "dist/utils/tool-result-images.js"));
const agentCore = await imp(join(findPackage(`${scope}/pi-agent-core`), "dist/index.js"));
const ai = await imp(join(findPackage(`${scope}/pi-ai`), "dist/compat.js"));

const model = ai.getModel("anthropic", "claude-sonnet-4-5");
// pi's default settings: images auto-resized, no shell command prefix, the default shell.
const autoResizeImages = true;
const definitions = tools.createAllToolDefinitions(cwd, {
	read: { autoResizeImages },
	bash: { commandPrefix: undefined, shellPath: undefined },
});
// A session saved to a file, as `pisces agent` always has one.
const sessionManager = { getSessionId: () => "pi-tools-session", getSessionFile: () => join(dirname(cwd), "session.jsonl") };
const ctx = { cwd, model, thinkingLevel: "off", sessionManager };
const names = ["read", "bash", "edit", "write", "grep", "find", "ls"];
const agentTools = names.map((n) => wrapToolDefinition(definitions[n], () => ctx));

// AgentSession's afterToolCall without extensions: only image normalization.
async function afterToolCall({ result, isError }) {
	const content = result.content ?? [];
	const normalized = await normalizeToolResultImages(content, {
		autoResizeImages,
		...(model?.inputLimits?.images?.resize ? { resizeOptions: model.inputLimits.images.resize } : {}),
	});
	if (normalized === content) return undefined;
	return { content: normalized, structuredContent: result.structuredContent, isError };
}

const out = [];
for (const [i, call] of calls.entries()) {
	const toolCall = { type: "toolCall", id: `call_${i + 1}`, name: call.name, arguments: call.args ?? {} };
	const assistantMessage = { role: "assistant", content: [toolCall], stopReason: "toolUse" };
	const controller = new AbortController();
	const finalized = await agentCore.runToolCall(toolCall, {
		tools: agentTools,
		assistantMessage,
		context: { messages: [], tools: agentTools },
		afterToolCall,
		signal: controller.signal,
	});
	out.push({ content: finalized.result.content ?? [], details: finalized.result.details, isError: finalized.isError });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
