//! `pisces grep`'s hits: one line each for people (as ripgrep's `file:line:text`), one JSON
//! object each for programs.

use std::io::Write;

use serde::Serialize;

use super::{sanitize, Paint, Ui};
use crate::store::grep::{Hit, Role, SessionHits};

fn role_paint(r: Role) -> Paint {
    match r {
        Role::User => Paint::User,
        Role::Assistant | Role::Thinking => Paint::Assistant,
        Role::ToolCall | Role::ToolResult => Paint::Tool,
        Role::Summary => Paint::Summary,
    }
}

/// `SESSION:LINE:REV ROLE[ TOOL]: text`, the matches highlighted. Every part is made safe
/// for a terminal, the matches cut out before it so that highlighting stays on them; tabs
/// and line breaks in the text show as spaces.
pub fn write_hit(w: &mut dyn Write, ui: &Ui, s: &SessionHits, h: &Hit) -> std::io::Result<()> {
    let file = h.file.as_deref().unwrap_or(&s.session);
    let mut role = h.role.as_str().to_string();
    if let Some(t) = &h.tool {
        role.push(' ');
        role.push_str(&super::safe::name(t));
    }
    write!(
        w,
        "{}:{}:{} {}: ",
        ui.paint(Paint::Path, &super::safe::name(file)),
        ui.paint(Paint::Dim, &h.line.to_string()),
        ui.paint(Paint::Active, &sanitize(&h.rev)),
        ui.paint(role_paint(h.role), &sanitize(&role)),
    )?;
    let flat = |t: &str| sanitize(t).replace(['\t', '\n', '\r'], " ");
    let mut at = 0;
    for m in &h.matches {
        if m.start < at || m.end > h.text.len() {
            continue;
        }
        write!(w, "{}", flat(&h.text[at..m.start]))?;
        write!(w, "{}", ui.paint(Paint::Match, &flat(&h.text[m.clone()])))?;
        at = m.end;
    }
    writeln!(w, "{}", flat(&h.text[at..]))
}

/// `SESSION:COUNT` (`--count`).
pub fn write_count(w: &mut dyn Write, ui: &Ui, s: &SessionHits) -> std::io::Result<()> {
    writeln!(w, "{}:{}", ui.paint(Paint::Path, &super::safe::name(&s.session)), s.hits.len())
}

/// `SESSION` (`--files-with-matches`).
pub fn write_name(w: &mut dyn Write, ui: &Ui, s: &SessionHits) -> std::io::Result<()> {
    writeln!(w, "{}", ui.paint(Paint::Path, &super::safe::name(&s.session)))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HitJson<'a> {
    agent: &'static str,
    format: &'static str,
    session: &'a str,
    session_id: &'a str,
    /// The file the entry is in, when not the session's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    line: u32,
    rev: &'a str,
    id: Option<&'a str>,
    role: &'static str,
    tool: Option<&'a str>,
    text: &'a str,
    /// Byte ranges of the matches in `text`.
    matches: Vec<[usize; 2]>,
}

/// One JSON object per hit, one per line (exact text: nothing is sanitized).
pub fn write_json(w: &mut dyn Write, s: &SessionHits, h: &Hit) -> std::io::Result<()> {
    let doc = HitJson {
        agent: s.agent,
        format: s.format,
        session: &s.session,
        session_id: &s.session_id,
        file: h.file.as_deref(),
        line: h.line.get(),
        rev: &h.rev,
        id: h.id.as_deref(),
        role: h.role.as_str(),
        tool: h.tool.as_deref(),
        text: &h.text,
        matches: h.matches.iter().map(|m| [m.start, m.end]).collect(),
    };
    serde_json::to_writer(&mut *w, &doc)?;
    writeln!(w)
}

/// `--count --format json`: `{"session", "count"}` per session.
pub fn write_count_json(w: &mut dyn Write, s: &SessionHits) -> std::io::Result<()> {
    serde_json::to_writer(
        &mut *w,
        &serde_json::json!({"session": s.session, "sessionId": s.session_id, "count": s.hits.len()}),
    )?;
    writeln!(w)
}
