//! Optional live checks against the real pi (`PISCES_LIVE_ORACLE=1`, with the project's
//! shared checkout beside the repository and the oracle installed:
//! `bash ../shared/pi-oracle/install.sh`). Not part of CI: without the variable these
//! trials are not registered at all.
//!
//! Sessions written by `pisces agent` against the scripted model server are opened by
//! pi's own SessionManager (`context.mjs`), which must build the context `pisces path`
//! builds.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{anthropic_text, anthropic_tool_call, Reply, ScriptedServer};

use crate::common::{check, first_diff, pisces, run, stdout_json, TestResult};

pub fn trials() -> Vec<Trial> {
    if std::env::var_os("PISCES_LIVE_ORACLE").is_none() {
        return vec![];
    }
    vec![Trial::test("live_oracle::agent_sessions_open_in_pi", agent_sessions_open_in_pi)]
}

fn oracle(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pi-oracle").join(script)
}

fn agent_sessions_open_in_pi() -> TestResult {
    let project = tempfile::tempdir()?;
    let sessions = tempfile::tempdir()?;
    let model = "claude-sonnet-4-5";
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_tool_call(model, "toolu_1", "write", &json!({"path": "a.txt", "content": "one\n"}))),
        Reply::Sse(anthropic_tool_call(model, "toolu_2", "bash", &json!({"command": "cat a.txt; exit 3"}))),
        Reply::Sse(anthropic_text(model, "Done.")),
        Reply::Sse(anthropic_text(model, "Second answer.")),
    ]);
    let agent = |extra: &[&str]| {
        pisces()
            .current_dir(project.path())
            .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
            .args(["--api-key-env", "PISCES_TEST_KEY", "--session-dir", sessions.path().to_str().unwrap()])
            .args(extra)
            .env("PISCES_TEST_KEY", "test-key")
            .output()
    };
    let first = agent(&["-p", "Write a.txt and cat it."])?;
    check(first.status.success(), || String::from_utf8_lossy(&first.stderr).into_owned())?;
    let file = std::fs::read_dir(sessions.path())?.flatten().map(|e| e.path()).next().ok_or("no session written")?;
    let f = file.to_str().unwrap();
    // A branch: continue from the first user message's parent with a new prompt.
    let second = agent(&["--session", f, "--from", "root", "-p", "Another question."])?;
    check(second.status.success(), || String::from_utf8_lossy(&second.stderr).into_owned())?;

    // Every leaf: the end of the first run and of the branch.
    let leaves = stdout_json(&run(&["leaves", f, "--format", "json"]))?;
    let leaves: Vec<String> =
        leaves["leaves"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap().to_string()).collect();
    check(leaves.len() == 2, || format!("leaves: {leaves:?}"))?;
    for leaf in &leaves {
        let ours = stdout_json(&run(&["path", f, leaf, "--format", "llm"]))?;
        let leaf_id = ours["leafId"].as_str().unwrap_or_default().to_string();
        let out = Command::new("node").arg(oracle("context.mjs")).arg(f).arg(&leaf_id).output()?;
        check(out.status.success(), || String::from_utf8_lossy(&out.stderr).into_owned())?;
        let pi: Value = serde_json::from_slice(&out.stdout)?;
        for (field, theirs) in
            [("pathIds", "pathIds"), ("model", "model"), ("thinkingLevel", "thinkingLevel"), ("messages", "llm")]
        {
            if let Some(d) = first_diff(&ours[field], &pi[theirs], &format!("$.{field}")) {
                return Err(format!("{leaf}: pi reads the agent's session differently: {d}").into());
            }
        }
    }
    Ok(())
}
