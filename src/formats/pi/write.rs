//! Writing pi sessions: new entry ids, label entries, and the files forks go to, as pi
//! writes them (docs/pi-format.md §1.1, §1.7).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::fork::{self, resolve_path};
use super::{entries, Pi};
use crate::env::Env;
use crate::session::entry::EntryIdx;
use crate::session::write::{
    now_iso, random_u64, AppendError, Fork, ForkError, ForkFile, NewSession, Shape, SummaryEntry, SummaryLines, Writer,
};
use crate::session::Session;

impl Writer for Pi {
    fn fork<'s>(&self, s: &Session<'s>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'s>, ForkError> {
        match shape {
            Shape::Whole => fork::whole_fork(self, s),
            Shape::Branch | Shape::Linear => fork::path_fork(self, s, leaf, shape),
        }
    }

    /// pi's new file for a fork: a version-3 header with a new UUIDv7 (the source's id for
    /// a linear export), the time, the cwd (resolved as pi's SessionManager resolves it)
    /// and `parentSession` (the source's absolute path); named `<time>_<id>.jsonl` beside
    /// the source (`session-<time>.jsonl` in the current directory for a linear export; a
    /// whole fork goes to the pi session folder of its cwd, as `pi --fork` puts it).
    fn fork_file(&self, s: &Session, spec: &ForkFile, env: &Env) -> Result<NewSession, ForkError> {
        let invalid = |m: String| ForkError::Invalid(m);
        let here = env.cwd.clone().ok_or_else(|| invalid("the current directory no longer exists".into()))?;
        let home = env.home.as_deref();
        let shape = spec.shape.unwrap_or(Shape::Branch);
        let linear = shape == Shape::Linear;
        let whole = shape == Shape::Whole;
        let cwd = match (&spec.cwd, whole, s.header.cwd.as_ref()) {
            (Some(dir), _, _) => resolve_path(dir, &here, home),
            (None, true, _) => resolve_path(&here.to_string_lossy(), &here, home),
            (None, false, Some(Value::String(c))) => resolve_path(c, &here, home),
            (None, false, _) => here.to_string_lossy().into_owned(),
        };
        let timestamp = now_iso();
        let id = if linear { s.session_id().to_string() } else { fork::new_session_id() };
        let parent_session = match (&s.path, linear) {
            (Some(p), false) => Some(resolve_path(&p.to_string_lossy(), &here, None)),
            _ => None,
        };
        let header = fork::header_line(&id, &timestamp, &cwd, parent_session.as_deref());
        let file_name = if linear {
            format!("session-{}.jsonl", timestamp.replace([':', '.'], "-"))
        } else {
            fork::file_name(&timestamp, &id)
        };
        let path = match &spec.output {
            Some(o) => o.clone(),
            None => fork_dir(s, spec, shape, &cwd, env)?.join(file_name),
        };
        let mut notes = Vec::new();
        if s.path.is_none() && !linear {
            notes.push("the source came from standard input, so the new header has no parentSession".into());
        }
        Ok(NewSession { path, id, header, cwd, parent_session, notes, create_dir: false })
    }

    fn check_append(&self, s: &Session) -> Result<(), AppendError> {
        if self.migrate_v1 || self.migrate_v2 {
            return Err(AppendError::Refused(format!(
                "{}: a version-{} session; pi rewrites such a file in the current format when it opens it, and pisces does not append to it unmigrated",
                s.file, self.version
            )));
        }
        Ok(())
    }

    fn label_line(&self, s: &Session, target: EntryIdx, label: Option<&str>) -> Result<(String, String), AppendError> {
        self.check_append(s)?;
        let Some(target_id) = s.id_str(target) else {
            return Err(AppendError::Refused(format!("line {} has no id to label", s.entries[target].line)));
        };
        let parent = s.default_leaf().and_then(|l| s.id_str(l));
        let id = new_entry_id(|id| s.get(id).is_some());
        let line = label_entry(&id, parent, &now_iso(), target_id, label);
        Ok((id, line))
    }

    fn summary_lines(
        &self,
        s: &Session,
        parent: Option<&str>,
        summary: &SummaryEntry,
        label: Option<&str>,
    ) -> Result<SummaryLines, AppendError> {
        self.check_append(s)?;
        let id = new_entry_id(|id| s.get(id).is_some());
        let now = now_iso();
        let entry = match *summary {
            SummaryEntry::Branch { from_id, summary, details, usage } => {
                entries::branch_summary(&id, parent, &now, from_id, summary, details.clone(), usage)
            }
            SummaryEntry::Compaction { summary, first_kept, tokens_before, details, usage, system_message } => {
                entries::compaction(
                    &id,
                    parent,
                    &now,
                    summary,
                    first_kept.clone(),
                    tokens_before,
                    details.clone(),
                    usage,
                    system_message.cloned(),
                )
            }
        };
        let mut lines = vec![entries::line(&entry)];
        let mut label_id = None;
        if let Some(l) = label {
            let lid = new_entry_id(|x| x == id || s.get(x).is_some());
            lines.push(label_entry(&lid, Some(&id), &now_iso(), &id, Some(l.trim())));
            label_id = Some(lid);
        }
        Ok(SummaryLines { id, entry, label_id, lines })
    }
}

