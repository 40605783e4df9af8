//! What the tree shows of OpenClaw's rows: pi's rows, with texts for its navigation
//! controls (`leaf`) and `/reset` boundaries, which pi would show empty.

use serde_json::Value;

use super::OWN_TYPES;
use crate::formats::pi::rows::PiRows;
use crate::formats::pi::{self, Pi};
use crate::session::entry::{EntryIdx, EntryType};
use crate::session::format::{RowNeed, Unreadable};
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::text::one_line;
use crate::session::Session;

pub struct OpenClawRows<'s, 'a> {
    session: &'s Session<'a>,
    pi: PiRows<'s, 'a>,
}

impl<'s, 'a> OpenClawRows<'s, 'a> {
    pub fn read(session: &'s Session<'a>, pi: &Pi, need: RowNeed) -> Result<Self, Unreadable> {
        Ok(OpenClawRows { session, pi: PiRows::read(session, pi, need)? })
    }
}

impl Rows for OpenClawRows<'_, '_> {
    fn parent_undefined(&self, i: EntryIdx) -> bool {
        self.pi.parent_undefined(i)
    }

    fn hidden_unless_leaf(&self, i: EntryIdx) -> bool {
        self.pi.hidden_unless_leaf(i)
    }

    fn calls(&self, i: EntryIdx) -> &[ToolCall<'_>] {
        self.pi.calls(i)
    }

    fn text(&self, i: EntryIdx, calls: &CallMap, paths: &Paths) -> Text {
        match own_text(self.session, i) {
            Some(t) => Text::whole(t, Tone::Dim),
            None => self.pi.text(i, calls, paths),
        }
    }

    fn searchable(&self, i: EntryIdx, label: Option<&str>) -> String {
        match (own_text(self.session, i), label) {
            (Some(t), Some(l)) => format!("{t} {l}"),
            (Some(t), None) => t,
            (None, _) => self.pi.searchable(i, label),
        }
    }
}

/// The text of a row only OpenClaw writes (`None`: pi's text holds).
fn own_text(s: &Session, i: EntryIdx) -> Option<String> {
    if s.entries[i].kind != EntryType::Other {
        return None;
    }
    let fields = pi::scan::object_fields(s.raw_line(i))?;
    let ty = OWN_TYPES.iter().copied().find(|&t| Some(t) == fields.ty.as_deref())?;
    let v = s.parse(i).ok()?;
    let short = |k: &str| match v.get(k) {
        Some(Value::String(id)) => id.chars().take(8).collect::<String>(),
        Some(Value::Null) => "null".into(),
        _ => "?".into(),
    };
    Some(match ty {
        "leaf" => format!("[leaf → {}]", short("targetId")),
        _ => match v.get("reason").and_then(Value::as_str) {
            Some(reason) if reason != "reset" => format!("[context reset: {reason}]"),
            _ => "[context reset]".into(),
        },
    })
}

/// A one-line description of entry `i`: OpenClaw's own rows, else pi's.
pub fn preview(s: &Session, i: EntryIdx, max: usize) -> String {
    match own_text(s, i) {
        Some(t) => one_line(&t, max),
        None => pi::preview::preview(s, i, max),
    }
}
