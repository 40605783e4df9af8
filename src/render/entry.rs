//! One entry, whole and readable (`pisces show`).
//!
//! A title line, the entry's facts as aligned `key  value` rows, then its payload: each
//! field of the entry type (docs/pi-format.md §1.4), each content block of a message (§1.5) in
//! full (tool-call arguments as pretty JSON, images as `[image/png 34 KB]`), usage and
//! cost. Fields pisces does not know are printed too (short ones as rows, others as
//! pretty JSON), and an entry of an unknown type is printed as pretty JSON: nothing in
//! the line is hidden.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Map, Value};

use super::json::SessionJson;
use super::table::thousands;
use super::transcript::image_note;
use super::{sanitize, Paint, Ui};
use crate::session::format::Spilled;
use crate::session::{js, EntryIdx, EntryType, LineNo, Session};

/// Width of the key column.
const KEY: usize = 16;

/// What `show` knows about an entry besides its line: facts from the whole file.
pub struct EntryHead {
    pub kind: EntryType,
    /// The id to title the entry with (`#N` for an entry without one).
    pub id: String,
    /// pi's current leaf (`@`).
    pub is_default_leaf: bool,
    /// `key  value` rows under the title (id, parent, line, timestamp, label, …).
    pub rows: Vec<(String, String)>,
}

/// Answers about other entries of the session, for rows that name one by id.
pub trait Lookup {
    /// `line 12 · user: fix the tests`, for an id of this session.
    fn describe(&self, id: &str) -> Option<String>;
    /// The label currently in effect on `target`: its text and the line of its `label` entry.
    fn label_in_effect(&self, target: &str) -> Option<(String, LineNo)>;
    /// The line of the entry being shown.
    fn line(&self) -> LineNo;
}

pub fn write_entry(w: &mut dyn Write, ui: &Ui, head: &EntryHead, entry: &Value, refs: &dyn Lookup) -> io::Result<()> {
    let mut out = Out { w, ui, after_block: false };
    let (title, paint) = title(head.kind, entry);
    let mut line = format!("▍{title}  {}", head.id);
    if head.is_default_leaf {
        line += "  @";
    }
    out.title(paint, &line)?;
    for (k, v) in &head.rows {
        out.row(k, v)?;
    }
    let Value::Object(map) = entry else {
        // A line that is JSON but no object: pi keeps it as an entry without type or id.
        return out.json_block("value (not an object)", entry);
    };
    let known: &[&str] = &["type", "id", "parentId", "timestamp"];
    match head.kind {
        EntryType::Message => match map.get("message") {
            Some(Value::Object(m)) => {
                write_message(&mut out, m)?;
                out.rest(map, &[known, &["message"]].concat())
            }
            Some(other) => {
                out.json_block("message (not an object)", other)?;
                out.rest(map, &[known, &["message"]].concat())
            }
            None => {
                out.row("message", "(none: pi crashes on this entry when it is on the path)")?;
                out.rest(map, known)
            }
        },
        EntryType::ThinkingLevelChange => {
            out.row("thinking level", &text(map.get("thinkingLevel")))?;
            out.rest(map, &[known, &["thinkingLevel"]].concat())
        }
        EntryType::ModelChange => {
            out.row("model", &format!("{}/{}", text(map.get("provider")), text(map.get("modelId"))))?;
            out.rest(map, &[known, &["provider", "modelId"]].concat())
        }
        EntryType::Compaction => write_compaction(&mut out, map, refs, known),
        EntryType::BranchSummary => {
            let from = match map.get("fromId") {
                Some(Value::String(s)) if s == "root" => "root (there was no leaf before the navigation)".to_string(),
                v => refer(refs, v),
            };
            out.row("from", &from)?;
            flag_row(&mut out, map, "fromHook", "from hook")?;
            details_rows(&mut out, map.get("details"))?;
            if let Some(u) = map.get("usage") {
                usage_rows(&mut out, u)?;
            }
            out.text_block("summary", map.get("summary"))?;
            out.rest(map, &[known, &["fromId", "fromHook", "details", "usage", "summary"]].concat())
        }
        EntryType::Usage => {
            out.row("kind", &text(map.get("kind")))?;
            out.row("model", &format!("{}/{}", text(map.get("provider")), text(map.get("model"))))?;
            if let Some(n) = map.get("note") {
                out.row("note", &text(Some(n)))?;
            }
            if let Some(u) = map.get("usage") {
                usage_rows(&mut out, u)?;
            }
            out.rest(map, &[known, &["kind", "provider", "model", "note", "usage"]].concat())
        }
        EntryType::ContextEdit => {
            out.row("target", &refer(refs, map.get("targetId")))?;
            match map.get("replacement") {
                None | Some(Value::Null) => {
                    out.row("edit", "omit (the target contributes nothing to the context)")?;
                }
                Some(Value::Object(r)) => {
                    out.row("edit", "replace the target's content with:")?;
                    write_content(&mut out, r.get("content"))?;
                    out.rest(r, &["content"])?;
                }
                Some(other) => out.json_block("replacement", other)?,
            }
            out.rest(map, &[known, &["targetId", "replacement"]].concat())
        }
        EntryType::Custom => {
            out.row("custom type", &text(map.get("customType")))?;
            out.row("context", "none (extension state, never sent to the model)")?;
            if let Some(d) = map.get("data") {
                out.value("data", d)?;
            }
            out.rest(map, &[known, &["customType", "data"]].concat())
        }
        EntryType::CustomMessage => {
            out.row("custom type", &text(map.get("customType")))?;
            flag_row(&mut out, map, "display", "display")?;
            write_content(&mut out, map.get("content"))?;
            if let Some(d) = map.get("details") {
                out.value("details", d)?;
            }
            out.rest(map, &[known, &["customType", "display", "content", "details"]].concat())
        }
        EntryType::Label => {
            let target = map.get("targetId");
            out.row("target", &refer(refs, target))?;
            let set = js::truthy(map.get("label"));
            out.row("label", &if set { text(map.get("label")) } else { "(cleared)".into() })?;
            let current = target.and_then(Value::as_str).and_then(|t| refs.label_in_effect(t));
            let status = match current {
                Some((_, l)) if l == refs.line() => "in effect".to_string(),
                Some((t, l)) => format!("superseded by line {l} (\"{t}\")"),
                None if set => "cleared by a later label entry".into(),
                None => "no label in effect on the target".into(),
            };
            out.row("status", &status)?;
            out.rest(map, &[known, &["targetId", "label"]].concat())
        }
        EntryType::SessionInfo => {
            let name = map.get("name");
            let trimmed = name.and_then(Value::as_str).map(str::trim).unwrap_or("");
            if trimmed.is_empty() {
                out.row("name", "(empty: clears the session name)")?;
            } else {
                out.row("name", &text(name))?;
            }
            out.rest(map, &[known, &["name"]].concat())
        }
        EntryType::Other | EntryType::Missing | EntryType::NotObject => {
            let what = match map.get("type") {
                Some(t) => format!("entry (unknown type {}; pi keeps it in the tree, it adds no context)", t),
                None => "entry (no type; pi keeps it in the tree, it adds no context)".into(),
            };
            out.json_block(&what, entry)
        }
    }
}

