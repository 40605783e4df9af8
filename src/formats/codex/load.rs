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
use crate::session::entry::{EntryIdx, EntryMeta, EntryType, LineNo, Owned, Role, StrRef};
use crate::session::index::{ChildOrder, Header, Parts};
use crate::session::walk;
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
    /// The line's own id (a response item's).
    id: Option<String>,
}

/// The bytes of a string value at `b[i]` without escapes, and where it ends.
pub(super) fn plain_bytes(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let end = walk::plain_string_end(b, i)?;
    Some((&b[i + 1..end - 1], end))
}

/// A string value at `b[i]` without escapes.
fn plain_str(b: &[u8], i: usize) -> Option<&str> {
    plain_bytes(b, i).and_then(|(s, _)| crate::session::text::utf8(s))
}

/// The keys of the object at `b[i] == '{'`, each with where its value starts, in order; stops
/// when `want` says so (`false`) or at the end. `None`: not an object as expected.
fn keys<'b>(b: &'b [u8], i: usize, mut want: impl FnMut(&'b [u8], usize) -> bool) -> Option<()> {
    let mut stopped = false;
    let walked = walk::object(b, i, |key, v| {
        stopped = !want(key, v);
        if stopped {
            None
        } else {
            walk::value_end(b, v)
        }
    });
    (stopped || walked.is_some()).then_some(())
}

/// A line's `timestamp` as a date, read from the keys before its `payload` (where every
/// rollout line has it) instead of parsing the line: `stats` and `ls` ask for the time of
/// every entry, and a parse was most of their time on Codex files. On a JSON line, what
/// the parse of the whole line gives (`Codex::time`): the line has one `timestamp` key,
/// not after the payload; anything else (a key with an escape, no payload) is `None` here,
/// and the caller parses. A line that is not JSON is not validated away here: its time is
/// read from its head, as the index reads its type.
pub(super) fn head_time(raw: &[u8]) -> Option<Option<f64>> {
    let (mut at, mut more) = (None, false);
    keys(raw, walk::skip_ws(raw, 0), |key, v| match key {
        b"timestamp" => {
            more |= at.replace(v).is_some();
            true
        }
        b"payload" => false,
        _ => true,
    })?;
    let at = at.filter(|_| !more)?;
    // After the payload, a key repeating the timestamp (the parse's error) is not seen
    // here: the rest of the line is searched for it, as bytes, which a rollout's payload
    // almost never holds; when it does, the parse decides.
    let end = walk::value_end(raw, at)?;
    if crate::session::text::contains!(&raw[end..], b"\"timestamp\"") {
        return None;
    }
    // A plain string is its bytes (`walk::plain_text`); any other value, serde's.
    let plain = (raw[at] == b'"').then(|| walk::plain_text(raw, at + 1)).flatten();
    let t: Option<std::borrow::Cow<str>> = match plain {
        Some((text, _)) => Some(text.into()),
        None => serde_json::from_slice(&raw[at..end]).ok()?,
    };
    Some(t.as_deref().and_then(crate::session::js::parse_date))
}

