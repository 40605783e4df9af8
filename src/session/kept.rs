//! One session's index kept between runs, so that reading a large session again after
//! another process appended to it costs the new bytes, not the file.
//!
//! After a command has read a session whole, its index (where each entry is, its id, its
//! parent, its kind; never message text) is written to `<cache>/sessions/<hash of the
//! path>.idx`. The next read of the same file checks that the file is the one indexed and
//! that its first `covered` bytes are unchanged: same device and inode, at least as long,
//! the same first and last 4 KiB of those bytes (and, when no byte was added, the same
//! modification time). Then the format reads only the bytes after them
//! ([`Format::load_kept`]) and links only the new entries ([`Session::build_kept`]).
//! Anything else (another file, a rewrite, a truncation, a damaged or foreign index, new
//! lines the format would have something to say about) and the file is read whole, as
//! without the cache, and its index written again.
//!
//! Only sessions worth it are kept: at least [`MIN_SIZE`] bytes, read without any
//! problem to report (a problem's line numbers and counts would have to be merged with
//! the new lines'), in a format that keeps an index (pi's, today: `Dialect::keep`). An
//! index is written again once the bytes read past it reach [`STALE_AFTER`] of what it
//! covers (at least [`STALE_MIN`]), so that the bytes read past it stay few without
//! writing the whole index after every small append.
//!
//! The indexes take at most [`MAX_TOTAL`] bytes: writing one removes the least recently
//! written beyond that.
//!
//! The file is written to a temporary name and renamed over the old one: two processes
//! keeping the same session each leave a whole index. It ends with a CRC-32 of all
//! before it, and every field is checked as it is read back (offsets inside the covered
//! bytes, parents before their children, strings inside their tables): a damaged index is
//! never used.

use std::hash::Hasher;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::{EntryIdx, EntryMeta, EntryType, LineNo, Owned, Role, StrRef};
use super::format::Format;
use super::index::{Header, Label};
use super::{Session, Source};

const MAGIC: &[u8; 16] = b"pisces-kept-v1\n\0";

/// Sessions smaller than this are read whole: that takes a few milliseconds, and the
/// cache would hold a file for every small session ever read.
pub const MIN_SIZE: usize = 1 << 20;

/// The index is written again when the bytes read past it reach this fraction of those it
/// covers...
pub const STALE_AFTER: usize = 64;
/// ...or this many bytes, whichever is more.
pub const STALE_MIN: usize = 4 << 20;

/// The kept indexes take at most this much room: when a new one is written, the least
/// recently written are removed until they fit (an index is about 3 % of its session).
pub const MAX_TOTAL: u64 = 1 << 30;

/// How much of each end of the covered bytes the key hashes.
const EDGE: usize = 4096;

/// Bytes an entry takes in the index (see [`put_entry`]).
const ENTRY_BYTES: usize = 48;

/// What a kept index holds of a session: the common index of its first `covered` bytes,
/// linked, and the format's own part.
pub struct Kept {
    /// The bytes indexed, a whole number of lines.
    pub covered: usize,
    /// The physical lines in them.
    pub lines: LineNo,
    /// Their entries, parents resolved (no duplicate ids, no cycles, no dangling parents:
    /// a session with any of those is not kept).
    pub entries: Vec<EntryMeta>,
    pub owned: Owned,
    pub header: Header,
    pub labels: Vec<(String, Label)>,
    pub title: Option<String>,
    /// A 32-bit hash of every id, sorted: whether a new entry's id may already be taken
    /// (then the file is read whole), without building the id map.
    pub fingerprints: Vec<u32>,
    /// What the format keeps of its own ([`super::format::Dialect::keep`]).
    pub extra: Vec<u8>,
}

/// An id's fingerprint (see [`Kept::fingerprints`]).
pub fn fingerprint(stored_id: &str) -> u32 {
    (super::index::hash_bytes(stored_id.as_bytes()) >> 32) as u32
}

/// The kept indexes in a cache folder.
pub struct Store {
    dir: PathBuf,
}

/// A file's identity as the index is keyed on it.
struct Key {
    path: String,
    dev: u64,
    ino: u64,
    mtime_ns: i64,
}

impl Store {
    /// The kept indexes under the cache folder `cache_dir` (`<cache_dir>/sessions`).
    pub fn new(cache_dir: &Path) -> Store {
        Store { dir: cache_dir.join("sessions") }
    }

