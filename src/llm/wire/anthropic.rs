//! The Anthropic Messages body parts, as pi-ai 1.6.0 builds them in
//! `api/anthropic-messages.js` (`stream`, `buildParams`, `convertMessages`, `convertTools`),
//! for an API key (not an OAuth token, which adds Claude Code's identity and renames tools)
//! and the default cache retention ("short": `cache_control: {type: "ephemeral"}`; pi sends
//! `ttl: "1h"` only with `PI_CACHE_RETENTION=long`).

use serde_json::{json, Map, Value};

use super::model::Target;
use super::transform::{
    initial_system_message, resolve_transcript, split_error_tool_result_images, transform_messages,
};
use super::{content_blocks, is_blank, role, str_field, RequestOptions};
use crate::session::{js, system};

/// `DEFERRED_TOOL_PLACEHOLDER`: declared after the initial tools whenever tool changes are
/// sent inline, so the first change does not invalidate the prompt cache.
fn deferred_tool_placeholder() -> Value {
    json!({
        "name": "__pi_deferred_placeholder__",
        "description": "Reserved placeholder. Never available. Never call this.",
        "input_schema": {"type": "object", "properties": {}, "required": []},
        "defer_loading": true,
    })
}

fn cache_control() -> Value {
    json!({"type": "ephemeral"})
}

/// `normalizeToolCallId`: Anthropic ids must match `^[a-zA-Z0-9_-]+$`, at most 64 chars.
/// (JS slices UTF-16 units; after the replacement every unit is ASCII, so chars agree.)
fn normalize_tool_call_id(id: &str) -> String {
    let mapped = id.encode_utf16().map(|u| match char::from_u32(u32::from(u)) {
        Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => c,
        _ => '_',
    });
    mapped.take(64).collect()
}

/// `{"model", "system"?, "messages", "tools"?}`, mirroring `stream()` + `buildParams()`.
pub(super) fn request(llm: &[Value], target: &Target, options: &RequestOptions) -> Value {
    // `stream`: the transcript is collapsed unless the model takes later system messages.
    let context = resolve_transcript(llm, target.mid_convo_system);

    // `buildParams`.
    let initial = initial_system_message(&context);
    let initial_text = initial.map(system::system_message_text).unwrap_or_default();
    let transformed = transform_messages(&context, target, Some(&normalize_tool_call_id));
    let conversation = if initial.is_some() { &transformed[1..] } else { &transformed[..] };

    let initial_tools: Vec<Value> =
        initial.and_then(|m| m.get("toolsAdded")).and_then(Value::as_array).cloned().unwrap_or_default();
    // Tool changes go inline (`tool_addition` / `tool_removal`) only when the first system
    // message declares tools to anchor the cached request-level list.
    let native_tool_changes = target.mid_convo_system && target.mid_convo_tools && !initial_tools.is_empty();
    // Effort markers are left out while thinking is disabled: the effort cannot change
    // then. A model whose thinkingLevelMap sends "off" as `null` cannot disable thinking.
    let thinking_disabled =
        target.reasoning && options.thinking_level.is_none() && target.thinking_level("off") != Some(None);
    let effort_messages = target.mid_convo_effort && !thinking_disabled;

    let converted = convert_messages(
        conversation,
        effort_messages.then_some(target.provider.as_str()),
        native_tool_changes.then_some(target),
    );
    let messages = if effort_messages {
        insert_thinking_level_messages(converted, &active_effort(target, options))
    } else {
        converted.messages
    };

    let mut body = Map::new();
    body.insert("model".into(), Value::String(target.id.clone()));
    if !initial_text.is_empty() {
        body.insert("system".into(), json!([{"type": "text", "text": initial_text, "cache_control": cache_control()}]));
    }
    body.insert("messages".into(), Value::Array(messages));
    let tools = if native_tool_changes {
        let mut tools = convert_tools(&initial_tools, target, true);
        tools.push(deferred_tool_placeholder());
        tools
    } else {
        convert_tools(&system::current_tools(&context), target, true)
    };
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

/// The effort `streamSimple` passes for the thinking level (`mapThinkingLevelToEffort`),
/// or `"high"` when reasoning is off (`options?.effort ?? "high"`).
fn active_effort(target: &Target, options: &RequestOptions) -> String {
    let Some(level) = options.thinking_level.as_deref() else {
        return "high".into();
    };
    if let Some(Some(mapped)) = target.thinking_level(level) {
        return mapped.into();
    }
    default_effort(level).into()
}

/// `mapThinkingLevelToEffort` for a model whose catalog row maps no level to an effort.
pub(crate) fn default_effort(level: &str) -> &'static str {
    match level {
        "minimal" | "low" => "low",
        "medium" => "medium",
        _ => "high",
    }
}

