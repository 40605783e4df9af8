//! Branch summaries and compaction, as pi 1.6.0 computes them (docs/pi-format.md §3.3, §5,
//! §6), plus an offline summarizer that needs no model.
//!
//! - [`branch`]: `/tree` summarize: the entries collected from an old leaf back to its
//!   common ancestor with the target, `prepareBranchEntries` under the token budget, the
//!   prompt, and the summary pi stores.
//! - [`compaction`]: `prepareCompaction` on the session projection (cut points, split
//!   turns, `tokensBefore`, the previous summary, file operations), the history and
//!   turn-prefix prompts, and the summary `compact()` assembles.
//! - the `branch_summary` and `compaction` lines themselves are the format's
//!   (`session::write::Writer::summary_lines`; pi's in `formats::pi::entries`).
//! - [`offline`]: a deterministic summary in pi's section layout, built from the entries.
//! - [`models`]: what pi-ai knows about its built-in models (context window, reasoning).
//!
//! Model calls go through [`crate::llm::Provider`]; nothing here prints.

pub mod branch;
pub mod compaction;
pub mod model;
pub mod models;
pub mod offline;
pub mod prompts;
pub mod serialize;
pub mod text;
pub mod tokens;

use serde_json::{json, Value};

use crate::formats::pi::context::entry_messages;
use crate::llm::{LlmError, Provider, Request, StreamEvent};
use crate::session::format::Unreadable;
use crate::session::EntryIdx;
use crate::session::{js, Session};

/// A summary that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The model call was aborted (pi: the navigation is cancelled, nothing is written).
    #[error("the summary request was aborted")]
    Aborted,
    /// pi's own failure texts (`Branch summarization failed: …`, `Summarization attempted
    /// to call a tool`, …).
    #[error("{0}")]
    Failed(String),
    #[error("{0}")]
    Llm(#[from] LlmError),
    /// An entry to summarize cannot be read.
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
}

impl SummaryError {
    /// The error a command stops with: an aborted request says that nothing was written.
    pub fn nothing_written(self) -> anyhow::Error {
        match self {
            SummaryError::Aborted => anyhow::anyhow!("the summary request was aborted; nothing written"),
            e => e.into(),
        }
    }
}

/// Entries parsed whole, in the order given.
pub(crate) fn parse_all(s: &Session, entries: &[EntryIdx]) -> Result<Vec<Value>, Unreadable> {
    entries.iter().map(|&i| s.parse(i)).collect()
}

/// `projectContextEntry(entry, edit)`: the entry's context messages with a context edit
/// applied (`replacement: null` drops them; otherwise user, assistant, tool result and
/// custom messages get the replacement content, a string wrapped as one text block for
/// assistants and tool results). An edit without `replacement` is ignored.
pub(crate) fn project_entry(entry: &Value, edit: Option<&Value>) -> Vec<Value> {
    let mut messages = entry_messages(entry.clone());
    if let Some(edit) = edit {
        crate::formats::pi::context::apply_edit(&mut messages, edit);
    }
    messages
}

/// `getSummarizationFailure` and the tool-call check: pi's failure texts for a reply
/// that must not become a summary.
pub(crate) fn check_reply(reply: &Value, label: &str) -> Result<(), SummaryError> {
    match reply.get("stopReason").and_then(Value::as_str) {
        Some("error") => {
            let msg = reply.get("errorMessage").filter(|m| js::truthy(Some(m)));
            let msg = msg.map_or("Unknown error".to_string(), |m| js::to_js_string(Some(m)));
            return Err(SummaryError::Failed(format!("{label} failed: {msg}")));
        }
        Some("length") => {
            return Err(SummaryError::Failed(format!(
                "{label} failed: generation hit the token cap and the summary is incomplete"
            )))
        }
        _ => {}
    }
    let calls_tool = reply
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")));
    if calls_tool {
        return Err(SummaryError::Failed(format!("{label} attempted to call a tool")));
    }
    Ok(())
}

/// The reply's text blocks joined by `\n` (`contentText`).
pub(crate) fn reply_text(reply: &Value) -> String {
    text::content_text(reply.get("content"), "\n")
}

/// The request pi sends for one summary: the summarization system prompt, one user
/// text message, no tools, the model's own output limit, and the session's thinking
/// level (pi passes it when the model reasons and the level is not `off`).
pub fn summary_request(prompt: &str, thinking_level: Option<&str>) -> Request {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    Request {
        system: Some(prompts::SUMMARIZATION_SYSTEM_PROMPT.to_string()),
        messages: vec![json!({"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": now})],
        tools: vec![],
        max_tokens: None,
        thinking_level: thinking_level.filter(|l| *l != "off").map(str::to_string),
    }
}

/// Sends one summary request.
pub fn complete(
    provider: &dyn Provider,
    prompt: &str,
    thinking_level: Option<&str>,
    events: &mut dyn FnMut(&StreamEvent),
) -> Result<Value, LlmError> {
    provider.complete(&summary_request(prompt, thinking_level), events)
}

/// `combineUsage(first, second)`: the sum of two usages (optional splits kept when either
/// side has them; a cost is provider-reported only when both are).
pub fn combine_usage(a: &Value, b: &Value) -> Value {
    let n = |u: &Value, k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let c = |u: &Value, k: &str| u.get("cost").and_then(|c| c.get(k)).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let sum = |k: &str| js::number(n(a, k) + n(b, k));
    let mut out = serde_json::Map::new();
    for k in ["input", "output", "cacheRead", "cacheWrite"] {
        out.insert(k.into(), sum(k));
    }
    for k in ["cacheWrite1h", "reasoning"] {
        if a.get(k).is_some() || b.get(k).is_some() {
            let v = |u: &Value| u.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            out.insert(k.into(), js::number(v(a) + v(b)));
        }
    }
    out.insert("totalTokens".into(), sum("totalTokens"));
    let mut cost = serde_json::Map::new();
    for k in ["input", "output", "cacheRead", "cacheWrite", "total"] {
        cost.insert(k.into(), js::number(c(a, k) + c(b, k)));
    }
    let from_provider = |u: &Value| u.get("cost").and_then(|c| c.get("totalFromProvider")) == Some(&Value::Bool(true));
    cost.insert("totalFromProvider".into(), Value::Bool(from_provider(a) && from_provider(b)));
    out.insert("cost".into(), Value::Object(cost));
    Value::Object(out)
}

#[cfg(test)]
mod tests;
