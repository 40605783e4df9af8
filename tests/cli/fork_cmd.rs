//! `pisces fork`: for every leaf pi computed a golden for, the fork reopened by pisces gives
//! pi's context at that leaf (pi's goldens, not our own output), and its lines are the
//! source's lines with only `parentId` (and a remapped `firstKeptEntryId`) changed; plus
//! the header, the file name, labels, --all, --linear, --before and refusals.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, first_diff, pisces, run, stderr, stdout, stdout_json, testdata, TestResult};
use crate::conformance::{context_goldens, corpus_sessions};

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test("fork::header_name_and_labels", header_name_and_labels),
        Trial::test("fork::refuses_to_overwrite_and_bad_input", refusals),
        Trial::test("fork::all_copies_every_entry", all_copies_every_entry),
        Trial::test("fork::all_migrates_version_1", all_migrates_version_1),
        Trial::test("fork::linear_is_the_export_shape", linear_shape),
        Trial::test("fork::before_prints_the_user_text", before_prints_the_user_text),
        Trial::test("fork::shadowed_and_damaged_entries", shadowed_and_damaged),
    ];
    for cs in corpus_sessions() {
        let goldens = context_goldens(&cs).into_iter().filter(|p| !p.ends_with("null.context.json"));
        for golden in goldens {
            let leaf = golden.file_name().unwrap().to_string_lossy().trim_end_matches(".context.json").to_string();
            let entries_golden = cs.goldens.join(format!("{}.entries.json", cs.stem));
            let session = cs.session.clone();
            trials.push(Trial::test(format!("fork::every_leaf::{}/{}/{leaf}", cs.corpus, cs.stem), move || {
                fork_leaf(&session, &golden, &leaf, &entries_golden)
            }));
        }
    }
    trials
}

/// A source file's parsed lines: (physical line, raw text without `\r`, value).
fn source_lines(file: &Path) -> Vec<(usize, String, Value)> {
    let bytes = fs::read(file).unwrap();
    String::from_utf8_lossy(&bytes)
        .split('\n')
        .enumerate()
        .filter_map(|(n, l)| {
            let l = l.strip_suffix('\r').unwrap_or(l);
            serde_json::from_str::<Value>(l).ok().filter(Value::is_object).map(|v| (n + 1, l.to_string(), v))
        })
        .collect()
}

fn new_lines(file: &Path) -> Vec<(String, Value)> {
    fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| (l.to_string(), serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l}: {e}"))))
        .collect()
}

/// `line` with the value of its first `"key":` replaced by `value` (the corpora's lines
/// have no spaces and ids without escapes).
fn with_value(line: &str, key: &str, value: &str) -> Option<String> {
    let pat = format!("\"{key}\":");
    let start = line.find(&pat)? + pat.len();
    let rest = &line[start..];
    let len = if let Some(r) = rest.strip_prefix('"') { r.find('"')? + 2 } else { rest.find([',', '}'])? };
    Some(format!("{}{value}{}", &line[..start], &rest[len..]))
}

