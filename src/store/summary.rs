//! One row per session (`pisces ls`): what it is, where it ran, how big, what it cost.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::session::format::Unreadable;
use crate::session::system::content_text_joined;
use crate::session::usage::Totals;
use crate::session::{EntryType, Role, Session};

/// A session, summed up.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The agent that wrote it (`pi`, `Claude Code`, …).
    pub agent: &'static str,
    /// Its format's short name (`pi`, `omp`, `openclaw`, `claude`, `codex`): what
    /// `--agent` takes.
    pub format: &'static str,
    /// How commands name it (a path, or `openclaw:<agent>/<id>`).
    pub name: String,
    /// Its session id.
    pub id: String,
    /// Its name or title as its agent shows it, else its first user prompt (pi's
    /// `/resume` list), on one line.
    pub title: Option<String>,
    pub cwd: Option<String>,
    /// The earliest and the latest time of its entries (ms since the epoch).
    pub started: Option<f64>,
    pub last_active: Option<f64>,
    /// Entries in its own file (what a Codex fork inherits is its parent's).
    pub entries: usize,
    /// Branch tips.
    pub leaves: usize,
    /// Sessions forked from this one, among those listed (see [`link_forks`]).
    pub forks: usize,
    /// The session it was forked from, as its header names it (a path or an id).
    pub parent: Option<String>,
    /// Models its replies came from, sorted.
    pub models: Vec<String>,
    /// Tokens and cost of its own entries.
    pub totals: Totals,
    /// Problems its reader read past.
    pub warnings: usize,
}

/// The summary of a loaded session, named `name`.
pub fn summarize(s: &Session, name: String) -> Result<Summary, Unreadable> {
    summarize_with(s, name, None)
}

/// [`summarize`], with each entry's usage read already (`stats` reads every response, whose
/// totals are its entry's usage: `Dialect::response`), so that no line is read twice for
/// it.
pub fn summarize_with(s: &Session, name: String, usage: Option<&Usages>) -> Result<Summary, Unreadable> {
    let mut sum = Summary {
        agent: s.format().agent,
        format: s.format().name,
        name,
        id: s.header.id.clone(),
        cwd: s.header.cwd_str().map(str::to_string),
        leaves: s.leaves().len(),
        parent: s.header.parent_session.as_ref().and_then(|p| match p {
            Value::String(p) if !p.is_empty() => Some(p.clone()),
            _ => None,
        }),
        warnings: s.warnings(),
        ..Summary::default()
    };
    let (mut models, mut first_prompt) = (BTreeSet::new(), None);
    add_entries(s, 0, &mut sum, &mut models, &mut first_prompt, usage)?;
    finish(s, &mut sum, models, first_prompt);
    Ok(sum)
}

/// Each entry's usage, for the entries that have some (every other entry has none).
pub type Usages = HashMap<crate::session::EntryIdx, Totals>;

/// The summary of `s` from `old`, the summary of its first `from` entries (as
/// [`summarize`] made it of a session that held only those), and the entries after them.
/// The caller makes sure nothing but those entries changed what [`summarize`] would say
/// (the name, which does not come from the entries, is the same; see `facts::extended`).
pub fn extend(s: &Session, old: &Summary, from: usize, name: String) -> Result<Summary, Unreadable> {
    let mut sum = Summary { name, leaves: s.leaves().len(), warnings: s.warnings(), ..old.clone() };
    let mut models: BTreeSet<String> = old.models.iter().cloned().collect();
    // The first prompt, if the old title was it (the session has no name of its own).
    let mut first_prompt = if s.title.is_none() { old.title.clone() } else { None };
    add_entries(s, from, &mut sum, &mut models, &mut first_prompt, None)?;
    finish(s, &mut sum, models, first_prompt);
    Ok(sum)
}

/// Counts the entries from the `from`-th on into `sum`: entries, times, usage, models,
/// and the first prompt when there is none yet.
fn add_entries(
    s: &Session,
    from: usize,
    sum: &mut Summary,
    models: &mut BTreeSet<String>,
    first_prompt: &mut Option<String>,
    usage: Option<&Usages>,
) -> Result<(), Unreadable> {
    let d = s.dialect();
    for i in s.entries.indices().skip(from) {
        // A Codex fork's inherited lines are its parent's to count.
        if d.place(s, i).is_some() {
            continue;
        }
        sum.entries += 1;
        if let Some(t) = s.time(i) {
            sum.started = Some(sum.started.map_or(t, |m: f64| m.min(t)));
            sum.last_active = Some(sum.last_active.map_or(t, |m: f64| m.max(t)));
        }
        let read = match usage {
            Some(known) => known.get(&i).copied(),
            None => d.usage(s, i)?,
        };
        if let Some(u) = read {
            sum.totals.add(&u);
        }
        let e = &s.entries[i];
        if e.role == Role::Assistant {
            // (Unread when the model it can name is one already counted, or none.)
            let seen = d.model_bound(s, i).is_some_and(|m| m.is_none_or(|m| models.contains(m)));
            if !seen {
                models.extend(d.model(s, i).ok().flatten());
            }
            continue;
        }
        if !(e.kind == EntryType::ModelChange || first_prompt.is_none() && e.role == Role::User) {
            continue;
        }
        let Ok(v) = d.entry(s, i) else { continue };
        let m = v.get("message");
        if e.kind == EntryType::ModelChange {
            models.extend(v.get("modelId").and_then(Value::as_str).map(str::to_string));
        } else if first_prompt.is_none() {
            let text = content_text_joined(m.and_then(|m| m.get("content")), " ");
            if !text.trim().is_empty() {
                *first_prompt = Some(text);
            }
        }
    }
    Ok(())
}

/// The models, and the title: the session's name, else its first prompt.
fn finish(s: &Session, sum: &mut Summary, mut models: BTreeSet<String>, first_prompt: Option<String>) {
    models.retain(|m| !m.is_empty());
    sum.models = models.into_iter().collect();
    sum.title = s.title.clone().or(first_prompt).map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "));
}

/// Counts each row's forks: rows whose `parent` names it, by session id (oh-my-pi,
/// Claude Code, Codex) or by file (pi names its source's path).
pub fn link_forks(rows: &mut [Summary]) {
    // (Fx: the keys are paths and ids, hashed 30,000 times over in a store of ten thousand.)
    let mut by_key: rustc_hash::FxHashMap<&str, usize> = Default::default();
    by_key.reserve(rows.len() * 2);
    for (k, r) in rows.iter().enumerate() {
        by_key.entry(r.name.as_str()).or_insert(k);
        if !r.id.is_empty() {
            by_key.entry(r.id.as_str()).or_insert(k);
        }
    }
    let parents: Vec<usize> =
        rows.iter().filter_map(|r| r.parent.as_deref().and_then(|p| by_key.get(p).copied())).collect();
    for p in parents {
        rows[p].forks += 1;
    }
}
