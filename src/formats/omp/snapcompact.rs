//! A snapcompact compaction's history, as omp puts it back into the context
//! (`@oh-my-pi/snapcompact` `historyBlocks`, called by session-context.ts with the blob
//! store's `lazyImageDataSync` as `SessionManager.buildSessionContext` passes it).
//!
//! Snapcompact archives the older conversation without a model call: its oldest and newest
//! text stay text (`textHead`, `textTail`), the middle is rendered onto PNG frames kept as
//! blobs (`preserveData.snapcompact.frames`). Each time omp rebuilds the context it reads
//! those frames back, newest first, within a budget of base64 bytes a request may carry; a
//! frame whose blob is gone, or that does not fit, becomes a line of text saying so, in its
//! place. omp's loader leaves frames as references (unlike message images), so they are
//! read here, when the context is built.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::blobs;
use crate::session::js;

/// `FRAME_DATA_BYTES_BUDGET`: the frames' base64 one request may carry.
const FRAME_DATA_BYTES_BUDGET: usize = 3_000_000;
/// `NEWLINE_GLYPH`: archived text keeps newlines as this full block.
const NEWLINE_GLYPH: char = '\u{2588}';
/// session-context.ts's guards for archives written before frames carried their shape:
/// such an archive, large on all counts, gets no frames at all.
const LEGACY_FRAME_COUNT: usize = 16;
const LEGACY_ARCHIVE_TEXT: usize = 250_000;
const LEGACY_TRUNCATED_CHARS: f64 = 1_000_000.0;

/// The archive's blocks for the compaction summary (`blocks`), oldest first; `None` when the
/// compaction has no archive (`getPreservedArchive`) or it gives no block.
pub fn history_blocks(preserve: Option<&Value>, blob_dir: Option<&Path>) -> Option<Vec<Value>> {
    let archive = Archive::of(preserve?)?;
    let frame_data = |data: &str| lazy_frame_data(data, blob_dir);
    let budget = if archive.legacy_crash_risk(&frame_data) { 0 } else { FRAME_DATA_BYTES_BUDGET };
    let middle = frame_blocks(&archive, budget, &frame_data);
    let has_images = middle.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("image"));
    let has_omitted = middle.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("text"));
    let mut blocks = Vec::new();
    if let Some(head) = archive.text_head {
        let suffix = if has_images { "\n-------------- imaged middle below\n" } else { "" };
        blocks.push(text_block(format!("{}{suffix}", elide_data_urls(&to_plain_text(head)))));
    }
    blocks.extend(middle);
    if let Some(tail) = archive.text_tail {
        let prefix = if has_images {
            "-------------- imaged middle above\n"
        } else if archive.truncated_chars > 0.0 || has_omitted {
            "\n-------------- middle history omitted above\n"
        } else {
            ""
        };
        let tail = format!("{prefix}{}", elide_data_urls(&to_plain_text(tail)));
        let last_text = blocks
            .last_mut()
            .and_then(Value::as_object_mut)
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"));
        match last_text {
            Some(last) => {
                let joined = format!("{}{tail}", last.get("text").and_then(Value::as_str).unwrap_or_default());
                last.insert("text".into(), joined.into());
            }
            None => blocks.push(text_block(tail)),
        }
    }
    (!blocks.is_empty()).then_some(blocks)
}

/// `getPreservedArchive`: the frames that have what a frame needs, and the text regions
/// that are not empty; nothing when neither is left.
struct Archive<'a> {
    frames: Vec<&'a Map<String, Value>>,
    truncated_chars: f64,
    text: Option<&'a str>,
    text_head: Option<&'a str>,
    text_tail: Option<&'a str>,
}

