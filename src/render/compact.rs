//! `pisces compact`'s output for people and programs: the plan (the dry run: where pi
//! would cut, what it would summarize, the requests it would send) and the summary made.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::json::{RequestDoc, SessionJson};
use super::sanitize;
use crate::session::projection::EditKind;
use crate::session::{js, EntryIdx, EntryType, LineNo, Session};
use crate::summarize::compaction::{Appended, Plan, Preparation, Summarized};
use crate::summarize::prompts;
use crate::summarize::serialize::FileOps;
use crate::summarize::tokens::ContextEstimate;

/// `compact --dry-run --format json`, with pi-oracle compaction.mjs's field names.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDoc<'s> {
    /// `1`.
    pub version: u32,
    pub session: SessionJson<'s>,
    pub leaf_id: Value,
    pub leaf_line: LineNo,
    pub settings: SettingsDoc,
    pub path_length: usize,
    pub projection_length: usize,
    /// The previous compaction's index in the projection; `-1` for none.
    pub prev_compaction_index: i64,
    pub boundary_start: usize,
    pub first_kept_projected_index: Option<usize>,
    pub context_estimate: ContextEstimate,
    /// Per projected entry, its token estimate.
    pub estimate_tokens: Vec<EntryTokens>,
    /// `null` when pi would not compact (`preparationNote` says why).
    pub preparation: Option<PreparationDoc<'s>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preparation_note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<Vec<RequestDoc<'s>>>,
    /// The summary pi would store, `<<LLM_OUTPUT:history>>` and
    /// `<<LLM_OUTPUT:turnPrefix>>` where the model's texts go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_template: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsDoc {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
}

#[derive(Serialize)]
pub struct EntryTokens {
    pub index: usize,
    pub id: Value,
    pub line: LineNo,
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Message entries only: the first projected message's role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Value>,
    pub roles: Vec<Value>,
    pub tokens: u64,
    /// `"omit"`, `"replace"` or `null`: the context edit applied to the entry.
    pub edit: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreparationDoc<'s> {
    pub first_kept_entry_id: Value,
    pub first_kept_entry_line: LineNo,
    pub is_split_turn: bool,
    #[serde(serialize_with = "js::serialize_number")]
    pub tokens_before: f64,
    pub messages_to_summarize_count: usize,
    pub turn_prefix_messages_count: usize,
    pub previous_summary: &'s Option<Value>,
    pub file_ops: &'s FileOps,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    pub messages_to_summarize: &'s [Value],
    pub turn_prefix_messages: &'s [Value],
}

impl<'s> PlanDoc<'s> {
    pub fn of(s: &'s Session, plan: &'s Plan, custom: Option<&str>, thinking: Option<&'s str>) -> PlanDoc<'s> {
        let line = |i: EntryIdx| s.entries[i].line;
        let projection = &plan.projection;
        let estimate_tokens = projection
            .entries
            .iter()
            .enumerate()
            .map(|(index, pe)| {
                let e = &s.entries[pe.entry];
                let messages = &projection.messages[pe.messages.clone()];
                let role = (e.kind == EntryType::Message).then(|| {
                    messages.first().and_then(|m| m.get("role")).cloned().unwrap_or_else(|| e.kind_label().into())
                });
                EntryTokens {
                    index,
                    id: s.id_value(pe.entry),
                    line: line(pe.entry),
                    kind: e.kind.name(),
                    role,
                    roles: messages.iter().map(|m| m.get("role").cloned().unwrap_or(Value::Null)).collect(),
                    tokens: plan.entry_tokens[index],
                    edit: pe.edit.map(|(_, k)| match k {
                        EditKind::Omit => "omit",
                        EditKind::Replace => "replace",
                    }),
                }
            })
            .collect();
        let prep = plan.preparation.as_ref().ok();
        PlanDoc {
            version: 1,
            session: SessionJson::of(s),
            leaf_id: s.id_value(plan.leaf),
            leaf_line: line(plan.leaf),
            settings: SettingsDoc {
                enabled: true,
                reserve_tokens: plan.settings.reserve_tokens,
                keep_recent_tokens: plan.settings.keep_recent_tokens,
            },
            path_length: projection.path.len(),
            projection_length: projection.entries.len(),
            prev_compaction_index: plan.prev_compaction_index.map_or(-1, |i| i as i64),
            boundary_start: plan.boundary_start,
            first_kept_projected_index: prep.map(|p| p.first_kept_index),
            context_estimate: plan.context_estimate,
            estimate_tokens,
            preparation: prep.map(|p| {
                let (read_files, modified_files) = p.file_lists();
                PreparationDoc {
                    first_kept_entry_id: s.id_value(p.first_kept_entry),
                    first_kept_entry_line: line(p.first_kept_entry),
                    is_split_turn: p.is_split_turn,
                    tokens_before: p.tokens_before,
                    messages_to_summarize_count: p.messages_to_summarize.len(),
                    turn_prefix_messages_count: p.turn_prefix_messages.len(),
                    previous_summary: &p.previous_summary,
                    file_ops: &p.file_ops,
                    read_files,
                    modified_files,
                    messages_to_summarize: &p.messages_to_summarize,
                    turn_prefix_messages: &p.turn_prefix_messages,
                }
            }),
            preparation_note: plan
                .preparation
                .as_ref()
                .err()
                .map(|refusal| format!("prepareCompaction returned undefined (pi: '{}')", refusal.message())),
            requests: prep.map(|p| {
                p.requests(custom)
                    .into_iter()
                    .map(|r| RequestDoc::new(Some(r.kind.name()), r.prompt, thinking))
                    .collect()
            }),
            summary_template: prep.map(Preparation::summary_template),
        }
    }
}

/// `compact --format json` (without --dry-run): the summary made, and where it was
/// appended.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactDoc<'s> {
    /// `1`.
    pub version: u32,
    pub session: SessionJson<'s>,
    pub leaf_id: Value,
    pub first_kept_entry_id: Value,
    #[serde(serialize_with = "js::serialize_number")]
    pub tokens_before: f64,
    pub is_split_turn: bool,
    pub summary: &'s str,
    pub details: &'s Value,
    pub usage: &'s Option<Value>,
    /// `null` without --append.
    pub appended: Option<AppendedDoc<'s>>,
}

