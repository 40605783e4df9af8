//! OpenClaw transcripts (`testdata/openclaw-2026.9.6/`), checked against OpenClaw itself.
//!
//! `state/` is a state folder OpenClaw 2026.9.6 wrote running the scenarios of
//! tools/openclaw-oracle/scenarios.py (its SQLite databases checkpointed, with no writer's
//! log beside them). `goldens/<id>.json` is the Chat Completions request OpenClaw sent when
//! it resumed that session once more (tools/openclaw-oracle/goldens.py): the context it
//! built from its own rows, as the model got it. pisces prints what the rows hold; OpenClaw
//! adds to each request things it never stores (docs/openclaw-format.md §5), and
//! `as_sent` below applies exactly those to pisces's output before comparing, so that
//! everything else must be equal. `blocks/` is a second corpus of the same kind (its own
//! state folder): assistant turns of several text blocks, and a tool call with no output.

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use libtest_mimic::Trial;
use serde_json::{json, Value};

use crate::common::{check, first_diff, pisces, stderr, stdout, stdout_json, testdata, TestResult};

fn corpus() -> PathBuf {
    testdata().join("openclaw-2026.9.6")
}

fn state() -> PathBuf {
    corpus().join("state")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// Every golden of the corpora, with the corpus folder it belongs to.
fn goldens() -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    for dir in [corpus(), corpus().join("blocks"), corpus().join("more")] {
        let mut files: Vec<PathBuf> = fs::read_dir(dir.join("goldens")).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        out.extend(files.iter().map(|p| (dir.clone(), read_json(p))));
    }
    out
}

/// `pisces` reading the corpus's state folder, with no other agent's sessions in reach.
fn oc() -> Command {
    oc_in(&corpus())
}

/// `pisces` reading the state folder of the corpus in `dir`.
fn oc_in(dir: &Path) -> Command {
    let mut c = pisces();
    c.env("OPENCLAW_STATE_DIR", dir.join("state"));
    c
}

fn oc_json(args: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    stdout_json(&oc().args(args).output()?)
}

fn oc_json_in(dir: &Path, args: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    stdout_json(&oc_in(dir).args(args).output()?)
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (dir, g) in goldens() {
        let name = format!("{}-{}", g["scenario"].as_str().unwrap(), &g["session_id"].as_str().unwrap()[..8]);
        trials.push(Trial::test(format!("openclaw::context::{name}"), move || context_matches(&dir, &g)));
    }
    trials.extend([
        Trial::test("openclaw::leaf_rows_and_resets_shape_the_tree", tree_shape),
        Trial::test("openclaw::found_by_name_by_id_and_by_prefix", found),
        Trial::test("openclaw::exported_jsonl_reads_as_the_store", exports_match),
        Trial::test("openclaw::deleted_transcript_archive_reads", deleted_archive),
        Trial::test("openclaw::fork_is_a_pi_session_with_the_same_context", fork_to_pi),
        Trial::test("openclaw::appends_refused_store_unchanged", appends_refused),
        Trial::test("openclaw::check_of_a_state_folder_checks_every_stored_session", check_state_folder),
        Trial::test("openclaw::convert_names_no_parent_pi_cannot_open", convert_parent),
        Trial::test("openclaw::cached_until_the_database_changes", cached_until_written),
        Trial::test("openclaw::reads_while_a_writer_commits", concurrent_writer),
        Trial::test("openclaw::reads_what_only_the_wal_holds", crashed_writer),
    ]);
    trials
}

/// OpenClaw's time envelope: `[Thu 2026-12-03 08:40 UTC] ` from the message's own time
/// (the corpus was written with UTC as the local zone).
fn envelope(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    format!("[{weekday} {y:04}-{m:02}-{d:02} {:02}:{:02} UTC] ", secs / 3600, secs / 60 % 60)
}

fn text_blocks(content: &Value) -> Vec<Value> {
    match content {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(a) => a.clone(),
        _ => vec![],
    }
}

