//! Claude Code sessions (`testdata/claude-code-*/`), checked against the real client.
//!
//! `requests/<stem>.json` holds, for each entry of `<stem>.jsonl`, the `messages` Claude
//! Code itself sent when it was resumed there (tools/claude-oracle/goldens.py): `pisces
//! path FILE UUID --format anthropic` must send the same. The only liberty: a `content`
//! string and a list of one text block are the same message to the API, and the client
//! sends whichever message is last in list form (to hang its cache marker on it), which
//! depends on the probe's turn, not on the file.

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, first_diff, run, stderr, stdout, stdout_json, testdata, TestResult};

/// Every Claude Code corpus folder.
fn corpora() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(testdata())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("claude-code-")))
        .collect();
    dirs.sort();
    dirs
}

/// (corpus file, golden) pairs.
fn goldens() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in corpora() {
        let Ok(read) = fs::read_dir(dir.join("requests")) else { continue };
        let mut files: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
        files.sort();
        for g in files {
            let stem = g.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((dir.join(format!("{stem}.jsonl")), g));
        }
    }
    out
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (file, golden) in goldens() {
        let name = golden.strip_prefix(testdata()).unwrap().to_string_lossy().into_owned();
        let (f, g) = (file.clone(), golden.clone());
        trials.push(Trial::test(format!("claude::context::{name}"), move || contexts_match(&f, &g)));
    }
    for dir in corpora() {
        let mut convs: Vec<PathBuf> =
            fs::read_dir(dir.join("converted")).into_iter().flatten().flatten().map(|e| e.path()).collect();
        convs.sort();
        for g in convs {
            let name = g.strip_prefix(testdata()).unwrap().to_string_lossy().into_owned();
            let src = dir.join(format!("{}.jsonl", g.file_stem().unwrap().to_string_lossy()));
            trials.push(Trial::test(format!("claude::convert_to_pi::{name}"), move || converts_as_pi_reads(&src, &g)));
        }
    }
    for file in peer_files() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        trials.push(Trial::test(format!("claude::peer_suite_loads::{name}"), move || peer_file_loads(&file)));
    }
    trials.extend([
        Trial::test("claude::logged_requests_are_the_contexts", logged_requests_match),
        Trial::test("claude::leaves_cost_is_the_clients", leaves_cost_is_the_clients),
        Trial::test("claude::leaves_name_the_typed_prompt", leaves_name_the_typed_prompt),
        Trial::test("claude::fork_at_every_entry_builds_the_same_context", forks_build_the_same_context),
        Trial::test("claude::diff_of_two_fix_attempts", diff_of_two_fix_attempts),
        Trial::test("claude::forks_reopened_by_the_client", forks_reopened_by_the_client),
        Trial::test("claude::tree_shows_tools_in_pisces_style", tree_rows),
        Trial::test("claude::metadata_hidden_unless_filter_all", metadata_rows),
        Trial::test("claude::subagent_hangs_under_its_call", subagent_rows),
        Trial::test("claude::fork_after_compactions_checks_clean", fork_after_compactions),
        Trial::test("claude::session_id_found_in_claude_projects", found_by_id),
        Trial::test("claude::check_reports_unanswered_calls_and_new_types", check_findings),
    ]);
    trials
}

/// A string content as a list of one text block.
fn canonical(messages: &Value) -> Value {
    let mut m = messages.clone();
    for msg in m.as_array_mut().into_iter().flatten() {
        if let Some(Value::String(t)) = msg.get("content").cloned() {
            msg["content"] = serde_json::json!([{"type": "text", "text": t}]);
        }
    }
    m
}

fn anthropic_messages(file: &Path, rev: Option<&str>) -> Result<Value, libtest_mimic::Failed> {
    let file = file.to_str().unwrap();
    let mut args = vec!["path", file];
    args.extend(rev);
    args.extend(["--format", "anthropic"]);
    let doc = stdout_json(&run(&args))?;
    Ok(doc["messages"].clone())
}

