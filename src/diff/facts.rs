//! What each divergent entry says, read with borrowed, lazily parsed fields: the large
//! parts of a line (tool output, file contents in write calls, thinking signatures) are
//! only scanned, never copied, unless a fact needs them (bash output and error text).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::session::format::Unreadable;
use crate::session::system::content_text;
use crate::session::usage::Totals;
use crate::session::{js, EntryIdx, EntryType, Role, Session};

/// One entry of a side, as the diff needs it.
#[derive(Clone)]
pub(super) struct Fact {
    pub entry: EntryIdx,
    pub kind: FactKind,
    /// What the entry adds to the tokens and cost, as pi's getUsageCostBreakdown counts.
    pub usage: Option<Totals>,
}

#[derive(Clone)]
pub(super) enum FactKind {
    /// A user message, a `bashExecution` or a custom message: what starts a turn.
    Prompt(PromptFact),
    Assistant(AssistantFact),
    ToolResult(ResultFact),
    /// Anything else (branch summary, compaction, model change, label, …), described.
    Event(String),
    /// Entries that say nothing here (system messages, `custom` extension state, usage).
    Quiet,
}

#[derive(Clone)]
pub(super) struct PromptFact {
    pub kind: &'static str,
    pub text: String,
    /// bash: the exit code (`None` inside when there is none).
    pub exit_code: Option<Option<i64>>,
    /// bash: cancelled by the user.
    pub cancelled: bool,
    /// bash: the output (for test counts).
    pub output: Option<String>,
    pub custom_type: Option<String>,
}

#[derive(Clone)]
pub(super) struct AssistantFact {
    pub text: String,
    pub calls: Vec<CallFact>,
    pub stop_reason: Option<String>,
    pub error_message: Option<String>,
    /// `provider/model`.
    pub model: Option<String>,
}

#[derive(Clone, Debug)]
pub(super) struct CallFact {
    pub id: String,
    pub name: String,
    /// `arguments.path` when a non-empty string.
    pub path: Option<String>,
    /// bash `arguments.command`.
    pub command: Option<String>,
    pub offset: Option<f64>,
    pub limit: Option<f64>,
    /// Another argument worth showing (`pattern`, `path` of other tools), for display.
    pub other: Option<String>,
}

#[derive(Clone)]
pub(super) struct ResultFact {
    pub call_id: String,
    pub tool: String,
    pub is_error: bool,
    /// The text of bash results (their last 8 KB) and error results (their first 8 KB);
    /// not of other tools' results.
    pub text: Option<String>,
    /// 1.6 codemode: calls made from a script, for the file rules.
    pub nested: Vec<CallFact>,
}

// The fast path reads lines into these borrowed, strictly typed structs; a line that
// does not fit them (a field of another type, a duplicate key) is read whole as a
// `Value` instead (see `from_value`), so both paths give the same facts.

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    #[serde(borrow, default)]
    message: Option<Msg<'a>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default)]
    custom_type: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Msg<'a> {
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default)]
    provider: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error_message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    is_error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    command: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    exit_code: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cancelled: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    custom_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    nested_calls: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

/// A message's `content`: a string, a list of blocks, or anything else (no text).
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("message content")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(b) = seq.next_element::<Block<'a>>()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(Content::Other)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Args<'a>>,
}

#[derive(Deserialize)]
struct Args<'a> {
    #[serde(borrow, default)]
    path: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    command: Option<Cow<'a, str>>,
    #[serde(default)]
    offset: Option<f64>,
    #[serde(default)]
    limit: Option<f64>,
    #[serde(borrow, default)]
    pattern: Option<Cow<'a, str>>,
}

impl Content<'_> {
    /// pi's `contentText`: a string as is, else the text blocks joined by `\n`.
    fn text(&self) -> String {
        match self {
            Content::Text(t) => t.to_string(),
            Content::Blocks(bs) => bs
                .iter()
                .filter(|b| b.ty.as_deref() == Some("text"))
                .map(|b| b.text.as_deref().unwrap_or("undefined"))
                .collect::<Vec<_>>()
                .join("\n"),
            Content::Other => String::new(),
        }
    }

    fn calls(&self) -> Vec<CallFact> {
        let Content::Blocks(bs) = self else { return Vec::new() };
        bs.iter()
            .filter(|b| b.ty.as_deref() == Some("toolCall"))
            .map(|b| {
                let a = b.arguments.as_ref();
                CallFact {
                    id: b.id.as_deref().unwrap_or_default().to_string(),
                    name: b.name.as_deref().unwrap_or_default().to_string(),
                    path: a.and_then(|a| a.path.as_deref()).filter(|p| !p.is_empty()).map(str::to_string),
                    command: a.and_then(|a| a.command.as_deref()).map(str::to_string),
                    offset: a.and_then(|a| a.offset),
                    limit: a.and_then(|a| a.limit),
                    other: a.and_then(|a| a.pattern.as_deref()).map(str::to_string),
                }
            })
            .collect()
    }
}

