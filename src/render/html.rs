//! `pisces export --html`: one self-contained page (assets/export/: the skeleton, its style
//! and its script, inlined).
//!
//! The session goes into the page as one JSON document, gzipped and base64-encoded, in a
//! `<script type="application/octet-stream">` block: the browser's HTML parser reads a large
//! inline block slowly (about 1 s for each 17 MB of text), and compressed it is a sixth of
//! the size. The script inflates it with the browser's own `DecompressionStream`, reads it
//! with `JSON.parse` and shows session text only as text nodes: session text is data,
//! never markup (and base64 holds no `<` that could end the block). The
//! Content-Security-Policy forbids every load: no default source, the page's own script
//! and style allowed by their SHA-256, images from `data:` URLs only, no forms, no base URL.

use std::io::{self, Write};

use base64::Engine;
use serde::Serialize;

use super::json::SessionJson;
use super::tree::{self as draw, TextOptions};
use super::Ui;
use crate::export::Page;
use crate::session::view::TreeView;
use crate::session::{EntryType, Role, Session};

const SKELETON: &str = include_str!("../../assets/export/page.html");
const CSS: &str = include_str!("../../assets/export/page.css");
const JS: &str = include_str!("../../assets/export/page.js");

/// The page's Content-Security-Policy.
pub fn csp() -> String {
    let hash = |s: &str| {
        let d = ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
        format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(d.as_ref()))
    };
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        hash(JS),
        hash(CSS)
    )
}

/// Writes the page of `session`: its tree as `view` draws it (every row, in order) and
/// what `page` computed.
pub fn write(w: &mut dyn Write, session: &Session, view: &TreeView, page: &Page, generator: &str) -> io::Result<()> {
    let (head, rest) = SKELETON.split_once("{{DATA}}").expect("the skeleton has a data slot");
    let fill = |s: &str| {
        s.replace("{{CSP}}", &csp()).replace("{{GENERATOR}}", generator).replace("{{CSS}}", CSS).replace("{{JS}}", JS)
    };
    w.write_all(fill(head).as_bytes())?;
    let b64 = base64::write::EncoderWriter::new(&mut *w, &base64::engine::general_purpose::STANDARD);
    let mut gz = flate2::write::GzEncoder::new(b64, flate2::Compression::new(6));
    write_data(&mut gz, session, view, page, generator)?;
    gz.finish()?.finish()?;
    w.write_all(fill(rest).as_bytes())
}

/// One leaf as the page reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LeafJson<'p> {
    e: usize,
    m: &'p [u32],
    label: Option<&'p str>,
    prompt: Option<&'p str>,
    /// `provider/model`.
    model: Option<String>,
    time: Option<f64>,
    tokens: f64,
    cost: f64,
    branch: BranchJson<'p>,
}

/// What the page shows of a branch's summary (the whole summary lists every command and
/// file operation, megabytes on a long session).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BranchJson<'p> {
    files_modified: &'p [String],
    tool_calls: usize,
    model_calls: usize,
    errors: usize,
    models: &'p [String],
    wall_time_ms: Option<f64>,
    last_test_run: Option<&'p crate::diff::Run>,
}

