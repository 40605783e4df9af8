//! `pisces leaves` for people (a table) and programs (a versioned JSON document).

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::json::SessionJson;
use super::table::{self, dollars, thousands, Column};
use super::Ui;
use crate::session::leaves::{Leaf, Model, Reply};
use crate::session::usage::Totals;
use crate::session::{js, text, EntryIdx, LineNo, Session};

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

fn model_text(m: &Model) -> String {
    format!("{}/{}", js::to_js_string(m.provider.as_ref()), js::to_js_string(m.model_id.as_ref()))
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

pub fn write_text(w: &mut dyn Write, ui: &Ui, s: &Session, leaves: &[Leaf]) -> std::io::Result<()> {
    let default = s.default_leaf();
    let rows: Vec<Vec<String>> = leaves
        .iter()
        .zip(short_ids(s, leaves))
        .map(|(l, short)| {
            let mark = if Some(l.entry) == default { "@" } else { " " };
            let label = match &l.label {
                Some((_, text, 0)) => text.clone(),
                Some((_, text, up)) => format!("{text} ({up} up)"),
                None => String::new(),
            };
            vec![
                format!("{mark} {short}"),
                l.depth.to_string(),
                label,
                l.prompt.as_ref().map_or(String::new(), |(_, p)| p.to_string()),
                l.reply.as_deref().map_or(String::new(), reply_text),
                l.model.as_deref().map_or(String::new(), model_text),
                minute(l.time),
                thousands(l.totals.tokens()),
                dollars(l.totals.cost),
            ]
        })
        .collect();
    table::write_table(w, ui, &COLUMNS, &rows)
}

/// Each leaf's shortest unique id prefix (of 4 characters or more); `#N` for an entry
/// without a string id, or whose id a later entry took (the id names that one).
fn short_ids(s: &Session, leaves: &[Leaf]) -> Vec<String> {
    let own = |i: EntryIdx| s.id_str(i).filter(|_| !s.entries[i].shadowed());
    let wanted: Vec<&str> = leaves.iter().filter_map(|l| own(l.entry)).collect();
    let mut short = text::short_ids(s.ids().map(|(id, _)| id), &wanted, 4).into_iter();
    leaves
        .iter()
        .map(|l| match own(l.entry).and_then(|_| short.next()) {
            Some(id) => id,
            None => format!("#{}", s.entries[l.entry].line),
        })
        .collect()
}

/// `leaves --format json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LeavesDocument<'s> {
    version: u32,
    session: SessionJson<'s>,
    default_leaf_id: Value,
    leaves: Vec<LeafJson<'s>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LeafJson<'s> {
    id: Value,
    short_id: String,
    line: LineNo,
    is_default: bool,
    depth: usize,
    timestamp: Option<Value>,
    time: Option<Value>,
    label: Option<LabelJson<'s>>,
    last_user_prompt: Option<PromptJson<'s>>,
    last_assistant: Option<ReplyJson<'s>>,
    model: Option<&'s Model>,
    usage: UsageJson,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LabelJson<'s> {
    text: &'s str,
    entry_id: Value,
    distance: usize,
}

#[derive(Serialize)]
struct PromptJson<'s> {
    id: Value,
    text: &'s str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplyJson<'s> {
    id: Value,
    text: &'s str,
    stop_reason: &'s Value,
    tool_calls: &'s [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<&'s str>,
}

/// Token counts as JS numbers (integers print without a fraction), and the cost.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageJson {
    input: Value,
    output: Value,
    cache_read: Value,
    cache_write: Value,
    total_tokens: Value,
    tokens: Value,
    cost: f64,
}

impl UsageJson {
    pub fn of(t: &Totals) -> UsageJson {
        UsageJson {
            input: js::number(t.input),
            output: js::number(t.output),
            cache_read: js::number(t.cache_read),
            cache_write: js::number(t.cache_write),
            total_tokens: js::number(t.total_tokens),
            tokens: js::number(t.tokens()),
            cost: t.cost,
        }
    }
}

pub fn write_json(w: &mut dyn Write, s: &Session, leaves: &[Leaf]) -> std::io::Result<()> {
    let doc = LeavesDocument {
        version: 1,
        session: SessionJson::of(s),
        default_leaf_id: s.default_leaf().map_or(Value::Null, |d| s.id_value(d)),
        leaves: leaves.iter().zip(short_ids(s, leaves)).map(|(l, short)| leaf_json(s, l, short)).collect(),
    };
    super::json::write_pretty(&mut *w, &doc)?;
    writeln!(w)
}

fn leaf_json<'s>(s: &Session, l: &'s Leaf, short_id: String) -> LeafJson<'s> {
    LeafJson {
        id: s.id_value(l.entry),
        short_id,
        line: s.entries[l.entry].line,
        is_default: s.default_leaf() == Some(l.entry),
        depth: l.depth,
        timestamp: l.timestamp.clone(),
        time: l.time.map(js::number),
        label: l.label.as_ref().map(|(at, text, above)| LabelJson {
            text,
            entry_id: s.id_value(*at),
            distance: *above,
        }),
        last_user_prompt: l.prompt.as_ref().map(|(i, text)| PromptJson { id: s.id_value(*i), text }),
        last_assistant: l.reply.as_deref().map(|r: &Reply| ReplyJson {
            id: s.id_value(r.entry),
            text: &r.text,
            stop_reason: &r.stop_reason,
            tool_calls: &r.tool_calls,
            error_message: r.error.as_deref(),
        }),
        model: l.model.as_deref(),
        usage: UsageJson::of(&l.totals),
    }
}
