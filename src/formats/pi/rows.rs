//! pi's rows in the tree: the one-line text of each entry type (`getEntryDisplayText`,
//! `formatToolCall`), the text `--search` matches (`getSearchableText`), and a reader that
//! takes from each line only the fields those need.

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::Pi;
use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::{RowNeed, Unreadable};
use crate::session::js;
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::walk::{self, skip_ws, Blocks, Structure};
use crate::session::Session;

/// What the tree shows of every entry of one pi session.
///
/// Only what the drawing needs of every entry before it draws is kept: two flags and the
/// tool calls (a result's row names its call). A row's text is made from its line when
/// the row is drawn, a chunk of rows at a time, so half a million entries' texts never
/// exist at once (on a 1 GB session they were most of the tree's memory).
pub struct PiRows<'s, 'a> {
    session: &'s Session<'a>,
    migrate_v2: bool,
    need: RowNeed,
    /// Per entry: [`PARENT_UNDEFINED`], [`HIDDEN_UNLESS_LEAF`], [`ABORTED`], [`ERROR`].
    flags: Vec<u8>,
    /// Per entry: where in its line a reply's text is, when it is one string (0: read the
    /// line to find it). The drawing then reads that string alone.
    text_at: Vec<u16>,
    /// Entry `i`'s calls are `calls[call_at[i]..call_at[i + 1]]`.
    call_at: Vec<u32>,
    calls: Vec<ToolCall<'a>>,
}

/// The line has no `parentId` key (pi's quirk, see [`Rows::parent_undefined`]).
const PARENT_UNDEFINED: u8 = 1;
/// An assistant reply that only called tools (pi hides it unless it is the leaf).
const HIDDEN_UNLESS_LEAF: u8 = 2;
/// An assistant reply that was aborted (its row says so when it has no text).
const ABORTED: u8 = 4;
/// An assistant reply with an error message (its row shows it when it has no text).
const ERROR: u8 = 8;

impl<'s, 'a> PiRows<'s, 'a> {
    pub fn read(session: &'s Session<'a>, pi: &Pi, need: RowNeed) -> Result<Self, Unreadable> {
        let Flags { flags, text_at, call_at, calls } = read_flags(session, pi.migrate_v2, need)?;
        Ok(PiRows { session, migrate_v2: pi.migrate_v2, need, flags, text_at, call_at, calls })
    }

    /// Entry `i` read for its text (or, with `search`, its searchable text). A line the
    /// validator passed and the parser does not (never seen) shows as unreadable.
    fn info(&self, i: EntryIdx, search: bool) -> Info<'a> {
        let need = RowNeed { search, ..self.need };
        let e = &self.session.entries[i];
        if e.kind == EntryType::Message && e.role == Role::ToolResult && !e.unreadable() && !search && !need.user_only {
            if let Some(info) = quick_tool_result(self.session.raw_line(i)) {
                return info;
            }
        }
        if e.kind == EntryType::Message && e.role == Role::Assistant && !e.unreadable() && !need.user_only {
            let (flags, at) = (self.flags[i.get()], self.text_at[i.get()]);
            let line = self.session.raw_line(i);
            // The row reads the text, else `aborted`, else the error: with the text's place
            // known and no error, the flags have the rest.
            if at != 0 && flags & ERROR == 0 {
                if let Some(acc) = text_at(line, at.into()) {
                    return Info::Assistant {
                        text: acc.text.into_boxed_str(),
                        has_text: acc.has_text,
                        shows_anyway: false,
                        aborted: flags & ABORTED != 0,
                        error: None,
                        calls: Box::default(),
                        undefined_parent: flags & PARENT_UNDEFINED != 0,
                    };
                }
            }
            if let Some((info, _)) = quick_assistant(line, &mut Blocks::default(), true) {
                return info;
            }
        }
        parse_entry(self.session, self.migrate_v2, i, need).unwrap_or(Info::Unreadable)
    }
}

impl Rows for PiRows<'_, '_> {
    fn parent_undefined(&self, i: EntryIdx) -> bool {
        self.flags[i.get()] & PARENT_UNDEFINED != 0
    }

    fn hidden_unless_leaf(&self, i: EntryIdx) -> bool {
        self.flags[i.get()] & HIDDEN_UNLESS_LEAF != 0
    }

    fn calls(&self, i: EntryIdx) -> &[ToolCall<'_>] {
        &self.calls[self.call_at[i.get()] as usize..self.call_at[i.get() + 1] as usize]
    }

    fn text(&self, i: EntryIdx, calls: &CallMap, paths: &Paths) -> Text {
        display_text(self.session, i, &self.info(i, false), calls, paths)
    }

    fn searchable(&self, i: EntryIdx, label: Option<&str>) -> String {
        searchable_text(self.session, i, &self.info(i, true), label)
    }
}

// ---------------------------------------------------------------------------------------
// Text per entry
// ---------------------------------------------------------------------------------------

/// What the tree needs from one entry's line.
#[derive(Debug, Default)]
enum Info<'a> {
    #[default]
    Nothing,
    /// Valid JSON that pisces cannot read whole (reported when loading).
    Unreadable,
    /// A message: user, toolResult (search), system and other roles (search).
    Message {
        role: Option<Cow<'a, str>>,
        /// pi's `extractContent`: the text blocks joined, first 200 UTF-16 units.
        text: Option<Box<str>>,
        tool_call_id: Option<Cow<'a, str>>,
        // Boxed: rarely there, and a `Value` inline would double every entry's size.
        tool_name: Option<Box<Value>>,
        command: Option<Box<Value>>,
        undefined_parent: bool,
    },
    Assistant {
        text: Box<str>,
        has_text: bool,
        /// stopReason is set and neither `stop` nor `toolUse` (an error, an abort).
        shows_anyway: bool,
        aborted: bool,
        error: Option<Box<str>>,
        calls: Box<[ToolCall<'a>]>,
        undefined_parent: bool,
    },
    /// Other entry types: the fields pi's text uses, by name.
    Fields { fields: Vec<(&'static str, Value)>, undefined_parent: bool },
}

impl Info<'_> {
    fn parent_undefined(&self) -> bool {
        match self {
            Info::Nothing | Info::Unreadable => true,
            Info::Message { undefined_parent, .. }
            | Info::Assistant { undefined_parent, .. }
            | Info::Fields { undefined_parent, .. } => *undefined_parent,
        }
    }

    fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Info::Fields { fields, .. } => fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// The fields each entry type's text needs (besides `message`).
fn fields_for(kind: EntryType) -> &'static [&'static str] {
    match kind {
        EntryType::CustomMessage => &["customType", "content"],
        EntryType::Compaction => &["tokensBefore"],
        EntryType::BranchSummary => &["summary"],
        EntryType::ModelChange => &["modelId"],
        EntryType::ThinkingLevelChange => &["thinkingLevel"],
        EntryType::Custom => &["customType"],
        EntryType::ContextEdit => &["replacement", "targetId"],
        EntryType::Label => &["label"],
        EntryType::SessionInfo => &["name"],
        _ => &[],
    }
}

/// pi's `normalize`: tabs and newlines to spaces, trimmed.
fn normalize(s: &str) -> String {
    let t = trim_js(s);
    if t.contains(['\n', '\t']) {
        t.replace(['\n', '\t'], " ")
    } else {
        t.to_string()
    }
}

fn trim_js(s: &str) -> &str {
    s.trim_matches(js::is_js_whitespace)
}

/// `s.slice(0, n)` in UTF-16 units (a cut surrogate pair shows as U+FFFD, as Node prints it).
fn slice_utf16(s: &str, n: usize) -> Cow<'_, str> {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if units + w > n {
            if units < n {
                return Cow::Owned(format!("{}\u{fffd}", &s[..i]));
            }
            return Cow::Borrowed(&s[..i]);
        }
        units += w;
    }
    Cow::Borrowed(s)
}

