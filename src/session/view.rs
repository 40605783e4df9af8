//! The session tree as pi's `/tree` selector shows it (docs/pi-format.md §3.1-§3.2): which
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
//! `recalculateVisualStructure` does not reach keeps the connectors `flattenTree` gave it.
//! One difference, on purpose: where the index cut a parent cycle, its earliest entry is a
//! root here too (pi's tree leaves the whole cycle unreachable and shows none of it; the
//! loading warning says what pisces does, and every command does the same). Where pi
//! would loop forever (a parent cycle reached through a duplicated id) we stop at the
//! repeated node instead.

use rustc_hash::FxHashMap as HashMap;

use super::entry::{EntryIdx, EntryType, Role};
use super::format::{RowNeed, Unreadable};
use super::index::Session;
use super::js;
use super::rows::{CallMap, Paths, Rows, Text};

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
    pub folds: Vec<EntryIdx>,
    /// The current leaf (its path is the active path); `None` is pi's null leaf.
    pub leaf: Option<EntryIdx>,
    /// The home directory pi shows as `~` in tool rows (`$HOME`, else `$USERPROFILE`).
    pub home: String,
    /// The directory relative tool paths are resolved against (pi's process cwd).
    pub cwd: String,
    /// Where the index cut a parent cycle, show its earliest entry as a root, as the
    /// loading warning says (`false`: as pi's /tree, which shows no member of the cycle).
    pub cycle_roots: bool,
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

/// One visible row.
#[derive(Clone, Debug)]
pub struct Row<'s> {
    /// The entry shown: the node pi's id map keeps.
    pub entry: EntryIdx,
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
    /// The nearest visible ancestor, as pi's `visibleParentMap`.
    pub parent: Option<EntryIdx>,
    /// How many branch points (visible entries with more than one visible child) lie
    /// between the visible root and this row: its nesting level in the drawing.
    pub depth: u32,
    /// A thin reference (a `&str` would take twice the room in every row).
    pub label: Option<&'s String>,
}

/// The visible tree, ready to draw. Row texts are made when drawn ([`TreeView::texts`]),
/// not kept: half a million rows' texts would be most of the memory a big tree takes.
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
    pub roots: Vec<EntryIdx>,
    /// Where the texts come from: the format's rows, pi's toolCallMap, the paths tool rows
    /// shorten.
    rows_of: &'s dyn Rows,
    calls: CallMap<'s>,
    home: String,
    cwd: String,
}

/// Rows whose texts are made on two threads (below it, one thread is faster).
const PARALLEL_TEXTS: usize = 4096;

impl<'s> TreeView<'s> {
    /// The text of a row.
    pub fn text(&self, row: &Row) -> Text {
        self.rows_of.text(row.entry, &self.calls, &Paths { home: &self.home, cwd: &self.cwd })
    }

    /// The texts of the rows at `indices` (of [`TreeView::rows`]), in order; on two
    /// threads for many rows. Renderers ask chunk by chunk, so only one chunk's texts
    /// exist at a time.
    pub fn texts(&self, indices: &[usize]) -> Vec<Text> {
        let text = |&i: &usize| self.text(&self.rows[i]);
        if indices.len() < PARALLEL_TEXTS {
            return indices.iter().map(text).collect();
        }
        let (a, b) = indices.split_at(indices.len() / 2);
        let (mut first, second) = std::thread::scope(|t| {
            let second = t.spawn(|| b.iter().map(text).collect::<Vec<_>>());
            let first: Vec<Text> = a.iter().map(text).collect();
            // A panic on the other thread is a bug: surface it as this thread's.
            (first, second.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        });
        first.extend(second);
        first
    }

    /// pi's `displayIndent`: with several roots every level moves one to the left.
    pub fn display_indent(&self, row: &Row) -> u32 {
        if self.multiple_roots {
            row.indent.saturating_sub(1)
        } else {
            row.indent
        }
    }

    /// The visible children of a visible entry.
    pub fn children_of(&self, entry: EntryIdx) -> &[EntryIdx] {
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
    kids: Vec<EntryIdx>,
}

impl Children {
    fn of(&self, node: EntryIdx) -> &[EntryIdx] {
        &self.kids[self.offsets[node.get()] as usize..self.offsets[node.get() + 1] as usize]
    }
}

/// Reads what the tree shows of each entry (the format's rows), once for every view built
/// from them.
pub fn read_rows<'s>(session: &'s Session<'_>, opts: &Options) -> Result<Box<dyn Rows + 's>, Unreadable> {
    let search = opts.search.as_deref().is_some_and(|q| !q.trim().is_empty());
    session.dialect().rows(session, RowNeed { user_only: opts.filter == Filter::UserOnly, search })
}

/// Builds the visible tree as pi's `/tree` selector shows it.
pub fn build<'s>(session: &'s Session<'_>, rows_of: &'s dyn Rows, opts: &Options) -> TreeView<'s> {
    let n = session.entries.len();
    let tree = PiTree::new(session, rows_of, opts.cycle_roots);

