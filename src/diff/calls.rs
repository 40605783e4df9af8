//! Tool calls and their results: which result answers a call, how the call ended, and
//! what it acted on. The turns and the summaries both describe calls this way.

use rustc_hash::FxHashMap;

use super::facts::{CallFact, Fact, FactKind, ResultFact};
use super::Outcome;
use crate::session::js;

/// Tool results of a side by the call id they answer.
pub(super) fn results_by_call(facts: &[Fact]) -> FxHashMap<&str, usize> {
    let mut map = FxHashMap::default();
    for (k, f) in facts.iter().enumerate() {
        if let FactKind::ToolResult(r) = &f.kind {
            map.entry(r.call_id.as_str()).or_insert(k);
        }
    }
    map
}

/// How a call ended: its outcome, the bash exit code, and the first line of an error.
pub(super) fn outcome(c: &CallFact, r: Option<&ResultFact>) -> (Outcome, Option<i64>, Option<String>) {
    let Some(r) = r else { return (Outcome::NoResult, None, None) };
    let text = r.text.as_deref().unwrap_or_default();
    if c.name == "bash" {
        if !r.is_error {
            return (Outcome::Ok, Some(0), None);
        }
        if let Some(code) = exit_code(text) {
            return (Outcome::Error, Some(code), None);
        }
        let last = last_line(text);
        if text.contains("Command timed out after") {
            return (Outcome::Timeout, None, Some(last));
        }
        if text.trim_end().ends_with("Command aborted") {
            return (Outcome::Aborted, None, Some(last));
        }
        return (Outcome::Error, None, Some(last));
    }
    if r.is_error {
        (Outcome::Error, None, Some(first_line(text)))
    } else {
        (Outcome::Ok, None, None)
    }
}

/// A shell call's exit code from its result, as `diff` reads it (`None`: not a shell tool,
/// or no code in an error's text). For `pisces export --parquet`.
pub fn shell_exit_code(tool: &str, is_error: bool, text: &str) -> Option<i64> {
    if !matches!(tool, "bash" | "Bash" | "exec_command" | "shell" | "local_shell") {
        return None;
    }
    if is_error {
        exit_code(text)
    } else {
        Some(0)
    }
}

/// A bash error's exit code: pi's notice `…\n\nCommand exited with code N` (the last one in
/// the text), Claude Code's first line `Exit code N`, or Codex's header line `Process exited
/// with code N`.
fn exit_code(text: &str) -> Option<i64> {
    const NOTICE: &str = "Command exited with code ";
    const CLAUDE: &str = "Exit code ";
    const CODEX: &str = "\nProcess exited with code ";
    let rest = match (text.rfind(NOTICE), text.find(CODEX)) {
        (Some(at), _) => &text[at + NOTICE.len()..],
        (None, Some(at)) => &text[at + CODEX.len()..],
        (None, None) => text.strip_prefix(CLAUDE)?,
    };
    let end = rest
        .char_indices()
        .find(|&(k, c)| !(c.is_ascii_digit() || (k == 0 && c == '-')))
        .map_or(rest.len(), |(k, _)| k);
    rest[..end].parse().ok()
}

pub(super) fn first_line(text: &str) -> String {
    text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default().to_string()
}

fn last_line(text: &str) -> String {
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or_default().to_string()
}

/// What a call acted on, for display: `path` (`path (lines 25-29)` for a partial read),
/// the bash command, or another argument (`pattern`).
pub(super) fn target(c: &CallFact) -> Option<String> {
    if let Some(p) = &c.path {
        let n = |f: f64| js::number(f).to_string();
        return Some(match (c.offset, c.limit) {
            (None, None) => p.clone(),
            (Some(o), Some(l)) => format!("{p} (lines {}-{})", n(o), n(o + l - 1.0)),
            (Some(o), None) => format!("{p} (from line {})", n(o)),
            (None, Some(l)) => format!("{p} (lines 1-{})", n(l)),
        });
    }
    c.command.clone().or_else(|| c.other.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_from_pi_notices() {
        assert_eq!(exit_code("out\nerr\n\n\nCommand exited with code 3"), Some(3));
        assert_eq!(exit_code("Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\nx"), Some(1));
        assert_eq!(exit_code("ok"), None);
        assert_eq!(exit_code("Exit code 1\n\n> todo-cli@0.3.0 test\n"), Some(1));
    }
}
