//! `pisces stats`: tokens and cost over many sessions, each model response counted once.
//!
//! A response can be in several files: a pi or oh-my-pi fork or clone copies its source's
//! entries verbatim, a Claude Code `--fork-session` copies lines under the same uuids, and a
//! Codex fork reads its parent's rollout as the start of its own history. Each format names
//! its responses with a key that is the same in every copy (`Dialect::response`), and
//! each key is counted once, for one session:
//! 1. the session the format says made the response (a line or an entry that is not
//!    marked copied);
//! 2. else the oldest of the sessions holding it: the fewest fork links from a session with
//!    no parent among those read, then the earliest start, then the name.
//!
//! `--by branch` gives each branch tip its path's cost (every distinct response the model's
//! context at that tip was built from) and what it added: the responses on its path and on
//! no other branch's, in any session read.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::cache::Cache;
use super::facts::{self, Facts, Need, Record, Tip};
use super::{each_parallel, Where};
use crate::session::format::{Format, FormatInfo};
use crate::session::js;
use crate::session::open::Afterwards;
use crate::session::usage::Totals;

/// How rows are grouped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// One row per UTC day.
    Day,
    /// One row per week (UTC, weeks start on Monday, named by that Monday).
    Week,
    /// One row per UTC month.
    Month,
    /// One row per agent.
    Agent,
    /// One row per model.
    Model,
    /// One row per working directory.
    Project,
    /// One row per session.
    Session,
    /// One row per branch tip: its path's cost and what it added.
    Branch,
}

/// Which responses to count.
#[derive(Default)]
pub struct Filter {
    /// A format's short name or its agent's name, any case (sessions).
    pub agent: Vec<String>,
    /// Sessions that ran in this directory.
    pub cwd: Option<String>,
    /// Responses at or after / before (ms since the epoch).
    pub since: Option<f64>,
    pub until: Option<f64>,
    /// Responses from a model whose id holds this (any case).
    pub model: Option<String>,
}

/// One row of the report.
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// The group (a day, an agent, a model, a cwd, a session's name, a tip's REV).
    pub key: String,
    /// `--by session` and `--by branch`: the session's agent, name, id and title.
    pub agent: Option<&'static str>,
    pub session: Option<String>,
    pub id: Option<String>,
    pub title: Option<String>,
    /// Distinct responses counted in the row.
    pub responses: usize,
    pub totals: Totals,
    /// `--by branch`: the responses and totals on this tip's path and no other's.
    pub added: Option<(usize, Totals)>,
}

/// The report.
#[derive(Default)]
pub struct Stats {
    pub by: Option<By>,
    pub rows: Vec<Row>,
    /// Every distinct response counted (a branch report's rows overlap: this does not).
    pub responses: usize,
    pub total: Totals,
    /// Response lines read that were copies of a response already counted.
    pub copies: usize,
    /// Sessions found, and those the filters kept (without the cache, another agent's are
    /// not read when `--agent` is given).
    pub read: usize,
    pub kept: usize,
    /// Sessions the cache answered for, and those that grew, counted from what the cache
    /// held and their new entries.
    pub cached: usize,
    pub extended: usize,
    /// Sessions that could not be read, with why.
    pub failed: Vec<(String, String)>,
}

