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

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::session::check::{Finding, Level};
use crate::session::entry::{EntryIdx, EntryMeta, LineNo, Owned, StrRef};
use crate::session::format::{Dialect, Fit, Format, FormatInfo, Response, RowNeed, Unreadable, Unsupported};
use crate::session::index::{hash_bytes, lists, IdMap, NO_KEY};
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
        // Every line it takes names a `sessionId` or a `leafUuid`: a head without either key
        // (nor a `\u` escape, which could spell one) is another agent's, read no further.
        // (Store discovery sniffs every file: parsing the lines of each was most of a warm `ls`.)
        if !crate::session::format::may_hold_any(head, &[b"\"sessionId\"", b"\"leafUuid\""]) {
            return Fit::No;
        }
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
/// `Session::entries`; its uuid is the entry's id). The strings stay where they are in the
/// line (or in the session's owned table when they had escapes): a 100 MB file has sixty
/// thousand lines, and a `String` each for these would be most of the index's heap.
#[derive(Debug, Clone)]
pub struct Line {
    /// `parentUuid` as written.
    pub parent: StrRef,
    /// An assistant line's `message.id` (the lines of one reply share it).
    pub message_id: StrRef,
    /// A user line with a tool result among its blocks.
    pub tool_result: bool,
    pub sidechain: bool,
    /// Where an assistant line's `message.model` and `message.usage` are, so that its
    /// usage is read without parsing the line; `None` when the index did not find them so
    /// (the line is parsed then).
    pub reply: Option<ReplySpans>,
    /// Where the line's `timestamp` value is; none: read from the whole line.
    pub time: At,
}

// (A line's record stays small: it is kept for every line of a file.)
const _: () = assert!(std::mem::size_of::<Line>() <= 48);

/// Where a value the index found starts in its line (0: none; no value starts a line).
/// Four bytes where a range took twelve: a large file has tens of thousands of lines, and
/// the value's end is where its reader stops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct At(u32);

impl At {
    pub const NONE: At = At(0);

    /// The place `at` in a line (none past 4 GiB).
    pub fn new(at: usize) -> At {
        At(u32::try_from(at).unwrap_or(0))
    }

    /// Where the value starts, if it is there.
    pub fn get(self) -> Option<usize> {
        (self.0 > 0).then_some(self.0 as usize)
    }

    /// The value when it is a string with no escape and no control character, as its bytes
    /// (`walk::plain_text`: what serde reads of it).
    pub fn plain_str(self, line: &[u8]) -> Option<&str> {
        let at = self.get()?;
        if line.get(at) != Some(&b'"') {
            return None;
        }
        crate::session::walk::plain_text(line, at + 1).map(|(t, _)| t)
    }

    /// The value read as a `T`, from its first byte (serde stops where the value ends,
    /// so the end is not looked for first: walking a reply's usage to its end was half of
    /// reading it): `None` when there is none, `Some(None)` when it does not read as a `T`
    /// (then the line is left to the parse).
    pub fn read<'l, T: serde::Deserialize<'l>>(self, line: &'l [u8]) -> Option<Option<T>> {
        let at = self.0 as usize;
        (at > 0).then(|| T::deserialize(&mut serde_json::Deserializer::from_slice(line.get(at..)?)).ok())
    }
}

/// Where a reply line's `message.model` and `message.usage` values start, each when it is
/// there once, and its `requestId`'s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplySpans {
    pub model: At,
    pub usage: At,
    /// Where `requestId`'s value is, when it is a string.
    pub request_id: At,
    /// The keys `stats` reads a response's ids from (`uuid`, `timestamp`, `sessionId`,
    /// `requestId`, `requestSessionId`; `message.id`, `message.model`) are each there at
    /// most once, each a string or null, and `requestSessionId` is null or absent: a parse
    /// of the line (`usage::response`) would read no more than the spans and the index say.
    pub plain_ids: bool,
}

/// Where the index's strings are: the file, the entries whose lines hold them, and the
/// owned table (while the file is read, and in the session after).
#[derive(Clone, Copy)]
pub struct Texts<'s> {
    data: &'s [u8],
    entries: &'s [EntryMeta],
    owned: &'s Owned,
}

