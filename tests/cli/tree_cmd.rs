//! `pisces tree`: pi's own `/tree` rendering, line for line, and pisces's additions.
//!
//! Every corpus file has goldens printed by pi's `TreeSelectorComponent` through the oracle
//! (`expected/<stem>/tree.<filter>.txt`, `tree.mjs FILE --filter F`, HOME /home/dev): pi's
//! rows behind a 2-column cursor gutter, then a status line. `pisces tree FILE --filter F`
//! (piped, so not cut) must print exactly those rows without the gutter and the status;
//! `tree.default.w80.txt` (pi at 80 columns) must equal `pisces tree FILE --width 78` (the
//! pi-1.6.0 corpus; 0.73.1 cut with `...`, pisces follows 1.6.0).

use std::fs;
use std::io::Write;
use std::path::Path;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, pisces, stderr, stdout, testdata, TestResult};
use crate::conformance::corpus_sessions;

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for cs in corpus_sessions() {
        let (corpus_name, stem, file, dir) = (&cs.corpus, &cs.stem, &cs.session, &cs.goldens);
        for (golden, filter) in [
            ("default", "default"),
            ("no-tools", "no-tools"),
            ("user-only", "user"),
            ("labeled-only", "labeled"),
            ("all", "all"),
        ] {
            let path = dir.join(format!("tree.{golden}.txt"));
            if path.exists() {
                let f = file.clone();
                let args = vec!["--filter".to_string(), filter.to_string()];
                trials.push(Trial::test(format!("tree::{corpus_name}/{stem}/{golden}"), move || {
                    matches_pi(&f, &path, &args)
                }));
            }
        }
        let w80 = dir.join("tree.default.w80.txt");
        if corpus_name == "pi-1.6.0" && w80.exists() {
            let f = file.clone();
            let args = vec!["--width".to_string(), "78".to_string()];
            trials.push(Trial::test(format!("tree::{corpus_name}/{stem}/default.w80"), move || {
                matches_pi(&f, &w80, &args)
            }));
        }
    }
    trials.extend([
        Trial::test("tree::reference_render_of_pi_reference_3_2", reference_render),
        Trial::test("tree::json_shape", json_shape),
        Trial::test("tree::dot_highlights_the_active_path", dot_output),
        Trial::test("tree::ids_are_unique_prefixes", ids_column),
        Trial::test("tree::time_column", time_column),
        Trial::test("tree::search_matches_every_word", search),
        Trial::test("tree::fold_hides_a_subtree", fold),
        Trial::test("tree::depth_folds_deeper_branches", depth),
        Trial::test("tree::around_keeps_one_branch_open", around),
        Trial::test("tree::compact_keeps_branch_points_and_leaves", compact),
        Trial::test("tree::leaf_moves_the_active_path", leaf_option),
        Trial::test("tree::width_cuts_without_wrapping", width_cuts),
        Trial::test("tree::hostile_text_is_sanitized", hostile_text),
        Trial::test("tree::color_only_when_asked_or_on_a_terminal", color),
        Trial::test("tree::help_has_examples", help_has_examples),
    ]);
    trials
}

/// pisces as the goldens were made: pi shows paths under HOME as `~`.
fn tree(args: &[&str]) -> std::process::Output {
    pisces().env("HOME", "/home/dev").arg("tree").args(args).output().expect("pisces runs")
}

fn ok_stdout(out: &std::process::Output) -> Result<String, libtest_mimic::Failed> {
    if !out.status.success() {
        return Err(format!("exit {:?}\nstderr:\n{}", out.status.code(), stderr(out)).into());
    }
    Ok(stdout(out))
}

/// The golden's rows: without pi's 2-column cursor gutter and its status line.
fn golden_rows(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).expect("golden reads");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop(); // the status line "  (i/n) [filter]"
    if lines.len() == 1 && lines[0].trim() == "No entries found" {
        return Vec::new();
    }
    lines.iter().map(|l| l.chars().skip(2).collect()).collect()
}

/// pisces `--pi-exact` (every gutter level, pi's quirks) against pi's render.
fn matches_pi(file: &Path, golden: &Path, args: &[String]) -> TestResult {
    let mut all: Vec<&str> = vec![file.to_str().unwrap(), "--pi-exact"];
    all.extend(args.iter().map(String::as_str));
    let got = ok_stdout(&tree(&all))?;
    let got: Vec<&str> = got.lines().collect();
    let want = golden_rows(golden);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g != w {
            return Err(format!("row {}:\n  pisces: {g:?}\n  pi:     {w:?}", i + 1).into());
        }
    }
    check(got.len() == want.len(), || format!("{} rows from pisces, {} from pi", got.len(), want.len()))
}

