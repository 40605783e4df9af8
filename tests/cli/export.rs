//! `pisces export --html`: the page's data is `pisces path` at every leaf, the page cannot
//! run or load anything from session text, files are never overwritten unasked, and the
//! page works in a real browser (tests/browser/export_page.py, headless Chromium).

use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{check, first_diff, pisces, run, stderr, stdout, stdout_json, testdata, TestResult};

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test("export::page_is_inert", page_is_inert),
        Trial::test("export::never_overwrites_unless_forced", never_overwrites_unless_forced),
        Trial::test("export::in_a_browser", in_a_browser),
        Trial::test("export::parquet_answers_as_pisces_does", parquet_answers_as_pisces_does),
        Trial::test("export::parquet_is_incremental", parquet_is_incremental),
    ];
    for dir in [
        "pi-1.6.0",
        "pi-0.73.1",
        "claude-code-2.1.332",
        "claude-code-log",
        "codex-0.171.0",
        "omp-18.2.3",
        "openclaw-2026.9.6",
    ] {
        for file in sessions(&testdata().join(dir)) {
            let name = format!("export::leaves_show_path::{dir}/{}", file.file_name().unwrap().to_string_lossy());
            trials.push(Trial::test(name, move || leaves_show_path(&file)));
        }
    }
    trials
}

/// The session files under `dir` (Codex: every rollout of the store).
fn sessions(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir()
                && !matches!(p.file_name().and_then(|n| n.to_str()), Some("expected" | "converted" | "requests"))
            {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The JSON document a page carries (gzipped, base64-encoded).
fn page_data(html: &str) -> Result<Value, libtest_mimic::Failed> {
    use base64::Engine;
    use std::io::Read;
    let open = r#"<script id="pisces-data" type="application/octet-stream">"#;
    let start = html.find(open).ok_or("no data block")? + open.len();
    let end = start + html[start..].find("</script>").ok_or("data block not closed")?;
    let gz = base64::engine::general_purpose::STANDARD
        .decode(html[start..end].trim())
        .map_err(|e| format!("data block is not base64: {e}"))?;
    let mut json = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut json)?;
    serde_json::from_str(&json).map_err(|e| format!("data block is not JSON: {e}").into())
}

/// Every leaf's messages in the page are `pisces path FILE #LINE --format json`'s.
fn leaves_show_path(file: &Path) -> TestResult {
    let f = file.to_str().unwrap();
    let out = run(&["export", f, "--html", "-o", "-"]);
    check(out.status.success(), || format!("export failed: {}", stderr(&out)))?;
    let data = page_data(&stdout(&out))?;
    let leaves = data["leaves"].as_array().ok_or("no leaves")?;
    let msgs = data["msgs"].as_array().ok_or("no msgs")?;
    let lines = data["lines"].as_array().ok_or("no lines")?;
    let want_leaves = stdout_json(&run(&["leaves", f, "--format", "json"]))?;
    check(leaves.len() == want_leaves["leaves"].as_array().map_or(0, Vec::len), || {
        format!("{} leaves in the page, `pisces leaves` has {}", leaves.len(), want_leaves["leaves"])
    })?;
    for leaf in leaves {
        let e = leaf["e"].as_u64().ok_or("leaf without entry")? as usize;
        let rev = format!("#{}", lines[e]);
        let want = stdout_json(&run(&["path", f, &rev, "--format", "json"]))?;
        let got: Vec<Value> = leaf["m"]
            .as_array()
            .ok_or("leaf without messages")?
            .iter()
            .map(|k| msgs[k.as_u64().unwrap() as usize][1].clone())
            .collect();
        if let Some(d) = first_diff(&Value::Array(got), &want["messages"], "$") {
            return Err(format!("leaf {rev}: {d}").into());
        }
        for k in leaf["m"].as_array().unwrap() {
            let entry = msgs[k.as_u64().unwrap() as usize][0].as_u64().unwrap() as usize;
            check(entry < lines.len(), || format!("leaf {rev}: a message from entry {entry}, out of range"))?;
        }
    }
    Ok(())
}

const PAYLOADS: [&str; 4] = [
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "<a href=\"javascript:alert(3)\">x</a>",
    "<!-- <script>",
];

/// Session text never reaches the page as markup: the data block holds no `<`, the only
/// scripts are the page's two, and the Content-Security-Policy allows exactly them.
fn page_is_inert() -> TestResult {
    let dir = tempfile::tempdir()?;
    let session = dir.path().join("s.jsonl");
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#);
    text.push('\n');
    let mut parent = Value::Null;
    for (k, p) in PAYLOADS.iter().enumerate() {
        let line = serde_json::json!({"type": "message", "id": format!("u{k}"), "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": p}], "timestamp": 1}});
        text.push_str(&line.to_string());
        text.push('\n');
        parent = Value::from(format!("u{k}"));
    }
    std::fs::write(&session, &text)?;
    let out = run(&["export", session.to_str().unwrap(), "--html", "-o", "-"]);
    check(out.status.success(), || stderr(&out))?;
    let html = stdout(&out);
    for p in PAYLOADS {
        check(!html.contains(p), || format!("the page holds {p:?} as written"))?;
    }
    let data = page_data(&html)?;
    let shown: Vec<String> = data["msgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[1]["content"][0]["text"].as_str().unwrap_or_default().to_string())
        .collect();
    check(shown == PAYLOADS, || format!("the data decodes to {shown:?}"))?;
    check(html.matches("<script").count() == 2, || "more than the page's two scripts".into())?;
    // The policy: nothing loads; the inline script and style are allowed by their hashes.
    let csp_at = html.find("Content-Security-Policy\" content=\"").ok_or("no policy")? + 34;
    let csp = &html[csp_at..csp_at + html[csp_at..].find('"').unwrap()];
    check(csp.starts_with("default-src 'none';") && csp.contains("img-src data:"), || csp.to_string())?;
    let inline = |open: &str, close: &str| -> String {
        let a = html.rfind(open).unwrap() + open.len();
        html[a..a + html[a..].find(close).unwrap()].to_string()
    };
    for (kind, body) in [("script-src", inline("<script>", "</script>")), ("style-src", inline("<style>", "</style>"))]
    {
        let hash = sha256_base64(body.as_bytes());
        check(csp.contains(&format!("{kind} 'sha256-{hash}'")), || {
            format!("{kind} does not name the inline one: {csp}")
        })?;
    }
    Ok(())
}

