//! The defects a new user found (the "make room" issue), each reproduced as it was
//! reported and checked fixed; and the same kinds of hostile input built here.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{anthropic_text, Reply, ScriptedServer};

use crate::common::{big_copy, check, pisces, run, stderr, stdout, testdata, Rewriter, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("defects::01_agent_after_a_damaged_entry", agent_after_damaged_entry),
        Trial::test("defects::02_check_an_empty_dir", check_empty_dir),
        Trial::test("defects::02_check_skips_a_fifo", check_skips_fifo),
        Trial::test("defects::03_completions_into_a_closed_pipe", completions_into_closed_pipe),
        Trial::test("defects::04_json_into_a_closed_pipe", json_into_closed_pipe),
        Trial::test("defects::05_ambiguous_prefix_previews_are_inert", ambiguous_previews_inert),
        Trial::test("defects::05_markdown_is_inert", markdown_inert),
        Trial::test("defects::05_check_file_names_are_inert", check_names_inert),
        Trial::test("defects::05_every_human_output_is_inert", every_human_output_inert),
        Trial::test("defects::06_an_empty_session_argument", empty_session_arg),
        Trial::test("defects::07_commands_agree_on_hostile_lines", commands_agree),
        Trial::test("defects::07_fork_never_copies_a_malformed_line", fork_skips_malformed),
        Trial::test("defects::07_tree_rows_of_an_unreadable_reply", tree_unreadable_reply),
        Trial::test("defects::08_a_parent_cycle_without_a_root", cycle_without_root),
        Trial::test("defects::09_check_finds_what_pi_reads_past", check_finds_shapes),
        Trial::test("defects::10_messages_say_what_is_wrong", messages),
        Trial::test("defects::11_label_at_twice", label_twice),
        Trial::test("defects::12_a_file_shrunk_while_read", shrunk_while_read),
        Trial::test("defects::exit_status_of_a_provider_failure", provider_failure_status),
    ]
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn no_panic(out: &Output) -> TestResult {
    let err = stderr(out);
    check(!err.contains("panicked") && out.status.code() != Some(101), || format!("a panic:\n{err}"))?;
    check(out.status.code().is_some(), || format!("killed by a signal: {:?}", out.status))
}

/// Writes `lines` (JSON values or raw text) as a session file.
fn session_file(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn header(cwd: &str) -> String {
    json!({"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":cwd}).to_string()
}

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:01.000Z",
           "message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1}})
    .to_string()
}

/// Defect 1: `agent --session F` on a file whose damaged entry the index once took for whole
/// panicked (an entry index resolved before a reload was used after it).
fn agent_after_damaged_entry() -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = fs::read_to_string(testdata().join("edge/12-damaged-entry-tail.jsonl"))?;
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    let mut h: Value = serde_json::from_str(&lines[0])?;
    h["cwd"] = Value::from(dir.path().to_str().unwrap());
    lines[0] = h.to_string();
    let file = session_file(dir.path(), "s.jsonl", &lines);
    let before = fs::read(&file)?;
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_text("claude-sonnet-4-5", "Hello."))]);
    let out = pisces()
        .current_dir(dir.path())
        .args(["agent", "--session", s(&file), "-p", "hi", "--model", "anthropic/claude-sonnet-4-5"])
        .args(["--base-url", &server.url(), "--api-key-env", "PISCES_TEST_KEY"])
        .env("PISCES_TEST_KEY", "k")
        .output()?;
    no_panic(&out)?;
    check(out.status.success(), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    check(stdout(&out).contains("Hello."), || stdout(&out))?;
    // Only appended: every earlier byte as it was.
    let after = fs::read(&file)?;
    check(after.starts_with(&before), || "the file's earlier bytes changed".into())
}

