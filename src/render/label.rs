//! What `pisces label` says once the label entry is appended.

use std::io::{self, Write};

use serde::Serialize;

use super::sanitize;
use crate::session::LineNo;

/// `label --format json`. A contract: fields are only ever added.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelDoc<'a> {
    /// `1`.
    pub version: u32,
    /// The file appended to.
    pub file: String,
    /// The new label entry's id.
    pub id: &'a str,
    /// The labelled entry's id.
    pub target_id: &'a str,
    /// The label; `null` when it was cleared.
    pub label: Option<&'a str>,
    /// The label entry's line.
    pub line: LineNo,
}

pub fn write_text(out: &mut dyn Write, doc: &LabelDoc) -> io::Result<()> {
    let target = sanitize(doc.target_id);
    match doc.label {
        Some(l) => {
            writeln!(out, "labelled {target} \"{}\" (label entry {}, line {})", sanitize(l), doc.id, doc.line)
        }
        None => writeln!(out, "cleared the label of {target} (label entry {}, line {})", doc.id, doc.line),
    }
}

/// On stderr, when the REV named a label entry and its target was labelled instead.
pub fn write_redirect_note(err: &mut dyn Write, named: &str, target: &str) -> io::Result<()> {
    writeln!(
        err,
        "pisces: note: {} names a label entry; labelled {} instead, the entry it stands under (pi's /tree never labels a label entry)",
        sanitize(named),
        sanitize(target)
    )
}

pub fn write_json(out: &mut dyn Write, doc: &LabelDoc) -> io::Result<()> {
    super::json::write_pretty(&mut *out, doc)?;
    writeln!(out)
}
