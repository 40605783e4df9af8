//! What the tree shows of each Claude Code line, in pisces's style for Claude's tools
//! (`[Bash: npm test]`, `[Read: src/x.js:10-40]`). A reply's line that only calls tools is
//! hidden unless it is the leaf, as pi's tree hides them: the tool result's row names the
//! call.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::context::line;
use super::load::Str;
use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::{RowNeed, Unreadable};
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::validate::{validate, Verdict};
use crate::session::{js, Session};

/// What a row needs of its line.
#[derive(Debug)]
enum Info {
    User {
        text: String,
        summary: bool,
    },
    /// A prompt the user sent while a turn ran (a `queued_command` attachment).
    Queued {
        prompt: String,
    },
    Assistant {
        text: String,
        thinking: bool,
        only_calls: bool,
    },
    Result {
        call: String,
        error: bool,
        text: String,
    },
    Compaction {
        tokens: Option<f64>,
    },
    Custom {
        label: String,
        text: String,
    },
}

/// The rows of a session. What the tree needs before it draws (which replies only call
/// tools, and the calls) is read from every reply; a row's text is made from its line when
/// the row is drawn (on the tree's threads), as pi's rows are.
pub struct ClaudeRows<'s> {
    s: &'s Session<'s>,
    /// A reply whose blocks are all tool calls (hidden unless it is the leaf).
    only_calls: Vec<bool>,
    calls: Vec<Vec<ToolCall<'s>>>,
    /// The session's working directory: paths under it are shown relative to it.
    cwd: String,
}

/// The `type` of each content block of a reply, as far as blocks have one.
#[derive(Deserialize)]
struct KindsLine<'a> {
    #[serde(borrow)]
    message: Option<KindsMessage<'a>>,
}

#[derive(Deserialize)]
struct KindsMessage<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct KindBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
}

/// Whether a reply's blocks are all tool calls (at least one), as `info` decides it from
/// the parsed line: blocks that are not objects or have no string `type` do not count. (A
/// repeated key, which the parsed line resolves to its last value, makes this `false`.)
fn only_calls(raw: &[u8]) -> bool {
    let Some(content) = serde_json::from_slice::<KindsLine>(raw).ok().and_then(|l| l.message?.content) else {
        return false;
    };
    let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(content.get()) else { return false };
    let mut kinds = blocks.iter().filter_map(|b| serde_json::from_str::<KindBlock>(b.get()).ok()?.ty.0);
    let mut any = false;
    kinds.all(|k| {
        any = true;
        k == "tool_use" || k == "server_tool_use"
    }) && any
}

#[derive(Deserialize)]
struct CallsLine<'a> {
    #[serde(borrow)]
    message: CallsMessage<'a>,
}

#[derive(Deserialize)]
struct CallsMessage<'a> {
    #[serde(borrow)]
    content: Vec<CallBlock<'a>>,
}

#[derive(Deserialize)]
struct CallBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

fn calls_of(raw: &[u8]) -> Vec<ToolCall<'_>> {
    let Ok(l) = serde_json::from_slice::<CallsLine>(raw) else { return Vec::new() };
    l.message
        .content
        .into_iter()
        .filter(|b| matches!(b.ty.as_deref(), Some("tool_use") | Some("server_tool_use")))
        .map(|b| ToolCall {
            id: b.id.0.unwrap_or(Cow::Borrowed("")),
            name: b.name.0.unwrap_or(Cow::Borrowed("")),
            arguments: b.input.map(RawValue::get),
        })
        .collect()
}

fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map(str::to_string),
                Some("image") => Some("[image]".into()),
                Some("document") => Some("[document]".into()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// `attachment: environment`, `system: turn_duration`, `progress`: what a line that is not
/// part of the conversation is.
pub fn custom_label(v: &Value) -> String {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("?");
    let sub = match ty {
        "attachment" => v.get("attachment").and_then(|a| a.get("type")).and_then(Value::as_str),
        "system" => v.get("subtype").and_then(Value::as_str),
        "progress" => v.get("data").and_then(|d| d.get("type")).and_then(Value::as_str),
        _ => None,
    };
    match sub {
        Some(s) => format!("{ty}: {s}"),
        None => ty.to_string(),
    }
}

/// The fields a row reads of a line, and nothing else: a tool result's line carries its
/// output twice (`toolUseResult`), and the rest of a line is never shown in the tree.
#[derive(Deserialize)]
struct RowFields {
    #[serde(rename = "type")]
    ty: Option<Value>,
    message: Option<ContentField>,
    #[serde(rename = "isCompactSummary")]
    is_compact_summary: Option<Value>,
    #[serde(rename = "compactMetadata")]
    compact_metadata: Option<PreTokensField>,
    attachment: Option<AttachmentField>,
    subtype: Option<Value>,
    data: Option<TypeField>,
    content: Option<Value>,
}

#[derive(Deserialize)]
struct ContentField {
    content: Option<Value>,
}

#[derive(Deserialize)]
struct PreTokensField {
    #[serde(rename = "preTokens")]
    pre_tokens: Option<Value>,
}

#[derive(Deserialize)]
struct AttachmentField {
    #[serde(rename = "type")]
    ty: Option<Value>,
    prompt: Option<Value>,
}

#[derive(Deserialize)]
struct TypeField {
    #[serde(rename = "type")]
    ty: Option<Value>,
}

/// Entry `i`'s line with only the fields a row reads. A line those fields do not fit (a
/// field of another shape, a repeated key) is parsed whole, so the row is what the whole
/// line gives (`null` and absent fields read the same in `info`).
fn row_value(s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
    let Ok(f) = serde_json::from_slice::<RowFields>(s.raw_line(i)) else { return line(s, i) };
    let mut v = serde_json::Map::new();
    let mut put = |k: &str, x: Option<Value>| {
        if let Some(x) = x {
            v.insert(k.to_string(), x);
        }
    };
    put("type", f.ty);
    put("message", f.message.map(|m| serde_json::json!({ "content": m.content })));
    put("isCompactSummary", f.is_compact_summary);
    put("compactMetadata", f.compact_metadata.map(|m| serde_json::json!({ "preTokens": m.pre_tokens })));
    put("attachment", f.attachment.map(|a| serde_json::json!({ "type": a.ty, "prompt": a.prompt })));
    put("subtype", f.subtype);
    put("data", f.data.map(|d| serde_json::json!({ "type": d.ty })));
    put("content", f.content);
    Ok(Value::Object(v))
}

fn info(s: &Session, i: EntryIdx) -> Result<Info, Unreadable> {
    Ok(info_of(&s.entries[i], &row_value(s, i)?))
}

/// What entry `e`'s row shows, from its line `v` (whole, or the fields `row_value` keeps).
fn info_of(e: &crate::session::entry::EntryMeta, v: &Value) -> Info {
    let content = v.get("message").and_then(|m| m.get("content"));
    match (e.kind, e.role) {
        (EntryType::Message, Role::User) if v.get("type").and_then(Value::as_str) == Some("attachment") => {
            Info::Queued { prompt: super::entries::queued_prompt(v) }
        }
        (EntryType::Message, Role::User) => Info::User {
            // (A local command's output written as a system line has its text at the top.)
            text: text_of(content.or(v.get("content"))),
            summary: v.get("isCompactSummary").and_then(Value::as_bool) == Some(true),
        },
        (EntryType::Message, Role::ToolResult) => {
            let first = content.and_then(Value::as_array).and_then(|a| a.first());
            let text = first.map(|b| text_of(b.get("content"))).unwrap_or_default();
            Info::Result {
                call: first.and_then(|b| b.get("tool_use_id")).and_then(Value::as_str).unwrap_or_default().to_string(),
                error: first.and_then(|b| b.get("is_error")).and_then(Value::as_bool) == Some(true),
                text,
            }
        }
        (EntryType::Message, _) => {
            let blocks = content.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            let kinds: Vec<&str> = blocks.iter().filter_map(|b| b.get("type").and_then(Value::as_str)).collect();
            Info::Assistant {
                text: text_of(content),
                thinking: kinds.iter().any(|k| k.contains("thinking")),
                only_calls: !kinds.is_empty() && kinds.iter().all(|k| *k == "tool_use" || *k == "server_tool_use"),
            }
        }
        (EntryType::Compaction, _) => Info::Compaction {
            tokens: v.get("compactMetadata").and_then(|m| m.get("preTokens")).and_then(Value::as_f64),
        },
        _ => Info::Custom { label: custom_label(v), text: text_of(v.get("content")) },
    }
}

impl<'s> ClaudeRows<'s> {
    pub fn read(s: &'s Session<'s>, _need: RowNeed) -> Result<ClaudeRows<'s>, Unreadable> {
        let n = s.entries.len();
        let (mut only, mut calls) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in s.entries.indices() {
            let raw = s.raw_line(i);
            // A line the rows could not parse when drawn is found now, as the index would
            // find it (the read starts again without it), with the parser's own words.
            if !matches!(validate(raw), Verdict::Whole { .. }) {
                line(s, i)?;
            }
            let reply = s.entries[i].role == Role::Assistant;
            only.push(reply && only_calls(raw));
            calls.push(if reply { calls_of(raw) } else { Vec::new() });
        }
        Ok(ClaudeRows { s, only_calls: only, calls, cwd: s.header.cwd_str().unwrap_or_default().to_string() })
    }

    /// What entry `i`'s row shows, from its line (`None`: it does not parse).
    fn info(&self, i: EntryIdx) -> Option<Info> {
        info(self.s, i).ok()
    }
}

