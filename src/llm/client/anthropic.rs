//! Anthropic Messages over HTTP: the request pi-ai 1.6.0 sends (`streamSimple` +
//! `buildParams` in `api/anthropic-messages.js`, for an API key) and its streamed reply
//! mapped into pi's assistant message the way pi-ai maps it.
//!
//! The conversation parts of the body (`system`, `messages`, `tools`) come from
//! [`crate::llm::wire::anthropic_request_with`]; this module adds `max_tokens`, `stream`,
//! `thinking` and `output_config`, and the `anthropic-beta` header (the SDK sends the body's
//! `betas` there). Not sent: the `message-threads` beta and `thread` (pi's server-side
//! continuation), `fallbacks`, `metadata`, `temperature`, OAuth identities.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::llm::catalog::TokenCounts;
use crate::llm::message::{clamp_max_tokens, finish_arguments, Draft};
use crate::llm::model::ModelInfo;
use crate::llm::provider::{Request, StreamEvent};
use crate::llm::sse::SseEvent;
use crate::llm::stream::{Attempt, Flow, StreamParser};
use crate::llm::wire::{anthropic_request_with, ModelRef, RequestOptions};

/// The output limit for an Anthropic model the catalog does not know (the API requires one).
pub const DEFAULT_MAX_TOKENS: u64 = 8192;

/// pi-ai's `DEFAULT_THINKING_BUDGETS` after `clampReasoning` (xhigh and max use high's).
fn thinking_budget(level: &str) -> u64 {
    match level {
        "minimal" => 1024,
        "low" => 2048,
        "medium" => 8192,
        _ => 16384,
    }
}

/// `mapThinkingLevelToEffort`.
fn effort(info: &ModelInfo, level: &str) -> String {
    if let Some(Some(mapped)) = info.level_value(level) {
        return mapped.to_string();
    }
    crate::llm::wire::default_effort(level).to_string()
}

/// The request body and the betas for the `anthropic-beta` header.
pub(crate) fn build(info: &ModelInfo, request: &Request, llm: &[Value]) -> (Value, Vec<&'static str>) {
    let level = info.effective_thinking_level(request.thinking_level.as_deref());
    let parts = anthropic_request_with(
        llm,
        &ModelRef { provider: info.provider.clone(), id: info.id.clone() },
        &RequestOptions { thinking_level: level.map(str::to_string) },
    );
    let thinking_disabled = info.reasoning && level.is_none() && info.level_value("off") != Some(None);
    let effort_messages = info.mid_convo_effort && !thinking_disabled;

    // `streamSimple`: the output limit fitted to the window, then room for a thinking budget.
    let model_max = info.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let requested = request.max_tokens.map_or(model_max, u64::from);
    let base = clamp_max_tokens(info.context_window, llm, requested);
    let (max_tokens, budget) = match level {
        Some(level) if info.reasoning && !info.adaptive_thinking => {
            let mut budget = thinking_budget(level);
            let adjusted = (base + budget).min(model_max);
            if adjusted <= budget {
                budget = budget.min(adjusted.saturating_sub(1024));
            }
            let max_tokens = clamp_max_tokens(info.context_window, llm, adjusted);
            (max_tokens, Some(budget.min(max_tokens.saturating_sub(1024))))
        }
        _ => (base, None),
    };

    let mut body = Map::new();
    let mut parts = match parts {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    body.insert("model".into(), parts.remove("model").unwrap_or_else(|| json!(info.id)));
    body.insert("messages".into(), parts.remove("messages").unwrap_or_else(|| json!([])));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = parts.remove("system") {
        body.insert("system".into(), system);
    }
    let mut inline_tools = false;
    if let Some(tools) = parts.remove("tools") {
        inline_tools = tools
            .as_array()
            .and_then(|t| t.last())
            .is_some_and(|t| t.get("name").and_then(Value::as_str) == Some("__pi_deferred_placeholder__"));
        body.insert("tools".into(), tools);
    }
    if thinking_disabled {
        body.insert("thinking".into(), json!({"type": "disabled"}));
    } else if effort_messages {
        body.insert(
            "thinking".into(),
            json!({"type": "adaptive", "display": "summarized", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}),
        );
        body.insert("output_config".into(), json!({"effort": "low"}));
    } else if let (true, Some(level)) = (info.reasoning, level) {
        if info.adaptive_thinking {
            body.insert("thinking".into(), json!({"type": "adaptive", "display": "summarized"}));
            body.insert("output_config".into(), json!({"effort": effort(info, level)}));
        } else {
            let budget = budget.filter(|b| *b > 0).unwrap_or(1024);
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}),
            );
        }
    }

    let mut betas = Vec::new();
    if info.reasoning && level.is_some() && !info.adaptive_thinking {
        betas.push("interleaved-thinking-2025-05-14");
    }
    if info.mid_convo_effort {
        betas.push("mid-conversation-output-config-2026-07-01");
        betas.push("thinking-binding-controls-2026-08-01");
    }
    if inline_tools {
        betas.push("inline-tools-2026-09-15");
    }
    (Value::Object(body), betas)
}

