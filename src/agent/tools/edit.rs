//! edit (edit.js, edit-diff.js): `edits[]` matched against the original content, exact
//! first, then fuzzy; uniqueness, overlap and no-change errors; the BOM and line endings kept
//! (only replaced ranges get new bytes, so mixed CRLF/LF files keep their other endings).

use serde_json::{json, Value};

use super::common::{error_code, node_fs_error, resolve_to_cwd};
use super::{arg_str, declaration, Tool, ToolContext, ToolOutput};

pub struct EditTool;

#[derive(Debug, Clone)]
struct Replacement {
    edit_index: usize,
    start: usize,
    len: usize,
    new_text: String,
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn declaration(&self) -> Value {
        declaration(
            "edit",
            "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
            json!({"type":"object","required":["path","edits"],"properties":{
                "path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},
                "edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{
                    "oldText":{"type":"string","description":"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
                    "newText":{"type":"string","description":"Replacement text for this targeted edit."}}},
                    "description":"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."}}}),
            true,
        )
    }

    /// `prepareEditArguments`: a stringified `edits`, a single edit object, and the legacy
    /// top-level `oldText`/`newText` (appended to `edits`) become `edits[]`.
    fn prepare_arguments(&self, args: Value) -> Value {
        let Value::Object(mut m) = args else { return args };
        let is_single = |v: &Value| v.is_object() && v["oldText"].is_string() && v["newText"].is_string();
        if let Some(Value::String(s)) = m.get("edits") {
            if let Ok(parsed) = serde_json::from_str::<Value>(s) {
                if parsed.is_array() {
                    m.insert("edits".into(), parsed);
                } else if is_single(&parsed) {
                    m.insert("edits".into(), Value::Array(vec![parsed]));
                }
            }
        } else if let Some(e) = m.get("edits").filter(|e| is_single(e)).cloned() {
            m.insert("edits".into(), Value::Array(vec![e]));
        }
        if !(m.get("oldText").is_some_and(Value::is_string) && m.get("newText").is_some_and(Value::is_string)) {
            return Value::Object(m);
        }
        let mut edits = m.get("edits").and_then(Value::as_array).cloned().unwrap_or_default();
        let old = m.remove("oldText").unwrap();
        let new = m.remove("newText").unwrap();
        edits.push(json!({"oldText": old, "newText": new}));
        m.insert("edits".into(), Value::Array(edits));
        Value::Object(m)
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        let path = arg_str(args, "path").unwrap_or("");
        let edits: Vec<(String, String)> = args["edits"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e["oldText"].as_str().unwrap_or("").to_string(),
                            e["newText"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if edits.is_empty() {
            return ToolOutput::error("Edit tool input is invalid. edits must contain at least one replacement.");
        }
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        let abs = resolve_to_cwd(path, &ctx.cwd, ctx.home.as_deref());
        // access(R_OK | W_OK) first: a missing or read-only file cannot be edited. A
        // directory passes it, and reading it then fails with Node's own message.
        let access = std::fs::metadata(&abs).and_then(|m| {
            if m.permissions().readonly() {
                Err(std::io::Error::from_raw_os_error(13))
            } else {
                Ok(())
            }
        });
        if let Err(e) = access {
            return ToolOutput::error(format!("Could not edit file: {path}. Error code: {}.", error_code(&e)));
        }
        let bytes = match std::fs::read(&abs) {
            Ok(b) => b,
            Err(e) => return ToolOutput::error(node_fs_error(&e, "read", &abs)),
        };
        let raw = String::from_utf8_lossy(&bytes).into_owned();
        let (bom, content) = match raw.strip_prefix('\u{FEFF}') {
            Some(rest) => ("\u{FEFF}", rest),
            None => ("", raw.as_str()),
        };
        let normalized = normalize_to_lf(content);
        let (new_content, replacements) = match apply_edits(&normalized, &edits, path) {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(e),
        };
        let details = edit_details(path, &normalized, &new_content);
        let final_content = if content == normalized {
            format!("{bom}{new_content}")
        } else {
            format!("{bom}{}", apply_replacements_to_original(content, &replacements))
        };
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        if let Err(e) = std::fs::write(&abs, final_content) {
            return ToolOutput::error(e.to_string());
        }
        ToolOutput::text(format!("Successfully replaced {} block(s) in {path}.", edits.len()))
            .with_details(Some(details))
    }
}

pub fn normalize_to_lf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\r', "\n")
}

