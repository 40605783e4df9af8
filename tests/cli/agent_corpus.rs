//! `pisces agent` continuing sessions pi wrote: every leaf of every pi-1.6.0 and pi-0.73.1
//! corpus file, against the scripted model server.

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{anthropic_text, Reply, ScriptedServer};

use crate::common::{check, first_diff, pisces, run, stderr, stdout_json, TestResult};
use crate::conformance::corpus_sessions;

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for cs in corpus_sessions().into_iter().filter(|cs| cs.corpus == "pi-1.6.0" || cs.corpus == "pi-0.73.1") {
        let entries: Value =
            serde_json::from_str(&fs::read_to_string(cs.goldens.join(format!("{}.entries.json", cs.stem))).unwrap())
                .unwrap();
        let default = entries["defaultLeafId"].as_str().unwrap().to_string();
        for leaf in entries["leaves"].as_array().unwrap().iter().filter_map(Value::as_str) {
            let golden = if leaf == default { "default".to_string() } else { leaf.to_string() };
            let golden = cs.goldens.join(format!("{golden}.context.json"));
            let (session, leaf) = (cs.session.clone(), leaf.to_string());
            trials.push(Trial::test(format!("agent_corpus::{}/{}/{leaf}", cs.corpus, cs.stem), move || {
                continue_from(&session, &leaf, &golden)
            }));
        }
    }
    // pi's `real` sessions are version 1 and name a cwd that is not here: `--fork` continues
    // them in a new session, reading the file only.
    for cs in corpus_sessions().into_iter().filter(|cs| cs.corpus == "real") {
        let golden = cs.goldens.join("default.context.json");
        let session = cs.session.clone();
        trials.push(Trial::test(format!("agent_corpus::fork/{}/{}", cs.corpus, cs.stem), move || {
            continue_in_a_fork(&session, &golden)
        }));
    }
    trials
}

fn continue_in_a_fork(session: &Path, golden: &Path) -> TestResult {
    let project = tempfile::tempdir()?;
    let sessions = tempfile::tempdir()?;
    let before = fs::read(session)?;
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_text("claude-sonnet-4-5", "Continuing."))]);
    let agent = |extra: &[&str]| {
        pisces()
            .current_dir(project.path())
            .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
            .args(["--api-key-env", "PISCES_TEST_KEY", "--session", session.to_str().unwrap(), "--no-tools"])
            .args(["--session-dir", sessions.path().to_str().unwrap()])
            .args(extra)
            .env("PISCES_TEST_KEY", "test-key")
            .output()
    };
    // Without --fork: refused, with the way out named.
    let refused = agent(&["-p", "Continue."])?;
    check(refused.status.code() == Some(2) && stderr(&refused).contains("--fork"), || stderr(&refused))?;
    let out = agent(&["--fork", "-p", "Continue."])?;
    check(out.status.success(), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    check(fs::read(session)? == before, || "the source session changed".into())?;
    let files: Vec<PathBuf> = fs::read_dir(sessions.path())?.flatten().map(|e| e.path()).collect();
    check(files.len() == 1, || format!("{files:?}"))?;
    let f = files[0].to_str().unwrap();
    let header: Value = serde_json::from_str(fs::read_to_string(&files[0])?.lines().next().unwrap_or(""))?;
    check(header["version"] == 3 && header["cwd"] == project.path().to_str().unwrap(), || header.to_string())?;
    let source_abs = fs::canonicalize(session)?;
    check(header["parentSession"] == source_abs.to_str().unwrap(), || header.to_string())?;
    // The new session's context: pi's at the source's leaf, then the prompt and the reply.
    let doc = stdout_json(&run(&["path", f, "--format", "json"]))?;
    let msgs = doc["messages"].as_array().unwrap();
    let pi: Value = serde_json::from_str(&fs::read_to_string(golden)?)?;
    let old = pi["messages"].as_array().unwrap();
    check(msgs.len() >= old.len() + 2, || format!("{} messages, pi had {}", msgs.len(), old.len()))?;
    if let Some(d) = first_diff(&Value::Array(msgs[..old.len()].to_vec()), &Value::Array(old.clone()), "$") {
        return Err(format!("the fork does not start with pi's context: {d}").into());
    }
    let n = msgs.len();
    check(msgs[n - 1]["content"][0]["text"] == "Continuing.", || "the reply is not at the end".into())?;
    // Still a valid session (the source's own warnings, such as an unanswered tool call,
    // come along with its entries).
    let c = run(&["check", f, "--format", "json"]);
    let report: Value = serde_json::from_slice(&c.stdout)?;
    check(report["files"][0]["errors"] == 0, || format!("check: {}", report["files"][0]["findings"]))
}

