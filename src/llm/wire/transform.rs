//! pi-ai's provider-independent steps between `convertToLlm` and a wire format (§2.5):
//! `resolveTranscript` (`utils/transcript.js`) and `transformMessages`
//! (`api/transform-messages.js`).

use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

use super::model::Target;
use super::{content_blocks, is_blank, role, str_field};
use crate::session::system;

const NON_VISION_USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const NON_VISION_TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
const ERROR_TOOL_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// `resolveTranscript(context, supportsMidConvoSystemMessages)`: the messages as they are
/// when the model accepts later system messages, else `collapseSystemMessages`: one leading
/// system message replaying all of them (§2.3), then every other message in order.
pub(super) fn resolve_transcript(messages: &[Value], mid_convo_system: bool) -> Vec<Value> {
    if mid_convo_system {
        return messages.to_vec();
    }
    let head = system::current_system_message(messages);
    head.into_iter().chain(messages.iter().filter(|m| role(m) != "system").cloned()).collect()
}

/// `getInitialSystemMessage`: the first message, when it is a system message.
pub(super) fn initial_system_message(messages: &[Value]) -> Option<&Value> {
    messages.first().filter(|m| role(m) == "system")
}

/// `replaceImagesWithPlaceholder`: each run of images becomes one text block. A text
/// block that already holds the placeholder absorbs the images after it, as in pi.
pub(super) fn replace_images_with_placeholder(content: &[Value], placeholder: &str) -> Vec<Value> {
    let mut result = Vec::new();
    let mut previous_was_placeholder = false;
    for block in content {
        if str_field(block, "type") == Some("image") {
            if !previous_was_placeholder {
                result.push(json!({"type": "text", "text": placeholder}));
            }
            previous_was_placeholder = true;
            continue;
        }
        result.push(block.clone());
        previous_was_placeholder = str_field(block, "text") == Some(placeholder);
    }
    result
}

/// `splitErrorToolResultImages`: an error tool result with images, for APIs that take only
/// text there (Anthropic). Returns the content to send in place (images replaced), the
/// caption and the images to send after all tool results of the turn.
pub(super) fn split_error_tool_result_images(msg: &Value) -> Option<(Vec<Value>, String, Vec<Value>)> {
    if !crate::session::js::truthy(msg.get("isError")) {
        return None;
    }
    let content = content_blocks(msg);
    let images: Vec<Value> = content.iter().filter(|b| str_field(b, "type") == Some("image")).cloned().collect();
    if images.is_empty() {
        return None;
    }
    let js = |k| crate::session::js::to_js_string(msg.get(k));
    let caption = format!("Images from the error result of tool call {} ({}):", js("toolCallId"), js("toolName"));
    Some((replace_images_with_placeholder(content, ERROR_TOOL_IMAGE_PLACEHOLDER), caption, images))
}

/// `downgradeUnsupportedImages`: for a model without image input, images in user messages
/// and tool results become placeholder text.
fn downgrade_unsupported_images(msg: Value, target: &Target) -> Value {
    if target.images {
        return msg;
    }
    let placeholder = match role(&msg) {
        "user" if msg.get("content").is_some_and(Value::is_array) => NON_VISION_USER_IMAGE_PLACEHOLDER,
        "toolResult" => NON_VISION_TOOL_IMAGE_PLACEHOLDER,
        _ => return msg,
    };
    let content = replace_images_with_placeholder(content_blocks(&msg), placeholder);
    with_field(msg, "content", Value::Array(content))
}

/// `{...msg, key: value}`: replaces the value in place, or appends the key.
pub(super) fn with_field(mut msg: Value, key: &str, value: Value) -> Value {
    if let Value::Object(m) = &mut msg {
        m.insert(key.to_string(), value);
    }
    msg
}

/// A provider's `normalizeToolCallId(id, model, assistantMessage)`, applied only to calls
/// replayed to a different model.
pub(super) type NormalizeId<'a> = &'a dyn Fn(&str) -> String;

/// `transformMessages(messages, model, normalizeToolCallId)`:
///
/// 1. `null`/missing content becomes `[]`; images are downgraded for text-only models.
/// 2. Assistant messages from another model (provider, api or id differ) lose every thinking
///    block, `textSignature` and `thoughtSignature`, and their tool-call ids are normalised
///    (tool results follow the new id). From the same model, only empty unsigned thinking
///    is dropped.
/// 3. Errored and aborted assistant messages are dropped; tool calls left without a result
///    before the next assistant or user message (or the end) get a synthetic
///    `No result provided` error result; a system message between a tool call and its
///    results is held back until the results are in.
pub(super) fn transform_messages(messages: &[Value], target: &Target, normalize_id: Option<NormalizeId>) -> Vec<Value> {
    let mut id_map: HashMap<String, String> = HashMap::new();
    let transformed: Vec<Value> = messages
        .iter()
        .map(|msg| {
            let msg = if msg.get("content").is_none_or(Value::is_null) {
                with_field(msg.clone(), "content", json!([]))
            } else {
                msg.clone()
            };
            let msg = downgrade_unsupported_images(msg, target);
            match role(&msg) {
                "toolResult" => {
                    let id = str_field(&msg, "toolCallId").unwrap_or_default();
                    match id_map.get(id) {
                        Some(new_id) if new_id != id => {
                            let new_id = new_id.clone();
                            with_field(msg, "toolCallId", Value::String(new_id))
                        }
                        _ => msg,
                    }
                }
                "assistant" => transform_assistant(msg, target, normalize_id, &mut id_map),
                _ => msg,
            }
        })
        .collect();
    insert_missing_tool_results(transformed)
}

