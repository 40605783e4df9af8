//! REV syntax, checked against pi's own view of the tree (`entries.json` goldens).

use std::fs;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, run, stderr, stdout_json, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("revs::names_resolve_like_pi_tree", names_resolve_like_pi_tree),
        Trial::test("revs::labels", labels),
        Trial::test("revs::errors_point_at_the_failing_part", errors_point_at_the_failing_part),
        Trial::test("revs::ambiguous_prefix_lists_candidates", ambiguous_prefix_lists_candidates),
        Trial::test("revs::a_session_without_entries_is_named", a_session_without_entries_is_named),
    ]
}

/// `@` and `root` of a session that has no entries (here the first two lines of a Claude Code
/// file, which describe the session): the error names the file.
fn a_session_without_entries_is_named() -> TestResult {
    let src = fs::read_to_string(testdata().join("claude-code-2.1.332/10-compact-twice.jsonl"))?;
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("only-queue-lines.jsonl");
    fs::write(&f, src.lines().take(2).map(|l| format!("{l}\n")).collect::<String>())?;
    for (cmd, rev) in [("show", "@"), ("path", "root")] {
        let out = run(&[cmd, f.to_str().unwrap(), rev]);
        let err = stderr(&out);
        check(out.status.code() == Some(2), || format!("{cmd} {rev}: exit {:?}", out.status.code()))?;
        check(err.contains("no entries") && err.contains("only-queue-lines.jsonl"), || format!("{cmd} {rev}: {err}"))?;
    }
    Ok(())
}

const FILE: &str = "pi-1.6.0/03-tree-branches.jsonl";

fn entries_golden(file: &str) -> Value {
    let stem = file.rsplit('/').next().unwrap().trim_end_matches(".jsonl");
    let corpus = file.split('/').next().unwrap();
    let p = testdata().join(corpus).join("expected").join(stem).join(format!("{stem}.entries.json"));
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// The leaf id pisces resolves `rev` to.
fn leaf_of(file: &str, rev: &str) -> Result<String, libtest_mimic::Failed> {
    let f = testdata().join(file);
    let doc = stdout_json(&run(&["path", f.to_str().unwrap(), rev, "--format", "json"]))?;
    Ok(doc["leafId"].as_str().unwrap_or_default().to_string())
}

fn names_resolve_like_pi_tree() -> TestResult {
    let g = entries_golden(FILE);
    let default = g["defaultLeafId"].as_str().unwrap();
    let branch: Vec<&str> = g["branches"][default].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let n = branch.len();
    check(leaf_of(FILE, "@")? == default, || "@ is not pi's default leaf".into())?;
    check(leaf_of(FILE, "root")? == branch[0], || "root".into())?;
    check(leaf_of(FILE, "@^")? == branch[n - 2], || "@^".into())?;
    check(leaf_of(FILE, "@^^")? == branch[n - 3], || "@^^".into())?;
    check(leaf_of(FILE, "@~3")? == branch[n - 4], || "@~3".into())?;
    check(leaf_of(FILE, "@~2^")? == branch[n - 4], || "@~2^".into())?;
    check(leaf_of(FILE, &format!("@~{}", n - 1))? == branch[0], || "@~(depth)".into())?;
    // Every leaf by full id, by a unique prefix, and by its line.
    let ids: Vec<String> =
        g["entries"].as_array().unwrap().iter().filter_map(|e| e["id"].as_str().map(String::from)).collect();
    for leaf in g["leaves"].as_array().unwrap() {
        let leaf = leaf.as_str().unwrap();
        check(leaf_of(FILE, leaf)? == leaf, || format!("full id {leaf}"))?;
        let prefix = (1..=leaf.len())
            .map(|k| &leaf[..k])
            .find(|p| ids.iter().filter(|i| i.starts_with(p)).count() == 1)
            .unwrap();
        check(leaf_of(FILE, prefix)? == leaf, || format!("prefix {prefix}"))?;
        let line = g["lines"][leaf].as_u64().unwrap();
        check(leaf_of(FILE, &format!("#{line}"))? == leaf, || format!("#{line}"))?;
    }
    Ok(())
}

fn labels() -> TestResult {
    let file = "pi-1.6.0/05-labels-and-name.jsonl";
    let g = entries_golden(file);
    for (target, label) in g["labels"].as_object().unwrap() {
        let label = label.as_str().unwrap();
        check(leaf_of(file, label)? == *target, || format!("label {label}"))?;
        let parent =
            g["entries"].as_array().unwrap().iter().find(|e| e["id"] == target.as_str()).unwrap()["parentId"].clone();
        if let Some(p) = parent.as_str() {
            check(leaf_of(file, &format!("{label}^"))? == p, || format!("{label}^"))?;
        }
    }
    Ok(())
}

fn errors_point_at_the_failing_part() -> TestResult {
    let f = testdata().join(FILE);
    let f = f.to_str().unwrap();
    let cases: [(&str, &str, &str); 5] = [
        ("nope", "nope\n  ^^^^", "not an id, a unique id prefix or a label"),
        ("nope~2", "nope~2\n  ^^^^", "not an id, a unique id prefix or a label"),
        ("#1", "#1\n  ^^", "line 1 is the session header"),
        ("#9999", "#9999\n  ^^^^^", "past the end of the file"),
        ("@~99", "@~99\n   ^^^", "root"),
    ];
    for (rev, caret, words) in cases {
        let out = run(&["path", f, rev]);
        let err = stderr(&out);
        check(out.status.code() == Some(2), || format!("{rev}: exit {:?}", out.status.code()))?;
        check(err.contains(caret) && err.contains(words), || format!("{rev}: stderr was:\n{err}"))?;
    }
    Ok(())
}

fn ambiguous_prefix_lists_candidates() -> TestResult {
    let g = entries_golden(FILE);
    let ids: Vec<&str> = g["entries"].as_array().unwrap().iter().filter_map(|e| e["id"].as_str()).collect();
    let prefix = (b'0'..=b'f')
        .map(|c| (c as char).to_string())
        .find(|p| ids.iter().filter(|i| i.starts_with(p.as_str())).count() >= 2)
        .expect("some hex digit starts two ids");
    let f = testdata().join(FILE);
    let out = run(&["path", f.to_str().unwrap(), &prefix]);
    let err = stderr(&out);
    check(out.status.code() == Some(2) && err.contains("ambiguous"), || err.clone())?;
    for id in ids.iter().filter(|i| i.starts_with(prefix.as_str())).take(10) {
        check(err.contains(id), || format!("candidate {id} missing:\n{err}"))?;
    }
    Ok(())
}
