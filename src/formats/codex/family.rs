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
    let file = File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
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

/// Every `*.jsonl` under the store around `path` (or in its folder, outside a store).
fn store_files(path: &Path) -> Vec<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let root = dir
        .ancestors()
        .take(5)
        .find(|d| matches!(d.file_name().and_then(|n| n.to_str()), Some("sessions" | "archived_sessions")))
        .and_then(Path::parent);
    let mut out = Vec::new();
    match root {
        Some(root) => {
            for sub in ["sessions", "archived_sessions"] {
                walk(&root.join(sub), 4, &mut out);
            }
        }
        None => walk(dir, 0, &mut out),
    }
    out.sort();
    out
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
    let files = store_files(path);
    let same = |p: &PathBuf| p.canonicalize().ok() == path.canonicalize().ok();
    // Thread ids from file names; a file whose name has none is read when needed.
    let mut metas: HashMap<PathBuf, Option<(String, Option<String>)>> = HashMap::new();
    let mut meta_of = |p: &PathBuf| {
        metas.entry(p.clone()).or_insert_with(|| first_line(p).and_then(|l| thread_and_parent(&l))).clone()
    };
    let mut seen: HashSet<String> = HashSet::from([own.clone()]);
    let mut out = Vec::new();
    while let Some(pid) = parent.take() {
        if !seen.insert(pid.clone()) {
            break;
        }
        let found = files
            .iter()
            .filter(|p| !same(p))
            .find(|p| id_in_name(p).map_or_else(|| meta_of(p).is_some_and(|(t, _)| t == pid), |id| id == pid));
        let Some(p) = found.cloned() else { break };
        let next = first_line(&p).and_then(|l| fork_meta(&l));
        out.push(Companion { path: p.clone(), limit });
        (parent, limit) = match next {
            Some((_, pp, end)) => (pp, end),
            None => (None, None),
        };
    }
    // Forks name their parent in their first line: read the first line of every rollout
    // that could be one (thread ids are UUIDv7, ordered by time, so a fork's is greater
    // than its parent's; a name without an id is read whatever it is).
    let mut children: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for p in &files {
        if same(p) || out.iter().any(|c| &c.path == p) {
            continue;
        }
        if own.as_bytes().get(14) == Some(&b'7') && id_in_name(p).is_some_and(|id| id <= own.as_str()) {
            continue;
        }
        if let Some((_, Some(pp))) = meta_of(p) {
            children.entry(pp).or_default().push(p.clone());
        }
    }
    let mut queue = vec![own];
    while let Some(t) = queue.pop() {
        for p in children.remove(&t).unwrap_or_default() {
            if let Some((id, _)) = meta_of(&p) {
                if seen.insert(id.clone()) {
                    queue.insert(0, id);
                    out.push(Companion { path: p, limit: None });
                }
            }
        }
    }
    out
}
