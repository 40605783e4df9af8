//! Reading a pi session file into the common index, leniently, the way pi reads it
//! (docs/pi-format.md §1.2).
//!
//! pi splits the file on `\n`, skips lines that `trim()` to nothing and lines that
//! `JSON.parse` rejects, and accepts the file only if the first parsed line is a `session`
//! header with a string id. We do the same, but report every problem with its line number
//! instead of skipping silently. Versions 1 and 2 are migrated in memory as pi migrates
//! them when it opens a file (pi also rewrites the file; pisces never does).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::scan::{join, scan, scan_from, Event, Scan};
use super::Pi;
use crate::session::entry::{EntryIdx, EntryMeta, EntryType, LineNo, Owned, StrRef};
use crate::session::format::Unreadable;
use crate::session::index::{ChildOrder, Header, Label, Parts};
use crate::session::js::{self, parse_value};
use crate::session::kept::Kept;
use crate::session::{Diagnostic, LoadError, Problem, Session, Severity, Source};

/// At most this many malformed lines are listed one by one; the rest are counted.
const MAX_LISTED: usize = 20;

/// What differs between pi and an agent that writes pi's format with additions of its own
/// (oh-my-pi): the loader is the same, these are its parameters.
pub(crate) struct Flavor {
    /// The format's name in errors.
    pub format: &'static str,
    /// The number of lines before the header that the agent strips before it parses
    /// (oh-my-pi's title slot: 1), for this file.
    pub prelude: u32,
    /// Entry types the agent writes beyond pi's: not reported as unknown.
    pub known_type: fn(&str) -> bool,
    /// Message roles the agent writes beyond pi's: not reported as unknown.
    pub known_role: fn(&str) -> bool,
    /// What the agent does with a file that is not a session.
    pub not_a_session: &'static str,
    /// The agent's own tree, when its parents and leaf are not pi's: rewrites the
    /// entries' `parentId`s before the index is built and returns the leaf it chose
    /// (`Some(None)`: the null leaf; `None`: pi's, the last entry).
    pub relink: Option<Relink>,
}

/// See [`Flavor::relink`]: the file's bytes, its entries and the strings they refer to.
pub(crate) type Relink = fn(&[u8], &mut [EntryMeta], &mut Owned) -> Option<Option<usize>>;

/// pi itself.
const PI_FLAVOR: Flavor = Flavor {
    format: "pi",
    prelude: 0,
    known_type: |_| false,
    known_role: |_| false,
    not_a_session: NOT_A_SESSION,
    relink: None,
};

/// Reads and indexes a pi session, treating the lines in `exclude` as malformed.
pub fn load<'a>(source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
    let mut session = load_as(source, exclude, &PI_FLAVOR, |pi| Box::new(pi))?;
    session.title = name_of_session(&session);
    Ok(session)
}

/// [`load`] from a kept index (see [`load_kept`]).
pub fn load_pi_kept(source: &Source, kept: Kept) -> Option<Session<'_>> {
    let from = kept.entries.len();
    let mut session = load_kept(source, kept, &PI_FLAVOR, |pi| Box::new(pi))?;
    // The name is the latest `session_info`: a new one, or the one the index kept.
    if session.entries.iter().skip(from).any(|e| e.kind == EntryType::SessionInfo) {
        session.title = name_of_session(&session);
    }
    Some(session)
}

