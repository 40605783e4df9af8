//! What omp hands its provider for a context: its own `convertToLlm`
//! (`pi-coding-agent/src/session/messages.ts`), which differs from pi's (docs/omp-format.md §6).
//!
//! - Messages are attributed (`attribution`: who started them) and custom messages go in
//!   the `developer` role, not as user text.
//! - The summaries' wrappers are omp's prompt templates, rendered by its prompt formatter
//!   (`prompt.rs`), which reformats the summary inside them too.
//! - The user's `!` and `$` runs, `@file` mentions, a collaborator's prompt, a skill the user
//!   invoked, custom messages with images and pruned tool results each have a shape of
//!   their own; an assistant turn interrupted while thinking loses its unsigned thinking.
//!
//! Each function is named after the one in omp it follows.

use serde_json::{json, Map, Value};

use super::prompt;
use super::snapcompact::text_block;
use crate::session::js;
use crate::session::projection::{put, run_text};

const BRANCH_SUMMARY: &str = "Branch-return summary:\n\n<summary>\n{{summary}}\n</summary>\n";
const COMPACTION_SUMMARY: &str = "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\n{{summary}}\n</summary>\n";
const HANDOFF_SUMMARY: &str = "Context replaced. The <handoff> below is a handoff document a prior instance of you wrote from the full conversation. It is your own working memory, not user input.\n- First person inside it refers to you (the prior instance).\n- \"Next Steps\" is your own resumed plan; re-check it against the latest user message before acting.\n- The handoff already exists and is complete: NEVER write another handoff document unless the user explicitly asks.\nMUST build on prior work; NEVER duplicate prior work.\n\n<handoff>\n{{summary}}\n</handoff>\n";
const USER_INTERJECTION: &str = "<system-notice>\nUser interjection during work: priority; supersedes conflicting prior instructions. Re-read; ensure current work reflects user intent.\n</system-notice>\n{{message}}\n";

const COLLAB_PROMPT: &str = "collab-prompt";
const SKILL_PROMPT: &str = "skill-prompt";
const INTERRUPTED_THINKING: &str = "interrupted-thinking";
const USER_INTERRUPT_LABEL: &str = "Interrupted by user";
/// `AIError.Flag.UserInterrupt`.
const USER_INTERRUPT_FLAG: i64 = 0x0400_0000;

/// `convertToLlm`: every message's fragment, in order.
pub fn convert_to_llm(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        // `followedByInterruptedThinking`
        let interrupted_next = role(m) == "assistant"
            && messages
                .get(i + 1)
                .is_some_and(|n| role(n) == "custom" && str_of(n, "customType") == Some(INTERRUPTED_THINKING));
        out.extend(convert_one(m, interrupted_next));
    }
    out
}

fn role(m: &Value) -> &str {
    str_of(m, "role").unwrap_or_default()
}

fn str_of<'v>(m: &'v Value, key: &str) -> Option<&'v str> {
    m.get(key).and_then(Value::as_str)
}

/// `{ role, content, attribution, timestamp }`, the shape most fragments have.
fn message(role: &str, content: Value, attribution: Option<&Value>, timestamp: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), role.into());
    m.insert("content".into(), content);
    put(&mut m, "attribution", attribution);
    put(&mut m, "timestamp", timestamp);
    Value::Object(m)
}

/// `isCustomMessageContent`: a string or an array.
fn is_custom_content(c: Option<&Value>) -> bool {
    matches!(c, Some(Value::String(_) | Value::Array(_)))
}

fn blocks_of<'v>(content: &'v Value, ty: &str) -> Vec<&'v Value> {
    content.as_array().into_iter().flatten().filter(|b| str_of(b, "type") == Some(ty)).collect()
}

