// 06-spill: a bash call whose output (seq 1 12000, 58893 bytes) is over omp's default artifact
// spill threshold (tools.artifactSpillThreshold = 50 KB): omp saves the full output to the
// session's artifacts folder, <session>/<n>.bash.log (bash's own output sink caps the inline
// result at DEFAULT_MAX_BYTES = 50 KB, head + tail, and records meta.truncation.artifactId).
import { finish, setup, turn } from "../lib";

const s = await setup({
	mock: {
		responses: [
			{ content: ["Counting.", { type: "toolCall", name: "bash", arguments: { command: "seq 1 12000" } }] },
			{ content: ["It printed 12000 lines."] },
		],
	},
	toolNames: ["read", "bash"],
});
await turn(s, "Print the numbers 1 to 12000");
await finish(s, "06-spill");