    // The node pi's `currentLeafId` names (`None`: no leaf).
    let leaf_key: Option<Option<super::entry::Id>> = opts.leaf.map(|l| session.id(l));
    let leaf_node: Option<EntryIdx> = leaf_key.and_then(|k| tree.node_by_key(k));

    let mut flat = Flattener::new(&tree, leaf_node, session);
    flat.run();
    let Flattener { mut flats, mut gutters, reachable, .. } = flat;

    // toolCallMap: every assistant's tool calls, in flatten order (a later call with the
    // same id wins).
    let tool_calls = CallMap::new(flats.iter().flat_map(|f| rows_of.calls(f.node)));

    // applyFilter
    let tokens: Vec<String> = match &opts.search {
        Some(q) => q.to_lowercase().split_whitespace().map(str::to_string).collect(),
        None => Vec::new(),
    };
    // pi's `labelsById.get(entry.id)`, by node.
    let mut labels: HashMap<EntryIdx, &String> = HashMap::default();
    for (id, l) in session.labels() {
        if let Some(node) = session.get(id) {
            labels.insert(node, &l.text);
        }
    }
    let label_of = |node: EntryIdx| -> Option<&String> {
        if labels.is_empty() {
            None
        } else {
            labels.get(&node).copied()
        }
    };
    let mut filtered: Vec<u32> = Vec::new(); // places in `flats`
    for (k, f) in flats.iter().enumerate() {
        let node = f.node;
        let e = &session.entries[node];
        if e.kind == EntryType::Usage {
            continue;
        }
        let is_leaf = leaf_node == Some(node);
        if e.kind == EntryType::Message && e.role == Role::Assistant && !is_leaf && rows_of.hidden_unless_leaf(node) {
            continue;
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
            let text = rows_of.searchable(node, label_of(node).map(String::as_str)).to_lowercase();
            if !tokens.iter().all(|t| text.contains(t.as_str())) {
                continue;
            }
        }
        filtered.push(k as u32);
    }

    // Folded subtrees: pi walks the flat list (pre-order) by `parentId`.
    let mut folded = vec![false; n];
    for &f in &opts.folds {
        if let Some(node) = tree.node_by_key(session.id(f)) {
            folded[node.get()] = true;
        }
    }
    if !opts.folds.is_empty() {
        let mut skip = vec![false; n];
        for f in &flats {
            if let Some(p) = tree.parent_node_strict(f.node) {
                if folded[p.get()] || skip[p.get()] {
                    skip[f.node.get()] = true;
                }
            }
        }
        filtered.retain(|&k| !skip[flats[k as usize].node.get()]);
    }