/// The request OpenClaw sent, from pisces's `--format openai` body, per
/// docs/openclaw-format.md §5: what OpenClaw adds to each request and never stores.
/// - adjacent user turns are sent as one, their blocks in order;
/// - a user turn the user typed gets the time envelope of the last typed turn in it;
/// - the first user turn ends with the run's `Runtime:` line (host, OS, Node: taken from
///   the golden, the one thing pisces cannot know).
///
/// `typed` holds the time of each user turn the user typed, in order (from `--format json`).
fn as_sent(openai: &[Value], typed: &[i64], runtime: &str) -> Vec<Value> {
    let mut typed = typed.iter();
    let mut out: Vec<(Value, Option<i64>)> = Vec::new();
    for m in openai {
        let time = if m["role"] == "user" && m["content"].is_string() { typed.next().copied() } else { None };
        if m["role"] == "user" {
            if let Some((prev, prev_time)) = out.last_mut().filter(|(p, _)| p["role"] == "user") {
                let mut blocks = text_blocks(&prev["content"]);
                blocks.extend(text_blocks(&m["content"]));
                prev["content"] = Value::Array(blocks);
                *prev_time = time.or(*prev_time);
                continue;
            }
        }
        out.push((m.clone(), time));
    }
    let mut out: Vec<Value> = out
        .into_iter()
        .map(|(mut m, time)| {
            if let Some(ms) = time {
                match &mut m["content"] {
                    Value::String(s) => s.insert_str(0, &envelope(ms)),
                    Value::Array(a) => {
                        let t = a[0]["text"].as_str().unwrap_or_default();
                        a[0]["text"] = Value::String(format!("{}{t}", envelope(ms)));
                    }
                    _ => {}
                }
            }
            m
        })
        .collect();
    if let Some(first) = out.iter_mut().find(|m| m["role"] == "user") {
        match &mut first["content"] {
            Value::String(s) => s.push_str(&format!("\n\n{runtime}")),
            Value::Array(a) => a.push(json!({"type": "text", "text": runtime})),
            _ => {}
        }
    }
    out
}

/// The `Runtime: …` line of the golden's request: the last text of its first user turn.
fn runtime_line(golden: &[Value]) -> Option<String> {
    let first = golden.iter().find(|m| m["role"] == "user")?;
    let text = match &first["content"] {
        Value::String(s) => s.rsplit_once("\n\n")?.1.to_string(),
        Value::Array(a) => a.last()?["text"].as_str()?.to_string(),
        _ => return None,
    };
    text.starts_with("Runtime: ").then_some(text)
}

/// At the session's active leaf, pisces's messages are the ones OpenClaw sent.
fn context_matches(dir: &Path, g: &Value) -> TestResult {
    let name = format!("openclaw:{}/{}", g["agent"].as_str().unwrap(), g["session_id"].as_str().unwrap());
    let want = g["expected_context"].as_array().unwrap();
    let runtime = runtime_line(want).ok_or("the golden's first user turn has no Runtime line")?;
    check(runtime.contains(&format!("sessionId={}", g["session_id"].as_str().unwrap())), || {
        format!("the Runtime line names another session: {runtime}")
    })?;
    let agent_messages = oc_json_in(dir, &["path", &name, "--format", "json"])?;
    let typed: Vec<i64> = agent_messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" && m["content"].is_string())
        .filter_map(|m| m["timestamp"].as_i64())
        .collect();
    let openai = oc_json_in(dir, &["path", &name, "--format", "openai"])?;
    let got = as_sent(openai["messages"].as_array().unwrap(), &typed, &runtime);
    let (got, want) = (Value::Array(got), Value::Array(want.clone()));
    match first_diff(&got, &want, "$") {
        None => Ok(()),
        Some(d) => Err(format!("{name}: {d}").into()),
    }
}

fn tree_text(name: &str) -> Result<String, libtest_mimic::Failed> {
    let o = oc().args(["tree", name, "--format", "text", "--color", "never"]).output()?;
    check(o.status.success(), || stderr(&o))?;
    Ok(stdout(&o))
}

