//! Bytes -> lines -> index entries, leniently, the way pi reads a file (§1.2).
//!
//! pi splits the file on `\n`, skips lines that `trim()` to nothing and lines that
//! `JSON.parse` rejects, and accepts the file only if the first parsed line is a
//! `session` header with a string id. We do the same, but report every problem with its
//! line number instead of skipping silently.
//!
//! Speed: a line is not parsed whole. `scan_prefix` reads the object's keys until it has
//! `type`, `id`, `parentId`, `timestamp` (and for messages `message.role`, the first key
//! pi writes in a message), then stops; since pi writes those keys first, that is a few
//! dozen bytes of a line that may hold megabytes of base64. The rest of the line is only
//! checked to end in `}`. Damage past the first keys of a line that still ends in `}` is
//! found when the line is parsed whole (the entries `path` projects, `--strict`, `check`).

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::entry::{EntryMeta, EntryType, Role};
use super::js;

/// What the scan of one line found.
pub(crate) enum LineScan<'a> {
    /// Whitespace only: pi skips it.
    Blank,
    /// Not JSON (or not complete JSON): pi skips it.
    Malformed(String),
    /// A JSON value that is not an object. pi keeps truthy ones as entries without type
    /// or id, and skips `null`, `false`, `0` and `""`.
    NotObject { truthy: bool, text: String },
    /// An object: what the index needs of it.
    Object(Prefix<'a>),
}

/// The first keys of an entry line, borrowed from the file.
#[derive(Default)]
pub(crate) struct Prefix<'a> {
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

/// Scans one physical line (without its `\n`).
pub(crate) fn scan_line(line: &[u8]) -> LineScan<'_> {
    let Some(first) = first_non_blank(line) else { return LineScan::Blank };
    if line[first] != b'{' {
        // Rare: parse it whole to see what JSON.parse would make of it.
        return match parse_value(line) {
            Ok(v) => LineScan::NotObject { truthy: js::truthy(Some(&v)), text: preview(&v) },
            Err(e) => LineScan::Malformed(e.to_string()),
        };
    }
    let mut prefix = Prefix::default();
    let mut de = serde_json::Deserializer::from_slice(line);
    let result = (&mut de).deserialize_map(EntryVisitor { p: &mut prefix });
    match result {
        Ok(()) => match de.end() {
            Ok(()) => LineScan::Object(prefix),
            Err(e) => LineScan::Malformed(e.to_string()),
        },
        Err(_) if prefix.stopped => {
            // We did not read to the end; the line must at least close its object.
            let last = line.iter().rposition(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
            if last.map(|i| line[i]) == Some(b'}') {
                LineScan::Object(prefix)
            } else {
                LineScan::Malformed("the line ends before its JSON object does".into())
            }
        }
        Err(e) => LineScan::Malformed(e.to_string()),
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
    /// Turns the borrowed prefix into an index entry (links are resolved later).
    pub(crate) fn into_entry(self, line: u32, span: std::ops::Range<usize>) -> (EntryMeta<'a>, Option<Cow<'a, str>>) {
        let ty = self.ty.and_then(raw_str);
        let kind = match &ty {
            Some(t) => EntryType::from_name(t),
            None => EntryType::Missing,
        };
        let role = match (kind, self.role.and_then(raw_str)) {
            (EntryType::Message, Some(r)) => Role::from_name(&r),
            (EntryType::Message, None) => Role::Other,
            _ => Role::None,
        };
        // pi follows `parentId` only when it is truthy.
        let parent_id = match self.parent_id {
            Some(raw) if raw.get() == "\"\"" || raw.get() == "false" || raw.get() == "0" => None,
            other => raw_id(other),
        };
        let time = self.timestamp.and_then(|raw| match raw_str(raw) {
            Some(s) => js::parse_date(&s),
            None => serde_json::from_str::<Value>(raw.get()).ok().and_then(|v| js::date_ms(Some(&v))),
        });
        let entry = EntryMeta {
            line,
            span,
            kind,
            role,
            id: raw_id(self.id),
            parent_id,
            time,
            parent: None,
            shadowed: false,
        };
        (entry, ty)
    }
}

/// Parses a whole line as JSON, as `JSON.parse` would after Node decoded the bytes:
/// invalid UTF-8 becomes U+FFFD, and escaped lone surrogates (which JS accepts and Rust
/// strings cannot hold) become U+FFFD too.
pub fn parse_value(line: &[u8]) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice(line) {
        Ok(v) => Ok(v),
        Err(e) => {
            let text = String::from_utf8_lossy(line);
            let fixed = replace_lone_surrogates(&text);
            match serde_json::from_str(&fixed) {
                Ok(v) => Ok(v),
                Err(_) => Err(e),
            }
        }
    }
}

/// Rewrites `\uD800`-`\uDFFF` escapes that are not part of a valid pair to `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let hex = |s: &str| u16::from_str_radix(s, 16).ok();
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i + 6 <= b.len() {
        if b[i] == b'\\' {
            if b[i + 1] == b'u' {
                if let Some(u) = text.get(i + 2..i + 6).and_then(hex) {
                    let is_high = (0xD800..0xDC00).contains(&u);
                    let is_low = (0xDC00..0xE000).contains(&u);
                    let next_low = is_high
                        && text.get(i + 6..i + 8) == Some("\\u")
                        && text.get(i + 8..i + 12).and_then(hex).is_some_and(|l| (0xDC00..0xE000).contains(&l));
                    if is_high && next_low {
                        i += 12;
                        continue;
                    }
                    if is_high || is_low {
                        out.push_str(&text[last..i]);
                        out.push_str("\\ufffd");
                        i += 6;
                        last = i;
                        continue;
                    }
                }
            }
            i += 2; // skip the escaped character
        } else {
            i += 1;
        }
    }
    if last == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
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

    fn obj(line: &str) -> Prefix<'_> {
        match scan_line(line.as_bytes()) {
            LineScan::Object(p) => p,
            _ => panic!("not an object: {line}"),
        }
    }

    #[test]
    fn reads_the_first_keys_and_stops() {
        let p = obj(r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[BROKEN]}}"#);
        assert!(p.stopped);
        assert_eq!(p.role.unwrap().get(), "\"user\"");
        assert_eq!(p.parent_id.unwrap().get(), "null");
    }

    #[test]
    fn custom_entries_put_their_payload_first() {
        let p = obj(r#"{"type":"custom","customType":"x","data":{"a":[1,2]},"id":"c1","parentId":"a1","timestamp":"t"}"#);
        assert_eq!(p.id.unwrap().get(), "\"c1\"");
        assert!(p.stopped);
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
        assert!(matches!(scan_line(b"{\"type\":\"label\"}\r"), LineScan::Object(_)));
    }

    #[test]
    fn lone_surrogates_parse_like_js() {
        let v = parse_value(br#"{"a":"x\ud800y","b":"\ud83d\ude00"}"#).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "\u{1f600}");
    }
}