fn text_of(c: &Option<Content>) -> String {
    c.as_ref().map_or(String::new(), Content::text)
}

/// Facts of `entries` (one side's divergent entries, in path order), read on up to
/// `threads` threads.
pub(super) fn extract(s: &Session, entries: &[EntryIdx], threads: usize) -> Result<Vec<Fact>, Unreadable> {
    let one = |part: &[EntryIdx]| -> Result<Vec<Fact>, Unreadable> {
        part.iter()
            .map(|&i| {
                let (kind, usage) = fact_and_usage(s, i)?;
                Ok(Fact { entry: i, kind, usage })
            })
            .collect()
    };
    if threads <= 1 || entries.len() < 2048 {
        return one(entries);
    }
    let chunk = entries.len().div_ceil(threads);
    let parts: Vec<Result<Vec<Fact>, Unreadable>> = std::thread::scope(|scope| {
        let handles: Vec<_> = entries.chunks(chunk).map(|part| scope.spawn(move || one(part))).collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    let mut out = Vec::with_capacity(entries.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

/// The facts of entry `i` (`Err(line)` when its line does not parse whole).
pub(super) fn fact(s: &Session, i: EntryIdx) -> Result<FactKind, Unreadable> {
    fact_and_usage(s, i).map(|(k, _)| k)
}

/// The facts of entry `i` and its usage (read from the same parse for messages).
fn fact_and_usage(s: &Session, i: EntryIdx) -> Result<(FactKind, Option<Totals>), Unreadable> {
    let e = &s.entries[i];
    let kind = e.kind;
    match (kind, e.role) {
        (EntryType::Message, Role::User | Role::Assistant | Role::ToolResult | Role::BashExecution)
        | (EntryType::Message, Role::Custom | Role::HookMessage)
        | (EntryType::CustomMessage, _) => {}
        (EntryType::Message, _) => return Ok((FactKind::Quiet, None)),
        // Usage may be an entry of its own (pi's `usage`, Codex's token records).
        (EntryType::Usage, _) | (EntryType::Custom, _) => return Ok((FactKind::Quiet, s.dialect().usage(s, i)?)),
        _ => {
            let _ = s.parse(i)?;
            return Ok((FactKind::Event(s.preview(i, 160)), s.dialect().usage(s, i)?));
        }
    }
    if !s.dialect().lines_are_entries() {
        return Ok(from_value(s, i, &s.parse(i)?));
    }
    let raw = s.raw_line(i);
    if e.role == Role::ToolResult {
        if let Some(r) = quick_tool_result(raw) {
            return Ok((FactKind::ToolResult(r), None));
        }
    }
    match serde_json::from_slice::<Line>(raw) {
        Ok(line) => from_line(s, i, &line),
        // Not the usual shape (a duplicate key, a `message` that is no object): read the
        // line whole, as pi does, and try again on its normal form.
        Err(_) => {
            let v = s.parse(i)?;
            Ok(from_value(s, i, &v))
        }
    }
}

/// A tool result read without parsing its content: when pi wrote it (`"message":
/// {"role":"toolResult","toolCallId":"…","toolName":"…"` first), it is no bash result
/// (whose output is needed), and it has no `usage` and no `nestedCalls` key and every
/// `"isError"` key is `false`. A read result can be 100 KB; this keeps the diff of long
/// sessions from scanning them. (An unescaped `"key"` cannot occur inside a JSON string,
/// so these substring tests only ever see keys.)
fn quick_tool_result(raw: &[u8]) -> Option<ResultFact> {
    use crate::session::text::contains;
    use memchr::memmem;
    const HEAD: &[u8] = br#""message":{"role":"toolResult","toolCallId":""#;
    let head = &raw[..raw.len().min(512)];
    let at = memmem::find(head, HEAD)? + HEAD.len();
    let (call_id, rest) = plain_string(&head[at..])?;
    let rest = rest.strip_prefix(br#","toolName":""#)?;
    let (tool, _) = plain_string(rest)?;
    if tool == "bash" || contains!(raw, b"\"usage\"") || contains!(raw, b"\"nestedCalls\"") {
        return None;
    }
    const KEY: &[u8] = b"\"isError\"";
    if memmem::find_iter(raw, KEY).any(|k| !raw[k + KEY.len()..].starts_with(b":false")) {
        return None;
    }
    Some(ResultFact { call_id, tool, is_error: false, text: None, nested: Vec::new() })
}

/// A string's text up to its closing quote when it has no escapes, and what follows.
fn plain_string(b: &[u8]) -> Option<(String, &[u8])> {
    let end = memchr::memchr2(b'"', b'\\', b)?;
    if b[end] != b'"' {
        return None;
    }
    Some((std::str::from_utf8(&b[..end]).ok()?.to_string(), &b[end + 1..]))
}

fn from_line(s: &Session, i: EntryIdx, line: &Line) -> Result<(FactKind, Option<Totals>), Unreadable> {
    let e = &s.entries[i];
    if e.kind == EntryType::CustomMessage {
        return Ok((prompt("custom", text_of(&line.content), line.custom_type.as_deref().map(str::to_string)), None));
    }
    let Some(m) = &line.message else { return Ok((FactKind::Quiet, None)) };
    let raw_value = |r: Option<&RawValue>| match r.map(RawValue::get) {
        None => None,
        Some("true") => Some(Value::Bool(true)),
        Some("false") => Some(Value::Bool(false)),
        Some(g) => serde_json::from_str::<Value>(g).ok(),
    };
    let kind = match e.role {
        Role::User => prompt("user", text_of(&m.content), None),
        Role::Custom | Role::HookMessage => {
            prompt("custom", text_of(&m.content), m.custom_type.as_deref().map(str::to_string))
        }
        Role::BashExecution => FactKind::Prompt(PromptFact {
            kind: "bash",
            text: m.command.as_deref().unwrap_or_default().to_string(),
            exit_code: Some(raw_value(m.exit_code).and_then(|v| v.as_f64()).map(|f| f as i64)),
            cancelled: js::truthy(raw_value(m.cancelled).as_ref()),
            output: m.output.as_deref().map(str::to_string),
            custom_type: None,
        }),
        Role::Assistant => FactKind::Assistant(AssistantFact {
            text: text_of(&m.content),
            calls: m.content.as_ref().map_or(Vec::new(), Content::calls),
            stop_reason: m.stop_reason.as_deref().map(str::to_string),
            error_message: raw_value(m.error_message).filter(|v| !v.is_null()).map(|v| js::to_js_string(Some(&v))),
            model: model_name(m.provider.as_deref(), m.model.as_deref()),
        }),
        Role::ToolResult => {
            let tool = m.tool_name.as_deref().unwrap_or_default().to_string();
            let is_error = js::truthy(raw_value(m.is_error).as_ref());
            FactKind::ToolResult(ResultFact {
                call_id: m.tool_call_id.as_deref().unwrap_or_default().to_string(),
                text: (is_error || tool == "bash").then(|| clip(text_of(&m.content), &tool)),
                tool,
                is_error,
                nested: raw_value(m.nested_calls).map_or(Vec::new(), |v| nested_calls(&v)),
            })
        }
        _ => FactKind::Quiet,
    };
    let usage = match e.role {
        Role::Assistant | Role::ToolResult => m.usage.and_then(usage_raw),
        _ => None,
    };
    Ok((kind, usage))
}

/// The same facts from a line read whole (lines the fast path cannot read).
fn from_value(s: &Session, i: EntryIdx, v: &Value) -> (FactKind, Option<Totals>) {
    let e = &s.entries[i];
    let str_of = |o: Option<&Value>| o.and_then(Value::as_str).map(str::to_string);
    if e.kind == EntryType::CustomMessage {
        return (prompt("custom", content_text(v.get("content")), str_of(v.get("customType"))), None);
    }
    let Some(m) = v.get("message").filter(|m| m.is_object()) else { return (FactKind::Quiet, None) };
    let kind = match e.role {
        Role::User => prompt("user", content_text(m.get("content")), None),
        Role::Custom | Role::HookMessage => {
            prompt("custom", content_text(m.get("content")), str_of(m.get("customType")))
        }
        Role::BashExecution => FactKind::Prompt(PromptFact {
            kind: "bash",
            text: str_of(m.get("command")).unwrap_or_default(),
            exit_code: Some(m.get("exitCode").and_then(Value::as_f64).map(|f| f as i64)),
            cancelled: js::truthy(m.get("cancelled")),
            output: str_of(m.get("output")),
            custom_type: None,
        }),
        Role::Assistant => FactKind::Assistant(AssistantFact {
            text: content_text(m.get("content")),
            calls: m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .map(|b| call_value(&as_pi_call(s, b)))
                .collect(),
            stop_reason: str_of(m.get("stopReason")),
            error_message: m.get("errorMessage").filter(|v| !v.is_null()).map(|v| js::to_js_string(Some(v))),
            model: model_name(m.get("provider").and_then(Value::as_str), m.get("model").and_then(Value::as_str)),
        }),
        Role::ToolResult => {
            let tool = str_of(m.get("toolName")).unwrap_or_default();
            let tool = s.dialect().pi_tool(&tool, &Value::Null).map_or(tool, |(pi, _)| pi.to_string());
            let is_error = js::truthy(m.get("isError"));
            FactKind::ToolResult(ResultFact {
                call_id: str_of(m.get("toolCallId")).unwrap_or_default(),
                text: (is_error || tool == "bash").then(|| clip(content_text(m.get("content")), &tool)),
                tool,
                is_error,
                nested: m.get("nestedCalls").map_or(Vec::new(), nested_calls),
            })
        }
        _ => FactKind::Quiet,
    };
    let usage = match e.role {
        Role::Assistant | Role::ToolResult => m.get("usage").and_then(usage_value),
        _ => None,
    };
    (kind, usage)
}

/// What is kept of a result's text: the end of bash output (pi's exit notice and the test
/// summary are there), the start of an error.
fn clip(mut text: String, tool: &str) -> String {
    const KEEP: usize = 8192;
    if text.len() <= KEEP {
        return text;
    }
    if tool == "bash" {
        let mut at = text.len() - KEEP;
        while !text.is_char_boundary(at) {
            at += 1;
        }
        text.drain(..at);
    } else {
        let mut at = KEEP;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
    text
}

fn prompt(kind: &'static str, text: String, custom_type: Option<String>) -> FactKind {
    FactKind::Prompt(PromptFact { kind, text, exit_code: None, cancelled: false, output: None, custom_type })
}

pub(super) fn model_name(provider: Option<&str>, model: Option<&str>) -> Option<String> {
    match (provider, model) {
        (None, None) => None,
        (p, m) => Some(format!("{}/{}", p.unwrap_or_default(), m.unwrap_or_default())),
    }
}

/// [`usage_value`] of a raw `usage`, read into numbers directly when it has the usual
/// shape.
fn usage_raw(raw: &RawValue) -> Option<Totals> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct U {
        input: Option<f64>,
        output: Option<f64>,
        cache_read: Option<f64>,
        cache_write: Option<f64>,
        total_tokens: Option<f64>,
        cost: Option<C>,
    }
    #[derive(Deserialize)]
    struct C {
        total: Option<f64>,
    }
    let g = raw.get();
    if g.starts_with('{') {
        if let Ok(u) = serde_json::from_str::<U>(g) {
            let n = |x: Option<f64>| x.filter(|f| f.is_finite()).unwrap_or(0.0);
            return Some(Totals {
                input: n(u.input),
                output: n(u.output),
                cache_read: n(u.cache_read),
                cache_write: n(u.cache_write),
                total_tokens: n(u.total_tokens),
                cost: n(u.cost.and_then(|c| c.total)),
            });
        }
    }
    usage_value(&serde_json::from_str::<Value>(g).ok()?)
}

/// pi's getUsageCostBreakdown takes a message's `usage` when it is truthy.
fn usage_value(u: &Value) -> Option<Totals> {
    js::truthy(Some(u)).then(|| Totals::from_usage(u))
}

/// A tool call block with the pi tool name and arguments its agent's call corresponds to.
fn as_pi_call(s: &Session, b: &Value) -> Value {
    let name = b.get("name").and_then(Value::as_str).unwrap_or_default();
    match s.dialect().pi_tool(name, b.get("arguments").unwrap_or(&Value::Null)) {
        Some((pi, args)) => {
            let mut b = b.clone();
            b["name"] = pi.into();
            b["arguments"] = args;
            b
        }
        None => b.clone(),
    }
}

/// A tool call block read whole.
fn call_value(b: &Value) -> CallFact {
    let s = |o: Option<&Value>| o.and_then(Value::as_str).map(str::to_string);
    let a = b.get("arguments").filter(|a| a.is_object());
    let arg = |k: &str| a.and_then(|a| a.get(k));
    CallFact {
        id: s(b.get("id")).unwrap_or_default(),
        name: s(b.get("name")).unwrap_or_default(),
        path: s(arg("path")).filter(|p| !p.is_empty()),
        command: s(arg("command")),
        offset: arg("offset").and_then(Value::as_f64),
        limit: arg("limit").and_then(Value::as_f64),
        other: s(arg("pattern")),
    }
}

/// `nestedCalls` of a 1.6 tool result: taken as a list of `{name, arguments}` (or
/// `{toolName, args}`) objects; anything else is ignored.
fn nested_calls(v: &Value) -> Vec<CallFact> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter(|n| n.is_object())
        .map(|n| {
            let mut b = n.clone();
            if b.get("name").is_none() {
                if let Some(t) = n.get("toolName") {
                    b["name"] = t.clone();
                }
            }
            if b.get("arguments").is_none() {
                if let Some(a) = n.get("args") {
                    b["arguments"] = a.clone();
                }
            }
            call_value(&b)
        })
        .collect()
}

/// The arguments of the tool call `call_id` of assistant entry `i`, as a value (for the
/// write/edit/read calls that rebuild a file).
pub(super) fn call_arguments(s: &Session, i: EntryIdx, call_id: &str) -> Result<Option<Value>, Unreadable> {
    let v = s.parse(i)?;
    let blocks = v.get("message").and_then(|m| m.get("content")).and_then(Value::as_array);
    Ok(blocks.into_iter().flatten().find_map(|b| {
        (b.get("type").and_then(Value::as_str) == Some("toolCall")
            && b.get("id").and_then(Value::as_str).unwrap_or_default() == call_id)
            .then(|| as_pi_call(s, b).get("arguments").cloned().unwrap_or(Value::Null))
    }))
}

/// The text of a tool result entry (for reads that rebuild a file), and whether it holds
/// an image.
pub(super) fn result_text(s: &Session, i: EntryIdx) -> Result<(String, bool), Unreadable> {
    if let Some(text) = s.dialect().read_text(s, i) {
        return Ok((text, false));
    }
    let v = s.parse(i)?;
    let content = v.get("message").and_then(|m| m.get("content"));
    let image = content
        .and_then(Value::as_array)
        .is_some_and(|bs| bs.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("image")));
    Ok((content_text(content), image))
}

/// The tool call id a tool-result entry answers, read from its line (the content is only
/// scanned).
pub(super) fn result_call_id(s: &Session, i: EntryIdx) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct R<'a> {
        #[serde(borrow, default)]
        tool_call_id: Option<Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct L<'a> {
        #[serde(borrow)]
        message: R<'a>,
    }
    if !s.dialect().lines_are_entries() {
        let v = s.parse(i).ok()?;
        return v.pointer("/message/toolCallId").and_then(Value::as_str).map(str::to_string);
    }
    let l: L = serde_json::from_slice(s.raw_line(i)).ok()?;
    l.message.tool_call_id.map(Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(json: &str) -> Content<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn content_text_joins_text_blocks() {
        let c = content(r#"[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b\nc"}]"#);
        assert_eq!(c.text(), "a\nb\nc");
        assert_eq!(content(r#""plain""#).text(), "plain");
        assert_eq!(content("null").text(), "");
    }

    #[test]
    fn quick_tool_results_only_when_plain() {
        let ok = br#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x \"isError\":true"}],"isError":false,"timestamp":1}}"#;
        let r = quick_tool_result(ok).unwrap();
        assert_eq!((r.call_id.as_str(), r.tool.as_str(), r.is_error), ("c1", "read", false));
        let err = br#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[],"isError":true}}"#;
        assert!(quick_tool_result(err).is_none());
        let bash = br#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"isError":false}}"#;
        assert!(quick_tool_result(bash).is_none());
        let usage = br#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"x","content":[],"usage":{"input":1},"isError":false}}"#;
        assert!(quick_tool_result(usage).is_none());
    }

    #[test]
    fn calls_keep_path_and_command() {
        let c = content(
            r#"[{"type":"thinking","thinking":"x"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.js","offset":3,"limit":2}},{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"npm test"}}]"#,
        );
        let calls = c.calls();
        assert_eq!(c.text(), "");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].path.as_deref(), Some("a.js"));
        assert_eq!(calls[0].offset, Some(3.0));
        assert_eq!(calls[1].command.as_deref(), Some("npm test"));
        let v: Value =
            serde_json::from_str(r#"{"type":"toolCall","id":"c3","name":"edit","arguments":{"path":7}}"#).unwrap();
        assert_eq!(call_value(&v).path, None);
    }
}