/// `convertOne`.
fn convert_one(m: &Value, interrupted_next: bool) -> Vec<Value> {
    let ts = m.get("timestamp");
    let user = Value::from("user");
    match role(m) {
        "bashExecution" | "pythonExecution" => {
            if js::truthy(m.get("excludeFromContext")) {
                return Vec::new();
            }
            let (text, images) = if role(m) == "bashExecution" {
                (bash_execution_to_text(m), m.get("images").and_then(Value::as_array).cloned().unwrap_or_default())
            } else {
                (python_execution_to_text(m), Vec::new())
            };
            let mut content = vec![json!({"type": "text", "text": text})];
            content.extend(images);
            vec![message("user", Value::Array(content), Some(&user), ts)]
        }
        "fileMention" => file_mention(m),
        "custom" | "hookMessage" => {
            if !is_custom_content(m.get("content")) {
                return Vec::new();
            }
            let custom_type = str_of(m, "customType");
            let attribution = str_of(m, "attribution");
            if role(m) == "custom" && custom_type == Some(COLLAB_PROMPT) && attribution == Some("user") {
                return convert_message_to_llm(&wrap_steering(m)).into_iter().collect();
            }
            if role(m) == "custom" && custom_type == Some(SKILL_PROMPT) && attribution == Some("user") {
                return vec![message("user", custom_content(&m["content"]), Some(&user), ts)];
            }
            image_bearing_custom(m).unwrap_or_else(|| convert_message_to_llm(m).into_iter().collect())
        }
        "assistant" => {
            let user_interrupted = str_of(m, "stopReason") == Some("aborted") && is_user_interrupt_abort(m);
            let stripped = (interrupted_next || user_interrupted).then(|| strip_demoted_thinking(m)).flatten();
            let source = stripped.as_ref().unwrap_or(m);
            let empty = source.get("content").and_then(Value::as_array).is_some_and(Vec::is_empty);
            if user_interrupted && !interrupted_next && empty {
                return Vec::new();
            }
            convert_message_to_llm(source).into_iter().collect()
        }
        "branchSummary" | "compactionSummary" | "user" | "developer" | "toolResult" => {
            convert_message_to_llm(m).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// `convertMessageToLlm` (pi-agent-core's `compaction/messages.ts`): the core roles.
fn convert_message_to_llm(m: &Value) -> Option<Value> {
    let ts = m.get("timestamp");
    match role(m) {
        "custom" | "hookMessage" => {
            Some(message("developer", custom_content(m.get("content")?), m.get("attribution"), ts))
        }
        "branchSummary" => {
            let text = render(BRANCH_SUMMARY, m.get("summary"));
            Some(rewrite("user", vec![text_block(text)], None, ts))
        }
        "compactionSummary" => {
            let content = match m.get("blocks") {
                Some(blocks) => {
                    // (`{type: "text", text: message.summary}`: no `text` when there is no summary.)
                    let mut lead = Map::new();
                    lead.insert("type".into(), "text".into());
                    put(&mut lead, "text", m.get("summary"));
                    let mut content = vec![Value::Object(lead)];
                    content.extend(blocks.as_array().into_iter().flatten().cloned());
                    content
                }
                None => {
                    let template =
                        if str_of(m, "method") == Some("handoff") { HANDOFF_SUMMARY } else { COMPACTION_SUMMARY };
                    let mut content = vec![text_block(render(template, m.get("summary")))];
                    content.extend(m.get("images").and_then(Value::as_array).into_iter().flatten().cloned());
                    content
                }
            };
            Some(rewrite("user", content, m.get("providerPayload"), ts))
        }
        "user" => Some(attributed(m.clone(), "user")),
        "developer" => Some(attributed(m.clone(), "agent")),
        "assistant" => Some(m.clone()),
        "toolResult" => {
            let mut out = m.clone();
            if let (Some(o), Some(_)) = (out.as_object_mut(), m.get("prunedAt")) {
                o.insert("content".into(), Value::Array(pruned_content(m.get("content"))));
            }
            Some(attributed(out, "agent"))
        }
        _ => None,
    }
}

/// A summary as the history rewrite it is: `attribution: "agent"`, `historyRewriteAt`.
fn rewrite(role: &str, content: Vec<Value>, payload: Option<&Value>, ts: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), role.into());
    m.insert("content".into(), Value::Array(content));
    m.insert("attribution".into(), "agent".into());
    put(&mut m, "historyRewriteAt", ts);
    put(&mut m, "providerPayload", payload);
    put(&mut m, "timestamp", ts);
    Value::Object(m)
}

/// `{ ...message, attribution: message.attribution ?? fallback }`: the key keeps its place
/// when the message has it, else comes last.
fn attributed(mut m: Value, fallback: &str) -> Value {
    if let Some(o) = m.as_object_mut() {
        if o.get("attribution").is_none_or(Value::is_null) {
            o.insert("attribution".into(), fallback.into());
        }
    }
    m
}

/// `customMessageContentToLlmContent`, and the custom case of `convertMessageToLlm`: a
/// string is one text block.
fn custom_content(c: &Value) -> Value {
    match c {
        Value::String(s) => Value::Array(vec![text_block(s.clone())]),
        other => other.clone(),
    }
}

/// `getPrunedToolResultContent`: the text blocks joined into the first one (or
/// "[Output truncated]" first), the other blocks kept.
fn pruned_content(content: Option<&Value>) -> Vec<Value> {
    let blocks: &[Value] = content.and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let is_text = |b: &Value| str_of(b, "type") == Some("text");
    let joined = join_texts(blocks.iter().filter(|b| is_text(b)), "");
    let text = if joined.is_empty() { "[Output truncated]".to_string() } else { joined };
    let Some(first) = blocks.iter().position(is_text) else {
        let mut out = vec![text_block(text)];
        out.extend(blocks.iter().cloned());
        return out;
    };
    let mut out = Vec::with_capacity(blocks.len());
    for (k, b) in blocks.iter().enumerate() {
        if !is_text(b) {
            out.push(b.clone());
        } else if k == first {
            out.push(text_block(text.clone()));
        }
    }
    out
}

/// `wrapSteeringUserMessage` for a collaborator's prompt: a user message whose text is
/// wrapped in the interjection notice (an empty one is left as it is).
fn wrap_steering(m: &Value) -> Value {
    let ts = m.get("timestamp");
    let user = Value::from("user");
    let content = &m["content"];
    let plain = message("user", content.clone(), Some(&user), ts);
    let wrapped = match content {
        Value::String(s) if s.is_empty() => return plain,
        Value::String(s) => {
            Value::String(prompt::render(USER_INTERJECTION, "message", Some(&Value::String(s.clone()))))
        }
        _ => {
            // `getArrayContentText`: the text blocks' texts joined by lines.
            let text = join_texts(blocks_of(content, "text").into_iter(), "\n");
            if text.is_empty() {
                return plain;
            }
            let mut blocks = vec![text_block(prompt::render(USER_INTERJECTION, "message", Some(&Value::String(text))))];
            blocks.extend(blocks_of(content, "image").into_iter().cloned());
            Value::Array(blocks)
        }
    };
    message("user", wrapped, Some(&user), ts)
}

/// The blocks' `text`s joined by `sep`, as JS joins them (a missing one as nothing).
fn join_texts<'v>(blocks: impl Iterator<Item = &'v Value>, sep: &str) -> String {
    blocks.map(|b| js::to_js_string_or_empty(b.get("text"))).collect::<Vec<_>>().join(sep)
}

