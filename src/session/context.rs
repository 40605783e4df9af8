//! pi's context projection (§2.1, §2.2) and `convertToLlm` (§2.4), exactly.
//!
//! The code follows pi 1.6.0's `buildSessionProjection` step by step; comments name the
//! pi function each part mirrors. Only the entries the projection needs are parsed whole:
//! the last compaction, the kept range and what follows it, the context edits among them,
//! and the last entries that set the model and thinking level.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::entry::{EntryType, Role};
use super::js;
use super::tree::Session;

pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// What a context edit did to its target's contribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditKind {
    Omit,
    Replace,
}

/// One context entry and the messages it produced.
#[derive(Clone, Debug)]
pub struct ProjectedEntry {
    pub entry: u32,
    /// Range into `Projection::messages`.
    pub messages: Range<usize>,
    /// The `context_edit` entry applied to it, and what it did.
    pub edit: Option<(u32, EditKind)>,
}

/// The result of `buildSessionProjection` for one leaf.
#[derive(Clone, Debug, Default)]
pub struct Projection {
    /// The leaf (`None`: pi's null leaf, an empty context).
    pub leaf: Option<u32>,
    /// Root..=leaf.
    pub path: Vec<u32>,
    /// `None` is JS `undefined` (a `thinking_level_change` without a level).
    pub thinking_level: Option<Value>,
    /// `{provider, modelId}` or `None` (JSON `null`).
    pub model: Option<Value>,
    pub entries: Vec<ProjectedEntry>,
    /// pi's AgentMessages, in order.
    pub messages: Vec<Value>,
}

/// Lines that looked whole to the index but failed to parse whole. pi would have skipped
/// them; the caller reloads the session treating them as malformed and projects again.
#[derive(Debug)]
pub struct Damaged(pub BTreeSet<u32>);

/// `buildSessionProjection(entries, leafId)`; `leaf == None` is pi's `null` leaf.
pub fn project(s: &Session, leaf: Option<u32>) -> Result<Projection, Damaged> {
    let Some(leaf) = leaf else {
        return Ok(Projection { thinking_level: Some("off".into()), ..Default::default() });
    };
    let path = s.path_to(leaf);
    let mut parsed = Parsed { s, cache: HashMap::new(), damaged: BTreeSet::new() };

    // getSessionContextSettings: the last setting on the path wins, so scan backwards.
    let mut thinking_level = Some(Value::from("off"));
    if let Some(&i) = path.iter().rev().find(|&&i| s.entries[i as usize].kind == EntryType::ThinkingLevelChange) {
        if let Some(v) = parsed.get(i) {
            thinking_level = v.get("thinkingLevel").cloned();
        }
    }
    let mut model = None;
    let sets_model = |i: &&u32| {
        let e = &s.entries[**i as usize];
        e.kind == EntryType::ModelChange || (e.kind == EntryType::Message && e.role == Role::Assistant)
    };
    if let Some(&i) = path.iter().rev().find(sets_model) {
        if let Some(v) = parsed.get(i) {
            let mut m = Map::new();
            if s.entries[i as usize].kind == EntryType::ModelChange {
                put(&mut m, "provider", v.get("provider"));
                put(&mut m, "modelId", v.get("modelId"));
            } else {
                let msg = v.get("message");
                put(&mut m, "provider", msg.and_then(|m| m.get("provider")));
                put(&mut m, "modelId", msg.and_then(|m| m.get("model")));
            }
            model = Some(Value::Object(m));
        }
    }

    // buildContextEntries: the last compaction C; C, then the kept entries before it
    // (from firstKeptEntryId, system messages dropped), then everything after it.
    let context: Vec<u32> = match path.iter().rposition(|&i| s.entries[i as usize].kind == EntryType::Compaction) {
        None => path.clone(),
        Some(c_pos) => {
            let c = path[c_pos];
            // pi looks C up by id on the path (the first entry with that id); with unique
            // ids that is C itself.
            let c_id = s.id(c);
            let c_idx =
                if s.duplicate_ids { path.iter().position(|&i| s.id(i) == c_id).unwrap_or(c_pos) } else { c_pos };
            let first_kept = parsed.get(c).and_then(|v| v.get("firstKeptEntryId").cloned());
            let first_kept = first_kept.as_ref().and_then(id_key);
            // The first path entry (before C) whose id is firstKeptEntryId.
            let kept_from = match first_kept.as_deref() {
                Some(fk) if !s.duplicate_ids => s.get(fk).and_then(|k| path[..c_idx].iter().position(|&i| i == k)),
                fk => path[..c_idx].iter().position(|&i| s.id(i) == fk),
            };
            let mut out = vec![c];
            for &i in kept_from.map_or(&[][..], |from| &path[from..c_idx]) {
                let e = &s.entries[i as usize];
                if !(e.kind == EntryType::Message && e.role == Role::System) {
                    out.push(i);
                }
            }
            out.extend_from_slice(&path[c_idx + 1..]);
            out
        }
    };

    // Context edits inside the context entries: the last one per target wins.
    let mut edits: HashMap<String, u32> = HashMap::new();
    for &i in &context {
        if s.entries[i as usize].kind == EntryType::ContextEdit {
            if let Some(target) = parsed.get(i).and_then(|v| v.get("targetId").and_then(id_key)) {
                edits.insert(target, i);
            }
        }
    }

    let mut messages = Vec::new();
    let mut entries = Vec::with_capacity(context.len());
    for (pos, &i) in context.iter().enumerate() {
        let e = &s.entries[i as usize];
        let start = messages.len();
        let mut edit = None;
        // An older compaction inside the kept range contributes nothing.
        if contributes(e.kind) && !(e.kind == EntryType::Compaction && pos > 0) {
            if let Some(v) = parsed.take(i) {
                let mut produced = entry_messages(v);
                if let Some(&edit_entry) = s.id(i).and_then(|id| edits.get(id)) {
                    if let Some(ev) = parsed.get(edit_entry) {
                        edit = apply_edit(&mut produced, &ev).map(|k| (edit_entry, k));
                    }
                }
                messages.extend(produced);
            }
        }
        entries.push(ProjectedEntry { entry: i, messages: start..messages.len(), edit });
    }
    if !parsed.damaged.is_empty() {
        return Err(Damaged(parsed.damaged));
    }
    Ok(Projection { leaf: Some(leaf), path, thinking_level, model, entries, messages })
}

