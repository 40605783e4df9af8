//! Reading a Claude Code session file into the common index (docs/claude-format.md §1).
//!
//! Every line is a JSON object with a `type`. Lines with a `uuid` (`user`, `assistant`,
//! `attachment`, `system`, `progress`, …) are the entries of the tree, linked by
//! `parentUuid`; the rest (`queue-operation`, `last-prompt`, `api-request*`, `cost-state`,
//! `file-history-snapshot`, `summary`, …) describe the session and are read for what they
//! say (the leaf the client resumes at, the title) but are not entries.
//!
//! The tree the index gets is the one the client acts on, which is not quite the one the
//! `parentUuid`s draw (§1.3): a compact boundary (`parentUuid: null`) hangs under its
//! `logicalParentUuid`, and the tool results of a reply split into several lines are put in
//! one line after its last part, where the client reads them, instead of each under the
//! part that made its call. The context itself is built from the `parentUuid`s as written
//! (`context.rs`), as the client builds it.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{At, Claude, Line, ReplySpans, Texts};
use crate::session::entry::{EntryMeta, EntryType, LineNo, Owned, Role, StrRef};
use crate::session::index::{ChildOrder, Header, Parts};
use crate::session::validate::{validate, Verdict};
use crate::session::walk::Blocks;
use crate::session::{Diagnostic, LoadError, Problem, Session, Severity, Source};

/// The attachment of a prompt the user sent while a turn ran (docs/claude-format.md §1.2):
/// a user's message of the conversation, though written as an attachment.
pub const QUEUED: &str = "queued_command";

/// The subtype of a `system` line that holds a local command's output (docs/claude-format.md
/// §1.2): a user's line of the conversation, though written as a system line.
pub const LOCAL_COMMAND_OUTPUT: &str = "local_command";

/// At most this many lines of one kind of problem are listed one by one.
const MAX_LISTED: usize = 20;