/// SHA-256 by `sha256sum` (the test checks the page's hashes with a tool of its own).
fn sha256_base64(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut c = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum runs");
    c.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = c.wait_with_output().unwrap();
    let hex = String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or_default().to_string();
    let raw: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    base64(&raw)
}

fn base64(raw: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in raw.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// A page is written whole, never over a file unless --force, and the source is untouched.
fn never_overwrites_unless_forced() -> TestResult {
    let dir = tempfile::tempdir()?;
    let src = testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl");
    let before = std::fs::read(&src)?;
    let page = dir.path().join("p.html");
    std::fs::write(&page, "mine")?;
    let args = |force: bool| {
        let mut a = vec!["export".to_string(), src.display().to_string(), "--html".into(), "-o".into()];
        a.push(page.display().to_string());
        if force {
            a.push("--force".into());
        }
        a
    };
    let out = pisces().args(args(false)).output()?;
    check(!out.status.success() && stderr(&out).contains("already exists"), || stderr(&out))?;
    check(std::fs::read_to_string(&page)? == "mine", || "the file was changed".into())?;
    let out = pisces().args(args(true)).output()?;
    check(out.status.success(), || stderr(&out))?;
    let html = std::fs::read_to_string(&page)?;
    check(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"), || "not a whole page".into())?;
    check(std::fs::read(&src)? == before, || "the source changed".into())?;
    // Default name: the session's, with .html, in the current directory.
    let out = pisces().current_dir(dir.path()).args(["export", src.to_str().unwrap(), "--html"]).output()?;
    check(out.status.success(), || stderr(&out))?;
    check(dir.path().join("22-two-fix-attempts.html").is_file(), || stdout(&out))?;
    Ok(())
}

/// The browser suite: pages from the corpus and a hostile session, opened in headless
/// Chromium (tools/test.sh installs it).
fn in_a_browser() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = root.join("target/browser-artifacts");
    let out = std::process::Command::new("python3")
        .arg(root.join("tests/browser/export_page.py"))
        .arg("--pisces")
        .arg(env!("CARGO_BIN_EXE_pisces"))
        .arg("--out")
        .arg(&out_dir)
        .output()?;
    check(out.status.success(), || {
        format!(
            "the browser suite failed (exit {:?}); Chromium and chromedriver come with `bash tools/test.sh` \
             (or apt-get install chromium chromium-driver)\n{}{}",
            out.status.code(),
            stdout(&out),
            stderr(&out)
        )
    })
}

/// DuckDB's answers over the exported tables (tests/parquet/query.py).
fn duckdb(dir: &Path, literal: &str) -> Result<Value, libtest_mimic::Failed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("tests/parquet/query.py"))
        .arg(dir)
        .arg(literal)
        .output()?;
    check(out.status.success(), || {
        format!("DuckDB's queries failed (`bash tools/test.sh` installs its Python package): {}", stderr(&out))
    })?;
    Ok(serde_json::from_slice(&out.stdout)?)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The whole store exported, then the same questions asked of DuckDB and of pisces: the
