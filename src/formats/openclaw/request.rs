//! Where OpenClaw's Chat Completions requests differ from pi-ai's for the same messages
//! (`@openclaw/ai`'s `convertMessages`, and OpenClaw's transcript policy for
//! Chat Completions providers; docs/openclaw-format.md §5).

use std::collections::HashMap;

use serde_json::{json, Value};

/// pi-ai's caption for the images of a run of tool results.
const PI_AI_CAPTION: &str = "Attached image(s) from tool result:";

/// pi-ai sends the images of a run of tool results in one user message under one
/// caption; OpenClaw captions each result's images with its place in the run and its
/// tool: `Image(s) from tool result #2 (read):`.
pub fn caption_tool_images(messages: &mut [Value], llm: &[Value]) {
    // toolCallId -> (tool name, number of images), from the messages converted.
    let mut results: HashMap<&str, (&str, usize)> = HashMap::new();
    for m in llm.iter().filter(|m| m["role"] == "toolResult") {
        let images = m["content"].as_array().map_or(0, |c| c.iter().filter(|b| b["type"] == "image").count());
        if let Some(id) = m["toolCallId"].as_str() {
            results.insert(id, (m["toolName"].as_str().unwrap_or_default(), images));
        }
    }
    for k in 0..messages.len() {
        let is_caption = messages[k]["role"] == "user" && messages[k]["content"][0]["text"] == PI_AI_CAPTION;
        if !is_caption {
            continue;
        }
        let run_start = messages[..k].iter().rposition(|m| m["role"] != "tool").map_or(0, |p| p + 1);
        let mut images = messages[k]["content"].as_array().map(|c| c[1..].to_vec()).unwrap_or_default().into_iter();
        let mut content = Vec::new();
        for (j, tool) in messages[run_start..k].iter().enumerate() {
            let Some(&(name, count)) = tool["tool_call_id"].as_str().and_then(|id| results.get(id)) else { continue };
            if count == 0 {
                continue;
            }
            let name: String = name.chars().take(64).collect();
            let named = if name.is_empty() { String::new() } else { format!(" ({name})") };
            content.push(json!({"type": "text", "text": format!("Image(s) from tool result #{}{named}:", j + 1)}));
            content.extend(images.by_ref().take(count));
        }
        content.extend(images);
        messages[k]["content"] = Value::Array(content);
    }
}

/// OpenClaw's `strict` tool-call ids: letters and digits only.
pub fn strict_tool_call_ids(messages: &mut [Value]) {
    let strict = |id: &str| {
        let s: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
        if s.is_empty() {
            "sanitizedtoolid".to_string()
        } else {
            s
        }
    };
    for m in messages.iter_mut() {
        if let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for c in calls {
                if let Some(id) = c["id"].as_str() {
                    c["id"] = Value::String(strict(id));
                }
            }
        }
        if let Some(id) = m.get("tool_call_id").and_then(Value::as_str) {
            m["tool_call_id"] = Value::String(strict(id));
        }
    }
}
