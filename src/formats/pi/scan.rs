//! Bytes -> lines -> index entries, the way pi reads a file (docs/pi-format.md
//! §1.2): every line is validated whole once (`session::validate`: a line `JSON.parse`
//! rejects is skipped, as pi skips it), and the index's fields are then read from its
//! first keys.
//!
//! Speed: a line is not parsed into values. The fields are read from the object's keys
//! until it has `type`, `id`, `parentId`, `timestamp` (and for messages `message.role`,
//! the first key pi writes in a message), then reading stops; since pi writes those keys
//! first, that is a few dozen bytes of a line that may hold megabytes of base64.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::session::entry::{EntryMeta, EntryType, LineNo, Owned, Role, StrRef};
use crate::session::js::{self, parse_value};
use crate::session::validate::{validate, Verdict, MAX_DEPTH};
use crate::session::walk;

/// A line that is not an entry, or an entry worth a remark, found while scanning.
pub(crate) enum Event {
    Blank,
    Malformed(String),
    /// `null`, `false`, `0`, `""`: JSON, skipped by pi.
    Falsy(String),
    /// A truthy non-object: kept by pi as an entry without type or id.
    NotObject(String),
    /// A `session` line; the first one is the header.
    Header(Range<usize>),
    UnknownType(String),
    /// A message whose role pi does not know (the role, when it is a string).
    UnknownRole(Option<String>),
    /// A `message` entry without a `message` object.
    MessageWithoutMessage,
    /// Valid JSON that pi keeps but pisces cannot read whole (too deep, a number beyond
    /// f64): the entry stays in the tree, its content cannot be shown.
    Unreadable(String),
    /// Bytes that are not UTF-8 (read as U+FFFD, as Node decodes them).
    InvalidUtf8,
    /// A line before the header that the agent strips before it parses the rest (oh-my-pi's
    /// title slot).
    Prelude,
}

/// Every line of a file, scanned.
pub(crate) struct Scan {
    /// Entry lines (not `session` lines), in file order.
    pub entries: Vec<EntryMeta>,
    /// Strings the entries refer to that are not in their lines (escaped ids).
    pub owned: Owned,
    /// Other lines and remarks, in file order: (line, what).
    pub events: Vec<(LineNo, Event)>,
    /// Lines ending in `\r\n`.
    pub crlf: Vec<LineNo>,
    /// The last physical line (a last line without `\n` counts).
    pub lines: LineNo,
}

/// Files smaller than this are scanned on one thread.
const PARALLEL_MIN: usize = 4 << 20;

/// Pieces a large file is cut into. Threads take the next piece when done with one, so a
/// piece that is slower to scan (denser lines, more non-ASCII text) does not leave the other
/// threads waiting, as two fixed halves did.
const PIECES: usize = 16;

/// Scans every line of `data`, in pieces on several threads for large files (each piece
/// starts at a line boundary; line numbers are fixed up when the pieces are joined). The
/// first `prelude` lines are not read ([`Event::Prelude`]).
pub(crate) fn scan(data: &[u8], bad_lines: &BTreeSet<LineNo>, prelude: u32) -> Scan {
    scan_from(data, 0, bad_lines, prelude)
}

/// [`scan`] of the lines from byte `start` on (a line boundary), numbered from 1 there:
/// the lines appended after a kept index's (`session::kept`).
pub(crate) fn scan_from(data: &[u8], start: usize, bad_lines: &BTreeSet<LineNo>, prelude: u32) -> Scan {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(PIECES);
    let size = data.len() - start;
    if size < PARALLEL_MIN || !bad_lines.is_empty() || threads < 2 {
        return scan_range(data, start..data.len(), bad_lines, prelude);
    }
    let mut bounds = vec![start];
    for k in 1..PIECES {
        let from = (start + k * size / PIECES).max(*bounds.last().unwrap_or(&0));
        match memchr::memchr(b'\n', &data[from..]) {
            Some(i) if from + i + 1 < data.len() => bounds.push(from + i + 1),
            _ => break,
        }
    }
    bounds.dedup();
    bounds.push(data.len());
    let pieces: Vec<Range<usize>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(range) = pieces.get(k) else { return done };
            done.push((k, scan_range(data, range.clone(), bad_lines, if k == 0 { prelude } else { 0 })));
        }
    };
    let mut done = std::thread::scope(|t| {
        let helpers: Vec<_> = (1..threads).map(|_| t.spawn(work)).collect();
        let mut done = work();
        for h in helpers {
            done.extend(h.join().expect("scanner thread panicked"));
        }
        done
    });
    done.sort_unstable_by_key(|(k, _)| *k);
    let mut scans = done.into_iter().map(|(_, s)| s);
    let mut first = scans.next().expect("at least one piece");
    for next in scans {
        join(&mut first, next);
    }
    // Grown piece by piece, the entries (most of the index's memory) would keep up to
    // twice what they hold for as long as the session is open. (Reserving the total first
    // would instead hold every piece and the whole at once.)
    first.entries.shrink_to_fit();
    first
}

