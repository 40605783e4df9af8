//! Forking a session into a new file (docs/pi-format.md §4): the path to an entry as pi's
//! `createBranchedSession` writes it, the same path as `/export x.jsonl` writes it, or the
//! whole file as `forkFrom` (`pi --fork`) copies it.
//!
//! Every copied line keeps its bytes: only the values that must change are replaced in the
//! line's text (`parentId` when the path is re-chained, a compaction's `firstKeptEntryId`
//! that named a removed label, and what pi's in-memory migration of a version-1 or
//! version-2 file changes), so number formatting, escapes and key order stay exactly as
//! they were. A line that ends in `\r\n` is written with `\n`.

use crate::session::walk::{skip_ws, string_end, value_end};
use std::borrow::Cow;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::{Map, Value};

use super::Pi;
use crate::session::entry::{EntryIdx, EntryType, Id, Role};
use crate::session::js::{self, parse_value};
use crate::session::write::{Edit, Fork, ForkError, NewLine, Shape};
use crate::session::Session;

/// A version-3 header in pi's key order: `type, version, id, timestamp, cwd,
/// parentSession?`.
pub fn header_line(id: &str, timestamp: &str, cwd: &str, parent_session: Option<&str>) -> String {
    let mut m = Map::new();
    m.insert("type".into(), "session".into());
    m.insert("version".into(), 3.into());
    m.insert("id".into(), id.into());
    m.insert("timestamp".into(), timestamp.into());
    m.insert("cwd".into(), cwd.into());
    if let Some(p) = parent_session {
        m.insert("parentSession".into(), p.into());
    }
    serde_json::to_string(&Value::Object(m)).expect("a map of strings serializes")
}

/// A new session id as pi 1.6 makes one: a UUIDv7.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// pi's session file name for a header timestamp and id:
/// `<timestamp with : and . replaced by ->_<id>.jsonl`.
pub fn file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// pi's default session folder for a (resolved) cwd: `<agent dir>/sessions/--<enc>--`,
/// where `<enc>` is the cwd without its leading `/` and with `/`, `\` and `:` as `-`.
pub fn default_session_dir(agent_dir: &Path, cwd: &str) -> PathBuf {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    agent_dir.join("sessions").join(format!("--{}--", trimmed.replace(['/', '\\', ':'], "-")))
}

