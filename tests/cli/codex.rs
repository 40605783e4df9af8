//! Codex CLI rollouts (`testdata/codex-*/`), checked against the real client.
//!
//! `requests/<family>.json` holds, for each thread (rollout) of a family, the Responses
//! `input` Codex sent when it resumed the thread at its end, and at the end of each earlier
//! turn (the file cut after that turn's `task_complete`), less the probe's own message
//! (tools/codex-oracle/goldens.py). `pisces path ROLLOUT [:N] --format openai-responses`
//! must send the same. The only liberty: the client gives the first item (its base
//! instructions as a developer message) an id found in no file, which pisces leaves out.

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, first_diff, run, stdout, stdout_json, testdata, TestResult};

const CORPUS: &str = "codex-0.171.0";

fn corpus() -> PathBuf {
    testdata().join(CORPUS)
}

fn families() -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(corpus().join("requests"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    out.sort();
    out
}

fn golden(family: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(corpus().join("requests").join(format!("{family}.json"))).unwrap())
        .unwrap()
}

/// A thread's rollout in the corpus.
fn rollout(family: &str, thread: &str) -> PathBuf {
    let g = golden(family);
    corpus().join(family).join(g["threads"][thread]["file"].as_str().unwrap())
}

/// The first 13 characters of a thread id are unique in the corpus.
fn thread_of(family: &str, short: &str) -> String {
    let g = golden(family);
    g["threads"].as_object().unwrap().keys().find(|k| k.starts_with(short)).unwrap().clone()
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for family in families() {
        let f = family.clone();
        trials.push(Trial::test(format!("codex::context::{family}"), move || contexts_match(&f)));
    }
    trials.extend([
        Trial::test("codex::fork_family_is_one_tree", family_tree),
        Trial::test("codex::leaves_one_tip_per_thread_with_the_clients_tokens", leaves_tokens),
        Trial::test("codex::fork_without_its_parent_is_reported", missing_parent),
        Trial::test("codex::check_finds_bad_fork_points_and_gaps", check_findings),
        Trial::test("codex::ordinal_and_id_revs", ordinal_revs),
        Trial::test("codex::thread_id_found_in_codex_home", found_by_id),
        Trial::test("codex::forks_resumed_by_the_client", forks_resumed),
        Trial::test("codex::converts_as_pi_reads", converts_as_pi_reads),
        Trial::test("codex::diff_of_two_fix_forks", diff_of_two_fix_forks),
        Trial::test("codex::older_rollouts_load", older_rollouts),
        Trial::test("codex::other_formats_give_the_same_conversation", other_formats),
        Trial::test("codex::a_result_names_the_last_call_with_its_id_above_it", result_names),
        Trial::test("codex::a_web_search_is_a_row_of_its_own", web_search_row),
        Trial::test("codex::a_patch_that_did_not_apply_is_drawn_failed", failed_patch_row),
    ]);
    trials
}

fn responses_input(file: &Path, rev: Option<&str>) -> Result<Value, libtest_mimic::Failed> {
    let file = file.to_str().unwrap();
    let mut args = vec!["path", file];
    args.extend(rev);
    args.extend(["--format", "openai-responses"]);
    Ok(stdout_json(&run(&args))?["input"].clone())
}

/// At every thread's end and every earlier turn end the client resumed at, pisces sends
/// its input.
fn contexts_match(family: &str) -> TestResult {
    let g = golden(family);
    let mut failures = Vec::new();
    let mut compared = 0;
    for (thread, t) in g["threads"].as_object().unwrap() {
        let file = corpus().join(family).join(t["file"].as_str().unwrap());
        for p in t["points"].as_array().unwrap() {
            let Some(want) = p.get("input") else { continue };
            let mut want = want.clone();
            // The one id pisces cannot know (the module docs).
            want[0].as_object_mut().unwrap().remove("id");
            let cut = p["via"].as_str().unwrap().contains("cut");
            let rev = cut.then(|| format!(":{}", p["ordinal_exclusive"].as_u64().unwrap() - 1));
            compared += 1;
            let got = responses_input(&file, rev.as_deref())?;
            if let Some(d) = first_diff(&got, &want, "$") {
                failures.push(format!("{} at {}: {d}", &thread[..13], rev.as_deref().unwrap_or("the end")));
            }
        }
    }
    check(compared > 0, || "the golden holds no input".to_string())?;
    check(failures.is_empty(), || format!("{} of {compared} contexts differ:\n{}", failures.len(), failures.join("\n")))
}

