//! Rollout lines in the common (pi) entry shape, what `check` finds in them, and Codex's
//! tools as pi's.
//!
//! | rollout line | common shape |
//! |---|---|
//! | `response_item` `message` user / assistant | `message`, role `user` / `assistant` (`text` blocks) |
//! | `response_item` `message` developer | `message`, role `custom` (`customType` `codex:developer`) |
//! | `reasoning` | `message`, role `assistant`, one `thinking` block (the summary) |
//! | `function_call`, `custom_tool_call`, … | `message`, role `assistant`, one `toolCall` block |
//! | `function_call_output`, … | `message`, role `toolResult` (`toolName` from its call) |
//! | `compacted` | `compaction` (its `message` as the summary) |
//! | anything else | `custom`, `customType` `codex:<type>` (events: `codex:event_msg:<type>`), the line as `data` |

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::context::item_of;
use super::{Codex, Kind};
use crate::session::check::{Finding, Level};
use crate::session::entry::EntryIdx;
use crate::session::format::Unreadable;
use crate::session::{js, walk, Session};

/// call id -> tool name, for the results on a path.
#[derive(Default)]
pub struct Names(HashMap<String, String>);

/// A line's `timestamp` in ms, as pi's messages carry it.
pub fn time_of(line: &Value) -> Value {
    line.get("timestamp").and_then(Value::as_str).and_then(js::parse_date).map_or(Value::Null, js::number)
}

fn texts(content: Option<&Value>, kinds: &[&str]) -> Vec<Value> {
    match content {
        Some(Value::String(t)) => vec![json!({"type": "text", "text": t})],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| {
                let ty = b.get("type").and_then(Value::as_str)?;
                if kinds.contains(&ty) {
                    Some(json!({"type": "text", "text": b.get("text").cloned().unwrap_or_default()}))
                } else if ty.contains("image") {
                    Some(image(b))
                } else {
                    None
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An `input_image` block as pi's image: its `image_url` is a data URL when the client
/// read the file (`-i`, `view_image`); one that names the image elsewhere cannot be an
/// image of pi's and stays a mark in the text.
fn image(b: &Value) -> Value {
    let url = b.get("image_url").and_then(Value::as_str).unwrap_or_default();
    match url.strip_prefix("data:").and_then(|r| r.split_once(";base64,")) {
        Some((mime, data)) if !mime.is_empty() => json!({"type": "image", "data": data, "mimeType": mime}),
        _ => json!({"type": "text", "text": "[image]"}),
    }
}

fn assistant(content: Vec<Value>, stop: &str, t: Value) -> Value {
    json!({
        "role": "assistant",
        "content": content,
        "api": "openai-responses",
        "provider": "openai",
        "model": "",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"total": 0}},
        "stopReason": stop,
        "timestamp": t,
    })
}

/// A call's arguments as an object: a function call's JSON string parsed, a custom tool's
/// raw `input` as `{input}`.
pub fn call_arguments(item: &Value) -> Value {
    match item.get("arguments") {
        Some(Value::String(a)) => serde_json::from_str(a).unwrap_or_else(|_| json!({"arguments": a})),
        Some(v) => v.clone(),
        None => match item.get("input") {
            Some(i) => json!({"input": i}),
            None => item.get("action").cloned().unwrap_or_else(|| json!({})),
        },
    }
}

/// [`call_arguments`] of a call item given as its JSON text, read without making a `Value`
/// of the whole item (an output's row in the tree names its call: one read per output).
/// `None`: the text is not JSON.
pub fn call_arguments_raw(item: &str) -> Option<Value> {
    use serde_json::value::RawValue;
    /// A field's JSON text, `null` included (an `Option` would read `null` as absent, where
    /// `call_arguments` takes an `arguments: null` as the arguments).
    #[derive(Default)]
    struct Present<'a>(Option<&'a RawValue>);
    impl<'de: 'a, 'a> serde::Deserialize<'de> for Present<'a> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            <&RawValue>::deserialize(d).map(|r| Present(Some(r)))
        }
    }
    #[derive(serde::Deserialize)]
    struct Fields<'a> {
        #[serde(borrow, default)]
        arguments: Present<'a>,
        #[serde(borrow, default)]
        input: Present<'a>,
        #[serde(borrow, default)]
        action: Present<'a>,
    }
    let value = |r: &RawValue| serde_json::from_str::<Value>(r.get()).ok();
    let Ok(f) = serde_json::from_str::<Fields>(item) else {
        // Another shape (a repeated key, whose last value a `Value` keeps): read whole.
        return serde_json::from_str::<Value>(item).ok().map(|v| call_arguments(&v));
    };
    Some(match (f.arguments.0, f.input.0, f.action.0) {
        (Some(a), _, _) => match value(a)? {
            Value::String(a) => serde_json::from_str(&a).unwrap_or_else(|_| json!({"arguments": a})),
            v => v,
        },
        (None, Some(i), _) => json!({"input": value(i)?}),
        (None, None, Some(a)) => value(a)?,
        (None, None, None) => json!({}),
    })
}

