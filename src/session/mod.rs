//! The session model: the common tree index every format reads its files into, the seam
//! to the formats, and what commands compute on top (REVs, the tree view, checks). In
//! memory only: nothing here prints, knows about terminals, or reads the environment;
//! problems found while reading are returned as [`Diagnostic`]s for the caller to show.

pub mod check;
pub mod entry;
pub mod format;
pub mod index;
pub mod js;
pub mod kept;
pub mod leaves;
pub mod locate;
pub mod open;
pub mod projection;
pub mod rev;
pub mod rows;
pub mod source;
pub mod system;
pub mod text;
pub mod usage;
pub mod validate;
pub mod view;
pub mod walk;
pub mod write;

pub use entry::{EntryIdx, EntryMeta, EntryType, Id, LineNo, Role};
pub use index::Session;
pub use source::Source;

use std::fmt;
use std::ops::Range;

/// `read` over `0..n`, in two halves on two threads when `n` is at least `min` (below it,
/// on this thread alone), the halves' results joined in order. For work over a session's
/// entries or leaves that each item does alone (usages, facts, contexts).
pub fn on_two_threads<R: Send, E: Send>(
    n: usize,
    min: usize,
    read: impl Fn(Range<usize>) -> Result<Vec<R>, E> + Sync,
) -> Result<Vec<R>, E> {
    if n < min {
        return read(0..n);
    }
    let (first, second) = std::thread::scope(|t| {
        let second = t.spawn(|| read(n / 2..n));
        (read(0..n / 2), second.join().expect("a worker thread panicked"))
    });
    let mut all = first?;
    all.extend(second?);
    Ok(all)
}

/// A vector with room for `n` items, whose memory the kernel is asked to back with huge
/// pages (2 MiB) where it can: a table of tens of megabytes filled at once otherwise takes
/// a page fault, with its bookkeeping, for every 4 KiB of it (a kept index's half a million
/// entries: with the decoding on two threads, `path` took 0.80× the time). Only advice:
/// where it is not taken (other systems, huge pages off), the vector is an ordinary one.
pub fn vec_for_large<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start.saturating_add(v.capacity().saturating_mul(std::mem::size_of::<T>()));
        let (from, to) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if to > from {
            // SAFETY: advice about pages of this vector's own allocation; it changes no
            // byte of them, and the call fails harmlessly if the kernel refuses it.
            unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    v
}

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
    /// An image a session refers to by its hash is not in the agent's blob store
    /// (oh-my-pi).
    MissingBlob,
}

/// One finding about a session file, tied to a line where there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: Problem,
    pub severity: Severity,
    pub line: Option<LineNo>,
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
    #[error("{name}: empty file (0 bytes), not a session yet")]
    Empty { name: String },
    #[error("{name}{}: not a valid {format} session: {reason}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    NotASession {
        name: String,
        line: Option<LineNo>,
        /// The format whose reader refused it.
        format: &'static str,
        reason: String,
        /// What its agent does with such a file.
        hint: Option<&'static str>,
    },
    #[error("{name}: {count} problem{} found and --strict is set", if *count == 1 { "" } else { "s" })]
    Strict { name: String, count: usize },
}

impl crate::exit::Hint for LoadError {
    fn hint(&self) -> Option<String> {
        match self {
            LoadError::Empty { .. } => Some(
                "pi would write a new header into it when it opens it; pisces reads only and left it unchanged".into(),
            ),
            LoadError::NotASession { hint, .. } => hint.map(str::to_string),
            LoadError::Strict { .. } => Some("run `pisces check` on it for every problem and how to fix it".into()),
            LoadError::Io { .. } | LoadError::IsADirectory { .. } => None,
        }
    }
}
