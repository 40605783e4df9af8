//! `pisces summarize`'s output for people and programs: the plan (the dry run: the
//! entries pi would summarize, the budget, the request) and the summary made.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::compact::AppendedDoc;
use super::json::{RequestDoc, SessionJson};
use super::sanitize;
use crate::session::{js, EntryIdx, LineNo, Session};
use crate::summarize::branch::{self, Appended, Made, NewLeaf, Plan};
use crate::summarize::prompts;
use crate::summarize::serialize::FileOps;

/// `summarize --dry-run --format json`, with pi-oracle branch-entries.mjs's names.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDoc<'s> {
    /// `1`.
    pub version: u32,
    pub session: SessionJson<'s>,
    pub old_leaf_id: Value,
    pub old_leaf_line: LineNo,
    pub target_id: Value,
    pub target_line: LineNo,
    pub common_ancestor_id: Value,
    pub common_ancestor_line: Option<LineNo>,
    /// The summary's parent: the target, or its parent for a user or custom message.
    pub new_leaf_id: Value,
    /// The entries summarized, oldest first.
    pub entry_ids: Vec<Value>,
    pub context_window: u64,
    /// Where the window came from (`--context-window`, the model, pi's default).
    pub context_window_source: &'s str,
    pub reserve_tokens: u64,
    pub token_budget: i64,
    pub thinking_level: &'s Option<Value>,
    pub prepared: PreparedDoc<'s>,
    pub file_lists: FileListsDoc,
    /// `null` when there is nothing to summarize.
    pub request: Option<RequestDoc<'s>>,
    /// The summary pi would store, `<<LLM_OUTPUT>>` where the model's text goes.
    pub summary_template: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreparedDoc<'s> {
    pub messages: &'s [Value],
    pub message_count: usize,
    pub file_ops: &'s FileOps,
    pub total_tokens: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileListsDoc {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

fn new_leaf_id(s: &Session, plan: &Plan) -> Value {
    match &plan.collected.new_leaf {
        NewLeaf::Entry(i) => s.id_value(*i),
        NewLeaf::Root => Value::Null,
        NewLeaf::Missing(id) => Value::from(id.as_str()),
    }
}

fn entry_ids(s: &Session, plan: &Plan) -> Vec<Value> {
    plan.collected.summarized().iter().map(|&i| s.id_value(i)).collect()
}

impl<'s> PlanDoc<'s> {
    /// `window` is the context window and where it came from; `prompt` the request's,
    /// `thinking` the level sent.
    pub fn of(
        s: &'s Session,
        plan: &'s Plan,
        window: (u64, &'s str),
        prompt: Option<&str>,
        thinking: Option<&'s str>,
    ) -> PlanDoc<'s> {
        let line = |i: EntryIdx| s.entries[i].line;
        let (read_files, modified_files) = plan.prepared.file_ops.file_lists();
        PlanDoc {
            version: 1,
            session: SessionJson::of(s),
            old_leaf_id: s.id_value(plan.from),
            old_leaf_line: line(plan.from),
            target_id: s.id_value(plan.target),
            target_line: line(plan.target),
            common_ancestor_id: plan.collected.common_ancestor.map_or(Value::Null, |i| s.id_value(i)),
            common_ancestor_line: plan.collected.common_ancestor.map(line),
            new_leaf_id: new_leaf_id(s, plan),
            entry_ids: entry_ids(s, plan),
            context_window: window.0,
            context_window_source: window.1,
            reserve_tokens: plan.reserve_tokens,
            token_budget: plan.token_budget,
            thinking_level: &plan.from_projection.thinking_level,
            prepared: PreparedDoc {
                messages: &plan.prepared.messages,
                message_count: plan.prepared.messages.len(),
                file_ops: &plan.prepared.file_ops,
                total_tokens: plan.prepared.total_tokens,
            },
            file_lists: FileListsDoc { read_files, modified_files },
            request: prompt.filter(|_| !plan.nothing()).map(|p| RequestDoc::new(None, p.to_string(), thinking)),
            summary_template: template(plan),
        }
    }
}

/// What generateBranchSummary returns for the entries, `<<LLM_OUTPUT>>` for the model's
/// text (pi does not call it when there are none: navigateTree then writes nothing).
fn template(plan: &Plan) -> String {
    if plan.prepared.messages.is_empty() {
        branch::NO_CONTENT.to_string()
    } else {
        branch::summary_from_text(&plan.prepared, "<<LLM_OUTPUT>>", None).summary
    }
}

/// The dry run for people. `rev` is TO_REV as given, `prompt` the request's prompt.
pub fn write_plan(
    out: &mut dyn Write,
    s: &Session,
    plan: &Plan,
    (window, window_source): (u64, &str),
    rev: &str,
    prompt: Option<&str>,
    thinking: Option<&str>,
) -> io::Result<()> {
    let short = |i: EntryIdx| s.display_id(i).into_owned();
    let from = short(plan.from);
    if plan.collected.same_entry() {
        return writeln!(out, "Nothing to summarize: {rev} is FROM_LEAF itself (pi: \"Already at this point\").");
    }
    if plan.collected.entries.is_empty() {
        return writeln!(
            out,
            "Nothing to summarize: {from} is on the path to {} (pi moves the leaf and writes nothing).",
            short(plan.target)
        );
    }
    let ancestor = plan
        .collected
        .common_ancestor
        .map_or("the root".to_string(), |a| format!("{} (line {})", short(a), s.entries[a].line));
    writeln!(
        out,
        "Summarize {} entries, from {from} back to the common ancestor {ancestor}:",
        plan.collected.entries.len()
    )?;
    for &i in &plan.collected.entries {
        let e = &s.entries[i];
        writeln!(out, "  {:>6}  line {:<6} {}", short(i), e.line, e.kind_label())?;
    }
    let leaf = match &plan.collected.new_leaf {
        NewLeaf::Entry(i) => format!("{} (line {})", short(*i), s.entries[*i].line),
        NewLeaf::Root => "none (a new root)".into(),
        NewLeaf::Missing(id) => format!("{id} (missing: pi would refuse)"),
    };
    writeln!(out, "The summary's parent (pi's new leaf): {leaf}")?;
    writeln!(
        out,
        "Budget: {} tokens (context window {window} [{window_source}] − reserve {}); {} of the messages fit, ~{} tokens",
        plan.token_budget,
        plan.reserve_tokens,
        plan.prepared.messages.len(),
        plan.prepared.total_tokens
    )?;
    let (read, modified) = plan.prepared.file_ops.file_lists();
    if !read.is_empty() || !modified.is_empty() {
        writeln!(out, "Files: read {}; modified {}", list_or_none(&read), list_or_none(&modified))?;
    }
    match prompt {
        None => writeln!(out, "No message to summarize: pi stores \"{}\" without calling a model.", branch::NO_CONTENT),
        Some(p) => {
            writeln!(out, "Thinking level: {}", thinking.unwrap_or("off (none sent)"))?;
            writeln!(out, "\n── system prompt ──\n{}", prompts::SUMMARIZATION_SYSTEM_PROMPT)?;
            let tokens = p.chars().map(char::len_utf16).sum::<usize>().div_ceil(4);
            writeln!(out, "\n── prompt (~{tokens} tokens) ──\n{}", sanitize(p))
        }
    }
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

/// `summarize --format json` (without --dry-run): the summary made (all `null` when
/// there was nothing to summarize), and where it was appended.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDoc<'s> {
    /// `1`.
    pub version: u32,
    pub session: SessionJson<'s>,
    pub from_id: Value,
    pub target_id: Value,
    pub new_leaf_id: Value,
    pub entry_ids: Vec<Value>,
    pub summary: Option<&'s str>,
    pub details: Option<&'s Value>,
    pub usage: Option<&'s Value>,
    /// `null` without --append.
    pub appended: Option<AppendedDoc<'s>>,
}

impl<'s> SummaryDoc<'s> {
    pub fn of(s: &'s Session, plan: &Plan, made: Option<&'s Made>, appended: Option<&'s Appended>) -> SummaryDoc<'s> {
        SummaryDoc {
            version: 1,
            session: SessionJson::of(s),
            from_id: s.id_value(plan.from),
            target_id: s.id_value(plan.target),
            new_leaf_id: new_leaf_id(s, plan),
            entry_ids: entry_ids(s, plan),
            summary: made.map(|m| m.summary.summary.as_str()),
            details: made.map(|m| &m.details),
            // Made without a model: `null`, as before any usage.
            usage: made.and_then(|m| m.summary.usage.as_ref()),
            appended: appended.map(|a| AppendedDoc {
                id: &a.id,
                line: a.line,
                entry: &a.entry,
                label_id: a.label_id.as_deref(),
            }),
        }
    }
}

/// For people: the summary on `out` (through the terminal filter), and on `err` where
/// it was appended.
pub fn write_summary(out: &mut dyn Write, err: &mut dyn Write, doc: &SummaryDoc) -> io::Result<()> {
    writeln!(out, "{}", sanitize(doc.summary.unwrap_or_default()))?;
    if let Some(a) = &doc.appended {
        // The summary first, then the note about it.
        out.flush()?;
        writeln!(
            err,
            "appended branch_summary {} (line {}) under {}; pi resumes there",
            a.id,
            a.line,
            sanitize(&js::to_js_string(Some(&doc.new_leaf_id)))
        )?;
    }
    Ok(())
}
