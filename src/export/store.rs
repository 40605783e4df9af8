//! `pisces export --parquet DIR`: many sessions as tables, partitioned by agent and month
//! (`DIR/<table>/agent=<agent>/month=<YYYY-MM>/<session>.parquet`, as Hive lays them out,
//! so DuckDB, Spark and Trino read the partitions as columns).
//!
//! Incremental: `DIR/_pisces_export.json` records, for each session, the key of its file
//! when it was exported (device, inode, size, mtime, edges: `store::cache::FileKey`) and
//! the files written for it. A session whose file has the same key is not read again; one
//! that changed gets its files rewritten; one that is gone (from a whole-store export) has
//! its files removed. `usage` counts each response once across the sessions exported (as
//! `pisces stats`), so its files are rewritten when what a session owns changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::tables::{self, Owner};
use crate::render::parquet::{self as write, UsageRow};
use crate::session::format::Format;
use crate::session::js;
use crate::store::cache::{Cache, FileKey};
use crate::store::facts::{self, Facts, Need};
use crate::store::{each_parallel, stats, Where};

const MANIFEST: &str = "_pisces_export.json";
pub const TABLES: [&str; 5] = ["sessions", "entries", "messages", "tool_calls", "usage"];

#[derive(Serialize, Deserialize, Default)]
struct Manifest {
    schema: String,
    sessions: BTreeMap<String, Done>,
}

#[derive(Serialize, Deserialize, Default, Clone)]
struct Done {
    /// The file's key when it was read (`None`: not a file of its own; always read again).
    key: Option<String>,
    /// The files written from it (relative to DIR), `usage`'s apart.
    files: Vec<String>,
    /// `usage`: its file, and a hash of the responses in it.
    usage: Option<(String, String)>,
}

/// A session's facts, its file's key, and what was written from it (`None`: its files
/// were up to date).
type Read = (Facts, Option<String>, Option<Done>);

/// What an export did.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub dir: String,
    pub sessions: usize,
    /// Sessions read and written.
    pub written: usize,
    /// Sessions whose files were already up to date.
    pub unchanged: usize,
    /// Sessions no longer there, whose files were removed.
    pub removed: usize,
    /// Responses in `usage`, each once.
    pub responses: usize,
    /// Sessions that could not be read, with why.
    pub failed: Vec<(String, String)>,
}

fn key_of(w: &Where) -> Option<String> {
    match w {
        Where::File(p) => FileKey::of(p).ok().map(|k| format!("{k:?}")),
        Where::Stored { .. } => None,
    }
}

/// The partition a session's rows go in, and its file name there.
fn place(table: &str, f: &Facts) -> String {
    let month = f.summary.started.map(|t| js::iso_string(t as i64)).and_then(|iso| iso.get(..7).map(str::to_string));
    let name = format!("{:032x}", facts::hash128(f.summary.format, &f.summary.name));
    format!("{table}/agent={}/month={}/{name}.parquet", f.summary.format, month.as_deref().unwrap_or("unknown"))
}