/// A line's ordinal and type, and its payload's type, role and id.
type FastHead<'a> = (Option<u64>, &'a str, Option<(&'a str, Option<&'a str>, Option<&'a str>)>);

/// What the index needs of a line written as `{timestamp, ordinal, type, payload, …}` (every
/// line of a recent rollout), read from its first bytes without parsing the rest: a
/// 100 MB rollout is mostly tool output and texts that only the lines a command reads need.
/// `None`: another shape, which [`scan_line`] parses.
fn fast_head(raw: &[u8]) -> Option<FastHead<'_>> {
    let (mut ordinal, mut ty, mut payload) = (None, None, None);
    keys(raw, walk::skip_ws(raw, 0), |key, v| {
        match key {
            b"ordinal" => {
                let end = walk::value_end(raw, v).unwrap_or(v);
                ordinal = crate::session::text::utf8(&raw[v..end]).and_then(|n| n.parse().ok());
            }
            b"type" => ty = plain_str(raw, v),
            b"payload" => {
                payload = Some(v);
                return false;
            }
            _ => {}
        }
        true
    })?;
    let ty = ty?;
    let p = payload?;
    // Only an item's and an event's kind depends on their payload; the other lines' payloads
    // (a turn's settings, a usage record) have no `type` and would be walked to their end.
    if raw.get(p) != Some(&b'{') || !matches!(ty, "response_item" | "event_msg") {
        return Some((ordinal, ty, None));
    }
    // The payload's own `type`, and a response item's `role` and `id`, which come before
    // its content.
    let item = ty == "response_item";
    let (mut pty, mut role, mut id) = (None, None, None);
    keys(raw, p, |key, v| {
        match key {
            b"type" => pty = plain_str(raw, v),
            b"role" => role = plain_str(raw, v),
            b"id" => id = plain_str(raw, v),
            // Past these, the content: what was found is all there is before it.
            b"content" | b"summary" | b"output" | b"arguments" | b"input" | b"info" | b"message" | b"state" => {
                return false
            }
            _ => {}
        }
        let done = pty.is_some() && (!item || id.is_some() && (role.is_some() || pty != Some("message")));
        !done
    })?;
    Some((ordinal, ty, pty.map(|t| (t, role, id))))
}

fn scan_fast(raw: &[u8], start: usize, line: LineNo, thread: u32) -> Option<Scanned> {
    let (ordinal, ty, p) = fast_head(raw)?;
    let pty = p.map(|(t, _, _)| t);
    let (kind, etype, role) = match ty {
        "session_meta" => (Kind::Meta, EntryType::Other, Role::None),
        "compacted" => (Kind::Compacted, EntryType::Compaction, Role::None),
        "event_msg" => match pty {
            Some("token_count") => (Kind::TokenCount, EntryType::Custom, Role::None),
            Some("user_message") => (Kind::EventUser, EntryType::Custom, Role::None),
            Some("agent_message") => (Kind::EventAgent, EntryType::Custom, Role::None),
            _ => (Kind::Event, EntryType::Custom, Role::None),
        },
        "token_usage_record" => (Kind::TokenRecord, EntryType::Custom, Role::None),
        "turn_context" => (Kind::TurnContext, EntryType::Custom, Role::None),
        "world_state" => (Kind::State, EntryType::Custom, Role::None),
        "response_item" => item_kind(pty?, p.and_then(|(_, r, _)| r)),
        _ => return None,
    };
    let meta = EntryMeta::new(start, raw.len(), line, etype, role);
    // A response item's id is copied while its line is in the cache: the id table and every
    // printed path read it again later, and from the line that is a cache miss each time.
    let id = p.and_then(|(_, _, id)| id).filter(|s| ty == "response_item" && !s.is_empty()).map(str::to_string);
    let item = Item { thread, ordinal, kind, model: 0, counted: false };
    Some(Scanned { meta, item, id })
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

/// The name of a line without an id: the random tail of its thread's id (`tail`, the id's
/// last group) and its ordinal (`9cac33b1d38d:29`), or its line in the file
/// (`9cac33b1d38d:L12`, `L12` without a thread).
fn synthetic_id(owned: &mut Owned, tail: Option<&str>, ordinal: Option<u64>, own_line: u32) -> StrRef {
    match (tail, ordinal) {
        (Some(t), Some(o)) => owned.push_numbered(&[t, ":"], o),
        (Some(t), None) => owned.push_numbered(&[t, ":L"], own_line.into()),
        (None, _) => owned.push_numbered(&["L"], own_line.into()),
    }
}

/// The value at `pointer` in a line.
fn field(raw: &[u8], pointer: &str) -> Option<Value> {
    let v: Value = serde_json::from_slice(raw).ok()?;
    v.pointer(pointer).cloned()
}

/// The model a `turn_context` line names (`payload.model`), read without making a `Value`
/// of the line (a long thread has a turn context per turn).
fn turn_model(raw: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        payload: Option<Payload<'a>>,
    }
    #[derive(Deserialize)]
    struct Payload<'a> {
        #[serde(borrow)]
        model: Option<Cow<'a, str>>,
    }
    match serde_json::from_slice::<Line>(raw) {
        Ok(line) => line.payload?.model,
        // Another shape (a repeated key, whose last value a `Value` keeps): read as one.
        Err(_) => field(raw, "/payload/model").and_then(|m| m.as_str().map(|m| Cow::Owned(m.to_string()))),
    }
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

