//! Helpers shared by the tools: pi's truncation (truncate.js), path resolution
//! (path-utils.js, utils/paths.js) and size formatting.

use std::path::{Component, Path, PathBuf};

/// `DEFAULT_MAX_LINES` in truncate.js.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// `DEFAULT_MAX_BYTES` in truncate.js (50KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// `Number.MAX_SAFE_INTEGER`: the line limit grep, find and ls give `truncateHead` (no
/// line limit, only bytes), as their `details.truncation.maxLines` shows.
pub const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;
/// `GREP_MAX_LINE_LENGTH` in truncate.js (UTF-16 code units).
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// `formatSize`: `<n>B`, `X.YKB` or `X.YMB`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{}KB", crate::session::js::to_fixed1(bytes as f64 / 1024.0))
    } else {
        format!("{}MB", crate::session::js::to_fixed1(bytes as f64 / (1024.0 * 1024.0)))
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<&'static str>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    pub last_line_partial: bool,
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Truncation {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("serializable")
    }
}

/// `splitLinesForCounting`: no lines for "", and a trailing newline adds no line.
fn split_lines_for_counting(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    lines
}

impl Truncation {
    /// The content as it is (nothing cut yet), with its counts.
    fn untouched(content: &str, total_lines: usize, max_lines: usize, max_bytes: usize) -> Truncation {
        Truncation {
            content: content.to_string(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: content.len(),
            output_lines: total_lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines,
            max_bytes,
        }
    }
}

/// `truncateHead`: keep the first whole lines within `max_lines` and `max_bytes`.
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines = split_lines_for_counting(content);
    let mut t = Truncation::untouched(content, lines.len(), max_lines, max_bytes);
    if t.total_lines <= max_lines && t.total_bytes <= max_bytes {
        return t;
    }
    t.truncated = true;
    if lines[0].len() > max_bytes {
        t.content = String::new();
        t.truncated_by = Some("bytes");
        t.output_lines = 0;
        t.output_bytes = 0;
        t.first_line_exceeds_limit = true;
        return t;
    }
    let mut out: Vec<&str> = Vec::new();
    let mut bytes = 0usize;
    let mut by = "lines";
    for (i, line) in lines.iter().enumerate() {
        if i >= max_lines {
            break;
        }
        let lb = line.len() + usize::from(i > 0);
        if bytes + lb > max_bytes {
            by = "bytes";
            break;
        }
        out.push(line);
        bytes += lb;
    }
    if out.len() >= max_lines && bytes <= max_bytes {
        by = "lines";
    }
    t.content = out.join("\n");
    t.truncated_by = Some(by);
    t.output_lines = out.len();
    t.output_bytes = t.content.len();
    t
}

/// `truncateTail`: keep the last lines; a last line over the byte limit is cut from its end.
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines = split_lines_for_counting(content);
    let mut t = Truncation::untouched(content, lines.len(), max_lines, max_bytes);
    if t.total_lines <= max_lines && t.total_bytes <= max_bytes {
        return t;
    }
    t.truncated = true;
    let mut out: Vec<String> = Vec::new();
    let mut bytes = 0usize;
    let mut by = "lines";
    for line in lines.iter().rev() {
        if out.len() >= max_lines {
            break;
        }
        let lb = line.len() + usize::from(!out.is_empty());
        if bytes + lb > max_bytes {
            by = "bytes";
            if out.is_empty() {
                let cut = truncate_str_to_bytes_from_end(line, max_bytes);
                bytes = cut.len();
                out.push(cut.to_string());
                t.last_line_partial = true;
            }
            break;
        }
        out.push(line.to_string());
        bytes += lb;
    }
    out.reverse();
    if out.len() >= max_lines && bytes <= max_bytes {
        by = "lines";
    }
    t.content = out.join("\n");
    t.truncated_by = Some(by);
    t.output_lines = out.len();
    t.output_bytes = t.content.len();
    t
}

