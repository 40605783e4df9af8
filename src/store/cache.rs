//! The whole-store cache: what `ls` and `stats` learnt of each session file, kept under
//! `$XDG_CACHE_HOME/pisces` (else `~/.cache/pisces`, mode 0700) so that a second run reads
//! only the files that changed.
//!
//! Per file it holds the facts of [`super::facts`]: the `ls` row (format, header facts,
//! title, counts, models, totals) and, for `stats`, each response's key, time, model and
//! tokens, and branch tips. Never message text. Each fact set is keyed by every file it
//! was read from (a Codex fork reads its parents too): device, inode, size, modification
//! time and a hash of the first and last 4 KiB. Any difference, and the file is read again
//! whole: a file that grew, one rewritten in place (omp's pruning, pi's migration), one
//! truncated, one replaced by another of the same size. A format whose sessions read other
//! files found by listing the store (`Format::reads_family`) is also keyed on that
//! listing, so that a new fork changes its parent's facts.
//!
//! The cache is two files, one for `ls` (summaries) and one for `stats` (responses), each
//! written whole to a temporary file and renamed over the old one: two processes writing at
//! once each leave a complete cache (the last rename wins), and a reader sees the old file or
//! the new one. A file that does not start with this version's magic, is cut short or fails
//! its checksum is ignored, and rebuilt.

use std::collections::HashMap;
use std::ffi::OsString;
use std::hash::Hasher;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::facts::{Facts, Record, Tip};
use super::summary::Summary;
use crate::session::format::Format;
use crate::session::usage::Totals;
use crate::session::Source;

/// The cache's tables, by path: keyed by the path's bytes (`Path`'s own hash walks its
/// components, which showed in a warm `ls` of ten thousand sessions).
type Map<V> = rustc_hash::FxHashMap<OsString, V>;

const MAGIC: &[u8; 16] = b"pisces-cache-v3\n";

/// Which of the two caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ls`: summaries only.
    Summaries,
    /// `stats`: summaries and responses.
    Responses,
}

/// What identifies a file's contents without reading it all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileKey {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    /// A hash of the first and the last 4 KiB.
    edges: u64,
}

impl FileKey {
    pub fn of(path: &Path) -> std::io::Result<FileKey> {
        FileKey::of_first(path, None)
    }

    /// The key `path` had when it was `len` bytes long, if it only grew since: its first
    /// `len` bytes hashed as [`FileKey::of`] hashes a whole file (the time is today's).
    /// `None`: the whole file.
    fn of_first(path: &Path, len: Option<u64>) -> std::io::Result<FileKey> {
        use std::os::unix::fs::MetadataExt;
        let f = std::fs::File::open(path)?;
        let m = f.metadata()?;
        if !m.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        let len = len.unwrap_or(m.len());
        if len > m.len() {
            return Err(std::io::Error::other("shorter than that"));
        }
        Ok(FileKey {
            dev: m.dev(),
            ino: m.ino(),
            size: len,
            mtime_ns: m.mtime().saturating_mul(1_000_000_000).saturating_add(m.mtime_nsec()),
            edges: crate::session::source::edges_hash(&f, len)?,
        })
    }

    /// How many bytes the file it keys had.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// A stamp of the store's listing (the session files discovery found), for the formats
/// whose sessions read other files of the store.
pub fn listing_stamp<'a>(paths: impl Iterator<Item = &'a Path>) -> u64 {
    let mut names: Vec<&Path> = paths.collect();
    // In the paths' own order (component by component), which for paths without empty or
    // `.` components is their bytes' order with each `/` read as a byte below any other
    // (comparing components showed in the time of a warm `ls`).
    names.sort_by_cached_key(|p| {
        p.as_os_str().as_encoded_bytes().iter().map(|&b| if b == b'/' { 0 } else { b }).collect::<Vec<u8>>()
    });
    let mut h = std::hash::DefaultHasher::new();
    for n in names {
        h.write(n.as_os_str().as_encoded_bytes());
        h.write_u8(0);
    }
    h.finish()
}

