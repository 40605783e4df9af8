//! Where a subagent's transcript is (docs/claude-format.md §1.1): the result of the `Agent`
//! (older: `Task`) call that started it names its `agentId` (`toolUseResult.agentId`), and
//! the transcript is `<session>/subagents/agent-<id>.jsonl` beside the session's file, or in
//! older versions `agent-<id>.jsonl` in the project folder. Its `agent-<id>.meta.json` says
//! what kind of agent it was and what it was asked.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::line;
use crate::session::entry::EntryIdx;
use crate::session::format::Subagent;
use crate::session::Session;

/// The subagents entry `i` (a tool result line) started, whose transcripts exist.
pub fn of(s: &Session, i: EntryIdx) -> Vec<Subagent> {
    // Most lines name no agent: look for the key before parsing the line.
    let raw = s.raw_line(i);
    if !crate::session::text::contains!(raw, b"\"agentId\"") {
        return Vec::new();
    }
    let (Some(file), Ok(v)) = (s.path.as_deref(), line(s, i)) else { return Vec::new() };
    let Some(result) = v.get("toolUseResult") else { return Vec::new() };
    let Some(id) = result.get("agentId").and_then(Value::as_str).filter(|id| is_plain(id)) else { return Vec::new() };
    let Some(path) = transcript(file, id) else { return Vec::new() };
    let meta: Option<Value> =
        std::fs::read(path.with_extension("meta.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let field = |k: &str| {
        meta.as_ref().and_then(|m| m.get(k)).or_else(|| result.get(k)).and_then(Value::as_str).map(str::to_string)
    };
    vec![Subagent { path, kind: field("agentType"), description: field("description") }]
}

/// An id that cannot climb out of the folder.
fn is_plain(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn transcript(file: &Path, id: &str) -> Option<PathBuf> {
    let name = format!("agent-{id}.jsonl");
    let beside = file.with_extension("").join("subagents").join(&name);
    let flat = file.parent().map(|d| d.join(&name));
    [Some(beside), flat].into_iter().flatten().find(|p| p.is_file())
}
