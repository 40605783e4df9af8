//! Faults: a file rewritten under a read, in every format and for every read command (the
//! cache and grep included); disk full and file-size limits while writing; a writer killed
//! mid-append; read-only and missing directories. pi's own rewrite case is
//! defects::12_a_file_shrunk_while_read.

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{big_copy, check, pisces, stderr, testdata, Rewriter, TestResult};

pub fn trials() -> Vec<Trial> {
    let formats: [(&str, &str); 3] = [
        ("claude", "claude-code-2.1.332/10-compact-twice.jsonl"),
        (
            "codex",
            "codex-0.171.0/04-compact/sessions/2026/12/02/rollout-2026-12-02T22-55-06-01a238f7-feef-7660-a23c-1d8fd143aa0a.jsonl",
        ),
        (
            "omp",
            "omp-18.2.3/home/.omp/agent/sessions/-projects-06-spill-work/2026-12-03T08-36-17-474Z_01a23b0c-15c2-7725-a96f-c180f5d58de2.jsonl",
        ),
    ];
    let mut trials: Vec<Trial> = formats
        .iter()
        .map(|&(name, file)| {
            Trial::test(format!("faults::rewritten_under_a_read::{name}"), move || rewritten_under_read(file))
        })
        .collect();
    trials.push(Trial::test("faults::size_limit_while_writing", size_limit));
    trials.push(Trial::test("faults::size_limit_while_appending_a_summary_or_a_turn", size_limit_summary_and_agent));
    trials.push(Trial::test("faults::killed_mid_append", killed_mid_append));
    trials.push(Trial::test("faults::read_only_and_missing_dirs", read_only_dirs));
    trials
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A writer thread cuts the file at random points and writes the rest back, in place (the
/// same inode, which is what a mapped read has to survive), while every read command runs
/// on it. Each command answers from some state of the file (whole JSON, as the file
/// was at one moment: the same answer as for some prefix of it, or for the whole), or stops
/// with an error naming the file; none is killed by a signal or panics.
fn rewritten_under_read(rel: &str) -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = fs::read(testdata().join(rel))?;
    let big = big_copy(&src);
    let name = Path::new(rel).file_name().unwrap();
    let f = dir.path().join(name);
    fs::write(&f, &big)?;
    let cache = dir.path().join("cache");
    let commands: Vec<Vec<String>> = [
        &["path", "--format", "json"][..],
        &["tree", "--format", "json"],
        &["leaves", "--format", "json"],
        &["check", "--format", "json"],
        &["show", "@", "--format", "json"],
        &["grep", "--format", "json", "-i", "test"],
        &["stats", "--format", "json"],
    ]
    .iter()
    .map(|a| {
        // The file after the command's name; grep's after its pattern.
        let mut v: Vec<String> = a.iter().map(|x| x.to_string()).collect();
        let at = if a[0] == "grep" { v.len() } else { 1 };
        v.insert(at, s(&f).to_string());
        v
    })
    .collect();
    let writer = Rewriter::start(&f, big.clone(), 0x9e37_79b9_7f4a_7c15);
    let (mut answered, mut refused) = (0, 0);
    let result = (|| -> TestResult {
        for round in 0..3 {
            for c in &commands {
                let out = pisces().args(c).env("XDG_CACHE_HOME", &cache).output()?;
                check(out.status.signal().is_none(), || format!("{c:?} (round {round}) was killed: {:?}", out.status))?;
                let err = stderr(&out);
                check(!err.contains("panicked"), || format!("{c:?} (round {round}) panicked: {err}"))?;
                match out.status.code() {
                    Some(0 | 1) => {
                        answered += 1;
                        // grep writes one object per line; the others one document.
                        let text = String::from_utf8_lossy(&out.stdout);
                        let whole = if c[0] == "grep" {
                            text.lines().all(|l| serde_json::from_str::<Value>(l).is_ok())
                        } else {
                            serde_json::from_str::<Value>(&text).is_ok()
                        };
                        check(whole, || format!("{c:?} (round {round}) printed no whole answer: {text:.200}"))?;
                    }
                    _ => {
                        refused += 1;
                        check(err.contains(&*name.to_string_lossy()), || {
                            format!("{c:?} (round {round}) failed without naming the file: {err}")
                        })?;
                    }
                }
            }
        }
        Ok(())
    })();
    let rewrites = writer.stop()?;
    result?;
    check(rewrites > 10, || format!("only {rewrites} rewrites: the test did not test"))?;
    eprintln!("faults::{rel}: {answered} answers, {refused} refusals, {rewrites} rewrites");
    // Once the writer is done the cache must not hold a stale answer: the same as without it.
    let with = pisces().args(["stats", "--format", "json", s(&f)]).env("XDG_CACHE_HOME", &cache).output()?;
    let without = pisces().args(["stats", "--format", "json", "--no-cache", s(&f)]).output()?;
    let totals = |o: &std::process::Output| -> Value {
        serde_json::from_slice::<Value>(&o.stdout).map(|v| v["total"].clone()).unwrap_or(Value::Null)
    };
    check(totals(&with) == totals(&without), || {
        format!("stats from the cache after the rewrites: {} vs {}", totals(&with), totals(&without))
    })
}

/// A child `pisces` run with RLIMIT_FSIZE set to `limit` bytes (SIGXFSZ ignored, so that
/// a write past it fails with EFBIG as on a full disk).
fn limited(limit: u64, args: &[&str]) -> std::io::Result<std::process::Output> {
    let limit = limit.to_string();
    std::process::Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f \"$1\"; shift; exec \"$@\"", "sh"])
        .arg(&limit)
        .arg(env!("CARGO_BIN_EXE_pisces"))
        .args(args)
        .env_remove("PI_CODING_AGENT_DIR")
        .env("NO_COLOR", "1")
        .env("PISCES_TEST_KEY", "test-key")
        .output()
}

