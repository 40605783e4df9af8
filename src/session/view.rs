//! The session tree as pi's `/tree` selector shows it (pi-reference §3.1-§3.2): which
//! entries are visible, in which order, how deep, with which connectors and gutters, on
//! the active path or not, and pi's one-line text for each. No terminal code: drawing the
//! rows (prefix strings, width, colors) is `render::tree`'s job.
//!
//! This is a port of pi 1.6.0's `SessionManager.getTree()` and `TreeList` (in
//! `modes/interactive/components/tree-selector.js`): `flattenTree`, `applyFilter`,
//! `recalculateVisualStructure`, `buildActivePath`, `findNearestVisibleIndex`,
//! `isFoldable`, `getEntryDisplayText`, `getSearchableText` and `formatToolCall`. pi keys
//! its maps by entry id; so do we, through the id's *node*: the entry pi's id map keeps for
//! that id (the later of two entries with one id; for entries without an id, the last of
//! them, as `Map.set(undefined, …)` keeps it). Quirks are kept on purpose: a node whose id
//! an earlier entry also had is attached twice (at both places), and the copy that
//! `recalculateVisualStructure` does not reach keeps the connectors `flattenTree` gave it;
//! members of a parent cycle are unreachable and not shown. Where pi would loop forever
//! (a parent cycle reached through a duplicated id) we stop at the repeated node instead.

use std::borrow::Cow;

use rustc_hash::FxHashMap as HashMap;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::entry::{EntryType, Role};
use super::js;
use super::tree::Session;

/// pi's filter modes (`treeFilterMode`, Ctrl+D/T/U/L/A).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Hides settings and bookkeeping entries (label, context_edit, custom, model_change,
    /// thinking_level_change, session_info).
    Default,
    /// `default` without tool results.
    NoTools,
    /// Only user messages (pi's `user-only`).
    UserOnly,
    /// Only labelled entries (pi's `labeled-only`).
    LabeledOnly,
    /// Everything but `usage` entries.
    All,
}

impl Filter {
    /// The name pi gives the filter (`treeFilterMode`).
    pub fn pi_name(self) -> &'static str {
        match self {
            Filter::Default => "default",
            Filter::NoTools => "no-tools",
            Filter::UserOnly => "user-only",
            Filter::LabeledOnly => "labeled-only",
            Filter::All => "all",
        }
    }
}

/// What to show.
#[derive(Clone, Debug)]
pub struct Options {
    pub filter: Filter,
    /// pi's search query (typed into the selector): lower-cased, split on whitespace; every
    /// token must occur in the entry's searchable text.
    pub search: Option<String>,
    /// Entries whose subtrees are folded (pi's ⊞).
    pub folds: Vec<u32>,
    /// The current leaf (its path is the active path); `None` is pi's null leaf.
    pub leaf: Option<u32>,
    /// The home directory pi shows as `~` in tool rows (`$HOME`, else `$USERPROFILE`).
    pub home: String,
}

/// A line of a tree's drawing left of the entry text (`│` under a branch that goes on).
#[derive(Clone, Copy, Debug)]
pub struct Gutter {
    /// The level (column / 3) the line is drawn at.
    pub position: u32,
    /// `│` when true, spaces when false (below the last child).
    pub show: bool,
    /// The gutter before this one (towards the root), `NO_GUTTER` at the end.
    pub next: u32,
}

pub const NO_GUTTER: u32 = u32::MAX;

/// How a piece of a row's text looks in pi's theme (`render::tree` maps these to colors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// `user: ` (pi: accent).
    User,
    /// `assistant: ` (pi: success).
    Assistant,
    /// Tool rows (pi: muted).
    Tool,
    /// `(aborted)`, `(no content)` (pi: muted).
    Muted,
    /// An assistant's error message (pi: error).
    Error,
    /// `[system]`, `[bash]: …`, settings rows (pi: dim).
    Dim,
    /// `[compaction: …]` and `[branch summary]: ` (pi: borderAccent, warning).
    Summary,
    /// `[<customType>]: ` (pi: customMessageLabel).
    Custom,
}

/// pi's one-line text of an entry: a head (`user: `, `[read: …]`) and a body.
#[derive(Clone, Debug)]
pub struct Text {
    pub head: Cow<'static, str>,
    pub head_tone: Tone,
    pub body: String,
    pub body_tone: Tone,
}

impl Text {
    fn new(head: impl Into<Cow<'static, str>>, head_tone: Tone, body: String, body_tone: Tone) -> Text {
        Text { head: head.into(), head_tone, body, body_tone }
    }

    fn whole(text: String, tone: Tone) -> Text {
        Text::new(Cow::Owned(text), tone, String::new(), Tone::Plain)
    }

    /// Head and body as one string.
    pub fn to_plain(&self) -> String {
        format!("{}{}", self.head, self.body)
    }
}

/// One visible row.
#[derive(Clone, Debug)]
pub struct Row<'s> {
    /// The entry shown (index into `Session::entries`): the node pi's id map keeps.
    pub entry: u32,
    /// pi's `indent` (before the `multipleRoots` shift, see [`TreeView::display_indent`]).
    pub indent: u32,
    pub show_connector: bool,
    pub is_last: bool,
    pub virtual_root_child: bool,
    /// Head of this row's gutter list in [`TreeView::gutters`].
    pub gutters: u32,
    /// On the path from the root to the current leaf (pi's `•`).
    pub active: bool,
    pub folded: bool,
    /// pi's `isFoldable`: has visible children and is a visible root or the first entry of
    /// a branch (`⊟` on its connector).
    pub foldable: bool,
    /// The nearest visible ancestor (an entry index), as pi's `visibleParentMap`.
    pub parent: Option<u32>,
    /// How many branch points (visible entries with more than one visible child) lie
    /// between the visible root and this row: its nesting level in the drawing.
    pub depth: u32,
    pub label: Option<&'s str>,
    pub text: Text,
}

/// The visible tree, ready to draw.
#[derive(Debug)]
pub struct TreeView<'s> {
    pub rows: Vec<Row<'s>>,
    /// More than one visible root: roots are drawn flush left without connectors.
    pub multiple_roots: bool,
    pub gutters: Vec<Gutter>,
    /// The row pi's cursor starts on: the leaf, else its nearest visible ancestor, else
    /// the last row. Only pi's sideways panning depends on it.
    pub selected: Option<usize>,
    /// Visible children of each visible node (entry index), in row order.
    children: Children,
    /// Visible roots, in row order.
    pub roots: Vec<u32>,
}

impl TreeView<'_> {
    /// pi's `displayIndent`: with several roots every level moves one to the left.
    pub fn display_indent(&self, row: &Row) -> u32 {
        if self.multiple_roots {
            row.indent.saturating_sub(1)
        } else {
            row.indent
        }
    }

    /// The visible children of a visible entry.
    pub fn children_of(&self, entry: u32) -> &[u32] {
        self.children.of(entry)
    }

    /// Whether `--compact` may fold this row into a `… N entries …` line: a row inside a
    /// single-child chain (one visible child, its parent has only it), not a branch's first
    /// row, not a leaf, not labelled, not folded, not the selected row.
    pub fn in_linear_run(&self, index: usize) -> bool {
        let row = &self.rows[index];
        let Some(parent) = row.parent else { return false };
        self.children_of(row.entry).len() == 1
            && self.children_of(parent).len() == 1
            && row.label.is_none()
            && !row.folded
            && self.selected != Some(index)
    }
}

/// Child lists of all entries in one array (`kids[offsets[i]..offsets[i+1]]`).
#[derive(Debug)]
struct Children {
    offsets: Vec<u32>,
    kids: Vec<u32>,
}

