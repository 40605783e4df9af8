//! Every session at once: `pisces ls` and `pisces grep` over a home folder laid out as the
//! five agents lay theirs out, filled with the corpora their real clients wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, pisces, stderr, stdout, stdout_json, testdata, TestResult};

/// A home folder with every corpus where its agent keeps sessions, made once.
pub struct Home {
    pub dir: tempfile::TempDir,
    /// Session files copied in, by agent folder.
    files: usize,
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(".jsonl"))
        .collect();
    v.sort();
    v
}

pub fn home() -> &'static Home {
    static HOME: OnceLock<Home> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path();
        let mut files = 0;
        let pi = h.join(".pi/agent/sessions/--home-dev-todo-cli--");
        fs::create_dir_all(&pi).unwrap();
        for f in jsonl_in(&testdata().join("pi-1.6.0")) {
            fs::copy(&f, pi.join(f.file_name().unwrap())).unwrap();
            files += 1;
        }
        let claude = h.join(".claude/projects/-home-dev-todo-cli");
        fs::create_dir_all(&claude).unwrap();
        for f in jsonl_in(&testdata().join("claude-code-2.1.332")) {
            fs::copy(&f, claude.join(f.file_name().unwrap())).unwrap();
            files += 1;
        }
        for fam in fs::read_dir(testdata().join("codex-0.171.0")).unwrap() {
            let s = fam.unwrap().path().join("sessions");
            if s.is_dir() {
                copy_dir(&s, &h.join(".codex/sessions"));
            }
        }
        files += walk(&h.join(".codex/sessions")).len();
        copy_dir(&testdata().join("omp-18.2.3/home/.omp"), &h.join(".omp"));
        for root in [h.join(".omp/agent/sessions"), h.join(".omp/agent/archive/sessions")] {
            for bucket in fs::read_dir(root).into_iter().flatten() {
                let bucket = bucket.unwrap().path();
                files += fs::read_dir(bucket)
                    .unwrap()
                    .filter(|e| {
                        let p = e.as_ref().unwrap().path();
                        let n = p.to_string_lossy();
                        p.is_file() && (n.ends_with(".jsonl") || n.ends_with(".jsonl.gz"))
                    })
                    .count();
            }
        }
        // Not sessions: a lock file, and (below) a FIFO named like one.
        fs::write(claude.join("index.lock"), "").unwrap();
        let made = Command::new("mkfifo").arg(pi.join("stuck.jsonl")).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        Home { dir, files }
    })
}

pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn openclaw_state() -> PathBuf {
    testdata().join("openclaw-2026.9.6/state")
}

/// `pisces` with the home folder above and OpenClaw's state folder.
pub fn at_home() -> Command {
    let mut c = pisces();
    c.env("HOME", home().dir.path()).env("OPENCLAW_STATE_DIR", openclaw_state());
    c
}

fn ls_json(extra: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    let mut args = vec!["ls", "--format", "json"];
    args.extend(extra);
    stdout_json(&at_home().args(&args).output()?)
}

fn sessions(doc: &Value) -> &Vec<Value> {
    doc["sessions"].as_array().expect("sessions")
}

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test("store::ls_lists_every_agents_sessions", ls_every_agent),
        Trial::test("store::ls_rows_agree_with_each_sessions_own_commands", ls_rows_agree),
        Trial::test("store::ls_filters", ls_filters),
        Trial::test("store::ls_defaults_to_this_directory", ls_this_directory),
        Trial::test("store::ls_skips_what_is_not_a_session", ls_skips),
        Trial::test("store::ls_csv_quotes_fields", ls_csv),
        Trial::test("store::grep_matches_decoded_text", grep_decoded),
        Trial::test("store::grep_hits_name_entries_show_opens", grep_revs_open),
        Trial::test("store::grep_filters_roles_tools_and_paths", grep_filters),
        Trial::test("store::grep_counts_names_and_exit_codes", grep_counts),
        Trial::test("store::grep_output_is_safe_on_a_terminal", grep_safe),
        Trial::test("store::grep_reads_only_files_that_may_match", grep_skips_files),
        Trial::test("store::grep_reports_each_line_once_in_a_fork_family", grep_each_line_once),
    ];
    for (name, pattern, flags) in PATTERNS {
        trials.push(Trial::test(format!("store::grep_prefilter_equals_decoding_everything::{name}"), move || {
            prefilter_equals_reference(pattern, flags)
        }));
    }
    trials
}