/// Appends the scan of the piece after `first`'s to it.
pub(crate) fn join(first: &mut Scan, second: Scan) {
    let offset = first.lines.get();
    let shift = |l: LineNo| LineNo(l.get() + offset);
    let first_len = first.entries.len();
    first.entries.extend(second.entries.into_iter().map(|mut e| {
        e.line = shift(e.line);
        e
    }));
    first.events.extend(second.events.into_iter().map(|(l, e)| (shift(l), e)));
    first.crlf.extend(second.crlf.into_iter().map(shift));
    let owned_offset = first.owned.append(second.owned);
    if owned_offset > 0 {
        for e in &mut first.entries[first_len..] {
            e.id = e.id.rebase_owned(owned_offset);
            e.parent_id = e.parent_id.rebase_owned(owned_offset);
        }
    }
    first.lines = shift(second.lines);
}

fn scan_range(data: &[u8], range: Range<usize>, bad_lines: &BTreeSet<LineNo>, prelude: u32) -> Scan {
    let chunk = &data[range.clone()];
    let mut out = Scan {
        entries: Vec::with_capacity(estimate_lines(chunk)),
        owned: Owned::default(),
        events: Vec::new(),
        crlf: Vec::new(),
        lines: LineNo(0),
    };
    let ends_with_newline = chunk.last() == Some(&b'\n');
    let ends =
        memchr::memchr_iter(b'\n', chunk).chain((!ends_with_newline && !chunk.is_empty()).then_some(chunk.len()));
    let mut start = 0;
    let mut line = LineNo(0);
    for end in ends {
        line = LineNo(line.get() + 1);
        let span = range.start + start..range.start + end;
        start = end + 1;
        if line.get() <= prelude {
            out.events.push((line, Event::Prelude));
            continue;
        }
        let bytes = &data[span.clone()];
        if bytes.last() == Some(&b'\r') {
            out.crlf.push(line);
        }
        let scanned = if bad_lines.contains(&line) {
            LineScan::Malformed("it parsed in the index's validation but not whole; skipped".into())
        } else {
            scan_line(bytes)
        };
        let (fields, flags) = match scanned {
            LineScan::Blank => {
                out.events.push((line, Event::Blank));
                continue;
            }
            LineScan::Malformed(why) => {
                out.events.push((line, Event::Malformed(why)));
                continue;
            }
            LineScan::NotObject { truthy: false, text, .. } => {
                out.events.push((line, Event::Falsy(text)));
                continue;
            }
            LineScan::NotObject { truthy: true, text, flags } => {
                out.events.push((line, Event::NotObject(text)));
                (Fields { ty: None, id: None, parent_id: None, timestamp: None, role: None, has_message: false }, flags)
            }
            LineScan::Object(f, flags) => (f, flags),
        };
        if flags.invalid_utf8 {
            out.events.push((line, Event::InvalidUtf8));
        }
        if let Some(why) = flags.unreadable.clone() {
            out.events.push((line, Event::Unreadable(why)));
        }
        let not_object =
            fields.ty.is_none() && matches!(out.events.last(), Some((l, Event::NotObject(_))) if *l == line);
        let no_message = fields.ty.as_deref() == Some("message") && !fields.has_message;
        // (Kept for the report of an unknown role; a borrowed role costs nothing to keep.)
        let role_name = fields.role.clone();
        let (mut entry, ty) = fields.into_entry(line, span.clone(), bytes, &mut out.owned);
        entry.set_unreadable(flags.unreadable.is_some());
        if not_object {
            entry.kind = EntryType::NotObject;
        }
        if no_message {
            out.events.push((line, Event::MessageWithoutMessage));
        }
        if ty.as_deref() == Some("session") {
            out.events.push((line, Event::Header(span)));
            continue;
        }
        if entry.kind == EntryType::Other {
            out.events.push((line, Event::UnknownType(ty.unwrap_or_default().into_owned())));
        }
        if entry.role == Role::Other && !no_message {
            out.events.push((line, Event::UnknownRole(role_name.map(Cow::into_owned))));
        }
        out.entries.push(entry);
    }
    out.lines = line;
    out
}