impl Children {
    fn of(&self, node: u32) -> &[u32] {
        &self.kids[self.offsets[node as usize] as usize..self.offsets[node as usize + 1] as usize]
    }
}

/// Lines that looked whole to the index but fail to parse: read the file again without them.
#[derive(Debug)]
pub struct Damaged(pub Vec<u32>);

/// Builds the visible tree as pi's `/tree` selector shows it.
pub fn build<'s>(session: &'s Session<'_>, opts: &Options) -> Result<TreeView<'s>, Damaged> {
    let n = session.entries.len();
    let need_search = opts.search.as_deref().is_some_and(|q| !q.trim().is_empty());
    let infos = parse_all(session, opts.filter, need_search)?;
    let tree = PiTree::new(session, &infos);

    // The node pi's `currentLeafId` names (`None`: no leaf).
    let leaf_key: Option<Option<&str>> = opts.leaf.map(|l| session.id(l));
    let leaf_node: Option<u32> = leaf_key.and_then(|k| tree.node_by_key(k));

    let mut flat = Flattener::new(&tree, leaf_node, session);
    flat.run();
    let Flattener { flats, mut gutters, reachable, .. } = flat;

    // toolCallMap: every assistant's tool calls, in flatten order (a later call with the
    // same id wins).
    let call_count = flats
        .iter()
        .map(|f| match &infos[f.node as usize] {
            Info::Assistant { calls, .. } => calls.len(),
            _ => 0,
        })
        .sum();
    let mut tool_calls: HashMap<&str, &ToolCall> = HashMap::with_capacity_and_hasher(call_count, Default::default());
    for f in &flats {
        if let Info::Assistant { calls, .. } = &infos[f.node as usize] {
            for c in calls.iter() {
                tool_calls.insert(c.id.as_ref(), c);
            }
        }
    }

    // applyFilter
    let tokens: Vec<String> = match &opts.search {
        Some(q) => q.to_lowercase().split_whitespace().map(str::to_string).collect(),
        None => Vec::new(),
    };
    // pi's `labelsById.get(entry.id)`, by node.
    let mut labels: HashMap<u32, &str> = HashMap::default();
    for (id, l) in session.labels() {
        if let Some(node) = session.get(id) {
            labels.insert(node, l.text.as_str());
        }
    }
    let label_of = |node: u32| -> Option<&str> {
        if labels.is_empty() {
            None
        } else {
            labels.get(&node).copied()
        }
    };
    let mut filtered: Vec<usize> = Vec::new();
    for (k, f) in flats.iter().enumerate() {
        let node = f.node;
        let e = &session.entries[node as usize];
        if e.kind == EntryType::Usage {
            continue;
        }
        let is_leaf = leaf_node == Some(node);
        if e.kind == EntryType::Message && e.role == Role::Assistant && !is_leaf {
            if let Info::Assistant { has_text, shows_anyway, .. } = &infos[node as usize] {
                if !has_text && !shows_anyway {
                    continue;
                }
            }
        }
        let settings = matches!(
            e.kind,
            EntryType::Label
                | EntryType::ContextEdit
                | EntryType::Custom
                | EntryType::ModelChange
                | EntryType::ThinkingLevelChange
                | EntryType::SessionInfo
        );
        let passes = match opts.filter {
            Filter::UserOnly => e.kind == EntryType::Message && e.role == Role::User,
            Filter::NoTools => !settings && (e.kind != EntryType::Message || e.role != Role::ToolResult),
            Filter::LabeledOnly => label_of(node).is_some(),
            Filter::All => true,
            Filter::Default => !settings,
        };
        if !passes {
            continue;
        }
        if !tokens.is_empty() {
            let text = searchable_text(session, node, &infos[node as usize], label_of(node)).to_lowercase();
            if !tokens.iter().all(|t| text.contains(t.as_str())) {
                continue;
            }
        }
        filtered.push(k);
    }

    // Folded subtrees: pi walks the flat list (pre-order) by `parentId`.
    let mut folded = vec![false; n];
    for &f in &opts.folds {
        if let Some(node) = tree.node_by_key(session.id(f)) {
            folded[node as usize] = true;
        }
    }
    if !opts.folds.is_empty() {
        let mut skip = vec![false; n];
        for f in &flats {
            if let Some(p) = tree.parent_node_strict(f.node) {
                if folded[p as usize] || skip[p as usize] {
                    skip[f.node as usize] = true;
                }
            }
        }
        filtered.retain(|&k| !skip[flats[k].node as usize]);
    }

    // recalculateVisualStructure
    let mut visible = vec![false; n];
    for &k in &filtered {
        visible[flats[k].node as usize] = true;
    }
    let vparent = nearest_visible_ancestors(&tree, &flats, &filtered, &visible, &reachable);
    let mut roots: Vec<u32> = Vec::new();
    let mut last_filtered = vec![u32::MAX; n];
    let mut children = Children { offsets: vec![0; n + 1], kids: Vec::new() };
    for &k in &filtered {
        let node = flats[k].node;
        match vparent[node as usize] {
            Some(p) => children.offsets[p as usize + 1] += 1,
            None => roots.push(node),
        }
        last_filtered[node as usize] = k as u32;
    }
    for i in 0..n {
        children.offsets[i + 1] += children.offsets[i];
    }
    children.kids = vec![0; children.offsets[n] as usize];
    {
        let mut fill = children.offsets.clone();
        for &k in &filtered {
            let node = flats[k].node;
            if let Some(p) = vparent[node as usize] {
                children.kids[fill[p as usize] as usize] = node;
                fill[p as usize] += 1;
            }
        }
    }
    let multiple_roots = roots.len() > 1;
    let mut visual: Vec<Visual> = flats.iter().map(|f| f.visual).collect();
    {
        let mut stack: Vec<(u32, Visual, bool, u32)> = Vec::new();
        for (i, &r) in roots.iter().enumerate().rev() {
            let v = Visual {
                indent: u32::from(multiple_roots),
                show_connector: multiple_roots,
                is_last: i == roots.len() - 1,
                gutters: NO_GUTTER,
                virtual_root_child: multiple_roots,
            };
            stack.push((r, v, multiple_roots, 0));
        }
        // Cycle guard: pi loops forever when a parent cycle is reachable (only possible
        // through a duplicated id); a node already on the current path is not entered again.
        let mut on_path = vec![false; n];
        let mut path: Vec<u32> = Vec::new();
        while let Some((node, v, just_branched, depth)) = stack.pop() {
            while path.len() > depth as usize {
                on_path[path.pop().expect("non-empty") as usize] = false;
            }
            let k = last_filtered[node as usize];
            if k == u32::MAX || on_path[node as usize] {
                continue;
            }
            on_path[node as usize] = true;
            path.push(node);
            visual[k as usize] = v;
            let kids = children.of(node);
            let child_gutters = child_gutters(&mut gutters, &v, multiple_roots);
            let many = kids.len() > 1;
            let child_indent = child_indent(v.indent, many, just_branched);
            for (i, &c) in kids.iter().enumerate().rev() {
                let cv = Visual {
                    indent: child_indent,
                    show_connector: many,
                    is_last: i == kids.len() - 1,
                    gutters: child_gutters,
                    virtual_root_child: false,
                };
                stack.push((c, cv, many, depth + 1));
            }
        }
    }

    // buildActivePath: from the leaf's id up through `parentId`, over the flat list's map.
    let mut active = vec![false; n];
    if let Some(Some(leaf_id)) = leaf_key {
        if !leaf_id.is_empty() {
            let mut cur = session.get(leaf_id);
            let mut steps = 0usize;
            while let Some(c) = cur {
                if active[c as usize] || steps > n {
                    break;
                }
                steps += 1;
                active[c as usize] = true;
                if !reachable[c as usize] {
                    break;
                }
                cur = tree.parent_node_strict(c);
            }
        }
    }

    // findNearestVisibleIndex(leaf): the leaf's row, else its nearest visible ancestor's,
    // else the last row.
    let selected = if filtered.is_empty() {
        None
    } else {
        let mut index_of = vec![u32::MAX; n];
        for (i, &k) in filtered.iter().enumerate() {
            index_of[flats[k].node as usize] = i as u32;
        }
        let mut found = None;
        if leaf_key.is_some() {
            let mut cur = leaf_node;
            let mut steps = 0usize;
            while let Some(c) = cur {
                if index_of[c as usize] != u32::MAX {
                    found = Some(index_of[c as usize] as usize);
                    break;
                }
                if !reachable[c as usize] || steps > n {
                    break;
                }
                steps += 1;
                cur = tree.parent_node_strict(c);
            }
        }
        Some(found.unwrap_or(filtered.len() - 1))
    };

    // Nesting levels (branch points above each row), in row order (parents come first).
    let mut level = vec![0u32; n];
    let home = opts.home.as_str();
    let mut rows = Vec::with_capacity(filtered.len());
    for &k in &filtered {
        let f = &flats[k];
        let v = visual[k];
        let node = f.node;
        let parent = vparent[node as usize];
        let depth = match parent {
            Some(p) => level[p as usize] + u32::from(children.of(p).len() > 1),
            None => 0,
        };
        level[node as usize] = depth;
        let has_children = !children.of(node).is_empty();
        let foldable = has_children
            && match parent {
                None => true,
                Some(p) => children.of(p).len() > 1,
            };
        rows.push(Row {
            entry: node,
            indent: v.indent,
            show_connector: v.show_connector,
            is_last: v.is_last,
            virtual_root_child: v.virtual_root_child,
            gutters: v.gutters,
            active: active[node as usize],
            folded: folded[node as usize],
            foldable,
            parent,
            depth,
            label: label_of(node),
            text: Text::whole(String::new(), Tone::Plain),
        });
    }
    // The texts, on two threads for large trees (half a million rows take a while).
    let fill = |rows: &mut [Row]| {
        for r in rows {
            r.text = display_text(session, r.entry, &infos[r.entry as usize], &tool_calls, home);
        }
    };
    if rows.len() >= 50_000 {
        let mid = rows.len() / 2;
        let (a, b) = rows.split_at_mut(mid);
        std::thread::scope(|t| {
            t.spawn(|| fill(b));
            fill(a);
        });
    } else {
        fill(&mut rows);
    }
    Ok(TreeView { rows, multiple_roots, gutters, selected, children, roots })
}

