//! Reading Codex rollouts into the common index (docs/codex-format.md §1).
//!
//! Every line of a rollout is an entry, in file order, each the child of the line before:
//! a thread is linear (resuming appends to its file). A fork is a file of its own whose
//! `session_meta` names the parent thread and the ordinal it forked at
//! (`history_base`); its first line hangs under the parent's last line before that ordinal,
//! so a thread and its forks, joined into one source ([`super::family`]), are one tree with
//! a branch at each fork point. Older rollouts (no `payload` wrapper, no ordinals, no
//! `session_meta`) read the same way, one entry a line.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Codex, Item, Kind, Thread};
use crate::session::entry::{EntryIdx, EntryMeta, EntryType, LineNo, Role, StrRef};
use crate::session::index::{ChildOrder, Header, Parts};
use crate::session::{Diagnostic, LoadError, Problem, Session, Severity, Source};

/// What the index reads of each line.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(default)]
    ordinal: Option<Value>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(borrow, default)]
    record_type: Option<Cow<'a, str>>,
    /// An old rollout's first line: `{id, timestamp, instructions}`.
    #[serde(default)]
    instructions: Option<Value>,
}

/// What the index reads of a response item.
#[derive(Deserialize, Default)]
struct ItemHead<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<Value>,
}

/// Response item types that a model's reply is made of (a call or what it says).
const CALLS: &[&str] = &[
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "image_generation_call",
    "mcp_tool_call",
];
/// Response item types that answer a call.
const OUTPUTS: &[&str] =
    &["function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output"];

pub fn is_call(ty: &str) -> bool {
    CALLS.contains(&ty)
}

pub fn is_output(ty: &str) -> bool {
    OUTPUTS.contains(&ty)
}

/// What a response item is, for the index.
fn item_kind(ty: &str, role: Option<&str>) -> (Kind, EntryType, Role) {
    match ty {
        "message" => {
            let role = match role {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("developer" | "system") => Role::System,
                _ => Role::Other,
            };
            (Kind::Message, EntryType::Message, role)
        }
        "reasoning" => (Kind::Reasoning, EntryType::Message, Role::Assistant),
        t if CALLS.contains(&t) => (Kind::Call, EntryType::Message, Role::Assistant),
        t if OUTPUTS.contains(&t) => (Kind::Output, EntryType::Message, Role::ToolResult),
        // The client's undo points: written as items, never sent.
        "ghost_snapshot" => (Kind::Ghost, EntryType::Custom, Role::None),
        _ => (Kind::Other, EntryType::Other, Role::None),
    }
}

/// One line, read.
struct Scanned {
    meta: EntryMeta,
    item: Item,
    id: Option<String>,
}

fn scan_line(raw: &[u8], start: usize, line: LineNo, thread: u32) -> Result<Scanned, String> {
    let head: Head = serde_json::from_slice(raw).map_err(|e| e.to_string())?;
    let ordinal = head.ordinal.as_ref().and_then(Value::as_u64);
    let ty = head.ty.as_deref().unwrap_or_default();
    // The item: the payload of a `response_item`, or (older rollouts) the line itself.
    let item_raw: Option<&str> = match (ty, head.payload) {
        ("response_item", Some(p)) => Some(p.get()),
        (_, None) if !ty.is_empty() && head.record_type.is_none() => std::str::from_utf8(raw).ok(),
        _ => None,
    };
    let mut id = None;
    let (kind, etype, role) = match ty {
        "session_meta" => (Kind::Meta, EntryType::Other, Role::None),
        "compacted" => (Kind::Compacted, EntryType::Compaction, Role::None),
        // What the client shows and keeps for itself, hidden by the tree's default filter.
        "event_msg" => {
            let h: ItemHead = head.payload.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
            match h.ty.as_deref() {
                Some("token_count") => (Kind::TokenCount, EntryType::Custom, Role::None),
                Some("user_message") => (Kind::EventUser, EntryType::Custom, Role::None),
                Some("agent_message") => (Kind::EventAgent, EntryType::Custom, Role::None),
                _ => (Kind::Event, EntryType::Custom, Role::None),
            }
        }
        "token_usage_record" => (Kind::TokenRecord, EntryType::Custom, Role::None),
        "turn_context" => (Kind::TurnContext, EntryType::Custom, Role::None),
        "world_state" => (Kind::State, EntryType::Custom, Role::None),
        _ if head.record_type.is_some() => (Kind::State, EntryType::Custom, Role::None),
        "" if head.instructions.is_some() || head.payload.is_none() => (Kind::Meta, EntryType::Other, Role::None),
        _ => match item_raw {
            Some(r) => {
                let h: ItemHead = serde_json::from_str(r).unwrap_or_default();
                id = h.id.as_ref().and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
                item_kind(h.ty.as_deref().unwrap_or_default(), h.role.as_deref())
            }
            None => (Kind::Other, EntryType::Other, Role::None),
        },
    };
    let item = Item { thread, ordinal, kind, model: 0, counted: false };
    Ok(Scanned { meta: EntryMeta::new(start, raw.len(), line, etype, role), item, id })
}