/// Defect 2: `check DIR` with no session files panicked.
fn check_empty_dir() -> TestResult {
    let dir = tempfile::tempdir()?;
    fs::write(dir.path().join("notes.txt"), "not a session")?;
    let out = run(&["check", s(dir.path())]);
    no_panic(&out)?;
    check(out.status.code() == Some(0), || format!("exit {:?}", out.status.code()))?;
    check(stderr(&out).contains("holds no session files"), || stderr(&out))
}

/// Defect 2: `check DIR` hung forever on a FIFO named `*.jsonl`.
fn check_skips_fifo() -> TestResult {
    let dir = tempfile::tempdir()?;
    fs::copy(testdata().join("pi-1.6.0/01-linear-chat.jsonl"), dir.path().join("a.jsonl"))?;
    let fifo = dir.path().join("pipe.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status()?;
    check(made.success(), || "mkfifo failed".into())?;
    let out = with_timeout(pisces().args(["check", s(dir.path())]), Duration::from_secs(20))?;
    no_panic(&out)?;
    check(out.status.code() == Some(0), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    check(stderr(&out).contains("skipped 1") && stderr(&out).contains("-v"), || stderr(&out))?;
    let out = with_timeout(pisces().args(["check", "-v", s(dir.path())]), Duration::from_secs(20))?;
    check(stderr(&out).contains("pipe.jsonl (a FIFO)"), || stderr(&out))
}

/// Runs `cmd`, killing it after `limit` (a hang is a failure, not a stuck test run).
fn with_timeout(cmd: &mut Command, limit: Duration) -> Result<Output, libtest_mimic::Failed> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let t0 = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            return Ok(child.wait_with_output()?);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer in {limit:?}: it hangs").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads `n` bytes of the command's stdout, closes the pipe, and returns how it ended.
fn read_then_close(args: &[&str], n: usize) -> Result<Output, libtest_mimic::Failed> {
    let mut child = pisces().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let mut head = vec![0u8; n];
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    stdout.read_exact(&mut head)?;
    drop(stdout);
    Ok(child.wait_with_output()?)
}

/// Defect 3: `completions SHELL | head -c 10` panicked inside clap_complete.
fn completions_into_closed_pipe() -> TestResult {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = read_then_close(&["completions", shell], 10)?;
        no_panic(&out)?;
        check(out.status.success(), || format!("{shell}: exit {:?}: {}", out.status.code(), stderr(&out)))?;
    }
    Ok(())
}

/// Defect 4: `path large.jsonl | head -1` printed `Broken pipe` and exited 2 (serde_json wraps
/// the I/O error), for every JSON output larger than a pipe buffer.
fn json_into_closed_pipe() -> TestResult {
    let big = testdata().join("real/large-session.jsonl");
    for args in [
        vec!["path", s(&big), "--format", "json"],
        vec!["path", s(&big), "--format", "llm"],
        vec!["tree", s(&big), "--format", "json"],
        vec!["show", s(&big), "@", "@~1", "@~2", "--format", "json"],
        vec!["leaves", s(&big), "--format", "json"],
    ] {
        let out = read_then_close(&args, 1)?;
        no_panic(&out)?;
        check(out.status.success() && out.stderr.is_empty(), || {
            format!("{args:?}: exit {:?}, stderr {:?}", out.status.code(), stderr(&out))
        })?;
    }
    Ok(())
}

/// Terminal commands a hostile session carries: a window title, a screen clear, a hidden
/// link, a color, a cursor move, a C1 CSI, a bidi override.
const HOSTILE: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}]8;;https://evil.example\u{1b}\\click\u{1b}]8;;\u{1b}\\\u{1b}[31mred\u{1b}[H\u{9b}6n\u{202e}rev";

fn has_escapes(text: &str) -> bool {
    text.contains('\u{1b}') || text.contains('\u{9b}') || text.contains('\u{202e}') || text.contains('\u{7}')
}

