//! grep (grep.js) natively: `ignore` walks as ripgrep does (hidden files, .gitignore in git
//! repositories, .ignore/.rgignore), `--glob` becomes an override, `grep-regex` +
//! `grep-searcher` search with line numbers, context and ripgrep's binary-file skipping.
//! Files are searched in path order (rg's order is not fixed either).

use std::path::{Path, PathBuf};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde_json::{json, Map, Value};

use super::common::{
    format_size, resolve_to_cwd, truncate_head, truncate_line, DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, NO_LINE_LIMIT,
};
use super::ls::effective_limit;
use super::{arg_f64, arg_str, declaration, Tool, ToolContext, ToolOutput};

pub struct GrepTool;

/// One ripgrep event: match or context line.
struct Event {
    line: u64,
    text: String,
    is_match: bool,
}

struct Collect<'a>(&'a mut Vec<Event>);

impl Sink for Collect<'_> {
    type Error = std::io::Error;
    fn matched(&mut self, _: &grep_searcher::Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        // A multi-line match reports its first line, as rg's JSON `lines`; pi keeps it whole.
        self.0.push(Event {
            line: m.line_number().unwrap_or(0),
            text: String::from_utf8_lossy(m.bytes()).into_owned(),
            is_match: true,
        });
        Ok(true)
    }
    fn context(&mut self, _: &grep_searcher::Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.0.push(Event {
            line: c.line_number().unwrap_or(0),
            text: String::from_utf8_lossy(c.bytes()).into_owned(),
            is_match: false,
        });
        Ok(true)
    }
}

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn declaration(&self) -> Value {
        declaration(
            "grep",
            "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.",
            json!({"type":"object","required":["pattern"],"properties":{
                "pattern":{"type":"string","description":"Search pattern (regex or literal string)"},
                "path":{"type":"string","description":"Directory or file to search (default: current directory)"},
                "glob":{"type":"string","description":"Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},
                "ignoreCase":{"type":"boolean","description":"Case-insensitive search (default: false)"},
                "literal":{"type":"boolean","description":"Treat pattern as literal string instead of regex (default: false)"},
                "context":{"type":"number","description":"Number of lines to show before and after each match (default: 0)"},
                "limit":{"type":"number","description":"Maximum number of matches to return (default: 100)"}}}),
            false,
        )
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        let pattern = arg_str(args, "pattern").unwrap_or("");
        let search = resolve_to_cwd(
            arg_str(args, "path").filter(|p| !p.is_empty()).unwrap_or("."),
            &ctx.cwd,
            ctx.home.as_deref(),
        );
        let Ok(meta) = std::fs::metadata(&search) else {
            return ToolOutput::error(format!("Path not found: {}", search.display()));
        };
        let is_dir = meta.is_dir();
        let context = arg_f64(args, "context").filter(|c| *c > 0.0).map(|c| c.floor() as usize).unwrap_or(0);
        let limit = effective_limit(arg_f64(args, "limit"), 100.0);
        let matcher = match RegexMatcherBuilder::new()
            .case_insensitive(args["ignoreCase"] == true)
            .fixed_strings(args["literal"] == true)
            .build(pattern)
        {
            Ok(m) => m,
            Err(e) => return ToolOutput::error(format!("rg: {e}")),
        };
        let files = match walk(&search, is_dir, arg_str(args, "glob")) {
            Ok(f) => f,
            Err(e) => return ToolOutput::error(e),
        };
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .binary_detection(BinaryDetection::quit(0))
            .build();

        let mut lines: Vec<String> = Vec::new();
        let (mut out_bytes, mut match_count) = (0usize, 0usize);
        let (mut limit_reached, mut lines_truncated) = (false, false);
        'files: for file in files {
            if ctx.aborted() {
                return ToolOutput::error("Operation aborted");
            }
            let mut events = Vec::new();
            if searcher.search_path(&matcher, &file, Collect(&mut events)).is_err() {
                continue;
            }
            let rel = if is_dir {
                file.strip_prefix(&search).map(|r| r.to_string_lossy().into_owned()).unwrap_or_default()
            } else {
                file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            };
            let mut trailing_end = 0u64;
            let mut push = |e: &Event, is_match: bool, lines: &mut Vec<String>, out_bytes: &mut usize| {
                let text = e.text.strip_suffix('\n').unwrap_or(&e.text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                let (t, cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
                lines_truncated |= cut;
                let line = if is_match { format!("{rel}:{}: {t}", e.line) } else { format!("{rel}-{}- {t}", e.line) };
                *out_bytes += line.len() + 1;
                lines.push(line);
            };
            for e in &events {
                if match_count < limit {
                    push(e, e.is_match, &mut lines, &mut out_bytes);
                    if e.is_match {
                        match_count += 1;
                        if match_count >= limit {
                            trailing_end = e.line + context as u64;
                        }
                    }
                    continue;
                }
                // After the limit: the last match's trailing context, then stop.
                let in_window = e.line <= trailing_end;
                if in_window {
                    push(e, false, &mut lines, &mut out_bytes);
                }
                if e.is_match {
                    limit_reached = true;
                }
                if limit_reached && !(in_window && e.line < trailing_end) {
                    break 'files;
                }
            }
        }
        if match_count == 0 {
            return ToolOutput::text("No matches found");
        }
        let raw = lines.join("\n");
        let mut t = truncate_head(&raw, NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
        t.total_lines = lines.len();
        t.total_bytes = out_bytes.saturating_sub(1);
        let mut output = t.content.clone();
        let mut details = Map::new();
        let mut notices = Vec::new();
        if limit_reached {
            notices.push(format!("{limit} matches limit reached. Use limit={} for more, or refine pattern", limit * 2));
            details.insert("matchLimitReached".into(), json!(limit));
        }
        if t.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), t.to_json());
        }
        if lines_truncated {
            notices
                .push(format!("Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"));
            details.insert("linesTruncated".into(), json!(true));
        }
        if !notices.is_empty() {
            output += &format!("\n\n[{}]", notices.join(". "));
        }
        ToolOutput::text(output).with_details((!details.is_empty()).then_some(Value::Object(details)))
    }
}