    fn key(source: &Source) -> Option<Key> {
        let (dev, ino, mtime_ns) = source.identity()?;
        let path = std::fs::canonicalize(source.path.as_ref()?).ok()?.to_str()?.to_string();
        Some(Key { path, dev, ino, mtime_ns })
    }

    fn file_for(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{:016x}.idx", super::index::hash_bytes(key.path.as_bytes())))
    }

    /// `source` read from its kept index by `format`, and how many bytes were read past
    /// the index; `None` when there is no index for it that is whole and still true of
    /// the file, or the format cannot extend it.
    pub fn load<'a>(&self, source: &'a Source, format: &'static dyn Format) -> Option<(Session<'a>, usize)> {
        let data = source.bytes();
        if data.len() < MIN_SIZE {
            return None;
        }
        let key = Store::key(source)?;
        // Mapped, not read: a copy would cost as much as decoding it. (Mapped as a session
        // is, under the guard against a file cut short under the read: the index is only
        // ever replaced by a rename, but anyone may truncate it.)
        let index = Source::open(&self.file_for(&key)).ok()?;
        let kept = decode(index.bytes(), &key, data, format.info().name).filter(|_| !index.changed())?;
        let past = data.len() - kept.covered;
        format.load_kept(source, kept).map(|s| (s, past))
    }

    /// Keeps `session`'s index, when it is one worth keeping (see the module docs).
    /// Failing to write it is not an error: the next read reads the file whole.
    pub fn save(&self, source: &Source, session: &Session) {
        let data = source.bytes();
        if data.len() < MIN_SIZE || data.last() != Some(&b'\n') {
            return;
        }
        let Some(key) = Store::key(source) else { return };
        let Some(body) = encode(session, &key, data) else { return };
        let to = self.file_for(&key);
        if self.write(&to, &body).is_ok() {
            prune(&self.dir, MAX_TOTAL, &to);
        }
    }

    fn write(&self, to: &Path, body: &[u8]) -> std::io::Result<()> {
        if let Some(cache) = self.dir.parent() {
            crate::store::cache::make_private_dir(cache)?;
        }
        crate::store::cache::make_private_dir(&self.dir)?;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let tmp = self.dir.join(format!(".{}.{}.{nanos}.tmp", std::process::id(), super::index::hash_bytes(body)));
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(body)?;
            std::fs::rename(&tmp, to)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// Removes the least recently written indexes in `dir` (never `keep`, the one just
/// written) until those left take at most `max` bytes. Errors are ignored: another
/// process may be pruning too.
fn prune(dir: &Path, max: u64, keep: &Path) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "idx"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= max {
            break;
        }
        if path != keep && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

fn edge_hash(b: &[u8]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.finish()
}

/// The hashes of the first and the last [`EDGE`] bytes of `covered`.
fn edges(covered: &[u8]) -> (u64, u64) {
    (edge_hash(&covered[..covered.len().min(EDGE)]), edge_hash(&covered[covered.len().saturating_sub(EDGE)..]))
}

// ---- Writing --------------------------------------------------------------------------

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_entry(out: &mut Vec<u8>, e: &EntryMeta) {
    put_u64(out, e.start as u64);
    put_u32(out, e.len);
    put_u32(out, e.line.get());
    put_u32(out, e.parent().map_or(0, |p| p.get() as u32 + 1));
    for r in [e.id, e.parent_id] {
        let (bytes, meta) = r.to_raw();
        out.extend_from_slice(&bytes);
        put_u32(out, meta);
    }
    let kind = EntryType::ALL.iter().position(|&k| k == e.kind).unwrap_or(0) as u8;
    let role = Role::ALL.iter().position(|&r| r == e.role).unwrap_or(0) as u8;
    out.extend_from_slice(&[kind, role, e.unreadable() as u8, 0]);
}

/// The index of `s` (all of `data`), or `None` when it is not one to keep.
fn encode(s: &Session, key: &Key, data: &[u8]) -> Option<Vec<u8>> {
    if !s.diagnostics.is_empty() || s.duplicate_ids || s.synthetic_ids || s.path.is_none() {
        return None;
    }
    let extra = s.dialect().keep(s)?;
    let lines = s.entries.last().map_or(0, |e| e.line.get()).max(s.header.line.map_or(0, |l| l.get()));
    let mut out = Vec::with_capacity(64 + s.entries.len() * (ENTRY_BYTES + 4));
    out.extend_from_slice(MAGIC);
    put_str(&mut out, &key.path);
    put_str(&mut out, s.format().name);
    let (head, tail) = edges(data);
    for v in [key.dev, key.ino, key.mtime_ns as u64, data.len() as u64, head, tail] {
        put_u64(&mut out, v);
    }
    put_u32(&mut out, lines);
    put_u64(&mut out, s.entries.len() as u64);
    for e in s.entries.iter() {
        put_entry(&mut out, e);
    }
    let (text, ends) = s.owned().parts();
    put_str(&mut out, text);
    put_u64(&mut out, ends.len() as u64);
    for &e in ends {
        put_u64(&mut out, e as u64);
    }
    put_str(&mut out, &Value::Object(s.header.raw.clone()).to_string());
    put_u32(&mut out, s.header.line.map_or(0, |l| l.get()));
    let labels: Vec<_> = s.labels().collect();
    put_u64(&mut out, labels.len() as u64);
    for (target, l) in labels {
        put_str(&mut out, target);
        put_str(&mut out, &l.text);
        put_str(&mut out, &l.timestamp.to_string());
        put_u32(&mut out, l.entry.get() as u32);
    }
    match &s.title {
        Some(t) => {
            out.push(1);
            put_str(&mut out, t);
        }
        None => out.push(0),
    }
    let mut fingerprints: Vec<u32> = s.entries.indices().filter_map(|i| s.stored_id(i).map(fingerprint)).collect();
    fingerprints.sort_unstable();
    put_u64(&mut out, fingerprints.len() as u64);
    for f in fingerprints {
        put_u32(&mut out, f);
    }
    put_u64(&mut out, extra.len() as u64);
    out.extend_from_slice(&extra);
    let crc = crc32fast::hash(&out);
    put_u32(&mut out, crc);
    Some(out)
}

// ---- Reading --------------------------------------------------------------------------

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    /// A count of items of at least `min` bytes each, if that many could follow.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(min)? <= self.b.len()).then_some(n)
    }

    fn str(&mut self) -> Option<&'a str> {
        let n = self.count(1)?;
        super::text::utf8(self.take(n)?)
    }
}