/// What the scan of one line found.
pub(crate) enum LineScan<'a> {
    /// Whitespace only: pi skips it.
    Blank,
    /// Not JSON (or not complete JSON): pi skips it.
    Malformed(String),
    /// A JSON value that is not an object. pi keeps truthy ones as entries without type
    /// or id, and skips `null`, `false`, `0` and `""`.
    NotObject { truthy: bool, text: String, flags: Flags },
    /// An object: what the index needs of it.
    Object(Fields<'a>, Flags),
}

/// What the validation of a kept line found besides its fields.
#[derive(Clone, Debug, Default)]
pub(crate) struct Flags {
    /// Valid JSON that pisces cannot read whole, and why.
    pub unreadable: Option<String>,
    /// Some bytes are not UTF-8.
    pub invalid_utf8: bool,
}

/// The index's view of an entry line, decoded and borrowed from the file where possible.
pub(crate) struct Fields<'a> {
    pub ty: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    /// `None` for null, missing, or falsy (pi follows `parentId` only when truthy).
    pub parent_id: Option<Cow<'a, str>>,
    /// The `timestamp`, not yet parsed: only siblings need ordering, so only their times
    /// are read (see `Fields::time`).
    pub timestamp: Option<Timestamp<'a>>,
    pub role: Option<Cow<'a, str>>,
    /// The entry has a `message` key (pi crashes on a message entry without one).
    pub has_message: bool,
}

/// An entry's `timestamp` as found in its line.
#[derive(Clone, Copy)]
pub(crate) enum Timestamp<'a> {
    /// A string without escapes (pi's own form).
    Plain(&'a str),
    /// Any other JSON value.
    Raw(&'a RawValue),
}

impl Fields<'_> {
    /// `new Date(timestamp).getTime()`; `None` is NaN.
    pub(crate) fn time(&self) -> Option<f64> {
        match self.timestamp? {
            Timestamp::Plain(s) => js::parse_date(s),
            Timestamp::Raw(raw) => match raw_str(raw) {
                Some(s) => js::parse_date(&s),
                None => serde_json::from_str::<Value>(raw.get()).ok().and_then(|v| js::date_ms(Some(&v))),
            },
        }
    }
}

/// The first keys of an entry line, as the serde path reads them.
#[derive(Default)]
struct Prefix<'a> {
    pub ty: Option<&'a RawValue>,
    pub id: Option<&'a RawValue>,
    pub parent_id: Option<&'a RawValue>,
    pub timestamp: Option<&'a RawValue>,
    pub role: Option<&'a RawValue>,
    is_message: bool,
    message_seen: bool,
    /// We stopped reading before the end of the object (see module docs).
    stopped: bool,
}

impl<'a> Prefix<'a> {
    fn complete(&self) -> bool {
        self.ty.is_some()
            && self.id.is_some()
            && self.parent_id.is_some()
            && self.timestamp.is_some()
            && (!self.is_message || self.message_seen)
    }
}

const STOP: &str = "\u{0}pisces-stop";

/// Scans one physical line (without its `\n`): validates it whole (see `validate`), then
/// reads the index's fields from its first keys.
pub(crate) fn scan_line(line: &[u8]) -> LineScan<'_> {
    let Some(first) = first_non_blank(line) else { return LineScan::Blank };
    let mut flags = Flags::default();
    match validate(line) {
        Verdict::Whole { non_ascii } => flags.invalid_utf8 = non_ascii && simdutf8::basic::from_utf8(line).is_err(),
        Verdict::Malformed => {
            // The parser's own words say what is wrong (and it has the last word: a line
            // it reads is kept, though the validator and the parser never disagree in the
            // tests).
            match parse_value(line) {
                Err(e) => return LineScan::Malformed(e.to_string()),
                Ok(_) => flags.invalid_utf8 = simdutf8::basic::from_utf8(line).is_err(),
            }
        }
        Verdict::TooDeep { depth } => {
            flags.unreadable = Some(format!(
                "valid JSON nested {depth} levels deep, deeper than pisces reads ({MAX_DEPTH}); pi reads it (and fails when it serializes it)"
            ))
        }
        Verdict::NumberOutOfRange => {
            flags.unreadable = Some(
                "valid JSON with a number too large for a 64-bit float, which pisces cannot hold (pi reads it as Infinity)"
                    .into(),
            )
        }
    }
    if line[first] != b'{' {
        // Rare: parse it whole to see what JSON.parse would make of it.
        return match parse_value(line) {
            Ok(v) => LineScan::NotObject { truthy: js::truthy(Some(&v)), text: preview(&v), flags },
            Err(_) if flags.unreadable.is_some() => {
                LineScan::NotObject { truthy: true, text: preview_bytes(line), flags }
            }
            Err(e) => LineScan::Malformed(e.to_string()),
        };
    }
    match object_fields(line) {
        Some(fields) => LineScan::Object(fields, flags),
        None if flags.unreadable.is_some() => LineScan::Malformed(flags.unreadable.unwrap_or_default()),
        None => LineScan::Malformed("the line ends before its JSON object does".into()),
    }
}