/// A session whose text, ids and names carry terminal commands.
fn hostile_session(dir: &Path) -> PathBuf {
    let call = json!({"type":"message","id":"abcd0002","parentId":"abcd0001","timestamp":"2026-01-01T00:00:02.000Z",
        "message":{"role":"assistant","content":[{"type":"text","text":HOSTILE},
            {"type":"toolCall","id":"c1","name":format!("bash{HOSTILE}"),"arguments":{"command":HOSTILE}}],
            "provider":format!("p{HOSTILE}"),"model":format!("m{HOSTILE}"),"stopReason":"toolUse","timestamp":2,
            "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.1}}}});
    let result = json!({"type":"message","id":"abcd0003","parentId":"abcd0002","timestamp":"2026-01-01T00:00:03.000Z",
        "message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":HOSTILE}],
            "isError":false,"timestamp":3}});
    let label = json!({"type":"label","id":"abcd0004","parentId":"abcd0003","timestamp":"2026-01-01T00:00:04.000Z",
        "targetId":"abcd0003","label":format!("fix{HOSTILE}")});
    let name = json!({"type":"session_info","id":"abcd0005","parentId":"abcd0004","timestamp":"2026-01-01T00:00:05.000Z",
        "name":format!("name{HOSTILE}")});
    let other = user("abcd0006", Some("abcd0001"), &format!("another {HOSTILE}"));
    session_file(
        dir,
        "hostile.jsonl",
        &[
            header(&format!("/work{HOSTILE}")),
            user("abcd0001", None, HOSTILE),
            call.to_string(),
            result.to_string(),
            label.to_string(),
            name.to_string(),
            other,
        ],
    )
}

/// Defect 5: The ambiguous-prefix error printed entry previews raw on stderr.
fn ambiguous_previews_inert() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = hostile_session(dir.path());
    let out = run(&["path", s(&f), "abcd"]);
    check(out.status.code() == Some(2) && stderr(&out).contains("ambiguous"), || stderr(&out))?;
    check(!has_escapes(&stderr(&out)), || format!("escapes on stderr: {:?}", stderr(&out)))
}

/// Defect 5: `path --format markdown` wrote raw escapes.
fn markdown_inert() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = hostile_session(dir.path());
    let out = run(&["path", s(&f), "abcd0003", "--format", "markdown"]);
    check(out.status.success(), || stderr(&out))?;
    check(stdout(&out).contains("click"), || stdout(&out))?;
    check(!has_escapes(&stdout(&out)), || format!("escapes in the Markdown: {:?}", stdout(&out)))
}

/// Defect 5: `check DIR` printed hostile file names raw.
fn check_names_inert() -> TestResult {
    let dir = tempfile::tempdir()?;
    let name = format!("evil{HOSTILE}.jsonl").replace('/', "");
    fs::write(dir.path().join(&name), "not json\n")?;
    let out = run(&["check", s(dir.path())]);
    check(out.status.code() == Some(1), || format!("exit {:?}: {}", out.status.code(), stderr(&out)))?;
    check(stdout(&out).contains("evil"), || stdout(&out))?;
    check(!has_escapes(&stdout(&out)) && !has_escapes(&stderr(&out)), || format!("{:?}", stdout(&out)))
}