/// How a tool result the user (or the permission settings) refused begins: the row says
/// `(refused)` rather than `(error)`.
const REFUSALS: &[&str] =
    &["The user doesn't want to proceed with this tool use.", "Claude requested permissions to use "];

/// A `!` command the user ran in the client (bash mode: `<bash-input>`, then its output as
/// `<bash-stdout>` and `<bash-stderr>`) as the client shows it: `! ls`, `[! output] …`; a
/// local command (`<command-name>`, its caveat and output) as `/model sonnet`, `[command
/// output] …`.
fn command_text(text: &str) -> Option<String> {
    let inner = |t: &str, tag: &str| -> Option<String> {
        let rest = t.split_once(&format!("<{tag}>"))?.1;
        Some(rest.split_once(&format!("</{tag}>"))?.0.to_string())
    };
    if text.starts_with("<bash-input>") {
        return inner(text, "bash-input").map(|c| format!("! {c}"));
    }
    if text.starts_with("<bash-stdout>") || text.starts_with("<bash-stderr>") {
        let out = [inner(text, "bash-stdout"), inner(text, "bash-stderr")];
        let shown: Vec<String> = out.into_iter().flatten().filter(|t| !t.trim().is_empty()).collect();
        return Some(format!("[! output] {}", shown.join(" ")));
    }
    // A local command (`/model sonnet`): its name and arguments, and its output.
    if text.starts_with("<command-name>") {
        let name = inner(text, "command-name")?;
        let args = inner(text, "command-args").unwrap_or_default();
        return Some(format!("{name} {args}").trim_end().to_string());
    }
    if text.starts_with("<local-command-stdout>") || text.starts_with("<local-command-stderr>") {
        let out = [inner(text, "local-command-stdout"), inner(text, "local-command-stderr")];
        let shown: Vec<String> = out.into_iter().flatten().filter(|t| !t.trim().is_empty()).collect();
        return Some(format!("[command output] {}", shown.join(" ")).trim_end().to_string());
    }
    if text.starts_with("<local-command-caveat>") {
        return Some("[local command caveat]".into());
    }
    None
}

/// A prompt with text the user pasted (`<pasted_content id="…">…</pasted_content …>`, which
/// the client shows as "[Pasted text #1 +N lines]"), each paste as `[pasted text: N lines]`.
fn pasted_shown(text: &str) -> String {
    const OPEN: &str = "<pasted_content id=\"";
    let mut out = String::new();
    let mut rest = text;
    while let Some(k) = rest.find(OPEN) {
        let after = &rest[k + OPEN.len()..];
        let Some(id_end) = after.find("\">") else { break };
        let close = format!("</pasted_content id=\"{}\">", &after[..id_end]);
        let body = &after[id_end + 2..];
        let Some(end) = body.find(&close) else { break };
        let lines = body[..end].trim_matches('\n').lines().count();
        out.push_str(&rest[..k]);
        out.push_str(&format!("[pasted text: {lines} line{}]", if lines == 1 { "" } else { "s" }));
        rest = &body[end + close.len()..];
    }
    out.push_str(rest);
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}...", s.chars().take(n).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A path as the tree shows it: relative to the session's directory when under it, else
/// with the home directory as `~`.
fn show_path(p: &str, paths: &Paths) -> String {
    if !paths.cwd.is_empty() {
        if p == paths.cwd {
            return ".".to_string();
        }
        if let Some(rest) = p.strip_prefix(paths.cwd).and_then(|r| r.strip_prefix('/')) {
            return rest.to_string();
        }
    }
    if !paths.home.is_empty() {
        if let Some(rest) = p.strip_prefix(paths.home).filter(|r| r.is_empty() || r.starts_with('/')) {
            return format!("~{rest}");
        }
    }
    p.to_string()
}

