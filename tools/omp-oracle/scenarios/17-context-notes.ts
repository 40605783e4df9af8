// 17-context-notes: omp's experimental context notebook (`compaction.experimentalContextManagement`):
// the `context_notes` tool's revisions are `custom` entries `experimental_context_notes`
// `{version: 1, text}`, and omp's context starts with the latest valid revision on the path,
// rendered into its notebook template (session/context-notes.ts). Written with the calls the
// tool makes (`SessionManager.appendCustomEntry`): a revision, turns, a revision with an extra
// key and one over 16 KiB (both invalid: the earlier one stands), a new revision whose text
// exercises omp's prompt formatter, a branch back to before the notebook, a cleared notebook,
// and a `/clear` after which no revision is visible.
import { finish, setup, turn } from "../lib";

const s = await setup({
	mock: { handler: () => ({ content: ["Noted."], usage: { input: 10, output: 2 } }) },
	settings: { "compaction.experimentalContextManagement": true },
});
const m = s.manager;
await turn(s, "Start the task");
const early = m.getLeafId()!;
m.appendCustomEntry("experimental_context_notes", { version: 1, text: "- task: fix the parser\n- next: run tests" });
await turn(s, "Go on");
m.appendCustomEntry("experimental_context_notes", { version: 1, text: "ignored: extra key", extra: true });
m.appendCustomEntry("experimental_context_notes", { version: 1, text: "x".repeat(16_385) });
await turn(s, "And again");
m.appendCustomEntry("experimental_context_notes", {
	version: 1,
	text: "  - done: parser   \n\n\n| file | state |\n|---|---|\n|  a.ts  | edited |\n\n- next: release  \n\n",
});
await turn(s, "Almost there");
const notebook = m.getLeafId()!;
m.branch(early);
await turn(s, "A branch without notes");
m.branch(notebook);
m.appendCustomEntry("experimental_context_notes", { version: 1, text: "" });
await turn(s, "After clearing the notebook");
m.branch(notebook);
await s.session.resetSessionContext();
await turn(s, "After /clear");
await finish(s, "17-context-notes");
