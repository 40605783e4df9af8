//! Writing sessions: appending whole lines to a file the command exists to append to
//! (`label`, `summarize --append`, `compact --append`, `agent`), writing a new file whole
//! (`fork`), and the seam through which a format writes its own lines ([`Writer`]).
//!
//! An append is one `write` of whole lines on an `O_APPEND` handle, under an advisory
//! lock, after checking that the file ends with a newline; so a pi appending to the same
//! file at the same time cannot interleave half-lines with ours, and a file whose last
//! line was cut off is not glued onto.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::Path;

use super::entry::{EntryIdx, EntryType, LineNo, Role};
use super::format::{Unreadable, Unsupported};
use super::index::Session;
use super::js;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{name}: {source}")]
    Io {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{name}: the file does not end with a newline (its last line is incomplete), so an appended line would be glued onto it"
    )]
    NoFinalNewline { name: String },
    #[error("{name}: the file is empty")]
    Empty { name: String },
}

impl crate::exit::Hint for WriteError {
    fn hint(&self) -> Option<String> {
        match self {
            WriteError::NoFinalNewline { .. } => {
                Some("`--force` first ends the incomplete line with a newline, then appends".into())
            }
            _ => None,
        }
    }
}

/// Appends `lines` (each without its `\n`) to the file at `path` in one write, holding an
/// exclusive advisory lock. With `force`, a file that does not end in `\n` first gets one
/// (in the same write), ending its broken last line.
///
/// `before_write` runs under the lock, after the newline check, with the file's current
/// bytes; it returns the lines to write. Callers compute parent ids there, so that the
/// leaf they chain onto is the file's last entry at the moment of writing.
pub fn append_locked<E: From<WriteError>>(
    path: &Path,
    force: bool,
    before_write: impl FnOnce(&[u8]) -> Result<Vec<String>, E>,
) -> Result<AppendResult, E> {
    let name = path.display().to_string();
    let io = |source| WriteError::Io { name: name.clone(), source };
    let mut file = OpenOptions::new().read(true).append(true).open(path).map_err(io)?;
    file.lock().map_err(io)?;
    let result = (|| {
        let mut current = Vec::new();
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.read_to_end(&mut current).map_err(io)?;
        if current.is_empty() {
            return Err(WriteError::Empty { name: name.clone() }.into());
        }
        let mut buf = Vec::new();
        if current.last() != Some(&b'\n') {
            if !force {
                return Err(WriteError::NoFinalNewline { name: name.clone() }.into());
            }
            buf.push(b'\n');
        }
        let lines = before_write(&current)?;
        let first_line = LineNo(memchr::memchr_iter(b'\n', &current).count() as u32 + 1 + u32::from(!buf.is_empty()));
        for l in &lines {
            debug_assert!(!l.contains('\n'), "a JSONL line has no raw newline");
            buf.extend_from_slice(l.as_bytes());
            buf.push(b'\n');
        }
        if let Err(e) = write_once(&mut file, &buf).and_then(|()| file.sync_data()) {
            take_back(&mut file, current.len() as u64, &buf);
            return Err(io(e).into());
        }
        Ok(AppendResult { first_line, lines: lines.len() as u32 })
    })();
    let _ = file.unlock();
    result
}

