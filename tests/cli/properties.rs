//! Properties over generated session trees (proptest, with a fixed seed so that a run is
//! reproducible and a failure shrinks to a small tree):
//! - `fork` at any entry, then `path` on the new file, equals `path` at that entry;
//! - `diff A B` and `diff B A` mirror each other;
//! - `convert --to pi` at any entry keeps the messages;
//! - a file cut at any byte (every format's corpus) loads with a report and no panic.

use std::path::Path;

use libtest_mimic::Trial;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::{json, Value};

use crate::common::{first_diff, pisces, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("properties::fork_then_path_is_path", fork_then_path),
        Trial::test("properties::diff_mirrors", diff_mirrors),
        Trial::test("properties::convert_keeps_the_messages", convert_keeps_messages),
        Trial::test("properties::a_file_cut_anywhere_loads", cut_anywhere),
    ]
}

fn runner(cases: u32) -> TestRunner {
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// One generated entry: its parent (an index into the entries before it, reduced modulo
/// their number), and what it is.
#[derive(Clone, Debug)]
enum Kind {
    User(String),
    Assistant(String),
    /// An assistant's tool call, and its result as the next entry.
    Tool(String),
    /// A label on an earlier entry.
    Label(usize, String),
    ModelChange,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{1,20}",
        "\\PC{0,12}",
        Just("line one\nline two\t\"quoted\" \\ back".to_string()),
        Just("\u{1b}]0;title\u{7}\u{202e}rtl".to_string()),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        4 => text().prop_map(Kind::User),
        4 => text().prop_map(Kind::Assistant),
        2 => text().prop_map(Kind::Tool),
        1 => (any::<usize>(), "[a-z][a-z0-9-]{0,8}").prop_map(|(t, l)| Kind::Label(t, l)),
        1 => Just(Kind::ModelChange),
    ]
}

/// A tree: each entry after the first hangs under a random earlier one.
fn tree() -> impl Strategy<Value = Vec<(usize, Kind)>> {
    prop::collection::vec((any::<usize>(), kind()), 1..24)
}

/// The session file of a generated tree, and the ids of its entries.
fn write_tree(dir: &Path, spec: &[(usize, Kind)]) -> (std::path::PathBuf, Vec<String>) {
    let mut lines = vec![json!({"type": "session", "version": 3, "id": "01a2b3c4-0000-7000-8000-000000000001",
        "timestamp": "2026-11-01T10:00:00.000Z", "cwd": "/home/dev/proj"})];
    let mut ids: Vec<String> = Vec::new();
    let mut second = 0;
    let mut push = |lines: &mut Vec<Value>, ids: &mut Vec<String>, parent: Option<&String>, mut v: Value| {
        second += 1;
        let id = format!("{:08x}", 0x1000_0000u32 + ids.len() as u32);
        v["id"] = json!(id);
        v["parentId"] = json!(parent);
        v["timestamp"] = json!(format!("2026-11-01T10:{:02}:{:02}.000Z", second / 60, second % 60));
        lines.push(v);
        ids.push(id);
    };
    for (i, (p, k)) in spec.iter().enumerate() {
        let parent = if i == 0 { None } else { Some(ids[p % ids.len()].clone()) };
        let ms = 1_793_000_000_000u64 + i as u64 * 1000;
        let usage = json!({"input": 3, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 8,
            "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0}});
        let assistant = |content: Value, stop: &str| {
            json!({"type": "message", "message": {"role": "assistant", "content": content, "api": "anthropic-messages",
                "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": stop, "timestamp": ms}})
        };
        match k {
            Kind::User(t) => push(
                &mut lines,
                &mut ids,
                parent.as_ref(),
                json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": t}], "timestamp": ms}}),
            ),
            Kind::Assistant(t) => {
                push(&mut lines, &mut ids, parent.as_ref(), assistant(json!([{"type": "text", "text": t}]), "stop"))
            }
            Kind::Tool(t) => {
                let call = format!("toolu_{i:04}");
                push(
                    &mut lines,
                    &mut ids,
                    parent.as_ref(),
                    assistant(
                        json!([{"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": t}}]),
                        "toolUse",
                    ),
                );
                let me = ids.last().cloned();
                push(
                    &mut lines,
                    &mut ids,
                    me.as_ref(),
                    json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call, "toolName": "bash",
                        "content": [{"type": "text", "text": format!("ran {t}")}], "isError": false, "timestamp": ms}}),
                );
            }
            Kind::Label(target, l) => {
                let target = ids.get(target % ids.len().max(1)).cloned();
                push(&mut lines, &mut ids, parent.as_ref(), json!({"type": "label", "targetId": target, "label": l}));
            }
            Kind::ModelChange => push(
                &mut lines,
                &mut ids,
                parent.as_ref(),
                json!({"type": "model_change", "provider": "openai", "modelId": "gpt-5"}),
            ),
        }
    }
    let file = dir.join("tree.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    (file, ids)
}