struct Entry {
    /// The file itself first, then the others it was read with.
    files: Vec<(PathBuf, FileKey)>,
    listing: Option<u64>,
    /// The session's format and agent (its summary's).
    format: &'static str,
    agent: &'static str,
    /// Whether its facts hold the branch tips.
    has_tips: bool,
    facts: Stored,
    /// Where the entry was in the cache file read at the start, for an entry read from
    /// it: saved again as those bytes. (A hit's facts are moved out to the command, not
    /// copied: cloning every session's responses was a sixth of a warm `stats`.)
    raw: Option<Range<usize>>,
}

/// An entry's facts: as this run made them, or where they are in the cache file read at
/// the start, decoded when a session asks for them. Opening the cache decodes only what
/// says whether an entry is usable: a warm `stats --agent codex` decoded every Claude Code
/// response of the store first, on one thread.
#[cfg_attr(test, derive(Clone))]
enum Stored {
    Facts(Box<Facts>),
    At(Range<usize>),
}

/// What the cache holds for a session ([`Cache::lookup`]).
pub enum Cached {
    /// Its facts, for its files as they are.
    Hit(Facts),
    /// The facts of its file's first bytes (this many), which are as they were: the file
    /// only grew since.
    Grown(Facts, u64),
    Miss,
}

/// The cache of one run: what was on disk, and what this run learnt.
pub struct Cache {
    dir: PathBuf,
    kind: Kind,
    formats: &'static [&'static dyn Format],
    listing: Option<u64>,
    old: Mutex<Map<Entry>>,
    /// The cache file read at the start (the `raw` bytes of the `old` entries), mapped: a
    /// warm `stats` of ten thousand sessions spent a tenth of its time copying it in.
    bytes: Option<Source>,
    fresh: Mutex<Map<Entry>>,
    /// Each file's key as this run first found it, so that a file read with several
    /// sessions (a Codex fork's parent) or checked at discovery is hashed once.
    keys: Mutex<Map<FileKey>>,
    dirty: AtomicBool,
    /// Sessions answered from the cache, and read.
    pub hits: AtomicUsize,
    pub misses: AtomicUsize,
    /// Sessions that grew, whose facts were those the cache held plus their new entries'.
    pub extended: AtomicUsize,
}