fn fork_leaf(session: &Path, golden_path: &Path, leaf: &str, entries_golden: &Path) -> TestResult {
    let golden: Value = serde_json::from_str(&fs::read_to_string(golden_path)?)?;
    let v1 = golden["idsRenamedToLines"] == true;
    let rev = match leaf {
        "default" => "@".to_string(),
        l if v1 => format!("#{}", &l[1..]),
        l => l.to_string(),
    };
    let dir = tempfile::tempdir()?;
    let new = dir.path().join("fork.jsonl");
    let before = fs::read(session)?;
    let out = run(&["fork", session.to_str().unwrap(), &rev, "-o", new.to_str().unwrap(), "--format", "json"]);
    check(fs::read(session)? == before, || "the source changed".into())?;
    if golden.get("leafId").is_none() {
        // pi's "leaf" is a bare JSON value (`42`), not an entry: nothing to fork.
        return check(out.status.code() == Some(2) && stderr(&out).contains("not an entry"), || stderr(&out));
    }
    let doc = stdout_json(&out)?;
    check(doc["path"] == new.to_str().unwrap(), || format!("printed path {}", doc["path"]))?;

    // Reopened, the fork gives pi's context at the leaf.
    let ctx = stdout_json(&run(&["path", new.to_str().unwrap(), "--format", "json"]))?;
    for field in ["messages", "model", "thinkingLevel"] {
        if let Some(d) = first_diff(&ctx[field], &golden[field], &format!("$.{field}")) {
            return Err(format!("the fork's context differs from pi's at the leaf: {d}").into());
        }
    }

    // The path is pi's path without its label entries, then the re-emitted labels.
    let src = source_lines(session);
    // Version 2 files are migrated as pi migrates them: `hookMessage` becomes `custom`.
    let v2 = src.first().is_some_and(|(_, _, h)| h["version"] == 2);
    let type_of: HashMap<String, String> = src
        .iter()
        .flat_map(|(n, _, v)| {
            let ty = v["type"].as_str().unwrap_or("").to_string();
            let mut keys = vec![(format!("L{n}"), ty.clone())];
            if let Some(id) = v["id"].as_str() {
                keys.push((id.to_string(), ty));
            }
            keys
        })
        .collect();
    let kept: Vec<String> = golden["pathIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .filter(|i| type_of.get(i).map(String::as_str) != Some("label"))
        .collect();
    let lines = new_lines(&new);
    let source_ids: HashSet<&str> = type_of.keys().map(String::as_str).collect();
    let emitted: Vec<&Value> = lines[1..]
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v["type"] == "label" && !source_ids.contains(v["id"].as_str().unwrap()))
        .collect();
    let copied: Vec<&(String, Value)> = lines[1..lines.len() - emitted.len()].iter().collect();
    let copied_ids: Vec<String> = copied.iter().map(|(_, v)| v["id"].as_str().unwrap().to_string()).collect();
    check(copied_ids == kept, || format!("copied {copied_ids:?}, pi's path without labels {kept:?}"))?;
    let ctx_path: Vec<String> =
        ctx["pathIds"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_string()).collect();
    check(ctx_path[..kept.len()] == kept[..], || format!("reopened path {ctx_path:?}"))?;
    check(doc["entryCount"] == lines.len() - 1, || "entryCount".into())?;

    // Every copied line is its source line with only `parentId` (and a compaction's
    // `firstKeptEntryId`) changed; the chain is linear.
    let mut prev = Value::Null;
    for (raw, v) in &copied {
        check(v["parentId"] == prev, || format!("{} is not chained to {prev}", v["id"]))?;
        prev = v["id"].clone();
        let id = v["id"].as_str().unwrap();
        let candidates: Vec<&(usize, String, Value)> =
            src.iter().filter(|(n, _, sv)| if v1 { format!("L{n}") == id } else { sv["id"] == id }).collect();
        let ok = candidates.iter().any(|(_, sraw, sv)| {
            if v1 {
                let strip = |x: &Value| {
                    let mut m = x.as_object().unwrap().clone();
                    for k in ["id", "parentId", "firstKeptEntryId", "firstKeptEntryIndex"] {
                        m.shift_remove(k);
                    }
                    m
                };
                return strip(sv) == strip(v);
            }
            let mut want = with_value(sraw, "parentId", &v["parentId"].to_string()).unwrap_or(sraw.clone());
            if v2 {
                want = want.replace(r#""role":"hookMessage""#, r#""role":"custom""#);
            }
            if v["type"] == "compaction" {
                want = with_value(&want, "firstKeptEntryId", &v["firstKeptEntryId"].to_string()).unwrap_or(want);
            }
            &want == raw
        });
        check(ok, || format!("line of {id} is not its source line with a new parentId:\n  {raw}"))?;
    }

    // Labels: pi's resolved labels of the kept entries, chained after the last one, with
    // their original timestamps and fresh 8-hex ids.
    if let Ok(text) = fs::read_to_string(entries_golden) {
        let eg: Value = serde_json::from_str(&text)?;
        let mut want: Vec<(String, Value, Value)> = eg["labels"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(t, _)| kept.contains(t))
            .map(|(t, l)| (t.clone(), l.clone(), eg["labelTimestamps"][t].clone()))
            .collect();
        let mut got: Vec<(String, Value, Value)> = emitted
            .iter()
            .map(|l| (l["targetId"].as_str().unwrap().to_string(), l["label"].clone(), l["timestamp"].clone()))
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        got.sort_by(|a, b| a.0.cmp(&b.0));
        check(got == want, || format!("labels {got:?}, pi's {want:?}"))?;
    }
    for l in &emitted {
        let keys: Vec<&String> = l.as_object().unwrap().keys().collect();
        check(keys == ["type", "id", "parentId", "timestamp", "targetId", "label"], || format!("{keys:?}"))?;
        let id = l["id"].as_str().unwrap();
        check(id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()), || id.to_string())?;
        check(l["parentId"] == prev, || format!("label {id} is not chained"))?;
        prev = l["id"].clone();
    }
    Ok(())
}

