//! Writing sessions: appending whole lines to a file the command exists to append to
//! (`label`, later `summarize --append`, `compact --append`, `agent`), and new entries
//! exactly as pi writes them.
//!
//! An append is one `write` of whole lines on an `O_APPEND` handle, under an advisory
//! lock, after checking that the file ends with a newline; so a pi appending to the same
//! file at the same time cannot interleave half-lines with ours, and a file whose last
//! line was cut off is not glued onto.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde_json::{Map, Value};

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
        "{name}: the file does not end with a newline (its last line is incomplete), so an appended line would be glued onto it\n  (`--force` first ends the incomplete line with a newline, then appends)"
    )]
    NoFinalNewline { name: String },
    #[error("{name}: the file is empty")]
    Empty { name: String },
}

/// Appends `lines` (each without its `\n`) to the file at `path` in one write, holding an
/// exclusive advisory lock. With `force`, a file that does not end in `\n` first gets one
/// (in the same write), ending its broken last line.
///
/// `before_write` runs under the lock, after the newline check, with the file's current
/// bytes; it returns the lines to write. Callers compute parent ids there, so that the
/// leaf they chain onto is the file's last entry at the moment of writing.
pub fn append_locked(
    path: &Path,
    force: bool,
    before_write: impl FnOnce(&[u8]) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<AppendResult> {
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
        let first_line = memchr::memchr_iter(b'\n', &current).count() as u32 + 1 + u32::from(!buf.is_empty());
        for l in &lines {
            debug_assert!(!l.contains('\n'), "a JSONL line has no raw newline");
            buf.extend_from_slice(l.as_bytes());
            buf.push(b'\n');
        }
        write_once(&mut file, &buf).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(AppendResult { first_line, lines: lines.len() as u32 })
    })();
    let _ = file.unlock();
    result
}

/// Where the appended lines landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendResult {
    /// 1-based line number of the first appended line.
    pub first_line: u32,
    pub lines: u32,
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

/// A new entry id as pi makes one: the first 8 hex digits of a random UUID, not already
/// taken (`generateId`).
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        let id = format!("{:08x}", random_u64() as u32);
        if !taken(&id) {
            return id;
        }
    }
}

/// Randomness without a dependency: std's `RandomState` is seeded from the OS per process
/// and advanced per instance.
fn random_u64() -> u64 {
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

/// A `label` entry in pi's key order (`type, id, parentId, timestamp, targetId, label?`);
/// clearing omits `label`, as pi's `appendLabelChange(target, undefined)` writes it.
pub fn label_entry(id: &str, parent: Option<&str>, timestamp: &str, target: &str, label: Option<&str>) -> String {
    let mut m = Map::new();
    m.insert("type".into(), "label".into());
    m.insert("id".into(), id.into());
    m.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
    m.insert("timestamp".into(), timestamp.into());
    m.insert("targetId".into(), target.into());
    if let Some(l) = label {
        m.insert("label".into(), l.into());
    }
    // serde_json escapes exactly what JSON.stringify escapes for strings pi writes
    // (quotes, backslashes, control characters); other characters stay unescaped.
    serde_json::to_string(&Value::Object(m)).expect("a map of strings serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_entries_are_written_as_pi_writes_them() {
        assert_eq!(
            label_entry("1a2b3c4d", Some("ffffffff"), "2026-11-29T20:00:00.000Z", "0000aaaa", Some("fix \"1\"")),
            r#"{"type":"label","id":"1a2b3c4d","parentId":"ffffffff","timestamp":"2026-11-29T20:00:00.000Z","targetId":"0000aaaa","label":"fix \"1\""}"#
        );
        assert_eq!(
            label_entry("1a2b3c4d", None, "t", "x", None),
            r#"{"type":"label","id":"1a2b3c4d","parentId":null,"timestamp":"t","targetId":"x"}"#
        );
    }

    #[test]
    fn ids_are_8_hex_and_avoid_taken_ones() {
        let first = new_entry_id(|_| false);
        assert!(first.len() == 8 && first.bytes().all(|b| b.is_ascii_hexdigit()));
        let second = new_entry_id(|id| id == first);
        assert_ne!(first, second);
    }

    #[test]
    fn appends_refuse_a_broken_last_line_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"b\":").unwrap();
        let err = append_locked(&p, false, |_| Ok(vec!["{}".into()])).unwrap_err();
        assert!(err.to_string().contains("does not end with a newline"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":");
        let r = append_locked(&p, true, |_| Ok(vec!["{\"c\":2}".into()])).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":\n{\"c\":2}\n");
        assert_eq!(r, AppendResult { first_line: 3, lines: 1 });
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