/// Reads `sessions` on `threads` threads and sums their responses as `by` groups them.
/// `heads`: the format each session's head showed at discovery (`Discovery::heads`; empty
/// for sessions named). `progress(done)` is called as sessions are read. `afterwards`: what
/// becomes of the responses read, once summed.
#[allow(clippy::too_many_arguments)]
pub fn stats(
    sessions: &[Where],
    heads: &[Option<&'static FormatInfo>],
    formats: &'static [&'static dyn Format],
    filter: &Filter,
    by: By,
    threads: usize,
    cache: Option<&Cache>,
    afterwards: Afterwards,
    progress: &mut dyn FnMut(usize),
) -> Stats {
    let mut reads: Vec<Option<Result<Facts, String>>> = Vec::new();
    reads.resize_with(sessions.len(), || None);
    let mut done = 0;
    // Without the cache, another agent's sessions are not read. With it, every session is:
    // one it does not hold is cached, so that the next run, whatever agents it asks for,
    // answers from the cache (sniffing the others' heads on every run cost more than
    // reading them once).
    let agents: &[String] = if cache.is_some() { &[] } else { &filter.agent };
    each_parallel(
        sessions,
        threads,
        |k, w| {
            // A session the cache holds as it is, of another agent than those asked for, is
            // left out unread, as its facts would be.
            if let Some(c) = cache.filter(|_| !filter.agent.is_empty()) {
                let other = |(format, agent)| !super::list::is_of(&filter.agent, format, agent);
                if facts::cache_key(w).0.and_then(|key| c.format_unchanged(&key)).is_some_and(other) {
                    return None;
                }
            }
            super::may_be_of(w, heads.get(k).copied(), agents, formats)
                .then(|| facts::read(w, formats, Need { records: true, tips: by == By::Branch }, cache))
        },
        |k, r| {
            reads[k] = r;
            done += 1;
            progress(done);
        },
    );
    let cached = cache.map_or(0, |c| c.hits.load(std::sync::atomic::Ordering::Relaxed));
    let extended = cache.map_or(0, |c| c.extended.load(std::sync::atomic::Ordering::Relaxed));
    let mut out = Stats { by: Some(by), read: sessions.len(), cached, extended, ..Stats::default() };
    let mut kept = Vec::new();
    for (w, r) in sessions.iter().zip(reads) {
        match r {
            Some(Ok(r)) if keeps_session(filter, &r) => kept.push(r),
            Some(Ok(_)) | None => {}
            Some(Err(e)) => out.failed.push((w.name(), e)),
        }
    }
    out.kept = kept.len();
    let order = claim_order(&kept);
    let owner = owners(&kept, &order);
    let wanted = |r: &Record| keeps_record(filter, r);

    // Each key's record, counted once, for its owner (summed in this order, so that the
    // floating-point totals are the same on every run).
    let mut counted: KeyMap<(usize, &Record)> = KeyMap::default();
    counted.reserve(owner.len());
    for &k in &order {
        for r in &kept[k].records {
            let vacant = match counted.entry(r.key) {
                Entry::Vacant(v) if owner.get(&r.key).is_some_and(|o| o.0 == k) => Some(v),
                _ => None,
            };
            match vacant {
                Some(v) => {
                    v.insert((k, r));
                    if wanted(r) {
                        out.responses += 1;
                        out.total.add(&r.totals);
                    }
                }
                None => out.copies += 1,
            }
        }
    }
    out.rows = match by {
        By::Branch => branch_rows(&kept, &order, &counted, &wanted),
        _ => group_rows(&kept, &order, &counted, &wanted, by),
    };
    if afterwards == Afterwards::LeaveToExit {
        // (The responses read, a million and more in a large store, each with a shared
        // model name to let go of: freeing them took a twentieth of a warm `stats`.)
        drop(counted);
        std::mem::forget(kept);
    }
    out
}

/// Responses' keys are 128-bit SipHash values already ([`facts::hash128`]): the tables
/// keyed on them take their bits as the hash rather than hash them again (SipHash of every
/// response, three times over, was a fifth of a warm `stats`' time after the reads).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u128(&mut self, k: u128) {
        self.0 ^= (k as u64) ^ ((k >> 64) as u64);
    }
}

type Keyed = BuildHasherDefault<KeyHasher>;
type KeyMap<V> = HashMap<u128, V, Keyed>;

/// Every response of `reads` once, with the session that owns it (the one `stats` counts
/// it for: not marked copied, else the oldest), in the order `stats` sums them.
pub fn counted_once(reads: &[Facts]) -> Vec<(usize, &Record)> {
    let order = claim_order(reads);
    let owner = owners(reads, &order);
    let mut seen: HashSet<u128, Keyed> = HashSet::default();
    let mut out = Vec::new();
    for &k in &order {
        for r in &reads[k].records {
            if owner.get(&r.key).is_some_and(|o| o.0 == k) && seen.insert(r.key) {
                out.push((k, r));
            }
        }
    }
    out
}

fn keeps_session(f: &Filter, r: &Facts) -> bool {
    super::list::agent_matches(&f.agent, &r.summary) && super::list::cwd_matches(f.cwd.as_deref(), &r.summary)
}

fn keeps_record(f: &Filter, r: &Record) -> bool {
    let since_ok = f.since.is_none_or(|t| r.time.is_some_and(|x| x >= t));
    let until_ok = f.until.is_none_or(|t| r.time.is_some_and(|x| x < t));
    let model_ok = f
        .model
        .as_deref()
        .is_none_or(|m| r.model.as_deref().is_some_and(|x| x.to_lowercase().contains(&m.to_lowercase())));
    since_ok && until_ok && model_ok
}

