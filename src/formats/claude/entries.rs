//! Claude Code lines in the common entry shape, which is pi's (docs/claude-format.md §3):
//! what `show`, `diff`, `leaves` and the transcripts read.
//!
//! | line | entry |
//! |---|---|
//! | `user` with text | `message`, role `user` |
//! | `user` with one tool result | `message`, role `toolResult` (`toolName` from its call) |
//! | `assistant` | `message`, role `assistant`: `text`, `thinking`, `toolCall` blocks |
//! | `system` `compact_boundary` | `compaction` |
//! | anything else with a `uuid` | `custom`, `customType` `claude:<type>`, the line as `data` |

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::context::line;
use super::{usage, Claude};
use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::Unreadable;
use crate::session::projection::ProjectedEntry;
use crate::session::{js, Session};

#[derive(Deserialize)]
struct TimeOnly<'a> {
    #[serde(borrow)]
    timestamp: Option<super::load::Str<'a>>,
}

/// A line's `timestamp` in ms since the epoch.
pub fn line_time(raw: &[u8]) -> Option<f64> {
    let t: TimeOnly = serde_json::from_slice(raw).ok()?;
    js::parse_date(t.timestamp?.as_deref()?)
}

fn ms(v: &Value) -> Value {
    v.get("timestamp").and_then(Value::as_str).and_then(js::parse_date).map_or(Value::Null, js::number)
}

/// A Claude content block as pi's.
fn block(b: &Value) -> Option<Value> {
    let ty = b.get("type").and_then(Value::as_str)?;
    Some(match ty {
        "text" => json!({"type": "text", "text": b.get("text").cloned().unwrap_or_default()}),
        "thinking" => {
            let mut m = Map::new();
            m.insert("type".into(), "thinking".into());
            m.insert("thinking".into(), b.get("thinking").cloned().unwrap_or_default());
            if let Some(sig) = b.get("signature") {
                m.insert("thinkingSignature".into(), sig.clone());
            }
            Value::Object(m)
        }
        "redacted_thinking" => json!({"type": "thinking", "thinking": "", "redacted": true,
            "thinkingSignature": b.get("data").cloned().unwrap_or_default()}),
        // A server's own call (a web search) is not one pi could make: it stays as it is, below.
        "tool_use" => json!({
            "type": "toolCall",
            "id": b.get("id").cloned().unwrap_or_default(),
            "name": b.get("name").cloned().unwrap_or_default(),
            "arguments": b.get("input").cloned().unwrap_or_else(|| json!({})),
        }),
        "image" => {
            let src = b.get("source");
            json!({"type": "image",
                "data": src.and_then(|s| s.get("data")).cloned().unwrap_or_default(),
                "mimeType": src.and_then(|s| s.get("media_type")).cloned().unwrap_or_default()})
        }
        _ => json!({"type": "text", "text": js::stringify(b)}),
    })
}

fn content_blocks(c: Option<&Value>) -> Vec<Value> {
    match c {
        Some(Value::String(t)) => vec![json!({"type": "text", "text": t})],
        Some(Value::Array(a)) => a.iter().filter_map(block).collect(),
        _ => Vec::new(),
    }
}

/// A tool result's content as pi's (text and image blocks).
fn result_content(c: Option<&Value>) -> Vec<Value> {
    match c {
        Some(Value::String(t)) => vec![json!({"type": "text", "text": t})],
        Some(Value::Array(a)) => a.iter().filter_map(block).collect(),
        None | Some(Value::Null) => Vec::new(),
        Some(other) => vec![json!({"type": "text", "text": js::stringify(other)})],
    }
}

fn stop_reason(r: Option<&Value>) -> Value {
    match r.and_then(Value::as_str) {
        Some("end_turn") | Some("stop_sequence") | Some("pause_turn") => "stop".into(),
        Some("tool_use") => "toolUse".into(),
        Some("max_tokens") => "length".into(),
        Some("refusal") => "error".into(),
        Some(other) => other.into(),
        None => Value::Null,
    }
}

