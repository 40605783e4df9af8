//! `pisces summarize` and `pisces compact` against pi 1.6.0's own summarizers.
//!
//! - Plans (`--dry-run --format json`) against the oracle's goldens: every corpus file's
//!   `expected/<stem>/default.compaction.json` and `default__<leaf>.branch.json` computed
//!   by pi 1.6.0, and every golden in `testdata/summaries/` (more keepRecent values, leaves,
//!   FROM/TO pairs, instructions, token budgets; see its README): the entries, cut point,
//!   split turn, tokensBefore, token estimates, prepared messages, file lists and the
//!   prompts byte for byte.
//! - Appends against pi's own `navigateTree` / `compact()` (`testdata/summaries/apply/`):
//!   with a scripted model answering what the oracle's model answers, the appended entries
//!   equal pi's (but for ids and times), and `pisces path` then shows pi's context.
//! - Offline summaries: their content on the corpus; appends of whole lines in pi's key
//!   order; inputs unchanged without `--append`.

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::{Map, Value};

use pisces::llm::testing::{anthropic_text, openai_text, Reply, ScriptedServer};

use crate::common::{check, first_diff, pisces, run, stderr, stdout, stdout_json, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for corpus in ["pi-1.6.0", "real"] {
        let dir = testdata().join(corpus).join("expected");
        for stem in sorted_dir(&dir) {
            let session = testdata().join(corpus).join(format!("{}.jsonl", name_of(&stem)));
            for golden in sorted_dir(&stem) {
                let g = name_of(&golden);
                let label = format!("{corpus}/{}/{g}", name_of(&stem));
                let session = session.clone();
                if g.ends_with(".compaction.json") {
                    trials.push(Trial::test(format!("summarize::compaction_plan::{label}"), move || {
                        compaction_plan(&session, &golden)
                    }));
                } else if g.ends_with(".branch.json") {
                    trials.push(Trial::test(format!("summarize::branch_plan::{label}"), move || {
                        branch_plan(&session, &golden)
                    }));
                }
            }
        }
    }
    for kind in ["compaction", "branch", "apply"] {
        let mut goldens = Vec::new();
        all_json(&testdata().join("summaries").join(kind), &mut goldens);
        goldens.sort();
        for golden in goldens {
            let rel = golden.strip_prefix(testdata().join("summaries")).unwrap().display().to_string();
            trials.push(Trial::test(format!("summarize::oracle::{rel}"), move || {
                let g = load(&golden)?;
                let session = testdata().join(g["file"].as_str().unwrap_or_default());
                match (kind, g["oracle"]["script"].as_str()) {
                    ("apply", Some("compaction.mjs")) => compaction_apply(&session, &golden),
                    ("apply", _) => branch_apply(&session, &golden),
                    ("compaction", _) => compaction_plan(&session, &golden),
                    _ => branch_plan(&session, &golden),
                }
            }));
        }
    }
    trials.push(Trial::test("summarize::offline::two_fix_attempts", offline_two_attempts));
    trials.push(Trial::test("summarize::offline::compaction_split_turn", offline_split_turn));
    trials.push(Trial::test("summarize::offline::previous_summary_is_merged", offline_previous_summary));
    trials.push(Trial::test("summarize::offline::append_every_corpus_file", offline_append_everywhere));
    trials.push(Trial::test("summarize::append::summary_at_the_root_entry_with_a_label", append_root_and_label));
    trials.push(Trial::test("summarize::model::branch_summary_over_http", branch_over_http));
    trials.push(Trial::test("summarize::model::compaction_over_http", compaction_over_http));
    trials.push(Trial::test("summarize::model::failures_write_nothing", model_failures));
    trials.push(Trial::test("summarize::inputs_unchanged", inputs_unchanged));
    trials.push(Trial::test("summarize::refusals", refusals));
    trials
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    v.sort();
    v
}