/// A JSON value read as a string when it is one, and skipped otherwise.
#[derive(Default)]
pub(super) struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Some(Cow::Borrowed(s))))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'a>, E> {
                Ok(Str(Some(Cow::Owned(s.to_string()))))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Str<'a>, E> {
                Ok(Str(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Str<'a>, E> {
                Ok(Str(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Str<'a>, E> {
                Ok(Str(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Str<'a>, E> {
                Ok(Str(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Str<'a>, E> {
                Ok(Str(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Str<'a>, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Str(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Str<'a>, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Str(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl Str<'_> {
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// What the index reads of a line; everything else is skipped unread.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Head<'a> {
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
    #[serde(borrow)]
    pub uuid: Str<'a>,
    #[serde(rename = "parentUuid", borrow)]
    pub parent_uuid: Str<'a>,
    #[serde(rename = "logicalParentUuid", borrow)]
    pub logical_parent_uuid: Str<'a>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Str<'a>,
    #[serde(borrow)]
    pub cwd: Str<'a>,
    #[serde(borrow)]
    pub version: Str<'a>,
    #[serde(borrow)]
    pub subtype: Str<'a>,
    #[serde(rename = "leafUuid", borrow)]
    pub leaf_uuid: Str<'a>,
    #[serde(borrow)]
    pub summary: Str<'a>,
    #[serde(rename = "customTitle", borrow)]
    pub custom_title: Str<'a>,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Option<Value>,
    #[serde(borrow)]
    pub message: Option<&'a RawValue>,
    #[serde(borrow)]
    pub attachment: Option<&'a RawValue>,
    /// An attachment's `attachment.type` (filled by `scan::head`, or from `attachment` here).
    #[serde(skip)]
    pub attachment_type: Str<'a>,
    /// `message.id` (filled by `scan::head`, or from `message` here).
    #[serde(skip)]
    pub message_id: Str<'a>,
    /// Where `message.model` and `message.usage` are (filled by `scan::head`).
    #[serde(skip)]
    pub reply: Option<ReplySpans>,
    /// Where the `timestamp` value is, when the line has one such key (filled by
    /// `scan::head`).
    #[serde(skip)]
    pub time: At,
}

/// What the index reads of a line's `message`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct MessageHead<'a> {
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub role: Str<'a>,
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct BlockHead<'a> {
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
}

/// Whether a user message's content is only tool results (at least one).
fn only_tool_results(content: Option<&RawValue>) -> bool {
    let Some(raw) = content else { return false };
    match serde_json::from_str::<Vec<BlockHead>>(raw.get()) {
        Ok(blocks) => !blocks.is_empty() && blocks.iter().all(|b| b.ty.as_deref() == Some("tool_result")),
        Err(_) => false,
    }
}

/// Whether a message's content has a tool result.
fn some_tool_result(content: Option<&RawValue>) -> bool {
    let Some(raw) = content else { return false };
    serde_json::from_str::<Vec<BlockHead>>(raw.get())
        .is_ok_and(|blocks| blocks.iter().any(|b| b.ty.as_deref() == Some("tool_result")))
}

/// How much of the file is validated as JSON while it is indexed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Validate {
    /// Every line, as `check` needs (and a read that met a broken line: so that all the
    /// broken lines are found at once, not one per attempt).
    All,
    /// Only the lines the index takes something from beyond their place in the tree (a
    /// last line without its newline, which may be cut off, `last-prompt`, titles, the
    /// header's fields); an entry's line is validated
    /// by whoever parses it (its content is needed then), and a line found broken then makes
    /// the read start again with [`Validate::All`] (`session::open`).
    Used,
}

/// Reads and indexes a Claude Code session, treating the lines in `exclude` as malformed.
/// A first read validates only the lines it uses; a read again (`exclude` is not empty)
/// validates all.
pub fn load<'a>(source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
    let how = if exclude.is_empty() { Validate::Used } else { Validate::All };
    load_with(source, exclude, how)
}

/// A line that is not an entry and says nothing: why it was skipped.
#[derive(Clone, Copy)]
enum Skip {
    NotObject,
    Malformed,
    Truncated,
}

/// What one part of the file gave (line numbers counted from the part's start).
#[derive(Default)]
struct Part<'a> {
    entries: Vec<EntryMeta>,
    lines: Vec<Line>,
    owned: Owned,
    skipped: Vec<(LineNo, Skip)>,
    /// The first `sessionId`, `cwd`, `version` of the part.
    session_id: Option<Cow<'a, str>>,
    cwd: Option<Cow<'a, str>>,
    version: Option<Cow<'a, str>>,
    /// The last `last-prompt` leaf and title of the part.
    last_prompt_leaf: Option<Cow<'a, str>>,
    title: Option<Cow<'a, str>>,
    /// Physical lines in the part.
    line_count: u32,
}

/// Files smaller than this are scanned on one thread.
const PARALLEL_MIN: usize = 4 << 20;

/// Reads and indexes a Claude Code session, validating as `how` says.
pub fn load_with<'a>(source: &'a Source, exclude: &BTreeSet<LineNo>, how: Validate) -> Result<Session<'a>, LoadError> {
    let data = source.bytes();
    let name = source.name.clone();
    if data.is_empty() {
        return Err(LoadError::Empty { name });
    }
    // Two halves, each starting at a line, on two threads (line numbers in `exclude` are
    // the file's, so a read that excludes lines takes one thread).
    let mid = data.len() / 2;
    let split = if data.len() >= PARALLEL_MIN && exclude.is_empty() {
        memchr::memchr(b'\n', &data[mid..]).map(|i| mid + i + 1).filter(|&s| s < data.len())
    } else {
        None
    };
    let part = match split {
        None => scan_part(data, 0..data.len(), exclude, how),
        Some(split) => {
            let (mut first, second) = std::thread::scope(|t| {
                let second = t.spawn(|| scan_part(data, split..data.len(), exclude, how));
                let first = scan_part(data, 0..split, exclude, how);
                (first, second.join().expect("scanner thread panicked"))
            });
            join(&mut first, second);
            first
        }
    };

    let mut diags = Vec::new();
    let (mut malformed, mut not_objects) = (0usize, 0usize);
    for &(no, skip) in &part.skipped {
        if let Skip::NotObject = skip {
            not_objects += 1;
            if not_objects <= MAX_LISTED {
                diags.push(warn(Problem::NotObject, no, "JSON but not an object; skipped, as Claude Code skips it"));
            }
            continue;
        }
        malformed += 1;
        if malformed <= MAX_LISTED {
            let (kind, what) = match skip {
                Skip::Truncated => (Problem::Truncated, "truncated last line (no final newline, not complete JSON)"),
                _ => (Problem::Malformed, "malformed JSON"),
            };
            diags.push(warn(kind, no, &format!("{what}; skipped, as Claude Code skips it")));
        }
    }
    if malformed > MAX_LISTED {
        diags.push(Diagnostic {
            kind: Problem::Malformed,
            severity: Severity::Warning,
            line: None,
            message: format!("{} more malformed lines not listed", malformed - MAX_LISTED),
        });
    }
    let header = Header {
        id: part.session_id.as_deref().unwrap_or_default().to_string(),
        cwd: part.cwd.as_deref().map(|c| Value::String(c.to_string())),
        version: part.version.as_deref().map(|c| Value::String(c.to_string())),
        ..Header::default()
    };
    if part.entries.is_empty() && header.id.is_empty() {
        return Err(LoadError::NotASession {
            name,
            line: None,
            format: "claude",
            reason: "no line has a `sessionId` or a `uuid`".into(),
            hint: None,
        });
    }
    let Part { mut entries, lines, mut owned, last_prompt_leaf, title, .. } = part;
    let last_main = (0..entries.len())
        .rev()
        .find(|&k| entries[k].kind == EntryType::Message && !lines[k].sidechain)
        .map(crate::session::EntryIdx::new);
    let mut dialect = Claude::new(Texts::new(data, &entries, &owned), lines);
    linearize_tool_results(data, &mut entries, &dialect, &mut owned);
    root_kept_tails(data, &mut entries, &dialect, &owned);
    // (Both change parents only: the uuids the map holds are as they were.)
    let ids = dialect.take_ids();
    let parts = Parts {
        file: name,
        path: source.path.clone(),
        data,
        header,
        entries,
        owned,
        diagnostics: diags,
        dialect: Box::new(dialect),
        synthetic_ids: false,
    };
    let mut s = Session::build_with_ids(parts, ChildOrder::File, ids);
    s.title = title.map(Cow::into_owned);
    // The leaf `--resume` takes: the one the last `last-prompt` line names while it is one
    // (the client does not write that line after every turn: after a local command such as
    // `/model`, lines follow the leaf it names), else the last message of the main
    // conversation.
    let leaf = last_prompt_leaf.and_then(|l| s.get(&l)).filter(|&l| s.children(l).next().is_none()).or(last_main);
    if leaf.is_some() {
        s.set_default_leaf(leaf);
    }
    Ok(s)
}

/// Appends the second part to the first, its line numbers and owned strings shifted.
fn join<'a>(first: &mut Part<'a>, second: Part<'a>) {
    let lines = first.line_count;
    let shift = |l: LineNo| LineNo(l.get() + lines);
    let owned = first.owned.append(second.owned);
    // (Exactly: growing by the usual doubling left up to half of each table unused.)
    first.entries.reserve_exact(second.entries.len());
    first.lines.reserve_exact(second.lines.len());
    first.entries.extend(second.entries.into_iter().map(|mut e| {
        e.line = shift(e.line);
        e.id = e.id.rebase_owned(owned);
        e.parent_id = e.parent_id.rebase_owned(owned);
        e
    }));
    first.lines.extend(second.lines.into_iter().map(|mut l| {
        l.parent = l.parent.rebase_owned(owned);
        l.message_id = l.message_id.rebase_owned(owned);
        l
    }));
    first.skipped.extend(second.skipped.into_iter().map(|(l, k)| (shift(l), k)));
    first.session_id = first.session_id.take().or(second.session_id);
    first.cwd = first.cwd.take().or(second.cwd);
    first.version = first.version.take().or(second.version);
    first.last_prompt_leaf = second.last_prompt_leaf.or(first.last_prompt_leaf.take());
    first.title = second.title.or(first.title.take());
    first.line_count += second.line_count;
}

/// Scans the lines of `data[range]` (which starts at a line): entries, skipped lines, and
/// what the other lines say.
fn scan_part<'a>(data: &'a [u8], range: Range<usize>, exclude: &BTreeSet<LineNo>, how: Validate) -> Part<'a> {
    let mut part = Part::default();
    let mut blocks = Blocks::default();
    // The last entry's uuid and the last reply line's `message.id` in `part.owned`.
    let (mut prev_id, mut prev_message_id) = (StrRef::NONE, StrRef::NONE);
    let mut start = range.start;
    while start < range.end {
        let end = memchr::memchr(b'\n', &data[start..range.end]).map_or(range.end, |k| start + k);
        part.line_count += 1;
        let no = LineNo(part.line_count);
        let raw = &data[start..end];
        let here = start;
        start = end + 1;
        let text = raw.trim_ascii();
        if text.is_empty() {
            continue;
        }
        // Validated once, when it is needed.
        let mut verdict = None;
        let mut whole = || *verdict.get_or_insert_with(|| matches!(validate(raw), Verdict::Whole { .. }));
        // (One `Head` filled in place: it is a few hundred bytes, and moving it through
        // `Option`s was a copy of them per line.)
        let mut head = Head::default();
        let read = if exclude.contains(&no) || (how == Validate::All && !whole()) {
            None
        } else {
            // The fast walk, else serde on the whole line.
            let header = part.session_id.is_none() || part.cwd.is_none() || part.version.is_none();
            super::scan::head(raw, &mut blocks, header, &mut head).or_else(|| {
                head = serde_json::from_slice::<Head>(raw).ok()?;
                let m =
                    head.message.and_then(|m| serde_json::from_str::<MessageHead>(m.get()).ok()).unwrap_or_default();
                head.message_id = m.id;
                head.attachment_type = head
                    .attachment
                    .and_then(|a| serde_json::from_str::<BlockHead>(a.get()).ok())
                    .map(|b| b.ty)
                    .unwrap_or_default();
                Some((some_tool_result(m.content), only_tool_results(m.content)))
            })
        };
        // What is read from lines beyond the tree must come from lines that are JSON.
        let used = end == data.len()
            || matches!(head.ty.as_deref(), Some("last-prompt" | "summary" | "custom-title"))
            || (head.session_id.as_deref().is_some_and(|s| !s.is_empty()) && part.session_id.is_none())
            || (head.cwd.0.is_some() && part.cwd.is_none())
            || (head.version.0.is_some() && part.version.is_none());
        let Some((some_results, only_results)) = read.filter(|_| !used || whole()) else {
            let skip = if whole() && text.first() != Some(&b'{') {
                Skip::NotObject
            } else if end == data.len() && data.last() != Some(&b'\n') {
                Skip::Truncated
            } else {
                Skip::Malformed
            };
            part.skipped.push((no, skip));
            continue;
        };
        let ty = head.ty.0.take();
        let ty = ty.as_deref().unwrap_or_default();
        // (The header's id is the first one that is not empty.)
        if part.session_id.is_none() {
            part.session_id = head.session_id.0.take().filter(|s| !s.is_empty());
        }
        if part.cwd.is_none() {
            part.cwd = head.cwd.0.take();
        }
        if part.version.is_none() {
            part.version = head.version.0.take();
        }
        match ty {
            "last-prompt" => {
                if let Some(l) = head.leaf_uuid.0.take() {
                    part.last_prompt_leaf = Some(l);
                }
            }
            "summary" => part.title = head.summary.0.take().or(part.title.take()),
            "custom-title" => part.title = head.custom_title.0.take().or(part.title.take()),
            _ => {}
        }
        let Head { uuid, parent_uuid, logical_parent_uuid, .. } = &head;
        let Some(uuid) = uuid.as_deref() else { continue };
        let (kind, role) = match ty {
            "user" if only_results => (EntryType::Message, Role::ToolResult),
            "user" => (EntryType::Message, Role::User),
            "assistant" => (EntryType::Message, Role::Assistant),
            "system" if head.subtype.as_deref() == Some("compact_boundary") => (EntryType::Compaction, Role::None),
            // A prompt the user sent while a turn ran, given to the model within it.
            "attachment" if head.attachment_type.as_deref() == Some(QUEUED) => (EntryType::Message, Role::User),
            // A local command's output written as a system line (`/clear`'s), which the
            // client sends as a user line.
            "system" if head.subtype.as_deref() == Some(LOCAL_COMMAND_OUTPUT) => (EntryType::Message, Role::User),
            _ => (EntryType::Custom, Role::None),
        };
        let mut e = EntryMeta::new(here, raw.len(), no, kind, role);
        // The strings are copied out of the lines into one buffer, each entry's side by
        // side: the index's tables then compare them there, in a few megabytes of heap,
        // rather than all over the mapped file (a cache miss each).
        let owned = &mut part.owned;
        // A `parentUuid` naming the entry before (nearly all of them), and a `message.id`
        // shared with the reply's line before, take that string's reference rather than a
        // copy of it: a third of the owned bytes, and the index then knows the two are the
        // same without comparing them.
        let same = |r: StrRef, s: &str, owned: &Owned| !r.is_none() && r.get(&[], owned) == Some(s);
        let parent = match parent_uuid.as_deref().filter(|p| !p.is_empty()) {
            None => StrRef::NONE,
            Some(p) if same(prev_id, p, owned) => prev_id,
            Some(p) => owned.push(p),
        };
        e.id = owned.push(uuid);
        prev_id = e.id;
        let logical = logical_parent_uuid.as_deref().filter(|p| !p.is_empty());
        e.parent_id = match logical {
            Some(l) if parent.is_none() && kind == EntryType::Compaction => owned.push(l),
            _ => parent,
        };
        let message_id = match head.message_id.as_deref().filter(|_| ty == "assistant") {
            None => StrRef::NONE,
            Some(m) if same(prev_message_id, m, owned) => prev_message_id,
            Some(m) => owned.push(m),
        };
        if !message_id.is_none() {
            prev_message_id = message_id;
        }
        part.lines.push(Line {
            parent,
            message_id,
            tool_result: ty == "user" && some_results,
            sidechain: head.is_sidechain.as_ref().and_then(Value::as_bool).unwrap_or(false),
            reply: head.reply.filter(|_| ty == "assistant"),
            time: head.time,
        });
        part.entries.push(e);
    }
    part
}

/// The tail of the conversation a compaction kept, when the file lacks the parent it was
/// written under (a fork holds the tail without what came before it), is a root: the client
/// hangs it under the compaction's summary when it loads the file (docs/claude-format.md §2
/// step 0), so nothing is missing; the tree shows it where the source does, before the
/// compaction that hangs under it.
fn root_kept_tails(data: &[u8], entries: &mut [EntryMeta], c: &Claude, owned: &Owned) {
    let t = Texts::new(data, entries, owned);
    let heads: Vec<usize> = (0..entries.len())
        .filter(|&k| entries[k].kind == EntryType::Compaction)
        .filter_map(|k| {
            let v = serde_json::from_slice::<Value>(&data[entries[k].span()]).ok()?;
            let meta = &v["compactMetadata"];
            let head = meta["preservedMessages"]["uuids"][0].as_str().or(meta["preservedSegment"]["headUuid"].as_str());
            let h = c.find(t, head?)?;
            (c.parents[h].is_none() && !c.lines[h].parent.is_none()).then_some(h)
        })
        .collect();
    for h in heads {
        entries[h].parent_id = StrRef::NONE;
    }
}

fn warn(kind: Problem, line: LineNo, message: &str) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Warning, line: Some(line), message: message.to_string() }
}