/// What a call's output says, as text.
pub fn output_text(item: &Value) -> String {
    match item.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => {
            a.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        Some(Value::Object(o)) => match o.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => js::stringify(v),
            None => js::stringify(&Value::Object(o.clone())),
        },
        Some(v) => js::stringify(v),
        None => String::new(),
    }
}

/// The pi message a response item makes (none for item types pisces does not know); a
/// reply's carries `model`, the model of its turn.
pub fn message_of(item: &Value, t: Value, names: &mut Names, model: Option<&str>) -> Option<Value> {
    let mut m = message(item, t, names)?;
    if let (Some(model), Some("assistant")) = (model, m.get("role").and_then(Value::as_str)) {
        m["model"] = model.into();
    }
    Some(m)
}

fn message(item: &Value, t: Value, names: &mut Names) -> Option<Value> {
    let ty = item.get("type").and_then(Value::as_str)?;
    Some(match ty {
        "message" => match item.get("role").and_then(Value::as_str) {
            Some("assistant") => assistant(texts(item.get("content"), &["output_text", "text"]), "stop", t),
            Some("user") => {
                json!({"role": "user", "content": texts(item.get("content"), &["input_text", "text"]), "timestamp": t})
            }
            role => json!({
                "role": "custom",
                "customType": format!("codex:{}", role.unwrap_or("message")),
                "content": texts(item.get("content"), &["input_text", "text", "output_text"]),
                "display": false,
                "timestamp": t,
            }),
        },
        "reasoning" => {
            let summary: Vec<&str> = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .collect();
            let mut b = Map::new();
            b.insert("type".into(), "thinking".into());
            b.insert("thinking".into(), summary.join("\n\n").into());
            if let Some(sig) = item.get("encrypted_content").filter(|v| !v.is_null()) {
                b.insert("thinkingSignature".into(), sig.clone());
            }
            assistant(vec![Value::Object(b)], "stop", t)
        }
        // The server's own calls (a web search, an image made) have no output item and are not
        // calls pi could make: they stay as they are sent, as their JSON in a reply's text.
        "web_search_call" | "image_generation_call" => {
            assistant(vec![json!({"type": "text", "text": js::stringify(&super::context::sent(item))})], "stop", t)
        }
        t2 if super::load::is_call(t2) => {
            let id = item.get("call_id").or_else(|| item.get("id")).and_then(Value::as_str).unwrap_or_default();
            let name = item.get("name").and_then(Value::as_str).unwrap_or(t2);
            names.0.insert(id.to_string(), name.to_string());
            let call = json!({"type": "toolCall", "id": id, "name": name, "arguments": call_arguments(item)});
            assistant(vec![call], "toolUse", t)
        }
        t2 if super::load::is_output(t2) => {
            let id = item.get("call_id").and_then(Value::as_str).unwrap_or_default();
            let text = output_text(item);
            json!({
                "role": "toolResult",
                "toolCallId": id,
                "toolName": names.0.get(id).cloned().unwrap_or_default(),
                "content": [{"type": "text", "text": text}],
                "isError": exit_code(&text).is_some_and(|c| c != 0) || text.starts_with(PATCH_FAILED),
                "timestamp": t,
            })
        }
        _ => return None,
    })
}

