//! Compaction, as pi 1.6.0's `prepareCompaction` and `compact()` do it (docs/pi-format.md §6):
//! the cut point on the session projection, split turns, `tokensBefore`, the previous
//! summary, file operations, the history and turn-prefix prompts, and the summary text.

use serde_json::{json, Value};

use super::prompts::{update_summarization_prompt, SUMMARIZATION_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT};
use super::serialize::{format_file_operations, serialize_conversation, FileOps};
use super::tokens::{estimate_projected_context_tokens, estimate_tokens, ContextEstimate};
use super::{check_reply, combine_usage, complete, offline, reply_text, SummaryError};
use crate::formats::pi::context::entry_messages;
use crate::llm::{Provider, StreamEvent};
use crate::session::entry::{EntryType, Role};
use crate::session::format::Unreadable;
use crate::session::projection::{convert_to_llm, EditKind, Projection};
use crate::session::{js, Session};
use crate::session::{EntryIdx, Id};

/// `compaction` settings pi uses (`keepRecentTokens` decides the cut; `reserveTokens`
/// only when pi compacts by itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { reserve_tokens: 16384, keep_recent_tokens: 20000 }
    }
}

/// Why pi would not compact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path ends in a compaction: "Already compacted".
    AlreadyCompacted,
    /// Nothing before the cut point: "Nothing to compact (session too small)".
    NothingToCompact,
}

impl Refusal {
    /// pi's message.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::AlreadyCompacted => "Already compacted",
            Refusal::NothingToCompact => "Nothing to compact (session too small)",
        }
    }
}

/// `prepareCompaction`'s result.
#[derive(Clone, Debug)]
pub struct Preparation {
    /// Index into the projection's entries of the first kept entry.
    pub first_kept_index: usize,
    /// The first kept entry (index into the session).
    pub first_kept_entry: EntryIdx,
    pub is_split_turn: bool,
    /// Projection index of the turn's start when the turn is split.
    pub turn_start_index: Option<usize>,
    pub tokens_before: f64,
    pub messages_to_summarize: Vec<Value>,
    pub turn_prefix_messages: Vec<Value>,
    /// The previous compaction's `summary` (as written; normally a string).
    pub previous_summary: Option<Value>,
    pub file_ops: FileOps,
}

/// Everything pi computes for a compaction of the path ending at `leaf`.
#[derive(Clone, Debug)]
pub struct Plan {
    pub leaf: EntryIdx,
    pub settings: Settings,
    /// `buildSessionProjection` of the path.
    pub projection: Projection,
    /// Projection index of the previous compaction (the one whose summary is in context).
    pub prev_compaction_index: Option<usize>,
    pub boundary_start: usize,
    /// `estimateProjectedContextTokens` (its `tokens` is `tokensBefore`).
    pub context_estimate: ContextEstimate,
    /// `estimateTokens` summed over each projected entry's messages.
    pub entry_tokens: Vec<u64>,
    pub preparation: Result<Preparation, Refusal>,
}

fn role_of(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or_default()
}

fn is_cut_point_message(m: &Value) -> bool {
    matches!(role_of(m), "user" | "assistant" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
}

fn is_turn_start_message(m: &Value) -> bool {
    matches!(role_of(m), "user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
}

/// One projected entry, as the cut-point search sees it.
struct Projected<'p> {
    entry: EntryIdx,
    kind: EntryType,
    messages: &'p [Value],
    omitted_by_edit: bool,
}

impl Projected<'_> {
    fn is_turn_start(&self) -> bool {
        self.kind != EntryType::Compaction && self.messages.iter().any(is_turn_start_message)
    }
}

/// The cut point (`findProjectedCutPoint`).
struct Cut {
    first_kept: usize,
    turn_start: Option<usize>,
    split: bool,
}