/// Appends lines to a session file, built from what the file holds at the moment of
/// writing: under the lock of [`append_locked`], the file is loaded again (in `formats`),
/// its format is asked whether it may be appended to, and `build` makes the lines (their
/// parents are then the file's current leaf, even when another program appended since
/// the command read it). Every command that appends goes through here. The bytes are
/// loaded with the one loader ([`super::open::read`]), so `build` may run again (on the
/// same bytes, a line pi would skip left out): it should only compute.
pub fn append_to_session(
    path: &Path,
    kind: Appended,
    force: bool,
    formats: &[&'static dyn super::format::Format],
    mut build: impl FnMut(&Session) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<AppendResult> {
    let name = path.display().to_string();
    append_locked(path, force, |bytes| {
        let open = || Ok(vec![super::Source::from_bytes(&name, bytes.to_vec())]);
        super::open::read(&open, formats, &mut |_| Ok(()), |sessions, _| {
            let session = &sessions[0];
            session.dialect().writer().map_err(AppendError::from)?.check_append_of(session, kind)?;
            build(session)
        })
    })
}

/// Where the appended lines landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendResult {
    /// The line of the first appended line.
    pub first_line: LineNo,
    pub lines: u32,
}

/// After a failed append (a full disk, a file-size limit), cuts off what of `buf` reached
/// the file, so that no partial line is left: only when the file past `len` holds nothing
/// but a prefix of `buf`, since a program that does not take the lock (pi) may have
/// appended after it, and its lines are never cut.
fn take_back(file: &mut File, len: u64, buf: &[u8]) {
    let Ok(meta) = file.metadata() else { return };
    let extra = meta.len().saturating_sub(len);
    if extra == 0 || extra > buf.len() as u64 {
        return;
    }
    let mut tail = vec![0; extra as usize];
    let read = file.seek(SeekFrom::Start(len)).and_then(|_| file.read_exact(&mut tail));
    if read.is_ok() && buf.starts_with(&tail) {
        let _ = file.set_len(len);
        let _ = file.sync_data();
    }
}

/// One `write` call for the whole buffer (an `O_APPEND` write of a regular file is
/// atomic with respect to other appends); only a short write continues with another.
fn write_once(file: &mut File, buf: &[u8]) -> std::io::Result<()> {
    let n = file.write(buf)?;
    if n < buf.len() {
        file.write_all(&buf[n..])?;
    }
    Ok(())
}

/// What a command appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appended {
    Label,
    /// A branch summary or a compaction.
    Summary,
    /// An agent's turns (messages, model changes).
    Turns,
}

/// What a format writes, and refuses to.
pub trait Writer {
    /// The lines of a new session holding the path to `leaf` (`None`: no entries) in
    /// `shape`, or every entry ([`Shape::Whole`], `leaf` unused).
    fn fork<'s>(&self, s: &Session<'s>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'s>, ForkError>;

    /// The new file a fork of `s` is written to: its header, where it goes, what it says.
    fn fork_file(&self, s: &Session, spec: &ForkFile, env: &crate::env::Env) -> Result<NewSession, ForkError>;

    /// Whether entries may be appended to this file as it is (pi: not to a version-1 or -2
    /// file, which pi rewrites when it opens it).
    fn check_append(&self, s: &Session) -> Result<(), AppendError>;

    /// Whether entries of this kind may be appended (a format may write labels as its agent
    /// does but not its turns). By default, [`Writer::check_append`].
    fn check_append_of(&self, s: &Session, _kind: Appended) -> Result<(), AppendError> {
        self.check_append(s)
    }

    /// A label entry for `target` (`None` clears its label), chained to the session's
    /// leaf, as the agent writes one: its new id and its line.
    fn label_line(&self, s: &Session, target: EntryIdx, label: Option<&str>) -> Result<(String, String), AppendError>;

    /// A summary entry under `parent` (`None`: a new root) as the agent writes one, with
    /// a new id; then, with `label`, a label entry naming it.
    fn summary_lines(
        &self,
        s: &Session,
        parent: Option<&str>,
        summary: &SummaryEntry,
        label: Option<&str>,
    ) -> Result<SummaryLines, AppendError>;
}

/// A summary to append, in common terms (pi's two kinds of summary entry).
pub enum SummaryEntry<'e> {
    /// A branch left behind (pi's `branch_summary`), made leaving entry `from_id`.
    Branch { from_id: &'e str, summary: &'e str, details: &'e serde_json::Value, usage: Option<&'e serde_json::Value> },
    /// The start of a path replaced by its summary (pi's `compaction`): the context then
    /// starts at `first_kept`.
    Compaction {
        summary: &'e str,
        first_kept: &'e serde_json::Value,
        tokens_before: f64,
        details: &'e serde_json::Value,
        usage: Option<&'e serde_json::Value>,
        /// The path's current system message, which pi keeps in the compaction.
        system_message: Option<&'e serde_json::Value>,
    },
}

