//! The common tree index: what every format's reader produces and every command reads.
//!
//! A format's reader (behind [`super::format`]) scans its file into [`EntryMeta`]s (where
//! each line is, its id and `parentId`, its kind) and hands them to [`Session::build`],
//! which resolves parents through an id map, cuts parent cycles, orders each entry's
//! children, and records the problems it met. Then the reader adds what only it can know:
//! labels, the default leaf, the session's name. From then on commands ask the session
//! (ids, parents, children, paths, leaves, labels) and, through its [`Dialect`], the format
//! (an entry's content, the context at a leaf, the text of a tree row).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::OnceLock;

use hashbrown::HashTable;
use rustc_hash::FxHashMap as HashMap;
use serde_json::{Map, Value};

use super::entry::{Entries, EntryIdx, EntryMeta, Id, LineNo, Owned};
use super::format::{Dialect, FormatInfo, Unreadable};
use super::{js, Diagnostic, Problem, Severity};

/// A resolved label (the latest label for a target wins; an empty one clears).
#[derive(Clone, Debug)]
pub struct Label {
    pub text: String,
    /// The label entry's `timestamp`, as written (fork re-emits it unchanged).
    pub timestamp: Value,
    /// The entry that set it.
    pub entry: EntryIdx,
}

/// An entry that has no string id where one is needed.
#[derive(Debug, thiserror::Error)]
#[error("the entry on line {0} has no id that an entry could name")]
pub struct NoId(pub LineNo);

/// What a session's first line (or its format's equivalent) says about it.
#[derive(Clone, Debug, Default)]
pub struct Header {
    /// The session id.
    pub id: String,
    /// The working directory the agent ran in, as written.
    pub cwd: Option<Value>,
    /// The format version as written (`None`: not written).
    pub version: Option<Value>,
    /// The session this one was forked from, as written (a path or an id).
    pub parent_session: Option<Value>,
    /// The header line, when the format has one.
    pub line: Option<LineNo>,
    /// The header object whole, unknown fields kept (formats without one: empty).
    pub raw: Map<String, Value>,
}

impl Header {
    /// The cwd when it is a string.
    pub fn cwd_str(&self) -> Option<&str> {
        self.cwd.as_ref().and_then(Value::as_str)
    }
}

/// How siblings are ordered.
#[derive(Clone, Copy)]
pub enum ChildOrder {
    /// In file order.
    File,
    /// By the time the function reads from each sibling's line (ms; `None` sorts as equal
    /// to everything, as JS's NaN does in V8's stable sort), then file order: pi's `getTree`.
    Time(fn(&[u8]) -> Option<f64>),
}

/// What a format's reader hands [`Session::build`].
pub struct Parts<'a> {
    /// The name to report the file by.
    pub file: String,
    pub path: Option<PathBuf>,
    pub data: &'a [u8],
    pub header: Header,
    /// Entry lines in file order (headers and skipped lines are not entries).
    pub entries: Vec<EntryMeta>,
    /// Strings the entries refer to that are not in their lines (see `StrRef`).
    pub owned: Owned,
    /// What the reader found so far.
    pub diagnostics: Vec<Diagnostic>,
    /// The format's behavior for this session.
    pub dialect: Box<dyn Dialect + 'a>,
    /// The ids were made up by the reader (pi version 1 has none), so they mean nothing
    /// outside this file.
    pub synthetic_ids: bool,
}

/// An id map the reader made while it read (Claude Code's, which resolves `parentUuid`s
/// before the session exists): the session takes it rather than hash every id again.
#[derive(Debug)]
pub struct IdMap {
    /// Entry numbers hashed by [`hash_bytes`] of their ids; an id's entry is the last
    /// with it.
    pub table: HashTable<u32>,
    /// Each entry a later one with the same id shadows: (that later one, it).
    pub shadowed: Vec<(EntryIdx, EntryIdx)>,
}

/// Children of entry `i`, in order: `kids[kid_at[i]..kid_at[i + 1]]` (two arrays of four
/// bytes an entry; a graph library's nodes and edges took three times that), and the
/// entries without a (resolvable) parent, in file order. Built when first asked for:
/// `path` needs only parents, and ordering siblings by time reads every branch point's
/// siblings from the file (a third of a 1 GB session's linking).
struct Kids {
    kid_at: Vec<u32>,
    kids: Vec<u32>,
    roots: Vec<EntryIdx>,
}

