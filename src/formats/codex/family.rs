//! Where a rollout's family is in the store (docs/codex-format.md §1.2): the rollouts a fork
//! inherits its history from, and the forks made of it.
//!
//! A fork copies no history: its `session_meta.history_base.thread_id` names the parent
//! thread, whose rollout is `rollout-<time>-<thread id>.jsonl` somewhere under the same
//! `$CODEX_HOME` (`sessions/YYYY/MM/DD/`, or `archived_sessions/` once archived). The store is
//! found from the file's own path (the folder above `sessions/`), never from the environment,
//! so a copied store reads the same as the original.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;

use crate::session::format::Companion;

/// A rollout's first line, as far as its family goes.
#[derive(Deserialize)]
struct MetaLine {
    #[serde(rename = "type")]
    ty: Option<String>,
    payload: Option<MetaPayload>,
}

#[derive(Deserialize)]
struct MetaPayload {
    id: Option<String>,
    history_base: Option<HistoryBase>,
}

#[derive(Deserialize)]
struct HistoryBase {
    thread_id: Option<String>,
    end_byte_offset: Option<u64>,
}

/// The thread a rollout is and the thread it inherits from, from its first line.
pub fn thread_and_parent(first_line: &[u8]) -> Option<(String, Option<String>)> {
    fork_meta(first_line).map(|(t, p, _)| (t, p))
}

/// The thread, its parent, and where in the parent's file the history it inherits ends.
fn fork_meta(first_line: &[u8]) -> Option<(String, Option<String>, Option<u64>)> {
    let line: MetaLine = serde_json::from_slice(first_line).ok()?;
    if line.ty.as_deref() != Some("session_meta") {
        return None;
    }
    let p = line.payload?;
    let (parent, end) = match p.history_base {
        Some(h) => (h.thread_id, h.end_byte_offset),
        None => (None, None),
    };
    Some((p.id?, parent, end))
}

/// The first line of the file at `path` (at most 4 MiB of it: a `session_meta` carries the
/// base instructions, a few kilobytes).
fn first_line(path: &Path) -> Option<Vec<u8>> {
    // (Before opening it: opening a FIFO waits for a writer.)
    if !path.metadata().ok()?.is_file() {
        return None;
    }
    let file = File::open(path).ok()?;
    let mut line = Vec::new();
    BufReader::new(file.take(4 << 20)).read_until(b'\n', &mut line).ok()?;
    Some(line)
}

/// The thread id at the end of a rollout's file name (`rollout-…-<uuid>.jsonl`).
fn id_in_name(path: &Path) -> Option<&str> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    (id.len() == 36 && id.bytes().filter(|&b| b == b'-').count() == 4).then_some(id)
}

/// A rollout's thread and the thread it inherits from.
type Meta = (String, Option<String>);

/// The rollouts of one store (or of one folder, outside a store), listed once per process:
/// `ls` asks for the family of every rollout in the store, and listing the store and reading
/// every first line again for each one made that quadratic in the number of sessions.
struct Store {
    files: Vec<PathBuf>,
    /// Each file's thread and parent thread, read from its first line when first needed.
    metas: Vec<OnceLock<Option<Meta>>>,
    /// Parent thread -> the files that fork it, in file order, over the whole store (made the
    /// first time the forks of a thread are looked for).
    children: OnceLock<HashMap<String, Vec<usize>>>,
    /// Thread -> the files of that thread (by the id in their name, else their first
    /// line), in file order (made the first time a parent is looked for: scanning the
    /// list for each fork's parent made a store of thousands of forks quadratic).
    by_thread: OnceLock<HashMap<String, Vec<usize>>>,
}

