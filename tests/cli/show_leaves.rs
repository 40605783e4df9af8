//! `pisces show` and `pisces leaves`, checked against facts pi computed
//! (`expected/<stem>/<stem>.entries.json`: pi's in-memory entries with their lines, its
//! tree, leaves, branches, labels, default leaf and usage breakdown) and against the
//! session files' own bytes.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{
    check, first_diff, has_program, needing, pisces, run, stderr, stdout, stdout_json, testdata, TestResult,
};
use crate::conformance::corpora;

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (name, file, golden) in golden_files() {
        let (f, g) = (file.clone(), golden.clone());
        trials.push(Trial::test(format!("leaves::{name}"), move || leaves_match_pi(&f, &g)));
        let (f, g) = (file.clone(), golden.clone());
        trials.push(Trial::test(format!("show::{name}"), move || show_matches_pi(&f, &g)));
    }
    for file in all_session_files() {
        let name = file.strip_prefix(testdata()).unwrap().to_string_lossy().into_owned();
        let f = file.clone();
        trials.push(Trial::test(format!("show::every_entry::{name}"), move || every_entry_shows(&f)));
    }
    trials.extend([
        Trial::test("show::tool_call_arguments_and_usage", tool_call_arguments_and_usage),
        Trial::test("show::images_as_notes", images_as_notes),
        Trial::test("show::errors_exit_2", show_errors),
        Trial::test("show::hostile_text_is_sanitized", hostile_text_is_sanitized),
        Trial::test("show::unknown_types_and_fields_are_shown", unknown_types_and_fields_are_shown),
        Trial::test("show::broken_pipe_is_quiet", broken_pipe_is_quiet),
        Trial::test("leaves::piped_table_is_whole", piped_table_is_whole),
        needing(
            "leaves::width_fits_the_terminal_columns",
            "`script` (util-linux)",
            has_program("script"),
            width_fits_columns,
        ),
        Trial::test("show_leaves::help_has_examples", help_has_examples),
    ]);
    trials
}

/// (name, session file, `entries.json` golden) for every corpus file pi described.
fn golden_files() -> Vec<(String, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for corpus in corpora() {
        let corpus_name = corpus.file_name().unwrap().to_string_lossy().into_owned();
        let mut stems: Vec<PathBuf> =
            fs::read_dir(corpus.join("expected")).unwrap().flatten().map(|e| e.path()).collect();
        stems.sort();
        for dir in stems {
            let stem = dir.file_name().unwrap().to_string_lossy().into_owned();
            let golden = dir.join(format!("{stem}.entries.json"));
            let file = corpus.join(format!("{stem}.jsonl"));
            if golden.exists() && file.exists() {
                out.push((format!("{corpus_name}/{stem}"), file, golden));
            }
        }
    }
    out
}

/// Every session file pisces opens (the corpora, the edge cases).
fn all_session_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for corpus in corpora() {
        for e in fs::read_dir(&corpus).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "jsonl") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    files
}