struct Converted {
    messages: Vec<Value>,
    /// Index in `messages` → the effort the assistant message there was produced with.
    assistant_levels: Vec<(usize, String)>,
}

/// `convertContentBlocks`: text-only content as one string (blocks joined by `\n`), else
/// text and image blocks, with a placeholder text first when there is no text.
fn convert_content_blocks(content: &[Value]) -> Value {
    let has_images = content.iter().any(|c| str_field(c, "type") == Some("image"));
    if !has_images {
        // `Array.join` writes `undefined`/`null` as "".
        let texts: Vec<String> = content
            .iter()
            .map(|c| match c.get("text") {
                None | Some(Value::Null) => String::new(),
                t => js::to_js_string(t),
            })
            .collect();
        return Value::String(texts.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|b| if str_field(b, "type") == Some("text") { text_block(b.get("text")) } else { image_block(b) })
        .collect();
    if !blocks.iter().any(|b| str_field(b, "type") == Some("text")) {
        blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(blocks)
}

fn text_block(text: Option<&Value>) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "text".into());
    if let Some(t) = text {
        b.insert("text".into(), t.clone());
    }
    Value::Object(b)
}

/// `convertImageBlock`. pi treats every non-text block of user content as an image.
fn image_block(image: &Value) -> Value {
    let mut source = Map::new();
    source.insert("type".into(), "base64".into());
    if let Some(m) = image.get("mimeType") {
        source.insert("media_type".into(), m.clone());
    }
    if let Some(d) = image.get("data") {
        source.insert("data".into(), d.clone());
    }
    json!({"type": "image", "source": source})
}

/// `convertToolResult`.
fn tool_result_block(msg: &Value, content: &[Value]) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "tool_result".into());
    if let Some(id) = msg.get("toolCallId") {
        b.insert("tool_use_id".into(), id.clone());
    }
    b.insert("content".into(), convert_content_blocks(content));
    if let Some(e) = msg.get("isError") {
        b.insert("is_error".into(), e.clone());
    }
    Value::Object(b)
}

