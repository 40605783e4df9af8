//! Branch summaries: what pi 1.6.0's `/tree` summarizes when it leaves a branch
//! (docs/pi-format.md §3.3 and §5): `collectEntriesForBranchSummary`, `prepareBranchEntries`,
//! the request `generateBranchSummary` sends, and the summary it stores.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::prompts::{BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT};
use super::serialize::{format_file_operations, serialize_conversation, FileOps};
use super::tokens::estimate_tokens;
use super::{check_reply, parse_all, project_entry, reply_text, SummaryError};
use crate::llm::{Provider, StreamEvent};
use crate::session::entry::{EntryType, Role};
use crate::session::format::Unreadable;
use crate::session::projection::{convert_to_llm, Projection};
use crate::session::{js, Session};
use crate::session::{EntryIdx, LineNo};

/// Where pi's leaf goes after the navigation (§3.3 step 4), and so the summary's parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewLeaf {
    /// The target itself (any target but a user or custom message).
    Entry(EntryIdx),
    /// A user or custom-message target at a root: pi resets the leaf; a summary becomes a
    /// new root (`parentId: null`).
    Root,
    /// A user or custom-message target whose `parentId` names no entry: pi refuses
    /// (`Entry <id> not found`).
    Missing(String),
}

/// `collectEntriesForBranchSummary` plus where the leaf goes.
#[derive(Clone, Debug)]
pub struct Collected {
    pub from: EntryIdx,
    pub target: EntryIdx,
    /// The deepest entry on the target's path that is also on the old leaf's path (the
    /// target itself counts); `None` when the paths share nothing.
    pub common_ancestor: Option<EntryIdx>,
    /// The old leaf's entries after the common ancestor, oldest first.
    pub entries: Vec<EntryIdx>,
    pub new_leaf: NewLeaf,
}

impl Collected {
    /// The target is the old leaf: pi does nothing ("Already at this point").
    pub fn same_entry(&self) -> bool {
        self.from == self.target
    }
}

/// Walks from the old leaf `from` back to its common ancestor with `target`.
pub fn collect(s: &Session, from: EntryIdx, target: EntryIdx) -> Collected {
    let old_path = s.path_to(from);
    let on_old: std::collections::HashSet<EntryIdx> = old_path.iter().copied().collect();
    let target_path = s.path_to(target);
    let common_ancestor = target_path.iter().rev().copied().find(|i| on_old.contains(i));
    let mut entries: Vec<EntryIdx> =
        old_path.iter().rev().copied().take_while(|&i| Some(i) != common_ancestor).collect();
    entries.reverse();
    let e = &s.entries[target];
    let new_leaf = if (e.kind == EntryType::Message && e.role == Role::User) || e.kind == EntryType::CustomMessage {
        match (s.parent(target), s.parent_id(target)) {
            (Some(p), _) => NewLeaf::Entry(p),
            (None, None) => NewLeaf::Root,
            (None, Some(id)) => NewLeaf::Missing(id.to_string()),
        }
    } else {
        NewLeaf::Entry(target)
    };
    Collected { from, target, common_ancestor, entries, new_leaf }
}

/// `prepareBranchEntries`' result.
#[derive(Clone, Debug, Default)]
pub struct Prepared {
    /// pi's AgentMessages to summarize, oldest first (context edits applied; tool results
    /// left out).
    pub messages: Vec<Value>,
    pub file_ops: FileOps,
    pub total_tokens: u64,
}