impl Store {
    /// The store around `path`, listed the first time this process asks for it. (A file
    /// added to the store while a command runs is not seen by that command.)
    fn around(path: &Path) -> Arc<Store> {
        /// (The folder, and whether it is a store's root rather than a lone folder.)
        type Stores = Mutex<HashMap<(PathBuf, bool), Arc<Store>>>;
        static STORES: OnceLock<Stores> = OnceLock::new();
        let dir = path.parent().unwrap_or(Path::new("."));
        let root = dir
            .ancestors()
            .take(5)
            .find(|d| matches!(d.file_name().and_then(|n| n.to_str()), Some("sessions" | "archived_sessions")))
            .and_then(Path::parent);
        let key = match root {
            Some(root) => (root.to_path_buf(), true),
            None => (dir.to_path_buf(), false),
        };
        let mut stores = STORES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        stores
            .entry(key)
            .or_insert_with_key(|(at, is_store)| {
                let mut files = Vec::new();
                if *is_store {
                    for sub in ["sessions", "archived_sessions"] {
                        walk(&at.join(sub), 4, &mut files);
                    }
                } else {
                    walk(at, 0, &mut files);
                }
                files.sort();
                let metas = files.iter().map(|_| OnceLock::new()).collect();
                Arc::new(Store { files, metas, children: OnceLock::new(), by_thread: OnceLock::new() })
            })
            .clone()
    }

    fn meta(&self, k: usize) -> Option<&Meta> {
        self.metas[k].get_or_init(|| first_line(&self.files[k]).and_then(|l| thread_and_parent(&l))).as_ref()
    }

    /// The files of `thread`, in file order.
    fn of_thread(&self, thread: &str) -> &[usize] {
        let by_thread = self.by_thread.get_or_init(|| {
            let mut map: HashMap<String, Vec<usize>> = HashMap::new();
            for (k, p) in self.files.iter().enumerate() {
                let id = id_in_name(p).map(str::to_string).or_else(|| self.meta(k).map(|(t, _)| t.clone()));
                if let Some(id) = id {
                    map.entry(id).or_default().push(k);
                }
            }
            map
        });
        by_thread.get(thread).map_or(&[], Vec::as_slice)
    }

    /// The files whose first line names `thread` as their parent.
    fn forks_of(&self, thread: &str) -> &[usize] {
        let children = self.children.get_or_init(|| {
            let mut map: HashMap<String, Vec<usize>> = HashMap::new();
            for k in 0..self.files.len() {
                if let Some((_, Some(parent))) = self.meta(k) {
                    map.entry(parent.clone()).or_default().push(k);
                }
            }
            map
        });
        children.get(thread).map_or(&[], Vec::as_slice)
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ty) = e.file_type() else { continue };
        if ty.is_dir() && depth > 0 {
            walk(&p, depth - 1, out);
        } else if ty.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// The other files of the family of the rollout at `path` whose first line is `first`: its
/// ancestors, nearest first, each up to where the history its child inherits ends (the
/// rest of an ancestor's file is not this thread's history), then its forks and theirs,
/// breadth first. Empty when it is no fork and has none.
pub fn companions(path: &Path, first: &[u8]) -> Vec<Companion> {
    let Some((own, mut parent, mut limit)) = fork_meta(first) else { return Vec::new() };
    let store = Store::around(path);
    let files = &store.files;
    let me = path.canonicalize().ok();
    // (Only a file that would be taken is compared with this one, which costs a system call.)
    let same = |p: &PathBuf| p.canonicalize().ok() == me;
    let mut seen: HashSet<String> = HashSet::from([own.clone()]);
    let mut out = Vec::new();
    while let Some(pid) = parent.take() {
        if !seen.insert(pid.clone()) {
            break;
        }
        // Thread ids from file names; a file whose name has none is read.
        let found = store.of_thread(&pid).iter().copied().find(|&k| !same(&files[k]));
        let Some(p) = found.map(|k| files[k].clone()) else { break };
        let next = first_line(&p).and_then(|l| fork_meta(&l));
        out.push(Companion { path: p.clone(), limit });
        (parent, limit) = match next {
            Some((_, pp, end)) => (pp, end),
            None => (None, None),
        };
    }
    // Forks name their parent in their first line; theirs, breadth first.
    let mut queue = std::collections::VecDeque::from([own]);
    while let Some(t) = queue.pop_front() {
        for &k in store.forks_of(&t) {
            let p = &files[k];
            if out.iter().any(|c| &c.path == p) || same(p) {
                continue;
            }
            if let Some((id, _)) = store.meta(k) {
                if seen.insert(id.clone()) {
                    queue.push_back(id.clone());
                    out.push(Companion { path: p.clone(), limit: None });
                }
            }
        }
    }
    out
}
