//! Event logs that begin like a pi session but are not trees: pi's `--mode json` stream
//! (a session header, then `agent_start`, `message_end`, … events), which the pi-subagents
//! extension saves as `.jsonl` files inside pi's session folders, and DeepSeek Harness's
//! `session.v3.jsonl.zstd` logs, whose first line is a pi v3 header.
//!
//! Read as pi, such a file would be a forest of entries without ids. This format claims
//! it instead ([`Fit::Own`]) and refuses it with a message that says what it is; commands
//! that walk a store skip it with a note ([`Format::is_session`]).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::formats::pi::scan::object_fields;
use crate::session::entry::LineNo;
use crate::session::format::{Fit, Format, FormatInfo};
use crate::session::js::parse_value;
use crate::session::{LoadError, Session, Source};

pub static INFO: FormatInfo = FormatInfo { name: "event-log", agent: "an event log, not a session tree" };

pub struct EventLog;

pub static EVENTS: EventLog = EventLog;

/// The events of pi's `--mode json` stream (pi-reference §JSON mode).
const PI_EVENTS: &[&str] = &[
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "auto_compaction_start",
    "auto_compaction_end",
    "auto_retry_start",
    "auto_retry_end",
];

/// What the head of a file says it is, when it is a log that starts with a pi header.
fn kind(head: &[u8]) -> Option<&'static str> {
    let mut lines = head.split(|&b| b == b'\n').map(<[u8]>::trim_ascii).filter(|l| !l.is_empty());
    // A pi header, `"type": "session"`.
    let header = Some(lines.next()?).filter(|l| crate::session::format::may_hold_any(l, &[b"\"session\""]))?;
    let header = parse_value(header).ok()?;
    if header.get("type").and_then(Value::as_str) != Some("session") || !header.get("id").is_some_and(Value::is_string)
    {
        return None;
    }
    let tree_version = header.get("version").and_then(Value::as_f64).is_some_and(|v| v >= 2.0);
    let (mut objects, mut events) = (0, 0);
    // Only whole lines count: the sniffed head may end inside one.
    for line in lines.take(64) {
        if memchr::memmem::find(line, b"\"parentId\"").is_some() {
            return None;
        }
        let Some(fields) = object_fields(line) else { continue };
        objects += 1;
        if fields.ty.as_deref().is_some_and(|t| PI_EVENTS.contains(&t)) {
            events += 1;
        }
    }
    if events > 0 {
        Some("pi's --mode json event stream (the pi-subagents extension saves these in pi's session folders)")
    } else if objects > 0 && tree_version {
        // A version-2+ pi entry always has a `parentId`; lines without one are not entries.
        Some("an event log that starts with a pi header but whose lines are not entries (none has a parentId; DeepSeek Harness writes such logs)")
    } else {
        None
    }
}

impl Format for EventLog {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn sniff(&self, head: &[u8]) -> Fit {
        if kind(head).is_some() {
            Fit::Own
        } else {
            Fit::No
        }
    }

    fn load<'a>(&'static self, source: &'a Source, _: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        let bytes = source.bytes();
        let what = kind(&bytes[..bytes.len().min(crate::session::format::SNIFF_BYTES)]).unwrap_or("an event log");
        let compressed = source
            .compression()
            .map(|c| format!(" ({c}-compressed; pi never compresses its sessions)"))
            .unwrap_or_default();
        Err(LoadError::NotASession {
            name: source.name.clone(),
            line: None,
            format: "pi",
            reason: format!("it is {what}{compressed}, not a session tree"),
            hint: Some("pisces does not read it as a tree, so nothing in it is misread; the session it came from is a file of its own"),
        })
    }

    fn is_session(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_json_mode_and_header_logs_are_event_logs_and_sessions_are_not() {
        let header = r#"{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#;
        let stream = format!("{header}\n{{\"type\":\"agent_start\"}}\n{{\"type\":\"turn_start\"}}\n");
        assert!(kind(stream.as_bytes()).unwrap().contains("--mode json"));
        let log = format!("{header}\n{{\"type\":\"event\",\"seq\":1,\"kind\":\"user\",\"text\":\"hi\"}}\n");
        assert!(kind(log.as_bytes()).unwrap().contains("parentId"));
        let tree = format!("{header}\n{{\"type\":\"message\",\"id\":\"b\",\"parentId\":null}}\n");
        assert_eq!(kind(tree.as_bytes()), None);
        // A new session with only its header, and a version-1 file (no ids yet), are pi's.
        assert_eq!(kind(format!("{header}\n").as_bytes()), None);
        let v1 = "{\"type\":\"session\",\"id\":\"a\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n";
        assert_eq!(kind(v1.as_bytes()), None);
    }
}
