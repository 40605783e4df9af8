//! The session index: entries in file order, the id map, and the tree as a petgraph
//! graph with pi's child order (§3.1), plus labels and the session name.

use std::borrow::Cow;
use std::collections::BTreeSet;

use hashbrown::HashTable;
use rustc_hash::FxHashMap as HashMap;

use petgraph::graph::{DiGraph, NodeIndex};
use serde_json::{Map, Value};

use super::entry::{EntryMeta, EntryType, StrRef};
use super::load::{object_fields, parse_value, scan, Event, Scan};
use super::{js, Diagnostic, LoadError, Problem, Severity, Source};

/// A resolved label (the latest `label` entry for a target wins; an empty one clears).
#[derive(Clone, Debug)]
pub struct Label {
    pub text: String,
    /// The label entry's `timestamp`, as written (fork re-emits it unchanged).
    pub timestamp: Value,
    /// The label entry (index into `Session::entries`).
    pub entry: u32,
}

/// A session file, indexed. Borrows the file's bytes; entries are parsed whole on demand.
pub struct Session<'a> {
    /// The name to report the file by.
    pub name: String,
    data: &'a [u8],
    /// The header object, parsed whole (unknown fields kept).
    pub header: Map<String, Value>,
    pub header_line: u32,
    /// The header's `version` as pi reads it (`?? 1`).
    pub version: f64,
    /// Version-1 file: ids and parents are assigned in memory (`L<line>`, linear).
    pub migrate_v1: bool,
    /// Version < 3: `hookMessage` roles are read as `custom`.
    pub migrate_v2: bool,
    /// Every parsed non-header line, in file order.
    pub entries: Vec<EntryMeta>,
    /// Strings entries refer to that are not in their lines (see `StrRef`).
    owned: Vec<String>,
    /// id -> entry, the later entry winning as in pi's `byId` map. A table of entry
    /// indices (4 bytes a slot) rather than a map of strings: a 1 GB session has half a
    /// million ids, and a small table keeps building it out of main memory.
    by_id: HashTable<u32>,
    /// Some id appears on more than one entry.
    pub duplicate_ids: bool,
    /// Parent -> child edges; `neighbors(n)` yields children in pi's order (by timestamp).
    pub graph: DiGraph<(), (), u32>,
    /// Entries without a (resolvable) parent, in file order, as pi's getTree lists them.
    pub roots: Vec<u32>,
    labels: HashMap<String, Label>,
    /// Positions of `session` lines in pi's parsed-entry list (for v1 `firstKeptEntryIndex`).
    header_ordinals: Vec<u32>,
    pub diagnostics: Vec<Diagnostic>,
}

/// At most this many malformed lines are listed one by one; the rest are counted.
const MAX_LISTED: usize = 20;