/// What `show` has of an entry.
pub enum Shown {
    /// The entry whole.
    Whole(Value),
    /// Valid JSON pisces cannot read whole (too deep, a number beyond f64), and why.
    Unreadable(String),
    /// Only its line (`--raw`).
    Raw,
}

/// `show`'s text: each entry, a blank line between them.
pub fn write_entries(w: &mut dyn Write, ui: &Ui, session: &Session, picked: &[(EntryIdx, Shown)]) -> io::Result<()> {
    for (n, (i, shown)) in picked.iter().enumerate() {
        if n > 0 {
            writeln!(w)?;
        }
        let refs = Refs { session, line: session.entries[*i].line };
        match shown {
            Shown::Whole(value) => write_entry(w, ui, &head(session, *i, value), value, &refs)?,
            Shown::Unreadable(why) => {
                let mut head = head(session, *i, &Value::Null);
                head.rows
                    .push(("content".into(), format!("cannot be read by pisces: {why} (`--raw` prints the line)")));
                let mut out = Out { w, ui, after_block: false };
                out.title(Paint::Error, &format!("▍{}  {}", session.entries[*i].kind_label(), head.id))?;
                for (k, v) in &head.rows {
                    out.row(k, v)?;
                }
            }
            Shown::Raw => {}
        }
    }
    Ok(())
}

/// `show --format json`: `{"version":1, "session", "entries":[…]}`.
#[derive(Serialize)]
struct ShowDocument<'s> {
    version: u32,
    session: SessionJson<'s>,
    entries: Vec<ShownEntry<'s>>,
}

/// One entry of `show --format json`: the entry as its agent holds it in memory
/// (`entry`), and what the whole file says about it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShownEntry<'s> {
    id: Value,
    /// The file the line is in, when not the one read (a Codex fork's inherited lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    line: LineNo,
    parent_line: Option<LineNo>,
    depth: usize,
    label: Option<ShownLabel<'s>>,
    is_leaf: bool,
    is_default_leaf: bool,
    children: Vec<Value>,
    /// `null` for an entry pisces cannot read whole (`unreadable` says why).
    entry: Option<&'s Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unreadable: Option<&'s str>,
    /// Outputs kept in files beside the session (oh-my-pi's `artifact://N`): `ref`, `path`,
    /// `bytes` (`null`: the file is missing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    spilled: Vec<Spilled>,
}