/// Whether entry `i`'s message (of [`entry`]) is an assistant's, found by walking its line
/// rather than building the entry: `ls` asks it of every reply, for its model. As
/// [`message`] decides it: the item's `type`, and a message's `role`, the last of repeated
/// keys as a `Value` keeps them. `None`: a line [`Codex::line`] would not read, one with an
/// escaped key or value where one is read, or an entry that is not a response item; the
/// entry is built.
pub fn is_reply(s: &Session, c: &Codex, i: EntryIdx) -> Option<bool> {
    if !c.items[i.get()].kind.is_item() {
        return None;
    }
    reply_walked(s.raw_line(i))
}

/// [`is_reply`] of a response item's line.
fn reply_walked(raw: &[u8]) -> Option<bool> {
    crate::session::validate::serde_reads(raw)?;
    // A string value without escapes (`Some(None)`: not a string; `None`: escaped).
    let text = |at: Option<usize>| -> Option<Option<&[u8]>> {
        match at.filter(|&at| raw[at] == b'"') {
            Some(at) => super::load::plain_bytes(raw, at).map(|(s, _)| Some(s)),
            None => Some(None),
        }
    };
    let start = walk::skip_ws(raw, 0);
    if raw[start] != b'{' {
        return None;
    }
    let [ty, payload] = walk::last_values(raw, start, [b"type", b"payload"])?;
    let item = match (text(ty)?, payload) {
        (Some(b"response_item"), Some(p)) => p,
        _ => start,
    };
    if raw[item] != b'{' {
        return Some(false);
    }
    let [ty, role] = walk::last_values(raw, item, [b"type", b"role"])?;
    Some(match text(ty)? {
        Some(b"message") => text(role)? == Some(b"assistant"),
        Some(b"reasoning") => true,
        Some(t) => std::str::from_utf8(t).is_ok_and(super::load::is_call),
        None => false,
    })
}

/// How apply_patch's output starts when the patch does not apply (a success starts with
/// `Exit code: 0`).
pub const PATCH_FAILED: &str = "apply_patch verification failed";

/// The exit code an output reports (`Process exited with code N`, `Exit code: N`).
pub fn exit_code(text: &str) -> Option<i64> {
    for l in text.lines().take(8) {
        let rest = l.strip_prefix("Process exited with code ").or_else(|| l.strip_prefix("Exit code: "));
        if let Some(n) = rest.and_then(|r| r.trim().parse().ok()) {
            return Some(n);
        }
    }
    None
}

/// The name `Names` would hold for call `id` after every call on the path to `i`: the
/// last call with that id above `i` (a lone result names its call). Walks up from `i` and
/// stops at the first such call, nearly always the entry just before the result, so that a
/// result costs the lines between it and its call, not every call on its path (`grep`
/// decodes thousands of results of one long thread).
fn name_before(s: &Session, c: &Codex, i: EntryIdx, id: &str) -> Option<String> {
    let mut cur = s.parent(i);
    while let Some(k) = cur {
        if c.items[k.get()].kind == Kind::Call {
            if let Ok(line) = c.line(s, k) {
                let mut names = Names::default();
                message_of(item_of(&line), Value::Null, &mut names, None);
                if let Some(name) = names.0.remove(id) {
                    return Some(name);
                }
            }
        }
        cur = s.parent(k);
    }
    None
}