fn js_str(v: Option<&Value>) -> String {
    js::to_js_string(v)
}

/// pi's `getEntryDisplayText`.
fn display_text(session: &Session, node: EntryIdx, info: &Info, calls: &CallMap, paths: &Paths) -> Text {
    let e = &session.entries[node];
    if let Info::Unreadable = info {
        return Text::whole(format!("(line {} cannot be read by pisces)", e.line), Tone::Error);
    }
    let f = |k| info.field(k);
    match e.kind {
        EntryType::Message => match info {
            Info::Assistant { text, aborted, error, .. } => {
                let t = normalize(text);
                if !t.is_empty() {
                    Text::new("assistant: ", Tone::Assistant, t, Tone::Plain)
                } else if *aborted {
                    Text::new("assistant: ", Tone::Assistant, "(aborted)".into(), Tone::Muted)
                } else if let Some(err) = error {
                    Text::new(
                        "assistant: ",
                        Tone::Assistant,
                        slice_utf16(&normalize(err), 80).into_owned(),
                        Tone::Error,
                    )
                } else {
                    Text::new("assistant: ", Tone::Assistant, "(no content)".into(), Tone::Muted)
                }
            }
            Info::Message { role, text, tool_call_id, tool_name, command, .. } => {
                let role = role.as_deref().unwrap_or("undefined");
                match role {
                    "user" => Text::new("user: ", Tone::User, normalize(text.as_deref().unwrap_or("")), Tone::Plain),
                    "toolResult" => {
                        let call = tool_call_id.as_deref().filter(|id| !id.is_empty()).and_then(|id| calls.get(id));
                        match call {
                            Some(c) => Text::whole(format_tool_call(&c.name, c.arguments, paths), Tone::Tool),
                            None => {
                                let name = match tool_name.as_deref() {
                                    None | Some(Value::Null) => "tool".to_string(),
                                    Some(v) => js_str(Some(v)),
                                };
                                Text::whole(format!("[{name}]"), Tone::Tool)
                            }
                        }
                    }
                    "bashExecution" => {
                        let cmd = match command.as_deref() {
                            None | Some(Value::Null) => String::new(),
                            Some(v) => js_str(Some(v)),
                        };
                        Text::whole(format!("[bash]: {}", normalize(&cmd)), Tone::Dim)
                    }
                    other => Text::whole(format!("[{other}]"), Tone::Dim),
                }
            }
            _ => Text::whole("[undefined]".into(), Tone::Dim),
        },
        EntryType::CustomMessage => {
            let content = custom_content(f("content"));
            Text::new(
                Cow::Owned(format!("[{}]: ", js_str(f("customType")))),
                Tone::Custom,
                normalize(&content),
                Tone::Plain,
            )
        }
        EntryType::Compaction => {
            let tokens = js_round(js_to_number(f("tokensBefore")) / 1000.0);
            Text::whole(format!("[compaction: {}k tokens]", js::number_string(tokens)), Tone::Summary)
        }
        EntryType::BranchSummary => {
            Text::new("[branch summary]: ", Tone::Summary, normalize(&js_str(f("summary"))), Tone::Plain)
        }
        EntryType::ModelChange => Text::whole(format!("[model: {}]", js_str(f("modelId"))), Tone::Dim),
        EntryType::ThinkingLevelChange => Text::whole(format!("[thinking: {}]", js_str(f("thinkingLevel"))), Tone::Dim),
        EntryType::Custom => Text::whole(format!("[custom: {}]", js_str(f("customType"))), Tone::Dim),
        EntryType::ContextEdit => {
            let what = if matches!(f("replacement"), Some(Value::Null)) { "omit" } else { "replace" };
            Text::whole(format!("[context {what}: {}]", js_str(f("targetId"))), Tone::Dim)
        }
        EntryType::Label => {
            let label = match f("label") {
                None | Some(Value::Null) => "(cleared)".to_string(),
                v => js_str(v),
            };
            Text::whole(format!("[label: {label}]"), Tone::Dim)
        }
        EntryType::SessionInfo => {
            let name = if js::truthy(f("name")) { js_str(f("name")) } else { "empty".into() };
            Text::whole(format!("[title: {name}]"), Tone::Dim)
        }
        _ => Text::whole(String::new(), Tone::Plain),
    }
}

/// A custom_message's text as pi shows it: a string, or the text blocks joined.
fn custom_content(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .map(|c| match c.get("text") {
                None | Some(Value::Null) => String::new(),
                t => js_str(t),
            })
            .collect(),
        _ => String::new(),
    }
}

/// pi's `getSearchableText`.
fn searchable_text(session: &Session, node: EntryIdx, info: &Info, label: Option<&str>) -> String {
    let e = &session.entries[node];
    let mut parts: Vec<String> = Vec::new();
    if let Some(l) = label {
        parts.push(l.to_string());
    }
    let f = |k| info.field(k);
    match e.kind {
        EntryType::Message => match info {
            Info::Assistant { text, .. } => {
                parts.push("assistant".into());
                if !text.is_empty() {
                    parts.push(text.to_string());
                }
            }
            Info::Message { role, text, command, .. } => {
                let role = role.as_deref().unwrap_or("undefined");
                parts.push(role.to_string());
                if let Some(t) = text {
                    parts.push(t.to_string());
                }
                if role == "bashExecution" && js::truthy(command.as_deref()) {
                    parts.push(js_str(command.as_deref()));
                }
            }
            _ => {}
        },
        EntryType::CustomMessage => {
            parts.push(js_str(f("customType")));
            match f("content") {
                Some(Value::String(s)) => parts.push(s.clone()),
                other => parts.push(slice_utf16(&custom_content_full(other), 200).into_owned()),
            }
        }
        EntryType::Compaction => parts.push("compaction".into()),
        EntryType::BranchSummary => {
            parts.push("branch summary".into());
            parts.push(js_str(f("summary")));
        }
        EntryType::SessionInfo => {
            parts.push("title".into());
            if js::truthy(f("name")) {
                parts.push(js_str(f("name")));
            }
        }
        EntryType::ModelChange => {
            parts.push("model".into());
            parts.push(js_str(f("modelId")));
        }
        EntryType::ThinkingLevelChange => {
            parts.push("thinking".into());
            parts.push(js_str(f("thinkingLevel")));
        }
        EntryType::Custom => {
            parts.push("custom".into());
            parts.push(js_str(f("customType")));
        }
        EntryType::ContextEdit => {
            parts.push("context edit".into());
            parts.push(if matches!(f("replacement"), Some(Value::Null)) { "omit" } else { "replace" }.into());
            parts.push(js_str(f("targetId")));
        }
        EntryType::Label => {
            parts.push("label".into());
            parts.push(match f("label") {
                None | Some(Value::Null) => String::new(),
                v => js_str(v),
            });
        }
        _ => {}
    }
    parts.join(" ")
}