/// `summarize --append` and `agent` past a file-size limit: the write fails with the
/// system's own error (not as a file another program changed, which is what the write's
/// own rollback looked like to the read until it was told apart), and what was in the file
/// stays as it was, with every line whole.
fn size_limit_summary_and_agent() -> TestResult {
    use pisces::llm::testing::{anthropic_text, Reply, ScriptedServer};
    let dir = tempfile::tempdir()?;
    let original = fs::read(testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"))?;
    let f = dir.path().join("s.jsonl");
    let blocks = (original.len() as u64).div_ceil(512);
    let big = "x".repeat(6000);
    let whole_lines = |bytes: &[u8]| -> TestResult {
        check(bytes.ends_with(b"\n"), || "the file does not end with a newline".into())?;
        for (k, l) in String::from_utf8_lossy(bytes).lines().enumerate() {
            check(serde_json::from_str::<Value>(l).is_ok(), || format!("line {} is not whole: {l:.80}", k + 1))?;
        }
        Ok(())
    };

    fs::write(&f, &original)?;
    let out = limited(blocks, &["summarize", s(&f), "adbf", "3cdc", "--scripted-reply", &big, "--append"])?;
    check(!out.status.success(), || "summarize --append past the size limit succeeded".into())?;
    check(out.status.signal().is_none(), || format!("summarize was killed: {:?}", out.status))?;
    let err = stderr(&out);
    check(err.contains("s.jsonl") && err.contains("File too large"), || format!("summarize's error: {err}"))?;
    check(!err.contains("changed while pisces read it"), || format!("the failed write reported as a change: {err}"))?;
    check(fs::read(&f)? == original, || "summarize left the file changed past the limit".into())?;

    // The agent's own new session, one turn long; the next turn's reply crosses the limit.
    let g = dir.path().join("agent.jsonl");
    let server = ScriptedServer::start(vec![
        Reply::Sse(anthropic_text("claude-sonnet-4-5", "Short.")),
        Reply::Sse(anthropic_text("claude-sonnet-4-5", &big)),
    ]);
    let agent = |limit: u64, prompt: &str| {
        let url = server.url();
        limited(
            limit,
            &[
                "agent",
                "--session",
                s(&g),
                "--model",
                "anthropic/claude-sonnet-4-5",
                "--base-url",
                &url,
                "--api-key-env",
                "PISCES_TEST_KEY",
                "--no-tools",
                "-p",
                prompt,
            ],
        )
    };
    let out = agent(1 << 20, "Say something short.")?;
    check(out.status.success(), || format!("the first turn failed: {}", stderr(&out)))?;
    let first = fs::read(&g)?;
    let out = agent((first.len() as u64).div_ceil(512) + 1, "Say something long.")?;
    check(!out.status.success(), || "agent past the size limit succeeded".into())?;
    check(out.status.signal().is_none(), || format!("agent was killed: {:?}", out.status))?;
    let err = stderr(&out);
    check(err.contains("agent.jsonl") && err.contains("File too large"), || format!("agent's error: {err}"))?;
    let now = fs::read(&g)?;
    check(now.starts_with(&first), || "agent changed what was in the file".into())?;
    whole_lines(&now)?;
    let load = pisces().args(["path", s(&g), "--format", "json"]).output()?;
    check(load.status.success(), || format!("the file does not load after agent: {}", stderr(&load)))
}

/// `label`, `fork` and `convert` under a file-size limit (512-byte blocks, as `ulimit -f`
/// counts): the command fails with a clear error, the source is byte for byte what it
/// was, and no partial line is left (a new file is either absent or whole).
fn size_limit() -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let original = fs::read(&src)?;
    let f = dir.path().join("s.jsonl");
    fs::write(&f, &original)?;
    // The limit is the file's own size, rounded up to blocks: a 4 KB label crosses it.
    let blocks = (original.len() as u64).div_ceil(512);
    let before = fs::read(&f)?;
    let long = "x".repeat(4000);
    let out = limited(blocks, &["label", s(&f), "@", &long])?;
    check(!out.status.success(), || "label past the size limit succeeded".into())?;
    check(out.status.signal().is_none(), || format!("label was killed: {:?}", out.status))?;
    let err = stderr(&out);
    check(err.contains("s.jsonl"), || format!("label's error does not name the file: {err}"))?;
    check(fs::read(&f)? == before, || "label left the file changed past the limit".into())?;

    fs::write(&f, &original)?;
    for (cmd, extra) in [("fork", &[][..]), ("convert", &["--to", "pi"][..])] {
        let out_file = dir.path().join(format!("{cmd}.jsonl"));
        let mut args = vec![cmd, s(&f)];
        args.extend(extra);
        args.extend(["-o", s(&out_file)]);
        // Room for the header and a few lines, not for the whole path.
        let out = limited(4, &args)?;
        check(!out.status.success(), || format!("{cmd} past the size limit succeeded"))?;
        check(out.status.signal().is_none(), || format!("{cmd} was killed: {:?}", out.status))?;
        check(!out_file.exists(), || format!("{cmd} left a partial {}", out_file.display()))?;
        let leftovers: Vec<_> = fs::read_dir(dir.path())?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "s.jsonl")
            .collect();
        check(leftovers.is_empty(), || format!("{cmd} left files behind: {leftovers:?}"))?;
        check(fs::read(&f)? == original, || format!("{cmd} changed its source"))?;
        check(!stderr(&out).is_empty(), || format!("{cmd} failed silently"))?;
    }
    Ok(())
}