/// The entries to fold so that only `depth` branch levels stay open: the first entry of
/// every branch one level deeper (it stays visible, with pi's ⊞, its subtree hidden).
pub fn folds_for_depth(view: &TreeView, depth: u32) -> Vec<u32> {
    view.rows.iter().filter(|r| r.depth == depth + 1 && r.foldable && r.parent.is_some()).map(|r| r.entry).collect()
}

/// The entries to fold so that only the branch through `target` stays open: every other
/// branch off the target's ancestors (and every other root) is folded to its first entry;
/// the target's own subtree stays open.
pub fn folds_around(session: &Session, view: &TreeView, target: u32) -> Vec<u32> {
    let mut on_line = rustc_hash::FxHashSet::default();
    // The target's ancestors as the view links them (its row may be hidden by the filter:
    // then start from its nearest visible ancestor).
    let mut cur = Some(target);
    let visible: rustc_hash::FxHashSet<u32> = view.rows.iter().map(|r| r.entry).collect();
    while let Some(c) = cur {
        if visible.contains(&c) {
            break;
        }
        cur = session.parent(c);
    }
    let parent_of: HashMap<u32, Option<u32>> = view.rows.iter().map(|r| (r.entry, r.parent)).collect();
    let mut guard = 0;
    while let Some(c) = cur {
        if !on_line.insert(c) || guard > view.rows.len() {
            break;
        }
        guard += 1;
        cur = parent_of.get(&c).copied().flatten();
    }
    let mut folds = Vec::new();
    for r in &view.rows {
        if on_line.contains(&r.entry) || !r.foldable {
            continue;
        }
        let off_line_branch = match r.parent {
            None => true,
            Some(p) => on_line.contains(&p) && view.children_of(p).len() > 1,
        };
        if off_line_branch {
            folds.push(r.entry);
        }
    }
    folds
}

// ---------------------------------------------------------------------------------------
// getTree
// ---------------------------------------------------------------------------------------

/// pi's `getTree()` over node indices: `roots` and `children` hold the node of each entry
/// (an entry whose id a later entry reuses is represented by that later entry, attached at
/// both places).
struct PiTree<'s, 'a> {
    session: &'s Session<'a>,
    /// The last entry without an id (pi's `nodeMap.get(undefined)`).
    last_idless: Option<u32>,
    roots: Vec<u32>,
    offsets: Vec<u32>,
    kids: Vec<u32>,
}

impl<'s, 'a> PiTree<'s, 'a> {
    fn new(session: &'s Session<'a>, infos: &[Info]) -> Self {
        let n = session.entries.len();
        let last_idless = (0..n as u32).rev().find(|&i| session.id(i).is_none());
        let mut tree = PiTree { session, last_idless, roots: Vec::new(), offsets: vec![0; n + 1], kids: Vec::new() };
        // Where each entry is attached: None = a root. The index resolved parents the way
        // getTree does (a self-parent or a missing parent is a root), except that it also
        // cuts parent cycles (pi leaves them unreachable) and does not follow an undefined
        // `parentId` to the id-less node: those entries take the slow path.
        let mut attach: Vec<(u32, Option<u32>)> = Vec::with_capacity(n);
        for i in 0..n as u32 {
            let e = &session.entries[i as usize];
            let node = if e.shadowed || e.id.is_none() {
                match tree.node_by_key(session.id(i)) {
                    Some(node) => node,
                    None => continue,
                }
            } else {
                i
            };
            let parent = match e.parent() {
                Some(p) if !session.duplicate_ids => Some(p),
                _ => {
                    let own = session.id(i);
                    match session.parent_id(i) {
                        // `parentId === entry.id`: a root.
                        Some(p) if Some(p) == own => None,
                        Some(p) => session.get(p),
                        // `parentId` missing (undefined) looks up the id-less node; null is a root.
                        None if infos[i as usize].parent_undefined() && own.is_some() => last_idless,
                        None => None,
                    }
                }
            };
            attach.push((node, parent));
        }
        for &(_, p) in &attach {
            if let Some(p) = p {
                tree.offsets[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            tree.offsets[i + 1] += tree.offsets[i];
        }
        let mut fill = tree.offsets.clone();
        tree.kids = vec![0; tree.offsets[n] as usize];
        for &(node, p) in &attach {
            match p {
                Some(p) => {
                    tree.kids[fill[p as usize] as usize] = node;
                    fill[p as usize] += 1;
                }
                None => tree.roots.push(node),
            }
        }
        // Children by `Date.parse(timestamp)`, a stable sort as V8's.
        for p in 0..n {
            let slice = &mut tree.kids[tree.offsets[p] as usize..tree.offsets[p + 1] as usize];
            if slice.len() > 1 {
                // Only siblings need their timestamps (read from their lines).
                let times: Vec<Option<f64>> = slice.iter().map(|&c| session.time(c)).collect();
                let mut order: Vec<usize> = (0..slice.len()).collect();
                js::v8_sort_by_key(&mut order, |k| times[k]);
                let sorted: Vec<u32> = order.iter().map(|&k| slice[k]).collect();
                slice.copy_from_slice(&sorted);
            }
        }
        tree
    }

    /// The node pi's id map holds for an id (`None`: undefined).
    fn node_by_key(&self, key: Option<&str>) -> Option<u32> {
        match key {
            Some(id) => self.session.get(id),
            None => self.last_idless,
        }
    }

    fn children(&self, node: u32) -> &[u32] {
        &self.kids[self.offsets[node as usize] as usize..self.offsets[node as usize + 1] as usize]
    }

    /// `entryMap.get(entry.parentId ?? null)`: the node the entry's `parentId` names.
    fn parent_node_strict(&self, node: u32) -> Option<u32> {
        // The index resolved the same lookup, except for self-parents and the entry where
        // it cut a cycle (both roots there): only those are looked up again.
        match self.session.parent(node) {
            Some(p) => Some(p),
            None => self.session.parent_id(node).and_then(|p| self.session.get(p)),
        }
    }
}

// ---------------------------------------------------------------------------------------
// flattenTree
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Visual {
    indent: u32,
    show_connector: bool,
    is_last: bool,
    gutters: u32,
    virtual_root_child: bool,
}

struct Flat {
    node: u32,
    visual: Visual,
}

/// pi's `flattenTree`: the whole tree in pre-order, the branch holding the leaf first at
/// every level, with the indent and gutters each node would have if everything were visible.
struct Flattener<'t, 's, 'a> {
    tree: &'t PiTree<'s, 'a>,
    leaf: Option<u32>,
    flats: Vec<Flat>,
    gutters: Vec<Gutter>,
    /// Nodes in the flat list (pi's `entryMap` has them).
    reachable: Vec<bool>,
}

impl<'t, 's, 'a> Flattener<'t, 's, 'a> {
    fn new(tree: &'t PiTree<'s, 'a>, leaf: Option<u32>, session: &Session) -> Self {
        Flattener {
            tree,
            leaf,
            flats: Vec::with_capacity(session.entries.len()),
            gutters: Vec::new(),
            reachable: vec![false; session.entries.len()],
        }
    }