/// pi's `extractFullContent` (text blocks appended with `+=`).
fn custom_content_full(v: Option<&Value>) -> String {
    let mut out = String::new();
    if let Some(Value::Array(items)) = v {
        for b in items {
            if b.get("type").and_then(Value::as_str) == Some("text") {
                out.push_str(&js_str(b.get("text")));
            }
        }
    }
    out
}

/// pi's `formatToolCall(name, args)`.
fn format_tool_call(name: &str, args: Option<&str>, paths: &Paths) -> String {
    if name == "bash" {
        if let Some(text) = args.and_then(quick_bash) {
            return text;
        }
    }
    // The built-in tools need a few keys: read only those, and stop once they are read (a
    // write's content can be large; the arguments were checked when the line was read).
    let wanted: &[&str] = match name {
        "read" => &["path", "file_path", "offset", "limit"],
        "write" | "edit" => &["path", "file_path"],
        "bash" => &["command"],
        "grep" | "find" => &["pattern", "path"],
        "ls" => &["path"],
        _ => &[],
    };
    let args: Value = match args {
        Some(a) if !wanted.is_empty() => pick_keys(a, wanted, name),
        Some(a) => serde_json::from_str(a).unwrap_or_default(),
        None => Value::Null,
    };
    let get = |k: &str| args.get(k).filter(|v| js::truthy(Some(v)));
    let path_of = |keys: &[&str], default: &str| -> String {
        let raw = keys.iter().find_map(|k| get(k)).map_or_else(|| default.to_string(), |v| js_str(Some(v)));
        shorten_home_path(&raw, paths)
    };
    match name {
        "read" => {
            let p = path_of(&["path", "file_path"], "");
            format!("[read: {p}{}]", read_line_range(args.get("offset"), args.get("limit")))
        }
        "write" => format!("[write: {}]", path_of(&["path", "file_path"], "")),
        "edit" => format!("[edit: {}]", path_of(&["path", "file_path"], "")),
        "bash" => {
            let raw: Cow<str> = match get("command") {
                Some(Value::String(s)) => Cow::Borrowed(s),
                v => Cow::Owned(v.map_or_else(String::new, |v| js_str(Some(v)))),
            };
            bash_text(&raw)
        }
        "grep" => {
            let pattern = get("pattern").map_or_else(String::new, |v| js_str(Some(v)));
            format!("[grep: /{pattern}/ in {}]", path_of(&["path"], "."))
        }
        "find" => {
            let pattern = get("pattern").map_or_else(String::new, |v| js_str(Some(v)));
            format!("[find: {pattern} in {}]", path_of(&["path"], "."))
        }
        "ls" => format!("[ls: {}]", path_of(&["path"], ".")),
        _ => {
            let json = js::stringify(&args);
            let cut = slice_utf16(&json, 40);
            format!("[{name}: {cut}{}]", if js::utf16_len(&json) > 40 { "..." } else { "" })
        }
    }
}

/// pi's bash row: `[bash: <the command on one line, cut at 50 UTF-16 units>...]`.
fn bash_text(raw: &str) -> String {
    let spaced: Cow<str> =
        if raw.contains(['\n', '\t']) { Cow::Owned(raw.replace(['\n', '\t'], " ")) } else { Cow::Borrowed(raw) };
    let cut = slice_utf16(trim_js(&spaced), 50);
    // UTF-16 units are at most the UTF-8 bytes and at least a third of them.
    let long = raw.len() > 150 || (raw.len() > 50 && js::utf16_len(raw) > 50);
    format!("[bash: {cut}{}]", if long { "..." } else { "" })
}

/// A bash call's row read from its arguments without a parser (half of a big session's
/// rows can be bash calls): the first `command` key, where [`pick_keys`] stops, when it is
/// a string. `None` leaves the call to [`pick_keys`].
fn quick_bash(args: &str) -> Option<String> {
    let b = args.as_bytes();
    let mut command: Option<Cow<str>> = None;
    let read = object(b, &Walk(b), skip_ws(b, 0), &mut |key, v, end| {
        if key != b"command" {
            return Some(());
        }
        command = if b[v] == b'"' { js_string(&b[v..end])? } else { None };
        // Found (or not a string: `None` either way stops the walk).
        None
    });
    match (read, command) {
        (_, Some(raw)) => Some(bash_text(&raw)),
        // No `command` key: pi shows an empty command.
        (Some(_), None) => Some(bash_text("")),
        (None, None) => None,
    }
}

/// The given keys of a JSON object (the last of repeated keys wins, as in `JSON.parse`),
/// read until the keys the tool row needs are there.
fn pick_keys(json: &str, wanted: &[&str], tool: &str) -> Value {
    struct Pick<'w> {
        wanted: &'w [&'w str],
        tool: &'w str,
        map: serde_json::Map<String, Value>,
        done: bool,
    }
    impl<'de> Visitor<'de> for &mut Pick<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("tool arguments")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if self.wanted.contains(&key.as_ref()) {
                    let v: Value = map.next_value()?;
                    self.map.insert(key.into_owned(), v);
                    // write/edit show `path || file_path`: a truthy path is all they need.
                    let enough = match self.tool {
                        "write" | "edit" => js::truthy(self.map.get("path")),
                        "bash" => self.map.contains_key("command"),
                        "ls" => self.map.contains_key("path"),
                        _ => false,
                    };
                    if enough {
                        self.done = true;
                        return Err(de::Error::custom(STOP));
                    }
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(())
        }
    }
    let mut pick = Pick { wanted, tool, map: serde_json::Map::new(), done: false };
    let mut de = serde_json::Deserializer::from_str(json);
    match de.deserialize_map(&mut pick) {
        Ok(()) => Value::Object(pick.map),
        Err(_) if pick.done => Value::Object(pick.map),
        // Not an object (a string, a number…): pi reads no keys from it.
        Err(_) => serde_json::from_str(json).unwrap_or_default(),
    }
}

/// pi's `formatReadLineRange(offset, limit)`.
fn read_line_range(offset: Option<&Value>, limit: Option<&Value>) -> String {
    let absent = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
    if absent(offset) && absent(limit) {
        return String::new();
    }
    let start = if absent(offset) { Some(1.0) } else { parse_line_number(offset) };
    let Some(start) = start else { return String::new() };
    if absent(limit) {
        return format!(":{}", js::number_string(start));
    }
    let Some(count) = parse_line_number(limit) else { return String::new() };
    let end = start + count - 1.0;
    if end != 0.0 && !end.is_nan() {
        format!(":{}-{}", js::number_string(start), js::number_string(end))
    } else {
        format!(":{}", js::number_string(start))
    }
}