/// The rewound session: the leaf row hangs under its target and the next turn continues
/// from the target; the switched-back copy's leaf is the target of its last leaf row; the
/// reset session shows its boundary.
fn tree_shape() -> TestResult {
    let cut = "openclaw:main/8e340dfd-ab8e-47af-bcf9-210c9cecde8c";
    let leaves = oc_json(&["leaves", cut, "--format", "json"])?;
    let text = leaves.to_string();
    check(text.contains("c5dd480c-879e-47c6-922f-fa16a182076e"), || format!("leaves: {text}"))?;
    let t = tree_text(cut)?;
    check(t.contains("[leaf → fdd4c9f2]"), || t.clone())?;
    // The fourth turn is a sibling of the third: both hang under the second answer.
    let path = oc_json(&["path", cut, "--format", "json"])?;
    let ids: Vec<&str> = path["pathIds"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    check(!ids.contains(&"7101f857") && ids.contains(&"fdd4c9f2-3395-4423-b8bc-f62320d6abd7"), || {
        format!("path: {ids:?}")
    })?;
    let back = oc_json(&["path", "openclaw:main/e387dc09-465a-400a-94fe-70aa162b3207", "--format", "json"])?;
    check(back["leafId"] == "7dc0aeeb-88ab-4a9f-8208-41584f7ee8b8", || format!("leaf {}", back["leafId"]))?;
    let t = tree_text("openclaw:main/665e02db-ead5-478b-a025-90018dbb6f38")?;
    check(t.contains("[context reset]"), || t.clone())?;
    // Before the reset, the old turn is still in the tree, and `path` at it sees it.
    let before =
        oc_json(&["path", "openclaw:main/665e02db-ead5-478b-a025-90018dbb6f38", "fb01d64f", "--format", "json"])?;
    check(before["messages"].to_string().contains("Remember this"), || before["messages"].to_string())
}

fn found() -> TestResult {
    let id = "4c2a3b29-73ad-4ed6-8467-d8810fe4e562";
    for arg in
        [format!("openclaw:helper/{id}"), format!("openclaw:helper/{}", &id[..6]), id.to_string(), id[..8].to_string()]
    {
        let doc = oc_json(&["path", &arg, "--format", "json"])?;
        check(doc["session"]["id"] == id && doc["session"]["file"] == format!("openclaw:helper/{id}"), || {
            format!("{arg}: {}", doc["session"])
        })?;
    }
    let o = oc().args(["path", &format!("openclaw:nobody/{id}")]).output()?;
    let e = stderr(&o);
    check(o.status.code() == Some(2) && e.contains("helper, main"), || e.clone())?;
    let o = pisces().args(["path", id]).output()?;
    check(o.status.code() == Some(2), || "found without OPENCLAW_STATE_DIR".into())
}

/// `exports/<id>.jsonl` holds the same rows as JSONL: the same context.
fn exports_match() -> TestResult {
    for (dir, g) in goldens() {
        let id = g["session_id"].as_str().unwrap();
        let stored = oc_json_in(
            &dir,
            &["path", &format!("openclaw:{}/{id}", g["agent"].as_str().unwrap()), "--format", "json"],
        )?;
        let file = dir.join("exports").join(format!("{id}.jsonl"));
        let exported = oc_json_in(&dir, &["path", file.to_str().unwrap(), "--format", "json"])?;
        check(exported["session"]["agent"] == "OpenClaw", || {
            format!("{id}: read as {}", exported["session"]["agent"])
        })?;
        if let Some(d) = first_diff(&exported["messages"], &stored["messages"], "$") {
            return Err(format!("{id}: {d}").into());
        }
        check(exported["leafId"] == stored["leafId"], || {
            format!("{id}: leaf {} vs {}", exported["leafId"], stored["leafId"])
        })?;
    }
    Ok(())
}

/// `sessions.delete` left the transcript as a zstd JSONL archive: it reads.
fn deleted_archive() -> TestResult {
    let dir = state().join("agents/main/sessions");
    let f = fs::read_dir(&dir)?.map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".zst"));
    let f = f.ok_or("no archive in the corpus")?;
    let doc = oc_json(&["path", f.to_str().unwrap(), "--format", "json"])?;
    check(doc["messages"].to_string().contains("Short-lived [[d1]]"), || doc.to_string())
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push((e.clone(), fs::read(&e).unwrap()));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A fork is a pi session (version 3) whose context is the source's.
fn fork_to_pi() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let out = tmp.path().join("fork.jsonl");
    let src = "openclaw:main/ae7655dd-00c6-4519-a9dc-10db1c135cb9";
    let o = oc().args(["fork", src, "@", "-o", out.to_str().unwrap()]).output()?;
    check(o.status.success(), || stderr(&o))?;
    let first = fs::read_to_string(&out)?.lines().next().unwrap_or_default().to_string();
    let header: Value = serde_json::from_str(&first)?;
    check(header["version"] == 3 && header["type"] == "session", || first.clone())?;
    let forked = oc_json(&["path", out.to_str().unwrap(), "--format", "json"])?;
    check(forked["session"]["agent"] == "pi", || format!("read as {}", forked["session"]["agent"]))?;
    let source = oc_json(&["path", src, "--format", "json"])?;
    match first_diff(&forked["messages"], &source["messages"], "$") {
        None => Ok(()),
        Some(d) => Err(d.into()),
    }
}