/// A session file, indexed. Borrows the file's bytes; entries are read whole on demand,
/// through the format's [`Dialect`].
pub struct Session<'a> {
    /// The name to report the file by (the path as given, or `<stdin>`).
    pub file: String,
    /// The file's path, when it came from one.
    pub path: Option<PathBuf>,
    data: &'a [u8],
    pub header: Header,
    /// Every entry, in file order.
    pub entries: Entries,
    owned: Owned,
    /// id -> entry, the later entry winning as in pi's `byId` map. A table of entry
    /// indices (4 bytes a slot) rather than a map of strings: a 1 GB session has half a
    /// million ids, and a small table keeps building it out of main memory. Built when
    /// first asked for: a session read again from its kept index (`session::kept`) links
    /// only its new entries, and `path @` never looks an id up; building the table for
    /// half a million entries would be half of its time.
    by_id: OnceLock<HashTable<u32>>,
    /// Some id appears on more than one entry.
    pub duplicate_ids: bool,
    /// Children lists and roots, built when first asked for (see [`Kids`]).
    kids: OnceLock<Kids>,
    /// How siblings are ordered, for building [`Kids`].
    order: ChildOrder,
    labels: HashMap<String, Label>,
    default_leaf: Option<EntryIdx>,
    /// The session's name or title, as its agent shows it.
    pub title: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// See [`Parts::synthetic_ids`].
    pub synthetic_ids: bool,
    dialect: Box<dyn Dialect + 'a>,
}