/// At the client's own leaf and at every entry it resumed at, pisces sends its messages.
fn contexts_match(file: &Path, golden: &Path) -> TestResult {
    let g: Value = serde_json::from_str(&fs::read_to_string(golden)?)?;
    let mut cases: Vec<(Option<String>, &Value)> = vec![(None, &g["leaf"])];
    for (uuid, v) in g["at"].as_object().into_iter().flatten() {
        cases.push((Some(uuid.clone()), v));
    }
    let mut failures = Vec::new();
    let mut compared = 0;
    for (rev, want) in cases {
        if want.get("refused").is_some() || want.get("messages").is_none() {
            continue;
        }
        compared += 1;
        let got = anthropic_messages(file, rev.as_deref())?;
        if let Some(d) = first_diff(&canonical(&got), &canonical(&want["messages"]), "$") {
            failures.push(format!("at {}: {d}", rev.as_deref().unwrap_or("the leaf")));
        }
    }
    check(compared > 0, || "the golden holds no context".to_string())?;
    check(failures.is_empty(), || format!("{} of {compared} contexts differ:\n{}", failures.len(), failures.join("\n")))
}

/// The client logs each request it sends in the file itself: an `api-request` line names
/// its messages as the previous request's first `keep` and then the `api-request-blob`s of
/// its `tail` (each blob written once, the first time it is sent). Rebuilt, each request
/// whose blobs are all in the file is the context at the parent of the reply that follows
/// it, which `pisces path` must give.
fn logged_requests_match() -> TestResult {
    let (mut compared, mut failures) = (0, Vec::new());
    for (file, _) in goldens() {
        logged_requests_of(&file, &mut compared, &mut failures)?;
        // Its subagents' transcripts log their requests too.
        let subs = file.with_extension("").join("subagents");
        let mut subs: Vec<PathBuf> = fs::read_dir(subs)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        subs.sort();
        for sub in subs {
            logged_requests_of(&sub, &mut compared, &mut failures)?;
        }
    }
    check(compared > 0, || "no corpus file logs a request whose messages it holds".to_string())?;
    check(failures.is_empty(), || format!("{} of {compared} requests differ:\n{}", failures.len(), failures.join("\n")))
}

fn logged_requests_of(file: &Path, compared: &mut usize, failures: &mut Vec<String>) -> TestResult {
    let text = fs::read_to_string(file)?;
    let docs: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let mut blobs: std::collections::HashMap<String, Value> = std::collections::HashMap::new();
    let mut prev: Vec<Value> = Vec::new();
    for (k, d) in docs.iter().enumerate() {
        if d["type"] == "api-request-blob" {
            if let Some(h) = d["hash"].as_str() {
                blobs.insert(h.to_string(), d["message"].clone());
            }
            continue;
        }
        if d["type"] != "api-request" {
            continue;
        }
        let keep = d["keep"].as_u64().unwrap_or(0) as usize;
        let tail: Option<Vec<Value>> = d["tail"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| h.as_str().and_then(|h| blobs.get(h)).cloned())
            .collect();
        let (Some(tail), true) = (tail, keep <= prev.len()) else {
            // A blob the file does not hold (sent before, by another process): not rebuilt.
            prev.clear();
            continue;
        };
        prev.truncate(keep);
        prev.extend(tail);
        let Some(reply) = docs[k + 1..].iter().find(|e| e["type"] == "assistant") else { continue };
        let Some(at) = reply["parentUuid"].as_str() else { continue };
        *compared += 1;
        let want = strip_cache_control(&Value::Array(prev.clone()));
        let got = anthropic_messages(file, Some(at))?;
        if let Some(d) = first_diff(&canonical(&got), &canonical(&want), "$") {
            failures.push(format!("{}: request on line {} (at {at}): {d}", file.display(), k + 1));
        }
    }
    Ok(())
}

fn strip_cache_control(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| *k != "cache_control").map(|(k, x)| (k.clone(), strip_cache_control(x))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_cache_control).collect()),
        other => other.clone(),
    }
}

/// `leaves` counts each reply once and prices it as the client does: the total equals
/// the client's own `cost-state` at the end of a session without branches.
fn leaves_cost_is_the_clients() -> TestResult {
    let file = testdata().join("claude-code-2.1.332/01-tool-calls.jsonl");
    let text = fs::read_to_string(&file)?;
    let want = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "cost-state")
        .and_then(|v| v["totalCostUSD"].as_f64())
        .ok_or("no cost-state line")?;
    let doc = stdout_json(&run(&["leaves", file.to_str().unwrap(), "--format", "json"]))?;
    let leaves = doc["leaves"].as_array().ok_or("no leaves")?;
    check(leaves.len() == 1, || format!("one tip expected, got {}", leaves.len()))?;
    let cost = leaves[0]["cost"].as_f64().or_else(|| leaves[0]["usage"]["cost"].as_f64()).ok_or("no cost")?;
    check((cost - want).abs() < 1e-9, || format!("cost {cost}, the client counted {want}"))
}

