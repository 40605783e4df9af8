//! Writing oh-my-pi sessions as omp writes them (src/session/session-manager.ts): forks,
//! and the one entry pisces appends to an omp file, a label.
//!
//! - `pisces fork FILE REV` writes what omp's `createBranchedSession(leaf)` writes: the
//!   path's entries with their ids (label entries left out, the path's labels re-emitted
//!   after them), under a title slot and a header whose `parentSession` is the source's
//!   path.
//! - `pisces fork FILE --all` writes what omp's `fork()` writes: every entry, ids kept, and
//!   `parentSession` (and `providerPromptCacheKey`) the source's session id.
//! - `pisces label` appends omp's own label entry (the same shape as pi's).
//! - Summaries and agent turns are refused: omp's compactions, model changes and messages
//!   have shapes of their own that pisces does not write.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::title::SLOT_BYTES;
use super::Omp;
use crate::env::Env;
use crate::formats::pi::fork::{file_name, new_session_id, resolve_path};
use crate::formats::pi::write::{label_entry, new_entry_id};
use crate::session::check::{Finding, Level};
use crate::session::entry::EntryIdx;
use crate::session::format::Unsupported;
use crate::session::write::{
    now_iso, AppendError, Appended, Fork, ForkError, ForkFile, NewSession, Shape, SummaryEntry, SummaryLines, Writer,
};
use crate::session::Session;

fn unsupported(what: &'static str, hint: &'static str) -> Unsupported {
    Unsupported { format: "oh-my-pi", what, hint: Some(hint) }
}

impl Writer for Omp {
    fn fork<'s>(&self, s: &Session<'s>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'s>, ForkError> {
        match shape {
            Shape::Linear => Err(ForkError::Invalid(
                "--linear is pi's /export; omp has no such file (fork without it, or with --all)".into(),
            )),
            _ => self.pi_writer().fork(s, leaf, shape),
        }
    }

    /// omp's new file: a title slot carrying the source's title, a version-3 header, named
    /// `<time>_<uuidv7>.jsonl` in the source's folder.
    fn fork_file(&self, s: &Session, spec: &ForkFile, env: &Env) -> Result<NewSession, ForkError> {
        let here =
            env.cwd.clone().ok_or_else(|| ForkError::Invalid("the current directory no longer exists".into()))?;
        let whole = spec.shape == Some(Shape::Whole);
        let cwd = match (&spec.cwd, s.header.cwd_str()) {
            (Some(dir), _) => resolve_path(dir, &here, env.home.as_deref()),
            (None, Some(c)) => c.to_string(),
            (None, None) => here.to_string_lossy().into_owned(),
        };
        let timestamp = now_iso();
        let id = new_session_id();
        let title = s.title.clone();
        let source = self
            .slot
            .as_ref()
            .and_then(|sl| sl.source.clone())
            .or_else(|| s.header.raw.get("titleSource").and_then(Value::as_str).map(str::to_string));
        let parent_session = if whole {
            Some(s.session_id().to_string())
        } else {
            s.path.as_ref().map(|p| resolve_path(&p.to_string_lossy(), &here, None))
        };
        let mut h = Map::new();
        h.insert("type".into(), "session".into());
        h.insert("version".into(), 3.into());
        h.insert("id".into(), id.clone().into());
        let put_title = |h: &mut Map<String, Value>| {
            if let Some(t) = &title {
                h.insert("title".into(), t.clone().into());
            }
            if let Some(src) = &source {
                h.insert("titleSource".into(), src.clone().into());
            }
        };
        if whole {
            // fork(): type, version, id, title, titleSource, timestamp, cwd, parentSession,
            // providerPromptCacheKey.
            put_title(&mut h);
            h.insert("timestamp".into(), timestamp.clone().into());
            h.insert("cwd".into(), cwd.clone().into());
            if let Some(p) = &parent_session {
                h.insert("parentSession".into(), p.clone().into());
            }
            let key = s.header.raw.get("providerPromptCacheKey").cloned().unwrap_or_else(|| s.session_id().into());
            h.insert("providerPromptCacheKey".into(), key);
        } else {
            // createBranchedSession(): type, version, id, timestamp, cwd, title,
            // titleSource, parentSession.
            h.insert("timestamp".into(), timestamp.clone().into());
            h.insert("cwd".into(), cwd.clone().into());
            put_title(&mut h);
            if let Some(p) = &parent_session {
                h.insert("parentSession".into(), p.clone().into());
            }
        }
        let header = format!(
            "{}{}",
            slot_line(title.as_deref().unwrap_or(""), source.as_deref(), &timestamp),
            serde_json::to_string(&Value::Object(h)).expect("a map of strings serializes")
        );
        let dir = match (&spec.session_dir, &s.path) {
            (Some(d), _) => d.clone(),
            (None, Some(p)) => p.parent().map(std::path::Path::to_path_buf).unwrap_or_default(),
            (None, None) => here.clone(),
        };
        let path: PathBuf = spec.output.clone().unwrap_or_else(|| dir.join(file_name(&timestamp, &id)));
        let mut notes = Vec::new();
        if s.path.is_none() && !whole {
            notes.push("the source came from standard input, so the new header has no parentSession".into());
        }
        Ok(NewSession { path, id, header, cwd, parent_session, notes, create_dir: false })
    }

    /// Labels only (see [`Writer::check_append_of`]).
    fn check_append(&self, _: &Session) -> Result<(), AppendError> {
        Ok(())
    }

    fn check_append_of(&self, s: &Session, kind: Appended) -> Result<(), AppendError> {
        if kind == Appended::Label {
            return Ok(());
        }
        Err(AppendError::Refused(format!(
            "{}: pisces appends only labels to an oh-my-pi session (omp's summaries, model changes and turns have shapes of their own); `pisces fork` makes a new omp session, `pisces convert --to pi` a pi one",
            s.file
        )))
    }

    fn label_line(&self, s: &Session, target: EntryIdx, label: Option<&str>) -> Result<(String, String), AppendError> {
        let Some(target_id) = s.id_str(target) else {
            return Err(AppendError::Refused(format!("line {} has no id to label", s.entries[target].line)));
        };
        let parent = s.default_leaf().and_then(|l| s.id_str(l));
        let id = new_entry_id(|id| s.get(id).is_some());
        Ok((id.clone(), label_entry(&id, parent, &now_iso(), target_id, label)))
    }

    fn summary_lines(
        &self,
        _: &Session,
        _: Option<&str>,
        _: &SummaryEntry,
        _: Option<&str>,
    ) -> Result<SummaryLines, AppendError> {
        Err(unsupported(
            "appending summaries",
            "omp's compactions carry fields of its own; `pisces convert --to pi` makes a pi session to summarize",
        )
        .into())
    }
}

