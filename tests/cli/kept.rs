//! Kept session indexes (`session::kept`): a large session read again after an append
//! reads only the new lines, and answers exactly as a whole read (`--no-cache`) does,
//! whatever happened to the file or to the index in between.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::{json, Value};

use crate::common::{pisces, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("kept::an_appended_session_reads_as_a_whole_read", appended),
        Trial::test("kept::changes_that_need_a_whole_read", changes),
        Trial::test("kept::a_damaged_index_is_never_used", damaged),
        Trial::test("kept::processes_at_once", at_once),
        Trial::test("kept::oh_my_pi_appended_and_a_blob_deleted", omp),
        Trial::test("kept::ls_and_stats_of_a_growing_session", store_growth),
    ]
}

/// A deterministic pi session: entries chained one under the other, with a branch now and
/// then (a parent picked among the earlier entries), tool calls and their results, labels,
/// names, model changes and compactions. Each line is padded with text, so that a few
/// thousand entries make the megabyte from which sessions are kept.
struct Gen {
    x: u64,
    lines: Vec<String>,
    ids: Vec<String>,
    second: u64,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let header = json!({"type": "session", "version": 3, "id": format!("01a2b3c4-0000-7000-8000-{seed:012x}"),
            "timestamp": "2026-11-01T10:00:00.000Z", "cwd": "/home/dev/proj"});
        Gen {
            x: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            lines: vec![header.to_string()],
            ids: Vec::new(),
            second: 0,
        }
    }

    /// An oh-my-pi session: its title slot (a 256-byte line) before the header.
    fn omp(seed: u64) -> Gen {
        let mut g = Gen::new(seed);
        let slot = json!({"type": "title", "v": 1, "title": "Kept test", "source": "user",
            "updatedAt": "2026-12-03T08:35:46.966Z", "pad": ""})
        .to_string();
        let pad = " ".repeat(255 - slot.len());
        g.lines.insert(0, slot.replace("\"pad\":\"\"", &format!("\"pad\":\"{pad}\"")));
        g
    }

    fn next(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }

    fn push(&mut self, parent: Option<String>, mut v: Value) -> String {
        self.second += 1;
        let id = format!("{:08x}", 0x2000_0000u64 + self.ids.len() as u64);
        v["id"] = json!(id);
        v["parentId"] = json!(parent);
        let s = self.second;
        v["timestamp"] =
            json!(format!("2026-11-{:02}T{:02}:{:02}:{:02}.000Z", 1 + s / 86400, s / 3600 % 24, s / 60 % 60, s % 60));
        self.lines.push(v.to_string());
        self.ids.push(id.clone());
        id
    }

    /// `n` more entries (a tool call and its result count as two).
    fn entries(&mut self, n: usize) {
        let target = self.ids.len() + n;
        while self.ids.len() < target {
            let r = self.next();
            let last = self.ids.last().cloned();
            let pick = self.next() as usize;
            let parent = if r.is_multiple_of(29) && !self.ids.is_empty() {
                Some(self.ids[pick % self.ids.len()].clone())
            } else {
                last
            };
            let pad = "lorem ipsum dolor sit amet ".repeat(20 + (r % 8) as usize);
            let ms = 1_793_000_000_000u64 + self.second * 1000;
            let usage = json!({"input": 3 + r % 100, "output": 5, "cacheRead": r % 7, "cacheWrite": 0, "totalTokens": 8,
                "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.003}});
            match r % 23 {
                0..=7 => {
                    self.push(
                        parent,
                        json!({"type": "message", "message": {"role": "user",
                        "content": [{"type": "text", "text": format!("ask {r} {pad}")}], "timestamp": ms}}),
                    );
                }
                8..=15 => {
                    self.push(parent, json!({"type": "message", "message": {"role": "assistant",
                        "content": [{"type": "text", "text": format!("answer {r} {pad}")}], "api": "anthropic-messages",
                        "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "stop", "timestamp": ms}}));
                }
                16..=18 => {
                    let call = format!("toolu_{r:x}");
                    let me = self.push(parent, json!({"type": "message", "message": {"role": "assistant",
                        "content": [{"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": format!("ls {r}")}}],
                        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
                        "stopReason": "toolUse", "timestamp": ms}}));
                    self.push(Some(me), json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call,
                        "toolName": "bash", "content": [{"type": "text", "text": format!("ran {pad}")}], "isError": false, "timestamp": ms}}));
                }
                19 => {
                    let target = self.ids.get(pick % self.ids.len().max(1)).cloned();
                    self.push(parent, json!({"type": "label", "targetId": target, "label": format!("mark-{}", r % 5)}));
                }
                20 => {
                    self.push(parent, json!({"type": "session_info", "name": format!("name {}", r % 9)}));
                }
                21 => {
                    self.push(parent, json!({"type": "model_change", "provider": "openai", "modelId": "gpt-5"}));
                }
                _ => {
                    let kept = self.ids.get(self.ids.len().saturating_sub(4)).cloned();
                    self.push(
                        parent,
                        json!({"type": "compaction", "summary": format!("summary {pad}"),
                        "firstKeptEntryId": kept, "tokensBefore": 1000 + r % 1000}),
                    );
                }
            }
        }
    }

    /// `n` more user prompts and replies, one under the other (nothing that names the
    /// session or branches).
    fn chat(&mut self, n: usize) {
        for k in 0..n {
            let last = self.ids.last().cloned();
            let ms = 1_793_000_000_000u64 + self.second * 1000;
            let text = format!("turn {k} {}", "lorem ipsum ".repeat(30));
            let msg = if k % 2 == 0 {
                json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms})
            } else {
                json!({"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
                    "provider": "anthropic", "model": "claude-opus-4-1", "stopReason": "stop", "timestamp": ms,
                    "usage": {"input": 7, "output": 11, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 18,
                        "cost": {"input": 0.01, "output": 0.02, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.03}}})
            };
            self.push(last, json!({"type": "message", "message": msg}));
        }
    }

    fn text(&self, from: usize) -> String {
        self.lines[from..].iter().map(|l| format!("{l}\n")).collect()
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What pisces printed and how it exited, with the kept indexes in `cache` (`None`:
/// `--no-cache`).
fn answer(args: &[&str], cache: Option<&Path>) -> (Option<i32>, String, String) {
    let mut c = pisces();
    match cache {
        Some(dir) => c.env("XDG_CACHE_HOME", dir),
        None => c.arg("--no-cache"),
    };
    let out = c.args(args).output().expect("pisces runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// The commands compared: the leaf's context, another leaf's, the tree, the leaves, an
/// entry, and an id looked up by prefix.
fn commands(file: &Path, ids: &[String]) -> Vec<Vec<String>> {
    let f = s(file).to_string();
    let mid = ids[ids.len() / 2].clone();
    let early = ids[ids.len() / 5].clone();
    [
        vec!["path", &f, "@", "--format", "json"],
        vec!["path", &f, &mid],
        vec!["tree", &f, "--format", "json"],
        vec!["leaves", &f, "--format", "json"],
        vec!["show", &f, &early, "--format", "json"],
    ]
    .iter()
    .map(|c| c.iter().map(|a| a.to_string()).collect())
    .collect()
}

/// Every command answers with the cache as without it.
fn same_as_whole(file: &Path, ids: &[String], cache: &Path, when: &str) -> TestResult {
    for c in commands(file, ids) {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let (with, without) = (answer(&args, Some(cache)), answer(&args, None));
        if with != without {
            return Err(format!(
                "{when}: `pisces {}` differs with its kept index:\n--- with: {with:?}\n--- whole: {without:?}",
                c.join(" ")
            )
            .into());
        }
        if with.0 != Some(0) {
            return Err(format!("{when}: `pisces {}` failed: {with:?}", c.join(" ")).into());
        }
    }
    Ok(())
}

/// The kept index files under `cache`, with their bytes.
fn indexes(cache: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = cache.join("pisces").join("sessions");
    let mut v: Vec<_> = fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "idx")).collect()
        })
        .unwrap_or_default();
    v.sort();
    v.into_iter().map(|p| (p.clone(), fs::read(&p).unwrap_or_default())).collect()
}