/// `convertMessages(transformed, isOAuth=false, cacheControl, allowEmptySignature=false,
/// managedProvider, convertToolDefinitions)`.
fn convert_messages(messages: &[Value], managed_provider: Option<&str>, native_tools: Option<&Target>) -> Converted {
    let mut params: Vec<Value> = Vec::new();
    let mut assistant_levels = Vec::new();
    // Later system messages wait for the next assistant message that is sent (or the end):
    // Anthropic wants tool_result blocks right after their tool_use, and an update must not
    // land before a user message that an empty assistant would otherwise follow (#11091).
    let mut pending_system: Vec<Value> = Vec::new();

    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        match role(msg) {
            "system" => {
                // Only reached for models that take later system messages natively.
                let text = system::render_update(msg);
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                if let Some(target) = native_tools {
                    let added: Vec<Value> =
                        msg.get("toolsAdded").and_then(Value::as_array).cloned().unwrap_or_default();
                    let redefined: Vec<&str> = added.iter().filter_map(|t| str_field(t, "name")).collect();
                    for tool in msg.get("toolsRemoved").and_then(Value::as_array).into_iter().flatten() {
                        // A new definition under the same name replaces the old one.
                        if str_field(tool, "name").is_some_and(|n| redefined.contains(&n)) {
                            continue;
                        }
                        let name = tool.get("name").cloned().unwrap_or(Value::Null);
                        blocks.push(json!({"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}}));
                    }
                    for definition in convert_tools(&added, target, false) {
                        blocks.push(json!({"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}));
                    }
                }
                if !blocks.is_empty() {
                    pending_system.push(json!({"role": "system", "content": blocks}));
                }
            }
            // (A `developer` message is oh-my-pi's: its Anthropic provider sends it as the user's.)
            "user" | "developer" => match msg.get("content") {
                Some(Value::String(s)) => {
                    if !is_blank(msg.get("content")) {
                        params.push(json!({"role": "user", "content": s}));
                    }
                }
                _ => {
                    let blocks: Vec<Value> = content_blocks(msg)
                        .iter()
                        .filter(|b| str_field(b, "type") != Some("text") || !is_blank(b.get("text")))
                        .map(|b| {
                            if str_field(b, "type") == Some("text") {
                                text_block(b.get("text"))
                            } else {
                                image_block(b)
                            }
                        })
                        .collect();
                    if !blocks.is_empty() {
                        params.push(json!({"role": "user", "content": blocks}));
                    }
                }
            },
            "assistant" => {
                let blocks = assistant_blocks(msg);
                if !blocks.is_empty() {
                    params.append(&mut pending_system);
                    let index = params.len();
                    params.push(json!({"role": "assistant", "content": blocks}));
                    if let Some(provider) = managed_provider {
                        let level = str_field(msg, "providerThinkingLevel");
                        if str_field(msg, "api") == Some("anthropic-messages")
                            && str_field(msg, "provider") == Some(provider)
                            && matches!(level, Some("low" | "medium" | "high" | "xhigh" | "max"))
                        {
                            assistant_levels.push((index, level.unwrap_or_default().to_string()));
                        }
                    }
                }
            }
            "toolResult" => {
                // Consecutive results go in one user message. Anthropic rejects images in
                // error results, so those follow all results of the turn (#10794).
                let mut results = Vec::new();
                let mut error_images = Vec::new();
                while i < messages.len() && role(&messages[i]) == "toolResult" {
                    let tool_msg = &messages[i];
                    match split_error_tool_result_images(tool_msg) {
                        Some((content, caption, images)) => {
                            results.push(tool_result_block(tool_msg, &content));
                            error_images.push(json!({"type": "text", "text": caption}));
                            error_images.extend(images.iter().map(image_block));
                        }
                        None => results.push(tool_result_block(tool_msg, content_blocks(tool_msg))),
                    }
                    i += 1;
                }
                results.append(&mut error_images);
                params.push(json!({"role": "user", "content": results}));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    params.append(&mut pending_system);
    mark_last_message_for_cache(&mut params);
    Converted { messages: params, assistant_levels }
}

/// The assistant content blocks pi sends: blank text dropped, thinking with a signature as
/// `thinking`, without one as plain text (an aborted stream leaves no signature), redacted
/// thinking as `redacted_thinking`, tool calls as `tool_use`.
fn assistant_blocks(msg: &Value) -> Vec<Value> {
    let mut blocks = Vec::new();
    for block in content_blocks(msg) {
        match str_field(block, "type") {
            Some("text") if !is_blank(block.get("text")) => blocks.push(text_block(block.get("text"))),
            Some("thinking") => {
                if js::truthy(block.get("redacted")) {
                    let mut b = Map::new();
                    b.insert("type".into(), "redacted_thinking".into());
                    if let Some(sig) = block.get("thinkingSignature") {
                        b.insert("data".into(), sig.clone());
                    }
                    blocks.push(Value::Object(b));
                    continue;
                }
                let signature = block.get("thinkingSignature").filter(|s| !is_blank(Some(s)));
                let thinking = block.get("thinking").cloned().unwrap_or(Value::Null);
                if is_blank(Some(&thinking)) && signature.is_none() {
                    continue;
                }
                match signature {
                    Some(sig) => blocks.push(json!({"type": "thinking", "thinking": thinking, "signature": sig})),
                    None => blocks.push(json!({"type": "text", "text": thinking})),
                }
            }
            Some("toolCall") => {
                let mut b = Map::new();
                b.insert("type".into(), "tool_use".into());
                for (from, to) in [("id", "id"), ("name", "name")] {
                    if let Some(v) = block.get(from) {
                        b.insert(to.into(), v.clone());
                    }
                }
                let input = block.get("arguments").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| json!({}));
                b.insert("input".into(), input);
                blocks.push(Value::Object(b));
            }
            _ => {}
        }
    }
    blocks
}

/// The end of `convertMessages`: a cache breakpoint on the last message when it is a user
/// or system message (its last block, if that can carry one; string content becomes a
/// text block).
fn mark_last_message_for_cache(params: &mut [Value]) {
    let Some(last) = params.last_mut() else {
        return;
    };
    if !matches!(role(last), "user" | "system") {
        return;
    }
    let Some(content) = last.get_mut("content") else {
        return;
    };
    match content {
        Value::Array(blocks) => {
            if let Some(Value::Object(block)) = blocks.last_mut() {
                let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
                if matches!(kind, "text" | "image" | "tool_result" | "tool_addition" | "tool_removal") {
                    block.insert("cache_control".into(), cache_control());
                }
            }
        }
        Value::String(s) => {
            let text = std::mem::take(s);
            *content = json!([{"type": "text", "text": text, "cache_control": cache_control()}]);
        }
        _ => {}
    }
}

/// `insertThinkingLevelMessages`: an effort marker before each assistant message produced
/// with a known effort, and one at the end for the reply being requested.
fn insert_thinking_level_messages(converted: Converted, active_effort: &str) -> Vec<Value> {
    let mut messages = Vec::with_capacity(converted.messages.len() + 1);
    for (index, message) in converted.messages.into_iter().enumerate() {
        if let Some((_, level)) = converted.assistant_levels.iter().find(|(i, _)| *i == index) {
            messages.push(json!({"role": "system", "content": [], "output_config": {"effort": level}}));
        }
        messages.push(message);
    }
    messages.push(json!({"role": "system", "content": [], "output_config": {"effort": active_effort}}));
    messages
}

/// `convertTools(tools, isOAuth=false, supportsEagerToolInputStreaming=true,
/// supportsStrictTools, cacheControl)`: the cache breakpoint goes on the last tool of the
/// request-level list (`cache` false for inline `tool_addition` definitions).
fn convert_tools(tools: &[Value], target: &Target, cache: bool) -> Vec<Value> {
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let strict = super::schema::resolve_strict(
                tool,
                target.strict_tools,
                Some(super::schema::anthropic_unsupported_keyword),
            );
            let parameters = super::schema::tool_parameters(tool, strict);
            // Root `anyOf`/`oneOf`/`allOf` are rejected by Anthropic, so only these keys
            // of the schema root are kept (all of it, overridden by these, when strict).
            let mut legacy = Map::new();
            legacy.insert("type".into(), "object".into());
            legacy.insert(
                "properties".into(),
                parameters.get("properties").filter(|v| !v.is_null()).cloned().unwrap_or_else(|| json!({})),
            );
            legacy.insert(
                "required".into(),
                parameters.get("required").filter(|v| !v.is_null()).cloned().unwrap_or_else(|| json!([])),
            );
            for key in ["additionalProperties", "$defs", "definitions"] {
                if let Some(v) = parameters.get(key) {
                    legacy.insert(key.into(), v.clone());
                }
            }
            let input_schema = match (strict, parameters) {
                (true, Value::Object(mut schema)) => {
                    schema.extend(legacy);
                    schema
                }
                _ => legacy,
            };
            let mut out = Map::new();
            if let Some(name) = tool.get("name") {
                out.insert("name".into(), name.clone());
            }
            if let Some(description) = tool.get("description") {
                out.insert("description".into(), description.clone());
            }
            out.insert("eager_input_streaming".into(), true.into());
            if strict {
                out.insert("strict".into(), true.into());
            }
            out.insert("input_schema".into(), Value::Object(input_schema));
            if cache && index == tools.len() - 1 {
                out.insert("cache_control".into(), cache_control());
            }
            Value::Object(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_ids_are_normalised_for_anthropic() {
        assert_eq!(normalize_tool_call_id("call|abc/def+=="), "call_abc_def___");
        assert_eq!(normalize_tool_call_id(&"x".repeat(80)).len(), 64);
    }
}