/// pi's `parseLineNumber`: a finite number, or a non-blank numeric string.
fn parse_line_number(v: Option<&Value>) -> Option<f64> {
    let n = match v? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) if !trim_js(s).is_empty() => js_string_to_number(s),
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// JS `Number(string)`.
fn js_string_to_number(s: &str) -> f64 {
    let t = trim_js(s);
    if t.is_empty() {
        return 0.0;
    }
    let radix = |p: &str, r: u32| -> f64 {
        if p.is_empty() {
            return f64::NAN;
        }
        u64::from_str_radix(p, r).map_or(f64::NAN, |v| v as f64)
    };
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return radix(h, 16);
    }
    if let Some(o) = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")) {
        return radix(o, 8);
    }
    if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        return radix(b, 2);
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    if !t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
        return f64::NAN;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// JS `+x` for a JSON value (`tokensBefore / 1000`).
fn js_to_number(v: Option<&Value>) -> f64 {
    match v {
        None => f64::NAN,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => js_string_to_number(s),
        Some(Value::Array(a)) if a.is_empty() => 0.0,
        Some(Value::Array(a)) if a.len() == 1 => js_to_number(Some(&a[0])),
        Some(_) => f64::NAN,
    }
}

/// JS `Math.round`.
fn js_round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let r = (x + 0.5).floor();
    // Math.round(-0.4) is -0, printed "0".
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// pi's `shortenHomePath(path, home)`: an absolute path inside the home directory as `~/…`.
fn shorten_home_path(path: &str, paths: &Paths) -> String {
    let home = paths.home;
    if home.is_empty() || !path.starts_with('/') {
        return path.to_string();
    }
    let resolve = |p: &str| -> String {
        let joined = if p.starts_with('/') { p.to_string() } else { format!("{}/{p}", paths.cwd) };
        let mut parts: Vec<&str> = Vec::new();
        for seg in joined.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                s => parts.push(s),
            }
        }
        format!("/{}", parts.join("/"))
    };
    let (h, p) = (resolve(home), resolve(path));
    let rel = if p == h {
        ""
    } else if h == "/" {
        &p[1..]
    } else if let Some(rest) = p.strip_prefix(&h).and_then(|r| r.strip_prefix('/')) {
        rest
    } else {
        return path.to_string();
    };
    if rel.is_empty() {
        "~".into()
    } else {
        format!("~/{rel}")
    }
}

// ---------------------------------------------------------------------------------------
// Reading what the tree needs from each line
// ---------------------------------------------------------------------------------------

/// Files smaller than this are read on one thread.
const PARALLEL_MIN: usize = 4 << 20;

/// What [`read_flags`] reads of every entry (see [`PiRows`]).
struct Flags<'a> {
    flags: Vec<u8>,
    text_at: Vec<u16>,
    call_at: Vec<u32>,
    calls: Vec<ToolCall<'a>>,
}

/// Every entry's flags and tool calls, on two threads for large files.
fn read_flags<'a>(session: &Session<'a>, migrate_v2: bool, need: RowNeed) -> Result<Flags<'a>, Unreadable> {
    let n = session.entries.len();
    let total: usize = session.data().len();
    let split = match session.entries.first() {
        Some(first) if total >= PARALLEL_MIN && n > 1 => {
            session.entries.before_offset(first.start + (total - first.start) / 2)
        }
        _ => n,
    };
    let mut flags = vec![0u8; n];
    let mut text_at = vec![0u16; n];
    let run = |start: usize, out: &mut [u8], at: &mut [u16]| -> Result<(Vec<u32>, Vec<ToolCall<'a>>), Unreadable> {
        let mut ends = Vec::with_capacity(out.len());
        let mut calls = Vec::new();
        let mut blocks = Blocks::default();
        for (k, (slot, at)) in out.iter_mut().zip(at.iter_mut()).enumerate() {
            (*slot, *at) = entry_flags(session, migrate_v2, EntryIdx::new(start + k), need, &mut calls, &mut blocks)?;
            ends.push(calls.len() as u32);
        }
        calls.shrink_to_fit();
        Ok((ends, calls))
    };
    let (a, b) = flags.split_at_mut(split);
    let (at_a, at_b) = text_at.split_at_mut(split);
    let (first, second) = std::thread::scope(|t| {
        let second = (!b.is_empty()).then(|| t.spawn(|| run(split, b, at_b)));
        let first = run(0, a, at_a);
        // A panic on the other thread is a bug: surface it as this thread's.
        (first, second.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
    });
    let (ends, mut calls) = first?;
    let mut call_at = Vec::with_capacity(n + 1);
    call_at.push(0);
    call_at.extend(ends);
    if let Some(second) = second {
        let (ends, more) = second?;
        let base = calls.len() as u32;
        call_at.extend(ends.into_iter().map(|e| base + e));
        calls.reserve_exact(more.len());
        calls.extend(more);
    }
    Ok(Flags { flags, text_at, call_at, calls })
}

/// What the drawing needs of entry `i` before it draws: its flags, and its tool calls
/// pushed onto `calls`. Only assistant replies are read for it; any other line in pi's
/// own layout has its `parentId` key where the index already looked.
fn entry_flags<'a>(
    session: &Session<'a>,
    migrate_v2: bool,
    i: EntryIdx,
    need: RowNeed,
    calls: &mut Vec<ToolCall<'a>>,
    blocks: &mut Blocks,
) -> Result<(u8, u16), Unreadable> {
    let e = &session.entries[i];
    let assistant = e.kind == EntryType::Message && e.role == Role::Assistant;
    if !assistant && !e.unreadable() && super::scan::has_parent_key(session.raw_line(i)) {
        return Ok((0, 0));
    }
    // (A line the loader found unreadable is left to `parse_entry`, which says so.)
    let quick = if assistant && !e.unreadable() && (!need.user_only || need.search) {
        quick_assistant(session.raw_line(i), blocks, false)
    } else {
        None
    };
    let (info, at) = match quick {
        Some((info, at)) => (info, at),
        None => (parse_entry(session, migrate_v2, i, need)?, None),
    };
    // (0: not kept; a text never starts a line, and past 64 KiB it is found again.)
    let at = at.and_then(|at| u16::try_from(at).ok()).unwrap_or(0);
    let mut flags = if info.parent_undefined() { PARENT_UNDEFINED } else { 0 };
    if let Info::Assistant { has_text, shows_anyway, aborted, error, calls: mine, .. } = info {
        if !has_text && !shows_anyway {
            flags |= HIDDEN_UNLESS_LEAF;
        }
        if aborted {
            flags |= ABORTED;
        }
        if error.is_some() {
            flags |= ERROR;
        }
        calls.extend(mine.into_vec());
    }
    Ok((flags, at))
}