/// `normalizeForFuzzyMatch`: NFKC, trailing whitespace per line, smart quotes, Unicode
/// dashes and spaces.
pub fn normalize_for_fuzzy(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfkc()
        .collect::<String>()
        .split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// `fuzzyFindText`: (index, length, used fuzzy).
fn fuzzy_find(content: &str, old: &str) -> Option<(usize, usize, bool)> {
    if let Some(i) = content.find(old) {
        return Some((i, old.len(), false));
    }
    let fc = normalize_for_fuzzy(content);
    let fo = normalize_for_fuzzy(old);
    fc.find(&fo).map(|i| (i, fo.len(), true))
}

/// `applyEditsToNormalizedContent`: the new content and the replacements (on `normalized`).
fn apply_edits(normalized: &str, edits: &[(String, String)], path: &str) -> Result<(String, Vec<Replacement>), String> {
    let n = edits.len();
    let edits: Vec<(String, String)> = edits.iter().map(|(o, nw)| (normalize_to_lf(o), normalize_to_lf(nw))).collect();
    for (i, (old, _)) in edits.iter().enumerate() {
        if old.is_empty() {
            return Err(if n == 1 {
                format!("oldText must not be empty in {path}.")
            } else {
                format!("edits[{i}].oldText must not be empty in {path}.")
            });
        }
    }
    let used_fuzzy = edits.iter().any(|(o, _)| fuzzy_find(normalized, o).is_some_and(|m| m.2));
    let base = if used_fuzzy { normalize_for_fuzzy(normalized) } else { normalized.to_string() };
    let mut matched = Vec::new();
    for (i, (old, new)) in edits.iter().enumerate() {
        let Some((start, len, _)) = fuzzy_find(&base, old) else {
            return Err(if n == 1 {
                format!("Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.")
            } else {
                format!("Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines.")
            });
        };
        let occurrences = normalize_for_fuzzy(&base).matches(&normalize_for_fuzzy(old)).count();
        if occurrences > 1 {
            return Err(if n == 1 {
                format!("Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique.")
            } else {
                format!("Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique.")
            });
        }
        matched.push(Replacement { edit_index: i, start, len, new_text: new.clone() });
    }
    matched.sort_by_key(|r| r.start);
    for w in matched.windows(2) {
        if w[0].start + w[0].len > w[1].start {
            return Err(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                w[0].edit_index, w[1].edit_index
            ));
        }
    }
    let replacements = if used_fuzzy { widen_to_lines(normalized, &base, &matched)? } else { matched };
    let new_content = apply_replacements(normalized, &replacements, 0);
    if new_content == normalized {
        return Err(if n == 1 {
            format!("No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")
        } else {
            format!("No changes made to {path}. The replacements produced identical content.")
        });
    }
    Ok((new_content, replacements))
}

fn apply_replacements(content: &str, reps: &[Replacement], offset: usize) -> String {
    let mut out = content.to_string();
    for r in reps.iter().rev() {
        let s = r.start - offset;
        out.replace_range(s..s + r.len, &r.new_text);
    }
    out
}

/// Line spans `[start, end)` including each line's `\n` (`/[^\n]*\n|[^\n]+/g`).
fn line_spans(s: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, _) in s.match_indices('\n') {
        spans.push((start, i + 1));
        start = i + 1;
    }
    if start < s.len() {
        spans.push((start, s.len()));
    }
    spans
}