/// `getMessageFromEntry` (branch summarization's own version): tool results are left
/// out, compactions count as their summary, and an edit among the entries applies.
fn message_of(entry: &Value, edit: Option<&Value>) -> Option<Value> {
    let field = |k: &str| entry.get(k);
    let mut m = Map::new();
    let put = |m: &mut Map<String, Value>, k: &str, v: Option<&Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v.clone());
        }
    };
    let date = |v: Option<&Value>| js::date_ms(v).map_or(Value::Null, js::number);
    match field("type").and_then(Value::as_str)? {
        "message" => {
            let msg = field("message").filter(|m| m.is_object())?;
            if msg.get("role").and_then(Value::as_str) == Some("toolResult") {
                return None;
            }
            match edit {
                Some(edit) => project_entry(entry, Some(edit)).into_iter().next(),
                None => Some(msg.clone()),
            }
        }
        "custom_message" => {
            if let Some(edit) = edit {
                return project_entry(entry, Some(edit)).into_iter().next();
            }
            m.insert("role".into(), "custom".into());
            put(&mut m, "customType", field("customType"));
            put(&mut m, "content", field("content"));
            put(&mut m, "display", field("display"));
            put(&mut m, "details", field("details"));
            m.insert("timestamp".into(), date(field("timestamp")));
            Some(Value::Object(m))
        }
        "branch_summary" => {
            m.insert("role".into(), "branchSummary".into());
            put(&mut m, "summary", field("summary"));
            put(&mut m, "fromId", field("fromId"));
            m.insert("timestamp".into(), date(field("timestamp")));
            Some(Value::Object(m))
        }
        "compaction" => {
            m.insert("role".into(), "compactionSummary".into());
            put(&mut m, "summary", field("summary"));
            put(&mut m, "tokensBefore", field("tokensBefore"));
            m.insert("timestamp".into(), date(field("timestamp")));
            Some(Value::Object(m))
        }
        _ => None,
    }
}

/// A map key for an id value (`Map` keys compare by value).
fn id_key(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `prepareBranchEntries(entries, tokenBudget)`: file operations from every pi-made
/// branch summary among the entries, then messages from the newest back while they fit
/// the budget (a summary entry still goes in while under 90% of it). A budget of 0 or
/// less means no limit.
pub fn prepare(s: &Session, entries: &[EntryIdx], token_budget: i64) -> Result<Prepared, Unreadable> {
    let parsed = parse_all(s, entries)?;
    let mut out = Prepared::default();
    for e in &parsed {
        if e.get("type").and_then(Value::as_str) == Some("branch_summary")
            && !js::truthy(e.get("fromHook"))
            && js::truthy(e.get("details"))
        {
            out.file_ops.add_details(&e["details"]);
        }
    }
    let mut edits: HashMap<String, &Value> = HashMap::new();
    for e in &parsed {
        if e.get("type").and_then(Value::as_str) == Some("context_edit") {
            edits.insert(id_key(e.get("targetId").unwrap_or(&Value::Null)), e);
        }
    }
    let budget = token_budget as f64;
    for e in parsed.iter().rev() {
        let edit = e.get("id").and_then(|id| edits.get(&id_key(id))).copied();
        let Some(message) = message_of(e, edit) else { continue };
        out.file_ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && (out.total_tokens + tokens) as f64 > budget {
            let ty = e.get("type").and_then(Value::as_str);
            if matches!(ty, Some("compaction" | "branch_summary")) && (out.total_tokens as f64) < budget * 0.9 {
                out.messages.insert(0, message);
                out.total_tokens += tokens;
            }
            break;
        }
        out.messages.insert(0, message);
        out.total_tokens += tokens;
    }
    Ok(out)
}

/// The user prompt `generateBranchSummary` sends, or `None` when there is nothing to
/// summarize (pi then stores "No content to summarize" without calling the model).
pub fn prompt(prepared: &Prepared, custom_instructions: Option<&str>, replace_instructions: bool) -> Option<String> {
    if prepared.messages.is_empty() {
        return None;
    }
    let conversation = serialize_conversation(&convert_to_llm(&prepared.messages));
    let custom = custom_instructions.filter(|c| !c.is_empty());
    let instructions = match custom {
        Some(c) if replace_instructions => c.to_string(),
        Some(c) => format!("{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {c}"),
        None => BRANCH_SUMMARY_PROMPT.to_string(),
    };
    Some(format!("<conversation>\n{conversation}\n</conversation>\n\n{instructions}"))
}

/// What pi stores when the entries yield no message.
pub const NO_CONTENT: &str = "No content to summarize";

/// A branch summary, as pi stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub summary: String,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    /// The model's usage (none without a model call).
    pub usage: Option<Value>,
}