/// The index in `bytes`, if it is whole, is about this file (`key`, whose first bytes
/// are `data`) in `format`, and what it covers is still `data`'s beginning.
fn decode(bytes: &[u8], key: &Key, data: &[u8], format: &str) -> Option<Kept> {
    let (body, crc) = bytes.split_at_checked(bytes.len().checked_sub(4)?)?;
    if !body.starts_with(MAGIC) || crc32fast::hash(body).to_le_bytes() != crc {
        return None;
    }
    let mut r = Reader { b: &body[MAGIC.len()..] };
    if r.str()? != key.path || r.str()? != format {
        return None;
    }
    let (dev, ino, mtime_ns, covered, head, tail) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?);
    let covered = usize::try_from(covered).ok()?;
    let same_file = dev == key.dev && ino == key.ino && covered <= data.len();
    // Unchanged, or grown: the same bytes where the index ends (and a new time alone, at
    // the same length, may be a rewrite of the middle).
    if !same_file
        || covered == 0
        || data[covered - 1] != b'\n'
        || edges(&data[..covered]) != (head, tail)
        || (covered == data.len() && mtime_ns != key.mtime_ns as u64)
    {
        return None;
    }
    let lines = LineNo(r.u32()?);
    let n = r.count(ENTRY_BYTES)?;
    let raw_entries = r.take(n * ENTRY_BYTES)?;
    let text = r.str()?.to_string();
    let n_ends = r.count(8)?;
    let ends = (0..n_ends).map(|_| r.u64().and_then(|e| usize::try_from(e).ok())).collect::<Option<Vec<_>>>()?;
    let owned = Owned::from_parts(text, ends)?;
    // Room for the entries of the bytes past the index too (at twice the index's bytes per
    // entry, plus some): growing the table later would move it, and split its huge pages.
    let past = (data.len() - covered).saturating_mul(n) / covered;
    let mut entries = super::vec_for_large(n.saturating_add(past.saturating_mul(2)).saturating_add(1024));
    decode_entries(raw_entries, &mut entries, |k, rec| {
        entry(rec, k, covered, owned.len()).filter(|e| e.line <= lines)
    })?;
    let raw: Map<String, Value> = serde_json::from_str(r.str()?).ok()?;
    let header_line = r.u32()?;
    let header = Header {
        id: raw.get("id").and_then(Value::as_str)?.to_string(),
        cwd: raw.get("cwd").cloned(),
        version: raw.get("version").cloned(),
        parent_session: raw.get("parentSession").cloned(),
        line: (header_line > 0).then_some(LineNo(header_line)),
        raw,
    };
    let n_labels = r.count(28)?;
    let mut labels = Vec::with_capacity(n_labels);
    for _ in 0..n_labels {
        let target = r.str()?.to_string();
        let text = r.str()?.to_string();
        let timestamp: Value = serde_json::from_str(r.str()?).ok()?;
        let entry = r.u32()? as usize;
        (entry < entries.len()).then_some(())?;
        labels.push((target, Label { text, timestamp, entry: EntryIdx::new(entry) }));
    }
    let title = match r.u8()? {
        0 => None,
        1 => Some(r.str()?.to_string()),
        _ => return None,
    };
    let n_fp = r.count(4)?;
    let fingerprints: Vec<u32> =
        r.take(n_fp * 4)?.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if !fingerprints.is_sorted() {
        return None;
    }
    let n_extra = r.count(1)?;
    let extra = r.take(n_extra)?.to_vec();
    if !r.b.is_empty() {
        return None;
    }
    Some(Kept { covered, lines, entries, owned, header, labels, title, fingerprints, extra })
}

