//! `pisces agent`: the loop against a scripted model server, and the session it writes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{
    anthropic_error, anthropic_message_start, anthropic_sse, anthropic_text, anthropic_text_block, anthropic_tool_call,
    openai_error, openai_text, Reply, ScriptedServer,
};

use crate::common::{check, pisces, run, stderr, stdout, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("agent::new_session_with_write_read_bash", new_session_with_tools),
        Trial::test("agent::continue_same_file_writes_no_new_setup", continue_same_file),
        Trial::test("agent::from_user_message_makes_a_branch", from_makes_a_branch),
        Trial::test("agent::model_error_is_recorded_and_fails", model_error_is_recorded),
        Trial::test("agent::overloaded_error_is_recorded_omitted_and_retried", retry_is_recorded),
        Trial::test("agent::overflow_error_compacts_and_retries", overflow_compacts_and_retries),
        Trial::test("agent::context_over_threshold_compacts_first", threshold_compacts_first),
        Trial::test("agent::ctrl_c_aborts_a_running_bash_call", ctrl_c_aborts_bash),
        Trial::test("agent::second_ctrl_c_exits_at_once", second_ctrl_c_exits),
        Trial::test("agent::ctrl_c_aborts_a_silent_stream", ctrl_c_aborts_a_silent_stream),
        Trial::test("agent::interactive_prompts_and_slash_commands", interactive_session),
        Trial::test("agent::interactive_model_and_fork", interactive_model_and_fork),
        Trial::test("agent::interactive_compact", interactive_compact),
        Trial::test("agent::thinking_level_as_pi_picks_it", thinking_level_as_pi_picks_it),
        Trial::test("agent::json_mode_streams_as_pi", json_mode_streams_as_pi),
        Trial::test("agent::compaction_summary_is_retried", compaction_summary_is_retried),
        Trial::test("agent::interactive_branch_with_summary", interactive_branch_with_summary),
    ]
}

const MODEL: &str = "claude-sonnet-4-5";

fn agent(dir: &Path, server: &ScriptedServer, extra: &[&str]) -> Output {
    pisces()
        .current_dir(dir)
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY"])
        .args(extra)
        .env("PISCES_TEST_KEY", "test-key")
        .output()
        .expect("pisces runs")
}

fn lines(p: &Path) -> Vec<Value> {
    fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn kind(e: &Value) -> String {
    match e["type"].as_str().unwrap_or("") {
        "message" => e["message"]["role"].as_str().unwrap_or("?").to_string(),
        t => t.to_string(),
    }
}

fn only_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = walk(dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn ok(out: &Output) -> TestResult {
    check(out.status.success(), || format!("exit {:?}\nstderr:\n{}", out.status.code(), stderr(out)))
}

fn chained(entries: &[Value]) -> TestResult {
    for w in entries[1..].windows(2) {
        check(w[1]["parentId"] == w[0]["id"], || format!("{} is not the parent of {}", w[0]["id"], w[1]["id"]))?;
    }
    check(entries[1]["parentId"].is_null(), || "the first entry is not a root".into())
}

fn new_session_with_tools() -> TestResult {
    let project = tempfile::tempdir()?;
    let sessions = tempfile::tempdir()?;
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_tool_call(
            MODEL,
            "toolu_1",
            "write",
            &json!({"path": "hello.txt", "content": "hi there\n"}),
        )),
        Reply::Sse(anthropic_tool_call(MODEL, "toolu_2", "read", &json!({"path": "hello.txt"}))),
        Reply::Sse(anthropic_tool_call(MODEL, "toolu_3", "bash", &json!({"command": "wc -l < hello.txt"}))),
        Reply::Sse(anthropic_text(MODEL, "Wrote hello.txt; it has one line.")),
    ]);
    let out = agent(
        project.path(),
        &server,
        &["--session-dir", sessions.path().to_str().unwrap(), "-p", "Write hello.txt, read it, count its lines."],
    );
    ok(&out)?;
    check(stdout(&out) == "Wrote hello.txt; it has one line.\n", || format!("stdout {:?}", stdout(&out)))?;
    check(fs::read_to_string(project.path().join("hello.txt"))? == "hi there\n", || "hello.txt not written".into())?;

    let file = only_file(sessions.path());
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let entries = lines(&file);
    let header = &entries[0];
    check(header["type"] == "session" && header["version"] == 3, || header.to_string())?;
    let id = header["id"].as_str().unwrap();
    check(name.ends_with(&format!("_{id}.jsonl")) && id.len() == 36, || name.clone())?;
    let canon = fs::canonicalize(project.path())?;
    check(header["cwd"] == project.path().to_str().unwrap() || header["cwd"] == canon.to_str().unwrap(), || {
        header.to_string()
    })?;
    let kinds: Vec<String> = entries[1..].iter().map(kind).collect();
    let want = [
        "model_change",
        "thinking_level_change",
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ];
    check(kinds == want, || format!("entries {kinds:?}"))?;
    chained(&entries)?;
    check(entries[1]["provider"] == "anthropic" && entries[1]["modelId"] == MODEL, || entries[1].to_string())?;
    // pi's default level for a new session (DEFAULT_THINKING_LEVEL), which the model
    // supports; the request asks for it.
    check(entries[2]["thinkingLevel"] == "medium", || entries[2].to_string())?;
    let first = server.requests()[0].json();
    check(first["thinking"]["type"] == "enabled", || first["thinking"].to_string())?;

    let sys = &entries[3]["message"];
    let keys: Vec<&str> = sys.as_object().unwrap().keys().map(String::as_str).collect();
    check(keys == ["role", "content", "sections", "timestamp", "toolsAdded"], || format!("{keys:?}"))?;
    let sections: Vec<&str> = sys["sections"].as_object().unwrap().keys().map(String::as_str).collect();
    check(sections == ["preamble", "tools", "rules", "docs", "cwd"], || format!("{sections:?}"))?;
    let tools: Vec<&str> = sys["toolsAdded"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    check(tools == ["read", "bash", "edit", "write"], || format!("{tools:?}"))?;

    // Tool results in call order, with what the tools did.
    let results: Vec<&Value> = entries.iter().filter(|e| kind(e) == "toolResult").map(|e| &e["message"]).collect();
    let names: Vec<&str> = results.iter().map(|r| r["toolName"].as_str().unwrap()).collect();
    check(names == ["write", "read", "bash"], || format!("{names:?}"))?;
    check(results.iter().all(|r| r["isError"] == false), || format!("{results:?}"))?;
    check(results[1]["content"][0]["text"].as_str().unwrap_or("").contains("hi there"), || results[1].to_string())?;
    check(results[2]["content"][0]["text"].as_str().unwrap_or("").trim() == "1", || results[2].to_string())?;
    check(results[0]["toolCallId"] == "toolu_1" && results[2]["toolCallId"] == "toolu_3", || "ids".into())?;
    for a in entries.iter().filter(|e| kind(e) == "assistant") {
        let m = &a["message"];
        check(m["usage"]["cost"]["total"].is_number() && m["thinkingLevel"] == "medium", || m.to_string())?;
    }

    // The model saw the tool results: the last request carries all three.
    let requests = server.requests();
    check(requests.len() == 4, || format!("{} requests", requests.len()))?;
    let last = requests[3].json();
    let body = last.to_string();
    check(body.contains("toolu_3") && body.contains("hi there"), || body.chars().take(400).collect())?;
    check(last["system"].to_string().contains("running inside pisces"), || last["system"].to_string())?;

    // pisces path shows the context; pisces check finds the file clean.
    let f = file.to_str().unwrap();
    let path_out = run(&["path", f]);
    ok(&path_out)?;
    let text = stdout(&path_out);
    check(text.contains("Wrote hello.txt; it has one line.") && text.contains("hello.txt"), || text.clone())?;
    let check_out = run(&["check", f]);
    check(check_out.status.success(), || format!("check: {}{}", stdout(&check_out), stderr(&check_out)))
}