#[derive(Serialize)]
struct ShownLabel<'s> {
    text: &'s str,
    timestamp: &'s Value,
    line: LineNo,
}

pub fn write_json(w: &mut dyn Write, session: &Session, picked: &[(EntryIdx, Shown)]) -> io::Result<()> {
    let entries = picked
        .iter()
        .map(|(i, shown)| {
            let i = *i;
            let children: Vec<Value> = session.children(i).map(|c| session.id_value(c)).collect();
            let (file, line) = session.place(i);
            ShownEntry {
                id: session.id_value(i),
                file,
                line,
                parent_line: session.parent(i).map(|p| session.entries[p].line),
                depth: session.depth(i),
                label: session.label_at(i).map(|l| ShownLabel {
                    text: &l.text,
                    timestamp: &l.timestamp,
                    line: session.entries[l.entry].line,
                }),
                is_leaf: children.is_empty(),
                is_default_leaf: session.default_leaf() == Some(i),
                children,
                entry: match shown {
                    Shown::Whole(v) => Some(v),
                    _ => None,
                },
                unreadable: match shown {
                    Shown::Unreadable(why) => Some(why.as_str()),
                    _ => None,
                },
                spilled: session.dialect().spilled(session, i),
            }
        })
        .collect();
    let doc = ShowDocument { version: 1, session: SessionJson::of(session), entries };
    super::json::write_pretty(&mut *w, &doc)?;
    writeln!(w)
}