fn tree_json(file: &Path, extra: &[&str]) -> Result<Value, libtest_mimic::Failed> {
    let mut args = vec!["tree", file.to_str().unwrap(), "--format", "json"];
    args.extend(extra);
    stdout_json(&run(&args))
}

/// The first line of each fork hangs under its parent's line right before the fork point
/// (`history_base.end_ordinal_exclusive`), and every file of the family is in the tree.
fn family_tree() -> TestResult {
    let family = "03-forks";
    let a = rollout(family, &thread_of(family, "01a238f7-7b32"));
    let doc = tree_json(&a, &["--filter", "all"])?;
    let nodes = doc["nodes"].as_array().unwrap();
    let by_id = |id: &str| nodes.iter().find(|n| n["id"] == id);
    let g = golden(family);
    let mut forks = 0;
    for (thread, t) in g["threads"].as_object().unwrap() {
        let file = corpus().join(family).join(t["file"].as_str().unwrap());
        let first: Value = serde_json::from_str(fs::read_to_string(&file)?.lines().next().unwrap())?;
        let Some(base) = first["payload"].get("history_base") else { continue };
        forks += 1;
        let tail = |t: &str| t.rsplit('-').next().unwrap().to_string();
        let own = format!("{}:{}", tail(thread), first["ordinal"]);
        let node = by_id(&own).ok_or_else(|| format!("no row {own} for the fork {thread}"))?;
        let parent_thread = base["thread_id"].as_str().unwrap();
        let want = format!("{}:{}", tail(parent_thread), base["end_ordinal_exclusive"].as_u64().unwrap() - 1);
        check(node["parentId"] == want.as_str(), || {
            format!("fork {thread} hangs under {}, not {want}", node["parentId"])
        })?;
    }
    check(forks == 3, || format!("{forks} forks in 03-forks, not 3"))?;
    // The text names each file of the family and the fork points.
    let text = stdout(&run(&["tree", a.to_str().unwrap()]));
    for (_, t) in g["threads"].as_object().unwrap() {
        let name = Path::new(t["file"].as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned();
        check(text.contains(&name), || format!("the tree does not name {name}:\n{text}"))?;
    }
    check(text.contains("[exec_command: ls]"), || format!("no exec_command row:\n{text}"))?;
    check(text.contains("at :41"), || format!("the fork of a fork is not shown at :41:\n{text}"))?;
    // Read from D, A's lines are in A's file, at their own line numbers.
    let d = rollout(family, &thread_of(family, "01a238f7-7f30"));
    let doc = tree_json(&d, &["--filter", "all"])?;
    let first = doc["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "9cac33b1d38d:0").ok_or("no A:0 from D")?;
    let a_name = a.file_name().unwrap().to_string_lossy().into_owned();
    check(first["line"] == 1 && first["file"].as_str().is_some_and(|f| f.ends_with(&a_name)), || format!("{first}"))?;
    // Events are hidden by default, shown with --filter all.
    check(!text.contains("[event_msg:"), || format!("events shown by default:\n{text}"))?;
    Ok(())
}

/// The usage of each response the client recorded (`token_usage_record.usage`) on a
/// thread's history, its own file and what it inherits up to each fork point.
fn recorded_tokens(family: &str, thread: &str, end: Option<u64>) -> Result<f64, libtest_mimic::Failed> {
    let file = rollout(family, thread);
    let text = fs::read_to_string(&file)?;
    let mut lines = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap());
    let first = lines.next().unwrap();
    let mut total = 0.0;
    if let Some(b) = first["payload"].get("history_base") {
        total += recorded_tokens(family, b["thread_id"].as_str().unwrap(), b["end_ordinal_exclusive"].as_u64())?;
    }
    for l in std::iter::once(first).chain(lines) {
        if end.is_some_and(|e| l["ordinal"].as_u64().unwrap() >= e) {
            break;
        }
        if l["type"] == "token_usage_record" {
            let u = &l["payload"]["usage"];
            total += ["input_tokens", "output_tokens", "cache_write_input_tokens"]
                .iter()
                .map(|k| u[*k].as_f64().unwrap_or(0.0))
                .sum::<f64>();
        }
    }
    Ok(total)
}

fn leaves_tokens() -> TestResult {
    let family = "03-forks";
    let a = rollout(family, &thread_of(family, "01a238f7-7b32"));
    let doc = stdout_json(&run(&["leaves", a.to_str().unwrap(), "--format", "json"]))?;
    let leaves = doc["leaves"].as_array().ok_or("no leaves array")?;
    let g = golden(family);
    check(leaves.len() == g["threads"].as_object().unwrap().len(), || {
        format!("{} leaves, one per thread expected", leaves.len())
    })?;
    for (thread, _) in g["threads"].as_object().unwrap() {
        let want = recorded_tokens(family, thread, None)?;
        let tail = thread.rsplit('-').next().unwrap();
        let leaf = leaves
            .iter()
            .find(|l| l["id"].as_str().is_some_and(|id| id.starts_with(tail)))
            .ok_or_else(|| format!("no leaf in thread {thread}: {leaves:?}"))?;
        let got = leaf["usage"]["tokens"].as_f64().ok_or_else(|| format!("no tokens: {leaf}"))?;
        check(got == want, || format!("thread {thread}: {got} tokens, the client recorded {want}"))?;
    }
    Ok(())
}

/// A fork copied without its parent loads, says what is missing, and gives its own items.
fn missing_parent() -> TestResult {
    let family = "03-forks";
    let d = rollout(family, &thread_of(family, "01a238f7-7f30"));
    let dir = tempfile::tempdir()?;
    let lone = dir.path().join(d.file_name().unwrap());
    fs::copy(&d, &lone)?;
    let out = run(&["check", lone.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    check(text.contains("01a238f7-7d3d-71b1-ae4e-072563e0f647") && text.contains("not in this store"), || {
        format!("check does not name the missing parent:\n{text}")
    })?;
    let out = run(&["path", lone.to_str().unwrap(), "--format", "openai-responses"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    check(err.contains("not in this store"), || format!("path does not warn:\n{err}"))?;
    let input = stdout_json(&out)?["input"].clone();
    let texts = input.to_string();
    check(texts.contains("[[f-d]]") && !texts.contains("[[f-b]]"), || format!("not the fork's own items: {texts}"))?;
    Ok(())
}

/// Parallel calls answered in the other order, then a call id used again: each result
/// names the last call with its id above it (grep's `tool` and the converted entry's
/// `toolName` both come from that).
fn result_names() -> TestResult {
    let src = rollout("01-exec-and-patch", &thread_of("01-exec-and-patch", "01a238f7-5494"));
    let meta = fs::read_to_string(&src)?.lines().next().unwrap_or_default().to_string();
    let item = |n: u32, payload: &str| {
        format!(
            r#"{{"timestamp":"2026-12-02T22:55:{n:02}.000Z","ordinal":{n},"type":"response_item","payload":{payload}}}"#
        )
    };
    let call = |id: &str, name: &str| {
        format!(
            r#"{{"type":"function_call","id":"fc_{id}_{name}","name":"{name}","arguments":"{{}}","call_id":"{id}"}}"#
        )
    };
    let output =
        |id: &str, text: &str| format!(r#"{{"type":"function_call_output","call_id":"{id}","output":"{text}"}}"#);
    let lines = [
        meta,
        item(1, r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}"#),
        item(2, &call("c1", "exec_command")),
        item(3, &call("c2", "apply_patch")),
        item(4, &output("c2", "RESULT-two")),
        item(5, &output("c1", "RESULT-one")),
        item(6, &call("c1", "view_image")),
        item(7, &output("c1", "RESULT-three")),
        item(8, &output("c9", "RESULT-none")),
    ];
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("rollout-2026-12-02T22-55-00-01a238f7-0000-7000-8000-000000000001.jsonl");
    fs::write(&file, lines.join("\n") + "\n")?;
    let out = run(&["grep", "-F", "RESULT-", file.to_str().unwrap(), "--format", "json"]);
    let got: Vec<(String, Value)> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|h| (h["text"].as_str().unwrap_or_default().to_string(), h["tool"].clone()))
        .collect();
    let want: Vec<(String, Value)> = [
        ("RESULT-two", "apply_patch"),
        ("RESULT-one", "exec_command"),
        ("RESULT-three", "view_image"),
        ("RESULT-none", ""),
    ]
    .iter()
    .map(|(t, n)| (t.to_string(), Value::from(*n)))
    .collect();
    check(got == want, || format!("results name {got:?}, want {want:?}"))
}

fn check_json(file: &Path) -> Result<Vec<Value>, libtest_mimic::Failed> {
    let out = run(&["check", file.to_str().unwrap(), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("check JSON: {e}"))?;
    Ok(doc["files"][0]["findings"].as_array().cloned().unwrap_or_default())
}

/// On copies of a family: a fork whose byte offset is not a line start of its parent, one
/// whose ordinal is past the parent's end, a deleted line (an ordinal gap), a call whose
/// output was deleted.
fn check_findings() -> TestResult {
    let family = "03-forks";
    let g = golden(family);
    let dir = tempfile::tempdir()?;
    let sessions = corpus().join(family);
    copy_tree(&sessions, dir.path())?;
    let clean = |short: &str| dir.path().join(g["threads"][thread_of(family, short)]["file"].as_str().unwrap());
    let b = clean("01a238f7-7d3d");
    for f in check_json(&b)? {
        check(f["level"] != "error" && f["level"] != "warning", || format!("the clean fork has a finding: {f}"))?;
    }
    let text = fs::read_to_string(&b)?;
    let (first, rest) = text.split_once('\n').unwrap();
    fs::write(&b, format!("{}\n{rest}", first.replace("\"end_byte_offset\":23720", "\"end_byte_offset\":23700")))?;
    let kinds: Vec<String> =
        check_json(&b)?.iter().map(|f| f["kind"].as_str().unwrap_or_default().to_string()).collect();
    check(kinds.contains(&"fork-offset-not-line-start".to_string()), || format!("{kinds:?}"))?;
    fs::write(
        &b,
        format!("{}\n{rest}", first.replace("\"end_ordinal_exclusive\":29", "\"end_ordinal_exclusive\":90")),
    )?;
    let kinds: Vec<String> =
        check_json(&b)?.iter().map(|f| f["kind"].as_str().unwrap_or_default().to_string()).collect();
    check(kinds.contains(&"fork-point-past-end".to_string()), || format!("{kinds:?}"))?;
    // A: drop the output of the `ls` call (and so an ordinal).
    let a = clean("01a238f7-7b32");
    let text = fs::read_to_string(&a)?;
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("\"function_call_output\"")).collect();
    check(kept.len() + 1 == text.lines().count(), || "A has not exactly one call output".to_string())?;
    fs::write(&a, kept.join("\n") + "\n")?;
    let kinds: Vec<String> =
        check_json(&a)?.iter().map(|f| f["kind"].as_str().unwrap_or_default().to_string()).collect();
    check(kinds.contains(&"ordinal-gap".to_string()) && kinds.contains(&"unanswered-call".to_string()), || {
        format!("{kinds:?}")
    })?;
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for e in fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            fs::create_dir_all(&target)?;
            copy_tree(&e.path(), &target)?;
        } else {
            fs::copy(e.path(), target)?;
        }
    }
    Ok(())
}

/// `:N` names the line with ordinal N on the thread's history (inherited lines too); an
/// item's own id names it.
fn ordinal_revs() -> TestResult {
    let family = "03-forks";
    let d = rollout(family, &thread_of(family, "01a238f7-7f30"));
    let f = d.to_str().unwrap();
    // Ordinal 10 is in A's file, inherited by B and then D.
    let doc = stdout_json(&run(&["show", f, ":10", "--format", "json"]))?;
    let id = doc["entries"][0]["id"].as_str().unwrap_or_default().to_string();
    check(id == "9cac33b1d38d:10", || format!("`:10` is {id}: {doc}"))?;
    let out = run(&["path", f, ":99"]);
    check(!out.status.success(), || "`:99` resolved".to_string())?;
    // By the item's id: the assistant message of D's turn.
    let text = fs::read_to_string(&d)?;
    let msg = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["payload"]["role"] == "assistant")
        .ok_or("no assistant message in D")?;
    let id = msg["payload"]["id"].as_str().unwrap();
    let by_id = responses_input(&d, Some(id))?;
    let by_ordinal = responses_input(&d, Some(&format!(":{}", msg["ordinal"])))?;
    check(by_id == by_ordinal, || "the id and the ordinal name different lines".to_string())?;
    Ok(())
}

/// Rollouts of older versions (no ordinals, no `session_meta`) load without a problem.
fn older_rollouts() -> TestResult {
    let dir = testdata().join("codex-older");
    let mut n = 0;
    for sub in fs::read_dir(&dir)?.flatten().filter(|e| e.path().is_dir()) {
        for f in fs::read_dir(sub.path())?.flatten().map(|e| e.path()) {
            n += 1;
            let doc = tree_json(&f, &["--filter", "all"])?;
            // Every line is a row, but a call's: its output's row names it.
            let text = fs::read_to_string(&f)?;
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            let calls = text
                .lines()
                .filter(|l| l.contains("\"type\":\"function_call\"") || l.contains("\"type\":\"custom_tool_call\""))
                .count();
            let nodes = doc["nodes"].as_array().map_or(0, Vec::len);
            check(nodes + calls == lines, || {
                format!("{}: {nodes} rows and {calls} calls for {lines} lines", f.display())
            })?;
            let findings = check_json(&f)?;
            check(findings.iter().all(|x| x["level"] != "error"), || format!("{}: {findings:?}", f.display()))?;
            // The context: never the client's undo points; a thread written as events only
            // is read from its messages, and check says so.
            let text = fs::read_to_string(&f)?;
            let input = responses_input(&f, None)?.to_string();
            check(!input.contains("ghost_snapshot"), || format!("{}: a ghost_snapshot is sent", f.display()))?;
            if !text.contains("\"response_item\"") {
                for l in text.lines() {
                    let v: Value = serde_json::from_str(l)?;
                    if v["payload"]["type"] == "user_message" {
                        let m = v["payload"]["message"].as_str().unwrap();
                        check(input.contains(&serde_json::to_string(m)?), || {
                            format!("{}: {m} is not in the context", f.display())
                        })?;
                    }
                }
                if text.contains("\"user_message\"") {
                    check(findings.iter().any(|x| x["kind"] == "events-as-conversation"), || format!("{findings:?}"))?;
                }
            }
        }
    }
    check(n >= 7, || format!("only {n} older rollouts"))
}

/// `--format json|text|markdown|llm|openai|anthropic` give the same conversation.
fn other_formats() -> TestResult {
    let family = "01-exec-and-patch";
    let g = golden(family);
    let thread = g["threads"].as_object().unwrap().keys().next().unwrap().clone();
    let file = rollout(family, &thread);
    let f = file.to_str().unwrap();
    let doc = stdout_json(&run(&["path", f, "--format", "json"]))?;
    let roles: Vec<&str> = doc["messages"].as_array().unwrap().iter().filter_map(|m| m["role"].as_str()).collect();
    check(roles.contains(&"toolResult") && roles.contains(&"assistant") && roles.contains(&"user"), || {
        format!("{roles:?}")
    })?;
    let text = stdout(&run(&["path", f]));
    check(text.contains("Fix it [[fix]]") && text.contains("npm test"), || format!("text:\n{text}"))?;
    for format in ["markdown", "llm", "openai", "anthropic"] {
        let out = run(&["path", f, "--format", format]);
        let s = stdout(&out);
        check(s.contains("Fix it [[fix]]"), || format!("{format} lacks the prompt"))?;
    }
    Ok(())
}

/// A thread id (or a prefix of one) is looked up in `$CODEX_HOME`, the archived rollouts
/// too; an ambiguous prefix lists the candidates.
fn found_by_id() -> TestResult {
    let home = tempfile::tempdir()?;
    copy_tree(&corpus().join("03-forks"), home.path())?;
    let run_in = |args: &[&str]| crate::common::pisces().env("CODEX_HOME", home.path()).args(args).output();
    let doc = stdout_json(&run_in(&["path", "01a238f7-7f30", "--format", "json"])?)?;
    check(doc["session"]["id"] == "01a238f7-7f30-7b42-a1dc-0a741152d77c", || format!("{}", doc["session"]))?;
    check(doc["session"]["agent"] == "Codex CLI", || format!("{}", doc["session"]))?;
    let out = run_in(&["path", "01a238f7-7", "--format", "json"])?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    check(!out.status.success() && err.contains("ambiguous") && err.contains("01a238f7-7e08"), || err.clone())?;
    // Archived: moved out of sessions/ (its parent stays there).
    let archived = home.path().join("archived_sessions");
    fs::create_dir_all(&archived)?;
    let d = rollout("03-forks", &thread_of("03-forks", "01a238f7-7f30"));
    let moved = archived.join(d.file_name().unwrap());
    fs::rename(home.path().join(d.strip_prefix(corpus().join("03-forks")).unwrap()), &moved)?;
    let input = stdout_json(&run_in(&["path", "01a238f7-7f30", "--format", "openai-responses"])?)?;
    check(input.to_string().contains("[[f-b]]"), || "the archived fork lost its inherited history".to_string())
}

/// The input less what pisces cannot know: the ids the client gives the items it makes at
/// request time (its base instructions, the `aborted` output of an unanswered call).
fn without_client_ids(input: &Value) -> Value {
    let mut v = input.clone();
    for (k, item) in v.as_array_mut().into_iter().flatten().enumerate() {
        if k == 0 || item["output"] == "aborted" {
            item.as_object_mut().unwrap().remove("id");
        }
    }
    v
}

/// `forks/<family>.json`: a `pisces fork` at every item of every thread, resumed by the
/// real client (tools/codex-oracle/forkcheck.py). Each fork's `session_meta` as pisces wrote
/// it, in a copy of the family, gives what the client sent, which is the source's context
/// at REV.
fn forks_resumed() -> TestResult {
    let mut compared = 0;
    let mut failures = Vec::new();
    for family in families() {
        let path = corpus().join("forks").join(format!("{family}.json"));
        let doc: Value = serde_json::from_str(&fs::read_to_string(&path)?)?;
        let home = tempfile::tempdir()?;
        copy_tree(&corpus().join(&family), home.path())?;
        let day = home.path().join("sessions/2099/01/01");
        fs::create_dir_all(&day)?;
        for f in doc["forks"].as_array().unwrap() {
            check(f.get("refused").is_none(), || {
                format!("{family} {}: the client refused the fork: {}", f["rev"], f["refused"])
            })?;
            let meta = f["meta"].as_str().unwrap();
            let id = serde_json::from_str::<Value>(meta)?["payload"]["id"].as_str().unwrap().to_string();
            let fork = day.join(format!("rollout-2099-01-01T00-00-00-{id}.jsonl"));
            fs::write(&fork, format!("{meta}\n"))?;
            let want = without_client_ids(&f["input"]);
            let got = responses_input(&fork, None)?;
            let source = home.path().join(f["file"].as_str().unwrap());
            let at_rev = responses_input(&source, f["rev"].as_str())?;
            compared += 1;
            if let Some(d) = first_diff(&got, &want, "$") {
                failures.push(format!("{family} fork at {}: {d}", f["rev"]));
            } else if let Some(d) = first_diff(&at_rev, &want, "$") {
                failures.push(format!("{family} source at {}: {d}", f["rev"]));
            }
            fs::remove_file(&fork)?;
        }
    }
    check(compared > 50, || format!("only {compared} forks"))?;
    check(failures.is_empty(), || format!("{} of {compared} differ:\n{}", failures.len(), failures.join("\n")))
}

/// Texts, calls and results in order, of a Responses input (less the client's context).
fn conversation_of_responses(input: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for it in input.as_array().into_iter().flatten() {
        match it["type"].as_str() {
            Some("message") => {
                let role = it["role"].as_str().unwrap_or_default();
                for b in it["content"].as_array().into_iter().flatten() {
                    if b["type"] == "input_image" {
                        out.push((role.to_string(), "<image>".into()));
                        continue;
                    }
                    let t = b["text"].as_str().unwrap_or_default();
                    let client = ["<environment_context>", "# AGENTS.md instructions"].iter().any(|p| t.starts_with(p));
                    if role == "developer" || client {
                        continue;
                    }
                    out.push((role.to_string(), t.trim_end().to_string()));
                }
            }
            Some("function_call" | "custom_tool_call") => {
                out.push(("call".into(), it["call_id"].as_str().unwrap().into()))
            }
            // The server's own search: the conversion keeps it as it is, as its JSON.
            Some("web_search_call") => out.push(("assistant".into(), serde_json::to_string(it).unwrap_or_default())),
            Some("function_call_output" | "custom_tool_call_output") => {
                out.push(("result".into(), it["call_id"].as_str().unwrap().into()))
            }
            _ => {}
        }
    }
    out
}

/// The same, of pi's LLM messages.
fn conversation_of_pi(messages: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in messages.as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or_default();
        if role == "toolResult" {
            out.push(("result".into(), m["toolCallId"].as_str().unwrap_or_default().to_string()));
            continue;
        }
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("text") => {
                    out.push((role.to_string(), b["text"].as_str().unwrap_or_default().trim_end().to_string()))
                }
                Some("toolCall") => out.push(("call".into(), b["id"].as_str().unwrap_or_default().to_string())),
                Some("image") => out.push((role.to_string(), "<image>".into())),
                _ => {}
            }
        }
    }
    out
}

