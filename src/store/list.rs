//! `pisces ls`: every session found, read in parallel, summed up, filtered and sorted.

use super::cache::Cache;
use super::facts::{self, Need};
use super::grep::Query;
use super::summary::{link_forks, summarize, Summary};
use super::{each_parallel, Discovery, Skipped, Where};
use crate::session::format::Format;
use crate::session::js;

/// Which sessions to keep.
#[derive(Default)]
pub struct Filter {
    /// A format's short name or its agent's name (`claude`, `Claude Code`), any case.
    pub agent: Vec<String>,
    /// Sessions that ran in this directory.
    pub cwd: Option<String>,
    /// Last active at or after / before (ms since the epoch).
    pub since: Option<f64>,
    pub until: Option<f64>,
    /// A model id that one of its replies came from holds this (any case).
    pub model: Option<String>,
    /// Sessions with at least one match.
    pub grep: Option<Query>,
}

impl Filter {
    fn keeps(&self, s: &Summary) -> bool {
        let agent_ok = agent_matches(&self.agent, s);
        let cwd_ok = cwd_matches(self.cwd.as_deref(), s);
        let since_ok = self.since.is_none_or(|t| s.last_active.is_some_and(|l| l >= t));
        let until_ok = self.until.is_none_or(|t| s.last_active.is_some_and(|l| l < t));
        let model_ok = self.model.as_deref().is_none_or(|m| {
            let m = m.to_lowercase();
            s.models.iter().any(|x| x.to_lowercase().contains(&m))
        });
        agent_ok && cwd_ok && since_ok && until_ok && model_ok
    }
}

/// `s` is of one of `agents` (a format's short name or its agent's name, any case), or
/// none are asked for.
pub(crate) fn agent_matches(agents: &[String], s: &Summary) -> bool {
    is_of(agents, s.format, s.agent)
}

/// A session of this format and agent is one of `agents` (none: every agent's).
pub(crate) fn is_of(agents: &[String], format: &str, agent: &str) -> bool {
    agents.is_empty() || agents.iter().any(|a| a.eq_ignore_ascii_case(format) || a.eq_ignore_ascii_case(agent))
}

/// `s` ran in `cwd`, or no directory is asked for.
pub(crate) fn cwd_matches(cwd: Option<&str>, s: &Summary) -> bool {
    cwd.is_none_or(|c| s.cwd.as_deref().is_some_and(|sc| same_dir(sc, c)))
}

/// Two spellings of one directory (a trailing `/` aside).
fn same_dir(a: &str, b: &str) -> bool {
    let trim = |s: &str| if s.len() > 1 { s.trim_end_matches('/').to_string() } else { s.to_string() };
    trim(a) == trim(b)
}

/// The order of the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    /// Most recently active first.
    LastActive,
    /// Most recently started first.
    Started,
    /// Most entries first.
    Entries,
    /// Most leaves first.
    Leaves,
    /// Most tokens first.
    Tokens,
    /// Most expensive first.
    Cost,
    /// By agent, then most recently active first.
    Agent,
    /// By working directory, then most recently active first.
    Cwd,
    /// By title.
    Title,
}

/// What `ls` found.
#[derive(Default)]
pub struct Listing {
    pub rows: Vec<Summary>,
    /// Sessions read (before the filters).
    pub read: usize,
    /// Files in session folders that are not sessions.
    pub skipped: Vec<Skipped>,
    /// Sessions that could not be read, with why.
    pub failed: Vec<(String, String)>,
}