fn transform_assistant(
    msg: Value,
    target: &Target,
    normalize_id: Option<NormalizeId>,
    id_map: &mut HashMap<String, String>,
) -> Value {
    let same_model = str_field(&msg, "provider") == Some(target.provider.as_str())
        && str_field(&msg, "api") == Some(target.api)
        && str_field(&msg, "model") == Some(target.id.as_str());
    let Some(blocks) = msg.get("content").and_then(Value::as_array) else {
        return msg;
    };
    let mut content = Vec::with_capacity(blocks.len());
    for block in blocks {
        match str_field(block, "type") {
            Some("thinking") => {
                if !same_model {
                    continue;
                }
                // Signed and redacted blocks are needed for replay even when empty.
                let js = |k| crate::session::js::truthy(block.get(k));
                if js("redacted") || js("thinkingSignature") || !is_blank(block.get("thinking")) {
                    content.push(block.clone());
                }
            }
            Some("text") if !same_model => {
                let mut text = Map::new();
                text.insert("type".into(), "text".into());
                if let Some(t) = block.get("text") {
                    text.insert("text".into(), t.clone());
                }
                content.push(Value::Object(text));
            }
            Some("toolCall") if !same_model => {
                let mut call = block.clone();
                if let Value::Object(m) = &mut call {
                    if crate::session::js::truthy(m.get("thoughtSignature")) {
                        m.shift_remove("thoughtSignature");
                    }
                    if let Some(normalize) = normalize_id {
                        let id = m.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                        let new_id = normalize(&id);
                        if new_id != id {
                            id_map.insert(id, new_id.clone());
                            m.insert("id".into(), Value::String(new_id));
                        }
                    }
                }
                content.push(call);
            }
            _ => content.push(block.clone()),
        }
    }
    with_field(msg, "content", Value::Array(content))
}

/// The second pass of `transformMessages`.
fn insert_missing_tool_results(transformed: Vec<Value>) -> Vec<Value> {
    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<Value> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let mut held_system: Vec<Value> = Vec::new();

    let close =
        |result: &mut Vec<Value>, pending: &mut Vec<Value>, answered: &mut HashSet<String>, held: &mut Vec<Value>| {
            for call in pending.drain(..) {
                let id = str_field(&call, "id").unwrap_or_default();
                if !answered.contains(id) {
                    // pi also stamps `timestamp: Date.now()`; no wire format sends it.
                    let mut synthetic = Map::new();
                    synthetic.insert("role".into(), "toolResult".into());
                    if let Some(id) = call.get("id") {
                        synthetic.insert("toolCallId".into(), id.clone());
                    }
                    if let Some(name) = call.get("name") {
                        synthetic.insert("toolName".into(), name.clone());
                    }
                    synthetic.insert("content".into(), json!([{"type": "text", "text": "No result provided"}]));
                    synthetic.insert("isError".into(), true.into());
                    result.push(Value::Object(synthetic));
                }
            }
            answered.clear();
            result.append(held);
        };

    for msg in transformed {
        match role(&msg) {
            "assistant" => {
                close(&mut result, &mut pending, &mut answered, &mut held_system);
                // Incomplete turns are not replayed; the model retries from the last good state.
                if matches!(str_field(&msg, "stopReason"), Some("error" | "aborted")) {
                    continue;
                }
                let calls: Vec<Value> =
                    content_blocks(&msg).iter().filter(|b| str_field(b, "type") == Some("toolCall")).cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                result.push(msg);
            }
            "toolResult" => {
                answered.insert(str_field(&msg, "toolCallId").unwrap_or_default().to_string());
                result.push(msg);
            }
            "system" if !pending.is_empty() => held_system.push(msg),
            "user" | "developer" => {
                close(&mut result, &mut pending, &mut answered, &mut held_system);
                result.push(msg);
            }
            _ => result.push(msg),
        }
    }
    close(&mut result, &mut pending, &mut answered, &mut held_system);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_images_keeps_one_placeholder_per_run() {
        let content = vec![
            json!({"type":"image","data":"a","mimeType":"image/png"}),
            json!({"type":"image","data":"b","mimeType":"image/png"}),
            json!({"type":"text","text":"t"}),
            json!({"type":"image","data":"c","mimeType":"image/png"}),
        ];
        let out = replace_images_with_placeholder(&content, "P");
        assert_eq!(
            out,
            vec![
                json!({"type":"text","text":"P"}),
                json!({"type":"text","text":"t"}),
                json!({"type":"text","text":"P"})
            ]
        );
    }
}