impl<'a> Session<'a> {
    /// Reads and indexes a session the way pi does, leniently.
    pub fn load(source: &'a Source) -> Result<Session<'a>, LoadError> {
        Self::load_excluding(source, &BTreeSet::new())
    }

    /// Like [`load`](Self::load), treating the given lines as malformed. Used when a line
    /// that looked whole to the index turns out to be damaged once parsed whole.
    pub fn load_excluding(source: &'a Source, bad_lines: &BTreeSet<u32>) -> Result<Session<'a>, LoadError> {
        let data = source.bytes();
        let name = source.name.clone();
        if data.is_empty() {
            return Err(LoadError::Empty { name });
        }
        let Scan { entries, owned, events, crlf, lines } = scan(data, bad_lines);

        // The first parsed line must be the header (pi: `entries[0].type === "session"`
        // with a string id); a first line pi keeps that is anything else is fatal.
        let mut header: Option<(Map<String, Value>, u32)> = None;
        let mut header_lines = Vec::new();
        let first_entry_line = entries.first().map_or(u32::MAX, |e| e.line);
        let mut diags = Vec::new();
        let (mut blank, mut malformed) = (Vec::new(), 0usize);
        let mut first_malformed = None;
        let (mut unknown_types, mut unknown_roles) = (0usize, 0usize);
        for (line, event) in events {
            match event {
                Event::Header(span) => {
                    header_lines.push(line);
                    if header.is_some() {
                        diags.push(warn(
                            Problem::SecondHeader,
                            line,
                            "a second session header; ignored, as pi ignores it (pi 0.73 wrote these by mistake)"
                                .into(),
                        ));
                        continue;
                    }
                    if first_entry_line < line {
                        break;
                    }
                    let value = parse_value(&data[span])
                        .map_err(|e| not_a_session(&name, line, format!("the header is not valid JSON ({e})")))?;
                    let Value::Object(map) = value else { unreachable!("the scan saw an object") };
                    if !map.get("id").is_some_and(Value::is_string) {
                        return Err(not_a_session(&name, line, "the session header has no string `id`".into()));
                    }
                    header = Some((map, line));
                }
                Event::Blank => blank.push(line),
                Event::Malformed(why) => {
                    first_malformed.get_or_insert(line);
                    malformed += 1;
                    if malformed <= MAX_LISTED {
                        let truncated = line == lines && data.last() != Some(&b'\n');
                        let what = if truncated {
                            "truncated last line (no final newline, not complete JSON)".to_string()
                        } else {
                            format!("malformed JSON ({why})")
                        };
                        diags.push(warn(
                            if truncated { Problem::Truncated } else { Problem::Malformed },
                            line,
                            format!("{what}; skipped, as pi skips it"),
                        ));
                    }
                }
                Event::Falsy(text) => diags.push(warn(
                    Problem::NotAnEntry,
                    line,
                    format!("`{text}` is not an entry; skipped, as pi skips it"),
                )),
                Event::NotObject(text) => {
                    if header.is_none() && line <= first_entry_line {
                        return Err(not_a_session(
                            &name,
                            line,
                            format!("the first line is `{text}`, not a session header"),
                        ));
                    }
                    diags.push(warn(
                        Problem::NotObject,
                        line,
                        format!(
                            "`{text}` is JSON but not an object; kept as an entry without type or id, as pi keeps it"
                        ),
                    ));
                }
                Event::UnknownType(ty) => {
                    unknown_types += 1;
                    if unknown_types <= MAX_LISTED {
                        diags.push(note(
                            Problem::UnknownType,
                            line,
                            format!("unknown entry type `{ty}`; kept in the tree, contributes no context (as in pi)"),
                        ));
                    }
                }
                Event::MessageWithoutMessage => diags.push(warn(
                    Problem::MessageWithoutMessage,
                    line,
                    "message entry without a `message`; it gives no context (pi crashes on it when it is on the path)"
                        .into(),
                )),
                Event::Unreadable(why) => diags.push(warn(
                    Problem::Unreadable,
                    line,
                    format!("{why}; kept in the tree as pi keeps it, but pisces cannot show or project its content"),
                )),
                Event::InvalidUtf8 => diags.push(warn(
                    Problem::InvalidUtf8,
                    line,
                    "bytes that are not UTF-8; read with U+FFFD in their place, as pi (Node) reads them".into(),
                )),
                Event::UnknownRole => {
                    unknown_roles += 1;
                    if unknown_roles <= MAX_LISTED {
                        diags.push(note(Problem::UnknownRole, line, "message with an unknown role; kept in the projection, left out of the LLM messages (as in pi)".into()));
                    }
                }
            }
        }
        let Some((header, header_line)) = header else {
            if let Some(first) = entries.first() {
                let what = if first.kind == EntryType::Missing {
                    "no `type`".to_string()
                } else {
                    let ty = parse_value(&data[first.span()]).ok().and_then(|v| v.get("type").map(ToString::to_string));
                    format!("type {}", ty.unwrap_or_else(|| "?".into()))
                };
                // Say why an earlier line did not count, when one did not.
                let before = match first_malformed.filter(|&l| l < first.line) {
                    Some(1) if data.starts_with(b"\xEF\xBB\xBF") => {
                        " (line 1 starts with a UTF-8 byte order mark, which JSON.parse rejects, so pi skips that line)"
                            .to_string()
                    }
                    Some(l) => format!(" (line {l} before it is not valid JSON, so pi skips it)"),
                    None => String::new(),
                };
                return Err(not_a_session(
                    &name,
                    first.line,
                    format!("the first entry has {what}, but a pi session starts with a `session` header{before}"),
                ));
            }
            let reason = if malformed + blank.len() == 0 {
                "no lines".to_string()
            } else if malformed == 0 {
                "it holds only blank lines".to_string()
            } else {
                "no line is a valid session header".to_string()
            };
            return Err(LoadError::NotASession { name, line: None, reason });
        };
        if malformed > MAX_LISTED {
            diags.push(Diagnostic {
                kind: Problem::Malformed,
                severity: Severity::Warning,
                line: None,
                message: format!("{} more malformed lines skipped", malformed - MAX_LISTED),
            });
        }
        if let Some(&first) = blank.first() {
            diags.push(warn(
                Problem::BlankLines,
                first,
                format!("{} blank line{}; skipped, as pi skips them", blank.len(), plural(blank.len())),
            ));
        }
        if let Some(&first) = crlf.first() {
            diags.push(warn(
                Problem::Crlf,
                first,
                format!(
                    "{} line{} end{} in CRLF; read like pi reads them (the \\r is JSON whitespace)",
                    crlf.len(),
                    plural(crlf.len()),
                    if crlf.len() == 1 { "s" } else { "" }
                ),
            ));
        }
        if data.last() != Some(&b'\n') && entries.last().is_some_and(|e| e.span().end == data.len()) {
            diags.push(warn(Problem::NoFinalNewline, lines, "no final newline; pi 1.6 would append one to the file when opening it, pisces leaves the file as it is".into()));
        }
        // Positions of `session` lines in pi's parsed-entry list (headers and entries).
        let header_ordinals = header_lines
            .iter()
            .enumerate()
            .map(|(k, &l)| (entries.partition_point(|e| e.line < l) + k) as u32)
            .collect();
        let (mut entries, mut owned) = (entries, owned);

        let version = version_number(header.get("version"));
        // pi: `version >= 3` needs nothing; else `< 2` runs v1->v2 and `< 3` runs v2->v3
        // (a NaN version runs neither).
        let migrate_v1 = version < 2.0;
        let migrate_v2 = version < 3.0;
        if migrate_v1 {
            // Deterministic ids: `L<line>`, the entry's physical line, the same names pi's
            // oracle uses for these files (pi itself draws random ids on every load).
            let mut prev = StrRef::NONE;
            for e in entries.iter_mut() {
                if e.kind == EntryType::NotObject {
                    // pi's migration crashes assigning an id to a number or a string;
                    // pisces leaves such a line out of the chain.
                    diags.push(warn(Problem::V1NotObject, e.line, "pi cannot migrate this version-1 file past this line (it crashes giving an id to a value that is not an object); pisces leaves the line out of the chain".into()));
                    continue;
                }
                owned.push(format!("L{}", e.line));
                e.parent_id = prev;
                e.id = StrRef::owned(owned.len() - 1);
                prev = e.id;
            }
        }

        let mut session = Session {
            name,
            data,
            header,
            header_line,
            version,
            migrate_v1,
            migrate_v2,
            entries,
            owned,
            by_id: HashTable::new(),
            duplicate_ids: false,
            graph: DiGraph::default(),
            roots: Vec::new(),
            labels: HashMap::default(),
            header_ordinals,
            diagnostics: diags,
        };
        session.link();
        session.resolve_labels();
        Ok(session)
    }

    /// Builds the id map, resolves parents, breaks cycles, orders children, and fills the graph.
    fn link(&mut self) {
        let n = self.entries.len();
        let mut diags = Vec::new();
        self.by_id.reserve(n, |_| 0);
        let (data, owned, entries) = (self.data, &self.owned, &self.entries);
        fn id<'s>(e: &'s EntryMeta, data: &'s [u8], owned: &'s [String]) -> Option<&'s str> {
            e.id.get(&data[e.span()], owned)
        }
        // Inline ids (nearly all) are hashed and compared without going back to the file.
        let hash_of = |e: &EntryMeta| match e.id.inline_bytes() {
            Some(b) => Some(hash_bytes(b)),
            None => id(e, data, owned).map(|s| hash_bytes(s.as_bytes())),
        };
        let same = |a: &EntryMeta, b: &EntryMeta| {
            a.id.same_inline(&b.id).unwrap_or_else(|| id(a, data, owned) == id(b, data, owned))
        };
        let mut shadowed = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let Some(hash) = hash_of(e) else { continue };
            let slot = self.by_id.entry(
                hash,
                |&j| same(&entries[j as usize], e),
                |&j| hash_of(&entries[j as usize]).unwrap_or(0),
            );
            match slot {
                hashbrown::hash_table::Entry::Vacant(v) => {
                    v.insert(i as u32);
                }
                hashbrown::hash_table::Entry::Occupied(mut o) => {
                    shadowed.push((i, std::mem::replace(o.get_mut(), i as u32) as usize));
                }
            }
        }
        for (i, prev) in shadowed {
            self.duplicate_ids = true;
            self.entries[prev].shadowed = true;
            let message = format!(
                "duplicate id {} (also on line {}); the later entry wins, as in pi",
                show_id(self.id(i as u32)),
                self.entries[prev].line
            );
            diags.push(warn(Problem::DuplicateId, self.entries[i].line, message));
        }
        let duplicates = self.duplicate_ids;
        for i in 0..n {
            let e = &self.entries[i];
            if e.parent_id.is_none() {
                continue;
            }
            let same_as_own = e.parent_id.same_inline(&e.id);
            // pi appends each entry as a child of the leaf, so the parent is nearly always
            // the previous line: skip the hash lookup then (unless ids repeat, when only
            // the map knows which entry an id names).
            let previous = |this: &Self| {
                i > 0
                    && !duplicates
                    && e.parent_id
                        .same_inline(&this.entries[i - 1].id)
                        .unwrap_or_else(|| this.id(i as u32 - 1) == this.parent_id(i as u32))
            };
            if same_as_own != Some(true) && previous(self) {
                self.entries[i].set_parent(Some(i as u32 - 1));
                continue;
            }
            let Some(pid) = self.parent_id(i as u32) else { continue };
            let own = self.id(i as u32);
            if Some(pid) == own {
                diags.push(warn(
                    Problem::SelfParent,
                    e.line,
                    format!(
                        "entry {} is its own parent; treated as a root (as pi's tree does; pi's context builder loops on it until it runs out of memory)",
                        show_id(Some(pid))
                    ),
                ));
                continue;
            }
            match self.get(pid) {
                Some(p) => self.entries[i].set_parent(Some(p)),
                None => diags.push(warn(
                    Problem::DanglingParent,
                    e.line,
                    format!(
                        "parent {} of entry {} not found; the entry is treated as a root, as pi's tree does",
                        show_id(Some(pid)),
                        show_id(own)
                    ),
                )),
            }
        }
        self.break_cycles(&mut diags);