fn all_json(dir: &Path, out: &mut Vec<PathBuf>) {
    for p in sorted_dir(dir) {
        if p.is_dir() {
            all_json(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn load(p: &Path) -> Result<Value, libtest_mimic::Failed> {
    Ok(serde_json::from_str(&fs::read_to_string(p)?)?)
}

/// How pisces names an entry the oracle was given (`line:N` for version-1 files).
fn rev(arg: &str) -> String {
    match arg.strip_prefix("line:").or_else(|| arg.strip_prefix('@')) {
        Some(n) => format!("#{n}"),
        None => arg.to_string(),
    }
}

/// The oracle's arguments after FILE, and the value of each `--flag VALUE`.
fn oracle_args(g: &Value) -> (Vec<String>, Map<String, Value>) {
    let mut positional = Vec::new();
    let mut flags = Map::new();
    let args: Vec<String> = g["oracle"]["args"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default();
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if let Some(flag) = a.strip_prefix("--") {
            let boolean = matches!(flag, "replace-instructions" | "apply" | "line-ids");
            let value = if boolean { Value::Bool(true) } else { Value::from(it.next().unwrap_or_default()) };
            flags.insert(flag.to_string(), value);
        } else {
            positional.push(a);
        }
    }
    (positional, flags)
}

fn run_strs(args: &[String]) -> std::process::Output {
    run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Compares `got[field]` with `want[field]`; a golden's `null` message arrays (real/
/// goldens leave them out) are not compared.
fn same(got: &Value, want: &Value, field: &str) -> Result<(), String> {
    match first_diff(&got[field], &want[field], field) {
        Some(d) => Err(d),
        None => Ok(()),
    }
}

fn drop_nulls(v: &mut Value, keys: &[&str]) {
    if let Value::Object(m) = v {
        for k in keys {
            if m.get(*k).is_some_and(Value::is_null) {
                m.remove(*k);
            }
        }
    }
}

/// Sets `line`-like fields of `got` to null where the golden has null (the oracle cannot
/// tell lines in edge/10-json-null-and-falsy-lines; see testdata/edge/README.md).
fn null_lines(got: &mut Value, want: &Value) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                if let Some(gv) = g.get_mut(k) {
                    if wv.is_null() && (k == "line" || k.ends_with("Line")) {
                        *gv = Value::Null;
                    } else {
                        null_lines(gv, wv);
                    }
                }
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            for (gv, wv) in g.iter_mut().zip(w) {
                null_lines(gv, wv);
            }
        }
        _ => {}
    }
}

fn compaction_plan(session: &Path, golden_path: &Path) -> TestResult {
    let g = load(golden_path)?;
    check(g["pi"] == "1.6.0", || format!("golden of pi {}", g["pi"]))?;
    let (pos, flags) = oracle_args(&g);
    let leaf = pos.first().map(|l| rev(l)).unwrap_or_else(|| rev_of_id(&g, "leafId"));
    let mut args: Vec<String> = vec!["compact".into(), session.display().to_string(), leaf, "--dry-run".into()];
    args.extend(["--format".into(), "json".into()]);
    args.extend(["--keep-recent".into(), g["settings"]["keepRecentTokens"].to_string()]);
    args.extend(["--reserve".into(), g["settings"]["reserveTokens"].to_string()]);
    if let Some(c) = flags.get("custom-instructions").and_then(Value::as_str) {
        args.extend(["--instructions".into(), c.into()]);
    }
    let out = run_strs(&args);
    let expect_refusal = g["preparation"].is_null();
    check(out.status.code() == Some(if expect_refusal { 1 } else { 0 }), || {
        format!("exit {:?}: {}", out.status.code(), stderr(&out))
    })?;
    let mut got: Value = serde_json::from_slice(&out.stdout)?;
    null_lines(&mut got, &g);
    for f in [
        "leafId",
        "settings",
        "pathLength",
        "projectionLength",
        "prevCompactionIndex",
        "boundaryStart",
        "firstKeptProjectedIndex",
        "contextEstimate",
        "estimateTokens",
    ] {
        same(&got, &g, f)?;
    }
    if expect_refusal {
        return check(got["preparation"].is_null() && got.get("requests").is_none(), || {
            "pisces prepared a compaction".into()
        });
    }
    let mut want_prep = g["preparation"].clone();
    drop_nulls(&mut want_prep, &["messagesToSummarize", "turnPrefixMessages"]);
    let mut got_prep = got["preparation"].clone();
    if let (Value::Object(gp), Value::Object(wp)) = (&mut got_prep, &want_prep) {
        gp.retain(|k, _| wp.contains_key(k));
    }
    if let Some(d) = first_diff(&got_prep, &want_prep, "preparation") {
        return Err(d.into());
    }
    same(&got, &g, "summaryTemplate")?;
    let want_requests = g["requests"].as_array().cloned().unwrap_or_default();
    let got_requests = got["requests"].as_array().cloned().unwrap_or_default();
    check(got_requests.len() == want_requests.len(), || {
        format!("{} requests in pisces, {} in pi", got_requests.len(), want_requests.len())
    })?;
    for (i, (a, b)) in got_requests.iter().zip(&want_requests).enumerate() {
        for f in ["kind", "systemPrompt", "promptText", "messageCount", "maxTokens", "cacheRetention"] {
            same(a, b, f).map_err(|e| format!("requests[{i}]: {e}"))?;
        }
    }
    Ok(())
}

/// The REV for an id field of a golden (`L<n>` ids of version-1 files are lines).
fn rev_of_id(g: &Value, field: &str) -> String {
    let id = g[field].as_str().unwrap_or_default();
    if g["idsRenamedToLines"] == true && id.starts_with('L') {
        format!("#{}", &id[1..])
    } else {
        id.to_string()
    }
}

fn branch_plan(session: &Path, golden_path: &Path) -> TestResult {
    let g = load(golden_path)?;
    check(g["pi"] == "1.6.0", || format!("golden of pi {}", g["pi"]))?;
    let (pos, flags) = oracle_args(&g);
    let (from, to) = match pos.as_slice() {
        [a, b, ..] => (rev(a), rev(b)),
        _ => (rev_of_id(&g, "oldLeafId"), rev_of_id(&g, "targetId")),
    };
    let mut args: Vec<String> = vec!["summarize".into(), session.display().to_string(), from, to, "--dry-run".into()];
    args.extend(["--format".into(), "json".into()]);
    // The default context window (the session model's, from pi's catalog) is under test
    // too; only an explicit one is passed on.
    if let Some(w) = flags.get("context-window").and_then(Value::as_str) {
        args.extend(["--context-window".into(), w.into()]);
    }
    if let Some(r) = flags.get("reserve-tokens").and_then(Value::as_str) {
        args.extend(["--reserve-tokens".into(), r.into()]);
    }
    if let Some(c) = flags.get("custom-instructions").and_then(Value::as_str) {
        args.extend(["--instructions".into(), c.into()]);
    }
    if flags.contains_key("replace-instructions") {
        args.push("--replace-instructions".into());
    }
    let out = run_strs(&args);
    let nothing = g["entryIds"].as_array().is_some_and(Vec::is_empty);
    check(out.status.code() == Some(if nothing { 1 } else { 0 }), || {
        format!("exit {:?}: {}", out.status.code(), stderr(&out))
    })?;
    let mut got: Value = serde_json::from_slice(&out.stdout)?;
    null_lines(&mut got, &g);
    for f in [
        "oldLeafId",
        "targetId",
        "commonAncestorId",
        "entryIds",
        "contextWindow",
        "reserveTokens",
        "tokenBudget",
        "fileLists",
        "summaryTemplate",
    ] {
        same(&got, &g, f)?;
    }
    let mut want_prep = g["prepared"].clone();
    drop_nulls(&mut want_prep, &["messages"]);
    let mut got_prep = got["prepared"].clone();
    if let (Value::Object(gp), Value::Object(wp)) = (&mut got_prep, &want_prep) {
        gp.retain(|k, _| wp.contains_key(k));
    }
    if let Some(d) = first_diff(&got_prep, &want_prep, "prepared") {
        return Err(d.into());
    }
    match (&got["request"], &g["request"]) {
        (Value::Null, Value::Null) => Ok(()),
        (a @ Value::Object(_), b @ Value::Object(_)) => {
            for f in ["systemPrompt", "promptText", "messageCount", "maxTokens", "cacheRetention"] {
                same(a, b, f).map_err(|e| format!("request: {e}"))?;
            }
            Ok(())
        }
        (a, b) => Err(format!("request: {} in pisces, {} in pi", a.is_null(), b.is_null()).into()),
    }
}

fn copy_of(session: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(session.file_name().unwrap());
    fs::copy(session, &p).unwrap();
    (dir, p)
}

/// `entry` without the fields that differ from run to run (id, time).
pub fn masked(entry: &Value) -> Value {
    let mut e = entry.clone();
    if let Value::Object(m) = &mut e {
        m.insert("id".into(), "<id>".into());
        m.insert("timestamp".into(), "<time>".into());
        if let Some(Value::Object(sys)) = m.get_mut("systemMessage") {
            sys.insert("timestamp".into(), "<time>".into());
        }
    }
    e
}

pub fn keys(v: &Value) -> Vec<String> {
    v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// Context messages without the times taken from the new entries.
pub fn masked_messages(messages: &Value) -> Value {
    let mut msgs = messages.as_array().cloned().unwrap_or_default();
    let first_is_summary = msgs.get(1).is_some_and(|m| m["role"] == "compactionSummary");
    for (i, m) in msgs.iter_mut().enumerate() {
        let role = m["role"].as_str().unwrap_or_default().to_string();
        let from_new_entry =
            role == "compactionSummary" || role == "branchSummary" || (i == 0 && first_is_summary && role == "system");
        if from_new_entry {
            if let Value::Object(o) = m {
                o.insert("timestamp".into(), "<time>".into());
            }
        }
    }
    Value::Array(msgs)
}

/// The lines `f` gained, parsed, after checking that they are whole lines at the end.
fn appended_lines(before: &[u8], f: &Path) -> Result<Vec<Value>, libtest_mimic::Failed> {
    let after = fs::read(f)?;
    check(after.starts_with(before), || "bytes before the append changed".into())?;
    let added = std::str::from_utf8(&after[before.len()..])?;
    check(added.ends_with('\n'), || format!("not whole lines: {added:?}"))?;
    added.lines().map(|l| serde_json::from_str(l).map_err(|e| format!("{e}: {l}").into())).collect()
}

fn context_after(f: &Path, applied: &Value) -> TestResult {
    let path = stdout_json(&run(&["path", f.to_str().unwrap(), "--format", "json"]))?;
    if let Some(d) = first_diff(
        &masked_messages(&path["messages"]),
        &masked_messages(&applied["context"]["messages"]),
        "context.messages",
    ) {
        return Err(d.into());
    }
    for f in ["thinkingLevel", "model"] {
        if let Some(d) = first_diff(&path[f], &applied["context"][f], f) {
            return Err(d.into());
        }
    }
    Ok(())
}

fn compaction_apply(session: &Path, golden_path: &Path) -> TestResult {
    let g = load(golden_path)?;
    let applied = &g["applied"];
    let (pos, flags) = oracle_args(&g);
    let (_dir, f) = copy_of(session);
    let before = fs::read(&f)?;
    let mut args: Vec<String> = vec!["compact".into(), f.display().to_string(), rev(&pos[0])];
    args.extend(["--keep-recent".into(), g["settings"]["keepRecentTokens"].to_string()]);
    args.extend(["--scripted-reply".into(), "<<LLM_OUTPUT:{kind}>>".into(), "--append".into()]);
    args.extend(["--format".into(), "json".into()]);
    if let Some(c) = flags.get("custom-instructions").and_then(Value::as_str) {
        args.extend(["--instructions".into(), c.into()]);
    }
    let out = stdout_json(&run_strs(&args))?;
    let lines = appended_lines(&before, &f)?;
    let want = applied["appendedEntries"].as_array().cloned().unwrap_or_default();
    check(lines.len() == 1 && want.len() == 1, || {
        format!("{} lines appended, pi appended {}", lines.len(), want.len())
    })?;
    check(keys(&lines[0]) == keys(&want[0]), || format!("key order {:?}, pi {:?}", keys(&lines[0]), keys(&want[0])))?;
    if let Some(d) = first_diff(&masked(&lines[0]), &masked(&want[0]), "entry") {
        return Err(d.into());
    }
    check(out["appended"]["entry"] == lines[0], || "the JSON output is not the line written".into())?;
    context_after(&f, applied)
}

fn branch_apply(session: &Path, golden_path: &Path) -> TestResult {
    let g = load(golden_path)?;
    let applied = &g["applied"];
    let (pos, flags) = oracle_args(&g);
    let (_dir, f) = copy_of(session);
    let before = fs::read(&f)?;
    let mut args: Vec<String> = vec!["summarize".into(), f.display().to_string(), rev(&pos[0]), rev(&pos[1])];
    args.extend(["--scripted-reply".into(), "<<LLM_OUTPUT>>".into(), "--append".into()]);
    args.extend(["--format".into(), "json".into()]);
    if let Some(l) = flags.get("label").and_then(Value::as_str) {
        args.extend(["--label".into(), l.into()]);
    }
    let out = run_strs(&args);
    let want = applied["appendedEntries"].as_array().cloned().unwrap_or_default();
    if want.is_empty() {
        check(out.status.code() == Some(1), || format!("exit {:?}", out.status.code()))?;
        return check(fs::read(&f)? == before, || "nothing to summarize, but the file changed".into());
    }
    let doc = stdout_json(&out)?;
    let lines = appended_lines(&before, &f)?;
    check(lines.len() == want.len(), || format!("{} lines appended, pi appended {}", lines.len(), want.len()))?;
    for (i, (a, b)) in lines.iter().zip(&want).enumerate() {
        check(keys(a) == keys(b), || format!("[{i}] key order {:?}, pi {:?}", keys(a), keys(b)))?;
        let (mut a, mut b) = (masked(a), masked(b));
        // A label points at the new summary: compare the relation, not the ids.
        for (x, summary_id) in [(&mut a, &lines[0]["id"]), (&mut b, &want[0]["id"])] {
            for k in ["parentId", "targetId"] {
                if i > 0 && x[k] == *summary_id {
                    x[k] = "<summary>".into();
                }
            }
        }
        if let Some(d) = first_diff(&a, &b, &format!("entry[{i}]")) {
            return Err(d.into());
        }
    }
    check(doc["appended"]["entry"] == lines[0], || "the JSON output is not the line written".into())?;
    context_after(&f, applied)
}

fn summarize_json(args: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    let mut a = vec!["summarize"];
    a.extend_from_slice(args);
    a.extend(["--format", "json"]);
    stdout_json(&run(&a))
}

fn section<'a>(summary: &'a str, heading: &str) -> &'a str {
    let start = summary.find(&format!("{heading}\n")).map(|i| i + heading.len() + 1).unwrap_or(summary.len());
    let rest = &summary[start..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    &rest[..end]
}

const SECTIONS: [&str; 9] = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
];

fn has_layout(summary: &str) -> TestResult {
    let mut at = 0;
    for h in SECTIONS {
        match summary[at..].find(&format!("{h}\n")) {
            Some(i) => at += i + h.len(),
            None => return Err(format!("no `{h}` (in order) in:\n{summary}").into()),
        }
    }
    Ok(())
}

fn offline_two_attempts() -> TestResult {
    let f = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let f = f.to_str().unwrap();
    // Leaving attempt B (which fixed src/todo.js) for attempt A.
    let b = summarize_json(&[f, "@", "adbfcbd8", "--offline"])?;
    let s = b["summary"].as_str().unwrap_or_default();
    check(s.starts_with("The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n- `npm test` is failing. Can you fix it? Fix the implementation in src/, not the test"), || s.into())?;
    has_layout(s)?;
    check(
        section(s, "## Constraints & Preferences").starts_with("- Fix the implementation in src/, not the test"),
        || s.into(),
    )?;
    let done = section(s, "### Done");
    check(
        done.contains("- [x] Edited `src/todo.js`") && done.contains("- [x] Edited `test/todo.test.js` (2 edits)"),
        || done.into(),
    )?;
    check(done.contains("- [x] Ran `npm test`: it succeeds now (it failed before)"), || done.into())?;
    check(section(s, "### Blocked") == "- (none)", || s.into())?;
    check(section(s, "## Critical Context").starts_with("- Last assistant reply: Fixed in `src/todo.js`"), || {
        s.into()
    })?;
    check(s.ends_with("<modified-files>\nsrc/todo.js\ntest/todo.test.js\n</modified-files>"), || s.into())?;
    check(b["details"]["generator"] == "pisces-offline" && b["usage"].is_null(), || b["details"].to_string())?;
    check(b["details"]["modifiedFiles"] == serde_json::json!(["src/todo.js", "test/todo.test.js"]), || {
        b["details"].to_string()
    })?;

    // Leaving attempt A (tests still failing) for B.
    let a = summarize_json(&[f, "adbfcbd8", "@", "--offline"])?;
    let s = a["summary"].as_str().unwrap_or_default();
    has_layout(s)?;
    check(section(s, "## Goal") == "- `npm test` is failing. Can you fix it?", || s.into())?;
    check(section(s, "### Done") == "- [x] Edited `test/todo.test.js` (2 edits)", || s.into())?;
    check(
        section(s, "### Blocked")
            == "- `npm test` fails (exit 1), all 3 runs: not ok 4 - parseDue rejects invalid dates",
        || s.into(),
    )?;
    let next = section(s, "## Next Steps");
    check(next.starts_with("1. Make `npm test` succeed\n2. Answer the assistant's question: `parseDue` itself probably has to validate its input"), || next.into())?;
    check(section(s, "## Key Decisions").contains("**Edited `test/todo.test.js`**: `new Date(\"tomorrow-ish\")` gives `Invalid Date`, so the assertion's pattern looks wrong."), || s.into())?;
    check(s.ends_with("<read-files>\n/home/dev/todo-cli/src/todo.js\n</read-files>\n\n<modified-files>\ntest/todo.test.js\n</modified-files>"), || s.into())
}

fn compact_json(args: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    let mut a = vec!["compact"];
    a.extend_from_slice(args);
    a.extend(["--format", "json"]);
    stdout_json(&run(&a))
}

fn offline_split_turn() -> TestResult {
    let f = testdata().join("pi-1.6.0/02-tool-use.jsonl");
    let c = compact_json(&[f.to_str().unwrap(), "--keep-recent", "500", "--offline"])?;
    let s = c["summary"].as_str().unwrap_or_default();
    check(c["isSplitTurn"] == true && c["tokensBefore"] == 4999, || c.to_string())?;
    let (history, prefix) =
        s.split_once("\n\n---\n\n**Turn Context (split turn):**\n\n").ok_or("no split-turn part")?;
    has_layout(history)?;
    check(section(history, "## Goal") == "- The test suite is failing. Can you find out why and fix it?", || {
        history.into()
    })?;
    let done = section(history, "### Done");
    check(
        done.contains("- [x] Edited `src/todo.js`")
            && done.contains("- [x] Ran `npm test 2>&1 | tail -9`: it succeeds now (it failed before)"),
        || done.into(),
    )?;
    check(
        section(history, "### Blocked").contains("`read` of `src/date.js` failed: ENOENT: no such file or directory"),
        || history.into(),
    )?;
    check(
        prefix.starts_with(
            "## Original Request\nGreat. Also add a `clearCompleted(list)` helper with a test.\n\n## Progress So Far\n",
        ),
        || prefix.into(),
    )?;
    check(prefix.contains("## Context Needed to Continue\n"), || prefix.into())?;
    check(s.ends_with("<read-files>\nsrc/date.js\n</read-files>\n\n<modified-files>\nsrc/todo.js\ntest/todo.test.js\n</modified-files>"), || s.into())?;
    check(c["details"]["generator"] == "pisces-offline", || c["details"].to_string())
}

fn offline_previous_summary() -> TestResult {
    // 08: a compaction of a split turn, then more turns; compacting again merges its
    // summary (a model's, in the turn-prefix layout) before what is new.
    let f = testdata().join("pi-1.6.0/08-compaction-split-turn.jsonl");
    let plan = compact_json(&[f.to_str().unwrap(), "--keep-recent", "100", "--dry-run"])?;
    check(plan["preparation"]["previousSummary"].is_string(), || "no previous summary".into())?;
    check(plan["requests"][0]["promptText"].as_str().is_some_and(|p| p.contains("<previous-summary>\n")), || {
        "no update prompt".into()
    })?;
    let c = compact_json(&[f.to_str().unwrap(), "--keep-recent", "100", "--offline"])?;
    let s = c["summary"].as_str().unwrap_or_default();
    has_layout(s)?;
    check(
        section(s, "## Goal") == "- Refactor src/cli.js so each command lives in its own function in src/commands.js, then make sure everything still works.",
        || s.into(),
    )?;
    let done = section(s, "### Done");
    check(done.starts_with("- [x] Read `src/cli.js`\n") && done.contains("- [x] Wrote `src/commands.js`"), || {
        done.into()
    })?;
    check(
        done.ends_with("- [x] Ran `npm test 2>&1 | tail -30`\n- [x] Ran `cat -n src/cli.js && wc -l src/*.js`"),
        || done.into(),
    )?;
    check(section(s, "### In Progress") == "- [ ] The current turn (the turn was not finished)", || s.into())
}

/// Every corpus file that pi would compact at keepRecent 100: the offline compaction is
/// appended as one whole line in pi's key order, and `pisces path` then starts from it.
fn offline_append_everywhere() -> TestResult {
    let mut done = 0;
    for corpus in ["pi-1.6.0", "pi-0.73.1"] {
        for file in sorted_dir(&testdata().join(corpus)) {
            if file.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let (_dir, f) = copy_of(&file);
            let fs_ = f.to_str().unwrap();
            let before = fs::read(&f)?;
            let out = run(&["compact", fs_, "--keep-recent", "100", "--offline", "--append", "--format", "json"]);
            if out.status.code() == Some(1) {
                check(fs::read(&f)? == before, || format!("{}: refused but changed", file.display()))?;
                continue;
            }
            check(out.status.success(), || format!("{}: {}", file.display(), stderr(&out)))?;
            let doc = stdout_json(&out)?;
            let lines = appended_lines(&before, &f)?;
            check(lines.len() == 1, || format!("{}: {} lines", file.display(), lines.len()))?;
            let e = &lines[0];
            let mut want_keys = vec![
                "type",
                "id",
                "parentId",
                "timestamp",
                "summary",
                "firstKeptEntryId",
                "tokensBefore",
                "details",
                "fromHook",
            ];
            if e.get("systemMessage").is_some() {
                want_keys.push("systemMessage");
            }
            check(keys(e) == want_keys, || format!("{}: key order {:?}", file.display(), keys(e)))?;
            check(e["parentId"] == doc["leafId"] && e["fromHook"] == false, || e.to_string())?;
            let summary = e["summary"].as_str().unwrap_or_default();
            let history = match summary.split_once("\n\n---\n\n**Turn Context (split turn):**\n\n") {
                Some((history, prefix)) => {
                    check(
                        prefix.starts_with("## Original Request\n")
                            && prefix.contains("\n\n## Progress So Far\n")
                            && prefix.contains("\n\n## Context Needed to Continue\n"),
                        || format!("{}: {prefix}", file.display()),
                    )?;
                    history
                }
                None => summary,
            };
            if history.starts_with("## ") || !e["summary"].to_string().contains("Turn Context") {
                has_layout(history).map_err(|m| format!("{}: {m:?}", file.display()))?;
            }
            let path = stdout_json(&run(&["path", fs_, "--format", "json"]))?;
            let msgs = path["messages"].as_array().cloned().unwrap_or_default();
            let summary_at = msgs.iter().position(|m| m["role"] == "compactionSummary");
            check(summary_at.is_some_and(|i| i <= 1) && msgs[summary_at.unwrap()]["summary"] == e["summary"], || {
                format!("{}: the context does not start from the compaction", file.display())
            })?;
            done += 1;
        }
    }
    check(done >= 10, || format!("only {done} files compacted"))
}

fn append_root_and_label() -> TestResult {
    // Target = the root entry (not a user message: the summary goes under it), with a
    // label on the summary. (A user message at a root, whose summary becomes a new root,
    // is in summaries/apply/sessions/.)
    let (_dir, f) = copy_of(&testdata().join("pi-1.6.0/03-tree-branches.jsonl"));
    let fs_ = f.to_str().unwrap();
    let before = fs::read(&f)?;
    let out =
        run(&["summarize", fs_, "@", "root", "--offline", "--append", "--label", " start over ", "--format", "json"]);
    let doc = stdout_json(&out)?;
    let lines = appended_lines(&before, &f)?;
    check(lines.len() == 2, || format!("{} lines", lines.len()))?;
    let (s, l) = (&lines[0], &lines[1]);
    check(keys(s) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "fromHook"], || {
        format!("key order {:?}", keys(s))
    })?;
    check(s["type"] == "branch_summary" && s["fromId"] == doc["fromId"] && s["parentId"] == doc["newLeafId"], || {
        s.to_string()
    })?;
    check(
        l["type"] == "label" && l["parentId"] == s["id"] && l["targetId"] == s["id"] && l["label"] == "start over",
        || l.to_string(),
    )?;
    // pi resumes on the label (the last entry); the context ends with the summary.
    let path = stdout_json(&run(&["path", fs_, "--format", "json"]))?;
    let last = path["messages"].as_array().and_then(|m| m.last().cloned()).unwrap_or_default();
    check(last["role"] == "branchSummary" && last["summary"] == s["summary"], || last.to_string())?;
    let labelled = stdout_json(&run(&["path", fs_, "start over", "--format", "json"]))?;
    check(labelled["leafId"] == s["id"], || "the label does not name the summary".into())
}