/// A prompt with an image is followed by a line the client writes itself (`isMeta`: the
/// image's path): the leaf's last prompt is the one the user typed, with its own id.
fn leaves_name_the_typed_prompt() -> TestResult {
    let file = testdata().join("claude-code-2.1.332/11-mixed.jsonl");
    let text = fs::read_to_string(&file)?;
    let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let typed = lines
        .iter()
        .rfind(|v| v["type"] == "user" && v["isMeta"] != true && v["message"]["content"][1]["type"] == "image")
        .ok_or("no prompt with an image")?;
    check(lines.iter().any(|v| v["isMeta"] == true && v["parentUuid"] == typed["uuid"]), || {
        "the client's line after the image prompt is gone".to_string()
    })?;
    let doc = stdout_json(&run(&["leaves", file.to_str().unwrap(), "--format", "json"]))?;
    let leaf =
        doc["leaves"].as_array().into_iter().flatten().find(|l| l["isDefault"] == true).ok_or("no default leaf")?;
    check(leaf["lastUserPrompt"]["id"] == typed["uuid"], || format!("last prompt {}", leaf["lastUserPrompt"]))?;
    check(leaf["lastUserPrompt"]["text"] == typed["message"]["content"][0]["text"], || {
        format!("last prompt {}", leaf["lastUserPrompt"])
    })
}

fn tree_rows() -> TestResult {
    let file = testdata().join("claude-code-2.1.332/01-tool-calls.jsonl");
    let out = run(&["tree", file.to_str().unwrap()]);
    let text = stdout(&out);
    for row in ["[Read: src/todo.js]", "[Bash: npm test] (error)", "[Grep: /parseDue/ in .]", "[Edit: NOTES.md]"] {
        check(text.contains(row), || format!("no row {row:?} in\n{text}{}", stderr(&out)))?;
    }
    // The reply that only called tools is not a row of its own: its results name it.
    check(!text.contains("[Read: src/todo.js] [Grep"), || format!("a calls-only reply is shown:\n{text}"))?;
    // A prompt's image and document are named where they are.
    for (file, row) in [
        ("11-mixed", "user: What is in this picture? [[x-image]] [image]"),
        ("13-hooks-mcp", "user: [document] What does this PDF say? [[h-doc]]"),
    ] {
        let f = testdata().join(format!("claude-code-2.1.332/{file}.jsonl"));
        let text = stdout(&run(&["tree", f.to_str().unwrap()]));
        check(text.contains(row), || format!("no row {row:?} in\n{text}"))?;
    }
    Ok(())
}