/// The lines of a summary to append.
pub struct SummaryLines {
    pub id: String,
    /// The summary entry as written.
    pub entry: serde_json::Value,
    pub label_id: Option<String>,
    pub lines: Vec<String>,
}

/// Where a fork goes and what its header says, as the user asked.
#[derive(Clone, Debug, Default)]
pub struct ForkFile {
    pub shape: Option<Shape>,
    /// `-o FILE`: exactly this file.
    pub output: Option<std::path::PathBuf>,
    /// `--session-dir DIR`.
    pub session_dir: Option<std::path::PathBuf>,
    /// `--cwd DIR` (whole forks): the new session's working directory.
    pub cwd: Option<String>,
    /// The session id the fork's lines already carry ([`Fork::session_id`]).
    pub id: Option<String>,
}

/// A new session file, before it is written.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub path: std::path::PathBuf,
    pub id: String,
    pub header: String,
    pub cwd: String,
    pub parent_session: Option<String>,
    /// Said on stderr when the file is written.
    pub notes: Vec<String>,
    /// The folder is made if it is missing (a Codex store's folder of the day); else a
    /// missing folder is an error.
    pub create_dir: bool,
}

/// Writes `new` (see [`write_new_file`]), making its folder first when it says so.
pub fn write_new_session(
    new: &NewSession,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), NewFileError> {
    if new.create_dir {
        if let Some(dir) = new.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|source| NewFileError::Io { name: dir.display().to_string(), source })?;
        }
    }
    write_new_file(&new.path, fill)
}

/// Appending to a session failed or was refused.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    #[error("{0}")]
    Write(#[from] WriteError),
    /// This file is not appended to as it is; the message says why and what to do.
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
    #[error("{0}")]
    Unsupported(#[from] Unsupported),
    #[error("{0}")]
    Other(String),
}

/// What a fork holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The path to an entry, as the agent's own fork writes it (pi's
    /// `createBranchedSession`: label entries left out, the rest re-chained around them,
    /// then the path's labels re-emitted as new entries after the last one).
    Branch,
    /// The path to an entry as a plain chain (pi's `/export x.jsonl`: every entry of the
    /// path, label entries included, `parentId` re-chained linearly, the same session id).
    Linear,
    /// Every entry of the file, every branch (pi's `pi --fork`).
    Whole,
}

/// Where a fork of an entry ends, and what it names.
#[derive(Debug)]
pub struct ForkPoint {
    /// The fork's last entry (`None`: a session with no entries).
    pub leaf: Option<EntryIdx>,
    /// The entry asked for.
    pub target: EntryIdx,
    /// Forking before a user message: its text, to be edited and sent again.
    pub text: Option<String>,
}

/// `--before` named an entry that is not a user message.
#[derive(Debug, thiserror::Error)]
#[error("REV `{rev}` names {what} (line {line}), not a user message")]
pub struct NotAUserMessage {
    pub rev: String,
    pub what: String,
    pub line: LineNo,
}

impl crate::exit::Hint for NotAUserMessage {
    fn hint(&self) -> Option<String> {
        Some("--before forks before a user message, as pi's /fork does (the message is left out and printed to be sent again); without --before the fork ends at the entry itself, as pi's /clone does".into())
    }
}