impl<'a> Session<'a> {
    /// Builds the index: the id map, parents, cycles cut, children ordered. Labels, the
    /// default leaf (the last entry until told otherwise) and the title are the reader's
    /// to set afterwards.
    pub fn build(parts: Parts<'a>, order: ChildOrder) -> Session<'a> {
        let mut s = Session::unlinked(parts, order);
        s.link(None);
        s
    }

    /// [`Session::build`] with the id map the reader made of the same entries, ids and
    /// owned strings (the one `build` would make).
    pub fn build_with_ids(parts: Parts<'a>, order: ChildOrder, ids: IdMap) -> Session<'a> {
        let mut s = Session::unlinked(parts, order);
        s.link(Some(ids));
        s
    }

    /// The session of `parts`, its entries' parents as the reader set them (none resolved
    /// from `parentId`s yet).
    fn unlinked(parts: Parts<'a>, order: ChildOrder) -> Session<'a> {
        let Parts { file, path, data, header, entries, owned, diagnostics, dialect, synthetic_ids } = parts;
        let entries = Entries::new(entries);
        let default_leaf = entries.indices().last();
        Session {
            file,
            path,
            data,
            header,
            entries,
            owned,
            by_id: OnceLock::new(),
            duplicate_ids: false,
            kids: OnceLock::new(),
            order,
            labels: HashMap::default(),
            default_leaf,
            title: None,
            diagnostics,
            synthetic_ids,
            dialect,
        }
    }

    /// The index of a session read from its kept index (`session::kept`): the first
    /// `linked` entries were linked by an earlier build and are taken as they are; only the
    /// entries after them are linked. `fingerprints` are the hashes of the old entries'
    /// ids ([`super::kept::fingerprint`]), sorted.
    ///
    /// `None` when linking the new entries could come out other than a whole build would:
    /// a new id that may repeat an old one, a parent not among the entries before, an
    /// entry its own parent. The caller then builds the whole session. (The old entries had
    /// no such problem either: a session with one is not kept.)
    pub fn build_kept(parts: Parts<'a>, order: ChildOrder, linked: usize, fingerprints: &[u32]) -> Option<Session<'a>> {
        let mut s = Session::unlinked(parts, order);
        let n = s.entries.len();
        // The new entries' ids, to find a parent among them and a repeat.
        let mut new_ids: HashMap<String, EntryIdx> = HashMap::default();
        for k in (linked..n).map(EntryIdx::new) {
            let old = |id: &str| fingerprints.binary_search(&super::kept::fingerprint(id)).is_ok();
            let id = s.stored_id(k).map(str::to_string);
            if let Some(id) = &id {
                if old(id) || new_ids.contains_key(id.as_str()) {
                    return None;
                }
            }
            let parent = match s.stored_parent_id(k) {
                None => None,
                Some(pid) if Some(pid) == id.as_deref() => return None,
                Some(pid) if k.get() > 0 && s.stored_id(EntryIdx::new(k.get() - 1)) == Some(pid) => {
                    Some(EntryIdx::new(k.get() - 1))
                }
                Some(pid) => match new_ids.get(pid) {
                    Some(&p) => Some(p),
                    None if old(pid) => Some(s.lookup_stored(pid).filter(|p| p.get() < linked)?),
                    None => return None,
                },
            };
            s.entries[k].set_parent(parent);
            if let Some(id) = id {
                new_ids.insert(id, k);
            }
        }
        Some(s)
    }

    /// Builds the id map (unless given), resolves parents and breaks cycles.
    fn link(&mut self, ids: Option<IdMap>) {
        let mut diags = Vec::new();
        let (by_id, shadowed) = match ids {
            Some(IdMap { table, shadowed }) => (table, shadowed),
            None => self.id_table(),
        };
        let _ = self.by_id.set(by_id);
        for (i, prev) in shadowed {
            self.duplicate_ids = true;
            self.entries[prev].set_shadowed(true);
            let message = format!(
                "duplicate id {} (also on line {}); the later entry wins, as in pi",
                show_id(self.id(i)),
                self.entries[prev].line
            );
            diags.push(warn(Problem::DuplicateId, self.entries[i].line, message));
        }
        self.resolve_parents(&mut diags);
        self.break_cycles(&mut diags);
        self.diagnostics.extend(diags);
    }

    /// The id map over every entry, and the entries a later one with the same id shadows
    /// (with that later one).
    fn id_table(&self) -> (HashTable<u32>, Vec<(EntryIdx, EntryIdx)>) {
        let mut by_id = HashTable::with_capacity(self.entries.len());
        let (data, owned, entries) = (self.data, &self.owned, &self.entries);
        fn stored<'s>(e: &'s EntryMeta, data: &'s [u8], owned: &'s Owned) -> Option<&'s str> {
            e.id.get(&data[e.span()], owned)
        }
        // Inline ids (nearly all) are hashed and compared without going back to the file.
        let hash_of = |e: &EntryMeta| match e.id.inline_bytes() {
            Some(b) => Some(hash_bytes(b)),
            None => stored(e, data, owned).map(|s| hash_bytes(s.as_bytes())),
        };
        let same = |a: &EntryMeta, b: &EntryMeta| {
            a.id.same_known(&b.id).unwrap_or_else(|| stored(a, data, owned) == stored(b, data, owned))
        };
        let mut shadowed = Vec::new();
        for (i, e) in entries.enumerate() {
            let Some(hash) = hash_of(e) else { continue };
            let slot = by_id.entry(
                hash,
                |&j| same(&entries[EntryIdx::new(j as usize)], e),
                |&j| hash_of(&entries[EntryIdx::new(j as usize)]).unwrap_or(0),
            );
            match slot {
                hashbrown::hash_table::Entry::Vacant(v) => {
                    v.insert(i.get() as u32);
                }
                hashbrown::hash_table::Entry::Occupied(mut o) => {
                    let prev = std::mem::replace(o.get_mut(), i.get() as u32);
                    shadowed.push((i, EntryIdx::new(prev as usize)));
                }
            }
        }
        (by_id, shadowed)
    }

    /// The id map, built on first use.
    fn by_id(&self) -> &HashTable<u32> {
        self.by_id.get_or_init(|| self.id_table().0)
    }

    /// Resolves each entry's `parentId` (unless its reader set its parent itself).
    fn resolve_parents(&mut self, diags: &mut Vec<Diagnostic>) {
        let duplicates = self.duplicate_ids;
        for i in self.entries.indices() {
            let e = &self.entries[i];
            if e.parent_id.is_none() {
                continue;
            }
            let same_as_own = e.parent_id.same_known(&e.id);
            // Agents append each entry as a child of the leaf, so the parent is nearly
            // always the previous line: skip the hash lookup then (unless ids repeat, when
            // only the map knows which entry an id names).
            let prev = i.get().checked_sub(1).map(EntryIdx::new);
            let previous = |this: &Self| {
                prev.is_some_and(|p| {
                    !duplicates
                        && e.parent_id
                            .same_known(&this.entries[p].id)
                            .unwrap_or_else(|| this.stored_id(p) == this.stored_parent_id(i))
                })
            };
            if same_as_own != Some(true) && previous(self) {
                self.entries[i].set_parent(prev);
                continue;
            }
            let Some(pid) = self.stored_parent_id(i) else { continue };
            let own = self.stored_id(i);
            let line = e.line;
            if Some(pid) == own {
                diags.push(warn(
                    Problem::SelfParent,
                    line,
                    format!(
                        "entry {} is its own parent; treated as a root (as pi's tree does; pi's context builder loops on it until it runs out of memory)",
                        show_id(Some(Id::from_stored(pid)))
                    ),
                ));
                continue;
            }
            match self.lookup_stored(pid) {
                Some(p) => self.entries[i].set_parent(Some(p)),
                None => diags.push(warn(
                    Problem::DanglingParent,
                    line,
                    format!(
                        "parent {} of entry {} not found; the entry is treated as a root, as pi's tree does",
                        show_id(Some(Id::from_stored(pid))),
                        show_id(own.map(Id::from_stored))
                    ),
                )),
            }
        }
    }

    /// Children in order: file order, or a stable sort by time (pi's getTree;
    /// unparseable times compare as "equal", see js::v8_sort_by_key).
    fn kids(&self) -> &Kids {
        self.kids.get_or_init(|| {
            let n = self.entries.len();
            let parents: Vec<u32> =
                self.entries.iter().map(|e| e.parent().map_or(NO_KEY, |p| p.get() as u32)).collect();
            let roots = self.entries.enumerate().filter(|(_, e)| e.parent().is_none()).map(|(i, _)| i).collect();
            let (kid_at, mut kids) = lists(&parents, n);
            for p in 0..n {
                let slice = &mut kids[kid_at[p] as usize..kid_at[p + 1] as usize];
                if let (true, ChildOrder::Time(time)) = (slice.len() > 1, self.order) {
                    // Only siblings need their times; read them now.
                    let times: Vec<Option<f64>> = slice
                        .iter()
                        .map(|&c| time(&self.data[self.entries[EntryIdx::new(c as usize)].span()]))
                        .collect();
                    let mut order: Vec<usize> = (0..slice.len()).collect();
                    js::v8_sort_by_key(&mut order, |k| times[k]);
                    let sorted: Vec<u32> = order.iter().map(|&k| slice[k]).collect();
                    slice.copy_from_slice(&sorted);
                }
            }
            Kids { kid_at, kids, roots }
        })
    }

    /// pi has no cycle guard (its path walk loops forever on A -> B -> A). We cut each
    /// cycle at its earliest entry in the file, which becomes a root, and say so.
    fn break_cycles(&mut self, diags: &mut Vec<Diagnostic>) {
        const NEW: u8 = 0;
        const ON_WALK: u8 = 1;
        const DONE: u8 = 2;
        let n = self.entries.len();
        let mut state = vec![NEW; n];
        let mut walk: Vec<EntryIdx> = Vec::new();
        for start in self.entries.indices() {
            if state[start.get()] != NEW {
                continue;
            }
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state[c.get()] {
                    NEW => {
                        state[c.get()] = ON_WALK;
                        walk.push(c);
                        cur = self.entries[c].parent();
                    }
                    ON_WALK => {
                        let pos = walk.iter().position(|&w| w == c).unwrap_or(0);
                        let cycle = &walk[pos..];
                        let first = cycle.iter().copied().min().unwrap_or(c);
                        let names: Vec<String> = cycle.iter().rev().map(|&m| show_id(self.id(m))).collect();
                        diags.push(warn(
                            Problem::Cycle,
                            self.entries[first].line,
                            format!(
                                "parent cycle {} -> {}; pisces treats {} (the earliest in the file) as a root (pi loops on a path through it until it runs out of memory)",
                                names.join(" -> "),
                                names[0],
                                show_id(self.id(first))
                            ),
                        ));
                        self.entries[first].set_parent(None);
                        self.entries[first].set_cycle_cut(true);
                        break;
                    }
                    _ => break,
                }
            }
            for w in walk.drain(..) {
                state[w.get()] = DONE;
            }
        }
    }

    // ---- What the reader sets after building ----------------------------------------

    /// Sets a label (`None` clears the target's label).
    pub fn set_label(&mut self, target: String, label: Option<Label>) {
        match label {
            Some(l) => {
                self.labels.insert(target, l);
            }
            None => {
                self.labels.remove(&target);
            }
        }
    }

    pub fn set_default_leaf(&mut self, leaf: Option<EntryIdx>) {
        self.default_leaf = leaf;
    }

    // ---- The format -----------------------------------------------------------------

    /// The format's behavior for this session.
    pub fn dialect(&self) -> &dyn Dialect {
        self.dialect.as_ref()
    }

    /// Which format the file is in.
    pub fn format(&self) -> &'static FormatInfo {
        self.dialect.info()
    }