/// The subagent's transcript hangs under the row of the `Agent` call's result: folded by
/// default, its own rows with `--subagents`, its file in JSON; found in the older flat
/// layout (`agent-<id>.jsonl` beside the session) too.
fn subagent_rows() -> TestResult {
    let file = testdata().join("claude-code-2.1.332/08-subagent.jsonl");
    let f = file.to_str().unwrap();
    let folded = stdout(&run(&["tree", f]));
    let lines: Vec<&str> = folded.lines().collect();
    let call = lines.iter().position(|l| l.contains("[Agent: Inspect the tests]"));
    check(
        call.is_some_and(|k| {
            lines.get(k + 1).is_some_and(|l| l.contains("⊞ [subagent general-purpose: Inspect the tests]"))
        }),
        || format!("no folded subagent under the call:\n{folded}"),
    )?;
    check(!folded.contains("Read test/todo.test.js"), || format!("folded, yet the subagent's rows show:\n{folded}"))?;
    let open = stdout(&run(&["tree", f, "--subagents"]));
    for row in [
        "⊟ [subagent general-purpose",
        "user: Read test/todo.test.js and say what it checks",
        "[Read: test/todo.test.js]",
    ] {
        check(open.contains(row), || format!("no {row:?} with --subagents:\n{open}"))?;
    }
    let doc = stdout_json(&run(&["tree", f, "--format", "json"]))?;
    let files: Vec<&str> = doc["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["subagents"].as_array().into_iter().flatten())
        .filter_map(|a| a["file"].as_str())
        .collect();
    check(files.len() == 1 && files[0].ends_with("08-subagent/subagents/agent-a79426a3e1f52e748.jsonl"), || {
        format!("subagents in JSON: {files:?}")
    })?;
    let flat = tempfile::tempdir()?;
    fs::copy(&file, flat.path().join("s.jsonl"))?;
    fs::copy(
        testdata().join("claude-code-2.1.332/08-subagent/subagents/agent-a79426a3e1f52e748.jsonl"),
        flat.path().join("agent-a79426a3e1f52e748.jsonl"),
    )?;
    let old = stdout(&run(&["tree", flat.path().join("s.jsonl").to_str().unwrap(), "--subagents"]));
    check(old.contains("[Read: test/todo.test.js]"), || format!("the flat layout's subagent is not found:\n{old}"))
}

/// A fork made after a compaction holds the tail the compaction kept without the line it was
/// written under; the client hangs that tail under the summary, so `check` finds nothing
/// missing, and the tree still draws the tail before its compaction.
fn fork_after_compactions() -> TestResult {
    let src = testdata().join("claude-code-2.1.332/10-compact-twice.jsonl");
    let tmp = tempfile::tempdir()?;
    let fork = tmp.path().join("fork.jsonl");
    let out = run(&["fork", src.to_str().unwrap(), "@", "-o", fork.to_str().unwrap()]);
    check(out.status.success(), || stderr(&out))?;
    let out = run(&["check", fork.to_str().unwrap()]);
    check(out.status.success() && stdout(&out).contains("clean"), || format!("{}{}", stdout(&out), stderr(&out)))?;
    let tree = stdout(&run(&["tree", fork.to_str().unwrap()]));
    let (tail, boundary) = (tree.find("On this branch: only src/todo.js"), tree.find("[compaction"));
    check(tail.is_some() && tail < boundary, || format!("the kept tail is not drawn before its compaction:\n{tree}"))
}

fn metadata_rows() -> TestResult {
    let file = testdata().join("claude-code-2.1.332/01-tool-calls.jsonl");
    let f = file.to_str().unwrap();
    let plain = stdout(&run(&["tree", f]));
    let all = stdout(&run(&["tree", f, "--filter", "all"]));
    check(!plain.contains("[attachment: environment]"), || format!("attachments shown by default:\n{plain}"))?;
    check(all.contains("[attachment: environment]"), || format!("attachments not shown with --filter all:\n{all}"))
}

/// A session id (whole or a prefix) is looked up in `$CLAUDE_CONFIG_DIR/projects/*/`.
fn found_by_id() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let project = tmp.path().join("projects/-home-dev-todo-cli");
    fs::create_dir_all(&project)?;
    let src = testdata().join("claude-code-2.1.332/01-tool-calls.jsonl");
    let sid = "77477418-316c-46d0-90c8-7e73cd852e11";
    fs::copy(&src, project.join(format!("{sid}.jsonl")))?;
    let out = crate::common::pisces()
        .env("CLAUDE_CONFIG_DIR", tmp.path())
        .args(["path", "7747741", "--format", "json"])
        .output()?;
    let doc = stdout_json(&out)?;
    check(doc["session"]["agent"] == "Claude Code", || format!("{doc:#}").chars().take(400).collect())
}

fn check_findings() -> TestResult {
    let src = fs::read_to_string(testdata().join("claude-code-2.1.332/01-tool-calls.jsonl"))?;
    // Cut the file after the reply that calls Bash: its call is never answered.
    let cut: Vec<&str> =
        src.lines().take_while(|l| !l.contains("\"tool_use_id\":\"toolu_8bdc449afb4b7ee0054389df\"")).collect();
    let tmp = tempfile::tempdir()?;
    let f = tmp.path().join("s.jsonl");
    fs::write(&f, format!("{}\n{{\"type\":\"brand-new-kind\",\"sessionId\":\"x\"}}\n", cut.join("\n")))?;
    let out = run(&["check", f.to_str().unwrap(), "--format", "json"]);
    let text = stdout(&out);
    check(text.contains("unanswered-call") && text.contains("toolu_8bdc449afb4b7ee0054389df"), || text.clone())?;
    check(text.contains("unknown-type") && text.contains("brand-new-kind"), || text.clone())
}

