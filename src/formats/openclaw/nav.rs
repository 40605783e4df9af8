//! OpenClaw's tree: which entry is each entry's parent, and which is the active leaf, as
//! its transcript reader decides them (`scanSessionTranscriptNavigation`,
//! src/config/sessions/transcript-tree.ts; docs/openclaw-format.md §3). pi takes the
//! last line for the leaf and `parentId` for the parent. OpenClaw also writes:
//! - `leaf` rows: navigation controls (`sessions.rewind`, `sessions.branches.switch`).
//!   A leaf row makes its `targetId` the active leaf; in the tree it hangs under its
//!   target, and an entry written after it (whose `parentId` names the row) continues from
//!   the target;
//! - `reset` rows: after one, an entry whose parent is not below the reset continues from
//!   the active leaf instead;
//! - entries with `appendMode: "side"`, which never become the leaf;
//! - entries whose parent is unknown, or is the last appended row while the leaf is
//!   elsewhere: they continue from the leaf.
//!
//! The port runs once per load over the entries' small fields (a typed parse that skips
//! the content) and rewrites the `parentId`s that the normalisation changes, so that
//! `tree`, `path` and `leaves` all see OpenClaw's tree.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;

use crate::session::entry::{EntryMeta, Owned, StrRef};

/// The fields of a row the navigation reads. `Option<Option<_>>`: absent, null, a value.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Row {
    #[serde(rename = "type")]
    ty: Option<Value>,
    id: Option<Value>,
    #[serde(deserialize_with = "present")]
    parent_id: Option<Value>,
    #[serde(deserialize_with = "present")]
    target_id: Option<Value>,
    #[serde(deserialize_with = "present")]
    append_parent_id: Option<Value>,
    #[serde(deserialize_with = "present")]
    append_mode: Option<Value>,
}

/// A field that is there, `null` included (serde reads a `null` `Option` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A reference: `None` is JSON `null`.
type Ref = Option<String>;

/// OpenClaw's `readNonBlankString`.
fn non_blank(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.trim().is_empty()).map(str::to_string)
}

/// `null` or a non-blank string; `Err` for anything else (JS `undefined`).
fn reference(v: &Value) -> Result<Ref, ()> {
    if v.is_null() {
        Ok(None)
    } else {
        non_blank(v).map(Some).ok_or(())
    }
}

