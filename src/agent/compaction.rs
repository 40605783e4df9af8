//! Compaction inside the loop (docs/pi-format.md §6.7): the threshold check before each model
//! call, and the compaction itself (the branch summarized with the model, as `pisces
//! compact --append` does), which threshold, overflow recovery and the REPL's `/compact`
//! share.

use std::sync::Arc;

use serde_json::{json, Value};

use super::run::Turn;
use super::stream::Abortable;
use super::writer::SessionWriter;
use crate::llm::StreamEvent;
use crate::session::{system, write};

/// The branch's AgentMessages at the writer's leaf, read back from the file.
fn reproject(writer: &SessionWriter) -> anyhow::Result<Vec<Value>> {
    crate::formats::pi::read_path(writer.path(), |session| {
        let leaf = writer.leaf().and_then(|id| session.get(id));
        Ok(session.dialect().project(session, leaf)?.messages)
    })
}

/// Compacts the branch at the writer's leaf with the model, as `pisces compact --append`
/// does, and appends the `compaction` entry; then `context` is the new projection.
/// `Ok(false)`: pi would not compact here (nothing to compact, or the summary failed, which
/// is reported in `compaction_end`).
pub(crate) fn compact_now(
    turn: &Turn,
    writer: &mut SessionWriter,
    context: &mut Vec<Value>,
    reason: &str,
    will_retry: bool,
    emit: &mut dyn FnMut(Value),
) -> anyhow::Result<bool> {
    use crate::formats::pi::entries as entry;
    use crate::summarize::compaction;
    if !writer.on_disk() {
        return Ok(false);
    }
    let settings = compaction::Settings {
        reserve_tokens: turn.compaction.reserve_tokens,
        keep_recent_tokens: turn.compaction.keep_recent_tokens,
    };
    // The plan, and the first kept entry's id: the plan's entry indices are this read's
    // and mean nothing once the session is dropped.
    let planned = crate::formats::pi::read_path(writer.path(), |session| {
        let Some(leaf) = writer.leaf().and_then(|id| session.get(id)) else { return Ok(None) };
        let projection = session.dialect().project(session, Some(leaf))?;
        let plan = compaction::plan(session, leaf, projection, settings)?;
        let first_kept = plan.preparation.as_ref().ok().map(|p| session.id_value(p.first_kept_entry));
        Ok(Some((plan, first_kept)))
    })?;
    let Some((plan, Some(first_kept))) = planned else { return Ok(false) };
    let Ok(prep) = &plan.preparation else { return Ok(false) };
    emit(json!({"type": "compaction_start", "reason": reason}));
    let thinking = (turn.thinking_level != "off").then_some(turn.thinking_level.as_str());
    // The summary calls stop on Ctrl-C as the loop's own calls do.
    let provider = Abortable { inner: Arc::clone(&turn.summarizer), abort: Arc::clone(&turn.tool_ctx.abort) };
    // A summary call's retries, as pi reports them: scheduled (with the wait), the attempt
    // starting (at the retry's first event), finished.
    let mut retrying = false;
    let mut retried = false;
    let done = compaction::compact(prep, &provider, None, thinking, &mut |ev| {
        if let StreamEvent::Retry { attempt, wait_ms, reason } = ev {
            emit(json!({"type": "summarization_retry_scheduled", "attempt": attempt,
                        "maxAttempts": turn.retry.max_retries, "delayMs": wait_ms, "errorMessage": reason}));
            (retrying, retried) = (true, true);
        } else if std::mem::take(&mut retrying) {
            emit(json!({"type": "summarization_retry_attempt_start", "source": "compaction", "reason": reason}));
        }
    });
    if retried {
        emit(json!({"type": "summarization_retry_finished"}));
    }
    let c = match done {
        Ok(c) => c,
        Err(_) if turn.tool_ctx.aborted() => {
            emit(json!({"type": "compaction_end", "reason": reason, "aborted": true, "willRetry": false}));
            return Ok(false);
        }
        Err(e) => {
            let text = if reason == "overflow" {
                format!("Context overflow recovery failed: {e}")
            } else {
                format!("Auto-compaction failed: {e}")
            };
            emit(
                json!({"type": "compaction_end", "reason": reason, "aborted": false, "willRetry": false, "errorMessage": text}),
            );
            return Ok(false);
        }
    };
    let system_message = system::current_system_message(&plan.projection.messages);
    let ts = write::now_iso();
    let built = entry::compaction(
        "",
        None,
        &ts,
        &c.summary,
        first_kept.clone(),
        prep.tokens_before,
        prep.details(),
        c.usage.as_ref(),
        system_message,
    );
    let mut payload = built.as_object().cloned().unwrap_or_default();
    for k in ["type", "id", "parentId", "timestamp"] {
        payload.shift_remove(k);
    }
    writer.append_at("compaction", payload, &ts)?;
    *context = reproject(writer)?;
    let tokens_before = crate::session::js::number(prep.tokens_before);
    emit(json!({"type": "compaction_end", "reason": reason, "aborted": false, "willRetry": will_retry,
                "result": {"summary": c.summary, "firstKeptEntryId": first_kept, "tokensBefore": tokens_before,
                           "usage": c.usage, "details": prep.details()}}));
    Ok(true)
}

/// Whether the context at the writer's leaf is over `window − reserveTokens` (pi's
/// `shouldCompact`, with `estimateProjectedContextTokens`).
pub(super) fn over_threshold(turn: &Turn, writer: &SessionWriter, context: &[Value]) -> bool {
    let Some(window) = turn.provider.context_window() else { return false };
    if !turn.compaction.enabled || !writer.on_disk() {
        return false;
    }
    let limit = window.saturating_sub(turn.compaction.reserve_tokens) as f64;
    // The cheap estimate first; the file is read only near the limit.
    if crate::summarize::tokens::estimate_context_tokens(context).tokens <= limit {
        return false;
    }
    let over = crate::formats::pi::read_path(writer.path(), |session| {
        let Some(leaf) = writer.leaf().and_then(|id| session.get(id)) else { return Ok(false) };
        let projection = session.dialect().project(session, Some(leaf))?;
        Ok(crate::summarize::tokens::estimate_projected_context_tokens(session, &projection).tokens > limit)
    });
    over.unwrap_or(false)
}