    // recalculateVisualStructure
    let mut visible = vec![false; n];
    for &k in &filtered {
        visible[flats[k as usize].node.get()] = true;
    }
    let vparent = nearest_visible_ancestors(&tree, &flats, &filtered, &visible, &reachable);
    let mut roots: Vec<EntryIdx> = Vec::new();
    let mut last_filtered = vec![u32::MAX; n];
    let mut children = Children { offsets: vec![0; n + 1], kids: Vec::new() };
    for &k in &filtered {
        let node = flats[k as usize].node;
        match vparent[node.get()] {
            Some(p) => children.offsets[p.get() + 1] += 1,
            None => roots.push(node),
        }
        last_filtered[node.get()] = k;
    }
    for i in 0..n {
        children.offsets[i + 1] += children.offsets[i];
    }
    children.kids = vec![EntryIdx::default(); children.offsets[n] as usize];
    {
        let mut fill = children.offsets.clone();
        for &k in &filtered {
            let node = flats[k as usize].node;
            if let Some(p) = vparent[node.get()] {
                children.kids[fill[p.get()] as usize] = node;
                fill[p.get()] += 1;
            }
        }
    }
    let multiple_roots = roots.len() > 1;
    // recalculateVisualStructure's results replace the flat list's, in place.
    {
        let mut stack: Vec<(EntryIdx, Visual, bool, u32)> = Vec::new();
        // The visit that last pushed each node (0: the roots; see below).
        let mut pushed_by = vec![u32::MAX; n];
        let mut visit: u32 = 0;
        for (i, &r) in roots.iter().enumerate().rev() {
            if std::mem::replace(&mut pushed_by[r.get()], visit) == visit {
                continue;
            }
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
        let mut path: Vec<EntryIdx> = Vec::new();
        while let Some((node, v, just_branched, depth)) = stack.pop() {
            while path.len() > depth as usize {
                if let Some(p) = path.pop() {
                    on_path[p.get()] = false;
                }
            }
            let k = last_filtered[node.get()];
            if k == u32::MAX || on_path[node.get()] {
                continue;
            }
            visit += 1;
            on_path[node.get()] = true;
            path.push(node);
            flats[k as usize].visual = v;
            let kids = children.of(node);
            let child_gutters = child_gutters(&mut gutters, &v, multiple_roots);
            let many = kids.len() > 1;
            let child_indent = child_indent(v.indent, many, just_branched);
            for (i, &c) in kids.iter().enumerate().rev() {
                // A row listed twice under one node (its id duplicated: pi's flat list
                // holds it once per way down) is drawn as its last place says: every row
                // its earlier places set is set again by the last one (the last write of a
                // row wins, and the walk below each place is the same). Going there once
                // keeps this walk linear; each place, 8^depth on a file with three
                // duplicated lines.
                if std::mem::replace(&mut pushed_by[c.get()], visit) == visit {
                    continue;
                }
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

    // What only the visual structure needed, freed before the rows are made: the tree's
    // peak memory is reached while they are.
    drop((visible, last_filtered));
    // The rows' places in the flat list, in row order, moved into the list's own room (a
    // row's place among the rows is never after its place in the list).
    for (j, &k) in filtered.iter().enumerate() {
        flats[j] = flats[k as usize];
    }
    flats.truncate(filtered.len());
    flats.shrink_to_fit();
    drop(filtered);

    // buildActivePath: from the leaf's id up through `parentId`, over the flat list's map.
    let mut active = vec![false; n];
    if let Some(Some(leaf_id)) = leaf_key {
        if leaf_id.as_str() != Some("") {
            let mut cur = session.get_id(leaf_id);
            let mut steps = 0usize;
            while let Some(c) = cur {
                if active[c.get()] || steps > n {
                    break;
                }
                steps += 1;
                active[c.get()] = true;
                if !reachable[c.get()] {
                    break;
                }
                cur = tree.parent_node_strict(c);
            }
        }
    }

    // findNearestVisibleIndex(leaf): the leaf's row, else its nearest visible ancestor's,
    // else the last row.
    let selected = if flats.is_empty() {
        None
    } else {
        let mut index_of = vec![u32::MAX; n];
        for (i, f) in flats.iter().enumerate() {
            index_of[f.node.get()] = i as u32;
        }
        let mut found = None;
        if leaf_key.is_some() {
            let mut cur = leaf_node;
            let mut steps = 0usize;
            while let Some(c) = cur {
                if index_of[c.get()] != u32::MAX {
                    found = Some(index_of[c.get()] as usize);
                    break;
                }
                if !reachable[c.get()] || steps > n {
                    break;
                }
                steps += 1;
                cur = tree.parent_node_strict(c);
            }
        }
        Some(found.unwrap_or(flats.len() - 1))
    };

    // The rows are made last, with only what they read still held.
    drop((tree, reachable));

    // Nesting levels (branch points above each row), in row order (parents come first).
    let mut level = vec![0u32; n];
    let mut rows = Vec::with_capacity(flats.len());
    for f in &flats {
        let v = f.visual;
        let node = f.node;
        let parent = vparent[node.get()];
        let depth = match parent {
            Some(p) => level[p.get()] + u32::from(children.of(p).len() > 1),
            None => 0,
        };
        level[node.get()] = depth;
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
            active: active[node.get()],
            folded: folded[node.get()],
            foldable,
            parent,
            depth,
            label: label_of(node),
        });
    }
    TreeView {
        rows,
        multiple_roots,
        gutters,
        selected,
        children,
        roots,
        rows_of,
        calls: tool_calls,
        home: opts.home.clone(),
        cwd: opts.cwd.clone(),
    }
}

/// The view with `--around` and `--depth` turned into folds (each needs the drawn tree
/// first, so the view is built again with them).
pub fn build_focused<'s>(
    session: &'s Session<'_>,
    rows: &'s dyn Rows,
    mut opts: Options,
    around: Option<EntryIdx>,
    depth: Option<u32>,
) -> TreeView<'s> {
    let mut view = build(session, rows, &opts);
    if let Some(target) = around {
        opts.folds.extend(folds_around(session, &view, target));
        view = build(session, rows, &opts);
    }
    if let Some(depth) = depth {
        opts.folds.extend(folds_for_depth(&view, depth));
        view = build(session, rows, &opts);
    }
    view
}

