//! Broken files (pi's edge cases): what pisces says about each, and its exit code.
//!
//! The files are testdata/edge/ (pi reads them; their contexts are checked against pi's
//! goldens by `conformance`) and testdata/edge/errors/ (pi refuses, crashes or loops on
//! them; testdata/edge/ERRORS.md says what pi does with each).

use std::fs;

use libtest_mimic::Trial;

use crate::common::{check, run, stderr, testdata, TestResult};

/// (file under testdata/edge/, exit code, what stderr must say: `file:line: ...` parts).
const CASES: &[(&str, i32, &[&str])] = &[
    ("01-malformed-middle-line.jsonl", 0, &[":7: malformed JSON", ":8: malformed JSON", ":9: malformed JSON"]),
    ("02-crlf-line-endings.jsonl", 0, &[":1: 8 lines end in CRLF"]),
    ("03-no-final-newline.jsonl", 0, &[":8: no final newline; pi 1.6 would append one"]),
    ("04-truncated-last-line.jsonl", 0, &[":8: truncated last line"]),
    ("05-blank-and-whitespace-lines.jsonl", 0, &[":1: 10 blank lines; skipped"]),
    ("06-garbage-before-header.jsonl", 0, &[":1: malformed JSON", ":2: malformed JSON"]),
    (
        "07-duplicate-header-0.73.1.jsonl",
        0,
        &[":5: a second session header; ignored", ":6: duplicate id 4f354d6e (also on line 2)"],
    ),
    ("08-second-header-mid-file.jsonl", 0, &[":7: a second session header; ignored"]),
    (
        "09-json-non-object-lines.jsonl",
        0,
        &[":6: `42` is JSON but not an object; kept", ":9: `[1,2,3]` is JSON but not an object"],
    ),
    ("10-json-null-and-falsy-lines.jsonl", 0, &[":6: `null` is not an entry; skipped", ":7: `0` is not an entry"]),
    ("12-damaged-entry-tail.jsonl", 0, &[":9: malformed JSON (", ":10: parent bea25f2f of entry 7384f6d0 not found"]),
    ("23-orphans.jsonl", 0, &[":7: parent 9f9f9f9f of entry 78a55dec not found; the entry is treated as a root"]),
    ("24-duplicate-ids.jsonl", 0, &[":9: duplicate id 4f555d82 (also on line 6); the later entry wins"]),
    (
        "27-cycles-off-path.jsonl",
        0,
        &[":7: entry 3c1ed905 is its own parent", ":8: parent cycle 0dc9ba48 -> d6819d67 -> 0dc9ba48"],
    ),
    ("errors/empty.jsonl", 2, &["errors/empty.jsonl: empty file (0 bytes)", "left it unchanged"]),
    ("errors/whitespace-only.jsonl", 2, &["not a valid pi session: it holds only blank lines"]),
    ("errors/no-header.jsonl", 2, &[":1: not a valid pi session: the first entry has type \"message\""]),
    ("errors/header-on-second-line.jsonl", 2, &[":1: not a valid pi session: the first entry has type \"message\""]),
    ("errors/header-id-not-string.jsonl", 2, &[":1: not a valid pi session: the session header has no string `id`"]),
    ("errors/header-id-missing.jsonl", 2, &[":1: not a valid pi session: the session header has no string `id`"]),
    ("errors/utf8-bom.jsonl", 2, &[":2: not a valid pi session", "line 1 starts with a UTF-8 byte order mark"]),
    ("errors/v1-non-object-line.jsonl", 0, &[":3: pi cannot migrate this version-1 file past this line"]),
    ("errors/message-entry-without-message.jsonl", 0, &[":6: message entry without a `message`"]),
    ("errors/self-parent.jsonl", 0, &[":7: entry 7cef15c9 is its own parent; treated as a root"]),
    ("errors/parent-cycle.jsonl", 0, &[":5: parent cycle aef7dac4 -> ca3f7ab8 -> aef7dac4; pisces treats ca3f7ab8"]),
];

pub fn trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = CASES
        .iter()
        .map(|&(file, code, says)| Trial::test(format!("broken::{file}"), move || case(file, code, says)))
        .collect();
    trials.push(Trial::test("broken::strict_fails_on_every_warning", strict_fails));
    trials.push(Trial::test("broken::cycles_resolve_as_documented", cycles_resolve));
    trials
}

fn case(file: &str, code: i32, says: &[&str]) -> TestResult {
    let path = testdata().join("edge").join(file);
    let out = run(&["path", path.to_str().unwrap(), "--format", "json"]);
    let err = stderr(&out);
    check(out.status.code() == Some(code), || format!("exit {:?}, want {code}\n{err}", out.status.code()))?;
    for s in says {
        let want = if s.starts_with(':') { format!("{}{s}", path.display()) } else { s.to_string() };
        check(err.contains(&want), || format!("stderr lacks {want:?}:\n{err}"))?;
    }
    // Problems go to stderr only; stdout is the context or nothing.
    check(code == 0 || out.stdout.is_empty(), || "an error printed to stdout".into())
}

/// `--strict` turns each warning above into a failure (exit 2, nothing on stdout).
fn strict_fails() -> TestResult {
    for &(file, code, _) in CASES.iter().filter(|c| c.1 == 0) {
        let path = testdata().join("edge").join(file);
        let out = run(&["--strict", "path", path.to_str().unwrap()]);
        check(out.status.code() == Some(2) && out.stdout.is_empty(), || {
            format!("{file}: --strict exit {:?} (lenient {code})", out.status.code())
        })?;
    }
    // A clean file passes --strict.
    let clean = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let out = run(&["--strict", "path", clean.to_str().unwrap(), "--format", "json"]);
    check(out.status.success() && out.stderr.is_empty(), || stderr(&out))
}

/// Where pi loops, pisces cuts the cycle at its earliest entry (ERRORS.md).
fn cycles_resolve() -> TestResult {
    for (file, want) in [
        ("errors/self-parent.jsonl", vec!["7cef15c9", "f1847602"]),
        ("errors/parent-cycle.jsonl", vec!["ca3f7ab8", "aef7dac4"]),
    ] {
        let path = testdata().join("edge").join(file);
        let doc: serde_json::Value =
            serde_json::from_slice(&run(&["path", path.to_str().unwrap(), "--format", "json"]).stdout)?;
        let ids: Vec<&str> = doc["pathIds"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        check(ids.starts_with(&want), || format!("{file}: path {ids:?}"))?;
        check(!fs::read(&path)?.is_empty(), || "file emptied".into())?;
    }
    Ok(())
}