/// pi's `resolvePath` (POSIX): `~` and `~/…` expanded with `home`, then made absolute
/// against `base` and normalized lexically like Node's `path.resolve` (`.` and `..`
/// folded, repeated and trailing `/` dropped; symbolic links are not followed).
pub fn resolve_path(input: &str, base: &Path, home: Option<&Path>) -> String {
    let expanded: Cow<str> = match home {
        Some(h) if input == "~" => h.to_string_lossy(),
        Some(h) if input.starts_with("~/") => Cow::Owned(h.join(&input[2..]).to_string_lossy().into_owned()),
        _ => Cow::Borrowed(input),
    };
    let joined = if Path::new(expanded.as_ref()).is_absolute() {
        PathBuf::from(expanded.as_ref())
    } else {
        base.join(expanded.as_ref())
    };
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in joined.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let mut out = String::new();
    for p in parts {
        out.push('/');
        out.push_str(&p.to_string_lossy());
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The new session for the path root..=`leaf` (`None`: an empty session, as pi's `/fork`
/// makes for a first user message).
pub fn path_fork<'a>(pi: &Pi, s: &Session<'a>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'a>, ForkError> {
    let path = leaf.map(|l| s.path_to(l)).unwrap_or_default();
    let mut notes = Vec::new();
    if let Some(l) = leaf {
        let e = &s.entries[l];
        if e.kind == EntryType::NotObject {
            return Err(ForkError::Invalid(format!(
                "line {} is JSON but not an entry object; there is nothing to fork at",
                e.line
            )));
        }
        if e.shadowed() {
            let id = s.display_id(l);
            let later = s.id(l).and_then(|id| s.get_id(id)).map(|j| s.entries[j].line).unwrap_or_default();
            notes.push(format!(
                "the entry on line {} has id {id}, which the later entry on line {later} also has; pi cannot fork at it (its index keeps the later one), pisces forks the entry on line {} as named",
                e.line, e.line
            ));
        }
    }
    let mut seen: HashMap<Id, EntryIdx> = HashMap::default();
    for &i in &path {
        if let Some(id) = s.id(i) {
            if let Some(j) = seen.insert(id, i) {
                return Err(ForkError::Invalid(format!(
                    "the path holds two entries with id {} (lines {} and {}); a session with both would link its entries wrongly",
                    s.display_id(i),
                    s.entries[j].line,
                    s.entries[i].line
                )));
            }
        }
    }

    let mut lines = Vec::with_capacity(path.len());
    let mut copied = Vec::with_capacity(path.len());
    let mut labels_dropped = 0;
    // Label entries passed since the last kept entry, and what each now stands for.
    let mut pending: Vec<EntryIdx> = Vec::new();
    let mut replacement: HashMap<String, Value> = HashMap::default();
    let mut prev = Value::Null;
    for &i in &path {
        let kind = s.entries[i].kind;
        if shape == Shape::Branch && kind == EntryType::Label {
            pending.push(i);
            labels_dropped += 1;
            continue;
        }
        let own = s.id_value(i);
        for p in pending.drain(..) {
            if let Some(id) = s.id_str(p) {
                replacement.insert(id.to_string(), own.clone());
            }
        }
        let remap = |fk: &Value| -> Option<Value> {
            let fk_str = fk.as_str()?;
            if Some(fk_str) == own.as_str() {
                return None; // retain-none stays
            }
            replacement.get(fk_str).cloned()
        };
        lines.push(copy_entry(pi, s, i, Some(prev.clone()), &remap)?);
        copied.push(i);
        prev = own;
    }

    let mut labels_emitted = 0;
    if shape == Shape::Branch {
        let kept: HashSet<Id> = copied.iter().filter_map(|&i| s.id(i)).collect();
        let mut taken: HashSet<String> = kept.iter().map(|id| id.to_string()).collect();
        for label in resolved_labels(s) {
            if !kept.contains(&label.key.id()) {
                continue;
            }
            let id = super::write::new_entry_id(|id| taken.contains(id));
            taken.insert(id.clone());
            let mut m = Map::new();
            m.insert("type".into(), "label".into());
            m.insert("id".into(), id.clone().into());
            m.insert("parentId".into(), prev.clone());
            if let Some(ts) = label.timestamp {
                m.insert("timestamp".into(), ts);
            }
            m.insert("targetId".into(), label.target);
            m.insert("label".into(), label.label);
            lines.push(NewLine::New(serde_json::to_string(&Value::Object(m)).expect("JSON values serialize")));
            labels_emitted += 1;
            prev = Value::String(id);
        }
    }
    Ok(Fork { lines, copied, labels_dropped, labels_emitted, notes, session_id: None })
}

/// Every entry of the file, in file order, as pi's `forkFrom` copies them, migrated
/// first if the file is version 1 or 2 (pi copies those unmigrated under a version-3
/// header, which leaves a version-1 copy without ids).
pub fn whole_fork<'a>(pi: &Pi, s: &Session<'a>) -> Result<Fork<'a>, ForkError> {
    let all: Vec<EntryIdx> = s.entries.indices().collect();
    let mut lines = Vec::with_capacity(all.len());
    for &i in &all {
        let parent = if pi.migrate_v1 && s.entries[i].kind != EntryType::NotObject {
            Some(s.parent_id(i).map_or(Value::Null, Id::to_value))
        } else {
            None
        };
        lines.push(copy_entry(pi, s, i, parent, &|_| None)?);
    }
    Ok(Fork { lines, copied: all, labels_dropped: 0, labels_emitted: 0, notes: Vec::new(), session_id: None })
}

/// A `targetId` as pi's map keys it: a string, or the JSON text of another value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Str(String),
    Json(String),
}

impl Key {
    fn id(&self) -> Id<'_> {
        match self {
            Key::Str(s) => Id::Str(s),
            Key::Json(j) => Id::Json(j),
        }
    }
}

/// One label of pi's `labelsById`, in the map's order.
struct ResolvedLabel {
    key: Key,
    target: Value,
    label: Value,
    /// `None`: the label entry had no `timestamp` (pi then writes none).
    timestamp: Option<Value>,
}