fn ls_every_agent() -> TestResult {
    let doc = ls_json(&["--all"])?;
    let rows = sessions(&doc);
    let openclaw_sessions = fs::read_dir(testdata().join("openclaw-2026.9.6/goldens"))?.count();
    let mut by_format: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows {
        *by_format.entry(r["format"].as_str().unwrap_or("?").to_string()).or_default() += 1;
    }
    let formats: BTreeSet<&str> = by_format.keys().map(String::as_str).collect();
    check(formats == BTreeSet::from(["claude", "codex", "omp", "openclaw", "pi"]), || {
        format!("formats: {by_format:?}")
    })?;
    check(by_format["openclaw"] >= openclaw_sessions, || format!("openclaw: {by_format:?}"))?;
    check(rows.len() - by_format["openclaw"] == home().files, || {
        format!("{} file sessions listed, {} copied: {by_format:?}", rows.len() - by_format["openclaw"], home().files)
    })?;
    // Newest first.
    let times: Vec<&str> = rows.iter().filter_map(|r| r["lastActive"].as_str()).collect();
    check(times.windows(2).all(|w| w[0] >= w[1]), || "not sorted by last activity".into())?;
    // Every short id is a prefix of its id, and unique among the rows.
    let shorts: BTreeSet<&str> = rows.iter().filter_map(|r| r["shortId"].as_str()).collect();
    check(shorts.len() == rows.len(), || "short ids repeat".into())?;
    for r in rows {
        check(r["id"].as_str().unwrap().starts_with(r["shortId"].as_str().unwrap()), || format!("{r}"))?;
    }
    // The forks the corpora made are counted on their sources.
    check(rows.iter().map(|r| r["forks"].as_u64().unwrap()).sum::<u64>() > 0, || "no forks counted".into())
}

/// Each row says what `leaves` and `tree` say of the same session.
fn ls_rows_agree() -> TestResult {
    let doc = ls_json(&["--all"])?;
    for r in sessions(&doc) {
        let name = r["session"].as_str().unwrap();
        let leaves = stdout_json(&at_home().args(["leaves", name, "--format", "json"]).output()?)?;
        let n = leaves["leaves"].as_array().map_or(0, Vec::len) as u64;
        check(r["leaves"].as_u64() == Some(n), || format!("{name}: ls says {} leaves, leaves says {n}", r["leaves"]))?;
        check(leaves["session"]["id"] == r["id"], || format!("{name}: id {} vs {}", leaves["session"]["id"], r["id"]))?;
        check(leaves["session"]["cwd"] == r["cwd"], || format!("{name}: cwd"))?;
        // Cost: the leaves' paths together hold every entry of a single-leaf session.
        if n == 1 && r["format"] != "codex" {
            let cost = leaves["leaves"][0]["usage"]["cost"].as_f64().unwrap_or(0.0);
            let ours = r["usage"]["cost"].as_f64().unwrap_or(0.0);
            check((cost - ours).abs() < 1e-9, || format!("{name}: cost {ours} vs the leaf's {cost}"))?;
        }
    }
    Ok(())
}