fn corpus_file(rel: &str) -> String {
    testdata().join(rel).to_string_lossy().into_owned()
}

/// The pi spec's verified render (docs/pi-format.md §3.2) (its session is not in the repository): the same
/// shapes on our corpus, checked in the golden trials; here the essentials of that render
/// on the file that has them all (system rows, usage hidden, a compaction, two branches).
fn reference_render() -> TestResult {
    let f = corpus_file("pi-1.6.0/21-compaction-checkpoints.jsonl");
    let out = ok_stdout(&tree(&[&f]))?;
    check(out.lines().any(|l| l.contains("[system]")), || format!("no [system] row:\n{out}"))?;
    check(!out.contains("[usage"), || "a usage entry is shown".into())?;
    check(out.lines().any(|l| l.contains("[compaction: ")), || format!("no compaction row:\n{out}"))?;
    check(out.lines().all(|l| !l.ends_with(' ') || l.trim().is_empty()), || "trailing blanks in an uncut row".into())
}

fn json_shape() -> TestResult {
    let f = corpus_file("pi-1.6.0/04-branch-summary.jsonl");
    let out = ok_stdout(&tree(&[&f, "--format", "json"]))?;
    let doc: Value = serde_json::from_str(&out)?;
    check(doc["version"] == 1, || "version is not 1".into())?;
    let nodes = doc["nodes"].as_array().ok_or("no nodes")?;
    let roots = doc["roots"].as_array().ok_or("no roots")?;
    let text_rows = ok_stdout(&tree(&[&f]))?;
    check(nodes.len() == text_rows.lines().count(), || "one node per text row".into())?;
    let active = nodes.iter().filter(|n| n["onActivePath"] == true).count();
    check(active == text_rows.matches("• ").count(), || "onActivePath differs from the • rows".into())?;
    for n in nodes {
        for k in ["id", "parentId", "type", "role", "text", "label", "depth", "onActivePath", "children"] {
            check(n.get(k).is_some(), || format!("node without `{k}`: {n}"))?;
        }
        let id = &n["id"];
        // children list this node's children; each child names it as parent.
        for c in n["children"].as_array().unwrap() {
            let child = nodes.iter().find(|m| &m["id"] == c).ok_or("child not among the nodes")?;
            check(&child["parentId"] == id, || format!("child {c} of {id} has parentId {}", child["parentId"]))?;
        }
        if n["parentId"].is_null() {
            check(roots.contains(id), || format!("{id} has no parent but is not a root"))?;
        }
    }
    let labelled = nodes.iter().find(|n| n["label"] == "before-format-edit").ok_or("labelled node missing")?;
    check(labelled["type"] == "branch_summary", || format!("labelled node: {labelled}"))?;
    check(nodes[1]["text"].as_str().unwrap().starts_with("user: "), || format!("text: {}", nodes[1]["text"]))?;
    check(nodes[1]["role"] == "user", || "role".into())
}

fn dot_output() -> TestResult {
    let f = corpus_file("pi-1.6.0/03-tree-branches.jsonl");
    let out = ok_stdout(&tree(&[&f, "--format", "dot"]))?;
    check(out.starts_with("digraph session {") && out.trim_end().ends_with('}'), || out.clone())?;
    check(out.contains(" -> "), || "no edges".into())?;
    check(out.contains("penwidth=2.5"), || "active path not highlighted".into())
}

fn ids_column() -> TestResult {
    let f = corpus_file("pi-1.6.0/03-tree-branches.jsonl");
    let out = ok_stdout(&tree(&[&f, "--ids"]))?;
    let doc: Value = serde_json::from_str(&ok_stdout(&tree(&[&f, "--format", "json"]))?)?;
    let nodes = doc["nodes"].as_array().unwrap();
    let lines: Vec<&str> = out.lines().collect();
    check(lines.len() == nodes.len(), || "one line per node".into())?;
    for (line, node) in lines.iter().zip(nodes) {
        let prefix = line.split_whitespace().next().unwrap_or_default();
        let id = node["id"].as_str().unwrap();
        check(prefix.len() >= 4 && id.starts_with(prefix), || format!("{prefix:?} is not a prefix of {id}"))?;
        // The prefix names the entry: `pisces path` resolves it to the same id.
        let p = pisces().args(["path", &f, prefix, "--format", "json"]).output()?;
        let v: Value = serde_json::from_slice(&p.stdout).map_err(|_| format!("{prefix}: {}", stderr(&p)))?;
        check(v["leafId"] == id, || format!("{prefix} resolves to {}, not {id}", v["leafId"]))?;
    }
    Ok(())
}

