//! Moving around a session: pi's `/tree` navigation with "Summarize" (docs/pi-format.md §3.3):
//! leaving the current leaf for another entry, the branch left behind is summarized with the
//! model and the summary is appended where the navigation lands, so the next prompt continues
//! after it; and forks (`/fork`, the Fork choice for a missing cwd, §4.3): the branch copied
//! into a new session file, which the run continues in.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::json;

use crate::formats::pi::{self, fork};
use crate::llm::{ModelInfo, PiConfig, Provider};
use crate::session::write::{self, Shape};
use crate::session::{rev, EntryIdx, Session};
use crate::summarize::branch::{self, NewLeaf};

/// The tokens a branch summary's messages may take: the model's context window (the
/// provider's, else the catalog's, else pi's 128000) − `branchSummary.reserveTokens`.
pub fn token_budget(provider: &dyn Provider, info: &ModelInfo, config: &PiConfig) -> i64 {
    let window = provider.context_window().or(info.context_window).unwrap_or(128_000);
    window as i64 - config.branch_summary().reserve_tokens as i64
}

/// A branch summary the navigation appended.
pub struct Summarized {
    /// The `branch_summary` entry's id: the new leaf.
    pub id: String,
    /// How many entries it summarizes.
    pub entries: usize,
    pub summary: String,
}

/// Summarizes the branch from `from` (the leaf being left, a REV) back to where it meets
/// `to` (the navigation's target REV) with `provider`, as pi's `navigateTree(to,
/// {summarize: true})` does, and appends the `branch_summary` under the new leaf (`to`, or
/// its parent when `to` is a user or custom message). `budget`: the tokens the summarized
/// messages may take (context window − `branchSummary.reserveTokens`). `Ok(None)`: nothing is
/// left behind (`to` is on the path to `from`), so pi writes nothing.
pub fn summarize_left_branch(
    path: &Path,
    from: &str,
    to: &str,
    provider: &dyn Provider,
    thinking: Option<&str>,
    budget: i64,
) -> anyhow::Result<Option<Summarized>> {
    // What the summary needs, read from the file: the messages left behind, and as ids
    // (not indices, which are this read's) where the summary goes and what it leaves.
    struct Left {
        prepared: branch::Prepared,
        entries: usize,
        parent: Option<String>,
        from_id: String,
    }
    let left = pi::read_path(path, |session| {
        let from = rev::resolve(session, from)?;
        let target = rev::resolve(session, to)?;
        let collected = branch::collect(session, from, target);
        if collected.same_entry() || collected.entries.is_empty() {
            return Ok(None);
        }
        let prepared = branch::prepare(session, &collected.entries, budget)?;
        let id = |i: EntryIdx| session.named_id(i).map(str::to_string);
        let parent = match &collected.new_leaf {
            NewLeaf::Entry(i) => Some(id(*i)?),
            NewLeaf::Root => None,
            NewLeaf::Missing(missing) => bail!("Entry {missing} not found (the parent of {to})"),
        };
        Ok(Some(Left { prepared, entries: collected.entries.len(), parent, from_id: id(from)? }))
    })?;
    let Some(Left { prepared, entries, parent, from_id }) = left else { return Ok(None) };
    let summary = match branch::prompt(&prepared, None, false) {
        None => branch::empty_summary(),
        Some(prompt) => {
            let reply = crate::summarize::complete(provider, &prompt, thinking, &mut |_| {})
                .map_err(|e| anyhow::anyhow!("the branch summary failed: {e}"))?;
            branch::summary_from_reply(&prepared, &reply)
                .map_err(|e| anyhow::anyhow!("the branch summary failed: {e}"))?
        }
    };
    let details = json!({"readFiles": summary.read_files, "modifiedFiles": summary.modified_files});
    let done = branch::append(path, false, parent.as_deref(), &from_id, &summary, details, None)?;
    Ok(Some(Summarized { id: done.id, entries, summary: summary.summary }))
}

/// A session file a fork wrote.
pub struct Forked {
    pub path: PathBuf,
    /// The new session's id.
    pub id: String,
}

/// Writes the branch from the root to `leaf` (`None`: no entries) of `session`, read from
/// `source`, as a new session in `dir`: a version-3 header with a new id, `cwd` and
/// `parentSession` = `source`, then the entries as `pisces fork` writes them (labels
/// re-created, the current format whatever the source's version). The source is only read.
pub fn fork_branch(
    session: &Session,
    source: &Path,
    leaf: Option<EntryIdx>,
    cwd: &str,
    dir: &Path,
) -> anyhow::Result<Forked> {
    let plan = session
        .dialect()
        .writer()?
        .fork(session, leaf, Shape::Branch)
        .map_err(|e| anyhow::anyhow!("cannot fork: {e}"))?;
    let id = fork::new_session_id();
    let ts = write::now_iso();
    let abs = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
    let header = fork::header_line(&id, &ts, cwd, Some(&abs.to_string_lossy()));
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let path = dir.join(fork::file_name(&ts, &id));
    write::write_new_file(&path, |w| plan.write_to(&header, w))
        .with_context(|| format!("could not write {}", path.display()))?;
    Ok(Forked { path, id })
}
