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
use crate::session::Session;

/// What the tree shows of every entry of one pi session.
pub struct PiRows<'s, 'a> {
    session: &'s Session<'a>,
    infos: Vec<Info<'a>>,
}

impl<'s, 'a> PiRows<'s, 'a> {
    pub fn read(session: &'s Session<'a>, pi: &Pi, need: RowNeed) -> Result<Self, Unreadable> {
        let infos = parse_all(session, pi, need)?;
        Ok(PiRows { session, infos })
    }
}

impl Rows for PiRows<'_, '_> {
    fn parent_undefined(&self, i: EntryIdx) -> bool {
        self.infos[i.get()].parent_undefined()
    }

    fn hidden_unless_leaf(&self, i: EntryIdx) -> bool {
        matches!(self.infos[i.get()], Info::Assistant { has_text: false, shows_anyway: false, .. })
    }

    fn calls(&self, i: EntryIdx) -> &[ToolCall<'_>] {
        match &self.infos[i.get()] {
            Info::Assistant { calls, .. } => calls,
            _ => &[],
        }
    }

    fn text(&self, i: EntryIdx, calls: &CallMap, paths: &Paths) -> Text {
        display_text(self.session, i, &self.infos[i.get()], calls, paths)
    }

    fn searchable(&self, i: EntryIdx, label: Option<&str>) -> String {
        searchable_text(self.session, i, &self.infos[i.get()], label)
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

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
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
fn format_tool_call(name: &str, args: Option<&RawValue>, paths: &Paths) -> String {
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
        Some(a) if !wanted.is_empty() => pick_keys(a.get(), wanted, name),
        Some(a) => serde_json::from_str(a.get()).unwrap_or_default(),
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
            let raw = get("command").map_or_else(String::new, |v| js_str(Some(v)));
            let cmd: String = trim_js(&raw.replace(['\n', '\t'], " ")).to_string();
            let cut = slice_utf16(&cmd, 50);
            format!("[bash: {cut}{}]", if utf16_len(&raw) > 50 { "..." } else { "" })
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
            format!("[{name}: {cut}{}]", if utf16_len(&json) > 40 { "..." } else { "" })
        }
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

/// Reads every entry's text fields, on two threads for large files.
fn parse_all<'a>(session: &Session<'a>, pi: &Pi, need: RowNeed) -> Result<Vec<Info<'a>>, Unreadable> {
    let n = session.entries.len();
    let total: usize = session.data().len();
    let split = match session.entries.first() {
        Some(first) if total >= PARALLEL_MIN && n > 1 => {
            session.entries.before_offset(first.start + (total - first.start) / 2)
        }
        _ => n,
    };
    // One vector of the final size, each thread filling its half in place: collecting
    // halves and joining them would hold the rows twice over at the peak.
    let mut infos: Vec<Info<'a>> = Vec::new();
    infos.resize_with(n, Info::default);
    let run = |start: usize, out: &mut [Info<'a>]| -> Result<(), Unreadable> {
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = parse_entry(session, pi, EntryIdx::new(start + k), need)?;
        }
        Ok(())
    };
    let (a, b) = infos.split_at_mut(split);
    let (first, second) = std::thread::scope(|t| {
        let second = (!b.is_empty()).then(|| t.spawn(|| run(split, b)));
        let first = run(0, a);
        // A panic on the other thread is a bug: surface it as this thread's.
        (first, second.map_or(Ok(()), |h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
    });
    first?;
    second?;
    Ok(infos)
}

/// One entry's fields. Lines were validated when the file was read, so reading may stop
/// as soon as the row has what it needs.
fn parse_entry<'a>(session: &Session<'a>, pi: &Pi, i: EntryIdx, need: RowNeed) -> Result<Info<'a>, Unreadable> {
    let e = &session.entries[i];
    if e.unreadable {
        return Ok(Info::Unreadable);
    }
    if matches!(e.kind, EntryType::NotObject) {
        return Ok(Info::Nothing);
    }
    let role = if e.kind == EntryType::Message { e.role } else { Role::None };
    // With the user-only filter, only user messages (and their ids and parents) matter.
    let wanted = !need.user_only || need.search || role == Role::User;
    let mut st = State::new(e.kind, role, wanted, need.search);
    let line = session.raw_line(i);
    let mut de = serde_json::Deserializer::from_slice(line);
    let read = match (TopSeed { st: &mut st }).deserialize(&mut de) {
        Ok(()) => de.end(),
        Err(_) if st.stopped => Ok(()),
        Err(err) => Err(err),
    };
    // Only a line the validator passed and the parser does not (never seen) gets here.
    read.map_err(|err| Unreadable { skip: true, ..Unreadable::at(session, i, err.to_string()) })?;
    let undefined_parent = !st.parent_seen;
    Ok(match (e.kind, role) {
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
            let role_name = match (pi.migrate_v2, &st.role) {
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
            self.units += utf16_len(&cut);
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
        let mut args: Option<&'de RawValue> = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => ty = map.next_value::<JsString>()?.0,
                "text" => {
                    let t = map.next_value::<JsString>()?.0;
                    text = Some(t);
                }
                "id" if calls_wanted => id = map.next_value::<JsString>()?.0,
                "name" if calls_wanted => name = map.next_value::<JsString>()?.0,
                "arguments" if calls_wanted => args = Some(map.next_value()?),
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

    #[test]
    fn utf16_cuts() {
        assert_eq!(slice_utf16("abc", 2), "ab");
        assert_eq!(slice_utf16("a😀b", 2), "a\u{fffd}");
        assert_eq!(slice_utf16("a😀b", 3), "a😀");
    }
}