/// The index's fields of a line that is known to be a whole JSON object (`None` if its
/// first keys cannot be read, which only a line too deep for the parser can cause).
pub(crate) fn object_fields(line: &[u8]) -> Option<Fields<'_>> {
    let first = first_non_blank(line)?;
    if let Some(fields) = fast_fields(&line[first..]) {
        return Some(fields);
    }
    let mut prefix = Prefix::default();
    let mut de = serde_json::Deserializer::from_slice(line);
    match (&mut de).deserialize_map(EntryVisitor { p: &mut prefix }) {
        Ok(()) => Some(prefix.into_fields()),
        // We stopped reading once the first keys were read.
        Err(_) if prefix.stopped => Some(prefix.into_fields()),
        Err(_) => None,
    }
}

/// The start of a line that cannot be parsed, for messages.
fn preview_bytes(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(40)]);
    if line.len() > 40 {
        format!("{text}…")
    } else {
        text.into_owned()
    }
}

/// Whether a line known to be a whole JSON object is in pi's own layout
/// (`{"type":"T","id":"I","parentId":`…), so has its `parentId` key. `false` says only that
/// the layout is another: the caller reads the line to know.
pub(crate) fn has_parent_key(line: &[u8]) -> bool {
    let Some(first) = first_non_blank(line) else { return false };
    let mut r = Cursor { b: &line[first..], i: 0 };
    (|| {
        r.lit(b"{\"type\":\"")?;
        r.skip_plain()?;
        r.lit(b",\"id\":\"")?;
        r.skip_plain()?;
        r.lit(b",\"parentId\":")
    })()
    .is_some()
}

/// A tool result's `toolCallId` and `toolName`, when its line is in pi's own layout
/// (`{"type":"message","id":…,"parentId":…,"timestamp":…,"message":{"role":"toolResult",
/// "toolCallId":"C","toolName":"N"`, no escapes): all its tree row reads of it.
pub(crate) fn tool_result_head(line: &[u8]) -> Option<(&str, &str)> {
    let first = first_non_blank(line)?;
    let mut r = Cursor { b: &line[first..], i: 0 };
    r.lit(b"{\"type\":\"message\",\"id\":\"")?;
    r.skip_plain()?;
    r.lit(b",\"parentId\":")?;
    if r.lit(b"null").is_none() {
        r.lit(b"\"")?;
        r.skip_plain()?;
    }
    r.lit(b",\"timestamp\":\"")?;
    r.skip_plain()?;
    r.lit(b",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"")?;
    let id = r.plain_str()?;
    r.lit(b",\"toolName\":\"")?;
    Some((id, r.plain_str()?))
}

/// The fast path for pi's own layout, which covers nearly every line pi writes:
/// `{"type":"T","id":"I","parentId":"P"|null,"timestamp":"S"` and, for messages,
/// `,"message":{"role":"R"`, with no escapes in those strings. Anything else (other key
/// orders, escapes, custom entries whose payload comes first) takes the serde path.
fn fast_fields(b: &[u8]) -> Option<Fields<'_>> {
    let mut r = Cursor { b, i: 0 };
    r.lit(b"{\"type\":\"")?;
    let ty = r.plain_str()?;
    r.lit(b",\"id\":\"")?;
    let id = r.plain_str()?;
    r.lit(b",\"parentId\":")?;
    let parent_id = if r.lit(b"null").is_some() {
        None
    } else {
        r.lit(b"\"")?;
        Some(r.plain_str()?).filter(|p| !p.is_empty())
    };
    r.lit(b",\"timestamp\":\"")?;
    let timestamp = Some(Timestamp::Plain(r.plain_str()?));
    let role = if ty == "message" {
        r.lit(b",\"message\":{\"role\":\"")?;
        Some(Cow::Borrowed(r.plain_str()?))
    } else {
        None
    };
    Some(Fields {
        ty: Some(Cow::Borrowed(ty)),
        id: Some(Cow::Borrowed(id)),
        parent_id: parent_id.map(Cow::Borrowed),
        timestamp,
        has_message: role.is_some(),
        role,
    })
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn lit(&mut self, lit: &[u8]) -> Option<()> {
        if self.b[self.i..].starts_with(lit) {
            self.i += lit.len();
            Some(())
        } else {
            None
        }
    }

    /// Past a string body up to its closing quote, if it has no escapes (its bytes are not
    /// looked at: the line is known to be JSON).
    fn skip_plain(&mut self) -> Option<()> {
        self.i = walk::plain_body_end(self.b, self.i)? + 1;
        Some(())
    }

    /// A string body up to its closing quote, if it has no escapes or control bytes.
    fn plain_str(&mut self) -> Option<&'a str> {
        let (s, end) = walk::plain_text(self.b, self.i)?;
        self.i = end + 1;
        Some(s)
    }
}

