//! An OpenAI Responses API `input` made from pi's LLM messages (`path --format
//! openai-responses` on a session whose agent does not speak that API itself; a Codex
//! session's own `input` is sent as the client sent it, see `Projection::responses`).
//!
//! The mapping is item for item, as the Responses API takes a conversation: a user message
//! is a `message` of `input_text` parts, an assistant's text an `output_text` message, its
//! thinking a `reasoning` item (its summary; the signature as `encrypted_content` when
//! there is one), each tool call a `function_call` (arguments as a JSON string), and each
//! tool result a `function_call_output`.

use serde_json::{json, Value};

use super::{content_blocks, role, str_field};

fn text_of(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(t)) => vec![json!({"type": "input_text", "text": t})],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| match str_field(b, "type") {
                Some("text") => Some(json!({"type": "input_text", "text": b.get("text").cloned().unwrap_or_default()})),
                Some("image") => Some(json!({
                    "type": "input_image",
                    "image_url": format!("data:{};base64,{}", str_field(b, "mimeType").unwrap_or("image/png"), str_field(b, "data").unwrap_or_default()),
                })),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The `input` items of pi's LLM messages.
pub fn input(llm: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in llm {
        match role(m) {
            // (A `developer` message is oh-my-pi's: it goes as the user's.)
            "user" | "developer" => {
                out.push(json!({"type": "message", "role": "user", "content": text_of(m.get("content"))}))
            }
            "assistant" => {
                for b in content_blocks(m) {
                    match str_field(b, "type") {
                        Some("text") => out.push(json!({
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": b.get("text").cloned().unwrap_or_default()}],
                        })),
                        Some("thinking") => {
                            let mut r = json!({
                                "type": "reasoning",
                                "summary": [{"type": "summary_text", "text": b.get("thinking").cloned().unwrap_or_default()}],
                            });
                            if let Some(sig) = str_field(b, "thinkingSignature") {
                                r["encrypted_content"] = sig.into();
                            }
                            out.push(r);
                        }
                        Some("toolCall") => {
                            let args = b.get("arguments").cloned().unwrap_or_else(|| json!({}));
                            out.push(json!({
                                "type": "function_call",
                                "call_id": b.get("id").cloned().unwrap_or_default(),
                                "name": b.get("name").cloned().unwrap_or_default(),
                                "arguments": serde_json::to_string(&args).unwrap_or_default(),
                            }));
                        }
                        _ => {}
                    }
                }
            }
            "toolResult" => {
                let text: Vec<&str> = content_blocks(m)
                    .iter()
                    .filter(|b| str_field(b, "type") == Some("text"))
                    .filter_map(|b| str_field(b, "text"))
                    .collect();
                out.push(json!({
                    "type": "function_call_output",
                    "call_id": m.get("toolCallId").cloned().unwrap_or_default(),
                    "output": text.join("\n"),
                }));
            }
            _ => {}
        }
    }
    out
}