/// Sessions oldest first: fewest fork links from a session whose parent was not read, then
/// earliest start, then name.
fn claim_order(reads: &[Facts]) -> Vec<usize> {
    // (Fx: the keys are paths and ids.)
    let mut by_key: rustc_hash::FxHashMap<&str, usize> = Default::default();
    by_key.reserve(reads.len() * 2);
    for (k, r) in reads.iter().enumerate() {
        by_key.entry(r.summary.name.as_str()).or_insert(k);
        if !r.summary.id.is_empty() {
            by_key.entry(r.summary.id.as_str()).or_insert(k);
        }
    }
    let depth = |mut k: usize| {
        let mut d = 0;
        // A cycle of parents (hand-edited headers) stops at the number of sessions.
        while let Some(p) = reads[k].summary.parent.as_deref().and_then(|p| by_key.get(p).copied()) {
            if p == k || d > reads.len() {
                break;
            }
            d += 1;
            k = p;
        }
        d
    };
    let depths: Vec<usize> = (0..reads.len()).map(depth).collect();
    let mut order: Vec<usize> = (0..reads.len()).collect();
    order.sort_by(|&a, &b| {
        depths[a]
            .cmp(&depths[b])
            .then_with(|| {
                reads[a].summary.started.unwrap_or(f64::MAX).total_cmp(&reads[b].summary.started.unwrap_or(f64::MAX))
            })
            .then_with(|| reads[a].summary.name.cmp(&reads[b].summary.name))
    });
    order
}

/// Which session counts each response: the first in `order` holding it unmarked as a
/// copy, else the first holding it at all (with whether that one marks it copied).
fn owners(reads: &[Facts], order: &[usize]) -> KeyMap<(usize, bool)> {
    // One pass: a holder that marks it copied gives way to the first that does not.
    let mut owner: KeyMap<(usize, bool)> = KeyMap::default();
    owner.reserve(reads.iter().map(|r| r.records.len()).sum());
    for &k in order {
        for r in &reads[k].records {
            match owner.entry(r.key) {
                Entry::Vacant(v) => {
                    v.insert((k, r.copied));
                }
                Entry::Occupied(mut o) if o.get().1 && !r.copied => {
                    o.insert((k, false));
                }
                Entry::Occupied(_) => {}
            }
        }
    }
    owner
}

/// A day in ms.
const DAY: f64 = 86_400_000.0;

/// `2026-11-29`, the Monday of its week, or `2026-11`.
fn period(ms: f64, by: By) -> String {
    let day = (ms / DAY).floor();
    let at = match by {
        // 1970-01-01 was a Thursday, three days after a Monday.
        By::Week => (day - (day + 3.0).rem_euclid(7.0)) * DAY,
        _ => ms,
    };
    let iso = js::iso_string(at as i64);
    let len = if by == By::Month { 7 } else { 10 };
    iso.get(..len).unwrap_or(&iso).to_string()
}

fn group_rows(
    reads: &[Facts],
    order: &[usize],
    counted: &KeyMap<(usize, &Record)>,
    wanted: &dyn Fn(&Record) -> bool,
    by: By,
) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    // Each key's row. A response's key is found without making its string where it can be
    // (a string or two per response showed in a warm `stats`): a day's row through the day,
    // a key that is the session's own (its agent, project or name) once per session.
    let mut at: rustc_hash::FxHashMap<String, usize> = Default::default();
    let mut day_rows: rustc_hash::FxHashMap<i64, usize> = Default::default();
    for &k in order {
        let s = &reads[k];
        let mut own_row = None;
        for r in &s.records {
            if counted.get(&r.key).is_none_or(|(o, c)| *o != k || !std::ptr::eq(*c, r)) || !wanted(r) {
                continue;
            }
            let n = match by {
                By::Day | By::Week | By::Month => match r.time {
                    Some(t) => {
                        let day = (t / DAY).floor() as i64;
                        match day_rows.get(&day) {
                            Some(&n) => n,
                            None => {
                                let n = row_for(&mut rows, &mut at, period(t, by), s, by);
                                day_rows.insert(day, n);
                                n
                            }
                        }
                    }
                    None => row_for(&mut rows, &mut at, "(no time)".into(), s, by),
                },
                By::Model => {
                    let m = r.model.as_deref().filter(|m| !m.is_empty()).unwrap_or("(unknown)");
                    match at.get(m) {
                        Some(&n) => n,
                        None => row_for(&mut rows, &mut at, m.to_string(), s, by),
                    }
                }
                By::Agent | By::Project | By::Session | By::Branch => *own_row.get_or_insert_with(|| {
                    let key = match by {
                        By::Agent => s.summary.agent.to_string(),
                        By::Project => s.summary.cwd.clone().unwrap_or_else(|| "(no cwd)".into()),
                        _ => s.summary.name.clone(),
                    };
                    row_for(&mut rows, &mut at, key, s, by)
                }),
            };
            rows[n].responses += 1;
            rows[n].totals.add(&r.totals);
        }
    }
    match by {
        // Periods in time order; the others most expensive first.
        By::Day | By::Week | By::Month => rows.sort_by(|a, b| a.key.cmp(&b.key)),
        _ => rows.sort_by(|a, b| {
            b.totals.cost.total_cmp(&a.totals.cost).then_with(|| b.totals.tokens().total_cmp(&a.totals.tokens()))
        }),
    }
    rows
}