/// Nothing pisces does writes into OpenClaw's state folder, and appends say why not.
fn appends_refused() -> TestResult {
    let before = snapshot(&state());
    let src = "openclaw:main/665e02db-ead5-478b-a025-90018dbb6f38";
    let tries: [&[&str]; 4] = [
        &["label", src, "@", "x"],
        &["agent", "--session", src, "-p", "hi", "--model", "x/y", "--base-url", "http://127.0.0.1:9/v1"],
        &["summarize", src, "@", "fb01d64f", "--offline", "--append"],
        &["compact", src, "--offline", "--append"],
    ];
    let cwd = tempfile::tempdir()?;
    for args in tries {
        let o = oc().current_dir(cwd.path()).args(args).output()?;
        let e = stderr(&o);
        check(!o.status.success() && e.contains("does not write to") && e.contains("pisces fork"), || {
            format!("{args:?}: exit {:?}: {e}", o.status.code())
        })?;
    }
    for args in [&["tree", src][..], &["check", src], &["leaves", src], &["path", src, "--format", "llm"]] {
        let o = oc().args(args).output()?;
        check(o.status.code() != Some(2), || format!("{args:?}: {}", stderr(&o)))?;
    }
    // Not a name for a new file either (`openclaw:main/…` as a path).
    check(fs::read_dir(cwd.path())?.next().is_none(), || "a file was made in the current directory".into())?;
    let after = snapshot(&state());
    let names = |s: &[(PathBuf, Vec<u8>)]| s.iter().map(|(p, _)| p.clone()).collect::<BTreeSet<_>>();
    check(names(&before) == names(&after), || format!("files now: {:?}", names(&after)))?;
    check(before == after, || "a file of the state folder changed".into())
}

/// A copy of the corpus's main database, in its own state folder.
fn scratch_state() -> Result<(tempfile::TempDir, PathBuf), libtest_mimic::Failed> {
    let tmp = tempfile::tempdir()?;
    let db = tmp.path().join("agents/main/agent/openclaw-agent.sqlite");
    fs::create_dir_all(db.parent().unwrap())?;
    Ok((tmp, db))
}

fn writer(db: &Path, session: &str, extra: &[&str]) -> Result<std::process::Child, libtest_mimic::Failed> {
    let src = state().join("agents/main/agent/openclaw-agent.sqlite");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/openclaw-oracle/writer.py");
    Ok(Command::new("python3")
        .arg(script)
        .arg(src)
        .arg(db)
        .args(["--session", session])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()?)
}

fn message_count(doc: &Value) -> usize {
    doc["messages"].as_array().map_or(0, Vec::len)
}

/// While a writer commits (WAL mode, OpenClaw's pragmas), every read sees a whole
/// committed state: the context grows by whole user/assistant pairs and never fails.
fn concurrent_writer() -> TestResult {
    let (tmp, db) = scratch_state()?;
    let session = "ae7655dd-00c6-4519-a9dc-10db1c135cb9";
    let name = format!("openclaw:main/{session}");
    let mut child = writer(&db, session, &["--seconds", "3", "--interval", "0.02"])?;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready: Value = serde_json::from_str(&lines.next().ok_or("writer said nothing")??)?;
    check(ready["ready"] == true, || ready.to_string())?;
    let read = || -> Result<Value, libtest_mimic::Failed> {
        stdout_json(&pisces().env("OPENCLAW_STATE_DIR", tmp.path()).args(["path", &name, "--format", "json"]).output()?)
    };
    let base = message_count(&read()?);
    let mut seen = BTreeSet::new();
    let mut reads = 0;
    while child.try_wait()?.is_none() && reads < 200 {
        let doc = read()?;
        let n = message_count(&doc);
        check(n >= base && (n - base).is_multiple_of(2), || format!("read {reads}: {n} messages (started at {base})"))?;
        seen.insert(n);
        reads += 1;
    }
    let done: Value = serde_json::from_str(&lines.next().ok_or("writer did not finish")??)?;
    child.wait()?;
    let last = read()?;
    check(last["leafId"] == done["last_id"], || {
        format!("leaf {} after the writer's {}", last["leafId"], done["last_id"])
    })?;
    check(seen.len() > 1, || format!("{reads} reads saw only {seen:?} messages"))
}

