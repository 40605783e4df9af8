//! Where session bytes come from: a guarded memory map for regular files, a read buffer
//! for stdin, pipes and special files. Nothing here ever opens a file for writing.
//!
//! **A file that shrinks under a read.** A memory map is only plain memory while the file
//! keeps its length: when another process truncates the file (pi rewrites version-1 and -2
//! files when it opens them, oh-my-pi rewrites whole files), touching a mapped page past the
//! new end raises SIGBUS, which kills a process by default. pisces maps files anyway, because
//! a 1 GB session then costs page cache and not 1 GB of heap, and guards the mapping:
//!
//! * a SIGBUS handler (installed once, for mappings of this module only) replaces the
//!   faulting page and the rest of that mapping with zero pages, marks the source as
//!   faulted, and returns, so the read goes on over zeros instead of dying;
//! * [`Source::changed`] says afterwards whether the bytes read are a consistent state of
//!   the file: no fault, and the file (by the open handle, so a rename over it does not
//!   count) either has the same size and modification time, or holds the same first and
//!   last 4 KiB of what was read and did not shrink (an append, as every agent writes: the
//!   mapped prefix is unchanged);
//! * the loader ([`super::open`]) reads the file again when it changed, a few times, and then
//!   stops with an error that says so.
//!
//! A fault at an address that is not one of these mappings is left to the handler that was
//! there before (the default: the process dies, as it would have).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::format::Companion;
use super::LoadError;

enum Bytes {
    Mapped(Guarded),
    Owned(Vec<u8>),
    /// Several files read into one buffer ([`Source::join`]).
    Joined(Joined),
}

/// A session that spans files (a Codex fork and the rollouts it inherits from): their bytes
/// one after the other in one address range, so that the index's byte offsets reach every
/// file. On Unix each file is mapped there (no copy: a family of rollouts is mostly one large
/// parent); elsewhere, or when mapping fails, they are read into one buffer.
struct Joined {
    bytes: JoinedBytes,
    parts: Vec<Part>,
}

enum JoinedBytes {
    #[cfg(unix)]
    Mapped(region::Region),
    Read(Vec<u8>),
}

/// One file of a joined source.
#[derive(Debug)]
pub struct Part {
    /// The name to report it by.
    pub name: String,
    pub path: Option<PathBuf>,
    /// Where its bytes are in [`Source::bytes`].
    pub range: std::ops::Range<usize>,
    /// The open file and what it looked like, to tell whether it changed.
    file: Option<(File, Stamp)>,
}

/// The bytes of one session file and the name to report it by.
pub struct Source {
    /// The name diagnostics use: the path as the user gave it, or `<stdin>`.
    pub name: String,
    /// The file's path, when it came from one (absolute paths are made by callers that
    /// need them, such as `fork`'s `parentSession`).
    pub path: Option<PathBuf>,
    bytes: Bytes,
    /// The file was compressed (`gzip`: oh-my-pi's archived sessions; `zstd`), and these
    /// are its decompressed bytes.
    compression: Option<&'static str>,
}

/// What a file looked like when it was opened, to tell afterwards whether it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// A hash of the file's first and last [`EDGE`] bytes (of `len`), as read then.
    edges: Option<u64>,
}

/// How much of each end of a file [`Stamp::edges`] covers.
const EDGE: u64 = 4096;

impl Stamp {
    fn of(file: &File) -> std::io::Result<Stamp> {
        let meta = file.metadata()?;
        Ok(Stamp { len: meta.len(), modified: meta.modified().ok(), edges: edges(file, meta.len()) })
    }

    /// Whether `file` may no longer hold what it held when stamped. Only a shrink, or new
    /// bytes at either end of what was there, count. Not a new modification time alone:
    /// the kernel sets it before it extends the file, so a process appending shows for a
    /// moment the old length with a new time (Claude Code, which also sets its files'
    /// times), and the bytes read are all still there. (A rewrite of the middle alone, to
    /// the very same length, would pass; the agents that rewrite files change their first
    /// line, pi's migration and omp's title slot, or their length, omp's pruning.)
    fn changed(&self, file: &File) -> bool {
        match file.metadata() {
            Ok(m) if m.len() == self.len && m.modified().ok() == self.modified => false,
            Ok(m) if m.len() < self.len => true,
            Ok(_) => self.edges.is_none() || edges(file, self.len) != self.edges,
            Err(_) => true,
        }
    }
}

