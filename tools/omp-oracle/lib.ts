// Shared setup for the omp-oracle scenarios: omp's own SDK (createAgentSession) driven by
// omp's mock provider (@oh-my-pi/pi-ai/providers/mock), offline. Each scenario runs with
// HOME=/home/dev and cwd /home/dev/projects/<scenario>, and works in ./work.
import * as fs from "node:fs";
import * as path from "node:path";
import {
	createMockModel,
	type MockModel,
	type MockModelOptions,
	registerMockApi,
	streamMock,
} from "@oh-my-pi/pi-ai/providers/mock";
import { ModelRegistry } from "@oh-my-pi/pi-coding-agent/config/model-registry";
import { Settings } from "@oh-my-pi/pi-coding-agent/config/settings";
import { createAgentSession } from "@oh-my-pi/pi-coding-agent/sdk";
import { AuthStorage } from "@oh-my-pi/pi-coding-agent/session/auth-storage";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

export const cwd = path.resolve("work");
fs.mkdirSync(cwd, { recursive: true });

export function writeWork(name: string, content: string): string {
	const p = path.join(cwd, name);
	fs.mkdirSync(path.dirname(p), { recursive: true });
	fs.writeFileSync(p, content);
	return p;
}

/** The mock takes images (so omp sends them to the model instead of describing them) and, when
 * it is a reasoning model, declares thinking efforts (so setThinkingLevel is not clamped away). */
export function patchMock(mock: MockModel): MockModel {
	(mock as any).input = ["text", "image"];
	if (mock.reasoning) (mock as any).thinking = { efforts: ["minimal", "low", "medium", "high"] };
	return mock;
}

/** A deterministic noisy RGB PNG (noise keeps it large after omp re-encodes it). */
export function makePng(w: number, h: number, seed = 1): string {
	let x = seed >>> 0;
	const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 16) & 255;
	const raw = Buffer.alloc((w * 3 + 1) * h);
	for (let y = 0; y < h; y++) {
		raw[y * (w * 3 + 1)] = 0;
		for (let i = 1; i <= w * 3; i++) raw[y * (w * 3 + 1) + i] = rnd();
	}
	const crcTable = Array.from({ length: 256 }, (_, n) => {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		return c >>> 0;
	});
	const crc = (buf: Buffer) => {
		let c = 0xffffffff;
		for (const b of buf) c = crcTable[(c ^ b) & 255] ^ (c >>> 8);
		return (c ^ 0xffffffff) >>> 0;
	};
	const chunk = (type: string, data: Buffer) => {
		const len = Buffer.alloc(4);
		len.writeUInt32BE(data.length);
		const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
		const c = Buffer.alloc(4);
		c.writeUInt32BE(crc(td));
		return Buffer.concat([len, td, c]);
	};
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(w, 0);
	ihdr.writeUInt32BE(h, 4);
	ihdr[8] = 8;
	ihdr[9] = 2;
	const { deflateSync } = require("node:zlib");
	return Buffer.concat([
		Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
		chunk("IHDR", ihdr),
		chunk("IDAT", deflateSync(raw)),
		chunk("IEND", Buffer.alloc(0)),
	]).toString("base64");
}

export interface Setup {
	mock: MockModel;
	manager: SessionManager;
	session: Awaited<ReturnType<typeof createAgentSession>>["session"];
	auth: AuthStorage;
	registry: ModelRegistry;
}

export async function setup(opts: {
	mock: MockModelOptions;
	settings?: Record<string, unknown>;
	toolNames?: string[];
	manager?: SessionManager;
	extra?: Record<string, unknown>;
	/** Also register provider "mock" in omp's ModelRegistry (registerProvider, as an extension
	 * would), so model patterns such as "mock/mock-model" resolve: subagents need it. */
	registerProvider?: boolean;
}): Promise<Setup> {
	registerMockApi();
	const mock = createMockModel({ handler: () => ({ content: ["fallback"] }), ...opts.mock });
	patchMock(mock);
	const auth = await AuthStorage.create(":memory:");
	auth.setRuntimeApiKey("mock", "test-key");
	const registry = new ModelRegistry(auth);
	if (opts.registerProvider) {
		registry.registerProvider("mock", {
			api: "mock" as any,
			baseUrl: "mock://",
			apiKey: "test-key",
			streamSimple: (_model, context, options) => streamMock(mock, context, options),
			models: [
				{
					id: mock.id,
					name: mock.id,
					reasoning: mock.reasoning,
					input: ["text", "image"],
					cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
					contextWindow: mock.contextWindow,
					maxTokens: mock.maxTokens,
				},
			],
		});
	}
	const manager = opts.manager ?? SessionManager.create(cwd);
	const { session } = await createAgentSession({
		cwd,
		sessionManager: manager,
		model: mock.model,
		modelRegistry: registry,
		authStorage: auth,
		getApiKey: () => "test-key",
		settings: Settings.isolated({ "compaction.enabled": false, "retry.enabled": false, ...(opts.settings ?? {}) }),
		systemPrompt: ["You are a test agent."],
		hasUI: false,
		enableMCP: false,
		enableLsp: false,
		toolNames: opts.toolNames ?? ["read"],
		agentId: "Main",
		agentDisplayName: "main",
		...(opts.extra ?? {}),
	} as any);
	session.subscribe(() => {});
	return { mock, manager, session, auth, registry };
}

export async function turn(s: Setup, text: string, options?: Record<string, unknown>): Promise<void> {
	try {
		await s.session.prompt(text, options as any);
	} catch (e) {
		console.log("PROMPT_ERR", String(e).slice(0, 300));
	}
	await s.session.agent.waitForIdle();
}

export function entries(s: Setup) {
	return s.manager.getEntries();
}

export function findEntry(s: Setup, pred: (e: any) => boolean): any {
	const e = s.manager.getEntries().find(pred);
	if (!e) throw new Error("entry not found");
	return e;
}

export const isUser = (text?: string) => (e: any) =>
	e.type === "message" &&
	e.message.role === "user" &&
	(text === undefined || JSON.stringify(e.message.content).includes(text));

export const isAssistant = (text?: string) => (e: any) =>
	e.type === "message" &&
	e.message.role === "assistant" &&
	(text === undefined || JSON.stringify(e.message.content).includes(text));

/** Flush, announce the file to oracle.py as NAME (null: not kept under that path), dispose. */
export async function finish(s: Setup, label: string | null): Promise<void> {
	await s.manager.flush();
	if (label) console.log(`SESSION_FILE ${label} ${s.manager.getSessionFile()}`);
	await s.session.dispose();
	console.log("CALLS", s.mock.calls.length);
}

/** Deterministic varied filler text (omp's stream guard rejects repeated cycles as a loop). */
export function prose(words: number, seed = 1): string {
	const vocab =
		"alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune ember fjord grove heath iris jade".split(
			" ",
		);
	let x = seed >>> 0;
	const out: string[] = [];
	for (let i = 0; i < words; i++) {
		x = (Math.imul(x, 1103515245) + 12345) >>> 0;
		out.push(vocab[(x >>> 16) % vocab.length]);
	}
	return out.join(" ");
}