fn load(path: &Path) -> Result<Value, libtest_mimic::Failed> {
    Ok(serde_json::from_str(&fs::read_to_string(path)?)?)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// pi's facts about a file, with each entry's parsed line at hand.
struct Golden {
    g: Value,
    /// id -> pi's in-memory entry (with `line`).
    by_id: HashMap<String, Value>,
}

impl Golden {
    fn new(path: &Path) -> Result<Golden, libtest_mimic::Failed> {
        let g = load(path)?;
        let by_id = g["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| Some((e["id"].as_str()?.to_string(), e.clone())))
            .collect();
        Ok(Golden { g, by_id })
    }

    fn branch(&self, leaf: &str) -> Vec<&str> {
        self.g["branches"][leaf].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect()
    }

    fn entry(&self, id: &str) -> &Value {
        &self.by_id[id]
    }
}

/// The usage pi's getUsageCostBreakdown takes from an entry: (input + output + cache
/// read + cache write, cost.total), or nothing.
fn entry_usage(e: &Value) -> Option<(f64, f64)> {
    let u = match (e["type"].as_str(), e["message"]["role"].as_str()) {
        (Some("message"), Some("assistant")) => &e["message"]["usage"],
        (Some("usage"), _) => &e["usage"],
        (Some("message"), Some("toolResult")) => &e["message"]["usage"],
        (Some("branch_summary" | "compaction"), _) => &e["usage"],
        _ => return None,
    };
    if u.is_null() {
        return None;
    }
    let n = |k: &str| u[k].as_f64().unwrap_or(0.0);
    Some((n("input") + n("output") + n("cacheRead") + n("cacheWrite"), u["cost"]["total"].as_f64().unwrap_or(0.0)))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// `leaves --format json` against pi: the same leaves, default leaf, depths, labels,
/// last prompt and reply, model, per-path usage; sorted by time; short ids unique.
pub fn leaves_match_pi(file: &Path, golden: &Path) -> TestResult {
    let pi = Golden::new(golden)?;
    let g = &pi.g;
    let doc = stdout_json(&run(&["leaves", s(file), "--format", "json"]))?;
    check(doc["version"] == 1, || "no version 1".into())?;
    check(doc["defaultLeafId"] == g["defaultLeafId"], || format!("defaultLeafId {}", doc["defaultLeafId"]))?;
    let leaves = doc["leaves"].as_array().unwrap();
    let got: BTreeSet<&str> = leaves.iter().map(|l| l["id"].as_str().unwrap()).collect();
    let want: BTreeSet<&str> = g["leaves"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    check(got == want, || format!("leaves {got:?}, pi: {want:?}"))?;
    check(leaves.len() == want.len(), || "a leaf listed twice".into())?;

    let labels = g["labels"].as_object().unwrap();
    let all_ids: Vec<&str> = pi.by_id.keys().map(String::as_str).collect();
    let mut file_tokens = 0.0;
    let mut file_cost = 0.0;
    for e in g["entries"].as_array().unwrap() {
        if let Some((t, c)) = entry_usage(e) {
            file_tokens += t;
            file_cost += c;
        }
    }
    // The test's reading of pi's rule must give pi's own whole-file totals.
    if let Some(breakdown) = g["usageBreakdown"].as_array() {
        let tokens: f64 = breakdown.iter().map(|b| b["tokens"].as_f64().unwrap()).sum();
        let cost: f64 = breakdown.iter().map(|b| b["cost"].as_f64().unwrap()).sum();
        check(close(tokens, file_tokens) && close(cost, file_cost), || {
            format!("the test's usage rule gives {file_tokens} tokens ${file_cost}, pi {tokens} ${cost}")
        })?;
    }

    let mut last_time = String::new();
    for l in leaves {
        let id = l["id"].as_str().unwrap();
        let branch = pi.branch(id);
        let what = |m: String| format!("leaf {id}: {m}");
        check(l["isDefault"] == (g["defaultLeafId"] == id), || what("isDefault".into()))?;
        check(l["depth"] == branch.len() - 1, || {
            what(format!("depth {} (pi's branch has {})", l["depth"], branch.len()))
        })?;
        check(l["line"] == pi.entry(id)["line"], || what("line".into()))?;

        // Label: the leaf's, else its nearest labelled ancestor's.
        let want_label = branch.iter().rev().enumerate().find_map(|(up, e)| Some((labels.get(*e)?, *e, up)));
        match want_label {
            None => check(l["label"].is_null(), || what(format!("label {}", l["label"])))?,
            Some((text, at, up)) => check(
                l["label"]["text"] == *text && l["label"]["entryId"] == at && l["label"]["distance"] == up,
                || what(format!("label {} (pi: {text} on {at}, {up} up)", l["label"])),
            )?,
        }

        // Last user prompt, last assistant reply, model in effect: from pi's entries on the branch.
        let on_branch = |pred: &dyn Fn(&Value) -> bool| branch.iter().rev().copied().find(|e| pred(pi.entry(e)));
        let user = on_branch(&|e| e["type"] == "message" && e["message"]["role"] == "user");
        check(l["lastUserPrompt"]["id"].as_str() == user, || what(format!("last prompt {}", l["lastUserPrompt"])))?;
        let assistant = on_branch(&|e| e["type"] == "message" && e["message"]["role"] == "assistant");
        check(l["lastAssistant"]["id"].as_str() == assistant, || what(format!("last reply {}", l["lastAssistant"])))?;
        if let Some(a) = assistant {
            let m = &pi.entry(a)["message"];
            check(l["lastAssistant"]["stopReason"] == m["stopReason"], || what("stopReason".into()))?;
        }
        let setter = on_branch(&|e| {
            e["type"] == "model_change" || (e["type"] == "message" && e["message"]["role"] == "assistant")
        });
        let want_model = setter.map(|m| {
            let e = pi.entry(m);
            if e["type"] == "model_change" {
                (e["provider"].clone(), e["modelId"].clone())
            } else {
                (e["message"]["provider"].clone(), e["message"]["model"].clone())
            }
        });
        let got_model =
            (!l["model"].is_null()).then(|| (l["model"]["provider"].clone(), l["model"]["modelId"].clone()));
        check(got_model == want_model, || what(format!("model {}", l["model"])))?;

        // Tokens and cost on the path, summed with pi's rule over pi's branch.
        let (mut tokens, mut cost) = (0.0, 0.0);
        for e in &branch {
            if let Some((t, c)) = entry_usage(pi.entry(e)) {
                tokens += t;
                cost += c;
            }
        }
        let u = &l["usage"];
        check(close(u["tokens"].as_f64().unwrap(), tokens) && close(u["cost"].as_f64().unwrap(), cost), || {
            what(format!("usage {u}, want {tokens} tokens ${cost}"))
        })?;
        let parts: f64 = ["input", "output", "cacheRead", "cacheWrite"].iter().map(|k| u[*k].as_f64().unwrap()).sum();
        check(close(parts, tokens), || what("tokens is not input + output + cache read + cache write".into()))?;
        if want.len() == 1 {
            // A single path holds every entry: pi's whole-file numbers.
            check(close(tokens, file_tokens) && close(cost, file_cost), || what("single path != file total".into()))?;
        }

        // Oldest first (pi writes ISO timestamps with `Z`: they sort as strings).
        let t = pi.entry(id)["timestamp"].as_str().unwrap_or_default().to_string();
        check(t >= last_time, || what(format!("not sorted by time: {t} after {last_time}")))?;
        last_time = t;

        // Short id: a prefix of at least 4 characters that names only this entry, and
        // the shortest such.
        let short = l["shortId"].as_str().unwrap();
        let unique = |p: &str| all_ids.iter().filter(|i| i.starts_with(p)).count() == 1;
        check(id.starts_with(short) && (short.len() >= 4 || short == id), || what(format!("shortId {short}")))?;
        if short != id {
            check(unique(short), || what(format!("shortId {short} is not unique")))?;
        }
        if short.len() > 4 {
            check(!unique(&short[..short.len() - 1]), || what(format!("shortId {short} is not the shortest")))?;
        }
    }

    // The table: one row per leaf, `@` before pi's default leaf.
    let out = run(&["leaves", s(file)]);
    check(out.status.success() && out.stderr.is_empty(), || stderr(&out))?;
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().skip(2).collect();
    check(rows.len() == want.len(), || format!("{} rows for {} leaves:\n{text}", rows.len(), want.len()))?;
    for l in leaves {
        let short = l["shortId"].as_str().unwrap();
        let row = rows.iter().find(|r| r[2..].split_whitespace().next() == Some(short));
        let Some(row) = row else { return Err(format!("no row for {short}:\n{text}").into()) };
        let marked = row.starts_with('@');
        check(marked == (l["isDefault"] == true), || format!("@ on the wrong row:\n{text}"))?;
    }
    Ok(())
}

/// `show --format json` of every entry pi lists: pi's in-memory entry exactly, its line,
/// its children in pi's order, its depth, its label.
pub fn show_matches_pi(file: &Path, golden: &Path) -> TestResult {
    let pi = Golden::new(golden)?;
    let g = &pi.g;
    let entries = g["entries"].as_array().unwrap();
    let revs: Vec<String> = entries.iter().map(|e| format!("#{}", e["line"])).collect();
    let mut args = vec!["show", s(file)];
    args.extend(revs.iter().map(String::as_str));
    args.extend(["--format", "json"]);
    let doc = stdout_json(&run(&args))?;
    check(doc["version"] == 1, || "no version 1".into())?;
    let shown = doc["entries"].as_array().unwrap();
    check(shown.len() == entries.len(), || format!("{} entries shown of {}", shown.len(), entries.len()))?;
    // Depth of every entry, from pi's tree.
    let mut depth: HashMap<&str, usize> = HashMap::new();
    let mut todo: Vec<(&str, usize)> =
        g["tree"]["roots"].as_array().unwrap().iter().map(|r| (r.as_str().unwrap(), 0)).collect();
    while let Some((id, d)) = todo.pop() {
        depth.insert(id, d);
        for c in g["tree"]["children"][id].as_array().into_iter().flatten() {
            todo.push((c.as_str().unwrap(), d + 1));
        }
    }
    let labels = g["labels"].as_object().unwrap();
    for (got, want) in shown.iter().zip(entries) {
        let id = want["id"].as_str().unwrap();
        let mut entry = want.clone();
        entry.as_object_mut().unwrap().remove("line");
        let what = |m: String| format!("entry {id}: {m}");
        if let Some(d) = first_diff(&got["entry"], &entry, "$.entry") {
            return Err(what(d).into());
        }
        check(got["line"] == want["line"] && got["id"] == id, || what(format!("line {}", got["line"])))?;
        let kids = g["tree"]["children"].get(id).cloned().unwrap_or(Value::Array(vec![]));
        check(got["children"] == kids, || what(format!("children {} (pi: {kids})", got["children"])))?;
        check(got["isLeaf"] == kids.as_array().unwrap().is_empty(), || what("isLeaf".into()))?;
        check(got["depth"] == depth[id], || what(format!("depth {} (pi: {})", got["depth"], depth[id])))?;
        check(got["isDefaultLeaf"] == (g["defaultLeafId"] == id), || what("isDefaultLeaf".into()))?;
        match labels.get(id) {
            Some(text) => {
                check(got["label"]["text"] == *text && got["label"]["timestamp"] == g["labelTimestamps"][id], || {
                    what(format!("label {} (pi: {text})", got["label"]))
                })?
            }
            None => check(got["label"].is_null(), || what(format!("label {}", got["label"])))?,
        }
    }
    Ok(())
}

/// The lines of a file pi keeps as entries: every line that is JSON and truthy, except
/// session headers (an object with `"type":"session"`).
fn entry_lines(file: &Path) -> Result<Vec<(usize, Vec<u8>)>, libtest_mimic::Failed> {
    let bytes = fs::read(file)?;
    let mut out = Vec::new();
    for (k, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        let falsy = match &v {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            _ => false,
        };
        if falsy || v["type"] == "session" {
            continue;
        }
        out.push((k + 1, line.to_vec()));
    }
    Ok(out)
}

/// Every entry of every file can be shown, in text and JSON, and `--raw` gives its line
/// byte for byte.
fn every_entry_shows(file: &Path) -> TestResult {
    let lines = entry_lines(file)?;
    if lines.is_empty() {
        return Ok(());
    }
    let revs: Vec<String> = lines.iter().map(|(n, _)| format!("#{n}")).collect();
    let with = |extra: &[&str]| {
        let mut args = vec!["show", s(file)];
        args.extend(revs.iter().map(String::as_str));
        args.extend(extra);
        run(&args)
    };
    let raw = with(&["--raw"]);
    check(raw.status.success(), || format!("--raw: exit {:?}: {}", raw.status.code(), stderr(&raw)))?;
    let want: Vec<u8> = lines.iter().flat_map(|(_, l)| l.iter().copied().chain([b'\n'])).collect();
    check(raw.stdout == want, || "--raw differs from the file's lines".into())?;

    let text = with(&[]);
    check(text.status.success(), || format!("text: exit {:?}: {}", text.status.code(), stderr(&text)))?;
    let out = stdout(&text);
    let rows: BTreeSet<&str> = out.lines().filter_map(|l| l.strip_prefix("line ")).map(str::trim).collect();
    for (n, _) in &lines {
        check(rows.contains(n.to_string().as_str()), || format!("no `line {n}` row in the text"))?;
    }
    check(!out.contains('\u{1b}'), || "escape sequences in piped text".into())?;

    let doc = stdout_json(&with(&["--format", "json"]))?;
    let got: Vec<u64> = doc["entries"].as_array().unwrap().iter().map(|e| e["line"].as_u64().unwrap()).collect();
    let want: Vec<u64> = lines.iter().map(|(n, _)| *n as u64).collect();
    check(got == want, || format!("json lines {got:?}, want {want:?}"))?;
    for (e, (_, line)) in doc["entries"].as_array().unwrap().iter().zip(&lines) {
        // Files that need no migration: the entry is the line, parsed.
        let parsed: Value = serde_json::from_slice(line)?;
        if doc["session"]["version"] == 3 {
            check(e["entry"] == parsed, || format!("line {}: entry differs from the line", e["line"]))?;
        }
    }
    Ok(())
}

/// An assistant message with tool calls: each call's arguments pretty-printed, and the
/// message's usage and cost.
fn tool_call_arguments_and_usage() -> TestResult {
    let file = testdata().join("pi-1.6.0/02-tool-use.jsonl");
    let text = fs::read_to_string(&file)?;
    let (n, v) = text
        .lines()
        .enumerate()
        .filter_map(|(k, l)| Some((k + 1, serde_json::from_str::<Value>(l).ok()?)))
        .find(|(_, v)| {
            v["message"]["role"] == "assistant"
                && v["message"]["content"].as_array().unwrap().iter().filter(|b| b["type"] == "toolCall").count() >= 1
        })
        .unwrap();
    let out = run(&["show", s(&file), &format!("#{n}")]);
    check(out.status.success(), || stderr(&out))?;
    let shown = stdout(&out);
    for call in v["message"]["content"].as_array().unwrap().iter().filter(|b| b["type"] == "toolCall") {
        let pretty = serde_json::to_string_pretty(&call["arguments"])?;
        check(pretty.contains('\n') && shown.contains(&pretty), || format!("arguments not pretty-printed:\n{shown}"))?;
        check(shown.contains(call["name"].as_str().unwrap()) && shown.contains(call["id"].as_str().unwrap()), || {
            "tool name or call id missing".into()
        })?;
    }
    let u = &v["message"]["usage"];
    let tokens = grouped(u["totalTokens"].as_u64().unwrap());
    let usage = shown.lines().find(|l| l.starts_with("usage")).unwrap_or_default();
    check(usage.contains(&format!("{tokens} tokens")), || format!("usage row: {usage}"))?;
    for k in ["input", "output"] {
        check(usage.contains(&format!("{k} {}", grouped(u[k].as_u64().unwrap()))), || format!("usage row: {usage}"))?;
    }
    let cost = shown.lines().find(|l| l.starts_with("cost")).unwrap_or_default();
    let total = format!("{:.8}", u["cost"]["total"].as_f64().unwrap());
    let total = total.trim_end_matches('0');
    check(cost.contains(&format!("${total}")), || format!("cost row: {cost} (total {total})"))?;
    Ok(())
}

fn grouped(n: u64) -> String {
    let digits: Vec<char> = n.to_string().chars().rev().collect();
    let groups: Vec<String> = digits.chunks(3).rev().map(|g| g.iter().rev().collect()).collect();
    groups.join(",")
}

/// Images are notes with their type and decoded size, never base64.
fn images_as_notes() -> TestResult {
    let file = testdata().join("pi-1.6.0/11-bash-and-images.jsonl");
    let text = fs::read_to_string(&file)?;
    let mut seen = 0;
    for (k, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line)?;
        let blocks = v["message"]["content"].as_array().cloned().unwrap_or_default();
        let images: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "image").collect();
        if images.is_empty() {
            continue;
        }
        let out = run(&["show", s(&file), &format!("#{}", k + 1)]);
        check(out.status.success(), || stderr(&out))?;
        let shown = stdout(&out);
        for img in images {
            seen += 1;
            let data = img["data"].as_str().unwrap();
            let bytes = data.len() * 3 / 4 - data.bytes().rev().take_while(|&c| c == b'=').count();
            let size =
                if bytes < 1024 { format!("{bytes} B") } else { format!("{} KB", (bytes as f64 / 1024.0).round()) };
            let note = format!("[{} {size}]", img["mimeType"].as_str().unwrap());
            check(shown.contains(&note), || format!("line {}: no {note}:\n{shown}", k + 1))?;
            check(!shown.contains(&data[..data.len().min(40)]), || "base64 data printed".into())?;
        }
    }
    check(seen >= 2, || format!("only {seen} images found"))
}

fn show_errors() -> TestResult {
    let file = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    for args in [
        vec!["show", s(&file), "no-such-rev"],
        vec!["show", s(&file)],
        vec!["show", s(&file), "@", "--raw", "--format", "json"],
        vec!["show", s(&file), "#1"],
        vec!["leaves", "/nonexistent/file.jsonl"],
        vec!["leaves", s(&file), "--format", "yaml"],
    ] {
        let out = run(&args);
        check(out.status.code() == Some(2) && out.stdout.is_empty() && !out.stderr.is_empty(), || {
            format!("{args:?}: exit {:?}, stderr {}", out.status.code(), stderr(&out))
        })?;
    }
    let out = run(&["show", s(&file), "no-such-rev"]);
    check(stderr(&out).starts_with("pisces: error: REV `no-such-rev`"), || stderr(&out))
}

/// Escape sequences and bidi overrides in session text never reach the terminal.
fn hostile_text_is_sanitized() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("hostile.jsonl");
    let evil = "ok\u{1b}]0;owned\u{7}\u{1b}[2J\u{202e}txt";
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"h1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}),
        serde_json::json!({"type":"message","id":"aaaa1111","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
            "message":{"role":"user","content":[{"type":"text","text":evil}],"timestamp":1}}),
        serde_json::json!({"type":"message","id":"bbbb2222","parentId":"aaaa1111","timestamp":"2026-01-01T00:00:02.000Z",
            "message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":evil,"arguments":{"x":evil}}],
            "provider":evil,"model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,
            "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}),
        serde_json::json!({"type":"label","id":"cccc3333","parentId":"bbbb2222","timestamp":"2026-01-01T00:00:03.000Z",
            "targetId":"bbbb2222","label":evil}),
    ];
    fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
    for args in
        [vec!["show", s(&path), "#2", "#3", "#4", "--color", "never"], vec!["leaves", s(&path), "--color", "never"]]
    {
        let out = run(&args);
        let text = stdout(&out);
        check(out.status.success(), || stderr(&out))?;
        check(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'), || {
            format!("{args:?} printed control characters:\n{text:?}")
        })?;
        check(text.contains("oktxt"), || format!("{args:?}: text lost:\n{text}"))?;
    }
    // JSON keeps the text as it is (escaped by the JSON encoder).
    let doc = stdout_json(&run(&["show", s(&path), "#2", "--format", "json"]))?;
    check(doc["entries"][0]["entry"]["message"]["content"][0]["text"] == evil, || "JSON changed the text".into())
}

