//! The OpenAI Chat Completions body parts, as pi-ai 1.6.0 builds them in
//! `api/openai-completions.js` (`buildParams`, `convertMessages`, `convertTools`).
//!
//! pi-ai resolves a `compat` record per model (`detectCompat` from the provider and base URL,
//! overridden by the catalog's or `models.json`'s `compat`). We use what `detectCompat` gives
//! a model from its provider name alone, which is what a `models.json` model without a
//! `compat` record gets: no strict tools, no grammar tools, no mid-conversation system
//! messages, none of the `requires*` workarounds except DeepSeek's `reasoning_content`,
//! the `developer` role only on provider `openai`, Anthropic-style cache markers only for
//! `openrouter` models named `anthropic/…`. Catalog models with their own `compat` may differ.

use serde_json::{json, Map, Value};

use super::model::Target;
use super::transform::{resolve_transcript, transform_messages};
use super::{content_blocks, is_blank, js_trim_is_empty, role, str_field, ChatLayer};
use crate::session::js::stringify as js_stringify;
use crate::session::{js, system};

/// The `compat` fields of `detectCompat` that shape `messages` and `tools`.
struct Compat {
    layer: ChatLayer,
    supports_developer_role: bool,
    requires_reasoning_content: bool,
    anthropic_cache_control: bool,
}

impl Compat {
    fn detect(target: &Target, layer: ChatLayer) -> Compat {
        Compat {
            layer,
            // "The developer role is OpenAI's. Other hosts' chat templates often reject it."
            supports_developer_role: target.provider == "openai",
            requires_reasoning_content: target.provider == "deepseek",
            anthropic_cache_control: target.provider == "openrouter" && target.id.starts_with("anthropic/"),
        }
    }
}

/// The raw reasoning fields an assistant's thinking may be replayed in
/// (`OPENAI_COMPLETIONS_REASONING_FIELDS`); the thinking block's signature names the field.
const REASONING_FIELDS: &[&str] = &["reasoning", "reasoning_content", "reasoning_text"];

