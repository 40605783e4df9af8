//! oh-my-pi sessions (`testdata/omp-18.2.3/`), checked against omp 18.2.3 itself.
//!
//! Every file there was written by omp's own SDK, and `goldens/NAME.json` is omp's own
//! reading of it (tools/omp-oracle/dump.ts: `SessionManager.open`, then
//! `buildSessionContext` at the null leaf, the default leaf and every entry). `forks/NAME.json`
//! holds what `pisces fork` wrote at every message entry (and `--all`), and omp's reading of
//! each fork (tools/omp-oracle/forkcheck.py).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, first_diff, pisces, run, stderr, stdout, stdout_json, testdata, TestResult};

fn corpus() -> PathBuf {
    testdata().join("omp-18.2.3")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// NAME -> the file's path.
fn files() -> BTreeMap<String, PathBuf> {
    let v = read_json(&corpus().join("files.json"));
    v.as_object().unwrap().iter().map(|(k, p)| (k.clone(), corpus().join(p.as_str().unwrap()))).collect()
}

/// A record the oracle wrote: `NAME.json`, or `NAME.json.zst` when it is large
/// (tools/omp-oracle/oracle.py `write_record`).
fn record(dir: &str, name: &str) -> Value {
    let plain = corpus().join(dir).join(format!("{name}.json"));
    if plain.exists() {
        return read_json(&plain);
    }
    let packed = fs::read(plain.with_extension("json.zst")).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut ruzstd::decoding::StreamingDecoder::new(packed.as_slice()).unwrap(), &mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn golden(name: &str) -> Value {
    record("goldens", name)
}

fn file(name: &str) -> PathBuf {
    files()[name].clone()
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for name in files().into_keys() {
        let n = name.clone();
        trials.push(Trial::test(format!("omp::context::{name}"), move || contexts_match(&n)));
        let n = name.clone();
        trials.push(Trial::test(format!("omp::llm::{name}"), move || llm_matches(&n)));
        let n = name.clone();
        trials.push(Trial::test(format!("omp::forks_reopened_by_omp::{name}"), move || forks_match(&n)));
    }
    trials.extend([
        Trial::test("omp::title_leaf_and_tree_as_omp_reads_them", titles_and_trees),
        Trial::test("omp::missing_blob_is_named_and_kept_as_a_reference", missing_blob),
        Trial::test("omp::missing_snapcompact_frame_is_named", missing_frame),
        Trial::test("omp::a_fifo_in_place_of_a_blob_does_not_hang", fifo_blob),
        Trial::test("omp::show_draws_a_snapcompact_archive", show_archive),
        Trial::test("omp::show_names_a_spilled_output_and_its_file", spilled),
        Trial::test("omp::found_by_id_in_its_store_and_archive", found_by_id),
        Trial::test("omp::check_sees_pruning_in_place", check_pruned),
        Trial::test("omp::check_knows_omp_s_own_message_roles", check_roles),
        Trial::test("omp::request_bodies_carry_developer_messages", developer_in_requests),
        Trial::test("omp::tree_rows_say_omp_s_own_messages", own_role_rows),
        Trial::test("omp::label_as_omp_writes_it_and_other_appends_refused", appends),
        Trial::test("omp::subagent_hangs_under_its_task", subagent),
        Trial::test("omp::inputs_unchanged", inputs_unchanged),
    ]);
    trials
}

fn path_json(f: &Path, rev: Option<&str>) -> Result<Value, libtest_mimic::Failed> {
    path_in(f, rev, "json")
}

fn path_in(f: &Path, rev: Option<&str>, format: &str) -> Result<Value, libtest_mimic::Failed> {
    let mut args = vec!["path", f.to_str().unwrap(), "--format", format];
    args.push(rev.unwrap_or("--leaf-null"));
    stdout_json(&run(&args))
}

/// At the null leaf, the default leaf and every entry, pisces's messages and settings are
/// omp's `buildSessionContext`'s.
fn contexts_match(name: &str) -> TestResult {
    golden_contexts_match(name, "json", "messages")
}

/// At the null leaf, the default leaf and every entry, `--format llm` is what omp's own
/// `convertToLlm` makes of its context (the golden's `llm`).
fn llm_matches(name: &str) -> TestResult {
    golden_contexts_match(name, "llm", "llm")
}

/// `pisces path --format FORMAT`'s messages at each of the golden's contexts are its `key`,
/// keys in omp's order.
fn golden_contexts_match(name: &str, format: &str, key: &str) -> TestResult {
    let g = golden(name);
    let f = file(name);
    let mut failures = Vec::new();
    let contexts = g["contexts"].as_array().unwrap();
    for c in contexts {
        let rev = c["leaf"].as_str();
        let got = path_in(&f, if c["default"] == true { Some("@") } else { rev }, format)?;
        let at = rev.unwrap_or("null");
        if let Some(d) = first_diff(&got["messages"], &c[key], "$") {
            failures.push(format!("at {at}: {d}"));
        } else if serde_json::to_string(&got["messages"])? != serde_json::to_string(&c[key])? {
            failures.push(format!("at {at}: the keys are not in omp's order"));
        }
        if format == "json" {
            check(got["session"]["agent"] == "oh-my-pi", || format!("agent {}", got["session"]["agent"]))?;
            // The rest of omp's context: models by role, service tier, rules, mode.
            let keys = ["configuredThinkingLevel", "serviceTier", "models", "injectedTtsrRules", "mode", "modeData"];
            let want: serde_json::Map<String, Value> =
                keys.iter().filter_map(|&k| Some((k.to_string(), c.get(k)?.clone()))).collect();
            if serde_json::to_string(&got["settings"])? != serde_json::to_string(&want)? {
                failures.push(format!("at {at}: settings {} want {}", got["settings"], Value::Object(want)));
            }
        }
    }
    check(contexts.len() > 2 && contexts.iter().all(|c| c[key].is_array()), || format!("the golden holds no `{key}`"))?;
    check(failures.is_empty(), || {
        format!("{} of {} contexts differ:\n{}", failures.len(), contexts.len(), failures.join("\n"))
    })
}

/// omp's title and default leaf; the tree's parents and children as omp's `getTree()`.
fn titles_and_trees() -> TestResult {
    for name in files().into_keys() {
        let g = golden(&name);
        let f = file(&name);
        let p = path_json(&f, Some("@"))?;
        check(p["session"]["name"] == g["title"], || {
            format!("{name}: title {} want {}", p["session"]["name"], g["title"])
        })?;
        check(p["leafId"] == g["leafId"], || format!("{name}: leaf {} want {}", p["leafId"], g["leafId"]))?;
        check(p["session"]["id"] == g["sessionId"], || format!("{name}: id {}", p["session"]["id"]))?;
        let t = stdout_json(&run(&["tree", f.to_str().unwrap(), "--format", "json", "--filter", "all"]))?;
        let got: Vec<(String, String)> = t["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| (n["id"].as_str().unwrap().to_string(), n["parentId"].to_string()))
            .collect();
        // pi's tree (and so pisces's) leaves out an assistant turn that is only tool calls,
        // drawing its children under its parent: omp's tree with those entries folded so.
        let text = String::from_utf8_lossy(&fs::read(&f)?).into_owned();
        let lines: BTreeMap<String, Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| Some((v["id"].as_str()?.to_string(), v)))
            .collect();
        let calls_only = |id: &str| {
            let m = &lines.get(id).unwrap_or(&Value::Null)["message"];
            m["role"] == "assistant"
                && m["content"].as_array().is_some_and(|c| {
                    c.iter().all(|b| b["type"] != "text" || b["text"].as_str().is_some_and(|t| t.trim().is_empty()))
                })
        };
        let parents: BTreeMap<String, String> = g["tree"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| (n["id"].as_str().unwrap().to_string(), n["parentId"].to_string()))
            .collect();
        let shown = |id: &str| got.iter().any(|(g, _)| g == id);
        for id in parents.keys().filter(|id| !shown(id)) {
            check(calls_only(id), || format!("{name}: {id} is not in pisces's tree"))?;
        }
        let want: Vec<(String, String)> = parents
            .iter()
            .filter(|(id, _)| shown(id))
            .map(|(id, parent)| {
                let mut p = parent.clone();
                while let Some(up) = parents.get(p.trim_matches('"')).filter(|_| !shown(p.trim_matches('"'))) {
                    p = up.clone();
                }
                (id.clone(), p)
            })
            .collect();
        let (mut gs, mut ws) = (got.clone(), want.clone());
        gs.sort();
        ws.sort();
        check(gs == ws, || format!("{name}: tree edges differ:\n got {got:?}\nwant {want:?}"))?;
    }
    Ok(())
}

/// pisces's fork at each message entry (and `--all`) is what omp reopens with the source's
/// context at that entry and its title; pisces still writes those lines.
fn forks_match(name: &str) -> TestResult {
    let doc = record("forks", name);
    let source = corpus().join(doc["source"].as_str().unwrap());
    let forks = doc["forks"].as_array().unwrap();
    check(!forks.is_empty(), || "no forks recorded".into())?;
    let dir = tempfile::tempdir()?;
    for (k, fk) in forks.iter().enumerate() {
        let rev = fk["rev"].as_str();
        let at = rev.unwrap_or("@");
        let want = path_json(&source, Some(at))?;
        if let Some(d) = first_diff(&want["messages"], &fk["omp"]["messages"], "$") {
            return Err(format!("{name}: omp's context of the fork at {at} is not the source's: {d}").into());
        }
        check(fk["omp"]["title"] == want["session"]["name"], || {
            format!("{name} at {at}: omp read title {}", fk["omp"]["title"])
        })?;
        // The same fork now.
        let out = dir.path().join(format!("{k}.jsonl"));
        let mut args = vec!["fork", source.to_str().unwrap(), "-o", out.to_str().unwrap()];
        match rev {
            Some(r) => args.push(r),
            None => args.push("--all"),
        }
        let o = run(&args);
        check(o.status.success(), || format!("{name}: fork at {at} failed: {}", stderr(&o)))?;
        let text = fs::read_to_string(&out)?;
        let lines: Vec<&str> = text.lines().collect();
        check(lines[0].len() + 1 == 256, || format!("{name}: the slot is {} bytes", lines[0].len() + 1))?;
        let slot: Value = serde_json::from_str(lines[0])?;
        let want_slot: Value = serde_json::from_str(fk["slot"].as_str().unwrap())?;
        check(slot["title"] == want_slot["title"] && slot.get("source") == want_slot.get("source"), || {
            format!("{name}: slot {slot} want {want_slot}")
        })?;
        let header: Value = serde_json::from_str(lines[1])?;
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        check(keys(&header) == keys(&fk["header"]), || {
            format!("{name}: header keys {:?} want {:?}", keys(&header), keys(&fk["header"]))
        })?;
        // Entry lines are copied as they are; re-emitted labels have new ids.
        let entries: Vec<&str> = lines[2..].iter().copied().filter(|l| !l.contains("\"type\":\"label\"")).collect();
        let want_entries: Vec<&str> = fk["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .filter(|l| !l.contains("\"type\":\"label\""))
            .collect();
        check(entries == want_entries, || {
            format!("{name}: fork at {at}: the entry lines differ from the ones omp reopened")
        })?;
    }
    Ok(())
}

/// A copy of the image session whose blob is gone: the image is its reference, as omp
/// sends it, and every command says which blob is missing.
fn missing_blob() -> TestResult {
    let dir = tempfile::tempdir()?;
    let f = file("02-image");
    let copy = dir.path().join("agent/sessions/b").join(f.file_name().unwrap());
    fs::create_dir_all(copy.parent().unwrap())?;
    fs::create_dir_all(dir.path().join("agent/blobs"))?;
    fs::copy(&f, &copy)?;
    let o = run(&["path", copy.to_str().unwrap(), "--format", "json"]);
    check(o.status.success(), || stderr(&o))?;
    check(stderr(&o).contains("image blob sha256:") && stderr(&o).contains("is not in"), || stderr(&o))?;
    let doc: Value = serde_json::from_slice(&o.stdout)?;
    let text = doc["messages"].to_string();
    check(text.contains("\"data\":\"blob:sha256:"), || "the reference is not kept".into())?;
    // With the store's blobs, the image is its bytes.
    let full = path_json(&f, Some("@"))?;
    check(!full["messages"].to_string().contains("blob:sha256:"), || "the blob was not resolved".into())
}

/// A snapcompact frame whose blob is missing (the derived corpus file): omp's context
/// says so in its place (checked by `context::`), and pisces names the entry on stderr.
fn missing_frame() -> TestResult {
    let f = file("14-snapcompact-missing-frame");
    let o = run(&["path", f.to_str().unwrap(), "--format", "json"]);
    check(o.status.success(), || stderr(&o))?;
    let err = stderr(&o);
    check(err.contains("image blob sha256:000000000000") && err.contains("archived frame is unavailable"), || {
        err.clone()
    })?;
    // The file it was derived from has every frame.
    let full = run(&["path", file("14-snapcompact").to_str().unwrap()]);
    check(full.status.success() && stderr(&full).is_empty(), || stderr(&full))
}

/// A FIFO where a blob should be (a frame's, an image's) is not read: a read would wait
/// forever. The blob counts as missing.
fn fifo_blob() -> TestResult {
    let dir = tempfile::tempdir()?;
    let blobs = dir.path().join("agent/blobs");
    fs::create_dir_all(&blobs)?;
    let mut args = Vec::new();
    for name in ["14-snapcompact", "02-image"] {
        let f = file(name);
        let copy = dir.path().join("agent/sessions/b").join(f.file_name().unwrap());
        fs::create_dir_all(copy.parent().unwrap())?;
        fs::copy(&f, &copy)?;
        let text = fs::read_to_string(&f)?;
        let hash = text.split("blob:sha256:").nth(1).and_then(|t| t.get(..64)).ok_or("no blob reference")?;
        let made = std::process::Command::new("mkfifo").arg(blobs.join(hash)).status()?;
        check(made.success(), || "mkfifo failed".into())?;
        args.push(copy);
    }
    for copy in args {
        // (Into files: a pipe nobody reads while waiting would fill and stop pisces.)
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        let mut child = crate::common::pisces()
            .args(["path", copy.to_str().unwrap(), "--format", "json"])
            .stdout(fs::File::create(&out)?)
            .stderr(fs::File::create(&err)?)
            .spawn()?;
        let t0 = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if t0.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                return Err(format!("{}: no answer in 20 s: it hangs", copy.display()).into());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let err = fs::read_to_string(&err)?;
        check(status.success(), || err.clone())?;
        check(err.contains("image blob sha256:"), || err.clone())?;
    }
    Ok(())
}

/// `show` of a snapcompact compaction: a row for each frame of the archive, with its blob,
/// and the archived text as text, not a block of escaped JSON.
fn show_archive() -> TestResult {
    let f = file("14-snapcompact");
    let line = fs::read_to_string(&f)?
        .lines()
        .find(|l| l.contains("\"type\":\"compaction\""))
        .ok_or("no compaction")?
        .to_string();
    let entry: Value = serde_json::from_str(&line)?;
    let out = stdout(&run(&["show", f.to_str().unwrap(), entry["id"].as_str().unwrap()]));
    let frames = entry["preserveData"]["snapcompact"]["frames"].as_array().ok_or("no frames")?;
    for (k, frame) in frames.iter().enumerate() {
        let want = format!("frame {}", k + 1);
        let row = out.lines().find(|l| l.starts_with(&want)).ok_or(format!("no row {want}:\n{out}"))?;
        check(row.ends_with(frame["data"].as_str().unwrap()), || row.to_string())?;
    }
    check(out.contains("── archived text, oldest ──") && out.contains("── archived text, newest ──"), || out.clone())?;
    check(!out.contains("\"frames\""), || "the archive is shown as JSON".into())
}

/// `show` names the file a spilled output is in (`artifact://N`), whose size is the
/// `totalBytes` omp itself recorded; without the session's folder, it says the file is
/// missing.
fn spilled() -> TestResult {
    let f = file("06-spill");
    let mut found = 0;
    for (k, line) in fs::read_to_string(&f)?.lines().enumerate() {
        let v: Value = serde_json::from_str(line)?;
        let Some(t) = v.pointer("/message/details/meta/truncation").filter(|t| t.get("artifactId").is_some()) else {
            continue;
        };
        found += 1;
        let at = format!("#{}", k + 1);
        let doc = stdout_json(&run(&["show", f.to_str().unwrap(), &at, "--format", "json"]))?;
        let sp = &doc["entries"][0]["spilled"][0];
        let want = format!("artifact://{}", t["artifactId"].as_str().unwrap_or_default());
        check(sp["ref"] == want.as_str() && sp["bytes"] == t["totalBytes"], || {
            format!("{at}: {sp}, want {want} of {}", t["totalBytes"])
        })?;
        check(Path::new(sp["path"].as_str().unwrap_or_default()).is_file(), || {
            format!("{at}: no file {}", sp["path"])
        })?;
        let dir = tempfile::tempdir()?;
        let copy = dir.path().join(f.file_name().unwrap());
        fs::copy(&f, &copy)?;
        let o = run(&["show", copy.to_str().unwrap(), &at]);
        check(o.status.success() && stdout(&o).contains(&format!("{want} is missing")), || stdout(&o))?;
    }
    check(found > 0, || "no spilled output in 06-spill".into())
}

/// `pisces tree ID` finds omp sessions in `~/.omp/agent/sessions` and gzipped ones in
/// `archive/sessions`; `OMP_PROFILE` moves the root.
fn found_by_id() -> TestResult {
    let home = corpus().join("home");
    for name in ["01-tools-branch", "10-archive"] {
        let id = golden(name)["sessionId"].as_str().unwrap().to_string();
        let o = pisces().env("HOME", &home).args(["path", &id[..18], "--format", "json"]).output()?;
        check(o.status.success(), || format!("{name}: {}", stderr(&o)))?;
        let doc: Value = serde_json::from_slice(&o.stdout)?;
        check(doc["session"]["id"] == id.as_str(), || format!("{name}: found {}", doc["session"]["id"]))?;
    }
    let profiled = tempfile::tempdir()?;
    let bucket = profiled.path().join(".omp/profiles/work/agent/sessions/-p");
    fs::create_dir_all(&bucket)?;
    let f = file("01-tools-branch");
    fs::copy(&f, bucket.join(f.file_name().unwrap()))?;
    let id = golden("01-tools-branch")["sessionId"].as_str().unwrap().to_string();
    let o = pisces().env("HOME", profiled.path()).env("OMP_PROFILE", "work").args(["tree", &id]).output()?;
    check(o.status.success(), || format!("profile: {}", stderr(&o)))?;
    let o = pisces().env("HOME", profiled.path()).args(["tree", &id]).output()?;
    check(!o.status.success(), || "found without its profile".into())
}

/// omp's own message roles (a `$` run, a file mention, a developer message; the first two
/// without `content`) are not reported as unknown or malformed: omp sends them all. The same
/// lines with a role neither writes are.
fn check_roles() -> TestResult {
    let f = file("16-llm-shapes");
    let kinds = |f: &Path| -> Result<Vec<String>, libtest_mimic::Failed> {
        let o = run(&["check", f.to_str().unwrap(), "--format", "json", "-v"]);
        let doc: Value = serde_json::from_slice(&o.stdout)?;
        Ok(doc["files"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["kind"].as_str())
            .map(String::from)
            .collect())
    };
    let own = kinds(&f)?;
    check(!own.iter().any(|k| k == "unknown-role" || k == "bad-content"), || format!("findings: {own:?}"))?;
    let dir = tempfile::tempdir()?;
    let renamed = dir.path().join("renamed.jsonl");
    let raw = fs::read_to_string(&f)?;
    check(raw.contains("\"role\":\"pythonExecution\""), || "no `$` run in the corpus file".into())?;
    fs::write(&renamed, raw.replace("\"role\":\"pythonExecution\"", "\"role\":\"rubyExecution\""))?;
    let other = kinds(&renamed)?;
    check(other.iter().any(|k| k == "unknown-role") && other.iter().any(|k| k == "bad-content"), || {
        format!("findings with an unknown role: {other:?}")
    })
}

/// omp's `developer` messages reach the request bodies: Anthropic's as user messages (omp's
/// Anthropic provider sends them so), OpenAI's as user messages for a provider other than
/// OpenAI itself.
fn developer_in_requests() -> TestResult {
    let g = golden("16-llm-shapes");
    let f = file("16-llm-shapes");
    // The entry whose context holds the developer messages: the one with the most.
    let developers =
        |c: &Value| c["llm"].as_array().map_or(0, |l| l.iter().filter(|m| m["role"] == "developer").count());
    let c = g["contexts"].as_array().unwrap().iter().max_by_key(|c| developers(c)).unwrap();
    check(developers(c) > 0, || "no developer message in the golden".into())?;
    let leaf = c["leaf"].as_str().unwrap();
    for format in ["anthropic", "openai"] {
        let body = stdout_json(&run(&["path", f.to_str().unwrap(), leaf, "--format", format]))?;
        let texts: Vec<(String, String)> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["role"].as_str().unwrap_or_default().to_string(), m["content"].to_string()))
            .collect();
        check(texts.iter().any(|(r, t)| r == "user" && t.contains("developer note")), || {
            format!("{format}: no user message with the developer note in {texts:?}")
        })?;
    }
    Ok(())
}

