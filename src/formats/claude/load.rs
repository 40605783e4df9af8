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

use rustc_hash::FxHashMap as HashMap;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{Claude, Line};
use crate::session::entry::{EntryMeta, EntryType, LineNo, Role, StrRef};
use crate::session::index::{ChildOrder, Header, Parts};
use crate::session::validate::{validate, Verdict};
use crate::session::{Diagnostic, LoadError, Problem, Session, Severity, Source};

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
    /// `message.id` (filled by `scan::head`, or from `message` here).
    #[serde(skip)]
    pub message_id: Str<'a>,
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
struct BlockHead<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
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

/// Where `s` sits inside `line`, when it was borrowed from it.
fn offset_in(line: &[u8], s: &str) -> Option<usize> {
    let (start, end) = (line.as_ptr() as usize, line.as_ptr() as usize + line.len());
    let p = s.as_ptr() as usize;
    (p >= start && p + s.len() <= end).then(|| p - start)
}

/// Reads and indexes a Claude Code session, treating the lines in `exclude` as malformed.
pub fn load<'a>(source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
    let data = source.bytes();
    let name = source.name.clone();
    if data.is_empty() {
        return Err(LoadError::Empty { name });
    }
    let mut entries: Vec<EntryMeta> = Vec::new();
    let mut lines: Vec<Line> = Vec::new();
    let mut owned: Vec<String> = Vec::new();
    let mut diags = Vec::new();
    let mut header = Header::default();
    let mut last_prompt_leaf: Option<String> = None;
    let mut title: Option<String> = None;
    let (mut malformed, mut not_objects) = (0usize, 0usize);
    let mut start = 0usize;
    let mut line_no = 0u32;
    let owned_ref = |owned: &mut Vec<String>, s: &str| {
        owned.push(s.to_string());
        StrRef::owned(owned.len() - 1)
    };
    while start < data.len() {
        let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |k| start + k);
        line_no += 1;
        let no = LineNo(line_no);
        let raw = &data[start..end];
        let here = start;
        start = end + 1;
        let text = raw.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let whole = matches!(validate(raw), Verdict::Whole { .. });
        // The fast walk, else serde on the whole line.
        let head = if whole && !exclude.contains(&no) {
            super::scan::head(raw).or_else(|| {
                let mut h = serde_json::from_slice::<Head>(raw).ok()?;
                let m = h.message.and_then(|m| serde_json::from_str::<MessageHead>(m.get()).ok()).unwrap_or_default();
                let (some, all) = (some_tool_result(m.content), only_tool_results(m.content));
                h.message_id = m.id;
                Some((h, some, all))
            })
        } else {
            None
        };
        let Some((head, some_results, only_results)) = head else {
            if whole && text.first() != Some(&b'{') {
                not_objects += 1;
                if not_objects <= MAX_LISTED {
                    diags.push(warn(
                        Problem::NotObject,
                        no,
                        "JSON but not an object; skipped, as Claude Code skips it",
                    ));
                }
                continue;
            }
            malformed += 1;
            if malformed <= MAX_LISTED {
                let truncated = end == data.len() && data.last() != Some(&b'\n');
                let (kind, what) = if truncated {
                    (Problem::Truncated, "truncated last line (no final newline, not complete JSON)")
                } else {
                    (Problem::Malformed, "malformed JSON")
                };
                diags.push(warn(kind, no, &format!("{what}; skipped, as Claude Code skips it")));
            }
            continue;
        };
        if header.id.is_empty() {
            if let Some(sid) = head.session_id.as_deref() {
                header.id = sid.to_string();
            }
        }
        if header.cwd.is_none() {
            header.cwd = head.cwd.as_deref().map(|c| Value::String(c.to_string()));
        }
        if header.version.is_none() {
            header.version = head.version.as_deref().map(|c| Value::String(c.to_string()));
        }
        let ty = head.ty.as_deref().unwrap_or_default();
        match ty {
            "last-prompt" => {
                if let Some(l) = head.leaf_uuid.as_deref() {
                    last_prompt_leaf = Some(l.to_string());
                }
            }
            "summary" => title = head.summary.as_deref().map(str::to_string).or(title),
            "custom-title" => title = head.custom_title.as_deref().map(str::to_string).or(title),
            _ => {}
        }
        let Some(uuid) = head.uuid.as_deref() else { continue };
        let (kind, role) = match ty {
            "user" if only_results => (EntryType::Message, Role::ToolResult),
            "user" => (EntryType::Message, Role::User),
            "assistant" => (EntryType::Message, Role::Assistant),
            "system" if head.subtype.as_deref() == Some("compact_boundary") => (EntryType::Compaction, Role::None),
            _ => (EntryType::Custom, Role::None),
        };
        let mut e = EntryMeta::new(here, raw.len(), no, kind, role);
        e.id = match offset_in(raw, uuid) {
            Some(off) => StrRef::in_line(uuid, off),
            None => owned_ref(&mut owned, uuid),
        };
        let parent = head.parent_uuid.as_deref().filter(|p| !p.is_empty());
        let logical = head.logical_parent_uuid.as_deref().filter(|p| !p.is_empty());
        e.parent_id = match parent.or(if kind == EntryType::Compaction { logical } else { None }) {
            Some(p) => match offset_in(raw, p) {
                Some(off) => StrRef::in_line(p, off),
                None => owned_ref(&mut owned, p),
            },
            None => StrRef::NONE,
        };
        lines.push(Line {
            uuid: uuid.to_string(),
            parent: parent.map(str::to_string),
            message_id: head.message_id.as_deref().filter(|_| ty == "assistant").map(str::to_string),
            tool_result: ty == "user" && some_results,
            sidechain: head.is_sidechain.as_ref().and_then(Value::as_bool).unwrap_or(false),
        });
        entries.push(e);
    }
    if malformed > MAX_LISTED {
        diags.push(Diagnostic {
            kind: Problem::Malformed,
            severity: Severity::Warning,
            line: None,
            message: format!("{} more malformed lines not listed", malformed - MAX_LISTED),
        });
    }
    if entries.is_empty() && header.id.is_empty() {
        return Err(LoadError::NotASession {
            name,
            line: None,
            format: "claude",
            reason: "no line has a `sessionId` or a `uuid`".into(),
            hint: None,
        });
    }
    linearize_tool_results(&mut entries, &lines, &mut owned);
    let last_main = (0..entries.len())
        .rev()
        .find(|&k| entries[k].kind == EntryType::Message && !lines[k].sidechain)
        .map(crate::session::EntryIdx::new);
    let dialect = Claude::new(lines);
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
    let mut s = Session::build(parts, ChildOrder::File);
    s.title = title;
    // The leaf `--resume` takes: the one the last `last-prompt` line names, else the last
    // message of the main conversation.
    let leaf = last_prompt_leaf.and_then(|l| s.get(&l)).or(last_main);
    if leaf.is_some() {
        s.set_default_leaf(leaf);
    }
    Ok(s)
}

