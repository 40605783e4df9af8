//! Tokens and cost of an omp entry, as omp's `entryUsage` counts them
//! (src/session/session-manager.ts): an assistant message's `usage`, a `model_usage`
//! entry's (model calls outside the conversation: titles, summaries), and the `usage` in
//! the details of a `task` tool's result (its subagents' spend).

use serde_json::Value;

use super::own_type;
use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::{response_key, Dialect, Response, Unreadable};
use crate::session::usage::Totals;
use crate::session::{js, Session};

pub fn entry_usage(s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
    if !may_count(s, i) {
        return Ok(None);
    }
    Ok(usage_in(s, i, &s.parse(i)?))
}

/// Entry `i`'s response for `pisces stats`: [`Dialect::response`]'s default, from one
/// parse of the entry (the default parses it for the usage and again for the key).
pub fn response(s: &Session, d: &dyn Dialect, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
    if !may_count(s, i) {
        return Ok(None);
    }
    let v = d.entry(s, i)?;
    let Some(totals) = usage_in(s, i, &v) else { return Ok(None) };
    let model = v.pointer("/message/model").and_then(Value::as_str).map(str::to_string);
    let key = response_key(s, i, v.get("timestamp"), &totals);
    Ok(Some(Response { key, model, totals, copied: d.place(s, i).is_some() }))
}

/// Whether entry `i` may add usage: an assistant message, a tool result that names the
/// `task` tool or a `model_usage` entry, which pisces can read.
fn may_count(s: &Session, i: EntryIdx) -> bool {
    let e = &s.entries[i];
    let counts = matches!((e.kind, e.role), (EntryType::Message, Role::Assistant | Role::ToolResult))
        || own_type(s, i) == Some("model_usage");
    counts
        && !e.unreadable()
        && (e.role != Role::ToolResult || crate::session::text::contains!(s.raw_line(i), b"\"task\""))
}

/// The usage entry `i`, parsed as `v`, adds.
fn usage_in(s: &Session, i: EntryIdx, v: &Value) -> Option<Totals> {
    let e = &s.entries[i];
    let usage = match (e.kind, e.role) {
        (EntryType::Message, Role::Assistant) => v.get("message").and_then(|m| m.get("usage")),
        (EntryType::Message, _) => {
            let m = v.get("message");
            if m.and_then(|m| m.get("toolName")).and_then(Value::as_str) != Some("task") {
                return None;
            }
            m.and_then(|m| m.get("details")).and_then(|d| d.get("usage")).filter(|u| u.is_object())
        }
        _ => v.get("usage"),
    };
    usage.filter(|u| js::truthy(Some(u))).map(Totals::from_usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The response read from one parse is the default's, on every entry of the oh-my-pi
    /// corpus.
    #[test]
    fn a_response_from_one_parse_is_the_default_response() {
        let mut responses = 0;
        for p in crate::corpus::jsonl_files(&["omp-18.2.3"]) {
            let source = crate::session::Source::open(&p).unwrap();
            let Ok(session) = crate::session::open::load(&source, &[&super::super::OMP], &Default::default()) else {
                continue;
            };
            let d = session.dialect();
            for i in session.entries.indices() {
                let show = |r: Result<Option<Response>, Unreadable>| match r {
                    Ok(r) => format!("{:?}", r.map(|r| (r.key, r.model, r.copied, format!("{:?}", r.totals)))),
                    Err(e) => e.to_string(),
                };
                let (once, default) =
                    (response(&session, d, i), crate::session::format::default_response(&session, d, i));
                responses += usize::from(matches!(default, Ok(Some(_))));
                assert_eq!(show(once), show(default), "{}, entry {}", p.display(), i.get());
            }
        }
        assert!(responses > 10, "{responses} responses");
    }
}