fn header_name_and_labels() -> TestResult {
    // Default place and name: beside the source, `<ts>_<id>.jsonl`, path printed as given.
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("src.jsonl");
    fs::copy(testdata().join("pi-1.6.0/05-labels-and-name.jsonl"), &src)?;
    let out = pisces().current_dir(dir.path()).args(["fork", "src.jsonl", "@"]).output()?;
    check(out.status.success(), || stderr(&out))?;
    let printed = stdout(&out).trim_end().to_string();
    check(!printed.contains('/') && printed.ends_with(".jsonl"), || format!("printed {printed}"))?;
    let lines = new_lines(&dir.path().join(&printed));
    let h = lines[0].1.as_object().unwrap();
    let keys: Vec<&String> = h.keys().collect();
    check(keys == ["type", "version", "id", "timestamp", "cwd", "parentSession"], || format!("{keys:?}"))?;
    let id = h["id"].as_str().unwrap();
    let ts = h["timestamp"].as_str().unwrap();
    check(id.len() == 36 && id.as_bytes()[14] == b'7' && id != "01a228be-0be9-76bc-a3c4-74ca986d25da", || id.into())?;
    check(ts.len() == 24 && ts.ends_with('Z'), || ts.into())?;
    check(printed == format!("{}_{id}.jsonl", ts.replace([':', '.'], "-")), || printed.clone())?;
    check(h["version"] == 3 && h["cwd"] == "/home/dev/todo-cli", || lines[0].0.clone())?;
    check(h["parentSession"] == fs::canonicalize(&src)?.to_str().unwrap(), || format!("{}", h["parentSession"]))?;
    // The path to the last entry crosses four label entries; the two labels still set on
    // kept entries come back in pi's map order (first labelled first), original times.
    let labels: Vec<(String, String, String)> = lines[13..]
        .iter()
        .map(|(_, v)| {
            (
                v["targetId"].as_str().unwrap().into(),
                v["label"].as_str().unwrap().into(),
                v["timestamp"].as_str().unwrap().into(),
            )
        })
        .collect();
    check(
        labels
            == [
                ("544ace67".into(), "start".into(), "2026-11-29T19:17:53.901Z".into()),
                ("359c3ca0".into(), "branch-point".into(), "2026-11-29T19:17:54.211Z".into()),
            ],
        || format!("{labels:?}"),
    )?;
    check(lines.len() == 15 && lines[12].1["id"] == "5dfe5fb3" && lines[12].1["parentId"] == "d15ef929", || {
        "the child of a removed label is re-chained".into()
    })?;

    // --session-dir DIR: there instead; -o: exactly there.
    let other = tempfile::tempdir()?;
    let out = run(&["fork", src.to_str().unwrap(), "start", "--session-dir", other.path().to_str().unwrap()]);
    let printed = stdout(&out).trim_end().to_string();
    check(out.status.success() && Path::new(&printed).parent() == Some(other.path()), || printed.clone())?;
    let lines = new_lines(Path::new(&printed));
    check(lines.len() == 6 && lines[5].1["type"] == "label" && lines[5].1["targetId"] == "544ace67", || {
        format!("{} lines", lines.len())
    })?;
    Ok(())
}

fn refusals() -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let s = src.to_str().unwrap();
    let target = dir.path().join("taken.jsonl");
    fs::write(&target, "keep me\n")?;
    let t = target.to_str().unwrap();
    let out = run(&["fork", s, "@", "-o", t]);
    check(out.status.code() == Some(2) && stderr(&out).contains("already exists"), || stderr(&out))?;
    check(fs::read_to_string(&target)? == "keep me\n", || "overwrote an existing file".into())?;
    let missing = dir.path().join("no/such/dir/x.jsonl");
    let out = run(&["fork", s, "@", "-o", missing.to_str().unwrap()]);
    check(out.status.code() == Some(2) && stderr(&out).contains("no such directory"), || stderr(&out))?;
    let out = run(&["fork", s, "nope", "-o", dir.path().join("a.jsonl").to_str().unwrap()]);
    check(out.status.code() == Some(2) && stderr(&out).contains("REV `nope`"), || stderr(&out))?;
    let out = run(&["fork", s, "@", "--session-dir", dir.path().join("absent").to_str().unwrap()]);
    check(out.status.code() == Some(2) && stderr(&out).contains("no such directory"), || stderr(&out))?;
    // Standard input has no directory; with -o it forks (no parentSession then).
    let out = pisces().args(["fork", "-", "@"]).stdin(fs::File::open(&src)?).output()?;
    check(out.status.code() == Some(2) && stderr(&out).contains("standard input"), || stderr(&out))?;
    let piped = dir.path().join("piped.jsonl");
    let out = pisces().args(["fork", "-", "@", "-o", piped.to_str().unwrap()]).stdin(fs::File::open(&src)?).output()?;
    check(out.status.success() && new_lines(&piped)[0].1.get("parentSession").is_none(), || stderr(&out))?;
    // Nothing but the two files written here is left in the directory (no temporary names).
    let mut names: Vec<String> =
        fs::read_dir(dir.path())?.flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
    names.sort();
    check(names == ["piped.jsonl", "taken.jsonl"], || format!("{names:?}"))
}