fn ls_filters() -> TestResult {
    let all = ls_json(&["--all"])?;
    let total = sessions(&all).len();
    let claude = ls_json(&["--all", "--agent", "claude"])?;
    check(!sessions(&claude).is_empty() && sessions(&claude).iter().all(|r| r["format"] == "claude"), || {
        format!("{claude}")
    })?;
    let two = ls_json(&["--all", "--agent", "Codex CLI,omp"])?;
    check(sessions(&two).iter().all(|r| r["format"] == "codex" || r["format"] == "omp"), || "agent list".into())?;
    let since = ls_json(&["--all", "--since", "2026-12-03"])?;
    check(
        sessions(&since).iter().all(|r| r["lastActive"].as_str().unwrap() >= "2026-12-03")
            && sessions(&since).len() < total
            && !sessions(&since).is_empty(),
        || format!("--since kept {} of {total}", sessions(&since).len()),
    )?;
    let until = ls_json(&["--all", "--until", "2026-12-03"])?;
    check(sessions(&until).len() + sessions(&since).len() == total, || "--since and --until split the rows".into())?;
    let smol = ls_json(&["--all", "--model", "MOCK-SMOL"])?;
    check(
        !sessions(&smol).is_empty()
            && sessions(&smol).iter().all(|r| r["models"].as_array().unwrap().iter().any(|m| m == "mock-smol")),
        || format!("{smol}"),
    )?;
    // --grep keeps exactly the sessions grep -l names.
    let grep = ls_json(&["--all", "--grep", "npm test"])?;
    let mut listed: Vec<String> = sessions(&grep).iter().map(|r| r["session"].as_str().unwrap().to_string()).collect();
    listed.sort();
    let l = at_home().args(["grep", "-l", "npm test"]).output()?;
    let mut named: Vec<String> = stdout(&l).lines().map(str::to_string).collect();
    named.sort();
    check(!listed.is_empty() && listed == named, || format!("ls --grep {listed:?}\ngrep -l {named:?}"))?;
    let bad = at_home().args(["ls", "--since", "yesterday"]).output()?;
    check(bad.status.code() == Some(2) && stderr(&bad).contains("not a date"), || stderr(&bad))
}

fn ls_this_directory() -> TestResult {
    let elsewhere = tempfile::tempdir()?;
    let o = at_home().current_dir(elsewhere.path()).args(["ls", "--format", "json"]).output()?;
    let doc = stdout_json(&o)?;
    check(sessions(&doc).is_empty(), || format!("{doc}"))?;
    let here = ls_json(&["--cwd", "/home/dev/todo-cli"])?;
    check(!sessions(&here).is_empty() && sessions(&here).iter().all(|r| r["cwd"] == "/home/dev/todo-cli"), || {
        format!("{here}")
    })
}

fn ls_skips() -> TestResult {
    let o = at_home().args(["ls", "--all", "-v"]).output()?;
    check(o.status.success(), || stderr(&o))?;
    let e = stderr(&o);
    check(e.contains("2 files in session folders skipped"), || e.clone())?;
    check(e.contains("index.lock: not a session file") && e.contains("stuck.jsonl: a FIFO"), || e.clone())?;
    let doc = ls_json(&["--all"])?;
    check(doc["skipped"].as_array().map(Vec::len) == Some(2), || format!("{}", doc["skipped"]))
}

fn ls_csv() -> TestResult {
    let o = at_home().args(["ls", "--all", "--format", "csv"]).output()?;
    let text = stdout(&o);
    let mut lines = text.lines();
    check(lines.next().is_some_and(|h| h.starts_with("agent,session,id,title,cwd")), || text.clone())?;
    let rows = sessions(&ls_json(&["--all"])?).len();
    // A title with a comma or a quote is quoted: every line has 17 fields.
    for line in text.lines().skip(1) {
        let mut fields = 1;
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => fields += 1,
                _ => {}
            }
        }
        check(fields == 17, || format!("{fields} fields: {line}"))?;
    }
    check(text.lines().count() == rows + 1, || format!("{} lines for {rows} rows", text.lines().count()))
}