impl Omp {
    fn pi_writer(&self) -> &dyn Writer {
        &self.pi
    }
}

/// omp's `serializeTitleSlot`: the slot line padded with spaces to exactly
/// [`SLOT_BYTES`] bytes, newline included, the title cut (by code points) to fit.
pub fn slot_line(title: &str, source: Option<&str>, updated_at: &str) -> String {
    let line = |title: &str, pad: usize| {
        let mut m = Map::new();
        m.insert("type".into(), "title".into());
        m.insert("v".into(), 1.into());
        m.insert("title".into(), title.into());
        if let Some(s) = source {
            m.insert("source".into(), s.into());
        }
        m.insert("updatedAt".into(), updated_at.into());
        m.insert("pad".into(), " ".repeat(pad).into());
        format!("{}\n", serde_json::to_string(&Value::Object(m)).expect("strings serialize"))
    };
    let chars: Vec<char> = title.chars().collect();
    let (mut low, mut high, mut best) = (0usize, chars.len(), 0usize);
    while low <= high {
        let mid = (low + high) / 2;
        let candidate: String = chars[..mid].iter().collect();
        if line(&candidate, 0).len() <= SLOT_BYTES {
            best = mid;
            low = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            high = mid - 1;
        }
    }
    let title: String = chars[..best].iter().collect();
    let pad = SLOT_BYTES.saturating_sub(line(&title, 0).len());
    line(&title, pad)
}

/// What `check` sees of omp rewriting its files: tool results it pruned in place
/// (`prunedAt`), and a title slot that is not the width omp writes.
pub fn rewrites(omp: &Omp, s: &Session) -> Vec<Finding> {
    let mut out = Vec::new();
    for i in s.entries.indices() {
        if memchr::memmem::find(s.raw_line(i), b"\"prunedAt\"").is_none() {
            continue;
        }
        let Ok(v) = s.parse(i) else { continue };
        let Some(at) = v.get("message").and_then(|m| m.get("prunedAt")).or(v.get("prunedAt")) else { continue };
        out.push(Finding {
            level: Level::Info,
            kind: "pruned-in-place",
            line: Some(s.entries[i].line),
            message: format!(
                "entry {}: omp pruned this tool result in place ({}); its original output is no longer in the file",
                s.display_id(i),
                crate::session::js::to_js_string(Some(at))
            ),
            hint: "omp rewrites the line when it prunes old tool output; nothing to repair",
        });
    }
    if let Some(width) = omp.slot_width {
        if width != SLOT_BYTES {
            out.push(Finding {
                level: Level::Warning,
                kind: "title-slot-width",
                line: Some(crate::session::entry::LineNo(1)),
                message: format!("the title line is {width} bytes, not the {SLOT_BYTES} omp rewrites in place"),
                hint: "omp overwrites the first 256 bytes when the title changes; a wider line would be cut",
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_is_256_bytes_and_cuts_long_titles() {
        let l = slot_line("Scripted omp run", Some("user"), "2026-12-01T18:17:10.842Z");
        assert_eq!(l.len(), SLOT_BYTES);
        assert!(l.starts_with(r#"{"type":"title","v":1,"title":"Scripted omp run","source":"user","updatedAt":"2026-12-01T18:17:10.842Z","pad":" "#));
        let long = "é".repeat(300);
        let l = slot_line(&long, None, "2026-12-01T18:17:10.842Z");
        assert_eq!(l.len(), SLOT_BYTES);
        assert!(super::super::title::slot(l.trim_end().as_bytes()).is_some());
    }

    #[test]
    fn the_slot_matches_one_omp_wrote() {
        // The first line omp 18.2.3 wrote for a session titled by the user.
        const OMP: &str = "{\"type\":\"title\",\"v\":1,\"title\":\"Scripted omp run\",\"source\":\"user\",\"updatedAt\":\"2026-12-01T18:17:10.842Z\",\"pad\":\"                                                                                                                                              \"}\n";
        let slot = super::super::title::slot(OMP.trim_end().as_bytes()).unwrap();
        assert_eq!(slot_line(&slot.title, slot.source.as_deref(), &slot.updated_at), OMP);
    }
}