/// `widenReplacementsToLines`: fuzzy matches rewrite only the lines they touch, from the
/// fuzzy-normalised base; other lines keep their original text.
fn widen_to_lines(original: &str, base: &str, reps: &[Replacement]) -> Result<Vec<Replacement>, String> {
    let ol = line_spans(original);
    let bl = line_spans(base);
    if ol.len() != bl.len() {
        return Err("Cannot preserve unchanged lines because the base content has a different line count.".into());
    }
    let mut groups: Vec<(usize, usize, Vec<Replacement>)> = Vec::new();
    for r in reps {
        let start_line = bl
            .iter()
            .position(|&(s, e)| r.start >= s && r.start < e)
            .ok_or("Replacement range is outside the base content.")?;
        let mut end_line = start_line;
        while end_line < bl.len() && bl[end_line].1 < r.start + r.len {
            end_line += 1;
        }
        if end_line >= bl.len() {
            return Err("Replacement range is outside the base content.".into());
        }
        let end_line = end_line + 1;
        if let Some(g) = groups.last_mut().filter(|g| start_line < g.1) {
            g.1 = g.1.max(end_line);
            g.2.push(r.clone());
            continue;
        }
        groups.push((start_line, end_line, vec![r.clone()]));
    }
    Ok(groups
        .into_iter()
        .map(|(sl, el, rs)| {
            let (gs, ge) = (bl[sl].0, bl[el - 1].1);
            Replacement {
                edit_index: rs[0].edit_index,
                start: ol[sl].0,
                len: ol[el - 1].1 - ol[sl].0,
                new_text: apply_replacements(&base[gs..ge], &rs, gs),
            }
        })
        .collect())
}

/// `applyReplacementsToOriginal`: map LF offsets back to the CRLF original; new line breaks
/// take the ending of the line where the replaced range starts.
fn apply_replacements_to_original(original: &str, reps: &[Replacement]) -> String {
    let crlf: Vec<usize> = original.match_indices("\r\n").map(|(i, _)| i).collect();
    // Offset in the LF text -> offset in the original: add the CRLFs before it.
    let to_original = |off: usize| {
        let before = crlf.iter().enumerate().take_while(|&(k, &p)| p - k < off).count();
        off + before
    };
    let mut parts = String::new();
    let mut ends_with_cr = false;
    let mut push = |part: &str, parts: &mut String| {
        if part.is_empty() {
            return;
        }
        if ends_with_cr && part.starts_with('\n') {
            parts.push('\n');
        }
        parts.push_str(part);
        ends_with_cr = part.ends_with('\r');
    };
    let mut pos = 0;
    for r in reps {
        let start = to_original(r.start);
        push(&original[pos..start], &mut parts);
        let ending = line_ending_at(original, start);
        let text = if ending == "\n" { r.new_text.clone() } else { r.new_text.replace('\n', ending) };
        push(&text, &mut parts);
        pos = to_original(r.start + r.len);
    }
    push(&original[pos..], &mut parts);
    parts
}

fn line_ending_at(content: &str, offset: usize) -> &'static str {
    let lf =
        content[offset..].find('\n').map(|i| i + offset).or_else(|| content[..offset.min(content.len())].rfind('\n'));
    match lf {
        None => {
            if content.contains('\r') {
                "\r"
            } else {
                "\n"
            }
        }
        Some(i) if i > 0 && content.as_bytes()[i - 1] == b'\r' => "\r\n",
        Some(_) => "\n",
    }
}

