//! The context Codex sends at a line (docs/codex-format.md §2): the Responses API `input`.
//!
//! It is, checked against every request the client sent in the corpus:
//!
//! 1. a developer message with the thread's `session_meta.base_instructions.text` (the client
//!    gives it an id that is in no file; pisces writes none);
//! 2. then the `payload` of every `response_item` line on the path, in order, less the
//!    client's own `internal_chat_message_metadata_passthrough` key;
//! 3. a call without an output on the path is answered `aborted` right after it;
//! 4. where a `compacted` line comes, what came before is replaced by its
//!    `replacement_history` (an older `compacted` line without one: the user messages so far
//!    and a user message with its summary, as older clients rebuilt it; not checked against
//!    a client here).
//!
//! `turn_context`, `world_state`, events, token records and `ghost_snapshot` items (the
//! client's undo points) are never sent. A thread an older client wrote as events only (no
//! response items) is read from its `user_message` / `agent_message` events, as messages. A fork's path runs
//! through its parent's lines up to the fork point, so inheritance needs nothing here.

use serde_json::{json, Map, Value};

use super::{entries, Codex, Kind};
use crate::session::entry::{EntryIdx, EntryType};
use crate::session::format::Unreadable;
use crate::session::projection::{ProjectedEntry, Projection};
use crate::session::Session;

/// The key the client adds to items in its files and takes out of its requests.
const PASSTHROUGH: &str = "internal_chat_message_metadata_passthrough";

/// An item as it is sent.
pub fn sent(item: &Value) -> Value {
    into_sent(item.clone())
}

/// [`sent`] of an item that is not needed after: the item itself, less the key.
fn into_sent(mut item: Value) -> Value {
    if let Value::Object(m) = &mut item {
        m.remove(PASSTHROUGH);
    }
    item
}

/// The item of a response-item line: its `payload`, or (older rollouts) the line itself.
pub fn item_of(line: &Value) -> &Value {
    match line.get("payload") {
        Some(p) if line.get("type").and_then(Value::as_str) == Some("response_item") => p,
        _ => line,
    }
}

/// The item a line adds to the conversation: a response item, or (a thread written as
/// events only) a user or agent message event as the message it stands for.
pub fn conversation_item(s: &Session, c: &Codex, i: EntryIdx, line: &Value) -> Option<Value> {
    if c.items[i.get()].kind.is_item() {
        return Some(item_of(line).clone());
    }
    event_item(s, c, i, line)
}

/// [`conversation_item`] of a line that is not needed after: a response item is moved out
/// of it, not copied (a projection reads hundreds of them, some large).
fn take_conversation_item(s: &Session, c: &Codex, i: EntryIdx, mut line: Value) -> Option<Value> {
    if !c.items[i.get()].kind.is_item() {
        return event_item(s, c, i, &line);
    }
    if line.get("type").and_then(Value::as_str) == Some("response_item") {
        if let Some(p) = line.get_mut("payload") {
            return Some(p.take());
        }
    }
    Some(line)
}

/// The message a user or agent message event stands for (a thread written as events only).
fn event_item(s: &Session, c: &Codex, i: EntryIdx, line: &Value) -> Option<Value> {
    let kind = c.items[i.get()].kind;
    if s.entries[i].kind != EntryType::Message {
        return None;
    }
    let text = line.pointer("/payload/message").cloned().unwrap_or_default();
    match kind {
        Kind::EventUser => {
            Some(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}))
        }
        Kind::EventAgent => {
            Some(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}))
        }
        _ => None,
    }
}

/// What a `compacted` line puts in place of the history before it.
fn replacement(line: &Value, before: &[Value]) -> Vec<Value> {
    let p = line.get("payload").unwrap_or(line);
    if let Some(Value::Array(h)) = p.get("replacement_history") {
        return h.iter().map(sent).collect();
    }
    let mut out: Vec<Value> = before
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
        .filter(|i| i.get("role").and_then(Value::as_str) == Some("user"))
        .cloned()
        .collect();
    if let Some(summary) = p.get("message").and_then(Value::as_str) {
        out.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}));
    }
    out
}