/// Entry `i` in the common shape.
pub fn entry(s: &Session, c: &Codex, i: EntryIdx) -> Result<Value, Unreadable> {
    let line = c.line(s, i)?;
    let kind = c.items[i.get()].kind;
    let mut out = Map::new();
    let parent = s.parent(i).map(|p| s.id_value(p)).unwrap_or(Value::Null);
    let message = match super::context::conversation_item(s, c, i, &line) {
        Some(item) => {
            let mut names = Names::default();
            if kind == Kind::Output {
                let id = item.get("call_id").and_then(Value::as_str).unwrap_or_default();
                if let Some(name) = name_before(s, c, i, id) {
                    names.0.insert(id.to_string(), name);
                }
            }
            message_of(&item, time_of(&line), &mut names, c.model(i))
        }
        None => None,
    };
    let ty = match (&message, kind) {
        (Some(_), _) => "message",
        (None, Kind::Compacted) => "compaction",
        _ => "custom",
    };
    out.insert("type".into(), ty.into());
    out.insert("id".into(), Value::String(s.display_id(i).into_owned()));
    out.insert("parentId".into(), parent);
    out.insert("timestamp".into(), line.get("timestamp").cloned().unwrap_or_default());
    match (message, kind) {
        (Some(m), _) => {
            out.insert("message".into(), m);
        }
        (None, Kind::Compacted) => {
            let summary = line.pointer("/payload/message").cloned().unwrap_or_default();
            out.insert("summary".into(), summary);
            out.insert("tokensBefore".into(), Value::Null);
            out.insert("firstKeptEntryId".into(), Value::Null);
        }
        _ => {
            out.insert("customType".into(), format!("codex:{}", type_label(&line)).into());
            out.insert("data".into(), line);
        }
    }
    Ok(Value::Object(out))
}

/// `event_msg:task_complete`, `turn_context`, `response_item:web_search_call`: what a line is.
pub fn type_label(line: &Value) -> String {
    let ty = line.get("type").and_then(Value::as_str).or_else(|| line.get("record_type").and_then(Value::as_str));
    let sub = line.pointer("/payload/type").and_then(Value::as_str);
    match (ty, sub) {
        (Some(t), Some(s)) => format!("{t}:{s}"),
        (Some(t), None) => t.to_string(),
        (None, _) if line.get("instructions").is_some() => "session_meta".to_string(),
        (None, _) => "line".to_string(),
    }
}

/// `user: fix the tests`, `[exec_command: npm test]`: one line about entry `i`.
pub fn preview(s: &Session, c: &Codex, i: EntryIdx, max: usize) -> String {
    let text = match super::rows::row_text(s, c, i) {
        Ok(t) => t.to_plain(),
        Err(_) => "(unreadable)".to_string(),
    };
    crate::session::text::one_line(&text, max)
}

/// Codex's tools as pi's, for diff's files and commands.
pub fn pi_tool(name: &str, args: &Value) -> Option<(&'static str, Value)> {
    match name {
        "exec_command" => Some(("bash", json!({"command": args.get("cmd").cloned().unwrap_or_default()}))),
        "shell" | "container.exec" | "local_shell" => {
            let cmd = match args.get("command") {
                Some(Value::Array(a)) => {
                    let parts: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                    // `["bash", "-lc", "npm test"]` ran `npm test`.
                    match parts.as_slice() {
                        [_, "-lc" | "-c", cmd] => cmd.to_string(),
                        _ => parts.join(" "),
                    }
                }
                Some(Value::String(s)) => s.clone(),
                _ => return None,
            };
            Some(("bash", json!({"command": cmd})))
        }
        "shell_command" => Some(("bash", json!({"command": args.get("command").cloned().unwrap_or_default()}))),
        "apply_patch" => {
            let patch = args.get("input").or_else(|| args.get("patch")).and_then(Value::as_str)?;
            let (kind, path) = patch_files(patch).into_iter().next()?;
            Some(if kind == "Add" {
                ("write", json!({"path": path, "content": added_text(patch)}))
            } else {
                ("edit", json!({"path": path, "edits": []}))
            })
        }
        _ => None,
    }
}

