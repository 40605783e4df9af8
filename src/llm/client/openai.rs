//! OpenAI-compatible Chat Completions over HTTP (OpenAI, OpenRouter, Ollama, llama.cpp's
//! server, vLLM, LM Studio, …): the request pi-ai 1.6.0 sends (`streamSimple` +
//! `buildParams` in `api/openai-completions.js`) and its streamed chunks mapped into pi's
//! assistant message the way pi-ai maps them.
//!
//! The conversation parts (`messages`, `tools`) come from [`crate::llm::wire::openai_request`];
//! this module adds `stream`, `stream_options`, `store`, the output limit and the reasoning
//! fields, with pi-ai's `detectCompat` rules (by provider name and base URL) overridden by
//! the model's `compat` from `models.json`. Reasoning formats other than OpenAI's
//! `reasoning_effort`, OpenRouter's `reasoning` and DeepSeek's `thinking` (z.ai, Qwen chat
//! templates, Together, …) are not sent, nor are `prompt_cache_key`, sampling parameters or
//! OpenRouter's `reasoning_details` replay data.

use serde_json::{json, Map, Value};

use crate::llm::message::{clamp_max_tokens, finish_arguments, Draft};
use crate::llm::model::ModelInfo;
use crate::llm::provider::{Request, StreamEvent};
use crate::llm::sse::SseEvent;
use crate::llm::stream::{Attempt, Flow, StreamParser};
use crate::llm::wire::{openai_request, ModelRef};

/// The request quirks of an endpoint (the part of pi-ai's compat record pisces uses).
struct Quirks {
    store: bool,
    developer_role: bool,
    reasoning_effort: bool,
    usage_in_streaming: bool,
    max_tokens_field: String,
    thinking_format: String,
}

/// pi-ai's `detectCompat`, then the model's `compat` overrides (`getCompat`).
fn quirks(info: &ModelInfo) -> Quirks {
    let (p, base) = (info.provider.as_str(), info.base_url.as_str());
    let is_zai = matches!(p, "zai" | "zai-coding-cn") || base.contains("api.z.ai") || base.contains("open.bigmodel.cn");
    let is_together = p == "together" || base.contains("api.together.ai") || base.contains("api.together.xyz");
    let is_moonshot = matches!(p, "moonshotai" | "moonshotai-cn") || base.contains("api.moonshot.");
    let is_openrouter = p == "openrouter" || base.contains("openrouter.ai");
    let is_cf_workers = p == "cloudflare-workers-ai" || base.contains("api.cloudflare.com");
    let is_cf_gateway = p == "cloudflare-ai-gateway" || base.contains("gateway.ai.cloudflare.com");
    let is_nvidia = p == "nvidia" || base.contains("integrate.api.nvidia.com");
    let is_ant_ling = p == "ant-ling" || base.contains("api.ant-ling.com");
    let is_cerebras = p == "cerebras" || base.contains("cerebras.ai");
    let is_deepseek = p == "deepseek" || base.to_lowercase().contains("deepseek.com");
    let is_grok = p == "xai" || base.contains("api.x.ai");
    let is_chutes = base.contains("chutes.ai");
    let is_openai = p == "openai" || base.contains("api.openai.com");
    let non_standard = is_nvidia
        || is_cerebras
        || is_grok
        || is_together
        || is_chutes
        || is_deepseek
        || is_zai
        || is_moonshot
        || p == "opencode"
        || base.contains("opencode.ai")
        || is_cf_workers
        || is_cf_gateway
        || is_ant_ling;
    let use_max_tokens =
        is_chutes || is_deepseek || is_moonshot || is_cf_gateway || is_together || is_nvidia || is_ant_ling || is_zai;
    let format = if is_deepseek {
        "deepseek"
    } else if is_zai {
        "zai"
    } else if is_together {
        "together"
    } else if is_ant_ling {
        "ant-ling"
    } else if is_openrouter {
        "openrouter"
    } else {
        "openai"
    };
    let c = &info.compat;
    Quirks {
        store: c.supports_store.unwrap_or(!non_standard),
        developer_role: c.supports_developer_role.unwrap_or(is_openai),
        reasoning_effort: c.supports_reasoning_effort.unwrap_or(
            !is_grok && !is_zai && !is_moonshot && !is_together && !is_cf_gateway && !is_nvidia && !is_ant_ling,
        ),
        usage_in_streaming: c.supports_usage_in_streaming.unwrap_or(true),
        max_tokens_field: c
            .max_tokens_field
            .clone()
            .unwrap_or_else(|| if use_max_tokens { "max_tokens" } else { "max_completion_tokens" }.into()),
        thinking_format: c.thinking_format.clone().unwrap_or_else(|| format.into()),
    }
}