fn inputs_unchanged() -> TestResult {
    for rel in
        ["pi-1.6.0/22-two-fix-attempts.jsonl", "pi-1.6.0/21-compaction-checkpoints.jsonl", "real/large-session.jsonl"]
    {
        let f = testdata().join(rel);
        let fs_ = f.to_str().unwrap();
        let before = fs::read(&f)?;
        for args in [
            vec!["compact", fs_],
            vec!["compact", fs_, "--keep-recent", "100", "--offline"],
            vec!["compact", fs_, "--keep-recent", "100", "--scripted-reply", "x"],
            vec!["summarize", fs_, "@", "root", "--dry-run"],
            vec!["summarize", fs_, "@", "root", "--offline", "--format", "json"],
        ] {
            let out = run(&args);
            check(matches!(out.status.code(), Some(0 | 1)), || format!("{args:?}: {}", stderr(&out)))?;
            check(fs::read(&f)? == before, || format!("{args:?} changed {rel}"))?;
        }
    }
    Ok(())
}

fn refusals() -> TestResult {
    let f = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let fs_ = f.to_str().unwrap();
    let code = |args: &[&str]| run(args).status.code();
    // No model, no --offline, no --dry-run.
    let out = run(&["summarize", fs_, "@", "adbfcbd8"]);
    check(out.status.code() == Some(2) && stderr(&out).contains("--offline"), || stderr(&out))?;
    // A hosted model without its key: nothing is sent.
    let out = pisces()
        .args(["summarize", fs_, "@", "adbfcbd8", "--model", "anthropic/claude-sonnet-4-5"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()?;
    check(out.status.code() == Some(2) && stderr(&out).contains("ANTHROPIC_API_KEY"), || stderr(&out))?;
    check(code(&["summarize", fs_, "@", "adbfcbd8", "--dry-run", "--append"]) == Some(2), || {
        "dry-run + append".into()
    })?;
    check(code(&["compact", fs_, "--append"]) == Some(2), || "compact --append without a summary".into())?;
    check(code(&["summarize", "-", "@", "x", "--offline", "--append"]) == Some(2), || "stdin append".into())?;
    // Nothing to summarize: the target is the leaf, or a descendant of FROM_LEAF.
    check(code(&["summarize", fs_, "@", "@", "--offline"]) == Some(1), || "same entry".into())?;
    let out = run(&["summarize", fs_, "@^", "@", "--dry-run"]);
    check(out.status.code() == Some(1) && stdout(&out).contains("Nothing to summarize"), || stdout(&out))?;
    // pi would not compact a path that ends in a compaction.
    let (_dir, copy) = copy_of(&testdata().join("pi-1.6.0/02-tool-use.jsonl"));
    let c = copy.to_str().unwrap();
    check(code(&["compact", c, "--keep-recent", "500", "--offline", "--append"]) == Some(0), || {
        "first compaction".into()
    })?;
    let before = fs::read(&copy)?;
    let out = run(&["compact", c, "--keep-recent", "500", "--offline", "--append"]);
    check(out.status.code() == Some(1) && stderr(&out).contains("Already compacted"), || stderr(&out))?;
    check(fs::read(&copy)? == before, || "a refused compaction changed the file".into())?;
    // Version-1 files are not appended to (pi would rewrite them first).
    let (_d2, v1) = copy_of(&testdata().join("real/large-session.jsonl"));
    let v1_before = fs::read(&v1)?;
    let out = run(&["compact", v1.to_str().unwrap(), "--offline", "--append"]);
    check(out.status.code() == Some(2) && stderr(&out).contains("version-1"), || stderr(&out))?;
    check(fs::read(&v1)? == v1_before, || "v1 file changed".into())
}

/// The text of the one user message of a request body (Anthropic or OpenAI shape).
fn prompt_of(body: &Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let user: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "user").collect();
    match &user.first().map(|m| &m["content"]) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

/// The system prompt of a request body (Anthropic `system`, or OpenAI's leading message).
fn system_of(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => body["messages"][0]["content"].as_str().unwrap_or_default().to_string(),
    }
}

/// `summarize` with a real provider (Anthropic Messages over HTTP, against a scripted
/// server): pi's prompt and system prompt, no tools, the session's thinking level; pi's
/// summary and usage appended.
fn branch_over_http() -> TestResult {
    let golden = load(&testdata().join("pi-1.6.0/expected/22-two-fix-attempts/default__adbfcbd8.branch.json"))?;
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_text("claude-sonnet-4-5", "SUMMARY FROM THE MODEL"))]);
    let (_dir, f) = copy_of(&testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"));
    let before = fs::read(&f)?;
    let out = pisces()
        .args(["summarize", f.to_str().unwrap(), "@", "adbfcbd8", "--append", "--format", "json"])
        .args([
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--base-url",
            &server.url(),
            "--api-key-env",
            "PISCES_TEST_KEY",
        ])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    let doc = stdout_json(&out)?;
    let requests = server.requests();
    check(requests.len() == 1, || format!("{} requests", requests.len()))?;
    let body = requests[0].json();
    check(prompt_of(&body) == golden["request"]["promptText"].as_str().unwrap_or_default(), || {
        format!("prompt differs from pi's:\n{}", prompt_of(&body))
    })?;
    check(system_of(&body) == golden["request"]["systemPrompt"].as_str().unwrap_or_default(), || system_of(&body))?;
    check(body.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), || "tools were sent".into())?;
    check(body.get("thinking").is_some(), || format!("no thinking for level medium: {body}"))?;
    let lines = appended_lines(&before, &f)?;
    check(lines.len() == 1, || format!("{} lines", lines.len()))?;
    let want =
        golden["summaryTemplate"].as_str().unwrap_or_default().replace("<<LLM_OUTPUT>>", "SUMMARY FROM THE MODEL");
    check(lines[0]["summary"] == want.as_str(), || lines[0]["summary"].to_string())?;
    check(lines[0]["parentId"] == "adbfcbd8" && lines[0]["fromId"] == golden["oldLeafId"], || lines[0].to_string())?;
    check(
        lines[0]["usage"]["totalTokens"].as_u64().is_some_and(|t| t > 0) && lines[0]["usage"] == doc["usage"],
        || lines[0]["usage"].to_string(),
    )?;
    check(lines[0]["details"] == golden["fileLists"], || lines[0]["details"].to_string())
}