impl<'s> Texts<'s> {
    pub fn new(data: &'s [u8], entries: &'s [EntryMeta], owned: &'s Owned) -> Texts<'s> {
        Texts { data, entries, owned }
    }

    pub fn of(s: &'s Session) -> Texts<'s> {
        Texts { data: s.data(), entries: s.entries.as_slice(), owned: s.owned() }
    }

    /// A string the index keeps for entry `k`.
    pub fn get(&self, k: usize, r: &'s StrRef) -> Option<&'s str> {
        let e = self.entries.get(k)?;
        r.get(self.data.get(e.span())?, self.owned)
    }

    /// Entry `k`'s uuid.
    pub fn uuid(&self, k: usize) -> Option<&'s str> {
        self.get(k, &self.entries.get(k)?.id)
    }
}

/// One loaded Claude Code file.
#[derive(Debug)]
pub struct Claude {
    pub lines: Vec<Line>,
    /// uuid -> the last entry with it, while the file is read; then the session's id map
    /// ([`Claude::take_ids`]), which it is.
    ids: IdMap,
    /// Each entry's parent by its `parentUuid` as written (the last entry with that uuid).
    pub parents: Vec<Option<u32>>,
    /// Each entry's reply (its group of lines sharing a message.id), or `NO_KEY`; a group's
    /// lines, in file order, are `members[group_at[g]..group_at[g + 1]]`.
    group_of: Vec<u32>,
    group_at: Vec<u32>,
    members: Vec<u32>,
    /// The user entries with tool results written under entry `k`, in file order:
    /// `results[results_at[k]..results_at[k + 1]]`.
    results_at: Vec<u32>,
    results: Vec<u32>,
    /// Every call's name by its id, read when first needed (`entries::call_names`).
    call_names: std::sync::OnceLock<std::collections::HashMap<String, Value>>,
}

impl Claude {
    /// The context at `leaf` (`--resume-session-at`), or as `--resume` sends it.
    fn projection(&self, s: &Session, leaf: Option<EntryIdx>, resumed: bool) -> Result<Projection, Unreadable> {
        let Some(leaf) = leaf else { return Ok(Projection { anthropic: Some(Vec::new()), ..Default::default() }) };
        let path = context::entries_at(s, self, leaf);
        // Each line of the path parsed once, for both shapes of the context.
        let lines: Vec<Value> = path.iter().map(|&i| context::line(s, i)).collect::<Result<_, _>>()?;
        let anthropic = context::api_messages(s, &lines, resumed)?;
        let (messages, entries, model) = entries::project(s, self, &path, &lines)?;
        Ok(Projection {
            leaf: Some(leaf),
            path,
            thinking_level: None,
            model,
            entries,
            messages,
            anthropic: Some(anthropic),
            responses: None,
            settings: None,
        })
    }

    /// The index of `lines`, one for each entry of `t`.
    pub fn new(t: Texts, lines: Vec<Line>) -> Claude {
        let n = lines.len();
        // (The session's id map, as `Session::build` would make it: made once, here.)
        let mut by_uuid: HashTable<u32> = HashTable::with_capacity(n);
        let rehash = |&k: &u32| t.uuid(k as usize).map_or(0, |s| hash_bytes(s.as_bytes()));
        let mut shadowed = Vec::new();
        for k in 0..n {
            let Some(uuid) = t.uuid(k) else { continue };
            match by_uuid.entry(hash_bytes(uuid.as_bytes()), |&j| t.uuid(j as usize) == Some(uuid), rehash) {
                Entry::Vacant(v) => {
                    v.insert(k as u32);
                }
                Entry::Occupied(mut o) => {
                    let before = std::mem::replace(o.get_mut(), k as u32);
                    shadowed.push((EntryIdx::new(k), EntryIdx::new(before as usize)));
                }
            }
        }
        let repeated = !shadowed.is_empty();
        // Replies: the first line of each group stands for it in the table.
        let replies = lines.iter().filter(|l| !l.message_id.is_none()).count();
        let mut groups: HashTable<u32> = HashTable::with_capacity(replies);
        let mut firsts: Vec<u32> = Vec::new();
        let mut group_of = vec![NO_KEY; n];
        for (k, l) in lines.iter().enumerate() {
            let Some(id) = t.get(k, &l.message_id) else { continue };
            let id_of = |firsts: &[u32], g: u32| {
                let f = firsts[g as usize] as usize;
                t.get(f, &lines[f].message_id)
            };
            group_of[k] = match groups.find(hash_bytes(id.as_bytes()), |&g| id_of(&firsts, g) == Some(id)) {
                Some(&g) => g,
                None => {
                    let g = firsts.len() as u32;
                    firsts.push(k as u32);
                    groups.insert_unique(hash_bytes(id.as_bytes()), g, |&g| {
                        id_of(&firsts, g).map_or(0, |s| hash_bytes(s.as_bytes()))
                    });
                    g
                }
            };
        }
        let (group_at, members) = lists(&group_of, firsts.len());
        let mut c = Claude {
            lines,
            ids: IdMap { table: by_uuid, shadowed },
            parents: Vec::new(),
            group_of,
            group_at,
            members,
            results_at: Vec::new(),
            results: Vec::new(),
            call_names: std::sync::OnceLock::new(),
        };
        // A parent known to be the entry before (the loader gave it that entry's uuid's
        // reference) is that entry, unless a uuid repeats (the last with it is the parent).
        let before = |k: usize| !repeated && k > 0 && c.lines[k].parent.same_known(&t.entries[k - 1].id) == Some(true);
        c.parents = (0..n)
            .map(|k| match before(k) {
                true => Some(k as u32 - 1),
                false => c.parent_uuid(t, k).and_then(|p| c.find(t, p)).map(|p| p as u32),
            })
            .collect();
        let under: Vec<u32> = (0..n)
            .map(|k| match (c.lines[k].tool_result, c.parents[k]) {
                (true, Some(p)) => p,
                _ => NO_KEY,
            })
            .collect();
        (c.results_at, c.results) = lists(&under, n);
        c
    }

    /// The name of the call `id`, from the reply that made it (`null`: no reply did).
    pub fn call_name(&self, s: &Session, id: &str) -> Value {
        self.call_names.get_or_init(|| entries::call_names(s)).get(id).cloned().unwrap_or(Value::Null)
    }

    /// The last entry with `uuid`, while the file is read (after, the session's
    /// `Session::get` answers).
    pub fn find(&self, t: Texts, uuid: &str) -> Option<usize> {
        self.ids.table.find(hash_bytes(uuid.as_bytes()), |&k| t.uuid(k as usize) == Some(uuid)).map(|&k| k as usize)
    }

    /// The id map made while the file was read, for the session to take.
    pub fn take_ids(&mut self) -> IdMap {
        std::mem::replace(&mut self.ids, IdMap { table: HashTable::new(), shadowed: Vec::new() })
    }

    /// Entry `k`'s `parentUuid` as written.
    pub fn parent_uuid<'r>(&'r self, t: Texts<'r>, k: usize) -> Option<&'r str> {
        t.get(k, &self.lines[k].parent)
    }

    /// The lines of entry `k`'s reply (`k` among them), in file order; empty when `k` is
    /// not a reply's line.
    pub fn reply(&self, k: usize) -> &[u32] {
        match self.group_of[k] {
            NO_KEY => &[],
            g => &self.members[self.group_at[g as usize] as usize..self.group_at[g as usize + 1] as usize],
        }
    }

    /// Which reply entry `k` is a line of (the same number for the lines of one reply).
    pub fn reply_of(&self, k: usize) -> Option<u32> {
        Some(self.group_of[k]).filter(|&g| g != NO_KEY)
    }

    /// The user entries with tool results whose `parentUuid` is entry `k`, in file order.
    pub fn results_under(&self, k: usize) -> &[u32] {
        &self.results[self.results_at[k] as usize..self.results_at[k + 1] as usize]
    }

    /// Whether entry `i` is the first line of its reply (usage is counted there once).
    pub fn first_of_reply(&self, i: EntryIdx) -> bool {
        self.reply(i.get()).first().is_none_or(|&f| f as usize == i.get())
    }
}

impl Dialect for Claude {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        entries::entry(s, self, i)
    }

    /// Read at the `timestamp` value the index found, else from the whole line.
    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        let raw = s.raw_line(i);
        let at = self.lines[i.get()].time;
        if let Some(t) = at.plain_str(raw) {
            return crate::session::js::parse_date(t);
        }
        match at.read::<load::Str>(raw) {
            Some(Some(t)) => t.0.and_then(|t| crate::session::js::parse_date(&t)),
            Some(None) | None => entries::line_time(raw),
        }
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

    /// `message.model` read where the index found it (the entry's `model` is that value).
    fn model(&self, s: &Session, i: EntryIdx) -> Result<Option<String>, Unreadable> {
        let assistant = s.entries[i].role == crate::session::Role::Assistant;
        let at = self.lines[i.get()].reply.filter(|_| assistant).map_or(At::NONE, |r| r.model);
        if let Some(Some(m)) = at.read::<load::Str>(s.raw_line(i)) {
            return Ok(m.0.map(std::borrow::Cow::into_owned));
        }
        Ok(crate::session::format::model_of(&self.entry(s, i)?))
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

    fn client_written(&self, s: &Session, i: EntryIdx) -> bool {
        // Most lines have no such key: those are not parsed.
        crate::session::text::contains!(s.raw_line(i), b"\"isMeta\"")
            && context::line(s, i).is_ok_and(|v| v.get("isMeta").and_then(Value::as_bool) == Some(true))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick refusal (no `sessionId` / `leafUuid` key in the head) refuses only what the
    /// line-by-line read refuses: a key spelled with an escape is still read.
    #[test]
    fn sniff_refuses_quickly_only_what_it_would_refuse() {
        let claude =
            r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}"#;
        let escaped = r#"{"type":"user","uuid":"u1","parentUuid":null,"session\u0049d":"s","message":{"role":"user","content":"hi"}}"#;
        let summary = r#"{"type":"summary","summary":"t","leafUuid":"u9"}"#;
        let pi = r#"{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
        for (head, want) in [(claude, Fit::Yes), (escaped, Fit::Yes), (summary, Fit::Yes), (pi, Fit::No)] {
            assert_eq!(ClaudeFormat.sniff(head.as_bytes()), want, "{head}");
        }
    }
}