/// The name of a line without an id: the random tail of its thread's id and its ordinal
/// (`9cac33b1d38d:29`), or its line in the file (`9cac33b1d38d:L12`, `L12` without a thread).
fn synthetic_id(thread: &Option<String>, ordinal: Option<u64>, own_line: usize) -> String {
    let tail = thread.as_deref().map(|t| t.rsplit('-').next().unwrap_or(t));
    match (tail, ordinal) {
        (Some(t), Some(o)) => format!("{t}:{o}"),
        (Some(t), None) => format!("{t}:L{own_line}"),
        (None, _) => format!("L{own_line}"),
    }
}

/// The value at `pointer` in a line.
fn field(raw: &[u8], pointer: &str) -> Option<Value> {
    let v: Value = serde_json::from_slice(raw).ok()?;
    v.pointer(pointer).cloned()
}

/// What a `session_meta` says.
fn read_meta(raw: &[u8]) -> Map<String, Value> {
    let v: Value = serde_json::from_slice(raw).unwrap_or_default();
    match v.get("payload") {
        Some(Value::Object(p)) => p.clone(),
        // An old first line is the meta itself.
        _ => v.as_object().cloned().unwrap_or_default(),
    }
}

fn thread_of(meta: &Map<String, Value>, file: String, path: Option<PathBuf>, range: Range<usize>) -> Thread {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let base = meta.get("history_base");
    Thread {
        id: s(meta.get("id")),
        file,
        path,
        range,
        entries: 0..0,
        base: base.and_then(|b| {
            Some(super::Base {
                thread: s(b.get("thread_id"))?,
                end_ordinal: b.get("end_ordinal_exclusive").and_then(Value::as_u64)?,
                end_byte: b.get("end_byte_offset").and_then(Value::as_u64),
            })
        }),
        instructions: s(meta.get("base_instructions").and_then(|b| b.get("text")))
            .or_else(|| s(meta.get("instructions"))),
        cwd: s(meta.get("cwd")),
        line_base: 0,
    }
}