/// Every call's name by its id, from the replies that made them (the first in the file wins), read
/// once per session when a result's call is not on the path being read: a lookup in the
/// file for each such result made a context of many of them read the file as many times.
pub fn call_names(s: &Session) -> std::collections::HashMap<String, Value> {
    let mut names = std::collections::HashMap::new();
    for i in s.entries.indices() {
        let raw = s.raw_line(i);
        if s.entries[i].role != Role::Assistant || !crate::session::text::contains!(raw, b"\"id\"") {
            continue;
        }
        let Ok(v) = line(s, i) else { continue };
        let blocks = v.get("message").and_then(|m| m.get("content")).and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            if let Some(id) = b.get("id").and_then(Value::as_str) {
                names.entry(id.to_string()).or_insert_with(|| b.get("name").cloned().unwrap_or_default());
            }
        }
    }
    names
}

/// The pi messages a user line makes: one `toolResult` per tool result, then a `user`
/// message with the rest, if any.
/// The names of the calls made so far on a path (a context knows them before their
/// results; a lone entry looks its call up in the file).
type Names = std::collections::HashMap<String, Value>;

fn user_messages(s: &Session, c: &Claude, v: &Value, names: Option<&Names>) -> Vec<Value> {
    let ts = ms(v);
    let content = v.get("message").and_then(|m| m.get("content"));
    let mut out = Vec::new();
    let mut rest = Vec::new();
    match content {
        Some(Value::Array(a)) => {
            for b in a {
                if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                    out.push(json!({
                        "role": "toolResult",
                        "toolCallId": id,
                        "toolName": names.and_then(|n| n.get(id).cloned()).unwrap_or_else(|| c.call_name(s, id)),
                        "content": result_content(b.get("content")),
                        "isError": b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                        "timestamp": ts,
                    }));
                } else if let Some(b) = block(b) {
                    rest.push(b);
                }
            }
        }
        Some(Value::String(t)) => rest.push(json!({"type": "text", "text": t})),
        _ => {}
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(json!({"role": "user", "content": rest, "timestamp": ts}));
    }
    out
}

fn assistant_message(v: &Value) -> Value {
    let m = v.get("message").unwrap_or(&Value::Null);
    let model = m.get("model").cloned().unwrap_or_default();
    let u = usage::totals_of(m);
    json!({
        "role": "assistant",
        "content": content_blocks(m.get("content")),
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": model,
        "usage": {
            "input": js::number(u.input), "output": js::number(u.output),
            "cacheRead": js::number(u.cache_read), "cacheWrite": js::number(u.cache_write),
            "totalTokens": js::number(u.tokens()),
            "cost": {"total": js::number(u.cost)},
        },
        "stopReason": stop_reason(m.get("stop_reason")),
        "timestamp": ms(v),
    })
}