    fn run(&mut self) {
        let n = self.reachable.len();
        let tree = self.tree;
        // containsActive, by an iterative post-order over the pre-order list.
        let mut contains_active = vec![false; n];
        {
            let mut order: Vec<u32> = Vec::with_capacity(n);
            let mut stack: Vec<(u32, u32)> = tree.roots.iter().map(|&r| (r, 0)).collect();
            let mut on_path = vec![false; n];
            let mut path: Vec<u32> = Vec::new();
            while let Some((node, depth)) = stack.pop() {
                while path.len() > depth as usize {
                    on_path[path.pop().expect("non-empty") as usize] = false;
                }
                if on_path[node as usize] {
                    continue;
                }
                on_path[node as usize] = true;
                path.push(node);
                order.push(node);
                for &c in tree.children(node).iter().rev() {
                    stack.push((c, depth + 1));
                }
            }
            for &node in order.iter().rev() {
                let has = self.leaf == Some(node) || tree.children(node).iter().any(|&c| contains_active[c as usize]);
                contains_active[node as usize] = has;
            }
        }

        let roots = &tree.roots;
        let multiple_roots = roots.len() > 1;
        // `[...roots].sort(by containsActive)`: a stable sort, active first.
        let mut ordered: Vec<u32> = roots.iter().copied().filter(|&r| contains_active[r as usize]).collect();
        ordered.extend(roots.iter().copied().filter(|&r| !contains_active[r as usize]));
        let mut stack: Vec<(u32, Visual, bool, u32)> = Vec::new();
        for (i, &r) in ordered.iter().enumerate().rev() {
            let v = Visual {
                indent: u32::from(multiple_roots),
                show_connector: multiple_roots,
                is_last: i == ordered.len() - 1,
                gutters: NO_GUTTER,
                virtual_root_child: multiple_roots,
            };
            stack.push((r, v, multiple_roots, 0));
        }
        let mut on_path = vec![false; n];
        let mut path: Vec<u32> = Vec::new();
        let mut kids: Vec<u32> = Vec::new();
        while let Some((node, v, just_branched, depth)) = stack.pop() {
            while path.len() > depth as usize {
                on_path[path.pop().expect("non-empty") as usize] = false;
            }
            if on_path[node as usize] {
                continue;
            }
            on_path[node as usize] = true;
            path.push(node);
            self.reachable[node as usize] = true;
            self.flats.push(Flat { node, visual: v });
            let children = tree.children(node);
            let many = children.len() > 1;
            kids.clear();
            kids.extend(children.iter().copied().filter(|&c| contains_active[c as usize]));
            kids.extend(children.iter().copied().filter(|&c| !contains_active[c as usize]));
            let child_indent = child_indent(v.indent, many, just_branched);
            let child_gutters = child_gutters(&mut self.gutters, &v, multiple_roots);
            for (i, &c) in kids.iter().enumerate().rev() {
                let cv = Visual {
                    indent: child_indent,
                    show_connector: many,
                    is_last: i == kids.len() - 1,
                    gutters: child_gutters,
                    virtual_root_child: false,
                };
                stack.push((c, cv, many, depth + 1));
            }
        }
    }
}

/// pi: a branch point's children move one level right, and so does the first generation
/// after a branch; a single-child chain stays flat.
fn child_indent(indent: u32, many: bool, just_branched: bool) -> u32 {
    if many || (just_branched && indent > 0) {
        indent + 1
    } else {
        indent
    }
}

/// pi: a node whose connector is drawn leaves a gutter (`│` unless it is the last child)
/// at its connector's column for all its descendants.
fn child_gutters(gutters: &mut Vec<Gutter>, v: &Visual, multiple_roots: bool) -> u32 {
    // pi: `connectorDisplayed = showConnector && !isVirtualRootChild`.
    if !v.show_connector || v.virtual_root_child {
        return v.gutters;
    }
    let display_indent = if multiple_roots { v.indent.saturating_sub(1) } else { v.indent };
    let position = display_indent.saturating_sub(1);
    gutters.push(Gutter { position, show: !v.is_last, next: v.gutters });
    (gutters.len() - 1) as u32
}

/// pi's `findVisibleAncestor` for every visible node, memoized (pi walks up from each).
fn nearest_visible_ancestors(
    tree: &PiTree,
    flats: &[Flat],
    filtered: &[usize],
    visible: &[bool],
    reachable: &[bool],
) -> Vec<Option<u32>> {
    let n = visible.len();
    // above[x] for a reachable node x: the nearest visible strict ancestor (walking the
    // `parentId`s as pi does); computed with path compression.
    const UNKNOWN: u32 = u32::MAX;
    const NONE: u32 = u32::MAX - 1;
    let mut above = vec![UNKNOWN; n];
    let mut walk: Vec<u32> = Vec::new();
    let mut on_walk = vec![false; n];
    let mut resolve = |start: u32, above: &mut Vec<u32>| -> u32 {
        walk.clear();
        let mut cur = start;
        let result = loop {
            if above[cur as usize] != UNKNOWN {
                break above[cur as usize];
            }
            if on_walk[cur as usize] {
                break NONE; // a cycle: pi would loop forever
            }
            on_walk[cur as usize] = true;
            walk.push(cur);
            match tree.parent_node_strict(cur) {
                None => break NONE,
                Some(p) if visible[p as usize] => break p,
                Some(p) if !reachable[p as usize] => break NONE,
                Some(p) => cur = p,
            }
        };
        // Every node on the walk has the same nearest visible ancestor: the walk passed
        // only through hidden nodes.
        for &w in &walk {
            above[w as usize] = result;
            on_walk[w as usize] = false;
        }
        result
    };
    let mut out = vec![None; n];
    for &k in filtered {
        let node = flats[k].node;
        let r = resolve(node, &mut above);
        out[node as usize] = (r != NONE).then_some(r);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Text per entry
// ---------------------------------------------------------------------------------------

/// One `toolCall` block of an assistant message.
#[derive(Debug)]
pub struct ToolCall<'a> {
    pub id: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub arguments: Option<&'a RawValue>,
}

/// What the tree needs from one entry's line.
#[derive(Debug, Default)]
enum Info<'a> {
    #[default]
    Nothing,
    /// A message: user, toolResult (search), system and other roles (search).
    Message {
        role: Option<Cow<'a, str>>,
        /// pi's `extractContent`: the text blocks joined, first 200 UTF-16 units.
        text: Option<Box<str>>,
        tool_call_id: Option<Cow<'a, str>>,
        tool_name: Option<Value>,
        command: Option<Value>,
        undefined_parent: bool,
    },
    Assistant {
        text: Box<str>,
        has_text: bool,
        /// stopReason is set and neither `stop` nor `toolUse` (an error, an abort).
        shows_anyway: bool,
        aborted: bool,
        error: Option<Box<str>>,
        calls: Box<[ToolCall<'a>]>,
        undefined_parent: bool,
    },
    /// Other entry types: the fields pi's text uses, by name.
    Fields { fields: Vec<(&'static str, Value)>, undefined_parent: bool },
}

impl Info<'_> {
    fn parent_undefined(&self) -> bool {
        match self {
            Info::Nothing => true,
            Info::Message { undefined_parent, .. }
            | Info::Assistant { undefined_parent, .. }
            | Info::Fields { undefined_parent, .. } => *undefined_parent,
        }
    }

    fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Info::Fields { fields, .. } => fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// The fields each entry type's text needs (besides `message`).
fn fields_for(kind: EntryType) -> &'static [&'static str] {
    match kind {
        EntryType::CustomMessage => &["customType", "content"],
        EntryType::Compaction => &["tokensBefore"],
        EntryType::BranchSummary => &["summary"],
        EntryType::ModelChange => &["modelId"],
        EntryType::ThinkingLevelChange => &["thinkingLevel"],
        EntryType::Custom => &["customType"],
        EntryType::ContextEdit => &["replacement", "targetId"],
        EntryType::Label => &["label"],
        EntryType::SessionInfo => &["name"],
        _ => &[],
    }
}

/// pi's `normalize`: tabs and newlines to spaces, trimmed.
fn normalize(s: &str) -> String {
    let t = trim_js(s);
    if t.contains(['\n', '\t']) {
        t.replace(['\n', '\t'], " ")
    } else {
        t.to_string()
    }
}

fn trim_js(s: &str) -> &str {
    s.trim_matches(js::is_js_whitespace)
}

/// `s.slice(0, n)` in UTF-16 units (a cut surrogate pair shows as U+FFFD, as Node prints it).
fn slice_utf16(s: &str, n: usize) -> Cow<'_, str> {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if units + w > n {
            if units < n {
                return Cow::Owned(format!("{}\u{fffd}", &s[..i]));
            }
            return Cow::Borrowed(&s[..i]);
        }
        units += w;
    }
    Cow::Borrowed(s)
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

fn js_str(v: Option<&Value>) -> String {
    js::to_js_string(v)
}

/// pi's `getEntryDisplayText`.
fn display_text(session: &Session, node: u32, info: &Info, calls: &HashMap<&str, &ToolCall>, home: &str) -> Text {
    let e = &session.entries[node as usize];
    let f = |k| info.field(k);
    match e.kind {
        EntryType::Message => match info {
            Info::Assistant { text, aborted, error, .. } => {
                let t = normalize(text);
                if !t.is_empty() {
                    Text::new("assistant: ", Tone::Assistant, t, Tone::Plain)
                } else if *aborted {
                    Text::new("assistant: ", Tone::Assistant, "(aborted)".into(), Tone::Muted)
                } else if let Some(err) = error {
                    Text::new(
                        "assistant: ",
                        Tone::Assistant,
                        slice_utf16(&normalize(err), 80).into_owned(),
                        Tone::Error,
                    )
                } else {
                    Text::new("assistant: ", Tone::Assistant, "(no content)".into(), Tone::Muted)
                }
            }
            Info::Message { role, text, tool_call_id, tool_name, command, .. } => {
                let role = role.as_deref().unwrap_or("undefined");
                match role {
                    "user" => Text::new("user: ", Tone::User, normalize(text.as_deref().unwrap_or("")), Tone::Plain),
                    "toolResult" => {
                        let call = tool_call_id.as_deref().filter(|id| !id.is_empty()).and_then(|id| calls.get(id));
                        match call {
                            Some(c) => Text::whole(format_tool_call(&c.name, c.arguments, home), Tone::Tool),
                            None => {
                                let name = match tool_name {
                                    None | Some(Value::Null) => "tool".to_string(),
                                    Some(v) => js_str(Some(v)),
                                };
                                Text::whole(format!("[{name}]"), Tone::Tool)
                            }
                        }
                    }
                    "bashExecution" => {
                        let cmd = match command {
                            None | Some(Value::Null) => String::new(),
                            Some(v) => js_str(Some(v)),
                        };
                        Text::whole(format!("[bash]: {}", normalize(&cmd)), Tone::Dim)
                    }
                    other => Text::whole(format!("[{other}]"), Tone::Dim),
                }
            }
            _ => Text::whole("[undefined]".into(), Tone::Dim),
        },
        EntryType::CustomMessage => {
            let content = custom_content(f("content"));
            Text::new(
                Cow::Owned(format!("[{}]: ", js_str(f("customType")))),
                Tone::Custom,
                normalize(&content),
                Tone::Plain,
            )
        }
        EntryType::Compaction => {
            let tokens = js_round(js_to_number(f("tokensBefore")) / 1000.0);
            Text::whole(format!("[compaction: {}k tokens]", js::number_string(tokens)), Tone::Summary)
        }
        EntryType::BranchSummary => {
            Text::new("[branch summary]: ", Tone::Summary, normalize(&js_str(f("summary"))), Tone::Plain)
        }
        EntryType::ModelChange => Text::whole(format!("[model: {}]", js_str(f("modelId"))), Tone::Dim),
        EntryType::ThinkingLevelChange => Text::whole(format!("[thinking: {}]", js_str(f("thinkingLevel"))), Tone::Dim),
        EntryType::Custom => Text::whole(format!("[custom: {}]", js_str(f("customType"))), Tone::Dim),
        EntryType::ContextEdit => {
            let what = if matches!(f("replacement"), Some(Value::Null)) { "omit" } else { "replace" };
            Text::whole(format!("[context {what}: {}]", js_str(f("targetId"))), Tone::Dim)
        }
        EntryType::Label => {
            let label = match f("label") {
                None | Some(Value::Null) => "(cleared)".to_string(),
                v => js_str(v),
            };
            Text::whole(format!("[label: {label}]"), Tone::Dim)
        }
        EntryType::SessionInfo => {
            let name = if js::truthy(f("name")) { js_str(f("name")) } else { "empty".into() };
            Text::whole(format!("[title: {name}]"), Tone::Dim)
        }
        _ => Text::whole(String::new(), Tone::Plain),
    }
}

/// A custom_message's text as pi shows it: a string, or the text blocks joined.
fn custom_content(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .map(|c| match c.get("text") {
                None | Some(Value::Null) => String::new(),
                t => js_str(t),
            })
            .collect(),
        _ => String::new(),
    }
}

