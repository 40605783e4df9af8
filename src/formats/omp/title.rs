//! oh-my-pi's session title (src/session/session-title-slot.ts, session-loader.ts).
//!
//! omp keeps the current title in a fixed-width first line, `{"type":"title","v":1,
//! "title":…,"source"?:…,"updatedAt":…,"pad":"   "}` padded to exactly 256 bytes with its
//! newline, and rewrites that line in place when the title changes, so the rest of the
//! file stays append-only. Loading strips it (a first line that is not a valid slot is
//! read as the header, as in files from before omp 16.3) and puts its title on the header.

use serde_json::Value;

use crate::session::Session;

/// The width of the title line, newline included.
pub const SLOT_BYTES: usize = 256;

/// A title slot as omp's `parseTitleSlotObject` accepts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub title: String,
    /// `auto` or `user`.
    pub source: Option<String>,
    pub updated_at: String,
}

/// The slot on `line` (the file's first line, without its newline), if it is one:
/// `type` "title", `v` 1, string `title`, `updatedAt` and `pad`, and a `source` that is
/// absent or `auto` / `user`.
pub fn slot(line: &[u8]) -> Option<Slot> {
    let v = crate::session::js::parse_value(line).ok()?;
    if v.get("type")?.as_str()? != "title" || v.get("v")?.as_f64()? != 1.0 {
        return None;
    }
    let title = v.get("title")?.as_str()?.to_string();
    let updated_at = v.get("updatedAt")?.as_str()?.to_string();
    v.get("pad")?.as_str()?;
    let source = match v.get("source") {
        None => None,
        Some(Value::String(s)) if s == "auto" || s == "user" => Some(s.clone()),
        Some(_) => return None,
    };
    Some(Slot { title, source, updated_at })
}

/// The title omp shows (`applyTitleSlot`, then the session manager's name): the slot's
/// title when the file has a slot (an empty one removes the header's), else the header's
/// `title`. omp's reader never consults `title_change` entries: they are the history of
/// renames, and the slot is rewritten in place at each one.
pub fn of(s: &Session, slot: Option<&Slot>) -> Option<String> {
    let title = match slot {
        Some(slot) => Some(slot.title.as_str()),
        None => s.header.raw.get("title").and_then(Value::as_str),
    };
    title.filter(|t| !t.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_read_and_a_header_is_not_one() {
        let line = br#"{"type":"title","v":1,"title":"Fix it","source":"user","updatedAt":"2026-12-01T18:17:10.842Z","pad":"  "}"#;
        let s = slot(line).unwrap();
        assert_eq!((s.title.as_str(), s.source.as_deref()), ("Fix it", Some("user")));
        assert!(slot(br#"{"type":"session","version":3,"id":"x"}"#).is_none());
        // A source omp does not write makes it no slot.
        assert!(slot(br#"{"type":"title","v":1,"title":"","source":"x","updatedAt":"t","pad":""}"#).is_none());
        assert!(slot(br#"{"type":"title","v":2,"title":"","updatedAt":"t","pad":""}"#).is_none());
    }
}
