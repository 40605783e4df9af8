//! Every branch tip of a session (`pisces leaves`): what happened on each one's path.

use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use super::format::Unreadable;
use super::system::content_text;
use super::usage::Totals;
use super::{js, EntryIdx, EntryType, Role, Session};

/// What one leaf's path holds.
pub struct Leaf {
    pub entry: EntryIdx,
    pub depth: usize,
    /// The labelled entry (the leaf or its nearest labelled ancestor), its label, and how
    /// many entries above the leaf it is.
    pub label: Option<(EntryIdx, String, usize)>,
    pub prompt: Option<(EntryIdx, Rc<str>)>,
    pub reply: Option<Rc<Reply>>,
    /// The last `model_change` or assistant message on the path.
    pub model: Option<Rc<Model>>,
    /// The leaf entry's own `timestamp`, as written.
    pub timestamp: Option<Value>,
    pub totals: Totals,
}

/// The last assistant reply on a leaf's path.
pub struct Reply {
    pub entry: EntryIdx,
    pub text: String,
    pub stop_reason: Value,
    pub error: Option<String>,
    pub tool_calls: Vec<String>,
}

/// A model as pi names it.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub provider: Option<Value>,
    pub model_id: Option<Value>,
}

/// Per entry, facts accumulated from the root down.
#[derive(Clone, Copy, Default)]
struct Acc {
    depth: u32,
    user: Option<EntryIdx>,
    assistant: Option<EntryIdx>,
    model: Option<EntryIdx>,
    label: Option<EntryIdx>,
    totals: Totals,
}

/// Every entry's usage (every entry is on some leaf's path), read on two threads: a
/// file of many replies has one usage to read for each, most of `leaves`' work after the
/// index.
fn usage_of_all(s: &Session) -> Result<Vec<Option<Totals>>, Unreadable> {
    let n = s.entries.len();
    let read = |range: std::ops::Range<usize>| -> Result<Vec<Option<Totals>>, Unreadable> {
        range.map(|k| s.dialect().usage(s, EntryIdx::new(k))).collect()
    };
    // (Small sessions on this thread alone.)
    if n < 4096 {
        return read(0..n);
    }
    let (first, second) = std::thread::scope(|t| {
        let second = t.spawn(|| read(n / 2..n));
        (read(0..n / 2), second.join().expect("usage thread panicked"))
    });
    let mut all = first?;
    all.extend(second?);
    Ok(all)
}

/// Entry `i` parsed, from `parsed` when it is there (a leaf's few entries).
fn parse_once<'v>(parsed: &'v mut Vec<(EntryIdx, Value)>, s: &Session, i: EntryIdx) -> Result<&'v Value, Unreadable> {
    let k = match parsed.iter().position(|(j, _)| *j == i) {
        Some(k) => k,
        None => {
            parsed.push((i, s.parse(i)?));
            parsed.len() - 1
        }
    };
    Ok(&parsed[k].1)
}

/// The last reply's facts, from its parsed entry.
fn reply_of(r: EntryIdx, v: &Value) -> Reply {
    let m = v.get("message").unwrap_or(&Value::Null);
    let tool_calls = m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|b| js::to_js_string(b.get("name")))
        .collect();
    Reply {
        entry: r,
        text: content_text(m.get("content")),
        stop_reason: m.get("stopReason").cloned().unwrap_or(Value::Null),
        error: m.get("errorMessage").map(|e| js::to_js_string(Some(e))),
        tool_calls,
    }
}

/// The model a `model_change` or an assistant message names.
fn model_of(s: &Session, m: EntryIdx, v: &Value) -> Model {
    let (provider, model_id) = if s.entries[m].kind == EntryType::ModelChange {
        (v.get("provider").cloned(), v.get("modelId").cloned())
    } else {
        let msg = v.get("message");
        (msg.and_then(|m| m.get("provider")).cloned(), msg.and_then(|m| m.get("model")).cloned())
    };
    Model { provider, model_id }
}

/// Walks every leaf's path once (facts of shared ancestors are computed once) and
/// gathers each leaf's row, sorted by time, oldest first (undated leaves last, in file
/// order).
pub fn collect(s: &Session) -> Result<Vec<Leaf>, Unreadable> {
    let usage = usage_of_all(s)?;
    let n = s.entries.len();
    let mut acc: Vec<Option<Acc>> = vec![None; n];
    let leaves = s.leaves();
    let mut stack = Vec::new();
    for &leaf in &leaves {
        let mut cur = Some(leaf);
        while let Some(c) = cur {
            if acc[c.get()].is_some() {
                break;
            }
            stack.push(c);
            cur = s.parent(c);
        }
        while let Some(c) = stack.pop() {
            let base = s.parent(c).and_then(|p| acc[p.get()]);
            let mut a = base.unwrap_or_default();
            if base.is_some() {
                a.depth += 1;
            }
            let e = &s.entries[c];
            match (e.kind, e.role) {
                (EntryType::Message, Role::User) => a.user = Some(c),
                (EntryType::Message, Role::Assistant) => {
                    a.assistant = Some(c);
                    a.model = Some(c);
                }
                (EntryType::ModelChange, _) => a.model = Some(c),
                _ => {}
            }
            if s.label_at(c).is_some() {
                a.label = Some(c);
            }
            if let Some(u) = &usage[c.get()] {
                a.totals.add(u);
            }
            acc[c.get()] = Some(a);
        }
    }
    let mut rows = Vec::with_capacity(leaves.len());
    // Leaves share their last prompt or reply (branches of one turn): what is read from an
    // entry is kept for the next leaf that names it, not the parsed entry (a hundred
    // thousand of those would outweigh the file). A leaf's own entry, reply and model are
    // often one entry, parsed once.
    let mut prompts: HashMap<EntryIdx, Rc<str>> = HashMap::default();
    let mut replies: HashMap<EntryIdx, Rc<Reply>> = HashMap::default();
    let mut models: HashMap<EntryIdx, Rc<Model>> = HashMap::default();
    for &leaf in &leaves {
        let Some(a) = acc[leaf.get()] else { continue };
        let label = a.label.and_then(|l| {
            let text = s.label_at(l)?.text.clone();
            let above = a.depth - acc[l.get()]?.depth;
            Some((l, text, above as usize))
        });
        let mut parsed: Vec<(EntryIdx, Value)> = Vec::new();
        let prompt = match a.user {
            Some(u) if !prompts.contains_key(&u) => {
                let v = parse_once(&mut parsed, s, u)?;
                prompts.insert(u, content_text(v.get("message").and_then(|m| m.get("content"))).into());
                Some(u)
            }
            other => other,
        };
        if let Some(r) = a.assistant.filter(|r| !replies.contains_key(r)) {
            replies.insert(r, Rc::new(reply_of(r, parse_once(&mut parsed, s, r)?)));
        }
        if let Some(m) = a.model.filter(|m| !models.contains_key(m)) {
            models.insert(m, Rc::new(model_of(s, m, parse_once(&mut parsed, s, m)?)));
        }
        // (An entry that does not parse has no timestamp here; `time` says what it can.)
        let timestamp = parse_once(&mut parsed, s, leaf).ok().and_then(|v| v.get("timestamp").cloned());
        rows.push(Leaf {
            entry: leaf,
            depth: a.depth as usize,
            label,
            prompt: prompt.map(|u| (u, prompts[&u].clone())),
            reply: a.assistant.map(|r| replies[&r].clone()),
            model: a.model.map(|m| models[&m].clone()),
            timestamp,
            totals: a.totals,
        });
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