fn all_copies_every_entry() -> TestResult {
    let src = testdata().join("pi-1.6.0/05-labels-and-name.jsonl");
    let agent = tempfile::tempdir()?;
    let out = pisces()
        .env("PI_CODING_AGENT_DIR", agent.path())
        .args(["fork", src.to_str().unwrap(), "--all", "--cwd", "/srv/other/./checkout/", "--format", "json"])
        .output()?;
    let doc = stdout_json(&out)?;
    let path = PathBuf::from(doc["path"].as_str().unwrap());
    // pi's session folder for the new cwd (`pi --fork` run there).
    check(path.parent() == Some(&agent.path().join("sessions/--srv-other-checkout--")), || path.display().to_string())?;
    let text = fs::read_to_string(&path)?;
    let source = fs::read_to_string(&src)?;
    let (head, rest) = text.split_once('\n').unwrap();
    check(rest == source.split_once('\n').unwrap().1, || "the entries are not the source's lines".into())?;
    let h: Value = serde_json::from_str(head)?;
    check(h["cwd"] == "/srv/other/checkout" && h["parentSession"] == src.to_str().unwrap(), || head.into())?;
    check(doc["entryCount"] == source.lines().count() - 1 && doc["id"] == h["id"], || doc.to_string())
}

fn all_migrates_version_1() -> TestResult {
    // pi copies a version-1 file as it is under a version-3 header (no ids: a broken
    // session); pisces migrates it first, naming entries `L<line>` as it shows them.
    let src = testdata().join("real/large-session.jsonl");
    let dir = tempfile::tempdir()?;
    let new = dir.path().join("all.jsonl");
    let out = run(&["fork", src.to_str().unwrap(), "--all", "-o", new.to_str().unwrap()]);
    check(out.status.success(), || stderr(&out))?;
    let lines = new_lines(&new);
    check(lines.iter().skip(1).all(|(_, v)| v["id"].is_string() && v.get("parentId").is_some()), || {
        "an entry without id".into()
    })?;
    let golden: Value = serde_json::from_str(&fs::read_to_string(
        testdata().join("real/expected/large-session/default.context.json"),
    )?)?;
    let ctx = stdout_json(&run(&["path", new.to_str().unwrap(), "--format", "json"]))?;
    for field in ["messages", "model", "thinkingLevel", "pathIds"] {
        if let Some(d) = first_diff(&ctx[field], &golden[field], &format!("$.{field}")) {
            return Err(format!("--all of a version-1 file: {d}").into());
        }
    }
    Ok(())
}

fn linear_shape() -> TestResult {
    let src = testdata().join("pi-1.6.0/05-labels-and-name.jsonl");
    let dir = tempfile::tempdir()?;
    let new = dir.path().join("export.jsonl");
    let out = run(&["fork", src.to_str().unwrap(), "@", "--linear", "-o", new.to_str().unwrap()]);
    check(out.status.success(), || stderr(&out))?;
    let lines = new_lines(&new);
    let h = &lines[0].1;
    check(h["id"] == "01a228be-0be9-76bc-a3c4-74ca986d25da" && h.get("parentSession").is_none(), || {
        lines[0].0.clone()
    })?;
    let golden: Value = serde_json::from_str(&fs::read_to_string(
        testdata().join("pi-1.6.0/expected/05-labels-and-name/default.context.json"),
    )?)?;
    let ids: Vec<&Value> = lines[1..].iter().map(|(_, v)| &v["id"]).collect();
    let want: Vec<&Value> = golden["pathIds"].as_array().unwrap().iter().collect();
    check(ids == want, || format!("{ids:?}"))?;
    let mut prev = Value::Null;
    for (_, v) in &lines[1..] {
        check(v["parentId"] == prev, || "not chained linearly".into())?;
        prev = v["id"].clone();
    }
    let ctx = stdout_json(&run(&["path", new.to_str().unwrap(), "--format", "json"]))?;
    match first_diff(&ctx["messages"], &golden["messages"], "$.messages") {
        Some(d) => Err(d.into()),
        None => Ok(()),
    }
}

