//! `pisces diff`: checked against facts computed without pisces (MANIFEST.md's account of
//! the two fix attempts, the tree in pi's `entries.json` goldens), snapshots of its
//! output, exit codes, `--against` on copies, and every leaf pair of the corpora.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, pisces, run, stderr, stdout, testdata, TestResult};
use crate::conformance::corpora;

const TWO_FIX: &str = "pi-1.6.0/22-two-fix-attempts.jsonl";

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test("diff::two_fix_attempts_match_the_manifest", two_fix_attempts_match_the_manifest),
        Trial::test("diff::two_fix_attempts_verdict_at_a_glance", verdict_at_a_glance),
        Trial::test("diff::two_fix_attempts_final_contents", final_contents),
        Trial::test("diff::exit_codes", exit_codes),
        Trial::test("diff::rev_b_defaults_to_the_current_leaf", rev_b_defaults),
        Trial::test("diff::stat_is_only_the_summary", stat_is_only_the_summary),
        Trial::test("diff::context_turns", context_turns),
        Trial::test("diff::json_shape", json_shape),
        Trial::test("diff::color_only_on_request", color_only_on_request),
        Trial::test("diff::against_a_fork_matches_by_id", against_a_fork),
        Trial::test("diff::against_a_copy", against_a_copy),
        Trial::test("diff::against_a_copy_with_other_ids", against_a_copy_with_other_ids),
        Trial::test("diff::every_leaf_pair_of_every_file", every_leaf_pair_of_every_file),
        Trial::test("diff::help_has_examples", help_has_examples),
        Trial::test("diff::hostile_text_is_sanitized", hostile_text_is_sanitized),
    ];
    for (name, file) in golden_trees() {
        let f = file.clone();
        trials.push(Trial::test(format!("diff::tree::{name}"), move || leaf_pairs_match_the_tree(&f)));
    }
    trials.extend(SNAPSHOTS.iter().map(|&(name, args)| {
        Trial::test(format!("diff::snapshot::{name}"), move || crate::snapshots::snapshot(name, args))
    }));
    trials
}

fn file(rel: &str) -> String {
    testdata().join(rel).to_string_lossy().into_owned()
}

fn json_of(args: &[&str]) -> Result<(Value, i32), libtest_mimic::Failed> {
    let out = run(args);
    let code = out.status.code().unwrap_or(-1);
    if code != 0 && code != 1 {
        return Err(format!("{args:?}: exit {code}\nstderr:\n{}", stderr(&out)).into());
    }
    let v = serde_json::from_slice(&out.stdout).map_err(|e| format!("{args:?}: stdout is not JSON: {e}"))?;
    Ok((v, code))
}

// ---------------------------------------------------------------------------------------
// 22-two-fix-attempts, against MANIFEST.md (computed from the file without pisces).

/// One attempt as MANIFEST.md's "Attempts" list states it.
#[derive(Debug, Default)]
struct Attempt {
    leaf: String,
    leaf_line: u64,
    prompt_line: u64,
    prompt_start: String,
    models: Vec<String>,
    read: Vec<String>,
    /// (path, edits)
    edited: Vec<(String, u64)>,
    /// (command, exit code), in order.
    bash: Vec<(String, i64)>,
    /// (line, command, exit, pass, fail)
    last_test: (u64, String, i64, u64, u64),
}