fn continue_same_file() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::Sse(openai_text("gpt-x", "First answer.")),
        Reply::Sse(openai_text("gpt-x", "Second answer.")),
    ]);
    let base = format!("{}/v1", server.url());
    let run_agent = |extra: &[&str]| {
        pisces()
            .current_dir(project.path())
            .args(["agent", "--session", f, "--base-url", &base, "--tools", "read,ls"])
            .args(extra)
            .output()
            .expect("pisces runs")
    };
    let out = run_agent(&["--model", "llamacpp/gpt-x", "-p", "one"]);
    ok(&out)?;
    check(stdout(&out) == "First answer.\n", || stdout(&out))?;
    let first = lines(&file);
    let kinds: Vec<String> = first[1..].iter().map(kind).collect();
    check(kinds == ["model_change", "thinking_level_change", "system", "user", "assistant"], || format!("{kinds:?}"))?;
    let tools: Vec<&str> =
        first[3]["message"]["toolsAdded"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    check(tools == ["read", "ls"], || format!("{tools:?}"))?;

    // Same model, same tools: only the user message and the answer are added.
    let out = run_agent(&["-p", "two"]);
    ok(&out)?;
    check(stdout(&out) == "Second answer.\n", || stdout(&out))?;
    let second = lines(&file);
    check(second[..first.len()] == first[..], || "earlier lines changed".into())?;
    let added: Vec<String> = second[first.len()..].iter().map(kind).collect();
    check(added == ["user", "assistant"], || format!("{added:?}"))?;
    check(second[first.len()]["parentId"] == first.last().unwrap()["id"], || "not chained to the leaf".into())?;
    // The second request held the whole conversation.
    let body = server.requests()[1].json().to_string();
    check(body.contains("First answer.") && body.contains("\"two\""), || body)?;
    let c = run(&["check", f]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

fn from_makes_a_branch() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    // The corpus session, with its cwd moved here (pi refuses a missing cwd too).
    let text = fs::read_to_string(testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"))?;
    let mut all: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    all[0]["cwd"] = json!(project.path().to_str().unwrap());
    let body: String = all.iter().map(|v| format!("{}\n", pisces::formats::pi::entries::line(v))).collect();
    fs::write(&file, body)?;
    let before = lines(&file);
    let user = before.iter().rev().find(|e| kind(e) == "user").unwrap().clone();
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_text(MODEL, "A different fix."))]);
    let user_id = user["id"].as_str().unwrap();
    let out = agent(
        project.path(),
        &server,
        &["--session", file.to_str().unwrap(), "--from", user_id, "-p", "Try another way."],
    );
    ok(&out)?;
    check(stdout(&out) == "A different fix.\n", || stdout(&out))?;
    let prompt_text = user["message"]["content"][0]["text"].as_str().unwrap();
    check(stderr(&out).contains(prompt_text), || stderr(&out))?;
    let after = lines(&file);
    let added = &after[before.len()..];
    let kinds: Vec<String> = added.iter().map(kind).collect();
    // The corpus was written with thinking level medium; pisces asks for it again (the
    // branch's level), so no thinking_level_change; the model is the same.
    check(kinds.last().map(String::as_str) == Some("assistant"), || format!("{kinds:?}"))?;
    let new_user = added.iter().find(|e| kind(e) == "user").unwrap();
    check(new_user["message"]["content"][0]["text"] == "Try another way.", || new_user.to_string())?;
    let first_added = &added[0];
    check(first_added["parentId"] == user["parentId"], || format!("branch starts at {}", first_added["parentId"]))?;
    let leaves = run(&["leaves", file.to_str().unwrap(), "--format", "json"]);
    ok(&leaves)?;
    let c = run(&["check", file.to_str().unwrap()]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))?;
    // The path to the new leaf holds the new prompt, not the old one after the branch point.
    let p = run(&["path", file.to_str().unwrap()]);
    let text = stdout(&p);
    check(text.contains("Try another way.") && text.contains("A different fix."), || text.clone())
}

