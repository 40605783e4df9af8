//! `pisces agent --from REV --summarize` against pi's own `navigateTree(REV, {summarize:
//! true})` (testdata/summaries/apply/): leaving the session's last entry for REV, the agent
//! sends pi's branch-summary request (system prompt and prompt byte for byte), appends the
//! `branch_summary` pi appends (but for ids, times and the model's usage), the context at
//! it is pi's, and the prompt then continues after it.

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use pisces::llm::testing::{anthropic_text, Reply, ScriptedServer};

use crate::agent_corpus::copy_into;
use crate::common::{check, first_diff, pisces, run, stderr, stdout_json, testdata, TestResult};
use crate::summarize_cmd::{keys, masked, masked_messages};

const MODEL: &str = "claude-sonnet-4-5";

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for corpus in ["pi-1.6.0", "pi-0.73.1"] {
        let root = testdata().join("summaries/apply").join(corpus);
        let mut goldens: Vec<PathBuf> = fs::read_dir(&root)
            .unwrap()
            .flatten()
            .flat_map(|d| fs::read_dir(d.path()).unwrap().flatten().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains("__")))
            .collect();
        goldens.sort();
        for golden in goldens {
            let g: Value = serde_json::from_str(&fs::read_to_string(&golden).unwrap()).unwrap();
            let session = testdata().join(g["file"].as_str().unwrap());
            // The agent leaves the session's last entry (pi's leaf when it opens the file);
            // goldens leaving another leaf, or labelling the summary, are `summarize`'s.
            let last_line = fs::read_to_string(&session).unwrap().lines().count() as u64;
            let labelled = g["oracle"]["args"].as_array().is_some_and(|a| a.iter().any(|x| x == "--label"));
            if g["oldLeafLine"].as_u64() != Some(last_line) || labelled {
                continue;
            }
            let name = format!(
                "agent_summarize::{corpus}/{}/{}",
                golden.parent().unwrap().file_name().unwrap().to_string_lossy(),
                golden.file_stem().unwrap().to_string_lossy()
            );
            trials.push(Trial::test(name, move || leave_with_summary(&session, &g)));
        }
    }
    trials
}

/// The text of an Anthropic request's `system` (a string or text blocks).
fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

fn leave_with_summary(session: &Path, g: &Value) -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = copy_into(session, dir.path());
    let f = file.to_str().unwrap();
    let before = fs::read_to_string(&file)?.lines().count();
    let target = g["targetId"].as_str().ok_or("the golden has no target id")?;
    let appended = g["applied"]["appendedEntries"].as_array().cloned().unwrap_or_default();
    // The summary call (when pi made one) answers pi's placeholder, then the prompt's.
    let asks_model = !g["request"].is_null();
    let mut replies = Vec::new();
    if asks_model {
        replies.push(Reply::Sse(anthropic_text(MODEL, "<<LLM_OUTPUT>>")));
    }
    replies.push(Reply::Sse(anthropic_text(MODEL, "Continued.")));
    let server = ScriptedServer::start(replies);
    let window = g["contextWindow"].as_u64().ok_or("no contextWindow")?.to_string();
    let out = pisces()
        .current_dir(dir.path())
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session", f, "--from", target, "--summarize"])
        .args(["--context-window", &window, "--no-tools", "-p", "Continue."])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    check(out.status.success(), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    let requests = server.requests();
    check(requests.len() == usize::from(asks_model) + 1, || format!("{} requests", requests.len()))?;

    let entries: Vec<Value> =
        fs::read_to_string(&file)?.lines().skip(before).map(serde_json::from_str).collect::<Result<_, _>>()?;
    let Some(pi_summary) = appended.first() else {
        // Nothing left behind: pi moves the leaf and writes nothing; the prompt follows.
        check(entries.iter().all(|e| e["type"] != "branch_summary"), || format!("{entries:?}"))?;
        return Ok(());
    };
    if asks_model {
        let body = requests[0].json();
        let want_system = g["request"]["systemPrompt"].as_str().unwrap_or_default();
        check(system_text(&body) == want_system, || format!("system prompt:\n{}", system_text(&body)))?;
        let prompt = &body["messages"][0]["content"][0]["text"];
        check(body["messages"].as_array().map(Vec::len) == Some(1), || body["messages"].to_string())?;
        check(*prompt == g["request"]["promptText"], || format!("prompt:\n{prompt}"))?;
    }
    // The summary entry: pi's (its usage is the scripted model's, so compared by shape).
    let ours = entries.first().ok_or("nothing appended")?;
    check(ours["type"] == "branch_summary", || ours.to_string())?;
    check(keys(ours) == keys(pi_summary), || format!("key order {:?}, pi {:?}", keys(ours), keys(pi_summary)))?;
    let (mut a, mut b) = (masked(ours), masked(pi_summary));
    check(a["usage"].is_object() == b["usage"].is_object(), || format!("usage {} vs pi {}", a["usage"], b["usage"]))?;
    a["usage"] = Value::Null;
    b["usage"] = Value::Null;
    if let Some(d) = first_diff(&a, &b, "branch_summary") {
        return Err(d.into());
    }
    // The context at the summary is pi's after its navigation.
    let id = ours["id"].as_str().unwrap_or_default();
    let at = stdout_json(&run(&["path", f, id, "--format", "json"]))?;
    let pi_context = &g["applied"]["context"]["messages"];
    if let Some(d) = first_diff(&masked_messages(&at["messages"]), &masked_messages(pi_context), "context") {
        return Err(d.into());
    }
    // The prompt continues after the summary, and the model saw it.
    let user = entries.iter().position(|e| e["message"]["role"] == "user").ok_or("no user message")?;
    check(entries[1..=user].windows(2).all(|w| w[1]["parentId"] == w[0]["id"]), || {
        "the prompt is not after the summary".into()
    })?;
    check(entries[1]["parentId"] == ours["id"], || entries[1].to_string())?;
    let last = requests.last().unwrap().json().to_string();
    check(last.contains("<<LLM_OUTPUT>>") || !asks_model, || "the summary did not reach the model".into())
}
