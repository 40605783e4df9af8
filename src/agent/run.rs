//! The agent loop (docs/pi-format.md §7.1, §7.2, §7.5): one prompt's entries appended (the
//! system patch, the user message, each assistant and its tool results in call order), the
//! model called until it stops, failed calls retried or recovered by compaction as pi
//! records them, and each batch of tool calls run as pi runs it.
//!
//! What the loop builds on lives beside it: the prompt ([`super::prompt`]), the session
//! file ([`super::writer`]), error classes ([`super::errors`]), compaction
//! ([`super::compaction`]) and the model call ([`super::stream`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::compaction::{compact_now, over_threshold};
use super::errors::{classify, error_text, retry_delay, ErrorClass};
use super::stream::{call_model, Updates};
use super::writer::SessionWriter;
use super::{execute_tool_call, Tool, ToolContext, ToolOutput};
use crate::llm::message::{error_message, now_ms};
use crate::llm::{CompactionSettings, LlmError, Provider, ProviderOptions, Request, RetrySettings, StreamEvent};

/// The text a `length` stop gives each tool call instead of running it (§7.1 step 5).
fn length_stop_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// The loop's providers for `opts` (which carry pi's retry settings): the model calls
/// without silent retries, since pi retries them at the agent level and records each failed
/// attempt (§7.5); and the summarizer, the same model with the retries, for compaction
/// summaries (pi retries those silently, with the same settings).
pub fn open_providers(opts: &ProviderOptions, env: &crate::env::Env) -> Result<Providers, LlmError> {
    let calls = crate::llm::open_provider(&ProviderOptions { max_retries: 0, ..opts.clone() }, env)?;
    let summarizer = crate::llm::open_provider(opts, env)?;
    Ok(Providers { calls: calls.into(), summarizer: summarizer.into() })
}

/// See [`open_providers`].
pub struct Providers {
    pub calls: Arc<dyn Provider>,
    pub summarizer: Arc<dyn Provider>,
}

/// One prompt's settings.
pub struct Turn<'a> {
    /// The model calls (no silent retries: see [`open_providers`]).
    pub provider: Arc<dyn Provider>,
    /// Compaction summaries (with pi's retries).
    pub summarizer: Arc<dyn Provider>,
    /// The provider's API name (`anthropic-messages`, …), for error messages.
    pub api: String,
    pub tools: &'a [Box<dyn Tool>],
    pub tool_ctx: &'a ToolContext,
    pub thinking_level: String,
    /// Stop after this many model calls (a safety net; `None` = no limit, as pi).
    pub max_turns: Option<u32>,
    /// pi's `retry` settings: error assistants pi classifies as retryable are recorded,
    /// omitted with a `context_edit` and retried (§7.5).
    pub retry: RetrySettings,
    /// pi's `compaction` settings for the model (§6.7).
    pub compaction: CompactionSettings,
}

/// How a run ended.
#[derive(Debug)]
pub struct Outcome {
    /// The last assistant message.
    pub last: Value,
    /// Its stopReason.
    pub stop_reason: String,
    /// Every message of the run (starting messages included), as `agent_end` lists them.
    pub messages: Vec<Value>,
    /// Why the run failed beyond the last message's own error (overflow recovery), if so.
    pub failure: Option<String>,
}

fn message_event(kind: &str, message: &Value) -> Value {
    json!({"type": kind, "message": message})
}

/// Omits `target` (and nothing else) from future context: `context_edit{targetId,
/// replacement:null}` (§2.2).
fn omit(writer: &mut SessionWriter, target: &str, emit: &mut dyn FnMut(Value)) -> anyhow::Result<()> {
    let mut p = Map::new();
    p.insert("targetId".into(), target.into());
    p.insert("replacement".into(), Value::Null);
    let entry = writer.append("context_edit", p)?;
    emit(json!({"type": "entry_appended", "entry": entry}));
    Ok(())
}

