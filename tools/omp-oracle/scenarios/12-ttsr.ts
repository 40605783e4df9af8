// 12-ttsr: omp's TTSR (time-traveling stream rules, ttsr-coordinator.ts): the bundled rule
// "ts-no-any" (scope tool:write(*.ts)) matches a write of a .ts file containing "as any", omp
// records a ttsr_injection entry and injects the rule.
import { finish, setup, turn } from "../lib";

let n = 0;
const s = await setup({
	mock: {
		handler: (ctx: any) => {
			n++;
			const last = JSON.stringify(ctx.messages.at(-1) ?? {});
			console.log("CALL", n, "last:", last.slice(0, 300));
			if (n === 1)
				return {
					content: [
						"Writing it.",
						{ type: "toolCall", name: "write", arguments: { path: "src/a.ts", content: "export const x = (globalThis as any).y;\n" } },
					],
				};
			if (n === 2)
				return {
					content: [
						"Writing it without any.",
						{ type: "toolCall", name: "write", arguments: { path: "src/a.ts", content: "export const x: unknown = Reflect.get(globalThis, \"y\");\n" } },
					],
				};
			return { content: ["Done."] };
		},
	},
	toolNames: ["read", "write"],
});
await turn(s, "Write src/a.ts exporting globalThis.y");
await finish(s, "12-ttsr");