/// Plans the compaction of the path ending at `leaf` (`prepareCompaction(getBranch(leaf),
/// settings)`).
pub fn plan(s: &Session, leaf: EntryIdx, projection: Projection, settings: Settings) -> Result<Plan, Unreadable> {
    let entries: Vec<Projected> = projection
        .entries
        .iter()
        .map(|e| Projected {
            entry: e.entry,
            kind: s.entries[e.entry].kind,
            messages: &projection.messages[e.messages.clone()],
            omitted_by_edit: matches!(e.edit, Some((_, EditKind::Omit))),
        })
        .collect();
    let entry_tokens: Vec<u64> = entries.iter().map(|e| e.messages.iter().map(estimate_tokens).sum()).collect();
    let prev_compaction_index = entries.iter().position(|e| e.kind == EntryType::Compaction && !e.messages.is_empty());
    let boundary_start = prev_compaction_index.map_or(0, |i| i + 1);
    let context_estimate = estimate_projected_context_tokens(s, &projection);

    let last_is_compaction = projection.path.last().is_some_and(|&i| s.entries[i].kind == EntryType::Compaction);
    let preparation = if last_is_compaction {
        Err(Refusal::AlreadyCompacted)
    } else {
        let cut = find_cut_point(s, &entries, &entry_tokens, boundary_start, settings.keep_recent_tokens)?;
        prepare(s, &entries, prev_compaction_index, boundary_start, cut, context_estimate.tokens)?
    };
    drop(entries);
    Ok(Plan {
        leaf,
        settings,
        projection,
        prev_compaction_index,
        boundary_start,
        context_estimate,
        entry_tokens,
        preparation,
    })
}

/// Entry `i` parsed whole.
fn parse(s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
    s.parse(i)
}

/// `sessionEntryToContextMessages(sourceEntry).length > 0` for a non-edit entry (what it
/// would contribute without context edits).
fn intrinsically_visible(s: &Session, e: &Projected, pos: usize) -> Result<bool, Unreadable> {
    if e.kind == EntryType::ContextEdit {
        return Ok(false);
    }
    if e.omitted_by_edit || (e.kind == EntryType::Compaction && pos > 0) {
        return Ok(!entry_messages(parse(s, e.entry)?).is_empty());
    }
    Ok(!e.messages.is_empty())
}

fn find_cut_point(
    s: &Session,
    entries: &[Projected],
    tokens: &[u64],
    start: usize,
    keep: u64,
) -> Result<Cut, Unreadable> {
    let end = entries.len();
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| entries[i].kind != EntryType::Compaction && entries[i].messages.iter().any(is_cut_point_message))
        .collect();
    let Some(&first_cut) = cut_points.first() else {
        return Ok(Cut { first_kept: start, turn_start: None, split: false });
    };
    let mut accumulated = 0u64;
    let mut exceeded = false;
    let mut cut = first_cut;
    for i in (start..end).rev() {
        if tokens[i] == 0 {
            continue;
        }
        accumulated += tokens[i];
        if accumulated >= keep {
            exceeded = true;
            cut = cut_points.iter().copied().find(|&c| c >= i).unwrap_or(*cut_points.last().unwrap());
            break;
        }
    }

    // A failed recovery attempt and its omission edits after the last visible input: cut
    // after them, so the summary covers the input they answered.
    if exceeded && cut + 1 < end {
        let suffix = cut + 1..end;
        let mut visible = Vec::with_capacity(suffix.len());
        for i in suffix.clone() {
            visible.push(intrinsically_visible(s, &entries[i], i)?);
        }
        let omitted = |k: usize| visible[k] && entries[cut + 1 + k].messages.is_empty();
        let omitted_ids: Vec<Option<Id>> =
            (0..visible.len()).filter(|&k| omitted(k)).map(|k| s.id(entries[cut + 1 + k].entry)).collect();
        let mut external_replacement = false;
        for i in suffix.clone() {
            if entries[i].kind != EntryType::ContextEdit {
                continue;
            }
            let edit = parse(s, entries[i].entry)?;
            let replaces = edit.get("replacement") != Some(&Value::Null);
            let target = edit.get("targetId").and_then(Value::as_str);
            let target_omitted = target.is_some() && omitted_ids.contains(&target.map(Id::Str));
            if replaces && !target_omitted {
                external_replacement = true;
            }
        }
        let has_omitted_assistant = (0..visible.len()).any(|k| {
            let e = &entries[cut + 1 + k];
            e.kind == EntryType::Message && s.entries[e.entry].role == Role::Assistant && omitted(k)
        });
        let all_hidden = (0..visible.len())
            .all(|k| entries[cut + 1 + k].kind != EntryType::Compaction && (!visible[k] || omitted(k)));
        if !external_replacement && has_omitted_assistant && all_hidden {
            cut += 1;
        }
    }

    // Take in the metadata entries just before the cut.
    while cut > start {
        let prev = &entries[cut - 1];
        if prev.kind == EntryType::Compaction || !prev.messages.is_empty() {
            break;
        }
        cut -= 1;
    }

    let starts_turn = entries[cut].is_turn_start();
    let turn_start = if starts_turn { None } else { (start..=cut).rev().find(|&i| entries[i].is_turn_start()) };
    Ok(Cut { first_kept: cut, turn_start, split: !starts_turn && turn_start.is_some() })
}