pub fn load<'a>(source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
    let data = source.bytes();
    if data.is_empty() {
        return Err(LoadError::Empty { name: source.name.clone() });
    }
    let mut entries: Vec<EntryMeta> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let mut owned: Vec<String> = Vec::new();
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut threads: Vec<Thread> = Vec::new();
    let mut models: Vec<String> = Vec::new();
    let mut header = Header::default();
    // Lines are numbered on through the joined files, so that each entry's line is unique
    // and ordered; a file's own line is `line - Thread::line_base`.
    let mut line_no = 0u32;
    let parts = source.parts();
    // Each file's thread id, from its first line, for the names of its lines.
    let parts_ids: Vec<Option<String>> = parts
        .iter()
        .map(|(_, _, r)| {
            let b = &data[r.clone()];
            super::family::thread_and_parent(&b[..memchr::memchr(b'\n', b).unwrap_or(b.len())]).map(|(t, _)| t)
        })
        .collect();
    for (t, (name, path, range)) in parts.into_iter().enumerate() {
        let first_entry = entries.len();
        let line_base = line_no;
        let bytes = &data[range.clone()];
        let mut meta = Map::new();
        // The model of the turn each line is in (`turn_context.model`).
        let mut model = 0u32;
        // Token counts are events: the same total may be reported more than once.
        let mut last_total: Option<Value> = None;
        let mut off = range.start;
        let n_lines = memchr::memchr_iter(b'\n', bytes).count() + usize::from(!bytes.ends_with(b"\n"));
        for (k, raw) in bytes.split(|&b| b == b'\n').take(n_lines).enumerate() {
            line_no += 1;
            let start = off;
            off += raw.len() + 1;
            let line = LineNo(line_no);
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) || exclude.contains(&line) {
                continue;
            }
            match scan_line(raw, start, line, t as u32) {
                Ok(mut sc) => {
                    match sc.item.kind {
                        Kind::Meta if meta.is_empty() => meta = read_meta(raw),
                        Kind::TurnContext => {
                            if let Some(m) = field(raw, "/payload/model").as_ref().and_then(Value::as_str) {
                                model = match models.iter().position(|x| x == m) {
                                    Some(k) => k as u32 + 1,
                                    None => {
                                        models.push(m.to_string());
                                        models.len() as u32
                                    }
                                };
                            }
                        }
                        Kind::TokenRecord => sc.item.counted = true,
                        Kind::TokenCount => {
                            let total = field(raw, "/payload/info/total_token_usage");
                            sc.item.counted = total.is_some() && total != last_total;
                            last_total = total;
                        }
                        _ => {}
                    }
                    sc.item.model = model;
                    // Lines without an id of their own (events, states, a reasoning item
                    // of an old version) are named by their thread and ordinal, which
                    // is unique in a family: `9cac33b1d38d:29`.
                    let id = sc.id.take().unwrap_or_else(|| synthetic_id(&parts_ids[t], sc.item.ordinal, k + 1));
                    sc.meta.id = StrRef::owned(owned.len());
                    owned.push(id);
                    entries.push(sc.meta);
                    items.push(sc.item);
                }
                Err(why) => {
                    let last = k + 1 == n_lines && !source.bytes()[..range.end].ends_with(b"\n");
                    let (kind, what) =
                        if last { (Problem::Truncated, "cut off") } else { (Problem::Malformed, "not JSON") };
                    diags.push(Diagnostic {
                        kind,
                        severity: Severity::Warning,
                        line: (t == 0).then_some(line),
                        message: format!(
                            "{}line {} is {what} ({why}); skipped, as Codex skips it",
                            if t == 0 { String::new() } else { format!("{name}: ") },
                            k + 1
                        ),
                    });
                }
            }
        }
        // A rollout without response items (older versions wrote some threads as events
        // only): its user and agent messages are the conversation.
        if !items[first_entry..].iter().any(|it| it.kind.is_item()) {
            for (k, it) in items.iter().enumerate().skip(first_entry) {
                let role = match it.kind {
                    Kind::EventUser => Role::User,
                    Kind::EventAgent => Role::Assistant,
                    _ => continue,
                };
                entries[k].kind = EntryType::Message;
                entries[k].role = role;
            }
        }
        // A rollout that records each response's usage counts those, not its events.
        if items[first_entry..].iter().any(|it| it.kind == Kind::TokenRecord) {
            for it in &mut items[first_entry..] {
                if it.kind == Kind::TokenCount {
                    it.counted = false;
                }
            }
        }
        let mut th = thread_of(&meta, name.to_string(), path.map(|p| p.to_path_buf()), range.clone());
        th.entries = first_entry..entries.len();
        th.line_base = line_base;
        if t == 0 {
            header = Header {
                id: th.id.clone().unwrap_or_default(),
                cwd: meta.get("cwd").cloned(),
                version: meta.get("cli_version").cloned(),
                parent_session: meta.get("forked_from_id").cloned(),
                line: None,
                raw: meta.clone(),
            };
        }
        threads.push(th);
    }
    if entries.is_empty() {
        return Err(LoadError::NotASession {
            name: source.name.clone(),
            line: None,
            format: "Codex",
            reason: "no line of it is a JSON object".into(),
            hint: None,
        });
    }
    link(&threads, &items, &mut entries, &mut diags);
    // The thread's end: the last line of the file asked for.
    let leaf = threads[0].entries.clone().last().map(EntryIdx::new);
    let dialect = Codex { threads, items, models };
    let parts = Parts {
        file: source.name.clone(),
        path: source.path.clone(),
        data,
        header,
        entries,
        owned,
        diagnostics: diags,
        dialect: Box::new(dialect),
        synthetic_ids: false,
    };
    let mut s = Session::build(parts, ChildOrder::File);
    s.set_default_leaf(leaf);
    Ok(s)
}

/// Each line under the one before it in its file; a fork's first line under its parent's
/// last line before the fork point. Lines name no parent: the parent's id is recorded as
/// each line's `parentId` for the index.
fn link(threads: &[Thread], items: &[Item], entries: &mut [EntryMeta], diags: &mut Vec<Diagnostic>) {
    for (t, th) in threads.iter().enumerate() {
        for k in th.entries.clone().skip(1) {
            entries[k].set_parent(Some(EntryIdx::new(k - 1)));
            entries[k].parent_id = entries[k - 1].id;
        }
        let Some(base) = &th.base else { continue };
        if th.entries.is_empty() {
            continue;
        }
        match super::fork_point(threads, items, &base.thread, base.end_ordinal, 0) {
            Some(p) => {
                entries[th.entries.start].set_parent(Some(p));
                entries[th.entries.start].parent_id = entries[p.get()].id;
            }
            None => {
                let parent_there = threads.iter().any(|o| o.id.as_deref() == Some(base.thread.as_str()));
                diags.push(Diagnostic {
                    kind: Problem::DanglingParent,
                    severity: Severity::Warning,
                    line: (t == 0).then_some(entries[th.entries.start].line),
                    message: if parent_there {
                        format!(
                            "{}a fork of thread {} at ordinal {}, which that thread's rollout does not reach; its history before the fork is missing",
                            prefix(t, th),
                            base.thread,
                            base.end_ordinal
                        )
                    } else {
                        format!(
                            "{}a fork of thread {} at ordinal {}, whose rollout (rollout-…-{}.jsonl) is not in this store; the history it inherits is missing",
                            prefix(t, th),
                            base.thread,
                            base.end_ordinal,
                            base.thread
                        )
                    },
                });
            }
        }
    }
}

fn prefix(t: usize, th: &Thread) -> String {
    if t == 0 {
        String::new()
    } else {
        format!("{}: ", th.file)
    }
}
