//! Where session bytes come from: a memory map for regular files, a read buffer for
//! stdin, pipes and special files. Nothing here ever opens a file for writing.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::LoadError;

enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// The bytes of one session file and the name to report it by.
pub struct Source {
    /// The name diagnostics use: the path as the user gave it, or `<stdin>`.
    pub name: String,
    /// The file's path, when it came from one (absolute paths are made by callers that
    /// need them, such as `fork`'s `parentSession`).
    pub path: Option<PathBuf>,
    bytes: Bytes,
}

impl Source {
    /// Opens a file read-only. Regular non-empty files are memory-mapped so that a
    /// multi-gigabyte session costs page cache, not heap.
    pub fn open(path: &Path) -> Result<Source, LoadError> {
        let io = |source| LoadError::Io { name: path.display().to_string(), source };
        let file = File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.is_dir() {
            return Err(LoadError::IsADirectory { name: path.display().to_string() });
        }
        let bytes = if meta.is_file() && meta.len() > 0 {
            match map_file(&file) {
                Ok(map) => Bytes::Mapped(map),
                // Some filesystems cannot map; reading is always possible.
                Err(_) => Bytes::Owned(read_all(file).map_err(io)?),
            }
        } else {
            // Pipes, /dev/stdin, /proc files report a size of 0: read them.
            Bytes::Owned(read_all(file).map_err(io)?)
        };
        Ok(Source { name: path.display().to_string(), path: Some(path.to_path_buf()), bytes })
    }

    /// Reads all of standard input.
    pub fn stdin() -> Result<Source, LoadError> {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|source| LoadError::Io { name: "<stdin>".into(), source })?;
        Ok(Source::from_bytes("<stdin>", buf))
    }

    /// A session held in memory (tests, and callers that already have the bytes).
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Source {
        Source { name: name.to_string(), path: None, bytes: Bytes::Owned(bytes) }
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

fn read_all(mut file: File) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Maps `file` read-only.
///
/// SAFETY: a memory map is only sound while no one truncates or rewrites the file under
/// it. Session files are append-only by design (pi and pisces only ever append whole
/// lines, or write new files and rename them into place, which leaves our mapping on the
/// old inode); appended bytes lie beyond the mapped length and are never read. A process
/// that truncates a session while pisces reads it could make a read fault (SIGBUS); that
/// is the same trade ripgrep makes, and why stdin and special files are read instead.
fn map_file(file: &File) -> std::io::Result<memmap2::Mmap> {
    unsafe { memmap2::Mmap::map(file) }
}