/// Reads every session `found` lists (on `threads` threads), keeps those `filter` keeps,
/// and sorts them. `progress(done, total)` is called as sessions are read.
pub fn list(
    found: Discovery,
    formats: &'static [&'static dyn Format],
    filter: &Filter,
    sort: SortKey,
    threads: usize,
    cache: Option<&Cache>,
    progress: &mut dyn FnMut(usize, usize),
) -> Listing {
    let total = found.sessions.len();
    let mut results: Vec<Option<Result<(Summary, bool), String>>> = vec![None; total];
    let mut done = 0;
    // As `grep` searches them: each line once, in the session whose file holds it.
    let searched = match filter.grep {
        Some(_) => super::grep::searched_paths(&found.sessions),
        None => Default::default(),
    };
    each_parallel(
        &found.sessions,
        threads,
        |_, w| read_summary(w, formats, filter.grep.as_ref(), &searched, cache),
        |k, r| {
            results[k] = Some(r);
            done += 1;
            progress(done, total);
        },
    );
    let mut listing = Listing { read: total, skipped: found.skipped, ..Listing::default() };
    let (mut all, mut matched) = (Vec::new(), Vec::new());
    for (w, r) in found.sessions.iter().zip(results) {
        match r {
            Some(Ok((s, m))) => {
                all.push(s);
                matched.push(m);
            }
            Some(Err(e)) => listing.failed.push((w.name(), e)),
            None => {}
        }
    }
    // Forks are counted among every session read, not only those the filters keep.
    link_forks(&mut all);
    listing.rows = all.into_iter().zip(matched).filter(|(s, m)| *m && filter.keeps(s)).map(|(s, _)| s).collect();
    sort_rows(&mut listing.rows, sort);
    listing
}

fn read_summary(
    w: &Where,
    formats: &'static [&'static dyn Format],
    grep: Option<&Query>,
    searched: &std::collections::HashSet<std::path::PathBuf>,
    cache: Option<&Cache>,
) -> Result<(Summary, bool), String> {
    let Some(q) = grep else {
        // Without text to search, what the cache holds is enough.
        return Ok((facts::read(w, formats, Need::default(), cache)?.summary, true));
    };
    let open = || Ok(vec![w.open()?]);
    crate::session::open::read(&open, formats, &mut |_| Ok(()), |sessions, reading| {
        let s = &sessions[0];
        let parts = reading.parts();
        let elsewhere = super::grep::elsewhere(parts.iter().map(|(n, p)| (n.as_str(), p.as_deref())), searched);
        let matched = !super::grep::search(s, q, None, true, &elsewhere)?.is_empty();
        Ok((summarize(s, w.name())?, matched))
    })
    .map_err(|e| format!("{e:#}"))
}

fn sort_rows(rows: &mut [Summary], key: SortKey) {
    let newest =
        |a: &Summary, b: &Summary| b.last_active.unwrap_or(f64::MIN).total_cmp(&a.last_active.unwrap_or(f64::MIN));
    rows.sort_by(|a, b| {
        let first = match key {
            SortKey::LastActive => newest(a, b),
            SortKey::Started => b.started.unwrap_or(f64::MIN).total_cmp(&a.started.unwrap_or(f64::MIN)),
            SortKey::Entries => b.entries.cmp(&a.entries),
            SortKey::Leaves => b.leaves.cmp(&a.leaves),
            SortKey::Tokens => b.totals.tokens().total_cmp(&a.totals.tokens()),
            SortKey::Cost => b.totals.cost.total_cmp(&a.totals.cost),
            SortKey::Agent => a.format.cmp(b.format),
            SortKey::Cwd => a.cwd.cmp(&b.cwd),
            SortKey::Title => a.title.cmp(&b.title),
        };
        first.then_with(|| newest(a, b)).then_with(|| a.name.cmp(&b.name))
    });
}

/// A time given on the command line: a date (`2026-11-01`, UTC midnight), an ISO time, or
/// a span back from `now` (`30m`, `12h`, `7d`, `2w`).
pub fn parse_time(text: &str, now_ms: f64) -> Result<f64, String> {
    let t = text.trim();
    let span = t.char_indices().last().and_then(|(k, unit)| {
        let n: f64 = t[..k].parse().ok().filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
        let ms = match unit {
            'm' => 60e3,
            'h' => 3600e3,
            'd' => 86400e3,
            'w' => 7.0 * 86400e3,
            _ => return None,
        };
        Some(now_ms - n * ms)
    });
    if let Some(at) = span {
        return Ok(at);
    }
    let iso = if t.len() == 10 { format!("{t}T00:00:00.000Z") } else { t.to_string() };
    js::parse_date(&iso).ok_or_else(|| format!("`{text}` is not a date (2026-11-01), a time (2026-11-01T12:00:00Z) or a span back from now (30m, 12h, 7d, 2w)"))
}
