// 09-fork: SessionManager.fork() and createBranchedSession().
// A (source): two turns, a user title, a label. fork() writes B: same entries and ids, a new
// session id, header parentSession = A's session id (and providerPromptCacheKey). One more
// turn goes to B. B.createBranchedSession(<B's first answer>) writes C: only the path to that
// entry (labels re-created), header parentSession = B's file path. The session is disposed on C.
import { finish, findEntry, isAssistant, setup, turn } from "../lib";

const s = await setup({
	mock: {
		responses: [
			{ content: ["Answer one."] },
			{ content: ["Answer two."] },
			{ content: ["Answer three, in the fork."] },
			{ content: ["Answer four, in the branched session."] },
		],
	},
});
await turn(s, "Question one");
await turn(s, "Question two");
await s.manager.setSessionName("Fork source", "user");
const one = findEntry(s, isAssistant("Answer one."));
s.manager.appendLabelChange(one.id, "checkpoint");
await s.manager.flush();
console.log(`SESSION_FILE 09-fork-source ${s.manager.getSessionFile()}`);
const forked = await s.manager.fork();
console.log("FORK", JSON.stringify(forked));
await turn(s, "Question three");
await s.manager.flush();
console.log(`SESSION_FILE 09-fork-copy ${s.manager.getSessionFile()}`);
const branched = s.manager.createBranchedSession(one.id);
console.log("BRANCHED", branched);
await turn(s, "Question four");
await finish(s, "09-fork-branched");