/// Exports `sessions` into `dir`. `whole`: they are every session of the store (files of
/// sessions no longer there are removed).
pub fn export(
    sessions: &[Where],
    formats: &'static [&'static dyn Format],
    dir: &Path,
    whole: bool,
    cache: Option<&Cache>,
    threads: usize,
    progress: &mut dyn FnMut(usize),
) -> std::io::Result<Report> {
    std::fs::create_dir_all(dir)?;
    let manifest_path = dir.join(MANIFEST);
    let old: Manifest = std::fs::read(&manifest_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|m: &Manifest| m.schema == tables::SCHEMA)
        .unwrap_or_default();
    let mut report = Report { dir: dir.display().to_string(), sessions: sessions.len(), ..Report::default() };

    // Every session's facts (from the store's cache when its file did not change), then
    // its own tables when it changed since the last export.
    let mut reads: Vec<Option<Result<Read, String>>> = Vec::new();
    reads.resize_with(sessions.len(), || None);
    let mut done = 0;
    each_parallel(
        sessions,
        threads,
        |_, w| -> Result<Read, String> {
            let key = key_of(w);
            let f = facts::read(w, formats, Need { records: true, tips: false }, cache)?;
            let before = old.sessions.get(&w.name());
            let fresh =
                key.is_some() && before.is_some_and(|b| b.key == key && b.files.iter().all(|p| dir.join(p).is_file()));
            if fresh {
                return Ok((f, key, None));
            }
            let files = write_session(w, formats, dir, &f).map_err(|e| format!("{e:#}"))?;
            Ok((f, key, Some(Done { key: None, files, usage: None })))
        },
        |k, r| {
            reads[k] = Some(r);
            done += 1;
            progress(done);
        },
    );

    let mut manifest = Manifest { schema: tables::SCHEMA.to_string(), sessions: BTreeMap::new() };
    let mut kept: Vec<(String, Facts)> = Vec::new();
    for (w, r) in sessions.iter().zip(reads) {
        let name = w.name();
        match r {
            Some(Ok((f, key, written))) => {
                let before = old.sessions.get(&name).cloned().unwrap_or_default();
                let entry = match written {
                    Some(mut d) => {
                        report.written += 1;
                        for stale in before.files.iter().filter(|p| !d.files.contains(p)) {
                            let _ = std::fs::remove_file(dir.join(stale));
                        }
                        d.key = key;
                        d.usage = before.usage.clone();
                        d
                    }
                    None => {
                        report.unchanged += 1;
                        before
                    }
                };
                manifest.sessions.insert(name.clone(), entry);
                kept.push((name, f));
            }
            Some(Err(e)) => report.failed.push((name, e)),
            None => {}
        }
    }
    // Sessions of the last export that are not in this one: gone from the store (removed),
    // or not named this time (kept as they are).
    for (name, d) in &old.sessions {
        if manifest.sessions.contains_key(name) || report.failed.iter().any(|(n, _)| n == name) {
            continue;
        }
        if whole {
            report.removed += 1;
            for p in d.files.iter().chain(d.usage.as_ref().map(|(p, _)| p)) {
                let _ = std::fs::remove_file(dir.join(p));
            }
        } else {
            manifest.sessions.insert(name.clone(), d.clone());
        }
    }

    // `usage`: each response once, for the session that owns it.
    let facts: Vec<Facts> = kept.iter().map(|(_, f)| f.clone()).collect();
    let owners: Vec<Owner> =
        facts.iter().map(|f| Owner { session: f.summary.name.clone(), session_id: f.summary.id.clone() }).collect();
    let mut owned: Vec<Vec<UsageRow>> = (0..facts.len()).map(|_| Vec::new()).collect();
    for (k, r) in stats::counted_once(&facts) {
        owned[k].push(UsageRow {
            owner: &owners[k],
            key: format!("{:032x}", r.key),
            timestamp: r.time.filter(|t| t.is_finite()).map(|t| t as i64),
            model: r.model.as_deref(),
            totals: &r.totals,
        });
        report.responses += 1;
    }
    for (k, rows) in owned.iter().enumerate() {
        let name = &kept[k].0;
        let hash = {
            let mut text = String::new();
            for r in rows {
                text.push_str(&format!("{}|{:?}|{:?}|{:?}\n", r.key, r.timestamp, r.model, r.totals));
            }
            format!("{:032x}", facts::hash128("usage", &text))
        };
        let entry = manifest.sessions.get_mut(name).expect("every kept session is in the manifest");
        let path = place("usage", &facts[k]);
        let same = entry.usage.as_ref().is_some_and(|(p, h)| *p == path && *h == hash && dir.join(p).is_file());
        if same {
            continue;
        }
        if let Some((p, _)) = entry.usage.take() {
            let _ = std::fs::remove_file(dir.join(p));
        }
        if rows.is_empty() {
            continue;
        }
        write::write_usage(&dir.join(&path), rows)?;
        entry.usage = Some((path, hash));
    }
    let text = serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?;
    let tmp = manifest_path.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &manifest_path)?;
    Ok(report)
}

/// Reads the session at `w` and writes its four tables; the files written.
fn write_session(
    w: &Where,
    formats: &'static [&'static dyn Format],
    dir: &Path,
    f: &Facts,
) -> anyhow::Result<Vec<String>> {
    let open = || Ok(vec![w.open()?]);
    let rows = crate::session::open::read(&open, formats, &mut |_| Ok(()), |sessions, _| {
        Ok(tables::session_rows(&sessions[0], f)?)
    })?;
    let mut files = Vec::new();
    let mut put = |table: &str, write: &dyn Fn(&Path) -> std::io::Result<()>| -> std::io::Result<()> {
        let rel = place(table, f);
        write(&dir.join(&rel))?;
        files.push(rel);
        Ok(())
    };
    put("sessions", &|p| write::write_session(p, &rows.owner, &f.summary))?;
    put("entries", &|p| write::write_entries(p, &rows))?;
    put("messages", &|p| write::write_messages(p, &rows))?;
    put("tool_calls", &|p| write::write_tool_calls(p, &rows))?;
    Ok(files)
}

/// Where a table's files are, for queries: `DIR/<table>/**/*.parquet`.
pub fn glob(dir: &Path, table: &str) -> PathBuf {
    dir.join(table).join("**").join("*.parquet")
}