/// The first read of a session: every answer a whole read's, and its index kept (the one
/// index in `cache`, returned with its bytes).
fn first_read(
    file: &Path,
    ids: &[String],
    cache: &Path,
    what: &str,
) -> Result<Vec<(PathBuf, Vec<u8>)>, libtest_mimic::Failed> {
    same_as_whole(file, ids, cache, &format!("{what}, first read"))?;
    let kept = indexes(cache);
    if kept.len() != 1 {
        return Err(format!("{what}: {} kept indexes after the first read, want 1", kept.len()).into());
    }
    Ok(kept)
}

fn append(file: &Path, text: &str) -> TestResult {
    fs::OpenOptions::new().append(true).open(file)?.write_all(text.as_bytes())?;
    Ok(())
}

/// A session kept, then appended to several times (linear growth, branches off old
/// entries, labels on old entries, new names): each time every command answers as a whole
/// read does, and the index is not written again (so the answer came from it and the new
/// lines alone).
fn appended() -> TestResult {
    for seed in 1..=3u64 {
        let dir = tempfile::tempdir()?;
        let cache = dir.path().join("cache");
        let file = dir.path().join("s.jsonl");
        let mut g = Gen::new(seed);
        g.entries(2500);
        fs::write(&file, g.text(0))?;
        let kept = first_read(&file, &g.ids, &cache, &format!("seed {seed}"))?;
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(cache.join("pisces").join("sessions"))?.permissions().mode() & 0o777;
            if mode != 0o700 {
                return Err(format!("the kept indexes' folder has mode {mode:o}, want 700").into());
            }
        }
        for round in 0..3 {
            let from = g.lines.len();
            g.entries(40 + round * 30);
            append(&file, &g.text(from))?;
            same_as_whole(&file, &g.ids, &cache, &format!("seed {seed}, append {round}"))?;
            if indexes(&cache) != kept {
                return Err(format!(
                    "seed {seed}, append {round}: the index was written again, so the file was read whole"
                )
                .into());
            }
        }
    }
    Ok(())
}