/// Defect 5: One policy: nothing a person reads carries the session's terminal commands; JSON
/// keeps the bytes exactly.
fn every_human_output_inert() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = hostile_session(dir.path());
    let fs_ = s(&f);
    let human: &[&[&str]] = &[
        &["tree", fs_],
        &["tree", fs_, "--ids", "--time", "--filter", "all"],
        &["tree", fs_, "--format", "dot"],
        &["path", fs_, "abcd0005", "--format", "text", "--color", "always"],
        &["path", fs_, "abcd0005", "--format", "markdown"],
        &["show", fs_, "abcd0001", "abcd0002", "abcd0003", "abcd0004", "abcd0005", "--color", "always"],
        &["leaves", fs_, "--color", "always"],
        &["diff", fs_, "abcd0005", "abcd0006", "--color", "always"],
        &["diff", fs_, "abcd0005", "abcd0006", "--stat"],
        &["check", fs_],
        &["check", fs_, "-v", "--color", "always"],
        &["compact", fs_, "abcd0003", "--dry-run"],
        &["summarize", fs_, "abcd0005", "abcd0006", "--dry-run"],
    ];
    for args in human {
        let out = run(args);
        no_panic(&out)?;
        // With color on, pisces's own colors are SGR sequences (ESC [ … m): those are
        // allowed, nothing else, and none of the session's.
        let text = stdout(&out) + &stderr(&out);
        let ours = strip_sgr(&text);
        check(!has_escapes(&ours), || format!("{args:?} lets terminal commands through:\n{ours:?}"))?;
        check(!text.contains("\u{1b}[31mred") && !text.contains("\u{1b}[H"), || {
            format!("{args:?}: the session's own SGR")
        })?;
    }
    // JSON keeps the exact text.
    let out = run(&["path", fs_, "abcd0003", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)?;
    check(doc["messages"][0]["content"][0]["text"] == HOSTILE, || "the JSON changed the text".into())
}

/// Removes the SGR sequences pisces's own painting writes (ESC [ digits ; … m).
fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            let rest: String = chars.clone().take(12).collect();
            let body: String = rest[1..].chars().take_while(|c| c.is_ascii_digit() || *c == ';').collect();
            if rest[1..].chars().nth(body.chars().count()) == Some('m') {
                for _ in 0..body.chars().count() + 2 {
                    chars.next();
                }
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Defect 6: An empty SESSION (an unset `"$S"`) matched every session id: `label "" @ x`
/// appended to the only session of the folder.
fn empty_session_arg() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("only.jsonl");
    fs::copy(testdata().join("pi-1.6.0/01-linear-chat.jsonl"), &f)?;
    let before = fs::read(&f)?;
    for args in [vec!["label", "", "@", "x"], vec!["path", ""], vec!["tree", ""], vec!["check", ""]] {
        let out = pisces().env("PI_CODING_AGENT_SESSION_DIR", dir.path()).args(&args).output()?;
        check(out.status.code() == Some(2) && stderr(&out).contains("empty SESSION"), || {
            format!("{args:?}: exit {:?} {}", out.status.code(), stderr(&out))
        })?;
    }
    check(fs::read(&f)? == before, || "the session changed".into())
}