/// `model.thinkingLevelMap?.[level] ?? level`.
fn mapped(info: &ModelInfo, level: &str) -> String {
    match info.level_value(level) {
        Some(Some(v)) => v.to_string(),
        _ => level.to_string(),
    }
}

/// The request body.
pub(crate) fn build(info: &ModelInfo, request: &Request, llm: &[Value]) -> Value {
    let q = quirks(info);
    let parts = openai_request(llm, &ModelRef { provider: info.provider.clone(), id: info.id.clone() });
    let mut parts = match parts {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut body = Map::new();
    body.insert("model".into(), parts.remove("model").unwrap_or_else(|| json!(info.id)));
    let mut messages = parts.remove("messages").unwrap_or_else(|| json!([]));
    // The leading prompt's role, decided with what this module knows about the model
    // (`wire` knows the reasoning flag of its own catalog only).
    if let Some(first) = messages.get_mut(0).and_then(Value::as_object_mut) {
        if matches!(first.get("role").and_then(Value::as_str), Some("system" | "developer")) {
            let role = if info.reasoning && q.developer_role { "developer" } else { "system" };
            first.insert("role".into(), json!(role));
        }
    }
    body.insert("messages".into(), messages);
    body.insert("stream".into(), json!(true));
    if q.usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if q.store {
        body.insert("store".into(), json!(false));
    }
    if let Some(requested) = request.max_tokens.map(u64::from).or(info.max_tokens) {
        body.insert(q.max_tokens_field.clone(), json!(clamp_max_tokens(info.context_window, llm, requested)));
    }
    if let Some(tools) = parts.remove("tools") {
        body.insert("tools".into(), tools);
    }

    let level = info.effective_thinking_level(request.thinking_level.as_deref());
    let off = info.level_value("off");
    if info.reasoning {
        match q.thinking_format.as_str() {
            "openrouter" => match level {
                Some(l) => {
                    body.insert("reasoning".into(), json!({"effort": mapped(info, l)}));
                }
                None if off != Some(None) => {
                    body.insert("reasoning".into(), json!({"effort": off.flatten().unwrap_or("none")}));
                }
                None => {}
            },
            "deepseek" => {
                match level {
                    Some(_) => body.insert("thinking".into(), json!({"type": "enabled"})),
                    None if off != Some(None) => body.insert("thinking".into(), json!({"type": "disabled"})),
                    None => None,
                };
                if let (Some(l), true) = (level, q.reasoning_effort) {
                    body.insert("reasoning_effort".into(), json!(mapped(info, l)));
                }
            }
            "openai" if q.reasoning_effort => match level {
                Some(l) => {
                    body.insert("reasoning_effort".into(), json!(mapped(info, l)));
                }
                None => {
                    if let Some(Some(v)) = off {
                        body.insert("reasoning_effort".into(), json!(v));
                    }
                }
            },
            _ => {}
        }
    }
    Value::Object(body)
}

struct ToolState {
    stream_index: Option<u64>,
    id: String,
    content_index: usize,
    arguments: String,
}

/// The reply as it streams (pi-ai's loop over Chat Completions chunks).
pub(crate) struct OpenAiStream<'a> {
    info: &'a ModelInfo,
    draft: Draft,
    text: Option<usize>,
    thinking: Option<usize>,
    tools: Vec<ToolState>,
    has_finish_reason: bool,
}

