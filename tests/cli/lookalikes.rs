//! Files that look like pi sessions and are not trees: DeepSeek Harness's zstd event logs
//! (a pi v3 header, then events) and pi's `--mode json` streams, which the pi-subagents
//! extension leaves in pi's session folders. They are never read as trees.

use std::fs;

use libtest_mimic::Trial;

use crate::common::{check, run, stderr, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("lookalikes::deepseek_log_is_never_a_tree", deepseek_log),
        Trial::test("lookalikes::pi_json_streams_are_skipped_in_a_store", pi_json_stream),
    ]
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"0f3c2a1e-1111-4222-8333-944455556666","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/home/dev/app"}"#;

/// A zstd-compressed log whose first line is a pi v3 header: every command says what it is
/// and exits 2, with nothing on stdout; the file is unchanged.
fn deepseek_log() -> TestResult {
    let body = format!(
        "{HEADER}\n{}\n{}\n{}\n",
        r#"{"type":"user_message","seq":1,"text":"fix the tests"}"#,
        r#"{"type":"assistant_message","seq":2,"text":"Looking."}"#,
        r#"{"type":"tool_call","seq":3,"name":"bash","args":{"command":"npm test"}}"#
    );
    let dir = tempfile::tempdir()?;
    let f = dir.path().join(".dsh/sessions/app/0f3c2a1e/session.v3.jsonl.zstd");
    fs::create_dir_all(f.parent().unwrap())?;
    let packed = ruzstd::encoding::compress_to_vec(body.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest);
    fs::write(&f, &packed)?;
    let plain = dir.path().join("log.jsonl");
    fs::write(&plain, &body)?;
    for (file, compressed) in [(&f, true), (&plain, false)] {
        let s = file.to_str().unwrap();
        for args in [vec!["tree", s], vec!["path", s], vec!["leaves", s], vec!["show", s, "@"]] {
            let o = run(&args);
            let e = stderr(&o);
            check(o.status.code() == Some(2) && o.stdout.is_empty(), || format!("{args:?}: {:?}\n{e}", o.status))?;
            check(e.contains("not a session tree") && e.contains("parentId"), || format!("{args:?}: {e}"))?;
            check(!compressed || e.contains("zstd-compressed"), || format!("{args:?}: {e}"))?;
        }
    }
    check(fs::read(&f)? == packed, || "the log changed".into())
}

/// `check DIR` on a pi session folder holding a real session and a `--mode json` stream
/// (as `subagent-artifacts/<id>_<agent>.jsonl`) checks the session and skips the stream
/// with a note, which `-v` details.
fn pi_json_stream() -> TestResult {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("--home-dev-app--");
    fs::create_dir_all(folder.join("subagent-artifacts"))?;
    fs::copy(testdata().join("pi-1.6.0/01-linear-chat.jsonl"), folder.join("2026-11-30T10-00-00-000Z_s.jsonl"))?;
    let stream = format!(
        "{HEADER}\n{}\n{}\n{}\n",
        r#"{"type":"agent_start"}"#,
        r#"{"type":"turn_start"}"#,
        r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}"#
    );
    fs::write(folder.join("subagent-artifacts/5f316403_worker.jsonl"), stream)?;
    let d = dir.path().to_str().unwrap();
    let o = run(&["check", d]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    check(o.status.success() && out.contains("_s.jsonl: clean") && !out.contains("worker"), || {
        format!("{out}\n{}", stderr(&o))
    })?;
    check(stderr(&o).contains("skipped 1 file") && stderr(&o).contains("not a session"), || stderr(&o))?;
    let o = run(&["check", d, "-v"]);
    check(stderr(&o).contains("5f316403_worker.jsonl (an event log"), || stderr(&o))
}