/// Files larger than this are scanned on two threads.
const PARALLEL_BYTES: usize = 4 << 20;

/// The lines of one piece of a file, scanned.
struct Chunk {
    /// Each line's `line` is its number in the chunk (from 1).
    metas: Vec<EntryMeta>,
    items: Vec<Item>,
    /// The response items' own ids (their index in `metas`, and the id; a name is made for
    /// the other lines).
    ids: Vec<(u32, String)>,
    /// Lines that are not JSON: their number in the chunk, and why.
    bad: Vec<(u32, String)>,
    /// How many lines the chunk has.
    lines: u32,
}

/// Scans `bytes` (at `base` in the source) of thread `thread`. `first_line`: the line number
/// (in the joined source) before the chunk, when known, for `exclude`.
fn scan_chunk(
    bytes: &[u8],
    base: usize,
    thread: u32,
    validate: Validate,
    exclude: &BTreeSet<LineNo>,
    first_line: Option<u32>,
) -> Chunk {
    let mut c = Chunk { metas: Vec::new(), items: Vec::new(), ids: Vec::new(), bad: Vec::new(), lines: 0 };
    let mut pos = 0usize;
    while pos < bytes.len() {
        // Each line, found with memchr.
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |k| pos + k);
        let raw = &bytes[pos..end];
        let start = base + pos;
        pos = end + 1;
        c.lines += 1;
        let rel = LineNo(c.lines);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) || first_line.is_some_and(|f| exclude.contains(&LineNo(f + c.lines)))
        {
            continue;
        }
        let scanned = match (validate, scan_fast(raw, start, rel, thread)) {
            (Validate::Lazily, Some(sc)) => Ok(sc),
            _ => scan_line(raw, start, rel, thread),
        };
        match scanned {
            Ok(sc) => {
                c.metas.push(sc.meta);
                c.items.push(sc.item);
                if let Some(id) = sc.id {
                    c.ids.push((c.metas.len() as u32 - 1, id));
                }
            }
            Err(why) => c.bad.push((c.lines, why)),
        }
    }
    c
}

/// How much of each line loading checks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Validate {
    /// A line of the usual shape is read from its first bytes; it is parsed whole when a
    /// command needs it (and found broken then, when it is: see `Codex::line`).
    Lazily,
    /// Every line parsed whole (`check`).
    All,
}