/// The fork at `target` (named `rev`): the path to it, or with `before` the path to its
/// parent, as pi's /fork leaves out the user message it forks before.
pub fn fork_point(s: &Session, rev: &str, target: EntryIdx, before: bool) -> Result<ForkPoint, ForkPointError> {
    let at = ForkPoint { leaf: Some(target), target, text: None };
    if !before {
        return Ok(at);
    }
    let e = &s.entries[target];
    if e.kind != EntryType::Message || e.role != Role::User {
        let what = if e.kind == EntryType::Message {
            let role = s.parse(target).ok().and_then(|v| v.pointer("/message/role").cloned());
            format!("a message with role {}", role.map_or("(none)".into(), |r| r.to_string()))
        } else {
            format!("a `{}` entry", e.kind.name())
        };
        return Err(NotAUserMessage { rev: rev.to_string(), what, line: e.line }.into());
    }
    let message = s.parse(target)?;
    let text = super::system::user_text(message.get("message").unwrap_or(&serde_json::Value::Null));
    Ok(ForkPoint { leaf: s.parent(target), target, text: Some(text) })
}

#[derive(Debug, thiserror::Error)]
pub enum ForkPointError {
    #[error("{0}")]
    NotAUserMessage(#[from] NotAUserMessage),
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
}

/// Why a fork cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// An entry to copy cannot be read.
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
    /// The fork would not be a valid session; the message says why.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Unsupported(#[from] Unsupported),
}

/// The lines of a new session, before its header; written by [`Fork::write_to`].
pub struct Fork<'a> {
    pub lines: Vec<NewLine<'a>>,
    /// Source entries copied, in the order written.
    pub copied: Vec<EntryIdx>,
    /// Label entries of the path that were left out ([`Shape::Branch`]).
    pub labels_dropped: usize,
    /// Label entries created for the path's labels ([`Shape::Branch`]).
    pub labels_emitted: usize,
    /// Things worth telling the user (a shadowed leaf, …).
    pub notes: Vec<String>,
    /// The new session's id, when the format writes it into every line (Claude Code);
    /// its file is then named by it.
    pub session_id: Option<String>,
}

/// One line of the new file.
pub enum NewLine<'a> {
    /// A source line with some byte ranges replaced.
    Copy { raw: &'a [u8], edits: Vec<Edit> },
    /// A line made here (re-emitted labels; a line the splicer could not handle).
    New(String),
}

/// Replace `range` of a line with `text` (an empty range inserts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

impl NewLine<'_> {
    /// The line's bytes, without `\n`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.write_to(&mut v).expect("writing to a Vec");
        v
    }

    fn write_to(&self, w: &mut dyn Write) -> io::Result<()> {
        match self {
            NewLine::New(s) => w.write_all(s.as_bytes()),
            NewLine::Copy { raw, edits } => {
                let mut at = 0;
                for e in edits {
                    w.write_all(&raw[at..e.range.start])?;
                    w.write_all(e.text.as_bytes())?;
                    at = e.range.end;
                }
                w.write_all(&raw[at..])
            }
        }
    }
}

impl Fork<'_> {
    /// Writes `header` and every line, each followed by `\n`.
    /// Writes the header line (none when empty: a format without one) and the lines.
    pub fn write_to(&self, header: &str, w: &mut dyn Write) -> io::Result<()> {
        if !header.is_empty() {
            w.write_all(header.as_bytes())?;
            w.write_all(b"\n")?;
        }
        for l in &self.lines {
            l.write_to(w)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Randomness without a dependency: std's `RandomState` is seeded from the OS per process
/// and advanced per instance.
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// `new Date().toISOString()`.
pub fn now_iso() -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    js::iso_string(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_refuse_a_broken_last_line_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"b\":").unwrap();
        let err = append_locked::<WriteError>(&p, false, |_| Ok(vec!["{}".into()])).unwrap_err();
        assert!(err.to_string().contains("does not end with a newline"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":");
        let r = append_locked::<WriteError>(&p, true, |_| Ok(vec!["{\"c\":2}".into()])).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":\n{\"c\":2}\n");
        assert_eq!(r, AppendResult { first_line: LineNo(3), lines: 1 });
    }
}