/// Reads and indexes a session in pi's format or a flavor of it; `dialect` makes the
/// session's dialect from what pi's reading found. Labels are resolved; the title is
/// the caller's to set.
pub(crate) fn load_as<'a>(
    source: &'a Source,
    exclude: &BTreeSet<LineNo>,
    flavor: &Flavor,
    dialect: impl FnOnce(Pi) -> Box<dyn crate::session::format::Dialect + 'a>,
) -> Result<Session<'a>, LoadError> {
    let data = source.bytes();
    let name = source.name.clone();
    if data.is_empty() {
        return Err(LoadError::Empty { name });
    }
    let not_a_session = |name: &str, line: LineNo, reason: String| LoadError::NotASession {
        name: name.to_string(),
        line: Some(line),
        format: flavor.format,
        reason,
        hint: Some(flavor.not_a_session),
    };
    let Scan { entries, owned, events, crlf, lines } = scan(data, exclude, flavor.prelude);

    // The first parsed line must be the header (pi: `entries[0].type === "session"`
    // with a string id); a first line pi keeps that is anything else is fatal.
    let mut header: Option<(Map<String, Value>, LineNo)> = None;
    let mut header_lines = Vec::new();
    let first_entry_line = entries.first().map_or(LineNo(u32::MAX), |e| e.line);
    let mut diags = Vec::new();
    let (mut blank, mut malformed) = (Vec::new(), 0usize);
    let mut first_malformed = None;
    let (mut unknown_types, mut unknown_roles) = (0usize, 0usize);
    for (line, event) in events {
        match event {
            Event::Header(span) => {
                header_lines.push(line);
                if header.is_some() {
                    diags.push(warn(
                        Problem::SecondHeader,
                        line,
                        "a second session header; ignored, as pi ignores it (pi 0.73 wrote these by mistake)".into(),
                    ));
                    continue;
                }
                if first_entry_line < line {
                    break;
                }
                let value = parse_value(&data[span])
                    .map_err(|e| not_a_session(&name, line, format!("the header is not valid JSON ({e})")))?;
                let Value::Object(map) = value else {
                    return Err(not_a_session(&name, line, "the session header is not a JSON object".into()));
                };
                if !map.get("id").is_some_and(Value::is_string) {
                    return Err(not_a_session(&name, line, "the session header has no string `id`".into()));
                }
                header = Some((map, line));
            }
            Event::Blank => blank.push(line),
            Event::Malformed(why) => {
                first_malformed.get_or_insert(line);
                malformed += 1;
                if malformed <= MAX_LISTED {
                    let truncated = line == lines && data.last() != Some(&b'\n');
                    let what = if truncated {
                        "truncated last line (no final newline, not complete JSON)".to_string()
                    } else {
                        format!("malformed JSON ({why})")
                    };
                    diags.push(warn(
                        if truncated { Problem::Truncated } else { Problem::Malformed },
                        line,
                        format!("{what}; skipped, as pi skips it"),
                    ));
                }
            }
            Event::Falsy(text) => diags.push(warn(
                Problem::NotAnEntry,
                line,
                format!("`{text}` is not an entry; skipped, as pi skips it"),
            )),
            Event::NotObject(text) => {
                if header.is_none() && line <= first_entry_line {
                    return Err(not_a_session(
                        &name,
                        line,
                        format!("the first line is `{text}`, not a session header"),
                    ));
                }
                diags.push(warn(
                    Problem::NotObject,
                    line,
                    format!("`{text}` is JSON but not an object; kept as an entry without type or id, as pi keeps it"),
                ));
            }
            Event::Prelude => {}
            Event::UnknownType(ty) if (flavor.known_type)(&ty) => {}
            Event::UnknownType(ty) => {
                unknown_types += 1;
                if unknown_types <= MAX_LISTED {
                    diags.push(note(
                        Problem::UnknownType,
                        line,
                        format!("unknown entry type `{ty}`; kept in the tree, contributes no context (as in pi)"),
                    ));
                }
            }
            Event::MessageWithoutMessage => diags.push(warn(
                Problem::MessageWithoutMessage,
                line,
                "message entry without a `message`; it gives no context (pi crashes on it when it is on the path)"
                    .into(),
            )),
            Event::Unreadable(why) => diags.push(warn(
                Problem::Unreadable,
                line,
                format!("{why}; kept in the tree as pi keeps it, but pisces cannot show or project its content"),
            )),
            Event::InvalidUtf8 => diags.push(warn(
                Problem::InvalidUtf8,
                line,
                "bytes that are not UTF-8; read with U+FFFD in their place, as pi (Node) reads them".into(),
            )),
            Event::UnknownRole(Some(role)) if (flavor.known_role)(&role) => {}
            Event::UnknownRole(_) => {
                unknown_roles += 1;
                if unknown_roles <= MAX_LISTED {
                    diags.push(note(
                        Problem::UnknownRole,
                        line,
                        "message with an unknown role; kept in the projection, left out of the LLM messages (as in pi)"
                            .into(),
                    ));
                }
            }
        }
    }
    let Some((header, header_line)) = header else {
        if let Some(first) = entries.first() {
            let what = if first.kind == EntryType::Missing {
                "no `type`".to_string()
            } else {
                let ty = parse_value(&data[first.span()]).ok().and_then(|v| v.get("type").map(ToString::to_string));
                format!("type {}", ty.unwrap_or_else(|| "?".into()))
            };
            // Say why an earlier line did not count, when one did not.
            let before = match first_malformed.filter(|&l| l < first.line) {
                Some(LineNo(1)) if data.starts_with(b"\xEF\xBB\xBF") => {
                    " (line 1 starts with a UTF-8 byte order mark, which JSON.parse rejects, so pi skips that line)"
                        .to_string()
                }
                Some(l) => format!(" (line {l} before it is not valid JSON, so pi skips it)"),
                None => String::new(),
            };
            return Err(not_a_session(
                &name,
                first.line,
                format!(
                    "the first entry has {what}, but a {} session starts with a `session` header{before}",
                    flavor.format
                ),
            ));
        }
        let reason = if malformed + blank.len() == 0 {
            "no lines".to_string()
        } else if malformed == 0 {
            "it holds only blank lines".to_string()
        } else {
            "no line is a valid session header".to_string()
        };
        return Err(LoadError::NotASession {
            name,
            line: None,
            format: flavor.format,
            reason,
            hint: Some(flavor.not_a_session),
        });
    };
    if malformed > MAX_LISTED {
        diags.push(Diagnostic {
            kind: Problem::Malformed,
            severity: Severity::Warning,
            line: None,
            message: format!("{} more malformed lines skipped", malformed - MAX_LISTED),
        });
    }
    if let Some(&first) = blank.first() {
        diags.push(warn(
            Problem::BlankLines,
            first,
            format!("{} blank line{}; skipped, as pi skips them", blank.len(), plural(blank.len())),
        ));
    }
    if let Some(&first) = crlf.first() {
        diags.push(warn(
            Problem::Crlf,
            first,
            format!(
                "{} line{} end{} in CRLF; read like pi reads them (the \\r is JSON whitespace)",
                crlf.len(),
                plural(crlf.len()),
                if crlf.len() == 1 { "s" } else { "" }
            ),
        ));
    }
    if data.last() != Some(&b'\n') && entries.last().is_some_and(|e| e.span().end == data.len()) {
        diags.push(warn(
            Problem::NoFinalNewline,
            lines,
            "no final newline; pi 1.6 would append one to the file when opening it, pisces leaves the file as it is"
                .into(),
        ));
    }
    // Positions of `session` lines in pi's parsed-entry list (headers and entries).
    let header_ordinals =
        header_lines.iter().enumerate().map(|(k, &l)| (entries.partition_point(|e| e.line < l) + k) as u32).collect();
    let (mut entries, mut owned) = (entries, owned);

    let version = version_number(header.get("version"));
    // pi: `version >= 3` needs nothing; else `< 2` runs v1->v2 and `< 3` runs v2->v3
    // (a NaN version runs neither).
    let migrate_v1 = version < 2.0;
    let migrate_v2 = version < 3.0;
    if migrate_v1 {
        // Deterministic ids: `L<line>`, the entry's physical line, the same names pi's
        // oracle uses for these files (pi itself draws random ids on every load).
        let mut prev = StrRef::NONE;
        for e in entries.iter_mut() {
            if e.kind == EntryType::NotObject {
                // pi's migration crashes assigning an id to a number or a string;
                // pisces leaves such a line out of the chain.
                diags.push(warn(Problem::V1NotObject, e.line, "pi cannot migrate this version-1 file past this line (it crashes giving an id to a value that is not an object); pisces leaves the line out of the chain".into()));
                continue;
            }
            e.parent_id = prev;
            e.id = owned.push(&format!("L{}", e.line));
            prev = e.id;
        }
    }

    let mut parts_header = Header {
        id: header.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
        cwd: header.get("cwd").cloned(),
        version: header.get("version").cloned(),
        parent_session: header.get("parentSession").cloned(),
        line: Some(header_line),
        raw: Map::new(),
    };
    parts_header.raw = header;
    let leaf = flavor.relink.and_then(|relink| relink(data, &mut entries, &mut owned));
    let pi = Pi { version, migrate_v1, migrate_v2, header_ordinals };
    let parts = Parts {
        file: name,
        path: source.path.clone(),
        data,
        header: parts_header,
        entries,
        owned,
        diagnostics: diags,
        dialect: dialect(pi),
        synthetic_ids: migrate_v1,
    };
    let mut session = Session::build(parts, ChildOrder::Time(line_time));
    if let Some(leaf) = leaf {
        session.set_default_leaf(leaf.map(EntryIdx::new));
    }
    resolve_labels(&mut session, 0);
    Ok(session)
}