/// An assistant reply's line read without serde: what [`parse_entry`] reads of it (the
/// same rules, field by field), found by jumping over values with the line's string and
/// bracket masks. Most of a reply's bytes are thinking and tool arguments that the row
/// never reads, and serde would scan them character by character. With `text` false only
/// the flags and calls are made (the row's text is read again when it is drawn). `None`
/// for a line this reader does not take (a key with escapes): [`parse_entry`] reads it.
fn quick_assistant<'a>(line: &'a [u8], blocks: &mut Blocks, text: bool) -> Option<(Info<'a>, Option<usize>)> {
    let st = blocks.read(line);
    let mut parent_seen = false;
    // Whether the reply's text is one string, and where: one `message`, one `content`
    // array, one text block in it (serde reads every `message` and `content` key).
    let (mut messages, mut contents, mut texts, mut text_at) = (0, 0, 0, None);
    let mut acc = Acc::default();
    let mut calls = Vec::new();
    let mut stop_reason: Option<Value> = None;
    let mut error_message: Option<Value> = None;
    let value = |v: usize, end: usize| serde_json::from_slice::<Value>(&line[v..end]).ok();
    let js_string = |v: usize, end: usize| js_string(&line[v..end]);
    object(line, &st, skip_ws(line, 0), &mut |key, v, _end| {
        match key {
            b"parentId" => parent_seen = true,
            b"message" if line[v] == b'{' => {
                messages += 1;
                object(line, &st, v, &mut |key, v, end| {
                    match key {
                        b"content" => match line[v] {
                            b'"' => {
                                contents += 2;
                                let t = js_string(v, end)??;
                                acc.has_text |= !trim_js(&t).is_empty();
                                acc.push(&t);
                            }
                            b'[' => {
                                contents += 1;
                                elements(line, &st, v, &mut |v, _| {
                                    if line[v] == b'{' {
                                        if let Block::Text(at) =
                                            quick_block(line, &st, v, text, &mut acc, Some(&mut calls))?
                                        {
                                            texts += 1;
                                            text_at = at;
                                        }
                                    }
                                    Some(())
                                })?;
                            }
                            _ => contents += 2,
                        },
                        b"stopReason" => stop_reason = Some(value(v, end)?),
                        b"errorMessage" => error_message = Some(value(v, end)?),
                        _ => {}
                    }
                    Some(())
                })?;
            }
            _ => {}
        }
        Some(())
    })?;
    let stop = stop_reason.as_ref().and_then(Value::as_str);
    let info = Info::Assistant {
        text: acc.text.into_boxed_str(),
        has_text: acc.has_text,
        shows_anyway: js::truthy(stop_reason.as_ref()) && !matches!(stop, Some("stop" | "toolUse")),
        aborted: stop == Some("aborted"),
        error: error_message.filter(|v| js::truthy(Some(v))).map(|v| js_str(Some(&v)).into_boxed_str()),
        calls: calls.into_boxed_slice(),
        undefined_parent: !parent_seen,
    };
    Some((info, text_at.filter(|_| (messages, contents, texts) == (1, 1, 1))))
}

/// A reply's text read from where [`quick_assistant`] found it to be one string.
fn text_at(line: &[u8], at: usize) -> Option<Acc> {
    let t = js_string(&line[at..walk::string_end(line, at)?])??;
    let mut acc = Acc { has_text: !trim_js(&t).is_empty(), ..Acc::default() };
    acc.push(&t);
    Some(acc)
}

/// A tool result's line as [`parse_entry`] reads it for its row (which stops once it has
/// the call's id and the tool's name), when the line is in pi's own layout.
fn quick_tool_result(line: &[u8]) -> Option<Info<'_>> {
    let (id, name) = super::scan::tool_result_head(line)?;
    Some(Info::Message {
        role: Some(Cow::Borrowed("toolResult")),
        text: None,
        tool_call_id: Some(Cow::Borrowed(id)),
        tool_name: Some(Box::new(Value::String(name.to_string()))),
        command: None,
        undefined_parent: false,
    })
}

/// A JSON value as [`JsString`] reads it (`None` for a value that is not JSON), without a
/// parser for a string with no escapes, which most are.
fn js_string(value: &[u8]) -> Option<Option<Cow<'_, str>>> {
    if let [b'"', inner @ .., b'"'] = value {
        if !inner.iter().any(|&b| b == b'\\' || b < 0x20) {
            return crate::session::text::utf8(inner).map(|s| Some(Cow::Borrowed(s)));
        }
    }
    serde_json::from_slice::<JsString>(value).ok().map(|s| s.0)
}

/// One content block, as [`BlockSeed`] reads it.
fn quick_block<'a>(
    line: &'a [u8],
    st: &dyn Ends,
    at: usize,
    want_text: bool,
    acc: &mut Acc,
    // `None`: the calls are not wanted (and their fields not read).
    calls: Option<&mut Vec<ToolCall<'a>>>,
) -> Option<Block> {
    let want_calls = calls.is_some();
    let js_string = |v: usize, end: usize| js_string(&line[v..end]);
    let mut ty: Option<Cow<'a, str>> = None;
    // Where the (last) `text` value is; read only for a text block.
    let mut text: Option<(usize, usize)> = None;
    let mut id: Option<Cow<'a, str>> = None;
    let mut name: Option<Cow<'a, str>> = None;
    let mut args: Option<&'a str> = None;
    object(line, st, at, &mut |key, v, end| {
        match key {
            b"type" => ty = js_string(v, end)?,
            b"text" => text = Some((v, end)),
            b"id" if want_calls => id = js_string(v, end)?,
            b"name" if want_calls => name = js_string(v, end)?,
            b"arguments" if want_calls => args = Some(simdutf8::basic::from_utf8(&line[v..end]).ok()?),
            _ => {}
        }
        Some(())
    })?;
    let kind = match (ty.as_deref(), text) {
        (Some("text"), Some((v, _))) if line[v] == b'"' => Block::Text(Some(v)),
        (Some("text"), _) => Block::Text(None),
        _ => Block::Other,
    };
    match ty.as_deref() {
        Some("text") => {
            // Without the text, only whether it has any: a plain first character says so.
            let plain = |(v, end): (usize, usize)| {
                end > v + 2 && line[v] == b'"' && line[v + 1].is_ascii_graphic() && line[v + 1] != b'\\'
            };
            if !want_text && (acc.has_text || text.is_some_and(plain)) {
                acc.has_text = true;
                return Some(kind);
            }
            let t = match text {
                None => Some(Cow::Borrowed("undefined")),
                Some((v, end)) => js_string(v, end)?,
            };
            match t {
                None => acc.push("null"),
                Some(t) => {
                    acc.push(&t);
                    acc.has_text |= !trim_js(&t).is_empty();
                }
            }
        }
        Some("toolCall") => {
            if let Some(id) = id {
                if let Some(calls) = calls {
                    calls.push(ToolCall { id, name: name.unwrap_or(Cow::Borrowed("undefined")), arguments: args });
                }
            }
        }
        _ => {}
    }
    Some(kind)
}

/// What kind of content block [`quick_block`] read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// A text block, and where its text is when it is a string.
    Text(Option<usize>),
    Other,
}

/// Where values end: found with a line's masks ([`Structure`], for a reply read whole), or
/// by walking the bytes from quote to quote ([`Walk`], for a tool's few arguments).
trait Ends {
    fn string_end(&self, i: usize) -> Option<usize>;
    fn value_end(&self, i: usize) -> Option<usize>;
}

impl Ends for Structure<'_> {
    fn string_end(&self, i: usize) -> Option<usize> {
        Structure::string_end(self, i)
    }
    fn value_end(&self, i: usize) -> Option<usize> {
        Structure::value_end(self, i)
    }
}

struct Walk<'l>(&'l [u8]);

impl Ends for Walk<'_> {
    fn string_end(&self, i: usize) -> Option<usize> {
        walk::string_end(self.0, i)
    }
    fn value_end(&self, i: usize) -> Option<usize> {
        walk::value_end(self.0, i)
    }
}

/// What [`object`] calls for each key: `f(key, value start, value end)`, `None` to stop.
type OnKey<'f> = dyn FnMut(&[u8], usize, usize) -> Option<()> + 'f;