/// A kept session, then one change to it: each needs a whole read (or a careful partial
/// one), and every command answers as a whole read does.
fn changes() -> TestResult {
    type Change = fn(&Path, &mut Gen) -> TestResult;
    let cases: Vec<(&str, Change)> = vec![
        ("truncated to fewer lines", |f, g| {
            g.lines.truncate(g.lines.len() - 100);
            g.ids.truncate(g.lines.len() - 1);
            fs::write(f, g.text(0))?;
            Ok(())
        }),
        ("cut inside a line", |f, _| {
            let len = fs::metadata(f)?.len();
            fs::OpenOptions::new().write(true).open(f)?.set_len(len - 300)?;
            Ok(())
        }),
        ("a middle byte rewritten in place", |f, _| {
            let mut b = fs::read(f)?;
            let at = b.len() / 2;
            let k = b[at..].iter().position(|&c| c == b'l').unwrap_or(0) + at;
            b[k] = b'L';
            std::os::unix::fs::FileExt::write_at(&fs::OpenOptions::new().write(true).open(f)?, &b[k..k + 1], k as u64)?;
            Ok(())
        }),
        ("replaced by another file of the same size", |f, g| {
            let mut other = Gen::new(99);
            other.entries(2000);
            let mut text = other.text(0).into_bytes();
            text.resize(fs::metadata(f)?.len() as usize - 1, b' ');
            text.push(b'\n');
            let tmp = f.with_extension("tmp");
            fs::write(&tmp, text)?;
            fs::rename(&tmp, f)?;
            *g = other;
            Ok(())
        }),
        ("a duplicate id appended", |f, g| {
            let first = g.lines[1].clone();
            append(f, &format!("{first}\n"))
        }),
        ("a malformed line appended", |f, _| append(f, "{\"type\": \"message\", oops\n")),
        ("a blank line appended", |f, _| append(f, "\n\n")),
        ("a CRLF line appended", |f, g| {
            let from = g.lines.len();
            g.entries(1);
            append(f, &g.text(from).replace('\n', "\r\n"))
        }),
        ("a second header appended", |f, g| {
            let header = g.lines[0].clone();
            append(f, &format!("{header}\n"))
        }),
        ("an entry under an unknown parent appended", |f, _| {
            append(f, "{\"type\":\"model_change\",\"id\":\"f00f00f0\",\"parentId\":\"nowhere1\",\"timestamp\":\"2026-12-01T00:00:00.000Z\",\"provider\":\"a\",\"modelId\":\"b\"}\n")
        }),
        ("an entry its own parent appended", |f, _| {
            append(f, "{\"type\":\"model_change\",\"id\":\"f00f00f1\",\"parentId\":\"f00f00f1\",\"timestamp\":\"2026-12-01T00:00:00.000Z\",\"provider\":\"a\",\"modelId\":\"b\"}\n")
        }),
        ("an entry of an unknown type appended", |f, g| {
            let last = g.ids.last().cloned();
            append(
                f,
                &format!(
                    "{}\n",
                    json!({"type": "future_thing", "id": "f00f00f2", "parentId": last, "timestamp": "2026-12-01T00:00:00.000Z"})
                ),
            )
        }),
        ("a last line without its newline appended", |f, g| {
            let from = g.lines.len();
            g.entries(1);
            append(f, g.text(from).trim_end())
        }),
    ];
    for (what, change) in cases {
        let dir = tempfile::tempdir()?;
        let cache = dir.path().join("cache");
        let file = dir.path().join("s.jsonl");
        let mut g = Gen::new(7);
        g.entries(2500);
        fs::write(&file, g.text(0))?;
        first_read(&file, &g.ids, &cache, what)?;
        change(&file, &mut g)?;
        let ids = g.ids.clone();
        // Twice: the first read after the change, and the one after it (which may use an
        // index the first wrote).
        same_as_whole(&file, &ids, &cache, what)?;
        same_as_whole(&file, &ids, &cache, &format!("{what}, read again"))?;
    }
    Ok(())
}