/// `converted/<family>--<thread>.json`: what the real pi read from `convert --to pi` of each
/// thread (tools/codex-oracle/pi_goldens.py). pisces converts again and reads it as pi did;
/// and it is the conversation Codex sent (its texts, calls and results in order, less the
/// client's own context messages), where no compaction replaced it (in the file or in the
/// history a fork inherits).
fn converts_as_pi_reads() -> TestResult {
    let mut n = 0;
    let dir = corpus().join("converted");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)?.flatten().map(|e| e.path()).collect();
    files.sort();
    for g in files {
        let stem = g.file_stem().unwrap().to_string_lossy().into_owned();
        let (family, thread) = stem.split_once("--").unwrap();
        let src = rollout(family, thread);
        let want: Value = serde_json::from_str(&fs::read_to_string(&g)?)?;
        let tmp = tempfile::tempdir()?;
        let out = tmp.path().join("c.jsonl");
        let r = run(&["convert", src.to_str().unwrap(), "--to", "pi", "-o", out.to_str().unwrap()]);
        check(r.status.success(), || String::from_utf8_lossy(&r.stderr).into_owned())?;
        let doc = stdout_json(&run(&["path", out.to_str().unwrap(), "--format", "llm"]))?;
        if let Some(d) = first_diff(&doc["messages"], &want["llm"], "$") {
            return Err(format!("{stem}: pi reads the conversion otherwise: {d}").into());
        }
        // Where a compaction replaced the history (in this file or in what a fork inherits),
        // pi's compaction and Codex's differ by design: only pi's reading is compared.
        if !fs::read_to_string(&out)?.contains("\"type\":\"compaction\"") {
            let client = golden(family)["threads"][thread]["points"][0]["input"].clone();
            let (a, b) = (conversation_of_pi(&want["llm"]), conversation_of_responses(&client));
            check(a == b, || format!("{stem}: pi's conversation:\n{a:#?}\nCodex's:\n{b:#?}"))?;
        }
        n += 1;
    }
    check(n >= 5, || format!("only {n} conversions"))
}

