//! pi's context projection (docs/pi-format.md §2.1), exactly.
//!
//! The code follows pi 1.6.0's `buildSessionProjection` step by step; comments name the
//! pi function each part mirrors. Only the entries the projection needs are parsed whole:
//! the last compaction, the kept range and what follows it, the context edits among them,
//! and the last entries that set the model and thinking level.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{json, Map, Value};

use crate::session::entry::{EntryIdx, EntryType, Id, Role};
use crate::session::format::Unreadable;
use crate::session::js;
use crate::session::projection::{put, EditKind, ProjectedEntry, Projection};
use crate::session::Session;

/// `buildSessionProjection(entries, leafId)`; `leaf == None` is pi's `null` leaf.
pub fn project(s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
    let Some(leaf) = leaf else {
        return Ok(Projection { thinking_level: Some("off".into()), ..Default::default() });
    };
    let path = s.path_to(leaf);
    let mut parsed = Parsed { s, cache: HashMap::new() };

    // getSessionContextSettings: the last setting on the path wins, so scan backwards.
    let mut thinking_level = Some(Value::from("off"));
    if let Some(&i) = path.iter().rev().find(|&&i| s.entries[i].kind == EntryType::ThinkingLevelChange) {
        thinking_level = parsed.get(i)?.get("thinkingLevel").cloned();
    }
    let mut model = None;
    let sets_model = |i: &&EntryIdx| {
        let e = &s.entries[**i];
        e.kind == EntryType::ModelChange || (e.kind == EntryType::Message && e.role == Role::Assistant)
    };
    if let Some(&i) = path.iter().rev().find(sets_model) {
        let v = parsed.get(i)?;
        let mut m = Map::new();
        if s.entries[i].kind == EntryType::ModelChange {
            put(&mut m, "provider", v.get("provider"));
            put(&mut m, "modelId", v.get("modelId"));
        } else {
            let msg = v.get("message");
            put(&mut m, "provider", msg.and_then(|m| m.get("provider")));
            put(&mut m, "modelId", msg.and_then(|m| m.get("model")));
        }
        model = Some(Value::Object(m));
    }

    // buildContextEntries: the last compaction C; C, then the kept entries before it
    // (from firstKeptEntryId, system messages dropped), then everything after it.
    let context: Vec<EntryIdx> = match path.iter().rposition(|&i| s.entries[i].kind == EntryType::Compaction) {
        None => path.clone(),
        Some(c_pos) => {
            let c = path[c_pos];
            // pi looks C up by id on the path (the first entry with that id); with unique
            // ids that is C itself.
            let c_id = s.id(c);
            let c_idx =
                if s.duplicate_ids { path.iter().position(|&i| s.id(i) == c_id).unwrap_or(c_pos) } else { c_pos };
            let first_kept = parsed.get(c)?.get("firstKeptEntryId").cloned();
            let first_kept = first_kept.as_ref().and_then(id_key);
            let first_kept = first_kept.as_ref().map(IdKey::id);
            // The first path entry (before C) whose id is firstKeptEntryId. With unique
            // ids that is the entry pi's `byId` finds, if it is on the path, and the only
            // one: found walking back from C (the kept entries are the last before it)
            // rather than through the id map, which a session read from its kept index
            // would otherwise build for this alone.
            let kept_from = match first_kept {
                Some(fk) if s.duplicate_ids => s.get_id(fk).and_then(|k| path[..c_idx].iter().position(|&i| i == k)),
                Some(fk) => path[..c_idx].iter().rposition(|&i| s.id(i) == Some(fk)),
                None => path[..c_idx].iter().position(|&i| s.id(i).is_none()),
            };
            let mut out = vec![c];
            for &i in kept_from.map_or(&[][..], |from| &path[from..c_idx]) {
                let e = &s.entries[i];
                if !(e.kind == EntryType::Message && e.role == Role::System) {
                    out.push(i);
                }
            }
            out.extend_from_slice(&path[c_idx + 1..]);
            out
        }
    };

    // Context edits inside the context entries: the last one per target wins.
    let mut edits: HashMap<IdKey, EntryIdx> = HashMap::new();
    for &i in &context {
        if s.entries[i].kind == EntryType::ContextEdit {
            if let Some(target) = parsed.get(i)?.get("targetId").and_then(id_key) {
                edits.insert(target, i);
            }
        }
    }

    let mut messages = Vec::new();
    let mut entries = Vec::with_capacity(context.len());
    for (pos, &i) in context.iter().enumerate() {
        let e = &s.entries[i];
        let start = messages.len();
        let mut edit = None;
        // An older compaction inside the kept range contributes nothing.
        if contributes(e.kind) && !(e.kind == EntryType::Compaction && pos > 0) {
            let v = parsed.take(i)?;
            let mut produced = entry_messages(v);
            if let Some(&edit_entry) = s.id(i).and_then(|id| edits.get(&IdKey::of(id))) {
                let ev = parsed.get(edit_entry)?;
                edit = apply_edit(&mut produced, &ev).map(|k| (edit_entry, k));
            }
            messages.extend(produced);
        }
        entries.push(ProjectedEntry { entry: i, messages: start..messages.len(), edit });
    }
    Ok(Projection {
        leaf: Some(leaf),
        path,
        thinking_level,
        model,
        entries,
        messages,
        anthropic: None,
        responses: None,
        settings: None,
    })
}

/// Entry types that can produce messages (others are skipped without parsing).
fn contributes(kind: EntryType) -> bool {
    matches!(kind, EntryType::Message | EntryType::CustomMessage | EntryType::BranchSummary | EntryType::Compaction)
}