/// [`edges_hash`]; `None` when the bytes cannot be read.
fn edges(file: &File, len: u64) -> Option<u64> {
    #[cfg(unix)]
    {
        edges_hash(file, len).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (file, len);
        None
    }
}

/// A hash of `file`'s first and last [`EDGE`] bytes of its first `len`, read with `pread`
/// (not through a mapping, which would show what the file holds now) into the stack: the
/// whole-store cache keys every file of the store with it too (`store::cache::FileKey`).
#[cfg(unix)]
pub fn edges_hash(file: &File, len: u64) -> std::io::Result<u64> {
    use std::hash::Hasher;
    use std::os::unix::fs::FileExt;
    let mut h = rustc_hash::FxHasher::default();
    let mut buf = [0u8; EDGE as usize];
    let n = EDGE.min(len) as usize;
    for at in [0, len.saturating_sub(EDGE)] {
        file.read_exact_at(&mut buf[..n], at)?;
        h.write(&buf[..n]);
    }
    Ok(h.finish())
}

/// The bytes of a compressed file decompressed, streamed from the mapping into memory
/// (the file is recognised by its magic number, not its name); others as they are.
fn decompressed(bytes: Bytes) -> std::io::Result<(Bytes, Option<&'static str>)> {
    let data = match &bytes {
        Bytes::Mapped(m) => m.bytes(),
        Bytes::Owned(v) => v.as_slice(),
        Bytes::Joined(_) => return Ok((bytes, None)),
    };
    let mut out = Vec::new();
    let kind = if data.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(data).read_to_end(&mut out)?;
        "gzip"
    } else if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let mut d = ruzstd::decoding::StreamingDecoder::new(data)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("zstd: {e}")))?;
        d.read_to_end(&mut out)?;
        "zstd"
    } else {
        return Ok((bytes, None));
    };
    Ok((Bytes::Owned(out), Some(kind)))
}

impl Source {
    /// Opens a file read-only. Regular non-empty files are memory-mapped (guarded, see the
    /// module docs) so that a multi-gigabyte session costs page cache, not heap.
    pub fn open(path: &Path) -> Result<Source, LoadError> {
        let io = |source| LoadError::Io { name: path.display().to_string(), source };
        let file = File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.is_dir() {
            return Err(LoadError::IsADirectory { name: path.display().to_string() });
        }
        let bytes = if meta.is_file() && meta.len() > 0 {
            match Guarded::map(file) {
                Ok(map) => Bytes::Mapped(map),
                // Some filesystems cannot map; reading is always possible.
                Err((file, _)) => Bytes::Owned(read_all(file).map_err(io)?),
            }
        } else {
            // Pipes, /dev/stdin, /proc files report a size of 0: read them.
            Bytes::Owned(read_all(file).map_err(io)?)
        };
        let (bytes, compression) = decompressed(bytes).map_err(io)?;
        Ok(Source { name: path.display().to_string(), path: Some(path.to_path_buf()), bytes, compression })
    }

    /// The device, inode and modification time (ns since the epoch, as stamped when the
    /// file was mapped) of a file read as it is, mapped whole and not yet changed: what
    /// a kept index (`session::kept`) is keyed on. `None` for anything else (standard
    /// input, a decompressed or joined file, one that could not be mapped).
    pub fn identity(&self) -> Option<(u64, u64, i64)> {
        use std::os::unix::fs::MetadataExt;
        let Bytes::Mapped(m) = &self.bytes else { return None };
        if m.stamp.len != m.map.len() as u64 {
            return None;
        }
        let meta = m.file.metadata().ok()?;
        let since = m.stamp.modified?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
        Some((meta.dev(), meta.ino(), i64::try_from(since.as_nanos()).ok()?))
    }

