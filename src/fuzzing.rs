//! What the fuzz targets run (`fuzz/fuzz_targets/*.rs` are one line each), kept here so
//! that the normal test suite replays every input the fuzzer saved (`fuzz/regressions/`,
//! tests/fuzz_regressions.rs) through exactly the same code. Each function takes arbitrary
//! bytes and must return without panicking, hanging or growing memory without bound;
//! errors are expected and ignored. Not an API: nothing else calls these.

use std::io::sink;

use serde_json::Value;

use crate::render::context::{self, Format as Out};
use crate::render::tree::{self as draw, TextOptions};
use crate::render::Ui;
use crate::session::format::Format;
use crate::session::view::{self, Filter, Options};
use crate::session::{open, rev, Session, Source};

/// A fuzz target's body.
pub type Target = fn(&[u8]);

/// The targets, by the name `fuzz/` and the regression folders use.
pub const TARGETS: &[(&str, Target)] = &[
    ("load", load),
    ("pi", pi),
    ("claude", claude),
    ("codex", codex),
    ("omp", omp),
    ("openclaw", openclaw),
    ("rev", rev),
    ("sse", sse),
    ("tool_args", tool_args),
    ("cache", cache),
];

/// Any bytes as a session file of whatever format detection picks, then everything a read
/// command does with it.
pub fn load(data: &[u8]) {
    session(data, crate::formats::all());
}

/// The pi loader and projection.
pub fn pi(data: &[u8]) {
    session(data, &[&crate::formats::pi::PI]);
}

/// Claude Code's reader.
pub fn claude(data: &[u8]) {
    session(data, &[&crate::formats::claude::CLAUDE]);
}

/// Codex's reader (one rollout; its parents are not on disk).
pub fn codex(data: &[u8]) {
    session(data, &[&crate::formats::codex::CODEX]);
}

/// oh-my-pi's reader (title line, changed entry shapes).
pub fn omp(data: &[u8]) {
    session(data, &[&crate::formats::omp::OMP]);
}

/// OpenClaw's transcript rows, as its store's rows become lines.
pub fn openclaw(data: &[u8]) {
    session(data, &[&crate::formats::openclaw::OPENCLAW]);
}

/// A REV typed by a user, against a small branching session with labels.
pub fn rev(data: &[u8]) {
    static TREE: &[u8] = include_bytes!("../testdata/pi-1.6.0/05-labels-and-name.jsonl");
    let source = Source::from_bytes("fuzz.jsonl", TREE.to_vec());
    let Ok(s) = open::load(&source, crate::formats::all(), &Default::default()) else { return };
    let text = String::from_utf8_lossy(data);
    if let Ok(i) = rev::resolve(&s, &text) {
        let _ = s.dialect().project(&s, Some(i));
    }
}

/// The model servers' event stream, cut into pieces where the first byte says.
pub fn sse(data: &[u8]) {
    let Some((&step, body)) = data.split_first() else { return };
    let step = usize::from(step).max(1);
    let mut d = crate::llm::sse::SseDecoder::new();
    for piece in body.chunks(step) {
        d.push(piece);
    }
    d.finish();
}

/// A model's tool-call arguments through each built-in tool's preparation, coercion and
/// validation (not run: that would touch the disk).
pub fn tool_args(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let args = serde_json::from_str::<Value>(&text).unwrap_or_else(|_| Value::String(text.into_owned()));
    let names = ["read", "bash", "edit", "write", "grep", "find", "ls"];
    for tool in crate::agent::tools::builtin_tools(&names) {
        let prepared = tool.prepare_arguments(args.clone());
        let decl = tool.declaration();
        let _ = crate::agent::tools::schema::parse(&decl["parameters"], &prepared);
    }
}

/// The cache file's reader, behind its checksum (which the fuzzer could never forge, so it
/// is computed here over the fuzzer's bytes).
pub fn cache(data: &[u8]) {
    crate::store::cache::decode_framed(data, crate::formats::all());
}

fn session(data: &[u8], formats: &[&'static dyn Format]) {
    let source = Source::from_bytes("fuzz.jsonl", data.to_vec());
    let Ok(s) = open::load(&source, formats, &Default::default()) else { return };
    let _ = open::load_checked(&source, formats);
    read_everything(&s);
}

/// What `path`, `tree`, `leaves`, `show` and `check` do with a loaded session.
fn read_everything(s: &Session) {
    let ui = Ui { color: true, stdout_tty: true, width: Some(80) };
    let d = s.dialect();
    let mut leaves: Vec<_> = s.leaves().into_iter().take(8).collect();
    leaves.extend(s.default_leaf());
    if let Ok(p) = d.resume(s) {
        for out in [Out::Text, Out::Json, Out::Llm, Out::Anthropic, Out::OpenaiResponses] {
            let _ = context::write(&mut sink(), &ui, s, &p, out, true);
        }
    }
    for &leaf in &leaves {
        if let Ok(p) = d.project(s, Some(leaf)) {
            let _ = context::write(&mut sink(), &ui, s, &p, Out::Markdown, false);
            let _ = context::write(&mut sink(), &ui, s, &p, Out::Openai, false);
        }
        let _ = d.pi_entries(s, leaf);
    }
    for i in s.entries.indices().take(64) {
        let _ = d.entry(s, i);
        let _ = d.usage(s, i);
        let _ = d.response(s, i);
        let _ = d.preview(s, i, 60);
    }
    let _ = crate::session::leaves::collect(s);
    let _ = d.findings(s);
    let opts = Options {
        filter: Filter::All,
        search: None,
        folds: Vec::new(),
        leaf: s.default_leaf(),
        home: "/home/u".into(),
        cwd: "/home/u/p".into(),
        cycle_roots: true,
    };
    if let Ok(rows) = view::read_rows(s, &opts) {
        let tree = view::build_focused(s, rows.as_ref(), opts, None, None);
        let text =
            TextOptions { width: Some(80), ids: true, time: true, compact: true, max_levels: Some(draw::MAX_LEVELS) };
        let _ = draw::write_text(&mut sink(), &ui, s, &tree, &text);
        let _ = draw::write_json(&mut sink(), s, &tree, s.default_leaf(), "all");
        let _ = draw::write_dot(&mut sink(), s, &tree);
    }
}
