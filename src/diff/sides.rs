//! `pisces diff`'s report for any two leaves of a session, in parts a page can put together
//! (`pisces export --html`'s compare view), instead of one report per pair: the pairs grow
//! as the square of the leaves, the parts about linearly.
//!
//! In one session the report of leaves A and B is made of two *sides*, each a leaf's path
//! cut after the common ancestor (the fork point), and of how their turns pair up:
//! [`compare`](super::compare) sums each side ([`summary::side`]), cuts it into turns and
//! describes each ([`turns::view`]), and aligns the turns by their prompts
//! ([`turns::align`]). A side depends only on its leaf and its fork point, and a fork point
//! is always an entry with two children or more, or a leaf (the other leaf below it), or no
//! entry at all (leaves under different roots). So this computes, with the same functions,
//! every side of every leaf at each of those entries on its path, each turn described once;
//! and the alignment of every pair whose prompts have something in common (the others pair
//! in order, which the page does itself).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use super::{calls, summary, turns, Outcome, PathFacts, SideSummary};
use crate::session::format::Unreadable;
use crate::session::{js, EntryIdx, Session};

/// The parts of every report between two of a session's leaves.
#[derive(Default)]
pub struct Sides {
    /// Each turn described once, as `pisces diff --format json` gives it.
    pub turns: Vec<String>,
    /// Each side: its fork point (`None`: from the root), its leaf (a number into the
    /// leaves given), its [`Digest`] as JSON, and its turns (numbers into `turns`).
    pub sides: Vec<(Option<EntryIdx>, usize, String, Vec<u32>)>,
    /// Pairs of leaves (`a < b`) whose turns do not pair in order: the turn numbers of each
    /// pair, as indices into each side's turns.
    pub aligns: Vec<(usize, usize, Vec<TurnPair>)>,
    /// Whether every side is here (else the work would have passed the budget: the
    /// shortest sides, of the pairs that part latest, are the ones kept).
    pub complete: bool,
    /// Whether every pair of the sides here whose turns do not pair in order is in
    /// `aligns` (at most [`MAX_PAIRS`] pairs are looked at).
    pub aligned: bool,
}

/// Two sides' turns paired: an index into each side's turns, or `None` where only the
/// other side has one.
pub type TurnPair = (Option<usize>, Option<usize>);

/// What a page shows of a side's summary: `pisces diff`'s [`SideSummary`] less its lists
/// of errors and file operations (their number stays), and with only the last
/// [`LAST_COMMANDS`] of its commands. A page holds a side for every leaf at every fork
/// point on its path, and a long side's lists run to megabytes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Digest<'s> {
    pub entries: usize,
    pub turns: usize,
    pub model_calls: usize,
    pub tool_calls: usize,
    pub errors: usize,
    #[serde(serialize_with = "js::serialize_number")]
    pub tokens: f64,
    #[serde(serialize_with = "js::serialize_number")]
    pub cost: f64,
    pub models: &'s [String],
    pub files_modified: &'s [String],
    /// Distinct commands run.
    pub command_count: usize,
    /// The last of them (in the order first run), with how each one's last run ended.
    pub commands: Vec<ShownRun<'s>>,
    pub last_test_run: Option<ShownRun<'s>>,
}

/// A command and how its (last) run ended.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShownRun<'s> {
    pub command: &'s str,
    pub outcome: Outcome,
    pub exit_code: Option<i64>,
}

/// Commands a [`Digest`] lists.
pub const LAST_COMMANDS: usize = 8;

