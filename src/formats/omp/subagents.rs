//! Where an omp subagent's transcript is: the result of the `task` call that spawned it
//! lists each job (`details.progress[].id`, `details.results[].id`), and the transcript is
//! `<session file without .jsonl>/<id>.jsonl`, a session of its own whose header's
//! `parentSession` is the spawning file.

use serde_json::Value;

use crate::session::entry::{EntryIdx, Role};
use crate::session::format::Subagent;
use crate::session::Session;

/// The subagents entry `i` (a `task` tool result) spawned, whose transcripts exist.
pub fn of(s: &Session, i: EntryIdx) -> Vec<Subagent> {
    let raw = s.raw_line(i);
    if s.entries[i].role != Role::ToolResult || !crate::session::text::contains!(raw, b"\"task\"") {
        return Vec::new();
    }
    let (Some(file), Ok(v)) = (s.path.as_deref(), s.parse(i)) else { return Vec::new() };
    let Some(m) = v.get("message").filter(|m| m.get("toolName").and_then(Value::as_str) == Some("task")) else {
        return Vec::new();
    };
    let folder = file.with_extension("");
    let details = m.get("details");
    let jobs = ["progress", "results"]
        .iter()
        .filter_map(|k| details.and_then(|d| d.get(*k)).and_then(Value::as_array))
        .flatten();
    let mut out: Vec<Subagent> = Vec::new();
    for job in jobs {
        let Some(id) = job.get("id").and_then(Value::as_str).filter(|id| is_plain(id)) else { continue };
        let path = folder.join(format!("{id}.jsonl"));
        if !path.is_file() || out.iter().any(|o| o.path == path) {
            continue;
        }
        let field = |k: &str| job.get(k).and_then(Value::as_str).map(str::to_string);
        out.push(Subagent { path, kind: field("agent"), description: field("assignment").or(field("task")) });
    }
    out
}

/// An id that cannot climb out of the folder.
fn is_plain(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') && id != ".."
}