/// `convertImageBearingCustomMessage`: the text blocks as a developer message, then the
/// images in a user message that names the custom type. `None` without images.
fn image_bearing_custom(m: &Value) -> Option<Vec<Value>> {
    let content = m.get("content").filter(|c| c.is_array())?;
    let images = blocks_of(content, "image");
    if images.is_empty() {
        return None;
    }
    let (ts, attribution) = (m.get("timestamp"), m.get("attribution"));
    let texts = blocks_of(content, "text");
    let mut out = Vec::new();
    if !texts.is_empty() {
        out.push(message("developer", Value::Array(texts.into_iter().cloned().collect()), attribution, ts));
    }
    let custom_type = js::to_js_string(m.get("customType"));
    let mut blocks = vec![text_block(format!("Images attached to {custom_type}."))];
    blocks.extend(images.into_iter().cloned());
    out.push(message("user", Value::Array(blocks), attribution, ts));
    Some(out)
}

/// The `fileMention` case: files with text as one developer message, files with an image as
/// a user message carrying the images.
fn file_mention(m: &Value) -> Vec<Value> {
    let files: &[Value] = m.get("files").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let wrap = |f: &Value| {
        let inner = if js::truthy(f.get("content")) {
            format!("\n{}\n", js::to_js_string(f.get("content")))
        } else {
            "\n".into()
        };
        format!("<file path=\"{}\">{inner}</file>", js::to_js_string(f.get("path")))
    };
    let (images, texts): (Vec<&Value>, Vec<&Value>) = files.iter().partition(|f| js::truthy(f.get("image")));
    let (ts, user) = (m.get("timestamp"), Value::from("user"));
    let mut out = Vec::new();
    if !texts.is_empty() {
        let text = texts.iter().map(|f| wrap(f)).collect::<Vec<_>>().join("\n");
        out.push(message("developer", Value::Array(vec![text_block(text)]), Some(&user), ts));
    }
    if !images.is_empty() {
        let text = images.iter().map(|f| wrap(f)).collect::<Vec<_>>().join("\n");
        let mut content = vec![text_block(text)];
        content.extend(images.iter().map(|f| f["image"].clone()));
        out.push(message("user", Value::Array(content), Some(&user), ts));
    }
    out
}

