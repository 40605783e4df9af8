//! The session model: reading pi session files exactly as pi does, in memory only.
//!
//! Nothing in this module prints or knows about terminals; problems found while reading
//! are returned as [`Diagnostic`]s for the caller to show.

pub mod check;
pub mod context;
pub mod entry;
pub mod fork;
pub mod js;
pub mod load;
pub mod locate;
pub mod preview;
pub mod rev;
pub mod source;
pub mod system;
pub mod tree;
pub mod usage;
pub mod validate;
pub mod view;
pub mod write;

pub use entry::{EntryMeta, EntryType, Role};
pub use source::Source;
pub use tree::Session;

use std::fmt;

/// How serious a finding is. `Warning`s are problems (`--strict` fails on them); `Note`s
/// are facts worth knowing that are not wrong (a version-1 file, an unknown entry type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
}

/// What kind of problem a diagnostic reports (for `check`'s hints and JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Problem {
    Malformed,
    Truncated,
    BlankLines,
    Crlf,
    NoFinalNewline,
    SecondHeader,
    NotAnEntry,
    NotObject,
    V1NotObject,
    MessageWithoutMessage,
    UnknownType,
    UnknownRole,
    DuplicateId,
    SelfParent,
    DanglingParent,
    Cycle,
    Unreadable,
    InvalidUtf8,
}

/// One finding about a session file, tied to a line where there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: Problem,
    pub severity: Severity,
    /// 1-based line number.
    pub line: Option<u32>,
    /// What is wrong and what pisces did about it.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Reading a session failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{name}: {source}")]
    Io {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name}: is a directory, not a session file")]
    IsADirectory { name: String },
    #[error("{name}: empty file (0 bytes), not a session yet\n  (pi would write a new header into it on open; pisces reads only and left it unchanged)")]
    Empty { name: String },
    #[error("{name}{}: not a valid pi session: {reason}\n  (pi 1.6 refuses to open it too; pi 0.73 would have overwritten it. pisces left it unchanged.)", line.map(|l| format!(":{l}")).unwrap_or_default())]
    NotASession { name: String, line: Option<u32>, reason: String },
    #[error("{name}: {count} problem{} found and --strict is set", if *count == 1 { "" } else { "s" })]
    Strict { name: String, count: usize },
}
