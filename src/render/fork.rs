//! What `pisces fork` says once the new file is written: its path (or, forking before a
//! user message, that message's text), or one JSON document.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::sanitize;
use crate::session::write::{Fork, ForkPoint, NewSession};
use crate::session::{LineNo, Session};

/// `fork --format json`. A contract: fields are only ever added.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkDoc<'s> {
    /// `1`.
    pub version: u32,
    /// The new file, as written.
    pub path: String,
    /// The new session's id.
    pub id: &'s str,
    /// Lines after the header.
    pub entry_count: usize,
    pub cwd: &'s str,
    pub parent_session: Option<&'s str>,
    pub source: SourceDoc<'s>,
    /// The id of the last entry copied (`null` for `--all`, or an empty fork).
    pub leaf_id: Value,
    pub labels: LabelsDoc,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDoc>,
    /// `--before`: the user message's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'s str>,
}

#[derive(Serialize)]
pub struct SourceDoc<'s> {
    pub file: &'s str,
    pub id: &'s str,
}

#[derive(Serialize)]
pub struct LabelsDoc {
    pub dropped: usize,
    pub reemitted: usize,
}

#[derive(Serialize)]
pub struct TargetDoc {
    pub id: Value,
    pub line: LineNo,
}

impl<'s> ForkDoc<'s> {
    pub fn of(s: &'s Session, fork: &Fork, new: &'s NewSession, point: Option<&'s ForkPoint>) -> ForkDoc<'s> {
        ForkDoc {
            version: 1,
            path: new.path.display().to_string(),
            id: &new.id,
            entry_count: fork.lines.len(),
            cwd: &new.cwd,
            parent_session: new.parent_session.as_deref(),
            source: SourceDoc { file: &s.file, id: s.session_id() },
            leaf_id: fork.copied.last().filter(|_| point.is_some()).map_or(Value::Null, |&i| s.id_value(i)),
            labels: LabelsDoc { dropped: fork.labels_dropped, reemitted: fork.labels_emitted },
            target: point.map(|p| TargetDoc { id: s.id_value(p.target), line: s.entries[p.target].line }),
            text: point.and_then(|p| p.text.as_deref()),
        }
    }
}

/// For people: the new file's path on `out`; forking before a user message, the path on
/// `err` and the message's text on `out` exactly as written (it is there to be edited and
/// sent again, so it is not filtered).
pub fn write_text(out: &mut dyn Write, err: &mut dyn Write, doc: &ForkDoc) -> io::Result<()> {
    match (doc.text, &doc.target) {
        (Some(text), Some(t)) => {
            writeln!(err, "pisces: forked before the user message on line {}: {}", t.line, sanitize(&doc.path))?;
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                out.write_all(b"\n")?;
            }
        }
        _ => writeln!(out, "{}", sanitize(&doc.path))?,
    }
    Ok(())
}

pub fn write_json(out: &mut dyn Write, doc: &ForkDoc) -> io::Result<()> {
    super::json::write_pretty(&mut *out, doc)?;
    writeln!(out)
}