/// The row of `key` in `rows` (`at`: each key's), made for session `s` if there is none.
fn row_for(
    rows: &mut Vec<Row>,
    at: &mut rustc_hash::FxHashMap<String, usize>,
    key: String,
    s: &Facts,
    by: By,
) -> usize {
    if let Some(&n) = at.get(&key) {
        return n;
    }
    let mut row = Row { key: key.clone(), ..Row::default() };
    if by == By::Session {
        row.agent = Some(s.summary.agent);
        row.session = Some(s.summary.name.clone());
        row.id = Some(s.summary.id.clone());
        row.title = s.summary.title.clone();
    }
    rows.push(row);
    at.insert(key, rows.len() - 1);
    rows.len() - 1
}

fn branch_rows(
    reads: &[Facts],
    order: &[usize],
    counted: &KeyMap<(usize, &Record)>,
    wanted: &dyn Fn(&Record) -> bool,
) -> Vec<Row> {
    // Each tip once: from the session whose file holds its line, else the first to read it.
    let mut tips: Vec<(usize, &Tip)> = Vec::new();
    let mut seen: HashSet<u128, Keyed> = HashSet::default();
    for own in [true, false] {
        for &k in order {
            for t in reads[k].tips.iter().flatten().filter(|t| t.own == own) {
                if seen.insert(t.identity) {
                    tips.push((k, t));
                }
            }
        }
    }
    let mut rank = vec![0; reads.len()];
    for (n, &k) in order.iter().enumerate() {
        rank[k] = n;
    }
    tips.sort_by_key(|&(k, _)| rank[k]);
    let mut paths_holding: KeyMap<usize> = KeyMap::default();
    for (_, t) in &tips {
        for key in &t.keys {
            *paths_holding.entry(*key).or_default() += 1;
        }
    }
    tips.iter()
        .map(|&(k, t)| {
            let s = &reads[k];
            let mut row = Row {
                key: t.rev.clone(),
                agent: Some(s.summary.agent),
                session: Some(s.summary.name.clone()),
                id: Some(s.summary.id.clone()),
                title: s.summary.title.clone(),
                ..Row::default()
            };
            let mut added = (0, Totals::default());
            for key in &t.keys {
                let Some((_, r)) = counted.get(key).filter(|(_, r)| wanted(r)) else { continue };
                row.responses += 1;
                row.totals.add(&r.totals);
                if paths_holding.get(key) == Some(&1) {
                    added.0 += 1;
                    added.1.add(&r.totals);
                }
            }
            row.added = Some(added);
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weeks_start_on_monday() {
        // 2026-12-02 was a Wednesday; 2026-11-30 the Monday before it.
        let wed = js::parse_date("2026-12-02T10:00:00.000Z").unwrap();
        assert_eq!(period(wed, By::Week), "2026-11-30");
        let mon = js::parse_date("2026-11-30T00:00:00.000Z").unwrap();
        assert_eq!(period(mon, By::Week), "2026-11-30");
        let sun = js::parse_date("2026-11-29T23:59:59.000Z").unwrap();
        assert_eq!(period(sun, By::Week), "2026-11-23");
        assert_eq!(period(wed, By::Month), "2026-12");
        assert_eq!(period(wed, By::Day), "2026-12-02");
    }

    #[test]
    fn a_response_is_owned_by_the_first_that_does_not_mark_it_copied() {
        // Keys 1 to 4, held by three sessions; `true`: marked copied there.
        let held: [&[(u128, bool)]; 3] = [
            &[(1, true), (2, true), (3, false)],
            &[(1, false), (2, true), (3, true)],
            &[(1, false), (2, false), (4, true)],
        ];
        let reads: Vec<Facts> = held
            .iter()
            .map(|rs| Facts {
                records: rs
                    .iter()
                    .map(|&(key, copied)| Record { key, copied, time: None, model: None, totals: Totals::default() })
                    .collect(),
                ..Facts::default()
            })
            .collect();
        for (order, want) in [
            ([0, 1, 2], [(1, 1), (2, 2), (3, 0), (4, 2)]),
            ([2, 1, 0], [(1, 2), (2, 2), (3, 0), (4, 2)]),
            ([1, 0, 2], [(1, 1), (2, 2), (3, 0), (4, 2)]),
        ] {
            let owner = owners(&reads, &order);
            assert_eq!(owner.len(), want.len());
            for (key, k) in want {
                assert_eq!(owner.get(&key).map(|o| o.0), Some(k), "key {key}, order {order:?}");
            }
        }
    }
}