/// The entries to fold so that only `depth` branch levels stay open: the first entry of
/// every branch one level deeper (it stays visible, with pi's ⊞, its subtree hidden).
pub fn folds_for_depth(view: &TreeView, depth: u32) -> Vec<EntryIdx> {
    view.rows.iter().filter(|r| r.depth == depth + 1 && r.foldable && r.parent.is_some()).map(|r| r.entry).collect()
}

/// The entries to fold so that only the branch through `target` stays open: every other
/// branch off the target's ancestors (and every other root) is folded to its first entry;
/// the target's own subtree stays open.
pub fn folds_around(session: &Session, view: &TreeView, target: EntryIdx) -> Vec<EntryIdx> {
    let mut on_line = rustc_hash::FxHashSet::default();
    // The target's ancestors as the view links them (its row may be hidden by the filter:
    // then start from its nearest visible ancestor).
    let mut cur = Some(target);
    let visible: rustc_hash::FxHashSet<EntryIdx> = view.rows.iter().map(|r| r.entry).collect();
    while let Some(c) = cur {
        if visible.contains(&c) {
            break;
        }
        cur = session.parent(c);
    }
    let parent_of: HashMap<EntryIdx, Option<EntryIdx>> = view.rows.iter().map(|r| (r.entry, r.parent)).collect();
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
    last_idless: Option<EntryIdx>,
    /// See [`Options::cycle_roots`].
    cycle_roots: bool,
    roots: Vec<EntryIdx>,
    offsets: Vec<u32>,
    kids: Vec<EntryIdx>,
}