/// tokens and cost of `stats` (each response once), the sessions, entries and leaves of
/// `ls`, and the sessions `grep` finds a word in.
fn parquet_answers_as_pisces_does() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = crate::store::at_home()
        .args(["export", "--parquet", dir.path().to_str().unwrap(), "--all", "--format", "json", "--no-cache"])
        .output()?;
    let report = stdout_json(&out)?;
    check(report["failed"].as_array().is_some_and(Vec::is_empty), || format!("{report}"))?;
    let sql = duckdb(dir.path(), "parseDue")?;

    let stats =
        stdout_json(&crate::store::at_home().args(["stats", "--all", "--format", "json", "--no-cache"]).output()?)?;
    let rows = stats["rows"].as_array().ok_or("no rows")?;
    let sum = |k: &str| rows.iter().map(|r| r["usage"][k].as_f64().unwrap_or(0.0)).sum::<f64>();
    let responses: u64 = rows.iter().map(|r| r["responses"].as_u64().unwrap_or(0)).sum();
    check(sql["usage"]["responses"].as_u64() == Some(responses), || {
        format!("responses: {} vs stats {responses}", sql["usage"])
    })?;
    for k in ["input", "output", "cacheRead", "cacheWrite", "cost"] {
        let (got, want) = (sql["usage"][k].as_f64().unwrap_or(f64::NAN), sum(k));
        check(close(got, want), || format!("usage {k}: DuckDB {got}, stats {want}"))?;
    }
    check(responses > 0 && report["responses"].as_u64() == Some(responses), || format!("{report}"))?;

    let ls = stdout_json(&crate::store::at_home().args(["ls", "--all", "--format", "json", "--no-cache"]).output()?)?;
    let mut want = serde_json::Map::new();
    for s in ls["sessions"].as_array().ok_or("no sessions")? {
        let a = s["format"].as_str().unwrap_or_default().to_string();
        let w = want.entry(a).or_insert_with(|| serde_json::json!({"sessions": 0, "entries": 0, "leaves": 0}));
        for (k, v) in [
            ("sessions", 1),
            ("entries", s["entries"].as_u64().unwrap_or(0)),
            ("leaves", s["leaves"].as_u64().unwrap_or(0)),
        ] {
            w[k] = Value::from(w[k].as_u64().unwrap() + v);
        }
    }
    check(sql["sessions"] == Value::Object(want.clone()), || {
        format!("sessions by agent: DuckDB {} vs ls {}", sql["sessions"], Value::Object(want.clone()))
    })?;
    check(want.len() == 5, || format!("expected all five agents in the store: {want:?}"))?;
    for (agent, w) in &want {
        check(sql["entries"][agent] == w["entries"], || {
            format!("{agent}: {} entry rows, ls counts {}", sql["entries"][agent], w["entries"])
        })?;
    }

    // (A hit in a line a Codex fork inherits is its parent's row: the tables keep each line
    // once, in the session whose file holds it.)
    let grep = crate::store::at_home().args(["grep", "-i", "parseDue", "--format", "json"]).output()?;
    let mut found: Vec<String> = stdout(&grep)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|h| h["file"].is_null() || h["file"] == h["session"])
        .filter_map(|h| h["session"].as_str().map(str::to_string))
        .collect();
    found.sort();
    found.dedup();
    let got: Vec<String> = serde_json::from_value(sql["matching"].clone())?;
    check(got == found, || format!("sessions with the word: DuckDB {got:?}\ngrep {found:?}"))?;
    check(sql["schemas"] == serde_json::json!(["1"]), || format!("schema versions: {}", sql["schemas"]))
}