impl Cache {
    /// The cache in `dir` (nothing is created until [`Cache::save`]). `listing`: the
    /// stamp of the store's listing when the whole store was discovered, else `None` (and
    /// sessions of formats that read other files of the store are not taken from it).
    pub fn open(dir: &Path, kind: Kind, formats: &'static [&'static dyn Format], listing: Option<u64>) -> Cache {
        let source = Source::open(&dir.join(file_name(kind))).ok();
        let (old, bytes) = match source.as_ref().and_then(|s| decode(s.bytes(), formats)) {
            Some(old) => (old, source),
            None => (Map::default(), None),
        };
        Cache {
            dir: dir.to_path_buf(),
            kind,
            formats,
            listing,
            old: Mutex::new(old),
            bytes,
            fresh: Mutex::new(Map::default()),
            keys: Mutex::new(Map::default()),
            dirty: AtomicBool::new(false),
            hits: AtomicUsize::new(0),
            extended: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// Sets the stamp of the store's listing, once discovery is done (see [`Cache::open`]).
    pub fn set_listing(&mut self, listing: Option<u64>) {
        self.listing = listing;
    }

    /// Whether the cache holds facts for the file at `path`, read from it as it is now
    /// (so it is a session: it was read as one).
    pub fn holds_unchanged(&self, path: &Path) -> bool {
        self.format_unchanged(path).is_some()
    }

    /// The format and agent of the session the cache holds under `key`, read from its file
    /// (its first) as that file is now (`None`: it holds none, or the file changed): `stats
    /// --agent` leaves out another agent's sessions without looking at their facts.
    pub fn format_unchanged(&self, key: &Path) -> Option<(&'static str, &'static str)> {
        let was =
            self.old.lock().ok().and_then(|old| {
                old.get(key.as_os_str()).and_then(|e| Some((e.files.first()?.clone(), e.format, e.agent)))
            });
        let ((file, was), format, agent) = was?;
        self.key_of(&file).is_ok_and(|now| now == was).then_some((format, agent))
    }

    /// An entry's facts, decoded from the cache file if they are there (`None`: they do
    /// not decode, which the checksum makes all but impossible).
    fn take_facts(&self, entry: &mut Entry) -> Option<Facts> {
        match std::mem::replace(&mut entry.facts, Stored::Facts(Box::default())) {
            Stored::Facts(f) => Some(*f),
            Stored::At(r) => {
                let bytes = self.bytes.as_ref()?.bytes().get(r)?;
                decode_facts(bytes, entry.format, entry.agent)
            }
        }
    }

    /// [`FileKey::of`], once per file and run.
    fn key_of(&self, path: &Path) -> std::io::Result<FileKey> {
        if let Some(k) = self.keys.lock().ok().and_then(|keys| keys.get(path.as_os_str()).copied()) {
            return Ok(k);
        }
        let k = FileKey::of(path)?;
        if let Ok(mut keys) = self.keys.lock() {
            keys.insert(path.as_os_str().to_owned(), k);
        }
        Ok(k)
    }

    /// The cache's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The facts of `path`, if the cache holds them for its files as they are now.
    pub fn get(&self, path: &Path, with_tips: bool) -> Option<Facts> {
        match self.lookup(path, with_tips) {
            Cached::Hit(f) => Some(f),
            _ => None,
        }
    }

    /// The facts of `path` if the cache holds them for its files as they are now; else,
    /// for a session that is one file and only grew since (the same device and inode, its
    /// first bytes as they were), the facts of those first bytes.
    pub fn lookup(&self, path: &Path, with_tips: bool) -> Cached {
        if self.kind == Kind::Summaries && with_tips {
            return Cached::Miss;
        }
        let Some(mut entry) = self.old.lock().ok().and_then(|mut old| old.remove(path.as_os_str())) else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            self.dirty.store(true, Ordering::Relaxed);
            return Cached::Miss;
        };
        let family = self.format(entry.format).is_none_or(|f| f.reads_family());
        let usable =
            (!family || (self.listing.is_some() && entry.listing == self.listing)) && (!with_tips || entry.has_tips);
        if usable && entry.files.iter().all(|(p, k)| self.key_of(p).is_ok_and(|now| now == *k)) {
            let Some(facts) = self.take_facts(&mut entry) else {
                self.misses.fetch_add(1, Ordering::Relaxed);
                self.dirty.store(true, Ordering::Relaxed);
                return Cached::Miss;
            };
            self.hits.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut fresh) = self.fresh.lock() {
                fresh.insert(path.as_os_str().to_owned(), entry);
            }
            return Cached::Hit(facts);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.dirty.store(true, Ordering::Relaxed);
        match entry.files.as_slice() {
            [(p, k)] if usable && !family => match FileKey::of_first(p, Some(k.size)) {
                Ok(now) if (now.dev, now.ino, now.edges) == (k.dev, k.ino, k.edges) => {
                    let size = k.size;
                    match self.take_facts(&mut entry) {
                        Some(facts) => Cached::Grown(facts, size),
                        None => Cached::Miss,
                    }
                }
                _ => Cached::Miss,
            },
            _ => Cached::Miss,
        }
    }

    /// Keeps, under `key` (the session's own file, or a name for a session stored in a
    /// database), the facts read from `files` (the session's own file, or its database,
    /// first), if the first file's key is still `before`, the key it had before it was read.
    pub fn put(&self, key: &Path, files: &[PathBuf], before: FileKey, facts: &Facts) {
        if files.is_empty() {
            return;
        }
        let mut keyed = Vec::with_capacity(files.len());
        for p in files {
            let Ok(k) = FileKey::of(p) else { return };
            keyed.push((p.clone(), k));
        }
        if keyed[0].1 != before {
            return;
        }
        let mut facts = facts.clone();
        if self.kind == Kind::Summaries {
            facts.records.clear();
        }
        facts.summary.forks = 0;
        self.dirty.store(true, Ordering::Relaxed);
        if let Ok(mut fresh) = self.fresh.lock() {
            let (format, agent, has_tips) = (facts.summary.format, facts.summary.agent, facts.tips.is_some());
            let entry = Entry {
                files: keyed,
                listing: self.listing,
                format,
                agent,
                has_tips,
                facts: Stored::Facts(Box::new(facts)),
                raw: None,
            };
            fresh.insert(key.as_os_str().to_owned(), entry);
        }
    }

    fn format(&self, name: &str) -> Option<&'static dyn Format> {
        self.formats.iter().copied().find(|f| f.info().name == name)
    }

    /// Writes what this run learnt (and what it did not look at, for files that still
    /// exist), if anything changed: to a temporary file in the cache's folder, renamed
    /// over the old one.
    pub fn save(&self) -> std::io::Result<()> {
        if !self.dirty.load(Ordering::Relaxed) {
            return Ok(());
        }
        let (Ok(mut old), Ok(fresh)) = (self.old.lock(), self.fresh.lock()) else { return Ok(()) };
        // What this run did not look at, while its first file still exists.
        let mut all: Vec<(&OsString, &Entry)> = old
            .iter()
            .filter(|(p, e)| !fresh.contains_key(*p) && e.files.first().is_some_and(|(f, _)| f.is_file()))
            .collect();
        all.extend(fresh.iter());
        all.sort_by(|a, b| a.0.cmp(b.0));
        let bytes = encode(&all, self.bytes.as_ref().map_or(&[][..], Source::bytes));
        drop(all);
        old.clear();
        make_private_dir(&self.dir)?;
        let final_path = self.dir.join(file_name(self.kind));
        // A name of this process's own: two processes never write the same temporary file.
        let tmp = self.dir.join(format!(
            ".{}.{}.{:016x}.tmp",
            file_name(self.kind),
            std::process::id(),
            crate::session::write::random_u64()
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes))
            .and_then(|()| std::fs::rename(&tmp, &final_path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

fn file_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Summaries => "summaries-v1",
        Kind::Responses => "responses-v1",
    }
}

/// The cache folder, readable by its owner only (it says what sessions exist and what
/// they cost).
pub(crate) fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let mode = std::fs::metadata(dir)?.permissions().mode() & 0o777;
    if mode != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

// The encoding: MAGIC, then the entries, then a SipHash of everything before it. Numbers
// are little-endian; a string is its length (u32) and its bytes; an optional value a 0 or
// a 1 byte before it.

struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    fn opt_f64(&mut self, v: Option<f64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.f64(v);
            }
            None => self.u8(0),
        }
    }
    fn totals(&mut self, t: &Totals) {
        for v in [t.input, t.output, t.cache_read, t.cache_write, t.total_tokens, t.cost] {
            self.f64(v);
        }
    }
}