fn before_prints_the_user_text() -> TestResult {
    let src = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let s = src.to_str().unwrap();
    let dir = tempfile::tempdir()?;
    // The last user message of the default path.
    let ctx = stdout_json(&run(&["path", s, "--format", "json"]))?;
    let source = source_lines(&src);
    let user = ctx["pathIds"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|id| source.iter().find(|(_, _, v)| &v["id"] == id).unwrap())
        .find(|(_, _, v)| v["message"]["role"] == "user")
        .unwrap();
    let uid = user.2["id"].as_str().unwrap();
    let text: String = user.2["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    let new = dir.path().join("before.jsonl");
    let out = run(&["fork", s, uid, "--before", "-o", new.to_str().unwrap()]);
    check(out.status.success() && stdout(&out) == format!("{text}\n"), || format!("{:?}", stdout(&out)))?;
    check(stderr(&out).contains(new.to_str().unwrap()), || stderr(&out))?;
    let at_parent = stdout_json(&run(&["path", s, &format!("{uid}^"), "--format", "json"]))?;
    let forked = stdout_json(&run(&["path", new.to_str().unwrap(), "--format", "json"]))?;
    check(forked["messages"] == at_parent["messages"], || "the fork is not the context before the message".into())?;
    check(!new_lines(&new).iter().any(|(_, v)| v["id"] == uid), || "the user message was kept".into())?;
    let doc = stdout_json(&run(&[
        "fork",
        s,
        uid,
        "--before",
        "-o",
        dir.path().join("j.jsonl").to_str().unwrap(),
        "-f",
        "json",
    ]))?;
    check(doc["text"] == text.as_str(), || doc.to_string())?;

    // Before a root user message: pi's /fork makes a session with a header and no entries.
    let root = dir.path().join("root.jsonl");
    fs::write(
        &root,
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi\nthere"}}"#,
            "\n"
        ),
    )?;
    let empty = dir.path().join("empty.jsonl");
    let out = run(&["fork", root.to_str().unwrap(), "u1", "--before", "-o", empty.to_str().unwrap()]);
    check(out.status.success() && stdout(&out) == "hi\nthere\n", || stderr(&out))?;
    let lines = new_lines(&empty);
    check(lines.len() == 1 && lines[0].1["parentSession"] == root.to_str().unwrap(), || format!("{lines:?}"))?;

    // Not a user message: refused, nothing written.
    let nope = dir.path().join("nope.jsonl");
    let out = run(&["fork", s, "@", "--before", "-o", nope.to_str().unwrap()]);
    check(out.status.code() == Some(2) && stderr(&out).contains("not a user message"), || stderr(&out))?;
    check(!nope.exists(), || "wrote a file on error".into())
}

fn shadowed_and_damaged() -> TestResult {
    let dir = tempfile::tempdir()?;
    // Line 6 has the id of the later line 9: pi cannot name it; pisces forks it as named.
    let src = testdata().join("edge/24-duplicate-ids.jsonl");
    let new = dir.path().join("shadowed.jsonl");
    let out = run(&["fork", src.to_str().unwrap(), "#6", "-o", new.to_str().unwrap()]);
    check(out.status.success() && stderr(&out).contains("line 9"), || stderr(&out))?;
    let source = source_lines(&src);
    let lines = new_lines(&new);
    check(lines.last().unwrap().1["message"] == source.iter().find(|(n, _, _)| *n == 6).unwrap().2["message"], || {
        "not the entry on line 6".into()
    })?;
    // A line whose tail is damaged is skipped as pi skips it: its child forks alone.
    let src = testdata().join("edge/12-damaged-entry-tail.jsonl");
    let new = dir.path().join("damaged.jsonl");
    let out = run(&["fork", src.to_str().unwrap(), "@", "-o", new.to_str().unwrap()]);
    check(out.status.success(), || stderr(&out))?;
    let golden: Value = serde_json::from_str(&fs::read_to_string(
        testdata().join("edge/expected/12-damaged-entry-tail/default.context.json"),
    )?)?;
    let ids: Vec<Value> = new_lines(&new)[1..].iter().map(|(_, v)| v["id"].clone()).collect();
    check(ids == golden["pathIds"].as_array().unwrap()[..], || format!("{ids:?}"))
}