/// The files a patch touches: `("Update" | "Add" | "Delete", path)`, in order.
pub fn patch_files(patch: &str) -> Vec<(&str, &str)> {
    patch
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("*** ")?;
            let (kind, path) = rest.split_once(" File: ")?;
            matches!(kind, "Update" | "Add" | "Delete").then_some((kind, path.trim()))
        })
        .collect()
}

/// The text of the first file a patch adds (its `+` lines).
fn added_text(patch: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in patch.lines() {
        if l.starts_with("*** Add File: ") {
            if inside {
                break;
            }
            inside = true;
        } else if inside {
            match l.strip_prefix('+') {
                Some(t) => {
                    out.push_str(t);
                    out.push('\n');
                }
                None => break,
            }
        }
    }
    out
}

/// What only the whole family shows: ordinal gaps, fork points that do not fit their
/// parent, calls without an output.
pub fn findings(s: &Session, c: &Codex) -> Vec<Finding> {
    let mut out = Vec::new();
    // What is read otherwise than as items, or not sent.
    for (t, th) in c.threads.iter().enumerate() {
        let of = |k: Kind| th.entries.clone().filter(|&e| c.items[e].kind == k).count();
        let events = th.entries.clone().filter(|&e| {
            let k = c.items[e].kind;
            (k == Kind::EventUser || k == Kind::EventAgent)
                && s.entries[EntryIdx::new(e)].kind == crate::session::EntryType::Message
        });
        let file = if t == 0 { String::new() } else { format!("{}: ", th.file_name()) };
        let n = events.count();
        if n > 0 {
            out.push(Finding {
                level: Level::Info,
                kind: "events-as-conversation",
                line: None,
                message: format!(
                    "{file}no response items: the {n} user_message / agent_message events are read as the conversation"
                ),
                hint: "an older Codex wrote this thread as events; its context is rebuilt from them",
            });
        }
        let ghosts = of(Kind::Ghost);
        if ghosts > 0 {
            out.push(Finding {
                level: Level::Info,
                kind: "ghost-snapshot",
                line: None,
                message: format!(
                    "{file}{ghosts} ghost_snapshot item{} shown in the tree, not sent to the model",
                    if ghosts == 1 { "" } else { "s" }
                ),
                hint: "the client's undo points; nothing is wrong with the file",
            });
        }
    }
    let th = &c.threads[0];
    // Ordinals go up by one a line.
    let mut prev: Option<(u64, EntryIdx)> = None;
    for k in th.entries.clone() {
        let i = EntryIdx::new(k);
        let Some(o) = c.items[k].ordinal else { continue };
        if let Some((p, _)) = prev {
            if o != p + 1 {
                out.push(Finding {
                    level: Level::Warning,
                    kind: "ordinal-gap",
                    line: Some(s.entries[i].line),
                    message: format!(
                        "ordinal {o} follows {p}: {}",
                        if o > p { "lines are missing" } else { "ordinals go back" }
                    ),
                    hint: "Codex numbers every line of a thread; lines were deleted or the file was spliced",
                });
            }
        }
        prev = Some((o, i));
    }
    // The fork point against the parent's file.
    if let Some(b) = &th.base {
        if let Some(p) = c.threads.iter().find(|t| t.id.as_deref() == Some(b.thread.as_str())) {
            let data = s.data();
            let bytes = &data[p.range.clone()];
            let next = p.entries.clone().filter_map(|k| c.items[k].ordinal).max().map(|m| m + 1);
            let first = p.entries.clone().find_map(|k| c.items[k].ordinal);
            if next.is_some_and(|n| b.end_ordinal > n) || first.is_some_and(|f| b.end_ordinal < f && p.base.is_none()) {
                out.push(Finding {
                    level: Level::Error,
                    kind: "fork-point-past-end",
                    line: th.entries.clone().next().map(|k| s.entries[EntryIdx::new(k)].line),
                    message: format!(
                        "history_base.end_ordinal_exclusive {} is past the end of {} (its last ordinal is {})",
                        b.end_ordinal,
                        p.file_name(),
                        next.map_or(0, |n| n - 1)
                    ),
                    hint: "the parent's rollout was cut after the fork was made; the inherited history is incomplete",
                });
            }
            if let Some(off) = b.end_byte {
                let off = off as usize;
                let at_line_start = off == 0 || (off <= bytes.len() && bytes.get(off - 1) == Some(&b'\n'));
                if !at_line_start {
                    out.push(Finding {
                        level: Level::Error,
                        kind: "fork-offset-not-line-start",
                        line: th.entries.clone().next().map(|k| s.entries[EntryIdx::new(k)].line),
                        message: format!(
                            "history_base.end_byte_offset {off} is {} of {} ({} bytes)",
                            if off > bytes.len() { "past the end" } else { "not at a line start" },
                            p.file_name(),
                            bytes.len()
                        ),
                        hint: "the parent's rollout was rewritten after the fork was made",
                    });
                }
            }
        }
    }
    // Calls without an output anywhere on the thread's history.
    if let Some(leaf) = s.default_leaf() {
        let path = s.path_to(leaf);
        let mut answered: HashSet<String> = HashSet::new();
        let mut calls: Vec<(EntryIdx, String, String)> = Vec::new();
        for &i in &path {
            let kind = c.items[i.get()].kind;
            if kind != Kind::Call && kind != Kind::Output {
                continue;
            }
            let Ok(line) = c.line(s, i) else { continue };
            let item = item_of(&line);
            let Some(id) = item.get("call_id").and_then(Value::as_str) else { continue };
            if kind == Kind::Output {
                answered.insert(id.to_string());
            } else {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
                calls.push((i, id.to_string(), name.to_string()));
            }
        }
        for (i, id, name) in calls {
            if !answered.contains(&id) {
                out.push(Finding {
                    level: Level::Warning,
                    kind: "unanswered-call",
                    line: (c.items[i.get()].thread == 0).then(|| s.entries[i].line),
                    message: format!("the {name} call {id} has no output on this thread's history"),
                    hint: "the turn was interrupted mid-call (or the output's line was lost)",
                });
            }
        }
    }
    out
}

