//! What the whole-store commands know of one session without its text: its `ls` row, its
//! model responses (`stats`) and, when asked, its branch tips. Computed from a loaded
//! session, or taken from the cache (`store::cache`) when its files did not change.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use super::cache::{Cache, Cached};
use super::summary::{summarize, summarize_with, Summary, Usages};
use super::Where;
use crate::session::entry::{EntryIdx, EntryType};
use crate::session::format::{Format, Unreadable};
use crate::session::usage::Totals;
use crate::session::Session;

/// One model response as read from one session (`Dialect::response`).
#[derive(Clone, Debug)]
pub struct Record {
    /// The format's key for it, hashed to 128 bits.
    pub key: u128,
    pub time: Option<f64>,
    /// Shared: a session's responses name a few models many times over.
    pub model: Option<std::sync::Arc<str>>,
    pub totals: Totals,
    /// The format marks it as made in another session.
    pub copied: bool,
}

/// A branch tip as read from one session.
#[derive(Clone, Debug)]
pub struct Tip {
    /// A REV for it (its id, else `#LINE`).
    pub rev: String,
    /// The same tip read from another file (a Codex family) has the same identity.
    pub identity: u128,
    /// The responses on its path, each once.
    pub keys: Vec<u128>,
    /// Its own line is in this session's file.
    pub own: bool,
}

/// Everything `ls` and `stats` need of a session.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub summary: Summary,
    pub records: Vec<Record>,
    /// Only computed when asked for (`stats --by branch`): a session with thousands of
    /// branches deep in a large file has paths that are long to walk.
    pub tips: Option<Vec<Tip>>,
}

/// What to compute beyond the summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Need {
    /// The responses (`stats`).
    pub records: bool,
    /// The branch tips (`stats --by branch`).
    pub tips: bool,
}

/// The facts of a loaded session, named `name`.
pub fn of(s: &Session, name: String, need: Need) -> Result<Facts, Unreadable> {
    let d = s.dialect();
    let mut records = Vec::new();
    let mut key_of = HashMap::new();
    let summary = if need.records || need.tips {
        let mut usages = Usages::new();
        add_records(s, 0, &mut records, &mut key_of, &mut usages)?;
        summarize_with(s, name, Some(&usages))?
    } else {
        summarize(s, name)?
    };
    let tips = need.tips.then(|| {
        s.leaves()
            .into_iter()
            .map(|leaf| {
                let mut seen = HashSet::new();
                let keys: Vec<u128> =
                    s.path_to(leaf).iter().filter_map(|i| key_of.get(i).copied()).filter(|k| seen.insert(*k)).collect();
                let rev = match s.id_str(leaf) {
                    Some(id) => id.to_string(),
                    None => format!("#{}", s.entries[leaf].line.get()),
                };
                let identity = hash128(s.format().name, &format!("{rev}\u{1f}{:?}", s.time(leaf)));
                Tip { rev, identity, keys, own: d.place(s, leaf).is_none() }
            })
            .collect()
    });
    Ok(Facts { summary, records, tips })
}

/// The responses of the entries from the `from`-th on, and each one's key by entry.
fn add_records(
    s: &Session,
    from: usize,
    records: &mut Vec<Record>,
    key_of: &mut HashMap<EntryIdx, u128>,
    usages: &mut Usages,
) -> Result<(), Unreadable> {
    let d = s.dialect();
    for i in s.entries.indices().skip(from) {
        if let Some(r) = d.response(s, i)? {
            let key = hash128(s.format().name, &r.key);
            key_of.insert(i, key);
            usages.insert(i, r.totals);
            records.push(Record {
                key,
                time: s.time(i),
                model: r.model.map(Into::into),
                totals: r.totals,
                copied: r.copied,
            });
        }
    }
    Ok(())
}

