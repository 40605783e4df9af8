//! find (find.js) natively: what `fd --glob --hidden [--no-require-git]` returns, walked with
//! `ignore` and matched with `globset`. A pattern without `/` matches file names at any
//! depth; a path pattern is anchored at the search directory; an all-lowercase pattern is
//! case-insensitive. Directories are matched too (fd lists them, with a trailing `/`).

use serde_json::{json, Map, Value};

use super::common::{format_size, resolve_to_cwd, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};
use super::ls::effective_limit;
use super::{arg_f64, arg_str, declaration, Tool, ToolContext, ToolOutput};

pub struct FindTool;

impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn declaration(&self) -> Value {
        declaration(
            "find",
            "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).",
            json!({"type":"object","required":["pattern"],"properties":{
                "pattern":{"type":"string","description":"Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},
                "path":{"type":"string","description":"Directory to search in (default: current directory)"},
                "limit":{"type":"number","description":"Maximum number of results (default: 1000)"}}}),
            false,
        )
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        let search = resolve_to_cwd(
            arg_str(args, "path").filter(|p| !p.is_empty()).unwrap_or("."),
            &ctx.cwd,
            ctx.home.as_deref(),
        );
        let limit = effective_limit(arg_f64(args, "limit"), 1000.0);
        if !search.is_dir() {
            // What pi shows: fd's own complaint (pi runs fd; the `Path not found` pi's docs mention
            // is only its fallback without fd).
            return ToolOutput::error(format!(
                "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
                search.display()
            ));
        }
        let mut pattern = arg_str(args, "pattern").unwrap_or("");
        while let Some(r) = pattern.strip_prefix("./") {
            pattern = r;
        }
        let is_path = pattern.contains('/');
        let ignore_case = pattern == pattern.to_lowercase();
        let glob =
            match globset::GlobBuilder::new(pattern).case_insensitive(ignore_case).literal_separator(true).build() {
                Ok(g) => g.compile_matcher(),
                Err(e) => return ToolOutput::error(e.to_string()),
            };
        // fd applies .gitignore outside git repositories too (--no-require-git) unless inside one.
        let mut wb = ignore::WalkBuilder::new(&search);
        wb.hidden(false).require_git(false).sort_by_file_path(|a, b| a.cmp(b));
        let mut results: Vec<String> = Vec::new();
        let mut limit_reached = false;
        let mut out_bytes = 0usize;
        for entry in wb.build().filter_map(Result::ok) {
            if ctx.aborted() {
                return ToolOutput::error("Operation aborted");
            }
            if entry.depth() == 0 {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&search) else { continue };
            let hit =
                if is_path { glob.is_match(rel) } else { entry.path().file_name().is_some_and(|n| glob.is_match(n)) };
            if !hit {
                continue;
            }
            if results.len() == limit {
                limit_reached = true;
                break;
            }
            let mut r = rel.to_string_lossy().replace('\\', "/");
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                r.push('/');
            }
            out_bytes += r.len() + 1;
            results.push(r);
        }
        if results.is_empty() {
            return ToolOutput::text("No files found matching pattern");
        }
        let mut t = truncate_head(&results.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
        t.total_lines = results.len();
        t.total_bytes = out_bytes - 1;
        let mut output = t.content.clone();
        let mut details = Map::new();
        let mut notices = Vec::new();
        if limit_reached {
            notices.push(format!("{limit} results limit reached. Use limit={} for more, or refine pattern", limit * 2));
            details.insert("resultLimitReached".into(), json!(limit));
        }
        if t.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), t.to_json());
        }
        if !notices.is_empty() {
            output += &format!("\n\n[{}]", notices.join(". "));
        }
        ToolOutput::text(output).with_details((!details.is_empty()).then_some(Value::Object(details)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_paths_gitignore_and_limits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in ["src/a.ts", "src/B.ts", "pkg/src/c.ts", "dist/d.ts", ".hidden/e.ts"] {
            std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            std::fs::write(p.join(f), "").unwrap();
        }
        std::fs::write(p.join(".gitignore"), "dist/\n").unwrap();
        let ctx = ToolContext::new(p);
        let run = |a: Value| FindTool.run(&a, &ctx);
        assert_eq!(run(json!({"pattern":"*.ts"})).first_text(), ".hidden/e.ts\npkg/src/c.ts\nsrc/B.ts\nsrc/a.ts");
        assert_eq!(run(json!({"pattern":"src/*.ts"})).first_text(), "src/B.ts\nsrc/a.ts");
        assert_eq!(run(json!({"pattern":"**/src/*.ts"})).first_text(), "pkg/src/c.ts\nsrc/B.ts\nsrc/a.ts");
        assert_eq!(run(json!({"pattern":"b.ts"})).first_text(), "src/B.ts");
        assert_eq!(run(json!({"pattern":"B.TS"})).first_text(), "No files found matching pattern");
        let out = run(json!({"pattern":"*.ts","limit":1}));
        assert_eq!(
            out.first_text(),
            ".hidden/e.ts\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]"
        );
        assert_eq!(
            run(json!({"pattern":"*","path":"nope"})).first_text(),
            format!(
                "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
                p.join("nope").display()
            )
        );
    }
}