/// `isUserInterruptAbort`.
fn is_user_interrupt_abort(m: &Value) -> bool {
    // (`(errorId ?? 0) & flag`: JS's bitwise AND reads the number as a 32-bit integer.)
    let id = m.get("errorId").and_then(Value::as_f64).filter(|f| f.is_finite()).map_or(0, |f| f.trunc() as i64);
    (id as i32 as i64) & USER_INTERRUPT_FLAG != 0 || str_of(m, "errorMessage") == Some(USER_INTERRUPT_LABEL)
}

/// `stripDemotedThinkingForLlm`: without the trailing run of unsigned, non-empty thinking
/// blocks (and the blank text blocks after it); `None` when there is no such run.
fn strip_demoted_thinking(m: &Value) -> Option<Value> {
    let content = m.get("content")?.as_array()?;
    let blank_text = |b: &Value| {
        str_of(b, "type") == Some("text")
            && b.get("text").and_then(Value::as_str).is_some_and(|t| t.trim_matches(js::is_js_whitespace).is_empty())
    };
    let unsigned_thought = |b: &Value| {
        str_of(b, "type") == Some("thinking")
            && b.get("thinking")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.trim_matches(js::is_js_whitespace).is_empty())
            && !js::truthy(b.get("thinkingSignature"))
    };
    let mut end = content.len();
    while end > 0 && blank_text(&content[end - 1]) {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && unsigned_thought(&content[start - 1]) {
        start -= 1;
    }
    if start == end {
        return None;
    }
    let mut out = m.clone();
    out["content"] = Value::Array(content[..start].to_vec());
    Some(out)
}

/// `bashExecutionToText`: pi's text, then omp's output notice (not pi's truncation line).
fn bash_execution_to_text(m: &Value) -> String {
    let head = format!("Ran `{}`\n", js::to_js_string(m.get("command")));
    run_text(m, head, "", "(command cancelled)", "Command exited with code") + &output_notice(m.get("meta"))
}

/// `pythonExecutionToText`.
fn python_execution_to_text(m: &Value) -> String {
    let head = format!("Ran Python:\n```python\n{}\n```\n", js::to_js_string(m.get("code")));
    run_text(m, head, "Output:\n", "(execution cancelled)", "Execution failed with code")
        + &output_notice(m.get("meta"))
}