/// The checksum a cache file ends with: CRC-32 of what comes before, at memory speed; a
/// large file's two halves on two threads, their CRCs combined (the same value). A warm
/// `stats` of ten thousand sessions opens a cache of 340 MB, whose check alone took 14 ms.
fn checksum(body: &[u8]) -> u64 {
    const PARALLEL: usize = 32 << 20;
    if body.len() < PARALLEL {
        return u64::from(crc32fast::hash(body));
    }
    let crc = |part: &[u8]| {
        let mut h = crc32fast::Hasher::new();
        h.update(part);
        h
    };
    let (first, second) = body.split_at(body.len() / 2);
    let (mut first, second) = std::thread::scope(|t| {
        let second = t.spawn(|| crc(second));
        (crc(first), second.join().expect("a worker thread panicked"))
    });
    first.combine(&second);
    u64::from(first.finalize())
}

/// The cache file of `entries`; an entry read from the file at the start is copied from
/// those bytes (`raw`).
fn encode(entries: &[(&OsString, &Entry)], raw: &[u8]) -> Vec<u8> {
    // (An entry read from the file has its bytes there; one made by this run, its facts.)
    let entries: Vec<_> = entries
        .iter()
        .filter_map(|(path, e)| match (e.raw.clone().and_then(|r| raw.get(r)), &e.facts) {
            (Some(bytes), _) => Some((path, e, Ok(bytes))),
            (None, Stored::Facts(f)) => Some((path, e, Err(f))),
            (None, Stored::At(_)) => None,
        })
        .collect();
    let mut o = Out(MAGIC.to_vec());
    o.u64(entries.len() as u64);
    for (path, e, what) in entries {
        let facts = match what {
            Ok(bytes) => {
                o.0.extend_from_slice(bytes);
                continue;
            }
            Err(facts) => facts,
        };
        o.bytes(path.as_encoded_bytes());
        o.u32(e.files.len() as u32);
        for (p, k) in &e.files {
            o.bytes(p.as_os_str().as_encoded_bytes());
            for v in [k.dev, k.ino, k.size, k.mtime_ns as u64, k.edges] {
                o.u64(v);
            }
        }
        match e.listing {
            Some(l) => {
                o.u8(1);
                o.u64(l);
            }
            None => o.u8(0),
        }
        o.str(e.format);
        o.u8(e.has_tips as u8);
        let body = encode_facts(facts);
        o.u64(body.len() as u64);
        o.0.extend_from_slice(&body);
    }
    let sum = checksum(&o.0);
    o.u64(sum);
    o.0
}

