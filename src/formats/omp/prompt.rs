//! omp's prompt rendering (pi-utils `prompt.ts`): a template's `{{key}}` filled in, then
//! `format` over the whole text. omp wraps summaries, a collaborator's prompt and its context
//! notebook this way, and the formatter reshapes what is inside them too.

use serde_json::Value;

use crate::session::js;

/// `prompt.render`: Handlebars with the one `{{key}}` the templates here hold (no escaping;
/// `undefined` and `null` print nothing), then `format` over the whole text.
pub fn render(template: &str, key: &str, value: Option<&Value>) -> String {
    format(&template.replace(&format!("{{{{{key}}}}}"), &js::to_js_string_or_empty(value)))
}

/// pi-utils' prompt `format` after rendering: each line's trailing whitespace trimmed; a
/// lone blank line kept between two lines, a run of blank lines (or one at either end)
/// dropped with the blank lines before it; blank lines before a closing tag (`</name>`)
/// dropped; table rows and separators compacted; lines inside code fences only trimmed.
pub fn format(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    let all_blank = |l: &str| l.chars().all(js::is_js_whitespace);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut in_code = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches(js::is_js_whitespace);
        // The indent: spaces and tabs, or all of JS's whitespace when a non-ASCII character
        // follows them.
        let mut s = line.len() - line.trim_start_matches([' ', '\t']).len();
        if line[s..].chars().next().is_some_and(|c| !c.is_ascii()) {
            s = line.len() - line.trim_start_matches(js::is_js_whitespace).len();
        }
        let rest = &line[s..];
        if rest.starts_with("```") || rest.starts_with("~~~") {
            in_code = !in_code;
            out.push(line.to_string());
            i += 1;
            continue;
        }
        if in_code {
            out.push(line.to_string());
            i += 1;
            continue;
        }
        let mut line = line.to_string();
        let mut closing = false;
        if rest.starts_with("</") {
            closing = closing_tag(rest);
        } else if rest.starts_with('|') {
            if is_table_separator(rest) {
                line = format!("{}{}", &line[..s], compact_separator(rest));
            } else if is_table_row(rest) {
                line = format!("{}{}", &line[..s], compact_row(rest));
            }
        }
        if line.is_empty() {
            let next_blank = lines.get(i + 1).is_none_or(|n| all_blank(n));
            if next_blank {
                while out.last().is_some_and(String::is_empty) {
                    out.pop();
                }
                let mut j = i + 1;
                while j < lines.len() && all_blank(lines[j]) {
                    j += 1;
                }
                i = j;
                continue;
            }
            if out.last().is_none_or(String::is_empty) {
                i += 1;
                continue;
            }
        }
        if closing {
            while out.last().is_some_and(String::is_empty) {
                out.pop();
            }
        }
        out.push(line);
        i += 1;
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out.join("\n")
}

/// `closingTagName(s) !== null`: `</name>` with a name of `a-z`, `-`, `_`.
fn closing_tag(s: &str) -> bool {
    let name = s.strip_prefix("</").and_then(|r| r.strip_suffix('>'));
    name.is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_lowercase() || c == b'-' || c == b'_'))
}

/// `/^\|[-:\s|]+\|$/`.
fn is_table_separator(s: &str) -> bool {
    let inner = s.strip_prefix('|').and_then(|r| r.strip_suffix('|'));
    inner.is_some_and(|i| !i.is_empty() && i.chars().all(|c| matches!(c, '-' | ':' | '|') || js::is_js_whitespace(c)))
}

/// `/^\|.*\|$/` (`.` matches no line terminator).
fn is_table_row(s: &str) -> bool {
    s.len() >= 2
        && s.starts_with('|')
        && s.ends_with('|')
        && !s.chars().any(|c| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
}

/// `compactTableRow`: every cell trimmed.
fn compact_row(s: &str) -> String {
    s.split('|').map(|c| c.trim_matches(js::is_js_whitespace)).collect::<Vec<_>>().join("|")
}

/// `compactTableSep`: every cell that is not blank as `---` with its alignment colons.
fn compact_separator(s: &str) -> String {
    let cells: Vec<&str> = s
        .split('|')
        .map(|c| c.trim_matches(js::is_js_whitespace))
        .filter(|c| !c.is_empty())
        .map(|c| match (c.starts_with(':'), c.ends_with(':')) {
            (true, true) => ":---:",
            (true, false) => ":---",
            (false, true) => "---:",
            (false, false) => "---",
        })
        .collect();
    format!("|{}|", cells.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers of omp's own `format` (pi-utils prompt.ts, run under Bun).
    #[test]
    fn the_prompt_formatter_is_omp_s() {
        assert_eq!(format("a  \n\n\n\nb\n"), "a\nb");
        assert_eq!(format("a\n\nb"), "a\n\nb");
        assert_eq!(format("\n\na\n \t\n"), "a");
        assert_eq!(format("x\n\n</summary>"), "x\n</summary>");
        assert_eq!(format("x\n\n</Summary>"), "x\n\n</Summary>");
        assert_eq!(format("| a  |  b |\n|---| :--: |\n  |  x | y  |"), "|a|b|\n|---|:---:|\n  |x|y|");
        assert_eq!(format("```\n  code   \n\n\n```"), "```\n  code\n\n\n```");
        assert_eq!(format("a\n\u{a0}\nb\r"), "a\n\nb");
    }
}