    /// `gzip` or `zstd` when the file was compressed (see [`Source::open`]).
    pub fn compression(&self) -> Option<&'static str> {
        self.compression
    }

    /// Reads all of standard input.
    pub fn stdin() -> Result<Source, LoadError> {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|source| LoadError::Io { name: "<stdin>".into(), source })?;
        let (bytes, compression) =
            decompressed(Bytes::Owned(buf)).map_err(|source| LoadError::Io { name: "<stdin>".into(), source })?;
        Ok(Source { name: "<stdin>".into(), path: None, bytes, compression })
    }

    /// A session held in memory (tests, and callers that already have the bytes).
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Source {
        Source { name: name.to_string(), path: None, bytes: Bytes::Owned(bytes), compression: None }
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m.bytes(),
            Bytes::Owned(v) => v,
            Bytes::Joined(j) => match &j.bytes {
                #[cfg(unix)]
                JoinedBytes::Mapped(r) => r.bytes(),
                JoinedBytes::Read(v) => v,
            },
        }
    }

    /// This source followed by the files `others` name (each up to its `limit`), in one
    /// address range: what a format whose sessions span files needs loaded together
    /// ([`super::format::Format::companions`]).
    /// Files are placed at page boundaries (the gap between two is zeros, in no line); a file
    /// that cannot be opened is left out, and returned with its error for the loader to
    /// report. A source without a path (standard input) is returned as it is.
    pub fn join(self, others: &[Companion]) -> (Source, Vec<(PathBuf, std::io::Error)>) {
        let Some(first) = self.path.clone() else { return (self, Vec::new()) };
        let mut opened = Vec::new();
        let mut lens = Vec::new();
        let mut failed = Vec::new();
        let all = std::iter::once((&first, None)).chain(others.iter().map(|c| (&c.path, c.limit)));
        for (k, (path, limit)) in all.enumerate() {
            let open = File::open(path).and_then(|f| Stamp::of(&f).map(|s| (f, s)));
            match open {
                Ok((file, stamp)) => {
                    let name = if k == 0 { self.name.clone() } else { path.display().to_string() };
                    lens.push(limit.map_or(stamp.len, |l| l.min(stamp.len)) as usize);
                    opened.push((name, path.clone(), file, stamp));
                }
                Err(e) if k == 0 => return (self, vec![(path.clone(), e)]),
                Err(e) => failed.push((path.clone(), e)),
            }
        }
        #[cfg(unix)]
        {
            let files: Vec<&File> = opened.iter().map(|(_, _, f, _)| f).collect();
            if let Ok((region, ranges)) = region::Region::map(&files, &lens) {
                let parts = parts_of(opened, ranges);
                let name = self.name.clone();
                let path = self.path.clone();
                return (
                    Source {
                        name,
                        path,
                        bytes: Bytes::Joined(Joined { bytes: JoinedBytes::Mapped(region), parts }),
                        compression: None,
                    },
                    failed,
                );
            }
        }
        // Read them all into one buffer, each ending in a newline.
        let mut buf = Vec::with_capacity(lens.iter().sum::<usize>() + lens.len());
        let mut ranges = Vec::new();
        let mut kept = Vec::new();
        for ((name, path, file, stamp), len) in opened.into_iter().zip(lens) {
            let start = buf.len();
            match (&file).take(len as u64).read_to_end(&mut buf) {
                Ok(_) => {
                    if buf.len() > start && buf.last() != Some(&b'\n') {
                        buf.push(b'\n');
                    }
                    ranges.push(start..buf.len());
                    kept.push((name, path, file, stamp));
                }
                Err(e) => {
                    buf.truncate(start);
                    failed.push((path, e));
                }
            }
        }
        let parts = parts_of(kept, ranges);
        let name = self.name.clone();
        let path = self.path.clone();
        (
            Source {
                name,
                path,
                bytes: Bytes::Joined(Joined { bytes: JoinedBytes::Read(buf), parts }),
                compression: None,
            },
            failed,
        )
    }

    /// The files this source's bytes come from, in order (one, unless it was joined).
    pub fn parts(&self) -> Vec<(&str, Option<&Path>, std::ops::Range<usize>)> {
        match &self.bytes {
            Bytes::Joined(j) => j.parts.iter().map(|p| (p.name.as_str(), p.path.as_deref(), p.range.clone())).collect(),
            _ => vec![(self.name.as_str(), self.path.as_deref(), 0..self.bytes().len())],
        }
    }

    /// Whether the bytes read so far may not be one state of the file: another process
    /// truncated it under the mapping (some bytes read as zeros), or rewrote it in place.
    /// A file appended to did not change what was read. Bytes in memory never change.
    pub fn changed(&self) -> bool {
        match &self.bytes {
            Bytes::Owned(_) => false,
            Bytes::Mapped(m) => m.changed(),
            // The same rule as for one mapping, for each file: only an append leaves what
            // was read as it was.
            Bytes::Joined(j) => {
                let faulted = match &j.bytes {
                    #[cfg(unix)]
                    JoinedBytes::Mapped(r) => r.faulted(),
                    JoinedBytes::Read(_) => false,
                };
                faulted || j.parts.iter().filter_map(|p| p.file.as_ref()).any(|(file, stamp)| stamp.changed(file))
            }
        }
    }
}