/// `[Bash: npm test]`: one call as the tree shows it.
pub fn format_call(name: &str, args: Option<&str>, paths: &Paths) -> String {
    let args: Value = args.and_then(|a| serde_json::from_str(a).ok()).unwrap_or(Value::Null);
    let get = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
    let num = |k: &str| args.get(k).and_then(Value::as_f64);
    let detail = match name {
        "Bash" => cut(&one_line(get("command")), 50),
        "Read" => {
            let path = show_path(get("file_path"), paths);
            match (num("offset"), num("limit")) {
                (Some(o), Some(l)) => format!("{path}:{}-{}", o, o + l - 1.0),
                (Some(o), None) => format!("{path}:{o}"),
                (None, Some(l)) => format!("{path}:1-{l}"),
                (None, None) => path,
            }
        }
        "Edit" | "MultiEdit" | "Write" => show_path(get("file_path"), paths),
        "NotebookEdit" => show_path(get("notebook_path"), paths),
        "Grep" => {
            let at = args.get("path").and_then(Value::as_str).map_or_else(|| ".".to_string(), |p| show_path(p, paths));
            format!("/{}/ in {at}", get("pattern"))
        }
        "Glob" => {
            let at = args.get("path").and_then(Value::as_str).map_or_else(|| ".".to_string(), |p| show_path(p, paths));
            format!("{} in {at}", get("pattern"))
        }
        "Task" | "Agent" => cut(&one_line(get("description")), 50),
        "WebFetch" => get("url").to_string(),
        "WebSearch" => cut(get("query"), 50),
        "TodoWrite" => {
            let n = args.get("todos").and_then(Value::as_array).map_or(0, Vec::len);
            format!("{n} item{}", if n == 1 { "" } else { "s" })
        }
        _ => cut(&js::stringify(&args), 40),
    };
    format!("[{name}: {detail}]")
}

