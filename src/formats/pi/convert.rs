//! `pisces convert`: the path to an entry of any session, written as a pi session (a
//! version-3 header, then the path's entries chained one after the other), so that it can
//! be continued with `pisces agent` or pi itself. What each entry becomes is the format's
//! to say ([`crate::session::format::Dialect::pi_entries`]).

use serde_json::Value;

use crate::session::entry::EntryIdx;
use crate::session::format::Unreadable;
use crate::session::write::now_iso;
use crate::session::Session;

/// A pi session, before it is written.
pub struct PiSession {
    pub id: String,
    /// The header line, then one line per entry.
    pub lines: Vec<String>,
    pub entries: usize,
}

/// The path to `leaf` as a pi session with id `id` in `cwd`.
pub fn to_pi(s: &Session, leaf: EntryIdx, id: &str, cwd: &str) -> Result<PiSession, Unreadable> {
    let mut entries = s.dialect().pi_entries(s, leaf)?;
    let mut parent = Value::Null;
    for e in &mut entries {
        if let Value::Object(m) = e {
            m.insert("parentId".into(), parent.clone());
            parent = m.get("id").cloned().unwrap_or(Value::Null);
        }
    }
    // As `fork` writes it: the source file's absolute path, and nothing for a source that
    // is no file pi could open (standard input, a session in OpenClaw's database).
    let source = s.path.as_ref().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()).display().to_string());
    let header = super::fork::header_line(id, &now_iso(), cwd, source.as_deref());
    let mut lines = vec![header];
    lines.extend(entries.iter().map(|e| serde_json::to_string(e).expect("an entry serializes")));
    Ok(PiSession { id: id.to_string(), lines, entries: entries.len() })
}