impl<'a> OpenAiStream<'a> {
    pub fn new(info: &'a ModelInfo) -> Self {
        OpenAiStream {
            info,
            draft: Draft::default(),
            text: None,
            thinking: None,
            tools: Vec::new(),
            has_finish_reason: false,
        }
    }

    /// `parseChunkUsage`: cached prompt tokens are cache reads, the rest is input.
    fn usage(&self, u: &Value) -> Value {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64);
        let prompt = n(u.get("prompt_tokens")).unwrap_or(0);
        let details = u.get("prompt_tokens_details");
        let cache_read = n(details.and_then(|d| d.get("cached_tokens")))
            .or_else(|| n(u.get("prompt_cache_hit_tokens")))
            .or_else(|| n(u.get("cached_tokens")))
            .unwrap_or(0);
        let cache_write = n(details.and_then(|d| d.get("cache_write_tokens"))).unwrap_or(0);
        let input = prompt.saturating_sub(cache_read).saturating_sub(cache_write);
        let output = n(u.get("completion_tokens")).unwrap_or(0);
        let reasoning = n(u.get("completion_tokens_details").and_then(|d| d.get("reasoning_tokens")))
            .filter(|r| *r > 0)
            .or_else(|| n(u.get("reasoning_tokens")))
            .unwrap_or(0);
        let counts = crate::llm::catalog::TokenCounts { input, output, cache_read, cache_write, cache_write_1h: 0 };
        json!({
            "input": input,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "reasoning": reasoning,
            "totalTokens": input + output + cache_read + cache_write,
            "cost": self.info.cost.calculate(&counts),
        })
    }

    fn block(&mut self, i: usize) -> &mut Map<String, Value> {
        self.draft.content[i].as_object_mut().expect("content blocks are objects")
    }

    fn tool_call(&mut self, call: &Value, events: &mut dyn FnMut(&StreamEvent)) {
        let stream_index = call.get("index").and_then(Value::as_u64);
        let id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|s| !s.is_empty());
        let found = self
            .tools
            .iter()
            .position(|t| stream_index.is_some() && t.stream_index == stream_index)
            .or_else(|| id.and_then(|id| self.tools.iter().position(|t| t.id == id)));
        let t = match found {
            Some(t) => t,
            None => {
                let block =
                    json!({"type": "toolCall", "id": id.unwrap_or(""), "name": name.unwrap_or(""), "arguments": {}});
                self.draft.content.push(block);
                events(&StreamEvent::ToolCallStart { id: id.unwrap_or("").into(), name: name.unwrap_or("").into() });
                self.tools.push(ToolState {
                    stream_index,
                    id: id.unwrap_or("").into(),
                    content_index: self.draft.content.len() - 1,
                    arguments: String::new(),
                });
                self.tools.len() - 1
            }
        };
        let ci = self.tools[t].content_index;
        if self.tools[t].stream_index.is_none() {
            self.tools[t].stream_index = stream_index;
        }
        if let Some(id) = id {
            if self.tools[t].id.is_empty() {
                self.tools[t].id = id.to_string();
                self.block(ci).insert("id".into(), json!(id));
            }
        }
        if let Some(name) = name {
            if self.block(ci).get("name").and_then(Value::as_str) == Some("") {
                self.block(ci).insert("name".into(), json!(name));
            }
        }
        if let Some(args) = function.and_then(|f| f.get("arguments")).and_then(Value::as_str) {
            self.tools[t].arguments.push_str(args);
            if !args.is_empty() {
                events(&StreamEvent::ToolCallDelta(args.to_string()));
            }
        }
    }
}

/// `mapStopReason` for `finish_reason`.
fn map_finish_reason(reason: &str) -> (&'static str, Option<String>) {
    match reason {
        "stop" | "end" => ("stop", None),
        "length" => ("length", None),
        "function_call" | "tool_calls" => ("toolUse", None),
        other => ("error", Some(format!("Provider finish_reason: {other}"))),
    }
}