/// An entry's facts, as [`decode_facts`] reads them.
fn encode_facts(facts: &Facts) -> Vec<u8> {
    let mut o = Out(Vec::new());
    let s = &facts.summary;
    o.str(&s.name);
    o.str(&s.id);
    o.opt_str(s.title.as_deref());
    o.opt_str(s.cwd.as_deref());
    o.opt_f64(s.started);
    o.opt_f64(s.last_active);
    o.u64(s.entries as u64);
    o.u64(s.leaves as u64);
    o.opt_str(s.parent.as_deref());
    o.u32(s.models.len() as u32);
    for m in &s.models {
        o.str(m);
    }
    o.totals(&s.totals);
    o.u64(s.warnings as u64);
    // Responses: their models once, then each response with its model's number.
    let mut models: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, u32> = HashMap::new();
    for r in &facts.records {
        if let Some(m) = r.model.as_deref() {
            index.entry(m).or_insert_with(|| {
                models.push(m);
                models.len() as u32
            });
        }
    }
    o.u32(models.len() as u32);
    for m in &models {
        o.str(m);
    }
    o.u64(facts.records.len() as u64);
    for r in &facts.records {
        o.u128(r.key);
        o.opt_f64(r.time);
        o.u32(r.model.as_deref().map_or(0, |m| index[m]));
        o.totals(&r.totals);
        o.u8(r.copied as u8);
    }
    match &facts.tips {
        None => o.u8(0),
        Some(tips) => {
            o.u8(1);
            o.u64(tips.len() as u64);
            for t in tips {
                o.str(&t.rev);
                o.u128(t.identity);
                o.u8(t.own as u8);
                o.u64(t.keys.len() as u64);
                for k in &t.keys {
                    o.u128(*k);
                }
            }
        }
    }
    o.0
}

/// Reads within bounds only: any malformed input is `None`, never a panic.
struct In<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u128(&mut self) -> Option<u128> {
        Some(u128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }
    /// A count of items that take at least `min` bytes each: never more than what is left.
    fn count(&mut self, n: u64, min: usize) -> Option<usize> {
        let n = usize::try_from(n).ok()?;
        (n.checked_mul(min)? <= self.b.len() - self.at).then_some(n)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> Option<String> {
        Some(crate::session::text::utf8(self.bytes()?)?.to_string())
    }
    fn path(&mut self) -> Option<PathBuf> {
        // The bytes were written from an OsStr on this platform (Unix: any bytes).
        use std::os::unix::ffi::OsStrExt;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(self.bytes()?)))
    }
    fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(f(self)?)),
            _ => None,
        }
    }
    fn totals(&mut self) -> Option<Totals> {
        Some(Totals {
            input: self.f64()?,
            output: self.f64()?,
            cache_read: self.f64()?,
            cache_write: self.f64()?,
            total_tokens: self.f64()?,
            cost: self.f64()?,
        })
    }
}