/// claude-code-log's test files (testdata/claude-code-log/).
fn peer_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(testdata().join("claude-code-log"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Every reading command runs on the file without a panic; whatever was skipped is named
/// by its line on standard error, and `check` lists it.
fn peer_file_loads(file: &Path) -> TestResult {
    let f = file.to_str().unwrap();
    for args in [
        vec!["tree", f, "--filter", "all"],
        vec!["path", f, "--format", "json"],
        vec!["path", f, "--format", "anthropic"],
        vec!["path", f, "--format", "text"],
        vec!["leaves", f],
        vec!["show", f, "@"],
        vec!["check", f],
    ] {
        let out = run(&args);
        let code = out.status.code();
        check(code == Some(0) || (args[0] == "check" && code == Some(1)), || {
            format!("{args:?} exited {code:?}:\n{}", stderr(&out))
        })?;
        if args[0] == "tree" {
            check(!stdout(&out).is_empty(), || format!("{args:?} drew nothing"))?;
        }
    }
    // `check` exits 1 when it finds problems: read its JSON whatever the status.
    let report: Value = serde_json::from_slice(&run(&["check", f, "--format", "json"]).stdout)?;
    for finding in report["files"][0]["findings"].as_array().into_iter().flatten() {
        if finding["kind"] == "not-an-object" || finding["kind"] == "malformed" {
            check(finding["line"].is_u64(), || format!("a skipped line without its number: {finding}"))?;
        }
    }
    Ok(())
}

/// A fork at any entry is a file the client builds the same messages from (checked here by
/// pisces's builder, which the goldens check against the client), named by its new id,
/// with that id in every line; the source is not touched.
fn forks_build_the_same_context() -> TestResult {
    let src = testdata().join("claude-code-2.1.332/01-tool-calls.jsonl");
    let before = fs::read(&src)?;
    let tmp = tempfile::tempdir()?;
    let s = src.to_str().unwrap();
    let uuids: Vec<String> = String::from_utf8(before.clone())?
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["uuid"].as_str().map(str::to_string))
        .collect();
    for u in &uuids {
        let out = crate::common::pisces()
            .args(["fork", s, u, "--session-dir", tmp.path().to_str().unwrap(), "--format", "json"])
            .output()?;
        let doc = stdout_json(&out)?;
        let path = doc["path"].as_str().ok_or("no path")?.to_string();
        let id = doc["id"].as_str().ok_or("no id")?;
        check(path.ends_with(&format!("{id}.jsonl")), || format!("{path} is not named by {id}"))?;
        let text = fs::read_to_string(&path)?;
        check(text.lines().all(|l| l.contains(&format!("\"sessionId\":\"{id}\""))), || {
            format!("a line of {path} keeps the old id")
        })?;
        // The fork's context at its last entry is the source's there (as the fork is
        // resumed, `--resume` answers a turn left unfinished: forks_reopened_by_the_client).
        let want = anthropic_messages(&src, Some(u))?;
        let got = anthropic_messages(Path::new(&path), Some(u))?;
        if let Some(d) = first_diff(&got, &want, "$") {
            return Err(format!("fork at {u}: {d}").into());
        }
    }
    check(fs::read(&src)? == before, || "the source changed".into())
}

/// (role, text, calls, results) of Anthropic messages: the conversation, whatever the shape.
fn conversation_of_anthropic(messages: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in canonical(messages).as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or_default();
        for b in m["content"].as_array().into_iter().flatten() {
            // A background task's notification goes framed as a reminder; the conversion
            // keeps the line as it was written.
            if let Some(n) = b["text"].as_str().and_then(|t| t.find("<task-notification>").map(|k| &t[k..])) {
                out.push((role.to_string(), n.trim_end_matches("\n</system-reminder>").to_string()));
                continue;
            }
            match b["type"].as_str() {
                Some("text")
                    if role != "system" && !b["text"].as_str().unwrap_or_default().starts_with("<system-reminder>") =>
                {
                    out.push((role.to_string(), b["text"].as_str().unwrap_or_default().trim_end().to_string()))
                }
                Some("tool_use") => out.push(("call".into(), b["id"].as_str().unwrap_or_default().to_string())),
                Some("tool_result") => {
                    out.push(("result".into(), b["tool_use_id"].as_str().unwrap_or_default().to_string()))
                }
                // pi has no documents nor server-side calls: the conversion keeps those blocks
                // as they are, as their JSON.
                Some("document" | "server_tool_use" | "web_search_tool_result") => {
                    out.push((role.to_string(), serde_json::to_string(b).unwrap_or_default()))
                }
                _ => {}
            }
        }
    }
    out
}