/// The summary pi stores for the model's `text`: the preamble, the text, the file lists.
pub fn summary_from_text(prepared: &Prepared, text: &str, usage: Option<Value>) -> Summary {
    let (read_files, modified_files) = prepared.file_ops.file_lists();
    let summary = format!("{BRANCH_SUMMARY_PREAMBLE}{text}{}", format_file_operations(&read_files, &modified_files));
    Summary { summary, read_files, modified_files, usage }
}

/// The summary for an empty message list: no model call, no preamble, no file lists.
pub fn empty_summary() -> Summary {
    Summary { summary: NO_CONTENT.into(), read_files: vec![], modified_files: vec![], usage: None }
}

/// `generateBranchSummary`'s handling of the model's reply.
pub fn summary_from_reply(prepared: &Prepared, reply: &Value) -> Result<Summary, SummaryError> {
    if reply.get("stopReason").and_then(Value::as_str) == Some("aborted") {
        return Err(SummaryError::Aborted);
    }
    check_reply(reply, "Branch summarization")?;
    Ok(summary_from_text(prepared, &reply_text(reply), reply.get("usage").cloned()))
}

/// Every entry's context messages, oldest first, with the context edits among the
/// entries applied (tool results kept, system messages left out): what an offline
/// summary reads.
pub fn context_messages(s: &Session, entries: &[EntryIdx]) -> Result<Vec<Value>, Unreadable> {
    let parsed = parse_all(s, entries)?;
    let mut edits: HashMap<String, &Value> = HashMap::new();
    for e in &parsed {
        if e.get("type").and_then(Value::as_str) == Some("context_edit") {
            edits.insert(id_key(e.get("targetId").unwrap_or(&Value::Null)), e);
        }
    }
    let mut out = Vec::new();
    for e in &parsed {
        let edit = e.get("id").and_then(|id| edits.get(&id_key(id))).copied();
        out.extend(
            project_entry(e, edit).into_iter().filter(|m| m.get("role").and_then(Value::as_str) != Some("system")),
        );
    }
    Ok(out)
}

/// Everything summarizing a branch takes from the session: what pi's `navigateTree` would
/// summarize leaving `from` for `target`, within the token budget.
pub struct Plan {
    pub from: EntryIdx,
    pub target: EntryIdx,
    /// The context at `from` (its thinking level and model decide the request).
    pub from_projection: Projection,
    pub collected: Collected,
    pub prepared: Prepared,
    pub reserve_tokens: u64,
    /// The context window less the reserve.
    pub token_budget: i64,
}

impl Plan {
    /// Reads what leaving `from` for `target` summarizes in a context `window` less
    /// `reserve_tokens`.
    pub fn new(
        s: &Session,
        from: EntryIdx,
        target: EntryIdx,
        from_projection: Projection,
        window: u64,
        reserve_tokens: u64,
    ) -> Result<Plan, Unreadable> {
        let token_budget = window as i64 - reserve_tokens as i64;
        let collected = collect(s, from, target);
        let prepared = prepare(s, collected.summarized(), token_budget)?;
        Ok(Plan { from, target, from_projection, collected, prepared, reserve_tokens, token_budget })
    }

    /// Nothing to summarize: the target is the old leaf, or on its path (pi then moves
    /// the leaf and writes nothing).
    pub fn nothing(&self) -> bool {
        self.collected.summarized().is_empty()
    }
}

impl Collected {
    /// The entries a summary covers (none when the target is the old leaf itself).
    pub fn summarized(&self) -> &[EntryIdx] {
        if self.same_entry() {
            &[]
        } else {
            &self.entries
        }
    }
}

/// A branch summary made, and the `details` its entry records.
pub struct Made {
    pub summary: Summary,
    /// `{readFiles, modifiedFiles}`, and `generator` for a summary made without a model.
    pub details: Value,
}