/// A writer that died before a checkpoint: its last commits are only in the `-wal`;
/// pisces reads them, and leaves both files as they were.
fn crashed_writer() -> TestResult {
    let (tmp, db) = scratch_state()?;
    let session = "b732fece-6e8d-475a-a200-277d93a9a837";
    let child = writer(&db, session, &["--seconds", "0.3", "--crash"])?;
    let out = child.wait_with_output()?;
    let done: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().ok_or("no output")?)?;
    let wal = db.with_file_name("openclaw-agent.sqlite-wal");
    check(wal.metadata().is_ok_and(|m| m.len() > 0), || "the writer left no WAL".into())?;
    let before = (fs::read(&db)?, fs::read(&wal)?);
    let doc = stdout_json(
        &pisces()
            .env("OPENCLAW_STATE_DIR", tmp.path())
            .args(["path", &format!("openclaw:main/{session}"), "--format", "json"])
            .output()?,
    )?;
    check(doc["leafId"] == done["last_id"], || format!("leaf {} vs the writer's {}", doc["leafId"], done["last_id"]))?;
    check((fs::read(&db)?, fs::read(&wal)?) == before, || "reading changed the database or its WAL".into())
}

/// The sessions each database under `state` holds, by name, read with Python's sqlite3
/// (not pisces's reader).
fn stored_names(state: &Path) -> Result<BTreeSet<String>, libtest_mimic::Failed> {
    let mut names = BTreeSet::new();
    for agent in fs::read_dir(state.join("agents"))? {
        let agent = agent?.path();
        let db = agent.join("agent/openclaw-agent.sqlite");
        if !db.is_file() {
            continue;
        }
        let o = Command::new("python3")
            .args(["-c", "import sqlite3,sys\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro&immutable=1',uri=True)\nfor (i,) in c.execute('SELECT DISTINCT session_id FROM transcript_events'): print(i)"])
            .arg(&db)
            .output()?;
        check(o.status.success(), || stderr(&o))?;
        let name = agent.file_name().unwrap().to_string_lossy().into_owned();
        names.extend(String::from_utf8_lossy(&o.stdout).lines().map(|id| format!("openclaw:{name}/{id}")));
    }
    Ok(names)
}

/// `check DIR` on a state folder checks every session of every agent's database (named as
/// `ls` names them), on one agent's folder only its sessions, and writes nothing; a
/// database it cannot read is an error naming it.
fn check_state_folder() -> TestResult {
    let before = snapshot(&state());
    let want = stored_names(&state())?;
    check(want.len() > 5, || format!("only {} stored sessions in the corpus", want.len()))?;
    let names = |doc: &Value| -> BTreeSet<String> {
        doc["files"].as_array().into_iter().flatten().filter_map(|f| f["file"].as_str().map(str::to_string)).collect()
    };
    let o = oc().args(["check", state().to_str().unwrap(), "--format", "json"]).output()?;
    check(o.status.success(), || stderr(&o))?;
    let doc: Value = serde_json::from_slice(&o.stdout)?;
    check(names(&doc) == want, || format!("checked {:?}, want {want:?}", names(&doc)))?;
    let main = state().join("agents/main");
    let doc = oc_json(&["check", main.to_str().unwrap(), "--format", "json"])?;
    let want_main: BTreeSet<String> = want.iter().filter(|n| n.starts_with("openclaw:main/")).cloned().collect();
    check(names(&doc) == want_main, || format!("checked {:?} in main, want {want_main:?}", names(&doc)))?;
    check(snapshot(&state()) == before, || "a file of the state folder changed".into())?;
    let tmp = tempfile::tempdir()?;
    let bad = tmp.path().join("agents/x/agent/openclaw-agent.sqlite");
    fs::create_dir_all(bad.parent().unwrap())?;
    fs::write(&bad, "not a database\n")?;
    let o = oc().args(["check", tmp.path().to_str().unwrap()]).output()?;
    let text = format!("{}{}", stdout(&o), stderr(&o));
    check(o.status.code() == Some(2) && text.contains("openclaw-agent.sqlite"), || {
        format!("exit {:?}: {text}", o.status.code())
    })
}

