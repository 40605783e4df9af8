//! ls (ls.js): entries sorted case-insensitively, `/` after directories, dotfiles included.

use serde_json::{json, Map, Value};

use super::common::{format_size, resolve_to_cwd, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};
use super::{arg_f64, arg_str, declaration, Tool, ToolContext, ToolOutput};

pub struct LsTool;

const DEFAULT_LIMIT: f64 = 500.0;

impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn declaration(&self) -> Value {
        declaration(
            "ls",
            "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).",
            json!({"type":"object","properties":{
                "path":{"type":"string","description":"Directory to list (default: current directory)"},
                "limit":{"type":"number","description":"Maximum number of entries to return (default: 500)"}}}),
            false,
        )
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        let path = arg_str(args, "path").filter(|p| !p.is_empty()).unwrap_or(".");
        let dir = resolve_to_cwd(path, &ctx.cwd, ctx.home.as_deref());
        let limit = effective_limit(arg_f64(args, "limit"), DEFAULT_LIMIT);
        let Ok(meta) = std::fs::metadata(&dir) else {
            return ToolOutput::error(format!("Path not found: {}", dir.display()));
        };
        if !meta.is_dir() {
            return ToolOutput::error(format!("Not a directory: {}", dir.display()));
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                return ToolOutput::error(format!(
                    "Cannot read directory: {}",
                    super::common::node_fs_error(&e, "scandir", &dir)
                ))
            }
        };
        let mut names: Vec<String> =
            entries.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        // Node lists a directory in byte order (libuv's scandir), then pi sorts (stably) by
        // `a.toLowerCase().localeCompare(b.toLowerCase())`.
        names.sort();
        names.sort_by_cached_key(|n| collation_key(&n.to_lowercase()));
        let mut results = Vec::new();
        let mut limit_reached = false;
        for name in names {
            if results.len() >= limit {
                limit_reached = true;
                break;
            }
            // stat follows symlinks; an entry that cannot be stat'ed (dangling link) is skipped.
            match std::fs::metadata(dir.join(&name)) {
                Ok(m) if m.is_dir() => results.push(format!("{name}/")),
                Ok(_) => results.push(name),
                Err(_) => continue,
            }
        }
        if results.is_empty() {
            return ToolOutput::text("(empty directory)");
        }
        let truncation = truncate_head(&results.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
        let mut output = truncation.content.clone();
        let mut details = Map::new();
        let mut notices = Vec::new();
        if limit_reached {
            notices.push(format!("{limit} entries limit reached. Use limit={} for more", limit * 2));
            details.insert("entryLimitReached".into(), json!(limit));
        }
        if truncation.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), truncation.to_json());
        }
        if !notices.is_empty() {
            output += &format!("\n\n[{}]", notices.join(". "));
        }
        ToolOutput::text(output).with_details((!details.is_empty()).then_some(Value::Object(details)))
    }
}

/// `Math.max(1, Math.floor(limit ?? DEFAULT))`.
pub(crate) fn effective_limit(limit: Option<f64>, default: f64) -> usize {
    let l = limit.unwrap_or(default).floor();
    if l.is_nan() || l < 1.0 {
        1
    } else {
        l.min(usize::MAX as f64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_sorted_with_dirs_and_dotfiles() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("b.txt"), "").unwrap();
        std::fs::write(p.join("A.txt"), "").unwrap();
        std::fs::write(p.join(".hidden"), "").unwrap();
        std::fs::create_dir(p.join("src")).unwrap();
        let ctx = ToolContext::new(p);
        assert_eq!(LsTool.run(&json!({}), &ctx).first_text(), ".hidden\nA.txt\nb.txt\nsrc/");
        let out = LsTool.run(&json!({"limit": 2}), &ctx);
        assert_eq!(out.first_text(), ".hidden\nA.txt\n\n[2 entries limit reached. Use limit=4 for more]");
        assert_eq!(out.details, Some(json!({"entryLimitReached": 2})));
        assert_eq!(LsTool.run(&json!({"path":"src"}), &ctx).first_text(), "(empty directory)");
        let out = LsTool.run(&json!({"path":"nope"}), &ctx);
        assert!(out.is_error);
        assert_eq!(out.first_text(), format!("Path not found: {}", p.join("nope").display()));
        assert_eq!(
            LsTool.run(&json!({"path":"b.txt"}), &ctx).first_text(),
            format!("Not a directory: {}", p.join("b.txt").display())
        );
    }
}

/// `String.prototype.localeCompare`'s order (ICU's root collation, which Node's `en-US`
/// uses) as a sort key, for what file names hold: every printable ASCII character at its
/// root-collation place (spaces, then punctuation and symbols in ICU's order, digits, then
/// letters with case a tertiary difference), accents a secondary difference (after NFD),
/// and anything else after the letters by code point.
fn collation_key(s: &str) -> (Vec<u32>, Vec<Vec<char>>, Vec<bool>) {
    use unicode_normalization::char::is_combining_mark;
    use unicode_normalization::UnicodeNormalization;
    const ORDER: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
    let (mut primary, mut secondary, mut tertiary) = (Vec::new(), Vec::<Vec<char>>::new(), Vec::new());
    for c in s.nfd() {
        if is_combining_mark(c) {
            if let Some(marks) = secondary.last_mut() {
                marks.push(c);
            }
            continue;
        }
        let lower = c.to_ascii_lowercase();
        primary.push(ORDER.find(lower).map_or(0x1000 + c as u32, |i| i as u32));
        secondary.push(Vec::new());
        tertiary.push(c.is_ascii_uppercase());
    }
    (primary, secondary, tertiary)
}

#[cfg(test)]
mod collation_tests {
    use super::collation_key;

    #[test]
    fn names_sort_as_pi_lists_them() {
        // pi 1.6.0's ls of these names (byte order from the directory, then localeCompare).
        let mut names: Vec<String> = [
            "Zeta.txt",
            "file2.txt",
            "File10.txt",
            "file-b.txt",
            "file_a.txt",
            "éclair.txt",
            "Beta",
            "b.txt",
            "B.txt",
            "alpha.txt",
            "9nine.txt",
            ".dot",
            "_under.txt",
        ]
        .map(String::from)
        .to_vec();
        names.sort();
        names.sort_by_cached_key(|n| collation_key(&n.to_lowercase()));
        let want = [
            "_under.txt",
            ".dot",
            "9nine.txt",
            "alpha.txt",
            "B.txt",
            "b.txt",
            "Beta",
            "éclair.txt",
            "file_a.txt",
            "file-b.txt",
            "File10.txt",
            "file2.txt",
            "Zeta.txt",
        ];
        assert_eq!(names, want);
    }
}
