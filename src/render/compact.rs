//! `pisces compact`'s plan for people and programs (the dry run): where pi would cut, what
//! it would summarize, and the requests it would send.

use std::io::Write;

use serde_json::{json, Value};

use super::json::session_json;
use super::sanitize;
use crate::session::projection::EditKind;
use crate::session::{EntryIdx, Session};
use crate::summarize::compaction::Plan;
use crate::summarize::prompts;

/// The plan as JSON, with pi-oracle compaction.mjs's field names.
pub fn plan_json(s: &Session, plan: &Plan, custom: Option<&str>, thinking: Option<&str>) -> Value {
    let line = |i: EntryIdx| s.entries[i].line;
    let per_entry: Vec<Value> = plan
        .projection
        .entries
        .iter()
        .enumerate()
        .map(|(index, pe)| {
            let e = &s.entries[pe.entry];
            let mut m = serde_json::Map::new();
            m.insert("index".into(), index.into());
            m.insert("id".into(), s.id_value(pe.entry));
            m.insert("line".into(), line(pe.entry).get().into());
            m.insert("type".into(), e.kind.name().into());
            if e.kind == crate::session::EntryType::Message {
                let msg = plan.projection.messages[pe.messages.clone()].first();
                let role = msg.and_then(|m| m.get("role")).cloned();
                m.insert("role".into(), role.unwrap_or_else(|| e.kind_label().into()));
            }
            let roles: Vec<Value> = plan.projection.messages[pe.messages.clone()]
                .iter()
                .map(|m| m.get("role").cloned().unwrap_or(Value::Null))
                .collect();
            m.insert("roles".into(), roles.into());
            m.insert("tokens".into(), plan.entry_tokens[index].into());
            m.insert(
                "edit".into(),
                match pe.edit {
                    Some((_, EditKind::Omit)) => "omit".into(),
                    Some((_, EditKind::Replace)) => "replace".into(),
                    None => Value::Null,
                },
            );
            Value::Object(m)
        })
        .collect();
    let mut doc = json!({
        "version": 1,
        "session": session_json(s),
        "leafId": s.id_value(plan.leaf),
        "leafLine": line(plan.leaf),
        "settings": {"enabled": true, "reserveTokens": plan.settings.reserve_tokens, "keepRecentTokens": plan.settings.keep_recent_tokens},
        "pathLength": plan.projection.path.len(),
        "projectionLength": plan.projection.entries.len(),
        "prevCompactionIndex": plan.prev_compaction_index.map_or(-1, |i| i as i64),
        "boundaryStart": plan.boundary_start,
        "firstKeptProjectedIndex": plan.preparation.as_ref().ok().map(|p| p.first_kept_index),
        "contextEstimate": plan.context_estimate.to_json(),
        "estimateTokens": per_entry,
        "preparation": null,
    });
    match &plan.preparation {
        Err(refusal) => {
            doc["preparationNote"] =
                format!("prepareCompaction returned undefined (pi: '{}')", refusal.message()).into();
        }
        Ok(p) => {
            let (read, modified) = p.file_lists();
            doc["preparation"] = json!({
                "firstKeptEntryId": s.id_value(p.first_kept_entry),
                "firstKeptEntryLine": line(p.first_kept_entry),
                "isSplitTurn": p.is_split_turn,
                "tokensBefore": crate::session::js::number(p.tokens_before),
                "messagesToSummarizeCount": p.messages_to_summarize.len(),
                "turnPrefixMessagesCount": p.turn_prefix_messages.len(),
                "previousSummary": p.previous_summary,
                "fileOps": p.file_ops.to_json(),
                "readFiles": read,
                "modifiedFiles": modified,
                "messagesToSummarize": p.messages_to_summarize,
                "turnPrefixMessages": p.turn_prefix_messages,
            });
            doc["requests"] = p
                .requests(custom)
                .into_iter()
                .map(|r| {
                    json!({
                        "kind": r.kind.name(),
                        "systemPrompt": prompts::SUMMARIZATION_SYSTEM_PROMPT,
                        "promptText": r.prompt,
                        "messageCount": 1,
                        "maxTokens": null,
                        "cacheRetention": "none",
                        "reasoning": thinking,
                    })
                })
                .collect::<Vec<_>>()
                .into();
            doc["summaryTemplate"] = p.summary_template().into();
        }
    }
    doc
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