/// A session whose text holds what JSON escapes.
fn tricky_session(dir: &Path) -> PathBuf {
    let p = dir.join("tricky.jsonl");
    let user = "say \"hi\" \\ back\nslash café \u{1b}]0;pwned\u{7} end";
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"tricky-1","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/w"}),
        serde_json::json!({"type":"message","id":"aaaa1111","parentId":null,"timestamp":"2026-11-01T00:00:01.000Z",
            "message":{"role":"user","content":user,"timestamp":1}}),
        serde_json::json!({"type":"message","id":"bbbb2222","parentId":"aaaa1111","timestamp":"2026-11-01T00:00:02.000Z",
            "message":{"role":"assistant","content":[{"type":"thinking","thinking":"ponder café"},{"type":"text","text":"ok"},
            {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"echo \"q\""}}],
            "provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},
            "stopReason":"toolUse","timestamp":2}}),
        serde_json::json!({"type":"message","id":"cccc3333","parentId":"bbbb2222","timestamp":"2026-11-01T00:00:03.000Z",
            "message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"q"}],"isError":false,"timestamp":3}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(&p, text).unwrap();
    p
}

fn grep_hits(args: &[&str]) -> Result<(Option<i32>, Vec<Value>), libtest_mimic::Failed> {
    let o = pisces().args(["grep", "--format", "json"]).args(args).output()?;
    let hits = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{e}: {l}")))
        .collect::<Result<Vec<Value>, _>>()?;
    Ok((o.status.code(), hits))
}

fn grep_decoded() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = tricky_session(dir.path());
    let f = f.to_str().unwrap();
    for (args, rev, role) in [
        (vec!["-F", "say \"hi\""], "aaaa1111", "user"),
        (vec!["-F", "\\ back"], "aaaa1111", "user"),
        (vec!["hi\" \\\\ back\\nslash"], "aaaa1111", "user"),
        (vec!["-i", "CAFÉ end|CAFÉ \u{1b}"], "aaaa1111", "user"),
        (vec!["ponder"], "bbbb2222", "thinking"),
        (vec!["-F", "echo \"q\""], "bbbb2222", "tool-call"),
        (vec!["-w", "q"], "bbbb2222", "tool-call"),
    ] {
        let mut a = args.clone();
        a.push(f);
        let (code, hits) = grep_hits(&a)?;
        check(code == Some(0) && hits.iter().any(|h| h["rev"] == rev && h["role"] == role), || {
            format!("{args:?}: exit {code:?}, {hits:?}")
        })?;
    }
    // Words: `q` is a whole word in the call and the result, not inside `quit`.
    let (_, hits) = grep_hits(&["-w", "q", f])?;
    let roles: BTreeSet<&str> = hits.iter().filter_map(|h| h["role"].as_str()).collect();
    check(roles == BTreeSet::from(["tool-call", "tool-result"]), || format!("{hits:?}"))?;
    // The JSON escape itself is not text anyone reads.
    let (code, hits) = grep_hits(&["-F", "\\\"hi", f])?;
    check(code == Some(1) && hits.is_empty(), || format!("found the escaping: {hits:?}"))?;
    // The text of a JSON hit is exact, the match's range on it.
    let (_, hits) = grep_hits(&["-F", "café", f])?;
    for h in &hits {
        let text = h["text"].as_str().unwrap();
        let [s, e] = [h["matches"][0][0].as_u64().unwrap() as usize, h["matches"][0][1].as_u64().unwrap() as usize];
        check(&text[s..e] == "café", || format!("{h}"))?;
    }
    check(hits.len() == 2, || format!("{hits:?}"))
}

/// Every hit's REV opens its entry in `show`, whose text holds the match.
fn grep_revs_open() -> TestResult {
    let o = at_home().args(["grep", "--format", "json", "-i", "test"]).output()?;
    let hits: Vec<Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    check(hits.len() > 50, || format!("{} hits", hits.len()))?;
    let formats: BTreeSet<&str> = hits.iter().filter_map(|h| h["format"].as_str()).collect();
    check(formats.len() == 5, || format!("{formats:?}"))?;
    for h in hits.iter().step_by(7) {
        let (session, rev) = (h["session"].as_str().unwrap(), h["rev"].as_str().unwrap());
        let shown = at_home().args(["show", session, rev, "--format", "json"]).output()?;
        check(shown.status.success(), || format!("show {session} {rev}: {}", stderr(&shown)))?;
        let v: Value = serde_json::from_slice(&shown.stdout)?;
        let text = h["text"].as_str().unwrap();
        let [s, e] = [h["matches"][0][0].as_u64().unwrap() as usize, h["matches"][0][1].as_u64().unwrap() as usize];
        let found = text[s..e].to_lowercase();
        check(strings(&v).iter().any(|t| t.to_lowercase().contains(&found)), || {
            format!("show {session} {rev} does not hold {found:?}")
        })?;
    }
    Ok(())
}