/// `05-two-fixes`: two forks of one thread (MANIFEST: fix A leaves `npm test` failing, fix B
/// makes it pass). Read from the source thread, its two tips are the forks' ends; diff
/// aligns them where both forked (the source's last line before ordinal 19) and reports the
/// exit codes, the patched file and the tokens of each side.
fn diff_of_two_fix_forks() -> TestResult {
    let family = "05-two-fixes";
    let s = rollout(family, &thread_of(family, "01a238f7-8446"));
    let f = s.to_str().unwrap();
    let leaves = stdout_json(&run(&["leaves", f, "--format", "json"]))?;
    let tip = |short: &str| -> Result<String, libtest_mimic::Failed> {
        let tail = thread_of(family, short).rsplit('-').next().unwrap().to_string();
        leaves["leaves"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["id"].as_str())
            .find(|id| id.starts_with(&tail))
            .map(str::to_string)
            .ok_or_else(|| format!("no tip of {short}: {leaves}").into())
    };
    let (a, b) = (tip("01a238f7-8605")?, tip("01a238f7-87ec")?);
    let doc = stdout_json_any(&run(&["diff", f, &a, &b, "--format", "json"]))?;
    let fork_point = format!("{}:18", thread_of(family, "01a238f7-8446").rsplit('-').next().unwrap());
    check(doc["commonAncestor"]["id"] == fork_point.as_str(), || format!("fork point {}", doc["commonAncestor"]))?;
    let last_test = |side: &str| -> Option<i64> {
        doc["summary"][side]["commands"]
            .as_array()?
            .iter()
            .find(|c| c["isTest"] == true)
            .and_then(|c| c["last"]["exitCode"].as_i64())
    };
    check((last_test("a"), last_test("b")) == (Some(1), Some(0)), || {
        format!("npm test: {:?} / {:?}", last_test("a"), last_test("b"))
    })?;
    for side in ["a", "b"] {
        let sum = &doc["summary"][side];
        check(sum["filesModified"] == serde_json::json!(["src/todo.js"]), || {
            format!("{side}: {}", sum["filesModified"])
        })?;
        check(sum["usage"]["input"].as_f64().is_some_and(|t| t > 0.0), || format!("{side}: no tokens"))?;
    }
    let text = stdout(&run(&["diff", f, &a, &b]));
    check(text.contains("pass on B only"), || text.clone())
}