/// The facts `show` prints under an entry's title.
fn head(session: &Session, i: EntryIdx, entry: &Value) -> EntryHead {
    let e = &session.entries[i];
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, v: String| rows.push((k.to_string(), v));
    let parent = match (session.parent_id(i), session.parent(i)) {
        // A format whose lines name no parent (Codex: the line before is the parent).
        (None, Some(p)) => format!("{}  ({})", session.display_id(p), describe(session, p)),
        (None, None) => "none (a root)".to_string(),
        (Some(pid), Some(p)) => format!("{pid}  ({})", describe(session, p)),
        (Some(pid), None) if Some(pid) == session.id(i) => format!("{pid} (itself; a root, as in pi's tree)"),
        (Some(pid), None) if session.get_id(pid).is_some() => format!("{pid} (a parent cycle is cut here: a root)"),
        (Some(pid), None) => format!("{pid} (not in this file: a root, as in pi's tree)"),
    };
    row("parent", parent);
    row(
        "line",
        match session.place(i) {
            (Some(file), line) => format!("{line} of {file}"),
            (None, line) => line.to_string(),
        },
    );
    let timestamp = match entry.get("timestamp") {
        None => "(none)".into(),
        Some(t) => {
            let t = match t {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if session.time(i).is_none() {
                format!("{t} (not a date: sorts as equal to its siblings)")
            } else {
                t
            }
        }
    };
    row("timestamp", timestamp);
    if let Some(l) = session.label_at(i) {
        row("label", format!("{}  (label entry on line {})", l.text, session.entries[l.entry].line));
    }
    let children: Vec<String> =
        session.children(i).map(|c| format!("{}  ({})", session.display_id(c), describe(session, c))).collect();
    row("children", if children.is_empty() { "none (a leaf)".into() } else { children.join("\n") });
    row("depth", session.depth(i).to_string());
    if e.shadowed() {
        row("note", "a later entry has the same id; pi's index (and an id REV) names that one".into());
    }
    // An output too large for the session: the entry holds what the model saw, the file the
    // rest (the path is sanitized when the row is written).
    let spilled: Vec<String> = session
        .dialect()
        .spilled(session, i)
        .iter()
        .map(|sp| match sp.bytes {
            Some(n) => {
                format!("{} is {} ({} bytes: the whole output)", sp.reference, sp.path.display(), thousands(n as f64))
            }
            None => format!("{} is missing (no {})", sp.reference, sp.path.display()),
        })
        .collect();
    if !spilled.is_empty() {
        row("spilled", spilled.join("\n"));
    }
    EntryHead {
        kind: e.kind,
        id: session.display_id(i).into_owned(),
        is_default_leaf: session.default_leaf() == Some(i),
        rows,
    }
}

fn describe(session: &Session, i: EntryIdx) -> String {
    format!("line {} · {}", session.entries[i].line, session.preview(i, 60))
}

struct Refs<'s, 'a> {
    session: &'s Session<'a>,
    line: LineNo,
}

impl Lookup for Refs<'_, '_> {
    fn describe(&self, id: &str) -> Option<String> {
        self.session.get(id).map(|j| describe(self.session, j))
    }

    fn label_in_effect(&self, target: &str) -> Option<(String, LineNo)> {
        self.session.label_of(target).map(|l| (l.text.clone(), self.session.entries[l.entry].line))
    }

    fn line(&self) -> LineNo {
        self.line
    }
}

fn title(kind: EntryType, entry: &Value) -> (String, Paint) {
    let role = entry.get("message").and_then(|m| m.get("role")).and_then(Value::as_str);
    match kind {
        EntryType::Message => {
            let paint = match role {
                Some("user") | Some("bashExecution") => Paint::User,
                Some("assistant") => Paint::Assistant,
                Some("toolResult") if js::truthy(entry["message"].get("isError")) => Paint::Error,
                Some("toolResult") => Paint::Tool,
                Some("system") => Paint::System,
                Some("custom") | Some("hookMessage") => Paint::Summary,
                _ => Paint::Dim,
            };
            let role = match role {
                Some(r) => r.to_string(),
                None => "(no role)".into(),
            };
            (format!("message: {role}"), paint)
        }
        EntryType::Compaction | EntryType::BranchSummary | EntryType::CustomMessage => {
            (kind.name().into(), Paint::Summary)
        }
        EntryType::Label => (kind.name().into(), Paint::Label),
        EntryType::ModelChange | EntryType::ThinkingLevelChange => (kind.name().into(), Paint::System),
        EntryType::Other => (format!("{} (unknown type)", text(entry.get("type"))), Paint::Dim),
        EntryType::Missing => ("entry without a type".into(), Paint::Dim),
        EntryType::NotObject => ("line that is not an object".into(), Paint::Dim),
        _ => (kind.name().into(), Paint::Dim),
    }
}

fn write_message(out: &mut Out, m: &Map<String, Value>) -> io::Result<()> {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let s = |k: &str| text(m.get(k));
    let mut known: Vec<&str> = vec!["role", "timestamp"];
    match role {
        // (`developer`: oh-my-pi's messages from the harness, content like the user's.)
        "user" | "developer" => {
            time_row(out, m)?;
            write_content(out, m.get("content"))?;
            known.push("content");
        }
        "assistant" => {
            let mut model = format!("{}/{}", s("provider"), s("model"));
            if let Some(r) = m.get("responseModel").filter(|r| r.as_str() != m.get("model").and_then(Value::as_str)) {
                model += &format!(" (answered as {})", text(Some(r)));
            }
            out.row("model", &model)?;
            if let Some(api) = m.get("api") {
                out.row("api", &text(Some(api)))?;
            }
            let mut stop = s("stopReason");
            if let Some(raw) = m.get("rawStopReason") {
                stop += &format!(" (provider: {})", text(Some(raw)));
            }
            out.row("stop reason", &stop)?;
            if let Some(e) = m.get("errorMessage") {
                out.paint_row("error", &text(Some(e)), Paint::Error)?;
            }
            for (k, label) in [("thinkingLevel", "thinking"), ("providerThinkingLevel", "provider thinking")] {
                if let Some(v) = m.get(k) {
                    out.row(label, &text(Some(v)))?;
                }
            }
            duration_row(out, m)?;
            if let Some(id) = m.get("responseId") {
                out.row("response id", &text(Some(id)))?;
            }
            for (k, label) in [("endTurn", "end turn"), ("deferred", "deferred")] {
                if let Some(v) = m.get(k) {
                    out.row(label, &text(Some(v)))?;
                }
            }
            time_row(out, m)?;
            write_content(out, m.get("content"))?;
            if let Some(u) = m.get("usage") {
                out.blank()?;
                usage_rows(out, u)?;
            }
            if let Some(d) = m.get("diagnostics") {
                out.value("diagnostics", d)?;
            }
            known.extend([
                "content",
                "api",
                "provider",
                "model",
                "usage",
                "stopReason",
                "errorMessage",
                "responseId",
                "responseModel",
                "rawStopReason",
                "durationMs",
                "thinkingLevel",
                "providerThinkingLevel",
                "endTurn",
                "deferred",
                "diagnostics",
            ]);
        }
        "toolResult" => {
            out.row("tool", &s("toolName"))?;
            out.row("call id", &s("toolCallId"))?;
            if js::truthy(m.get("isError")) {
                out.paint_row("status", "error", Paint::Error)?;
            } else {
                out.row("status", "ok")?;
            }
            duration_row(out, m)?;
            time_row(out, m)?;
            write_content(out, m.get("content"))?;
            if let Some(d) = m.get("details") {
                out.value("details", d)?;
            }
            if let Some(u) = m.get("usage") {
                out.blank()?;
                usage_rows(out, u)?;
            }
            if let Some(n) = m.get("nestedCalls") {
                out.value("nested calls", n)?;
            }
            known.extend([
                "toolName",
                "toolCallId",
                "isError",
                "durationMs",
                "content",
                "details",
                "usage",
                "nestedCalls",
            ]);
        }
        // (`pythonExecution`: oh-my-pi's `$` runs, the user's Python in its kernel.)
        "bashExecution" | "pythonExecution" => {
            if role == "bashExecution" {
                out.row("command", &format!("$ {}", s("command")))?;
            }
            match m.get("exitCode") {
                None | Some(Value::Null) => out.row("exit code", "(none)")?,
                Some(c) if c.as_f64() == Some(0.0) => out.row("exit code", "0")?,
                Some(c) => out.paint_row("exit code", &text(Some(c)), Paint::Error)?,
            }
            for (k, label) in [("cancelled", "cancelled"), ("truncated", "truncated")] {
                if let Some(v) = m.get(k) {
                    out.row(label, &text(Some(v)))?;
                }
            }
            if let Some(p) = m.get("fullOutputPath") {
                out.row("full output", &text(Some(p)))?;
            }
            if js::truthy(m.get("excludeFromContext")) {
                out.row("context", "excluded (`!!`: not sent to the model)")?;
            }
            time_row(out, m)?;
            if role == "pythonExecution" {
                out.text_block("code", m.get("code"))?;
            }
            out.text_block("output", m.get("output"))?;
            known.extend([
                "command",
                "code",
                "output",
                "exitCode",
                "cancelled",
                "truncated",
                "fullOutputPath",
                "excludeFromContext",
            ]);
        }
        "custom" | "hookMessage" => {
            out.row("custom type", &s("customType"))?;
            flag_row(out, m, "display", "display")?;
            time_row(out, m)?;
            write_content(out, m.get("content"))?;
            if let Some(d) = m.get("details") {
                out.value("details", d)?;
            }
            known.extend(["customType", "display", "content", "details"]);
        }
        "system" => {
            time_row(out, m)?;
            write_system(out, m)?;
            known.extend(["content", "sections", "toolsAdded", "toolsRemoved"]);
        }
        _ => {
            out.json_block(&format!("message (role {})", text(m.get("role"))), &Value::Object(m.clone()))?;
            return Ok(());
        }
    }
    out.rest(m, &known)
}

/// A system message (pi 1.6): its content, prompt sections, and tool changes.
fn write_system(out: &mut Out, m: &Map<String, Value>) -> io::Result<()> {
    match m.get("content") {
        Some(Value::String(s)) if s.is_empty() => {}
        None | Some(Value::Null) => {}
        content => write_content(out, content)?,
    }
    match m.get("sections") {
        Some(Value::Object(sections)) => {
            for (name, body) in sections {
                match body {
                    Value::Null => out.row(&format!("section {name}"), "(removed)")?,
                    Value::String(_) => out.text_block(&format!("section {name}"), Some(body))?,
                    other => out.json_block(&format!("section {name}"), other)?,
                }
            }
        }
        Some(other) => out.json_block("sections", other)?,
        None => {}
    }
    match m.get("toolsAdded") {
        Some(Value::Array(tools)) => {
            for t in tools {
                let Value::Object(tool) = t else {
                    out.json_block("tool added", t)?;
                    continue;
                };
                out.blank()?;
                out.heading(&format!("tool added: {}", text(tool.get("name"))), Paint::Tool)?;
                if let Some(d) = tool.get("description") {
                    out.body(&text(Some(d)))?;
                }
                for (k, v) in tool.iter().filter(|(k, _)| !matches!(k.as_str(), "name" | "description")) {
                    out.body(&format!("{k}: {}", pretty(v)))?;
                }
            }
        }
        Some(other) => out.json_block("tools added", other)?,
        None => {}
    }
    match m.get("toolsRemoved") {
        Some(Value::Array(tools)) => {
            let names: Vec<String> = tools
                .iter()
                .map(|t| match t.get("name") {
                    Some(n) => text(Some(n)),
                    None => t.to_string(),
                })
                .collect();
            out.row("tools removed", &names.join(", "))?;
        }
        Some(other) => out.json_block("tools removed", other)?,
        None => {}
    }
    Ok(())
}

fn write_compaction(out: &mut Out, map: &Map<String, Value>, refs: &dyn Lookup, known: &[&str]) -> io::Result<()> {
    if let Some(t) = map.get("tokensBefore") {
        let n = t.as_f64().map_or_else(|| text(Some(t)), thousands);
        out.row("tokens before", &n)?;
    }
    let kept = match map.get("firstKeptEntryId") {
        None => "(none)".to_string(),
        Some(k) if k.is_string() && k == map.get("id").unwrap_or(&Value::Null) => {
            "this entry (retain-none: nothing before it is kept)".into()
        }
        k => refer(refs, k),
    };
    out.row("first kept", &kept)?;
    flag_row(out, map, "fromHook", "from hook")?;
    details_rows(out, map.get("details"))?;
    if let Some(u) = map.get("usage") {
        usage_rows(out, u)?;
    }
    match map.get("systemMessage") {
        Some(Value::Object(m)) => {
            out.blank()?;
            out.heading("system checkpoint (the replayed prompt and tools, before the summary)", Paint::System)?;
            write_system(out, m)?;
            out.rest(m, &["role", "content", "sections", "toolsAdded", "toolsRemoved"])?;
        }
        Some(other) => out.json_block("system checkpoint", other)?,
        None => {}
    }
    out.text_block("summary", map.get("summary"))?;
    // (A `preserveData` with a snapcompact archive is drawn after the other fields.)
    let preserve = map
        .get("preserveData")
        .and_then(Value::as_object)
        .filter(|p| p.get("snapcompact").is_some_and(Value::is_object));
    out.rest(
        map,
        &[
            known,
            &["tokensBefore", "firstKeptEntryId", "fromHook", "details", "usage", "systemMessage", "summary"],
            if preserve.is_some() { &["preserveData"] } else { &[] },
        ]
        .concat(),
    )?;
    preserve.map_or(Ok(()), |p| write_snapcompact(out, p))
}

/// oh-my-pi's snapcompact archive (`preserveData.snapcompact`): a row for each frame (its
/// blob, or the size of inline data), the text kept at the history's two edges as text, the
/// other fields as they are. As JSON it is a hundred kilobytes of escaped text.
fn write_snapcompact(out: &mut Out, preserve: &Map<String, Value>) -> io::Result<()> {
    let Some(archive) = preserve.get("snapcompact").and_then(Value::as_object) else { return Ok(()) };
    out.blank()?;
    out.heading("snapcompact archive", Paint::Dim)?;
    let frames = archive.get("frames").and_then(Value::as_array);
    for (k, f) in frames.into_iter().flatten().enumerate() {
        let line = match f.as_object() {
            Some(frame) => {
                let data = match frame.get("data") {
                    Some(Value::String(d)) if d.starts_with("blob:") => d.clone(),
                    Some(Value::String(d)) => format!("[inline, {} base64 characters]", thousands(d.len() as f64)),
                    Some(other) => format!("data {other}"),
                    None => "(no data)".into(),
                };
                let others: Vec<String> =
                    frame.iter().filter(|(k, _)| *k != "data").map(|(k, v)| format!("{k} {}", text(Some(v)))).collect();
                format!("{data}\n{}", others.join(", "))
            }
            None => f.to_string(),
        };
        out.row(&format!("frame {}", k + 1), &line)?;
    }
    if let Some(other) = archive.get("frames").filter(|f| !f.is_array()) {
        out.value("frames", other)?;
    }
    out.rest(archive, &["frames", "text", "textHead", "textTail"])?;
    for (key, title) in
        [("text", "archived text"), ("textHead", "archived text, oldest"), ("textTail", "archived text, newest")]
    {
        if let Some(v) = archive.get(key) {
            out.text_block(title, Some(v))?;
        }
    }
    out.rest(preserve, &["snapcompact"])
}

/// `details` of summaries: pi writes `{readFiles, modifiedFiles}`.
fn details_rows(out: &mut Out, details: Option<&Value>) -> io::Result<()> {
    let Some(d) = details else { return Ok(()) };
    let Value::Object(map) = d else { return out.value("details", d) };
    let mut other = Map::new();
    for (k, v) in map {
        let label = match k.as_str() {
            "readFiles" => "read files",
            "modifiedFiles" => "modified files",
            _ => {
                other.insert(k.clone(), v.clone());
                continue;
            }
        };
        match v {
            Value::Array(files) if files.iter().all(Value::is_string) => {
                let list = if files.is_empty() {
                    "(none)".to_string()
                } else {
                    files.iter().map(|f| text(Some(f))).collect::<Vec<_>>().join("\n")
                };
                out.row(label, &list)?;
            }
            other => out.value(label, other)?,
        }
    }
    if !other.is_empty() {
        out.value("details", &Value::Object(other))?;
    }
    Ok(())
}

/// Message content: a string, or blocks (text, thinking, tool calls, images).
fn write_content(out: &mut Out, content: Option<&Value>) -> io::Result<()> {
    let blocks = match content {
        None => return out.row("content", "(none)"),
        Some(Value::Null) => return out.row("content", "null"),
        Some(Value::String(s)) => return out.text_block("text", Some(&Value::String(s.clone()))),
        Some(Value::Array(b)) => b,
        Some(other) => return out.json_block("content", other),
    };
    if blocks.is_empty() {
        return out.row("content", "(empty)");
    }
    for b in blocks {
        let Value::Object(block) = b else {
            out.json_block("content block", b)?;
            continue;
        };
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => {
                let signed = if block.contains_key("textSignature") { " (signed)" } else { "" };
                out.text_block(&format!("text{signed}"), block.get("text"))?;
                out.rest(block, &["type", "text", "textSignature"])?;
            }
            "thinking" => {
                let mut title = "thinking".to_string();
                if js::truthy(block.get("redacted")) {
                    title += " (redacted)";
                }
                if block.contains_key("thinkingSignature") {
                    title += " (signed)";
                }
                out.text_block_paint(&title, block.get("thinking"), Paint::Dim)?;
                out.rest(block, &["type", "thinking", "thinkingSignature", "redacted"])?;
            }
            "toolCall" => {
                let mut title = format!("tool call: {}", text(block.get("name")));
                if let Some(ns) = block.get("namespace") {
                    title += &format!(" (namespace {})", text(Some(ns)));
                }
                title += &format!("  id {}", text(block.get("id")));
                if block.contains_key("thoughtSignature") {
                    title += " (signed)";
                }
                out.blank()?;
                out.heading(&title, Paint::Tool)?;
                match block.get("arguments") {
                    Some(a) => out.body(&pretty(a))?,
                    None => out.body("(no arguments)")?,
                }
                out.rest(block, &["type", "id", "name", "arguments", "namespace", "thoughtSignature"])?;
            }
            "image" => {
                out.blank()?;
                out.note(&image_note(b))?;
                out.rest(block, &["type", "data", "mimeType"])?;
            }
            _ => out.json_block(&format!("content block ({})", if kind.is_empty() { "no type" } else { kind }), b)?,
        }
    }
    Ok(())
}