impl<'a> Archive<'a> {
    fn of(preserve: &'a Value) -> Option<Archive<'a>> {
        let a = preserve.get("snapcompact")?.as_object()?;
        let frames = a
            .get("frames")
            .and_then(Value::as_array)
            .map(|frames| {
                frames
                    .iter()
                    .filter_map(Value::as_object)
                    .filter(|f| {
                        f.get("data").and_then(Value::as_str).is_some_and(|d| !d.is_empty())
                            && f.get("mimeType").is_some_and(Value::is_string)
                            && ["cols", "rows", "chars"].iter().all(|k| f.get(*k).is_some_and(Value::is_number))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let text = |k: &str| a.get(k).and_then(Value::as_str).filter(|t| !t.is_empty());
        let archive = Archive {
            frames,
            truncated_chars: a.get("truncatedChars").and_then(Value::as_f64).unwrap_or(0.0),
            text: text("text"),
            text_head: text("textHead"),
            text_tail: text("textTail"),
        };
        let empty = archive.frames.is_empty()
            && archive.text.is_none()
            && archive.text_head.is_none()
            && archive.text_tail.is_none();
        (!empty).then_some(archive)
    }

    /// `isCrashRiskLegacySnapcompactArchive`: frames without their shape (no `font`, no
    /// `variant`), and both many or heavy frames and a large archive.
    fn legacy_crash_risk(&self, frame_data: &impl Fn(&str) -> Option<LazyFrame>) -> bool {
        let legacy = self.frames.iter().any(|f| !f.contains_key("font") && !f.contains_key("variant"));
        let many = self.frames.len() >= LEGACY_FRAME_COUNT;
        let heavy = || {
            let bytes: usize = self
                .frames
                .iter()
                .map(|f| {
                    let data = frame_data_of(f);
                    frame_data(data).map_or(js::utf16_len(data), |l| l.bytes)
                })
                .sum();
            bytes >= FRAME_DATA_BYTES_BUDGET
        };
        let large = || {
            self.truncated_chars >= LEGACY_TRUNCATED_CHARS
                || self.source_text().is_some_and(|t| js::utf16_len(&t) >= LEGACY_ARCHIVE_TEXT)
        };
        legacy && (many || heavy()) && (many || large())
    }

    /// `archiveSourceText`.
    fn source_text(&self) -> Option<String> {
        let text = match self.text {
            Some(t) => t.to_string(),
            None => {
                let parts: Vec<&str> = [self.text_head, self.text_tail].into_iter().flatten().collect();
                parts.join(NEWLINE_GLYPH.encode_utf8(&mut [0; 4]))
            }
        };
        (!text.is_empty()).then(|| elide_data_urls(&to_plain_text(&text)))
    }
}

fn frame_data_of(f: &Map<String, Value>) -> &str {
    f.get("data").and_then(Value::as_str).unwrap_or_default()
}

/// A frame's payload, priced before it is read (`LazyFrameData`): its blob's file, or the
/// frame's own data when it is inline.
struct LazyFrame {
    bytes: usize,
    blob: Option<PathBuf>,
}

/// `lazyImageDataSync`: a blob reference is priced at its file's size in base64 and read
/// when chosen; a reference that names no blob (or no valid hash) is unavailable; inline
/// data is itself.
fn lazy_frame_data(data: &str, blob_dir: Option<&Path>) -> Option<LazyFrame> {
    if !data.starts_with(blobs::PREFIX) {
        return Some(LazyFrame { bytes: js::utf16_len(data), blob: None });
    }
    let path = blob_dir?.join(blobs::hash_of(data)?);
    // (Only a regular file: reading a FIFO put there would wait forever.)
    let size = usize::try_from(std::fs::metadata(&path).ok().filter(|m| m.is_file())?.len()).unwrap_or(usize::MAX);
    Some(LazyFrame { bytes: size.div_ceil(3).saturating_mul(4), blob: Some(path) })
}

/// Why a run of frames is left out: their blobs are missing, or they are over the budget.
#[derive(PartialEq)]
enum Gap {
    Unavailable,
    Budget,
}

/// `imagesWithinBudget` then `frameBlocks`: frames are priced newest first and kept while
/// they fit; each run of frames left out for one reason becomes one line of text in their
/// place.
fn frame_blocks(archive: &Archive, budget: usize, frame_data: &impl Fn(&str) -> Option<LazyFrame>) -> Vec<Value> {
    let mut used = 0usize;
    // Newest first: a frame with its data, or why it is left out and its bytes.
    let mut slots: Vec<Result<Value, (Gap, usize)>> = Vec::with_capacity(archive.frames.len());
    for f in archive.frames.iter().rev() {
        let Some(lazy) = frame_data(frame_data_of(f)) else {
            slots.push(Err((Gap::Unavailable, 0)));
            continue;
        };
        if used.saturating_add(lazy.bytes) > budget {
            slots.push(Err((Gap::Budget, lazy.bytes)));
            continue;
        }
        used += lazy.bytes;
        // `resolveImageDataSync`: the blob's bytes as base64; a blob that cannot be read
        // after all stays its reference.
        let data = lazy.blob.and_then(|p| blobs::read_base64(&p));
        slots.push(Ok(image_block(f, data)));
    }

    let mut blocks = Vec::new();
    let mut pending: Option<(Gap, usize, usize)> = None;
    let flush = |pending: &mut Option<(Gap, usize, usize)>, blocks: &mut Vec<Value>| {
        if let Some((gap, frames, bytes)) = pending.take() {
            blocks.push(text_block(match gap {
                Gap::Unavailable => unavailable_notice(frames),
                Gap::Budget => omitted_notice(frames, bytes),
            }));
        }
    };
    for slot in slots.into_iter().rev() {
        match slot {
            Ok(image) => {
                flush(&mut pending, &mut blocks);
                blocks.push(image);
            }
            Err((gap, bytes)) => {
                if pending.as_ref().is_some_and(|(g, _, _)| *g != gap) {
                    flush(&mut pending, &mut blocks);
                }
                let run = pending.get_or_insert((gap, 0, 0));
                run.1 += 1;
                run.2 += bytes;
            }
        }
    }
    flush(&mut pending, &mut blocks);
    blocks
}

/// `images`: `{type: "image", data, mimeType, detail?}`.
fn image_block(f: &Map<String, Value>, data: Option<String>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "image".into());
    m.insert("data".into(), data.map_or_else(|| f.get("data").cloned().unwrap_or_default(), Value::String));
    m.insert("mimeType".into(), f.get("mimeType").cloned().unwrap_or_default());
    if js::truthy(f.get("detail")) {
        m.insert("detail".into(), f["detail"].clone());
    }
    Value::Object(m)
}

pub(super) fn text_block(text: String) -> Value {
    serde_json::json!({"type": "text", "text": text})
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn unavailable_notice(frames: usize) -> String {
    let n = js::locale_integer(frames as u64);
    format!("-------------- {n} archived image frame{} unavailable here --------------", plural(frames))
}

fn omitted_notice(frames: usize, bytes: usize) -> String {
    let note = if bytes > 0 {
        format!(" {} of base64 exceeded the per-request snapcompact payload budget.", format_bytes(bytes))
    } else {
        String::new()
    };
    let n = js::locale_integer(frames as u64);
    format!(
        "-------------- snapcompact image middle omitted\n{n} archived image frame{} could not be included.{note} The compacted summary and visible text edges remain available.\n--------------",
        plural(frames)
    )
}

/// `formatFrameDataBytes`.
fn format_bytes(bytes: usize) -> String {
    if bytes >= 1_000_000 {
        format!("{} MB", js::to_fixed1(bytes as f64 / 1_000_000.0))
    } else if bytes >= 1_000 {
        format!("{} KB", js::to_fixed1(bytes as f64 / 1_000.0))
    } else {
        format!("{bytes} B")
    }
}

/// `toPlainText`: the dim toggles dropped, newline glyphs made newlines again.
fn to_plain_text(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\u{e}' | '\u{f}'))
        .map(|c| if c == NEWLINE_GLYPH { '\n' } else { c })
        .collect()
}

/// JS `\s`.
const WS: &str = r"[\t\n\x0B\x0C\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]";
/// `ELIDED_MARKER`, case-insensitive as the pattern it is part of (`gi`), spelled out so
/// that the case folding is ASCII's, as in a JS regex without the `u` flag.
const ELIDED_MARKER: &str = r"\[(?:…|\.{3})[0-9]+[cC][hH] [eE][lL][iI][dD][eE][dD](?:…|\.{3})\]";

/// `DATA_URL_ATOM`: a base64 data URL, its payload possibly cut by an elision marker, and
/// the `)` that may close a Markdown wrapper.
fn data_url_atom() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let token = r"[A-Za-z0-9_!#$%&'*+.^|~-]+";
        let pattern = format!(
            r"[dD][aA][tT][aA]:([A-Za-z][A-Za-z0-9_.+-]*/[A-Za-z0-9_.+-]+(?:;{token}={token})*);[bB][aA][sS][eE]64,([A-Za-z0-9+/=]*(?:{WS}*{ELIDED_MARKER}{WS}*[A-Za-z0-9+/=]*)?)({WS}*\))?"
        );
        Regex::new(&pattern).expect("a valid pattern")
    })
}

fn elided_marker() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(&format!("{WS}*{ELIDED_MARKER}{WS}*")).expect("a valid pattern"))
}