/// Calls `f(key, value start, value end)` for each key of the object at `line[at] == '{'`;
/// `None` for a key with escapes (compared as written, it could miss its name).
fn object(line: &[u8], st: &dyn Ends, at: usize, f: &mut OnKey) -> Option<usize> {
    if *line.get(at)? != b'{' {
        return None;
    }
    let mut i = skip_ws(line, at + 1);
    if *line.get(i)? == b'}' {
        return Some(i + 1);
    }
    loop {
        if *line.get(i)? != b'"' {
            return None;
        }
        let key_end = st.string_end(i)?;
        let key = &line[i + 1..key_end - 1];
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_ws(line, key_end);
        if *line.get(i)? != b':' {
            return None;
        }
        let v = skip_ws(line, i + 1);
        let end = st.value_end(v)?;
        f(key, v, end)?;
        i = skip_ws(line, end);
        match *line.get(i)? {
            b',' => i = skip_ws(line, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Calls `f(value start, value end)` for each element of the array at `line[at] == '['`.
fn elements(line: &[u8], st: &dyn Ends, at: usize, f: &mut dyn FnMut(usize, usize) -> Option<()>) -> Option<usize> {
    let mut i = skip_ws(line, at + 1);
    if *line.get(i)? == b']' {
        return Some(i + 1);
    }
    loop {
        let end = st.value_end(i)?;
        f(i, end)?;
        i = skip_ws(line, end);
        match *line.get(i)? {
            b',' => i = skip_ws(line, i + 1),
            b']' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// One entry's fields. Lines were validated when the file was read, so reading may stop
/// as soon as the row has what it needs.
fn parse_entry<'a>(
    session: &Session<'a>,
    migrate_v2: bool,
    i: EntryIdx,
    need: RowNeed,
) -> Result<Info<'a>, Unreadable> {
    let e = &session.entries[i];
    if e.unreadable() {
        return Ok(Info::Unreadable);
    }
    if matches!(e.kind, EntryType::NotObject) {
        return Ok(Info::Nothing);
    }
    // Only a line the validator passed and the parser does not (never seen) fails here.
    read_line(session.raw_line(i), e.kind, e.role, migrate_v2, need)
        .map_err(|err| Unreadable { skip: true, ..Unreadable::at(session, i, err.to_string()) })
}

/// [`parse_entry`] of one line of type `kind` (and `role`, for a message).
fn read_line(
    line: &[u8],
    kind: EntryType,
    role: Role,
    migrate_v2: bool,
    need: RowNeed,
) -> Result<Info<'_>, serde_json::Error> {
    let role = if kind == EntryType::Message { role } else { Role::None };
    // With the user-only filter, only user messages (and their ids and parents) matter.
    let wanted = !need.user_only || need.search || role == Role::User;
    let mut st = State::new(kind, role, wanted, need.search);
    let mut de = serde_json::Deserializer::from_slice(line);
    let read = match (TopSeed { st: &mut st }).deserialize(&mut de) {
        Ok(()) => de.end(),
        Err(_) if st.stopped => Ok(()),
        Err(err) => Err(err),
    };
    read?;
    let undefined_parent = !st.parent_seen;
    Ok(match (kind, role) {
        (EntryType::Message, Role::Assistant) => Info::Assistant {
            text: st.acc.text.into_boxed_str(),
            has_text: st.acc.has_text,
            shows_anyway: js::truthy(st.stop_reason.as_ref())
                && !matches!(st.stop_reason.as_ref().and_then(Value::as_str), Some("stop" | "toolUse")),
            aborted: st.stop_reason.as_ref().and_then(Value::as_str) == Some("aborted"),
            error: st.error_message.filter(|v| js::truthy(Some(v))).map(|v| js_str(Some(&v)).into_boxed_str()),
            calls: st.calls.into_boxed_slice(),
            undefined_parent,
        },
        (EntryType::Message, _) => {
            let role_name = match (migrate_v2, &st.role) {
                (true, Some(r)) if r == "hookMessage" => Some(Cow::Borrowed("custom")),
                _ => st.role,
            };
            Info::Message {
                role: role_name,
                text: st.content_seen.then(|| st.acc.text.into_boxed_str()),
                tool_call_id: st.tool_call_id,
                tool_name: st.tool_name.map(Box::new),
                command: st.command.map(Box::new),
                undefined_parent,
            }
        }
        _ => Info::Fields { fields: st.fields, undefined_parent },
    })
}

/// The state of one line's read.
struct State<'a> {
    kind: EntryType,
    role_kind: Role,
    /// Read the text fields at all (else only `parentId`).
    wanted: bool,
    search: bool,
    parent_seen: bool,
    stopped: bool,
    // message
    role_seen: bool,
    role: Option<Cow<'a, str>>,
    content_seen: bool,
    acc: Acc,
    calls: Vec<ToolCall<'a>>,
    stop_reason: Option<Value>,
    error_message: Option<Value>,
    tool_call_id: Option<Cow<'a, str>>,
    tool_name_seen: bool,
    tool_name: Option<Value>,
    command: Option<Value>,
    // other types
    fields: Vec<(&'static str, Value)>,
}

impl<'a> State<'a> {
    fn new(kind: EntryType, role: Role, wanted: bool, search: bool) -> Self {
        State {
            kind,
            role_kind: role,
            wanted,
            search,
            parent_seen: false,
            stopped: false,
            role_seen: false,
            role: None,
            content_seen: false,
            acc: Acc::default(),
            calls: Vec::new(),
            stop_reason: None,
            error_message: None,
            tool_call_id: None,
            tool_name_seen: false,
            tool_name: None,
            command: None,
            fields: Vec::new(),
        }
    }

    /// Whether the message's needed keys are all read.
    fn message_complete(&self) -> bool {
        if !self.role_seen {
            return false;
        }
        match self.role_kind {
            Role::User => self.content_seen,
            // stopReason and errorMessage come after the content; errorMessage is usually
            // absent, so an assistant is read to its end.
            Role::Assistant => false,
            Role::ToolResult => {
                self.tool_call_id.is_some() && self.tool_name_seen && (!self.search || self.content_seen)
            }
            Role::BashExecution => self.command.is_some() && (!self.search || self.content_seen),
            _ => !self.search || self.content_seen,
        }
    }
}

/// pi's `extractContent` accumulator: the first 200 UTF-16 units of the text blocks,
/// and `hasTextContent`.
#[derive(Default)]
struct Acc {
    text: String,
    units: usize,
    has_text: bool,
}

impl Acc {
    const MAX: usize = 200;

    fn push(&mut self, s: &str) {
        if self.units < Self::MAX {
            let cut = slice_utf16(s, Self::MAX - self.units);
            self.units += js::utf16_len(&cut);
            self.text.push_str(&cut);
            if cut.ends_with('\u{fffd}') && cut.len() < s.len() {
                self.units = Self::MAX;
            }
        }
    }
}

/// Visitor methods that accept and drop any scalar.
macro_rules! scalars_ignored {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

const STOP: &str = "pisces: stop reading";

fn stop<E: de::Error>(st: &mut State) -> Result<(), E> {
    st.stopped = true;
    Err(E::custom(STOP))
}

struct TopSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for TopSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for TopSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an entry")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.st;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "parentId" => {
                    st.parent_seen = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "message" if st.kind == EntryType::Message && st.wanted => {
                    map.next_value_seed(MessageSeed { st: &mut *st })?;
                }
                k if st.wanted && st.kind != EntryType::Message => {
                    match fields_for(st.kind).iter().find(|f| **f == k) {
                        Some(&name) => {
                            let v: Value = map.next_value()?;
                            st.fields.retain(|(n, _)| *n != name);
                            st.fields.push((name, v));
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            // Tool output is not read (see `MessageSeed`); unwanted, not even its keys.
            if st.parent_seen && !st.wanted && matches!(st.role_kind, Role::ToolResult | Role::BashExecution) {
                return stop(st);
            }
        }
        Ok(())
    }
}

struct MessageSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for MessageSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for MessageSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.st;
        let role = st.role_kind;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "role" => {
                    st.role_seen = true;
                    st.role = map.next_value::<JsString>()?.0;
                }
                "content" => {
                    let read = matches!(role, Role::User | Role::Assistant) || st.search;
                    if read {
                        map.next_value_seed(ContentSeed { st: &mut *st })?;
                        st.content_seen = true;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                "stopReason" if role == Role::Assistant => st.stop_reason = Some(map.next_value()?),
                "errorMessage" if role == Role::Assistant => st.error_message = Some(map.next_value()?),
                "toolCallId" if role == Role::ToolResult => {
                    st.tool_call_id = Some(map.next_value::<JsString>()?.0.unwrap_or(Cow::Borrowed("")));
                }
                "toolName" if role == Role::ToolResult => {
                    st.tool_name_seen = true;
                    st.tool_name = Some(map.next_value()?);
                }
                "command" if role == Role::BashExecution => st.command = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            // Lines are read whole (so that a line damaged after its first keys is found,
            // and skipped as pi skips it), except tool results and bash executions: their
            // output is most of a session's bytes and the row needs only the keys before it;
            // damage after those keys goes unnoticed, as in the index (see `load`).
            if st.parent_seen && matches!(role, Role::ToolResult | Role::BashExecution) && st.message_complete() {
                return stop(st);
            }
        }
        if !st.role_seen {
            st.role_seen = true;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    scalars_ignored!();
}

/// A string as JS would read it in a template (`None` for null / undefined); borrowed from
/// the line when it has no escapes.
struct JsString<'a>(Option<Cow<'a, str>>);

impl<'de> serde::Deserialize<'de> for JsString<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsString<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(JsString(None))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(js::number_string(v)))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(JsString(Some(Cow::Owned(js_str(Some(&Value::Array(items)))))))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(JsString(Some(Cow::Borrowed("[object Object]"))))
            }
        }
        d.deserialize_any(V)
    }
}

