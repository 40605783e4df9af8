//! Codex CLI's rollouts (docs/codex-format.md): one file per thread under
//! `$CODEX_HOME/sessions/YYYY/MM/DD/`, one JSON object a line (`{timestamp, ordinal, type,
//! payload}`), resumed by appending; a fork is a file of its own that inherits its parent's
//! history up to an ordinal without copying it.
//!
//! `family` finds the files a rollout is read with, `load` makes one tree of them,
//! `context` builds the Responses `input` the client sends, `entries` gives lines in the
//! common (pi) shape, `rows` is what the tree shows, `usage` counts tokens.

pub mod context;
pub mod entries;
mod family;
mod fork;
pub mod load;
pub mod rows;
pub mod usage;

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::PathBuf;

use serde_json::Value;

use crate::session::check::Finding;
use crate::session::entry::{EntryIdx, LineNo};
use crate::session::format::{model_of, Dialect, Fit, Format, FormatInfo, Response, RowNeed, Unreadable, Unsupported};
use crate::session::projection::{convert_to_llm, Projection};
use crate::session::rows::Rows;
use crate::session::usage::Totals;
use crate::session::write::Writer;
use crate::session::{LoadError, Session, Source};

pub static INFO: FormatInfo = FormatInfo { name: "codex", agent: "Codex CLI" };

pub struct CodexFormat;

pub static CODEX: CodexFormat = CodexFormat;

/// Line types of a rollout with a `payload` (0.171.0 and earlier).
const LINE_TYPES: &[&str] =
    &["session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state", "token_usage_record"];

impl Format for CodexFormat {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    /// `Yes` when a line in the head is `{type, payload}` with a rollout's line type, or an
    /// old rollout's `{record_type: "state"}`; `Maybe` for an old first line `{id,
    /// timestamp, instructions}`.
    fn sniff(&self, head: &[u8]) -> Fit {
        #[derive(serde::Deserialize)]
        struct Probe {
            #[serde(rename = "type")]
            ty: Option<String>,
            payload: Option<serde::de::IgnoredAny>,
            record_type: Option<String>,
            instructions: Option<serde::de::IgnoredAny>,
            id: Option<serde::de::IgnoredAny>,
        }
        // Each fit needs one of three keys in a line: a head that cannot hold any is another
        // agent's, read no further (its lines would each be parsed whole).
        let keys: [&[u8]; 3] = [b"\"payload\"", b"\"record_type\"", b"\"instructions\""];
        if !crate::session::format::may_hold_any(head, &keys) {
            return Fit::No;
        }
        let mut fit = Fit::No;
        for line in head.split(|&b| b == b'\n').take(16) {
            let Ok(p) = serde_json::from_slice::<Probe>(line) else { continue };
            if p.payload.is_some() && p.ty.as_deref().is_some_and(|t| LINE_TYPES.contains(&t)) {
                return Fit::Yes;
            }
            if p.record_type.as_deref() == Some("state") {
                return Fit::Yes;
            }
            if p.ty.is_none() && p.instructions.is_some() && p.id.is_some() {
                fit = Fit::Maybe;
            }
        }
        fit
    }

    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        load::load(source, exclude, load::Validate::Lazily)
    }

    fn load_checked<'a>(&'static self, source: &'a Source) -> Result<Session<'a>, LoadError> {
        load::load(source, &BTreeSet::new(), load::Validate::All)
    }

    fn companions(&self, source: &Source) -> Vec<crate::session::format::Companion> {
        let Some(path) = &source.path else { return Vec::new() };
        let bytes = source.bytes();
        let first = &bytes[..memchr::memchr(b'\n', bytes).unwrap_or(bytes.len())];
        family::companions(path, first)
    }

    fn reads_family(&self) -> bool {
        true
    }
}

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `session_meta` (or an old rollout's first line).
    Meta,
    /// A response item `message` (user, assistant, developer).
    Message,
    Reasoning,
    /// A call the model made (`function_call`, `custom_tool_call`, …).
    Call,
    /// A call's answer (`function_call_output`, …).
    Output,
    Compacted,
    /// `event_msg`: what the client showed (turn starts and ends, token counts, …).
    Event,
    /// `event_msg` `user_message` / `agent_message`: the conversation as the client showed
    /// it (the conversation itself in a thread without response items).
    EventUser,
    EventAgent,
    /// A `ghost_snapshot` item: the client's undo point, never sent.
    Ghost,
    TurnContext,
    /// `token_usage_record`: one response's usage (0.171.0).
    TokenRecord,
    /// `event_msg` `token_count`: the usage the client showed (every version).
    TokenCount,
    /// `world_state`, an old `record_type: state` line.
    State,
    Other,
}

