// 11-legacy-no-title: a pre-16.3 style file, DERIVED from a real one. omp writes the session
// (turn, user title, label) and a full rewrite (SessionManager.rewriteEntries) puts the title
// into the header line too, as files carried it before the 256-byte title slot existed; then
// this script drops the first (title slot) line. omp still reads the file (title from the
// header; parseSessionContent finds no slot).
import * as fs from "node:fs";
import { finish, findEntry, isAssistant, setup, turn } from "../lib";

const s = await setup({ mock: { responses: [{ content: ["Old style answer."] }, { content: ["Second old answer."] }] } });
await turn(s, "An old style question");
await s.manager.setSessionName("Legacy title", "user");
s.manager.appendLabelChange(findEntry(s, isAssistant("Old style")).id, "old");
await turn(s, "Another one");
await s.manager.rewriteEntries();
const file = s.manager.getSessionFile()!;
await finish(s, "11-legacy-no-title");
const text = fs.readFileSync(file, "utf8");
const first = text.slice(0, text.indexOf("\n"));
if (!first.startsWith('{"type":"title"')) throw new Error("no title slot to drop");
fs.writeFileSync(file, text.slice(text.indexOf("\n") + 1));
console.log("DROPPED_TITLE_LINE", first.length + 1, "bytes");
