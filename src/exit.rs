//! How pisces ends: the exit status of the process, one meaning each, and what an error
//! says besides its message (its hints).

use std::process::ExitCode;

/// What a command asks `main` to exit with. Errors (an `Err` from a command) exit with
/// [`ExitStatus::Error`], or [`ExitStatus::Provider`] when a model provider failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done. `check`: every file is clean; `diff`: the sides are identical.
    Ok,
    /// 1: a finding: `check` found problems, `diff` found differences, `summarize` or
    /// `compact` had nothing to do.
    Finding,
    /// 2: a usage or input error: bad arguments, a file that cannot be read, a REV that
    /// names nothing, a refused write.
    Error,
    /// 3: a model provider could not be reached or answered with an error (`summarize`,
    /// `compact`, `agent`).
    Provider,
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::Finding => 1,
            ExitStatus::Error => 2,
            ExitStatus::Provider => 3,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(s.code())
    }
}

/// Internal errors (a bug: a panic) exit with Rust's 101, after `main`'s panic hook has
/// said that it is one.
pub const INTERNAL: u8 = 101;

/// Whether an error is a closed output pipe (`pisces path … | head`): success, silently.
/// The I/O error may sit inside another (serde_json wraps the one it hit).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// The exit status an error ends pisces with: [`ExitStatus::Provider`] when a model
/// provider was asked and failed (refused, gave up, the network broke), else
/// [`ExitStatus::Error`] (a missing key is a usage error: nothing was sent).
pub fn status_of(err: &anyhow::Error) -> ExitStatus {
    use crate::llm::LlmError;
    let provider_failed = err.chain().any(|e| {
        matches!(
            e.downcast_ref::<LlmError>(),
            Some(LlmError::Refused { .. } | LlmError::GaveUp { .. } | LlmError::Transport { .. })
        )
    });
    if provider_failed {
        ExitStatus::Provider
    } else {
        ExitStatus::Error
    }
}

/// An error that knows what the user could do about it. The message (`Display`) says
/// what went wrong, in one line where it can; the hint, printed after it as `hint: …`, what
/// to do or why. JSON output carries them apart.
pub trait Hint {
    fn hint(&self) -> Option<String>;
}

/// The hints of every error in the chain that has one.
pub fn hints_of(err: &anyhow::Error) -> Vec<String> {
    fn one(e: &(dyn std::error::Error + 'static)) -> Option<String> {
        use crate::session::{locate::LocateError, open::Changed, write::WriteError, LoadError};
        if let Some(h) = e.downcast_ref::<LoadError>() {
            return h.hint();
        }
        if let Some(h) = e.downcast_ref::<LocateError>() {
            return h.hint();
        }
        if let Some(h) = e.downcast_ref::<WriteError>() {
            return h.hint();
        }
        if let Some(h) = e.downcast_ref::<Changed>() {
            return h.hint();
        }
        if let Some(h) = e.downcast_ref::<crate::session::write::NotAUserMessage>() {
            return h.hint();
        }
        if let Some(u) = e.downcast_ref::<crate::session::format::Unsupported>() {
            return u.hint.map(str::to_string);
        }
        None
    }
    let mut out: Vec<String> = Vec::new();
    for e in err.chain() {
        if let Some(h) = one(e) {
            if !out.contains(&h) {
                out.push(h);
            }
        }
    }
    out
}