/// The facts of `s` from `old`, those of its first `covered` bytes, and the entries after
/// them, when that is what [`of`] gives: a format whose lines are its entries (each line's
/// usage and response its own), those bytes ending with a line, nothing to report then
/// or now, no new name for the session, and no branch tips asked for (their paths hold old
/// entries). `None` otherwise.
fn extended(s: &Session, old: &Facts, covered: u64, name: String, need: Need) -> Result<Option<Facts>, Unreadable> {
    let covered = usize::try_from(covered).unwrap_or(usize::MAX);
    let ends_a_line = covered > 0 && s.data().get(covered - 1) == Some(&b'\n');
    if !s.dialect().lines_are_entries() || need.tips || !ends_a_line || old.summary.warnings > 0 || s.warnings() > 0 {
        return Ok(None);
    }
    let from = s.entries.before_offset(covered);
    if s.entries.iter().skip(from).any(|e| e.kind == EntryType::SessionInfo) {
        return Ok(None);
    }
    let summary = super::summary::extend(s, &old.summary, from, name)?;
    let mut records = if need.records { old.records.clone() } else { Vec::new() };
    if need.records {
        add_records(s, from, &mut records, &mut HashMap::new(), &mut Usages::new())?;
    }
    Ok(Some(Facts { summary, records, tips: None }))
}

/// A key, 128 bits wide so that millions of responses do not collide: SipHash, twice.
pub fn hash128(format: &str, key: &str) -> u128 {
    let half = |seed: u8| {
        let mut h = std::hash::DefaultHasher::new();
        (seed, format, key).hash(&mut h);
        h.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(1))
}

/// Where the facts of the session at `w` are cached, and the file they are keyed on: under
/// the session's file; a session in a database (OpenClaw's, one per agent) under
/// `<database>#<agent>/<id>`, keyed on the database file, so that any write to it reads its
/// sessions again. Not while a writer's log (`-wal`) is there: rows in it are not in the
/// database file yet.
pub fn cache_key(w: &Where) -> (Option<PathBuf>, Option<&std::path::Path>) {
    match w {
        Where::File(p) => (Some(p.clone()), Some(p.as_path())),
        Where::Stored { db, agent, id } => {
            let wal = PathBuf::from(format!("{}-wal", db.display()));
            match wal.exists() {
                true => (None, None),
                false => (Some(PathBuf::from(format!("{}#{agent}/{id}", db.display()))), Some(db.as_path())),
            }
        }
    }
}

/// The facts of the session at `w`: from the cache when it holds them for the files as
/// they are now, else read (and given to the cache).
pub fn read(
    w: &Where,
    formats: &'static [&'static dyn Format],
    need: Need,
    cache: Option<&Cache>,
) -> Result<Facts, String> {
    let (key, file) = cache_key(w);
    let mut grown = None;
    if let (Some(c), Some(k)) = (cache, &key) {
        match c.lookup(k, need.tips) {
            Cached::Hit(f) => return Ok(f),
            Cached::Grown(f, covered) => grown = Some((f, covered)),
            Cached::Miss => {}
        }
    }
    // The file's key before it is read: facts are cached only if it is the same after,
    // so that what another process appends meanwhile is never taken for read.
    let before = file.filter(|_| cache.is_some()).and_then(|p| super::cache::FileKey::of(p).ok());
    let open = || Ok(vec![w.open()?]);
    // A session that grew is read from its kept index when it has one (and kept, when
    // large, for its next growth: see `session::kept`), and its facts are those it had,
    // plus its new entries'.
    let kept = grown.as_ref().and(cache).map(|c| crate::session::kept::Store::new(c.dir()));
    let (facts, files, was_extended): (Facts, Vec<PathBuf>, bool) = crate::session::open::read_with(
        &open,
        formats,
        &mut |_| Ok(()),
        |sessions, reading| {
            let s = &sessions[0];
            let facts = match &grown {
                Some((old, covered)) => extended(s, old, *covered, w.name(), need)?,
                None => None,
            };
            Ok(match facts {
                Some(f) => (f, reading.files(), true),
                None => (of(s, w.name(), need)?, reading.files(), false),
            })
        },
        crate::session::open::Afterwards::Free,
        kept.as_ref(),
    )
    .map_err(|e| format!("{e:#}"))?;
    if let (Some(c), true) = (cache, was_extended) {
        c.extended.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    // A stored session's files: its database.
    let files = match (w, files.is_empty()) {
        (Where::Stored { db, .. }, true) => vec![db.clone()],
        _ => files,
    };
    if let (Some(c), Some(before), Some(key)) = (cache, before, &key) {
        c.put(key, &files, before, &facts);
    }
    Ok(facts)
}