/// `usage` and `cost` rows: tokens and dollars, with their parts.
fn usage_rows(out: &mut Out, usage: &Value) -> io::Result<()> {
    let Value::Object(u) = usage else { return out.value("usage", usage) };
    let n = |k: &str| u.get(k).map(|v| v.as_f64().map_or_else(|| text(Some(v)), thousands));
    let mut parts = Vec::new();
    for (k, label) in [
        ("input", "input"),
        ("output", "output"),
        ("reasoning", "reasoning (in output)"),
        ("cacheRead", "cache read"),
        ("cacheWrite", "cache write"),
        ("cacheWrite1h", "cache write 1h"),
    ] {
        if let Some(v) = n(k) {
            parts.push(format!("{label} {v}"));
        }
    }
    let total = match n("totalTokens") {
        Some(t) => format!("{t} tokens"),
        None => "tokens".to_string(),
    };
    out.row("usage", &format!("{total}: {}", parts.join(" · ")))?;
    let mut known =
        vec!["input", "output", "reasoning", "cacheRead", "cacheWrite", "cacheWrite1h", "totalTokens", "cost"];
    match u.get("cost") {
        Some(Value::Object(c)) => {
            let usd = |v: &Value| match v.as_f64() {
                Some(n) => usd(n),
                None => text(Some(v)),
            };
            let mut parts = Vec::new();
            for (k, label) in
                [("input", "input"), ("output", "output"), ("cacheRead", "cache read"), ("cacheWrite", "cache write")]
            {
                if let Some(v) = c.get(k) {
                    parts.push(format!("{label} {}", usd(v)));
                }
            }
            let mut line = match c.get("total") {
                Some(t) => usd(t),
                None => "(no total)".into(),
            };
            if !parts.is_empty() {
                line += &format!(": {}", parts.join(" · "));
            }
            match c.get("totalFromProvider") {
                Some(Value::Bool(true)) => line += " (total reported by the provider)",
                Some(Value::Bool(false)) | None => {}
                Some(other) => line += &format!(" (totalFromProvider {other})"),
            }
            out.row("cost", &line)?;
            let extra: Map<String, Value> = c
                .iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "input" | "output" | "cacheRead" | "cacheWrite" | "total" | "totalFromProvider"
                    )
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !extra.is_empty() {
                out.value("cost (more)", &Value::Object(extra))?;
            }
        }
        Some(other) => out.value("cost", other)?,
        None => known.retain(|k| *k != "cost"),
    }
    let extra: Map<String, Value> =
        u.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    if !extra.is_empty() {
        out.value("usage (more)", &Value::Object(extra))?;
    }
    Ok(())
}