/// Sleeps `wait`, waking early when the run is aborted.
fn abortable_sleep(wait: Duration, ctx: &ToolContext) {
    let end = Instant::now() + wait;
    while !ctx.aborted() {
        let now = Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

/// The text pi gives unstarted tool calls of an aborted batch.
const ABORTED_TEXT: &str = "Operation aborted";

/// Runs one prompt: appends `starting` (the system patch and the user message) and then
/// the loop (§7.1), with `context` the AgentMessages of the branch so far (the projection
/// at the leaf). `emit` gets pi's JSON-mode events.
///
/// Recovery as pi 1.6 records it: a retryable error assistant is followed by a
/// `context_edit` omitting it and a fresh call (at most `retry.maxRetries` in a row, with
/// pi's backoff); a context-overflow error is omitted, the branch compacted and the call
/// retried once; before each call a context over `window − reserveTokens` is compacted.
/// An abort (`tool_ctx.abort`) ends the stream as `aborted` and answers unstarted calls
/// with `Operation aborted`.
pub fn run_prompt(
    turn: &Turn,
    writer: &mut SessionWriter,
    context: &mut Vec<Value>,
    starting: Vec<Value>,
    emit: &mut dyn FnMut(Value),
) -> anyhow::Result<Outcome> {
    let outcome = run_loop(turn, writer, context, starting, emit)?;
    // pi 1.6: the run is over (retries and compactions included).
    emit(json!({"type": "agent_settled", "aborted": turn.tool_ctx.aborted()}));
    Ok(outcome)
}

fn run_loop(
    turn: &Turn,
    writer: &mut SessionWriter,
    context: &mut Vec<Value>,
    starting: Vec<Value>,
    emit: &mut dyn FnMut(Value),
) -> anyhow::Result<Outcome> {
    let mut run_messages = Vec::new();
    emit(json!({"type": "agent_start"}));
    emit(json!({"type": "turn_start"}));
    for m in starting {
        emit(message_event("message_start", &m));
        writer.append_message(&m)?;
        emit(message_event("message_end", &m));
        context.push(m.clone());
        run_messages.push(m);
    }
    let mut calls_made = 0u32;
    let mut retry_attempt = 0u32;
    let mut overflow_tried = false;
    let mut fresh_turn = false;
    loop {
        if calls_made > 0 && !fresh_turn {
            emit(json!({"type": "turn_start"}));
        }
        fresh_turn = false;
        // Threshold compaction before the request (pi 1.6 checks before every prompt and
        // between turns).
        if !turn.tool_ctx.aborted() && over_threshold(turn, writer, context) {
            compact_now(turn, writer, context, "threshold", false, emit)?;
        }
        calls_made += 1;
        let request = Request {
            system: None,
            messages: crate::session::projection::convert_to_llm(context),
            tools: Vec::new(),
            max_tokens: None,
            thinking_level: Some(turn.thinking_level.clone()),
        };
        let spec = turn.provider.model().clone();
        let started = Instant::now();
        let timestamp = now_ms();
        let mut updates = Updates::new();
        emit(message_event(
            "message_start",
            &json!({"role": "assistant", "content": [], "api": turn.api, "provider": spec.provider,
                    "model": spec.id, "usage": updates.usage, "stopReason": "pending", "timestamp": timestamp}),
        ));
        let result = if turn.tool_ctx.aborted() {
            Err(LlmError::Other("Request was aborted".into()))
        } else {
            call_model(&turn.provider, request, &turn.tool_ctx.abort, &mut |ev: &StreamEvent| {
                if let StreamEvent::Retry { attempt, wait_ms, reason } = ev {
                    emit(
                        json!({"type": "auto_retry_start", "attempt": attempt, "delayMs": wait_ms, "errorMessage": reason}),
                    );
                    updates = Updates::new();
                } else {
                    updates.on(ev, emit);
                }
            })
        };
        if let Ok(m) = &result {
            if !matches!(m.get("stopReason").and_then(Value::as_str), Some("error" | "aborted")) {
                updates.close(Some(m), emit);
            }
        }
        let assistant = match result {
            _ if turn.tool_ctx.aborted() => aborted_assistant(turn, &updates.partial(), timestamp, started),
            Ok(m) => m,
            Err(e) => error_assistant(turn, &e, timestamp, started),
        };
        let written = writer.append_message(&assistant)?;
        let assistant_id = written.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        emit(message_event("message_end", &assistant));
        context.push(assistant.clone());
        run_messages.push(assistant.clone());
        let stop = assistant.get("stopReason").and_then(Value::as_str).unwrap_or("stop").to_string();
        let calls: Vec<Value> = assistant
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
            .cloned()
            .collect();
        if stop == "error" && !turn.tool_ctx.aborted() {
            let error = error_text(&assistant).to_string();
            let class = classify(&error, &turn.compaction, &turn.retry);
            let (overflow, retry) = (class == ErrorClass::Overflow, class == ErrorClass::Retryable);
            if overflow && !overflow_tried {
                overflow_tried = true;
                emit(json!({"type": "turn_end", "message": assistant, "toolResults": []}));
                emit(json!({"type": "agent_end", "messages": run_messages, "willRetry": true}));
                omit(writer, &assistant_id, emit)?;
                context.pop();
                if compact_now(turn, writer, context, "overflow", true, emit)? {
                    emit(json!({"type": "agent_start"}));
                    emit(json!({"type": "turn_start"}));
                    fresh_turn = true;
                    continue;
                }
                return Ok(Outcome {
                    last: assistant,
                    stop_reason: stop,
                    messages: run_messages,
                    failure: Some("Context overflow recovery failed: nothing to compact".into()),
                });
            }
            if overflow {
                emit(json!({"type": "turn_end", "message": assistant, "toolResults": []}));
                emit(json!({"type": "agent_end", "messages": run_messages, "willRetry": false}));
                return Ok(Outcome {
                    last: assistant,
                    stop_reason: stop,
                    messages: run_messages,
                    failure: Some("Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.".into()),
                });
            }
            if retry && retry_attempt < turn.retry.max_retries {
                retry_attempt += 1;
                let wait = retry_delay(&turn.retry, retry_attempt);
                emit(json!({"type": "turn_end", "message": assistant, "toolResults": []}));
                emit(json!({"type": "agent_end", "messages": run_messages, "willRetry": true}));
                emit(
                    json!({"type": "auto_retry_start", "attempt": retry_attempt, "maxAttempts": turn.retry.max_retries,
                            "delayMs": wait.as_millis() as u64, "errorMessage": error}),
                );
                omit(writer, &assistant_id, emit)?;
                context.pop();
                abortable_sleep(wait, turn.tool_ctx);
                emit(json!({"type": "agent_start"}));
                emit(json!({"type": "turn_start"}));
                fresh_turn = true;
                continue;
            }
            if retry_attempt > 0 {
                emit(
                    json!({"type": "auto_retry_end", "success": false, "attempt": retry_attempt, "finalError": error}),
                );
            }
        } else if stop != "aborted" && retry_attempt > 0 {
            emit(json!({"type": "auto_retry_end", "success": true, "attempt": retry_attempt}));
            retry_attempt = 0;
        }
        if stop != "error" && stop != "length" {
            overflow_tried = false;
        }
        if stop == "error" || stop == "aborted" || calls.is_empty() {
            emit(json!({"type": "turn_end", "message": assistant, "toolResults": []}));
            emit(json!({"type": "agent_end", "messages": run_messages, "willRetry": false}));
            return Ok(Outcome { last: assistant, stop_reason: stop, messages: run_messages, failure: None });
        }
        // pi runs a batch's calls concurrently (edit/write calls on one path one after the
        // other) and writes the results after the last one, in call order (§7.2).
        let prepared: Vec<(String, String, Value)> = calls
            .iter()
            .map(|call| {
                let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                let args = match (call.get("argumentsError"), call.get("arguments")) {
                    (Some(Value::String(_)), _) => call.get("arguments").cloned().unwrap_or(json!({})),
                    (_, Some(a)) => a.clone(),
                    _ => json!({}),
                };
                (id, name, args)
            })
            .collect();
        for (id, name, args) in &prepared {
            emit(json!({"type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args}));
        }
        let outputs = run_batch(turn, &prepared, stop == "length");
        let mut results = Vec::new();
        for ((id, name, _), (out, duration)) in prepared.iter().zip(outputs) {
            let mut result = Map::new();
            result.insert("content".into(), Value::Array(out.content.clone()));
            if let Some(d) = &out.details {
                result.insert("details".into(), d.clone());
            }
            emit(json!({"type": "tool_execution_end", "toolCallId": id, "toolName": name,
                        "result": result, "isError": out.is_error, "durationMs": duration}));
            let mut msg = out.to_message(id, name, now_ms() as i64);
            // pi's key order: …, details?, usage?, isError, durationMs?, timestamp.
            if let Value::Object(m) = &mut msg {
                let ts = m.shift_remove("timestamp").unwrap_or(Value::Null);
                m.insert("durationMs".into(), json!(duration));
                m.insert("timestamp".into(), ts);
            }
            results.push(msg);
        }
        // Results are emitted and written after the last call, in call order (§7.2).
        for r in &results {
            emit(message_event("message_start", r));
            writer.append_message(r)?;
            emit(message_event("message_end", r));
            context.push(r.clone());
            run_messages.push(r.clone());
        }
        emit(json!({"type": "turn_end", "message": assistant, "toolResults": results}));
        if turn.tool_ctx.aborted() {
            // pi stops the loop after an aborted batch.
            emit(json!({"type": "agent_end", "messages": run_messages, "willRetry": false}));
            return Ok(Outcome {
                last: assistant,
                stop_reason: "aborted".into(),
                messages: run_messages,
                failure: Some(ABORTED_TEXT.into()),
            });
        }
        if turn.max_turns.is_some_and(|max| calls_made >= max) {
            emit(json!({"type": "agent_end", "messages": run_messages, "willRetry": false}));
            return Ok(Outcome { last: assistant, stop_reason: stop, messages: run_messages, failure: None });
        }
    }
}

/// Runs a batch of tool calls as pi does: concurrently, except that edit/write calls on
/// the same path run one after the other (in call order). Returns each call's output and
/// duration in milliseconds, in call order. After a `length` stop nothing runs: every call
/// gets pi's "not executed" error.
fn run_batch(turn: &Turn, calls: &[(String, String, Value)], length_stop: bool) -> Vec<(ToolOutput, u64)> {
    let run_one = |name: &str, args: &Value| {
        let t0 = Instant::now();
        let out = if length_stop {
            ToolOutput::error(length_stop_text(name))
        } else if turn.tool_ctx.aborted() {
            ToolOutput::error(ABORTED_TEXT)
        } else {
            execute_tool_call(turn.tools, name, args, turn.tool_ctx)
        };
        (out, t0.elapsed().as_millis() as u64)
    };
    // Lanes: calls that write the same path share one; every other call has its own.
    let mut lanes: Vec<Vec<usize>> = Vec::new();
    let mut by_path: HashMap<String, usize> = HashMap::new();
    for (i, (_, name, args)) in calls.iter().enumerate() {
        let path = args.get("path").and_then(Value::as_str).filter(|_| matches!(name.as_str(), "edit" | "write"));
        match path.and_then(|p| by_path.get(p)) {
            Some(&lane) => lanes[lane].push(i),
            None => {
                if let Some(p) = path {
                    by_path.insert(p.to_string(), lanes.len());
                }
                lanes.push(vec![i]);
            }
        }
    }
    let mut outputs: Vec<Option<(ToolOutput, u64)>> = (0..calls.len()).map(|_| None).collect();
    if lanes.len() <= 1 {
        for (i, (_, name, args)) in calls.iter().enumerate() {
            outputs[i] = Some(run_one(name, args));
        }
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = lanes
                .iter()
                .map(|lane| {
                    let run_one = &run_one;
                    scope
                        .spawn(move || lane.iter().map(|&i| (i, run_one(&calls[i].1, &calls[i].2))).collect::<Vec<_>>())
                })
                .collect();
            for h in handles {
                for (i, out) in h.join().expect("a tool thread panicked") {
                    outputs[i] = Some(out);
                }
            }
        });
    }
    outputs.into_iter().map(|o| o.expect("every call ran")).collect()
}

/// The assistant pi writes when a stream is aborted: what had arrived, `stopReason:
/// "aborted"`, `errorMessage: "Request was aborted"`.
fn aborted_assistant(turn: &Turn, partial: &[Value], timestamp: u64, started: Instant) -> Value {
    let mut m = error_assistant(turn, &LlmError::Other("Request was aborted".into()), timestamp, started);
    m["content"] = Value::Array(partial.to_vec());
    m["stopReason"] = "aborted".into();
    m
}

fn error_assistant(turn: &Turn, e: &LlmError, timestamp: u64, started: Instant) -> Value {
    error_message(
        turn.provider.model(),
        &turn.api,
        e,
        Some(&turn.thinking_level),
        timestamp,
        started.elapsed().as_millis() as u64,
    )
}

/// The text blocks of an assistant message, joined by newlines (what `-p` prints).
pub fn assistant_text(message: &Value) -> String {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}