/// pi's `getSearchableText`.
fn searchable_text(session: &Session, node: u32, info: &Info, label: Option<&str>) -> String {
    let e = &session.entries[node as usize];
    let mut parts: Vec<String> = Vec::new();
    if let Some(l) = label {
        parts.push(l.to_string());
    }
    let f = |k| info.field(k);
    match e.kind {
        EntryType::Message => match info {
            Info::Assistant { text, .. } => {
                parts.push("assistant".into());
                if !text.is_empty() {
                    parts.push(text.to_string());
                }
            }
            Info::Message { role, text, command, .. } => {
                let role = role.as_deref().unwrap_or("undefined");
                parts.push(role.to_string());
                if let Some(t) = text {
                    parts.push(t.to_string());
                }
                if role == "bashExecution" && js::truthy(command.as_ref()) {
                    parts.push(js_str(command.as_ref()));
                }
            }
            _ => {}
        },
        EntryType::CustomMessage => {
            parts.push(js_str(f("customType")));
            match f("content") {
                Some(Value::String(s)) => parts.push(s.clone()),
                other => parts.push(slice_utf16(&custom_content_full(other), 200).into_owned()),
            }
        }
        EntryType::Compaction => parts.push("compaction".into()),
        EntryType::BranchSummary => {
            parts.push("branch summary".into());
            parts.push(js_str(f("summary")));
        }
        EntryType::SessionInfo => {
            parts.push("title".into());
            if js::truthy(f("name")) {
                parts.push(js_str(f("name")));
            }
        }
        EntryType::ModelChange => {
            parts.push("model".into());
            parts.push(js_str(f("modelId")));
        }
        EntryType::ThinkingLevelChange => {
            parts.push("thinking".into());
            parts.push(js_str(f("thinkingLevel")));
        }
        EntryType::Custom => {
            parts.push("custom".into());
            parts.push(js_str(f("customType")));
        }
        EntryType::ContextEdit => {
            parts.push("context edit".into());
            parts.push(if matches!(f("replacement"), Some(Value::Null)) { "omit" } else { "replace" }.into());
            parts.push(js_str(f("targetId")));
        }
        EntryType::Label => {
            parts.push("label".into());
            parts.push(match f("label") {
                None | Some(Value::Null) => String::new(),
                v => js_str(v),
            });
        }
        _ => {}
    }
    parts.join(" ")
}