fn parts_of(opened: Vec<(String, PathBuf, File, Stamp)>, ranges: Vec<std::ops::Range<usize>>) -> Vec<Part> {
    opened
        .into_iter()
        .zip(ranges)
        .map(|((name, path, file, stamp), range)| Part { name, path: Some(path), range, file: Some((file, stamp)) })
        .collect()
}

fn read_all(mut file: File) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

/// A read-only mapping of a whole file, registered with the SIGBUS guard while it lives.
struct Guarded {
    map: memmap2::Mmap,
    /// The open file: its metadata says whether the inode changed since it was mapped.
    file: File,
    stamp: Stamp,
    slot: guard::Slot,
}

impl Guarded {
    fn map(file: File) -> Result<Guarded, (File, std::io::Error)> {
        let stamp = match Stamp::of(&file) {
            Ok(s) => s,
            Err(e) => return Err((file, e)),
        };
        // SAFETY: the mapping is read-only and private to this process. Its soundness
        // problem is another process shrinking the file while we read it (a read past the
        // new end raises SIGBUS): the guard below turns that fault into zero bytes plus a
        // flag instead of a crash, and `changed()` makes callers discard such a read. Bytes
        // rewritten in place without a fault are caught by `changed()` too (size or time).
        let map = match unsafe { memmap2::Mmap::map(&file) } {
            Ok(m) => m,
            Err(e) => return Err((file, e)),
        };
        let slot = guard::register(map.as_ptr() as usize, map.len());
        Ok(Guarded { map, file, stamp, slot })
    }

    fn bytes(&self) -> &[u8] {
        &self.map
    }

    fn changed(&self) -> bool {
        if self.slot.faulted() {
            return true;
        }
        self.stamp.changed(&self.file)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // Before the mapping goes: the handler must not touch a range that may be reused.
        self.slot.release();
    }
}

/// Files mapped side by side in one reserved address range (see [`Joined`]).
#[cfg(unix)]
mod region {
    use std::fs::File;
    use std::ops::Range;
    use std::os::unix::io::AsRawFd;

    use super::guard;

    pub struct Region {
        base: *mut u8,
        /// Bytes reserved (and unmapped on drop).
        reserved: usize,
        /// Bytes in use: the last file's end.
        used: usize,
        slots: Vec<guard::Slot>,
    }

    // SAFETY: the region is read-only memory owned by this value; moving it to another
    // thread moves that ownership.
    unsafe impl Send for Region {}
    // SAFETY: nothing writes to the region while it lives; reading it from several threads is
    // as safe as reading a `&[u8]`.
    unsafe impl Sync for Region {}

    impl Region {
        /// Maps `files` (of lengths `lens`) one after the other, each at a page boundary.
        pub fn map(files: &[&File], lens: &[usize]) -> std::io::Result<(Region, Vec<Range<usize>>)> {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
            let reserved = lens.iter().map(|l| l.div_ceil(page) * page).sum::<usize>().max(page);
            // SAFETY: a fresh private anonymous read-only reservation; nothing else uses it.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    reserved,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let mut region = Region { base: base as *mut u8, reserved, used: 0, slots: Vec::new() };
            let mut ranges = Vec::with_capacity(files.len());
            let mut off = 0usize;
            for (file, &len) in files.iter().zip(lens) {
                if len > 0 {
                    // SAFETY: [base + off, base + off + len) lies inside the reservation and
                    // belongs to no other mapping of ours; MAP_FIXED replaces the reserved
                    // pages with a private read-only mapping of the file. A file shrunk under
                    // it raises SIGBUS, which the guard turns into zeros and a flag, as for
                    // one mapped file.
                    let at = unsafe {
                        libc::mmap(
                            region.base.add(off) as *mut libc::c_void,
                            len,
                            libc::PROT_READ,
                            libc::MAP_PRIVATE | libc::MAP_FIXED,
                            file.as_raw_fd(),
                            0,
                        )
                    };
                    if at == libc::MAP_FAILED {
                        return Err(std::io::Error::last_os_error());
                    }
                    region.slots.push(guard::register(at as usize, len));
                }
                ranges.push(off..off + len);
                off += len.div_ceil(page) * page;
                region.used = off - (len.div_ceil(page) * page - len);
            }
            Ok((region, ranges))
        }

