//! Every session on this machine at once (`ls`, `grep`): where each agent keeps them, one
//! summary row per session, and text search over them. Discovery is the one SESSION
//! lookup uses (`Env::session_dirs`, `formats::stores`); reading is each format's, behind
//! the seam, so nothing here knows one format from another.

pub mod cache;
pub mod facts;
pub mod grep;
pub mod list;
pub mod stats;
pub mod summary;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::env::Env;
use crate::session::format::{Format, FormatInfo};
use crate::session::locate::walk_kind;
use crate::session::{LoadError, Source};

/// Where one session is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Where {
    /// A file of its own (pi, oh-my-pi, Claude Code, Codex).
    File(PathBuf),
    /// Rows of an agent's database (OpenClaw): named `openclaw:<agent>/<id>`.
    Stored { db: PathBuf, agent: String, id: String },
}

impl Where {
    /// How commands name it (a SESSION argument that finds it again).
    pub fn name(&self) -> String {
        match self {
            Where::File(p) => p.display().to_string(),
            Where::Stored { agent, id, .. } => format!("openclaw:{agent}/{id}"),
        }
    }

    /// Its bytes, as its format reads them.
    pub fn open(&self) -> Result<Source, LoadError> {
        match self {
            Where::File(p) => Source::open(p),
            Where::Stored { db, agent, id } => crate::formats::open_stored(db, agent, id),
        }
    }
}

/// A file in an agent's session folder that is not a session, and what it is.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub path: PathBuf,
    pub what: String,
}

/// What the stores hold.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Every session, folder by folder (each folder's files sorted), then the databases'.
    pub sessions: Vec<Where>,
    /// The format each session's head showed, when discovery read it (`None`: the cache
    /// held the file unchanged, its head shows none or is compressed, or a database's).
    pub heads: Vec<Option<&'static FormatInfo>>,
    /// Files in session folders that are not sessions (locks, side files, event logs).
    pub skipped: Vec<Skipped>,
}