/// Nothing of a line is hidden: an unknown entry type is printed as JSON, unknown fields
/// of known entries, messages and blocks as rows.
fn unknown_types_and_fields_are_shown() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("future.jsonl");
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"f1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}),
        serde_json::json!({"type":"future_thing","id":"aaaa1111","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
            "payload":{"answer":42}}),
        serde_json::json!({"type":"message","id":"bbbb2222","parentId":"aaaa1111","timestamp":"2026-01-01T00:00:02.000Z",
            "newEntryField":"entry-extra","message":{"role":"user","newMessageField":"message-extra",
            "content":[{"type":"text","text":"hi","newBlockField":"block-extra"},{"type":"hologram","depth":3}],
            "timestamp":2}}),
        serde_json::json!({"type":"model_change","id":"cccc3333","parentId":"bbbb2222","timestamp":"2026-01-01T00:00:03.000Z",
            "provider":"p","modelId":"m","reason":"model-extra"}),
    ];
    fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
    let out = run(&["show", s(&path), "#2", "#3", "#4"]);
    check(out.status.success(), || stderr(&out))?;
    let text = stdout(&out);
    for want in [
        "\"answer\": 42",
        "newEntryField",
        "entry-extra",
        "newMessageField",
        "message-extra",
        "newBlockField",
        "block-extra",
        "\"hologram\"",
        "model-extra",
    ] {
        check(text.contains(want), || format!("{want} not shown:\n{text}"))?;
    }
    Ok(())
}

