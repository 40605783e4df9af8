//! What both protocols share: the conversation as pi-ai receives it, the output limit
//! pi-ai asks for, and the assistant message in the shape pi writes (docs/pi-format.md §1.5).

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use super::model::ModelInfo;
use super::provider::{LlmError, ModelSpec, Request};
use crate::session::system;

/// Milliseconds since the epoch (`Date.now()`).
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// pi-ai's `normalizeContext({systemPrompt, messages, tools})`: the prompt and tools become
/// a leading system message `{role:"system", content, toolsAdded?, timestamp:0}` when either
/// is non-empty; `messages` follow unchanged.
pub fn llm_messages(request: &Request) -> Vec<Value> {
    let prompt = request.system.as_deref().unwrap_or("");
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    if !prompt.is_empty() || !request.tools.is_empty() {
        let mut m = Map::new();
        m.insert("role".into(), json!("system"));
        m.insert("content".into(), json!(prompt));
        if !request.tools.is_empty() {
            m.insert("toolsAdded".into(), Value::Array(request.tools.clone()));
        }
        m.insert("timestamp".into(), json!(0));
        out.push(Value::Object(m));
    }
    out.extend(request.messages.iter().cloned());
    out
}

/// Length in UTF-16 units (JS `string.length`).
fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

fn tokens(chars: usize) -> u64 {
    (chars as f64 / 3.5).ceil() as u64
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// pi-ai's `estimateMessageTokens` (3.5 characters per token, 4800 characters per image).
fn estimate_message(m: &Value) -> u64 {
    let content_chars = |c: Option<&Value>| -> usize {
        match c {
            Some(Value::String(s)) => js_len(s),
            Some(Value::Array(blocks)) => {
                blocks.iter().map(|b| if str_of(b, "type") == "text" { js_len(str_of(b, "text")) } else { 4800 }).sum()
            }
            _ => 0,
        }
    };
    match str_of(m, "role") {
        "system" => {
            let tools = |k: &str| match m.get(k).and_then(Value::as_array) {
                Some(t) if !t.is_empty() => tokens(js_len(&serde_json::to_string(t).unwrap_or_default())),
                _ => 0,
            };
            tokens(js_len(&system::system_message_text(m))) + tools("toolsAdded") + tools("toolsRemoved")
        }
        "user" | "toolResult" => tokens(content_chars(m.get("content"))),
        _ => {
            let chars = m
                .get("content")
                .and_then(Value::as_array)
                .map(|blocks| {
                    blocks
                        .iter()
                        .map(|b| match str_of(b, "type") {
                            "text" => js_len(str_of(b, "text")),
                            "thinking" => js_len(str_of(b, "thinking")),
                            _ => {
                                js_len(str_of(b, "name"))
                                    + b.get("arguments")
                                        .map_or(9, |a| js_len(&serde_json::to_string(a).unwrap_or_default()))
                            }
                        })
                        .sum()
                })
                .unwrap_or(0);
            tokens(chars)
        }
    }
}

fn usage_tokens(u: &Value) -> u64 {
    let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let total = n("totalTokens");
    let t = if total != 0.0 { total } else { n("input") + n("output") + n("cacheRead") + n("cacheWrite") };
    t.max(0.0) as u64
}

/// pi-ai's `estimateContextTokens`: the last usable assistant usage plus estimates of what
/// follows it, or the sum of all estimates.
pub fn estimate_context_tokens(messages: &[Value]) -> u64 {
    // JS: `Math.max(latest, message.timestamp)`, where a missing timestamp is NaN and
    // poisons every later comparison.
    let mut latest = f64::NEG_INFINITY;
    let mut usage_at: Option<(usize, u64)> = None;
    for (i, m) in messages.iter().enumerate() {
        let ts = m.get("timestamp").and_then(Value::as_f64).unwrap_or(f64::NAN);
        if str_of(m, "role") == "assistant" {
            let applies = ts >= latest;
            let stop = str_of(m, "stopReason");
            let tokens = m.get("usage").map_or(0, usage_tokens);
            if applies && stop != "aborted" && stop != "error" && tokens > 0 {
                usage_at = Some((i, tokens));
            }
        }
        latest = if latest.is_nan() || ts.is_nan() { f64::NAN } else { latest.max(ts) };
    }
    match usage_at {
        Some((i, tokens)) => tokens + messages[i + 1..].iter().map(estimate_message).sum::<u64>(),
        None => messages.iter().map(estimate_message).sum(),
    }
}

/// pi-ai's `clampMaxTokensToContext`: the output limit that leaves room for the input,
/// counted generously (15% or at least 4096 tokens spare; at most 32,768 tokens once the
/// window is nearly full); at least 1.
pub fn clamp_max_tokens(context_window: Option<u64>, messages: &[Value], max_tokens: u64) -> u64 {
    let Some(window) = context_window.filter(|w| *w > 0) else {
        return max_tokens.max(1);
    };
    let (window, input) = (window as i64, estimate_context_tokens(messages) as i64);
    let margin = 4096.max((input as f64 * 0.15).ceil() as i64);
    let mut room = window - input - margin;
    if room < 32768 {
        room = 32768.min(window - input - 4096);
    }
    (max_tokens as i64).min(room.max(1)) as u64
}

/// An assistant message being assembled from a stream.
#[derive(Debug, Default)]
pub(crate) struct Draft {
    pub content: Vec<Value>,
    /// pi's stopReason; `None` until the stream says.
    pub stop_reason: Option<&'static str>,
    pub raw_stop_reason: Option<String>,
    pub error_message: Option<String>,
    pub response_id: Option<String>,
    pub response_model: Option<String>,
    /// `usage` as the protocol shapes it (key order differs between the two).
    pub usage: Option<Value>,
}

/// Who asked, and when.
pub(crate) struct Meta<'a> {
    pub info: &'a ModelInfo,
    pub timestamp: u64,
    pub started: Instant,
    pub thinking_level: &'a str,
}