/// [`load_as`] from a kept index ([`crate::session::kept`]): the lines after it are
/// scanned and linked, the rest is as the whole read found it. `None` when pi's reading
/// would remark on any new line (a blank, malformed or CRLF line, a header, an unknown
/// type, …: the remarks of a whole read would differ), or linking them needs the whole
/// file; the caller then reads it whole.
pub(crate) fn load_kept<'a>(
    source: &'a Source,
    kept: Kept,
    flavor: &Flavor,
    dialect: impl FnOnce(Pi) -> Box<dyn crate::session::format::Dialect + 'a>,
) -> Option<Session<'a>> {
    let data = source.bytes();
    if flavor.relink.is_some() || data.last() != Some(&b'\n') {
        return None;
    }
    let version = version_number(kept.header.raw.get("version"));
    let header_ordinals = decode_ordinals(&kept.extra)?;
    if version < 2.0 {
        return None;
    }
    let new = scan_from(data, kept.covered, &BTreeSet::new(), 0);
    if !new.events.is_empty() || !new.crlf.is_empty() {
        return None;
    }
    let linked = kept.entries.len();
    let mut all =
        Scan { entries: kept.entries, owned: kept.owned, events: Vec::new(), crlf: Vec::new(), lines: kept.lines };
    join(&mut all, new);
    let pi = Pi { version, migrate_v1: false, migrate_v2: version < 3.0, header_ordinals };
    let parts = Parts {
        file: source.name.clone(),
        path: source.path.clone(),
        data,
        header: kept.header,
        entries: all.entries,
        owned: all.owned,
        diagnostics: Vec::new(),
        dialect: dialect(pi),
        synthetic_ids: false,
    };
    let mut session = Session::build_kept(parts, ChildOrder::Time(line_time), linked, &kept.fingerprints)?;
    for (target, label) in kept.labels {
        session.set_label(target, Some(label));
    }
    resolve_labels(&mut session, linked);
    session.title = kept.title;
    Some(session)
}

