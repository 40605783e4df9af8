//! oh-my-pi's image blobs (src/session/blob-store.ts, session-loader.ts).
//!
//! omp does not keep an image's base64 in the session line: it writes the bytes to
//! `<agent dir>/blobs/<sha256>` and the line holds `blob:sha256:<hex>` in the image's
//! `data`. When it loads a session it puts the bytes back, as base64, and a blob that is
//! missing stays a reference ("downstream will see invalid base64 but won't crash").
//! pisces does the same when it reads an entry whole, and says at load time which blobs
//! are missing. A snapcompact compaction's frames are blobs too, read only when the context
//! is built (`snapcompact`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::session::entry::{EntryType, LineNo};
use crate::session::{Diagnostic, Problem, Session, Severity};

pub const PREFIX: &str = "blob:sha256:";

/// The `blobs/` folder of the store a session file is in: the nearest folder above it
/// that has one (`<agent>/sessions/<bucket>/x.jsonl` and
/// `<agent>/archive/sessions/<bucket>/x.jsonl.gz` both give `<agent>/blobs`).
pub fn store_of(file: &Path) -> Option<PathBuf> {
    file.ancestors().skip(1).take(6).map(|d| d.join("blobs")).find(|b| b.is_dir())
}

/// The hash a reference names, when it is one omp resolves (64 lowercase hex digits:
/// omp's `parseBlobRef`, which keeps a reference from naming a file outside the store).
pub fn hash_of(data: &str) -> Option<&str> {
    let hash = data.strip_prefix(PREFIX)?;
    (hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(hash)
}

/// Puts the bytes of every image blob `value` refers to back as base64, where omp's
/// `resolvePersistedBlobRefs` does: the `data` of an image block, anywhere in the entry
/// except snapcompact `frames`.
pub fn resolve(value: &mut Value, dir: Option<&Path>) {
    walk(value, None, &mut |data| read_base64(&dir?.join(hash_of(data)?)));
}

fn walk(value: &mut Value, key: Option<&str>, f: &mut impl FnMut(&str) -> Option<String>) {
    match value {
        Value::Array(items) => {
            for item in items {
                walk(item, key, f);
            }
        }
        Value::Object(map) => {
            if key != Some("frames") && map.get("type").and_then(Value::as_str) == Some("image") {
                if let Some(Value::String(data)) = map.get_mut("data") {
                    if let Some(resolved) = f(data) {
                        *data = resolved;
                    }
                    return;
                }
            }
            for (k, v) in map.iter_mut() {
                let k = k.clone();
                walk(v, Some(&k), f);
            }
        }
        _ => {}
    }
}

/// A warning for each entry whose image blobs are not in the store.
pub fn report_missing(s: &mut Session, dir: Option<&Path>) {
    let found = refs(s, 0);
    report(s, dir, found);
}

/// An image blob an entry refers to: its line, the entry's id, the hash.
pub type BlobRef = (LineNo, String, String);

/// The blob references of the entries from the `from`-th on.
pub fn refs(s: &Session, from: usize) -> Vec<BlobRef> {
    let mut found = Vec::new();
    for i in s.entries.indices().skip(from) {
        let line = s.raw_line(i);
        let mut at = 0;
        while let Some(k) = memchr::memmem::find(&line[at..], PREFIX.as_bytes()) {
            let start = at + k;
            let end = (start + PREFIX.len() + 64).min(line.len());
            let text = String::from_utf8_lossy(&line[start..end]).into_owned();
            at = end;
            let Some(hash) = hash_of(&text) else { continue };
            found.push((s.entries[i].line, s.display_id(i).into_owned(), hash.to_string()));
        }
    }
    found
}

/// A warning for each of `refs` whose blob is not in the store.
pub fn report(s: &mut Session, dir: Option<&Path>, refs: Vec<BlobRef>) {
    for (line, id, hash) in refs {
        if dir.is_some_and(|d| d.join(&hash).is_file()) {
            continue;
        }
        let where_ = match dir {
            Some(d) => format!("is not in {}", d.display()),
            None => "cannot be found (no `blobs/` folder above the session file)".to_string(),
        };
        // Only a compaction holds snapcompact frames; omp leaves a missing one out of the
        // context, where a missing image of a message stays its reference.
        let frame = s.entries.on_line(line).is_some_and(|i| s.entries[i].kind == EntryType::Compaction);
        let outcome = match frame {
            true => "the context says this archived frame is unavailable, as omp's does",
            false => "the image is shown as its reference, as omp sends it",
        };
        s.diagnostics.push(Diagnostic {
            kind: Problem::MissingBlob,
            severity: Severity::Warning,
            line: Some(line),
            message: format!("entry {id}: image blob sha256:{}… {where_}; {outcome}", &hash[..12]),
        });
    }
}

/// The bytes of the blob file at `path` as base64 (omp's `resolveImageDataSync`). Only a
/// regular file is read: a FIFO in its place would block the read forever.
pub fn read_base64(path: &Path) -> Option<String> {
    std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    std::fs::read(path).ok().map(|bytes| base64_encode(&bytes))
}

/// Standard base64 with padding, as Node's `Buffer.toString("base64")`.
fn base64_encode(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_node_s() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(&[7u8; 4]), "BwcHBw==");
    }

    #[test]
    fn only_a_full_lowercase_hash_is_a_reference() {
        let h = "e4fde89f39bc53b90e9935a8015b80dd6e4135485e894094a3517fa250e344ae";
        assert_eq!(hash_of(&format!("{PREFIX}{h}")), Some(h));
        assert_eq!(hash_of(&format!("{PREFIX}../../etc/passwd")), None);
        assert_eq!(hash_of(&format!("{PREFIX}{}", h.to_uppercase())), None);
    }
}