/// [`decode`] of `body` framed as a cache file is (MAGIC, `body`, its checksum), so that the
/// fuzzer reaches the body's parser (`crate::fuzzing`), and every entry's facts decoded.
pub(crate) fn decode_framed(body: &[u8], formats: &'static [&'static dyn Format]) -> usize {
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(body);
    let sum = checksum(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    let Some(entries) = decode(&b, formats) else { return 0 };
    entries
        .values()
        .filter(|e| match &e.facts {
            Stored::At(r) => b.get(r.clone()).and_then(|f| decode_facts(f, e.format, e.agent)).is_some(),
            Stored::Facts(_) => true,
        })
        .count()
}

fn decode(b: &[u8], formats: &'static [&'static dyn Format]) -> Option<Map<Entry>> {
    let body = b.get(..b.len().checked_sub(8)?)?;
    let sum = u64::from_le_bytes(b.get(body.len()..)?.try_into().ok()?);
    if !body.starts_with(MAGIC) || checksum(body) != sum {
        return None;
    }
    let mut i = In { b: body, at: MAGIC.len() };
    let n = i.u64()?;
    let n = i.count(n, 8)?;
    let mut out = Map::with_capacity_and_hasher(n, Default::default());
    for _ in 0..n {
        let start = i.at;
        let path = i.path()?.into_os_string();
        let nf = i.u32()?;
        let nf = i.count(u64::from(nf), 44)?;
        let mut files = Vec::with_capacity(nf);
        for _ in 0..nf {
            let p = i.path()?;
            let (dev, ino, size, mtime, edges) = (i.u64()?, i.u64()?, i.u64()?, i.u64()?, i.u64()?);
            files.push((p, FileKey { dev, ino, size, mtime_ns: mtime as i64, edges }));
        }
        let listing = i.opt(|i| i.u64())?;
        let format = i.string()?;
        let info = formats.iter().map(|f| f.info()).find(|f| f.name == format)?;
        let has_tips = i.u8()? == 1;
        let len = i.u64()?;
        let len = i.count(len, 1)?;
        let from = i.at;
        i.take(len)?;
        out.insert(
            path,
            Entry {
                files,
                listing,
                format: info.name,
                agent: info.agent,
                has_tips,
                facts: Stored::At(from..i.at),
                raw: Some(start..i.at),
            },
        );
    }
    (i.at == body.len()).then_some(out)
}