/// Defect 7: Lines valid up to their first keys that do not parse whole: every command must say
/// the same about them (which entries exist, which is `@`).
fn commands_agree() -> TestResult {
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let variants: Vec<(&str, String, bool)> = vec![
        // (what, the last line, whether pi keeps the line as an entry)
        (
            "100,000-deep nesting",
            format!(r#"{{"type":"custom","id":"dddd0003","parentId":"dddd0002","timestamp":"2026-01-01T00:00:03.000Z","customType":"x","data":{deep}}}"#),
            true,
        ),
        (
            "1e400",
            r#"{"type":"custom","id":"dddd0003","parentId":"dddd0002","timestamp":"2026-01-01T00:00:03.000Z","customType":"x","data":1e400}"#.to_string(),
            true,
        ),
        (
            "invalid UTF-8",
            "{\"type\":\"custom\",\"id\":\"dddd0003\",\"parentId\":\"dddd0002\",\"timestamp\":\"2026-01-01T00:00:03.000Z\",\"customType\":\"x\",\"data\":\"\u{fffd}\"}".replace('\u{fffd}', "\u{1}BAD").replace('\u{1}', ""),
            true,
        ),
        (
            "damage after the first keys",
            r#"{"type":"custom","id":"dddd0003","parentId":"dddd0002","timestamp":"2026-01-01T00:00:03.000Z","customType":"x","data":[BROKEN]}"#.to_string(),
            false,
        ),
    ];
    for (what, last, kept) in variants {
        let dir = tempfile::tempdir()?;
        let mut bytes = [header("/tmp"), user("dddd0001", None, "one"), user("dddd0002", Some("dddd0001"), "two")]
            .join("\n")
            .into_bytes();
        bytes.push(b'\n');
        let mut last = last.into_bytes();
        if what == "invalid UTF-8" {
            // Bytes that are not UTF-8 inside a string.
            let at = last.windows(3).position(|w| w == b"BAD").unwrap();
            last.splice(at..at + 3, [0xff, 0xfe]);
        }
        bytes.extend(&last);
        bytes.push(b'\n');
        let f = dir.path().join("s.jsonl");
        fs::write(&f, &bytes)?;
        let want_line = if kept { 4 } else { 3 };
        let leaf_line = |args: &[&str], pointer: &str| -> Result<Value, libtest_mimic::Failed> {
            let out = run(args);
            no_panic(&out)?;
            let doc: Value = serde_json::from_slice(&out.stdout)
                .map_err(|e| format!("{what}: {args:?}: not JSON ({e}): {}", stderr(&out)))?;
            Ok(doc.pointer(pointer).cloned().unwrap_or(Value::Null))
        };
        let fs_ = s(&f);
        let path_line = leaf_line(&["path", fs_, "--format", "json"], "/leafLine")?;
        let show_line = leaf_line(&["show", fs_, "@", "--format", "json"], "/entries/0/line")?;
        let leaves_doc = run(&["leaves", fs_, "--format", "json"]);
        let leaves: Value = serde_json::from_slice(&leaves_doc.stdout)?;
        let default_leaf = leaves["leaves"].as_array().unwrap().iter().find(|l| l["isDefault"] == true).cloned();
        let tree_doc = run(&["tree", fs_, "--format", "json", "--filter", "all"]);
        let tree: Value = serde_json::from_slice(&tree_doc.stdout)?;
        let tree_leaf = tree["nodes"].as_array().unwrap().iter().rfind(|n| n["onActivePath"] == true).cloned();
        check(path_line == want_line, || format!("{what}: path's leaf is line {path_line}, want {want_line}"))?;
        check(show_line == want_line, || format!("{what}: show @ is line {show_line}"))?;
        check(default_leaf.as_ref().is_some_and(|l| l["line"] == want_line), || {
            format!("{what}: leaves: {default_leaf:?}")
        })?;
        check(tree_leaf.as_ref().is_some_and(|n| n["line"] == want_line), || format!("{what}: tree: {tree_leaf:?}"))?;
        // What pisces cannot read is said as it is.
        let err = stderr(&run(&["path", fs_]));
        match what {
            // The array's 100,000 levels inside the entry's object.
            "100,000-deep nesting" => check(err.contains("nested 100001 levels deep"), || err.clone())?,
            "1e400" => check(err.contains("too large for a 64-bit float"), || err.clone())?,
            "invalid UTF-8" => check(err.contains("not UTF-8"), || err.clone())?,
            _ => check(err.contains(":4: malformed JSON"), || err.clone())?,
        }
        check(!err.contains("damaged"), || format!("{what}: {err}"))?;
    }
    Ok(())
}

/// Defect 7, in the tree: a reply too deep for pisces to read is a row that says so, and
/// its tool call is not read either (its result's row names only the tool), however the
/// tree reads the replies it can (the rows' quick readers must leave it alone).
fn tree_unreadable_reply() -> TestResult {
    let dir = tempfile::tempdir()?;
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let reply = format!(
        r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"deep one"}},{{"type":"toolCall","id":"c1","name":"bash","arguments":{{"command":"ls","x":{deep}}}}}],"stopReason":"toolUse","timestamp":2}}}}"#
    );
    let result = json!({"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z",
        "message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":3}});
    let f = session_file(dir.path(), "s.jsonl", &[header("/tmp"), user("u1", None, "hi"), reply, result.to_string()]);
    let out = run(&["tree", s(&f), "--color", "never"]);
    no_panic(&out)?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<&str> = text.lines().collect();
    check(rows == ["• user: hi", "• (line 3 cannot be read by pisces)", "• [bash]"], || text.clone())
}