        // Children in pi's order: getTree sorts each child list by timestamp (a stable
        // sort; unparseable timestamps compare as "equal", see js::v8_sort_by_key).
        let mut offsets = vec![0u32; n + 1];
        for e in &self.entries {
            if let Some(p) = e.parent() {
                offsets[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut kids = vec![0u32; offsets[n] as usize];
        for (i, e) in self.entries.iter().enumerate() {
            match e.parent() {
                Some(p) => {
                    kids[fill[p as usize] as usize] = i as u32;
                    fill[p as usize] += 1;
                }
                None => self.roots.push(i as u32),
            }
        }
        self.graph = DiGraph::with_capacity(n, kids.len());
        for _ in 0..n {
            self.graph.add_node(());
        }
        for p in 0..n {
            let slice = &mut kids[offsets[p] as usize..offsets[p + 1] as usize];
            if slice.len() > 1 {
                // Only siblings need their timestamps; read them now.
                let times: Vec<Option<f64>> = slice.iter().map(|&c| self.time(c)).collect();
                let mut order: Vec<usize> = (0..slice.len()).collect();
                js::v8_sort_by_key(&mut order, |k| times[k]);
                let sorted: Vec<u32> = order.iter().map(|&k| slice[k]).collect();
                slice.copy_from_slice(&sorted);
            }
            // petgraph lists a node's edges newest first: add them in reverse order.
            for &c in slice.iter().rev() {
                self.graph.add_edge(NodeIndex::new(p), NodeIndex::new(c as usize), ());
            }
        }
        self.diagnostics.extend(diags);
    }

    /// pi has no cycle guard (its path walk loops forever on A -> B -> A). We cut each
    /// cycle at its earliest entry in the file, which becomes a root, and say so.
    fn break_cycles(&mut self, diags: &mut Vec<Diagnostic>) {
        const NEW: u8 = 0;
        const ON_WALK: u8 = 1;
        const DONE: u8 = 2;
        let n = self.entries.len();
        let mut state = vec![NEW; n];
        let mut walk = Vec::new();
        for start in 0..n {
            if state[start] != NEW {
                continue;
            }
            let mut cur = Some(start as u32);
            while let Some(c) = cur {
                match state[c as usize] {
                    NEW => {
                        state[c as usize] = ON_WALK;
                        walk.push(c);
                        cur = self.entries[c as usize].parent();
                    }
                    ON_WALK => {
                        let pos = walk.iter().position(|&w| w == c).expect("on the walk");
                        let cycle = &walk[pos..];
                        let &first = cycle.iter().min().expect("non-empty");
                        let names: Vec<String> = cycle.iter().rev().map(|&m| show_id(self.id(m))).collect();
                        diags.push(warn(
                            Problem::Cycle,
                            self.entries[first as usize].line,
                            format!(
                                "parent cycle {} -> {}; pisces treats {} (the earliest in the file) as a root (pi loops on a path through it until it runs out of memory)",
                                names.join(" -> "),
                                names[0],
                                show_id(self.id(first))
                            ),
                        ));
                        self.entries[first as usize].set_parent(None);
                        break;
                    }
                    _ => break,
                }
            }
            for w in walk.drain(..) {
                state[w as usize] = DONE;
            }
        }
    }

    fn resolve_labels(&mut self) {
        for i in 0..self.entries.len() {
            if self.entries[i].kind != EntryType::Label {
                continue;
            }
            let Ok(v) = self.parse(i as u32) else { continue };
            let Some(target) = v.get("targetId").and_then(Value::as_str) else { continue };
            let target = target.to_string();
            if js::truthy(v.get("label")) {
                let label = Label {
                    text: js::to_js_string(v.get("label")),
                    timestamp: v.get("timestamp").cloned().unwrap_or(Value::Null),
                    entry: i as u32,
                };
                self.labels.insert(target, label);
            } else {
                self.labels.remove(&target);
            }
        }
    }

    /// The raw bytes of entry `i`'s line (without `\n`).
    pub fn raw_line(&self, i: u32) -> &'a [u8] {
        &self.data[self.entries[i as usize].span()]
    }

    /// The raw bytes of the header line.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Entry `i` parsed whole, with pi's in-memory migrations applied (§1.6).
    pub fn parse(&self, i: u32) -> Result<Value, serde_json::Error> {
        let e = &self.entries[i as usize];
        let mut v = parse_value(self.raw_line(i))?;
        if let Value::Object(map) = &mut v {
            if self.migrate_v1 {
                map.insert("id".into(), self.id(i).map_or(Value::Null, |s| Value::String(s.to_string())));
                map.insert("parentId".into(), self.parent_id(i).map_or(Value::Null, |s| Value::String(s.to_string())));
                if e.kind == EntryType::Compaction {
                    self.migrate_first_kept_index(i, map);
                }
            }
            if self.migrate_v2 {
                if let Some(Value::Object(msg)) = map.get_mut("message") {
                    if msg.get("role").and_then(Value::as_str) == Some("hookMessage") {
                        msg.insert("role".into(), Value::String("custom".into()));
                    }
                }
            }
        }
        Ok(v)
    }

    /// v1 compactions name their first kept entry by index into pi's parsed-entry list
    /// (index 0 is the header). Resolved as pi's migration does, in file order: a later
    /// entry has no new id yet, so its old `id` (usually none) is used.
    fn migrate_first_kept_index(&self, i: u32, map: &mut Map<String, Value>) {
        let Some(index) = map.get("firstKeptEntryIndex").and_then(Value::as_f64) else { return };
        map.shift_remove("firstKeptEntryIndex");
        if index < 0.0 || index.fract() != 0.0 {
            return;
        }
        let k = index as u32;
        if self.header_ordinals.binary_search(&k).is_ok() {
            return;
        }
        let headers_before = self.header_ordinals.partition_point(|&h| h < k) as u32;
        let target = k - headers_before;
        if target as usize >= self.entries.len() {
            return;
        }
        let mut own_ordinal = i;
        for &h in &self.header_ordinals {
            if h <= own_ordinal {
                own_ordinal += 1;
            }
        }
        // Entries up to and including this compaction already have their new ids.
        let id = if k <= own_ordinal {
            self.id(target).map(|s| Value::String(s.to_string()))
        } else {
            parse_value(self.raw_line(target)).ok().and_then(|v| v.get("id").filter(|i| !i.is_null()).cloned())
        };
        if let Some(id) = id {
            map.insert("firstKeptEntryId".into(), id);
        }
    }

    /// Entry `i`'s `new Date(timestamp).getTime()` (`None` for NaN), read from its line.
    pub fn time(&self, i: u32) -> Option<f64> {
        object_fields(self.raw_line(i)).and_then(|fields| fields.time())
    }

    /// Entry `i`'s id (version-1 entries: `L<line>`).
    pub fn id(&self, i: u32) -> Option<&str> {
        let e = &self.entries[i as usize];
        e.id.get(&self.data[e.span()], &self.owned)
    }

    /// Entry `i`'s id as pi would print it in JSON: a string, the original JSON of a
    /// non-string id, or `null` for an entry without one.
    pub fn id_value(&self, i: u32) -> Value {
        match self.id(i) {
            None => Value::Null,
            Some(id) => match id.strip_prefix('\0') {
                Some(json) => serde_json::from_str(json).unwrap_or(Value::Null),
                None => Value::String(id.to_string()),
            },
        }
    }

    /// Entry `i`'s `parentId` as written (migrated for version-1 files).
    pub fn parent_id(&self, i: u32) -> Option<&str> {
        let e = &self.entries[i as usize];
        e.parent_id.get(&self.data[e.span()], &self.owned)
    }

    /// The entry pi's index holds for `id`.
    pub fn get(&self, id: &str) -> Option<u32> {
        self.by_id.find(hash_id(id), |&j| self.id(j) == Some(id)).copied()
    }

    /// All ids (for prefix matching), with the entry each names.
    pub fn ids(&self) -> impl Iterator<Item = (&str, u32)> {
        self.by_id.iter().map(|&j| (self.id(j).unwrap_or_default(), j))
    }

    /// pi's default leaf: the last entry in file order, whatever its type (§1.7).
    pub fn default_leaf(&self) -> Option<u32> {
        (!self.entries.is_empty()).then(|| self.entries.len() as u32 - 1)
    }

    /// Children of `i` in pi's order.
    pub fn children(&self, i: u32) -> impl Iterator<Item = u32> + '_ {
        self.graph.neighbors(NodeIndex::new(i as usize)).map(|n| n.index() as u32)
    }

