//! What the tree shows of each rollout line, in pisces's style for Codex's tools
//! (`[exec_command: npm test]`, `[apply_patch: src/x.js]`). A call's line is hidden unless
//! it is the leaf: the output's row names the call and its exit code. Each rollout's first
//! line names its file, so a family drawn as one tree says where each branch is written.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

use super::context::item_of;
use super::entries::{call_arguments, exit_code, output_text, patch_files, type_label};
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
        Kind::Message => {
            let text = content_text(item.get("content"));
            match item.get("role").and_then(Value::as_str) {
                Some("user") if text.starts_with("<environment_context>") => {
                    Text::whole("[environment_context]".into(), Tone::Dim)
                }
                Some("user") => Text::new("user: ", Tone::User, one_line(&text), Tone::Plain),
                Some("assistant") => Text::new("assistant: ", Tone::Assistant, one_line(&text), Tone::Plain),
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
        Kind::Reasoning => {
            let summary: Vec<&str> = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .collect();
            let body = if summary.is_empty() { "(thinking)".to_string() } else { one_line(&summary.join(" ")) };
            Text::new("assistant: ", Tone::Assistant, body, Tone::Muted)
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
                Text::new("user: ", Tone::User, one_line(text), Tone::Plain)
            } else {
                Text::new("assistant: ", Tone::Assistant, one_line(text), Tone::Plain)
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
                let line = c.line(s, i)?;
                calls.push(call_of(s.raw_line(i), item_of(&line)));
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

/// The call a call's line makes. Its `arguments` are the item's JSON as written (the row
/// of its output reads the name and arguments from it).
fn call_of<'s>(raw: &'s [u8], item: &Value) -> Vec<ToolCall<'s>> {
    #[derive(serde::Deserialize)]
    struct Wrapped<'a> {
        #[serde(borrow)]
        payload: Option<&'a RawValue>,
    }
    let whole: Option<&RawValue> = serde_json::from_slice(raw).ok();
    let payload = serde_json::from_slice::<Wrapped>(raw).ok().and_then(|w| w.payload).or(whole);
    let id = item.get("call_id").or_else(|| item.get("id")).and_then(Value::as_str).unwrap_or_default();
    let name = item.get("name").and_then(Value::as_str).or_else(|| item.get("type").and_then(Value::as_str));
    vec![ToolCall {
        id: Cow::Owned(id.to_string()),
        name: Cow::Owned(name.unwrap_or("?").to_string()),
        arguments: payload,
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
        let Some(line) = self.line(i) else { return Text::whole("(unreadable line)".into(), Tone::Error) };
        if self.codex.items[i.get()].kind != Kind::Output {
            return line_text(self.s, &self.codex, i, &line);
        }
        // An output's row: its call, and the exit code it reports.
        let item = item_of(&line);
        let id = item.get("call_id").and_then(Value::as_str).unwrap_or_default();
        let cwd = self.codex.thread(i).cwd.as_deref().unwrap_or(paths.cwd);
        let call = calls.get(id).and_then(|c| {
            let item: Value = serde_json::from_str(c.arguments?.get()).ok()?;
            Some(format_call(&c.name, &call_arguments(&item), cwd))
        });
        let shown = call.unwrap_or_else(|| "[tool result]".to_string());
        let text = match exit_code(&output_text(item)) {
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