/// pi's `extractFullContent` (text blocks appended with `+=`).
fn custom_content_full(v: Option<&Value>) -> String {
    let mut out = String::new();
    if let Some(Value::Array(items)) = v {
        for b in items {
            if b.get("type").and_then(Value::as_str) == Some("text") {
                out.push_str(&js_str(b.get("text")));
            }
        }
    }
    out
}

/// pi's `formatToolCall(name, args)`.
fn format_tool_call(name: &str, args: Option<&RawValue>, home: &str) -> String {
    // The built-in tools need a few keys: read only those, and stop once they are read (a
    // write's content can be large; the arguments were checked when the line was read).
    let wanted: &[&str] = match name {
        "read" => &["path", "file_path", "offset", "limit"],
        "write" | "edit" => &["path", "file_path"],
        "bash" => &["command"],
        "grep" | "find" => &["pattern", "path"],
        "ls" => &["path"],
        _ => &[],
    };
    let args: Value = match args {
        Some(a) if !wanted.is_empty() => pick_keys(a.get(), wanted, name),
        Some(a) => serde_json::from_str(a.get()).unwrap_or_default(),
        None => Value::Null,
    };
    let get = |k: &str| args.get(k).filter(|v| js::truthy(Some(v)));
    let path_of = |keys: &[&str], default: &str| -> String {
        let raw = keys.iter().find_map(|k| get(k)).map_or_else(|| default.to_string(), |v| js_str(Some(v)));
        shorten_home_path(&raw, home)
    };
    match name {
        "read" => {
            let p = path_of(&["path", "file_path"], "");
            format!("[read: {p}{}]", read_line_range(args.get("offset"), args.get("limit")))
        }
        "write" => format!("[write: {}]", path_of(&["path", "file_path"], "")),
        "edit" => format!("[edit: {}]", path_of(&["path", "file_path"], "")),
        "bash" => {
            let raw = get("command").map_or_else(String::new, |v| js_str(Some(v)));
            let cmd: String = trim_js(&raw.replace(['\n', '\t'], " ")).to_string();
            let cut = slice_utf16(&cmd, 50);
            format!("[bash: {cut}{}]", if utf16_len(&raw) > 50 { "..." } else { "" })
        }
        "grep" => {
            let pattern = get("pattern").map_or_else(String::new, |v| js_str(Some(v)));
            format!("[grep: /{pattern}/ in {}]", path_of(&["path"], "."))
        }
        "find" => {
            let pattern = get("pattern").map_or_else(String::new, |v| js_str(Some(v)));
            format!("[find: {pattern} in {}]", path_of(&["path"], "."))
        }
        "ls" => format!("[ls: {}]", path_of(&["path"], ".")),
        _ => {
            let json = js::stringify(&args);
            let cut = slice_utf16(&json, 40);
            format!("[{name}: {cut}{}]", if utf16_len(&json) > 40 { "..." } else { "" })
        }
    }
}

/// The given keys of a JSON object (the last of repeated keys wins, as in `JSON.parse`),
/// read until the keys the tool row needs are there.
fn pick_keys(json: &str, wanted: &[&str], tool: &str) -> Value {
    struct Pick<'w> {
        wanted: &'w [&'w str],
        tool: &'w str,
        map: serde_json::Map<String, Value>,
        done: bool,
    }
    impl<'de> Visitor<'de> for &mut Pick<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("tool arguments")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if self.wanted.contains(&key.as_ref()) {
                    let v: Value = map.next_value()?;
                    self.map.insert(key.into_owned(), v);
                    // write/edit show `path || file_path`: a truthy path is all they need.
                    let enough = match self.tool {
                        "write" | "edit" => js::truthy(self.map.get("path")),
                        "bash" => self.map.contains_key("command"),
                        "ls" => self.map.contains_key("path"),
                        _ => false,
                    };
                    if enough {
                        self.done = true;
                        return Err(de::Error::custom(STOP));
                    }
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(())
        }
    }
    let mut pick = Pick { wanted, tool, map: serde_json::Map::new(), done: false };
    let mut de = serde_json::Deserializer::from_str(json);
    match de.deserialize_map(&mut pick) {
        Ok(()) => Value::Object(pick.map),
        Err(_) if pick.done => Value::Object(pick.map),
        // Not an object (a string, a number…): pi reads no keys from it.
        Err(_) => serde_json::from_str(json).unwrap_or_default(),
    }
}

/// pi's `formatReadLineRange(offset, limit)`.
fn read_line_range(offset: Option<&Value>, limit: Option<&Value>) -> String {
    let absent = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
    if absent(offset) && absent(limit) {
        return String::new();
    }
    let start = if absent(offset) { Some(1.0) } else { parse_line_number(offset) };
    let Some(start) = start else { return String::new() };
    if absent(limit) {
        return format!(":{}", js::number_string(start));
    }
    let Some(count) = parse_line_number(limit) else { return String::new() };
    let end = start + count - 1.0;
    if end != 0.0 && !end.is_nan() {
        format!(":{}-{}", js::number_string(start), js::number_string(end))
    } else {
        format!(":{}", js::number_string(start))
    }
}

