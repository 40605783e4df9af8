//! `pisces show SESSION REV...`: entries, whole and readable.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};

use clap::ValueEnum;
use serde_json::{json, Value};

use super::{open_source, report_diagnostics, session_json, Ctx, ExitStatus};
use crate::render::entry::{self, EntryHead, Lookup};
use crate::session::{rev, Session};

const EXAMPLES: &str = "\
Examples:
  pisces show session.jsonl @                  # pi's current leaf (the last entry)
  pisces show session.jsonl fix-1^             # the parent of the entry labelled fix-1
  pisces show session.jsonl a3f9 '#12' '#13'   # several entries, one after the other
  pisces show session.jsonl a3f9 --raw         # the line exactly as it is in the file
  pisces show session.jsonl @~2 --format json | jq '.entries[0].entry.message.usage'";

/// Show entries whole: type, id, parent, line, timestamp, label, children, and the payload.
///
/// Messages are shown block by block: text, thinking, tool calls with their arguments as
/// pretty JSON, tool results, images as `[image/png 34 KB]`, and usage and cost of
/// assistant messages. Every entry type of pi 1.6 is shown with its fields; a field or an
/// entry type pisces does not know is shown as pretty JSON, so nothing in the line is
/// hidden. `--raw` prints the line as it is in the file.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The entries to show (see REV in `pisces --help`), in this order.
    #[arg(required = true, value_name = "REV")]
    pub revs: Vec<String>,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Print each entry's line exactly as it is in the file (a trailing `\r` included).
    #[arg(long, conflicts_with = "format")]
    pub raw: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text (color on a terminal).
    Text,
    /// `{"version":1, "session":…, "entries":[{"id", "line", "parentLine", "depth", "label",
    /// "isLeaf", "isDefaultLeaf", "children", "entry"}]}`: each entry as pi holds it in
    /// memory (`entry`), plus what the whole file says about it.
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let source = open_source(ctx, &args.session)?;
    // A line that looked whole to the index may fail to parse whole: pi would have skipped
    // it, so read the file again treating it as malformed (the REV then names nothing).
    let mut damaged = BTreeSet::new();
    let (session, picked) = loop {
        let session = Session::load_excluding(&source, &damaged)?;
        let mut picked = Vec::with_capacity(args.revs.len());
        for r in &args.revs {
            picked.push(rev::resolve(&session, r)?);
        }
        let mut values = Vec::with_capacity(picked.len());
        let mut bad = BTreeSet::new();
        for &i in &picked {
            match session.parse(i) {
                Ok(v) => values.push(v),
                Err(_) => {
                    bad.insert(session.entries[i as usize].line);
                }
            }
        }
        if bad.is_empty() {
            break (session, picked.into_iter().zip(values).collect::<Vec<_>>());
        }
        damaged.extend(bad);
    };
    report_diagnostics(ctx, &session)?;

    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if args.raw {
        for &(i, _) in &picked {
            out.write_all(session.raw_line(i))?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        return Ok(0);
    }
    match args.format {
        Format::Text => {
            for (n, (i, value)) in picked.iter().enumerate() {
                if n > 0 {
                    writeln!(out)?;
                }
                let head = head(&session, *i, value);
                let refs = Refs { session: &session, line: session.entries[*i as usize].line };
                entry::write_entry(&mut out, &ctx.ui, &head, value, &refs)?;
            }
        }
        Format::Json => {
            let entries: Vec<Value> = picked.into_iter().map(|(i, v)| entry_json(&session, i, v)).collect();
            let doc = json!({ "version": 1, "session": session_json(&session), "entries": entries });
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// One entry of `show --format json`.
fn entry_json(session: &Session, i: u32, entry: Value) -> Value {
    let e = &session.entries[i as usize];
    let label = session
        .id(i)
        .and_then(|id| session.label_of(id))
        .map(|l| json!({ "text": l.text, "timestamp": l.timestamp, "line": session.entries[l.entry as usize].line }));
    let children: Vec<Value> = session.children(i).map(|c| session.id_value(c)).collect();
    json!({
        "id": session.id_value(i),
        "line": e.line,
        "parentLine": session.parent(i).map(|p| session.entries[p as usize].line),
        "depth": session.path_to(i).len() - 1,
        "label": label,
        "isLeaf": children.is_empty(),
        "isDefaultLeaf": session.default_leaf() == Some(i),
        "children": children,
        "entry": entry,
    })
}

/// The facts `show` prints under an entry's title.
fn head(session: &Session, i: u32, entry: &Value) -> EntryHead {
    let e = &session.entries[i as usize];
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, v: String| rows.push((k.to_string(), v));
    let parent = match (session.parent_id(i), session.parent(i)) {
        (None, _) => "none (a root)".to_string(),
        (Some(pid), Some(p)) => format!("{}  ({})", show_id(pid), describe(session, p)),
        (Some(pid), None) if Some(pid) == session.id(i) => {
            format!("{} (itself; a root, as in pi's tree)", show_id(pid))
        }
        (Some(pid), None) if session.get(pid).is_some() => {
            format!("{} (a parent cycle is cut here: a root)", show_id(pid))
        }
        (Some(pid), None) => format!("{} (not in this file: a root, as in pi's tree)", show_id(pid)),
    };
    row("parent", parent);
    row("line", e.line.to_string());
    let timestamp = match entry.get("timestamp") {
        None => "(none)".into(),
        Some(t) => {
            let t = match t {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if session.time(i).is_none() {
                format!("{t} (not a date: sorts as equal to its siblings)")
            } else {
                t
            }
        }
    };
    row("timestamp", timestamp);
    if let Some(l) = session.id(i).and_then(|id| session.label_of(id)) {
        row("label", format!("{}  (label entry on line {})", l.text, session.entries[l.entry as usize].line));
    }
    let children: Vec<String> =
        session.children(i).map(|c| format!("{}  ({})", session.display_id(c), describe(session, c))).collect();
    row("children", if children.is_empty() { "none (a leaf)".into() } else { children.join("\n") });
    row("depth", (session.path_to(i).len() - 1).to_string());
    if e.shadowed {
        row("note", "a later entry has the same id; pi's index (and an id REV) names that one".into());
    }
    EntryHead {
        kind: e.kind,
        id: session.display_id(i).into_owned(),
        is_default_leaf: session.default_leaf() == Some(i),
        rows,
    }
}

fn describe(session: &Session, i: u32) -> String {
    format!("line {} · {}", session.entries[i as usize].line, session.preview(i, 60))
}

fn show_id(id: &str) -> &str {
    id.strip_prefix('\0').unwrap_or(id)
}

struct Refs<'s, 'a> {
    session: &'s Session<'a>,
    line: u32,
}

impl Lookup for Refs<'_, '_> {
    fn describe(&self, id: &str) -> Option<String> {
        self.session.get(id).map(|j| describe(self.session, j))
    }

    fn label_in_effect(&self, target: &str) -> Option<(String, u32)> {
        self.session.label_of(target).map(|l| (l.text.clone(), self.session.entries[l.entry as usize].line))
    }

    fn line(&self) -> u32 {
        self.line
    }
}