/// Every string in a JSON value (object keys too).
fn strings(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                out.push(s.clone());
                // Arguments written as a JSON string (Codex) hold strings of their own.
                if let Ok(inner) = serde_json::from_str::<Value>(s) {
                    if inner.is_object() {
                        out.extend(strings(&inner));
                    }
                }
            }
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => {
                out.extend(m.keys().cloned());
                stack.extend(m.values());
            }
            _ => {}
        }
    }
    out
}

fn grep_filters() -> TestResult {
    let f = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let f = f.to_str().unwrap();
    let (_, all) = grep_hits(&[".", "--role", "user", f])?;
    let (_, results) = grep_hits(&["-i", "test", "--role", "tool-result", f])?;
    check(!results.is_empty() && results.iter().all(|h| h["role"] == "tool-result"), || format!("{results:?}"))?;
    let (_, bash) = grep_hits(&["-i", "test", "--tool", "BASH", f])?;
    check(!bash.is_empty() && bash.iter().all(|h| h["tool"] == "bash"), || format!("{bash:?}"))?;
    // --on-path: only entries on the path to the leaf, and fewer than in the whole tree.
    let (_, on_path) = grep_hits(&[".", "--role", "user", "--on-path", "@", f])?;
    let path = pisces().args(["path", f, "@", "--entries"]).output()?;
    let ids: BTreeSet<String> = stdout(&path)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["id"].as_str().map(str::to_string))
        .collect();
    check(on_path.iter().all(|h| ids.contains(h["id"].as_str().unwrap_or(""))), || format!("{on_path:?}"))?;
    check(!on_path.is_empty() && on_path.len() < all.len(), || {
        format!("{} on the path of {}", on_path.len(), all.len())
    })
}

fn grep_counts() -> TestResult {
    let json = at_home().args(["grep", "--format", "json", "npm test"]).output()?;
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    for l in stdout(&json).lines() {
        let v: Value = serde_json::from_str(l)?;
        *per.entry(v["session"].as_str().unwrap().to_string()).or_default() += 1;
    }
    let c = at_home().args(["grep", "-c", "npm test"]).output()?;
    let counted: BTreeMap<String, usize> = stdout(&c)
        .lines()
        .map(|l| {
            let (s, n) = l.rsplit_once(':').unwrap();
            (s.to_string(), n.parse().unwrap())
        })
        .collect();
    check(!per.is_empty() && per == counted, || format!("{per:?}\n{counted:?}"))?;
    let l = at_home().args(["grep", "-l", "npm test"]).output()?;
    let mut named: Vec<String> = stdout(&l).lines().map(str::to_string).collect();
    named.sort();
    check(named == per.keys().cloned().collect::<Vec<_>>(), || format!("{named:?}"))?;
    let none = at_home().args(["grep", "no such text anywhere 7f3a"]).output()?;
    check(none.status.code() == Some(1) && none.stdout.is_empty(), || stderr(&none))?;
    let bad = at_home().args(["grep", "(unclosed"]).output()?;
    check(bad.status.code() == Some(2), || stderr(&bad))?;
    let missing = at_home().args(["grep", "x", "/nonexistent/file.jsonl"]).output()?;
    check(missing.status.code() == Some(2), || stderr(&missing))
}

