//! The common ancestor of two leaves: the deepest entry on both paths.
//!
//! In one session the paths are root-first lists of entry indices from the same tree, so
//! they agree up to the ancestor and differ after it: a binary search over the common
//! length finds it without comparing more than log(depth) positions.
//!
//! Across two files (a fork and its source), entries are recognised by id, as pi's forks
//! keep them (checking that the content agrees too, so that an edited copy is not taken
//! for the same entry), else by identical content (everything but `id` and `parentId`).
//! A fork may drop or re-create entries (labels), so the deepest id match is looked up
//! through a map of B's path rather than by position; from there, or from the roots when
//! no id matches, the paths are followed in lockstep while the content agrees.

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::session::format::Unreadable;
use crate::session::{EntryIdx, Id, Session};

pub(super) struct Fork {
    /// Positions of the common ancestor on A's and B's paths.
    pub ancestor: Option<(usize, usize)>,
    pub matched_by: &'static str,
}

impl Fork {
    /// Entries of A's path up to and including the ancestor.
    pub fn shared_a(&self) -> usize {
        self.ancestor.map_or(0, |(a, _)| a + 1)
    }

    pub fn shared_b(&self) -> usize {
        self.ancestor.map_or(0, |(_, b)| b + 1)
    }
}

pub(super) fn find(
    sa: &Session,
    pa: &[EntryIdx],
    sb: &Session,
    pb: &[EntryIdx],
    same_session: bool,
) -> Result<Fork, Unreadable> {
    if same_session {
        let n = pa.len().min(pb.len());
        // pa[k] == pb[k] holds for every k up to the ancestor and for none after it.
        let shared = partition_point(n, |k| pa[k] == pb[k]);
        return Ok(Fork { ancestor: shared.checked_sub(1).map(|k| (k, k)), matched_by: "tree" });
    }

    let mut found = None;
    let mut matched_by = "id";
    // Ids the reader made up (pi version 1: from line numbers) say nothing across files.
    if !sa.synthetic_ids && !sb.synthetic_ids {
        let mut pos: FxHashMap<Id, usize> = FxHashMap::default();
        pos.reserve(pb.len());
        for (j, &e) in pb.iter().enumerate() {
            if let Some(id) = sb.id(e) {
                pos.insert(id, j);
            }
        }
        for k in (0..pa.len()).rev() {
            let Some(id) = sa.id(pa[k]) else { continue };
            let Some(&j) = pos.get(&id) else { continue };
            if same_content(sa, pa[k], sb, pb[j])? {
                found = Some((k, j));
                break;
            }
        }
    }
    // Then in lockstep while the content agrees (from the roots when no id matched).
    let (mut k, mut j) = match found {
        Some((k, j)) => (k + 1, j + 1),
        None => {
            matched_by = "content";
            (0, 0)
        }
    };
    while k < pa.len() && j < pb.len() && same_content(sa, pa[k], sb, pb[j])? {
        found = Some((k, j));
        matched_by = "content";
        k += 1;
        j += 1;
    }
    Ok(Fork { ancestor: found, matched_by })
}

/// The first k in 0..n for which `pred` is false (`pred` true on a prefix, false after).
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The two entries are the same apart from `id` and `parentId` (a fork re-chains parents
/// around the labels it drops).
fn same_content(sa: &Session, i: EntryIdx, sb: &Session, j: EntryIdx) -> Result<bool, Unreadable> {
    let (ea, eb) = (&sa.entries[i], &sb.entries[j]);
    if ea.kind != eb.kind || ea.role != eb.role {
        return Ok(false);
    }
    if sa.raw_line(i) == sb.raw_line(j) {
        return Ok(true);
    }
    let strip = |mut v: Value| {
        if let Value::Object(m) = &mut v {
            m.shift_remove("id");
            m.shift_remove("parentId");
        }
        v
    };
    let (va, vb) = (sa.parse(i)?, sb.parse(j)?);
    Ok(strip(va) == strip(vb))
}

#[cfg(test)]
mod tests {
    use super::partition_point;

    #[test]
    fn partition_point_finds_the_end_of_the_prefix() {
        let v = [1, 1, 1, 0, 0];
        assert_eq!(partition_point(5, |k| v[k] == 1), 3);
        assert_eq!(partition_point(0, |_| true), 0);
        assert_eq!(partition_point(3, |_| true), 3);
        assert_eq!(partition_point(3, |_| false), 0);
    }
}
