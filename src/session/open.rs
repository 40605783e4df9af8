//! The one way a command reads its sessions: [`read`].
//!
//! It opens each file, finds its format, loads it, and runs the command's step on the
//! loaded sessions (REVs are resolved inside the step, on the index of this very load).
//! Then:
//!
//! * an entry that the validator passed but that does not parse whole
//!   ([`Unreadable::skip`]; the tests find none, but the two are different code) makes
//!   the session load again with that line treated as malformed, as pi skips it;
//! * a file that changed while it was read ([`Source::changed`]: another process shrank
//!   or rewrote it) is opened and read again;
//!
//! at most [`ATTEMPTS`] times, after which the last error is returned. Before the step
//! writes anything it calls [`Reading::start_output`], which reports the sessions'
//! diagnostics (once, for the load that is used) and checks the files once more; after
//! that no attempt is repeated, and a file that changed while the output was written is
//! an error that says so.

use std::cell::Cell;
use std::collections::BTreeSet;

use super::entry::LineNo;
use super::format::{detect, Format, Unreadable};
use super::kept::{Store, STALE_AFTER, STALE_MIN};
use super::write::WriteError;
use super::{LoadError, Session, Source};

/// How many times a read is tried before its error stands.
pub const ATTEMPTS: usize = 5;

/// A file changed while pisces read it, every time it was read.
#[derive(Debug, thiserror::Error)]
#[error("{file}: the file changed while pisces read it{}", if *.during_output { ", after the output had started: the output above may be wrong" } else { "" })]
pub struct Changed {
    pub file: String,
    pub attempts: usize,
    /// It changed after the output started.
    pub during_output: bool,
}

impl crate::exit::Hint for Changed {
    fn hint(&self) -> Option<String> {
        Some(format!(
            "another program rewrote or shortened it while it was read ({} time{}); run the command again when it is done",
            self.attempts,
            if self.attempts == 1 { "" } else { "s" }
        ))
    }
}

/// Loads `source` with the format that recognizes it (the first of `formats` when none
/// does, so that its reader says what is wrong).
pub fn load<'a>(
    source: &'a Source,
    formats: &[&'static dyn Format],
    exclude: &BTreeSet<LineNo>,
) -> Result<Session<'a>, LoadError> {
    format_of(source, formats)?.load(source, exclude)
}

/// [`load`] through the kept indexes ([`super::kept`]): from the file's kept index when it
/// has one that still holds, reading only the bytes after it; else whole, and then kept.
/// The index is written again once the bytes read past it are many (see
/// [`super::kept::STALE_AFTER`]). Nothing is kept of a file that changed while it was read.
pub fn load_keeping<'a>(
    store: &Store,
    source: &'a Source,
    formats: &[&'static dyn Format],
) -> Result<Session<'a>, LoadError> {
    let format = format_of(source, formats)?;
    let (session, keep) = match store.load(source, format) {
        Some((s, past)) => (s, past >= STALE_MIN.max((source.bytes().len() - past) / STALE_AFTER)),
        None => (format.load(source, &BTreeSet::new())?, true),
    };
    if keep && !source.changed() {
        store.save(source, &session);
    }
    Ok(session)
}