fn model_error_is_recorded() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let server = ScriptedServer::start(vec![Reply::status(
        400,
        openai_error("bad request: no such model", "invalid_request_error", None),
    )]);
    let out = pisces()
        .current_dir(project.path())
        .args(["agent", "--session", file.to_str().unwrap(), "--model", "llamacpp/m"])
        .args(["--base-url", &format!("{}/v1", server.url()), "-p", "hi", "--mode", "json"])
        .output()?;
    check(out.status.code() == Some(1), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    check(stderr(&out).contains("no such model"), || stderr(&out))?;
    let events: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap_or("")).collect();
    // pi 1.6: the header, the run, then agent_settled.
    check(types.first() == Some(&"session") && types.ends_with(&["agent_end", "agent_settled"]), || {
        format!("{types:?}")
    })?;
    for t in ["agent_start", "turn_start", "message_start", "message_end", "turn_end"] {
        check(types.contains(&t), || format!("no {t} in {types:?}"))?;
    }
    let entries = lines(&file);
    let last = &entries.last().unwrap()["message"];
    check(last["role"] == "assistant" && last["stopReason"] == "error", || last.to_string())?;
    check(last["errorMessage"].as_str().unwrap_or("").contains("no such model"), || last.to_string())?;
    let c = run(&["check", file.to_str().unwrap()]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// An Anthropic stream that starts a text block and then reports an error event.
fn anthropic_stream_error(partial: &str, kind: &str, message: &str) -> String {
    let mut events = vec![anthropic_message_start(MODEL, 25, 0, 0)];
    let mut block = anthropic_text_block(0, partial);
    block.pop();
    events.extend(block);
    events.push(serde_json::from_str(&anthropic_error(kind, message)).unwrap());
    anthropic_sse(&events)
}

/// A project whose `.pi/settings.json` holds `settings`.
fn project_with_settings(settings: Value) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    fs::create_dir_all(project.path().join(".pi")).unwrap();
    fs::write(project.path().join(".pi/settings.json"), settings.to_string()).unwrap();
    project
}

fn retry_is_recorded() -> TestResult {
    let project = project_with_settings(json!({"retry": {"baseDelayMs": 1}}));
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_stream_error("Half an ans", "overloaded_error", "Overloaded")),
        Reply::Sse(anthropic_text(MODEL, "Recovered.")),
    ]);
    let out = agent(project.path(), &server, &["--session", f, "--no-tools", "-p", "hi"]);
    ok(&out)?;
    check(stdout(&out) == "Recovered.\n", || stdout(&out))?;
    let entries = lines(&file);
    let kinds: Vec<String> = entries[1..].iter().map(kind).collect();
    let want = ["model_change", "thinking_level_change", "system", "user", "assistant", "context_edit", "assistant"];
    check(kinds == want, || format!("entries {kinds:?}"))?;
    chained(&entries)?;
    let n = entries.len();
    let (failed, edit, retry) = (&entries[n - 3], &entries[n - 2], &entries[n - 1]);
    check(failed["message"]["stopReason"] == "error", || failed.to_string())?;
    check(failed["message"]["errorMessage"].as_str().unwrap_or("").contains("Overloaded"), || failed.to_string())?;
    let keys: Vec<&str> = edit.as_object().unwrap().keys().map(String::as_str).collect();
    check(keys == ["type", "id", "parentId", "timestamp", "targetId", "replacement"], || format!("{keys:?}"))?;
    check(edit["targetId"] == failed["id"] && edit["replacement"].is_null(), || edit.to_string())?;
    check(retry["parentId"] == edit["id"] && retry["message"]["stopReason"] == "stop", || retry.to_string())?;
    // The retry's request did not carry the failed attempt.
    let requests = server.requests();
    check(requests.len() == 2, || format!("{} requests", requests.len()))?;
    let body = requests[1].json()["messages"].to_string();
    check(!body.contains("Overloaded") && !body.contains("Half an ans"), || body.clone())?;
    // pisces path shows only the retry.
    let p = run(&["path", f]);
    ok(&p)?;
    let text = stdout(&p);
    check(text.contains("Recovered.") && !text.contains("Overloaded"), || text.clone())?;
    let c = run(&["check", f]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

fn overflow_compacts_and_retries() -> TestResult {
    let project = project_with_settings(json!({"compaction": {"keepRecentTokens": 5}}));
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "First answer, with some words in it.")),
        Reply::Sse(anthropic_stream_error(
            "",
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        )),
        Reply::Sse(anthropic_text(MODEL, "## Goal\nSUMMARY-OF-HISTORY")),
        Reply::Sse(anthropic_text(MODEL, "After overflow.")),
    ]);
    let out = agent(project.path(), &server, &["--session", f, "--no-tools", "-p", "first question"]);
    ok(&out)?;
    let before = lines(&file).len();
    let out = agent(project.path(), &server, &["--session", f, "--no-tools", "-p", "second question"]);
    let entries = lines(&file);
    let added: Vec<String> = entries[before..].iter().map(kind).collect();
    check(out.status.success(), || format!("exit {:?}: {}\n{added:?}", out.status.code(), stderr(&out)))?;
    check(stdout(&out) == "After overflow.\n", || format!("{:?} {added:?}", stdout(&out)))?;
    check(added == ["user", "assistant", "context_edit", "compaction", "assistant"], || format!("{added:?}"))?;
    chained(&entries)?;
    let n = entries.len();
    let (failed, edit, compaction) = (&entries[n - 4], &entries[n - 3], &entries[n - 2]);
    check(failed["message"]["stopReason"] == "error", || failed.to_string())?;
    check(edit["targetId"] == failed["id"] && edit["replacement"].is_null(), || edit.to_string())?;
    let summary = compaction["summary"].as_str().unwrap_or("");
    check(summary.contains("SUMMARY-OF-HISTORY"), || compaction.to_string())?;
    check(compaction["fromHook"] == false && compaction["tokensBefore"].is_number(), || compaction.to_string())?;
    // The retried request starts from the summary.
    let last = server.requests().last().unwrap().json().to_string();
    check(last.contains("SUMMARY-OF-HISTORY") && !last.contains("prompt is too long"), || last.clone())?;
    let p = run(&["path", f]);
    ok(&p)?;
    let text = stdout(&p);
    check(text.contains("SUMMARY-OF-HISTORY") && text.contains("After overflow."), || text.clone())?;
    let c = run(&["check", f]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// Starts `pisces agent` as a child (its output piped).
fn spawn_agent(dir: &Path, server: &ScriptedServer, extra: &[&str]) -> std::process::Child {
    pisces()
        .current_dir(dir)
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY"])
        .args(extra)
        .env("PISCES_TEST_KEY", "test-key")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("pisces starts")
}

/// Runs the REPL (`--interactive`) on `file` with `script` as its standard input.
fn repl(dir: &Path, server: &ScriptedServer, file: &Path, extra: &[&str], script: &str) -> Result<Output, String> {
    use std::io::Write as _;
    let mut child = pisces()
        .current_dir(dir)
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session", file.to_str().unwrap(), "--interactive"])
        .args(extra)
        .env("PISCES_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    child.stdin.take().unwrap().write_all(script.as_bytes()).map_err(|e| e.to_string())?;
    wait_output(child, 30)
}

fn sigint(child: &std::process::Child) {
    let st = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(st.success());
}

/// Waits for `cond` up to `secs` seconds.
fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

fn wait_output(child: std::process::Child, secs: u64) -> Result<Output, String> {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            Err(format!("pisces did not exit within {secs}s"))
        }
    }
}

