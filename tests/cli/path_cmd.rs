//! `pisces path`: formats, flags, and bad input.

use std::fs;
use std::io::Read;
use std::process::Stdio;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, pisces, run, stderr, stdout, stdout_json, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("path::entries_are_the_raw_path_lines", entries_are_the_raw_path_lines),
        Trial::test("path::system_prompt_matches_pi", system_prompt_matches_pi),
        Trial::test("path::text_and_markdown", text_and_markdown),
        Trial::test("path::color_only_when_asked_or_on_a_terminal", color_only_when_asked),
        Trial::test("path::piped_default_is_json", piped_default_is_json),
        Trial::test("path::lenient_reports_then_strict_fails", lenient_then_strict),
        Trial::test("path::not_a_session_is_an_error_and_untouched", not_a_session),
        Trial::test("path::broken_pipe_is_quiet", broken_pipe_is_quiet),
        Trial::test("path::damaged_tail_is_dropped_like_pi", damaged_tail_is_dropped_like_pi),
    ]
}

fn golden(corpus: &str, stem: &str, leaf: &str) -> Value {
    let p = testdata().join(corpus).join("expected").join(stem).join(format!("{leaf}.context.json"));
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

fn entries_are_the_raw_path_lines() -> TestResult {
    for (corpus, stem) in
        [("pi-1.6.0", "03-tree-branches"), ("pi-1.6.0", "21-compaction-checkpoints"), ("real", "large-session")]
    {
        let file = testdata().join(corpus).join(format!("{stem}.jsonl"));
        let text = fs::read_to_string(&file)?;
        let lines: Vec<&str> = text.lines().collect();
        let g = golden(corpus, stem, "default");
        let want: String = g["pathLines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| format!("{}\n", lines[l.as_u64().unwrap() as usize - 1]))
            .collect();
        let out = run(&["path", file.to_str().unwrap(), "--entries"]);
        check(out.status.success() && stdout(&out) == want, || {
            format!("{stem}: --entries differs from the path's lines")
        })?;
    }
    Ok(())
}

/// `--system` replays the path's system messages into pi's prompt and tool list.
fn system_prompt_matches_pi() -> TestResult {
    for stem in ["18-system-prompt-updates", "21-compaction-checkpoints", "01-linear-chat"] {
        let file = testdata().join(format!("pi-1.6.0/{stem}.jsonl"));
        let g = golden("pi-1.6.0", stem, "default");
        let doc = stdout_json(&run(&["path", file.to_str().unwrap(), "--format", "json", "--system"]))?;
        check(doc["system"]["prompt"] == g["system"]["prompt"], || format!("{stem}: prompt differs"))?;
        let names: Vec<Value> = doc["system"]["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
        check(Value::Array(names) == g["system"]["toolNames"], || format!("{stem}: tools differ"))?;
        check(doc["system"]["replayed"] == g["system"]["replayed"], || {
            format!("{stem}: replayed system message differs")
        })?;
        let text = stdout(&run(&["path", file.to_str().unwrap(), "--format", "text", "--system"]));
        let first_line = g["system"]["prompt"].as_str().unwrap().lines().next().unwrap();
        check(text.contains(first_line), || format!("{stem}: text --system lacks the prompt"))?;
    }
    Ok(())
}

fn text_and_markdown() -> TestResult {
    let file = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let f = file.to_str().unwrap();
    let g = golden("pi-1.6.0", "22-two-fix-attempts", "default");
    let first_prompt = g["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap()["content"][0]
        ["text"]
        .as_str()
        .unwrap()
        .to_string();
    let text = run(&["path", f, "--format", "text"]);
    let t = stdout(&text);
    check(
        text.status.success() && t.contains(&first_prompt) && t.contains("▍assistant") && t.contains("→ bash"),
        || t.clone(),
    )?;
    let md = stdout(&run(&["path", f, "--format", "markdown"]));
    check(
        md.starts_with("# ")
            && md.contains("## User")
            && md.contains(&first_prompt)
            && md.contains("**Tool call `bash`**"),
        || md.clone(),
    )
}

fn color_only_when_asked() -> TestResult {
    let f = testdata().join("pi-1.6.0/02-tool-use.jsonl");
    let f = f.to_str().unwrap();
    let plain = run(&["path", f, "--format", "text"]);
    check(!plain.stdout.contains(&0x1b), || "escape codes in piped output".into())?;
    let forced = run(&["path", f, "--format", "text", "--color", "always"]);
    check(forced.stdout.contains(&0x1b), || "--color always gave no color".into())?;
    let env = pisces().env("CLICOLOR_FORCE", "1").args(["path", f, "--format", "text"]).output()?;
    check(env.stdout.contains(&0x1b), || "CLICOLOR_FORCE gave no color".into())?;
    let no = pisces().env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1").args(["path", f, "--format", "text"]).output()?;
    check(!no.stdout.contains(&0x1b), || "NO_COLOR must win over CLICOLOR_FORCE".into())
}

fn piped_default_is_json() -> TestResult {
    let f = testdata().join("pi-1.6.0/01-linear-chat.jsonl");
    let doc = stdout_json(&run(&["path", f.to_str().unwrap()]))?;
    check(doc["version"] == 1 && doc["session"]["id"].is_string() && doc["messages"].is_array(), || doc.to_string())
}

/// A copy of a corpus file with a garbage line inserted after line `after`.
fn with_garbage(stem: &str, after: usize, garbage: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = fs::read_to_string(testdata().join(format!("pi-1.6.0/{stem}.jsonl"))).unwrap();
    let mut lines: Vec<&str> = src.lines().collect();
    lines.insert(after, garbage);
    let path = dir.path().join(format!("{stem}.jsonl"));
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    (dir, path)
}

fn lenient_then_strict() -> TestResult {
    let (_dir, path) = with_garbage("01-linear-chat", 3, "{\"type\":\"message\", this is not json");
    let p = path.to_str().unwrap();
    let lenient = run(&["path", p, "--format", "json"]);
    let err = stderr(&lenient);
    check(lenient.status.success(), || format!("lenient run failed: {err}"))?;
    check(err.contains(&format!("{p}:4: malformed JSON")) && err.contains("skipped, as pi skips it"), || err.clone())?;
    // The same context as the clean file: pi skips the line.
    let clean = stdout_json(&run(&[
        "path",
        testdata().join("pi-1.6.0/01-linear-chat.jsonl").to_str().unwrap(),
        "--format",
        "json",
    ]))?;
    check(stdout_json(&lenient)?["messages"] == clean["messages"], || "a malformed line changed the context".into())?;
    let strict = run(&["--strict", "path", p]);
    check(strict.status.code() == Some(2) && stderr(&strict).contains("--strict"), || stderr(&strict))?;
    check(strict.stdout.is_empty(), || "--strict printed a context anyway".into())
}

fn not_a_session() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.jsonl", b"", "empty file (0 bytes)"),
        ("blank.jsonl", b"\n  \n\t\n", "not a valid pi session: it holds only blank lines"),
        ("noheader.jsonl", b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n", ":1: not a valid pi session: the first entry has type \"message\""),
        ("noid.jsonl", b"{\"type\":\"session\",\"version\":3}\n", ":1: not a valid pi session: the session header has no string `id`"),
    ];
    for (name, bytes, words) in cases {
        let path = dir.path().join(name);
        fs::write(&path, bytes)?;
        let out = run(&["path", path.to_str().unwrap()]);
        let err = stderr(&out);
        check(out.status.code() == Some(2) && err.contains(words) && err.contains(name), || format!("{name}: {err}"))?;
        check(fs::read(&path)? == bytes, || format!("{name} was modified"))?;
    }
    Ok(())
}

fn broken_pipe_is_quiet() -> TestResult {
    let f = testdata().join("real/before-compaction.jsonl");
    let mut child = pisces()
        .args(["path", f.to_str().unwrap(), "--format", "markdown"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut first = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut first)?;
    drop(child.stdout.take());
    let out = child.wait_with_output()?;
    check(out.status.code() == Some(0) && out.stderr.is_empty(), || {
        format!("exit {:?}: {}", out.status.code(), stderr(&out))
    })
}

/// A line whose first keys parse but whose tail is damaged is not an entry for pi. The
/// index only finds out when the line is read whole; the result must still be pi's.
fn damaged_tail_is_dropped_like_pi() -> TestResult {
    let src = fs::read_to_string(testdata().join("pi-1.6.0/01-linear-chat.jsonl"))?;
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    // Damage the last user message's content, keeping the line's final `}`.
    let i = lines.iter().rposition(|l| l.contains("\"role\":\"user\"")).unwrap();
    lines[i] = lines[i].replacen("\"content\":[", "\"content\":[BROKEN", 1);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("damaged.jsonl");
    fs::write(&path, lines.join("\n") + "\n")?;
    let out = run(&["path", path.to_str().unwrap(), "--format", "json"]);
    let doc = stdout_json(&out)?;
    let err = stderr(&out);
    check(err.contains(&format!(":{}: malformed JSON (expected value", i + 1)), || err.clone())?;
    // pi drops the line: its child becomes an orphan root, and the default leaf's path starts there.
    let ids: Vec<&str> = doc["pathIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let child_id: Value = serde_json::from_str(&lines[i + 1])?;
    check(ids.first() == child_id["id"].as_str().as_ref(), || format!("path {ids:?}"))
}
