//! The fields the index needs from a Claude Code line, read without parsing the rest.
//!
//! Most of a line's bytes are inside strings (a tool result's output, a file's content),
//! many of them short (JSON inside the output), and a parser that decodes every one of them
//! reads the file several times slower than it can be read. Here the line's quotes and
//! brackets are found first, 64 bytes at a time (`walk::Blocks`); then the top-level keys are
//! walked, the values the index wants are read from their own bytes, and every other value
//! is skipped with bit operations.
//!
//! The line is not validated here (the loader decides when to, `load.rs`): on a line that
//! is not JSON the walk may stop (`None`: the caller parses the line whole, which says what
//! is wrong) or read something; either way, no panic.

use std::borrow::Cow;

use serde_json::Value;

use crate::session::walk::{skip_ws, Blocks, Structure};

use super::load::{Head, MessageHead, Str};
use super::{At, ReplySpans};

/// Calls `f(key, value bytes)` for each member of the object at `i`; the end of the object.
fn members<'a>(
    st: &Structure,
    b: &'a [u8],
    i: usize,
    mut f: impl FnMut(&'a [u8], &'a [u8]) -> Option<()>,
) -> Option<usize> {
    members_at(st, b, i, |k, at| {
        let end = st.value_end(at)?;
        f(k, &b[at..end])?;
        Some(end)
    })
}

/// Calls `f(key, where its value starts)` for each member of the object at `i`; `f` returns
/// where the value ends (so a value it reads into is not scanned twice); the end of the
/// object.
fn members_at<'a>(
    st: &Structure,
    b: &'a [u8],
    i: usize,
    mut f: impl FnMut(&'a [u8], usize) -> Option<usize>,
) -> Option<usize> {
    let mut i = skip_ws(b, i);
    if *b.get(i)? != b'{' {
        return None;
    }
    i = skip_ws(b, i + 1);
    if *b.get(i)? == b'}' {
        return Some(i + 1);
    }
    loop {
        if *b.get(i)? != b'"' {
            return None;
        }
        let key_end = st.string_end(i)?;
        let key = b.get(i + 1..key_end - 1)?;
        i = skip_ws(b, key_end);
        if *b.get(i)? != b':' {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = f(key, i)?;
        i = skip_ws(b, end);
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// A value read as a string when it is one (`Str(None)` when it is not). A string without
/// escapes (ids, nearly all) is borrowed from the line as it is; one with escapes is
/// decoded by serde.
fn string(v: &[u8]) -> Option<Str<'_>> {
    match v {
        // (One pass over the bytes, 16 at a time: ids are short, and a call to search for a
        // backslash and another to check UTF-8 cost more than the string.)
        [b'"', inner @ .., b'"'] if crate::session::walk::ascii_without_escape(inner) => {
            // SAFETY: ASCII bytes are UTF-8.
            Some(Str(Some(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(inner) }))))
        }
        [b'"', inner @ .., b'"'] if memchr::memchr(b'\\', inner).is_none() => {
            std::str::from_utf8(inner).ok().map(|s| Str(Some(Cow::Borrowed(s))))
        }
        [b'"', ..] => serde_json::from_slice(v).ok(),
        _ => Some(Str(None)),
    }
}

/// Reads the content value at `i`: where it ends, and whether some block / every block is
/// a tool result (a string content: neither).
fn tool_results(st: &Structure, v: &[u8], i: usize) -> Option<(usize, bool, bool)> {
    if v.get(i) != Some(&b'[') {
        return Some((st.value_end(i)?, false, false));
    }
    let (mut some, mut all) = (false, true);
    let mut i = skip_ws(v, i + 1);
    if v.get(i) == Some(&b']') {
        return Some((i + 1, false, false));
    }
    loop {
        let mut ty_result = false;
        let end = members(st, v, i, |k, val| {
            if k == b"type" {
                ty_result = val == b"\"tool_result\"";
            }
            Some(())
        })?;
        some |= ty_result;
        all &= ty_result;
        i = skip_ws(v, end);
        match *v.get(i)? {
            b',' => i = skip_ws(v, i + 1),
            b']' => return Some((i + 1, some, all)),
            _ => return None,
        }
    }
}

/// The keys `stats` reads a reply's ids from (see `ReplySpans::plain_ids`): how often each
/// was seen, and whether one was not as the spans read it (`odd`: a value neither a string
/// nor null, or a `requestSessionId`).
#[derive(Default)]
struct IdKeys {
    seen: [u8; 7],
    odd: bool,
}