/// `{diff, patch, firstChangedLine}`: the display diff (`formatDisplayDiff`, 4 context
/// lines, `+N line` / `-N line` / ` N line` / `   ...`) and a unified patch.
fn edit_details(path: &str, old: &str, new: &str) -> Value {
    use similar::{ChangeTag, TextDiff};
    let td = TextDiff::from_lines(old, new);
    // Group changes into jsdiff-like parts: (tag, lines).
    let mut parts: Vec<(ChangeTag, Vec<String>)> = Vec::new();
    for ch in td.iter_all_changes() {
        let line = ch.value().strip_suffix('\n').unwrap_or(ch.value()).to_string();
        match parts.last_mut() {
            Some((t, ls)) if *t == ch.tag() => ls.push(line),
            _ => parts.push((ch.tag(), vec![line])),
        }
    }
    let width = old.split('\n').count().max(new.split('\n').count()).to_string().len();
    let ctx = 4;
    let (mut o, mut n) = (1usize, 1usize);
    let mut out: Vec<String> = Vec::new();
    let mut first: Option<usize> = None;
    let mut last_change = false;
    let skip = format!(" {} ...", " ".repeat(width));
    for i in 0..parts.len() {
        let (tag, lines) = &parts[i];
        match tag {
            ChangeTag::Insert | ChangeTag::Delete => {
                first.get_or_insert(n);
                for l in lines {
                    if *tag == ChangeTag::Insert {
                        out.push(format!("+{n:>width$} {l}"));
                        n += 1;
                    } else {
                        out.push(format!("-{o:>width$} {l}"));
                        o += 1;
                    }
                }
                last_change = true;
            }
            ChangeTag::Equal => {
                let next_change = i + 1 < parts.len();
                let show = |ls: &[String], o: &mut usize, n: &mut usize, out: &mut Vec<String>| {
                    for l in ls {
                        out.push(format!(" {o:>width$} {l}"));
                        *o += 1;
                        *n += 1;
                    }
                };
                let len = lines.len();
                if last_change && next_change {
                    if len <= ctx * 2 {
                        show(lines, &mut o, &mut n, &mut out);
                    } else {
                        show(&lines[..ctx], &mut o, &mut n, &mut out);
                        out.push(skip.clone());
                        o += len - 2 * ctx;
                        n += len - 2 * ctx;
                        show(&lines[len - ctx..], &mut o, &mut n, &mut out);
                    }
                } else if last_change {
                    let shown = len.min(ctx);
                    show(&lines[..shown], &mut o, &mut n, &mut out);
                    if len > shown {
                        out.push(skip.clone());
                        o += len - shown;
                        n += len - shown;
                    }
                } else if next_change {
                    let skipped = len.saturating_sub(ctx);
                    if skipped > 0 {
                        out.push(skip.clone());
                        o += skipped;
                        n += skipped;
                    }
                    show(&lines[skipped..], &mut o, &mut n, &mut out);
                } else {
                    o += len;
                    n += len;
                }
                last_change = false;
            }
        }
    }
    let patch = jsdiff_hunk_headers(&td.unified_diff().context_radius(4).header(path, path).to_string());
    let mut d = serde_json::Map::new();
    d.insert("diff".into(), json!(out.join("\n")));
    d.insert("patch".into(), json!(patch));
    if let Some(f) = first {
        d.insert("firstChangedLine".into(), json!(f));
    }
    Value::Object(d)
}