/// Creating a new file failed.
#[derive(Debug, thiserror::Error)]
pub enum NewFileError {
    #[error("{name}: already exists; pisces never overwrites a file (as pi opens new sessions with `wx`)")]
    Exists { name: String },
    #[error("{name}: no such directory")]
    NoDir { name: String },
    #[error("{name}: not a file name (the path ends in a directory)")]
    NotAFileName { name: String },
    #[error("{name}: {source}")]
    Io {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

/// Writes `path` atomically, over the file there if there is one (`export --force`): a
/// new file beside it, written whole by [`write_new_file`], renamed over it. A reader sees
/// the old file or the new one, never a part.
pub fn replace_file(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), NewFileError> {
    let name = path.display().to_string();
    let Some(file_name) = path.file_name() else { return Err(NewFileError::NotAFileName { name }) };
    let fresh = path.with_file_name(format!(
        ".{}.{}.{:08x}.new",
        file_name.to_string_lossy(),
        std::process::id(),
        random_u64() as u32
    ));
    write_new_file(&fresh, fill)?;
    std::fs::rename(&fresh, path).map_err(|source| {
        let _ = std::fs::remove_file(&fresh);
        NewFileError::Io { name, source }
    })
}

/// Writes a new file at `path` atomically, and never over an existing one: the bytes go
/// to a temporary file beside it (same directory, so the same filesystem), are flushed to
/// disk, and the temporary file is then linked to `path`, which fails if `path` exists
/// (pi's `wx`); the temporary name is removed in every case. A reader sees either no file
/// or the whole file. Filesystems without hard links get a rename after an existence
/// check instead (a narrow window in which a file created by someone else could be
/// replaced). `fill` writes the content; its writer is buffered.
pub fn write_new_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), NewFileError> {
    let name = path.display().to_string();
    let io = |source| NewFileError::Io { name: name.clone(), source };
    let Some(file_name) = path.file_name() else { return Err(NewFileError::NotAFileName { name }) };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(NewFileError::NoDir { name: dir.display().to_string() });
    }
    if path.symlink_metadata().is_ok() {
        return Err(NewFileError::Exists { name });
    }
    // A hidden name unique to this process and call, in the target directory.
    let mut tmp = None;
    for _ in 0..16 {
        let candidate = dir.join(format!(
            ".{}.{}.{:08x}.tmp",
            file_name.to_string_lossy(),
            std::process::id(),
            random_u64() as u32
        ));
        match OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(f) => {
                tmp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
        }
    }
    let Some((tmp_path, file)) = tmp else {
        return Err(io(std::io::Error::other("could not create a temporary file beside it")));
    };
    // Removes the temporary name however this ends.
    struct Cleanup<'p>(&'p Path);
    impl Drop for Cleanup<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(self.0);
        }
    }
    let _cleanup = Cleanup(&tmp_path);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    fill(&mut out).map_err(io)?;
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    drop(file);
    match std::fs::hard_link(&tmp_path, path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(NewFileError::Exists { name }),
        Err(_) => {
            // No hard links here (some network and FUSE filesystems): check, then rename.
            if path.symlink_metadata().is_ok() {
                return Err(NewFileError::Exists { name });
            }
            std::fs::rename(&tmp_path, path).map_err(io)?;
        }
    }
    // The new name is durable once the directory is.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod new_file_tests {
    use super::*;

    #[test]
    fn new_files_are_written_whole_and_never_over_another() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.jsonl");
        write_new_file(&p, |w| w.write_all(b"{\"a\":1}\n")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n");
        let err = write_new_file(&p, |w| w.write_all(b"other\n")).unwrap_err();
        assert!(matches!(err, NewFileError::Exists { .. }), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n");
        // A failing writer leaves nothing behind, not even the temporary name.
        let q = dir.path().join("failed.jsonl");
        let err = write_new_file(&q, |_| Err(std::io::Error::other("boom"))).unwrap_err();
        assert!(err.to_string().contains("boom"));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("new.jsonl")]);
        let err = write_new_file(&dir.path().join("missing/x.jsonl"), |_| Ok(())).unwrap_err();
        assert!(matches!(err, NewFileError::NoDir { .. }), "{err}");
    }
}
