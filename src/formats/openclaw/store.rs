//! Reading OpenClaw's SQLite store (docs/openclaw-format.md): each agent's
//! `<state>/agents/<agent>/agent/openclaw-agent.sqlite` keeps every session's transcript in
//! table `transcript_events`, one pi entry a row (`event_json`, or zstd in `event_zstd`),
//! ordered by `seq`. A session read from it is those rows as JSONL, which pi's reader
//! then reads like a file.
//!
//! The database is only ever read. A gateway may be writing it at the same time: when
//! its write-ahead log (`-wal`) is there, pisces opens it read-only through SQLite's
//! shared memory, as any other reader, and never takes a write lock; when there is no
//! log, nobody is writing, and it opens it `immutable`, so that not even the side files a
//! reader may create appear beside the user's database.

use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::session::{LoadError, Source};

/// The database file in an agent's folder.
pub const DB_NAME: &str = "openclaw-agent.sqlite";

/// A session named `openclaw:<agent>/<id>`.
pub fn parse_name(arg: &str) -> Option<(&str, &str)> {
    let rest = arg.strip_prefix("openclaw:")?;
    let (agent, id) = rest.split_once('/')?;
    (!agent.is_empty() && !id.is_empty()).then_some((agent, id))
}

/// The agents' databases under OpenClaw state folders: `(agent, database)`, sorted.
pub fn databases(states: &[PathBuf]) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for state in states {
        let Ok(read) = std::fs::read_dir(state.join("agents")) else { continue };
        for e in read.flatten() {
            let db = e.path().join("agent").join(DB_NAME);
            if db.is_file() {
                out.push((e.file_name().to_string_lossy().into_owned(), db));
            }
        }
    }
    out.sort();
    out
}

/// The agents' databases in or under `dir`: a state folder (`agents/<agent>/agent/`), one
/// agent's folder (`agents/<agent>`), or its `agent/` folder.
pub fn databases_under(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = databases(&[dir.to_path_buf()]);
    let name = |d: Option<&Path>| d.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    let own = [(dir.join("agent").join(DB_NAME), name(Some(dir))), (dir.join(DB_NAME), name(dir.parent()))];
    for (db, agent) in own {
        if let (true, Some(agent)) = (db.is_file(), agent) {
            out.push((agent, db));
        }
    }
    out
}

fn err(db: &Path, e: impl std::fmt::Display) -> LoadError {
    LoadError::Io { name: db.display().to_string(), source: std::io::Error::other(e.to_string()) }
}

/// Opens `db` for reading only (see the module's comment).
pub fn open(db: &Path) -> Result<Connection, LoadError> {
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let mut uri = String::from("file:");
    for b in db.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push_str(if wal.exists() { "?mode=ro" } else { "?mode=ro&immutable=1" });
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags(&uri, flags).map_err(|e| err(db, e))?;
    // A writer holds its lock only for a moment; wait for it rather than fail.
    c.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| err(db, e))?;
    Ok(c)
}

/// The ids of the sessions `db` holds a transcript for, sorted.
pub fn session_ids(db: &Path) -> Result<Vec<String>, LoadError> {
    let c = open(db)?;
    let mut q =
        c.prepare("SELECT DISTINCT session_id FROM transcript_events ORDER BY session_id").map_err(|e| err(db, e))?;
    let ids = q.query_map([], |r| r.get::<_, String>(0)).map_err(|e| err(db, e))?;
    ids.collect::<Result<_, _>>().map_err(|e| err(db, e))
}

/// Session `id`'s transcript in `db` as JSONL, named `openclaw:<agent>/<id>`, read in one
/// transaction (a writer's later rows are not half seen).
pub fn source(db: &Path, agent: &str, id: &str) -> Result<Source, LoadError> {
    let name = format!("openclaw:{agent}/{id}");
    let mut c = open(db)?;
    let tx = c.transaction().map_err(|e| err(db, e))?;
    let mut buf = Vec::new();
    {
        let mut q = tx
            .prepare("SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ?1 ORDER BY seq")
            .map_err(|e| err(db, e))?;
        let mut rows = q.query([id]).map_err(|e| err(db, e))?;
        while let Some(row) = rows.next().map_err(|e| err(db, e))? {
            let seq: i64 = row.get(0).map_err(|e| err(db, e))?;
            let json: Option<String> = row.get(1).map_err(|e| err(db, e))?;
            match json {
                Some(j) => buf.extend_from_slice(j.as_bytes()),
                None => {
                    let z: Option<Vec<u8>> = row.get(2).map_err(|e| err(db, e))?;
                    let z =
                        z.ok_or_else(|| err(db, format!("{name}: row {seq} has neither event_json nor event_zstd")))?;
                    let mut d = ruzstd::decoding::StreamingDecoder::new(z.as_slice())
                        .map_err(|e| err(db, format!("{name}: row {seq}: zstd: {e}")))?;
                    d.read_to_end(&mut buf).map_err(|e| err(db, format!("{name}: row {seq}: zstd: {e}")))?;
                }
            }
            buf.push(b'\n');
        }
    }
    if buf.is_empty() {
        return Err(LoadError::NotASession {
            name,
            line: None,
            format: "OpenClaw",
            reason: format!("{} holds no transcript rows for this session", db.display()),
            hint: None,
        });
    }
    Ok(Source::from_bytes(&name, buf))
}