    pub fn parent(&self, i: u32) -> Option<u32> {
        self.entries[i as usize].parent()
    }

    /// The path root..=leaf (cycles were cut when loading, so this terminates).
    pub fn path_to(&self, leaf: u32) -> Vec<u32> {
        let mut path = vec![leaf];
        let mut cur = leaf;
        while let Some(p) = self.parent(cur) {
            path.push(p);
            cur = p;
        }
        path.reverse();
        path
    }

    /// Entries without children, in file order.
    pub fn leaves(&self) -> Vec<u32> {
        (0..self.entries.len() as u32).filter(|&i| self.children(i).next().is_none()).collect()
    }

    /// The resolved label of the entry with this id.
    pub fn label_of(&self, id: &str) -> Option<&Label> {
        self.labels.get(id)
    }

    /// Every resolved label, keyed by target id.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &Label)> {
        self.labels.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The session name: the latest `session_info` (trimmed; empty clears), as pi's
    /// getSessionName reads it.
    pub fn name_of_session(&self) -> Option<String> {
        let i = self.entries.iter().rposition(|e| e.kind == EntryType::SessionInfo)?;
        let v = self.parse(i as u32).ok()?;
        let name = v.get("name").and_then(Value::as_str)?.trim().to_string();
        (!name.is_empty()).then_some(name)
    }