fn manifest_attempts() -> Result<(String, u64, Attempt, Attempt), libtest_mimic::Failed> {
    let text = fs::read_to_string(testdata().join("pi-1.6.0/MANIFEST.md"))?;
    let section = text.split("## 22-two-fix-attempts.jsonl").nth(1).ok_or("no section 22 in MANIFEST.md")?;
    let section = section.split("\n## ").next().unwrap_or(section);
    let diverge = section.split("they diverge after ").nth(1).ok_or("no fork point in MANIFEST.md")?;
    let fork_id = backticked(diverge).into_iter().next().ok_or("no fork id")?;
    let fork_line = number_after(diverge, "line ").ok_or("no fork line")?;
    let mut attempts = section.lines().filter(|l| l.starts_with("- **Attempt ")).map(parse_attempt);
    let a = attempts.next().ok_or("no attempt A")??;
    let b = attempts.next().ok_or("no attempt B")??;
    Ok((fork_id, fork_line, a, b))
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

fn number_after(s: &str, marker: &str) -> Option<u64> {
    let rest = &s[s.find(marker)? + marker.len()..];
    rest.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
}

fn parse_attempt(line: &str) -> Result<Attempt, libtest_mimic::Failed> {
    let mut a = Attempt::default();
    let body = line.split_once("**: ").ok_or("attempt line without `**: `")?.1;
    for part in body.split("; ") {
        let part = part.trim_end_matches('.');
        if let Some(rest) = part.strip_prefix("leaf ") {
            a.leaf = backticked(rest)[0].clone();
            a.leaf_line = number_after(rest, "line ").ok_or("leaf line")?;
        } else if let Some(rest) = part.strip_prefix("prompt on line ") {
            a.prompt_line = number_after(part, "line ").ok_or("prompt line")?;
            let quoted = rest.split_once(": \"").ok_or("prompt text")?.1.trim_end_matches('"');
            a.prompt_start = quoted.trim_end_matches("...").to_string();
        } else if let Some(rest) = part.strip_prefix("model(s) ") {
            a.models = rest.split(", ").map(str::to_string).collect();
        } else if let Some(rest) = part.strip_prefix("read ") {
            a.read = backticked(rest);
        } else if let Some(rest) = part.strip_prefix("changed ") {
            for item in rest.split("), ").flat_map(|s| s.split(", `")) {
                let op = backticked(&format!("`{}", item.trim_start_matches('`')))[0].clone();
                let count = item.split("(x").nth(1).and_then(|n| n.trim_end_matches(')').parse().ok()).unwrap_or(1);
                let (verb, path) = op.split_once(' ').ok_or("changed item")?;
                if verb == "edit" {
                    a.edited.push((path.to_string(), count));
                }
            }
        } else if let Some(rest) = part.strip_prefix("bash: ") {
            for run in rest.split(", ") {
                let cmd = backticked(run)[0].clone();
                let code = run.rsplit("exit ").next().and_then(|n| n.parse().ok()).ok_or("exit code")?;
                a.bash.push((cmd, code));
            }
        } else if let Some(rest) = part.strip_prefix("last test run: ") {
            let line = number_after(rest, "line ").ok_or("test line")?;
            let cmd = backticked(rest)[0].clone();
            let exit = rest
                .split(" exit ")
                .nth(1)
                .and_then(|s| s.split(',').next())
                .and_then(|n| n.parse().ok())
                .ok_or("test exit")?;
            let pass = number_after(rest, "# pass ").ok_or("pass")?;
            let fail = number_after(rest, "# fail ").ok_or("fail")?;
            a.last_test = (line, cmd, exit, pass, fail);
        }
    }
    Ok(a)
}

fn two_fix_attempts_match_the_manifest() -> TestResult {
    let (fork_id, fork_line, ma, mb) = manifest_attempts()?;
    check(ma.bash.len() == 3 && mb.bash.len() == 3 && !ma.read.is_empty(), || {
        format!("MANIFEST parse: {ma:?} {mb:?}")
    })?;
    let f = file(TWO_FIX);
    let (doc, code) = json_of(&["diff", &f, &ma.leaf, &mb.leaf, "--format", "json"])?;
    check(code == 1, || format!("exit {code}, want 1"))?;
    let anc = &doc["commonAncestor"];
    check(anc["id"] == fork_id.as_str() && anc["lineA"] == fork_line, || {
        format!("common ancestor {anc}, want {fork_id} line {fork_line}")
    })?;
    for (name, want) in [("a", &ma), ("b", &mb)] {
        let side = &doc[name];
        check(side["leafId"] == want.leaf.as_str() && side["leafLine"] == want.leaf_line, || {
            format!("{name}: {side}")
        })?;
        let sum = &doc["summary"][name];
        let models: Vec<&str> = sum["models"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        check(models == want.models, || format!("{name} models {models:?}, want {:?}", want.models))?;
        let ops = sum["fileOps"].as_array().unwrap();
        let read: Vec<&str> =
            ops.iter().filter(|o| o["read"].as_u64() > Some(0)).filter_map(|o| o["path"].as_str()).collect();
        check(read == want.read, || format!("{name} read {read:?}, want {:?}", want.read))?;
        let edited: Vec<(String, u64)> = ops
            .iter()
            .filter(|o| o["edit"].as_u64() > Some(0))
            .map(|o| (o["path"].as_str().unwrap().to_string(), o["edit"].as_u64().unwrap()))
            .collect();
        check(edited == want.edited, || format!("{name} edited {edited:?}, want {:?}", want.edited))?;
        // Bash calls in order, across the side's turns, with their exit codes.
        let mut bash = Vec::new();
        let mut prompts = Vec::new();
        for pair in doc["turns"].as_array().unwrap() {
            let t = &pair[name];
            if t.is_null() {
                continue;
            }
            if !t["prompt"].is_null() {
                prompts.push(t["prompt"].clone());
            }
            for c in t["toolCalls"].as_array().unwrap() {
                if c["name"] == "bash" {
                    bash.push((c["target"].as_str().unwrap().to_string(), c["exitCode"].as_i64().unwrap()));
                }
            }
        }
        check(bash == want.bash, || format!("{name} bash {bash:?}, want {:?}", want.bash))?;
        let p = prompts.first().ok_or("no prompt")?;
        check(p["line"] == want.prompt_line && p["text"].as_str().unwrap().starts_with(&want.prompt_start), || {
            format!("{name} prompt {p}, want line {} starting {:?}", want.prompt_line, want.prompt_start)
        })?;
        let t = &sum["lastTestRun"];
        let (line, cmd, exit, pass, fail) = &want.last_test;
        check(
            t["line"] == *line
                && t["command"] == cmd.as_str()
                && t["exitCode"] == *exit
                && t["tests"]["passed"] == *pass
                && t["tests"]["failed"] == *fail,
            || format!("{name} last test run {t}, want {:?}", want.last_test),
        )?;
    }
    Ok(())
}

fn verdict_at_a_glance() -> TestResult {
    let (_, _, ma, mb) = manifest_attempts()?;
    let f = file(TWO_FIX);
    let want = format!("tests: npm test exit {} (A) vs exit {} (B): pass on B only", ma.last_test.2, mb.last_test.2);
    for extra in [&[][..], &["--stat"][..]] {
        let mut args = vec!["diff", &f, &ma.leaf, &mb.leaf];
        args.extend_from_slice(extra);
        let out = run(&args);
        let text = stdout(&out);
        check(text.contains(&want), || format!("{args:?}: no `{want}` in\n{text}"))?;
        // Each side's command line says how the last run ended.
        check(text.contains("npm test ×3: last exit 1 (3 passed, 1 failed)"), || format!("A's commands:\n{text}"))?;
        check(text.contains("npm test ×3: last exit 0 (5 passed, 0 failed)"), || format!("B's commands:\n{text}"))?;
    }
    Ok(())
}

/// MANIFEST.md: A changed the assertion's pattern to `/Invalid Date/` and called
/// `.toISOString()`; B restored `/invalid due date/` and added a `parseDue accepts ISO
/// dates` test (B starts from A's edited file: /tree does not roll files back).
fn final_contents() -> TestResult {
    let f = file(TWO_FIX);
    let (doc, _) = json_of(&["diff", &f, "adbfcbd8", "3cdc3441", "--format", "json"])?;
    let both = doc["summary"]["modifiedOnBoth"].as_array().unwrap();
    check(both.len() == 1 && both[0]["path"] == "test/todo.test.js", || format!("modifiedOnBoth: {both:?}"))?;
    let d = both[0]["diff"].as_str().ok_or("no diff")?;
    for want in [
        "-\tassert.throws(() => parseDue(\"tomorrow-ish\").toISOString(), /Invalid Date/);",
        "+\tassert.throws(() => parseDue(\"tomorrow-ish\"), /invalid due date/);",
        "+test(\"parseDue accepts ISO dates\", () => {",
    ] {
        check(d.contains(want), || format!("no `{want}` in\n{d}"))?;
    }
    check(both[0]["b"]["note"].as_str().is_some_and(|n| n.contains("other branches")), || {
        format!("B's note: {}", both[0]["b"])
    })?;
    let text = stdout(&run(&["diff", &f, "adbfcbd8", "3cdc3441"]));
    check(text.contains("+test(\"parseDue accepts ISO dates\", () => {"), || format!("no content diff in\n{text}"))
}

fn exit_codes() -> TestResult {
    let f = file(TWO_FIX);
    let code = |args: &[&str]| run(args).status.code();
    check(code(&["diff", &f, "@", "3cdc3441"]) == Some(0), || "identical REVs: want 0".into())?;
    check(code(&["diff", &f, "3cdc", "@", "--format", "json"]) == Some(0), || "identical REVs (json): want 0".into())?;
    check(code(&["diff", &f, "adbfcbd8", "@"]) == Some(1), || "two attempts: want 1".into())?;
    // An ancestor against its descendant differs too.
    check(code(&["diff", &f, "@~3", "@"]) == Some(1), || "ancestor: want 1".into())?;
    let bad = run(&["diff", &f, "adbfcbd8", "nope"]);
    check(bad.status.code() == Some(2) && stderr(&bad).contains("REV_B") && bad.stdout.is_empty(), || {
        format!("bad REV_B: {:?} {}", bad.status.code(), stderr(&bad))
    })?;
    let bad = run(&["diff", &f, "nope", "@"]);
    check(bad.status.code() == Some(2) && stderr(&bad).contains("REV_A"), || format!("bad REV_A: {}", stderr(&bad)))?;
    let missing = run(&["diff", "/nonexistent/x.jsonl", "@", "@"]);
    check(missing.status.code() == Some(2), || "missing file: want 2".into())?;
    let both_stdin = run(&["diff", "-", "@", "@", "--against", "-"]);
    check(both_stdin.status.code() == Some(2), || "both stdin: want 2".into())
}

fn rev_b_defaults() -> TestResult {
    let f = file(TWO_FIX);
    let one = run(&["diff", &f, "adbfcbd8", "--format", "json"]);
    let two = run(&["diff", &f, "adbfcbd8", "@", "--format", "json"]);
    let (a, b): (Value, Value) = (serde_json::from_slice(&one.stdout)?, serde_json::from_slice(&two.stdout)?);
    check(a["b"]["leafId"] == b["b"]["leafId"] && a["summary"] == b["summary"], || "REV_B omitted is not @".into())
}

fn stat_is_only_the_summary() -> TestResult {
    let f = file(TWO_FIX);
    let text = stdout(&run(&["diff", &f, "adbfcbd8", "@", "--stat"]));
    check(
        !text.contains("── turn")
            && text.contains("── summary")
            && text.contains("modified  test/todo.test.js (edit ×2)"),
        || format!("--stat:\n{text}"),
    )?;
    let (doc, _) = json_of(&["diff", &f, "adbfcbd8", "@", "--stat", "--format", "json"])?;
    check(doc.get("turns").is_none(), || "--stat JSON has turns".into())?;
    let both = &doc["summary"]["modifiedOnBoth"][0];
    check(both["path"] == "test/todo.test.js" && both["a"].is_null() && both["diff"].is_null(), || format!("{both}"))
}

fn context_turns() -> TestResult {
    let f = file("pi-1.6.0/07-compaction-manual.jsonl");
    let prompts = |n: &str| -> Result<Vec<String>, libtest_mimic::Failed> {
        let (doc, _) = json_of(&["diff", &f, "1b4bf059", "41fab43f", "--context", n, "--format", "json"])?;
        Ok(doc["shared"]["context"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["prompt"]["text"].as_str().unwrap_or_default().to_string())
            .collect())
    };
    check(prompts("0")?.is_empty(), || "--context 0 shows turns".into())?;
    let one = prompts("1")?;
    check(one == ["Add tests for isOverdue."], || format!("--context 1: {one:?}"))?;
    let two = prompts("2")?;
    check(two.len() == 2 && two[0].starts_with("Can you add an `--overdue` flag"), || format!("--context 2: {two:?}"))?;
    // Only two turns are shared.
    check(prompts("9")? == two, || "--context 9 is not the two shared turns".into())?;
    let text = stdout(&run(&["diff", &f, "1b4bf059", "41fab43f", "-C", "0"]));
    check(!text.contains("shared: the last"), || "-C 0 text shows shared turns".into())
}

fn json_shape() -> TestResult {
    let f = file(TWO_FIX);
    let (doc, _) = json_of(&["diff", &f, "adbfcbd8", "@", "--format", "json", "--color", "always"])?;
    check(doc["version"] == 1, || "version".into())?;
    for k in ["a", "b", "commonAncestor", "identical", "shared", "turns", "summary"] {
        check(doc.get(k).is_some(), || format!("no `{k}`"))?;
    }
    for k in [
        "file",
        "sessionId",
        "rev",
        "leafId",
        "leafLine",
        "leafKind",
        "label",
        "isDefaultLeaf",
        "pathEntries",
        "divergentEntries",
    ] {
        check(doc["a"].get(k).is_some(), || format!("no a.{k}"))?;
    }
    for k in ["entries", "entriesB", "lastUserPrompt", "context"] {
        check(doc["shared"].get(k).is_some(), || format!("no shared.{k}"))?;
    }
    let turn = &doc["turns"][0]["a"];
    for k in ["startId", "startLine", "prompt", "entries", "modelCalls", "toolCalls", "reply", "events"] {
        check(turn.get(k).is_some(), || format!("no turn.{k}"))?;
    }
    let sum = &doc["summary"]["b"];
    for k in [
        "entries",
        "turns",
        "modelCalls",
        "toolCalls",
        "errors",
        "usage",
        "wallTimeMs",
        "models",
        "filesRead",
        "filesModified",
        "fileOps",
        "commands",
        "lastTestRun",
    ] {
        check(sum.get(k).is_some(), || format!("no summary.b.{k}"))?;
    }
    // pi's file rules: modified = written ∪ edited (sorted), read = read − modified.
    check(sum["filesModified"] == serde_json::json!(["src/todo.js", "test/todo.test.js"]), || {
        format!("{}", sum["filesModified"])
    })?;
    check(sum["filesRead"] == serde_json::json!([]), || format!("{}", sum["filesRead"]))?;
    check(sum["usage"]["input"].is_u64(), || "token counts are integers".into())?;
    let raw = run(&["diff", &f, "adbfcbd8", "@", "--format", "json", "--color", "always"]);
    check(!raw.stdout.contains(&0x1b), || "color in JSON".into())
}

fn color_only_on_request() -> TestResult {
    let f = file(TWO_FIX);
    let piped = run(&["diff", &f, "adbfcbd8", "@"]);
    check(!piped.stdout.contains(&0x1b), || "color when piped".into())?;
    let forced = run(&["diff", &f, "adbfcbd8", "@", "--color", "always"]);
    check(forced.stdout.contains(&0x1b), || "--color always gave no color".into())?;
    let env = pisces().args(["diff", &f, "adbfcbd8", "@"]).env("CLICOLOR_FORCE", "1").output()?;
    check(env.stdout.contains(&0x1b), || "CLICOLOR_FORCE gave no color".into())
}

fn against_a_fork() -> TestResult {
    let src = file("pi-1.6.0/12-fork-source.jsonl");
    let child = file("pi-1.6.0/13-fork-child.jsonl");
    // 13 was forked (/fork) from 12 at the user message under 46bcc591, labels re-created.
    let (doc, code) = json_of(&["diff", &src, "48546e0b", "--against", &child, "@", "--format", "json"])?;
    let anc = &doc["commonAncestor"];
    check(code == 1 && anc["id"] == "46bcc591" && anc["matchedBy"] == "id", || format!("fork: {anc}"))?;
    let p = |side: &str| doc["turns"][0][side]["prompt"]["text"].as_str().unwrap_or_default().to_string();
    check(
        p("a") == "Now show the priority in formatTodo."
            && p("b").starts_with("Now show the priority in formatTodo as"),
        || format!("prompts {} / {}", p("a"), p("b")),
    )?;
    // 15 is `pi --fork` of 13: all of 13 then more.
    let cli = file("pi-1.6.0/15-fork-cli.jsonl");
    let (doc, code) = json_of(&["diff", &child, "@", "--against", &cli, "@", "--format", "json"])?;
    check(code == 1 && doc["commonAncestor"]["id"] == "568d7430" && doc["a"]["divergentEntries"] == 0, || {
        format!("fork cli: {}", doc["commonAncestor"])
    })
}

/// A copy of 22 with its last line's reply changed (same ids).
fn copy_of_two_fix(dir: &Path, change: bool, new_ids: bool) -> Result<PathBuf, libtest_mimic::Failed> {
    let text = fs::read_to_string(testdata().join(TWO_FIX))?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if change {
        let last = lines.last_mut().unwrap();
        check(last.contains("5 tests, all passing."), || "the last line changed".into())?;
        *last = last.replace("5 tests, all passing.", "5 tests, all green.");
    }
    if new_ids {
        // Every id (and parentId) renamed: only the content says which entries are shared.
        let mut map = HashMap::new();
        for l in &lines[1..] {
            let v: Value = serde_json::from_str(l)?;
            let id = v["id"].as_str().unwrap().to_string();
            let new = format!("{:08x}", u32::from_str_radix(&id, 16)? ^ 0x5a5a_5a5a);
            map.insert(id, new);
        }
        for l in lines.iter_mut().skip(1) {
            for (old, new) in &map {
                *l = l.replace(&format!("\"{old}\""), &format!("\"{new}\""));
            }
        }
    }
    let path = dir.join("copy.jsonl");
    fs::write(&path, lines.join("\n") + "\n")?;
    Ok(path)
}

fn against_a_copy() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = file(TWO_FIX);
    let same = copy_of_two_fix(dir.path(), false, false)?;
    let same = same.to_string_lossy();
    let out = run(&["diff", &f, "@", "--against", &same, "@"]);
    check(out.status.code() == Some(0) && stdout(&out).contains("no differences"), || {
        format!("unchanged copy: {}", stdout(&out))
    })?;
    let changed = copy_of_two_fix(dir.path(), true, false)?;
    let changed = changed.to_string_lossy();
    let (doc, code) = json_of(&["diff", &f, "@", "--against", &changed, "@", "--format", "json"])?;
    // Same id, other content: not shared; the fork point is the leaf's parent.
    check(code == 1 && doc["commonAncestor"]["id"] == "6ddce5c5", || {
        format!("changed copy: {}", doc["commonAncestor"])
    })?;
    let t = &doc["turns"][0];
    check(
        t["a"]["prompt"].is_null() && t["b"]["reply"]["text"].as_str().unwrap().ends_with("5 tests, all green."),
        || format!("changed copy turn: {t}"),
    )?;
    // The other attempt against the copy's leaf: the fork point is the same as in one file.
    let (doc, _) = json_of(&["diff", &f, "adbfcbd8", "--against", &changed, "@", "--format", "json"])?;
    check(doc["commonAncestor"]["id"] == "35550eb3", || format!("A against the copy: {}", doc["commonAncestor"]))
}

fn against_a_copy_with_other_ids() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = file(TWO_FIX);
    let renamed = copy_of_two_fix(dir.path(), false, true)?;
    let renamed = renamed.to_string_lossy();
    let (doc, code) = json_of(&["diff", &f, "@", "--against", &renamed, "@", "--format", "json"])?;
    check(code == 0 && doc["identical"] == true && doc["commonAncestor"]["matchedBy"] == "content", || {
        format!("renamed copy: {} {}", code, doc["commonAncestor"])
    })?;
    let dir2 = tempfile::tempdir()?;
    let both = copy_of_two_fix(dir2.path(), true, true)?;
    let both = both.to_string_lossy();
    let (doc, code) = json_of(&["diff", &f, "@", "--against", &both, "@", "--format", "json"])?;
    let anc = &doc["commonAncestor"];
    check(code == 1 && anc["id"] == "6ddce5c5" && anc["matchedBy"] == "content" && anc["idB"] != "6ddce5c5", || {
        format!("renamed and changed copy: {anc}")
    })
}

