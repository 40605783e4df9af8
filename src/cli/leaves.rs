//! `pisces leaves SESSION`: every branch tip, with what happened on its path.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};

use clap::ValueEnum;
use serde_json::{json, Value};

use super::session_json;
use super::{open_source, report_diagnostics, Ctx, ExitStatus};
use crate::render::table::{self, dollars, short_id, thousands, Column};
use crate::session::system::content_text;
use crate::session::usage::{entry_usage, Totals};
use crate::session::{js, EntryType, Role, Session};

const EXAMPLES: &str = "\
Examples:
  pisces leaves session.jsonl                  # a table, oldest leaf first; @ is pi's current leaf
  pisces leaves session.jsonl --format json | jq '.leaves[] | select(.usage.cost > 0.1)'
  pisces leaves 01a228be                       # a session found by id prefix";

/// List every leaf (an entry without children: the tip of a branch), oldest first.
///
/// For each: its short id (the shortest unique prefix, at least 4 characters), its depth
/// (entries above it), its label or its nearest labelled ancestor's, the last user prompt
/// and the last assistant reply on its path, the model in effect, its time (UTC), and the
/// tokens and cost of the whole path (assistant messages, `usage` entries, and the usage
/// of tool results and summaries, as pi's /session counts them). `@` marks pi's current
/// leaf (the last entry of the file).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table; fitted to the terminal's width (COLUMNS), whole when piped.
    Text,
    /// `{"version":1, "session":…, "defaultLeafId":…, "leaves":[{"id", "shortId", "line",
    /// "isDefault", "depth", "timestamp", "time", "label", "lastUserPrompt", "lastAssistant",
    /// "model", "usage"}]}`, oldest leaf first.
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let source = open_source(ctx, &args.session)?;
    // A line that looked whole to the index may fail to parse whole: pi would have skipped
    // it, so read the file again treating it as malformed.
    let mut damaged = BTreeSet::new();
    let (session, leaves) = loop {
        let session = Session::load_excluding(&source, &damaged)?;
        match collect(&session) {
            Ok(leaves) => break (session, leaves),
            Err(Damaged(line)) => {
                damaged.insert(line);
            }
        }
    };
    report_diagnostics(ctx, &session)?;

    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match args.format {
        Format::Text => write_text(&mut out, ctx, &session, &leaves)?,
        Format::Json => {
            let ids = sorted_ids(&session);
            let doc = json!({
                "version": 1,
                "session": session_json(&session),
                "defaultLeafId": session.default_leaf().map_or(Value::Null, |d| session.id_value(d)),
                "leaves": leaves.iter().map(|l| leaf_json(&session, l, &ids)).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// What one leaf's path holds.
struct Leaf {
    entry: u32,
    depth: usize,
    /// The labelled entry (the leaf or its nearest labelled ancestor), its label, and how
    /// many entries above the leaf it is.
    label: Option<(u32, String, usize)>,
    prompt: Option<(u32, String)>,
    reply: Option<Reply>,
    /// The last `model_change` or assistant message on the path: `{provider, modelId}`.
    model: Option<Value>,
    totals: Totals,
}

struct Reply {
    entry: u32,
    text: String,
    stop_reason: Value,
    error: Option<String>,
    tool_calls: Vec<String>,
}

/// A line the index read but that does not parse whole.
struct Damaged(u32);

/// Per entry, facts accumulated from the root down.
#[derive(Clone, Copy, Default)]
struct Acc {
    depth: u32,
    user: Option<u32>,
    assistant: Option<u32>,
    model: Option<u32>,
    label: Option<u32>,
    totals: Totals,
}

/// Walks every leaf's path once (facts of shared ancestors are computed once) and
/// gathers each leaf's row, sorted by time, oldest first (undated leaves last, in file
/// order).
fn collect(s: &Session) -> Result<Vec<Leaf>, Damaged> {
    let n = s.entries.len();
    let mut acc: Vec<Option<Acc>> = vec![None; n];
    let leaves = s.leaves();
    let mut stack = Vec::new();
    for &leaf in &leaves {
        let mut cur = Some(leaf);
        while let Some(c) = cur {
            if acc[c as usize].is_some() {
                break;
            }
            stack.push(c);
            cur = s.parent(c);
        }
        while let Some(c) = stack.pop() {
            let base = s.parent(c).and_then(|p| acc[p as usize]);
            let mut a = base.unwrap_or_default();
            if base.is_some() {
                a.depth += 1;
            }
            let e = &s.entries[c as usize];
            match (e.kind, e.role) {
                (EntryType::Message, Role::User) => a.user = Some(c),
                (EntryType::Message, Role::Assistant) => {
                    a.assistant = Some(c);
                    a.model = Some(c);
                }
                (EntryType::ModelChange, _) => a.model = Some(c),
                _ => {}
            }
            if s.id(c).is_some_and(|id| s.label_of(id).is_some()) {
                a.label = Some(c);
            }
            if let Some(u) = entry_usage(s, c).map_err(Damaged)? {
                a.totals.add(&u);
            }
            acc[c as usize] = Some(a);
        }
    }
    let mut rows = Vec::with_capacity(leaves.len());
    for &leaf in &leaves {
        let a = acc[leaf as usize].expect("computed above");
        let label = a.label.and_then(|l| {
            let text = s.id(l).and_then(|id| s.label_of(id))?.text.clone();
            let above = a.depth - acc[l as usize].expect("an ancestor").depth;
            Some((l, text, above as usize))
        });
        let prompt = match a.user {
            Some(u) => {
                let v = parse(s, u)?;
                Some((u, content_text(v.get("message").and_then(|m| m.get("content")))))
            }
            None => None,
        };
        let reply = match a.assistant {
            Some(r) => {
                let v = parse(s, r)?;
                let m = v.get("message").cloned().unwrap_or(Value::Null);
                let tool_calls = m
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                    .map(|b| js::to_js_string(b.get("name")))
                    .collect();
                Some(Reply {
                    entry: r,
                    text: content_text(m.get("content")),
                    stop_reason: m.get("stopReason").cloned().unwrap_or(Value::Null),
                    error: m.get("errorMessage").map(|e| js::to_js_string(Some(e))),
                    tool_calls,
                })
            }
            None => None,
        };
        let model = match a.model {
            Some(m) => {
                let v = parse(s, m)?;
                let (provider, model_id) = if s.entries[m as usize].kind == EntryType::ModelChange {
                    (v.get("provider").cloned(), v.get("modelId").cloned())
                } else {
                    let msg = v.get("message");
                    (msg.and_then(|m| m.get("provider")).cloned(), msg.and_then(|m| m.get("model")).cloned())
                };
                Some(json!({ "provider": provider, "modelId": model_id }))
            }
            None => None,
        };
        rows.push(Leaf { entry: leaf, depth: a.depth as usize, label, prompt, reply, model, totals: a.totals });
    }
    // Oldest first; a leaf without a valid timestamp goes last. The sort is stable, so
    // equal times keep file order.
    let times: Vec<Option<f64>> = rows.iter().map(|r| s.time(r.entry)).collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| match (times[a], times[b]) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let mut rows: Vec<Option<Leaf>> = rows.into_iter().map(Some).collect();
    Ok(order.into_iter().map(|k| rows[k].take().expect("each once")).collect())
}

fn parse(s: &Session, i: u32) -> Result<Value, Damaged> {
    s.parse(i).map_err(|_| Damaged(s.entries[i as usize].line))
}

/// `2026-11-29 19:18` (UTC), or `?`.
fn minute(ms: Option<f64>) -> String {
    match ms {
        Some(ms) => {
            let iso = js::iso_string(ms as i64);
            iso.get(..16).map_or(iso.clone(), |s| s.replacen('T', " ", 1))
        }
        None => "?".into(),
    }
}

fn reply_text(r: &Reply) -> String {
    let stop = js::to_js_string(Some(&r.stop_reason));
    let text = r.text.trim();
    let abnormal = matches!(stop.as_str(), "error" | "aborted" | "length");
    let note = match (&r.error, abnormal) {
        (Some(e), true) => format!("[{stop}: {e}]"),
        (None, true) => format!("[{stop}]"),
        _ => String::new(),
    };
    if !text.is_empty() {
        return if note.is_empty() { text.to_string() } else { format!("{note} {text}") };
    }
    if !note.is_empty() {
        return note;
    }
    if !r.tool_calls.is_empty() {
        return format!("→ {}", r.tool_calls.join(", "));
    }
    format!("[{stop}]")
}

fn model_text(m: &Value) -> String {
    let s = |k: &str| js::to_js_string(m.get(k));
    format!("{}/{}", s("provider"), s("modelId"))
}

const COLUMNS: [Column; 9] = [
    Column::fixed("id"),
    Column::number("depth"),
    Column::text("label", 24),
    Column::text("last prompt", 48),
    Column::text("last reply", 48),
    Column::text("model", 32),
    Column::fixed("time (UTC)"),
    Column::number("tokens"),
    Column::number("cost"),
];

fn write_text(w: &mut dyn Write, ctx: &Ctx, s: &Session, leaves: &[Leaf]) -> std::io::Result<()> {
    let ids = sorted_ids(s);
    let default = s.default_leaf();
    let rows: Vec<Vec<String>> = leaves
        .iter()
        .map(|l| {
            let mark = if Some(l.entry) == default { "@" } else { " " };
            let label = match &l.label {
                Some((_, text, 0)) => text.clone(),
                Some((_, text, up)) => format!("{text} ({up} up)"),
                None => String::new(),
            };
            vec![
                format!("{mark} {}", short(s, l.entry, &ids)),
                l.depth.to_string(),
                label,
                l.prompt.as_ref().map_or(String::new(), |(_, p)| p.clone()),
                l.reply.as_ref().map_or(String::new(), reply_text),
                l.model.as_ref().map_or(String::new(), model_text),
                minute(s.time(l.entry)),
                thousands(l.totals.tokens()),
                dollars(l.totals.cost),
            ]
        })
        .collect();
    table::write_table(w, &ctx.ui, &COLUMNS, &rows)
}

/// The shortest unique prefix of the entry's id; `#N` for an entry without a string id,
/// or whose id a later entry took (the id names that one).
fn short(s: &Session, i: u32, sorted_ids: &[&str]) -> String {
    let e = &s.entries[i as usize];
    match s.id(i) {
        Some(id) if !id.starts_with('\0') && !e.shadowed => short_id(id, sorted_ids, 4),
        _ => format!("#{}", e.line),
    }
}

/// Every id of the session, sorted (for short ids).
fn sorted_ids<'s>(s: &'s Session) -> Vec<&'s str> {
    let mut ids: Vec<&str> = s.ids().map(|(id, _)| id).collect();
    ids.sort_unstable();
    ids
}

fn leaf_json(s: &Session, l: &Leaf, ids: &[&str]) -> Value {
    let raw = s.parse(l.entry).ok();
    let label = l
        .label
        .as_ref()
        .map(|(at, text, above)| json!({ "text": text, "entryId": s.id_value(*at), "distance": above }));
    let t = &l.totals;
    json!({
        "id": s.id_value(l.entry),
        "shortId": short(s, l.entry, ids),
        "line": s.entries[l.entry as usize].line,
        "isDefault": s.default_leaf() == Some(l.entry),
        "depth": l.depth,
        "timestamp": raw.as_ref().and_then(|v| v.get("timestamp").cloned()),
        "time": s.time(l.entry).map(js::number),
        "label": label,
        "lastUserPrompt": l.prompt.as_ref().map(|(i, text)| json!({ "id": s.id_value(*i), "text": text })),
        "lastAssistant": l.reply.as_ref().map(|r| {
            let mut o = json!({
                "id": s.id_value(r.entry),
                "text": r.text,
                "stopReason": r.stop_reason,
                "toolCalls": r.tool_calls,
            });
            if let Some(e) = &r.error {
                o["errorMessage"] = Value::from(e.clone());
            }
            o
        }),
        "model": l.model,
        "usage": {
            "input": js::number(t.input),
            "output": js::number(t.output),
            "cacheRead": js::number(t.cache_read),
            "cacheWrite": js::number(t.cache_write),
            "totalTokens": js::number(t.total_tokens),
            "tokens": js::number(t.tokens()),
            "cost": t.cost,
        },
    })
}