fn ctrl_c_aborts_bash() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_tool_call(
        MODEL,
        "toolu_1",
        "bash",
        &json!({"command": "echo started; sleep 30"}),
    ))]);
    let mut child = spawn_agent(project.path(), &server, &["--session", f, "-p", "sleep"]);
    if !wait_for(10, || fs::read_to_string(&file).is_ok_and(|t| t.contains("toolu_1"))) {
        let _ = child.kill();
        let _ = child.wait();
        return check(false, || "the tool call was never written".into());
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t0 = std::time::Instant::now();
    sigint(&child);
    let out = wait_output(child, 10)?;
    check(t0.elapsed() < std::time::Duration::from_secs(8), || "the abort took too long".into())?;
    check(out.status.code() == Some(1), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    let entries = lines(&file);
    let kinds: Vec<String> = entries[1..].iter().map(kind).collect();
    check(kinds.last().map(String::as_str) == Some("toolResult"), || format!("{kinds:?}"))?;
    let result = &entries.last().unwrap()["message"];
    check(result["isError"] == true && result["toolCallId"] == "toolu_1", || result.to_string())?;
    check(result.to_string().to_lowercase().contains("aborted"), || result.to_string())?;
    check(server.requests().len() == 1, || "the loop went on after the abort".into())?;
    let c = run(&["check", f]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// The second Ctrl-C exits at once, even when the first cannot end the run: here the read
/// tool is blocked opening a FIFO nobody writes to.
fn second_ctrl_c_exits() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let fifo = project.path().join("pipe");
    let st = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    check(st.success(), || "mkfifo failed".into())?;
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_tool_call(
        MODEL,
        "toolu_1",
        "read",
        &json!({"path": "pipe"}),
    ))]);
    let mut child = spawn_agent(project.path(), &server, &["--session", file.to_str().unwrap(), "-p", "read it"]);
    if !wait_for(10, || fs::read_to_string(&file).is_ok_and(|t| t.contains("toolu_1"))) {
        let _ = child.kill();
        let _ = child.wait();
        return check(false, || "the tool call was never written".into());
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    sigint(&child);
    std::thread::sleep(std::time::Duration::from_millis(200));
    sigint(&child);
    let out = wait_output(child, 5)?;
    check(out.status.code() == Some(130), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    // The read never finished: the call has no result, and only complete lines are there.
    let kinds: Vec<String> = lines(&file)[1..].iter().map(kind).collect();
    check(kinds.last().map(String::as_str) == Some("assistant"), || format!("{kinds:?}"))
}

fn threshold_compacts_first() -> TestResult {
    let project = project_with_settings(json!({"compaction": {"keepRecentTokens": 5, "reserveTokens": 19990}}));
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "First answer, with some words in it.")),
        Reply::Sse(anthropic_text(MODEL, "## Goal\nTHRESHOLD-SUMMARY")),
        Reply::Sse(anthropic_text(MODEL, "Second answer.")),
    ]);
    let out = agent(project.path(), &server, &["--session", f, "--no-tools", "-p", "first question"]);
    ok(&out)?;
    let before = lines(&file).len();
    // window 20000 − reserve 19990: anything over 10 tokens is compacted before the call.
    let out =
        agent(project.path(), &server, &["--session", f, "--no-tools", "--context-window", "20000", "-p", "second"]);
    ok(&out)?;
    check(stdout(&out) == "Second answer.\n", || stdout(&out))?;
    let entries = lines(&file);
    let added: Vec<String> = entries[before..].iter().map(kind).collect();
    check(added == ["user", "compaction", "assistant"], || format!("{added:?}"))?;
    chained(&entries)?;
    let last = server.requests().last().unwrap().json().to_string();
    check(last.contains("THRESHOLD-SUMMARY"), || last.clone())?;
    let p = run(&["path", f]);
    check(stdout(&p).contains("THRESHOLD-SUMMARY"), || stdout(&p))?;
    let c = run(&["check", f]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// The REPL through a pipe (`--interactive`): two prompts, /label, /name, /branch, a third
/// prompt (a branch in the file), /path, /quit.
fn interactive_session() -> TestResult {
    let project = tempfile::tempdir()?;
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "Answer one.")),
        Reply::Sse(anthropic_text(MODEL, "Answer two.")),
        Reply::Sse(anthropic_text(MODEL, "Answer three.")),
    ]);
    let file = project.path().join("s.jsonl");
    let script = "first prompt\nsecond prompt\n/label @ mark\n/name  My session  \n/branch mark^\nthird prompt\n/path\n/tree\n/compact\n/quit\nnot sent\n";
    let out = repl(project.path(), &server, &file, &[], script)?;
    ok(&out)?;
    let text = stdout(&out);
    for want in [
        "Answer one.",
        "Answer two.",
        "Answer three.",
        "labelled",
        "session name: My session",
        "its prompt was:\nsecond prompt",
    ] {
        check(text.contains(want), || format!("{want:?} not in stdout:\n{text}\nstderr:\n{}", stderr(&out)))?;
    }
    // /path shows the new branch (the first and third exchanges), then /tree both branches.
    let start = text.find("\"My session\" · leaf").ok_or_else(|| format!("no /path header:\n{text}"))?;
    let end = text[start..].find("[system]\n").map_or(text.len(), |e| start + e);
    let path_part = &text[start..end];
    check(path_part.contains("first prompt") && path_part.contains("Answer three."), || path_part.to_string())?;
    check(!path_part.contains("second prompt"), || path_part.to_string())?;
    check(text[end..].contains("[mark] assistant: Answer two."), || text.clone())?;

    let entries = lines(&file);
    let kinds: Vec<String> = entries[1..].iter().map(kind).collect();
    let want = [
        "model_change",
        "thinking_level_change",
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "label",
        "session_info",
        "user",
        "assistant",
    ];
    check(kinds == want, || format!("{kinds:?}"))?;
    chained(&entries[..10])?;
    let by = |i: usize| &entries[i];
    // label targets the second answer; the name is normalized.
    check(by(8)["targetId"] == by(7)["id"] && by(8)["label"] == "mark", || by(8).to_string())?;
    check(by(9)["name"] == "My session", || by(9).to_string())?;
    // The third prompt continues from the first answer: a branch.
    check(by(10)["parentId"] == by(5)["id"], || format!("{} vs {}", by(10), by(5)))?;
    check(by(10)["message"]["content"][0]["text"] == "third prompt", || by(10).to_string())?;
    check(by(11)["parentId"] == by(10)["id"], || by(11).to_string())?;
    check(!text.contains("not sent"), || text.clone())?;
    // pi's answer to /compact on a session this small (keepRecentTokens 20000 keeps it all).
    check(stderr(&out).contains("Nothing to compact (session too small)"), || stderr(&out))?;
    Ok(())
}