/// The same, of pi's LLM messages.
fn conversation_of_pi(messages: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in messages.as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or_default();
        if role == "toolResult" {
            out.push(("result".into(), m["toolCallId"].as_str().unwrap_or_default().to_string()));
            continue;
        }
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("text") => {
                    out.push((role.to_string(), b["text"].as_str().unwrap_or_default().trim_end().to_string()))
                }
                Some("toolCall") => out.push(("call".into(), b["id"].as_str().unwrap_or_default().to_string())),
                _ => {}
            }
        }
    }
    out
}

/// `convert --to pi` writes the file the real pi read into `converted/<stem>.json` (pi's
/// own messages for it), and that is the conversation Claude Code sent: the same texts,
/// calls and results in the same order, less the client's reminders.
fn converts_as_pi_reads(src: &Path, golden: &Path) -> TestResult {
    let g: Value = serde_json::from_str(&fs::read_to_string(golden)?)?;
    let tmp = tempfile::tempdir()?;
    let out = tmp.path().join("c.jsonl");
    let r = run(&["convert", src.to_str().unwrap(), "--to", "pi", "-o", out.to_str().unwrap()]);
    check(r.status.success(), || stderr(&r))?;
    let doc = stdout_json(&run(&["path", out.to_str().unwrap(), "--format", "llm"]))?;
    if let Some(d) = first_diff(&doc["messages"], &g["llm"], "$") {
        return Err(format!("pi reads the conversion otherwise: {d}").into());
    }
    let requests =
        src.parent().unwrap().join("requests").join(format!("{}.json", src.file_stem().unwrap().to_string_lossy()));
    let client: Value = serde_json::from_str(&fs::read_to_string(requests)?)?;
    let want = conversation_of_anthropic(&client["leaf"]["messages"]);
    let got = conversation_of_pi(&g["llm"]);
    check(got == want, || format!("pi's conversation:\n{got:#?}\nClaude Code's:\n{want:#?}"))
}