/// Dollars to eight decimals, without trailing zeros (`$0.00284325`: sums of floats
/// print as `0.0028432500000000003`).
fn usd(n: f64) -> String {
    let s = format!("{n:.8}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("${s}")
}

fn time_row(out: &mut Out, m: &Map<String, Value>) -> io::Result<()> {
    let Some(t) = m.get("timestamp") else { return Ok(()) };
    let shown = match t.as_f64() {
        Some(ms) if ms.is_finite() && ms.abs() <= 8.64e15 => format!("{t} ({})", js::iso_string(ms as i64)),
        _ => text(Some(t)),
    };
    out.row("message time", &shown)
}

fn duration_row(out: &mut Out, m: &Map<String, Value>) -> io::Result<()> {
    let Some(d) = m.get("durationMs") else { return Ok(()) };
    let shown = match d.as_f64() {
        Some(ms) if ms >= 1000.0 => format!("{:.1} s", ms / 1000.0),
        Some(ms) => format!("{ms} ms"),
        None => text(Some(d)),
    };
    out.row("duration", &shown)
}

fn flag_row(out: &mut Out, m: &Map<String, Value>, key: &str, label: &str) -> io::Result<()> {
    match m.get(key) {
        Some(v) => out.row(label, &text(Some(v))),
        None => Ok(()),
    }
}

/// An id field, with what it names in this session.
fn refer(refs: &dyn Lookup, id: Option<&Value>) -> String {
    match id {
        None => "(none)".into(),
        Some(Value::String(s)) => match refs.describe(s) {
            Some(d) => format!("{s}  ({d})"),
            None => format!("{s}  (not in this file)"),
        },
        Some(other) => other.to_string(),
    }
}

/// A value as text: strings as they are, anything else as JSON.
fn text(v: Option<&Value>) -> String {
    match v {
        None => "(none)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// The writer and its Ui, with the few shapes `show` prints.
struct Out<'w> {
    w: &'w mut dyn Write,
    ui: &'w Ui,
    /// The last thing written was a block: a row after it gets a blank line first.
    after_block: bool,
}

impl Out<'_> {
    fn title(&mut self, paint: Paint, text: &str) -> io::Result<()> {
        writeln!(self.w, "{}", self.ui.paint(paint, &sanitize(text)))
    }

    fn blank(&mut self) -> io::Result<()> {
        self.after_block = false;
        writeln!(self.w)
    }

    /// `key           value`; further lines of the value are indented under the first.
    fn row(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.row_with(key, value, None)
    }

    fn paint_row(&mut self, key: &str, value: &str, paint: Paint) -> io::Result<()> {
        self.row_with(key, value, Some(paint))
    }

    fn row_with(&mut self, key: &str, value: &str, paint: Option<Paint>) -> io::Result<()> {
        if std::mem::take(&mut self.after_block) {
            writeln!(self.w)?;
        }
        let key = sanitize(key);
        let pad = " ".repeat(KEY.saturating_sub(key.chars().count()).max(2));
        let value = sanitize(value);
        let mut lines = value.trim_end_matches('\n').split('\n');
        let first = lines.next().unwrap_or("");
        let first = match paint {
            Some(p) => self.ui.paint(p, first).into_owned(),
            None => first.to_string(),
        };
        writeln!(self.w, "{}{pad}{first}", self.ui.paint(Paint::Dim, &key))?;
        let indent = " ".repeat(key.chars().count() + pad.len());
        for l in lines {
            writeln!(self.w, "{indent}{l}")?;
        }
        Ok(())
    }

    fn heading(&mut self, title: &str, paint: Paint) -> io::Result<()> {
        writeln!(self.w, "{}", self.ui.paint(paint, &format!("── {} ──", sanitize(title))))
    }

    /// A line of its own, dimmed (an image's `[image/png 34 KB]`).
    fn note(&mut self, text: &str) -> io::Result<()> {
        self.after_block = true;
        writeln!(self.w, "{}", self.ui.paint(Paint::Dim, &sanitize(text)))
    }

    fn body(&mut self, text: &str) -> io::Result<()> {
        self.after_block = true;
        let text = sanitize(text);
        let text = text.trim_end_matches('\n');
        if text.is_empty() {
            writeln!(self.w, "{}", self.ui.paint(Paint::Dim, "(empty)"))
        } else {
            writeln!(self.w, "{text}")
        }
    }

    /// A titled block of text (a string field shown whole).
    fn text_block(&mut self, title: &str, value: Option<&Value>) -> io::Result<()> {
        self.text_block_paint(title, value, Paint::Dim)
    }

    fn text_block_paint(&mut self, title: &str, value: Option<&Value>, paint: Paint) -> io::Result<()> {
        match value {
            Some(Value::String(s)) => {
                self.blank()?;
                self.heading(title, paint)?;
                self.body(s)
            }
            None => self.row(title, "(none)"),
            Some(other) => self.json_block(title, other),
        }
    }

    /// A titled block of pretty JSON.
    fn json_block(&mut self, title: &str, value: &Value) -> io::Result<()> {
        self.blank()?;
        self.heading(title, Paint::Dim)?;
        self.body(&pretty(value))
    }

    /// A field of any shape: a row when it is short, else a block of pretty JSON.
    fn value(&mut self, key: &str, value: &Value) -> io::Result<()> {
        let compact = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if compact.len() <= 80 && !compact.contains('\n') {
            self.row(key, &compact)
        } else if let Value::String(_) = value {
            self.text_block(key, Some(value))
        } else {
            self.json_block(key, value)
        }
    }

    /// Every field of `map` not in `known`, so that nothing of the line is hidden.
    fn rest(&mut self, map: &Map<String, Value>, known: &[&str]) -> io::Result<()> {
        for (k, v) in map.iter().filter(|(k, _)| !known.contains(&k.as_str())) {
            self.value(k, v)?;
        }
        Ok(())
    }
}
