//! What the tree shows of each rollout line, in pisces's style for Codex's tools
//! (`[exec_command: npm test]`, `[apply_patch: src/x.js]`). A call's line is hidden unless
//! it is the leaf: the output's row names the call and its exit code. Each rollout's first
//! line names its file, so a family drawn as one tree says where each branch is written.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::context::item_of;
use super::entries::{call_arguments, call_arguments_raw, output_text, patch_files, type_label, PATCH_FAILED};
use super::{Codex, Kind};
use crate::session::entry::EntryIdx;
use crate::session::format::{RowNeed, Unreadable};
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::{js, walk, Session};

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

/// How many characters of a message its row shows.
const ROW_CHARS: usize = 200;

/// A message's text as its row shows it: on one line, its first 200 characters (as pi
/// shows a message's first 200 in its tree), so a long message is not read whole.
fn row_line(s: &str) -> String {
    crate::session::text::one_line(s, ROW_CHARS)
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

/// What [`row_item`] reads of a line, found by walking the line's bytes instead of parsing
/// it: a tree of a 100 MB family draws ~27,000 rows, and parsing each line whole (every
/// string checked as UTF-8 and copied where it has escapes) was most of `tree`'s time. A
/// row needs only the start of a message's text, and an output's call id and first bytes.
///
/// Read only from a line of the usual shape, where the answer is the parse's: the line is
/// one JSON value that serde_json reads (validated, UTF-8, no surrogate escape), its
/// `payload` an object, and each field `RowLineItem` reads is there once, of the type it
/// reads. Anything else is `None`, and the line is parsed as before.
struct Walked<'a> {
    line: &'a str,
    role: Option<Cow<'a, str>>,
    call_id: Option<Cow<'a, str>>,
    /// Where these values are in the line.
    content: Option<Range<usize>>,
    summary: Option<Range<usize>>,
    message: Option<Range<usize>>,
    output: Option<Range<usize>>,
}

/// A string or `null` at `line[at]`, decoded (`Err`: another value, or an escape serde_json
/// refuses), and where it ends.
type Field<'a> = Result<(Option<Cow<'a, str>>, usize), ()>;

fn string_field(line: &str, at: usize) -> Field<'_> {
    let end = string_or_null_end(line, at)?;
    if end == at + 4 {
        return Ok((None, end));
    }
    let inner = &line[at + 1..end - 1];
    if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
        return Ok((Some(Cow::Borrowed(inner)), end));
    }
    let s: Result<String, ()> = walk::string_chars(line, at).collect();
    Ok((Some(Cow::Owned(s?)), end))
}

/// Where the string or `null` at `line[at]` ends (`Err`: another value), not decoding it:
/// its escapes are valid, since the line is.
fn string_or_null_end(line: &str, at: usize) -> Result<usize, ()> {
    match line.as_bytes().get(at) {
        Some(b'"') => walk::string_end(line.as_bytes(), at).ok_or(()),
        _ if line[at..].starts_with("null") => Ok(at + 4),
        _ => Err(()),
    }
}

