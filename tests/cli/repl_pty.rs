//! `pisces agent` on a terminal, as a new user meets it: started with no mode flag in a
//! pseudo-terminal (so it picks the interactive mode and its line editor by itself), a
//! prompt with a tool call, slash commands, the history (Up), Ctrl-C during a reply and
//! twice at the prompt.

use std::path::Path;
use std::process::Command;

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{
    anthropic_message_start, anthropic_sse, anthropic_text, anthropic_tool_call, Reply, ScriptedServer,
};
use rexpect::session::PtySession;

use crate::common::{check, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("repl_pty::a_new_user_at_the_terminal", a_new_user_at_the_terminal)]
}

const MODEL: &str = "claude-sonnet-4-5";

/// The agent in a pseudo-terminal (its stdin, stdout and stderr), with colors as a user has
/// them; `TERM` set so the line editor drives the terminal.
fn spawn(dir: &Path, server: &ScriptedServer, file: &Path) -> Result<PtySession, String> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pisces"));
    c.current_dir(dir)
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session", file.to_str().unwrap()])
        .env("PISCES_TEST_KEY", "test-key")
        .env("HOME", "/nonexistent-home-for-tests")
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR");
    rexpect::session::spawn_command(c, Some(15_000)).map_err(|e| format!("could not start pisces in a pty: {e}"))
}

fn expect(p: &mut PtySession, what: &str) -> Result<String, String> {
    p.exp_string(what).map_err(|e| format!("waiting for {what:?}: {e}"))
}

fn entries(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn a_new_user_at_the_terminal() -> TestResult {
    let project = tempfile::tempdir()?;
    let file = project.path().join("s.jsonl");
    // A reply that starts and then goes silent: only Ctrl-C ends it.
    let silent = anthropic_sse(&[
        anthropic_message_start(MODEL, 10, 0, 0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Thinking about it"}}),
    ]);
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_tool_call(MODEL, "toolu_1", "write", &json!({"path": "a.txt", "content": "one\n"}))),
        Reply::Sse(anthropic_text(MODEL, "Wrote a.txt.")),
        Reply::StallAfter(silent),
    ]);
    let mut p = spawn(project.path(), &server, &file)?;
    expect(&mut p, "pisces agent")?;
    expect(&mut p, "> ")?;

    // A prompt: the tool call and its result stream, then the answer, then a new prompt.
    p.send_line("Write a.txt with one line").map_err(|e| e.to_string())?;
    expect(&mut p, "write a.txt")?;
    expect(&mut p, "Successfully wrote to a.txt")?;
    expect(&mut p, "Wrote a.txt.")?;
    expect(&mut p, "> ")?;
    check(std::fs::read_to_string(project.path().join("a.txt")).ok().as_deref() == Some("one\n"), || {
        "the write did not happen".into()
    })?;

    // /tree, then the same command again from the history (Up, Enter).
    // (Colors split a row into pieces: match the plain parts.)
    p.send_line("/tree").map_err(|e| e.to_string())?;
    expect(&mut p, "Write a.txt with one line")?;
    expect(&mut p, "[write: a.txt]")?;
    expect(&mut p, "> ")?;
    p.send("\x1b[A").map_err(|e| e.to_string())?;
    p.send("\r").map_err(|e| e.to_string())?;
    p.flush().map_err(|e| e.to_string())?;
    expect(&mut p, "[write: a.txt]")?;
    expect(&mut p, "> ")?;

    // A reply that goes silent: Ctrl-C aborts it and the prompt comes back.
    p.send_line("Take your time").map_err(|e| e.to_string())?;
    expect(&mut p, "Thinking about it")?;
    p.send_control('c').map_err(|e| e.to_string())?;
    expect(&mut p, "[aborted]")?;
    expect(&mut p, "> ")?;
    let last = entries(&file).last().cloned().unwrap_or_default();
    check(last["message"]["stopReason"] == "aborted", || last.to_string())?;
    check(last["message"]["content"] == json!([{"type": "text", "text": "Thinking about it"}]), || last.to_string())?;

    // Ctrl-C at the prompt: a hint, then the second one exits.
    p.send_control('c').map_err(|e| e.to_string())?;
    expect(&mut p, "Ctrl-C again to exit")?;
    p.send_control('c').map_err(|e| e.to_string())?;
    expect(&mut p, "session: ")?;
    p.exp_eof().map_err(|e| format!("pisces did not exit: {e}"))?;
    check(server.requests().len() == 3, || format!("{} requests", server.requests().len()))?;
    let c = crate::common::run(&["check", file.to_str().unwrap()]);
    check(c.status.success(), || String::from_utf8_lossy(&c.stdout).into_owned())
}