fn warn(kind: Problem, line: LineNo, message: &str) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Warning, line: Some(line), message: message.to_string() }
}

/// The tree's parents for a reply split into lines (§1.3): its tool results, each written
/// under the part that called it, are put one after the other after the reply's last part,
/// in the order they were written, and what followed any of them follows the last. Only
/// for a reply whose parts are a chain (each the child of the one before), as the client
/// writes them; anything else keeps the parents as written.
fn linearize_tool_results(entries: &mut [EntryMeta], lines: &[Line], owned: &mut Vec<String>) {
    let mut by_uuid: HashMap<&str, usize> = HashMap::default();
    for (k, l) in lines.iter().enumerate() {
        by_uuid.insert(l.uuid.as_str(), k);
    }
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::default();
    for (k, l) in lines.iter().enumerate() {
        if let Some(id) = &l.message_id {
            groups.entry(id.as_str()).or_default().push(k);
        }
    }
    // Children (by the parents as written) of each line.
    let mut children: HashMap<usize, Vec<usize>> = HashMap::default();
    for (k, l) in lines.iter().enumerate() {
        if let Some(p) = l.parent.as_deref().and_then(|p| by_uuid.get(p)) {
            children.entry(*p).or_default().push(k);
        }
    }
    let mut new_parent: Vec<(usize, usize)> = Vec::new();
    let mut ordered: Vec<&Vec<usize>> = groups.values().collect();
    ordered.sort_by_key(|g| g[0]);
    for members in ordered {
        let chained = members.windows(2).all(|w| lines[w[1]].parent.as_deref() == Some(lines[w[0]].uuid.as_str()));
        if !chained {
            continue;
        }
        let mut results: Vec<usize> = members
            .iter()
            .flat_map(|m| children.get(m).into_iter().flatten().copied())
            .filter(|&c| entries[c].role == Role::ToolResult)
            .collect();
        if results.is_empty() {
            continue;
        }
        results.sort_unstable();
        let last_member = *members.last().unwrap_or(&members[0]);
        let mut prev = last_member;
        for &r in &results {
            new_parent.push((r, prev));
            prev = r;
        }
        let last = prev;
        for &r in &results[..results.len() - 1] {
            for &c in children.get(&r).into_iter().flatten() {
                if entries[c].role != Role::ToolResult {
                    new_parent.push((c, last));
                }
            }
        }
    }
    for (child, parent) in new_parent {
        if lines[child].parent.as_deref() != Some(lines[parent].uuid.as_str()) {
            owned.push(lines[parent].uuid.clone());
            entries[child].parent_id = StrRef::owned(owned.len() - 1);
        }
    }
}