/// The tree's parents for a reply split into lines (§1.3): its tool results, each written
/// under the part that called it, are put one after the other after the reply's last part,
/// in the order they were written, and what followed any of them follows the last. Only
/// for a reply whose parts are a chain (each the child of the one before), as the client
/// writes them; anything else keeps the parents as written.
fn linearize_tool_results(data: &[u8], entries: &mut [EntryMeta], c: &Claude, owned: &mut Owned) {
    let t = Texts::new(data, entries, owned);
    // Children (by the parents as written) of each line, in file order.
    let n = c.lines.len();
    let written: Vec<u32> = c.parents.iter().map(|p| p.unwrap_or(crate::session::index::NO_KEY)).collect();
    let (at, child) = crate::session::index::lists(&written, n);
    let children = |p: usize| child[at[p] as usize..at[p + 1] as usize].iter().map(|&c| c as usize);
    // Whether `child`'s `parentUuid` as written is `parent`'s uuid (known from the two
    // references without reading the strings when the loader gave the child its parent's).
    let names = |child: usize, parent: usize| {
        let written = &c.lines[child].parent;
        !written.is_none()
            && written.same_known(&entries[parent].id).unwrap_or_else(|| {
                let p = c.parent_uuid(t, child);
                p.is_some() && p == t.uuid(parent)
            })
    };
    let mut new_parent: Vec<(usize, usize)> = Vec::new();
    let mut results: Vec<usize> = Vec::new();
    for first in 0..n {
        // Each reply once, at its first line (so in the order of their first lines).
        let members = c.reply(first);
        if members.first() != Some(&(first as u32)) {
            continue;
        }
        let chained = members.windows(2).all(|w| names(w[1] as usize, w[0] as usize));
        if !chained {
            continue;
        }
        results.clear();
        results.extend(
            members.iter().flat_map(|&m| children(m as usize)).filter(|&c| entries[c].role == Role::ToolResult),
        );
        let Some(&last_member) = members.last() else { continue };
        if results.is_empty() {
            continue;
        }
        results.sort_unstable();
        let mut prev = last_member as usize;
        for &r in &results {
            new_parent.push((r, prev));
            prev = r;
        }
        let last = prev;
        for &r in &results[..results.len() - 1] {
            for c in children(r) {
                if entries[c].role != Role::ToolResult {
                    new_parent.push((c, last));
                }
            }
        }
    }
    // The new parents' uuids, where they differ from what the line says: the parent's own
    // reference to its uuid (a copy of the string only where that names a place in its line).
    let moved: Vec<(usize, usize, Option<String>)> = new_parent
        .into_iter()
        .filter(|&(child, parent)| !names(child, parent))
        .filter_map(|(child, parent)| {
            let p = t.uuid(parent)?;
            let copy = (!entries[parent].id.portable()).then(|| p.to_string());
            Some((child, parent, copy))
        })
        .collect();
    for (child, parent, copy) in moved {
        entries[child].parent_id = match copy {
            Some(p) => owned.push(&p),
            None => entries[parent].id,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::open;

    /// Four lines, the third broken (`tru`) but with a uuid the walk reads.
    const FILE: &str = concat!(
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}"#,
        "\n",
        r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"yes"}]}}"#,
        "\n",
        r#"{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"more"},"isMeta":tru}"#,
        "\n",
        r#"{"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"ok"}]}}"#,
        "\n",
    );

    fn source() -> Source {
        Source::from_bytes("t.jsonl", FILE.as_bytes().to_vec())
    }

    /// `check` validates every line: the broken one is a finding with its line.
    #[test]
    fn check_finds_a_broken_line_the_index_would_not_validate() {
        let findings = crate::session::check::check(&source(), crate::formats::ALL).unwrap();
        assert!(findings.iter().any(|f| f.kind == "malformed" && f.line == Some(LineNo(3))), "{findings:?}");
    }

    /// A command that parses the broken line reads the file again with every line
    /// validated: the line is skipped as the client skips it, and reported.
    #[test]
    fn a_broken_line_on_the_path_is_skipped_after_a_second_read() {
        let open = || Ok(vec![source()]);
        let mut reported = Vec::new();
        let (entries, path) = open::read(
            &open,
            crate::formats::ALL,
            &mut |s| {
                reported.extend(s.diagnostics.iter().map(|d| (d.kind, d.line)));
                Ok(())
            },
            |sessions, reading| {
                let s = &sessions[0];
                let p = s.dialect().project(s, s.default_leaf())?;
                reading.start_output()?;
                Ok((s.entries.len(), p.path.len()))
            },
        )
        .unwrap();
        // u2 is not an entry; a2's parent is missing, so its path is itself.
        assert_eq!((entries, path), (3, 1));
        assert!(reported.contains(&(Problem::Malformed, Some(LineNo(3)))), "{reported:?}");
        // Loaded lazily, the line is an entry until something parses it.
        assert_eq!(load(&source(), &BTreeSet::new()).unwrap().entries.len(), 4);
    }

    /// The id map the loader makes and hands to the session finds, for every uuid, the
    /// last entry with it, and reports the ones shadowed, as the session's own would:
    /// on every file of the corpus, and on one whose uuids repeat.
    #[test]
    fn the_loaders_id_map_is_the_sessions() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/claude-code-2.1.332");
        let mut sources: Vec<Source> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .map(|p| Source::open(&p).unwrap())
            .collect();
        assert!(sources.len() > 20);
        // (The last line's uuid made the second's; the broken third line is no entry.)
        let repeated = FILE.replace(r#""uuid":"a2""#, r#""uuid":"a1""#);
        sources.push(Source::from_bytes("repeated.jsonl", repeated.into_bytes()));
        for source in &sources {
            let s = load_with(source, &BTreeSet::new(), Validate::All).unwrap();
            let ids: Vec<String> = s.entries.indices().map(|i| s.id_str(i).unwrap().to_string()).collect();
            let mut repeats = 0;
            for (k, id) in ids.iter().enumerate() {
                let last = ids.iter().rposition(|x| x == id).unwrap();
                assert_eq!(s.get(id).map(crate::session::EntryIdx::get), Some(last), "{} {id}", source.name);
                repeats += usize::from(last != k);
                assert_eq!(s.entries[crate::session::EntryIdx::new(k)].shadowed(), last != k, "{} {id}", source.name);
            }
            assert_eq!(s.duplicate_ids, repeats > 0, "{}", source.name);
            assert_eq!(repeats > 0, source.name == "repeated.jsonl");
            let warned = s.diagnostics.iter().filter(|d| d.kind == Problem::DuplicateId).count();
            assert_eq!(warned, repeats, "{}", source.name);
        }
    }
}