impl Kind {
    /// A response item: part of what the model is sent.
    pub fn is_item(self) -> bool {
        matches!(self, Kind::Message | Kind::Reasoning | Kind::Call | Kind::Output)
    }
}

/// What the index keeps of each line beyond the common fields (parallel to
/// `Session::entries`).
#[derive(Clone, Debug)]
pub struct Item {
    /// The rollout file (a [`Thread`]) the line is in.
    pub thread: u32,
    pub ordinal: Option<u64>,
    pub kind: Kind,
    /// The model of the turn the line is in: `Codex::models[model - 1]` (0: none seen).
    pub model: u32,
    /// A token line whose usage is counted (see `usage`).
    pub counted: bool,
}

/// Where a fork's history comes from (`session_meta.history_base`).
#[derive(Clone, Debug)]
pub struct Base {
    pub thread: String,
    pub end_ordinal: u64,
    pub end_byte: Option<u64>,
}

/// One rollout file of the loaded family.
#[derive(Clone, Debug)]
pub struct Thread {
    /// The thread id (`session_meta.id`).
    pub id: Option<String>,
    /// The name to report the file by.
    pub file: String,
    pub path: Option<PathBuf>,
    /// Its bytes in the joined source.
    pub range: Range<usize>,
    /// Its entries.
    pub entries: Range<usize>,
    /// Lines of the files before it (its own line `k` is `line_base + k`).
    pub line_base: u32,
    pub base: Option<Base>,
    /// `session_meta.base_instructions.text`: the developer message every request starts with.
    pub instructions: Option<String>,
    pub cwd: Option<String>,
}

impl Thread {
    /// The file's name without its folders.
    pub fn file_name(&self) -> String {
        self.path
            .as_deref()
            .and_then(|p| p.file_name())
            .map_or_else(|| self.file.clone(), |n| n.to_string_lossy().into_owned())
    }
}

/// One loaded rollout and its family.
#[derive(Debug, Clone)]
pub struct Codex {
    /// The file asked for first, then the others it was read with.
    pub threads: Vec<Thread>,
    pub items: Vec<Item>,
    /// The models the turns name.
    pub models: Vec<String>,
}

/// The last entry of thread `id`'s history before ordinal `end` (a fork point): its own
/// last line before it, or, when the point is inside what it inherited, its parent's.
pub fn fork_point(threads: &[Thread], items: &[Item], id: &str, end: u64, depth: usize) -> Option<EntryIdx> {
    if depth > threads.len() {
        return None;
    }
    let th = threads.iter().find(|t| t.id.as_deref() == Some(id))?;
    let own = th.entries.clone().rev().find(|&k| items[k].ordinal.is_some_and(|o| o < end));
    match (own, &th.base) {
        // The fork's first line is at the fork point itself: it is not before it.
        (Some(k), _) => Some(EntryIdx::new(k)),
        (None, Some(b)) => fork_point(threads, items, &b.thread, end.min(b.end_ordinal), depth + 1),
        (None, None) => None,
    }
}

impl Codex {
    pub fn thread(&self, i: EntryIdx) -> &Thread {
        &self.threads[self.items[i.get()].thread as usize]
    }

    /// The model of the turn entry `i` is in.
    pub fn model(&self, i: EntryIdx) -> Option<&str> {
        let m = self.items[i.get()].model as usize;
        m.checked_sub(1).map(|k| self.models[k].as_str())
    }

    /// Entry `i`'s line number in its own file.
    pub fn own_line(&self, s: &Session, i: EntryIdx) -> LineNo {
        LineNo(s.entries[i].line.get() - self.thread(i).line_base)
    }

    /// An error about entry `i`, naming its own file and line.
    pub fn unreadable(&self, s: &Session, i: EntryIdx, why: impl Into<String>) -> Unreadable {
        let th = self.thread(i);
        Unreadable {
            file: th.file.clone(),
            line: self.own_line(s, i),
            entry: s.display_id(i).into_owned(),
            why: why.into(),
            skip: false,
        }
    }