/// `getMessagesFromProjectedEntryForCompaction` over a range: no compaction entries, no
/// system messages.
fn summarized_messages(entries: &[Projected]) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e.kind != EntryType::Compaction)
        .flat_map(|e| e.messages.iter().filter(|m| role_of(m) != "system").cloned())
        .collect()
}

fn prepare(
    s: &Session,
    entries: &[Projected],
    prev_compaction_index: Option<usize>,
    start: usize,
    cut: Cut,
    tokens_before: f64,
) -> Result<Result<Preparation, Refusal>, Unreadable> {
    let Some(first) = entries.get(cut.first_kept) else { return Ok(Err(Refusal::NothingToCompact)) };
    if s.id(first.entry).is_none_or(|id| !id.is_truthy()) {
        return Ok(Err(Refusal::NothingToCompact));
    }
    let history_end = if cut.split { cut.turn_start.unwrap_or(cut.first_kept) } else { cut.first_kept };
    let messages_to_summarize = summarized_messages(&entries[start.min(history_end)..history_end]);
    let turn_prefix_messages = match (cut.split, cut.turn_start) {
        (true, Some(t)) => summarized_messages(&entries[t..cut.first_kept]),
        _ => vec![],
    };
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return Ok(Err(Refusal::NothingToCompact));
    }
    let mut file_ops = FileOps::default();
    let mut previous_summary = None;
    if let Some(p) = prev_compaction_index {
        let prev = parse(s, entries[p].entry)?;
        if !js::truthy(prev.get("fromHook")) && js::truthy(prev.get("details")) {
            file_ops.add_details(&prev["details"]);
        }
        previous_summary = prev.get("summary").cloned();
    }
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(m);
    }
    Ok(Ok(Preparation {
        first_kept_index: cut.first_kept,
        first_kept_entry: first.entry,
        is_split_turn: cut.split,
        turn_start_index: cut.turn_start,
        tokens_before,
        messages_to_summarize,
        turn_prefix_messages,
        previous_summary,
        file_ops,
    }))
}

/// Which of compaction's two summaries a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// The conversation before the cut (or before the split turn).
    History,
    /// The start of a turn that is cut in the middle.
    TurnPrefix,
}

impl RequestKind {
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::History => "history",
            RequestKind::TurnPrefix => "turnPrefix",
        }
    }
}

/// One summary request `compact()` sends, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRequest {
    pub kind: RequestKind,
    pub prompt: String,
}

fn custom(c: Option<&str>) -> Option<&str> {
    c.filter(|c| !c.is_empty())
}

/// The history prompt (`generateSummaryWithUsage`).
pub fn history_prompt(
    messages: &[Value],
    previous_summary: Option<&Value>,
    custom_instructions: Option<&str>,
) -> String {
    let previous = previous_summary.filter(|p| js::truthy(Some(p)));
    let mut base = if previous.is_some() { update_summarization_prompt() } else { SUMMARIZATION_PROMPT.to_string() };
    if let Some(c) = custom(custom_instructions) {
        base = format!("{base}\n\nAdditional focus: {c}");
    }
    let conversation = serialize_conversation(&convert_to_llm(messages));
    let mut prompt = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(p) = previous {
        prompt += &format!("<previous-summary>\n{}\n</previous-summary>\n\n", js::to_js_string(Some(p)));
    }
    prompt + &base
}

/// The turn-prefix prompt (`generateTurnPrefixSummary`).
pub fn turn_prefix_prompt(messages: &[Value], custom_instructions: Option<&str>) -> String {
    let conversation = serialize_conversation(&convert_to_llm(messages));
    let mut prompt = format!("# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}");
    if let Some(c) = custom(custom_instructions) {
        prompt += &format!("\n\nAdditional focus: {c}");
    }
    prompt
}