/// `formatOutputNotice`: the truncation, capture and limit notices in brackets, then LSP
/// diagnostics (listed as they are: omp groups `path:line:col` ones by directory and file,
/// which is not done here; the user's own runs carry none).
fn output_notice(meta: Option<&Value>) -> String {
    let Some(meta) = meta.filter(|m| js::truthy(Some(m))) else { return String::new() };
    let s = |v: Option<&Value>| js::to_js_string(v);
    let mut parts = Vec::new();
    if js::truthy(meta.get("truncation")) {
        parts.push(truncation_notice(&meta["truncation"], meta.get("source")));
    }
    if js::truthy(meta.get("artifactError")) {
        parts.push(format!("Full output was not saved completely (artifact {} failed)", s(meta.get("artifactError"))));
    }
    let limits = meta.get("limits");
    let limit = |k: &str| limits.and_then(|l| l.get(k)).filter(|v| js::truthy(Some(v)));
    if let Some(l) = limit("matchLimit") {
        parts.push(format!(
            "{} matches limit reached. Use limit={} for more",
            s(l.get("reached")),
            s(l.get("suggestion"))
        ));
    }
    for k in ["resultLimit", "headLimit"] {
        if let Some(l) = limit(k) {
            parts.push(format!(
                "{} results limit reached. Use limit={} for more",
                s(l.get("reached")),
                s(l.get("suggestion"))
            ));
        }
    }
    if let Some(c) = limit("columnTruncated") {
        let unit = c.get("unit").filter(|u| !u.is_null()).map_or("chars".to_string(), |u| s(Some(u)));
        let mut notice = format!("Some lines truncated to {} {unit}", s(c.get("maxColumn")));
        if !js::is_nullish(c.get("artifactId")) {
            notice += &format!(". Read artifact://{} for full output", s(c.get("artifactId")));
        }
        parts.push(notice);
    }
    let mut out = if parts.is_empty() { String::new() } else { format!("\n\n[{}]", parts.join(". ")) };
    if let Some(d) = meta.get("diagnostics").filter(|d| js::truthy(Some(d))) {
        let messages: Vec<String> =
            d.get("messages").and_then(Value::as_array).into_iter().flatten().map(|m| s(Some(m))).collect();
        if !messages.is_empty() {
            out += &format!("\n\nLSP Diagnostics ({}):\n{}", s(d.get("summary")), messages.join("\n"));
        }
    }
    out
}