/// `{"model", "messages", "tools"?}`, mirroring `buildParams()`.
pub(super) fn request(llm: &[Value], target: &Target, layer: ChatLayer) -> Value {
    let compat = Compat::detect(target, layer);
    // `convertMessages` collapses the transcript (no compat here takes later system
    // messages); the request tools are then the replayed tool list
    // (`resolveTranscriptTools(…, "none")`).
    let context = resolve_transcript(llm, false);
    let mut messages = convert_messages(&context, target, &compat);
    let mut tools = convert_tools(&system::current_tools(&context));
    if compat.anthropic_cache_control {
        apply_anthropic_cache_control(&mut messages, &mut tools);
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(target.id.clone()));
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

/// `shortHash` (`utils/hash.js`): two 32-bit multiplicative hashes over UTF-16 units, in
/// base 36.
fn short_hash(s: &str) -> String {
    let (mut h1, mut h2): (u32, u32) = (0xdeadbeef, 0x41c6ce57);
    for ch in s.encode_utf16() {
        h1 = (h1 ^ u32::from(ch)).wrapping_mul(2654435761);
        h2 = (h2 ^ u32::from(ch)).wrapping_mul(1597334677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2246822507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3266489909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2246822507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3266489909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(n % 36, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

/// `[^a-zA-Z0-9_-]` → `_`, per UTF-16 unit as the JS regex does.
fn sanitize_id(s: &str) -> String {
    s.encode_utf16()
        .map(|u| match char::from_u32(u32::from(u)) {
            Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => c,
            _ => '_',
        })
        .collect()
}

/// The `normalizeToolCallId` inside `convertMessages`: OpenAI Responses ids
/// (`call_id|item_id`, 400+ chars) are cut to Chat Completions' 40; ids on provider
/// `openai` are truncated to 40.
fn normalize_tool_call_id(id: &str, target: &Target) -> String {
    if let Some((call, item)) = id.split_once('|') {
        let (call_id, item_id) = (sanitize_id(call), sanitize_id(item));
        let combined = if item_id.is_empty() { call_id.clone() } else { format!("{call_id}_{item_id}") };
        if combined.len() <= 40 {
            return combined;
        }
        let hash: String = short_hash(id).chars().take(8).collect();
        let prefix: String = call_id.chars().take(40usize.saturating_sub(hash.len() + 1).max(1)).collect();
        return format!("{prefix}_{hash}");
    }
    if target.provider == "openai" && id.encode_utf16().count() > 40 {
        return String::from_utf16_lossy(&id.encode_utf16().take(40).collect::<Vec<_>>());
    }
    id.to_string()
}

/// An image block.
fn is_image(block: &Value) -> bool {
    str_field(block, "type") == Some("image")
}

/// A block whose `data` is not blank (`@openclaw/ai`'s `hasMediaPayload`).
fn has_bytes(block: &Value) -> bool {
    str_field(block, "data").is_some_and(|d| !js_trim_is_empty(d))
}

/// The role a user or developer message goes in.
fn user_role(msg: &Value, compat: &Compat) -> &'static str {
    if role(msg) == "developer" && compat.supports_developer_role {
        "developer"
    } else {
        "user"
    }
}

/// `data:<mime>;base64,<data>` image part.
fn image_url(block: &Value) -> Value {
    let url =
        format!("data:{};base64,{}", js::to_js_string(block.get("mimeType")), js::to_js_string(block.get("data")));
    json!({"type": "image_url", "image_url": {"url": url}})
}

/// `convertMessages(model, context, compat)`.
fn convert_messages(context: &[Value], target: &Target, compat: &Compat) -> Vec<Value> {
    let normalize = |id: &str| normalize_tool_call_id(id, target);
    let transformed = transform_messages(context, target, Some(&normalize));
    let instruction_role = if target.reasoning && compat.supports_developer_role { "developer" } else { "system" };
    let mut params = Vec::new();

    let mut i = 0;
    while i < transformed.len() {
        let msg = &transformed[i];
        match role(msg) {
            "system" => {
                // Only the leading message is left after collapsing; a later one (none here)
                // would be sent as an update.
                let text = if i == 0 { system::system_message_text(msg) } else { system::render_update(msg) };
                if !text.is_empty() {
                    params.push(json!({"role": instruction_role, "content": text}));
                }
            }
            // (A `developer` message is oh-my-pi's: its OpenAI provider sends it in that role
            // where the endpoint has one, else as the user's.)
            "user" | "developer" => match msg.get("content") {
                Some(Value::String(s)) => params.push(json!({"role": user_role(msg, compat), "content": s})),
                _ => {
                    // pi-ai drops empty text parts (by length, not trimmed); `@openclaw/ai`
                    // keeps them.
                    let content: Vec<Value> = content_blocks(msg)
                        .iter()
                        .filter(|b| {
                            compat.layer == ChatLayer::OpenClaw
                                || str_field(b, "type") != Some("text")
                                || str_field(b, "text") != Some("")
                        })
                        .map(|b| {
                            if str_field(b, "type") == Some("text") {
                                json!({"type": "text", "text": b.get("text").cloned().unwrap_or(Value::Null)})
                            } else {
                                image_url(b)
                            }
                        })
                        .collect();
                    if !content.is_empty() {
                        params.push(json!({"role": user_role(msg, compat), "content": content}));
                    }
                }
            },
            "assistant" => {
                if let Some(m) = assistant_message(msg, target, compat) {
                    params.push(m);
                }
            }
            "toolResult" => {
                let mut images = Vec::new();
                while i < transformed.len() && role(&transformed[i]) == "toolResult" {
                    let tool_msg = &transformed[i];
                    let blocks = content_blocks(tool_msg);
                    // `@openclaw/ai` keeps only the texts that are non-empty strings, and
                    // counts an image only with its bytes (`isImageWithMediaPayload`).
                    let openclaw = compat.layer == ChatLayer::OpenClaw;
                    let texts = blocks.iter().filter(|b| str_field(b, "type") == Some("text"));
                    let text: Vec<String> = if openclaw {
                        texts
                            .filter_map(|b| str_field(b, "text"))
                            .filter(|t| !t.is_empty())
                            .map(str::to_string)
                            .collect()
                    } else {
                        texts
                            .map(|b| match b.get("text") {
                                None | Some(Value::Null) => String::new(),
                                t => js::to_js_string(t),
                            })
                            .collect()
                    };
                    let text = text.join("\n");
                    let is_image = |b: &Value| is_image(b) && (!openclaw || has_bytes(b));
                    let no_output = if openclaw { "(no output)" } else { "(no tool output)" };
                    let has_images = blocks.iter().any(is_image);
                    // A tool message always carries text.
                    let text = if !js_trim_is_empty(&text) {
                        text
                    } else if has_images {
                        "(see attached image)".to_string()
                    } else {
                        no_output.to_string()
                    };
                    let mut tool = Map::new();
                    tool.insert("role".into(), "tool".into());
                    tool.insert("content".into(), Value::String(text));
                    if let Some(id) = tool_msg.get("toolCallId") {
                        tool.insert("tool_call_id".into(), id.clone());
                    }
                    params.push(Value::Object(tool));
                    if has_images && target.images {
                        images.extend(blocks.iter().filter(|b| is_image(b)).map(image_url));
                    }
                    i += 1;
                }
                // Tool messages are text only: their images follow in one user message.
                if !images.is_empty() {
                    let mut content = vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
                    content.append(&mut images);
                    params.push(json!({"role": "user", "content": content}));
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    params
}

/// One assistant message: text joined into a string, thinking replayed only through a
/// reasoning field its signature names (or `reasoning_details`), tool calls with JSON-string
/// arguments; `None` when it has neither content nor tool calls.
fn assistant_message(msg: &Value, target: &Target, compat: &Compat) -> Option<Value> {
    let blocks = content_blocks(msg);
    let of_type = |t: &'static str| blocks.iter().filter(move |b| str_field(b, "type") == Some(t));
    // pi-ai joins the texts with nothing, `@openclaw/ai` with a newline.
    let separator = if compat.layer == ChatLayer::OpenClaw { "\n" } else { "" };
    let text = of_type("text")
        .filter(|b| !is_blank(b.get("text")))
        .map(|b| js::to_js_string(b.get("text")))
        .collect::<Vec<_>>()
        .join(separator);
    let thinking: Vec<&Value> = of_type("thinking").collect();
    let tool_calls: Vec<&Value> = of_type("toolCall").collect();

    let signed_details = thinking.iter().find_map(|b| reasoning_details(b.get("thinkingSignature")));
    let legacy_details: Vec<Value> =
        tool_calls.iter().filter_map(|c| legacy_encrypted_detail(c.get("thoughtSignature"))).collect();
    let preserved = signed_details.or((!legacy_details.is_empty()).then_some(legacy_details));

    let mut out = Map::new();
    out.insert("role".into(), "assistant".into());
    out.insert("content".into(), Value::Null);
    if !text.is_empty() {
        out.insert("content".into(), Value::String(text));
    }
    let non_empty: Vec<&&Value> = thinking.iter().filter(|b| !is_blank(b.get("thinking"))).collect();
    if let (Some(first), None) = (non_empty.first(), &preserved) {
        let mut signature = str_field(first, "thinkingSignature");
        if target.provider == "opencode-go" && signature == Some("reasoning") {
            signature = Some("reasoning_content");
        }
        if let Some(field) = signature.filter(|s| REASONING_FIELDS.contains(s)) {
            let joined: Vec<String> = non_empty.iter().map(|b| js::to_js_string(b.get("thinking"))).collect();
            out.insert(field.into(), Value::String(joined.join("\n")));
        }
    }
    if !tool_calls.is_empty() {
        let calls: Vec<Value> = tool_calls
            .iter()
            .map(|c| {
                // Missing fields stay missing, as `undefined` does in `JSON.stringify`.
                let mut function = Map::new();
                if let Some(name) = c.get("name") {
                    function.insert("name".into(), name.clone());
                }
                if let Some(args) = c.get("arguments") {
                    function.insert("arguments".into(), Value::String(js_stringify(args)));
                }
                let mut call = Map::new();
                if let Some(id) = c.get("id") {
                    call.insert("id".into(), id.clone());
                }
                call.insert("type".into(), "function".into());
                call.insert("function".into(), Value::Object(function));
                Value::Object(call)
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(details) = preserved {
        out.insert("reasoning_details".into(), Value::Array(details));
    }
    if compat.requires_reasoning_content && target.reasoning && !out.contains_key("reasoning_content") {
        out.insert("reasoning_content".into(), "".into());
    }
    // Providers reject assistant messages with neither content nor tool calls.
    let has_content = match out.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        _ => false,
    };
    (has_content || out.contains_key("tool_calls")).then_some(Value::Object(out))
}

/// `parseOpenAIReasoningDetails`: a thinking signature holding a JSON array of OpenRouter
/// style reasoning details.
fn reasoning_details(signature: Option<&Value>) -> Option<Vec<Value>> {
    let parsed: Value = serde_json::from_str(signature?.as_str().filter(|s| !s.is_empty())?).ok()?;
    let details = parsed.as_array()?;
    (!details.is_empty() && details.iter().all(is_reasoning_detail)).then(|| details.clone())
}

/// `parseLegacyEncryptedReasoningDetail`: one encrypted detail kept in a tool call's
/// `thoughtSignature`.
fn legacy_encrypted_detail(signature: Option<&Value>) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature?.as_str().filter(|s| !s.is_empty())?).ok()?;
    let ok = is_reasoning_detail(&parsed)
        && str_field(&parsed, "type") == Some("reasoning.encrypted")
        && str_field(&parsed, "id").is_some_and(|id| !id.is_empty())
        && str_field(&parsed, "data").is_some_and(|d| !d.is_empty());
    ok.then_some(parsed)
}

/// `isOpenAIReasoningDetail`.
fn is_reasoning_detail(detail: &Value) -> bool {
    let Value::Object(d) = detail else {
        return false;
    };
    let common = matches!(d.get("id"), None | Some(Value::Null) | Some(Value::String(_)))
        && matches!(d.get("format"), None | Some(Value::String(_)))
        && matches!(d.get("index"), None | Some(Value::Number(_)));
    let is_str = |k: &str| matches!(d.get(k), Some(Value::String(_)));
    common
        && match d.get("type").and_then(Value::as_str) {
            Some("reasoning.summary") => is_str("summary"),
            Some("reasoning.encrypted") => is_str("data"),
            Some("reasoning.text") => {
                is_str("text") && matches!(d.get("signature"), None | Some(Value::Null) | Some(Value::String(_)))
            }
            _ => false,
        }
}

/// `convertTools(tools, compat)` for a compat without strict mode or grammar tools.
fn convert_tools(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            let mut function = Map::new();
            for key in ["name", "description"] {
                if let Some(v) = tool.get(key) {
                    function.insert(key.into(), v.clone());
                }
            }
            if let Some(p) = tool.get("parameters") {
                function.insert("parameters".into(), p.clone());
            }
            json!({"type": "function", "function": function})
        })
        .collect()
}

/// `applyAnthropicCacheControl`: breakpoints on the first system message's text, the last
/// tool and the last conversation message's text.
fn apply_anthropic_cache_control(messages: &mut [Value], tools: &mut [Value]) {
    let cc = json!({"type": "ephemeral"});
    if let Some(m) = messages.iter_mut().find(|m| matches!(role(m), "system" | "developer")) {
        add_cache_control_to_text(m, &cc);
    }
    if let Some(Value::Object(last)) = tools.last_mut() {
        last.insert("cache_control".into(), cc.clone());
    }
    for m in messages.iter_mut().rev() {
        if matches!(role(m), "user" | "assistant" | "tool") && add_cache_control_to_text(m, &cc) {
            break;
        }
    }
}

/// `addCacheControlToTextContent`: string content becomes a marked text part; in an array
/// the last text part is marked.
fn add_cache_control_to_text(message: &mut Value, cc: &Value) -> bool {
    let Some(content) = message.get_mut("content") else {
        return false;
    };
    match content {
        Value::String(s) if s.is_empty() => false,
        Value::String(s) => {
            let text = std::mem::take(s);
            *content = json!([{"type": "text", "text": text, "cache_control": cc}]);
            true
        }
        Value::Array(parts) => match parts.iter_mut().rev().find(|p| str_field(p, "type") == Some("text")) {
            Some(Value::Object(part)) => {
                part.insert("cache_control".into(), cc.clone());
                true
            }
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hash_matches_pi() {
        // Values printed by pi-ai 1.6.0's `shortHash` (utils/hash.js) under Node 22.
        assert_eq!(short_hash("abc|def"), "jqkpow1wkomrp");
    }

    #[test]
    fn responses_ids_are_cut_to_40_chars_with_a_hash() {
        let target =
            Target::resolve(&super::super::ModelRef { provider: "x".into(), id: "y".into() }, "openai-completions");
        let id = format!("call_{}|fc_{}é😀", "x".repeat(30), "y".repeat(100));
        assert_eq!(normalize_tool_call_id(&id, &target), format!("call_{}_n6dmtx17", "x".repeat(26)));
        assert_eq!(normalize_tool_call_id("a|b", &target), "a_b");
        assert_eq!(normalize_tool_call_id("toolu_01", &target), "toolu_01");
    }
}
