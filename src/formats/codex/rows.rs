//! What the tree shows of each rollout line, in pisces's style for Codex's tools
//! (`[exec_command: npm test]`, `[apply_patch: src/x.js]`). A call's line is hidden unless
//! it is the leaf: the output's row names the call and its exit code. Each rollout's first
//! line names its file, so a family drawn as one tree says where each branch is written.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::context::item_of;
use super::entries::{call_arguments, output_text, patch_files, type_label};
use super::{Codex, Kind};
use crate::session::entry::EntryIdx;
use crate::session::format::{RowNeed, Unreadable};
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::{js, Session};

pub struct CodexRows<'s> {
    s: &'s Session<'s>,
    /// The loaded family (threads, what each line is), for the texts made on demand.
    codex: Codex,
    /// The call a call's line makes (that line is hidden unless it is the leaf).
    calls: Vec<Vec<ToolCall<'s>>>,
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A message's text as its row shows it: on one line, its first 200 characters (as pi
/// shows a message's first 200 in its tree), so a long message is not read whole.
fn row_line(s: &str) -> String {
    crate::session::text::one_line(s, 200)
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}...", s.chars().take(n).collect::<String>())
    } else {
        s.to_string()
    }
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some(t) if t.contains("image") => Some("[image]"),
                _ => b.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// A path relative to the thread's working directory when under it.
fn show_path(p: &str, cwd: &str) -> String {
    if !cwd.is_empty() {
        if let Some(rest) = p.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')) {
            return rest.to_string();
        }
    }
    p.to_string()
}

/// `[exec_command: npm test]`: one call as the tree shows it.
pub fn format_call(name: &str, args: &Value, cwd: &str) -> String {
    let get = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
    let detail = match name {
        "exec_command" => cut(&one_line(get("cmd")), 50),
        "shell_command" => cut(&one_line(get("command")), 50),
        "shell" | "local_shell" | "container.exec" => match args.get("command") {
            Some(Value::Array(a)) => {
                let parts: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                let cmd = match parts.as_slice() {
                    [_, "-lc" | "-c", cmd] => cmd.to_string(),
                    _ => parts.join(" "),
                };
                cut(&one_line(&cmd), 50)
            }
            _ => cut(&js::stringify(args), 40),
        },
        "write_stdin" => cut(&one_line(get("chars")), 40),
        "apply_patch" => {
            let patch = args.get("input").or_else(|| args.get("patch")).and_then(Value::as_str).unwrap_or_default();
            let files: Vec<String> = patch_files(patch).iter().map(|(_, p)| show_path(p, cwd)).collect();
            if files.is_empty() {
                "(no files)".to_string()
            } else {
                files.join(", ")
            }
        }
        "update_plan" => {
            let n = args.get("plan").and_then(Value::as_array).map_or(0, Vec::len);
            format!("{n} step{}", if n == 1 { "" } else { "s" })
        }
        _ => cut(&js::stringify(args), 40),
    };
    format!("[{name}: {detail}]")
}

fn short(id: &str) -> &str {
    id.get(..13).unwrap_or(id)
}

/// What a row reads of a line, borrowed from it: a row is made for every visible line of a
/// 100 MB family, and a `Value` of each would cost most of `tree`'s time.
#[derive(Deserialize)]
struct RowLine<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

/// A line whose payload is read as an item in the same pass (`type` read as `RowLine`
/// reads it, so that a line that one refuses the other refuses too).
#[derive(Deserialize)]
struct RowLineItem<'a> {
    #[serde(rename = "type", borrow, default)]
    _ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<RowItem<'a>>,
}

#[derive(Deserialize, Default)]
struct RowItem<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: Option<Vec<Block<'a>>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