impl Preparation {
    /// Whether `compact()` makes a turn-prefix summary.
    pub fn summarizes_prefix(&self) -> bool {
        self.is_split_turn && !self.turn_prefix_messages.is_empty()
    }

    /// The requests `compact()` sends, in order: the history (unless a split turn has no
    /// history), then the turn prefix (split turns).
    pub fn requests(&self, custom_instructions: Option<&str>) -> Vec<SummaryRequest> {
        let history = SummaryRequest {
            kind: RequestKind::History,
            prompt: history_prompt(&self.messages_to_summarize, self.previous_summary.as_ref(), custom_instructions),
        };
        if !self.summarizes_prefix() {
            return vec![history];
        }
        let mut out = Vec::new();
        if !self.messages_to_summarize.is_empty() {
            out.push(history);
        }
        out.push(SummaryRequest {
            kind: RequestKind::TurnPrefix,
            prompt: turn_prefix_prompt(&self.turn_prefix_messages, custom_instructions),
        });
        out
    }

    /// `computeFileLists(fileOps)`.
    pub fn file_lists(&self) -> (Vec<String>, Vec<String>) {
        self.file_ops.file_lists()
    }

    /// The summary `compact()` stores, given the model's text for each request (`None`
    /// for a request not made): a split turn's two parts joined under `**Turn Context
    /// (split turn):**` (the previous summary, or `No prior history.`, standing in for a
    /// history that was not summarized), then the file lists.
    pub fn assemble(&self, history: Option<&str>, turn_prefix: Option<&str>) -> String {
        let mut summary = if self.summarizes_prefix() {
            let history = match history {
                Some(h) => h.to_string(),
                None => match &self.previous_summary {
                    Some(p) if !p.is_null() => js::to_js_string(Some(p)),
                    _ => "No prior history.".to_string(),
                },
            };
            format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{}", turn_prefix.unwrap_or_default())
        } else {
            history.unwrap_or_default().to_string()
        };
        let (read, modified) = self.file_lists();
        summary += &format_file_operations(&read, &modified);
        summary
    }

    /// The summary with the model's output replaced by `<<LLM_OUTPUT:history>>` /
    /// `<<LLM_OUTPUT:turnPrefix>>`, as the oracle prints it.
    pub fn summary_template(&self) -> String {
        let requests = self.requests(None);
        let has = |k| requests.iter().any(|r| r.kind == k);
        self.assemble(
            has(RequestKind::History).then_some("<<LLM_OUTPUT:history>>"),
            has(RequestKind::TurnPrefix).then_some("<<LLM_OUTPUT:turnPrefix>>"),
        )
    }

    /// `details` as pi stores them.
    pub fn details(&self) -> Value {
        let (read, modified) = self.file_lists();
        json!({"readFiles": read, "modifiedFiles": modified})
    }
}

/// `compact()`'s result.
#[derive(Clone, Debug, PartialEq)]
pub struct Compacted {
    pub summary: String,
    pub usage: Option<Value>,
}

/// Runs `compact()` with a model: the requests one after the other, pi's failure texts.
pub fn compact(
    prep: &Preparation,
    provider: &dyn Provider,
    custom_instructions: Option<&str>,
    thinking_level: Option<&str>,
    events: &mut dyn FnMut(&StreamEvent),
) -> Result<Compacted, SummaryError> {
    let mut history = None;
    let mut prefix = None;
    let mut usage: Option<Value> = None;
    for r in prep.requests(custom_instructions) {
        let reply = complete(provider, &r.prompt, thinking_level, events)?;
        let label = match r.kind {
            RequestKind::History => "Summarization",
            RequestKind::TurnPrefix => "Turn prefix summarization",
        };
        if reply.get("stopReason").and_then(Value::as_str) == Some("aborted") {
            return Err(SummaryError::Aborted);
        }
        check_reply(&reply, label)?;
        let text = reply_text(&reply);
        let u = reply.get("usage").cloned();
        usage = match (usage, u) {
            (Some(a), Some(b)) => Some(combine_usage(&a, &b)),
            (a, b) => b.or(a),
        };
        match r.kind {
            RequestKind::History => history = Some(text),
            RequestKind::TurnPrefix => prefix = Some(text),
        }
    }
    Ok(Compacted { summary: prep.assemble(history.as_deref(), prefix.as_deref()), usage })
}