/// What pi keeps beside the common index ([`Pi::keep`]): the `session` lines' places in
/// its parsed-entry list.
pub(super) fn encode_ordinals(pi: &Pi) -> Vec<u8> {
    pi.header_ordinals.iter().flat_map(|o| o.to_le_bytes()).collect()
}

fn decode_ordinals(b: &[u8]) -> Option<Vec<u32>> {
    b.len().is_multiple_of(4).then(|| b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// pi's labels: the latest `label` entry for a target wins; one without a truthy label
/// clears it. A label entry pisces cannot read is reported when loading and skipped here.
/// Entries before `from` were resolved before (a kept index's).
fn resolve_labels(session: &mut Session, from: usize) {
    for i in session.entries.indices().skip(from) {
        if session.entries[i].kind != EntryType::Label {
            continue;
        }
        let Ok(v) = session.parse(i) else { continue };
        let Some(target) = v.get("targetId").and_then(Value::as_str) else { continue };
        let label = js::truthy(v.get("label")).then(|| Label {
            text: js::to_js_string(v.get("label")),
            timestamp: v.get("timestamp").cloned().unwrap_or(Value::Null),
            entry: i,
        });
        session.set_label(target.to_string(), label);
    }
}

/// The session name: the latest `session_info` (trimmed; empty clears), as pi's
/// getSessionName reads it.
fn name_of_session(s: &Session) -> Option<String> {
    let i = s.entries.rposition(|e| e.kind == EntryType::SessionInfo)?;
    let v = s.parse(i).ok()?;
    let name = v.get("name").and_then(Value::as_str)?.trim().to_string();
    (!name.is_empty()).then_some(name)
}

/// An entry's `new Date(timestamp).getTime()` (`None` for NaN), read from its line.
pub(super) fn line_time(line: &[u8]) -> Option<f64> {
    super::scan::object_fields(line).and_then(|fields| fields.time())
}

/// Entry `i` parsed whole, with pi's in-memory migrations applied (docs/pi-format.md
/// §1.6).
pub(super) fn parse(pi: &Pi, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
    let e = &s.entries[i];
    if e.unreadable() {
        let why = s
            .diagnostics
            .iter()
            .find(|d| d.kind == Problem::Unreadable && d.line == Some(e.line))
            .map_or_else(|| "its JSON is more than pisces can read".to_string(), |d| d.message.clone());
        return Err(Unreadable::at(s, i, why));
    }
    let mut v =
        parse_value(s.raw_line(i)).map_err(|err| Unreadable { skip: true, ..Unreadable::at(s, i, err.to_string()) })?;
    if let Value::Object(map) = &mut v {
        if pi.migrate_v1 {
            map.insert("id".into(), s.id_value(i));
            map.insert("parentId".into(), s.parent_id(i).map_or(Value::Null, |p| p.to_value()));
            if e.kind == EntryType::Compaction {
                migrate_first_kept_index(pi, s, i, map);
            }
        }
        if pi.migrate_v2 {
            if let Some(Value::Object(msg)) = map.get_mut("message") {
                if msg.get("role").and_then(Value::as_str) == Some("hookMessage") {
                    msg.insert("role".into(), Value::String("custom".into()));
                }
            }
        }
    }
    Ok(v)
}

/// v1 compactions name their first kept entry by index into pi's parsed-entry list
/// (index 0 is the header). Resolved as pi's migration does, in file order: a later
/// entry has no new id yet, so its old `id` (usually none) is used.
fn migrate_first_kept_index(pi: &Pi, s: &Session, i: EntryIdx, map: &mut Map<String, Value>) {
    let Some(index) = map.get("firstKeptEntryIndex").and_then(Value::as_f64) else { return };
    map.shift_remove("firstKeptEntryIndex");
    if index < 0.0 || index.fract() != 0.0 {
        return;
    }
    let k = index as u32;
    if pi.header_ordinals.binary_search(&k).is_ok() {
        return;
    }
    let headers_before = pi.header_ordinals.partition_point(|&h| h < k) as u32;
    let target = (k - headers_before) as usize;
    if target >= s.entries.len() {
        return;
    }
    let target = EntryIdx::new(target);
    let mut own_ordinal = i.get() as u32;
    for &h in &pi.header_ordinals {
        if h <= own_ordinal {
            own_ordinal += 1;
        }
    }
    // Entries up to and including this compaction already have their new ids.
    let id = if k <= own_ordinal {
        s.id(target).map(|id| id.to_value())
    } else {
        parse_value(s.raw_line(target)).ok().and_then(|v| v.get("id").filter(|i| !i.is_null()).cloned())
    };
    if let Some(id) = id {
        map.insert("firstKeptEntryId".into(), id);
    }
}

fn version_number(v: Option<&Value>) -> f64 {
    match v {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(_) => f64::NAN,
    }
}

fn warn(kind: Problem, line: LineNo, message: String) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Warning, line: Some(line), message }
}

fn note(kind: Problem, line: LineNo, message: String) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Note, line: Some(line), message }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// What pi does with a file that is not a session.
const NOT_A_SESSION: &str =
    "pi 1.6 refuses to open it too; pi 0.73 would have overwritten it. pisces left it unchanged.";
