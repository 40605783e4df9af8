//! `pisces label`: one whole line appended, as pi writes it; nothing else changes.

use std::fs;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, run, stderr, stdout_json, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("label::appends_one_line_as_pi_writes_it", appends_one_line),
        Trial::test("label::refuses_what_it_must_not_touch", refuses),
    ]
}

fn copy_of(rel: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    fs::copy(testdata().join(rel), &p).unwrap();
    (dir, p)
}

fn appends_one_line() -> TestResult {
    let (_dir, p) = copy_of("pi-1.6.0/03-tree-branches.jsonl");
    let f = p.to_str().unwrap();
    let before = fs::read(&p)?;
    let leaf_before = stdout_json(&run(&["path", f, "--format", "json"]))?["leafId"].clone();
    let target = stdout_json(&run(&["path", f, "@^", "--format", "json"]))?["leafId"].clone();

    let out = run(&["label", f, "@^", "  fix \"1\"  ", "--format", "json"]);
    let doc = stdout_json(&out)?;
    let after = fs::read(&p)?;
    check(after.starts_with(&before), || "bytes before the append changed".into())?;
    let added = std::str::from_utf8(&after[before.len()..])?;
    check(added.ends_with('\n') && added.matches('\n').count() == 1, || format!("not one line: {added:?}"))?;
    let entry: Value = serde_json::from_str(added.trim_end())?;
    let keys: Vec<&str> = entry.as_object().unwrap().keys().map(String::as_str).collect();
    check(keys == ["type", "id", "parentId", "timestamp", "targetId", "label"], || format!("key order {keys:?}"))?;
    check(entry["type"] == "label" && entry["targetId"] == target && entry["label"] == "fix \"1\"", || {
        entry.to_string()
    })?;
    check(entry["parentId"] == leaf_before, || "parent is not the previous last entry".into())?;
    let id = entry["id"].as_str().unwrap();
    check(id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()) && doc["id"] == id, || id.to_string())?;
    check(entry["timestamp"].as_str().is_some_and(|t| t.len() == 24 && t.ends_with('Z')), || {
        entry["timestamp"].to_string()
    })?;
    // The label now names the entry, and the label entry is pi's new leaf.
    check(stdout_json(&run(&["path", f, "fix \"1\"", "--format", "json"]))?["leafId"] == target, || {
        "label not found".into()
    })?;
    check(stdout_json(&run(&["path", f, "--format", "json"]))?["leafId"] == id, || "leaf did not move".into())?;

    // Clearing omits the `label` key, as pi writes it.
    let before = fs::read(&p)?;
    check(run(&["label", f, "fix \"1\"", "--clear"]).status.success(), || "clear failed".into())?;
    let after = fs::read(&p)?;
    let cleared: Value = serde_json::from_slice(&after[before.len()..])?;
    check(cleared.get("label").is_none() && cleared["targetId"] == target, || cleared.to_string())?;
    let gone = run(&["path", f, "fix \"1\""]);
    check(gone.status.code() == Some(2), || "the cleared label still resolves".into())
}

fn refuses() -> TestResult {
    // A file whose last line is incomplete: refused, untouched; --force ends the line first.
    let (_dir, p) = copy_of("pi-1.6.0/01-linear-chat.jsonl");
    let f = p.to_str().unwrap();
    let mut bytes = fs::read(&p)?;
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"cut");
    fs::write(&p, &bytes)?;
    let out = run(&["label", f, "@", "x"]);
    check(out.status.code() == Some(2) && stderr(&out).contains("does not end with a newline"), || stderr(&out))?;
    check(fs::read(&p)? == bytes, || "refused append changed the file".into())?;
    let forced = run(&["label", f, "@", "x", "--force"]);
    check(forced.status.success(), || stderr(&forced))?;
    let after = fs::read(&p)?;
    check(after.starts_with(&bytes) && after[bytes.len()] == b'\n', || {
        "--force did not end the broken line first".into()
    })?;

    // Version-1 files (pi would rewrite them on open), stdin, unknown targets, empty labels.
    let (_d2, v1) = copy_of("real/large-session.jsonl");
    let v1_before = fs::read(&v1)?;
    let out = run(&["label", v1.to_str().unwrap(), "@", "x"]);
    check(out.status.code() == Some(2) && stderr(&out).contains("version-1"), || stderr(&out))?;
    check(fs::read(&v1)? == v1_before, || "v1 file changed".into())?;
    for args in [vec!["label", "-", "@", "x"], vec!["label", f, "nope", "x"], vec!["label", f, "@", "  "]] {
        let before = fs::read(&p)?;
        let out = run(&args);
        check(out.status.code() == Some(2), || format!("{args:?}: exit {:?}", out.status.code()))?;
        check(fs::read(&p)? == before, || format!("{args:?} changed the file"))?;
    }
    Ok(())
}