impl<'p> BranchJson<'p> {
    fn of(b: &'p crate::diff::SideSummary) -> BranchJson<'p> {
        BranchJson {
            files_modified: &b.files_modified,
            tool_calls: b.tool_calls,
            model_calls: b.model_calls,
            errors: b.errors.len(),
            models: &b.models,
            wall_time_ms: b.wall_time_ms,
            last_test_run: b.last_test_run.as_ref(),
        }
    }
}

fn json<T: Serialize + ?Sized>(w: &mut dyn Write, v: &T) -> io::Result<()> {
    serde_json::to_writer(w, v).map_err(io::Error::other)
}

fn write_data(w: &mut dyn Write, s: &Session, view: &TreeView, page: &Page, generator: &str) -> io::Result<()> {
    let n = s.entries.len();
    write!(w, "{{\"v\":1,\"generator\":")?;
    json(w, &generator)?;
    write!(w, ",\"session\":")?;
    json(w, &SessionJson::of(s))?;
    write!(w, ",\"defaultLeaf\":")?;
    json(w, &s.default_leaf().map(|l| l.get()))?;
    // Per entry: id (null without a string id), parent (-1 for a root), line.
    write!(w, ",\"ids\":[")?;
    for k in 0..n {
        if k > 0 {
            w.write_all(b",")?;
        }
        let i = crate::session::EntryIdx::new(k);
        match s.id_str(i).filter(|_| !s.entries[i].shadowed()) {
            Some(id) => json(w, &id)?,
            None => w.write_all(b"null")?,
        }
    }
    write!(w, "],\"parents\":[")?;
    for k in 0..n {
        if k > 0 {
            w.write_all(b",")?;
        }
        match s.parent(crate::session::EntryIdx::new(k)) {
            Some(p) => write!(w, "{}", p.get())?,
            None => w.write_all(b"-1")?,
        }
    }
    write!(w, "],\"lines\":[")?;
    for (k, e) in s.entries.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        write!(w, "{}", e.line)?;
    }
    // The tree's rows, drawn as `pisces tree` draws them (no color, no width), each with
    // the end of its subtree in the row order (for folding) and its tone.
    write!(w, "],\"rows\":[")?;
    let mut text = Vec::new();
    draw::write_text(
        &mut text,
        &Ui::plain(),
        s,
        view,
        &TextOptions { width: None, ids: false, time: false, compact: false, max_levels: Some(draw::MAX_LEVELS) },
    )?;
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let ends = subtree_ends(view);
    for (k, row) in view.rows.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        let e = &s.entries[row.entry];
        let tone = match (e.kind, e.role) {
            (EntryType::Message, Role::User) => "user",
            (EntryType::Message, Role::ToolResult | Role::BashExecution) => "tool",
            (EntryType::Compaction | EntryType::BranchSummary, _) => "summary",
            _ => "",
        };
        write!(w, "[{},", row.entry.get())?;
        json(w, &lines.get(k).copied().unwrap_or_default())?;
        // (Only rows where the tree branches fold, as pi's ⊟: folding a chain is scrolling.)
        let end = if row.foldable { ends[k] } else { k + 1 };
        write!(w, ",{end},\"{tone}\"]")?;
    }
    write!(w, "],\"leaves\":[")?;
    for (k, l) in page.leaves.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        let model = l.model.as_ref().map(|m| {
            let s = |k: &str| crate::session::js::to_js_string(m.get(k));
            format!("{}/{}", s("provider"), s("modelId"))
        });
        let leaf = &l.leaf;
        json(
            w,
            &LeafJson {
                e: leaf.entry.get(),
                m: &l.messages,
                label: leaf.label.as_ref().map(|(_, t, _)| t.as_str()),
                prompt: leaf.prompt.as_ref().map(|(_, p)| &**p),
                model,
                time: leaf.time,
                tokens: leaf.totals.tokens(),
                cost: leaf.totals.cost,
                branch: BranchJson::of(&l.branch),
            },
        )?;
    }
    write!(w, "],\"msgs\":[")?;
    for (k, m) in page.messages.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        write!(w, "[{},", m.entry.get())?;
        w.write_all(m.json.as_bytes())?;
        w.write_all(b"]")?;
    }
    // The parts of the diff reports (`diff::sides`): the turns, each once; the sides by
    // "FORK,LEAF" (FORK an entry number, -1 for none; LEAF a number into `leaves`), each
    // its summary and its turns; the alignments by "A,B" that are not in order.
    let sides = &page.sides;
    write!(w, "],\"turnViews\":[")?;
    for (k, t) in sides.turns.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        w.write_all(t.as_bytes())?;
    }
    write!(w, "],\"sides\":{{")?;
    for (k, (fork, leaf, summary, turns)) in sides.sides.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        let fork = fork.map_or(-1, |f| f.get() as i64);
        write!(w, "\"{fork},{leaf}\":[")?;
        w.write_all(summary.as_bytes())?;
        write!(w, ",")?;
        json(w, turns)?;
        w.write_all(b"]")?;
    }
    write!(w, "}},\"aligns\":{{")?;
    for (k, (a, b, pairs)) in sides.aligns.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        let pairs: Vec<[i64; 2]> =
            pairs.iter().map(|&(x, y)| [x.map_or(-1, |x| x as i64), y.map_or(-1, |y| y as i64)]).collect();
        write!(w, "\"{a},{b}\":")?;
        json(w, &pairs)?;
    }
    write!(w, "}},\"sidesComplete\":{},\"aligned\":{}}}", sides.complete, sides.aligned)
}

/// For each row of `view`, the row after its subtree (rows are in depth-first order: a
/// row's subtree is the rows after it up to the first that is not below it).
fn subtree_ends(view: &TreeView) -> Vec<usize> {
    let n = view.rows.len();
    let mut ends = vec![n; n];
    let mut open: Vec<usize> = Vec::new();
    let row_of: rustc_hash::FxHashMap<_, _> = view.rows.iter().enumerate().map(|(k, r)| (r.entry, k)).collect();
    for (k, r) in view.rows.iter().enumerate() {
        let parent = r.parent.and_then(|p| row_of.get(&p).copied());
        while let Some(&top) = open.last() {
            if Some(top) == parent {
                break;
            }
            ends[top] = k;
            open.pop();
        }
        open.push(k);
    }
    ends
}
