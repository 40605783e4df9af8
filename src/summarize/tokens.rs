//! pi's token arithmetic (docs/pi-format.md §6.1): `estimateTokens` (characters / 4, counted in
//! UTF-16 units), `calculateContextTokens`, `estimateContextTokens` and
//! `estimateProjectedContextTokens`.

use serde_json::Value;

use super::text::{stringify_len, utf16_len};
use crate::session::entry::EntryType;
use crate::session::projection::Projection;
use crate::session::{js, system, Session};

/// What an image counts as, in characters.
const ESTIMATED_IMAGE_CHARS: usize = 4800;

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or_default()
}

fn str_len(v: Option<&Value>) -> usize {
    v.and_then(Value::as_str).map_or(0, utf16_len)
}

/// `estimateTextAndImageContentChars`: a string's length, or the text blocks' lengths
/// plus 4800 per image.
fn content_chars(content: Option<&Value>) -> usize {
    match content {
        Some(Value::String(s)) => utf16_len(s),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") if js::truthy(b.get("text")) => str_len(b.get("text")),
                Some("image") => ESTIMATED_IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// `estimateTokens(message)`: `ceil(chars / 4)`.
pub fn estimate_tokens(m: &Value) -> u64 {
    let chars = match role(m) {
        "system" => {
            let mut chars = content_chars(m.get("content"));
            if let Some(Value::Object(sections)) = m.get("sections") {
                chars += sections.values().filter(|s| js::truthy(Some(s))).map(|s| str_len(Some(s))).sum::<usize>();
            }
            if js::truthy(m.get("toolsAdded")) {
                chars += stringify_len(m.get("toolsAdded"));
            }
            chars
        }
        "user" | "custom" | "toolResult" => content_chars(m.get("content")),
        "assistant" => m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => str_len(b.get("text")),
                Some("thinking") => str_len(b.get("thinking")),
                Some("toolCall") => str_len(b.get("name")) + stringify_len(b.get("arguments")),
                _ => 0,
            })
            .sum(),
        "bashExecution" => str_len(m.get("command")) + str_len(m.get("output")),
        "branchSummary" | "compactionSummary" => str_len(m.get("summary")),
        _ => return 0,
    };
    chars.div_ceil(4) as u64
}

/// A JS number read from JSON: `undefined` and non-numbers are NaN.
fn num(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// `calculateContextTokens(usage)`: `totalTokens`, or the sum of its parts when that is
/// 0 or missing.
pub fn calculate_context_tokens(usage: &Value) -> f64 {
    if js::truthy(usage.get("totalTokens")) {
        return num(usage.get("totalTokens"));
    }
    num(usage.get("input")) + num(usage.get("output")) + num(usage.get("cacheRead")) + num(usage.get("cacheWrite"))
}

/// `getAssistantUsage`: the usage of an assistant message that completed and reported
/// tokens.
fn assistant_usage(m: &Value) -> Option<&Value> {
    if role(m) != "assistant" {
        return None;
    }
    let usage = m.get("usage")?;
    let stop = m.get("stopReason").and_then(Value::as_str);
    (stop != Some("aborted")
        && stop != Some("error")
        && js::truthy(Some(usage))
        && calculate_context_tokens(usage) > 0.0)
        .then_some(usage)
}

/// `estimateContextTokens` / `estimateProjectedContextTokens`' result.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEstimate {
    #[serde(serialize_with = "js::serialize_number")]
    pub tokens: f64,
    #[serde(serialize_with = "js::serialize_number")]
    pub usage_tokens: f64,
    #[serde(serialize_with = "js::serialize_number")]
    pub trailing_tokens: f64,
    /// Index of the message whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// `estimateContextTokens(messages)`: the last usable assistant usage plus the estimates
/// of the messages after it, or the sum of all estimates.
pub fn estimate_context_tokens(messages: &[Value]) -> ContextEstimate {
    let found = messages.iter().enumerate().rev().find_map(|(i, m)| assistant_usage(m).map(|u| (i, u)));
    match found {
        None => {
            let t = messages.iter().map(estimate_tokens).sum::<u64>() as f64;
            ContextEstimate { tokens: t, usage_tokens: 0.0, trailing_tokens: t, last_usage_index: None }
        }
        Some((i, usage)) => {
            let usage_tokens = calculate_context_tokens(usage);
            let trailing = messages[i + 1..].iter().map(estimate_tokens).sum::<u64>() as f64;
            ContextEstimate {
                tokens: usage_tokens + trailing,
                usage_tokens,
                trailing_tokens: trailing,
                last_usage_index: Some(i),
            }
        }
    }
}

/// `estimateProjectedContextTokens(projection, branch)`: the usage estimate, unless the
/// usage was reported before the branch's latest `context_edit` or `compaction`; then the
/// replayed system message plus every non-system message, estimated.
pub fn estimate_projected_context_tokens(s: &Session, projection: &Projection) -> ContextEstimate {
    let estimate = estimate_context_tokens(&projection.messages);
    if let Some(k) = estimate.last_usage_index {
        let source = projection.entries.iter().find(|e| e.messages.contains(&k)).map(|e| e.entry);
        // `usageEntryId ? branch.findIndex(e => e.id === usageEntryId) : -1`
        let usage_at = source
            .and_then(|src| s.id(src).filter(|id| id.is_truthy()))
            .and_then(|id| projection.path.iter().position(|&i| s.id(i) == Some(id)));
        let invalidated_at = projection.path.iter().rposition(|&i| {
            let kind = s.entries[i].kind;
            kind == EntryType::ContextEdit || kind == EntryType::Compaction
        });
        let after = match (usage_at, invalidated_at) {
            (Some(u), Some(v)) => u > v,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if after {
            return estimate;
        }
    }
    let mut tokens = system::current_system_message(&projection.messages).map_or(0, |m| estimate_tokens(&m));
    tokens += projection.messages.iter().filter(|m| role(m) != "system").map(estimate_tokens).sum::<u64>();
    let t = tokens as f64;
    ContextEstimate { tokens: t, usage_tokens: 0.0, trailing_tokens: t, last_usage_index: None }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn estimates_follow_pi() {
        assert_eq!(estimate_tokens(&json!({"role":"user","content":"hello"})), 2);
        assert_eq!(
            estimate_tokens(&json!({"role":"user","content":[{"type":"image"},{"type":"text","text":"ab"}]})),
            1201
        );
        assert_eq!(
            estimate_tokens(&json!({"role":"assistant","content":[
                {"type":"thinking","thinking":"abcd"},
                {"type":"toolCall","name":"read","arguments":{"path":"a"}}]})),
            // 4 + 4 + len('{"path":"a"}') = 20 → 5
            5
        );
        assert_eq!(estimate_tokens(&json!({"role":"bashExecution","command":"ls","output":"x"})), 1);
        assert_eq!(
            estimate_tokens(&json!({"role":"system","content":"","sections":{"a":"abc","b":null},"toolsAdded":[]})),
            2
        );
        assert_eq!(estimate_tokens(&json!({"role":"other"})), 0);
    }

    #[test]
    fn context_estimate_uses_the_last_good_usage() {
        let msgs = vec![
            json!({"role":"user","content":"12345678"}),
            json!({"role":"assistant","content":[],"stopReason":"stop","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":0}}),
            json!({"role":"assistant","content":[],"stopReason":"error","usage":{"totalTokens":50}}),
            json!({"role":"user","content":"1234"}),
        ];
        let e = estimate_context_tokens(&msgs);
        assert_eq!((e.tokens, e.usage_tokens, e.trailing_tokens, e.last_usage_index), (4.0, 3.0, 1.0, Some(1)));
    }
}