    /// Entry `i` whole, as its agent holds it in memory.
    pub fn parse(&self, i: EntryIdx) -> Result<Value, Unreadable> {
        self.dialect.entry(self, i)
    }

    /// Entry `i`'s time (ms since the epoch), when it has a valid one.
    pub fn time(&self, i: EntryIdx) -> Option<f64> {
        self.dialect.time(self, i)
    }

    /// A one-line description of entry `i`, at most `max` characters.
    pub fn preview(&self, i: EntryIdx, max: usize) -> String {
        self.dialect.preview(self, i, max)
    }

    // ---- Reading the index ----------------------------------------------------------

    /// The raw bytes of entry `i`'s line (without `\n`).
    pub fn raw_line(&self, i: EntryIdx) -> &'a [u8] {
        &self.data[self.entries[i].span()]
    }

    /// Entry `i`'s line as a person looks for it: in another file when the session spans
    /// several (see [`Dialect::place`]), else the line of this one.
    pub fn place(&self, i: EntryIdx) -> (Option<String>, LineNo) {
        match self.dialect.place(self, i) {
            Some((file, line)) => (Some(file), line),
            None => (None, self.entries[i].line),
        }
    }

    /// The whole file.
    /// The strings the index could not point to in the file (`StrRef::owned`).
    pub fn owned(&self) -> &Owned {
        &self.owned
    }

    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Entry `i`'s id (version-1 pi entries: `L<line>`).
    pub fn id(&self, i: EntryIdx) -> Option<Id<'_>> {
        self.stored_id(i).map(Id::from_stored)
    }

    /// Entry `i`'s id when it is a string.
    pub fn id_str(&self, i: EntryIdx) -> Option<&str> {
        self.id(i).and_then(Id::as_str)
    }

    /// Entry `i`'s id when it is a string, or an error saying the entry has none (for
    /// writing an entry that names it).
    pub fn named_id(&self, i: EntryIdx) -> Result<&str, NoId> {
        self.id_str(i).ok_or(NoId(self.entries[i].line))
    }

    /// Entry `i`'s id as its agent would print it in JSON (`null` without one).
    pub fn id_value(&self, i: EntryIdx) -> Value {
        self.id(i).map_or(Value::Null, Id::to_value)
    }

    /// Entry `i`'s `parentId` as written (migrated for version-1 pi files).
    pub fn parent_id(&self, i: EntryIdx) -> Option<Id<'_>> {
        self.stored_parent_id(i).map(Id::from_stored)
    }

    /// Entry `i`'s id as the index stores it (a non-string id's JSON behind a NUL).
    pub(crate) fn stored_id(&self, i: EntryIdx) -> Option<&str> {
        let e = &self.entries[i];
        e.id.get(&self.data[e.span()], &self.owned)
    }

    fn stored_parent_id(&self, i: EntryIdx) -> Option<&str> {
        let e = &self.entries[i];
        e.parent_id.get(&self.data[e.span()], &self.owned)
    }

    fn lookup_stored(&self, stored: &str) -> Option<EntryIdx> {
        self.by_id()
            .find(hash_bytes(stored.as_bytes()), |&j| self.stored_id(EntryIdx::new(j as usize)) == Some(stored))
            .map(|&j| EntryIdx::new(j as usize))
    }

    /// The entry the id map holds for a string id.
    pub fn get(&self, id: &str) -> Option<EntryIdx> {
        if id.starts_with(super::entry::NON_STRING_ID) {
            return None;
        }
        self.lookup_stored(id)
    }

    /// The entry the id map holds for an id of either kind.
    pub fn get_id(&self, id: Id) -> Option<EntryIdx> {
        match id {
            Id::Str(s) => self.get(s),
            Id::Json(json) => self.lookup_stored(&format!("{}{json}", super::entry::NON_STRING_ID)),
        }
    }

    /// All string ids (for prefix matching), with the entry each names, in file order (the
    /// entries the id map keeps: those no later entry shadows). Read in file order, not in
    /// the map's: the ids are then read from memory one after the other, which for the
    /// sixty thousand ids of a large Claude Code file is several times faster.
    pub fn ids(&self) -> impl Iterator<Item = (&str, EntryIdx)> {
        self.entries.enumerate().filter(|(_, e)| !e.shadowed()).filter_map(|(i, _)| self.id_str(i).map(|id| (id, i)))
    }

    /// The format's default leaf (pi: the last entry in file order, whatever its type).
    pub fn default_leaf(&self) -> Option<EntryIdx> {
        self.default_leaf
    }

    /// Children of `i`, in order.
    pub fn children(&self, i: EntryIdx) -> impl Iterator<Item = EntryIdx> + '_ {
        let k = self.kids();
        let (from, to) = (k.kid_at[i.get()] as usize, k.kid_at[i.get() + 1] as usize);
        k.kids[from..to].iter().map(|&c| EntryIdx::new(c as usize))
    }

    /// Entries without a (resolvable) parent, in file order.
    pub fn roots(&self) -> &[EntryIdx] {
        &self.kids().roots
    }

    pub fn parent(&self, i: EntryIdx) -> Option<EntryIdx> {
        self.entries[i].parent()
    }

    /// The path root..=leaf (cycles were cut when loading, so this terminates).
    pub fn path_to(&self, leaf: EntryIdx) -> Vec<EntryIdx> {
        let mut path = vec![leaf];
        let mut cur = leaf;
        while let Some(p) = self.parent(cur) {
            path.push(p);
            cur = p;
        }
        path.reverse();
        path
    }

    /// Entries above `i` (0 for a root).
    pub fn depth(&self, i: EntryIdx) -> usize {
        let mut d = 0;
        let mut cur = i;
        while let Some(p) = self.parent(cur) {
            d += 1;
            cur = p;
        }
        d
    }

    /// Entries without children, in file order.
    pub fn leaves(&self) -> Vec<EntryIdx> {
        self.entries.indices().filter(|&i| self.children(i).next().is_none()).collect()
    }

    /// The entry a label on `i` goes to. Agents show label entries nowhere and never label
    /// one, so an `i` that is a label entry (`@` just after `pisces label … @ …`) means the
    /// nearest entry above it that is not one.
    pub fn label_target(&self, i: EntryIdx) -> EntryIdx {
        let mut cur = i;
        while self.entries[cur].kind == super::entry::EntryType::Label {
            match self.parent(cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        cur
    }

    /// The resolved label of the entry with this string id.
    pub fn label_of(&self, id: &str) -> Option<&Label> {
        self.labels.get(id)
    }

    /// The resolved label of entry `i`.
    pub fn label_at(&self, i: EntryIdx) -> Option<&Label> {
        self.id_str(i).and_then(|id| self.label_of(id))
    }

    /// Every resolved label, keyed by target id.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &Label)> {
        self.labels.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The entry's id for display (`#N`, its line, for an entry without a string id).
    pub fn display_id(&self, i: EntryIdx) -> Cow<'_, str> {
        match self.id(i) {
            Some(Id::Str(id)) => Cow::Borrowed(id),
            _ => Cow::Owned(format!("#{}", self.entries[i].line)),
        }
    }

    /// Problems that `--strict` fails on.
    pub fn warnings(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count()
    }
}