/// Entry types that can produce messages (others are skipped without parsing).
fn contributes(kind: EntryType) -> bool {
    matches!(kind, EntryType::Message | EntryType::CustomMessage | EntryType::BranchSummary | EntryType::Compaction)
}

/// Whole-entry parses, remembering lines that fail.
struct Parsed<'s, 'a> {
    s: &'s Session<'a>,
    cache: HashMap<u32, Rc<Value>>,
    damaged: BTreeSet<u32>,
}

impl Parsed<'_, '_> {
    /// Entry `i` parsed, owned: the cached copy if nobody else holds it (a context entry
    /// is read once; its messages move out of it rather than being copied).
    fn take(&mut self, i: u32) -> Option<Value> {
        match self.cache.remove(&i) {
            Some(rc) => Some(Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone())),
            None => match self.s.parse(i) {
                Ok(v) => Some(v),
                Err(_) => {
                    self.damaged.insert(self.s.entries[i as usize].line);
                    None
                }
            },
        }
    }

    fn get(&mut self, i: u32) -> Option<Rc<Value>> {
        if let Some(v) = self.cache.get(&i) {
            return Some(v.clone());
        }
        match self.s.parse(i) {
            Ok(v) => {
                let v = Rc::new(v);
                self.cache.insert(i, v.clone());
                Some(v)
            }
            Err(_) => {
                self.damaged.insert(self.s.entries[i as usize].line);
                None
            }
        }
    }
}

/// An id value as the index keys it (see `load::raw_id`).
fn id_key(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(format!("\u{0}{other}")),
    }
}

/// Sets `key` unless the value is JS `undefined` (absent), as JSON.stringify omits those.
fn put(m: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(v) = v {
        m.insert(key.into(), v.clone());
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

/// `convertToLlm`: pi's AgentMessages to LLM messages.
pub fn convert_to_llm(messages: &[Value]) -> Vec<Value> {
    messages.iter().filter_map(convert_one).collect()
}

fn user(content: Value, timestamp: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert("content".into(), content);
    put(&mut m, "timestamp", timestamp);
    Value::Object(m)
}

fn text_block(text: String) -> Value {
    json!([{"type": "text", "text": text}])
}

fn convert_one(m: &Value) -> Option<Value> {
    let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
    let ts = m.get("timestamp");
    match role {
        "bashExecution" => {
            if js::truthy(m.get("excludeFromContext")) {
                return None;
            }
            Some(user(text_block(bash_execution_to_text(m)), ts))
        }
        "custom" => {
            let mut out = Map::new();
            out.insert("role".into(), "user".into());
            match m.get("content") {
                Some(Value::String(s)) => {
                    out.insert("content".into(), text_block(s.clone()));
                }
                other => put(&mut out, "content", other),
            }
            put(&mut out, "timestamp", ts);
            Some(Value::Object(out))
        }
        "branchSummary" => {
            let summary = js::to_js_string(m.get("summary"));
            Some(user(text_block(format!("{BRANCH_SUMMARY_PREFIX}{summary}{BRANCH_SUMMARY_SUFFIX}")), ts))
        }
        "compactionSummary" => {
            let summary = js::to_js_string(m.get("summary"));
            Some(user(text_block(format!("{COMPACTION_SUMMARY_PREFIX}{summary}{COMPACTION_SUMMARY_SUFFIX}")), ts))
        }
        "system" | "user" | "assistant" | "toolResult" => Some(m.clone()),
        _ => None,
    }
}

/// `bashExecutionToText`: what the model sees of a user's `!command`.
pub fn bash_execution_to_text(m: &Value) -> String {
    let mut text = format!("Ran `{}`\n", js::to_js_string(m.get("command")));
    if js::truthy(m.get("output")) {
        text += &format!("```\n{}\n```", js::to_js_string(m.get("output")));
    } else {
        text += "(no output)";
    }
    if js::truthy(m.get("cancelled")) {
        text += "\n\n(command cancelled)";
    } else if !js::is_nullish(m.get("exitCode")) && m.get("exitCode").and_then(Value::as_f64) != Some(0.0) {
        text += &format!("\n\nCommand exited with code {}", js::to_js_string(m.get("exitCode")));
    }
    if js::truthy(m.get("truncated")) && js::truthy(m.get("fullOutputPath")) {
        text += &format!("\n\n[Output truncated. Full output: {}]", js::to_js_string(m.get("fullOutputPath")));
    }
    text
}
