//! One-line descriptions of pi entries, for candidate lists and error messages.

use serde_json::Value;

use crate::session::entry::{EntryIdx, EntryType};
use crate::session::js;
use crate::session::system::{content_text, tool_call_names};
use crate::session::text::one_line;
use crate::session::Session;

/// `user: fix the tests`, `[compaction: 12k tokens]`, … cut to `max` characters. Raw
/// session text: whoever shows it on a terminal sanitizes it.
pub fn preview(session: &Session, i: EntryIdx, max: usize) -> String {
    let kind = session.entries[i].kind;
    let Ok(v) = session.parse(i) else { return "(a line pisces cannot read)".into() };
    let s = |k: &str| js::to_js_string(v.get(k));
    let text = match kind {
        EntryType::Message => message_preview(v.get("message")),
        EntryType::Compaction => {
            let tokens = v.get("tokensBefore").and_then(Value::as_f64).unwrap_or(0.0);
            format!("[compaction: {}k tokens]", (tokens / 1000.0).round())
        }
        EntryType::BranchSummary => format!("[branch summary]: {}", s("summary")),
        EntryType::ModelChange => format!("[model: {}/{}]", s("provider"), s("modelId")),
        EntryType::ThinkingLevelChange => format!("[thinking: {}]", s("thinkingLevel")),
        EntryType::Label => match v.get("label") {
            Some(l) if js::truthy(Some(l)) => format!("[label {} on {}]", js::to_js_string(Some(l)), s("targetId")),
            _ => format!("[label cleared on {}]", s("targetId")),
        },
        EntryType::SessionInfo => format!("[name: {}]", s("name")),
        EntryType::Custom => format!("[custom: {}]", s("customType")),
        EntryType::CustomMessage => format!("{}: {}", s("customType"), content_text(v.get("content"))),
        EntryType::Usage => format!("[usage: {}]", s("kind")),
        EntryType::ContextEdit => {
            let what = if v.get("replacement").is_some_and(Value::is_null) { "omit" } else { "replace" };
            format!("[context edit: {what} {}]", s("targetId"))
        }
        EntryType::Other => format!("[{}]", s("type")),
        EntryType::Missing => "(entry without type)".into(),
        EntryType::NotObject => format!("(not an object: {})", one_line(&v.to_string(), 40)),
    };
    one_line(&text, max)
}

fn message_preview(msg: Option<&Value>) -> String {
    let Some(m) = msg else { return "(message without content)".into() };
    let role = js::to_js_string(m.get("role"));
    match role.as_str() {
        "assistant" => {
            let text = content_text(m.get("content"));
            if !text.trim().is_empty() {
                return format!("assistant: {text}");
            }
            let calls = tool_call_names(m.get("content"));
            if calls.is_empty() {
                format!("assistant: ({})", js::to_js_string(m.get("stopReason")))
            } else {
                format!("assistant: [calls {}]", calls.join(", "))
            }
        }
        "toolResult" => format!("{} result: {}", js::to_js_string(m.get("toolName")), content_text(m.get("content"))),
        "bashExecution" => format!("!{}", js::to_js_string(m.get("command"))),
        "system" => "[system]".into(),
        "custom" | "hookMessage" => {
            format!("{}: {}", js::to_js_string(m.get("customType")), content_text(m.get("content")))
        }
        _ => format!("{role}: {}", content_text(m.get("content"))),
    }
}