/// `elideDataUrls(text, "archive")`: every base64 data URL in archived text becomes
/// `[data URL omitted: <mime>, <n> base64 chars]`, with its Markdown image or link wrapper
/// when both halves of it are there (archived text may have been cut anywhere, so every
/// one is taken for an image's).
fn elide_data_urls(text: &str) -> String {
    if !text.to_ascii_lowercase().contains(";base64,") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for m in data_url_atom().captures_iter(text) {
        let whole = m.get(0).expect("the match");
        let mime = m.get(1).map_or("", |g| g.as_str());
        let payload = m.get(2).map_or("", |g| g.as_str());
        let closer = m.get(3).map(|g| g.as_str());
        let chars = match elided_marker().find(payload) {
            Some(marker) => {
                let elided: f64 = marker
                    .as_str()
                    .split(|c: char| !c.is_ascii_digit())
                    .find(|d| !d.is_empty())
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0.0);
                (js::utf16_len(payload) - js::utf16_len(marker.as_str())) as f64 + elided
            }
            None => js::utf16_len(payload) as f64,
        };
        let placeholder = format!("[data URL omitted: {mime}, {} base64 chars]", js::number_string(chars));
        let opener = markdown_opener(text, whole.start(), cursor);
        out.push_str(&text[cursor..opener.unwrap_or(whole.start())]);
        match (opener, closer) {
            (Some(_), Some(_)) => out.push_str(&placeholder),
            _ => {
                out.push_str(opener.map_or("", |o| &text[o..whole.start()]));
                out.push_str(&placeholder);
                out.push_str(closer.unwrap_or_default());
            }
        }
        cursor = whole.end();
    }
    out.push_str(&text[cursor..]);
    out
}