/// A command's JSON whatever its exit status (`diff` exits 1 when the sides differ).
fn stdout_json_any(out: &std::process::Output) -> Result<Value, libtest_mimic::Failed> {
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)).into())
}

/// `06-mixed`: a patch apply_patch could not apply is drawn as failed (its output has no exit
/// code to show).
fn failed_patch_row() -> TestResult {
    let family = "06-mixed";
    let f = rollout(family, &thread_of(family, "01a24efa-2cb9"));
    let text = stdout(&run(&["tree", f.to_str().unwrap()]));
    check(text.contains("[apply_patch: src/todo.js] (failed)"), || format!("no failed patch row in\n{text}"))
}

/// `09-search`: the server's own web search has no output item to name it, so it is a row of
/// its own, between the reasoning and the answer.
fn web_search_row() -> TestResult {
    let family = "09-search";
    let f = rollout(family, &thread_of(family, "01a24f41-8629"));
    let text = stdout(&run(&["tree", f.to_str().unwrap()]));
    let at = |row: &str| text.find(row).ok_or_else(|| format!("no row {row:?} in\n{text}"));
    check(at("Look it up first.")? < at("[web_search: Date.UTC day argument]")?, || format!("out of order:\n{text}"))?;
    check(at("[web_search: Date.UTC day argument]")? < at("Date.UTC takes the day")?, || {
        format!("out of order:\n{text}")
    })
}