/// [`load`] with every line validated ([`Format::load_checked`]), for `check`.
pub fn load_checked<'a>(source: &'a Source, formats: &[&'static dyn Format]) -> Result<Session<'a>, LoadError> {
    format_of(source, formats)?.load_checked(source)
}

fn format_of(source: &Source, formats: &[&'static dyn Format]) -> Result<&'static dyn Format, LoadError> {
    let format =
        detect(source, formats).or_else(|| formats.first().copied()).ok_or_else(|| LoadError::NotASession {
            name: source.name.clone(),
            line: None,
            format: "known",
            reason: "pisces knows no session format".into(),
            hint: None,
        })?;
    Ok(format)
}

/// Each source with the files its format loads with it ([`Format::companions`]). A
/// companion that cannot be read is left out; the format's loader reports what is missing.
pub fn assemble(sources: Vec<Source>, formats: &[&'static dyn Format]) -> Vec<Source> {
    sources
        .into_iter()
        .map(|source| match detect(&source, formats) {
            Some(f) => with_companions(source, f),
            None => source,
        })
        .collect()
}

/// `source` with the files `format` loads with it (a caller that has told the format already).
pub fn with_companions(source: Source, format: &'static dyn Format) -> Source {
    let more = format.companions(&source);
    if more.is_empty() {
        source
    } else {
        source.join(&more).0
    }
}

/// What a step may ask of the reading in progress.
pub struct Reading<'r> {
    sources: &'r [Source],
    sessions: &'r [Session<'r>],
    report: &'r mut dyn FnMut(&Session) -> anyhow::Result<()>,
    started: Cell<bool>,
    attempt: usize,
}

impl Reading<'_> {
    /// Every file the sessions were read from (a Codex fork's and the rollouts it reads
    /// with it), in order: what the whole-store cache keys their facts on.
    pub fn files(&self) -> Vec<std::path::PathBuf> {
        self.sources
            .iter()
            .flat_map(|s| s.parts().into_iter().filter_map(|(_, p, _)| p.map(|p| p.to_path_buf())))
            .collect()
    }

    /// The files of the first session, by the names they are reported by, in order: its own,
    /// then those read with it.
    pub fn parts(&self) -> Vec<(String, Option<std::path::PathBuf>)> {
        self.sources.first().map_or_else(Vec::new, |s| {
            s.parts().into_iter().map(|(name, path, _)| (name.to_string(), path.map(|p| p.to_path_buf()))).collect()
        })
    }

    /// Called by a step before it writes its output: reports the diagnostics of every
    /// session (and fails under `--strict`, through the report), and makes sure the files
    /// did not change until now (else the read is repeated).
    pub fn start_output(&mut self) -> anyhow::Result<()> {
        if self.started.get() {
            return Ok(());
        }
        if let Some(s) = self.sources.iter().find(|s| s.changed()) {
            return Err(Changed { file: s.name.clone(), attempts: self.attempt, during_output: false }.into());
        }
        for s in self.sessions {
            (self.report)(s)?;
        }
        self.started.set(true);
        Ok(())
    }
}

/// Reads the sessions `open` yields (one or two: `diff --against`), and runs `step` on
/// them, as the module docs describe. `report` prints a session's diagnostics.
pub fn read<R>(
    open: &dyn Fn() -> anyhow::Result<Vec<Source>>,
    formats: &[&'static dyn Format],
    report: &mut dyn FnMut(&Session) -> anyhow::Result<()>,
    step: impl FnMut(&[Session], &mut Reading) -> anyhow::Result<R>,
) -> anyhow::Result<R> {
    read_with(open, formats, report, step, Afterwards::Free, None)
}

/// What becomes of the sessions once the step is done.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Afterwards {
    /// Freed, as usual.
    Free,
    /// Left for the process's exit to take back: for a command that exits right after its
    /// one read. Freeing an index entry by entry is wasted work then (a tenth of `path`'s
    /// time on a 100 MB Claude Code file, all of it after the output).
    LeaveToExit,
}

/// [`read`], with the sessions' fate chosen, and the kept indexes to read large sessions
/// from and keep them in (`None`: read every file whole, keep nothing).
pub fn read_with<R>(
    open: &dyn Fn() -> anyhow::Result<Vec<Source>>,
    formats: &[&'static dyn Format],
    report: &mut dyn FnMut(&Session) -> anyhow::Result<()>,
    step: impl FnMut(&[Session], &mut Reading) -> anyhow::Result<R>,
    afterwards: Afterwards,
    kept: Option<&Store>,
) -> anyhow::Result<R> {
    read_assembled(assemble(open()?, formats), open, formats, report, step, afterwards, kept)
}

/// [`read_with`] from sources already opened and assembled (by a caller that looked at their
/// bytes first: `grep` skips a file that cannot hold its pattern, and mapping and sniffing
/// it again cost a tenth of a search of every session); `open` reopens them when they change.
pub fn read_assembled<R>(
    assembled: Vec<Source>,
    open: &dyn Fn() -> anyhow::Result<Vec<Source>>,
    formats: &[&'static dyn Format],
    report: &mut dyn FnMut(&Session) -> anyhow::Result<()>,
    mut step: impl FnMut(&[Session], &mut Reading) -> anyhow::Result<R>,
    afterwards: Afterwards,
    kept: Option<&Store>,
) -> anyhow::Result<R> {
    let mut sources = assembled;
    let mut exclude: Vec<BTreeSet<LineNo>> = vec![BTreeSet::new(); sources.len()];
    let mut last_error = None;
    for attempt in 1..=ATTEMPTS {
        if attempt > 1 && sources.iter().any(Source::changed) {
            // Read the files again (standard input never changes, so it is never re-read).
            sources = assemble(open()?, formats);
        }
        let mut sessions = Vec::with_capacity(sources.len());
        for (k, source) in sources.iter().enumerate() {
            let loaded = match kept.filter(|_| exclude[k].is_empty()) {
                Some(store) => load_keeping(store, source, formats),
                None => load(source, formats, &exclude[k]),
            };
            match loaded {
                Ok(s) => sessions.push(s),
                // A file cut short under the read can look like any broken file.
                Err(_) if source.changed() => break,
                Err(e) => return Err(e.into()),
            }
        }
        if sessions.len() < sources.len() {
            last_error = Some(changed(&sources, attempt));
            continue;
        }
        let mut reading = Reading {
            sources: &sources,
            sessions: &sessions,
            report: &mut *report,
            started: Cell::new(false),
            attempt,
        };
        let result = step(&sessions, &mut reading);
        let started = reading.started.get();
        // A write of the step's own that failed (a full disk, a size limit) was taken back,
        // which changes the file's time: that failure is the news, not the change.
        let own_write_failed = matches!(&result, Err(e) if e.chain().any(|c| c.is::<WriteError>()));
        if let Some(s) = sources.iter().find(|s| s.changed()).filter(|_| !own_write_failed) {
            if started {
                return Err(Changed { file: s.name.clone(), attempts: attempt, during_output: true }.into());
            }
            last_error = Some(changed(&sources, attempt));
            continue;
        }
        let e = match result {
            Err(e) if !started => e,
            other => {
                if afterwards == Afterwards::LeaveToExit {
                    std::mem::forget(sessions);
                    std::mem::forget(sources);
                }
                return other;
            }
        };
        // A line pi would skip: read that file again without it (a line is skipped once,
        // so this ends).
        if let Some(u) = e.chain().find_map(|c| c.downcast_ref::<Unreadable>()).filter(|u| u.skip) {
            if let Some(k) = sessions.iter().position(|s| s.file == u.file) {
                if exclude[k].insert(u.line) {
                    last_error = Some(e);
                    continue;
                }
            }
        }
        return Err(e);
    }
    Err(last_error.unwrap_or_else(|| anyhow::anyhow!("the sessions could not be read")))
}

/// [`read`] for one file known by its path, whose diagnostics the caller does not print
/// (the agent re-reading its own session between turns): the same retries, nothing
/// reported. `step` may run more than once, so it should only compute.
pub fn read_path<R>(
    path: &std::path::Path,
    formats: &[&'static dyn Format],
    mut step: impl FnMut(&Session) -> anyhow::Result<R>,
) -> anyhow::Result<R> {
    let open = || Ok(vec![Source::open(path)?]);
    read(&open, formats, &mut |_| Ok(()), |sessions, _| step(&sessions[0]))
}

fn changed(sources: &[Source], attempts: usize) -> anyhow::Error {
    let file = sources.iter().find(|s| s.changed()).map_or_else(String::new, |s| s.name.clone());
    Changed { file, attempts, during_output: false }.into()
}
