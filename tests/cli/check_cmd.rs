//! `pisces check`: clean files pass, every kind of broken file is named, exit codes.

use std::fs;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, run, stderr, stdout, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("check::pi_written_sessions_are_clean", pi_written_are_clean),
        Trial::test("check::broken_files_are_named", broken_files_are_named),
        Trial::test("check::exit_codes", exit_codes),
    ]
}

fn json(args: &[&str]) -> Result<(Option<i32>, Value), libtest_mimic::Failed> {
    let out = run(args);
    let v = serde_json::from_slice(&out.stdout).map_err(|e| format!("not JSON ({e}): {}", stderr(&out)))?;
    Ok((out.status.code(), v))
}

/// Everything pi 1.6.0 and 0.73.1 wrote in the corpus is a valid session.
fn pi_written_are_clean() -> TestResult {
    for corpus in ["pi-1.6.0", "pi-0.73.1"] {
        let dir = testdata().join(corpus);
        let (code, doc) = json(&["check", dir.to_str().unwrap(), "--format", "json"])?;
        let files = doc["files"].as_array().unwrap();
        let expected =
            fs::read_dir(&dir)?.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "jsonl")).count();
        check(files.len() == expected, || {
            format!("{corpus}: {} files checked, {expected} in the directory", files.len())
        })?;
        for f in files {
            check(f["status"] == "clean", || format!("{}: {}", f["file"], f["findings"]))?;
        }
        check(code == Some(0) && doc["version"] == 1 && doc["summary"]["clean"] == expected, || {
            doc["summary"].to_string()
        })?;
    }
    Ok(())
}

/// (file under testdata/edge/, the kinds `check` must report for it).
const BROKEN: &[(&str, &[&str])] = &[
    ("01-malformed-middle-line.jsonl", &["malformed"]),
    ("02-crlf-line-endings.jsonl", &["crlf"]),
    ("03-no-final-newline.jsonl", &["no-final-newline"]),
    ("04-truncated-last-line.jsonl", &["truncated"]),
    ("05-blank-and-whitespace-lines.jsonl", &["blank-lines"]),
    ("07-duplicate-header-0.73.1.jsonl", &["second-header", "duplicate-id"]),
    ("12-damaged-entry-tail.jsonl", &["malformed", "dangling-parent"]),
    ("13-v1-basic.jsonl", &["old-format"]),
    ("23-orphans.jsonl", &["dangling-parent"]),
    ("27-cycles-off-path.jsonl", &["self-parent", "parent-cycle"]),
    ("28-compaction-first-kept-missing.jsonl", &["compaction-first-kept-missing"]),
    ("29-compaction-first-kept-off-path.jsonl", &["compaction-first-kept-off-path"]),
    ("45-null-content.jsonl", &["tool-result-without-call"]),
    ("47-unanswered-tool-calls.jsonl", &["tool-call-unanswered"]),
    ("errors/empty.jsonl", &["empty"]),
    ("errors/no-header.jsonl", &["no-header"]),
    ("errors/utf8-bom.jsonl", &["no-header"]),
    ("errors/message-entry-without-message.jsonl", &["message-without-message"]),
];

fn broken_files_are_named() -> TestResult {
    for (file, kinds) in BROKEN {
        let path = testdata().join("edge").join(file);
        let (code, doc) = json(&["check", path.to_str().unwrap(), "--format", "json"])?;
        let findings = doc["files"][0]["findings"].as_array().unwrap();
        for kind in *kinds {
            let hit = findings.iter().find(|f| f["kind"] == *kind);
            check(hit.is_some(), || format!("{file}: no `{kind}` finding in {findings:?}"))?;
            let hit = hit.unwrap();
            check(hit["hint"].as_str().is_some_and(|h| !h.is_empty()), || format!("{file}: `{kind}` has no hint"))?;
        }
        let problems = findings.iter().any(|f| f["level"] != "info");
        check(code == Some(if problems { 1 } else { 0 }), || format!("{file}: exit {code:?}"))?;
    }
    // A text report names file and line.
    let f = testdata().join("edge/01-malformed-middle-line.jsonl");
    let text = stdout(&run(&["check", f.to_str().unwrap()]));
    check(text.contains(&format!("{}:7: error: malformed JSON", f.display())) && text.contains("hint: "), || {
        text.clone()
    })
}

fn exit_codes() -> TestResult {
    let clean = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let broken = testdata().join("edge/04-truncated-last-line.jsonl");
    let out = run(&["check", clean.to_str().unwrap()]);
    check(out.status.code() == Some(0) && stdout(&out).contains("clean"), || stdout(&out))?;
    let out = run(&["check", clean.to_str().unwrap(), broken.to_str().unwrap()]);
    check(out.status.code() == Some(1) && stdout(&out).contains("2 files checked: 1 clean, 1 with problems"), || {
        stdout(&out)
    })?;
    let out = run(&["check", clean.to_str().unwrap(), "no/such/file.jsonl"]);
    check(out.status.code() == Some(2) && stdout(&out).contains("unreadable"), || stdout(&out))
}