/// A copy of a corpus session whose header `cwd` is `dir` (pi, and pisces, refuse to run
/// in a working directory that does not exist); every other line is copied unchanged.
pub fn copy_into(session: &Path, dir: &Path) -> PathBuf {
    let text = fs::read_to_string(session).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut h: Value = serde_json::from_str(header).unwrap();
    h["cwd"] = json!(dir.to_str().unwrap());
    let file = dir.join("s.jsonl");
    fs::write(&file, format!("{}\n{rest}", serde_json::to_string(&h).unwrap())).unwrap();
    file
}

fn continue_from(session: &Path, leaf: &str, golden: &Path) -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = copy_into(session, dir.path());
    let before = fs::read(&file)?;
    let f = file.to_str().unwrap();
    let leaf_doc = stdout_json(&run(&["show", f, leaf, "--format", "json"]))?;
    let leaf_is_user = leaf_doc["entries"][0]["entry"]["message"]["role"] == "user";
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_text("claude-sonnet-4-5", "Continuing."))]);
    let out = pisces()
        .current_dir(dir.path())
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session", f, "--from", leaf, "-p", "Continue."])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    check(out.status.success(), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    // Only whole lines were appended; the file pi wrote is untouched.
    let after = fs::read(&file)?;
    check(after.starts_with(&before) && after.ends_with(b"\n"), || "the session's existing bytes changed".into())?;

    // The new leaf's context: the old context (what the model saw at the leaf), then any
    // system message the agent added for this branch, then the new prompt and reply.
    let doc = stdout_json(&run(&["path", f, "--format", "json"]))?;
    let msgs = doc["messages"].as_array().unwrap();
    let n = msgs.len();
    check(n >= 2 && msgs[n - 2]["role"] == "user" && msgs[n - 1]["role"] == "assistant", || format!("{n} messages"))?;
    check(
        msgs[n - 2]["content"][0]["text"] == "Continue." && msgs[n - 1]["content"][0]["text"] == "Continuing.",
        || "the new prompt and reply are not at the end".into(),
    )?;
    if !leaf_is_user {
        let pi: Value = serde_json::from_str(&fs::read_to_string(golden)?)?;
        let old = pi["messages"].as_array().unwrap();
        check(n >= old.len() + 2, || "the old context is not kept".into())?;
        if let Some(d) = first_diff(&Value::Array(msgs[..old.len()].to_vec()), &Value::Array(old.clone()), "$") {
            return Err(format!("the continued context does not start with pi's context at {leaf}: {d}").into());
        }
        let between = &msgs[old.len()..n - 2];
        check(between.iter().all(|m| m["role"] == "system"), || {
            format!("unexpected messages before the prompt: {between:?}")
        })?;
    }
    // And the file is still a valid session.
    let c = run(&["check", f, "--format", "json"]);
    let report: Value = serde_json::from_slice(&c.stdout)?;
    let errors = report["files"][0]["errors"].as_u64().unwrap_or(1);
    check(errors == 0, || format!("check: {}", report["files"][0]["findings"]))?;
    Ok(())
}

/// pi runs a batch of tool calls concurrently and writes the results in call order (§7.2).
pub fn parallel_trials() -> Vec<Trial> {
    vec![Trial::test("agent_corpus::tool_batch_runs_concurrently", tool_batch_runs_concurrently)]
}