/// Index files with fewer entries than this are decoded on one thread.
const PARALLEL_ENTRIES: usize = 1 << 16;

/// Decodes the records of `raw` with `entry(k, record)` into `out` (empty, with room for
/// them all), checking that their lines increase; `None` if any record is not valid. A
/// large index is decoded in two halves on two threads, each writing its own part of
/// `out`'s room: half a million records take a few milliseconds a half, most of it the
/// first touch of the table's memory.
fn decode_entries(
    raw: &[u8],
    out: &mut Vec<EntryMeta>,
    entry: impl Fn(usize, &[u8]) -> Option<EntryMeta> + Sync,
) -> Option<()> {
    let n = raw.len() / ENTRY_BYTES;
    if out.capacity() < n || !out.is_empty() {
        return None;
    }
    // Fills `slots` with records `from..`; the line of its last (0 when none).
    let fill = |slots: &mut [std::mem::MaybeUninit<EntryMeta>], from: usize| -> Option<u32> {
        let mut last = 0;
        for (j, slot) in slots.iter_mut().enumerate() {
            let k = from + j;
            let e = entry(k, &raw[k * ENTRY_BYTES..(k + 1) * ENTRY_BYTES])?;
            if e.line.get() <= last {
                return None;
            }
            last = e.line.get();
            slot.write(e);
        }
        Some(last)
    };
    let (first, second) = out.spare_capacity_mut()[..n].split_at_mut(if n >= PARALLEL_ENTRIES { n / 2 } else { n });
    let mid = first.len();
    let (a, b) = std::thread::scope(|t| {
        let b = (!second.is_empty()).then(|| t.spawn(|| fill(second, mid)));
        (fill(first, 0), b.map(|h| h.join().ok().flatten()))
    });
    let last_of_first = a?;
    if let Some(b) = b {
        b?;
    }
    // SAFETY: both halves wrote every one of their slots (a failed record returned above,
    // leaving the length 0: `EntryMeta` has nothing to drop).
    unsafe { out.set_len(n) };
    // The second half's first line must come after the first half's last.
    (mid == n || out[mid].line.get() > last_of_first).then_some(())
}