fn broken_pipe_is_quiet() -> TestResult {
    let f = testdata().join("real/before-compaction.jsonl");
    let revs: Vec<String> = (2..=1003).map(|n| format!("#{n}")).collect();
    let mut child = pisces().arg("show").arg(&f).args(&revs).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let mut first = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut first)?;
    drop(child.stdout.take());
    let out = child.wait_with_output()?;
    check(out.status.code() == Some(0) && out.stderr.is_empty(), || {
        format!("exit {:?}: {}", out.status.code(), stderr(&out))
    })
}

/// Piped, the table is not cut to a width, whatever COLUMNS says.
fn piped_table_is_whole() -> TestResult {
    let file = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let out = pisces().args(["leaves", s(&file)]).env("COLUMNS", "40").output()?;
    check(out.status.success(), || stderr(&out))?;
    let text = stdout(&out);
    check(text.lines().skip(2).all(|l| l.contains("anthropic/claude-sonnet-4-5")), || text.clone())?;
    check(text.lines().nth(2).is_some_and(|l| l.chars().count() > 100), || format!("rows cut short:\n{text}"))?;
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    check(header.first() == Some(&"id") && header.contains(&"depth") && header.contains(&"tokens"), || {
        format!("header: {header:?}")
    })
}

/// On a terminal the table takes COLUMNS, one line a row.
fn width_fits_columns() -> TestResult {
    // A pseudo-terminal: `script` (util-linux); the trial is ignored where it is missing.
    let file = testdata().join("pi-1.6.0/03-tree-branches.jsonl");
    let cmd = format!("{} leaves {} --color never", env!("CARGO_BIN_EXE_pisces"), s(&file));
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("COLUMNS", "90")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    check(out.status.success(), || format!("exit {:?}: {text}", out.status.code()))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    check(lines.len() == 2 + 4, || format!("not one line per row:\n{text}"))?;
    check(lines.iter().all(|l| l.chars().count() <= 90), || format!("wider than 90:\n{text}"))?;
    check(lines[2..].iter().any(|l| l.contains('…')), || format!("nothing trimmed:\n{text}"))
}

fn help_has_examples() -> TestResult {
    for cmd in ["show", "leaves"] {
        let out = run(&[cmd, "--help"]);
        let text = stdout(&out);
        check(out.status.success() && text.contains("Examples:") && text.contains(&format!("pisces {cmd} ")), || {
            format!("{cmd} --help:\n{text}")
        })?;
    }
    Ok(())
}