/// The pi messages of one line (an attachment: its texts, as `custom` messages).
fn messages_of(s: &Session, c: &Claude, i: EntryIdx, v: &Value, names: Option<&Names>) -> Vec<Value> {
    let e = &s.entries[i];
    match (e.kind, e.role) {
        (EntryType::Message, Role::Assistant) => {
            if v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
                Vec::new()
            } else {
                vec![assistant_message(v)]
            }
        }
        // A user's line written as another kind (a prompt queued while a turn ran, an
        // attachment; a local command's output, a system line): the user's text as the
        // model is given it (docs/claude-format.md §2).
        (EntryType::Message, _) if matches!(v.get("type").and_then(Value::as_str), Some("attachment" | "system")) => {
            let text = match v.get("type").and_then(Value::as_str) {
                Some("attachment") => queued_text(v),
                _ => v.get("content").and_then(Value::as_str).unwrap_or_default().to_string(),
            };
            vec![json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms(v)})]
        }
        (EntryType::Message, _) => user_messages(s, c, v, names),
        _ if v.get("type").and_then(Value::as_str) == Some("attachment") => {
            let kind = v.get("attachment").and_then(|a| a.get("type")).and_then(Value::as_str).unwrap_or("attachment");
            let rendered = v.get("rendered").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            rendered
                .iter()
                .filter_map(|r| r.get("content"))
                .map(|c| {
                    json!({"role": "custom", "customType": format!("claude:{kind}"), "content": c,
                        "display": false, "timestamp": ms(v)})
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// What the model is given of a queued prompt: its rendered text, out of its reminder,
/// else the prompt itself.
pub fn queued_text(v: &Value) -> String {
    let rendered = v.get("rendered").and_then(Value::as_array).into_iter().flatten();
    let texts: Vec<&str> = rendered
        .filter_map(|r| r.get("content").and_then(Value::as_str))
        .map(super::context::unwrap_reminder)
        .collect();
    if texts.is_empty() {
        queued_prompt(v)
    } else {
        texts.join("\n")
    }
}

/// What the user typed of a queued prompt (`attachment.prompt`).
pub fn queued_prompt(v: &Value) -> String {
    crate::session::system::content_text(v.get("attachment").and_then(|a| a.get("prompt")))
}

/// Entry `i` in the common shape.
pub fn entry(s: &Session, c: &Claude, i: EntryIdx) -> Result<Value, Unreadable> {
    entry_with(s, c, i, None)
}

/// Entry `i`, a tool result's `toolName` taken from `names` when it is there (a reader
/// going down a path knows its calls; a lone entry looks its call up in the file).
fn entry_with(s: &Session, c: &Claude, i: EntryIdx, names: Option<&Names>) -> Result<Value, Unreadable> {
    let v = line(s, i)?;
    let e = &s.entries[i];
    let parent = s.parent(i).map(|p| s.id_value(p)).unwrap_or(Value::Null);
    let mut out = Map::new();
    let ty = match (e.kind, e.role) {
        (EntryType::Message, _) => "message",
        (EntryType::Compaction, _) => "compaction",
        _ => "custom",
    };
    out.insert("type".into(), ty.into());
    out.insert("id".into(), s.id_value(i));
    out.insert("parentId".into(), parent);
    out.insert("timestamp".into(), v.get("timestamp").cloned().unwrap_or_default());
    match ty {
        "message" => {
            // A line is one message, but for a user line with several tool results
            // (older files), whose first result stands for it.
            let m = messages_of(s, c, i, &v, names)
                .into_iter()
                .next()
                .unwrap_or_else(|| json!({"role": "user", "content": [], "timestamp": ms(&v)}));
            out.insert("message".into(), m);
        }
        "compaction" => {
            let meta = v.get("compactMetadata");
            out.insert("summary".into(), v.get("content").cloned().unwrap_or_default());
            out.insert("tokensBefore".into(), meta.and_then(|m| m.get("preTokens")).cloned().unwrap_or_default());
            out.insert("firstKeptEntryId".into(), Value::Null);
        }
        _ => {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            out.insert("customType".into(), format!("claude:{kind}").into());
            out.insert("data".into(), v);
        }
    }
    Ok(Value::Object(out))
}

/// The pi messages of a context, each entry's range of them, and the model of its last reply.
pub type Projected = (Vec<Value>, Vec<ProjectedEntry>, Option<Value>);

/// The pi messages of the context made of `path`, whose lines, parsed, are `lines` (one
/// each), each entry's range, and the model of the last reply.
pub fn project(s: &Session, c: &Claude, path: &[EntryIdx], lines: &[Value]) -> Result<Projected, Unreadable> {
    let mut messages = Vec::new();
    let mut entries = Vec::new();
    let mut model = None;
    let mut names = Names::new();
    for (&i, v) in path.iter().zip(lines) {
        let start = messages.len();
        let made = messages_of(s, c, i, v, Some(&names));
        for m in &made {
            for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
                if b.get("type").and_then(Value::as_str) == Some("toolCall") {
                    if let (Some(id), Some(name)) = (b.get("id").and_then(Value::as_str), b.get("name")) {
                        names.insert(id.to_string(), name.clone());
                    }
                }
            }
        }
        if let Some(m) = made.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("assistant")) {
            if let Some(id) = m.get("model").and_then(Value::as_str).filter(|m| !m.is_empty() && *m != "<synthetic>") {
                model = Some(json!({"provider": "anthropic", "modelId": id}));
            }
        }
        messages.extend(made);
        entries.push(ProjectedEntry { entry: i, messages: start..messages.len(), edit: None });
    }
    Ok((messages, entries, model))
}

/// `user: fix the tests`, `[attachment: environment]`: one line about entry `i`.
pub fn preview(s: &Session, i: EntryIdx, max: usize) -> String {
    let text = match line(s, i) {
        Ok(v) => match (s.entries[i].kind, s.entries[i].role) {
            (EntryType::Message, Role::User) if v.get("type").and_then(Value::as_str) == Some("attachment") => {
                format!("user (queued): {}", queued_prompt(&v))
            }
            (EntryType::Message, Role::User) => {
                let content = v.get("message").and_then(|m| m.get("content")).or(v.get("content"));
                format!("user: {}", crate::session::system::content_text(content))
            }
            (EntryType::Message, Role::ToolResult) => "[tool result]".to_string(),
            (EntryType::Message, _) => {
                let blocks = content_blocks(v.get("message").and_then(|m| m.get("content")));
                let text: Vec<String> = blocks
                    .iter()
                    .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                        Some("text") => b.get("text").and_then(Value::as_str).map(str::to_string),
                        Some("toolCall") => Some(format!("[{}]", js::to_js_string(b.get("name")))),
                        Some("thinking") => Some("(thinking)".into()),
                        _ => None,
                    })
                    .collect();
                format!("assistant: {}", text.join(" "))
            }
            (EntryType::Compaction, _) => "[compaction]".to_string(),
            _ => format!("[{}]", super::rows::custom_label(&v)),
        },
        Err(_) => "(unreadable)".to_string(),
    };
    crate::session::text::one_line(&text, max)
}