impl IdKeys {
    const MESSAGE_ID: usize = 0;
    const MODEL: usize = 1;
    const UUID: usize = 2;
    const TIMESTAMP: usize = 3;
    const SESSION_ID: usize = 4;
    const REQUEST_ID: usize = 5;
    const REQUEST_SESSION_ID: usize = 6;

    fn see(&mut self, key: usize, v: &[u8]) {
        self.seen[key] = self.seen[key].saturating_add(1);
        self.odd |= !(v.first() == Some(&b'"') || v == b"null");
    }

    fn plain(&self) -> bool {
        !self.odd && self.seen.iter().all(|&n| n <= 1)
    }
}

/// Reads the fields of a line into `h`; for a message, whether its content has tool results (some,
/// all). `None`: not the shape the walker knows; parse the line whole. `blocks` is a
/// buffer reused from line to line. `header`: whether to read `sessionId`, `cwd` and
/// `version` (the loader takes the first of each, and every line repeats them).
pub fn head<'a>(line: &'a [u8], blocks: &mut Blocks, header: bool, h: &mut Head<'a>) -> Option<(bool, bool)> {
    let st = blocks.read(line);
    let st = &st;
    let (mut some, mut all) = (false, false);
    // `message.model` and `message.usage` where each is once in the only `message`.
    let mut messages = 0;
    let (mut models, mut usages, mut spans) = (0, 0, ReplySpans::default());
    let (mut times, mut time) = (0, At::NONE);
    let mut ids = IdKeys::default();
    members_at(st, line, 0, |k, at| {
        if k == b"message" {
            messages += 1;
        }
        if k == b"message" && line.get(at) == Some(&b'{') {
            let mut m = MessageHead::default();
            let end = members_at(st, line, at, |mk, mat| match mk {
                b"content" => {
                    let end;
                    (end, some, all) = tool_results(st, line, mat)?;
                    Some(end)
                }
                _ => {
                    let end = st.value_end(mat)?;
                    let span = At::new(mat);
                    match mk {
                        b"id" => {
                            ids.see(IdKeys::MESSAGE_ID, &line[mat..end]);
                            m.id = string(&line[mat..end])?;
                        }
                        b"role" => m.role = string(&line[mat..end])?,
                        b"model" => {
                            ids.see(IdKeys::MODEL, &line[mat..end]);
                            (models, spans.model) = (models + 1, span);
                        }
                        b"usage" => (usages, spans.usage) = (usages + 1, span),
                        _ => {}
                    }
                    Some(end)
                }
            })?;
            h.message_id = m.id;
            return Some(end);
        }
        if k == b"attachment" && line.get(at) == Some(&b'{') {
            let mut ty = Str::default();
            let end = members(st, line, at, |ak, v| {
                if ak == b"type" {
                    ty = string(v)?;
                }
                Some(())
            })?;
            h.attachment_type = ty;
            return Some(end);
        }
        let end = st.value_end(at)?;
        let v = &line[at..end];
        match k {
            b"type" => h.ty = string(v)?,
            b"uuid" => {
                ids.see(IdKeys::UUID, v);
                h.uuid = string(v)?;
            }
            b"parentUuid" => h.parent_uuid = string(v)?,
            b"logicalParentUuid" => h.logical_parent_uuid = string(v)?,
            b"sessionId" => {
                ids.see(IdKeys::SESSION_ID, v);
                if header {
                    h.session_id = string(v)?;
                }
            }
            b"requestId" => {
                ids.see(IdKeys::REQUEST_ID, v);
                if v.first() == Some(&b'"') {
                    spans.request_id = At::new(at);
                }
            }
            b"requestSessionId" => {
                ids.see(IdKeys::REQUEST_SESSION_ID, v);
                // A copy names the session that made the request: the parse compares the two.
                ids.odd |= v != b"null";
            }
            b"cwd" if header => h.cwd = string(v)?,
            b"version" if header => h.version = string(v)?,
            b"timestamp" => {
                ids.see(IdKeys::TIMESTAMP, v);
                (times, time) = (times + 1, At::new(at));
            }
            b"subtype" => h.subtype = string(v)?,
            b"leafUuid" => h.leaf_uuid = string(v)?,
            b"summary" => h.summary = string(v)?,
            b"customTitle" => h.custom_title = string(v)?,
            b"isSidechain" => {
                h.is_sidechain = match v {
                    b"false" => Some(Value::Bool(false)),
                    b"true" => Some(Value::Bool(true)),
                    _ => serde_json::from_slice(v).ok(),
                }
            }
            _ => {}
        }
        Some(end)
    })?;
    // (A line longer than 4 GiB keeps no spans.)
    if messages == 1 && models <= 1 && usages <= 1 && u32::try_from(line.len()).is_ok() {
        spans.plain_ids = ids.plain();
        h.reply = Some(spans);
    }
    // (Twice, the key is serde's error, as the time's own read gives it: no span then.)
    if times == 1 && u32::try_from(line.len()).is_ok() {
        h.time = time;
    }
    Some((some, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk reads what serde reads, on every line of the corpus and on lines made to
    /// trip it (escapes, a `uuid` key inside a tool's input, odd spacing).
    #[test]
    fn the_walk_reads_what_serde_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/claude-code-2.1.332");
        let corpus: String = ["01-tool-calls.jsonl", "21-tui-inputs.jsonl"]
            .iter()
            .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
            .collect();
        let tricky = [
            r#"{"message":{"content":[{"type":"tool_use","input":{"uuid":"inner","x":"a\"b\\"}}],"id":"m1"},"uuid":"outer","type":"assistant"}"#,
            r#"{ "type" : "user" , "uuid":"u\u0031", "parentUuid" : null, "message": {"content": "text with \"uuid\":\"no\""} }"#,
            r#"{"type":"user","uuid":"u2","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"]}"}]}]}}"#,
            r#"{"type":"attachment","uuid":"a1","attachment":{"prompt":"x","type":"queued_command","origin":{"type":"no"}}}"#,
            r#"{"type":"attachment","uuid":"a2","attachment":"queued_command"}"#,
            r#"{"type":"user","uuid":"t1","timestamp":"2026-01-02T03:04:05\u002e678Z"}"#,
            r#"{"type":"user","uuid":"t2","timestamp":"2026-01-02T03:04:05.678Z"}"#,
            r#"{"type":"user","uuid":"t3","timestamp":"2026-01-02T03:04:05.678Z\""}"#,
        ];
        let mut plain_times = 0;
        let mut blocks = Blocks::default();
        for line in corpus.lines().chain(tricky) {
            let mut fast = Head::default();
            head(line.as_bytes(), &mut blocks, true, &mut fast).unwrap_or_else(|| panic!("not walked: {line}"));
            let slow: Head = serde_json::from_str(line).unwrap();
            let msg: MessageHead = slow.message.and_then(|m| serde_json::from_str(m.get()).ok()).unwrap_or_default();
            assert_eq!(fast.uuid.as_deref(), slow.uuid.as_deref(), "{line}");
            assert_eq!(fast.parent_uuid.as_deref(), slow.parent_uuid.as_deref());
            assert_eq!(fast.ty.as_deref(), slow.ty.as_deref());
            assert_eq!(fast.session_id.as_deref(), slow.session_id.as_deref());
            assert_eq!(fast.cwd.as_deref(), slow.cwd.as_deref());
            assert_eq!(fast.version.as_deref(), slow.version.as_deref());
            assert_eq!(fast.is_sidechain, slow.is_sidechain);
            assert_eq!(fast.message_id.as_deref(), msg.id.as_deref());
            let attachment: Option<super::super::load::BlockHead> =
                slow.attachment.and_then(|a| serde_json::from_str(a.get()).ok());
            assert_eq!(fast.attachment_type.as_deref(), attachment.as_ref().and_then(|a| a.ty.as_deref()), "{line}");
            // The time read at the span is the time read of the whole line.
            let at = fast.time.read::<Str>(line.as_bytes()).map(Option::unwrap);
            let quick = at.and_then(|t| t.0.and_then(|t| crate::session::js::parse_date(&t)));
            assert_eq!(quick, super::super::entries::line_time(line.as_bytes()), "{line}");
            // And a plain string read as it is, as serde reads it.
            if let Some(t) = fast.time.plain_str(line.as_bytes()) {
                plain_times += 1;
                assert_eq!(crate::session::js::parse_date(t), quick, "{line}");
            }
            // Without the header's fields: the same but for those.
            let mut lean = Head::default();
            head(line.as_bytes(), &mut blocks, false, &mut lean).unwrap();
            assert_eq!((lean.session_id.0, lean.cwd.0, lean.version.0), (None, None, None));
            assert_eq!(lean.uuid.as_deref(), fast.uuid.as_deref());
        }
        assert!(plain_times > 50, "{plain_times} times read as they are");
        let mut h = Head::default();
        let (some, all) = head(tricky[2].as_bytes(), &mut blocks, true, &mut h).unwrap();
        assert!(some && all);
        let mut h = Head::default();
        head(tricky[0].as_bytes(), &mut blocks, true, &mut h).unwrap();
        assert_eq!(h.uuid.as_deref(), Some("outer"));
    }
}