/// `label` appends killed by SIGKILL at random moments: afterwards every line but
/// possibly the last is whole, nothing before the appends changed, and the file loads.
fn killed_mid_append() -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let original = fs::read(&src)?;
    let f = dir.path().join("s.jsonl");
    fs::write(&f, &original)?;
    let big = "label ".repeat(20_000);
    let mut x: u64 = 0x1234_5678_9abc_def1;
    for round in 0..12 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut child = pisces().args(["label", s(&f), "@", &big[..big.len() - round]]).spawn()?;
        std::thread::sleep(Duration::from_micros(x % 4000));
        let _ = child.kill();
        let _ = child.wait();
    }
    let now = fs::read(&f)?;
    check(now.starts_with(&original), || "an earlier line changed".into())?;
    let text = String::from_utf8_lossy(&now[original.len()..]).into_owned();
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let whole_until = if text.ends_with('\n') { lines.len() } else { lines.len().saturating_sub(1) };
    for (k, l) in lines[..whole_until].iter().enumerate() {
        check(serde_json::from_str::<Value>(l).is_ok(), || format!("appended line {k} is damaged: {l:.80}"))?;
    }
    let out = pisces().args(["path", s(&f), "--format", "json"]).output()?;
    check(out.status.success(), || format!("the file does not load after the kills: {}", stderr(&out)))
}

/// Read commands work with a read-only session folder, no home directory, and a cache
/// directory that cannot be written.
fn read_only_dirs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let ro = dir.path().join("ro");
    fs::create_dir(&ro)?;
    let f: PathBuf = ro.join("s.jsonl");
    fs::copy(testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"), &f)?;
    let cache = dir.path().join("cache-file");
    // A file where the cache directory would be: it can never be created.
    fs::write(&cache, "not a directory")?;
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&f, fs::Permissions::from_mode(0o444))?;
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555))?;
    let result = (|| -> TestResult {
        for args in [
            &["path", s(&f), "--format", "json"][..],
            &["tree", s(&f)],
            &["leaves", s(&f)],
            &["grep", "npm", s(&f)],
            &["stats", s(&f)],
            &["diff", s(&f), "@", "@~2", "--stat"],
        ] {
            let out = pisces().args(args).env_remove("HOME").env("XDG_CACHE_HOME", &cache).current_dir(&ro).output()?;
            check(matches!(out.status.code(), Some(0 | 1)), || {
                format!("{args:?} with a read-only folder, no home, no cache dir: {:?}: {}", out.status, stderr(&out))
            })?;
        }
        Ok(())
    })();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755))?;
    result
}