fn time_column() -> TestResult {
    let f = corpus_file("pi-1.6.0/01-linear-chat.jsonl");
    let out = ok_stdout(&tree(&[&f, "--time"]))?;
    let first = out.lines().next().unwrap_or_default();
    let stamp: String = first.chars().take(16).collect();
    check(
        stamp.len() == 16
            && stamp.as_bytes()[4] == b'-'
            && stamp.as_bytes()[10] == b' '
            && stamp.as_bytes()[13] == b':',
        || format!("no time column: {first:?}"),
    )
}

fn search() -> TestResult {
    let f = corpus_file("pi-1.6.0/04-branch-summary.jsonl");
    let out = ok_stdout(&tree(&[&f, "--search", "JSON flag"]))?;
    check(!out.is_empty(), || "nothing found".into())?;
    for l in out.lines() {
        let lower = l.to_lowercase();
        check(lower.contains("json") && lower.contains("flag"), || format!("row without both words: {l}"))?;
    }
    let none = ok_stdout(&tree(&[&f, "--search", "no-such-word-anywhere"]))?;
    check(none.is_empty(), || format!("unexpected rows: {none}"))
}

/// The row of `text` and its id.
fn row_id(file: &str, text: &str) -> Result<String, libtest_mimic::Failed> {
    let doc: Value = serde_json::from_str(&ok_stdout(&tree(&[file, "--format", "json", "--filter", "all"]))?)?;
    let node = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["text"].as_str().is_some_and(|t| t.contains(text)))
        .ok_or_else(|| format!("no row with {text:?}"))?;
    Ok(node["id"].as_str().unwrap().to_string())
}

fn fold() -> TestResult {
    let f = corpus_file("pi-1.6.0/04-branch-summary.jsonl");
    let id = row_id(&f, "user: Add a `--json` flag")?;
    let full = ok_stdout(&tree(&[&f]))?;
    let folded = ok_stdout(&tree(&[&f, "--fold", &id]))?;
    check(folded.contains("├⊞ • user: Add a `--json` flag"), || format!("no ⊞ on the folded row:\n{folded}"))?;
    check(!folded.contains("OK, let's keep the `--json` flag"), || "the folded subtree is still shown".into())?;
    check(folded.lines().count() + 12 == full.lines().count(), || format!("folded:\n{folded}"))
}

fn depth() -> TestResult {
    let f = corpus_file("pi-1.6.0/04-branch-summary.jsonl");
    let out = ok_stdout(&tree(&[&f, "--depth", "0"]))?;
    let lines: Vec<&str> = out.lines().collect();
    check(lines.len() == 3, || format!("--depth 0:\n{out}"))?;
    check(lines[1].starts_with("├⊞") && lines[2].starts_with("└⊞"), || format!("--depth 0:\n{out}"))?;
    let one = ok_stdout(&tree(&[&f, "--depth", "1"]))?;
    check(one.contains("├⊞ [read: src/cli.js]") && !one.contains("[edit: src/cli.js]\n        │"), || one.clone())
}

fn around() -> TestResult {
    let f = corpus_file("pi-1.6.0/04-branch-summary.jsonl");
    let out = ok_stdout(&tree(&[&f, "--around", "before-format-edit"]))?;
    check(out.contains("├⊞ • user: Add a `--json` flag"), || format!("other branch not folded:\n{out}"))?;
    check(out.contains("├⊞ [read: src/cli.js]"), || format!("sibling branch not folded:\n{out}"))?;
    check(out.contains("[before-format-edit] [branch summary]"), || "the target is missing".into())?;
    check(out.contains("what output formats would you suggest"), || "the target's subtree is missing".into())
}