/// A message's `content`: a string, or blocks whose `text` blocks are joined.
struct ContentSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for ContentSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for ContentSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("message content")
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.st.acc.push(v);
        self.st.acc.has_text |= !trim_js(v).is_empty();
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(BlockSeed { st: &mut *self.st })?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// One content block: `text` blocks feed the accumulator, `toolCall` blocks the call list.
struct BlockSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for BlockSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for BlockSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a content block")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.st;
        let calls_wanted = st.role_kind == Role::Assistant;
        let mut ty: Option<Cow<'de, str>> = None;
        let mut text: Option<Option<Cow<'de, str>>> = None;
        let mut id: Option<Cow<'de, str>> = None;
        let mut name: Option<Cow<'de, str>> = None;
        let mut args: Option<&'de str> = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => ty = map.next_value::<JsString>()?.0,
                "text" => {
                    let t = map.next_value::<JsString>()?.0;
                    text = Some(t);
                }
                "id" if calls_wanted => id = map.next_value::<JsString>()?.0,
                "name" if calls_wanted => name = map.next_value::<JsString>()?.0,
                "arguments" if calls_wanted => args = Some(map.next_value::<&RawValue>()?.get()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match ty.as_deref() {
            Some("text") => {
                // `result += block.text` (undefined reads "undefined").
                let t = match &text {
                    None => Some("undefined"),
                    Some(None) => Some("null"),
                    Some(Some(t)) => Some(t.as_ref()),
                };
                if let Some(t) = t {
                    st.acc.push(t);
                }
                if let Some(Some(t)) = &text {
                    st.acc.has_text |= !trim_js(t).is_empty();
                }
            }
            Some("toolCall") if calls_wanted => {
                // pi's map is keyed by the id as it is (undefined included); an id-less call
                // can never match a result's toolCallId.
                if let Some(id) = id {
                    st.calls.push(ToolCall { id, name: name.unwrap_or(Cow::Borrowed("undefined")), arguments: args });
                }
            }
            _ => {}
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    scalars_ignored!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ranges_like_pi() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(read_line_range(None, None), "");
        assert_eq!(read_line_range(Some(&v("10")), None), ":10");
        assert_eq!(read_line_range(Some(&v("10")), Some(&v("5"))), ":10-14");
        assert_eq!(read_line_range(None, Some(&v("40"))), ":1-40");
        assert_eq!(read_line_range(Some(&v("\"3\"")), Some(&v("\"2\""))), ":3-4");
        assert_eq!(read_line_range(Some(&v("\"x\"")), None), "");
        assert_eq!(read_line_range(Some(&v("1")), Some(&v("0"))), ":1");
        assert_eq!(read_line_range(Some(&v("null")), Some(&v("null"))), "");
    }

    #[test]
    fn home_paths_shorten_like_pi() {
        assert_eq!(shorten_home_path("/home/dev/a/b.js", &Paths { home: "/home/dev", cwd: "/" }), "~/a/b.js");
        assert_eq!(shorten_home_path("/home/dev", &Paths { home: "/home/dev", cwd: "/" }), "~");
        assert_eq!(shorten_home_path("/home/devx/a", &Paths { home: "/home/dev", cwd: "/" }), "/home/devx/a");
        assert_eq!(shorten_home_path("src/a.js", &Paths { home: "/home/dev", cwd: "/" }), "src/a.js");
        assert_eq!(shorten_home_path("/home/dev/./a//b/", &Paths { home: "/home/dev/", cwd: "/" }), "~/a/b");
        assert_eq!(shorten_home_path("/home/dev/a", &Paths { home: "", cwd: "/" }), "/home/dev/a");
    }

    /// Assistant replies of every pi corpus, and shapes pi never writes.
    fn assistant_lines() -> Vec<Vec<u8>> {
        let head = r#"{"type":"message","id":"a","parentId":"p","timestamp":"t","message":"#;
        let long = format!("{}😀 tail", "x".repeat(199));
        let spaces = " ".repeat(300);
        let mut lines: Vec<String> = [
            r#"{"role":"assistant","content":"  plain string  ","stopReason":"stop"}}"#,
            r#"{"role":"assistant","content":"   ","stopReason":"aborted"}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":null},{"type":"text"},{"type":"text","text":5},{"type":"text","text":[1,"a"]},{"type":"text","text":{"k":1}}]}}"#,
            r#"{"role":"assistant","content":[{"type":7,"text":"no"},{"type":"text","text":"a\"b\\\"c\n\td"}],"stopReason":0}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"one"}],"content":[{"type":"text","text":"two"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls ]}\"{["}}]}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"first","text":"second"}]}}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","name":"x","arguments":{}},{"type":"toolCall","id":9,"arguments":"raw"},{"type":"toolCall","id":"d","name":null,"arguments":[1,[2,{"a":"}"}]]}],"stopReason":"toolUse"}}"#,
            r#"{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom\nthere"}}"#,
            r#"{"role":"assistant","content":[],"stopReason":"error","errorMessage":""}}"#,
            r#"{"role":"assistant","content":[],"stopReason":"length","errorMessage":{"code":1}}}"#,
            r#"{"role":"assistant","con\u0074ent":[{"type":"text","text":"escaped key"}]}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"a"}],"x":1,"con\u0074ent":[{"type":"text","text":"b"}]}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"a"}],"usage":{"n":1},"content":[{"type":"text","text":"b"}]}}"#,
            r#"{"role":"assistant","content":{"type":"text","text":"an object"}}}"#,
            r#"{"role":"assistant","content":[1,"s",null,[{"type":"text","text":"nested"}]]}}"#,
            r#""not an object"}"#,
            r#"[{"role":"assistant"}]}"#,
            r#"null}"#,
        ]
        .iter()
        .map(|m| format!("{head}{m}"))
        .collect();
        lines.push(format!(r#"{head}{{"role":"assistant","content":[{{"type":"text","text":"{long}"}},{{"type":"text","text":"more"}}]}}}}"#));
        lines.push(format!(r#"{head}{{"role":"assistant","content":[{{"type":"text","text":"{spaces}"}},{{"type":"text","text":"x"}}]}}}}"#));
        lines.push(r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":"no parentId"}]},"message":{"content":[{"type":"text","text":" again"}]}}"#.into());
        lines.push(r#" { "type" : "message" , "parentId" : null , "message" : { "content" : [ { "type" : "text" , "text" : " spaced " } ] , "stopReason" : "aborted" } } "#.into());
        let mut lines: Vec<Vec<u8>> = lines.into_iter().map(String::into_bytes).collect();
        lines.extend(corpus_lines(b"\"assistant\""));
        lines
    }

    /// Every line of every session file under testdata/ that holds `needle`.
    fn corpus_lines(needle: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from("testdata")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    let data = std::fs::read(&path).unwrap();
                    lines.extend(
                        data.split(|&b| b == b'\n')
                            .filter(|l| memchr::memmem::find(l, needle).is_some())
                            .map(<[u8]>::to_vec),
                    );
                }
            }
        }
        lines
    }

    /// The quick readers (the flags before the drawing, the text when a row is drawn) read
    /// what the serde reader reads, wherever they take a line.
    #[test]
    fn quick_readers_read_what_serde_reads() {
        let need = RowNeed { user_only: false, search: false };
        let (mut whole, mut left, mut placed) = (0, 0, 0);
        for line in assistant_lines() {
            let Ok(full) = read_line(&line, EntryType::Message, Role::Assistant, false, need) else { continue };
            let shown = String::from_utf8_lossy(&line).into_owned();
            let Info::Assistant { text, has_text, shows_anyway, aborted, error, calls, undefined_parent } = &full
            else {
                panic!("{shown}")
            };
            match quick_assistant(&line, &mut Blocks::default(), true).map(|(info, _)| info) {
                Some(quick) => {
                    assert_eq!(format!("{quick:?}"), format!("{full:?}"), "{shown}");
                    whole += 1;
                }
                None => left += 1,
            }
            if let Some((
                Info::Assistant {
                    has_text: h,
                    shows_anyway: s,
                    aborted: a,
                    error: e,
                    calls: c,
                    undefined_parent: u,
                    ..
                },
                at,
            )) = quick_assistant(&line, &mut Blocks::default(), false)
            {
                // Where the first read found the text to be one string, that string is it.
                if let Some(at) = at {
                    assert_eq!(text_at(&line, at).map(|acc| acc.text), Some(text.to_string()), "{shown}");
                    placed += 1;
                }
                assert_eq!(
                    (h, s, a, e.is_some(), u),
                    (*has_text, *shows_anyway, *aborted, error.is_some(), *undefined_parent),
                    "{shown}"
                );
                assert_eq!(format!("{c:?}"), format!("{calls:?}"), "{shown}");
            }
        }
        // The escaped keys are the crafted lines left to serde.
        assert_eq!(left, 2);
        assert!(placed > 500, "{placed}");
        assert!(whole > 500, "{whole}");
    }

    /// Tool results in pi's layout read as the serde reader reads them for their row.
    #[test]
    fn quick_tool_results_read_what_serde_reads() {
        let need = RowNeed { user_only: false, search: false };
        let mut lines: Vec<Vec<u8>> = vec![
            br#"{"type":"message","id":"r","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"toolCallId":"c2"}}"#.to_vec(),
            br#"{"type":"message","id":"r","parentId":"a","timestamp":"t","message":{"role":"toolResult","toolCallId":"c\u0031","toolName":"bash"}}"#.to_vec(),
        ];
        lines.extend(corpus_lines(b"\"toolResult\""));
        let mut quick = 0;
        for line in &lines {
            let Ok(full) = read_line(line, EntryType::Message, Role::ToolResult, false, need) else { continue };
            if let Some(info) = quick_tool_result(line) {
                assert_eq!(format!("{info:?}"), format!("{full:?}"), "{}", String::from_utf8_lossy(line));
                quick += 1;
            }
        }
        assert!(quick > 150, "{quick}");
    }

    /// A bash row read without the parser is the row pi's rules give through it.
    #[test]
    fn quick_bash_rows_are_the_parsed_ones() {
        let long = format!(r#"{{"command":"{}"}}"#, "😀a".repeat(40));
        let cases = [
            r#"{"command":"npm test"}"#,
            r#"{"command":"  cd src &&\n\tnpm test  "}"#,
            r#"{"command":""}"#,
            r#"{}"#,
            r#"{"command":5}"#,
            r#"{"command":null}"#,
            r#"{"comm\u0061nd":"escaped key"}"#,
            r#"{"x":"\"command\":\"no\"","command":"yes"}"#,
            r#"{"command":"first","command":"second"}"#,
            r#"{"timeout":30,"command":"after \"quotes\" and \\ slashes"}"#,
            r#""a string""#,
            r#"[1]"#,
            &long,
        ];
        let paths = Paths { home: "/home/dev", cwd: "/" };
        for args in cases {
            let picked = pick_keys(args, &["command"], "bash");
            let raw =
                picked.get("command").filter(|v| js::truthy(Some(v))).map_or_else(String::new, |v| js_str(Some(v)));
            assert_eq!(format_tool_call("bash", Some(args), &paths), bash_text(&raw), "{args}");
        }
        assert!(quick_bash(r#"{"command":"npm test"}"#).is_some());
        assert!(quick_bash(r#"{"comm\u0061nd":"x"}"#).is_none());
    }

    #[test]
    fn utf16_cuts() {
        assert_eq!(slice_utf16("abc", 2), "ab");
        assert_eq!(slice_utf16("a😀b", 2), "a\u{fffd}");
        assert_eq!(slice_utf16("a😀b", 3), "a😀");
    }
}