/// `adjacentMarkdownOpenerStart`: where `![label](` or `[label](` starts right before the
/// data URL at `at` (whitespace allowed after the `(`), not before `cursor`; the label's
/// earliest `[` after a `]` or a newline.
fn markdown_opener(text: &str, at: usize, cursor: usize) -> Option<usize> {
    let before = &text[cursor..at];
    let trimmed = before.trim_end_matches(|c: char| js::is_js_whitespace(c));
    let label_end = trimmed.strip_suffix("](")?;
    let mut opener = None;
    for (k, c) in label_end.char_indices().rev() {
        match c {
            ']' | '\n' => break,
            '[' => opener = Some(k),
            _ => {}
        }
    }
    let opener = opener?;
    Some(cursor + if opener > 0 && label_end[..opener].ends_with('!') { opener - 1 } else { opener })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_are_elided_with_their_markdown_wrapper() {
        let b64 = "iVBORw0KGgo=";
        assert_eq!(
            elide_data_urls(&format!("see ![shot](data:image/png;base64,{b64}) here")),
            "see [data URL omitted: image/png, 12 base64 chars] here"
        );
        // Only one half of a wrapper: the half is kept around the placeholder.
        assert_eq!(
            elide_data_urls(&format!("[x](data:image/png;base64,{b64}")),
            "[x]([data URL omitted: image/png, 12 base64 chars]"
        );
        // A payload cut by an elision marker counts the characters elided.
        assert_eq!(
            elide_data_urls("DATA:image/png;BASE64,abcd [...100ch elided...] efgh"),
            "[data URL omitted: image/png, 108 base64 chars]"
        );
        assert_eq!(elide_data_urls("no url"), "no url");
    }

    /// Frames are kept newest first within the budget; the older ones that do not fit, and
    /// the ones whose blob is missing, each become one notice per run, in their place.
    #[test]
    fn frames_over_the_budget_or_missing_become_notices_in_their_place() {
        let frame = |data: String| serde_json::json!({"data": data, "mimeType": "image/png", "cols": 1, "rows": 1, "chars": 1, "font": "f"});
        let big = "A".repeat(1_200_000);
        let missing = format!("{}{}", blobs::PREFIX, "0".repeat(64));
        let preserve = serde_json::json!({"snapcompact": {
            "frames": [frame(big.clone()), frame(big.clone()), frame(missing), frame(big.clone()), frame(big)],
            "textHead": "head", "textTail": "tail"}});
        let blocks = history_blocks(Some(&preserve), None).unwrap();
        let kinds: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["text", "text", "text", "image", "image", "text"]);
        assert_eq!(blocks[0]["text"], "head\n-------------- imaged middle below\n");
        assert_eq!(
            blocks[1]["text"],
            "-------------- snapcompact image middle omitted\n2 archived image frames could not be included. 2.4 MB of base64 exceeded the per-request snapcompact payload budget. The compacted summary and visible text edges remain available.\n--------------"
        );
        assert_eq!(blocks[2]["text"], "-------------- 1 archived image frame unavailable here --------------");
        assert_eq!(blocks[5]["text"], "-------------- imaged middle above\ntail");
        // The tail follows the last frame as a block of its own.
        let tail =
            history_blocks(Some(&serde_json::json!({"snapcompact": {"textTail": "t", "truncatedChars": 5}})), None);
        assert_eq!(
            tail.unwrap(),
            [serde_json::json!({"type": "text", "text": "\n-------------- middle history omitted above\nt"})]
        );
        assert!(history_blocks(Some(&serde_json::json!({"snapcompact": {"frames": []}})), None).is_none());
    }

    #[test]
    fn bytes_are_formatted_as_omp_does() {
        assert_eq!(format_bytes(999), "999 B");
        assert_eq!(format_bytes(1_250), "1.3 KB");
        assert_eq!(format_bytes(3_050_000), "3.0 MB");
        assert_eq!(format_bytes(1_250_000), "1.3 MB");
    }
}