/// The REPL's /model and /fork through a pipe: a model change that the next request uses,
/// and a fork that the next prompt continues in.
fn interactive_model_and_fork() -> TestResult {
    let project = tempfile::tempdir()?;
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "Answer one.")),
        Reply::Sse(anthropic_text("claude-opus-4-5", "Answer two.")),
        Reply::Sse(anthropic_text("claude-opus-4-5", "Answer three.")),
    ]);
    let file = project.path().join("s.jsonl");
    let script = "first prompt\n/model anthropic/claude-opus-4-5\nsecond prompt\n/fork\nthird prompt\n/quit\n";
    let out = repl(project.path(), &server, &file, &[], script)?;
    ok(&out)?;
    let says = || format!("stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    // The original file: the model change, then the second exchange.
    let entries = lines(&file);
    let change = entries.iter().rposition(|e| e["type"] == "model_change");
    check(change.is_some_and(|c| entries[c]["modelId"] == "claude-opus-4-5"), says)?;
    let second = entries.iter().position(|e| e["message"]["content"][0]["text"] == "second prompt");
    check(second.is_some_and(|s| s > change.unwrap()), says)?;
    // The requests after /model name the new model.
    let models: Vec<Value> = server.requests().iter().map(|r| r.json()["model"].clone()).collect();
    check(models == [json!(MODEL), json!("claude-opus-4-5"), json!("claude-opus-4-5")], || format!("{models:?}"))?;
    // /fork wrote a new session beside the first; the third prompt went there.
    let forked: Vec<PathBuf> = fs::read_dir(project.path())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && *p != file)
        .collect();
    check(forked.len() == 1, || format!("{forked:?}"))?;
    let fork = lines(&forked[0]);
    check(fork[0]["parentSession"].as_str().is_some_and(|p| p.ends_with("s.jsonl")), || fork[0].to_string())?;
    let in_fork = |t: &str| fork.iter().any(|e| e["message"]["content"][0]["text"] == t);
    check(in_fork("third prompt") && in_fork("Answer three.") && in_fork("second prompt"), says)?;
    check(!lines(&file).iter().any(|e| e["message"]["content"][0]["text"] == "third prompt"), says)?;
    let c = run(&["check", forked[0].to_str().unwrap()]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// The REPL's /compact through a pipe: the branch is summarized with the model, the
/// compaction is appended at the leaf, and the next prompt is sent from the summary.
fn interactive_compact() -> TestResult {
    let project = project_with_settings(json!({"compaction": {"keepRecentTokens": 5}}));
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "Answer one, with some words in it.")),
        Reply::Sse(anthropic_text(MODEL, "Answer two, with some more words.")),
        Reply::Sse(anthropic_text(MODEL, "## Goal\nMANUAL-SUMMARY")),
        // keepRecentTokens 5 cuts inside the last turn (after "second prompt"): pi's split
        // turn, summarized by a second call.
        Reply::Sse(anthropic_text(MODEL, "## Original Request\nTURN-PREFIX")),
        Reply::Sse(anthropic_text(MODEL, "Answer three.")),
    ]);
    let file = project.path().join("s.jsonl");
    let script = "first prompt\nsecond prompt\n/compact\nthird prompt\n/quit\n";
    let out = repl(project.path(), &server, &file, &["--no-tools"], script)?;
    ok(&out)?;
    let says = || format!("stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    let entries = lines(&file);
    let kinds: Vec<String> = entries[1..].iter().map(kind).collect();
    let want = [
        "model_change",
        "thinking_level_change",
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "compaction",
        "user",
        "assistant",
    ];
    check(kinds == want, || format!("{kinds:?}\n{}", says()))?;
    chained(&entries)?;
    check(stdout(&out).contains("MANUAL-SUMMARY") && stdout(&out).contains("Answer three."), says)?;
    // Token counts print as pi prints them (integers), not as floats.
    check(stdout(&out).contains(" tokens before)") && !stdout(&out).contains(".0 tokens before"), says)?;
    let requests = server.requests();
    check(requests.len() == 5, || format!("{} requests\n{}", requests.len(), says()))?;
    // The history summary gets the first exchange, the turn prefix summary the second
    // prompt; the next prompt starts from both, with the kept answer.
    let history = requests[2].json().to_string();
    check(history.contains("first prompt") && history.contains("Answer one"), || history.clone())?;
    let prefix = requests[3].json().to_string();
    check(prefix.contains("second prompt") && !prefix.contains("Answer two"), || prefix.clone())?;
    let compaction = &entries[8];
    check(compaction["firstKeptEntryId"] == entries[7]["id"], || compaction.to_string())?;
    check(compaction["tokensBefore"].is_u64(), || compaction.to_string())?;
    let summary = compaction["summary"].as_str().unwrap_or("");
    check(summary.contains("MANUAL-SUMMARY") && summary.contains("TURN-PREFIX"), || compaction.to_string())?;
    let last = requests[4].json().to_string();
    check(last.contains("MANUAL-SUMMARY") && last.contains("third prompt"), || last.clone())?;
    check(last.contains("Answer two") && !last.contains("Answer one"), || last.clone())?;
    let p = run(&["path", file.to_str().unwrap()]);
    check(stdout(&p).contains("MANUAL-SUMMARY") && stdout(&p).contains("Answer three."), || stdout(&p))?;
    let c = run(&["check", file.to_str().unwrap()]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// One Ctrl-C while the model's stream is silent (a partial answer arrived, then nothing):
/// the run stops at once, and the partial answer is recorded as pi records aborts.
fn ctrl_c_aborts_a_silent_stream() -> TestResult {
    use std::io::BufRead as _;
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let mut events = vec![anthropic_message_start(MODEL, 10, 0, 0)];
    events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
    events.push(
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Partial answ"}}),
    );
    let server = ScriptedServer::start(vec![Reply::StallAfter(anthropic_sse(&events))]);
    let mut child =
        spawn_agent(project.path(), &server, &["--session", f, "--no-tools", "--mode", "json", "-p", "Think long."]);
    // Wait (in JSON mode) until the partial text has arrived, then interrupt.
    let mut events_out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let arrived = loop {
        let mut line = String::new();
        if events_out.read_line(&mut line).unwrap_or(0) == 0 {
            break false;
        }
        seen.push_str(&line);
        if line.contains("\"text_delta\"") {
            break true;
        }
    };
    if !arrived {
        let _ = child.kill();
        let _ = child.wait();
        return check(false, || format!("no text_delta event:\n{seen}"));
    }
    let t0 = std::time::Instant::now();
    sigint(&child);
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut events_out, &mut rest);
        rest
    });
    let out = wait_output(child, 10)?;
    let rest = reader.join().unwrap();
    check(t0.elapsed() < std::time::Duration::from_secs(5), || "the abort waited for the stream".into())?;
    check(out.status.code() == Some(1), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    let entries = lines(&file);
    let last = &entries.last().unwrap()["message"];
    check(last["role"] == "assistant" && last["stopReason"] == "aborted", || last.to_string())?;
    check(last["errorMessage"] == "Request was aborted", || last.to_string())?;
    check(last["content"] == json!([{"type": "text", "text": "Partial answ"}]), || last.to_string())?;
    // JSON mode ends the run as pi does.
    check(rest.contains("\"type\":\"agent_end\""), || rest.clone())?;
    check(server.requests().len() == 1, || "the loop went on after the abort".into())?;
    let c = run(&["check", f]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}

/// The thinking level of a new session as pi picks it: `defaultThinkingLevel` from the
/// settings, `modelThinkingLevels` before it, clamped to what the model supports.
fn thinking_level_as_pi_picks_it() -> TestResult {
    let cases = [
        (json!({"defaultThinkingLevel": "high"}), "anthropic/claude-sonnet-4-5", "high"),
        (
            json!({"defaultThinkingLevel": "high", "modelThinkingLevels": {"anthropic/claude-sonnet-4-5": "low"}}),
            "anthropic/claude-sonnet-4-5",
            "low",
        ),
        // claude-sonnet-4-5 has no xhigh level: the nearest one below.
        (json!({"defaultThinkingLevel": "xhigh"}), "anthropic/claude-sonnet-4-5", "high"),
        // A model that does not reason runs with thinking off.
        (json!({}), "openai/gpt-4o", "off"),
    ];
    for (settings, model, want) in cases {
        let project = project_with_settings(settings.clone());
        let file = project.path().join("s.jsonl");
        let openai = model.starts_with("openai/");
        let reply = if openai { openai_text("gpt-4o", "Hi.") } else { anthropic_text(MODEL, "Hi.") };
        let server = ScriptedServer::start(vec![Reply::Sse(reply)]);
        let out = pisces()
            .current_dir(project.path())
            .args(["agent", "--model", model, "--base-url", &server.url(), "--api-key-env", "PISCES_TEST_KEY"])
            .args(["--session", file.to_str().unwrap(), "--no-tools", "-p", "hi"])
            .env("PISCES_TEST_KEY", "test-key")
            .output()?;
        ok(&out)?;
        let entries = lines(&file);
        let level = entries.iter().find(|e| e["type"] == "thinking_level_change").map(|e| e["thinkingLevel"].clone());
        check(level == Some(json!(want)), || format!("{settings} {model}: {level:?}, want {want}"))?;
    }
    Ok(())
}

/// A reply with thinking, text and a tool call, streamed as Anthropic streams it.
pub fn thinking_text_tool_reply(model: &str) -> String {
    use pisces::llm::testing::anthropic_end;
    let mut events = vec![anthropic_message_start(model, 100, 0, 0)];
    let delta = |i: u64, d: Value| json!({"type": "content_block_delta", "index": i, "delta": d});
    events.push(json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
    events.push(delta(0, json!({"type": "thinking_delta", "thinking": "Let me "})));
    events.push(delta(0, json!({"type": "thinking_delta", "thinking": "write."})));
    events.push(delta(0, json!({"type": "signature_delta", "signature": "sig"})));
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.extend(anthropic_text_block(1, "Writing it."));
    events.push(json!({"type": "content_block_start", "index": 2,
                       "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}}));
    events.push(delta(2, json!({"type": "input_json_delta", "partial_json": "{\"path\": \"a.txt\","})));
    events.push(delta(2, json!({"type": "input_json_delta", "partial_json": " \"content\": \"one\\n\"}"})));
    events.push(json!({"type": "content_block_stop", "index": 2}));
    events.extend(anthropic_end("tool_use", 20));
    anthropic_sse(&events)
}

/// `--mode json`: pi 1.6's event stream (§8.2). The order of events, and of the nested
/// assistant events, is the one the real pi printed for this reply: the header, delta-only
/// `message_update`s each with the usage so far, `*_end` events with the finished block,
/// and `agent_settled` last.
fn json_mode_streams_as_pi() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let server = ScriptedServer::start(vec![
        Reply::Sse(thinking_text_tool_reply(MODEL)),
        Reply::Sse(anthropic_text(MODEL, "Done.")),
    ]);
    let out = agent(project.path(), &server, &["--session", file.to_str().unwrap(), "--mode", "json", "-p", "Write"]);
    ok(&out)?;
    let events: Vec<Value> = stdout(&out).lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    let name = |e: &Value| match e["type"].as_str().unwrap_or("") {
        "message_update" => format!("update:{}", e["assistantMessageEvent"]["type"].as_str().unwrap_or("")),
        "message_start" | "message_end" => {
            format!("{}:{}", e["type"].as_str().unwrap(), e["message"]["role"].as_str().unwrap_or(""))
        }
        t => t.to_string(),
    };
    let names: Vec<String> = events.iter().map(name).collect();
    let want = [
        "session",
        "agent_start",
        "turn_start",
        "message_start:system",
        "message_end:system",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "update:thinking_start",
        "update:thinking_delta",
        "update:thinking_delta",
        "update:thinking_end",
        "update:text_start",
        "update:text_delta",
        "update:text_delta",
        "update:text_delta",
        "update:text_end",
        "update:toolcall_start",
        "update:toolcall_delta",
        "update:toolcall_delta",
        "update:toolcall_end",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "update:text_start",
        "update:text_delta",
        "update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ];
    // anthropic_text_block streams "Writing it." in pieces of its own; compare the shape.
    let squeeze = |v: &[String]| {
        let mut out: Vec<String> = Vec::new();
        for n in v {
            if !(n.ends_with("_delta") && out.last() == Some(n)) {
                out.push(n.clone());
            }
        }
        out
    };
    let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    check(squeeze(&names) == squeeze(&want), || format!("{names:#?}"))?;
    let updates: Vec<&Value> = events.iter().filter(|e| e["type"] == "message_update").collect();
    for u in &updates {
        let keys: Vec<&String> = u.as_object().unwrap().keys().collect();
        check(keys == ["type", "usage", "assistantMessageEvent"], || u.to_string())?;
        check(u["assistantMessageEvent"].get("partial").is_none(), || u.to_string())?;
    }
    let ev = |t: &str| updates.iter().map(|u| &u["assistantMessageEvent"]).find(|a| a["type"] == t).unwrap().clone();
    check(
        ev("thinking_end") == json!({"type": "thinking_end", "contentIndex": 0, "content": "Let me write."}),
        || ev("thinking_end").to_string(),
    )?;
    check(ev("text_end") == json!({"type": "text_end", "contentIndex": 1, "content": "Writing it."}), || {
        ev("text_end").to_string()
    })?;
    check(
        ev("toolcall_start")
            == json!({"type": "toolcall_start", "contentIndex": 2, "id": "toolu_1", "toolName": "write"}),
        || ev("toolcall_start").to_string(),
    )?;
    let call = json!({"type": "toolCall", "id": "toolu_1", "name": "write", "arguments": {"path": "a.txt", "content": "one\n"}});
    check(ev("toolcall_end") == json!({"type": "toolcall_end", "contentIndex": 2, "toolCall": call}), || {
        ev("toolcall_end").to_string()
    })?;
    // The usage is the provider's as it streams: input from message_start, then the total.
    check(updates[0]["usage"]["input"] == 100, || updates[0].to_string())?;
    let end = events.iter().find(|e| name(e) == "message_end:assistant").unwrap();
    let last_update = updates.iter().rfind(|u| u["assistantMessageEvent"]["type"] == "toolcall_end").unwrap();
    check(last_update["usage"]["input"] == end["message"]["usage"]["input"], || last_update.to_string())?;
    check(events.last().unwrap() == &json!({"type": "agent_settled", "aborted": false}), || stdout(&out))
}

/// A compaction summary call that fails with 529 is retried as pi retries summaries (with
/// the retry settings, reported as `summarization_retry_*` events), and the compaction
/// and the model call go on.
fn compaction_summary_is_retried() -> TestResult {
    let project = project_with_settings(json!({
        "compaction": {"keepRecentTokens": 5, "reserveTokens": 19990},
        "retry": {"baseDelayMs": 1}
    }));
    let file = project.path().join("s.jsonl");
    let f = file.to_str().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "First answer, with some words in it.")),
        Reply::status(529, anthropic_error("overloaded_error", "Overloaded")),
        Reply::Sse(anthropic_text(MODEL, "## Goal\nRETRIED-SUMMARY")),
        Reply::Sse(anthropic_text(MODEL, "Second answer.")),
    ]);
    ok(&agent(project.path(), &server, &["--session", f, "--no-tools", "-p", "first question"]))?;
    let out = agent(
        project.path(),
        &server,
        &["--session", f, "--no-tools", "--context-window", "20000", "--mode", "json", "-p", "second"],
    );
    ok(&out)?;
    let events: Vec<Value> = stdout(&out).lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let at = |t: &str| types.iter().position(|x| *x == t);
    let order = [
        at("compaction_start"),
        at("summarization_retry_scheduled"),
        at("summarization_retry_attempt_start"),
        at("summarization_retry_finished"),
        at("compaction_end"),
    ];
    check(order.iter().all(Option::is_some) && order.windows(2).all(|w| w[0] < w[1]), || format!("{types:?}"))?;
    let scheduled = &events[at("summarization_retry_scheduled").unwrap()];
    check(scheduled["attempt"] == 1 && scheduled["maxAttempts"] == 3, || scheduled.to_string())?;
    let entries = lines(&file);
    let compaction = entries.iter().find(|e| e["type"] == "compaction").ok_or("no compaction entry")?;
    check(compaction["summary"].as_str().is_some_and(|s| s.contains("RETRIED-SUMMARY")), || compaction.to_string())?;
    check(server.requests().len() == 4, || format!("{} requests", server.requests().len()))
}

/// The REPL's `/branch REV summarize`: the branch left behind is summarized with the model
/// (pi's /tree "Summarize"), the summary appended under REV, and the next prompt follows it.
fn interactive_branch_with_summary() -> TestResult {
    let project = tempfile::tempdir()?;
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text(MODEL, "Answer one.")),
        Reply::Sse(anthropic_text(MODEL, "Answer two.")),
        Reply::Sse(anthropic_text(MODEL, "BRANCH-SUMMARY")),
        Reply::Sse(anthropic_text(MODEL, "Answer three.")),
    ]);
    let file = project.path().join("s.jsonl");
    let script = "first prompt\n/label @ mark\nsecond prompt\n/branch mark summarize\nthird prompt\n/quit\n";
    let out = repl(project.path(), &server, &file, &[], script)?;
    ok(&out)?;
    let says = || format!("stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    let entries = lines(&file);
    let find = |pred: &dyn Fn(&Value) -> bool| entries.iter().find(|e| pred(e)).cloned().unwrap_or_default();
    let one = find(&|e| e["message"]["content"][0]["text"] == "Answer one.");
    let two = find(&|e| e["message"]["content"][0]["text"] == "Answer two.");
    let summary = find(&|e| e["type"] == "branch_summary");
    check(summary["parentId"] == one["id"] && summary["fromId"] == two["id"], || format!("{summary}\n{}", says()))?;
    check(summary["summary"].as_str().is_some_and(|s| s.contains("BRANCH-SUMMARY")), || summary.to_string())?;
    let third = find(&|e| e["message"]["content"][0]["text"] == "third prompt");
    check(third["parentId"] == summary["id"], || format!("{third}\n{}", says()))?;
    let requests = server.requests();
    check(requests.len() == 4, || format!("{} requests", requests.len()))?;
    let asked = requests[2].json().to_string();
    check(asked.contains("second prompt") && !asked.contains("first prompt"), || asked.clone())?;
    let last = requests[3].json().to_string();
    check(last.contains("BRANCH-SUMMARY") && !last.contains("second prompt"), || last.clone())?;
    let c = run(&["check", file.to_str().unwrap()]);
    check(c.status.success(), || format!("{}{}", stdout(&c), stderr(&c)))
}