/// pi's `labelsById` / `labelTimestampsById`, built over the whole file in file order: a
/// truthy label sets its target (an existing key keeps its place, as in a JS `Map`), a
/// falsy one deletes it (a later set puts it at the end).
fn resolved_labels(s: &Session) -> Vec<ResolvedLabel> {
    let mut order: Vec<Option<ResolvedLabel>> = Vec::new();
    let mut pos: HashMap<Key, usize> = HashMap::default();
    for i in s.entries.indices() {
        if s.entries[i].kind != EntryType::Label {
            continue;
        }
        let Ok(v) = s.parse(i) else { continue };
        let key = match v.get("targetId") {
            None | Some(Value::Null) => continue,
            Some(Value::String(t)) => Key::Str(t.clone()),
            Some(other) => Key::Json(other.to_string()),
        };
        if js::truthy(v.get("label")) {
            let rec = ResolvedLabel {
                key: key.clone(),
                target: v["targetId"].clone(),
                label: v["label"].clone(),
                timestamp: v.get("timestamp").cloned(),
            };
            match pos.get(&key) {
                Some(&p) => order[p] = Some(rec),
                None => {
                    pos.insert(key, order.len());
                    order.push(Some(rec));
                }
            }
        } else if let Some(p) = pos.remove(&key) {
            order[p] = None;
        }
    }
    order.into_iter().flatten().collect()
}

/// The changes one copied entry needs.
#[derive(Default)]
struct Wants {
    id: Option<Value>,
    parent: Option<Value>,
    first_kept: Option<Value>,
    drop_first_kept_index: bool,
    role_custom: bool,
}

/// Entry `i`'s line with `parentId` set to `parent` (when given), a compaction's
/// `firstKeptEntryId` remapped by `remap`, and pi's migration applied (version 1: `id`,
/// `parentId`, `firstKeptEntryIndex` -> `firstKeptEntryId`; version 2: `hookMessage` ->
/// `custom`).
fn copy_entry<'a>(
    pi: &Pi,
    s: &Session<'a>,
    i: EntryIdx,
    parent: Option<Value>,
    remap: &dyn Fn(&Value) -> Option<Value>,
) -> Result<NewLine<'a>, ForkError> {
    let meta = &s.entries[i];
    let raw = s.raw_line(i);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    if meta.kind == EntryType::NotObject {
        return Ok(NewLine::Copy { raw, edits: Vec::new() });
    }
    let mut wants = Wants { parent, ..Wants::default() };
    if pi.migrate_v1 {
        wants.id = Some(s.id_value(i));
    }
    if pi.migrate_v2 && meta.kind == EntryType::Message && meta.role == Role::HookMessage {
        wants.role_custom = true;
    }
    let obj = scan_object(raw, 0);
    if meta.kind == EntryType::Compaction {
        // The value pi holds in memory: migrated for version-1 files.
        let current = if pi.migrate_v1 {
            let v = s.parse(i)?;
            wants.drop_first_kept_index =
                obj.as_ref().is_some_and(|o| o.find(raw, "firstKeptEntryIndex").is_some_and(|m| m.is_number(raw)));
            if wants.drop_first_kept_index {
                wants.first_kept = v.get("firstKeptEntryId").cloned();
            }
            v.get("firstKeptEntryId").cloned()
        } else {
            obj.as_ref().and_then(|o| o.find(raw, "firstKeptEntryId")).and_then(|m| m.value(raw))
        };
        if let Some(new) = current.as_ref().and_then(remap) {
            wants.first_kept = Some(new);
        }
    }
    if let Some(edits) = obj.and_then(|o| splice(raw, &o, &wants)) {
        return Ok(NewLine::Copy { raw, edits });
    }
    // The splicer gave up (an odd line: duplicate keys in the way, a nested `message`
    // that is not an object): write the entry as pi would, from its parsed value.
    let mut v = s.parse(i)?;
    if let Value::Object(m) = &mut v {
        if let Some(p) = wants.parent {
            m.insert("parentId".into(), p);
        }
        if let Some(fk) = wants.first_kept {
            m.insert("firstKeptEntryId".into(), fk);
        }
    }
    Ok(NewLine::New(serde_json::to_string(&v).expect("JSON values serialize")))
}

