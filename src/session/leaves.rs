//! Every branch tip of a session (`pisces leaves`): what happened on each one's path.

use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use super::format::Unreadable;
use super::system::{content_text, tool_call_names};
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
    /// When the leaf was written, as the format tells it (`Session::time`), in milliseconds.
    pub time: Option<f64>,
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

/// The entries that have a usage, with it, in file order (every entry is on some leaf's
/// path), read on two threads: a file of many replies has one usage to read for each, most
/// of `leaves`' work after the index. Only the entries with a usage are kept: a file of ten
/// million entries without any keeps nothing.
fn usage_of_all(s: &Session) -> Result<Vec<(u32, Totals)>, Unreadable> {
    let n = s.entries.len();
    let read = |range: std::ops::Range<usize>| -> Result<Vec<(u32, Totals)>, Unreadable> {
        let mut out = Vec::new();
        for k in range {
            if let Some(u) = s.dialect().usage(s, EntryIdx::new(k))? {
                out.push((k as u32, u));
            }
        }
        Ok(out)
    };
    // (Small sessions on this thread alone.)
    super::on_two_threads(n, 4096, read)
}

/// What a leaf's row takes from one entry.
#[derive(Clone, Copy, Default)]
struct Want {
    prompt: bool,
    reply: bool,
    model: bool,
    timestamp: bool,
}

/// What was read from one entry, as wanted.
struct Facts {
    prompt: Option<String>,
    /// The prompt entry is one the client wrote itself (Claude Code's `isMeta` user lines:
    /// a pasted image's path, a local command's caveat), not what the user typed.
    meta: bool,
    reply: Option<Reply>,
    model: Option<Model>,
    timestamp: Option<Value>,
}

/// Entry `i` parsed once for what is wanted of it. An entry that does not parse fails the
/// command when a prompt, reply or model is wanted of it (the read then starts again
/// without it), and has no timestamp when only that is (`time` says what it can).
fn facts(s: &Session, i: EntryIdx, want: Want) -> Result<Facts, Unreadable> {
    let v = match s.parse(i) {
        Ok(v) => v,
        Err(e) if want.prompt || want.reply || want.model => return Err(e),
        Err(_) => return Ok(Facts { prompt: None, meta: false, reply: None, model: None, timestamp: None }),
    };
    Ok(Facts {
        prompt: want.prompt.then(|| content_text(v.get("message").and_then(|m| m.get("content")))),
        meta: want.prompt && s.dialect().client_written(s, i),
        reply: want.reply.then(|| reply_of(i, &v)),
        model: want.model.then(|| model_of(s, i, &v)),
        timestamp: if want.timestamp { v.get("timestamp").cloned() } else { None },
    })
}

/// The text of the nearest user message above `i` that the user typed (see
/// `Dialect::client_written`), if any.
fn typed_prompt_above(s: &Session, i: EntryIdx) -> Result<Option<(EntryIdx, String)>, Unreadable> {
    let mut cur = s.parent(i);
    while let Some(c) = cur {
        let e = &s.entries[c];
        if e.kind == EntryType::Message && e.role == Role::User && !s.dialect().client_written(s, c) {
            let v = s.parse(c)?;
            return Ok(Some((c, content_text(v.get("message").and_then(|m| m.get("content"))))));
        }
        cur = s.parent(c);
    }
    Ok(None)
}

/// The last reply's facts, from its parsed entry.
fn reply_of(r: EntryIdx, v: &Value) -> Reply {
    let m = v.get("message").unwrap_or(&Value::Null);
    let tool_calls = tool_call_names(m.get("content"));
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
            if let Ok(k) = usage.binary_search_by_key(&(c.get() as u32), |&(k, _)| k) {
                a.totals.add(&usage[k].1);
            }
            acc[c.get()] = Some(a);
        }
    }
    // What each entry must give: a leaf's last prompt, reply and model, and the leaf's own
    // timestamp. Leaves share them (branches of one turn), and a leaf is often its own reply
    // and model: each entry is parsed once, on two threads, and only what is read from it
    // is kept (a hundred thousand parsed entries would outweigh the file).
    let mut wants: HashMap<EntryIdx, Want> = HashMap::default();
    for &leaf in &leaves {
        let Some(a) = acc[leaf.get()] else { continue };
        wants.entry(leaf).or_default().timestamp = true;
        if let Some(u) = a.user {
            wants.entry(u).or_default().prompt = true;
        }
        if let Some(r) = a.assistant {
            wants.entry(r).or_default().reply = true;
        }
        if let Some(m) = a.model {
            wants.entry(m).or_default().model = true;
        }
    }
    let mut wants: Vec<(EntryIdx, Want)> = wants.into_iter().collect();
    wants.sort_unstable_by_key(|&(i, _)| i);
    let facts: Vec<Facts> = super::on_two_threads(wants.len(), 256, |part| {
        wants[part].iter().map(|&(i, want)| facts(s, i, want)).collect()
    })?;
    // (Shared as `Rc`s: many leaves name the same prompt.)
    let mut prompts: HashMap<EntryIdx, (EntryIdx, Rc<str>)> = HashMap::default();
    let mut replies: HashMap<EntryIdx, Rc<Reply>> = HashMap::default();
    let mut models: HashMap<EntryIdx, Rc<Model>> = HashMap::default();
    let mut stamps: HashMap<EntryIdx, Value> = HashMap::default();
    for (&(i, _), f) in wants.iter().zip(facts) {
        if let Some(p) = f.prompt {
            // For a line the client wrote, the prompt the user typed above it.
            let typed = if f.meta { typed_prompt_above(s, i)? } else { None };
            prompts.insert(i, typed.map_or_else(|| (i, p.into()), |(u, p)| (u, p.into())));
        }
        if let Some(r) = f.reply {
            replies.insert(i, Rc::new(r));
        }
        if let Some(m) = f.model {
            models.insert(i, Rc::new(m));
        }
        if let Some(t) = f.timestamp {
            stamps.insert(i, t);
        }
    }
    let mut rows = Vec::with_capacity(leaves.len());
    for &leaf in &leaves {
        let Some(a) = acc[leaf.get()] else { continue };
        let label = a.label.and_then(|l| {
            let text = s.label_at(l)?.text.clone();
            let above = a.depth - acc[l.get()]?.depth;
            Some((l, text, above as usize))
        });
        rows.push(Leaf {
            entry: leaf,
            depth: a.depth as usize,
            label,
            prompt: a.user.map(|u| prompts[&u].clone()),
            reply: a.assistant.map(|r| replies[&r].clone()),
            model: a.model.map(|m| models[&m].clone()),
            timestamp: stamps.remove(&leaf),
            time: s.time(leaf),
            totals: a.totals,
        });
    }
    // Oldest first; a leaf without a valid timestamp goes last. The sort is stable, so
    // equal times keep file order.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| match (rows[a].time, rows[b].time) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let mut rows: Vec<Option<Leaf>> = rows.into_iter().map(Some).collect();
    Ok(order.into_iter().map(|k| rows[k].take().expect("each once")).collect())
}