/// Every session of every agent: the files directly in each agent's session folders
/// (`Env::session_dirs`: pi's project folders, or `--session-dir` alone; oh-my-pi's
/// buckets; Claude Code's project folders; Codex's day folders) and the sessions in
/// OpenClaw's databases. Folders inside session folders (Claude Code's subagent and tool
/// result folders) are not sessions of their own and are not looked into.
///
/// Each file's head is read to tell a session from a look-alike, on every processor. A
/// file `cache` holds, unchanged since it was read as a session, is one still: its head
/// is not read again (a warm `ls` of ten thousand sessions spent most of its time here).
pub fn discover(
    env: &Env,
    session_dir: Option<&Path>,
    formats: &[&'static dyn Format],
    cache: Option<&cache::Cache>,
) -> Discovery {
    classify(env, session_dir, session_files(env, session_dir), formats, cache)
}

/// [`discover`], the cache opened by `open` on another thread while the folders are
/// listed (a warm `stats` of ten thousand sessions spends about as long checking its
/// 340 MB cache as listing the folders); the discovery, and the cache.
pub fn discover_opening(
    env: &Env,
    session_dir: Option<&Path>,
    formats: &[&'static dyn Format],
    open: impl FnOnce() -> Option<cache::Cache> + Send,
) -> (Discovery, Option<cache::Cache>) {
    let (files, cache) = std::thread::scope(|t| {
        let cache = t.spawn(open);
        let files = session_files(env, session_dir);
        (files, cache.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    (classify(env, session_dir, files, formats, cache.as_ref()), cache)
}

/// The files directly in the session folders, each folder's sorted by name, with whether
/// its name is a session file's.
fn session_files(env: &Env, session_dir: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let mut files = Vec::new();
    for dir in env.session_dirs(session_dir) {
        let Ok(read) = std::fs::read_dir(&dir) else { continue };
        // Sorted by name, which orders the paths of one folder as their own order does at
        // a fraction of the cost (that compares every component of both: a tenth of a
        // warm `ls` of ten thousand sessions).
        let mut names: Vec<(std::ffi::OsString, bool)> =
            read.flatten().map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_dir()))).collect();
        names.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        for (name, is_dir) in names {
            if is_dir {
                continue;
            }
            let n = name.as_encoded_bytes();
            let session_name = n.ends_with(b".jsonl") || n.ends_with(b".jsonl.gz");
            files.push((dir.join(name), session_name));
        }
    }
    files
}

/// Tells the sessions among `files` from the rest (by their heads, unless `cache` holds
/// them unchanged), and adds the databases' sessions.
fn classify(
    env: &Env,
    session_dir: Option<&Path>,
    files: Vec<(PathBuf, bool)>,
    formats: &[&'static dyn Format],
    cache: Option<&cache::Cache>,
) -> Discovery {
    let mut found = Discovery::default();
    let mut kinds: Vec<Result<Option<&'static FormatInfo>, String>> = vec![Ok(None); files.len()];
    each_parallel(
        &files,
        threads(),
        |_, (p, session_name)| match cache {
            _ if !session_name => Err("not a session file".to_string()),
            Some(c) if c.holds_unchanged(p) => Ok(None),
            _ => walk_kind(p, formats),
        },
        |k, kind| kinds[k] = kind,
    );
    for ((p, _), kind) in files.into_iter().zip(kinds) {
        match kind {
            Ok(head) => {
                found.sessions.push(Where::File(p));
                found.heads.push(head);
            }
            Err(what) => found.skipped.push(Skipped { path: p, what }),
        }
    }
    if session_dir.is_none() {
        for store in crate::formats::stores(env) {
            for id in (store.ids)(&store.db).unwrap_or_default() {
                found.sessions.push(Where::Stored { db: store.db.clone(), agent: store.agent.clone(), id });
                found.heads.push(None);
            }
        }
    }
    found
}

/// Whether session `w` may be one of `agents`' (each a format's short name or its agent's
/// name, any case; none: every agent's), told before it is read from the format its head
/// shows: `head`, when discovery read it (`Some`), else read here. `stats --no-cache
/// --agent claude` then reads Claude Code's sessions only, not every session to keep a
/// few. A file whose head shows no format (it is read as the first format) and a session
/// in a database may be.
pub fn may_be_of(
    w: &Where,
    head: Option<Option<&'static FormatInfo>>,
    agents: &[String],
    formats: &[&'static dyn Format],
) -> bool {
    let Where::File(p) = w else { return true };
    if agents.is_empty() {
        return true;
    }
    let head = head.unwrap_or_else(|| crate::session::locate::format_of_head(p, formats).map(|f| f.info()));
    match head {
        Some(f) => agents.iter().any(|a| a.eq_ignore_ascii_case(f.name) || a.eq_ignore_ascii_case(f.agent)),
        None => true,
    }
}

/// Runs `work` on every item on up to `threads` threads (items are taken one at a time,
/// so a large session does not hold the others up), calling `done` on this thread as
/// each result arrives, in no particular order. At most `threads` sessions are read at
/// once, which is what bounds the memory of commands over the whole store.
///
/// A thread hands its results over in batches (up to `BATCH`, or what it has after 20 ms):
/// a session answered from the cache takes microseconds, and handing over each one alone
/// (a wake-up of this thread per item) cost more than the work.
pub fn each_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(usize, &T) -> R + Sync,
    mut done: impl FnMut(usize, R),
) {
    const BATCH: usize = 64;
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<Vec<(usize, R)>>();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1).min(items.len().max(1)) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || {
                let mut batch = Vec::new();
                let mut since = std::time::Instant::now();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(k) else { break };
                    batch.push((k, work(k, item)));
                    if batch.len() >= BATCH || since.elapsed() >= std::time::Duration::from_millis(20) {
                        if tx.send(std::mem::take(&mut batch)).is_err() {
                            return;
                        }
                        since = std::time::Instant::now();
                    }
                }
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
            });
        }
        drop(tx);
        for batch in rx {
            for (k, r) in batch {
                done(k, r);
            }
        }
    });
}

/// The threads whole-store commands read on: one per processor.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