fn tool_batch_runs_concurrently() -> TestResult {
    use pisces::llm::testing::{anthropic_end, anthropic_message_start, anthropic_sse};
    let dir = tempfile::tempdir()?;
    let sessions = tempfile::tempdir()?;
    let mut events = vec![anthropic_message_start("claude-sonnet-4-5", 100, 0, 0)];
    // Each call marks that it started, then waits (up to 5 s) for the other's mark: only
    // calls that run at the same time both see each other. No timing is asserted.
    let wait = |me: &str, other: &str| {
        format!("touch {me}; for i in $(seq 50); do [ -e {other} ] && break; sleep 0.1; done; [ -e {other} ] && echo saw {other}")
    };
    let (a, b) = (wait("a.mark", "b.mark"), wait("b.mark", "a.mark"));
    for (i, (id, cmd)) in [("toolu_a", a.as_str()), ("toolu_b", b.as_str())].iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": id, "name": "bash", "input": {}}}));
        let args = json!({"command": cmd}).to_string();
        events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": args}}));
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    events.extend(anthropic_end("tool_use", 20));
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_sse(&events)),
        Reply::Sse(anthropic_text("claude-sonnet-4-5", "Both ran.")),
    ]);
    let out = pisces()
        .current_dir(dir.path())
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args([
            "--api-key-env",
            "PISCES_TEST_KEY",
            "--session-dir",
            sessions.path().to_str().unwrap(),
            "-p",
            "Run both.",
        ])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    check(out.status.success(), || stderr(&out))?;
    let file = fs::read_dir(sessions.path())?.flatten().next().ok_or("no session")?.path();
    let results: Vec<Value> = fs::read_to_string(&file)?
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["message"]["role"] == "toolResult")
        .collect();
    let ids: Vec<&str> = results.iter().map(|r| r["message"]["toolCallId"].as_str().unwrap()).collect();
    check(ids == ["toolu_a", "toolu_b"], || format!("results in order {ids:?}"))?;
    check(results[0]["message"]["content"][0]["text"] == "saw b.mark\n", || results[0].to_string())?;
    check(results[1]["message"]["content"][0]["text"] == "saw a.mark\n", || results[1].to_string())
}

/// An edit, a failing command and a command that times out, in one run: each result is
/// recorded as pi records it (§7.3).
pub fn tool_outcome_trials() -> Vec<Trial> {
    vec![Trial::test("agent_corpus::edit_failing_bash_and_timeout", edit_failing_bash_and_timeout)]
}

fn edit_failing_bash_and_timeout() -> TestResult {
    use pisces::llm::testing::anthropic_tool_call;
    let dir = tempfile::tempdir()?;
    let sessions = tempfile::tempdir()?;
    fs::write(dir.path().join("app.txt"), "colour = red\n")?;
    let m = "claude-sonnet-4-5";
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_tool_call(
            m,
            "toolu_e",
            "edit",
            &json!({"path": "app.txt", "edits": [{"oldText": "red", "newText": "blue"}]}),
        )),
        Reply::Sse(anthropic_tool_call(m, "toolu_f", "bash", &json!({"command": "echo nope >&2; exit 3"}))),
        Reply::Sse(anthropic_tool_call(m, "toolu_t", "bash", &json!({"command": "sleep 30", "timeout": 1}))),
        Reply::Sse(anthropic_text(m, "Done.")),
    ]);
    let out = pisces()
        .current_dir(dir.path())
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session-dir", sessions.path().to_str().unwrap(), "-p", "Go."])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    check(out.status.success(), || stderr(&out))?;
    check(fs::read_to_string(dir.path().join("app.txt"))? == "colour = blue\n", || "the edit was not applied".into())?;
    let file = fs::read_dir(sessions.path())?.flatten().next().ok_or("no session")?.path();
    let results: Vec<Value> = fs::read_to_string(&file)?
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["message"]["role"] == "toolResult")
        .map(|e| e["message"].clone())
        .collect();
    check(results.len() == 3, || format!("{} results", results.len()))?;
    let text = |r: &Value| r["content"][0]["text"].as_str().unwrap_or_default().to_string();
    check(results[0]["isError"] == false && text(&results[0]).starts_with("Successfully replaced"), || {
        results[0].to_string()
    })?;
    // pi: a non-zero exit is an error result whose text ends with the exit notice.
    check(results[1]["isError"] == true && text(&results[1]).ends_with("Command exited with code 3"), || {
        results[1].to_string()
    })?;
    check(results[2]["isError"] == true && text(&results[2]).contains("Command timed out after 1 seconds"), || {
        results[2].to_string()
    })
}