pub fn load<'a>(source: &'a Source, exclude: &BTreeSet<LineNo>, validate: Validate) -> Result<Session<'a>, LoadError> {
    let data = source.bytes();
    if data.is_empty() {
        return Err(LoadError::Empty { name: source.name.clone() });
    }
    let mut entries: Vec<EntryMeta> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let mut owned = Owned::default();
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
        // Big files are scanned in two halves, one on another thread (the scan is the time
        // a command spends on the lines it does not read); a re-read that skips lines scans
        // in one piece, since it needs each line's number as it goes.
        let split = if bytes.len() > PARALLEL_BYTES && exclude.is_empty() {
            memchr::memchr(b'\n', &bytes[bytes.len() / 2..]).map(|k| bytes.len() / 2 + k + 1)
        } else {
            None
        };
        let tid = parts_ids[t].as_deref();
        // The last group of the thread id, which names the file's lines without an id.
        let tail = tid.map(|t| t.rsplit('-').next().unwrap_or(t));
        let chunks: Vec<Chunk> = match split {
            Some(mid) if mid < bytes.len() => std::thread::scope(|sc| {
                let second =
                    sc.spawn(|| scan_chunk(&bytes[mid..], range.start + mid, t as u32, validate, exclude, None));
                let first = scan_chunk(&bytes[..mid], range.start, t as u32, validate, exclude, None);
                // A panic on the other thread is a bug: surface it as this thread's.
                vec![first, second.join().unwrap_or_else(|e| std::panic::resume_unwind(e))]
            }),
            _ => vec![scan_chunk(bytes, range.start, t as u32, validate, exclude, Some(line_base))],
        };
        let ends_in_newline = bytes.ends_with(b"\n");
        let n_chunks = chunks.len();
        let mut rel = 0u32; // lines of the part before this chunk
        for (ci, mut chunk) in chunks.into_iter().enumerate() {
            let mut copied = chunk.ids.iter().peekable();
            for (k, (m, it)) in chunk.metas.iter_mut().zip(&chunk.items).enumerate() {
                let own = rel + m.line.get();
                m.line = LineNo(line_base + own);
                // Lines without an id of their own (events, states, a reasoning item of an
                // old version) are named by their thread and ordinal, which is unique in a
                // family: `9cac33b1d38d:29`.
                if m.id.is_none() {
                    m.id = match copied.next_if(|(at, _)| *at as usize == k) {
                        Some((_, id)) => owned.push(id),
                        None => synthetic_id(&mut owned, tail, it.ordinal, own),
                    };
                }
            }
            // The chunk's vectors become the session's (the first) or are moved onto its
            // end, so that the scanned lines are not held twice at the peak.
            if entries.is_empty() {
                (entries, items) = (std::mem::take(&mut chunk.metas), std::mem::take(&mut chunk.items));
            } else {
                entries.append(&mut chunk.metas);
                items.append(&mut chunk.items);
            }
            for (line, why) in chunk.bad {
                let own = rel + line;
                let last = ci + 1 == n_chunks && own == rel + chunk.lines && !ends_in_newline;
                let (kind, what) =
                    if last { (Problem::Truncated, "cut off") } else { (Problem::Malformed, "not JSON") };
                diags.push(Diagnostic {
                    kind,
                    severity: Severity::Warning,
                    line: (t == 0).then_some(LineNo(line_base + own)),
                    message: format!(
                        "{}line {own} is {what} ({why}); skipped, as Codex skips it",
                        if t == 0 { String::new() } else { format!("{name}: ") },
                    ),
                });
            }
            rel += chunk.lines;
        }
        line_no = line_base + rel;
        // What the file's first `session_meta` says; the model of each line's turn.
        let mut meta = Map::new();
        let mut model = 0u32;
        for k in first_entry..entries.len() {
            match items[k].kind {
                Kind::Meta if meta.is_empty() => meta = read_meta(&data[entries[k].span()]),
                Kind::TurnContext => {
                    if let Some(m) = turn_model(&data[entries[k].span()]) {
                        let m = m.as_ref();
                        model = match models.iter().position(|x| x == m) {
                            Some(j) => j as u32 + 1,
                            None => {
                                models.push(m.to_string());
                                models.len() as u32
                            }
                        };
                    }
                }
                Kind::TokenRecord => items[k].counted = true,
                _ => {}
            }
            items[k].model = model;
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
        // A rollout that records each response's usage counts those; one without, its token
        // count events, each whose total changed (an event may repeat the last total).
        if !items[first_entry..].iter().any(|it| it.kind == Kind::TokenRecord) {
            let mut last_total: Option<Value> = None;
            for k in first_entry..items.len() {
                if items[k].kind == Kind::TokenCount {
                    let total = field(&data[entries[k].span()], "/payload/info/total_token_usage");
                    items[k].counted = total.is_some() && total != last_total;
                    last_total = total;
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
    // Its title as Codex's thread list shows it: the first prompt typed into this thread
    // (a `user_message` event; the `user` items before it are the client's context).
    let title =
        threads[0].entries.clone().find(|&k| items[k].kind == Kind::EventUser).and_then(|k| {
            field(&data[entries[k].span()], "/payload/message").and_then(|m| m.as_str().map(str::to_string))
        });
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
    s.title = title.filter(|t| !t.trim().is_empty());
    Ok(s)
}

/// Each line under the one before it in its file; a fork's first line under its parent's
/// last line before the fork point. Lines name no parent: the index gets the parents
/// themselves (and no `parentId`).
fn link(threads: &[Thread], items: &[Item], entries: &mut [EntryMeta], diags: &mut Vec<Diagnostic>) {
    for (t, th) in threads.iter().enumerate() {
        for k in th.entries.clone().skip(1) {
            entries[k].set_parent(Some(EntryIdx::new(k - 1)));
        }
        let Some(base) = &th.base else { continue };
        if th.entries.is_empty() {
            continue;
        }
        match super::fork_point(threads, items, &base.thread, base.end_ordinal, 0) {
            Some(p) => {
                entries[th.entries.start].set_parent(Some(p));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The time read from a line's head is the time a parse of the whole line gives, on
    /// every line of the Codex corpora and on lines made to trip it.
    #[test]
    fn head_time_is_the_parse_s_time() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            timestamp: Option<std::borrow::Cow<'a, str>>,
        }
        let parsed = |raw: &[u8]| {
            let t: T = serde_json::from_slice(raw).ok()?;
            crate::session::js::parse_date(t.timestamp.as_deref()?)
        };
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for p in crate::corpus::jsonl_files(&["codex-0.171.0", "codex-older"]) {
            lines.extend(std::fs::read(&p).unwrap().split(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
        assert!(lines.len() > 500, "the corpora: {} lines", lines.len());
        let tricky = [
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","type":"event_msg","payload":{"type":"x"}}"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","timestamp":"2026-12-03T00:00:00Z","payload":{}}"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","payload":{},"timestamp":"2026-12-03T00:00:00Z"}"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","payload":{"timestamp":"2026-12-03T00:00:00Z"}}"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","payload":{"a":"\"timestamp\""}}"#,
            r#"{"timestamp":"2026-12-02T22:54:32\u002e123Z","payload":{}}"#,
            r#"{"timestamp":null,"payload":{}}"#,
            r#"{"timestamp":7,"payload":{}}"#,
            r#"{"timestamp":"not a date","payload":{}}"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","payload":{"a":[1,2}}"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","payload":{}} x"#,
            r#"{"timestamp":"2026-12-02T22:54:32.123Z","payload":{"s":"\ud800"}}"#,
            r#"{"time\u0073tamp":"2026-12-02T22:54:32.123Z","payload":{}}"#,
            r#"{"type":"x","timestamp":"2026-12-02T22:54:32.123Z"}"#,
            r#"{ "timestamp" : "2026-12-02T22:54:32.123Z" , "payload" : { } }"#,
        ];
        let mut fast = 0;
        for raw in lines.iter().map(Vec::as_slice).chain(tricky.iter().map(|t| t.as_bytes())) {
            let json =
                matches!(crate::session::validate::validate(raw), crate::session::validate::Verdict::Whole { .. });
            if let Some(t) = head_time(raw).filter(|_| json) {
                fast += 1;
                assert_eq!(t, parsed(raw), "{}", String::from_utf8_lossy(raw));
            }
        }
        assert!(fast > lines.len() / 2, "the head read most lines: {fast} of {}", lines.len());
    }
}