impl RowItem<'_> {
    /// The content's texts, joined by spaces (`[image]` for an image).
    fn text(&self) -> String {
        let Some(raw) = self.content else { return String::new() };
        if let Ok(t) = serde_json::from_str::<Cow<str>>(raw.get()) {
            return t.into_owned();
        }
        let blocks: Vec<Block> = serde_json::from_str(raw.get()).unwrap_or_default();
        blocks
            .iter()
            .filter_map(|b| match b.ty.as_deref() {
                Some(t) if t.contains("image") => Some("[image]"),
                _ => b.text.as_deref(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The item of a raw line: its payload (a `response_item`'s, an event's), or the line itself.
fn row_item(raw: &[u8]) -> Option<RowItem<'_>> {
    // One pass over the line when its payload is an item (nearly every line); anything else
    // (no payload, `null`, another shape, a repeated key) is read as before, in two.
    if let Ok(RowLineItem { payload: Some(item), .. }) = serde_json::from_slice::<RowLineItem>(raw) {
        return Some(item);
    }
    let line: RowLine = serde_json::from_slice(raw).ok()?;
    match line.payload {
        Some(p) => serde_json::from_str(p.get()).ok(),
        None => serde_json::from_slice(raw).ok().filter(|_| line.ty.is_some()),
    }
}

/// The exit code an output reports, read from its JSON text (`Process exited with code N`,
/// `Exit code: N` near its start) without decoding it.
fn raw_exit_code(output: &RawValue) -> Option<i64> {
    let head = output.get().get(..output.get().len().min(400)).unwrap_or(output.get());
    for mark in ["Process exited with code ", "Exit code: "] {
        if let Some(at) = head.find(mark) {
            let digits: String =
                head[at + mark.len()..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            return digits.parse().ok();
        }
    }
    None
}

/// The row of entry `i`, read from its raw line; lines a row shows only by type, and
/// calls, from the parsed line.
pub fn row_text(s: &Session, c: &Codex, i: EntryIdx) -> Result<Text, Unreadable> {
    let kind = c.items[i.get()].kind;
    let light = matches!(kind, Kind::Message | Kind::Reasoning)
        || (matches!(kind, Kind::EventUser | Kind::EventAgent)
            && s.entries[i].kind == crate::session::EntryType::Message);
    if light {
        if let Some(item) = row_item(s.raw_line(i)) {
            return Ok(light_text(c, i, &item));
        }
    }
    Ok(line_text(s, c, i, &c.line(s, i)?))
}

fn light_text(c: &Codex, i: EntryIdx, item: &RowItem) -> Text {
    match c.items[i.get()].kind {
        Kind::Message => message_text(item.role.as_deref(), &item.text()),
        Kind::Reasoning => {
            let summary: Vec<&str> = item.summary.iter().flatten().filter_map(|b| b.text.as_deref()).collect();
            reasoning_text(&summary)
        }
        Kind::EventUser => {
            Text::new("user: ", Tone::User, row_line(item.message.as_deref().unwrap_or_default()), Tone::Plain)
        }
        _ => Text::new(
            "assistant: ",
            Tone::Assistant,
            row_line(item.message.as_deref().unwrap_or_default()),
            Tone::Plain,
        ),
    }
}

fn message_text(role: Option<&str>, text: &str) -> Text {
    match role {
        Some("user") if text.starts_with("<environment_context>") => {
            Text::whole("[environment_context]".into(), Tone::Dim)
        }
        Some("user") => Text::new("user: ", Tone::User, row_line(text), Tone::Plain),
        Some("assistant") => Text::new("assistant: ", Tone::Assistant, row_line(text), Tone::Plain),
        role => {
            let tag = text.trim_start().strip_prefix('<').and_then(|t| t.split(['>', ' ']).next());
            let label = role.unwrap_or("message");
            match tag {
                Some(t) => Text::whole(format!("[{label}: <{t}>]"), Tone::Dim),
                None => Text::whole(format!("[{label}]"), Tone::Dim),
            }
        }
    }
}

fn reasoning_text(summary: &[&str]) -> Text {
    let body = if summary.is_empty() { "(thinking)".to_string() } else { row_line(&summary.join(" ")) };
    Text::new("assistant: ", Tone::Assistant, body, Tone::Muted)
}

/// The row of entry `i`, whose line is `line`.
pub fn line_text(s: &Session, c: &Codex, i: EntryIdx, line: &Value) -> Text {
    let th = c.thread(i);
    let cwd = th.cwd.as_deref().unwrap_or_default();
    let item = item_of(line);
    match c.items[i.get()].kind {
        Kind::Meta => {
            let id = th.id.as_deref().map(short).unwrap_or("?");
            let what = match &th.base {
                Some(b) => format!("fork {id} of {} at :{}", short(&b.thread), b.end_ordinal),
                None => format!("thread {id}"),
            };
            Text::whole(format!("[{what}: {}]", th.file_name()), Tone::Summary)
        }
        Kind::Message => message_text(item.get("role").and_then(Value::as_str), &content_text(item.get("content"))),
        Kind::Reasoning => {
            let summary: Vec<&str> = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .collect();
            reasoning_text(&summary)
        }
        Kind::Call => {
            let name = item.get("name").and_then(Value::as_str).or_else(|| item.get("type").and_then(Value::as_str));
            Text::whole(format_call(name.unwrap_or("?"), &call_arguments(item), cwd), Tone::Tool)
        }
        Kind::Output => Text::whole("[tool result]".into(), Tone::Tool),
        // The conversation of a thread written as events only (else a copy of an item's).
        Kind::EventUser | Kind::EventAgent if s.entries[i].kind == crate::session::EntryType::Message => {
            let text = line.pointer("/payload/message").and_then(Value::as_str).unwrap_or_default();
            if c.items[i.get()].kind == Kind::EventUser {
                Text::new("user: ", Tone::User, row_line(text), Tone::Plain)
            } else {
                Text::new("assistant: ", Tone::Assistant, row_line(text), Tone::Plain)
            }
        }
        Kind::Compacted => Text::whole("[compaction]".into(), Tone::Summary),
        _ => Text::whole(format!("[{}]", type_label(line)), Tone::Dim),
    }
}

impl<'s> CodexRows<'s> {
    /// Reads only the calls (an output's row names its call, wherever the call is in the
    /// tree); every other row's text is made when the tree asks for it: a 100 MB family has
    /// ~100,000 lines, most of them never shown (events, hidden by the default filter).
    pub fn read(s: &'s Session<'s>, c: &Codex, _need: RowNeed) -> Result<CodexRows<'s>, Unreadable> {
        let codex = Codex { threads: c.threads.clone(), items: c.items.clone(), models: c.models.clone() };
        let mut calls = Vec::with_capacity(s.entries.len());
        for i in s.entries.indices() {
            if c.items[i.get()].kind == Kind::Call {
                calls.push(call_of(s.raw_line(i)));
            } else {
                calls.push(Vec::new());
            }
        }
        Ok(CodexRows { s, codex, calls })
    }

    /// Entry `i`'s line, parsed (`None`: it does not parse, and its row says so).
    fn line(&self, i: EntryIdx) -> Option<Value> {
        self.codex.line(self.s, i).ok()
    }
}

/// The call a call's line makes, read from the line without parsing it whole. Its
/// `arguments` are the item's JSON as written (the output's row reads name and arguments
/// from it when it is drawn).
fn call_of(raw: &[u8]) -> Vec<ToolCall<'_>> {
    let Ok(line) = serde_json::from_slice::<RowLine>(raw) else { return Vec::new() };
    let payload = match line.payload {
        Some(p) => p,
        None => match serde_json::from_slice::<&RawValue>(raw) {
            Ok(p) => p,
            Err(_) => return Vec::new(),
        },
    };
    let Ok(item) = serde_json::from_str::<RowItem>(payload.get()) else { return Vec::new() };
    let id = item.call_id.or(item.id).unwrap_or_default();
    let name = item.name.or(item.ty).unwrap_or(Cow::Borrowed("?"));
    vec![ToolCall {
        id: Cow::Owned(id.into_owned()),
        name: Cow::Owned(name.into_owned()),
        arguments: Some(payload.get()),
    }]
}

impl Rows for CodexRows<'_> {
    fn parent_undefined(&self, _: EntryIdx) -> bool {
        false
    }

    fn hidden_unless_leaf(&self, i: EntryIdx) -> bool {
        !self.calls[i.get()].is_empty()
    }

    fn calls(&self, i: EntryIdx) -> &[ToolCall<'_>] {
        &self.calls[i.get()]
    }

    fn text(&self, i: EntryIdx, calls: &CallMap, paths: &Paths) -> Text {
        if self.codex.items[i.get()].kind != Kind::Output {
            return row_text(self.s, &self.codex, i)
                .unwrap_or_else(|_| Text::whole("(unreadable line)".into(), Tone::Error));
        }
        // An output's row: its call, and the exit code it reports.
        let Some(item) = row_item(self.s.raw_line(i)) else {
            return Text::whole("(unreadable line)".into(), Tone::Error);
        };
        let id = item.call_id.as_deref().unwrap_or_default();
        let cwd = self.codex.thread(i).cwd.as_deref().unwrap_or(paths.cwd);
        let call = calls.get(id).and_then(|c| {
            let item: Value = serde_json::from_str(c.arguments?).ok()?;
            Some(format_call(&c.name, &call_arguments(&item), cwd))
        });
        let shown = call.unwrap_or_else(|| "[tool result]".to_string());
        let text = match item.output.and_then(raw_exit_code) {
            Some(0) | None => shown,
            Some(n) => format!("{shown} (exit {n})"),
        };
        Text::whole(text, Tone::Tool)
    }

    fn searchable(&self, i: EntryIdx, label: Option<&str>) -> String {
        let Some(line) = self.line(i) else { return String::new() };
        let mut out = line_text(self.s, &self.codex, i, &line).to_plain();
        if self.codex.items[i.get()].kind == Kind::Output {
            out.push(' ');
            out.push_str(&output_text(item_of(&line)));
        }
        if let Some(l) = label {
            out.push(' ');
            out.push_str(l);
        }
        out
    }
}
