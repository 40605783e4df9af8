//! The context at a leaf, in the shape every format's projection produces: pi's
//! AgentMessages (`user`, `assistant`, `toolResult`, and pi's own `bashExecution`,
//! `custom`, `branchSummary`, `compactionSummary`), which is pisces's common message model,
//! and pi's `convertToLlm`, which turns them into the messages an LLM API layer takes.

use std::ops::Range;

use serde_json::{json, Map, Value};

use super::entry::EntryIdx;
use super::js;

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
    pub entry: EntryIdx,
    /// Range into `Projection::messages`.
    pub messages: Range<usize>,
    /// The `context_edit` entry applied to it, and what it did.
    pub edit: Option<(EntryIdx, EditKind)>,
}

/// The result of `buildSessionProjection` for one leaf.
#[derive(Clone, Debug, Default)]
pub struct Projection {
    /// The leaf (`None`: pi's null leaf, an empty context).
    pub leaf: Option<EntryIdx>,
    /// Root..=leaf.
    pub path: Vec<EntryIdx>,
    /// `None` is JS `undefined` (a `thinking_level_change` without a level).
    pub thinking_level: Option<Value>,
    /// `{provider, modelId}` or `None` (JSON `null`).
    pub model: Option<Value>,
    pub entries: Vec<ProjectedEntry>,
    /// pi's AgentMessages, in order.
    pub messages: Vec<Value>,
    /// The `messages` the agent itself sends to Anthropic's Messages API at this leaf, when
    /// that API is its own (Claude Code): `--format anthropic` sends these as they are,
    /// since converting pi's messages back would lose what the agent does (merged lines,
    /// reminders, results it makes up for unanswered calls). `None`: convert.
    pub anthropic: Option<Vec<Value>>,
    /// The `input` an agent that speaks OpenAI's Responses API sends itself (Codex):
    /// `--format openai-responses` sends these as they are. `None`: convert.
    pub responses: Option<Vec<Value>>,
    /// The rest of what the agent's own context holds at the leaf besides its messages,
    /// model and thinking level, under the agent's names (oh-my-pi: models by role, service
    /// tier, injected rules, mode); `path --format json` prints it as `settings`.
    pub settings: Option<Value>,
}

/// Sets `key` unless the value is JS `undefined` (absent), as JSON.stringify omits those.
pub(crate) fn put(m: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(v) = v {
        m.insert(key.into(), v.clone());
    }
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

/// What the model sees of a run the user started (pi's and oh-my-pi's `!command`, oh-my-pi's
/// `$code`), as far as the agents write it alike: `head`, the output (after `label`) in a
/// fence or `(no output)`, then `cancelled` or `failed` and the exit code, when it did not
/// exit with 0.
pub fn run_text(m: &Value, head: String, label: &str, cancelled: &str, failed: &str) -> String {
    let mut text = head;
    if js::truthy(m.get("output")) {
        text += &format!("{label}```\n{}\n```", js::to_js_string(m.get("output")));
    } else {
        text += "(no output)";
    }
    let code = m.get("exitCode");
    if js::truthy(m.get("cancelled")) {
        text += &format!("\n\n{cancelled}");
    } else if !js::is_nullish(code) && code.and_then(Value::as_f64) != Some(0.0) {
        text += &format!("\n\n{failed} {}", js::to_js_string(code));
    }
    text
}

/// `bashExecutionToText`: what the model sees of a user's `!command`.
pub fn bash_execution_to_text(m: &Value) -> String {
    let head = format!("Ran `{}`\n", js::to_js_string(m.get("command")));
    let mut text = run_text(m, head, "", "(command cancelled)", "Command exited with code");
    if js::truthy(m.get("truncated")) && js::truthy(m.get("fullOutputPath")) {
        text += &format!("\n\n[Output truncated. Full output: {}]", js::to_js_string(m.get("fullOutputPath")));
    }
    text
}