/// pi's `parseLineNumber`: a finite number, or a non-blank numeric string.
fn parse_line_number(v: Option<&Value>) -> Option<f64> {
    let n = match v? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) if !trim_js(s).is_empty() => js_string_to_number(s),
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// JS `Number(string)`.
fn js_string_to_number(s: &str) -> f64 {
    let t = trim_js(s);
    if t.is_empty() {
        return 0.0;
    }
    let radix = |p: &str, r: u32| -> f64 {
        if p.is_empty() {
            return f64::NAN;
        }
        u64::from_str_radix(p, r).map_or(f64::NAN, |v| v as f64)
    };
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return radix(h, 16);
    }
    if let Some(o) = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")) {
        return radix(o, 8);
    }
    if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        return radix(b, 2);
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    if !t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) {
        return f64::NAN;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// JS `+x` for a JSON value (`tokensBefore / 1000`).
fn js_to_number(v: Option<&Value>) -> f64 {
    match v {
        None => f64::NAN,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => js_string_to_number(s),
        Some(Value::Array(a)) if a.is_empty() => 0.0,
        Some(Value::Array(a)) if a.len() == 1 => js_to_number(Some(&a[0])),
        Some(_) => f64::NAN,
    }
}

/// JS `Math.round`.
fn js_round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let r = (x + 0.5).floor();
    // Math.round(-0.4) is -0, printed "0".
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// pi's `shortenHomePath(path, home)`: an absolute path inside the home directory as `~/…`.
fn shorten_home_path(path: &str, home: &str) -> String {
    if home.is_empty() || !path.starts_with('/') {
        return path.to_string();
    }
    let resolve = |p: &str| -> String {
        let joined = if p.starts_with('/') {
            p.to_string()
        } else {
            let cwd = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
            format!("{cwd}/{p}")
        };
        let mut parts: Vec<&str> = Vec::new();
        for seg in joined.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                s => parts.push(s),
            }
        }
        format!("/{}", parts.join("/"))
    };
    let (h, p) = (resolve(home), resolve(path));
    let rel = if p == h {
        ""
    } else if h == "/" {
        &p[1..]
    } else if let Some(rest) = p.strip_prefix(&h).and_then(|r| r.strip_prefix('/')) {
        rest
    } else {
        return path.to_string();
    };
    if rel.is_empty() {
        "~".into()
    } else {
        format!("~/{rel}")
    }
}

// ---------------------------------------------------------------------------------------
// Reading what the tree needs from each line
// ---------------------------------------------------------------------------------------

/// Files smaller than this are read on one thread.
const PARALLEL_MIN: usize = 4 << 20;

/// Reads every entry's text fields, on two threads for large files.
fn parse_all<'a>(session: &Session<'a>, filter: Filter, search: bool) -> Result<Vec<Info<'a>>, Damaged> {
    let n = session.entries.len();
    let total: usize = session.data().len();
    let split = if total >= PARALLEL_MIN && n > 1 {
        let mid = session.entries[0].start + (total - session.entries[0].start) / 2;
        session.entries.partition_point(|e| e.start < mid)
    } else {
        n
    };
    let run = |range: std::ops::Range<usize>| -> (Vec<Info<'a>>, Vec<u32>) {
        let mut out = Vec::with_capacity(range.len());
        let mut damaged = Vec::new();
        for i in range {
            match parse_entry(session, i as u32, filter, search) {
                Ok(info) => out.push(info),
                Err(()) => {
                    damaged.push(session.entries[i].line);
                    out.push(Info::Nothing);
                }
            }
        }
        (out, damaged)
    };
    let ((mut a, mut da), (b, db)) = if split < n {
        std::thread::scope(|t| {
            let second = t.spawn(|| run(split..n));
            let first = run(0..split);
            (first, second.join().expect("parser thread panicked"))
        })
    } else {
        (run(0..n), (Vec::new(), Vec::new()))
    };
    a.extend(b);
    da.extend(db);
    if da.is_empty() {
        Ok(a)
    } else {
        Err(Damaged(da))
    }
}

/// One entry's fields; `Err` when its line is not valid JSON after all.
fn parse_entry<'a>(session: &Session<'a>, i: u32, filter: Filter, search: bool) -> Result<Info<'a>, ()> {
    let e = &session.entries[i as usize];
    if matches!(e.kind, EntryType::NotObject) {
        return Ok(Info::Nothing);
    }
    let role = if e.kind == EntryType::Message { e.role } else { Role::None };
    // With the user-only filter, only user messages (and their ids and parents) matter.
    let wanted = filter != Filter::UserOnly || search || role == Role::User;
    let mut st = State::new(e.kind, role, wanted, search);
    let line = session.raw_line(i);
    let mut de = serde_json::Deserializer::from_slice(line);
    match (TopSeed { st: &mut st }).deserialize(&mut de) {
        Ok(()) => de.end().map_err(|_| ())?,
        Err(_) if st.stopped => {}
        Err(_) => return Err(()),
    }
    let undefined_parent = !st.parent_seen;
    Ok(match (e.kind, role) {
        (EntryType::Message, Role::Assistant) => Info::Assistant {
            text: st.acc.text.into_boxed_str(),
            has_text: st.acc.has_text,
            shows_anyway: js::truthy(st.stop_reason.as_ref())
                && !matches!(st.stop_reason.as_ref().and_then(Value::as_str), Some("stop" | "toolUse")),
            aborted: st.stop_reason.as_ref().and_then(Value::as_str) == Some("aborted"),
            error: st.error_message.filter(|v| js::truthy(Some(v))).map(|v| js_str(Some(&v)).into_boxed_str()),
            calls: st.calls.into_boxed_slice(),
            undefined_parent,
        },
        (EntryType::Message, _) => {
            let role_name = match (session.migrate_v2, &st.role) {
                (true, Some(r)) if r == "hookMessage" => Some(Cow::Borrowed("custom")),
                _ => st.role,
            };
            Info::Message {
                role: role_name,
                text: st.content_seen.then(|| st.acc.text.into_boxed_str()),
                tool_call_id: st.tool_call_id,
                tool_name: st.tool_name,
                command: st.command,
                undefined_parent,
            }
        }
        _ => Info::Fields { fields: st.fields, undefined_parent },
    })
}

/// The state of one line's read.
struct State<'a> {
    kind: EntryType,
    role_kind: Role,
    /// Read the text fields at all (else only `parentId`).
    wanted: bool,
    search: bool,
    parent_seen: bool,
    stopped: bool,
    // message
    role_seen: bool,
    role: Option<Cow<'a, str>>,
    content_seen: bool,
    acc: Acc,
    calls: Vec<ToolCall<'a>>,
    stop_reason: Option<Value>,
    error_message: Option<Value>,
    tool_call_id: Option<Cow<'a, str>>,
    tool_name_seen: bool,
    tool_name: Option<Value>,
    command: Option<Value>,
    // other types
    fields: Vec<(&'static str, Value)>,
}

impl<'a> State<'a> {
    fn new(kind: EntryType, role: Role, wanted: bool, search: bool) -> Self {
        State {
            kind,
            role_kind: role,
            wanted,
            search,
            parent_seen: false,
            stopped: false,
            role_seen: false,
            role: None,
            content_seen: false,
            acc: Acc::default(),
            calls: Vec::new(),
            stop_reason: None,
            error_message: None,
            tool_call_id: None,
            tool_name_seen: false,
            tool_name: None,
            command: None,
            fields: Vec::new(),
        }
    }

    /// Whether the message's needed keys are all read.
    fn message_complete(&self) -> bool {
        if !self.role_seen {
            return false;
        }
        match self.role_kind {
            Role::User => self.content_seen,
            // stopReason and errorMessage come after the content; errorMessage is usually
            // absent, so an assistant is read to its end.
            Role::Assistant => false,
            Role::ToolResult => {
                self.tool_call_id.is_some() && self.tool_name_seen && (!self.search || self.content_seen)
            }
            Role::BashExecution => self.command.is_some() && (!self.search || self.content_seen),
            _ => !self.search || self.content_seen,
        }
    }
}

