//! Claude Code's session files (docs/claude-format.md): one JSON object a line, the
//! conversation's lines linked by `uuid` / `parentUuid`, a reply split into one line per
//! content block (the lines share `message.id`).
//!
//! `load` reads a file into the common index, `context` builds what the client sends its
//! model at an entry, `entries` turns lines into the common (pi) entry shape, `rows` is what
//! the tree shows, `usage` counts tokens and cost once per reply.

pub mod context;
pub mod entries;
pub mod fork;
pub mod load;
pub mod rows;
mod scan;
mod subagents;
pub mod usage;

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::session::check::{Finding, Level};
use crate::session::entry::{EntryIdx, LineNo};
use crate::session::format::{Dialect, Fit, Format, FormatInfo, Response, RowNeed, Unreadable, Unsupported};
use crate::session::projection::{convert_to_llm, Projection};
use crate::session::rows::Rows;
use crate::session::usage::Totals;
use crate::session::write::Writer;
use crate::session::{LoadError, Session, Source};

pub static INFO: FormatInfo = FormatInfo { name: "claude", agent: "Claude Code" };

pub struct ClaudeFormat;

pub static CLAUDE: ClaudeFormat = ClaudeFormat;

/// Line types Claude Code writes (2.1.332 and earlier); any other is reported as news.
pub const KNOWN_TYPES: &[&str] = &[
    "user",
    "assistant",
    "attachment",
    "system",
    "progress",
    "summary",
    "custom-title",
    "ai-title",
    "tag",
    "agent-name",
    "queue-operation",
    "last-prompt",
    "file-history-snapshot",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "cost-state",
    "tools-used",
    "atis-latch",
    "mode",
    "pr-link",
    "worktree-state",
    "content-replacement",
];

impl Format for ClaudeFormat {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    /// `Yes` when a line in the head is an object with a `sessionId` and either a `uuid`
    /// with `parentUuid`, or a type only Claude Code writes.
    fn sniff(&self, head: &[u8]) -> Fit {
        for line in head.split(|&b| b == b'\n').take(64) {
            let Ok(v) = serde_json::from_slice::<load::Head>(line) else { continue };
            let ty = v.ty.as_deref().unwrap_or_default();
            if v.session_id.as_deref().is_some() && (v.uuid.as_deref().is_some() || KNOWN_TYPES.contains(&ty)) {
                return Fit::Yes;
            }
            if ty == "summary" && v.leaf_uuid.as_deref().is_some() {
                return Fit::Yes;
            }
        }
        Fit::No
    }

    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        load::load(source, exclude)
    }

    fn load_checked<'a>(&'static self, source: &'a Source) -> Result<Session<'a>, LoadError> {
        load::load_with(source, &BTreeSet::new(), load::Validate::All)
    }
}

/// What the index keeps of each entry's line beyond the common fields (parallel to
/// `Session::entries`; its uuid is the entry's id).
#[derive(Debug, Clone)]
pub struct Line {
    /// `parentUuid` as written.
    pub parent: Option<String>,
    /// An assistant line's `message.id` (the lines of one reply share it).
    pub message_id: Option<String>,
    /// A user line with a tool result among its blocks.
    pub tool_result: bool,
    pub sidechain: bool,
    /// Where an assistant line's `message.model` and `message.usage` are, so that its
    /// usage is read without parsing the line; `None` when the index did not find them so
    /// (the line is parsed then).
    pub reply: Option<ReplySpans>,
}

/// Byte ranges in a line of its `message.model` and `message.usage` values, each when it
/// is there once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplySpans {
    pub model: Option<(u32, u32)>,
    pub usage: Option<(u32, u32)>,
}

/// One loaded Claude Code file.
#[derive(Debug)]
pub struct Claude {
    pub lines: Vec<Line>,
    /// uuid -> the last entry with it.
    pub by_uuid: HashMap<String, u32>,
    /// Each entry's parent by its `parentUuid` as written (the last entry with that uuid).
    pub parents: Vec<Option<u32>>,
    /// message.id -> the assistant entries of that reply, in file order.
    pub groups: HashMap<String, Vec<u32>>,
    /// entry -> the user entries with tool results written under it, in file order.
    pub results_under: HashMap<u32, Vec<u32>>,
}

impl Claude {
    /// The context at `leaf` (`--resume-session-at`), or as `--resume` sends it.
    fn projection(&self, s: &Session, leaf: Option<EntryIdx>, resumed: bool) -> Result<Projection, Unreadable> {
        let Some(leaf) = leaf else { return Ok(Projection { anthropic: Some(Vec::new()), ..Default::default() }) };
        let path = context::entries_at(s, self, leaf);
        let anthropic = context::api_messages(s, &path, resumed)?;
        let (messages, entries, model) = entries::project(s, &path)?;
        Ok(Projection {
            leaf: Some(leaf),
            path,
            thinking_level: None,
            model,
            entries,
            messages,
            anthropic: Some(anthropic),
            responses: None,
        })
    }

    /// The index of `lines`, whose uuids are `uuids` (one each, in the same order).
    pub fn new(lines: Vec<Line>, uuids: Vec<String>) -> Claude {
        let mut by_uuid = HashMap::with_capacity_and_hasher(lines.len(), Default::default());
        let mut groups: HashMap<String, Vec<u32>> = HashMap::default();
        for (k, (l, uuid)) in lines.iter().zip(uuids).enumerate() {
            by_uuid.insert(uuid, k as u32);
            if let Some(id) = &l.message_id {
                match groups.get_mut(id.as_str()) {
                    Some(g) => g.push(k as u32),
                    None => {
                        groups.insert(id.clone(), vec![k as u32]);
                    }
                }
            }
        }
        let parents: Vec<Option<u32>> =
            lines.iter().map(|l| l.parent.as_deref().and_then(|p| by_uuid.get(p)).copied()).collect();
        let mut results_under: HashMap<u32, Vec<u32>> = HashMap::default();
        for (k, l) in lines.iter().enumerate() {
            if let (true, Some(p)) = (l.tool_result, parents[k]) {
                results_under.entry(p).or_default().push(k as u32);
            }
        }
        Claude { lines, by_uuid, parents, groups, results_under }
    }

