//! Provider request bodies built from `convertToLlm` output, exactly as pi-ai 1.6.0 builds
//! them (docs/pi-format.md §2.5).
//!
//! The input is pi's `convertToLlm` result for a projected path (roles `system`, `user`,
//! `assistant`, `toolResult`), which pi's agent loop hands to pi-ai as
//! `normalizeContext({messages})`. The output holds the parts of the request body that come
//! from the conversation:
//!
//! - [`anthropic_request`]: `{"model", "system"?, "messages", "tools"?}` of an Anthropic
//!   Messages request (`api/anthropic-messages.js`);
//! - [`openai_request`]: `{"model", "messages", "tools"?}` of an OpenAI Chat Completions
//!   request (`api/openai-completions.js`).
//!
//! The rest of the request (output limit, streaming, reasoning, headers) and the parsing
//! of the streamed reply are `llm::client`'s, per API.
//!
//! Both first run pi-ai's provider-independent steps (`transform`): the transcript is
//! collapsed into one leading system message unless the model takes later system messages,
//! errored and aborted assistant turns are dropped, orphaned tool calls get a
//! `No result provided` result, thinking is kept only when replayed to the model that wrote
//! it, and images are replaced by placeholders for text-only models.
//!
//! The history is sent as it is: a session without system messages (pi 0.73.1 and older
//! files) gets no `system` and no `tools`, where pi's agent would first append its current
//! prompt and tool set as a new system message (§7.5).
//!
//! **Not included**: request settings that depend on the model configuration and the call,
//! not on the conversation: `max_tokens` / `max_completion_tokens`, `stream`,
//! `stream_options`, `store`, `betas`, the top-level `thinking` / `output_config` (budget
//! or effort; the effort markers some Anthropic models take inside `messages` are included,
//! see [`RequestOptions`]),
//! `temperature`, `metadata`, `tool_choice`, `fallbacks`, Anthropic's `thread`, OpenAI's
//! `prompt_cache_key` and reasoning fields. Add at least `max_tokens` (Anthropic) and
//! `stream` before POSTing. Also not reproduced: OAuth-token requests (Claude Code
//! identity and tool names), `PI_CACHE_RETENTION=long` (`ttl: "1h"`), a session's
//! "strict tools over Claude's limits" memory, and per-model `compat` overrides of pi-ai's
//! catalog beyond Anthropic's own models (see `model`). pi's `sanitizeSurrogates` has
//! nothing to do here: a Rust string cannot hold a lone surrogate.

mod anthropic;
mod model;
mod openai;
pub mod responses;
mod schema;
mod transform;

#[cfg(test)]
mod tests;

pub(crate) use anthropic::default_effort;

use serde_json::Value;

use model::Target;

/// The model a request is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub id: String,
}

/// Call settings that change `messages` for some models.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestOptions {
    /// pi's thinking level for the reply being requested (`off`, `minimal`, …, `max`);
    /// `None` is `off`. Only Anthropic models with mid-conversation effort
    /// (`compat.supportsMidConvoEffort`) depend on it: their `messages` end with an effort
    /// marker.
    pub thinking_level: Option<String>,
}

/// Anthropic Messages request body parts (`model`, `system`, `messages`, `tools`), for a
/// reply requested with thinking off (which matters only for the models described at
/// [`RequestOptions`]).
/// Whether pi-ai's model takes images (`model.input.includes("image")`), as far as the wire
/// layer knows it: images are dropped from requests to a model that does not.
pub fn takes_images(model: &ModelRef) -> bool {
    model::Target::resolve(model, "openai-completions").images
}

pub fn anthropic_request(llm: &[Value], model: &ModelRef) -> Value {
    anthropic_request_with(llm, model, &RequestOptions::default())
}

/// [`anthropic_request`] for a given thinking level.
pub fn anthropic_request_with(llm: &[Value], model: &ModelRef, options: &RequestOptions) -> Value {
    let mut options = options.clone();
    if options.thinking_level.as_deref() == Some("off") {
        options.thinking_level = None;
    }
    let target = Target::resolve(model, "anthropic-messages");
    js_numbers(anthropic::request(llm, &target, &options))
}

/// OpenAI Chat Completions request body parts (`model`, `messages`, `tools`), as pi-ai
/// converts messages.
pub fn openai_request(llm: &[Value], model: &ModelRef) -> Value {
    openai_request_by(llm, model, ChatLayer::PiAi)
}

/// Whose Chat Completions layer converts the messages: pi-ai's, or `@openclaw/ai`'s (which
/// OpenClaw's agent uses in its place; docs/openclaw-format.md §5).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ChatLayer {
    PiAi,
    OpenClaw,
}

/// [`openai_request`] as `layer` converts the messages.
pub fn openai_request_by(llm: &[Value], model: &ModelRef, layer: ChatLayer) -> Value {
    let target = Target::resolve(model, "openai-completions");
    js_numbers(openai::request(llm, &target, layer))
}

/// A message's `role`, or "".
fn role(m: &Value) -> &str {
    str_field(m, "role").unwrap_or_default()
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A message's content blocks (none when the content is not an array).
fn content_blocks(m: &Value) -> &[Value] {
    m.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// `!x || x.trim().length === 0` for a string field: missing, `null`, or only JS
/// whitespace. (JS `trim` also strips U+FEFF and keeps U+0085, unlike Rust's.)
fn is_blank(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => js_trim_is_empty(s),
        Some(_) => false,
    }
}

/// `s.trim().length === 0` in JS.
fn js_trim_is_empty(s: &str) -> bool {
    s.chars().all(|c| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

/// Numbers as a JS engine holds them: `1.0` read from a session file is the number 1,
/// and pi sends it as `1`.
fn js_numbers(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => n.as_f64().map_or(Value::Number(n), crate::session::js::number),
        Value::Array(items) => Value::Array(items.into_iter().map(js_numbers).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, js_numbers(v))).collect()),
        other => other,
    }
}