/// An item that is in no list, for [`lists`].
pub(crate) const NO_KEY: u32 = u32::MAX;

/// `start[k]..start[k + 1]` lists, from each item's key (`NO_KEY`: in no list), in item
/// order: the compressed-row form of a map from keys below `n` to lists of items (children
/// under their parent, a reply's lines, the tool results under an entry).
pub(crate) fn lists(keys: &[u32], n: usize) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 2];
    for &key in keys.iter().filter(|&&key| key != NO_KEY) {
        start[key as usize + 2] += 1;
    }
    for k in 2..start.len() {
        start[k] += start[k - 1];
    }
    let mut items = vec![0u32; start[n + 1] as usize];
    for (item, &key) in keys.iter().enumerate().filter(|(_, &key)| key != NO_KEY) {
        let slot = &mut start[key as usize + 1];
        items[*slot as usize] = item as u32;
        *slot += 1;
    }
    start.pop();
    (start, items)
}

pub(crate) fn hash_bytes(b: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.finish()
}

/// An id for messages: the string, the JSON of a non-string id, or `(no id)`.
pub fn show_id(id: Option<Id>) -> String {
    id.map_or_else(|| "(no id)".into(), |id| id.to_string())
}

fn warn(kind: Problem, line: LineNo, message: String) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Warning, line: Some(line), message }
}
