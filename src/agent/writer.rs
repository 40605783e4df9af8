//! The session writer: every entry a run records, written as pi writes it (key order
//! `type, id, parentId, timestamp, payload`), as one whole line. A new session is created
//! (header first, with a `wx`-like new-file write) when its first user message is
//! appended, as pi's lazy flush does (§1.7); after that each entry is appended under a
//! lock with [`write::append_locked`], so the file is valid after every append.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use crate::session::write;

/// Appends entries to one session file as pi's SessionManager does: each a child of the
/// current leaf, which it then becomes. A new session stays in memory until its first
/// user or assistant message, then is written whole (header first) as a new file.
pub struct SessionWriter {
    path: PathBuf,
    /// The header line while the file does not exist yet.
    header: Option<String>,
    pending: Vec<String>,
    leaf: Option<String>,
    taken: HashSet<String>,
}

impl SessionWriter {
    /// A session that is not on disk yet (written at the first user message).
    pub fn new_file(path: PathBuf, header_line: String) -> SessionWriter {
        SessionWriter { path, header: Some(header_line), pending: Vec::new(), leaf: None, taken: HashSet::new() }
    }

    /// An existing file, continuing after `leaf` (`None`: the next entry is a new root).
    pub fn existing(path: PathBuf, leaf: Option<String>) -> SessionWriter {
        SessionWriter { path, header: None, pending: Vec::new(), leaf, taken: HashSet::new() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current leaf id.
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// Whether the file exists (has been written).
    pub fn on_disk(&self) -> bool {
        self.header.is_none()
    }

    fn entry(&self, id: &str, kind: &str, payload: &Map<String, Value>, timestamp: &str) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert("id".into(), id.into());
        m.insert("parentId".into(), self.leaf.as_deref().map_or(Value::Null, Value::from));
        m.insert("timestamp".into(), timestamp.into());
        for (k, v) in payload {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// Appends an entry of type `kind` with `payload` (in order after the common keys);
    /// returns the entry as written.
    pub fn append(&mut self, kind: &str, payload: Map<String, Value>) -> anyhow::Result<Value> {
        self.append_at(kind, payload, &write::now_iso())
    }

    /// [`SessionWriter::append`] with the entry's `timestamp` given (a compaction's
    /// `systemMessage` carries the same time).
    pub fn append_at(&mut self, kind: &str, payload: Map<String, Value>, timestamp: &str) -> anyhow::Result<Value> {
        let flushes = kind == "message"
            && matches!(
                payload.get("message").and_then(|m| m.get("role")).and_then(Value::as_str),
                Some("user" | "assistant")
            );
        if let Some(header) = self.header.clone() {
            let id = crate::formats::pi::write::new_entry_id(|id| self.taken.contains(id));
            let entry = self.entry(&id, kind, &payload, timestamp);
            let line = crate::formats::pi::entries::line(&entry);
            if !flushes {
                self.pending.push(line);
            } else {
                if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
                }
                let pending = std::mem::take(&mut self.pending);
                write::write_new_file(&self.path, |w| {
                    for l in std::iter::once(&header).chain(&pending).chain(std::iter::once(&line)) {
                        w.write_all(l.as_bytes())?;
                        w.write_all(b"\n")?;
                    }
                    Ok(())
                })
                .inspect_err(|_| self.pending = pending.clone())?;
                self.header = None;
            }
            self.taken.insert(id.clone());
            self.leaf = Some(id);
            return Ok(entry);
        }
        let mut written = None;
        let path = self.path.clone();
        write::append_to_session(&path, write::Appended::Turns, false, crate::formats::all(), |now| {
            // Under the lock: the parent must still be there and the id must be new.
            if let Some(p) = &self.leaf {
                if now.get(p).is_none() {
                    bail!("Entry {p} not found (the file changed under us)");
                }
            }
            let id = crate::formats::pi::write::new_entry_id(|id| self.taken.contains(id) || now.get(id).is_some());
            let entry = self.entry(&id, kind, &payload, timestamp);
            let line = crate::formats::pi::entries::line(&entry);
            written = Some((id, entry));
            Ok(vec![line])
        })
        .with_context(|| format!("could not append to {}", path.display()))?;
        let (id, entry) = written.expect("set before writing");
        self.taken.insert(id.clone());
        self.leaf = Some(id);
        Ok(entry)
    }

    /// Appends a `message` entry.
    pub fn append_message(&mut self, message: &Value) -> anyhow::Result<Value> {
        let mut p = Map::new();
        p.insert("message".into(), message.clone());
        self.append("message", p)
    }
}
