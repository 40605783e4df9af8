// 03-state: the session-state entries omp writes through AgentSession: thinking_level_change
// (the initial one SDK writes, then "high", then "off"),
// model_change with a role (setModel(model, "smol")), model_change role "temporary"
// (setModelTemporary), service_tier_change (setServiceTierFamily, then cleared -> null),
// mode_change "plan" / "none" (as interactive-mode.ts #enterPlanMode/#exitPlanMode write it:
// setPlanModeState + sessionManager.appendModeChange), a custom_message (sendCustomMessage,
// deliverAs nextTurn), reset_boundary (/clear = AgentSession.resetSessionContext), and a
// credential_pin (SessionManager.appendCredentialPin: omp writes it only when an OAuth account
// serves a request, credential-pin.ts; the mock has an API key, so it is appended directly).
import { createMockModel } from "@oh-my-pi/pi-ai/providers/mock";
import { finish, patchMock, setup, turn } from "../lib";

const s = await setup({
	mock: {
		reasoning: true,
		responses: [
			{ content: [{ type: "thinking", thinking: "Plain hello." }, "Hello."] },
			{ content: ["Planning: step 1, step 2."] },
			{ content: ["After the notice."] },
			{ content: ["Fresh start after /clear."] },
		],
	},
});
const smol = patchMock(createMockModel({ id: "mock-smol", reasoning: true, responses: [{ content: ["Smol model here."] }] }));
const temp = patchMock(createMockModel({ id: "mock-temp", reasoning: true, responses: [{ content: ["Temporary model here."] }] }));
await turn(s, "Say hello");
s.session.setThinkingLevel("low" as any);
await s.session.setModel(smol as any, "smol");
await turn(s, "Now as smol");
await s.session.setModelTemporary(temp as any);
await turn(s, "Now temporary");
await s.session.setModel(s.mock as any, "default");
s.session.setServiceTierFamily("openai" as any, "priority" as any);
s.session.setServiceTierFamily("openai" as any, undefined);
s.session.setServiceTierFamily("anthropic" as any, "priority" as any);
// plan mode, as interactive-mode.ts enters and leaves it
const planFilePath = "local://PLAN.md";
s.session.setPlanModeState({ enabled: true, planFilePath, workflow: "parallel", reentry: false } as any);
s.manager.appendModeChange("plan", { planFilePath });
await turn(s, "Plan the work");
s.session.setPlanModeState(undefined);
s.manager.appendModeChange("none");
await s.session.sendCustomMessage(
	{ customType: "oracle-notice", content: "A notice from an extension.", display: true, details: { n: 1 } } as any,
	{ deliverAs: "nextTurn" } as any,
);
s.manager.appendCredentialPin("anthropic", "0".repeat(64));
await turn(s, "Continue");
console.log("RESET", JSON.stringify(await s.session.resetSessionContext()));
s.session.setThinkingLevel("off" as any);
await turn(s, "After clear");
await finish(s, "03-state");