/// The two fix attempts of `09-two-fixes` (a rewind at the same reply): diff finds where
/// they split by uuid, that `npm test` fails on one and passes on the other, and the final
/// `src/todo.js` of each side, rebuilt from Claude Code's Read and Edit calls.
fn diff_of_two_fix_attempts() -> TestResult {
    let file = testdata().join("claude-code-2.1.332/09-two-fixes.jsonl");
    let f = file.to_str().unwrap();
    let leaves = stdout_json(&run(&["leaves", f, "--format", "json"]))?;
    let tips: Vec<String> = leaves["leaves"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["id"].as_str().map(str::to_string))
        .collect();
    check(tips.len() == 2, || format!("two attempts expected, got {tips:?}"))?;
    let out = run(&["diff", f, &tips[0], &tips[1], "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)?;
    let last_test = |side: &str| -> Option<i64> {
        doc["summary"][side]["commands"]
            .as_array()?
            .iter()
            .find(|c| c["isTest"] == true)
            .and_then(|c| c["last"]["exitCode"].as_i64())
    };
    let (a, b) = (last_test("a"), last_test("b"));
    check(matches!((a, b), (Some(1), Some(0)) | (Some(0), Some(1))), || {
        format!("npm test exit codes {a:?} / {b:?}\n{doc:#}")
    })?;
    let text = stdout(&run(&["diff", f, &tips[0], &tips[1]]));
    check(text.contains("pass on") && text.contains("src/todo.js"), || text.clone())?;
    check(
        text.contains("+  const [y, m, d] = s.split('-').map(Number);")
            || text.contains("-  const [y, m, d] = s.split('-').map(Number);"),
        || format!("the fixed line is not in the diff of the final contents:\n{text}"),
    )
}

/// What the client does differently when it is resumed at the last entry of a file that
/// ends mid-turn (`--resume` alone, as on a fork) rather than cut there
/// (`--resume-session-at`): it answers the interrupted turn with an assistant "No response
/// requested.", words the results it makes up for unanswered calls otherwise and puts them
/// after the real ones, and sends an empty system message for its effort; the attribution
/// reminder it makes for the next turn comes after that answer, so the text before the turn's
/// user line keeps the newline of the seam (cut there, the reminder takes it); a context of
/// nothing but system texts (a hook's) goes as the user's reminder before the answer (cut
/// there, as a system message stating the effort). Those are taken out of both sides.
fn as_if_cut(messages: &Value) -> Value {
    let mut out: Vec<Value> = canonical(messages).as_array().cloned().unwrap_or_default();
    if let [only] = &mut out[..] {
        if only["role"] == "system" {
            only.as_object_mut().map(|o| o.remove("output_config"));
            if let Some(t) = only["content"].as_str().or_else(|| only["content"][0]["text"].as_str()) {
                *only = serde_json::json!({"role": "user", "content": [{"type": "text", "text": format!("<system-reminder>\n{t}\n</system-reminder>")}]});
            }
        }
    }
    for m in &mut out {
        for b in m["content"].as_array_mut().into_iter().flatten() {
            if let Some(t) = b["text"].as_str().and_then(|t| t.strip_suffix("</system-reminder>\n")) {
                b["text"] = format!("{t}</system-reminder>").into();
            }
        }
    }
    out.retain(|m| !(m["role"] == "system" && m["content"].as_array().is_some_and(Vec::is_empty)));
    if out.last().is_some_and(|m| m["role"] == "assistant" && m["content"][0]["text"] == "No response requested.") {
        out.pop();
    }
    for m in &mut out {
        let Some(blocks) = m["content"].as_array_mut() else { continue };
        for b in blocks.iter_mut() {
            if b["type"] == "tool_result"
                && b["content"].as_str().is_some_and(|t| t.starts_with("[Tool call interrupted"))
            {
                b["content"] = "[Tool result missing due to internal error]".into();
                b["is_error"] = true.into();
            }
        }
        // The made-up results come after the real ones there, before them here.
        if blocks.iter().all(|b| b["type"] == "tool_result") {
            blocks.sort_by(|a, b| a["tool_use_id"].as_str().cmp(&b["tool_use_id"].as_str()));
        }
    }
    Value::Array(out)
}

/// `forks/<stem>.json`: what the real client sent when it resumed `pisces fork FILE UUID`
/// (tools/claude-oracle/forkcheck.py), at every entry. `pisces path FORK` (no REV: the
/// context `--resume` sends) says exactly that, and it is what the client sent resuming the
/// source there, but for what `--resume` adds to a turn left unfinished.
fn forks_reopened_by_the_client() -> TestResult {
    let dir = testdata().join("claude-code-2.1.332");
    let scratch = tempfile::tempdir()?;
    let mut compared = 0;
    let mut stems: Vec<String> = fs::read_dir(dir.join("forks"))?
        .flatten()
        .filter_map(|e| e.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    stems.sort();
    for stem in &stems {
        let file = dir.join(format!("{stem}.jsonl"));
        let forks: Value = serde_json::from_str(&fs::read_to_string(dir.join(format!("forks/{stem}.json")))?)?;
        let source: Value = serde_json::from_str(&fs::read_to_string(dir.join(format!("requests/{stem}.json")))?)?;
        for (k, (uuid, sent)) in forks["at"].as_object().into_iter().flatten().enumerate() {
            check(sent.is_array(), || format!("{stem}: the client did not resume the fork at {uuid}: {sent}"))?;
            // pisces's fork, resumed as the client resumes it (`path` without REV is `--resume`).
            let fork = scratch.path().join(format!("{stem}-{k}.jsonl"));
            let out = run(&["fork", file.to_str().unwrap(), uuid, "-o", fork.to_str().unwrap()]);
            check(out.status.success(), || stderr(&out))?;
            let got = anthropic_messages(&fork, None)?;
            if let Some(d) = first_diff(&canonical(&got), &canonical(sent), "$") {
                return Err(
                    format!("{stem}: the fork at {uuid}: pisces path says otherwise than the client: {d}").into()
                );
            }
            // And the client resumed the fork as it resumed the source there.
            let want = &source["at"][uuid]["messages"];
            if let Some(d) = first_diff(&as_if_cut(sent), &as_if_cut(want), "$") {
                return Err(format!("{stem}: the fork at {uuid} resumes otherwise than the source: {d}").into());
            }
            compared += 1;
        }
    }
    check(compared >= 60, || format!("only {compared} forks compared"))
}