/// The JSON a command prints; exit 0, or 1 for `diff` (the sides differ, as diff(1)).
fn json_of(args: &[&str]) -> Result<Value, TestCaseError> {
    let out = pisces().args(args).output().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let differ = args[0] == "diff" && out.status.code() == Some(1);
    if !out.status.success() && !differ {
        return Err(TestCaseError::fail(format!(
            "pisces {} exited {:?}: {}",
            args.join(" "),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| TestCaseError::fail(format!("{e}: pisces {}", args.join(" "))))
}

fn same(got: &Value, want: &Value, what: &str) -> Result<(), TestCaseError> {
    match first_diff(got, want, "$") {
        None => Ok(()),
        Some(d) => Err(TestCaseError::fail(format!("{what}: {d}"))),
    }
}

fn run(
    cases: u32,
    strategy: impl Strategy<Value = (Vec<(usize, Kind)>, usize, usize)>,
    body: fn(&Path, &[String], usize, usize) -> Result<(), TestCaseError>,
) -> TestResult {
    runner(cases)
        .run(&strategy, |(spec, a, b)| {
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let (file, ids) = write_tree(dir.path(), &spec);
            body(&file, &ids, a % ids.len(), b % ids.len())
        })
        .map_err(|e| e.to_string().into())
}

fn fork_then_path() -> TestResult {
    run(40, (tree(), any::<usize>(), any::<usize>()), |file, ids, a, _| {
        let f = file.to_str().unwrap();
        let out = file.with_file_name("fork.jsonl");
        let o = out.to_str().unwrap();
        let printed = pisces().args(["fork", f, &ids[a], "-o", o]).output().unwrap();
        prop_assert!(printed.status.success(), "fork failed: {}", String::from_utf8_lossy(&printed.stderr));
        let want = json_of(&["path", f, &ids[a], "--format", "json"])?;
        let got = json_of(&["path", o, "--format", "json"])?;
        same(&got["messages"], &want["messages"], "path of the fork")?;
        same(&got["model"], &want["model"], "the fork's model")
    })
}

/// `diff B A` with every side swapped: `a` and `b` (at every level), and the fields named
/// for one side.
fn swapped(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, x) in m {
                let k2 = match k.as_str() {
                    "a" => "b",
                    "b" => "a",
                    "lineA" => "lineB",
                    "lineB" => "lineA",
                    "id" if m.contains_key("idB") => "idB",
                    "idB" => "id",
                    "entries" if m.contains_key("entriesB") => "entriesB",
                    "entriesB" => "entries",
                    k => k,
                };
                out.insert(k2.to_string(), swapped(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(swapped).collect()),
        v => v.clone(),
    }
}

fn diff_mirrors() -> TestResult {
    run(40, (tree(), any::<usize>(), any::<usize>()), |file, ids, a, b| {
        let f = file.to_str().unwrap();
        let ab = json_of(&["diff", f, &ids[a], &ids[b], "--format", "json"])?;
        let ba = json_of(&["diff", f, &ids[b], &ids[a], "--format", "json"])?;
        same(&swapped(&ba), &ab, "diff B A, swapped, against diff A B")
    })
}

fn convert_keeps_messages() -> TestResult {
    run(40, (tree(), any::<usize>(), any::<usize>()), |file, ids, a, _| {
        let f = file.to_str().unwrap();
        let out = file.with_file_name("converted.jsonl");
        let o = out.to_str().unwrap();
        let printed = pisces().args(["convert", "--to", "pi", f, &ids[a], "-o", o]).output().unwrap();
        prop_assert!(printed.status.success(), "convert failed: {}", String::from_utf8_lossy(&printed.stderr));
        let want = json_of(&["path", f, &ids[a], "--format", "llm"])?;
        let got = json_of(&["path", o, "--format", "llm"])?;
        same(&got["messages"], &want["messages"], "path of the conversion")
    })
}

/// Every corpus file, cut at random bytes: `tree`, `path` and `check` exit 0, 1 or 2 (never
/// a panic's 101 or a signal), and a failure names the file.
fn cut_anywhere() -> TestResult {
    let mut files = Vec::new();
    for dir in
        ["pi-1.6.0", "claude-code-2.1.332", "codex-0.171.0/03-forks", "omp-18.2.3/forks", "openclaw-2026.9.6/exports"]
    {
        let d = testdata().join(dir);
        let mut found: Vec<_> = std::fs::read_dir(&d)
            .map_err(|e| format!("{}: {e}", d.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
            .collect();
        found.sort();
        files.extend(found);
    }
    let strategy = (0..files.len(), any::<prop::sample::Index>());
    runner(60)
        .run(&strategy, |(k, at)| {
            let bytes = std::fs::read(&files[k]).unwrap();
            let cut = at.index(bytes.len() + 1);
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(files[k].file_name().unwrap());
            std::fs::write(&file, &bytes[..cut]).unwrap();
            let f = file.to_str().unwrap();
            for cmd in [&["tree", f][..], &["path", f, "--format", "json"], &["check", f], &["leaves", f]] {
                let out = pisces().args(cmd).output().unwrap();
                let code = out.status.code();
                prop_assert!(
                    matches!(code, Some(0..=2)),
                    "pisces {} on {} cut at {cut}: exit {code:?}: {}",
                    cmd[0],
                    files[k].display(),
                    String::from_utf8_lossy(&out.stderr)
                );
                if code != Some(0) {
                    // `check` reports on stdout, the others on stderr.
                    let said =
                        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
                    prop_assert!(
                        said.contains(&*file.file_name().unwrap().to_string_lossy()),
                        "pisces {} failed without naming the file: {said}",
                        cmd[0]
                    );
                }
            }
            Ok(())
        })
        .map_err(|e| e.to_string().into())
}