/// The files rg would search under `root` (`--hidden`, ignore files, `--glob` relative to
/// the root with a leading `./` dropped), sorted by path.
pub(crate) fn walk(root: &Path, is_dir: bool, glob: Option<&str>) -> Result<Vec<PathBuf>, String> {
    if !is_dir {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut builder = ignore::WalkBuilder::new(root);
    builder.hidden(false).sort_by_file_path(|a, b| a.cmp(b));
    if let Some(g) = glob {
        let (neg, rest) = match g.strip_prefix('!') {
            Some(r) => ("!", r),
            None => ("", g),
        };
        let mut rest = rest;
        while let Some(r) = rest.strip_prefix("./") {
            rest = r;
        }
        let mut ob = ignore::overrides::OverrideBuilder::new(root);
        ob.add(&format!("{neg}{rest}")).map_err(|e| format!("rg: {e}"))?;
        builder.overrides(ob.build().map_err(|e| format!("rg: {e}"))?);
    }
    Ok(builder
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(p.join("target")).unwrap();
        std::fs::write(p.join("target/out.rs"), "fn hidden_by_gitignore() {}\n").unwrap();
        std::fs::write(p.join("src/a.rs"), "fn main() {}\nlet x = 1;\nfn helper() {}\n").unwrap();
        std::fs::write(p.join("b.txt"), "fn in text\n").unwrap();
        dir
    }

    #[test]
    fn matches_context_glob_and_gitignore() {
        let dir = setup();
        let ctx = ToolContext::new(dir.path());
        let run = |a: Value| GrepTool.run(&a, &ctx);
        assert_eq!(
            run(json!({"pattern":"fn"})).first_text(),
            "b.txt:1: fn in text\nsrc/a.rs:1: fn main() {}\nsrc/a.rs:3: fn helper() {}"
        );
        assert_eq!(
            run(json!({"pattern":"fn","glob":"*.rs"})).first_text(),
            "src/a.rs:1: fn main() {}\nsrc/a.rs:3: fn helper() {}"
        );
        assert_eq!(
            run(json!({"pattern":"let","context":1})).first_text(),
            "src/a.rs-1- fn main() {}\nsrc/a.rs:2: let x = 1;\nsrc/a.rs-3- fn helper() {}"
        );
        assert_eq!(
            run(json!({"pattern":"LET","ignoreCase":true,"path":"src/a.rs"})).first_text(),
            "a.rs:2: let x = 1;"
        );
        assert_eq!(
            run(json!({"pattern":"(","literal":true})).first_text(),
            "src/a.rs:1: fn main() {}\nsrc/a.rs:3: fn helper() {}"
        );
        let out = run(json!({"pattern":"fn","limit":1}));
        assert_eq!(
            out.first_text(),
            "b.txt:1: fn in text\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
        );
        assert_eq!(out.details, Some(json!({"matchLimitReached":1})));
        assert_eq!(run(json!({"pattern":"zzz"})).first_text(), "No matches found");
        assert_eq!(
            run(json!({"pattern":"x","path":"nope"})).first_text(),
            format!("Path not found: {}", dir.path().join("nope").display())
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("l.txt"), format!("{}\n", "a".repeat(600))).unwrap();
        let out = GrepTool.run(&json!({"pattern":"a"}), &ToolContext::new(dir.path()));
        assert_eq!(
            out.first_text(),
            format!(
                "l.txt:1: {}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]",
                "a".repeat(500)
            )
        );
    }
}