/// The index damaged in every way at hand (bytes flipped, cut short, emptied, another
/// session's index in its place, garbage): never used, every answer as a whole read's.
fn damaged() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let mut ga = Gen::new(11);
    ga.entries(2500);
    fs::write(&a, ga.text(0))?;
    let mut gb = Gen::new(12);
    gb.entries(2600);
    fs::write(&b, gb.text(0))?;
    same_as_whole(&a, &ga.ids, &cache, "a")?;
    let index_a = indexes(&cache);
    same_as_whole(&b, &gb.ids, &cache, "b")?;
    let both = indexes(&cache);
    let (path_a, good) = index_a.into_iter().next().ok_or("no index for a")?;
    let (_, other) = both.into_iter().find(|(p, _)| *p != path_a).ok_or("no index for b")?;
    let mut damages: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), Vec::new()),
        ("cut in half".into(), good[..good.len() / 2].to_vec()),
        ("its last byte gone".into(), good[..good.len() - 1].to_vec()),
        ("another session's index".into(), other),
        ("garbage".into(), (0..good.len()).map(|i| (i * 7919 % 251) as u8).collect()),
    ];
    for k in [0, 20, 40, 100, good.len() / 3, good.len() / 2, good.len() - 5] {
        let mut bad = good.clone();
        bad[k] ^= 0x40;
        damages.push((format!("byte {k} flipped"), bad));
    }
    for (what, bytes) in damages {
        fs::write(&path_a, &bytes)?;
        same_as_whole(&a, &ga.ids, &cache, &format!("index {what}"))?;
    }
    Ok(())
}

/// Several processes reading the same appended session at once, from one index, each
/// writing it again: every answer is a whole read's, and the index left is whole.
fn at_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let file = dir.path().join("s.jsonl");
    let mut g = Gen::new(5);
    g.entries(2500);
    fs::write(&file, g.text(0))?;
    let f = s(&file).to_string();
    let args = ["path", f.as_str(), "@", "--format", "json"];
    let want = answer(&args, None);
    let runs: Vec<_> = (0..4)
        .map(|_| pisces().env("XDG_CACHE_HOME", &cache).args(args).stdout(std::process::Stdio::piped()).spawn())
        .collect::<Result<_, _>>()?;
    for r in runs {
        let out = r.wait_with_output()?;
        if (out.status.code(), String::from_utf8_lossy(&out.stdout).to_string()) != (want.0, want.1.clone()) {
            return Err("a process reading at the same time as others answered differently".into());
        }
    }
    let from = g.lines.len();
    g.entries(30);
    append(&file, &g.text(from))?;
    let want = answer(&args, None);
    if answer(&args, Some(&cache)) != want {
        return Err("after the processes at once, the kept index answers differently".into());
    }
    Ok(())
}