/// One open content block: where it is in `content`, and a tool call's argument text.
struct Open {
    index: usize,
    arguments: Option<String>,
}

/// The reply as it streams (pi-ai's `stream()` loop over Anthropic events).
pub(crate) struct AnthropicStream<'a> {
    info: &'a ModelInfo,
    draft: Draft,
    counts: TokenCounts,
    reasoning: Option<u64>,
    open: HashMap<u64, Open>,
    saw_start: bool,
    saw_stop: bool,
}

impl<'a> AnthropicStream<'a> {
    pub fn new(info: &'a ModelInfo) -> Self {
        AnthropicStream {
            info,
            draft: Draft::default(),
            counts: TokenCounts::default(),
            reasoning: None,
            open: HashMap::new(),
            saw_start: false,
            saw_stop: false,
        }
    }

    /// `usage` in the order pi writes Anthropic's: the counts, `totalTokens`, `cost`, then
    /// `cacheWrite1h` and `reasoning` (added later by pi-ai, so after `cost`).
    fn update_usage(&mut self) {
        let c = &self.counts;
        let total = c.input + c.output + c.cache_read + c.cache_write;
        let mut u = Map::new();
        u.insert("input".into(), json!(c.input));
        u.insert("output".into(), json!(c.output));
        u.insert("cacheRead".into(), json!(c.cache_read));
        u.insert("cacheWrite".into(), json!(c.cache_write));
        u.insert("totalTokens".into(), json!(total));
        u.insert("cost".into(), self.info.cost.calculate(c));
        u.insert("cacheWrite1h".into(), json!(c.cache_write_1h));
        if let Some(r) = self.reasoning {
            u.insert("reasoning".into(), json!(r));
        }
        self.draft.usage = Some(Value::Object(u));
    }

    fn block(&mut self, index: u64) -> Option<(&mut Map<String, Value>, &mut Option<String>)> {
        let open = self.open.get_mut(&index)?;
        let block = self.draft.content.get_mut(open.index)?.as_object_mut()?;
        Some((block, &mut open.arguments))
    }
}

fn n(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

fn s<'v>(v: &'v Value, k: &str) -> Option<&'v str> {
    v.get(k).and_then(Value::as_str)
}

/// `mapStopReason`: pi's stopReason, and an error message for the ones that are errors.
fn map_stop_reason(reason: &str, details: Option<&Value>) -> (&'static str, Option<String>) {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => ("stop", None),
        "max_tokens" => ("length", None),
        "tool_use" => ("toolUse", None),
        "refusal" => (
            "error",
            Some(
                details
                    .and_then(|d| s(d, "explanation"))
                    .filter(|e| !e.is_empty())
                    .unwrap_or("The model refused to complete the request")
                    .to_string(),
            ),
        ),
        "sensitive" => ("error", Some("Provider stopped with: sensitive".into())),
        other => ("error", Some(format!("Unhandled stop reason: {other}"))),
    }
}