/// Whole-entry parses, kept while more than one step needs them.
struct Parsed<'s, 'a> {
    s: &'s Session<'a>,
    cache: HashMap<EntryIdx, Rc<Value>>,
}

impl Parsed<'_, '_> {
    /// Entry `i` parsed, owned: the cached copy if nobody else holds it (a context entry
    /// is read once; its messages move out of it rather than being copied).
    fn take(&mut self, i: EntryIdx) -> Result<Value, Unreadable> {
        match self.cache.remove(&i) {
            Some(rc) => Ok(Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone())),
            None => self.s.parse(i),
        }
    }

    fn get(&mut self, i: EntryIdx) -> Result<Rc<Value>, Unreadable> {
        if let Some(v) = self.cache.get(&i) {
            return Ok(v.clone());
        }
        let v = Rc::new(self.s.parse(i)?);
        self.cache.insert(i, v.clone());
        Ok(v)
    }
}

/// An id value from an entry's field (`firstKeptEntryId`, `targetId`), as the index keys
/// ids: a string, or the JSON text of anything else.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum IdKey {
    Str(String),
    Json(String),
}

impl IdKey {
    fn of(id: Id) -> IdKey {
        match id {
            Id::Str(s) => IdKey::Str(s.to_string()),
            Id::Json(j) => IdKey::Json(j.to_string()),
        }
    }

    fn id(&self) -> Id<'_> {
        match self {
            IdKey::Str(s) => Id::Str(s),
            IdKey::Json(j) => Id::Json(j),
        }
    }
}

fn id_key(v: &Value) -> Option<IdKey> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(IdKey::Str(s.clone())),
        other => Some(IdKey::Json(other.to_string())),
    }
}

/// `sessionEntryToContextMessages`, consuming the parsed entry.
pub fn entry_messages(entry: Value) -> Vec<Value> {
    let Value::Object(mut entry) = entry else { return vec![] };
    let ty = entry.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    match ty.as_str() {
        "message" => match entry.swap_remove("message") {
            // pi would crash on a message entry without a message; it contributes nothing.
            None | Some(Value::Null) => vec![],
            Some(Value::Object(mut msg)) => {
                let role = msg.get("role").and_then(Value::as_str).unwrap_or_default();
                if js::is_nullish(msg.get("content")) {
                    // `{...message, content: …}`: replaced in place, or added at the end.
                    match role {
                        "system" => {
                            msg.insert("content".into(), Value::from(""));
                        }
                        "user" | "assistant" | "toolResult" => {
                            msg.insert("content".into(), json!([]));
                        }
                        _ => {}
                    }
                }
                vec![Value::Object(msg)]
            }
            Some(other) => vec![other],
        },
        "custom_message" => {
            let mut m = Map::new();
            m.insert("role".into(), "custom".into());
            put(&mut m, "customType", entry.get("customType"));
            let content = entry.swap_remove("content").filter(|c| !c.is_null()).unwrap_or(json!([]));
            m.insert("content".into(), content);
            put(&mut m, "display", entry.get("display"));
            put(&mut m, "details", entry.get("details"));
            m.insert("timestamp".into(), date(entry.get("timestamp")));
            vec![Value::Object(m)]
        }
        "branch_summary" if js::truthy(entry.get("summary")) => {
            let mut m = Map::new();
            m.insert("role".into(), "branchSummary".into());
            put(&mut m, "summary", entry.get("summary"));
            put(&mut m, "fromId", entry.get("fromId"));
            m.insert("timestamp".into(), date(entry.get("timestamp")));
            vec![Value::Object(m)]
        }
        "compaction" => {
            let mut m = Map::new();
            m.insert("role".into(), "compactionSummary".into());
            put(&mut m, "summary", entry.get("summary"));
            put(&mut m, "tokensBefore", entry.get("tokensBefore"));
            m.insert("timestamp".into(), date(entry.get("timestamp")));
            let summary = Value::Object(m);
            match entry.swap_remove("systemMessage") {
                Some(sys) if js::truthy(Some(&sys)) => vec![sys, summary],
                _ => vec![summary],
            }
        }
        _ => vec![],
    }
}

fn date(v: Option<&Value>) -> Value {
    js::date_ms(v).map_or(Value::Null, js::number)
}

/// `projectContextEntry`'s edit step. Returns what the edit did, or `None` if the edit
/// has no `replacement` at all (pi would crash; pisces ignores such an edit).
pub(crate) fn apply_edit(messages: &mut Vec<Value>, edit: &Value) -> Option<EditKind> {
    let replacement = edit.get("replacement")?;
    if replacement.is_null() {
        messages.clear();
        return Some(EditKind::Omit);
    }
    let new_content = replacement.get("content");
    for m in messages.iter_mut() {
        let Value::Object(msg) = m else { continue };
        let role = msg.get("role").and_then(Value::as_str).unwrap_or_default();
        if !matches!(role, "user" | "assistant" | "toolResult" | "custom") {
            continue;
        }
        let content = match new_content {
            Some(Value::String(text)) if matches!(role, "assistant" | "toolResult") => {
                Some(json!([{"type": "text", "text": text}]))
            }
            other => other.cloned(),
        };
        match content {
            Some(c) => {
                msg.insert("content".into(), c);
            }
            // `{...message, content: undefined}`: the key is there but JSON drops it.
            None => {
                msg.shift_remove("content");
            }
        }
    }
    Some(EditKind::Replace)
}