/// The summary of `plan`: pi's request to `provider` (its prompt `prompt`), or without a
/// provider one made offline from the entries. No message to summarize: pi's
/// "No content to summarize", with no model call.
pub fn summarize(
    s: &Session,
    plan: &Plan,
    prompt: &str,
    provider: Option<&dyn Provider>,
    thinking_level: Option<&str>,
    events: &mut dyn FnMut(&StreamEvent),
) -> Result<Made, SummaryError> {
    let mut generator = None;
    let summary = if plan.prepared.messages.is_empty() {
        empty_summary()
    } else if let Some(provider) = provider {
        let reply = super::complete(provider, prompt, thinking_level, events)?;
        summary_from_reply(&plan.prepared, &reply)?
    } else {
        generator = Some(super::offline::GENERATOR);
        let messages = context_messages(s, &plan.collected.entries)?;
        summary_from_text(&plan.prepared, &super::offline::summarize(&messages, None), None)
    };
    let mut details = serde_json::json!({"readFiles": summary.read_files, "modifiedFiles": summary.modified_files});
    if let Some(g) = generator {
        details["generator"] = g.into();
    }
    Ok(Made { summary, details })
}

/// Appends `made` where `plan` puts it: under the new leaf, as navigateTree writes it,
/// with a label entry for it when `label` is given.
pub fn append_made(
    path: &std::path::Path,
    force: bool,
    s: &Session,
    plan: &Plan,
    made: &Made,
    label: Option<&str>,
) -> anyhow::Result<Appended> {
    let from_id = s.named_id(plan.from)?.to_string();
    let parent = match &plan.collected.new_leaf {
        NewLeaf::Entry(i) => Some(s.named_id(*i)?.to_string()),
        NewLeaf::Root => None,
        NewLeaf::Missing(id) => anyhow::bail!(
            "Entry {id} not found (the parent of {}); pi would refuse to write the summary",
            s.display_id(plan.target)
        ),
    };
    append(path, force, parent.as_deref(), &from_id, &made.summary, made.details.clone(), label)
}

/// A `branch_summary` entry written to a file (and its label entry, when one was asked for).
#[derive(Debug)]
pub struct Appended {
    pub id: String,
    /// Its line in the file.
    pub line: LineNo,
    pub entry: Value,
    pub label_id: Option<String>,
}

/// Appends `summary` as pi's `branch_summary` entry under `parent` (the navigation's new
/// leaf; `None`: a new root), `fromId` = `from_id`, with `details`; then, with `label`, a
/// label entry for it. One locked append (pi's rules: the parent must still be there; an
/// unmigrated v1/v2 file is refused, since pi rewrites those first).
pub fn append(
    path: &std::path::Path,
    force: bool,
    parent: Option<&str>,
    from_id: &str,
    summary: &Summary,
    details: Value,
    label: Option<&str>,
) -> anyhow::Result<Appended> {
    use crate::session::write::{self, AppendError, SummaryEntry};
    let mut written = None;
    let at = write::append_to_session(path, write::Appended::Summary, force, crate::formats::all(), |now| {
        if let Some(p) = parent {
            if now.get(p).is_none() {
                return Err(AppendError::Refused(format!("Entry {p} not found")).into());
            }
        }
        let entry = SummaryEntry::Branch {
            from_id,
            summary: &summary.summary,
            details: &details,
            usage: summary.usage.as_ref(),
        };
        let made = now.dialect().writer().map_err(AppendError::from)?.summary_lines(now, parent, &entry, label)?;
        let lines = std::mem::take(&mut written.insert(made).lines);
        Ok::<_, anyhow::Error>(lines)
    })
    .map_err(|e| e.context(format!("could not append the summary to {}", path.display())))?;
    let made = written.expect("set before writing");
    Ok(Appended { id: made.id, line: at.first_line, entry: made.entry, label_id: made.label_id })
}