/// The edits that give `raw` what `wants` asks for, or `None` when they would overlap.
fn splice(raw: &[u8], obj: &Obj, wants: &Wants) -> Option<Vec<Edit>> {
    let mut edits = Vec::new();
    let mut live = obj.members.len();
    if wants.drop_first_kept_index {
        for (k, m) in obj.members.iter().enumerate() {
            if m.key_is(raw, "firstKeptEntryIndex") {
                let range = if k > 0 {
                    obj.members[k - 1].value.end..m.value.end
                } else if let Some(next) = obj.members.get(1) {
                    m.key_start..next.key_start
                } else {
                    m.key_start..m.value.end
                };
                edits.push(Edit { range, text: String::new() });
                live -= 1;
            }
        }
    }
    let mut appends = String::new();
    let mut set = |key: &str, value: &Value, edits: &mut Vec<Edit>| {
        let hits: Vec<&Member> = obj.members.iter().filter(|m| m.key_is(raw, key)).collect();
        let text = serde_json::to_string(value).expect("JSON values serialize");
        if hits.is_empty() {
            if live > 0 {
                appends.push(',');
            }
            appends.push_str(&serde_json::to_string(key).expect("a string serializes"));
            appends.push(':');
            appends.push_str(&text);
            live += 1;
        }
        for m in hits {
            if m.value(raw).as_ref() != Some(value) {
                edits.push(Edit { range: m.value.clone(), text: text.clone() });
            }
        }
    };
    // pi's migration sets `id`, then `parentId`, then `firstKeptEntryId`: new keys go
    // to the end of the object in that order.
    if let Some(id) = &wants.id {
        set("id", id, &mut edits);
    }
    if let Some(p) = &wants.parent {
        set("parentId", p, &mut edits);
    }
    if let Some(fk) = &wants.first_kept {
        set("firstKeptEntryId", fk, &mut edits);
    }
    if !appends.is_empty() {
        edits.push(Edit { range: obj.close..obj.close, text: appends });
    }
    if wants.role_custom {
        let message = obj.members.iter().rev().find(|m| m.key_is(raw, "message"))?;
        let inner = scan_object(raw, message.value.start)?;
        for m in inner.members.iter().filter(|m| m.key_is(raw, "role")) {
            edits.push(Edit { range: m.value.clone(), text: "\"custom\"".into() });
        }
    }
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    if edits.windows(2).any(|w| w[0].range.end > w[1].range.start) {
        return None;
    }
    Some(edits)
}

/// A JSON object's top-level members, found without parsing their values.
struct Obj {
    members: Vec<Member>,
    /// Offset of the closing `}`.
    close: usize,
}

struct Member {
    /// Offset of the key's opening quote.
    key_start: usize,
    /// The key's text between its quotes, as written (escapes undecoded).
    key: Range<usize>,
    value: Range<usize>,
}

impl Obj {
    /// The last member named `key` (the one `JSON.parse` keeps).
    fn find(&self, raw: &[u8], key: &str) -> Option<&Member> {
        self.members.iter().rev().find(|m| m.key_is(raw, key))
    }
}

impl Member {
    fn key_is(&self, raw: &[u8], key: &str) -> bool {
        let text = &raw[self.key.clone()];
        if !text.contains(&b'\\') {
            return text == key.as_bytes();
        }
        let quoted = &raw[self.key.start - 1..self.key.end + 1];
        serde_json::from_slice::<String>(quoted).is_ok_and(|k| k == key)
    }

    fn value(&self, raw: &[u8]) -> Option<Value> {
        parse_value(&raw[self.value.clone()]).ok()
    }

    fn is_number(&self, raw: &[u8]) -> bool {
        matches!(raw.get(self.value.start), Some(b'-' | b'0'..=b'9'))
    }
}