/// Where a fork goes when `-o` is not given.
fn fork_dir(s: &Session, spec: &ForkFile, shape: Shape, cwd: &str, env: &Env) -> Result<PathBuf, ForkError> {
    if let Some(d) = &spec.session_dir {
        return Ok(d.clone());
    }
    match shape {
        // pi's /export writes `session-<time>.jsonl` into the current directory.
        Shape::Linear => Ok(PathBuf::new()),
        // Where `pi --fork` run in that directory puts it: $PI_CODING_AGENT_SESSION_DIR,
        // else the project's folder under the agent directory (created, as pi does).
        Shape::Whole => {
            if let Some(d) = &env.pi_session_dir {
                return Ok(d.clone());
            }
            let Some(agent) = &env.pi_agent_dir else {
                return Err(ForkError::Invalid(
                    "HOME is not set, so pi's session folder is unknown; give --session-dir DIR or -o FILE".into(),
                ));
            };
            let dir = fork::default_session_dir(agent, cwd);
            std::fs::create_dir_all(&dir)
                .map_err(|e| ForkError::Invalid(format!("could not create {}: {e}", dir.display())))?;
            Ok(dir)
        }
        Shape::Branch => match &s.path {
            Some(p) => Ok(p.parent().map(Path::to_path_buf).unwrap_or_default()),
            None => Err(ForkError::Invalid(
                "the session came from standard input, so it has no directory to fork into; give -o FILE or --session-dir DIR"
                    .into(),
            )),
        },
    }
}

/// A new entry id as pi makes one: the first 8 hex digits of a random UUID, not already
/// taken (`generateId`).
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        let id = format!("{:08x}", random_u64() as u32);
        if !taken(&id) {
            return id;
        }
    }
}

/// A `label` entry in pi's key order (`type, id, parentId, timestamp, targetId, label?`);
/// clearing omits `label`, as pi's `appendLabelChange(target, undefined)` writes it.
pub fn label_entry(id: &str, parent: Option<&str>, timestamp: &str, target: &str, label: Option<&str>) -> String {
    let mut m = Map::new();
    m.insert("type".into(), "label".into());
    m.insert("id".into(), id.into());
    m.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
    m.insert("timestamp".into(), timestamp.into());
    m.insert("targetId".into(), target.into());
    if let Some(l) = label {
        m.insert("label".into(), l.into());
    }
    // serde_json escapes exactly what JSON.stringify escapes for strings pi writes
    // (quotes, backslashes, control characters); other characters stay unescaped.
    serde_json::to_string(&Value::Object(m)).expect("a map of strings serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_entries_are_written_as_pi_writes_them() {
        assert_eq!(
            label_entry("1a2b3c4d", Some("ffffffff"), "2026-11-29T20:00:00.000Z", "0000aaaa", Some("fix \"1\"")),
            r#"{"type":"label","id":"1a2b3c4d","parentId":"ffffffff","timestamp":"2026-11-29T20:00:00.000Z","targetId":"0000aaaa","label":"fix \"1\""}"#
        );
        assert_eq!(
            label_entry("1a2b3c4d", None, "t", "x", None),
            r#"{"type":"label","id":"1a2b3c4d","parentId":null,"timestamp":"t","targetId":"x"}"#
        );
    }

    #[test]
    fn ids_are_8_hex_and_avoid_taken_ones() {
        let first = new_entry_id(|_| false);
        assert!(first.len() == 8 && first.bytes().all(|b| b.is_ascii_hexdigit()));
        let second = new_entry_id(|id| id == first);
        assert_ne!(first, second);
    }
}