    /// The header's session id.
    pub fn session_id(&self) -> &str {
        self.header.get("id").and_then(Value::as_str).unwrap_or_default()
    }

    /// The entry's id for display (`L<line>` for version-1 entries, `#N` without one).
    pub fn display_id(&self, i: u32) -> Cow<'_, str> {
        match self.id(i) {
            Some(id) if !id.starts_with('\0') => Cow::Borrowed(id),
            _ => Cow::Owned(format!("#{}", self.entries[i as usize].line)),
        }
    }

    /// Problems that `--strict` fails on.
    pub fn warnings(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count()
    }
}

fn hash_id(id: &str) -> u64 {
    hash_bytes(id.as_bytes())
}

fn hash_bytes(b: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.finish()
}

fn version_number(v: Option<&Value>) -> f64 {
    match v {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(_) => f64::NAN,
    }
}

fn show_id(id: Option<&str>) -> String {
    match id {
        None => "(no id)".into(),
        Some(s) if s.starts_with('\0') => s[1..].to_string(),
        Some(s) => s.to_string(),
    }
}

fn warn(kind: Problem, line: u32, message: String) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Warning, line: Some(line), message }
}

fn note(kind: Problem, line: u32, message: String) -> Diagnostic {
    Diagnostic { kind, severity: Severity::Note, line: Some(line), message }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn not_a_session(name: &str, line: u32, reason: String) -> LoadError {
    LoadError::NotASession { name: name.to_string(), line: Some(line), reason }
}