/// Defect 7: `fork @` copied the very line pisces reported as malformed.
fn fork_skips_malformed() -> TestResult {
    let dir = tempfile::tempdir()?;
    let broken = r#"{"type":"message","id":"eeee0003","parentId":"eeee0002","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[BROKEN]}}"#;
    let f = session_file(
        dir.path(),
        "s.jsonl",
        &[header("/tmp"), user("eeee0001", None, "one"), user("eeee0002", Some("eeee0001"), "two"), broken.into()],
    );
    let out = run(&["fork", s(&f), "@", "-o", s(&dir.path().join("fork.jsonl"))]);
    check(out.status.success(), || stderr(&out))?;
    let fork = fs::read_to_string(dir.path().join("fork.jsonl"))?;
    check(!fork.contains("BROKEN"), || "the fork holds the malformed line".into())?;
    check(fork.contains("eeee0002"), || fork.clone())
}

/// Defect 8: `tree` drew nothing for a parent cycle without a root, though the warning says its
/// earliest entry is treated as a root (and path, show, leaves do so).
fn cycle_without_root() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = session_file(
        dir.path(),
        "s.jsonl",
        &[header("/tmp"), user("ffff0001", Some("ffff0002"), "one"), user("ffff0002", Some("ffff0001"), "two")],
    );
    let out = run(&["tree", s(&f), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)?;
    check(doc["roots"] == json!(["ffff0001"]), || format!("roots {}", doc["roots"]))?;
    check(doc["nodes"].as_array().unwrap().len() == 2, || format!("{doc}"))?;
    let text = stdout(&run(&["tree", s(&f)]));
    check(text.contains("user: one") && text.contains("user: two"), || text.clone())?;
    let path: Value = serde_json::from_slice(&run(&["path", s(&f), "--format", "json"]).stdout)?;
    check(path["pathIds"] == json!(["ffff0001", "ffff0002"]), || format!("{}", path["pathIds"]))?;
    // pi's own drawing (`--pi-exact`) shows none of the cycle, as pi does.
    let exact = stdout(&run(&["tree", s(&f), "--pi-exact"]));
    check(exact.trim().is_empty(), || exact.clone())
}