/// Entry `k` of an index covering `covered` bytes, from its record, if it can be valid:
/// its line inside them, its parent before it.
fn entry(rec: &[u8], k: usize, covered: usize, owned: usize) -> Option<EntryMeta> {
    // A fixed-size record: every offset below is checked when compiled, not when read
    // (half a million records).
    let rec: &[u8; ENTRY_BYTES] = rec.try_into().ok()?;
    let u32_at = |at: usize| u32::from_le_bytes([rec[at], rec[at + 1], rec[at + 2], rec[at + 3]]);
    let start =
        usize::try_from(u64::from_le_bytes([rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6], rec[7]])).ok()?;
    let len = u32_at(8) as usize;
    if start.checked_add(len)? >= covered {
        return None;
    }
    let line = LineNo(u32_at(12));
    let parent = match u32_at(16) {
        0 => None,
        p if (p as usize - 1) < k => Some(EntryIdx::new(p as usize - 1)),
        _ => return None,
    };
    let str_ref = |at: usize| {
        let bytes =
            [rec[at], rec[at + 1], rec[at + 2], rec[at + 3], rec[at + 4], rec[at + 5], rec[at + 6], rec[at + 7]];
        StrRef::from_raw(bytes, u32_at(at + 8), len, owned)
    };
    let (id, parent_id) = (str_ref(20)?, str_ref(32)?);
    let kind = *EntryType::ALL.get(rec[44] as usize)?;
    let role = *Role::ALL.get(rec[45] as usize)?;
    let mut e = EntryMeta::new(start, len, line, kind, role);
    e.set_parent(parent);
    e.id = id;
    e.parent_id = parent_id;
    e.set_unreadable(match rec[46] {
        0 => false,
        1 => true,
        _ => return None,
    });
    (rec[47] == 0).then_some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of `n` entries on lines 1, 3, 5, …, each the child of the one before.
    fn records(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for k in 0..n {
            let mut e = EntryMeta::new(k * 10, 5, LineNo(2 * k as u32 + 1), EntryType::Message, Role::User);
            e.set_parent(k.checked_sub(1).map(EntryIdx::new));
            put_entry(&mut out, &e);
        }
        out
    }

    fn decoded(raw: &[u8]) -> Option<Vec<EntryMeta>> {
        let n = raw.len() / ENTRY_BYTES;
        let mut out = Vec::with_capacity(n);
        decode_entries(raw, &mut out, |k, rec| entry(rec, k, usize::MAX, 0))?;
        Some(out)
    }

    /// Small and large indexes (one thread, two) decode to the records written, in order,
    /// and a bad record anywhere (in either half, or lines out of order where the halves
    /// meet) refuses the whole index.
    #[test]
    fn entries_decode_whole_on_one_thread_or_two_and_any_bad_record_refuses_them() {
        for n in [0, 3, PARALLEL_ENTRIES + 5] {
            let raw = records(n);
            let got = decoded(&raw).unwrap();
            assert_eq!(got.len(), n);
            for (k, e) in got.iter().enumerate() {
                assert_eq!(
                    (e.start, e.line.get(), e.parent()),
                    (k * 10, 2 * k as u32 + 1, k.checked_sub(1).map(EntryIdx::new))
                );
            }
        }
        let n = PARALLEL_ENTRIES + 5;
        for bad in [1, n / 2 + 7, n - 1] {
            let mut raw = records(n);
            raw[bad * ENTRY_BYTES + 44] = 200; // no such kind
            assert!(decoded(&raw).is_none(), "bad record {bad}");
        }
        // The first record of the second half on the line of the one before it.
        let mut raw = records(n);
        let mid = n / 2;
        let line_before = (2 * (mid - 1) as u32 + 1).to_le_bytes();
        raw[mid * ENTRY_BYTES + 12..mid * ENTRY_BYTES + 16].copy_from_slice(&line_before);
        assert!(decoded(&raw).is_none());
    }

    #[test]
    fn pruning_removes_the_oldest_until_the_rest_fit_and_never_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let at = |secs: u64| std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000 + secs);
        // a (oldest), b, c, and new (just written, but given the oldest time of all).
        for (name, secs, len) in [("a", 10, 400), ("b", 20, 400), ("c", 30, 400), ("new", 0, 400)] {
            let p = dir.path().join(format!("{name}.idx"));
            std::fs::write(&p, vec![0u8; len]).unwrap();
            std::fs::File::options().write(true).open(&p).unwrap().set_modified(at(secs)).unwrap();
        }
        std::fs::write(dir.path().join("other.tmp"), vec![0u8; 5000]).unwrap();
        prune(dir.path(), 900, &dir.path().join("new.idx"));
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["c.idx", "new.idx", "other.tmp"]);
    }
}
