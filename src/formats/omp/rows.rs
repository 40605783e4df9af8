//! What the tree shows of omp's entries: pi's rows, with texts for the entry types and
//! shapes only omp writes (a `model_change` naming `provider/id`, a `title_change`, a
//! `/clear` boundary, …).

use serde_json::Value;

use super::own_type;
use crate::formats::pi::rows::PiRows;
use crate::formats::pi::Pi;
use crate::session::entry::{EntryIdx, EntryType};
use crate::session::format::{RowNeed, Unreadable};
use crate::session::js;
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::text::one_line;
use crate::session::Session;

pub struct OmpRows<'s, 'a> {
    session: &'s Session<'a>,
    pi: PiRows<'s, 'a>,
}

impl<'s, 'a> OmpRows<'s, 'a> {
    pub fn read(session: &'s Session<'a>, pi: &Pi, need: RowNeed) -> Result<Self, Unreadable> {
        Ok(OmpRows { session, pi: PiRows::read(session, pi, need)? })
    }
}

impl Rows for OmpRows<'_, '_> {
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
        match own_text(self.session, i) {
            Some(t) => match label {
                Some(l) => format!("{t} {l}"),
                None => t,
            },
            None => self.pi.searchable(i, label),
        }
    }
}

/// The text of an entry whose shape only omp writes (`None`: pi's text holds).
fn own_text(s: &Session, i: EntryIdx) -> Option<String> {
    let kind = s.entries[i].kind;
    let own = own_type(s, i);
    let own_role = kind == EntryType::Message && s.entries[i].role == crate::session::Role::Other;
    if kind != EntryType::ModelChange && own.is_none() && !own_role {
        return None;
    }
    let v = s.parse(i).ok()?;
    if own_role {
        return own_message(&v["message"]);
    }
    let f = |k: &str| js::to_js_string(v.get(k));
    let has = |k: &str| v.get(k).is_some_and(|x| !x.is_null());
    Some(match (kind, own) {
        (EntryType::ModelChange, _) if has("model") => match v.get("role").and_then(Value::as_str) {
            Some(role) if role != "default" => format!("[model ({role}): {}]", f("model")),
            _ => format!("[model: {}]", f("model")),
        },
        (EntryType::ModelChange, _) => return None,
        (_, Some("title_change")) => format!("[title: {}]", f("title")),
        (_, Some("reset_boundary")) => "[context cleared]".into(),
        (_, Some("mode_change")) => format!("[mode: {}]", f("mode")),
        (_, Some("model_usage")) => format!("[model usage: {} on {}/{}]", f("purpose"), f("provider"), f("model")),
        (_, Some("service_tier_change")) => {
            format!("[service tier: {}]", one_line(&js::stringify(&v["serviceTier"]), 60))
        }
        (_, Some("ttsr_injection")) => {
            let rules = v.get("injectedRules").and_then(Value::as_array).map(|r| r.len()).unwrap_or(0);
            format!("[rules injected: {rules}]")
        }
        (_, Some("credential_pin")) => format!("[credential pin: {}]", f("provider")),
        (_, Some("session_init")) => match v.get("agent").and_then(Value::as_str) {
            Some(agent) => format!("[session init: {agent}]"),
            None => "[session init]".into(),
        },
        (_, Some(other)) => format!("[{other}]"),
        _ => return None,
    })
}

/// A message in one of omp's own roles as its row says it, in pi's style (`[bash]: cmd`):
/// the user's `$` run, a file mention's paths, a developer message's text.
fn own_message(m: &Value) -> Option<String> {
    match m.get("role").and_then(Value::as_str)? {
        "pythonExecution" => Some(format!("[python]: {}", js::to_js_string(m.get("code")))),
        "fileMention" => {
            let files = m.get("files").and_then(Value::as_array)?;
            let paths: Vec<String> = files.iter().map(|f| js::to_js_string(f.get("path"))).collect();
            Some(format!("[file mention]: {}", paths.join(", ")))
        }
        "developer" => {
            let text = match m.get("content") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(blocks)) => {
                    blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join(" ")
                }
                _ => String::new(),
            };
            Some(format!("developer: {text}"))
        }
        _ => None,
    }
}

/// A one-line description of entry `i`: omp's own shapes, else pi's.
pub fn preview(s: &Session, i: EntryIdx, max: usize) -> String {
    match own_text(s, i) {
        Some(t) => one_line(&t, max),
        None => crate::formats::pi::preview::preview(s, i, max),
    }
}