/// The facts [`encode_facts`] wrote, of a session of this format and agent (`None`: they
/// do not read so).
fn decode_facts(b: &[u8], format: &'static str, agent: &'static str) -> Option<Facts> {
    let mut i = In { b, at: 0 };
    let mut s = Summary { agent, format, ..Summary::default() };
    s.name = i.string()?;
    s.id = i.string()?;
    s.title = i.opt(|i| i.string())?;
    s.cwd = i.opt(|i| i.string())?;
    s.started = i.opt(|i| i.f64())?;
    s.last_active = i.opt(|i| i.f64())?;
    s.entries = usize::try_from(i.u64()?).ok()?;
    s.leaves = usize::try_from(i.u64()?).ok()?;
    s.parent = i.opt(|i| i.string())?;
    let nm = i.u32()?;
    let nm = i.count(u64::from(nm), 4)?;
    s.models = (0..nm).map(|_| i.string()).collect::<Option<_>>()?;
    s.totals = i.totals()?;
    s.warnings = usize::try_from(i.u64()?).ok()?;
    let nm = i.u32()?;
    let nm = i.count(u64::from(nm), 4)?;
    let models: Vec<std::sync::Arc<str>> = (0..nm).map(|_| i.string().map(Into::into)).collect::<Option<_>>()?;
    let nr = i.u64()?;
    let nr = i.count(nr, 70)?;
    let mut records = Vec::with_capacity(nr);
    for _ in 0..nr {
        let key = i.u128()?;
        let time = i.opt(|i| i.f64())?;
        let model = match i.u32()? {
            0 => None,
            k => Some(models.get(k as usize - 1)?.clone()),
        };
        let totals = i.totals()?;
        let copied = i.u8()? == 1;
        records.push(Record { key, time, model, totals, copied });
    }
    let tips = i.opt(|i| {
        let nt = i.u64()?;
        let nt = i.count(nt, 29)?;
        let mut tips = Vec::with_capacity(nt);
        for _ in 0..nt {
            let rev = i.string()?;
            let identity = i.u128()?;
            let own = i.u8()? == 1;
            let nk = i.u64()?;
            let nk = i.count(nk, 16)?;
            let keys = (0..nk).map(|_| i.u128()).collect::<Option<_>>()?;
            tips.push(Tip { rev, identity, keys, own });
        }
        Some(tips)
    })?;
    (i.at == b.len()).then_some(Facts { summary: s, records, tips })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let facts = Facts {
            summary: Summary {
                format: "pi",
                agent: "pi",
                name: "a.jsonl".into(),
                title: Some("t".into()),
                ..Summary::default()
            },
            records: vec![Record {
                key: 7,
                time: Some(1.0),
                model: Some("m".into()),
                totals: Totals::default(),
                copied: true,
            }],
            tips: Some(vec![Tip { rev: "abc".into(), identity: 9, keys: vec![7], own: true }]),
        };
        let key = FileKey { dev: 1, ino: 2, size: 3, mtime_ns: 4, edges: 5 };
        let e = Entry {
            files: vec![("a.jsonl".into(), key)],
            listing: Some(3),
            format: "pi",
            agent: "pi",
            has_tips: true,
            facts: Stored::Facts(Box::new(facts)),
            raw: None,
        };
        let p = OsString::from("a.jsonl");
        encode(&[(&p, &e)], &[])
    }

    #[test]
    fn what_is_written_reads_back() {
        let bytes = sample();
        let got = decode(&bytes, crate::formats::all()).expect("a cache that reads back");
        let e = &got[std::ffi::OsStr::new("a.jsonl")];
        assert_eq!((e.listing, e.format, e.agent, e.has_tips), (Some(3), "pi", "pi", true));
        let Stored::At(at) = e.facts.clone() else { panic!("facts are decoded when asked for") };
        let facts = decode_facts(&bytes[at], e.format, e.agent).expect("facts that read back");
        assert_eq!(facts.records[0].model.as_deref(), Some("m"));
        assert_eq!(facts.tips.as_ref().unwrap()[0].keys, vec![7]);
        assert_eq!(facts.summary.title.as_deref(), Some("t"));
        assert_eq!((facts.summary.format, facts.summary.agent), ("pi", "pi"));
    }

    /// An entry read from the file is saved as its bytes, with its facts moved out (as a
    /// hit moves them): the file written is the file read.
    #[test]
    fn an_entry_read_is_saved_as_read() {
        let bytes = sample();
        let mut got = decode(&bytes, crate::formats::all()).expect("a cache that reads back");
        let (path, mut e) = got.drain().next().unwrap();
        e.facts = Stored::Facts(Box::default());
        assert_eq!(encode(&[(&path, &e)], &bytes), bytes);
    }

    /// The checksum recomputed over damaged bytes, so that the parser itself meets them.
    fn reseal(mut b: Vec<u8>) -> Vec<u8> {
        let body = b.len() - 8;
        let sum = checksum(&b[..body]);
        b[body..].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// A body checked in two halves has the CRC of the whole, and a changed byte in either
    /// half changes it.
    #[test]
    fn a_large_body_is_checked_in_halves_to_the_same_crc() {
        // Over the size checked on two threads, with a byte changed in either half.
        let mut body: Vec<u8> = (0..(33u32 << 20)).map(|k| (k.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        assert_eq!(checksum(&body), u64::from(crc32fast::hash(&body)));
        let sum = checksum(&body);
        for at in [1000, body.len() - 1000] {
            body[at] ^= 1;
            assert_ne!(checksum(&body), sum);
            assert_eq!(checksum(&body), u64::from(crc32fast::hash(&body)));
            body[at] ^= 1;
        }
    }

    /// The parser bounds every count and length: damage past the checksum is an answer
    /// or `None`, never a panic nor a huge allocation.
    #[test]
    fn the_parser_survives_damage_past_the_checksum() {
        let good = sample();
        for k in MAGIC.len()..good.len() - 8 {
            for x in [0x01, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[k] ^= x;
                let bad = reseal(bad);
                let _ = decode(&bad, crate::formats::all());
                let _ = decode_framed(&bad[MAGIC.len()..bad.len() - 8], crate::formats::all());
            }
        }
    }

    /// Every byte flipped and every cut: no panic, and never a cache that reads as valid.
    #[test]
    fn a_damaged_cache_is_none_never_a_panic() {
        let good = sample();
        for k in 0..good.len() {
            let mut bad = good.clone();
            bad[k] ^= 0x5a;
            assert!(decode(&bad, crate::formats::all()).is_none(), "byte {k} flipped");
            assert!(decode(&good[..k], crate::formats::all()).is_none(), "cut at {k}");
        }
    }
}
