//! Inputs: files are never modified; stdin and session ids work like files.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use libtest_mimic::Trial;

use crate::common::{check, pisces, run, stderr, stdout, stdout_json, testdata, TestResult};

fn all_session_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_session_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

pub fn trials() -> Vec<Trial> {
    let mut files = Vec::new();
    all_session_files(&testdata(), &mut files);
    files.sort();
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|f| {
            let name = format!("inputs::unchanged::{}", f.strip_prefix(testdata()).unwrap().display());
            Trial::test(name, move || unchanged(&f))
        })
        .collect();
    trials.push(Trial::test("inputs::stdin_reads_like_a_file", stdin_reads_like_a_file));
    trials.push(Trial::test("inputs::session_id_lookup", session_id_lookup));
    trials.push(Trial::test("inputs::missing_file", missing_file));
    trials
}

/// Every output of `path` leaves the file byte-for-byte as it was (pi itself rewrites
/// old files and appends missing newlines when it opens them).
fn unchanged(file: &Path) -> TestResult {
    let before = fs::read(file)?;
    let mtime = fs::metadata(file)?.modified()?;
    let f = file.to_str().unwrap();
    for args in [
        vec!["path", f, "--format", "json"],
        vec!["path", f, "--format", "llm"],
        vec!["path", f, "--format", "text", "--system"],
        vec!["path", f, "--format", "markdown"],
        vec!["path", f, "--format", "openai"],
        vec!["path", f, "--format", "anthropic"],
        vec!["path", f, "--entries"],
        vec!["path", f, "--leaf-null"],
    ] {
        let out = run(&args);
        // Exit 0, or 2 for files that are not sessions; never a crash.
        check(matches!(out.status.code(), Some(0) | Some(2)), || {
            format!("{args:?}: exit {:?}\n{}", out.status.code(), stderr(&out))
        })?;
    }
    check(fs::read(file)? == before, || format!("{} changed", file.display()))?;
    check(fs::metadata(file)?.modified()? == mtime, || format!("{} was written to", file.display()))
}

fn stdin_reads_like_a_file() -> TestResult {
    let file = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let from_file = stdout_json(&run(&["path", file.to_str().unwrap(), "--format", "json"]))?;
    let mut child =
        pisces().args(["path", "-", "--format", "json"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    child.stdin.take().unwrap().write_all(&fs::read(&file)?)?;
    let out = child.wait_with_output()?;
    let from_stdin = stdout_json(&out)?;
    check(from_file["messages"] == from_stdin["messages"] && from_file["pathIds"] == from_stdin["pathIds"], || {
        "stdin and file differ".into()
    })?;
    check(from_stdin["session"]["file"] == "<stdin>", || format!("session.file = {}", from_stdin["session"]["file"]))
}

/// `pisces path <id-prefix>` finds the file by its header id, like `pi --session <id>`:
/// in --session-dir, in $PI_CODING_AGENT_SESSION_DIR, or under $HOME/.pi/agent/sessions/*/.
fn session_id_lookup() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let project = tmp.path().join(".pi/agent/sessions/--home-dev-todo-cli--");
    fs::create_dir_all(&project)?;
    let a = "pi-1.6.0/03-tree-branches.jsonl";
    let b = "pi-1.6.0/05-labels-and-name.jsonl";
    for f in [a, b] {
        fs::copy(testdata().join(f), project.join(Path::new(f).file_name().unwrap()))?;
    }
    let id_of = |f: &str| -> String {
        let first = fs::read_to_string(testdata().join(f)).unwrap().lines().next().unwrap().to_string();
        serde_json::from_str::<serde_json::Value>(&first).unwrap()["id"].as_str().unwrap().to_string()
    };
    let (id_a, id_b) = (id_of(a), id_of(b));
    // Both ids start alike (UUIDv7 from the same minute); find a prefix unique to `a`.
    let unique = (1..id_a.len()).map(|n| &id_a[..n]).find(|p| !id_b.starts_with(p)).unwrap().to_string();
    let common: String = id_a.chars().zip(id_b.chars()).take_while(|(x, y)| x == y).map(|(x, _)| x).collect();

    let home = pisces().env("HOME", tmp.path()).args(["path", &unique, "--format", "json"]).output()?;
    let doc = stdout_json(&home)?;
    check(doc["session"]["id"] == id_a.as_str(), || format!("found {}", doc["session"]["id"]))?;

    let dir =
        pisces().args(["--session-dir", project.to_str().unwrap(), "path", &id_b, "--format", "json"]).output()?;
    check(stdout_json(&dir)?["session"]["id"] == id_b.as_str(), || "--session-dir lookup failed".into())?;

    let env =
        pisces().env("PI_CODING_AGENT_SESSION_DIR", &project).args(["path", &id_b, "--format", "json"]).output()?;
    check(stdout_json(&env)?["session"]["id"] == id_b.as_str(), || "env lookup failed".into())?;

    if !common.is_empty() {
        let amb = pisces().env("HOME", tmp.path()).args(["path", &common]).output()?;
        check(amb.status.code() == Some(2), || format!("ambiguous prefix: exit {:?}", amb.status.code()))?;
        let err = stderr(&amb);
        check(err.contains("ambiguous") && err.contains(&id_a) && err.contains(&id_b), || err.clone())?;
    }
    let none = pisces().env("HOME", tmp.path()).args(["path", "zzzz"]).output()?;
    check(
        none.status.code() == Some(2) && stderr(&none).contains("no session file or session id matches `zzzz`"),
        || stderr(&none),
    )
}

fn missing_file() -> TestResult {
    let out = run(&["path", "no/such/file.jsonl"]);
    check(out.status.code() == Some(2), || format!("exit {:?}", out.status.code()))?;
    check(stderr(&out).contains("no/such/file.jsonl") && stdout(&out).is_empty(), || stderr(&out))
}