/// pi's `extractContent` accumulator: the first 200 UTF-16 units of the text blocks,
/// and `hasTextContent`.
#[derive(Default)]
struct Acc {
    text: String,
    units: usize,
    has_text: bool,
}

impl Acc {
    const MAX: usize = 200;

    fn push(&mut self, s: &str) {
        if self.units < Self::MAX {
            let cut = slice_utf16(s, Self::MAX - self.units);
            self.units += utf16_len(&cut);
            self.text.push_str(&cut);
            if cut.ends_with('\u{fffd}') && cut.len() < s.len() {
                self.units = Self::MAX;
            }
        }
    }
}

/// Visitor methods that accept and drop any scalar.
macro_rules! scalars_ignored {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

const STOP: &str = "pisces: stop reading";

fn stop<E: de::Error>(st: &mut State) -> Result<(), E> {
    st.stopped = true;
    Err(E::custom(STOP))
}

struct TopSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for TopSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for TopSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an entry")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.st;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "parentId" => {
                    st.parent_seen = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "message" if st.kind == EntryType::Message && st.wanted => {
                    map.next_value_seed(MessageSeed { st: &mut *st })?;
                }
                k if st.wanted && st.kind != EntryType::Message => {
                    match fields_for(st.kind).iter().find(|f| **f == k) {
                        Some(&name) => {
                            let v: Value = map.next_value()?;
                            st.fields.retain(|(n, _)| *n != name);
                            st.fields.push((name, v));
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            // Tool output is not read (see `MessageSeed`); unwanted, not even its keys.
            if st.parent_seen && !st.wanted && matches!(st.role_kind, Role::ToolResult | Role::BashExecution) {
                return stop(st);
            }
        }
        Ok(())
    }
}

struct MessageSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for MessageSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for MessageSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.st;
        let role = st.role_kind;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "role" => {
                    st.role_seen = true;
                    st.role = map.next_value::<JsString>()?.0;
                }
                "content" => {
                    let read = matches!(role, Role::User | Role::Assistant) || st.search;
                    if read {
                        map.next_value_seed(ContentSeed { st: &mut *st })?;
                        st.content_seen = true;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                "stopReason" if role == Role::Assistant => st.stop_reason = Some(map.next_value()?),
                "errorMessage" if role == Role::Assistant => st.error_message = Some(map.next_value()?),
                "toolCallId" if role == Role::ToolResult => {
                    st.tool_call_id = Some(map.next_value::<JsString>()?.0.unwrap_or(Cow::Borrowed("")));
                }
                "toolName" if role == Role::ToolResult => {
                    st.tool_name_seen = true;
                    st.tool_name = Some(map.next_value()?);
                }
                "command" if role == Role::BashExecution => st.command = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            // Lines are read whole (so that a line damaged after its first keys is found,
            // and skipped as pi skips it), except tool results and bash executions: their
            // output is most of a session's bytes and the row needs only the keys before it;
            // damage after those keys goes unnoticed, as in the index (see `load`).
            if st.parent_seen && matches!(role, Role::ToolResult | Role::BashExecution) && st.message_complete() {
                return stop(st);
            }
        }
        if !st.role_seen {
            st.role_seen = true;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    scalars_ignored!();
}

/// A string as JS would read it in a template (`None` for null / undefined); borrowed from
/// the line when it has no escapes.
struct JsString<'a>(Option<Cow<'a, str>>);

impl<'de> serde::Deserialize<'de> for JsString<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsString<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(JsString(None))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(JsString(Some(Cow::Owned(js::number_string(v)))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(JsString(Some(Cow::Owned(js_str(Some(&Value::Array(items)))))))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(JsString(Some(Cow::Borrowed("[object Object]"))))
            }
        }
        d.deserialize_any(V)
    }
}

/// A message's `content`: a string, or blocks whose `text` blocks are joined.
struct ContentSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for ContentSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for ContentSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("message content")
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.st.acc.push(v);
        self.st.acc.has_text |= !trim_js(v).is_empty();
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(BlockSeed { st: &mut *self.st })?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// One content block: `text` blocks feed the accumulator, `toolCall` blocks the call list.
struct BlockSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de, 's> DeserializeSeed<'de> for BlockSeed<'s, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for BlockSeed<'s, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a content block")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.st;
        let calls_wanted = st.role_kind == Role::Assistant;
        let mut ty: Option<Cow<'de, str>> = None;
        let mut text: Option<Option<Cow<'de, str>>> = None;
        let mut id: Option<Cow<'de, str>> = None;
        let mut name: Option<Cow<'de, str>> = None;
        let mut args: Option<&'de RawValue> = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => ty = map.next_value::<JsString>()?.0,
                "text" => {
                    let t = map.next_value::<JsString>()?.0;
                    text = Some(t);
                }
                "id" if calls_wanted => id = map.next_value::<JsString>()?.0,
                "name" if calls_wanted => name = map.next_value::<JsString>()?.0,
                "arguments" if calls_wanted => args = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match ty.as_deref() {
            Some("text") => {
                // `result += block.text` (undefined reads "undefined").
                let t = match &text {
                    None => Some("undefined"),
                    Some(None) => Some("null"),
                    Some(Some(t)) => Some(t.as_ref()),
                };
                if let Some(t) = t {
                    st.acc.push(t);
                }
                if let Some(Some(t)) = &text {
                    st.acc.has_text |= !trim_js(t).is_empty();
                }
            }
            Some("toolCall") if calls_wanted => {
                // pi's map is keyed by the id as it is (undefined included); an id-less call
                // can never match a result's toolCallId.
                if let Some(id) = id {
                    st.calls.push(ToolCall { id, name: name.unwrap_or(Cow::Borrowed("undefined")), arguments: args });
                }
            }
            _ => {}
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    scalars_ignored!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ranges_like_pi() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(read_line_range(None, None), "");
        assert_eq!(read_line_range(Some(&v("10")), None), ":10");
        assert_eq!(read_line_range(Some(&v("10")), Some(&v("5"))), ":10-14");
        assert_eq!(read_line_range(None, Some(&v("40"))), ":1-40");
        assert_eq!(read_line_range(Some(&v("\"3\"")), Some(&v("\"2\""))), ":3-4");
        assert_eq!(read_line_range(Some(&v("\"x\"")), None), "");
        assert_eq!(read_line_range(Some(&v("1")), Some(&v("0"))), ":1");
        assert_eq!(read_line_range(Some(&v("null")), Some(&v("null"))), "");
    }

    #[test]
    fn home_paths_shorten_like_pi() {
        assert_eq!(shorten_home_path("/home/dev/a/b.js", "/home/dev"), "~/a/b.js");
        assert_eq!(shorten_home_path("/home/dev", "/home/dev"), "~");
        assert_eq!(shorten_home_path("/home/devx/a", "/home/dev"), "/home/devx/a");
        assert_eq!(shorten_home_path("src/a.js", "/home/dev"), "src/a.js");
        assert_eq!(shorten_home_path("/home/dev/./a//b/", "/home/dev/"), "~/a/b");
        assert_eq!(shorten_home_path("/home/dev/a", ""), "/home/dev/a");
    }

    #[test]
    fn utf16_cuts() {
        assert_eq!(slice_utf16("abc", 2), "ab");
        assert_eq!(slice_utf16("a😀b", 2), "a\u{fffd}");
        assert_eq!(slice_utf16("a😀b", 3), "a😀");
    }
}