/// Defect 9: `check` called these clean.
fn check_finds_shapes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let base = |id: Value| {
        json!({"type":"message","id":id,"parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
               "message":{"role":"user","content":"x","timestamp":1}})
    };
    let mut cases: Vec<(&str, Vec<String>, &str)> = vec![
        ("numeric id", vec![header("/tmp"), base(json!(7)).to_string()], "non-string-id"),
        ("empty id", vec![header("/tmp"), base(json!("")).to_string()], "empty-id"),
        (
            "compaction summary 5",
            vec![header("/tmp"), user("a1", None, "x"), json!({"type":"compaction","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","summary":5,"firstKeptEntryId":"a1"}).to_string()],
            "bad-compaction-summary",
        ),
        (
            "usage lots",
            vec![header("/tmp"), user("a1", None, "x"), json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":"lots","stopReason":"stop","timestamp":2}}).to_string()],
            "bad-usage",
        ),
        (
            "content null",
            vec![header("/tmp"), json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":null,"timestamp":1}}).to_string()],
            "bad-content",
        ),
        (
            "a timestamp that is no date",
            vec![header("/tmp"), json!({"type":"message","id":"a1","parentId":null,"timestamp":"yesterday","message":{"role":"user","content":"x","timestamp":1}}).to_string()],
            "bad-timestamp",
        ),
        (
            "version 4",
            vec![header("/tmp").replace("\"version\":3", "\"version\":4"), user("a1", None, "x")],
            "newer-version",
        ),
        (
            "version \"3\"",
            vec![header("/tmp").replace("\"version\":3", "\"version\":\"3\""), user("a1", None, "x")],
            "version-not-a-number",
        ),
    ];
    let mut bad_utf8 = user("a1", None, "x BAD").into_bytes();
    let at = bad_utf8.windows(3).position(|w| w == b"BAD").unwrap();
    bad_utf8.splice(at..at + 3, [0xff]);
    let f = dir.path().join("utf8.jsonl");
    fs::write(&f, [header("/tmp").into_bytes(), b"\n".to_vec(), bad_utf8, b"\n".to_vec()].concat())?;
    cases.push(("invalid UTF-8", vec![], "invalid-utf8"));
    for (k, (what, lines, kind)) in cases.into_iter().enumerate() {
        let file = if lines.is_empty() { f.clone() } else { session_file(dir.path(), &format!("{k}.jsonl"), &lines) };
        let out = run(&["check", s(&file), "--format", "json"]);
        let doc: Value = serde_json::from_slice(&out.stdout)?;
        let kinds: Vec<&str> =
            doc["files"][0]["findings"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
        check(out.status.code() == Some(1) && kinds.contains(&kind), || {
            format!("{what}: exit {:?}, {kinds:?}", out.status.code())
        })?;
    }
    Ok(())
}

/// Defect 10: Messages that misled.
fn messages() -> TestResult {
    let f = testdata().join("pi-1.6.0/01-linear-chat.jsonl");
    let err = stderr(&run(&["path", s(&f), "#0"]));
    check(err.contains("lines are numbered from 1") && !err.contains("past the end"), || err.clone())?;
    // A link loop given as a bare name is a file (that cannot be opened), not an unknown id.
    let dir = tempfile::tempdir()?;
    std::os::unix::fs::symlink("loop", dir.path().join("loop"))?;
    let out = pisces().current_dir(dir.path()).args(["path", "loop"]).output()?;
    let err = stderr(&out);
    check(!err.contains("no session id matches") && err.to_lowercase().contains("symbolic links"), || err.clone())?;
    // --session-dir at a folder of project folders says so.
    let store = tempfile::tempdir()?;
    fs::create_dir(store.path().join("--project--"))?;
    fs::copy(&f, store.path().join("--project--/s.jsonl"))?;
    let err = stderr(&run(&["path", "--session-dir", s(store.path()), "0199"]));
    check(err.contains("folder of them") || err.contains("folders of them") || err.contains("1 folder"), || {
        err.clone()
    })?;
    // An OS error is said once.
    let err = stderr(&run(&["path", "/nonexistent-dir/s.jsonl"]));
    check(err.matches("No such file or directory").count() == 1, || err.clone())
}

/// Defect 11: `label session.jsonl @ fix-1` twice: the second one labelled the first's label
/// entry, and then `show fix-1` failed ("the label is on two entries").
fn label_twice() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("s.jsonl");
    fs::copy(testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"), &f)?;
    let first = run(&["label", s(&f), "@", "fix-1", "--format", "json"]);
    check(first.status.success(), || stderr(&first))?;
    let second = run(&["label", s(&f), "@", "fix-1", "--format", "json"]);
    check(second.status.success(), || stderr(&second))?;
    let a: Value = serde_json::from_slice(&first.stdout)?;
    let b: Value = serde_json::from_slice(&second.stdout)?;
    check(a["targetId"] == b["targetId"], || format!("{} then {}", a["targetId"], b["targetId"]))?;
    check(stderr(&second).contains("names a label entry"), || stderr(&second))?;
    let shown = run(&["show", s(&f), "fix-1", "--format", "json"]);
    check(shown.status.success(), || stderr(&shown))?;
    let doc: Value = serde_json::from_slice(&shown.stdout)?;
    check(doc["entries"][0]["id"] == a["targetId"], || format!("{}", doc["entries"][0]["id"]))
}

/// Defect 12: A writer that truncates the file to a random length and writes it back, in a loop,
/// while pisces reads it: every read gives an answer from one state of the file (whole
/// JSON; the whole file's answer when the file did not change during the read) or stops
/// with an error saying the file changed; none dies of SIGBUS.
fn shrunk_while_read() -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = fs::read(testdata().join("real/large-session.jsonl"))?;
    // About 4 MB: large enough that a read takes a while (the file is mapped).
    let big = big_copy(&src);
    let f = dir.path().join("s.jsonl");
    fs::write(&f, &big)?;
    let fs_ = s(&f).to_string();
    let commands: Vec<Vec<String>> = [
        vec!["path", "--format", "json"],
        vec!["tree", "--format", "json"],
        vec!["leaves", "--format", "json"],
        vec!["check", "--format", "json"],
        vec!["show", "@", "--format", "json"],
    ]
    .iter()
    .map(|a| {
        let mut v: Vec<String> = vec![a[0].to_string(), fs_.clone()];
        v.extend(a[1..].iter().map(|x| x.to_string()));
        v
    })
    .collect();
    // The answers of the whole, unchanged file.
    let want: Vec<Vec<u8>> = commands.iter().map(|c| pisces().args(c).output().unwrap().stdout).collect();

    let writer = Rewriter::start(&f, big.clone(), 0x2545_f491_4f6c_dd1d);
    let mut changed = 0;
    let mut answered = 0;
    let mut whole = 0;
    for round in 0..4 {
        for (k, c) in commands.iter().enumerate() {
            let out = pisces().args(c).output()?;
            check(out.status.code().is_some(), || format!("{c:?} (round {round}) was killed: {:?}", out.status))?;
            no_panic(&out)?;
            match out.status.code() {
                Some(0) | Some(1) => {
                    answered += 1;
                    whole += usize::from(out.stdout == want[k]);
                    // An answer from one state of the file (possibly a cut one): whole JSON.
                    let doc: Result<Value, _> = serde_json::from_slice(&out.stdout);
                    check(doc.is_ok(), || format!("{c:?} (round {round}) printed no whole answer"))?;
                }
                _ => {
                    changed += 1;
                    let err = stderr(&out);
                    check(
                        err.contains("changed while pisces read it") || err.contains("not a valid pi session"),
                        || format!("{c:?} (round {round}): {err}"),
                    )?;
                }
            }
        }
    }
    let rewrites = writer.stop()?;
    check(rewrites > 10, || format!("only {rewrites} rewrites: the test did not test"))?;
    eprintln!("defects::12: {answered} answers ({whole} of the whole file), {changed} refusals, {rewrites} rewrites");
    check(answered + changed == 20, || format!("{answered} answers, {changed} refusals"))
}

/// A model provider that refuses is exit status 3 (README), for each command that asks
/// one, however deep in the error the provider's failure sits; a missing key is a usage
/// error (2): nothing was sent.
fn provider_failure_status() -> TestResult {
    let session = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let f = s(&session);
    let refused = r#"{"type":"error","error":{"type":"invalid_request_error","message":"no"}}"#;
    let commands: [&[&str]; 2] = [&["summarize", f, "@", "root"], &["compact", f, "--keep-recent", "1"]];
    for args in commands {
        let server = ScriptedServer::start(vec![Reply::status(400, refused)]);
        let out = pisces()
            .args(args)
            .args(["--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
            .args(["--api-key-env", "PISCES_TEST_KEY"])
            .env("PISCES_TEST_KEY", "test-key")
            .output()?;
        no_panic(&out)?;
        check(out.status.code() == Some(3), || format!("{args:?}: exit {:?}: {}", out.status.code(), stderr(&out)))?;
        check(server.requests().len() == 1, || format!("{args:?}: {} requests", server.requests().len()))?;
        let out = pisces()
            .args(args)
            .args(["--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
            .args(["--api-key-env", "PISCES_TEST_UNSET_KEY"])
            .env_remove("PISCES_TEST_UNSET_KEY")
            .output()?;
        check(out.status.code() == Some(2), || {
            format!("{args:?} without a key: exit {:?}: {}", out.status.code(), stderr(&out))
        })?;
    }
    Ok(())
}