/// A Claude tool call's name and arguments as pi's, where pi has the tool (`None`: kept
/// as it is).
pub fn pi_tool(name: &str, input: &Value) -> Option<(&'static str, Value)> {
    let get = |k: &str| input.get(k).cloned();
    let mut args = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            args.insert(k.into(), v);
        }
    };
    let pi = match name {
        "Bash" => {
            put("command", get("command"));
            // Claude's timeout is in milliseconds, pi's in seconds.
            put("timeout", input.get("timeout").and_then(Value::as_f64).map(|ms| js::number(ms / 1000.0)));
            "bash"
        }
        "Read" => {
            put("path", get("file_path"));
            put("offset", get("offset"));
            put("limit", get("limit"));
            "read"
        }
        "Write" => {
            put("path", get("file_path"));
            put("content", get("content"));
            "write"
        }
        "Edit" if input.get("replace_all").and_then(Value::as_bool) != Some(true) => {
            put("path", get("file_path"));
            put("edits", Some(json!([{"oldText": get("old_string"), "newText": get("new_string")}])));
            "edit"
        }
        "MultiEdit" => {
            let edits: Vec<Value> = input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|e| json!({"oldText": e.get("old_string"), "newText": e.get("new_string")}))
                .collect();
            put("path", get("file_path"));
            put("edits", Some(Value::Array(edits)));
            "edit"
        }
        "Grep" => {
            put("pattern", get("pattern"));
            put("path", get("path"));
            put("glob", get("glob"));
            put("ignoreCase", get("-i"));
            put("context", get("-C"));
            "grep"
        }
        "Glob" => {
            put("pattern", get("pattern"));
            put("path", get("path"));
            "find"
        }
        _ => return None,
    };
    Some((pi, Value::Object(args)))
}

/// `pisces convert --to pi`: the context at `leaf` as pi entries, each reply's lines
/// joined into one message (as the model wrote it), tools mapped onto pi's, attachments
/// and other lines the client makes context from left out (pi makes its own).
pub fn pi_entries(s: &Session, c: &Claude, leaf: EntryIdx) -> Result<Vec<Value>, Unreadable> {
    let path = super::context::entries_at(s, c, leaf);
    let mut out: Vec<Value> = Vec::new();
    let mut names = Names::new();
    let mut last_reply: Option<u32> = None;
    for i in path {
        if s.entries[i].kind != EntryType::Message {
            continue;
        }
        let mut e = entry_with(s, c, i, Some(&names))?;
        let reply = c.reply_of(i.get());
        let Some(m) = e.get_mut("message") else { continue };
        if let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) {
            for b in blocks.iter_mut() {
                if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                    continue;
                }
                let name = b.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                let args = b.get("arguments").cloned().unwrap_or_default();
                let id = b.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                if let Some((pi, pi_args)) = pi_tool(&name, &args) {
                    b["name"] = pi.into();
                    b["arguments"] = pi_args;
                }
                names.insert(id, b["name"].clone());
            }
        }
        let is_reply = m.get("role").and_then(Value::as_str) == Some("assistant");
        if is_reply && reply.is_some() && reply == last_reply {
            if let Some(prev) = out.last_mut().and_then(|p| p.get_mut("message")) {
                let more = m.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
                if let Some(a) = prev.get_mut("content").and_then(Value::as_array_mut) {
                    a.extend(more);
                }
                continue;
            }
        }
        last_reply = if is_reply { reply } else { None };
        out.push(e);
    }
    Ok(out)
}