/// `formatTruncationMetaNotice`.
fn truncation_notice(t: &Value, source: Option<&Value>) -> String {
    let s = |k: &str| js::to_js_string(t.get(k));
    let num = |k: &str| t.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let reference = (!js::is_nullish(t.get("artifactId"))).then(|| match source {
        Some(src) if str_of(src, "type") == Some("report") => {
            format!("Read artifact://{} for full report ({})", s("artifactId"), js::to_js_string(src.get("value")))
        }
        _ => format!("Read artifact://{} for full output", s("artifactId")),
    });
    let range = |k: &str| t.get(k).filter(|r| js::truthy(Some(r)));
    let mut notice;
    if str_of(t, "direction") == Some("middle") {
        let total_lines = num("totalLines");
        let elided_bytes = t
            .get("elidedBytes")
            .filter(|v| !v.is_null())
            .and_then(Value::as_f64)
            .unwrap_or_else(|| (num("totalBytes") - num("outputBytes")).max(0.0));
        let elided_lines = t
            .get("elidedLines")
            .filter(|v| !v.is_null())
            .and_then(Value::as_f64)
            .unwrap_or_else(|| (total_lines - num("outputLines")).max(0.0));
        match (range("headRange"), range("tailRange")) {
            (Some(h), Some(tl)) => {
                let r = |v: &Value, k: &str| js::to_js_string(v.get(k));
                notice = format!(
                    "Showing lines {}-{} and {}-{} of {}; {} middle line{} ({}) elided",
                    r(h, "start"),
                    r(h, "end"),
                    r(tl, "start"),
                    r(tl, "end"),
                    s("totalLines"),
                    locale(elided_lines),
                    if elided_lines == 1.0 { "" } else { "s" },
                    format_bytes(elided_bytes),
                );
            }
            _ if elided_bytes > 0.0 => {
                notice = format!(
                    "Showing head and tail bytes of {} line{}; {} elided",
                    locale(total_lines),
                    if total_lines == 1.0 { "" } else { "s" },
                    format_bytes(elided_bytes),
                );
            }
            _ => {
                notice = format!(
                    "Showing {} of {} lines; middle elided",
                    js::number_string(num("outputLines").min(total_lines)),
                    s("totalLines")
                )
            }
        }
        if !js::is_nullish(t.get("nextOffset")) {
            notice += &format!(". Use :{} to continue", s("nextOffset"));
        }
        if let Some(r) = reference {
            notice += &format!(". {r}");
        }
        return notice;
    }
    if js::truthy(t.get("partialLine")) {
        let line = range("shownRange")
            .and_then(|r| r.get("start"))
            .filter(|v| !v.is_null())
            .map_or("1".into(), |v| js::to_js_string(Some(v)));
        notice = format!(
            "Showing line {line} (partial, {} of {}) of {}",
            format_bytes(num("outputBytes")),
            format_bytes(num("totalBytes")),
            s("totalLines")
        );
        if let Some(r) = reference {
            notice += &format!(". {r}");
        }
        return notice;
    }
    let shown = range("shownRange").filter(|r| {
        r.get("end").and_then(Value::as_f64).zip(r.get("start").and_then(Value::as_f64)).is_some_and(|(e, s)| e >= s)
    });
    notice = match shown {
        Some(r) => format!(
            "Showing lines {}-{} of {}",
            js::to_js_string(r.get("start")),
            js::to_js_string(r.get("end")),
            s("totalLines")
        ),
        None => format!("Showing {} of {} lines", s("outputLines"), s("totalLines")),
    };
    if str_of(t, "truncatedBy") == Some("bytes") {
        let max = t.get("maxBytes").filter(|v| !v.is_null()).and_then(Value::as_f64).unwrap_or(num("outputBytes"));
        notice += &format!(" ({} limit)", format_bytes(max));
    }
    if !js::is_nullish(t.get("nextOffset")) {
        notice += &format!(". Use :{} to continue", s("nextOffset"));
    }
    if let Some(r) = reference {
        notice += &format!(". {r}");
    }
    notice
}

/// `n.toLocaleString()` in en-US, for the counts omp writes (whole and not negative).
fn locale(n: f64) -> String {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n < 1e15 {
        js::locale_integer(n as u64)
    } else {
        js::number_string(n)
    }
}

/// pi-utils' `formatBytes`: binary units, one decimal, no space.
fn format_bytes(bytes: f64) -> String {
    const K: f64 = 1024.0;
    if !bytes.is_finite() || bytes < 0.0 {
        return format!("{}B", js::number_string(bytes));
    }
    if bytes < K {
        format!("{}B", js::number_string(bytes))
    } else if bytes < K * K {
        format!("{}KB", js::to_fixed1(bytes / K))
    } else if bytes < K * K * K {
        format!("{}MB", js::to_fixed1(bytes / (K * K)))
    } else {
        format!("{}GB", js::to_fixed1(bytes / (K * K * K)))
    }
}

/// `prompt.render(template, { summary })`.
fn render(template: &str, summary: Option<&Value>) -> String {
    prompt::render(template, "summary", summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As omp printed them in 16-llm-shapes' notices (and one size below a kibibyte).
    #[test]
    fn bytes_are_binary_with_one_decimal() {
        assert_eq!(format_bytes(512.0), "512B");
        assert_eq!(format_bytes(51_200.0), "50.0KB");
        assert_eq!(format_bytes(3_000_000.0), "2.9MB");
        assert_eq!(format_bytes(4_999_992.0), "4.8MB");
    }
}