/// A second export reads nothing that did not change; an append rewrites that session's
/// files only; a session gone from the store has its files removed.
fn parquet_is_incremental() -> TestResult {
    let home = tempfile::tempdir()?;
    let store = home.path().join(".pi/agent/sessions/--home-dev-todo-cli--");
    std::fs::create_dir_all(&store)?;
    let names = ["02-tool-use.jsonl", "03-tree-branches.jsonl", "22-two-fix-attempts.jsonl"];
    for n in names {
        std::fs::copy(testdata().join("pi-1.6.0").join(n), store.join(n))?;
    }
    let out_dir = tempfile::tempdir()?;
    let export = || -> Result<Value, libtest_mimic::Failed> {
        let out = pisces()
            .env("HOME", home.path())
            .args(["export", "--parquet", out_dir.path().to_str().unwrap(), "--all", "--format", "json", "--no-cache"])
            .output()?;
        stdout_json(&out)
    };
    let counts = |r: &Value| (r["written"].as_u64(), r["unchanged"].as_u64(), r["removed"].as_u64());
    let first = export()?;
    check(counts(&first) == (Some(3), Some(0), Some(0)), || format!("first: {first}"))?;
    let again = export()?;
    check(counts(&again) == (Some(0), Some(3), Some(0)), || format!("again: {again}"))?;
    // A label appended to one session.
    let grown = store.join("03-tree-branches.jsonl");
    let out = pisces().args(["label", grown.to_str().unwrap(), "@", "checked"]).output()?;
    check(out.status.success(), || stderr(&out))?;
    let after = export()?;
    check(counts(&after) == (Some(1), Some(2), Some(0)), || format!("after an append: {after}"))?;
    let sql = duckdb(out_dir.path(), "checked")?;
    check(sql["matching"].as_array().is_some_and(Vec::is_empty), || "a label is not a message".into())?;
    check(sql["sessions"]["pi"]["sessions"] == 3, || format!("{}", sql["sessions"]))?;
    // One session gone.
    std::fs::remove_file(store.join("02-tool-use.jsonl"))?;
    let gone = export()?;
    check(counts(&gone) == (Some(0), Some(2), Some(1)), || format!("after a removal: {gone}"))?;
    let sql = duckdb(out_dir.path(), "x")?;
    check(sql["sessions"]["pi"]["sessions"] == 2, || format!("{}", sql["sessions"]))?;
    let ls = stdout_json(
        &pisces().env("HOME", home.path()).args(["ls", "--all", "--format", "json", "--no-cache"]).output()?,
    )?;
    let entries: u64 =
        ls["sessions"].as_array().ok_or("no sessions")?.iter().map(|s| s["entries"].as_u64().unwrap_or(0)).sum();
    check(sql["entries"]["pi"] == entries, || format!("{} entry rows, ls counts {entries}", sql["entries"]["pi"]))
}