/// Scans the object starting at (or after whitespace at) `b[start]`. The text is known
/// to be JSON (it parsed), so this only finds where members are.
fn scan_object(b: &[u8], start: usize) -> Option<Obj> {
    let mut i = skip_ws(b, start);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut members = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Some(Obj { members, close: i });
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key = i + 1..key_end - 1;
        let key_start = i;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i)?;
        members.push(Member { key_start, key, value: i..end });
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(Obj { members, close: i }),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Source;

    fn session(text: &str) -> Source {
        Source::from_bytes("t.jsonl", text.as_bytes().to_vec())
    }

    fn lines(f: &Fork) -> Vec<String> {
        f.lines.iter().map(|l| String::from_utf8(l.to_bytes()).unwrap()).collect()
    }

    const HEAD: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn scans_top_level_members_only() {
        let raw = br#"{"a":{"parentId":"x","b":[1,"}",{"c":"\"]"}]}, "parentId" : "p1" ,"n":-1.5e3,"t":true}"#;
        let o = scan_object(raw, 0).unwrap();
        let keys: Vec<&str> = o.members.iter().map(|m| std::str::from_utf8(&raw[m.key.clone()]).unwrap()).collect();
        assert_eq!(keys, ["a", "parentId", "n", "t"]);
        assert_eq!(&raw[o.find(raw, "parentId").unwrap().value.clone()], br#""p1""#);
        assert_eq!(&raw[o.find(raw, "n").unwrap().value.clone()], b"-1.5e3");
        assert_eq!(o.close, raw.len() - 1);
        let esc = br#"{"parent\u0049d":null}"#;
        assert!(scan_object(esc, 0).unwrap().find(esc, "parentId").is_some());
    }

    #[test]
    fn rechains_around_labels_and_remaps_first_kept() {
        // The case verified against pi (§4.1): m, label, m <- label, compaction(firstKept =
        // label), m; other bytes (spacing, number format, escapes) stay as they are.
        let text = [
            HEAD,
            r#"{"type":"message","id":"8f1b","parentId":null,"timestamp":"t1","message":{"role":"user","content":"hi \u00e9","timestamp":1.0e3}}"#,
            r#"{"type":"label","id":"922a","parentId":"8f1b","timestamp":"t2","targetId":"8f1b","label":"start"}"#,
            r#"{"type":"message","id":"dc75","parentId":"922a","timestamp":"t3","message":{"role":"assistant","content":[]}}"#,
            r#"{"type":"compaction","id":"00c1", "parentId": "dc75","timestamp":"t4","summary":"s","firstKeptEntryId":"922a","tokensBefore":5}"#,
            r#"{"type":"message","id":"6e16","parentId":"00c1","timestamp":"t5","message":{"role":"user","content":"x"}}"#,
        ]
        .join("\n")
            + "\n";
        let src = session(&text);
        let s = crate::formats::pi::read(&src).unwrap();
        let f = s.dialect().writer().unwrap().fork(&s, s.default_leaf(), Shape::Branch).unwrap();
        let got = lines(&f);
        let src_lines: Vec<&str> = text.lines().collect();
        assert_eq!(got[0], src_lines[1]);
        assert_eq!(got[1], src_lines[3].replace(r#""parentId":"922a""#, r#""parentId":"8f1b""#));
        assert_eq!(
            got[2],
            r#"{"type":"compaction","id":"00c1", "parentId": "dc75","timestamp":"t4","summary":"s","firstKeptEntryId":"dc75","tokensBefore":5}"#
        );
        assert_eq!(got[3], src_lines[5]);
        let label: Value = serde_json::from_str(&got[4]).unwrap();
        let keys: Vec<&String> = label.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "id", "parentId", "timestamp", "targetId", "label"]);
        assert_eq!(label["parentId"], "6e16");
        assert_eq!(label["timestamp"], "t2");
        assert_eq!(label["targetId"], "8f1b");
        assert_eq!((f.labels_dropped, f.labels_emitted, got.len()), (1, 1, 5));
    }

    #[test]
    fn labels_keep_the_order_of_a_js_map() {
        // b set, a set, b replaced (keeps its place), c set, c cleared, c set again (now last).
        let mut text = vec![HEAD.to_string()];
        let ids = ["a", "b", "c"];
        let mut prev = "null".to_string();
        for id in ids {
            text.push(format!(r#"{{"type":"message","id":"{id}","parentId":{prev},"timestamp":"t","message":{{"role":"user","content":"x"}}}}"#));
            prev = format!("\"{id}\"");
        }
        for (n, (target, label)) in
            [("b", "B1"), ("a", "A"), ("b", "B2"), ("c", "C1"), ("c", ""), ("c", "C2")].iter().enumerate()
        {
            text.push(format!(
                r#"{{"type":"label","id":"l{n}","parentId":{prev},"timestamp":"ts{n}","targetId":"{target}","label":"{label}"}}"#
            ));
            prev = format!("\"l{n}\"");
        }
        let text = text.join("\n") + "\n";
        let src = session(&text);
        let s = crate::formats::pi::read(&src).unwrap();
        let f = s.dialect().writer().unwrap().fork(&s, s.default_leaf(), Shape::Branch).unwrap();
        let got: Vec<(String, String, String)> = lines(&f)[3..]
            .iter()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["targetId"].as_str().unwrap().into(),
                    v["label"].as_str().unwrap().into(),
                    v["timestamp"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want = [("b", "B2", "ts2"), ("a", "A", "ts1"), ("c", "C2", "ts5")];
        assert_eq!(got, want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())));
    }

    #[test]
    fn linear_keeps_labels_and_rechains() {
        let text = [
            HEAD,
            r#"{"type":"message","id":"a","parentId":"gone","timestamp":"t","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"label","id":"l","parentId":"a","timestamp":"t","targetId":"a","label":"L"}"#,
            r#"{"type":"message","id":"b","parentId":"l","timestamp":"t","message":{"role":"user","content":"y"}}"#,
        ]
        .join("\r\n")
            + "\r\n";
        let src = session(&text);
        let s = crate::formats::pi::read(&src).unwrap();
        let f = s.dialect().writer().unwrap().fork(&s, s.default_leaf(), Shape::Linear).unwrap();
        let got = lines(&f);
        assert_eq!(got.len(), 3);
        assert!(got[0].contains(r#""parentId":null"#) && !got[0].ends_with('\r'), "{}", got[0]);
        assert_eq!(got[1], r#"{"type":"label","id":"l","parentId":"a","timestamp":"t","targetId":"a","label":"L"}"#);
        assert!(got[2].contains(r#""parentId":"l""#));
    }

    #[test]
    fn version_1_entries_are_migrated_in_place() {
        let text = [
            r#"{"type":"session","id":"old","timestamp":"t","cwd":"/p"}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
            r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":1,"tokensBefore":3}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"c","display":true}}"#,
        ]
        .join("\n")
            + "\n";
        let src = session(&text);
        let s = crate::formats::pi::read(&src).unwrap();
        let f = s.dialect().writer().unwrap().fork(&s, s.default_leaf(), Shape::Branch).unwrap();
        let got = lines(&f);
        assert_eq!(
            got[0],
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi"},"id":"L2","parentId":null}"#
        );
        assert_eq!(
            got[2],
            r#"{"type":"compaction","timestamp":"t","summary":"s","tokensBefore":3,"id":"L4","parentId":"L3","firstKeptEntryId":"L2"}"#
        );
        assert_eq!(
            got[3],
            r#"{"type":"message","timestamp":"t","message":{"role":"custom","customType":"x","content":"c","display":true},"id":"L5","parentId":"L4"}"#
        );
        let all = s.dialect().writer().unwrap().fork(&s, None, Shape::Whole).unwrap();
        assert_eq!(lines(&all), got);
    }

    #[test]
    fn resolves_paths_like_node() {
        let base = Path::new("/home/dev/dir");
        let home = Some(Path::new("/home/u"));
        assert_eq!(resolve_path("/a/b/../c/./", base, home), "/a/c");
        assert_eq!(resolve_path("x/y", base, home), "/home/dev/dir/x/y");
        assert_eq!(resolve_path("~/proj", base, home), "/home/u/proj");
        assert_eq!(resolve_path("~", base, home), "/home/u");
        assert_eq!(resolve_path("/..", base, home), "/");
        assert_eq!(
            default_session_dir(Path::new("/h/.pi/agent"), "/home/dev/proj"),
            Path::new("/h/.pi/agent/sessions/--home-dev-proj--")
        );
        assert_eq!(file_name("2026-11-29T18:53:47.021Z", "abc"), "2026-11-29T18-53-47-021Z_abc.jsonl");
        let id = new_session_id();
        assert!(id.len() == 36 && id.as_bytes()[14] == b'7', "{id}");
    }
}