/// The tree draws a `$` run as its code, a file mention as its paths and a developer
/// message as its text, each read from the file's own lines; `show` gives a `$` run's code
/// and a developer message's text as text, not as JSON.
fn own_role_rows() -> TestResult {
    let f = file("16-llm-shapes");
    let tree = stdout(&run(&["tree", f.to_str().unwrap(), "--filter", "all", "--color", "never"]));
    let mut seen = 0;
    for (k, line) in fs::read_to_string(&f)?.lines().enumerate() {
        let m = &serde_json::from_str::<Value>(line)?["message"];
        let shown = |heading: &str, text: &str| -> TestResult {
            let at = format!("#{}", k + 1);
            let o = stdout(&run(&["show", f.to_str().unwrap(), &at, "--color", "never"]));
            check(o.contains(&format!("── {heading} ──\n{text}\n")), || format!("show {at}:\n{o}"))
        };
        match m["role"].as_str() {
            Some("pythonExecution") => shown("code", m["code"].as_str().unwrap_or_default())?,
            Some("developer") => shown("text", m["content"][0]["text"].as_str().unwrap_or_default())?,
            _ => {}
        }
        let want = match m["role"].as_str() {
            Some("pythonExecution") => format!("[python]: {}", m["code"].as_str().unwrap_or_default()),
            Some("fileMention") => {
                let paths: Vec<&str> =
                    m["files"].as_array().unwrap().iter().filter_map(|f| f["path"].as_str()).collect();
                format!("[file mention]: {}", paths.join(", "))
            }
            Some("developer") => format!("developer: {}", m["content"][0]["text"].as_str().unwrap_or_default()),
            _ => continue,
        };
        seen += 1;
        check(tree.contains(&want), || format!("no row `{want}` in:\n{tree}"))?;
    }
    check(seen >= 3, || format!("only {seen} messages in omp's own roles"))
}