// ---------------------------------------------------------------------------------------
// Every leaf pair of the branched corpus files, against the tree pi reported.

fn golden_trees() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for corpus in corpora() {
        let cname = corpus.file_name().unwrap().to_string_lossy().into_owned();
        for stem in
            ["03-tree-branches", "04-branch-summary", "07-compaction-manual", "12-fork-source", "22-two-fix-attempts"]
        {
            if corpus.join(format!("{stem}.jsonl")).exists() {
                out.push((format!("{cname}/{stem}"), corpus.join(format!("{stem}.jsonl"))));
            }
        }
    }
    out
}

fn leaf_pairs_match_the_tree(session: &Path) -> TestResult {
    let stem = session.file_stem().unwrap().to_string_lossy().into_owned();
    let golden = session.parent().unwrap().join("expected").join(&stem).join(format!("{stem}.entries.json"));
    let g: Value = serde_json::from_str(&fs::read_to_string(golden)?)?;
    if g["idsAreRandom"] == true {
        return Ok(());
    }
    let entries = g["entries"].as_array().unwrap();
    let by_id: HashMap<&str, &Value> = entries.iter().filter_map(|e| Some((e["id"].as_str()?, e))).collect();
    let path = |leaf: &str| -> Vec<String> {
        let mut p = vec![];
        let mut cur = Some(leaf.to_string());
        while let Some(c) = cur {
            cur = by_id.get(c.as_str()).and_then(|e| e["parentId"].as_str()).map(str::to_string);
            p.push(c);
        }
        p.reverse();
        p
    };
    let is_prompt = |id: &str| {
        let e = by_id[id];
        e["type"] == "custom_message"
            || (e["type"] == "message"
                && matches!(e["message"]["role"].as_str(), Some("user" | "bashExecution" | "custom")))
    };
    let is_assistant = |id: &str| by_id[id]["type"] == "message" && by_id[id]["message"]["role"] == "assistant";
    let leaves: Vec<&str> = g["leaves"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let f = session.to_string_lossy();
    for (k, a) in leaves.iter().enumerate() {
        for b in &leaves[k + 1..] {
            let (pa, pb) = (path(a), path(b));
            let shared = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
            let (doc, code) = json_of(&["diff", &f, a, b, "--format", "json"])?;
            let ctx = || format!("{stem} {a} {b}");
            check(code == 1, || format!("{}: exit {code}", ctx()))?;
            check(
                doc["commonAncestor"]["id"] == pa[shared - 1].as_str() && doc["shared"]["entries"] == shared,
                || format!("{}: ancestor {}, want {} ({shared} shared)", ctx(), doc["commonAncestor"], pa[shared - 1]),
            )?;
            for (name, p) in [("a", &pa), ("b", &pb)] {
                let side = &p[shared..];
                check(doc[name]["divergentEntries"] == side.len(), || format!("{}: {name} divergent", ctx()))?;
                let prompts = side.iter().filter(|i| is_prompt(i)).count();
                let turns = doc["turns"].as_array().unwrap();
                let with_prompt = turns.iter().filter(|t| !t[name].is_null() && !t[name]["prompt"].is_null()).count();
                check(with_prompt == prompts, || {
                    format!("{}: {name} has {with_prompt} prompted turns, want {prompts}", ctx())
                })?;
                let calls = side.iter().filter(|i| is_assistant(i)).count();
                check(doc["summary"][name]["modelCalls"] == calls, || format!("{}: {name} model calls", ctx()))?;
            }
            // Swapping the sides swaps the report.
            let (rev, _) = json_of(&["diff", &f, b, a, "--format", "json"])?;
            check(rev["summary"]["a"] == doc["summary"]["b"] && rev["summary"]["b"] == doc["summary"]["a"], || {
                format!("{}: swapped summaries differ", ctx())
            })?;
        }
    }
    Ok(())
}

/// Every leaf against pi's current leaf, in every session file of the corpora and the
/// edge cases: a report comes out (exit 0 or 1) and adds up.
fn every_leaf_pair_of_every_file() -> TestResult {
    let mut files = Vec::new();
    for dir in corpora().into_iter().chain([testdata().join("edge")]) {
        for e in fs::read_dir(&dir)?.flatten() {
            if e.path().extension().is_some_and(|x| x == "jsonl") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    let mut pairs = 0;
    for f in files {
        let f = f.to_string_lossy().into_owned();
        let leaves = run(&["leaves", &f, "--format", "json"]);
        if !leaves.status.success() {
            continue;
        }
        let v: Value = serde_json::from_slice(&leaves.stdout)?;
        for l in v["leaves"].as_array().unwrap() {
            let rev = format!("#{}", l["line"]);
            for extra in [&[][..], &["--stat"][..]] {
                let mut args = vec!["diff", &f, &rev, "@", "--format", "json"];
                args.extend_from_slice(extra);
                let (doc, code) = json_of(&args)?;
                check((code == 0) == (doc["identical"] == true), || format!("{f} {rev}: exit {code} vs identical"))?;
                for side in ["a", "b"] {
                    let s = &doc[side];
                    check(s["pathEntries"].as_u64() >= s["divergentEntries"].as_u64(), || {
                        format!("{f} {rev}: {side}")
                    })?;
                }
                let text = run(&["diff", &f, &rev, "@"]);
                check(matches!(text.status.code(), Some(0 | 1)), || {
                    format!("{f} {rev}: text exit {:?}: {}", text.status.code(), stderr(&text))
                })?;
                pairs += 1;
            }
        }
    }
    check(pairs > 50, || format!("only {pairs} pairs"))
}

fn hostile_text_is_sanitized() -> TestResult {
    let dir = tempfile::tempdir()?;
    let text = fs::read_to_string(testdata().join(TWO_FIX))?;
    let evil = r"Can you fix it? \u001b]0;pwned\u0007\u001b[2J\u202eFix the implementation";
    let changed = text.replacen("Can you fix it? Fix the implementation", evil, 1);
    check(changed != text, || "the prompt was not found".into())?;
    let path = dir.path().join("evil.jsonl");
    fs::write(&path, changed)?;
    let out = run(&["diff", &path.to_string_lossy(), "adbfcbd8", "@", "--color", "never"]);
    let bad = out.stdout.iter().any(|&b| b == 0x1b || b == 0x07) || stdout(&out).contains('\u{202e}');
    check(!bad && stdout(&out).contains("{+ Fix the implementation"), || format!("unsanitized:\n{}", stdout(&out)))
}

fn help_has_examples() -> TestResult {
    let out = run(&["diff", "--help"]);
    let text = stdout(&out);
    check(text.contains("Examples:") && text.contains("--against") && text.contains("Exit status"), || text.clone())
}

// ---------------------------------------------------------------------------------------
// Snapshots of the text (what people see), reviewed when they change.

const SNAPSHOTS: &[(&str, &[&str])] = &[
    ("diff_two_fix_attempts", &["diff", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "adbfcbd8", "3cdc3441"]),
    ("diff_two_fix_attempts_stat", &["diff", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "adbfcbd8", "@", "--stat"]),
    ("diff_tree_branches", &["diff", "testdata/pi-1.6.0/03-tree-branches.jsonl", "f8a4b145", "21e45ceb"]),
    (
        "diff_tree_branches_root_split",
        &["diff", "testdata/pi-1.6.0/03-tree-branches.jsonl", "008f6783", "cd9a5d17", "-C", "2"],
    ),
    ("diff_branch_summary", &["diff", "testdata/pi-1.6.0/04-branch-summary.jsonl", "c1c36305", "de876389"]),
    (
        "diff_compaction_manual",
        &["diff", "testdata/pi-1.6.0/07-compaction-manual.jsonl", "1b4bf059", "41fab43f", "--context", "2"],
    ),
    (
        "diff_fork_against_source",
        &[
            "diff",
            "testdata/pi-1.6.0/12-fork-source.jsonl",
            "48546e0b",
            "--against",
            "testdata/pi-1.6.0/13-fork-child.jsonl",
            "@",
        ],
    ),
    (
        "diff_clone_stat",
        &[
            "diff",
            "testdata/pi-1.6.0/12-fork-source.jsonl",
            "@",
            "--against",
            "testdata/pi-1.6.0/14-clone.jsonl",
            "@",
            "--stat",
        ],
    ),
    ("diff_identical", &["diff", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "@", "3cdc3441"]),
    ("diff_bad_rev", &["diff", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "@", "fix-3"]),
    (
        "diff_json_stat",
        &["diff", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "adbfcbd8", "@", "--stat", "--format", "json"],
    ),
];