const CANONICAL: &[&str] = &[
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "reset",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

impl Row {
    fn ty(&self) -> &str {
        self.ty.as_ref().and_then(Value::as_str).unwrap_or_default()
    }

    fn canonical(&self) -> bool {
        CANONICAL.contains(&self.ty())
    }

    fn side(&self) -> bool {
        self.append_mode.as_ref().and_then(Value::as_str) == Some("side")
    }

    fn leaf_control(&self) -> bool {
        self.ty() == "leaf" && self.tree_entry().is_some()
    }

    /// `parseSessionTranscriptTreeEntry`.
    fn tree_entry(&self) -> Option<Node> {
        if self.ty() == "session" {
            return None;
        }
        let parent = reference(self.parent_id.as_ref()?).ok()?;
        let id = non_blank(self.id.as_ref()?)?;
        if self.ty() == "leaf" {
            let target = reference(self.target_id.as_ref().unwrap_or(&Value::Bool(false))).ok()?;
            let append_parent = match &self.append_parent_id {
                None => target.clone(),
                Some(v) => reference(v).ok()?,
            };
            if self.append_mode.is_some() && !self.side() {
                return None;
            }
            return Some(Node { id, parent: target.clone(), leaf: Some(target), append_parent, side: self.side() });
        }
        let leaf = (self.canonical() && !self.side()).then(|| Some(id.clone()));
        Some(Node { id: id.clone(), parent, leaf, append_parent: Some(id), side: self.side() })
    }

    /// `parseParentlessCanonicalEntry`: a canonical row without `parentId` continues from
    /// the leaf.
    fn parentless(&self, leaf: &Ref) -> Option<Node> {
        if !self.canonical() || self.parent_id.is_some() {
            return None;
        }
        let id = non_blank(self.id.as_ref()?)?;
        let side = self.side();
        Some(Node {
            id: id.clone(),
            parent: leaf.clone(),
            leaf: (!side).then(|| Some(id.clone())),
            append_parent: Some(id),
            side,
        })
    }
}

struct Node {
    id: String,
    parent: Ref,
    /// `None`: the row does not move the leaf; `Some(r)`: the leaf becomes `r`.
    leaf: Option<Ref>,
    append_parent: Ref,
    side: bool,
}

/// What the reader keeps of a node.
struct Known {
    parent: Ref,
    leaf_control: bool,
}

/// Rewrites the entries' parents to OpenClaw's and returns its active leaf: `None` when
/// no row moved it explicitly (OpenClaw then reads the rows in file order, and pisces
/// keeps its own default, the last entry), `Some(None)` for OpenClaw's null leaf.
pub fn relink(data: &[u8], entries: &mut [EntryMeta], owned: &mut Owned) -> Option<Option<usize>> {
    let mut by_id: HashMap<String, Known> = HashMap::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut invalid: HashSet<String> = HashSet::new();
    let mut reset_below: HashSet<String> = HashSet::new();
    let mut latest_reset = false;
    let (mut leaf, mut append_parent): (Ref, Ref) = (None, None);
    let mut explicit_update = false;
    let mut parents: Vec<(usize, Ref)> = Vec::new();

    // `resolveCanonicalParentId`: a parent that is a leaf control stands for its target.
    let canonical_parent = |by_id: &HashMap<String, Known>, start: Ref| {
        let mut seen = HashSet::new();
        let mut cur = start;
        while let Some(id) = cur.clone() {
            if seen.contains(&id) {
                return Some(id);
            }
            match by_id.get(&id) {
                Some(k) if k.leaf_control => {
                    seen.insert(id);
                    cur = k.parent.clone();
                }
                _ => return Some(id),
            }
        }
        None
    };

    for (k, e) in entries.iter().enumerate() {
        let row: Row = serde_json::from_slice(&data[e.span()]).unwrap_or_default();
        let control = row.leaf_control();
        let mut explicit = row.tree_entry();
        if let Some(n) = explicit.as_mut() {
            // After a reset, a leaf control pointing outside the reset's subtree keeps the leaf.
            let outside = |r: &Ref| r.as_ref().is_none_or(|id| !reset_below.contains(id));
            if latest_reset && leaf.is_some() && control && n.leaf.as_ref().is_some_and(outside) {
                n.parent = leaf.clone();
                n.leaf = Some(leaf.clone());
                n.append_parent = leaf.clone();
            }
        }
        let known = |r: &Ref| r.as_ref().is_none_or(|id| by_id.contains_key(id) && !invalid.contains(id));
        if let Some(n) = explicit
            .as_ref()
            .filter(|n| control && n.leaf.as_ref().is_some_and(|l| !known(l) || !known(&n.append_parent)))
        {
            // An invalid control: kept where it was written, moving nothing.
            invalid.insert(n.id.clone());
            let raw = row.parent_id.as_ref().and_then(non_blank);
            by_id.insert(n.id.clone(), Known { parent: raw, leaf_control: true });
            index_of.insert(n.id.clone(), k);
            continue;
        }
        let from_explicit = explicit.is_some();
        let Some(mut node) = explicit.or_else(|| row.parentless(&leaf)) else { continue };
        if row.canonical() {
            let stale = from_explicit && node.parent.as_ref().is_some_and(|p| !by_id.contains_key(p)) && leaf.is_some();
            let outside_reset = node.parent.as_ref().is_none_or(|p| !reset_below.contains(p));
            // A main-line entry goes under the current leaf when a reset left its parent
            // behind, when its parent is unknown, or when it was appended at the old leaf.
            let moved = (latest_reset && outside_reset)
                || stale
                || (from_explicit && node.parent == append_parent && leaf != append_parent);
            let wanted = if !node.side && moved { leaf.clone() } else { node.parent.clone() };
            node.parent = canonical_parent(&by_id, wanted);
        }
        if row.ty() == "reset" {
            latest_reset = true;
            reset_below.clear();
            reset_below.insert(node.id.clone());
        } else if latest_reset && node.parent.as_ref().is_some_and(|p| reset_below.contains(p)) {
            reset_below.insert(node.id.clone());
        }
        append_parent = node.append_parent.clone();
        if let Some(l) = node.leaf.clone() {
            leaf = l;
            explicit_update |= from_explicit;
        }
        parents.push((k, node.parent.clone()));
        by_id.insert(node.id.clone(), Known { parent: node.parent, leaf_control: control });
        index_of.insert(node.id, k);
    }

    for (k, parent) in parents {
        let e = &mut entries[k];
        let written = e.parent_id.get(&data[e.span()], owned).map(str::to_string);
        if written != parent {
            e.parent_id = match parent {
                Some(p) => owned.push(&p),
                None => StrRef::NONE,
            };
        }
    }
    explicit_update.then(|| leaf.and_then(|id| index_of.get(&id).copied()))
}