fn truncate_str_to_bytes_from_end(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut start = s.len() - max_bytes;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// `truncateLine`: at most `max` UTF-16 code units, then `... [truncated]`; never splits a
/// character (so never a surrogate pair).
pub fn truncate_line(line: &str, max: usize) -> (String, bool) {
    let units: usize = line.chars().map(char::len_utf16).sum();
    if units <= max {
        return (line.to_string(), false);
    }
    let mut n = 0;
    let mut end = 0;
    for (i, c) in line.char_indices() {
        if n + c.len_utf16() > max {
            break;
        }
        n += c.len_utf16();
        end = i + c.len_utf8();
    }
    (format!("{}... [truncated]", &line[..end]), true)
}

fn is_unicode_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

/// `resolveToCwd`: normalise Unicode spaces, strip a leading `@`, expand `~`, accept
/// `file://` URLs, and resolve against `cwd` (Node's `path.resolve`: lexical, `..` folded).
pub fn resolve_to_cwd(input: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let mut s: String = input.chars().map(|c| if is_unicode_space(c) { ' ' } else { c }).collect();
    if let Some(rest) = s.strip_prefix('@') {
        s = rest.to_string();
    }
    let expanded: PathBuf = if s == "~" {
        home.map_or_else(|| PathBuf::from("~"), Path::to_path_buf)
    } else if let (Some(rest), Some(h)) = (s.strip_prefix("~/"), home) {
        h.join(rest)
    } else if let Some(rest) = s.strip_prefix("file://") {
        PathBuf::from(percent_decode(rest))
    } else {
        PathBuf::from(&s)
    };
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    normalize_lexically(&joined)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Node's `path.resolve` normalisation: drop `.`, fold `..`, no trailing slash.
pub fn normalize_lexically(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// `resolveReadPath`: the resolved path, or the first macOS variant of it that exists: the
/// narrow no-break space before AM/PM (`/ (AM|PM)\./gi`), the NFD form, curly apostrophes,
/// NFD with curly apostrophes.
pub fn resolve_read_path(input: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    use unicode_normalization::UnicodeNormalization;
    let resolved = resolve_to_cwd(input, cwd, home);
    if resolved.exists() {
        return resolved;
    }
    let s = resolved.to_string_lossy().to_string();
    let nfd: String = s.nfd().collect();
    let curly = |t: &str| t.replace('\'', "\u{2019}");
    let variants = [am_pm_variant(&s), nfd.clone(), curly(&s), curly(&nfd)];
    variants.into_iter().find(|v| *v != s && Path::new(v).exists()).map_or(resolved, PathBuf::from)
}

/// `filePath.replace(/ (AM|PM)\./gi, "\u202F$1.")`: the match keeps its own case.
fn am_pm_variant(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(' ') {
        let after = &rest[i + 1..];
        let hit = after.get(..3).filter(|m| {
            let b = m.as_bytes();
            matches!(b[0], b'A' | b'a' | b'P' | b'p') && matches!(b[1], b'M' | b'm') && b[2] == b'.'
        });
        out.push_str(&rest[..i]);
        match hit {
            Some(m) => {
                out.push('\u{202F}');
                out.push_str(m);
                rest = &after[3..];
            }
            None => {
                out.push(' ');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Node's fs error code for an io error (`ENOENT`, `EACCES`, …).
pub fn error_code(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind::*;
    match e.raw_os_error() {
        Some(2) => return "ENOENT",
        Some(13) => return "EACCES",
        Some(21) => return "EISDIR",
        Some(20) => return "ENOTDIR",
        Some(1) => return "EPERM",
        _ => {}
    }
    match e.kind() {
        NotFound => "ENOENT",
        PermissionDenied => "EACCES",
        _ => "EIO",
    }
}

/// Node's message for a failed fs call: `ENOENT: no such file or directory, open '<p>'`.
pub fn node_fs_error(e: &std::io::Error, syscall: &str, path: &Path) -> String {
    let code = error_code(e);
    let desc = match code {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EISDIR" => "illegal operation on a directory",
        "ENOTDIR" => "not a directory",
        "EPERM" => "operation not permitted",
        _ => return format!("{e}"),
    };
    // Node names the path for calls that take one; `read` works on an open descriptor.
    if syscall == "read" {
        return format!("{code}: {desc}, {syscall}");
    }
    format!("{code}: {desc}, {syscall} '{}'", path.display())
}

/// Standard base64 (RFC 4648, with padding), for image blocks.
pub fn base64_encode(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_pi() {
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(1536), "1.5KB");
        assert_eq!(format_size(3 * 1024 * 1024), "3.0MB");
    }

    #[test]
    fn head_and_tail() {
        let t = truncate_head("a\nb\nc\n", 2, 100);
        assert_eq!((t.content.as_str(), t.truncated_by, t.total_lines), ("a\nb", Some("lines"), 3));
        let t = truncate_tail("a\nb\nc\n", 2, 100);
        assert_eq!(t.content, "b\nc");
        let t = truncate_tail("xxxxyyyy", 10, 4);
        assert_eq!((t.content.as_str(), t.last_line_partial), ("yyyy", true));
        let t = truncate_head("xxxxyyyy\nz", 10, 4);
        assert!(t.first_line_exceeds_limit);
    }

    #[test]
    fn line_truncation_keeps_characters_whole() {
        let s = format!("{}😀", "a".repeat(499));
        assert_eq!(truncate_line(&s, 500), (format!("{}... [truncated]", "a".repeat(499)), true));
    }

    #[test]
    fn paths() {
        let cwd = Path::new("/w/p");
        assert_eq!(resolve_to_cwd("@src/a.rs", cwd, None), PathBuf::from("/w/p/src/a.rs"));
        assert_eq!(resolve_to_cwd("../x", cwd, None), PathBuf::from("/w/x"));
        assert_eq!(resolve_to_cwd("/etc/./hosts", cwd, None), PathBuf::from("/etc/hosts"));
        assert_eq!(resolve_to_cwd(".", cwd, None), PathBuf::from("/w/p"));
    }

    #[test]
    fn base64() {
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"f"), "Zg==");
    }
}