/// Index of the first byte that is not JS `trim()` whitespace, if any.
fn first_non_blank(line: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            i += 1;
        } else if b < 0x80 {
            return Some(i);
        } else {
            // Non-ASCII: JS trim() also removes NBSP, BOM, Unicode spaces.
            let rest = String::from_utf8_lossy(&line[i..line.len().min(i + 4)]);
            match rest.chars().next() {
                Some(c) if js::is_js_whitespace(c) => i += c.len_utf8(),
                _ => return Some(i),
            }
        }
    }
    None
}

struct EntryVisitor<'p, 'a> {
    p: &'p mut Prefix<'a>,
}

impl<'de, 'p> Visitor<'de> for EntryVisitor<'p, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::Type => {
                    let raw: &RawValue = map.next_value()?;
                    self.p.is_message = raw.get() == "\"message\"";
                    self.p.ty = Some(raw);
                }
                Key::Id => self.p.id = Some(map.next_value()?),
                Key::ParentId => self.p.parent_id = Some(map.next_value()?),
                Key::Timestamp => self.p.timestamp = Some(map.next_value()?),
                Key::Message => {
                    self.p.message_seen = true;
                    map.next_value_seed(RoleSeed { p: self.p })?;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if self.p.complete() {
                self.p.stopped = true;
                return Err(de::Error::custom(STOP));
            }
        }
        Ok(())
    }
}

enum Key {
    Type,
    Id,
    ParentId,
    Timestamp,
    Message,
    Other,
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match v {
            "type" => Key::Type,
            "id" => Key::Id,
            "parentId" => Key::ParentId,
            "timestamp" => Key::Timestamp,
            "message" => Key::Message,
            _ => Key::Other,
        })
    }
}

/// Reads `message.role` (pi writes `role` first) and stops; any other shape of
/// `message` is skipped.
struct RoleSeed<'p, 'a> {
    p: &'p mut Prefix<'a>,
}

impl<'de, 'p> DeserializeSeed<'de> for RoleSeed<'p, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 'p> Visitor<'de> for RoleSeed<'p, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "role" {
                self.p.role = Some(map.next_value()?);
                if self.p.complete() {
                    self.p.stopped = true;
                    return Err(de::Error::custom(STOP));
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
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
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A JSON string's value, borrowed when it has no escapes.
pub(crate) fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    if !text.contains('\\') {
        return Some(Cow::Borrowed(&text[1..text.len() - 1]));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// An id as pi's `Map` would key it: a string, or for other JSON (numbers, objects) its
/// text behind a NUL so that it never equals a string id. `null` is "no id".
pub(crate) fn raw_id(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let raw = raw?;
    match raw.get() {
        "null" => None,
        t if t.starts_with('"') => raw_str(raw),
        t => Some(Cow::Owned(format!("\u{0}{t}"))),
    }
}

impl<'a> Prefix<'a> {
    fn into_fields(self) -> Fields<'a> {
        // pi follows `parentId` only when it is truthy.
        let parent_id = match self.parent_id {
            Some(raw) if matches!(raw.get(), "\"\"" | "false" | "0") => None,
            other => raw_id(other),
        };
        Fields {
            ty: self.ty.and_then(raw_str),
            id: raw_id(self.id),
            parent_id,
            timestamp: self.timestamp.map(Timestamp::Raw),
            role: self.role.and_then(raw_str),
            has_message: self.message_seen,
        }
    }
}

impl<'a> Fields<'a> {
    /// Turns the fields into an index entry (links are resolved later).
    pub(crate) fn into_entry(
        self,
        line: LineNo,
        span: Range<usize>,
        bytes: &'a [u8],
        owned: &mut Owned,
    ) -> (EntryMeta, Option<Cow<'a, str>>) {
        let kind = match &self.ty {
            Some(t) => EntryType::from_name(t),
            None => EntryType::Missing,
        };
        let role = match (kind, &self.role) {
            (EntryType::Message, Some(r)) => Role::from_name(r),
            (EntryType::Message, None) => Role::Other,
            _ => Role::None,
        };
        // A borrowed string points into the line: keep it inline or its offset. Owned
        // ones (escapes decoded, non-string ids) go to the table.
        let mut locate = |s: Option<Cow<'a, str>>| match s {
            None => StrRef::NONE,
            Some(Cow::Borrowed(b)) => StrRef::in_line(b, b.as_ptr() as usize - bytes.as_ptr() as usize),
            Some(Cow::Owned(o)) => owned.push(&o),
        };
        let mut entry = EntryMeta::new(span.start, span.len(), line, kind, role);
        entry.id = locate(self.id);
        entry.parent_id = locate(self.parent_id);
        (entry, self.ty)
    }
}