/// Whether an error reported inside a stream is worth retrying.
pub(crate) fn is_transient_text(text: &str) -> bool {
    let t = text.to_lowercase();
    if t.contains("quota") || t.contains("billing") {
        return false;
    }
    [
        "overloaded",
        "rate limit",
        "rate_limit",
        "too many requests",
        "server error",
        "server_error",
        "internal error",
        "internal_error",
        "service unavailable",
        "temporarily unavailable",
        "timeout",
        "timed out",
    ]
    .iter()
    .any(|p| t.contains(p))
}

impl StreamParser for OpenAiStream<'_> {
    fn on_event(&mut self, ev: &SseEvent, events: &mut dyn FnMut(&StreamEvent)) -> Result<Flow, Attempt> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| Attempt::stream(format!("could not parse a Chat Completions chunk: {e}; data={data}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message =
                error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_string);
            let code = error.get("code").map(|c| c.to_string()).unwrap_or_default();
            let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
            if is_transient_text(&format!("{message} {code} {kind}")) {
                return Err(Attempt::transient(message, None, false));
            }
            self.draft.stop_reason = Some("error");
            self.draft.error_message = Some(message);
            return Ok(Flow::Done);
        }
        if self.draft.response_id.is_none() {
            self.draft.response_id =
                chunk.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            if !model.is_empty() && model != self.info.id && self.draft.response_model.is_none() {
                self.draft.response_model = Some(model.to_string());
            }
        }
        let chunk_usage = chunk.get("usage").filter(|u| u.is_object());
        if let Some(u) = chunk_usage {
            let usage = self.usage(u);
            events(&StreamEvent::Usage(usage.clone()));
            self.draft.usage = Some(usage);
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
            return Ok(Flow::Continue);
        };
        if chunk_usage.is_none() {
            if let Some(u) = choice.get("usage").filter(|u| u.is_object()) {
                let usage = self.usage(u);
                events(&StreamEvent::Usage(usage.clone()));
                self.draft.usage = Some(usage);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            let (stop, error) = map_finish_reason(reason);
            self.draft.raw_stop_reason = Some(reason.to_string());
            self.draft.stop_reason = Some(stop);
            if error.is_some() {
                self.draft.error_message = error;
            }
            self.has_finish_reason = true;
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(Flow::Continue);
        };
        // Reasoning first: a proxy may send reasoning and answer in one delta, and the
        // thinking block goes before the text block.
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .into_iter()
            .find_map(|f| delta.get(f).and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| (f, s)));
        if let Some((field, text)) = reasoning {
            let i = match self.thinking {
                Some(i) => i,
                None => {
                    self.draft.content.push(json!({"type": "thinking", "thinking": "", "thinkingSignature": field}));
                    events(&StreamEvent::ThinkingStart);
                    self.thinking = Some(self.draft.content.len() - 1);
                    self.draft.content.len() - 1
                }
            };
            push_str(self.block(i), "thinking", text);
            events(&StreamEvent::ThinkingDelta(text.to_string()));
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            let i = match self.text {
                Some(i) => i,
                None => {
                    self.draft.content.push(json!({"type": "text", "text": ""}));
                    events(&StreamEvent::TextStart);
                    self.text = Some(self.draft.content.len() - 1);
                    self.draft.content.len() - 1
                }
            };
            push_str(self.block(i), "text", text);
            events(&StreamEvent::TextDelta(text.to_string()));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call(call, events);
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(mut self: Box<Self>) -> Result<Draft, Attempt> {
        for t in std::mem::take(&mut self.tools) {
            let block = self.draft.content[t.content_index].as_object_mut().expect("content blocks are objects");
            finish_arguments(block, &t.arguments);
        }
        if self.draft.stop_reason == Some("error") && self.draft.error_message.is_some() {
            return Ok(self.draft);
        }
        if !self.has_finish_reason {
            return Err(Attempt::stream("the stream ended without finish_reason (cut off)".into()));
        }
        Ok(self.draft)
    }
}

fn push_str(block: &mut Map<String, Value>, key: &str, text: &str) {
    if let Some(Value::String(s)) = block.get_mut(key) {
        s.push_str(text);
    }
}