/// A file whose bytes do not hold the pattern is not read: a broken one is not reported
/// then, since it cannot hide a hit; a broken one that holds it is (exit 2), and so is a
/// file that cannot be opened.
fn grep_skips_files() -> TestResult {
    let dir = tempfile::tempdir()?;
    let good = tricky_session(dir.path());
    // A pi session's lines without its header: pi refuses it whole.
    let broken = |name: &str, text: &str| -> std::io::Result<PathBuf> {
        let p = dir.path().join(name);
        let line = serde_json::json!({"type":"message","id":"dddd4444","parentId":null,"timestamp":"2026-11-01T00:00:04.000Z",
            "message":{"role":"user","content":text,"timestamp":4}});
        std::fs::write(&p, format!("{line}\n"))?;
        Ok(p)
    };
    let with = broken("broken-with.jsonl", "the needle is here")?;
    let without = broken("broken-without.jsonl", "nothing to see")?;
    let files = [&good, &with, &without].map(|p| p.to_str().unwrap().to_string());
    let o = pisces().args(["grep", "needle"]).args(&files).output()?;
    let err = stderr(&o);
    check(o.status.code() == Some(2) && err.contains("broken-with.jsonl") && !err.contains("broken-without"), || {
        format!("exit {:?}: {err}", o.status.code())
    })?;
    let o = pisces().args(["grep", "café"]).args(&files[..1]).arg(&files[2]).output()?;
    check(o.status.code() == Some(0) && stderr(&o).is_empty(), || {
        format!("exit {:?}: {}", o.status.code(), stderr(&o))
    })?;
    // Decoding everything reads every file, and reports both.
    let o = pisces().args(["grep", "--no-prefilter", "café"]).args(&files).output()?;
    let err = stderr(&o);
    check(o.status.code() == Some(2) && err.contains("broken-with") && err.contains("broken-without"), || err.clone())?;
    let missing = pisces().args(["grep", "café", files[0].as_str(), "/nonexistent/file.jsonl"]).output()?;
    check(missing.status.code() == Some(2), || stderr(&missing))
}

/// A Codex fork family searched whole reports each line once, in the session whose file
/// holds it; a fork searched alone still finds what it inherited (in its parent's file),
/// and nothing found alone is missing from the search of all.
fn grep_each_line_once() -> TestResult {
    let dir = testdata().join("codex-0.171.0/03-forks/sessions/2026/12/02");
    let mut files: Vec<String> = fs::read_dir(&dir)?.map(|e| e.unwrap().path().to_str().unwrap().to_string()).collect();
    files.sort();
    let place = |h: &Value| {
        let file = h["file"].as_str().or(h["session"].as_str()).unwrap().to_string();
        (
            Path::new(&file).file_name().unwrap().to_str().unwrap().to_string(),
            h["line"].as_u64().unwrap(),
            h["text"].to_string(),
        )
    };
    for pattern in ["f-start", "f-b]]", "(?i)test|README"] {
        let mut args = vec![pattern];
        args.extend(files.iter().map(String::as_str));
        let (code, all) = grep_hits(&args)?;
        check(code == Some(0), || format!("{pattern}: exit {code:?}"))?;
        let places: Vec<_> = all.iter().map(place).collect();
        let distinct: BTreeSet<_> = places.iter().cloned().collect();
        check(distinct.len() == places.len() && all.iter().all(|h| h["file"].is_null()), || {
            format!("{pattern}: {} hits, {} places: {all:?}", places.len(), distinct.len())
        })?;
        let mut alone = BTreeSet::new();
        for f in &files {
            let (_, hits) = grep_hits(&[pattern, f])?;
            alone.extend(hits.iter().map(place));
        }
        check(alone == distinct, || format!("{pattern}: alone {alone:?}\nall {distinct:?}"))?;
    }
    // The fork of a fork (D) alone finds the first prompt, which it inherited from A.
    let d = files.iter().find(|f| f.contains("7f30")).unwrap();
    let (_, hits) = grep_hits(&["f-start", d])?;
    check(hits.iter().any(|h| h["file"].as_str().is_some_and(|f| f.contains("7b32"))), || format!("{hits:?}"))
}

fn grep_safe() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = tricky_session(dir.path());
    let o = pisces().args(["grep", "--color", "always", "pwned"]).arg(&f).output()?;
    let text = stdout(&o);
    // Color is ours (SGR); the session's OSC title change is not passed through.
    check(o.status.success() && !text.contains("\u{1b}]") && !text.contains('\u{7}'), || format!("{text:?}"))?;
    let (_, hits) = grep_hits(&["pwned", f.to_str().unwrap()])?;
    check(hits.iter().any(|h| h["text"].as_str().unwrap().contains("\u{1b}]0;pwned\u{7}")), || format!("{hits:?}"))
}