/// pi's usage before any count arrived: zeros, and a cost without `totalFromProvider`.
pub(crate) fn empty_usage() -> Value {
    json!({
        "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    })
}

/// The message in pi's written key order: `role, content, api, provider, model, usage,
/// stopReason, timestamp`, then `errorMessage, responseId, responseModel, rawStopReason,
/// durationMs, thinkingLevel`.
pub(crate) fn assemble(meta: &Meta, draft: Draft) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert("content".into(), Value::Array(draft.content));
    m.insert("api".into(), json!(meta.info.api.as_str()));
    m.insert("provider".into(), json!(meta.info.provider));
    m.insert("model".into(), json!(meta.info.id));
    m.insert("usage".into(), draft.usage.unwrap_or_else(empty_usage));
    m.insert("stopReason".into(), json!(draft.stop_reason.unwrap_or("error")));
    m.insert("timestamp".into(), json!(meta.timestamp));
    if let Some(e) = draft.error_message {
        m.insert("errorMessage".into(), json!(e));
    }
    if let Some(id) = draft.response_id {
        m.insert("responseId".into(), json!(id));
    }
    if let Some(model) = draft.response_model {
        m.insert("responseModel".into(), json!(model));
    }
    if let Some(raw) = draft.raw_stop_reason {
        m.insert("rawStopReason".into(), json!(raw));
    }
    m.insert("durationMs".into(), json!((meta.started.elapsed().as_secs_f64() * 1000.0).round() as u64));
    m.insert("thinkingLevel".into(), json!(meta.thinking_level));
    Value::Object(m)
}

/// The assistant message pi writes for a call that failed (docs/pi-format.md §7.5: errors are
/// persisted as `{content:[], stopReason:"error", errorMessage}`), for callers that record
/// failures the way pi does. `api` is [`ModelInfo::api`]`.as_str()`.
pub fn error_message(
    model: &ModelSpec,
    api: &str,
    error: &LlmError,
    thinking_level: Option<&str>,
    timestamp: u64,
    duration_ms: u64,
) -> Value {
    json!({
        "role": "assistant",
        "content": [],
        "api": api,
        "provider": model.provider,
        "model": model.id,
        "usage": empty_usage(),
        "stopReason": "error",
        "timestamp": timestamp,
        "errorMessage": error.to_string(),
        "durationMs": duration_ms,
        "thinkingLevel": thinking_level.unwrap_or("off"),
    })
}

/// Tool-call arguments at the end of a call (pi-ai's `parseToolCallArguments`): `{}` for
/// nothing, the object for valid JSON, else `{}` and the reason in `argumentsError`.
pub(crate) fn finish_arguments(block: &mut Map<String, Value>, text: &str) {
    if text.trim().is_empty() {
        block.insert("arguments".into(), json!({}));
        return;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => {
            block.insert("arguments".into(), v);
        }
        Ok(_) => {
            block.insert("arguments".into(), json!({}));
            block.insert(
                "argumentsError".into(),
                json!(format!("Tool arguments must be a JSON object\n\nReceived arguments:\n{text}")),
            );
        }
        Err(e) => {
            block.insert("arguments".into(), json!({}));
            block.insert("argumentsError".into(), json!(format!("{e}\n\nReceived arguments:\n{text}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_prompt_and_tools_lead() {
        let tool = json!({"name": "read", "description": "Read", "parameters": {"type": "object"}});
        let r = Request {
            system: Some("Be brief.".into()),
            messages: vec![json!({"role": "user", "content": "hi", "timestamp": 5})],
            tools: vec![tool.clone()],
            ..Request::default()
        };
        let m = llm_messages(&r);
        assert_eq!(m[0], json!({"role": "system", "content": "Be brief.", "toolsAdded": [tool], "timestamp": 0}));
        assert_eq!(m.len(), 2);
        assert_eq!(llm_messages(&Request::default()), Vec::<Value>::new());
    }

    #[test]
    fn estimates_use_the_last_usage() {
        let msgs = vec![
            json!({"role": "user", "content": "x".repeat(35), "timestamp": 1}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop",
                   "usage": {"input": 100, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 105}, "timestamp": 2}),
            json!({"role": "user", "content": [{"type": "text", "text": "abcdefg"}, {"type": "image", "data": "", "mimeType": "image/png"}], "timestamp": 3}),
        ];
        assert_eq!(estimate_context_tokens(&msgs), 105 + ((7.0f64 + 4800.0) / 3.5).ceil() as u64);
        let errored = {
            let mut m = msgs.clone();
            m[1]["stopReason"] = json!("error");
            m
        };
        assert_eq!(estimate_context_tokens(&errored), 10 + 1 + 1374);
    }

    #[test]
    fn clamp_like_pi() {
        let big = vec![json!({"role": "user", "content": "x".repeat(35_000), "timestamp": 1})]; // 10k tokens
        assert_eq!(clamp_max_tokens(Some(200_000), &big, 64_000), 64_000);
        assert_eq!(clamp_max_tokens(Some(16_384), &big, 4096), 2288);
        assert_eq!(clamp_max_tokens(Some(8_000), &big, 4096), 1);
        assert_eq!(clamp_max_tokens(None, &big, 4096), 4096);
    }

    #[test]
    fn arguments() {
        let mut b = Map::new();
        finish_arguments(&mut b, r#"{"path":"a"}"#);
        assert_eq!(b["arguments"], json!({"path": "a"}));
        let mut b = Map::new();
        finish_arguments(&mut b, "");
        assert_eq!(Value::Object(b), json!({"arguments": {}}));
        let mut b = Map::new();
        finish_arguments(&mut b, r#"{"path":"#);
        assert!(b["argumentsError"].as_str().unwrap().ends_with("Received arguments:\n{\"path\":"));
    }
}