/// The `diff` package writes every hunk range with its count (`@@ -1,1 +1,1 @@`), where a
/// unified diff may leave out a count of 1 (`@@ -1 +1 @@`, as `similar` does).
fn jsdiff_hunk_headers(patch: &str) -> String {
    let range = |r: &str| if r.contains(',') { r.to_string() } else { format!("{r},1") };
    let mut out = String::with_capacity(patch.len() + 16);
    for line in patch.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let header = body.strip_prefix("@@ -").and_then(|r| r.strip_suffix(" @@")).and_then(|r| r.split_once(" +"));
        match header {
            Some((old, new)) => {
                out.push_str(&format!("@@ -{} +{} @@", range(old), range(new)));
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn hunk_headers_carry_their_counts() {
        let p = "--- a\n+++ a\n@@ -1 +1 @@\n-x\n+y\n@@ -5,0 +6 @@\n+z\n";
        assert_eq!(jsdiff_hunk_headers(p), "--- a\n+++ a\n@@ -1,1 +1,1 @@\n-x\n+y\n@@ -5,0 +6,1 @@\n+z\n");
    }

    fn edit(dir: &Path, args: Value) -> ToolOutput {
        let tools: Vec<Box<dyn Tool>> = vec![Box::new(EditTool)];
        super::super::execute_tool_call(&tools, "edit", &args, &ToolContext::new(dir))
    }

    #[test]
    fn replaces_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let out = edit(p, json!({"path":"a.txt","edits":[{"oldText":"two","newText":"2"}]}));
        assert_eq!(out.first_text(), "Successfully replaced 1 block(s) in a.txt.");
        assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "one\n2\nthree\n");
        let d = out.details.unwrap();
        assert_eq!(d["diff"], " 1 one\n-2 two\n+2 2\n 3 three");
        assert_eq!(d["firstChangedLine"], 2);
        assert!(d["patch"].as_str().unwrap().starts_with("--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@"));
        // Legacy oldText/newText are folded into edits.
        let out = edit(p, json!({"path":"a.txt","oldText":"one","newText":"1"}));
        assert!(!out.is_error, "{out:?}");
        assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "1\n2\nthree\n");
    }

    #[test]
    fn errors_as_pi() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("a.txt"), "x\nx\ny\nz\n").unwrap();
        let one =
            |o: &str| edit(p, json!({"path":"a.txt","edits":[{"oldText":o,"newText":"q"}]})).first_text().to_string();
        assert_eq!(one("nope"), "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and newlines.");
        assert_eq!(one("x"), "Found 2 occurrences of the text in a.txt. The text must be unique. Please provide more context to make it unique.");
        assert_eq!(one(""), "oldText must not be empty in a.txt.");
        let out =
            edit(p, json!({"path":"a.txt","edits":[{"oldText":"y\nz","newText":"1"},{"oldText":"z","newText":"2"}]}));
        assert_eq!(
            out.first_text(),
            "edits[0] and edits[1] overlap in a.txt. Merge them into one edit or target disjoint regions."
        );
        let out =
            edit(p, json!({"path":"a.txt","edits":[{"oldText":"y","newText":"1"},{"oldText":"w","newText":"2"}]}));
        assert_eq!(
            out.first_text(),
            "Could not find edits[1] in a.txt. The oldText must match exactly including all whitespace and newlines."
        );
        let out = edit(p, json!({"path":"a.txt","edits":[{"oldText":"y","newText":"y"}]}));
        assert!(out.first_text().starts_with("No changes made to a.txt. The replacement produced identical content."));
        let out = edit(p, json!({"path":"b.txt","edits":[{"oldText":"y","newText":"1"}]}));
        assert_eq!(out, ToolOutput::error("Could not edit file: b.txt. Error code: ENOENT."));
        assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "x\nx\ny\nz\n");
    }

    #[test]
    fn fuzzy_bom_and_crlf() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        // Fuzzy: smart quotes and trailing spaces in the file; only the touched line changes.
        std::fs::write(p.join("f.txt"), "keep  \nsay \u{201C}hi\u{201D}  \nend\n").unwrap();
        let out = edit(p, json!({"path":"f.txt","edits":[{"oldText":"say \"hi\"","newText":"say \"bye\""}]}));
        assert!(!out.is_error, "{out:?}");
        assert_eq!(std::fs::read_to_string(p.join("f.txt")).unwrap(), "keep  \nsay \"bye\"\nend\n");
        // BOM and CRLF are kept; new line breaks take the line's ending; LF lines stay LF.
        std::fs::write(p.join("c.txt"), "\u{FEFF}a\r\nb\r\nc\nd\r\n").unwrap();
        let out = edit(p, json!({"path":"c.txt","edits":[{"oldText":"b\n","newText":"b1\nb2\n"}]}));
        assert!(!out.is_error, "{out:?}");
        assert_eq!(std::fs::read_to_string(p.join("c.txt")).unwrap(), "\u{FEFF}a\r\nb1\r\nb2\r\nc\nd\r\n");
    }
}