/// `compact` with a real provider (OpenAI-compatible, against a scripted server): a split
/// turn sends pi's history prompt, then its turn-prefix prompt; the entry joins the replies
/// as pi does and carries the usage of both.
fn compaction_over_http() -> TestResult {
    let golden = load(&testdata().join("summaries/compaction/pi-1.6.0/02-tool-use/4833932f.keep500.json"))?;
    let server = ScriptedServer::start(vec![
        Reply::Sse(openai_text("m", "HISTORY SUMMARY")),
        Reply::Sse(openai_text("m", "PREFIX SUMMARY")),
    ]);
    let (_dir, f) = copy_of(&testdata().join("pi-1.6.0/02-tool-use.jsonl"));
    let before = fs::read(&f)?;
    let out = pisces()
        .args(["compact", f.to_str().unwrap(), "--keep-recent", "500", "--append", "--format", "json"])
        .args(["--model", "llamacpp/m", "--base-url", &server.url()])
        .output()?;
    let doc = stdout_json(&out)?;
    let requests = server.requests();
    check(requests.len() == 2, || format!("{} requests", requests.len()))?;
    for (r, want) in requests.iter().zip(golden["requests"].as_array().cloned().unwrap_or_default()) {
        let body = r.json();
        check(prompt_of(&body) == want["promptText"].as_str().unwrap_or_default(), || {
            format!("{} prompt differs from pi's:\n{}", want["kind"], prompt_of(&body))
        })?;
        check(system_of(&body) == want["systemPrompt"].as_str().unwrap_or_default(), || system_of(&body))?;
    }
    let lines = appended_lines(&before, &f)?;
    check(lines.len() == 1, || format!("{} lines", lines.len()))?;
    let want = golden["summaryTemplate"]
        .as_str()
        .unwrap_or_default()
        .replace("<<LLM_OUTPUT:history>>", "HISTORY SUMMARY")
        .replace("<<LLM_OUTPUT:turnPrefix>>", "PREFIX SUMMARY");
    check(lines[0]["summary"] == want.as_str(), || lines[0]["summary"].to_string())?;
    check(lines[0]["firstKeptEntryId"] == golden["preparation"]["firstKeptEntryId"], || lines[0].to_string())?;
    check(lines[0]["tokensBefore"] == golden["preparation"]["tokensBefore"], || lines[0].to_string())?;
    check(lines[0]["usage"] == doc["usage"] && lines[0]["usage"]["input"].as_u64().is_some(), || {
        lines[0]["usage"].to_string()
    })?;
    check(lines[0]["systemMessage"]["role"] == "system", || "no systemMessage checkpoint".into())
}