        pub fn bytes(&self) -> &[u8] {
            // SAFETY: [base, base + used) is mapped read-only for as long as self lives (file
            // pages, or zeros between files and after a fault).
            unsafe { std::slice::from_raw_parts(self.base, self.used) }
        }

        pub fn faulted(&self) -> bool {
            self.slots.iter().any(guard::Slot::faulted)
        }
    }

    impl Drop for Region {
        fn drop(&mut self) {
            for s in &self.slots {
                s.release();
            }
            // SAFETY: the whole reservation is ours and nothing borrows it any more.
            unsafe {
                libc::munmap(self.base as *mut libc::c_void, self.reserved);
            }
        }
    }
}

/// The SIGBUS guard: a table of guarded ranges and a handler that knows them.
#[cfg(unix)]
mod guard {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Once, OnceLock};

    /// How many mappings can be guarded at once (pisces maps one or two files a command, a
    /// Codex fork family one per rollout; beyond this a mapping is simply not guarded).
    const SLOTS: usize = 512;

    struct Range {
        start: AtomicUsize,
        len: AtomicUsize,
        faulted: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const FREE: Range = Range { start: AtomicUsize::new(0), len: AtomicUsize::new(0), faulted: AtomicBool::new(false) };
    static RANGES: [Range; SLOTS] = [FREE; SLOTS];
    static INSTALL: Once = Once::new();
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    /// The handler that was installed before ours, for faults that are not ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    /// A registered range (or none, when every slot is taken).
    pub struct Slot(Option<usize>);

    impl Slot {
        pub fn faulted(&self) -> bool {
            self.0.is_some_and(|k| RANGES[k].faulted.load(Ordering::Acquire))
        }

        pub fn release(&self) {
            if let Some(k) = self.0 {
                RANGES[k].len.store(0, Ordering::Release);
                RANGES[k].start.store(0, Ordering::Release);
            }
        }
    }

    pub fn register(start: usize, len: usize) -> Slot {
        INSTALL.call_once(install);
        for (k, r) in RANGES.iter().enumerate() {
            if r.start.compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                r.faulted.store(false, Ordering::Release);
                r.len.store(len, Ordering::Release);
                return Slot(Some(k));
            }
        }
        Slot(None)
    }

    fn install() {
        // SAFETY: sysconf and sigaction are called with valid arguments and zeroed structs.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction =
                on_sigbus as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                let _ = PREVIOUS.set(previous);
            }
        }
    }

    /// Runs on the thread that touched a page past the end of a shrunk file. Only
    /// async-signal-safe work: atomics and one `mmap` system call.
    extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        for r in &RANGES {
            let start = r.start.load(Ordering::Acquire);
            let len = r.len.load(Ordering::Acquire);
            if start == 0 || addr < start || addr >= start + len {
                continue;
            }
            let page = PAGE.load(Ordering::Relaxed);
            let from = addr & !(page - 1);
            let end = (start + len).div_ceil(page) * page;
            // SAFETY: [from, end) lies inside a live read-only mapping of ours (registered
            // until its `Guarded` is dropped, released before unmapping); MAP_FIXED
            // replaces those pages with private zero pages, so the faulting read is retried
            // and reads zeros. The mapping's later munmap removes these pages with it.
            let p = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                r.faulted.store(true, Ordering::Release);
                return;
            }
        }
        // Not ours (or the remap failed): what would have happened without us.
        // SAFETY: the previous action came from the kernel; calling its handler with the
        // arguments we were given is what the kernel would have done.
        unsafe {
            match PREVIOUS.get().copied() {
                Some(prev) if prev.sa_sigaction != libc::SIG_DFL && prev.sa_sigaction != libc::SIG_IGN => {
                    if prev.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(prev.sa_sigaction);
                        f(signal, info, context);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(prev.sa_sigaction);
                        f(signal);
                    }
                }
                _ => {
                    // Restore the default action and return: the faulting instruction runs
                    // again and the process dies of SIGBUS, as without the guard.
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
                }
            }
        }
    }
}