/// An oh-my-pi session (title slot, an image kept as a blob) kept, appended to, and then its
/// blob deleted: every answer is a whole read's, the append is read from the index, and the
/// missing blob is reported as a whole read reports it.
fn omp() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let agent = dir.path().join("agent");
    let hash = "328f2bd2c3b28c80b1cf92ef43a2a81513a1e237718ea13138466a1a4c8101fb";
    fs::create_dir_all(agent.join("blobs"))?;
    fs::create_dir_all(agent.join("sessions").join("-work"))?;
    fs::copy(
        crate::common::testdata().join("omp-18.2.3/home/.omp/agent/blobs").join(hash),
        agent.join("blobs").join(hash),
    )?;
    let file = agent.join("sessions").join("-work").join("s.jsonl");
    let mut g = Gen::omp(3);
    g.entries(10);
    let last = g.ids.last().cloned();
    g.push(last, json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "What is in this image?"},
        {"type": "image", "data": format!("blob:sha256:{hash}"), "mimeType": "image/webp"}], "timestamp": 1_793_000_000_000u64}}));
    g.entries(2500);
    fs::write(&file, g.text(0))?;
    let kept = first_read(&file, &g.ids, &cache, "omp")?;
    let from = g.lines.len();
    g.entries(50);
    append(&file, &g.text(from))?;
    same_as_whole(&file, &g.ids, &cache, "omp, appended")?;
    if indexes(&cache) != kept {
        return Err("omp, appended: the index was written again, so the file was read whole".into());
    }
    fs::remove_file(agent.join("blobs").join(hash))?;
    same_as_whole(&file, &g.ids, &cache, "omp, its blob deleted")?;
    let (_, _, stderr) = answer(&["path", s(&file), "@"], Some(&cache));
    if !stderr.contains(&hash[..12]) {
        return Err(format!("omp, its blob deleted: no warning about the missing blob: {stderr}").into());
    }
    Ok(())
}

/// `ls` and `stats` of a large session another process appends to: after each append the
/// cache's facts are extended with the new entries' (the first time from a whole read,
/// which keeps the session's index; then from the index), and every answer is the one
/// `--no-cache` gives.
fn store_growth() -> TestResult {
    let home = tempfile::tempdir()?;
    let cache = tempfile::tempdir()?;
    let dir = home.path().join(".pi/agent/sessions/--home-dev-proj--");
    fs::create_dir_all(&dir)?;
    let file = dir.join("2026-11-01T10-00-00-000Z_s.jsonl");
    let mut g = Gen::new(21);
    g.entries(2500);
    fs::write(&file, g.text(0))?;
    let run = |args: &[&str], cached: bool| -> Result<Value, libtest_mimic::Failed> {
        let mut c = pisces();
        c.env("HOME", home.path()).env("XDG_CACHE_HOME", cache.path());
        if !cached {
            c.arg("--no-cache");
        }
        crate::common::stdout_json(&c.args(args).output()?)
    };
    let same = |when: &str| -> TestResult {
        for args in [&["ls", "--all", "--format", "json"][..], &["stats", "--all", "--by", "model", "--format", "json"]]
        {
            let (mut with, mut without) = (run(args, true)?, run(args, false)?);
            for d in [&mut with, &mut without] {
                if let Some(o) = d.as_object_mut() {
                    o.remove("cached");
                    o.remove("extended");
                }
            }
            if with != without {
                return Err(format!("{when}: `{}` with the cache:\n{with}\nwithout:\n{without}", args.join(" ")).into());
            }
        }
        Ok(())
    };
    same("cold")?;
    for round in 0..3 {
        let from = g.lines.len();
        g.chat(60);
        append(&file, &g.text(from))?;
        let doc = run(&["stats", "--all", "--format", "json"], true)?;
        if doc["extended"] != 1 {
            return Err(format!("append {round}: {} sessions extended, want 1", doc["extended"]).into());
        }
        same(&format!("append {round}"))?;
    }
    if indexes(cache.path()).len() != 1 {
        return Err("the growing session's index was not kept".into());
    }
    // A new name: the facts are read again whole (the title may come from it), and right.
    let from = g.lines.len();
    let last = g.ids.last().cloned();
    g.push(last, json!({"type": "session_info", "name": "renamed"}));
    append(&file, &g.text(from))?;
    same("renamed")
}