/// A model error, a reply cut at the output limit and a tool call are pi's failures:
/// reported, nothing written.
fn model_failures() -> TestResult {
    use pisces::llm::testing::{anthropic_end, anthropic_message_start, anthropic_sse, anthropic_text_block};
    let mut cut = vec![anthropic_message_start("claude-sonnet-4-5", 10, 0, 0)];
    cut.extend(anthropic_text_block(0, "partial"));
    cut.extend(anthropic_end("max_tokens", 5));
    let cases = [
        (
            Reply::Sse(anthropic_sse(&cut)),
            "Branch summarization failed: generation hit the token cap and the summary is incomplete",
        ),
        (
            Reply::Sse(pisces::llm::testing::anthropic_tool_call(
                "claude-sonnet-4-5",
                "t1",
                "read",
                &serde_json::json!({"path": "a"}),
            )),
            "Branch summarization attempted to call a tool",
        ),
    ];
    for (reply, text) in cases {
        let server = ScriptedServer::start(vec![reply]);
        let (_dir, f) = copy_of(&testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"));
        let before = fs::read(&f)?;
        let out = pisces()
            .args(["summarize", f.to_str().unwrap(), "@", "adbfcbd8", "--append"])
            .args([
                "--model",
                "anthropic/claude-sonnet-4-5",
                "--base-url",
                &server.url(),
                "--api-key-env",
                "PISCES_TEST_KEY",
            ])
            .env("PISCES_TEST_KEY", "k")
            .output()?;
        check(out.status.code() == Some(2) && stderr(&out).contains(text), || stderr(&out))?;
        check(fs::read(&f)? == before, || "a failed summary changed the file".into())?;
    }
    Ok(())
}