impl<'s> Digest<'s> {
    pub fn of(sum: &'s SideSummary) -> Digest<'s> {
        let run = |command: &'s str, r: &super::Run| ShownRun { command, outcome: r.outcome, exit_code: r.exit_code };
        let skip = sum.commands.len().saturating_sub(LAST_COMMANDS);
        Digest {
            entries: sum.entries,
            turns: sum.turns,
            model_calls: sum.model_calls,
            tool_calls: sum.tool_calls,
            errors: sum.errors.len(),
            tokens: sum.usage.tokens,
            cost: sum.usage.cost,
            models: &sum.models,
            files_modified: &sum.files_modified,
            command_count: sum.commands.len(),
            commands: sum.commands[skip..].iter().map(|c| run(&c.command, &c.last)).collect(),
            last_test_run: sum.last_test_run.as_ref().map(|r| run(&r.command, r)),
        }
    }
}

/// What the alignment needs of a side.
struct Keys {
    leaf: usize,
    /// The side's first entry (`None`: the side is empty).
    first: Option<EntryIdx>,
    lead: bool,
    keys: Vec<u64>,
}

/// Pairs of leaves whose alignment is looked at, at most.
const MAX_PAIRS: usize = 1_000_000;

/// The sides of `leaves` (`all`: their paths' facts) and their alignments, reading at most
/// about `budget` entries of sides in all, the shortest sides first.
pub fn for_page(s: &Session, leaves: &[EntryIdx], all: &PathFacts, budget: usize) -> Result<Sides, Unreadable> {
    let n = s.entries.len();
    // Where a side can start: after an entry where the tree branches, or after a leaf.
    let mut fork = vec![false; n];
    for (k, f) in fork.iter_mut().enumerate() {
        *f = s.children(EntryIdx::new(k)).nth(1).is_some();
    }
    for &l in leaves {
        fork[l.get()] = true;
    }
    let roots = s.roots().len() > 1;
    // Every side (leaf, fork point, entries shared), then those that fit, shortest first.
    let mut wanted: Vec<(usize, Option<EntryIdx>, usize, usize)> = Vec::new();
    for (k, &leaf) in leaves.iter().enumerate() {
        let path = s.path_to(leaf);
        let len = path.len();
        wanted.extend(roots.then_some((k, None, 0, len)));
        wanted.extend(path.iter().enumerate().filter(|(_, e)| fork[e.get()]).map(|(p, &e)| (k, Some(e), p + 1, len)));
    }
    wanted.sort_by_key(|&(k, _, shared, len)| (len - shared, k));
    let mut out = Sides { complete: true, aligned: true, ..Sides::default() };
    let mut read = 0usize;
    let fits = wanted
        .iter()
        .take_while(|&&(_, _, shared, len)| {
            read += len - shared + 1;
            read <= budget
        })
        .count();
    out.complete = fits == wanted.len();
    wanted.truncate(fits);
    wanted.sort_by_key(|&(k, _, shared, _)| (k, shared));

    let mut turn_at: FxHashMap<String, u32> = FxHashMap::default();
    let mut groups: FxHashMap<Option<EntryIdx>, Vec<Keys>> = FxHashMap::default();
    for of_leaf in wanted.chunk_by(|x, y| x.0 == y.0) {
        let k = of_leaf[0].0;
        let path = s.path_to(leaves[k]);
        // (The facts of the longest of these sides, copied once: not of the whole path.)
        let from = of_leaf[0].2;
        let facts = all.of(&path[from..]);
        if facts.len() != path.len() - from {
            // (Every entry of a leaf's path has its fact: sides are cut by position.)
            out.complete = false;
            continue;
        }
        for &(_, at, shared, _) in of_leaf {
            let side = &facts[shared - from..];
            let spans = turns::split(s, side);
            let mut sum = summary::side(s, &path, shared, side)?;
            sum.turns = spans.len();
            let results = calls::results_by_call(side);
            let numbers = spans
                .iter()
                .map(|span| {
                    let json = serde_json::to_string(&turns::view(s, side, span, &results)).expect("a turn serializes");
                    *turn_at.entry(json).or_insert_with_key(|json| {
                        out.turns.push(json.clone());
                        (out.turns.len() - 1) as u32
                    })
                })
                .collect();
            let digest = serde_json::to_string(&Digest::of(&sum)).expect("a summary serializes");
            out.sides.push((at, k, digest, numbers));
            let (lead, keys) = turns::keys(side, &spans);
            groups.entry(at).or_default().push(Keys { leaf: k, first: path.get(shared).copied(), lead, keys });
        }
    }

    // Alignments: the pairs of sides cut at the same fork point whose fork point it is (they
    // part there) and whose prompts have a key in common.
    let mut looked = 0usize;
    for sides in groups.values() {
        let mut with_key: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
        for (j, x) in sides.iter().enumerate() {
            for &key in x.keys.iter().collect::<FxHashSet<_>>() {
                with_key.entry(key).or_default().push(j);
            }
        }
        let mut seen: FxHashSet<(usize, usize)> = FxHashSet::default();
        for members in with_key.values() {
            for (m, &x) in members.iter().enumerate() {
                for &y in &members[m + 1..] {
                    let (x, y) = (&sides[x], &sides[y]);
                    let parted = x.first.is_none() || y.first.is_none() || x.first != y.first;
                    let (a, b) = if x.leaf < y.leaf { (x, y) } else { (y, x) };
                    if !parted || a.leaf == b.leaf || !seen.insert((a.leaf, b.leaf)) {
                        continue;
                    }
                    looked += 1;
                    if looked > MAX_PAIRS {
                        out.aligned = false;
                        return Ok(out);
                    }
                    let pairs = turns::align_keys(a.lead, &a.keys, b.lead, &b.keys);
                    let ordered = in_order_pairs(a.lead, a.keys.len(), b.lead, b.keys.len());
                    if pairs != ordered {
                        out.aligns.push((a.leaf, b.leaf, pairs));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// How two sides' turns pair when their prompts have nothing in common: the leads
/// together, then the rest in order (what the page does without an alignment).
fn in_order_pairs(lead_a: bool, na: usize, lead_b: bool, nb: usize) -> Vec<TurnPair> {
    let mut pairs = Vec::new();
    if lead_a || lead_b {
        pairs.push((lead_a.then_some(0), lead_b.then_some(0)));
    }
    let (oa, ob) = (usize::from(lead_a), usize::from(lead_b));
    for d in 0..na.max(nb) {
        pairs.push(((d < na).then_some(oa + d), (d < nb).then_some(ob + d)));
    }
    pairs
}