impl<'a> Walked<'a> {
    fn read(raw: &'a [u8]) -> Option<Walked<'a>> {
        let line = crate::session::validate::serde_reads(raw)?;
        let b = raw;
        let mut w =
            Walked { line, role: None, call_id: None, content: None, summary: None, message: None, output: None };
        let (mut ty, mut payload) = (false, false);
        let start = walk::skip_ws(b, 0);
        let end = walk::object(b, start, |key, at| match key {
            b"type" if !std::mem::replace(&mut ty, true) => string_or_null_end(line, at).ok(),
            b"payload" if !std::mem::replace(&mut payload, true) => w.read_item(at),
            b"type" | b"payload" => None,
            _ => walk::value_end(b, at),
        })?;
        (payload && walk::skip_ws(b, end) == b.len()).then_some(w)
    }

    /// The payload's fields (`RowItem`'s), each once and of its type; its end.
    fn read_item(&mut self, at: usize) -> Option<usize> {
        let (line, b) = (self.line, self.line.as_bytes());
        let mut seen = 0u16;
        walk::object(b, at, |key, at| {
            const KEYS: [&[u8]; 9] =
                [b"role", b"content", b"summary", b"message", b"output", b"call_id", b"id", b"name", b"type"];
            let Some(k) = KEYS.iter().position(|&x| x == key) else { return walk::value_end(b, at) };
            if seen & (1 << k) != 0 {
                return None;
            }
            seen |= 1 << k;
            let raw_end = || walk::value_end(b, at);
            match key {
                b"content" | b"output" => {
                    let end = raw_end()?;
                    let slot = if key == b"content" { &mut self.content } else { &mut self.output };
                    // `null` reads as no value.
                    *slot = (&line[at..end] != "null").then_some(at..end);
                    Some(end)
                }
                b"summary" => {
                    let end = if line[at..].starts_with("null") {
                        at + 4
                    } else {
                        let end = blocks(line, at, |_, _| Some(()))?;
                        self.summary = Some(at..end);
                        end
                    };
                    Some(end)
                }
                b"message" => {
                    let end = string_or_null_end(line, at).ok()?;
                    self.message = (&line[at..end] != "null").then_some(at..end);
                    Some(end)
                }
                b"role" | b"call_id" => {
                    let (v, end) = string_field(line, at).ok()?;
                    *(if key == b"role" { &mut self.role } else { &mut self.call_id }) = v;
                    Some(end)
                }
                _ => string_or_null_end(line, at).ok(),
            }
        })
    }

    /// The row of a message, a reasoning summary or an event's message, as `light_text`
    /// makes it from the parsed item.
    fn light_text(&self, kind: Kind) -> Option<Text> {
        Some(match kind {
            Kind::Message => {
                let want =
                    if matches!(self.role.as_deref(), Some("user" | "assistant")) { Want::Row } else { Want::Tag };
                let mut head = Head::new(want);
                if let Some(r) = &self.content {
                    self.content_head(r.start, &mut head)?;
                }
                message_text(self.role.as_deref(), &head.text)
            }
            Kind::Reasoning => {
                let mut head = Head::new(Want::Row);
                let mut any = false;
                if let Some(r) = &self.summary {
                    blocks(self.line, r.start, |_, text| {
                        if let Some(at) = text {
                            if any && !head.full() {
                                head.push(' ');
                            }
                            any = true;
                            head.push_string(self.line, at)?;
                        }
                        Some(())
                    })?;
                }
                reasoning_text(any.then_some(&head.text))
            }
            Kind::EventUser | Kind::EventAgent => {
                let mut head = Head::new(Want::Row);
                if let Some(r) = &self.message {
                    head.push_string(self.line, r.start)?;
                }
                event_text(kind, &head.text)
            }
            _ => return None,
        })
    }

    /// A content's texts joined by spaces (`[image]` for an image), as `RowItem::text` joins
    /// them: a string's text; an array's blocks, or nothing when one of them is not a block.
    fn content_head(&self, at: usize, head: &mut Head) -> Option<()> {
        let line = self.line;
        match line.as_bytes()[at] {
            b'"' => head.push_string(line, at),
            b'[' => {
                let mut parts: Vec<Result<usize, &str>> = Vec::new();
                let ok = blocks(line, at, |ty, text| {
                    if ty.as_deref().is_some_and(|t| t.contains("image")) {
                        parts.push(Err("[image]"));
                    } else if let Some(at) = text {
                        parts.push(Ok(at));
                    }
                    Some(())
                });
                if ok.is_none() {
                    return Some(());
                }
                for (k, part) in parts.into_iter().enumerate() {
                    if head.full() {
                        break;
                    }
                    if k > 0 {
                        head.push(' ');
                    }
                    match part {
                        Ok(at) => head.push_string(line, at)?,
                        Err(s) => s.chars().for_each(|c| head.push(c)),
                    }
                }
                Some(())
            }
            _ => Some(()),
        }
    }
}

/// Walks an array of `{type?, text?}` blocks (each a string or `null`, once), calling `f`
/// with each block's type and where its text starts; `None` when it is not such an array.
fn blocks<'a>(
    line: &'a str,
    at: usize,
    mut f: impl FnMut(Option<Cow<'a, str>>, Option<usize>) -> Option<()>,
) -> Option<usize> {
    let b = line.as_bytes();
    walk::array(b, at, |at| {
        let (mut ty, mut text, mut seen) = (None, None, (false, false));
        let end = walk::object(b, at, |key, at| match key {
            b"type" if !std::mem::replace(&mut seen.0, true) => {
                let (v, end) = string_field(line, at).ok()?;
                ty = v;
                Some(end)
            }
            b"text" if !std::mem::replace(&mut seen.1, true) => {
                let end = string_or_null_end(line, at).ok()?;
                text = (end != at + 4).then_some(at);
                Some(end)
            }
            b"type" | b"text" => None,
            _ => walk::value_end(b, at),
        })?;
        f(ty, text)?;
        Some(end)
    })
}

/// The start of a text, as much of it as a row shows. A row is `one_line(text, 200)`,
/// which reads at most 201 characters that are not whitespace, so a text cut after those
/// makes the same row; a tag (`[developer: <tag>]`) ends at the first `>` or space after
/// the leading `<`.
struct Head {
    text: String,
    want: Want,
    /// Characters read that are not whitespace.
    solid: usize,
    done: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// What `row_line` reads.
    Row,
    /// What `message_text` reads of a tag.
    Tag,
}

impl Head {
    fn new(want: Want) -> Head {
        Head { text: String::new(), want, solid: 0, done: false }
    }

