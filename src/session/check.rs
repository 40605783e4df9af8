//! `check`: every problem of a session file, with a level and a fix hint.
//!
//! Loading already reports what the lenient reader works around (malformed lines,
//! broken links), and every line was validated whole; each problem becomes a finding
//! here. Then the format adds what only the whole tree of its own shapes shows (pi: labels
//! naming nothing, compactions keeping an entry off their path, tool results without their
//! call, calls never answered).

use serde::Serialize;

use super::entry::LineNo;
use super::format::Format;
use super::{LoadError, Problem, Severity, Source};

/// How bad a finding is. `Error`s and `Warning`s are problems (`check` exits 1);
/// `Info` is worth knowing but not wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub level: Level,
    /// A stable name for the kind of finding (`malformed`, `dangling-parent`, …).
    pub kind: &'static str,
    pub line: Option<LineNo>,
    pub message: String,
    pub hint: &'static str,
}

/// One file's result (`check --format json`: an element of `files`).
#[derive(Clone, Debug, Serialize)]
pub struct FileReport {
    pub file: String,
    /// `clean`, `problems` or `unreadable`.
    pub status: &'static str,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub findings: Vec<Finding>,
}

/// Checks one file (`source`: the file's bytes, or why they could not be read).
pub fn check_file(name: &str, source: Result<Source, String>, formats: &[&'static dyn Format]) -> FileReport {
    let unreadable = |message: String| FileReport {
        file: name.to_string(),
        status: "unreadable",
        errors: 1,
        warnings: 0,
        infos: 0,
        findings: vec![Finding { level: Level::Error, kind: "unreadable", line: None, message, hint: "" }],
    };
    let source = match source {
        // With the files its format reads with it (a Codex fork's parents).
        Ok(s) => super::open::assemble(vec![s], formats).remove(0),
        Err(e) => return unreadable(e),
    };
    let findings = match check(&source, formats) {
        Ok(f) => f,
        Err(LoadError::Empty { .. }) => vec![Finding {
            level: Level::Error,
            kind: "empty",
            line: None,
            message: "empty file (0 bytes): no session header".into(),
            hint: "pi writes a new header into an empty file when it opens it; delete the file if it is not meant to be a session",
        }],
        Err(LoadError::NotASession { line, reason, format, .. }) => vec![Finding {
            level: Level::Error,
            kind: "no-header",
            line,
            message: format!("not a valid {format} session: {reason}"),
            hint: "pi 1.6 refuses to open the file (0.73 overwrote it); a pi session starts with a `session` header line",
        }],
        Err(e) => return unreadable(e.to_string()),
    };
    let n = |l: Level| findings.iter().filter(|f| f.level == l).count();
    let (errors, warnings, infos) = (n(Level::Error), n(Level::Warning), n(Level::Info));
    FileReport {
        file: name.to_string(),
        status: if errors + warnings > 0 { "problems" } else { "clean" },
        errors,
        warnings,
        infos,
        findings,
    }
}

/// Checks one session's bytes. `Err` only when the file has no session at all (no valid
/// header, empty): that is reported as one error finding by the caller.
pub fn check(source: &Source, formats: &[&'static dyn Format]) -> Result<Vec<Finding>, LoadError> {
    let session = super::open::load_checked(source, formats)?;
    let mut out: Vec<Finding> = session
        .diagnostics
        .iter()
        .map(|d| {
            let (level, kind, hint) = describe(d.kind, d.severity);
            let hint = session.dialect().hint(d.kind).unwrap_or(hint);
            Finding { level, kind, line: d.line, message: d.message.clone(), hint }
        })
        .collect();
    out.extend(session.dialect().findings(&session));
    out.sort_by_key(|f| (f.line.unwrap_or_default(), std::cmp::Reverse(f.level)));
    Ok(out)
}

/// Level, kind name and fix hint for what loading found.
fn describe(p: Problem, severity: Severity) -> (Level, &'static str, &'static str) {
    use Problem::*;
    let (kind, hint) = match p {
        Malformed => ("malformed", "pi skips this line; delete it, or restore it from a copy of the file"),
        Truncated => ("truncated", "the last write was cut off (a crash?); pi skips the line; delete the partial line"),
        BlankLines => ("blank-lines", "harmless: pi skips blank lines"),
        Crlf => ("crlf", "harmless for pi; tools that expect \\n may not like it (`dos2unix` converts)"),
        NoFinalNewline => (
            "no-final-newline",
            "pi 1.6 adds the newline when it opens the file; `pisces label --force` ends the line too",
        ),
        SecondHeader => ("second-header", "pi ignores it (pi 0.73 wrote these by mistake); delete it"),
        NotAnEntry => ("not-an-entry", "pi skips it; delete the line"),
        NotObject => ("not-an-object", "pi keeps it as an entry without an id; delete the line"),
        V1NotObject => {
            ("not-an-object", "pi cannot open this file (its migration crashes on the line); delete the line")
        }
        MessageWithoutMessage => {
            ("message-without-message", "pi crashes on a path through this entry; delete it or give it a message")
        }
        UnknownType => {
            ("unknown-type", "written by a newer pi or an extension: pi keeps it in the tree and sends nothing for it")
        }
        UnknownRole => ("unknown-role", "pi keeps the message in the projection and does not send it to the model"),
        DuplicateId => ("duplicate-id", "pi keeps the later entry; the earlier one cannot be reached by its id"),
        SelfParent => {
            ("self-parent", "pi's context builder loops on a path through it; set its parentId to its real parent")
        }
        DanglingParent => {
            ("dangling-parent", "the entry starts a separate root in pi's tree; its parent is missing from the file")
        }
        Cycle => ("parent-cycle", "pi's context builder loops on a path through it; fix one parentId in the cycle"),
        Unreadable => (
            "unreadable",
            "pi reads the line but pisces cannot; `pisces show --raw` prints it as it is, and commands that need its content stop there",
        ),
        InvalidUtf8 => (
            "invalid-utf8",
            "pi reads the line with U+FFFD in place of the bad bytes; re-encode the file as UTF-8 to keep the original text",
        ),
        MissingBlob => (
            "missing-blob",
            "omp sends the reference in place of the image; copy the blob back into the store's blobs/ folder",
        ),
    };
    let level = match (p, severity) {
        (
            BlankLines | Crlf | NoFinalNewline | SecondHeader | UnknownType | UnknownRole | NotObject | InvalidUtf8
            | MissingBlob,
            _,
        ) => Level::Warning,
        (_, Severity::Note) => Level::Info,
        _ => Level::Error,
    };
    (level, kind, hint)
}