    /// Whether entry `i` is the first line of its reply (usage is counted there once).
    pub fn first_of_reply(&self, i: EntryIdx) -> bool {
        match &self.lines[i.get()].message_id {
            Some(id) => self.groups.get(id).and_then(|g| g.first()) == Some(&(i.get() as u32)),
            None => true,
        }
    }
}

impl Dialect for Claude {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        entries::entry(s, i)
    }

    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        entries::line_time(s.raw_line(i))
    }

    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String {
        entries::preview(s, i, max)
    }

    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
        self.projection(s, leaf, false)
    }

    fn resume(&self, s: &Session) -> Result<Projection, Unreadable> {
        self.projection(s, s.default_leaf(), true)
    }

    fn llm_messages(&self, p: &Projection) -> Vec<Value> {
        convert_to_llm(&p.messages)
    }

    fn rows<'s>(&self, s: &'s Session, need: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable> {
        Ok(Box::new(rows::ClaudeRows::read(s, need)?))
    }

    fn usage(&self, s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
        usage::entry_usage(s, self, i)
    }

    fn response(&self, s: &Session, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
        usage::response(s, self, i)
    }

    fn writer(&self) -> Result<&dyn Writer, Unsupported> {
        Ok(self)
    }

    fn findings(&self, s: &Session) -> Vec<Finding> {
        findings(s)
    }

    fn pi_entries(&self, s: &Session, leaf: EntryIdx) -> Result<Vec<Value>, Unreadable> {
        entries::pi_entries(s, self, leaf)
    }

    fn pi_tool(&self, name: &str, arguments: &Value) -> Option<(&'static str, Value)> {
        entries::pi_tool(name, arguments)
    }

    fn read_text(&self, s: &Session, i: EntryIdx) -> Option<String> {
        // `toolUseResult.file.content`: the file's text the numbered lines were made from.
        let v = context::line(s, i).ok()?;
        v.pointer("/toolUseResult/file/content").and_then(Value::as_str).map(str::to_string)
    }

    fn subagents(&self, s: &Session, i: EntryIdx) -> Vec<crate::session::format::Subagent> {
        subagents::of(s, i)
    }

    fn hint(&self, problem: crate::session::Problem) -> Option<&'static str> {
        use crate::session::Problem::*;
        Some(match problem {
            Malformed | NotObject | NotAnEntry => {
                "Claude Code skips lines it cannot parse as an object; delete it, or restore it from a copy of the file"
            }
            Truncated => "the last write was cut off (a crash?); Claude Code skips it; delete the partial line",
            DuplicateId => {
                "Claude Code keeps the later line for the uuid (a resume in an old version may write a line twice)"
            }
            DanglingParent => {
                "the chain Claude Code builds stops here: the model saw nothing before this line on its path"
            }
            SelfParent | Cycle => "Claude Code stops its chain where the loop closes; fix one parentUuid in it",
            _ => return None,
        })
    }
}

/// What only the whole file shows: calls never answered, line types this version of
/// pisces does not know.
fn findings(s: &Session) -> Vec<Finding> {
    let mut out = Vec::new();
    let data = s.data();
    let mut answered: BTreeSet<String> = BTreeSet::new();
    let mut calls: Vec<(LineNo, String, String)> = Vec::new();
    let mut unknown: HashMap<String, (LineNo, usize)> = HashMap::default();
    for (k, raw) in data.split(|&b| b == b'\n').enumerate() {
        let no = LineNo(k as u32 + 1);
        let Ok(v) = serde_json::from_slice::<Value>(raw) else { continue };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
        if !KNOWN_TYPES.contains(&ty) {
            let e = unknown.entry(ty.to_string()).or_insert((no, 0));
            e.1 += 1;
        }
        let content = v.get("message").and_then(|m| m.get("content")).and_then(Value::as_array);
        for b in content.into_iter().flatten() {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    if let Some(id) = b.get("id").and_then(Value::as_str) {
                        let name = b.get("name").and_then(Value::as_str).unwrap_or("?");
                        calls.push((no, id.to_string(), name.to_string()));
                    }
                }
                Some("tool_result") => {
                    if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                        answered.insert(id.to_string());
                    }
                }
                _ => {}
            }
        }
    }
    for (line, id, name) in calls {
        if !answered.contains(&id) {
            out.push(Finding {
                level: Level::Warning,
                kind: "unanswered-call",
                line: Some(line),
                message: format!("the {name} call {id} has no tool_result anywhere in the file"),
                hint: "Claude Code answers it with \"[Tool result missing due to internal error]\" when it resumes here; the session was likely interrupted mid-call",
            });
        }
    }
    let mut unknown: Vec<_> = unknown.into_iter().collect();
    unknown.sort_by_key(|(_, (l, _))| *l);
    for (ty, (line, n)) in unknown {
        out.push(Finding {
            level: Level::Info,
            kind: "unknown-type",
            line: Some(line),
            message: format!(
                "line type `{}` ({n} line{}) is new to pisces; kept and shown with `tree --filter all`",
                if ty.is_empty() { "(none)" } else { &ty },
                if n == 1 { "" } else { "s" }
            ),
            hint: "new Claude Code releases add line types; nothing is wrong with the file",
        });
    }
    out
}
