//! `pisces fork` for Codex rollouts, as `codex exec fork` writes one (docs/codex-format.md
//! §5): a new rollout `sessions/YYYY/MM/DD/rollout-<time>-<new thread id>.jsonl` in the
//! source's store whose only line is a `session_meta` that inherits the history up to REV
//! (`forked_from_id`, `forked_from_ordinal_exclusive`, `history_base`) and copies nothing.
//! The client's own fork starts at a thread's end; pisces's may start at any line of it,
//! which `codex exec resume <new id>` reads the same way (checked against the client).

use serde_json::{Map, Value};

use super::Codex;
use crate::env::Env;
use crate::session::entry::EntryIdx;
use crate::session::format::Unsupported;
use crate::session::write::{
    now_iso, AppendError, Fork, ForkError, ForkFile, NewLine, NewSession, Shape, SummaryEntry, SummaryLines, Writer,
};
use crate::session::Session;

fn unsupported(what: &'static str, hint: &'static str) -> Unsupported {
    Unsupported { format: "codex", what, hint: Some(hint) }
}

/// Keys of the parent's `session_meta` that a fork has its own values for.
const OWN_KEYS: &[&str] = &[
    "id",
    "session_id",
    "timestamp",
    "forked_from_id",
    "forked_from_ordinal_exclusive",
    "history_base",
    "context_window",
];

impl Codex {
    /// The `session_meta` line of a fork at `leaf`, thread id `id`.
    fn fork_meta(&self, s: &Session, leaf: EntryIdx, id: &str) -> Result<String, ForkError> {
        let th = self.thread(leaf);
        let parent = th.id.clone().ok_or_else(|| {
            ForkError::from(unsupported(
                "forking a rollout without a session_meta",
                "Codex forks only threads it knows by id",
            ))
        })?;
        let ordinal = self.items[leaf.get()].ordinal.ok_or_else(|| {
            ForkError::from(unsupported("forking at a line without an ordinal", "older rollouts number no lines"))
        })?;
        let end = ordinal + 1;
        let e = &s.entries[leaf];
        let end_byte = (e.start + e.len as usize + 1 - th.range.start) as u64;
        // The parent's own meta, less what is the fork's own.
        let first = EntryIdx::new(th.entries.start);
        let meta = self.line(s, first).ok().and_then(|v| v.get("payload").cloned());
        let now = now_iso();
        let mut p = Map::new();
        p.insert("id".into(), id.into());
        p.insert("forked_from_id".into(), parent.clone().into());
        p.insert("forked_from_ordinal_exclusive".into(), end.into());
        p.insert("timestamp".into(), now.clone().into());
        if let Some(Value::Object(m)) = meta {
            if m.contains_key("session_id") {
                p.insert("session_id".into(), id.into());
            }
            for (k, v) in m {
                if !OWN_KEYS.contains(&k.as_str()) {
                    p.insert(k, v);
                }
            }
        }
        p.insert(
            "history_base".into(),
            serde_json::json!({"thread_id": parent, "end_ordinal_exclusive": end, "end_byte_offset": end_byte}),
        );
        let mut line = Map::new();
        line.insert("timestamp".into(), now.into());
        line.insert("ordinal".into(), end.into());
        line.insert("type".into(), "session_meta".into());
        line.insert("payload".into(), Value::Object(p));
        Ok(Value::Object(line).to_string())
    }
}

impl Writer for Codex {
    fn fork<'s>(&self, s: &Session<'s>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'s>, ForkError> {
        if shape != Shape::Branch {
            return Err(unsupported(
                "--whole and --linear",
                "a Codex fork copies no lines: it inherits its parent's history up to REV",
            )
            .into());
        }
        let Some(leaf) = leaf else {
            return Err(unsupported("forking before the first line", "name a line of the thread").into());
        };
        let id = uuid::Uuid::now_v7().to_string();
        let lines = vec![NewLine::New(self.fork_meta(s, leaf, &id)?)];
        let notes = vec![format!(
            "the fork inherits {} lines of history from thread {}; none are copied",
            s.path_to(leaf).len(),
            self.thread(leaf).id.as_deref().unwrap_or("?")
        )];
        Ok(Fork { lines, copied: Vec::new(), labels_dropped: 0, labels_emitted: 0, notes, session_id: Some(id) })
    }

    fn fork_file(&self, s: &Session, spec: &ForkFile, env: &Env) -> Result<NewSession, ForkError> {
        let id = spec.id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let cwd = s.header.cwd_str().map(str::to_string).unwrap_or_else(|| env.cwd_string());
        // `sessions/` of the store the source is in, else of $CODEX_HOME.
        let store = s
            .path
            .as_deref()
            .and_then(|p| {
                p.ancestors().find(|d| d.file_name().is_some_and(|n| n == "sessions" || n == "archived_sessions"))
            })
            .and_then(std::path::Path::parent)
            .map(std::path::Path::to_path_buf)
            .or_else(|| env.codex_home.clone())
            .unwrap_or_default();
        let now = now_iso();
        // `2026-12-02T22:54:33.287Z` -> the folder `2026/12/02` and `2026-12-02T22-54-33`.
        let (date, time) = now.split_once('T').unwrap_or((&now, ""));
        let day: Vec<&str> = date.split('-').collect();
        let dir = match &spec.session_dir {
            Some(d) => d.clone(),
            None => store.join("sessions").join(day.join("/")),
        };
        let stamp = format!("{date}T{}", time.get(..8).unwrap_or("00:00:00").replace(':', "-"));
        let path = spec.output.clone().unwrap_or_else(|| dir.join(format!("rollout-{stamp}-{id}.jsonl")));
        let mut notes = Vec::new();
        if spec.output.is_some() || spec.session_dir.is_some() {
            notes.push(format!(
                "`codex resume {id}` finds the fork only in its store's sessions/YYYY/MM/DD/, beside the rollouts it inherits from"
            ));
        }
        let parent_session = Some(s.session_id().to_string()).filter(|p| !p.is_empty());
        // The day's folder of the store is the client's to make, and so the fork's.
        let create_dir = spec.output.is_none() && spec.session_dir.is_none();
        Ok(NewSession { path, id, header: String::new(), cwd, parent_session, notes, create_dir })
    }

    fn check_append(&self, _: &Session) -> Result<(), AppendError> {
        Err(unsupported("appending entries", "`pisces fork` makes a rollout to resume with `codex exec resume`").into())
    }

    fn label_line(&self, _: &Session, _: EntryIdx, _: Option<&str>) -> Result<(String, String), AppendError> {
        Err(unsupported("labels", "Codex rollouts have no labels").into())
    }

    fn summary_lines(
        &self,
        _: &Session,
        _: Option<&str>,
        _: &SummaryEntry,
        _: Option<&str>,
    ) -> Result<SummaryLines, AppendError> {
        Err(unsupported("appending summaries", "`--append` writes pi sessions only").into())
    }
}