/// A compaction's summary, made by a model or without one.
pub struct Summarized {
    pub summary: String,
    pub usage: Option<Value>,
    /// The entry's `details`: pi's file lists, and `generator` for a summary made
    /// without a model.
    pub details: Value,
}

/// The summary of `prep`: asked of `provider` as pi's `compact()` asks, or without one
/// made offline (a deterministic summary in pi's layout, marked in `details.generator`).
pub fn summarize(
    prep: &Preparation,
    provider: Option<&dyn Provider>,
    custom_instructions: Option<&str>,
    thinking_level: Option<&str>,
    events: &mut dyn FnMut(&StreamEvent),
) -> Result<Summarized, SummaryError> {
    let mut details = prep.details();
    let (summary, usage) = match provider {
        Some(p) => {
            let c = compact(prep, p, custom_instructions, thinking_level, events)?;
            (c.summary, c.usage)
        }
        None => {
            details["generator"] = offline::GENERATOR.into();
            (offline_summary(prep), None)
        }
    };
    Ok(Summarized { summary, usage, details })
}

/// The offline summary, assembled as `compact()` assembles a model's.
fn offline_summary(prep: &Preparation) -> String {
    let previous = prep.previous_summary.as_ref().and_then(Value::as_str);
    let history = prep
        .requests(None)
        .iter()
        .any(|r| r.kind == RequestKind::History)
        .then(|| offline::summarize(&prep.messages_to_summarize, previous));
    let prefix = prep.summarizes_prefix().then(|| offline::summarize_turn_prefix(&prep.turn_prefix_messages));
    prep.assemble(history.as_deref(), prefix.as_deref())
}

/// A compaction entry written to a file.
#[derive(Debug)]
pub struct Appended {
    pub id: String,
    pub line: crate::session::LineNo,
    pub entry: Value,
}

/// Appends the compaction of `plan` to `path` as `compact()` writes it: under the plan's
/// leaf, keeping the path's current system message. The file must still hold the leaf;
/// when the leaf was the file's last entry, it must still be (the session did not grow
/// while the summary was made).
pub fn append(
    path: &std::path::Path,
    force: bool,
    s: &Session,
    plan: &Plan,
    prep: &Preparation,
    made: &Summarized,
) -> anyhow::Result<Appended> {
    use anyhow::Context;

    use crate::session::write::{self, AppendError, SummaryEntry};
    let leaf_id = s.named_id(plan.leaf)?.to_string();
    let leaf_id = leaf_id.as_str();
    let was_last = s.default_leaf() == Some(plan.leaf);
    let system_message = crate::session::system::current_system_message(&plan.projection.messages);
    let first_kept = s.id_value(prep.first_kept_entry);
    let mut written = None;
    let at = write::append_to_session(path, write::Appended::Summary, force, crate::formats::all(), |now| {
        if now.get(leaf_id).is_none() {
            return Err(AppendError::Refused(format!("Entry {leaf_id} not found")).into());
        }
        if was_last && now.default_leaf().and_then(|l| now.id_str(l)) != Some(leaf_id) {
            return Err(AppendError::Refused(format!(
                "the session grew while the summary was made (its last entry is no longer {leaf_id}); run compact again"
            ))
            .into());
        }
        let entry = SummaryEntry::Compaction {
            summary: &made.summary,
            first_kept: &first_kept,
            tokens_before: prep.tokens_before,
            details: &made.details,
            usage: made.usage.as_ref(),
            system_message: system_message.as_ref(),
        };
        let lines =
            now.dialect().writer().map_err(AppendError::from)?.summary_lines(now, Some(leaf_id), &entry, None)?;
        let lines = std::mem::take(&mut written.insert(lines).lines);
        Ok::<_, anyhow::Error>(lines)
    })
    .with_context(|| format!("could not append the compaction to {}", path.display()))?;
    let made = written.expect("set before writing");
    Ok(Appended { id: made.id, line: at.first_line, entry: made.entry })
}