/// Whether a user message is context the client made (`<environment_context>`, the
/// project's instructions), not the user's words: pi makes its own.
fn client_context(item: &Value) -> bool {
    let text: String = item
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let t = text.trim_start();
    ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions"].iter().any(|p| t.starts_with(p))
}

/// `pisces convert --to pi`: the thread's history at `leaf` as pi entries. The items of one
/// reply (reasoning, text, calls: consecutive items the model wrote) are one assistant
/// message, as the model wrote them; Codex's tools named as pi's where they correspond;
/// developer messages and the client's context messages left out (pi makes its own); a
/// `compacted` line as pi's compaction, whose kept part starts at the next entry.
pub fn pi_entries(s: &Session, c: &Codex, leaf: EntryIdx) -> Result<Vec<Value>, Unreadable> {
    let path = s.path_to(leaf);
    let mut out: Vec<Value> = Vec::new();
    let mut names = Names::default();
    let mut pending_compaction: Option<usize> = None;
    let mut open_reply = false;
    for &i in &path {
        let kind = c.items[i.get()].kind;
        if kind == Kind::Compacted {
            let mut e = entry(s, c, i)?;
            e["tokensBefore"] = 0.into();
            pending_compaction = Some(out.len());
            out.push(e);
            open_reply = false;
            continue;
        }
        let line = c.line(s, i)?;
        let Some(item) = super::context::conversation_item(s, c, i, &line) else { continue };
        let item = &item;
        let role = item.get("role").and_then(Value::as_str);
        if kind == Kind::Message
            && (role != Some("user") && role != Some("assistant") || role == Some("user") && client_context(item))
        {
            continue;
        }
        let Some(mut m) = message_of(item, time_of(&line), &mut names, c.model(i)) else { continue };
        // Calls as pi's tools.
        if let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) {
            for b in blocks.iter_mut().filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")) {
                let name = b.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                let args = b.get("arguments").cloned().unwrap_or_default();
                // A patch is kept as it is: pi's edit needs the old and new texts it does not hold.
                if let Some((pi, pi_args)) = pi_tool(&name, &args).filter(|_| name != "apply_patch") {
                    b["name"] = pi.into();
                    b["arguments"] = pi_args;
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                    names.0.insert(id, pi.to_string());
                }
            }
        }
        if m.get("role").and_then(Value::as_str) == Some("toolResult") {
            let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or_default();
            if let Some(n) = names.0.get(id) {
                m["toolName"] = n.clone().into();
            }
        }
        let is_reply = m.get("role").and_then(Value::as_str) == Some("assistant");
        if is_reply && open_reply {
            // The same reply: its blocks join the message before.
            if let Some(prev) = out.last_mut().and_then(|p| p.get_mut("message")) {
                let more = m.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
                if let Some(a) = prev.get_mut("content").and_then(Value::as_array_mut) {
                    a.extend(more);
                }
                if m.get("stopReason").and_then(Value::as_str) == Some("toolUse") {
                    prev["stopReason"] = "toolUse".into();
                }
                continue;
            }
        }
        open_reply = is_reply;
        let mut e = Map::new();
        e.insert("type".into(), "message".into());
        e.insert("id".into(), Value::String(s.display_id(i).into_owned()));
        e.insert("parentId".into(), out.last().and_then(|p| p.get("id")).cloned().unwrap_or(Value::Null));
        e.insert("timestamp".into(), line.get("timestamp").cloned().unwrap_or_default());
        e.insert("message".into(), m);
        if let Some(k) = pending_compaction.take() {
            out[k]["firstKeptEntryId"] = e["id"].clone();
        }
        out.push(Value::Object(e));
    }
    // Each entry the child of the one before (a compaction too).
    for k in 1..out.len() {
        let prev = out[k - 1]["id"].clone();
        out[k]["parentId"] = prev;
    }
    if let Some(first) = out.first_mut() {
        first["parentId"] = Value::Null;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the message of a response item's line is an assistant's, the line parsed
    /// whole (`None`: serde_json does not read it).
    fn reply_parsed(raw: &str) -> Option<bool> {
        let line: Value = serde_json::from_str(raw).ok()?;
        let m = message(item_of(&line), Value::Null, &mut Names::default());
        Some(m.is_some_and(|m| m.get("role").and_then(Value::as_str) == Some("assistant")))
    }

    #[test]
    fn a_reply_walked_is_a_reply_parsed() {
        let mut usual = Vec::new();
        for ty in ["message", "reasoning", "function_call", "custom_tool_call", "function_call_output", "other"] {
            for role in [r#""assistant""#, r#""user""#, r#""developer""#, "null", "3"] {
                usual.push(format!(
                    r#"{{"timestamp":"t","type":"response_item","payload":{{"type":"{ty}","role":{role},"content":[{{"type":"output_text","text":"a \"b\" é"}}]}}}}"#
                ));
                // An older rollout: the item is the line.
                usual.push(format!(r#"{{"type":"{ty}","role":{role},"content":[]}}"#));
                usual.push(format!(
                    r#"{{"type":"response_item","payload":{{"role":{role},"type":"{ty}"}},"x":[1,{{}}]}}"#
                ));
                // Repeated keys: the last one counts, as in a `Value`.
                usual.push(format!(
                    r#"{{"type":"response_item","payload":{{"type":"{ty}","role":"user","role":{role}}}}}"#
                ));
                usual.push(format!(
                    r#"{{"type":"response_item","payload":{{"type":"message"}},"payload":{{"type":"{ty}","role":{role}}}}}"#
                ));
            }
        }
        for line in [
            r#"{"type":"response_item","payload":null}"#,
            r#"{"type":"response_item","payload":"x"}"#,
            r#"{"type":"response_item","payload":[{"type":"reasoning"}]}"#,
            r#"{"type":"response_item"}"#,
            r#"{"type":5,"payload":{"type":"reasoning"}}"#,
            r#"{"type":"response_item","payload":{"type":{"a":1}}}"#,
            r#"{"type":"event_msg","payload":{"type":"reasoning"}}"#,
        ] {
            usual.push(line.to_string());
        }
        for line in &usual {
            let w = reply_walked(line.as_bytes());
            assert!(w.is_some(), "a usual line is walked: {line}");
            assert_eq!(w, reply_parsed(line), "{line}");
        }
        // Replies: an assistant's message (5 lines), and every reasoning and call (3 × 25).
        assert_eq!(usual.iter().filter(|l| reply_walked(l.as_bytes()) == Some(true)).count(), 80);
        // Left to the parse: escapes where a key or a read value is, not JSON, not UTF-8,
        // a lone surrogate, not an object.
        let odd: [&[u8]; 8] = [
            br#"{"type":"response_item","payload":{"type":"message","r\u006fle":"user"}}"#,
            br#"{"type":"response_item","payload":{"type":"message","role":"assist\u0061nt"}}"#,
            br#"{"type":"response\u005fitem","payload":{"type":"reasoning"}}"#,
            br#"{"type":"response_item","payload":{"type":"reasoning"}"#,
            b"{\"type\":\"response_item\",\"payload\":{\"type\":\"reasoning\",\"x\":\"\xff\"}}",
            br#"{"type":"response_item","payload":{"type":"reasoning","x":"\ud800"}}"#,
            br#"[{"type":"reasoning"}]"#,
            br#""reasoning""#,
        ];
        for line in odd {
            assert_eq!(reply_walked(line), None, "{}", String::from_utf8_lossy(line));
        }
    }

    /// The model an entry names is its bound's (`Dialect::model_bound`), `""` or none, on
    /// every entry of the Codex corpora (each rollout read with its family), and of a family
    /// whose lines were made to need the entry built (escaped keys, lines that are not JSON).
    #[test]
    fn an_entry_names_no_model_but_its_bound() {
        let mut files = crate::corpus::jsonl_files(&["codex-0.171.0", "codex-older"]);
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("rollout-made.jsonl");
        let source = std::fs::read_to_string(&files[0]).unwrap();
        let mut odd = String::new();
        for line in source.lines() {
            odd.push_str(line);
            odd.push('\n');
            if line.contains(r#""role":"assistant""#) {
                odd.push_str(&line.replacen(r#""role":"assistant""#, r#""r\u006fle":"assistant""#, 1));
                odd.push('\n');
                odd.push_str(&line[..line.len() / 2]);
                odd.push('\n');
            }
        }
        std::fs::write(&made, odd).unwrap();
        files.push(made);
        let (mut replies, mut named) = (0, 0);
        for path in files {
            let Ok(source) = crate::session::Source::open(&path) else { continue };
            let source = crate::session::open::with_companions(source, &super::super::CODEX);
            let Ok(s) = super::super::load::load(&source, &Default::default(), super::super::load::Validate::Lazily)
            else {
                continue;
            };
            let d = s.dialect();
            for i in s.entries.indices() {
                let bound = d.model_bound(&s, i).expect("Codex knows each entry's bound");
                if let Ok(Some(m)) = d.model(&s, i) {
                    replies += 1;
                    named += usize::from(!m.is_empty());
                    assert!(m.is_empty() || Some(m.as_str()) == bound, "{}: {m} beyond {bound:?}", path.display());
                }
            }
        }
        assert!(replies > 100 && named > 100, "{replies} replies, {named} naming a model");
    }
}