/// `convert --to pi` writes `parentSession` as `fork` does: nothing for a session in the
/// database (pi cannot open it), the absolute path of a source that is a file (here an
/// exported transcript named relative to the working directory).
fn convert_parent() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let header = |args: &[&str], cwd: &Path| -> Result<Value, libtest_mimic::Failed> {
        let o = oc().current_dir(cwd).args(args).output()?;
        check(o.status.success(), || stderr(&o))?;
        let out = stdout(&o).trim().to_string();
        let first = fs::read_to_string(&out)?.lines().next().unwrap_or_default().to_string();
        Ok(serde_json::from_str(&first)?)
    };
    let out = tmp.path().join("a.jsonl");
    let h = header(&["convert", "openclaw:main/665e02db", "--to", "pi", "-o", out.to_str().unwrap()], tmp.path())?;
    check(h.get("parentSession").is_none(), || format!("a stored session's convert names a parent: {h}"))?;
    let export = fs::read_dir(corpus().join("exports"))?
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"));
    let export = export.ok_or("no exported transcript in the corpus")?;
    let out = tmp.path().join("b.jsonl");
    let rel = export.strip_prefix(corpus()).unwrap().to_str().unwrap().to_string();
    let h = header(&["convert", &rel, "--to", "pi", "-o", out.to_str().unwrap()], &corpus())?;
    check(h["parentSession"] == export.to_str().unwrap(), || {
        format!("parentSession {}, want {}", h["parentSession"], export.display())
    })
}

/// `ls` and `stats` keep the facts of stored sessions in the cache, keyed on their
/// database: the second run takes them all from it; after a writer appends to one
/// session (and closes, checkpointing its log), and while a writer's log is there, every
/// answer is the one `--no-cache` gives.
fn cached_until_written() -> TestResult {
    let (tmp, db) = scratch_state()?;
    let cache = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let run = |args: &[&str], cached: bool| -> Result<Value, libtest_mimic::Failed> {
        let mut c = pisces();
        c.env("OPENCLAW_STATE_DIR", tmp.path()).env("HOME", home.path()).env("XDG_CACHE_HOME", cache.path());
        if !cached {
            c.arg("--no-cache");
        }
        stdout_json(&c.args(args).output()?)
    };
    let session = "b732fece-6e8d-475a-a200-277d93a9a837";
    // The writer copies the corpus's database into the scratch state first.
    let out = writer(&db, session, &["--seconds", "0"])?.wait_with_output()?;
    check(out.status.success(), || String::from_utf8_lossy(&out.stdout).into_owned())?;
    let same = |when: &str| -> TestResult {
        for args in
            [&["ls", "--all", "--format", "json"][..], &["stats", "--all", "--by", "session", "--format", "json"]]
        {
            let (mut with, mut without) = (run(args, true)?, run(args, false)?);
            for d in [&mut with, &mut without] {
                if let Some(o) = d.as_object_mut() {
                    o.remove("cached");
                    o.remove("extended");
                }
            }
            check(with == without, || {
                format!("{when}: `{}` with the cache:\n{with}\nwithout:\n{without}", args.join(" "))
            })?;
        }
        Ok(())
    };
    same("a cold cache")?;
    let warm = run(&["stats", "--all", "--format", "json"], true)?;
    check(warm["cached"] == warm["sessions"] && warm["sessions"].as_u64() > Some(1), || format!("warm: {warm}"))?;
    let out = writer(&db, session, &["--seconds", "0.2", "--no-copy"])?.wait_with_output()?;
    check(out.status.success(), || String::from_utf8_lossy(&out.stdout).into_owned())?;
    same("after a writer appended")?;
    let after = run(&["stats", "--all", "--format", "json"], true)?;
    check(after["total"]["responses"].as_u64() > warm["total"]["responses"].as_u64(), || {
        format!("the appended replies are not counted: {} then {}", warm["total"], after["total"])
    })?;
    let out = writer(&db, session, &["--seconds", "0.2", "--no-copy", "--crash"])?.wait_with_output()?;
    check(out.status.success() || out.status.code().is_some(), || "the crashing writer did not run".into())?;
    same("with a writer's log left")?;
    let logged = run(&["stats", "--all", "--format", "json"], true)?;
    check(logged["cached"] == 0, || {
        format!("sessions taken from the cache while the log is there: {}", logged["cached"])
    })
}