/// Error types Anthropic reports that a retry can fix.
pub(crate) fn is_transient_error_type(t: &str) -> bool {
    matches!(t, "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error")
}

impl StreamParser for AnthropicStream<'_> {
    fn on_event(&mut self, ev: &SseEvent, events: &mut dyn FnMut(&StreamEvent)) -> Result<Flow, Attempt> {
        let name = ev.event.as_deref().unwrap_or("");
        if name == "error" {
            let parsed: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
            let error = parsed.get("error").unwrap_or(&parsed);
            let kind = s(error, "type").unwrap_or("");
            let message = s(error, "message").unwrap_or("");
            if is_transient_error_type(kind) {
                return Err(Attempt::transient(format!("{kind}: {message}"), None, false));
            }
            self.draft.stop_reason = Some("error");
            self.draft.error_message = Some(ev.data.clone());
            return Ok(Flow::Done);
        }
        if !matches!(
            name,
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
        ) {
            return Ok(Flow::Continue);
        }
        let e: Value = serde_json::from_str(&ev.data).map_err(|err| {
            Attempt::stream(format!("could not parse Anthropic event {name}: {err}; data={}", ev.data))
        })?;
        match s(&e, "type").unwrap_or(name) {
            "message_start" => {
                self.saw_start = true;
                let msg = e.get("message").unwrap_or(&Value::Null);
                self.draft.response_id = s(msg, "id").map(str::to_string);
                if let Some(model) = s(msg, "model").filter(|m| *m != self.info.id) {
                    self.draft.response_model = Some(model.to_string());
                }
                let u = msg.get("usage").unwrap_or(&Value::Null);
                self.counts = TokenCounts {
                    input: n(u, "input_tokens").unwrap_or(0),
                    output: n(u, "output_tokens").unwrap_or(0),
                    cache_read: n(u, "cache_read_input_tokens").unwrap_or(0),
                    cache_write: n(u, "cache_creation_input_tokens").unwrap_or(0),
                    cache_write_1h: u
                        .get("cache_creation")
                        .and_then(|c| n(c, "ephemeral_1h_input_tokens"))
                        .unwrap_or(0),
                };
                self.update_usage();
                if let Some(u) = &self.draft.usage {
                    events(&StreamEvent::Usage(u.clone()));
                }
            }
            "content_block_start" => {
                let index = n(&e, "index").unwrap_or(0);
                let cb = e.get("content_block").unwrap_or(&Value::Null);
                let (block, arguments) = match s(cb, "type") {
                    Some("text") => {
                        events(&StreamEvent::TextStart);
                        (json!({"type": "text", "text": s(cb, "text").unwrap_or("")}), None)
                    }
                    Some("thinking") => {
                        events(&StreamEvent::ThinkingStart);
                        (
                            json!({"type": "thinking", "thinking": s(cb, "thinking").unwrap_or(""),
                                   "thinkingSignature": s(cb, "signature").unwrap_or("")}),
                            None,
                        )
                    }
                    Some("redacted_thinking") => {
                        events(&StreamEvent::ThinkingStart);
                        (
                            json!({"type": "thinking", "thinking": "[Reasoning redacted]",
                                   "thinkingSignature": cb.get("data").cloned().unwrap_or(Value::Null), "redacted": true}),
                            None,
                        )
                    }
                    Some("tool_use") => {
                        let id = s(cb, "id").unwrap_or("").to_string();
                        let name = s(cb, "name").unwrap_or("").to_string();
                        events(&StreamEvent::ToolCallStart { id: id.clone(), name: name.clone() });
                        let input = cb.get("input").filter(|v| !v.is_null()).cloned().unwrap_or_else(|| json!({}));
                        (json!({"type": "toolCall", "id": id, "name": name, "arguments": input}), Some(String::new()))
                    }
                    _ => return Ok(Flow::Continue),
                };
                self.draft.content.push(block);
                self.open.insert(index, Open { index: self.draft.content.len() - 1, arguments });
            }
            "content_block_delta" => {
                let index = n(&e, "index").unwrap_or(0);
                let delta = e.get("delta").unwrap_or(&Value::Null);
                let Some((block, arguments)) = self.block(index) else {
                    return Ok(Flow::Continue);
                };
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("").to_string();
                match (s(delta, "type"), kind.as_str()) {
                    (Some("text_delta"), "text") => {
                        let t = s(delta, "text").unwrap_or("");
                        append(block, "text", t);
                        events(&StreamEvent::TextDelta(t.to_string()));
                    }
                    (Some("thinking_delta"), "thinking") => {
                        let t = s(delta, "thinking").unwrap_or("");
                        append(block, "thinking", t);
                        events(&StreamEvent::ThinkingDelta(t.to_string()));
                    }
                    (Some("signature_delta"), "thinking") => {
                        append(block, "thinkingSignature", s(delta, "signature").unwrap_or(""));
                    }
                    (Some("input_json_delta"), "toolCall") => {
                        if let Some(args) = arguments {
                            let piece = s(delta, "partial_json").unwrap_or("");
                            args.push_str(piece);
                            events(&StreamEvent::ToolCallDelta(piece.to_string()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = n(&e, "index").unwrap_or(0);
                if let Some((block, Some(args))) = self.block(index) {
                    let text = std::mem::take(args);
                    finish_arguments(block, &text);
                }
                self.open.remove(&index);
            }
            "message_delta" => {
                let delta = e.get("delta").unwrap_or(&Value::Null);
                if let Some(reason) = s(delta, "stop_reason") {
                    let (stop, error) = map_stop_reason(reason, delta.get("stop_details"));
                    self.draft.raw_stop_reason = Some(reason.to_string());
                    self.draft.stop_reason = Some(stop);
                    if error.is_some() {
                        self.draft.error_message = error;
                    }
                }
                if let Some(u) = e.get("usage").filter(|u| u.is_object()) {
                    let c = &mut self.counts;
                    c.input = n(u, "input_tokens").unwrap_or(c.input);
                    c.output = n(u, "output_tokens").unwrap_or(c.output);
                    c.cache_read = n(u, "cache_read_input_tokens").unwrap_or(c.cache_read);
                    c.cache_write = n(u, "cache_creation_input_tokens").unwrap_or(c.cache_write);
                    if let Some(h) = u.get("cache_creation").and_then(|c| n(c, "ephemeral_1h_input_tokens")) {
                        c.cache_write_1h = h;
                    }
                    if let Some(r) = u.get("output_tokens_details").and_then(|d| n(d, "thinking_tokens")) {
                        self.reasoning = Some(r);
                    }
                }
                self.update_usage();
                if let Some(u) = &self.draft.usage {
                    events(&StreamEvent::Usage(u.clone()));
                }
            }
            "message_stop" => {
                self.saw_stop = true;
                return Ok(Flow::Done);
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self: Box<Self>) -> Result<Draft, Attempt> {
        let draft = self.draft;
        if draft.stop_reason == Some("error") && draft.error_message.is_some() {
            return Ok(draft);
        }
        if self.saw_start && !self.saw_stop {
            return Err(Attempt::stream("the Anthropic stream ended before message_stop (cut off)".into()));
        }
        if draft.stop_reason.is_none() {
            return Err(Attempt::stream("the Anthropic stream ended without a stop reason".into()));
        }
        Ok(draft)
    }
}

fn append(block: &mut Map<String, Value>, key: &str, text: &str) {
    match block.get_mut(key) {
        Some(Value::String(s)) => s.push_str(text),
        _ => {
            block.insert(key.into(), json!(text));
        }
    }
}