/// Patterns over every corpus: plain words, what JSON escapes, non-ASCII, case folding,
/// word boundaries, classes that take a quote, line breaks.
const PATTERNS: [(&str, &str, &[&str]); 14] = [
    ("word", "test", &[]),
    ("ignore_case", "TODO", &["-i"]),
    ("whole_word", "fix", &["-w"]),
    ("quote", "\"", &["-F"]),
    ("backslash", "\\", &["-F"]),
    ("newline", "\\n[A-Z]", &[]),
    ("non_ascii", "—|é|…", &[]),
    ("kelvin_folding", "k", &["-i"]),
    ("slash_path", "src/", &["-F"]),
    ("any_char", "a.b", &[]),
    ("negated_class", "[^a-z ]{3}x", &[]),
    ("tool_args", "command\\tnpm", &[]),
    // Anchors and word boundaries fall elsewhere in a raw line than in the text.
    ("line_start", "^Fixed", &[]),
    ("word_after_newline", "\\bTAP", &[]),
];

/// The corpora, each a list of session files (or names).
fn corpora() -> Vec<(String, Vec<String>)> {
    let td = testdata();
    let mut out = Vec::new();
    for dir in ["pi-1.6.0", "pi-0.73.1", "claude-code-2.1.332", "claude-code-log", "codex-older", "edge", "real"] {
        let files = walk(&td.join(dir)).into_iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
        if !files.is_empty() {
            out.push((dir.to_string(), files));
        }
    }
    out.push((
        "codex-0.171.0".into(),
        walk(&td.join("codex-0.171.0")).iter().map(|p| p.display().to_string()).collect(),
    ));
    out.push((
        "omp-18.2.3".into(),
        walk(&td.join("omp-18.2.3/home")).iter().map(|p| p.display().to_string()).collect(),
    ));
    out
}

fn prefilter_equals_reference(pattern: &str, flags: &[&str]) -> TestResult {
    let run = |files: &[String], reference: bool, openclaw: bool| -> std::io::Result<Output> {
        let mut c = pisces();
        c.args(["grep", "--format", "json"]).args(flags);
        if reference {
            c.arg("--no-prefilter");
        }
        c.arg("--").arg(pattern);
        if openclaw {
            c.env("OPENCLAW_STATE_DIR", openclaw_state());
        }
        c.args(files).output()
    };
    let mut total = 0;
    for (name, files) in corpora() {
        let (fast, slow) = (run(&files, false, false)?, run(&files, true, false)?);
        // The reference reads every file, and reports each one it cannot read; the
        // prefiltered search reads only the files that may hold a match (see
        // `grep_reads_only_files_that_may_match`), so it reports some of those problems.
        let errors = |o: &Output| stderr(o).lines().map(str::to_string).collect::<BTreeSet<String>>();
        let (fast_errors, slow_errors) = (errors(&fast), errors(&slow));
        check(fast_errors.is_subset(&slow_errors), || {
            format!("{name}: problems only the prefiltered search reports: {:?}", fast_errors.difference(&slow_errors))
        })?;
        let status = |o: &Output, errors: &BTreeSet<String>| match o.status.code() {
            Some(2) if !errors.is_empty() => (!o.stdout.is_empty()).then_some(0).or(Some(1)),
            code => code,
        };
        check(status(&fast, &fast_errors) == status(&slow, &slow_errors), || {
            format!("{name}: exit {:?} vs {:?}", fast.status.code(), slow.status.code())
        })?;
        let (a, b) = (stdout(&fast), stdout(&slow));
        if a != b {
            let first = a.lines().zip(b.lines()).find(|(x, y)| x != y);
            return Err(format!(
                "{name}: {} hits, the reference {}; first difference {first:?}",
                a.lines().count(),
                b.lines().count()
            )
            .into());
        }
        total += a.lines().count();
    }
    // OpenClaw's sessions, found in its databases.
    let (fast, slow) = (run(&[], false, true)?, run(&[], true, true)?);
    check(stdout(&fast) == stdout(&slow), || "openclaw: prefiltered and reference hits differ".into())?;
    total += stdout(&fast).lines().count();
    check(total > 0, || format!("`{pattern}` found nothing in any corpus"))
}