impl Rows for ClaudeRows<'_> {
    fn parent_undefined(&self, _: EntryIdx) -> bool {
        false
    }

    fn hidden_unless_leaf(&self, i: EntryIdx) -> bool {
        self.only_calls[i.get()]
    }

    fn calls(&self, i: EntryIdx) -> &[ToolCall<'_>] {
        &self.calls[i.get()]
    }

    fn text(&self, i: EntryIdx, calls: &CallMap, paths: &Paths) -> Text {
        let paths = &Paths { home: paths.home, cwd: if self.cwd.is_empty() { paths.cwd } else { &self.cwd } };
        let Some(info) = self.info(i) else { return Text::whole("(unreadable line)".into(), Tone::Error) };
        match &info {
            Info::User { text, summary: true } => {
                Text::new("[compaction summary]: ", Tone::Summary, one_line(text), Tone::Plain)
            }
            Info::User { text, .. } => match command_text(text) {
                Some(shown) => Text::new("user: ", Tone::User, one_line(&shown), Tone::Plain),
                None => Text::new("user: ", Tone::User, one_line(&pasted_shown(text)), Tone::Plain),
            },
            Info::Queued { prompt } => Text::new("user (queued): ", Tone::User, one_line(prompt), Tone::Plain),
            Info::Assistant { only_calls: true, .. } => {
                let shown: Vec<String> =
                    self.calls[i.get()].iter().map(|c| format_call(&c.name, c.arguments, paths)).collect();
                Text::whole(shown.join(" "), Tone::Tool)
            }
            Info::Assistant { text, thinking, .. } => {
                let body = if text.is_empty() && *thinking { "(thinking)".to_string() } else { one_line(text) };
                let tone = if text.is_empty() { Tone::Muted } else { Tone::Plain };
                Text::new("assistant: ", Tone::Assistant, body, tone)
            }
            Info::Result { call, error, text } => {
                let shown = match calls.get(call.as_str()) {
                    Some(c) => format_call(&c.name, c.arguments, paths),
                    None => "[tool result]".to_string(),
                };
                let mark = match error {
                    true if REFUSALS.iter().any(|r| text.starts_with(r)) => " (refused)",
                    true => " (error)",
                    false => "",
                };
                Text::whole(format!("{shown}{mark}"), Tone::Tool)
            }
            Info::Compaction { tokens } => {
                let t = tokens.map_or_else(String::new, |t| format!(": {}k tokens", (t / 1000.0).round()));
                Text::whole(format!("[compaction{t}]"), Tone::Summary)
            }
            Info::Custom { label, .. } => Text::whole(format!("[{label}]"), Tone::Dim),
        }
    }

    fn searchable(&self, i: EntryIdx, label: Option<&str>) -> String {
        let mut s = match self.info(i) {
            Some(Info::User { text, .. } | Info::Assistant { text, .. } | Info::Result { text, .. }) => text,
            Some(Info::Queued { prompt }) => prompt,
            Some(Info::Compaction { .. }) => "compaction".to_string(),
            Some(Info::Custom { label, text }) => format!("{label} {text}"),
            None => String::new(),
        };
        for c in &self.calls[i.get()] {
            s.push(' ');
            s.push_str(&c.name);
            if let Some(a) = c.arguments {
                s.push(' ');
                s.push_str(a);
            }
        }
        if let Some(l) = label {
            s.push(' ');
            s.push_str(l);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row made from the fields `row_value` keeps is the row made from the whole line, on
    /// every line of the corpus and on lines that need the fallback (a repeated key, fields
    /// of other shapes, nulls).
    #[test]
    fn rows_from_their_fields_are_rows_from_the_whole_line() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/claude-code-2.1.332");
        let mut lines: Vec<String> = Vec::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                lines.extend(std::fs::read_to_string(&path).unwrap().lines().map(str::to_string));
            }
        }
        assert!(lines.len() > 200, "{}", lines.len());
        lines.extend(
            [
                r#"{"type":"user","uuid":"u","message":{"content":"a"},"message":{"content":"b"}}"#,
                r#"{"type":"user","uuid":"u","message":"text","isCompactSummary":true}"#,
                r#"{"type":"attachment","uuid":"u","attachment":[1],"content":null}"#,
                r#"{"type":"progress","uuid":"u","data":{"type":7},"message":null}"#,
                r#"{"type":"system","uuid":"u","subtype":"compact_boundary","compactMetadata":{"preTokens":"9"}}"#,
                r#"{"type":"assistant","uuid":"u","message":{"content":[{"type":"tool_use"},"x",{"type":3}]}}"#,
            ]
            .map(String::from),
        );
        let kinds = [
            (EntryType::Message, Role::User),
            (EntryType::Message, Role::ToolResult),
            (EntryType::Message, Role::Assistant),
            (EntryType::Compaction, Role::None),
            (EntryType::Custom, Role::None),
        ];
        for (k, l) in lines.iter().enumerate() {
            let source = crate::session::Source::from_bytes("t.jsonl", format!("{l}\n").into_bytes());
            let whole: Value = match serde_json::from_str(l) {
                Ok(v) => v,
                Err(_) => continue,
            };
            // `row_value` on this line, through a session of one line.
            let session = match crate::formats::claude::load::load(&source, &Default::default()) {
                Ok(s) if s.entries.len() == 1 => s,
                _ => continue,
            };
            let i = EntryIdx::new(0);
            let kept = row_value(&session, i).unwrap();
            for (kind, role) in kinds {
                let e = crate::session::entry::EntryMeta::new(0, l.len(), crate::session::LineNo(1), kind, role);
                let (a, b) = (format!("{:?}", info_of(&e, &kept)), format!("{:?}", info_of(&e, &whole)));
                assert_eq!(a, b, "line {k}: {l:.200}");
            }
        }
    }
}
