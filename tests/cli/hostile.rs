//! Hostile names in every format: terminal escapes, bidi overrides and zero-width characters
//! put into every cwd, model id, tool name, title and label of a corpus file, and into its
//! file name. Every human output is inert (pisces's own SGR colors aside) and shows no bidi
//! or zero-width character raw; JSON keeps the exact text.

use std::path::Path;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, pisces, stderr, testdata, TestResult};

/// A window-title change, a screen clear, a hidden link, a right-to-left override and a
/// zero-width space.
const HOSTILE: &str =
    "\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}]8;;http://x.invalid\u{7}link\u{1b}]8;;\u{7}\u{202e}rtl\u{200b}\u{9b}31m";

pub fn trials() -> Vec<Trial> {
    [
        ("pi", "pi-1.6.0/22-two-fix-attempts.jsonl"),
        ("claude", "claude-code-2.1.332/09-two-fixes.jsonl"),
        (
            "codex",
            "codex-0.171.0/01-exec-and-patch/sessions/2026/12/02/rollout-2026-12-02T22-54-22-01a238f7-5494-76b0-9444-e8d3009fe9f5.jsonl",
        ),
        (
            "omp",
            "omp-18.2.3/home/.omp/agent/sessions/-projects-06-spill-work/2026-12-03T08-36-17-474Z_01a23b0c-15c2-7725-a96f-c180f5d58de2.jsonl",
        ),
    ]
    .into_iter()
    .map(|(name, file)| Trial::test(format!("hostile::names::{name}"), move || names(file)))
    .collect()
}

/// Appends HOSTILE to every string under a key that names something.
fn poison(v: &mut Value) -> usize {
    let mut n = 0;
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let named = matches!(
                    k.as_str(),
                    "cwd" | "model" | "modelId" | "name" | "title" | "label" | "slug" | "toolName" | "gitBranch"
                );
                match x {
                    Value::String(s) if named => {
                        s.push_str(HOSTILE);
                        n += 1;
                    }
                    _ => n += poison(x),
                }
            }
        }
        Value::Array(a) => n += a.iter_mut().map(poison).sum::<usize>(),
        _ => {}
    }
    n
}

fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("\u{1b}[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let body = after.find(|c: char| !(c.is_ascii_digit() || c == ';')).unwrap_or(after.len());
        if after[body..].starts_with('m') {
            rest = &after[body + 1..];
        } else {
            out.push_str("\u{1b}[");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn names(rel: &str) -> TestResult {
    let src = std::fs::read_to_string(testdata().join(rel))?;
    let mut poisoned = 0;
    let mut text = String::new();
    for line in src.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut v) => {
                poisoned += poison(&mut v);
                text.push_str(&serde_json::to_string(&v)?);
            }
            Err(_) => text.push_str(line),
        }
        text.push('\n');
    }
    check(poisoned > 3, || format!("only {poisoned} names poisoned in {rel}"))?;
    let dir = tempfile::tempdir()?;
    // Codex keeps its rollout's name pattern (its id is read from it).
    let base = Path::new(rel).file_name().unwrap().to_string_lossy().into_owned();
    let name = if base.starts_with("rollout-") { base } else { format!("s{}.jsonl", HOSTILE.replace('/', "")) };
    let f = dir.path().join(&name);
    std::fs::write(&f, &text)?;
    let fs_ = f.to_str().unwrap();
    let human: &[&[&str]] = &[
        &["tree", fs_, "--color", "always"],
        &["tree", fs_, "--ids", "--filter", "all"],
        &["path", fs_, "--format", "text", "--color", "always"],
        &["path", fs_, "--format", "markdown"],
        &["leaves", fs_, "--color", "always"],
        &["show", fs_, "@"],
        &["check", fs_, "-v"],
        &["grep", "-i", "e", fs_, "--color", "always"],
        &["grep", "-l", "e", fs_],
        &["stats", fs_, "--by", "model"],
        &["stats", fs_, "--by", "project"],
        &["diff", fs_, "@", "@~2", "--stat"],
    ];
    for args in human {
        let out = pisces().args(*args).env("COLUMNS", "400").output()?;
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        check(!all.contains("panicked"), || format!("{args:?} panicked: {all}"))?;
        let ours = strip_sgr(&all);
        // Zero-width characters may stay in text (emoji are joined with them); outputs
        // made of names alone (file names, sessions, models, projects) show them.
        let names_only = matches!(args[0], "check" | "stats") || args[1] == "-l";
        let bad: Vec<char> = ours
            .chars()
            .filter(|&c| {
                (c.is_control() && c != '\n' && c != '\t')
                    || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
                    || (names_only && matches!(c, '\u{200b}'..='\u{200d}'))
            })
            .collect();
        check(bad.is_empty(), || format!("{args:?} writes {bad:?} raw:\n{ours:.2000}"))?;
    }
    // Names are shown with what they hide made visible.
    let out = pisces().args(["check", fs_]).output()?;
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    if name.contains('\u{202e}') {
        check(said.contains("\\u{202e}rtl\\u{200b}"), || format!("check hides the file name's controls: {said}"))?;
    }
    // JSON keeps every byte.
    let out = pisces().args(["tree", fs_, "--format", "json", "--filter", "all"]).output()?;
    let doc: Value = serde_json::from_slice(&out.stdout)?;
    let escaped = serde_json::to_string(HOSTILE)?;
    let compact = serde_json::to_string(&doc)?;
    check(compact.contains(&escaped[1..escaped.len() - 1]), || "tree's JSON lost the exact names".into())
}