/// Elsewhere (Windows) a mapped file cannot be truncated, so there is nothing to guard.
#[cfg(not(unix))]
mod guard {
    pub struct Slot;

    impl Slot {
        pub fn faulted(&self) -> bool {
            false
        }
        pub fn release(&self) {}
    }

    pub fn register(_start: usize, _len: usize) -> Slot {
        Slot
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn joined_files_are_side_by_side_each_up_to_its_limit_and_a_shrunk_one_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"), dir.path().join("c.jsonl"));
        std::fs::write(&a, b"{\"a\":1}\n").unwrap();
        std::fs::write(&b, b"{\"b\":1}\n{\"b\":2}\n").unwrap();
        let big = vec![b'x'; 4096 * 8];
        std::fs::write(&c, &big).unwrap();
        let others = [
            Companion { path: b.clone(), limit: Some(8) },
            Companion { path: c.clone(), limit: None },
            Companion { path: dir.path().join("missing.jsonl"), limit: None },
        ];
        let (joined, failed) = Source::open(&a).unwrap().join(&others);
        assert_eq!(failed.len(), 1, "the missing file is reported");
        let parts = joined.parts();
        assert_eq!(parts.len(), 3);
        let bytes = joined.bytes();
        assert_eq!(&bytes[parts[0].2.clone()], b"{\"a\":1}\n");
        assert_eq!(&bytes[parts[1].2.clone()], b"{\"b\":1}\n", "only the first 8 bytes of b");
        assert_eq!(&bytes[parts[2].2.clone()], &big[..]);
        assert!(!joined.changed());
        // A companion shrunk under the mapping reads as zeros and makes the read a change.
        std::fs::OpenOptions::new().write(true).open(&c).unwrap().set_len(10).unwrap();
        let tail: u64 = joined.bytes()[parts[2].2.clone()].iter().skip(4096 * 2).map(|&x| u64::from(x)).sum();
        assert_eq!(tail, 0);
        assert!(joined.changed());
    }

    #[test]
    fn a_file_truncated_under_the_map_reads_as_zeros_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let page = 4096 * 4;
        std::fs::write(&p, vec![b'x'; page * 8]).unwrap();
        let source = Source::open(&p).unwrap();
        assert!(!source.changed());
        // Shrink it to one page from outside, then read the whole old length.
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(page as u64).unwrap();
        let bytes = source.bytes();
        let sum: u64 = bytes.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(bytes.len(), page * 8);
        assert!(sum < (b'x' as u64) * (page as u64 * 8), "the pages past the end read as zeros");
        assert!(source.changed());
    }

    #[test]
    fn an_append_is_not_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{\"a\":1}\n").unwrap();
        let source = Source::open(&p).unwrap();
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"{\"b\":2}\n").unwrap();
        assert_eq!(source.bytes(), b"{\"a\":1}\n");
        assert!(!source.changed());
        // A rewrite in place to the same length is.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&p, b"{\"c\":3}\n").unwrap();
        assert!(source.changed());
    }

    #[test]
    fn a_new_time_alone_is_not_a_change_but_new_bytes_at_an_end_are() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let line = |k: usize| format!("{{\"n\":{k}}}\n");
        let body: String = (0..2000).map(line).collect();
        std::fs::write(&p, &body).unwrap();
        let source = Source::open(&p).unwrap();
        // A writer that sets the time (or whose append has not shown its length yet).
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(later).unwrap();
        assert!(!source.changed());
        // The first line rewritten in place, to the same length (a title slot) ...
        let mut f = std::fs::File::options().write(true).open(&p).unwrap();
        f.write_all(b"{\"n\":9}").unwrap();
        assert!(source.changed());
        // ... or a file rewritten longer (a migration): not an append.
        std::fs::write(&p, &body).unwrap();
        let source = Source::open(&p).unwrap();
        std::fs::write(&p, format!("{{\"v\":3}}\n{body}")).unwrap();
        assert!(source.changed());
    }
}
