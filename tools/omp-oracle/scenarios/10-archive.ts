// 10-archive: omp gc's cold archive. A finished session's mtime is set 30 days back, then omp's
// own `omp gc --archive --apply` code (cli/gc-cli.ts runGcCommand) runs with no retention:
// it gzips the file to ~/.omp/agent/archive/sessions/<bucket>/<name>.jsonl.gz (gzip level 9) and
// deletes the original. Every other session file is touched first so gc leaves it alone (gc
// skips files modified in the last 5 minutes).
import * as fs from "node:fs";
import * as path from "node:path";
import { runGcCommand } from "@oh-my-pi/pi-coding-agent/cli/gc-cli";
import { getSessionsDir } from "@oh-my-pi/pi-utils";
import { finish, setup, turn } from "../lib";

const s = await setup({ mock: { responses: [{ content: ["An old answer."] }] } });
await turn(s, "An old question");
await s.manager.setSessionName("Archived session", "user");
const file = s.manager.getSessionFile()!;
await finish(s, null);
const now = new Date();
for (const f of new Bun.Glob("**/*.jsonl").scanSync({ cwd: getSessionsDir(), absolute: true })) {
	if (f !== file) fs.utimesSync(f, now, now);
}
const old = new Date(Date.now() - 30 * 86_400_000);
fs.utimesSync(file, old, old);
const result = await runGcCommand({
	flags: { apply: true, archive: true, coldArchiveAfterDays: 0, retainNewestGlobal: 0, retainNewestPerCwd: 0 },
});
console.log("GC", JSON.stringify(result.archive));
const archived = path.join(path.dirname(getSessionsDir()), "archive", "sessions", path.relative(getSessionsDir(), file)) + ".gz";
console.log("ARCHIVED exists", fs.existsSync(archived), "original exists", fs.existsSync(file));
console.log(`SESSION_FILE 10-archive ${archived}`);