/// Roughly how many lines `chunk` has, from the first MiB, so the entry list is
/// allocated once at about the right size (a guess too high wastes memory at 1 GB).
fn estimate_lines(chunk: &[u8]) -> usize {
    let sample = &chunk[..chunk.len().min(1 << 20)];
    let lines = memchr::memchr_iter(b'\n', sample).count() + 1;
    (chunk.len() as f64 / sample.len().max(1) as f64 * lines as f64 * 1.1) as usize + 16
}

/// A short rendering of a JSON value for messages.
fn preview(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(line: &str) -> Fields<'_> {
        match scan_line(line.as_bytes()) {
            LineScan::Object(p, _) => p,
            _ => panic!("not an object: {line}"),
        }
    }

    #[test]
    fn reads_the_first_keys_and_stops() {
        // Both paths: pi's layout (fast) and an escaped id (serde). The fields come from
        // the first keys alone (the damaged tail is not read), while the scan, which
        // validates the whole line first, rejects the line.
        for line in [
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[BROKEN]}}"#,
            r#"{"type":"message","id":"a\u0031","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[BROKEN]}}"#,
        ] {
            assert!(matches!(scan_line(line.as_bytes()), LineScan::Malformed(_)));
            let p = object_fields(line.as_bytes()).expect("first keys");
            assert_eq!(p.role.as_deref(), Some("user"));
            assert_eq!(p.id.as_deref(), Some("a1"));
            assert_eq!(p.parent_id, None);
            assert_eq!(p.time(), Some(1_767_225_600_000.0));
        }
    }

    #[test]
    fn custom_entries_put_their_payload_first() {
        let p =
            obj(r#"{"type":"custom","customType":"x","data":{"a":[1,2]},"id":"c1","parentId":"a1","timestamp":"t"}"#);
        assert_eq!(p.id.as_deref(), Some("c1"));
        assert_eq!(p.parent_id.as_deref(), Some("a1"));
    }

    #[test]
    fn falsy_parents_are_roots() {
        assert_eq!(obj(r#"{"type":"label","id":"x","parentId":"","timestamp":"t"}"#).parent_id, None);
        assert_eq!(obj(r#"{"id":"x","parentId":0,"type":"label"}"#).parent_id, None);
        assert_eq!(obj(r#"{"id":"x","parentId":7,"type":"label"}"#).parent_id.as_deref(), Some("\u{0}7"));
    }

    #[test]
    fn classifies_broken_lines() {
        assert!(matches!(scan_line(b"   \r"), LineScan::Blank));
        assert!(matches!(scan_line("\u{a0}".as_bytes()), LineScan::Blank));
        assert!(matches!(scan_line(b"{\"type\":\"message\",\"id\":\"a\""), LineScan::Malformed(_)));
        assert!(matches!(
            scan_line(b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"cut"),
            LineScan::Malformed(_)
        ));
        assert!(matches!(scan_line(b"not json"), LineScan::Malformed(_)));
        assert!(matches!(scan_line(b"null"), LineScan::NotObject { truthy: false, .. }));
        assert!(matches!(scan_line(b"[1]"), LineScan::NotObject { truthy: true, .. }));
        assert!(matches!(scan_line(b"{\"type\":\"label\"}\r"), LineScan::Object(..)));
    }
}
