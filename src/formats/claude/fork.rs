//! `pisces fork` for Claude Code files, as `claude --resume S --fork-session` writes one
//! (docs/claude-format.md §5): a new file `<new session id>.jsonl` in the source's project
//! folder holding the lines of the context at REV, under their own uuids and parents, with
//! the new `sessionId`, each reply line marked with the session that made it
//! (`requestSessionId`, as the client marks copies), and a `last-prompt` line naming REV,
//! so that `claude --resume <new id>` resumes exactly there.
//!
//! The lines are the ones the client reads to build that context (the chain and the parts
//! and results of split replies it recovers), in that order, so that the copy builds the
//! same messages. Claude Code files have no header; there is nothing to append.

use serde_json::{json, Value};

use super::context::{entries_at, line};
use super::Claude;
use crate::env::Env;
use crate::session::entry::{EntryIdx, Role};
use crate::session::format::{Unreadable, Unsupported};
use crate::session::write::{
    AppendError, Fork, ForkError, ForkFile, NewLine, NewSession, Shape, SummaryEntry, SummaryLines, Writer,
};
use crate::session::Session;

fn unsupported(what: &'static str, hint: &'static str) -> Unsupported {
    Unsupported { format: "claude", what, hint: Some(hint) }
}

/// One line of the copy: the source line with the new session id.
fn copy_line(s: &Session, i: EntryIdx, id: &str) -> Result<String, Unreadable> {
    let mut v = line(s, i)?;
    let source_id = s.session_id().to_string();
    if let Value::Object(m) = &mut v {
        m.insert("sessionId".into(), id.into());
        if s.entries[i].role == Role::Assistant && !m.contains_key("requestSessionId") {
            m.insert("requestSessionId".into(), source_id.into());
        }
    }
    Ok(serde_json::to_string(&v).expect("a parsed line serializes"))
}

/// The last prompt's text on the path (what `last-prompt` records).
fn last_prompt(s: &Session, path: &[EntryIdx]) -> String {
    path.iter()
        .rev()
        .filter(|&&i| s.entries[i].role == Role::User)
        .find_map(|&i| {
            let v = line(s, i).ok()?;
            if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            match v.pointer("/message/content") {
                Some(Value::String(t)) => Some(t.clone()),
                Some(Value::Array(a)) => {
                    a.iter().find_map(|b| b.get("text").and_then(Value::as_str).map(str::to_string))
                }
                _ => None,
            }
        })
        .unwrap_or_default()
}

impl Writer for Claude {
    fn fork<'s>(&self, s: &Session<'s>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'s>, ForkError> {
        let id = uuid::Uuid::new_v4().to_string();
        let copied: Vec<EntryIdx> = match (shape, leaf) {
            (Shape::Whole, _) => s.entries.indices().collect(),
            (Shape::Branch, Some(l)) => entries_at(s, self, l),
            (Shape::Branch, None) => Vec::new(),
            (Shape::Linear, _) => {
                return Err(unsupported(
                    "--linear",
                    "Claude Code has no linear export; a fork already holds only the path",
                )
                .into())
            }
        };
        let mut lines = Vec::with_capacity(copied.len() + 1);
        for &i in &copied {
            lines.push(NewLine::New(copy_line(s, i, &id)?));
        }
        let tip = if shape == Shape::Whole { s.default_leaf() } else { leaf };
        if let Some(t) = tip.and_then(|t| s.id_str(t)) {
            lines.push(NewLine::New(last_prompt_line(&last_prompt(s, &copied), t, &id)));
        }
        let mut notes = Vec::new();
        if copied.is_empty() {
            notes.push("the fork holds no entries: Claude Code cannot resume an empty session".into());
        }
        Ok(Fork { lines, copied, labels_dropped: 0, labels_emitted: 0, notes, session_id: Some(id) })
    }

    fn fork_file(&self, s: &Session, spec: &ForkFile, env: &Env) -> Result<NewSession, ForkError> {
        let id = spec.id.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let cwd = s.header.cwd_str().map(str::to_string).unwrap_or_else(|| env.cwd_string());
        let dir = match (&spec.session_dir, &s.path) {
            (Some(d), _) => d.clone(),
            (None, Some(p)) => p.parent().map(std::path::Path::to_path_buf).unwrap_or_default(),
            (None, None) => env.cwd.clone().unwrap_or_default(),
        };
        let path = spec.output.clone().unwrap_or_else(|| dir.join(format!("{id}.jsonl")));
        let mut notes = Vec::new();
        if spec.output.is_some() {
            notes.push(format!(
                "`claude --resume {id}` finds the fork only in the project's folder (~/.claude/projects/<cwd with / as ->/)"
            ));
        }
        let parent_session = Some(s.session_id().to_string()).filter(|p| !p.is_empty());
        Ok(NewSession { path, id, header: String::new(), cwd, parent_session, notes, create_dir: false })
    }

    fn check_append(&self, _: &Session) -> Result<(), AppendError> {
        Err(unsupported("appending entries", "`pisces convert FILE --to pi` makes a pi session to continue").into())
    }

    fn label_line(&self, _: &Session, _: EntryIdx, _: Option<&str>) -> Result<(String, String), AppendError> {
        Err(unsupported("labels", "Claude Code files have no labels").into())
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

/// A `last-prompt` line as the client writes it.
fn last_prompt_line(prompt: &str, leaf: &str, session: &str) -> String {
    json!({"type": "last-prompt", "lastPrompt": prompt, "leafUuid": leaf, "sessionId": session}).to_string()
}