fn compact() -> TestResult {
    let f = corpus_file("real/large-session.jsonl");
    let full = ok_stdout(&tree(&[&f]))?;
    let out = ok_stdout(&tree(&[&f, "--compact"]))?;
    check(out.lines().count() * 3 < full.lines().count(), || {
        format!("{} of {} lines", out.lines().count(), full.lines().count())
    })?;
    check(out.contains(" entries …"), || "no run folded".into())?;
    // Every branch point's children (rows with connectors) and the last row stay.
    let connectors = |s: &str| s.lines().filter(|l| l.contains('├') || l.contains('└')).count();
    check(connectors(&out) == connectors(&full), || "a branch row was folded".into())?;
    check(out.lines().last() == full.lines().last(), || "the last row changed".into())
}

fn leaf_option() -> TestResult {
    let f = corpus_file("pi-1.6.0/03-tree-branches.jsonl");
    let doc: Value = serde_json::from_str(&ok_stdout(&tree(&[&f, "--format", "json"]))?)?;
    let inactive = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|n| n["onActivePath"] == false && n["children"].as_array().unwrap().is_empty())
        .ok_or("no inactive leaf")?;
    let id = inactive["id"].as_str().unwrap();
    let doc2: Value = serde_json::from_str(&ok_stdout(&tree(&[&f, "--format", "json", "--leaf", id]))?)?;
    let node = doc2["nodes"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap();
    check(node["onActivePath"] == true, || format!("--leaf {id} is not on the active path"))?;
    check(doc2["leafId"] == id, || "leafId".into())
}

fn width_cuts() -> TestResult {
    let f = corpus_file("pi-1.6.0/04-branch-summary.jsonl");
    let out = ok_stdout(&tree(&[&f, "--width", "30"]))?;
    for l in out.lines() {
        check(l.chars().count() <= 30, || format!("longer than 30: {l:?}"))?;
        check(!l.ends_with("..."), || format!("ellipsis: {l:?}"))?;
    }
    // COLUMNS only counts on a terminal: piped output is whole.
    let piped = pisces().env("HOME", "/home/dev").env("COLUMNS", "30").args(["tree", &f]).output()?;
    check(stdout(&piped).lines().any(|l| l.chars().count() > 30), || "piped output was cut".into())
}

fn hostile_text() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("hostile.jsonl");
    let mut f = fs::File::create(&path)?;
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi \u001b[2J\u001b]0;pwned\u0007there \u202eevil\u0008x","timestamp":1}}"#,
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok\u001b[31m red"}],"stopReason":"stop","timestamp":2}}"#,
        r#"{"type":"label","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a2","label":"x\u001b[1mbold\nnext"}"#,
    ];
    for l in lines {
        writeln!(f, "{l}")?;
    }
    drop(f);
    let p = path.to_str().unwrap();
    for args in [vec![p], vec![p, "--color", "always"], vec![p, "--format", "dot"], vec![p, "--width", "40"]] {
        let out = ok_stdout(&tree(&args))?;
        let no_color = out.replace("\x1b[0m", "");
        let stray = no_color
            .split('\x1b')
            .skip(1)
            .any(|s| !s.starts_with('[') || s.starts_with("[2J") || s.starts_with("[31m"));
        check(!stray && !out.contains("]0;") && !out.contains('\u{202e}') && !out.contains('\u{8}'), || {
            format!("{args:?}: unsafe output {out:?}")
        })?;
    }
    let out = ok_stdout(&tree(&[p]))?;
    check(out.contains("user: hi there evilx"), || format!("{out:?}"))?;
    check(out.contains("[xbold next] assistant: ok red"), || format!("{out:?}"))
}

fn color() -> TestResult {
    let f = corpus_file("pi-1.6.0/03-tree-branches.jsonl");
    let plain = ok_stdout(&tree(&[&f]))?;
    check(!plain.contains('\x1b'), || "color when piped".into())?;
    let colored = ok_stdout(&tree(&[&f, "--color", "always"]))?;
    check(colored.contains("\x1b["), || "no color with --color always".into())?;
    let forced = pisces().env("CLICOLOR_FORCE", "1").args(["tree", &f]).output()?;
    check(stdout(&forced).contains("\x1b["), || "CLICOLOR_FORCE ignored".into())?;
    let no = pisces().env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1").args(["tree", &f]).output()?;
    check(!stdout(&no).contains('\x1b'), || "NO_COLOR ignored".into())?;
    // Without escapes the colored output is the plain one.
    let stripped = strip_ansi(&colored);
    check(stripped == plain, || "colors changed the text".into())
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn help_has_examples() -> TestResult {
    let out = pisces().args(["tree", "--help"]).output()?;
    let text = stdout(&out);
    check(text.contains("Examples:") && text.contains("pisces tree session.jsonl"), || text.clone())
}