/// An entry appended to the session file.
#[derive(Serialize)]
pub struct AppendedDoc<'s> {
    pub id: &'s str,
    pub line: LineNo,
    /// The entry as written.
    pub entry: &'s Value,
    #[serde(rename = "labelId", skip_serializing_if = "Option::is_none")]
    pub label_id: Option<&'s str>,
}

impl<'s> CompactDoc<'s> {
    pub fn of(
        s: &'s Session,
        plan: &Plan,
        prep: &Preparation,
        made: &'s Summarized,
        appended: Option<&'s Appended>,
    ) -> CompactDoc<'s> {
        CompactDoc {
            version: 1,
            session: SessionJson::of(s),
            leaf_id: s.id_value(plan.leaf),
            first_kept_entry_id: s.id_value(prep.first_kept_entry),
            tokens_before: prep.tokens_before,
            is_split_turn: prep.is_split_turn,
            summary: &made.summary,
            details: &made.details,
            usage: &made.usage,
            appended: appended.map(|a| AppendedDoc { id: &a.id, line: a.line, entry: &a.entry, label_id: None }),
        }
    }
}

/// For people: the summary on `out` (through the terminal filter), and on `err` where
/// it was appended.
/// `first_kept` is the first kept entry as people see ids.
pub fn write_summary(
    out: &mut dyn Write,
    err: &mut dyn Write,
    doc: &CompactDoc,
    first_kept: &str,
) -> std::io::Result<()> {
    writeln!(out, "{}", sanitize(doc.summary))?;
    if let Some(a) = &doc.appended {
        // The summary first, then the note about it.
        out.flush()?;
        writeln!(
            err,
            "appended compaction {} (line {}); the context now starts at {}",
            a.id,
            a.line,
            sanitize(first_kept)
        )?;
    }
    Ok(())
}

pub fn write_plan(
    out: &mut dyn Write,
    s: &Session,
    plan: &Plan,
    custom: Option<&str>,
    thinking: Option<&str>,
    (window, window_source): (u64, &str),
) -> anyhow::Result<()> {
    let short = |i: EntryIdx| s.display_id(i).into_owned();
    let est = &plan.context_estimate;
    writeln!(
        out,
        "Compaction of the path to {} (line {}), {} entries",
        short(plan.leaf),
        s.entries[plan.leaf].line,
        plan.projection.path.len()
    )?;
    writeln!(
        out,
        "Settings: keepRecentTokens {}, reserveTokens {}; context window {window} [{window_source}]",
        plan.settings.keep_recent_tokens, plan.settings.reserve_tokens
    )?;
    let how = if est.last_usage_index.is_some() {
        format!("the last reply's usage {} + {} estimated after it", est.usage_tokens, est.trailing_tokens)
    } else {
        "estimated, characters / 4".to_string()
    };
    writeln!(out, "tokensBefore: {} ({how})", est.tokens)?;
    if let Some(p) = plan.prev_compaction_index {
        let e = plan.projection.entries[p].entry;
        writeln!(out, "Previous compaction: {} (line {}); its summary is updated", short(e), s.entries[e].line)?;
    }
    let prep = match &plan.preparation {
        Err(refusal) => {
            writeln!(out, "pi would not compact: {}", refusal.message())?;
            return Ok(());
        }
        Ok(p) => p,
    };
    let fk = prep.first_kept_entry;
    writeln!(out, "First kept entry: {} (line {}, {})", short(fk), s.entries[fk].line, s.entries[fk].kind_label())?;
    match prep.turn_start_index {
        Some(t) if prep.is_split_turn => {
            let e = plan.projection.entries[t].entry;
            writeln!(
                out,
                "Split turn: yes; the turn starts at {} (line {}), its start is summarized apart",
                short(e),
                s.entries[e].line
            )?;
        }
        _ => writeln!(out, "Split turn: no")?,
    }
    writeln!(
        out,
        "Summarized: {} messages of history, {} of the turn prefix",
        prep.messages_to_summarize.len(),
        prep.turn_prefix_messages.len()
    )?;
    let (read, modified) = prep.file_lists();
    if !read.is_empty() || !modified.is_empty() {
        writeln!(out, "Files: read {}; modified {}", join(&read), join(&modified))?;
    }
    writeln!(out, "Thinking level: {}", thinking.unwrap_or("off (none sent)"))?;
    writeln!(out, "\n── system prompt ──\n{}", prompts::SUMMARIZATION_SYSTEM_PROMPT)?;
    for (n, r) in prep.requests(custom).iter().enumerate() {
        let tokens = r.prompt.chars().map(char::len_utf16).sum::<usize>().div_ceil(4);
        writeln!(out, "\n── request {}: {} (~{tokens} tokens) ──\n{}", n + 1, r.kind.name(), sanitize(&r.prompt))?;
    }
    Ok(())
}

fn join(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}
