//! Replaying pi 1.6's `system` messages into one prompt and one tool list (§2.3), as
//! pi-ai's `getCurrentSystemMessage` / `getSystemMessageText` do.

use serde_json::{Map, Value};

use super::js;

/// `contentText`: a string as is, else the text blocks joined by `\n`.
pub fn content_text(content: Option<&Value>) -> String {
    content_text_joined(content, "\n")
}

/// The names of the `toolCall` blocks of a message's content, as JavaScript prints them.
pub fn tool_call_names(content: Option<&Value>) -> Vec<String> {
    content
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|b| js::to_js_string(b.get("name")))
        .collect()
}

/// pi-ai's `contentText(content, separator)`: a string as is, else the `text` blocks'
/// texts joined by `separator`. Anything else (pi would throw on it) is empty.
pub fn content_text_joined(content: Option<&Value>, separator: &str) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| js::to_js_string(b.get("text")))
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}

/// The text pi's `/fork` puts back in the editor for a user message: a string content as
/// it is, else its text blocks joined with nothing between them.
pub fn user_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn is_system(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str) == Some("system")
}

/// The tool declarations after every system message's removals and additions, in map
/// order (a redefined name keeps its place; a removed and re-added one moves to the end).
pub fn current_tools(messages: &[Value]) -> Vec<Value> {
    let mut tools: Map<String, Value> = Map::new();
    for m in messages.iter().filter(|m| is_system(m)) {
        for t in m.get("toolsRemoved").and_then(Value::as_array).into_iter().flatten() {
            tools.shift_remove(&js::to_js_string(t.get("name")));
        }
        for t in m.get("toolsAdded").and_then(Value::as_array).into_iter().flatten() {
            tools.insert(js::to_js_string(t.get("name")), t.clone());
        }
    }
    tools.into_iter().map(|(_, v)| v).collect()
}

/// The single system message that replays every system message in `messages`, or
/// `None` when there is no system message and no tool.
pub fn current_system_message(messages: &[Value]) -> Option<Value> {
    let mut content = Vec::new();
    let mut sections: Map<String, Value> = Map::new();
    let mut timestamp: Option<Value> = None;
    for m in messages.iter().filter(|m| is_system(m)) {
        if timestamp.as_ref().is_none_or(Value::is_null) {
            timestamp = m.get("timestamp").cloned();
        }
        let text = content_text(m.get("content"));
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(Value::Object(patch)) = m.get("sections") {
            for (name, value) in patch {
                if value.is_null() {
                    sections.shift_remove(name);
                } else {
                    sections.insert(name.clone(), value.clone());
                }
            }
        }
    }
    let tools = current_tools(messages);
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), "system".into());
    out.insert("content".into(), Value::String(content.join("\n\n")));
    if !sections.is_empty() {
        out.insert("sections".into(), Value::Object(sections));
    }
    if !tools.is_empty() {
        out.insert("toolsAdded".into(), Value::Array(tools));
    }
    out.insert("timestamp".into(), timestamp.filter(|t| !t.is_null()).unwrap_or(Value::from(0)));
    Some(Value::Object(out))
}

/// `getSystemMessageText`: the content, then each section's text, empty parts dropped,
/// joined by a blank line.
pub fn system_message_text(message: &Value) -> String {
    let mut parts = vec![content_text(message.get("content"))];
    if let Some(Value::Object(sections)) = message.get("sections") {
        for v in sections.values().filter(|v| !v.is_null()) {
            parts.push(js::to_js_string(Some(v)));
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join("\n\n")
}

/// The system prompt text after replaying `messages` (empty when there is none).
pub fn current_system_prompt(messages: &[Value]) -> String {
    current_system_message(messages).map(|m| system_message_text(&m)).unwrap_or_default()
}

/// `renderSystemMessageUpdate`: a later system message as text, for APIs that accept
/// system messages mid-conversation.
pub fn render_update(message: &Value) -> String {
    let mut parts = Vec::new();
    let text = content_text(message.get("content"));
    if !text.is_empty() {
        parts.push(text);
    }
    if let Some(Value::Object(sections)) = message.get("sections") {
        for (name, value) in sections {
            parts.push(match value {
                Value::Null => format!("Removed system prompt section \"{name}\"."),
                v => format!("Updated system prompt section \"{name}\":\n\n{}", js::to_js_string(Some(v))),
            });
        }
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_text_is_what_pi_puts_in_the_editor() {
        let m: Value = serde_json::from_str(
            r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":""},{"type":"text","text":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(user_text(&m), "ab");
        assert_eq!(user_text(&serde_json::json!({"content": "plain"})), "plain");
    }

    #[test]
    fn sections_keep_their_first_place_and_removed_ones_move_to_the_end() {
        let msgs = vec![
            json!({"role":"system","content":"","sections":{"a":"A","b":"B","c":"C"},"timestamp":5,"toolsAdded":[{"name":"read"},{"name":"bash"}]}),
            json!({"role":"user","content":"hi"}),
            json!({"role":"system","content":"extra","sections":{"a":"A2","b":null},"toolsRemoved":[{"name":"read"}],"toolsAdded":[{"name":"read","v":2},{"name":"bash","v":2}],"timestamp":9}),
            json!({"role":"system","content":"","sections":{"b":"B3"},"timestamp":10}),
        ];
        let m = current_system_message(&msgs).unwrap();
        assert_eq!(m["content"], "extra");
        assert_eq!(m["timestamp"], 5);
        let keys: Vec<_> = m["sections"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "c", "b"]);
        assert_eq!(m["sections"]["a"], "A2");
        let tools: Vec<_> = m["toolsAdded"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(tools, ["bash", "read"]);
        assert_eq!(system_message_text(&m), "extra\n\nA2\n\nC\n\nB3");
    }
}
