//! The context OpenClaw builds at a leaf: its `buildSessionContext`
//! (packages/agent-core/src/harness/session/session.ts), which differs from pi's in one
//! place that matters (docs/openclaw-format.md §4): the window starts at the path's last
//! boundary, a `reset` row as well as a compaction. After a `/reset` the model sees
//! nothing from before it, unless the reset names a `firstKeptEntryId`: then the user and
//! assistant turns from there on (and the tool results of calls among them) come first.
//! Messages marked `excludeFromContext` are left out, as OpenClaw leaves them out.

use std::collections::HashSet;

use serde_json::Value;

use crate::formats::pi;
use crate::session::entry::EntryIdx;
use crate::session::format::Unreadable;
use crate::session::projection::{ProjectedEntry, Projection};
use crate::session::Session;

pub fn project(s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
    // The path, the model and the thinking level are pi's (OpenClaw reads them the same way).
    let mut p = pi::context::project(s, leaf)?;
    let path = p.path.clone();
    let entries = path.iter().map(|&i| s.parse(i)).collect::<Result<Vec<_>, _>>()?;
    let ty = |k: usize| entries[k].get("type").and_then(Value::as_str).unwrap_or_default();

    // resolveSessionContextWindow
    let boundary = (0..path.len()).rev().find(|&k| matches!(ty(k), "reset" | "compaction"));
    let first_kept = boundary.map(|b| {
        let fk = entries[b].get("firstKeptEntryId");
        let at = fk.and_then(|fk| entries.iter().position(|e| e.get("id") == Some(fk)));
        at.filter(|&k| k < b).unwrap_or(b)
    });
    let reset = boundary.filter(|&b| ty(b) == "reset");
    let before_reset: Option<HashSet<usize>> = reset.map(|b| reset_kept(&entries, first_kept.unwrap_or(b), b));

    let mut order = Vec::with_capacity(path.len());
    order.extend(boundary);
    for (k, entry) in entries.iter().enumerate() {
        let retained = boundary.is_some_and(|b| k < b);
        if Some(k) == boundary {
            continue;
        }
        if retained
            && (first_kept.is_some_and(|f| k < f) || before_reset.as_ref().is_some_and(|kept| !kept.contains(&k)))
        {
            continue;
        }
        if !matches!(ty(k), "message" | "custom_message" | "branch_summary") {
            continue;
        }
        let kept = before_reset.as_ref().is_some_and(|kept| kept.contains(&k));
        let excluded = entry.pointer("/message/excludeFromContext") == Some(&Value::Bool(true));
        if ty(k) == "message" && excluded && !kept {
            continue;
        }
        order.push(k);
    }

    let mut messages = Vec::new();
    let mut projected = Vec::with_capacity(order.len());
    let mut entries: Vec<Option<Value>> = entries.into_iter().map(Some).collect();
    for k in order {
        let start = messages.len();
        let e = entries[k].take().unwrap_or_default();
        messages.extend(pi::context::entry_messages(e));
        projected.push(ProjectedEntry { entry: path[k], messages: start..messages.len(), edit: None });
    }
    p.entries = projected;
    p.messages = messages;
    Ok(p)
}

/// `selectResetKeptEntries` over the path's `from..to`: user and assistant messages, and
/// tool results answering a call made among them.
fn reset_kept(entries: &[Value], from: usize, to: usize) -> HashSet<usize> {
    let mut calls: HashSet<&str> = HashSet::new();
    let mut kept = HashSet::new();
    for (k, e) in entries.iter().enumerate().take(to).skip(from) {
        if e.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let m = &e["message"];
        match m.get("role").and_then(Value::as_str) {
            Some("user") => {
                kept.insert(k);
            }
            Some("assistant") => {
                kept.insert(k);
                for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) == Some("toolCall") {
                        calls.extend(b.get("id").and_then(Value::as_str));
                    }
                }
            }
            Some("toolResult") if m.get("toolCallId").and_then(Value::as_str).is_some_and(|id| calls.contains(id)) => {
                kept.insert(k);
            }
            _ => {}
        }
    }
    kept
}