    /// Entry `i`'s line, parsed. Loading read most lines from their first bytes only: a line
    /// that turns out not to be JSON is reported so that the session is read again without
    /// it (`skip`, see `session::open`), as Codex skips it.
    pub fn line(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        serde_json::from_slice(s.raw_line(i))
            .map_err(|e| Unreadable { skip: true, ..self.unreadable(s, i, e.to_string()) })
    }
}

impl Dialect for Codex {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        entries::entry(s, self, i)
    }

    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            timestamp: Option<std::borrow::Cow<'a, str>>,
        }
        let raw = s.raw_line(i);
        if let Some(t) = load::head_time(raw) {
            return t;
        }
        let t: T = serde_json::from_slice(raw).ok()?;
        crate::session::js::parse_date(t.timestamp.as_deref()?)
    }

    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String {
        entries::preview(s, self, i, max)
    }

    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
        context::project(s, self, leaf)
    }

    fn llm_messages(&self, p: &Projection) -> Vec<Value> {
        convert_to_llm(&p.messages)
    }

    fn rows<'s>(&self, s: &'s Session, need: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable> {
        Ok(Box::new(rows::CodexRows::read(s, self, need)?))
    }

    fn usage(&self, s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
        usage::entry_usage(s, self, i)
    }

    /// A reply's model is its turn's ([`entries::message_of`]): only whether the entry is a
    /// reply is read of its line.
    fn model(&self, s: &Session, i: EntryIdx) -> Result<Option<String>, Unreadable> {
        match entries::is_reply(s, self, i) {
            Some(true) => Ok(Some(Codex::model(self, i).unwrap_or_default().to_string())),
            Some(false) => Ok(None),
            None => Ok(model_of(&self.entry(s, i)?)),
        }
    }

    fn model_bound(&self, _s: &Session, i: EntryIdx) -> Option<Option<&str>> {
        // (A reply is its turn's model; an entry built whole carries that one or `""`:
        // `entries::message_of`.)
        Some(Codex::model(self, i))
    }

    fn response(&self, s: &Session, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
        usage::response(s, self, i)
    }

    fn writer(&self) -> Result<&dyn Writer, Unsupported> {
        Ok(self)
    }

    fn findings(&self, s: &Session) -> Vec<Finding> {
        entries::findings(s, self)
    }

    fn pi_entries(&self, s: &Session, leaf: EntryIdx) -> Result<Vec<Value>, Unreadable> {
        entries::pi_entries(s, self, leaf)
    }

    fn pi_tool(&self, name: &str, arguments: &Value) -> Option<(&'static str, Value)> {
        entries::pi_tool(name, arguments)
    }

    fn place(&self, s: &Session, i: EntryIdx) -> Option<(String, LineNo)> {
        (self.items[i.get()].thread != 0).then(|| (self.thread(i).file.clone(), self.own_line(s, i)))
    }

    /// `:N`: the line with ordinal N in the history of the thread asked for (its own lines,
    /// then what it inherited).
    fn rev_base(&self, s: &Session, base: &str) -> Option<Result<EntryIdx, String>> {
        let num = base.strip_prefix(':')?;
        let Ok(n) = num.parse::<u64>() else { return Some(Err(format!("`{num}` is not an ordinal"))) };
        let leaf = s.default_leaf()?;
        let found = s.path_to(leaf).into_iter().rev().find(|&i| self.items[i.get()].ordinal == Some(n));
        Some(found.ok_or_else(|| {
            let th = &self.threads[0];
            format!("no line of thread {}'s history has ordinal {n}", th.id.as_deref().unwrap_or("?"))
        }))
    }

    fn hint(&self, problem: crate::session::Problem) -> Option<&'static str> {
        use crate::session::Problem::*;
        Some(match problem {
            Malformed | NotObject | NotAnEntry => "Codex skips a line it cannot parse; delete it, or restore it from a copy",
            Truncated => "the last write was cut off (a crash?); delete the partial line",
            DanglingParent => {
                "copy the parent's rollout (named by its thread id) into the same CODEX_HOME: a fork's history is in its parent's file"
            }
            _ => return None,
        })
    }
}