impl<'s, 'a> PiTree<'s, 'a> {
    fn new(session: &'s Session<'a>, rows: &dyn Rows, cycle_roots: bool) -> Self {
        let n = session.entries.len();
        let last_idless = session.entries.indices().rev().find(|&i| session.id(i).is_none());
        let mut tree =
            PiTree { session, last_idless, cycle_roots, roots: Vec::new(), offsets: vec![0; n + 1], kids: Vec::new() };
        // Where each entry is attached: None = a root. The index resolved parents the way
        // getTree does (a self-parent or a missing parent is a root), except that it also
        // cuts parent cycles (pi leaves them unreachable) and does not follow an undefined
        // `parentId` to the id-less node: those entries take the slow path.
        let mut attach: Vec<(EntryIdx, Option<EntryIdx>)> = Vec::with_capacity(n);
        for i in session.entries.indices() {
            let e = &session.entries[i];
            let node = if e.shadowed() || e.id.is_none() {
                match tree.node_by_key(session.id(i)) {
                    Some(node) => node,
                    None => continue,
                }
            } else {
                i
            };
            let parent = match e.parent() {
                // Where the index cut a parent cycle, the entry is a root, as the
                // loading warning says (pi's tree would show no member of the cycle).
                _ if e.cycle_cut() && cycle_roots => None,
                Some(p) if !session.duplicate_ids => Some(p),
                _ => {
                    let own = session.id(i);
                    match session.parent_id(i) {
                        // `parentId === entry.id`: a root.
                        Some(p) if Some(p) == own => None,
                        Some(p) => session.get_id(p),
                        // `parentId` missing (undefined) looks up the id-less node; null is a root.
                        None if rows.parent_undefined(i) && own.is_some() => last_idless,
                        None => None,
                    }
                }
            };
            attach.push((node, parent));
        }
        for &(_, p) in &attach {
            if let Some(p) = p {
                tree.offsets[p.get() + 1] += 1;
            }
        }
        for i in 0..n {
            tree.offsets[i + 1] += tree.offsets[i];
        }
        let mut fill = tree.offsets.clone();
        tree.kids = vec![EntryIdx::default(); tree.offsets[n] as usize];
        for &(node, p) in &attach {
            match p {
                Some(p) => {
                    tree.kids[fill[p.get()] as usize] = node;
                    fill[p.get()] += 1;
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
                let sorted: Vec<EntryIdx> = order.iter().map(|&k| slice[k]).collect();
                slice.copy_from_slice(&sorted);
            }
        }
        tree
    }

    /// The node pi's id map holds for an id (`None`: undefined).
    fn node_by_key(&self, key: Option<super::entry::Id>) -> Option<EntryIdx> {
        match key {
            Some(id) => self.session.get_id(id),
            None => self.last_idless,
        }
    }

    fn children(&self, node: EntryIdx) -> &[EntryIdx] {
        &self.kids[self.offsets[node.get()] as usize..self.offsets[node.get() + 1] as usize]
    }

    /// `entryMap.get(entry.parentId ?? null)`: the node the entry's `parentId` names.
    fn parent_node_strict(&self, node: EntryIdx) -> Option<EntryIdx> {
        // The index resolved the same lookup, except for self-parents and the entry where
        // it cut a cycle (both roots there): only those are looked up again.
        match self.session.parent(node) {
            Some(p) => Some(p),
            None if self.cycle_roots && self.session.entries[node].cycle_cut() => None,
            None => self.session.parent_id(node).and_then(|p| self.session.get_id(p)),
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

#[derive(Clone, Copy)]
struct Flat {
    node: EntryIdx,
    visual: Visual,
}

/// pi's `flattenTree`: the whole tree in pre-order, the branch holding the leaf first at
/// every level, with the indent and gutters each node would have if everything were visible.
struct Flattener<'t, 's, 'a> {
    tree: &'t PiTree<'s, 'a>,
    leaf: Option<EntryIdx>,
    flats: Vec<Flat>,
    gutters: Vec<Gutter>,
    /// Nodes in the flat list (pi's `entryMap` has them).
    reachable: Vec<bool>,
}

impl<'t, 's, 'a> Flattener<'t, 's, 'a> {
    fn new(tree: &'t PiTree<'s, 'a>, leaf: Option<EntryIdx>, session: &Session) -> Self {
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
            let mut order: Vec<EntryIdx> = Vec::with_capacity(n);
            let mut stack: Vec<(EntryIdx, u32)> = tree.roots.iter().map(|&r| (r, 0)).collect();
            let mut on_path = vec![false; n];
            let mut path: Vec<EntryIdx> = Vec::new();
            let mut visits = Revisits::new(n);
            while let Some((node, depth)) = stack.pop() {
                while path.len() > depth as usize {
                    if let Some(p) = path.pop() {
                        on_path[p.get()] = false;
                    }
                }
                if on_path[node.get()] || !visits.enter(node) {
                    continue;
                }
                on_path[node.get()] = true;
                path.push(node);
                order.push(node);
                for &c in tree.children(node).iter().rev() {
                    stack.push((c, depth + 1));
                }
            }
            for &node in order.iter().rev() {
                let has = self.leaf == Some(node) || tree.children(node).iter().any(|&c| contains_active[c.get()]);
                contains_active[node.get()] = has;
            }
        }

        let roots = &tree.roots;
        let multiple_roots = roots.len() > 1;
        // `[...roots].sort(by containsActive)`: a stable sort, active first.
        let mut ordered: Vec<EntryIdx> = roots.iter().copied().filter(|&r| contains_active[r.get()]).collect();
        ordered.extend(roots.iter().copied().filter(|&r| !contains_active[r.get()]));
        let mut stack: Vec<(EntryIdx, Visual, bool, u32)> = Vec::new();
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
        let mut path: Vec<EntryIdx> = Vec::new();
        let mut kids: Vec<EntryIdx> = Vec::new();
        let mut visits = Revisits::new(n);
        while let Some((node, v, just_branched, depth)) = stack.pop() {
            while path.len() > depth as usize {
                if let Some(p) = path.pop() {
                    on_path[p.get()] = false;
                }
            }
            if on_path[node.get()] || !visits.enter(node) {
                continue;
            }
            on_path[node.get()] = true;
            path.push(node);
            self.reachable[node.get()] = true;
            self.flats.push(Flat { node, visual: v });
            let children = tree.children(node);
            let many = children.len() > 1;
            kids.clear();
            kids.extend(children.iter().copied().filter(|&c| contains_active[c.get()]));
            kids.extend(children.iter().copied().filter(|&c| !contains_active[c.get()]));
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

/// How often the walks over pi's tree enter a node again. A duplicated id makes pi's tree a
/// graph in which one node is the child of several (pi's `getTree` maps both lines to the
/// later node), and pi draws it once per way down to it, so a file crafted with a few
/// duplicates on top of each other would take time exponential in their number (pi runs out
/// of memory). pisces draws repeats as pi does up to a budget of twice the entries, then
/// each node once more at most: pi's rows on every file pi itself can draw, and linear
/// time on the rest.
struct Revisits {
    seen: Vec<bool>,
    left: usize,
}

impl Revisits {
    fn new(n: usize) -> Revisits {
        Revisits { seen: vec![false; n], left: 2 * n + 4096 }
    }

    /// Whether the walk goes into `node` (always the first time).
    fn enter(&mut self, node: EntryIdx) -> bool {
        if !std::mem::replace(&mut self.seen[node.get()], true) {
            return true;
        }
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        true
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
    filtered: &[u32],
    visible: &[bool],
    reachable: &[bool],
) -> Vec<Option<EntryIdx>> {
    let n = visible.len();
    // above[x] for a reachable node x: the nearest visible strict ancestor (walking the
    // `parentId`s as pi does); computed with path compression.
    #[derive(Clone, Copy, PartialEq)]
    enum Above {
        Unknown,
        None,
        At(EntryIdx),
    }
    let mut above = vec![Above::Unknown; n];
    let mut walk: Vec<EntryIdx> = Vec::new();
    let mut on_walk = vec![false; n];
    let mut resolve = |start: EntryIdx, above: &mut Vec<Above>| -> Above {
        walk.clear();
        let mut cur = start;
        let result = loop {
            if above[cur.get()] != Above::Unknown {
                break above[cur.get()];
            }
            if on_walk[cur.get()] {
                break Above::None; // a cycle: pi would loop forever
            }
            on_walk[cur.get()] = true;
            walk.push(cur);
            match tree.parent_node_strict(cur) {
                None => break Above::None,
                Some(p) if visible[p.get()] => break Above::At(p),
                Some(p) if !reachable[p.get()] => break Above::None,
                Some(p) => cur = p,
            }
        };
        // Every node on the walk has the same nearest visible ancestor: the walk passed
        // only through hidden nodes.
        for &w in &walk {
            above[w.get()] = result;
            on_walk[w.get()] = false;
        }
        result
    };
    let mut out = vec![None; n];
    for &k in filtered {
        let node = flats[k as usize].node;
        if let Above::At(p) = resolve(node, &mut above) {
            out[node.get()] = Some(p);
        }
    }
    out
}