/// omp pruned a tool result in place and rewrote the file: check says so, as info.
fn check_pruned() -> TestResult {
    let f = file("05-errors-dangling");
    let raw = fs::read_to_string(&f)?;
    check(raw.contains("\"prunedAt\""), || "the corpus file has no pruned result".into())?;
    let o = run(&["check", f.to_str().unwrap(), "--format", "json", "-v"]);
    let doc: Value = serde_json::from_slice(&o.stdout)?;
    let kinds: Vec<&str> =
        doc["files"][0]["findings"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
    check(kinds.contains(&"pruned-in-place"), || format!("findings: {kinds:?}"))
}

/// `label` appends a line of omp's own label shape (the key order of the label omp wrote in
/// 01-tools-branch); summaries and agent turns are refused.
fn appends() -> TestResult {
    let f = file("01-tools-branch");
    let omp_label = fs::read_to_string(&f)?.lines().find(|l| l.contains("\"type\":\"label\"")).unwrap().to_string();
    let want: Value = serde_json::from_str(&omp_label)?;
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("s.jsonl");
    fs::copy(&f, &copy)?;
    let target = golden("01-tools-branch")["tree"][0]["id"].as_str().unwrap().to_string();
    let o = run(&["label", copy.to_str().unwrap(), &target, "pisces-made"]);
    check(o.status.success(), || stderr(&o))?;
    let text = fs::read_to_string(&copy)?;
    let last: Value = serde_json::from_str(text.lines().last().unwrap())?;
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    check(keys(&last) == keys(&want), || format!("label keys {:?} want omp's {:?}", keys(&last), keys(&want)))?;
    check(last["parentId"] == golden("01-tools-branch")["leafId"], || format!("label parent {}", last["parentId"]))?;
    let labelled = stdout_json(&run(&["tree", copy.to_str().unwrap(), "--format", "json", "--filter", "all"]))?;
    check(labelled["nodes"].as_array().unwrap().iter().any(|n| n["label"] == "pisces-made"), || {
        "no label in the tree".into()
    })?;
    let before = fs::read(&copy)?;
    let leaf = golden("01-tools-branch")["leafId"].as_str().unwrap().to_string();
    let o = run(&["summarize", copy.to_str().unwrap(), &leaf, &target, "--append", "--offline"]);
    check(!o.status.success() && stderr(&o).contains("oh-my-pi"), || format!("summarize --append: {}", stderr(&o)))?;
    check(fs::read(&copy)? == before, || "a refused append changed the file".into())
}

/// The `task` call's result has its subagent's transcript under it.
fn subagent() -> TestResult {
    let f = file("08-subagent");
    let doc = stdout_json(&run(&["tree", f.to_str().unwrap(), "--format", "json"]))?;
    let files: Vec<String> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["subagents"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a["file"].as_str().map(str::to_string))
        .collect();
    let want = file("08-subagent.Helper");
    check(files.len() == 1 && files[0].ends_with(want.file_name().unwrap().to_str().unwrap()), || {
        format!("subagents: {files:?}")
    })?;
    let open = stdout(&run(&["tree", f.to_str().unwrap(), "--subagents"]));
    check(open.contains("Complete assignment thoroughly"), || format!("the subagent's rows are not shown:\n{open}"))
}

/// Reading never changes a corpus file.
fn inputs_unchanged() -> TestResult {
    let mut sums = Vec::new();
    for f in files().into_values() {
        sums.push((f.clone(), fs::read(&f)?));
    }
    for (f, _) in &sums {
        let s = f.to_str().unwrap();
        for args in [vec!["tree", s], vec!["path", s], vec!["check", s], vec!["leaves", s]] {
            let _ = run(&args);
        }
    }
    for (f, before) in sums {
        check(fs::read(&f)? == before, || format!("{} changed", f.display()))?;
    }
    Ok(())
}