    fn full(&self) -> bool {
        self.done
    }

    fn push(&mut self, c: char) {
        let white = c.is_whitespace();
        self.text.push(c);
        match self.want {
            Want::Row => {
                self.solid += usize::from(!white);
                self.done = self.solid > ROW_CHARS;
            }
            // Before the tag: whitespace, then `<` (anything else: no tag).
            Want::Tag if self.solid == 0 => {
                if !white {
                    self.solid = 1;
                    self.done = c != '<';
                }
            }
            Want::Tag => self.done = c == '>' || c == ' ',
        }
    }

    /// Appends the string at `line[at]`, as far as needed: runs without escapes at once.
    fn push_string(&mut self, line: &str, at: usize) -> Option<()> {
        let mut rest = line.get(at + 1..)?;
        while !self.done {
            let k = memchr::memchr2(b'"', b'\\', rest.as_bytes())?;
            self.push_run(&rest[..k]);
            if self.done || rest.as_bytes()[k] == b'"' {
                break;
            }
            let (c, after) = walk::unescape(&rest[k..]);
            self.push(c.ok()?);
            rest = after;
        }
        Some(())
    }

    /// Appends text without escapes, as far as needed.
    fn push_run(&mut self, run: &str) {
        if self.want == Want::Row && run.is_ascii() {
            // (An ASCII byte is whitespace as its char is.)
            let need = ROW_CHARS + 1 - self.solid;
            let mut n = 0;
            for (j, b) in run.bytes().enumerate() {
                if !(b as char).is_whitespace() {
                    n += 1;
                    if n == need {
                        self.text.push_str(&run[..=j]);
                        (self.solid, self.done) = (self.solid + n, true);
                        return;
                    }
                }
            }
            self.text.push_str(run);
            self.solid += n;
            return;
        }
        for c in run.chars() {
            self.push(c);
            if self.done {
                return;
            }
        }
    }
}

/// The exit code an output reports, read from its JSON text (`Process exited with code N`,
/// `Exit code: N` near its start) without decoding it.
fn raw_exit_code(output: &str) -> Option<i64> {
    let head = output.get(..output.len().min(400)).unwrap_or(output);
    for mark in ["Process exited with code ", "Exit code: "] {
        if let Some(at) = head.find(mark) {
            let digits: String =
                head[at + mark.len()..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            return digits.parse().ok();
        }
    }
    None
}

/// Whether an output, as its JSON text, is apply_patch's report of a patch it could not
/// apply (a success starts with `Exit code: 0`).
fn raw_patch_failed(output: &str) -> bool {
    output.trim_start_matches('"').starts_with(PATCH_FAILED)
}

/// The row of entry `i`, read from its raw line; lines a row shows only by type, and
/// calls, from the parsed line.
pub fn row_text(s: &Session, c: &Codex, i: EntryIdx) -> Result<Text, Unreadable> {
    let kind = c.items[i.get()].kind;
    let light = matches!(kind, Kind::Message | Kind::Reasoning)
        || (matches!(kind, Kind::EventUser | Kind::EventAgent)
            && s.entries[i].kind == crate::session::EntryType::Message);
    if light {
        if let Some(text) = Walked::read(s.raw_line(i)).and_then(|w| w.light_text(kind)) {
            return Ok(text);
        }
        if let Some(item) = row_item(s.raw_line(i)) {
            return Ok(light_text(kind, &item));
        }
    }
    Ok(line_text(s, c, i, &c.line(s, i)?))
}

fn light_text(kind: Kind, item: &RowItem) -> Text {
    match kind {
        Kind::Message => message_text(item.role.as_deref(), &item.text()),
        Kind::Reasoning => {
            let summary: Vec<&str> = item.summary.iter().flatten().filter_map(|b| b.text.as_deref()).collect();
            reasoning_text((!summary.is_empty()).then(|| summary.join(" ")).as_deref())
        }
        _ => event_text(kind, item.message.as_deref().unwrap_or_default()),
    }
}

/// A user's or the agent's message event (a thread written as events only).
fn event_text(kind: Kind, text: &str) -> Text {
    if kind == Kind::EventUser {
        Text::new("user: ", Tone::User, row_line(text), Tone::Plain)
    } else {
        Text::new("assistant: ", Tone::Assistant, row_line(text), Tone::Plain)
    }
}

fn message_text(role: Option<&str>, text: &str) -> Text {
    match role {
        Some("user") if text.starts_with("<environment_context>") => {
            Text::whole("[environment_context]".into(), Tone::Dim)
        }
        // A command the user ran in the TUI with `!`, which the client gives the model as
        // a message: shown as the TUI shows it.
        Some("user") if text.starts_with("<user_shell_command>") => {
            let rest = text.split_once("<command>").map_or("", |(_, r)| r);
            let command = rest.split_once("</command>").map_or(rest, |(c, _)| c);
            Text::new("user: ", Tone::User, format!("! {}", row_line(command.trim())), Tone::Plain)
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

/// A reasoning item's row: its summary's texts joined, if it has any.
fn reasoning_text(summary: Option<&str>) -> Text {
    let body = summary.map_or_else(|| "(thinking)".to_string(), row_line);
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
            reasoning_text((!summary.is_empty()).then(|| summary.join(" ")).as_deref())
        }
        Kind::Call if item.get("type").and_then(Value::as_str) == Some("web_search_call") => {
            let query = item.pointer("/action/query").and_then(Value::as_str).unwrap_or_default();
            Text::whole(format!("[web_search: {}]", row_line(query)), Tone::Tool)
        }
        Kind::Call => {
            let name = item.get("name").and_then(Value::as_str).or_else(|| item.get("type").and_then(Value::as_str));
            Text::whole(format_call(name.unwrap_or("?"), &call_arguments(item), cwd), Tone::Tool)
        }
        Kind::Output => Text::whole("[tool result]".into(), Tone::Tool),
        // The conversation of a thread written as events only (else a copy of an item's).
        Kind::EventUser | Kind::EventAgent if s.entries[i].kind == crate::session::EntryType::Message => {
            let text = line.pointer("/payload/message").and_then(Value::as_str).unwrap_or_default();
            event_text(c.items[i.get()].kind, text)
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
            // The server's own calls have no output to draw them: they are rows of their own.
            if c.items[i.get()].kind == Kind::Call && !server_call(s.raw_line(i)) {
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

/// Whether a call's line is one of the server's own calls (a web search, an image made),
/// which no output item answers.
fn server_call(raw: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(raw, k).is_some();
    has(b"\"web_search_call\"") || has(b"\"image_generation_call\"")
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
        let raw = self.s.raw_line(i);
        let (id, exit, failed) = match Walked::read(raw) {
            Some(w) => {
                let out = w.output.clone().map(|o| &w.line[o]);
                (w.call_id.clone(), out.and_then(raw_exit_code), out.is_some_and(raw_patch_failed))
            }
            None => match row_item(raw) {
                Some(item) => {
                    let out = item.output.map(RawValue::get);
                    (item.call_id, out.and_then(raw_exit_code), out.is_some_and(raw_patch_failed))
                }
                None => return Text::whole("(unreadable line)".into(), Tone::Error),
            },
        };
        let id = id.as_deref().unwrap_or_default();
        let cwd = self.codex.thread(i).cwd.as_deref().unwrap_or(paths.cwd);
        let call = calls.get(id).and_then(|c| Some(format_call(&c.name, &call_arguments_raw(c.arguments?)?, cwd)));
        let shown = call.unwrap_or_else(|| "[tool result]".to_string());
        let text = match exit {
            Some(0) | None if failed => format!("{shown} (failed)"),
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

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [Kind; 4] = [Kind::Message, Kind::Reasoning, Kind::EventUser, Kind::EventAgent];

    /// The row and the output's call and exit code as the parse makes them.
    fn parsed(kind: Kind, line: &str) -> Option<(String, Option<String>, Option<i64>)> {
        let item = row_item(line.as_bytes())?;
        let exit = item.output.map(RawValue::get).and_then(raw_exit_code);
        Some((format!("{:?}", light_text(kind, &item)), item.call_id.map(Cow::into_owned), exit))
    }

    fn walked(kind: Kind, line: &str) -> Option<(String, Option<String>, Option<i64>)> {
        let w = Walked::read(line.as_bytes())?;
        let exit = w.output.clone().and_then(|o| raw_exit_code(&w.line[o]));
        Some((format!("{:?}", w.light_text(kind)?), w.call_id.clone().map(Cow::into_owned), exit))
    }

    /// Texts around the row's cut (201 characters that are not whitespace), with escapes,
    /// tags, and whitespace of every kind.
    fn texts() -> Vec<String> {
        let mut t: Vec<String> = [
            "",
            "short",
            "  leading and trailing  ",
            "a\\nb\\tc \\\"quoted\\\" back\\\\slash \\/ \\u00e9 é 😀",
            "<environment_context>\\n  <cwd>/x</cwd>",
            "<skills_instructions>\\n## Skills",
            "  \\n <tag attr=1> body",
            "<unclosed tag without end",
            "no tag <here>",
            "\\u2003em\\u2003spaces\\u00a0nbsp",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in [199, 200, 201, 202, 260] {
            t.push("x".repeat(n));
            t.push(format!("{} {}", "y".repeat(n / 2), "z".repeat(n - n / 2)));
            t.push(format!("{}\\n\\n{}", "é".repeat(n / 2), "\\u00e9".repeat(n)));
            t.push(format!("{}{}", " ".repeat(n), "w".repeat(n)));
        }
        t
    }

    #[test]
    fn walked_rows_are_the_parsed_rows() {
        let mut usual = Vec::new();
        for text in texts() {
            let block = |ty: &str| format!(r#"{{"type":"{ty}","text":"{text}"}}"#);
            for role in [r#""user""#, r#""assistant""#, r#""developer""#, "null"] {
                usual.push(format!(
                    r#"{{"timestamp":"t","type":"response_item","payload":{{"type":"message","id":"m","role":{role},"content":[{}]}}}}"#,
                    block("input_text")
                ));
                usual.push(format!(
                    r#"{{"type":"response_item","payload":{{"role":{role},"content":[{},{{"type":"input_image","image_url":"u"}},{{"type":"x","text":null}},{}],"end_turn":true}}}}"#,
                    block("output_text"),
                    block("output_text")
                ));
                usual.push(format!(r#"{{"type":"response_item","payload":{{"role":{role},"content":"{text}"}}}}"#));
            }
            usual.push(format!(
                r#"{{"type":"response_item","payload":{{"type":"reasoning","summary":[{},{}],"content":null}}}}"#,
                block("summary_text"),
                block("summary_text")
            ));
            usual.push(r#"{"type":"response_item","payload":{"type":"reasoning","summary":[]}}"#.to_string());
            usual.push(format!(r#"{{"type":"event_msg","payload":{{"type":"user_message","message":"{text}"}}}}"#));
            usual.push(format!(
                r#"{{"type":"response_item","payload":{{"type":"function_call_output","call_id":"c\u00e9","output":"Chunk\nProcess exited with code 3\n{text}"}}}}"#
            ));
        }
        for line in &usual {
            for kind in KINDS {
                let w = walked(kind, line);
                assert!(w.is_some(), "a usual line is read by walking: {line}");
                assert_eq!(w, parsed(kind, line), "{kind:?} {line}");
            }
        }
        // Other shapes: read as the parse reads them, or left to it.
        let odd = [
            // Blocks that are not blocks: no text, as the parse finds none.
            r#"{"type":"response_item","payload":{"role":"user","content":["plain"]}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":[{"text":"a","text":"b"}]}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":[{"text":1}]}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":7}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":null}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":{"text":"x"}}}"#,
            // Left to the parse.
            r#"{"type":"response_item","payload":{"role":"user","role":"assistant","content":"x"}}"#,
            r#"{"type":"a","type":"b","payload":{"role":"user","content":"x"}}"#,
            r#"{"payload":{"role":"user"},"payload":{"role":"assistant"}}"#,
            r#"{"type":"response_item","payload":{"role":3,"content":"x"}}"#,
            r#"{"type":"response_item","payload":{"id":{},"content":"x"}}"#,
            r#"{"type":"response_item","payload":null}"#,
            r#"{"type":"response_item","payload":"x"}"#,
            r#"{"type":"response_item"}"#,
            r#"{"type":"response_item","payload":{"r\u006fle":"user","content":"x"}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":"\ud800"}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":"x"},"other":"\udc00"}"#,
            r#"{"type":"response_item","payload":{"summary":[{"text":"a"},"b"]}}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":"x"}"#,
            r#"{"type":"response_item","payload":{"role":"user","content":"x"}} x"#,
            r#"[{"type":"response_item"}]"#,
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":5}}"#,
            // A surrogate pair written as escapes (serde_json writes the character itself).
            r#"{"type":"response_item","payload":{"role":"user","content":"\ud83d\ude00"}}"#,
        ];
        for line in odd {
            for kind in KINDS {
                if let Some(w) = walked(kind, line) {
                    assert_eq!(Some(w), parsed(kind, line), "{kind:?} {line}");
                }
            }
        }
        // The first six are read by walking; the rest are not.
        assert!(odd[..6].iter().all(|l| Walked::read(l.as_bytes()).is_some()));
        assert!(odd[6..].iter().all(|l| Walked::read(l.as_bytes()).is_none()), "left to the parse");
    }
}
