//! Tokens and cost of an omp entry, as omp's `entryUsage` counts them
//! (src/session/session-manager.ts): an assistant message's `usage`, a `model_usage`
//! entry's (model calls outside the conversation: titles, summaries), and the `usage` in
//! the details of a `task` tool's result (its subagents' spend).

use serde_json::Value;

use super::own_type;
use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::Unreadable;
use crate::session::usage::Totals;
use crate::session::{js, Session};

pub fn entry_usage(s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
    let e = &s.entries[i];
    let counts = matches!((e.kind, e.role), (EntryType::Message, Role::Assistant | Role::ToolResult))
        || own_type(s, i) == Some("model_usage");
    if !counts || e.unreadable {
        return Ok(None);
    }
    let line = s.raw_line(i);
    if e.role == Role::ToolResult && memchr::memmem::find(line, b"\"task\"").is_none() {
        return Ok(None);
    }
    let v = s.parse(i)?;
    let usage = match (e.kind, e.role) {
        (EntryType::Message, Role::Assistant) => v.get("message").and_then(|m| m.get("usage")),
        (EntryType::Message, _) => {
            let m = v.get("message");
            if m.and_then(|m| m.get("toolName")).and_then(Value::as_str) != Some("task") {
                return Ok(None);
            }
            m.and_then(|m| m.get("details")).and_then(|d| d.get("usage")).filter(|u| u.is_object())
        }
        _ => v.get("usage"),
    };
    Ok(usage.filter(|u| js::truthy(Some(u))).map(Totals::from_usage))
}