pub fn project(s: &Session, c: &Codex, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
    let Some(leaf) = leaf else { return Ok(Projection { responses: Some(Vec::new()), ..Default::default() }) };
    let path = s.path_to(leaf);
    let mut input: Vec<Value> = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    let mut projected: Vec<ProjectedEntry> = Vec::new();
    let mut names = entries::Names::default();
    let mut model = None;
    // Nothing before the last compaction on the path is sent: start there (the model is
    // the last turn's, wherever it was named).
    let from = path.iter().rposition(|&i| c.items[i.get()].kind == Kind::Compacted).unwrap_or(0);
    if let Some(&t) = path[..from].iter().rev().find(|&&i| c.items[i.get()].kind == Kind::TurnContext) {
        if let Some(m) = c.line(s, t)?.pointer("/payload/model").and_then(Value::as_str) {
            model = Some(json!({"provider": "openai", "modelId": m}));
        }
    }
    for &i in &path[from..] {
        let kind = c.items[i.get()].kind;
        let events = s.entries[i].kind == EntryType::Message && !kind.is_item();
        if !(kind.is_item() || events || kind == Kind::Compacted || kind == Kind::TurnContext) {
            continue;
        }
        let line = c.line(s, i)?;
        if kind == Kind::TurnContext {
            if let Some(m) = line.pointer("/payload/model").and_then(Value::as_str) {
                model = Some(json!({"provider": "openai", "modelId": m}));
            }
            continue;
        }
        let start = messages.len();
        if kind == Kind::Compacted {
            input = replacement(&line, &input);
            messages.clear();
            projected.clear();
            let t = entries::time_of(&line);
            for item in &input {
                messages.extend(entries::message_of(item, t.clone(), &mut names, c.model(i)));
            }
            projected.push(ProjectedEntry { entry: i, messages: 0..messages.len(), edit: None });
            continue;
        }
        let time = entries::time_of(&line);
        let Some(item) = take_conversation_item(s, c, i, line) else { continue };
        messages.extend(entries::message_of(&item, time, &mut names, c.model(i)));
        input.push(into_sent(item));
        projected.push(ProjectedEntry { entry: i, messages: start..messages.len(), edit: None });
    }
    answer_unanswered(&mut input);
    if let Some(text) = &c.thread(leaf).instructions {
        input.insert(0, developer(text));
    }
    Ok(Projection {
        leaf: Some(leaf),
        path,
        thinking_level: None,
        model,
        entries: projected,
        messages,
        anthropic: None,
        responses: Some(input),
        settings: None,
    })
}

/// A call the history holds no output for is answered `aborted` right after it, as the client
/// does when it resumes there (its output item has an id found in no file; pisces writes
/// none).
fn answer_unanswered(input: &mut Vec<Value>) {
    let call_id = |v: &Value| v.get("call_id").and_then(Value::as_str).map(str::to_string);
    let ty = |v: &Value| v.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    let answered: std::collections::HashSet<String> =
        input.iter().filter(|v| super::load::is_output(&ty(v))).filter_map(call_id).collect();
    let mut k = 0;
    while k < input.len() {
        let t = ty(&input[k]);
        if let (true, Some(id)) = (super::load::is_call(&t), call_id(&input[k])) {
            if !answered.contains(&id) {
                let output = if t == "custom_tool_call" { "custom_tool_call_output" } else { "function_call_output" };
                input.insert(k + 1, json!({"type": output, "call_id": id, "output": "aborted"}));
                k += 1;
            }
        }
        k += 1;
    }
}

/// The developer message a request starts with.
fn developer(text: &str) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "message".into());
    m.insert("role".into(), "developer".into());
    m.insert("content".into(), json!([{"type": "input_text", "text": text}]));
    Value::Object(m)
}
