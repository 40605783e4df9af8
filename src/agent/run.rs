//! The agent loop (pi-reference §7.1, §7.2, §7.5): the system prompt pi 1.6.0 assembles
//! (§7.4, with pisces's own wording where it names itself), the entries a prompt writes
//! (model / thinking level, the system patch, the user message, each assistant and its
//! tool results in call order), and the loop that calls the model until it stops.
//!
//! Every entry is written as pi writes it (key order `type, id, parentId, timestamp,
//! payload`), as one whole line: a new session is created (header first, with a `wx`-like
//! new-file write) when its first user message is appended, as pi's lazy flush does
//! (§1.7); after that each entry is appended under a lock with
//! [`write::append_locked`], so the file is valid after every append.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use serde_json::{json, Map, Value};

use super::{execute_tool_call, Tool, ToolContext, ToolOutput};
use crate::llm::message::{error_message, now_ms};
use crate::llm::{CompactionSettings, LlmError, Provider, ProviderOptions, Request, RetrySettings, StreamEvent};
use crate::session::{system, write, Source};

/// The text a `length` stop gives each tool call instead of running it (§7.1 step 5).
fn length_stop_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

// ---------------------------------------------------------------------------------------
// System prompt (§7.4)

/// What the system prompt is built from.
#[derive(Clone, Debug, Default)]
pub struct PromptOptions {
    /// The session's cwd (the `cwd` section, and where context files are looked up).
    pub cwd: PathBuf,
    /// `--system-prompt` (else `.pi/SYSTEM.md` in the project, else SYSTEM.md in pi's
    /// agent directory): replaces the preamble, and the tools, rules and docs sections go.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` (else APPEND_SYSTEM.md, looked up the same way).
    pub append_system_prompt: Option<String>,
    /// pi's agent directory (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`), for the global
    /// AGENTS.md and SYSTEM.md; `None` when unknown.
    pub agent_dir: Option<PathBuf>,
}

const PREAMBLE: &str = "You are a coding assistant running inside pisces, a coding agent harness that reads and writes pi's session files. Help users inspect files, run commands, and modify code.";

fn prompt_snippet(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "read" => "Read file contents",
        "bash" => "Execute bash commands (ls, grep, find, etc.)",
        "edit" => "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        "write" => "Create or overwrite files",
        "grep" => "Search file contents for patterns (respects .gitignore)",
        "find" => "Find files by glob pattern (respects .gitignore)",
        "ls" => "List directory contents",
        _ => return None,
    })
}

fn guidelines(tool: &str) -> &'static [&'static str] {
    match tool {
        "read" => &["Use read to examine files instead of cat or sed."],
        "bash" => &["You can inspect PI_* environment variables for current model and session details."],
        "edit" => &[
            "Use edit for targeted changes. Batch changes to one file in a single call.",
            "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.",
        ],
        "write" => &["Use write only for new files or complete rewrites."],
        _ => &[],
    }
}

/// The first of pi's context file names present in `dir`.
fn context_file_in(dir: &Path) -> Option<PathBuf> {
    ["AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// pi's context files: the agent directory's, then one per directory from the filesystem
/// root down to `cwd`.
pub fn context_files(cwd: &Path, agent_dir: Option<&Path>) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |p: PathBuf| {
        if seen.insert(p.clone()) {
            if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p, text));
            }
        }
    };
    if let Some(p) = agent_dir.and_then(context_file_in) {
        push(p);
    }
    let mut dirs: Vec<&Path> = cwd.ancestors().collect();
    dirs.reverse();
    for d in dirs {
        if let Some(p) = context_file_in(d) {
            push(p);
        }
    }
    out
}

/// `.pi/<name>` in the project, else `<agent dir>/<name>`.
fn prompt_file(opts: &PromptOptions, name: &str) -> Option<String> {
    let project = opts.cwd.join(".pi").join(name);
    let global = opts.agent_dir.as_ref().map(|d| d.join(name));
    [Some(project), global].into_iter().flatten().find_map(|p| std::fs::read_to_string(p).ok())
}

fn wrap(name: &str, text: &str) -> Value {
    Value::String(format!("<{name}>\n{text}\n</{name}>"))
}

/// pi 1.6.0's system prompt sections for the active tools (in pi's order; every section
/// but `preamble` wrapped in `<name>…</name>`).
pub fn system_sections(opts: &PromptOptions, tools: &[&str]) -> Map<String, Value> {
    let custom = opts.system_prompt.clone().or_else(|| prompt_file(opts, "SYSTEM.md"));
    let mut s = Map::new();
    s.insert("preamble".into(), Value::String(custom.clone().unwrap_or_else(|| PREAMBLE.to_string())));
    if custom.is_none() {
        let lines: Vec<String> =
            tools.iter().filter_map(|t| prompt_snippet(t).map(|snip| format!("- {t}: {snip}"))).collect();
        let list = if lines.is_empty() { "(none)".to_string() } else { lines.join("\n") };
        s.insert("tools".into(), wrap("tools", &format!("{list}\n\nAdditional tools may be available.")));

        let mut rules: Vec<&str> = Vec::new();
        let active = |n: &str| tools.contains(&n);
        if active("bash") && !active("grep") && !active("find") && !active("ls") {
            rules.push("Use bash for file operations like ls, rg, find");
        }
        for t in tools {
            rules.extend(guidelines(t));
        }
        rules.push("Be concise in your responses");
        rules.push("Show file paths clearly when working with files");
        let mut seen = HashSet::new();
        rules.retain(|r| seen.insert(*r));
        let rules: Vec<String> = rules.iter().map(|r| format!("- {r}")).collect();
        s.insert("rules".into(), wrap("rules", &rules.join("\n")));

        s.insert(
            "docs".into(),
            wrap(
                "docs",
                "pisces documentation (read only when the user asks about the harness itself or its session files):\n- `pisces help` lists the commands; `pisces help <command>` explains one, with examples\n- Sessions are pi's JSONL session trees (~/.pi/agent/sessions/); `pisces tree`, `pisces path` and `pisces show` read them",
            ),
        );
    }
    if let Some(add) = opts.append_system_prompt.clone().or_else(|| prompt_file(opts, "APPEND_SYSTEM.md")) {
        s.insert("addendum".into(), wrap("addendum", &add));
    }
    let files = context_files(&opts.cwd, opts.agent_dir.as_deref());
    if !files.is_empty() {
        let blocks: Vec<String> = files
            .iter()
            .map(|(p, text)| {
                format!("<project_instructions path=\"{}\">\n{text}\n</project_instructions>", p.display())
            })
            .collect();
        s.insert(
            "project_context".into(),
            wrap("project_context", &format!("Project-specific instructions and guidelines:\n{}", blocks.join("\n\n"))),
        );
    }
    s.insert("cwd".into(), wrap("cwd", &opts.cwd.to_string_lossy().replace('\\', "/")));
    s
}

/// The system message a prompt writes before its user message (§7.5): everything when the
/// branch's replayed state is empty; otherwise only the changed sections (`null` =
/// removed) and tools (`toolsAdded` / `toolsRemoved`); `None` when nothing changed.
pub fn system_patch(context: &[Value], sections: &Map<String, Value>, tools: &[Value]) -> Option<Value> {
    let replay = system::current_system_message(context);
    let (old_sections, old_tools) = match &replay {
        None => (Map::new(), Vec::new()),
        Some(m) => (
            m.get("sections").and_then(Value::as_object).cloned().unwrap_or_default(),
            m.get("toolsAdded").and_then(Value::as_array).cloned().unwrap_or_default(),
        ),
    };
    let mut changed = Map::new();
    for (k, v) in sections {
        if old_sections.get(k) != Some(v) {
            changed.insert(k.clone(), v.clone());
        }
    }
    for k in old_sections.keys() {
        if !sections.contains_key(k) {
            changed.insert(k.clone(), Value::Null);
        }
    }
    let name = |t: &Value| t.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
    let added: Vec<Value> = tools.iter().filter(|t| !old_tools.contains(t)).cloned().collect();
    let removed: Vec<Value> = old_tools
        .iter()
        .filter(|o| !tools.iter().any(|t| name(t) == name(o)))
        .map(|o| json!({"name": name(o)}))
        .collect();
    if changed.is_empty() && added.is_empty() && removed.is_empty() {
        return None;
    }
    let mut m = Map::new();
    m.insert("role".into(), "system".into());
    m.insert("content".into(), "".into());
    if !changed.is_empty() {
        m.insert("sections".into(), Value::Object(changed));
    }
    m.insert("timestamp".into(), json!(now_ms()));
    if !added.is_empty() {
        m.insert("toolsAdded".into(), Value::Array(added));
    }
    if !removed.is_empty() {
        m.insert("toolsRemoved".into(), Value::Array(removed));
    }
    Some(Value::Object(m))
}

/// The session as bash's commands see it (pi's `resolveSpawnContext`): its id, its file
/// (absolute), the model and the thinking level.
pub fn session_env(
    session_id: &str,
    file: &Path,
    model: &crate::llm::ModelSpec,
    thinking: &str,
) -> Vec<(&'static str, String)> {
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    vec![
        ("PI_SESSION_ID", session_id.to_string()),
        ("PI_SESSION_FILE", file.to_string_lossy().into_owned()),
        ("PI_PROVIDER", model.provider.clone()),
        ("PI_MODEL", model.id.clone()),
        ("PI_REASONING_LEVEL", thinking.to_string()),
    ]
}

/// The model's id when it takes no images (see [`ToolContext::model_without_images`]).
pub fn model_without_images(model: &crate::llm::ModelSpec) -> Option<String> {
    let r = crate::llm::wire::ModelRef { provider: model.provider.clone(), id: model.id.clone() };
    (!crate::llm::wire::takes_images(&r)).then(|| model.id.clone())
}

// ---------------------------------------------------------------------------------------
// Writing entries

/// Appends entries to one session file as pi's SessionManager does: each a child of the
/// current leaf, which it then becomes. A new session stays in memory until its first
/// user or assistant message, then is written whole (header first) as a new file.
pub struct SessionWriter {
    path: PathBuf,
    /// The header line while the file does not exist yet.
    header: Option<String>,
    pending: Vec<String>,
    leaf: Option<String>,
    taken: HashSet<String>,
}

impl SessionWriter {
    /// A session that is not on disk yet (written at the first user message).
    pub fn new_file(path: PathBuf, header_line: String) -> SessionWriter {
        SessionWriter { path, header: Some(header_line), pending: Vec::new(), leaf: None, taken: HashSet::new() }
    }

    /// An existing file, continuing after `leaf` (`None`: the next entry is a new root).
    pub fn existing(path: PathBuf, leaf: Option<String>) -> SessionWriter {
        SessionWriter { path, header: None, pending: Vec::new(), leaf, taken: HashSet::new() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current leaf id.
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// Whether the file exists (has been written).
    pub fn on_disk(&self) -> bool {
        self.header.is_none()
    }

    fn entry(&self, id: &str, kind: &str, payload: &Map<String, Value>, timestamp: &str) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert("id".into(), id.into());
        m.insert("parentId".into(), self.leaf.as_deref().map_or(Value::Null, Value::from));
        m.insert("timestamp".into(), timestamp.into());
        for (k, v) in payload {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// Appends an entry of type `kind` with `payload` (in order after the common keys);
    /// returns the entry as written.
    pub fn append(&mut self, kind: &str, payload: Map<String, Value>) -> anyhow::Result<Value> {
        self.append_at(kind, payload, &write::now_iso())
    }

    /// [`SessionWriter::append`] with the entry's `timestamp` given (a compaction's
    /// `systemMessage` carries the same time).
    pub fn append_at(&mut self, kind: &str, payload: Map<String, Value>, timestamp: &str) -> anyhow::Result<Value> {
        let flushes = kind == "message"
            && matches!(
                payload.get("message").and_then(|m| m.get("role")).and_then(Value::as_str),
                Some("user" | "assistant")
            );
        if let Some(header) = self.header.clone() {
            let id = crate::formats::pi::write::new_entry_id(|id| self.taken.contains(id));
            let entry = self.entry(&id, kind, &payload, timestamp);
            let line = crate::summarize::entry::line(&entry);
            if !flushes {
                self.pending.push(line);
            } else {
                if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
                }
                let pending = std::mem::take(&mut self.pending);
                write::write_new_file(&self.path, |w| {
                    for l in std::iter::once(&header).chain(&pending).chain(std::iter::once(&line)) {
                        w.write_all(l.as_bytes())?;
                        w.write_all(b"\n")?;
                    }
                    Ok(())
                })
                .inspect_err(|_| self.pending = pending.clone())?;
                self.header = None;
            }
            self.taken.insert(id.clone());
            self.leaf = Some(id);
            return Ok(entry);
        }
        let mut written = None;
        let path = self.path.clone();
        write::append_to_session(&path, false, crate::formats::all(), |now| {
            // Under the lock: the parent must still be there and the id must be new.
            if let Some(p) = &self.leaf {
                if now.get(p).is_none() {
                    bail!("Entry {p} not found (the file changed under us)");
                }
            }
            let id = crate::formats::pi::write::new_entry_id(|id| self.taken.contains(id) || now.get(id).is_some());
            let entry = self.entry(&id, kind, &payload, timestamp);
            let line = crate::summarize::entry::line(&entry);
            written = Some((id, entry));
            Ok(vec![line])
        })
        .with_context(|| format!("could not append to {}", path.display()))?;
        let (id, entry) = written.expect("set before writing");
        self.taken.insert(id.clone());
        self.leaf = Some(id);
        Ok(entry)
    }

    /// Appends a `message` entry.
    pub fn append_message(&mut self, message: &Value) -> anyhow::Result<Value> {
        let mut p = Map::new();
        p.insert("message".into(), message.clone());
        self.append("message", p)
    }
}

// ---------------------------------------------------------------------------------------
// The loop

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

fn matches_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| text.contains(n))
}

/// pi's `isContextOverflow` for an error text (§6.7), matched by fixed substrings (the
/// reference's regular expressions, with their number parts dropped).
pub fn is_context_overflow(error: &str) -> bool {
    let t = error.to_lowercase();
    if t.starts_with("throttling error:") || t.starts_with("service unavailable:") {
        return false;
    }
    if matches_any(&t, &["rate limit", "too many requests"]) {
        return false;
    }
    matches_any(
        &t,
        &[
            "prompt is too long",
            "prompt too long",
            "prompt exceeds max length",
            "request_too_large",
            "input is too long for requested model",
            "exceeds the context window",
            "maximum context length",
            "context window exceeded",
            "reduce the length of the messages",
            "maximum prompt length is",
            "maximum allowed input length of",
            "longer than the model's context length",
            "longer than the models context length",
            "exceeds the limit of",
            "exceeds the available context size",
            "greater than the context length",
            "context window exceeds limit",
            "exceeded model token limit",
            "maximum context length",
            "but the configured context size is",
            "model_context_window_exceeded",
            "range of input length should be",
            "context_length_exceeded",
            "context length exceeded",
            "context_length exceeded",
            "too many tokens",
            "token limit exceeded",
        ],
    ) || (t.contains("input token count") && t.contains("exceeds the maximum"))
        || (t.contains("exceeds") && t.contains("maximum context length"))
        || t.starts_with("413 ")
        || t.starts_with("413:")
        || t == "413"
        || (t.contains("api error (413):"))
}

/// pi's retryable-error pattern (§7.5), by substrings; quota and billing texts and context
/// overflows never count.
pub fn is_retryable_error(error: &str) -> bool {
    let t = error.to_lowercase();
    if is_context_overflow(error) || matches_any(&t, &["insufficient_quota", "quota exceeded", "billing"]) {
        return false;
    }
    let spaced = t.replace(['_', '-'], " ");
    matches_any(
        &spaced,
        &[
            "overloaded",
            "rate limit",
            "ratelimit",
            "too many requests",
            "service unavailable",
            "serviceunavailable",
            "temporarily unavailable",
            "server error",
            "internal error",
            "provider returned an error",
            "provider returned error",
            "network",
            "connection",
            "socket",
            "econnreset",
            "econnrefused",
            "epipe",
            "etimedout",
            "timed out",
            "time out",
            "timeout",
            "terminated",
            "websocket",
            "ended without",
            "cut off",
            "retry delay",
            "please retry your request",
        ],
    ) || ["429", "500", "502", "503", "504", "520", "524", "529"].iter().any(|c| {
        t.match_indices(c).any(|(i, _)| {
            let before = t[..i].chars().last().is_none_or(|ch| !ch.is_ascii_digit());
            let after = t[i + 3..].chars().next().is_none_or(|ch| !ch.is_ascii_digit());
            before && after
        })
    })
}

fn error_text(m: &Value) -> &str {
    m.get("errorMessage").and_then(Value::as_str).unwrap_or_default()
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

/// The branch's AgentMessages at the writer's leaf, read back from the file.
fn reproject(writer: &SessionWriter) -> anyhow::Result<Vec<Value>> {
    let source = Source::open(writer.path())?;
    let session = crate::formats::pi::read(&source)?;
    let leaf = writer.leaf().and_then(|id| session.get(id));
    let p = session.dialect().project(&session, leaf)?;
    Ok(p.messages)
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
    use crate::summarize::{compaction, entry};
    if !writer.on_disk() {
        return Ok(false);
    }
    let source = Source::open(writer.path())?;
    let session = crate::formats::pi::read(&source)?;
    let Some(leaf) = writer.leaf().and_then(|id| session.get(id)) else { return Ok(false) };
    let projection = session.dialect().project(&session, Some(leaf))?;
    let settings = compaction::Settings {
        reserve_tokens: turn.compaction.reserve_tokens,
        keep_recent_tokens: turn.compaction.keep_recent_tokens,
    };
    let plan = compaction::plan(&session, leaf, projection, settings)?;
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
    let first_kept = session.id_value(prep.first_kept_entry);
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
fn over_threshold(turn: &Turn, writer: &SessionWriter, context: &[Value]) -> bool {
    let Some(window) = turn.provider.context_window() else { return false };
    if !turn.compaction.enabled || !writer.on_disk() {
        return false;
    }
    let limit = window.saturating_sub(turn.compaction.reserve_tokens) as f64;
    // The cheap estimate first; the file is read only near the limit.
    if crate::summarize::tokens::estimate_context_tokens(context).tokens <= limit {
        return false;
    }
    let Ok(source) = Source::open(writer.path()) else { return false };
    let Ok(session) = crate::formats::pi::read(&source) else { return false };
    let Some(leaf) = writer.leaf().and_then(|id| session.get(id)) else { return false };
    let Ok(projection) = session.dialect().project(&session, Some(leaf)) else { return false };
    crate::summarize::tokens::estimate_projected_context_tokens(&session, &projection).tokens > limit
}

/// pi's streaming events for one reply: a provider's stream turned into delta-only
/// `message_update` events, each with the usage so far (pi 1.6's JSON mode, §8.2), and
/// the blocks that have arrived (what an aborted reply keeps).
struct Updates {
    usage: Value,
    /// Content blocks so far in pi's shape; a tool call's raw argument text beside it.
    blocks: Vec<(Value, String)>,
    /// Whether the last block's `*_end` is still to come.
    open: bool,
}

impl Updates {
    fn new() -> Updates {
        let zero = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
        Updates { usage: zero, blocks: Vec::new(), open: false }
    }

    fn update(&self, event: Value) -> Value {
        json!({"type": "message_update", "usage": self.usage, "assistantMessageEvent": event})
    }

    /// Opens a block (closing the one before) and emits its `*_start`.
    fn start(&mut self, block: Value, emit: &mut dyn FnMut(Value)) {
        self.close(None, emit);
        let index = self.blocks.len();
        let event = match block["type"].as_str() {
            Some("toolCall") => {
                json!({"type": "toolcall_start", "contentIndex": index, "id": block["id"], "toolName": block["name"]})
            }
            Some(kind) => json!({"type": format!("{kind}_start"), "contentIndex": index}),
            None => return,
        };
        self.blocks.push((block, String::new()));
        self.open = true;
        emit(self.update(event));
    }

    /// The open block of `kind`, opened if the provider did not say it started.
    fn open_block(&mut self, kind: &str, emit: &mut dyn FnMut(Value)) -> usize {
        let is_open = self.open && self.blocks.last().is_some_and(|(b, _)| b["type"] == kind);
        if !is_open {
            let field = if kind == "text" { "text" } else { "thinking" };
            self.start(json!({"type": kind, field: ""}), emit);
        }
        self.blocks.len() - 1
    }

    fn on(&mut self, ev: &StreamEvent, emit: &mut dyn FnMut(Value)) {
        match ev {
            StreamEvent::TextStart => self.start(json!({"type": "text", "text": ""}), emit),
            StreamEvent::ThinkingStart => self.start(json!({"type": "thinking", "thinking": ""}), emit),
            StreamEvent::ToolCallStart { id, name } => {
                self.start(json!({"type": "toolCall", "id": id, "name": name, "arguments": {}}), emit)
            }
            StreamEvent::TextDelta(d) | StreamEvent::ThinkingDelta(d) => {
                let kind = if matches!(ev, StreamEvent::TextDelta(_)) { "text" } else { "thinking" };
                let i = self.open_block(kind, emit);
                if let Some(Value::String(t)) = self.blocks[i].0.get_mut(kind) {
                    t.push_str(d);
                }
                emit(self.update(json!({"type": format!("{kind}_delta"), "contentIndex": i, "delta": d})));
            }
            StreamEvent::ToolCallDelta(d) => {
                let Some(i) = self.blocks.len().checked_sub(1).filter(|_| self.open) else { return };
                if self.blocks[i].0["type"] != "toolCall" {
                    return;
                }
                self.blocks[i].1.push_str(d);
                emit(self.update(json!({"type": "toolcall_delta", "contentIndex": i, "delta": d})));
            }
            StreamEvent::Usage(u) => self.usage = u.clone(),
            StreamEvent::Retry { .. } => {}
        }
    }

    /// Emits the open block's `*_end`: its text, or the finished tool call (from the final
    /// message when there is one, else parsed from the streamed arguments).
    fn close(&mut self, last: Option<&Value>, emit: &mut dyn FnMut(Value)) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        let i = self.blocks.len() - 1;
        let (block, args) = &self.blocks[i];
        let event = match block["type"].as_str() {
            Some("toolCall") => {
                let finished = last.and_then(|m| m["content"].get(i)).filter(|b| b["id"] == block["id"]).cloned();
                let call = finished.unwrap_or_else(|| {
                    let mut call = block.clone();
                    call["arguments"] = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
                    call
                });
                json!({"type": "toolcall_end", "contentIndex": i, "toolCall": call})
            }
            Some(kind) => json!({"type": format!("{kind}_end"), "contentIndex": i, "content": block[kind]}),
            None => return,
        };
        emit(self.update(event));
    }

    /// The text and thinking that arrived (an aborted reply keeps them).
    fn partial(&self) -> Vec<Value> {
        self.blocks.iter().map(|(b, _)| b).filter(|b| b["type"] != "toolCall").cloned().collect()
    }
}

/// A provider whose calls end as soon as `abort` is set (see [`call_model`]).
struct Abortable {
    inner: Arc<dyn Provider>,
    abort: Arc<AtomicBool>,
}

impl Provider for Abortable {
    fn model(&self) -> &crate::llm::ModelSpec {
        self.inner.model()
    }

    fn context_window(&self) -> Option<u64> {
        self.inner.context_window()
    }

    fn complete(&self, request: &Request, events: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError> {
        call_model(&self.inner, request.clone(), &self.abort, events)
    }
}

/// Calls the model on a thread of its own and hands its stream events to `on_event` on
/// this one, so that an abort ends the wait at once even while the stream is silent (a
/// server still thinking, a stalled connection): the call is abandoned, and its thread
/// drops the connection at the stream's next event, or ends with it.
fn call_model(
    provider: &Arc<dyn Provider>,
    request: Request,
    abort: &AtomicBool,
    on_event: &mut dyn FnMut(&StreamEvent),
) -> Result<Value, LlmError> {
    enum Msg {
        Event(StreamEvent),
        Done(Result<Value, LlmError>),
    }
    /// The unwinding payload that ends an abandoned call's stream.
    struct Abandoned;
    let aborted = || LlmError::Other("Request was aborted".into());
    let (tx, rx) = mpsc::channel();
    let provider = Arc::clone(provider);
    let spawned = std::thread::Builder::new().name("model-call".into()).spawn(move || {
        let events = tx.clone();
        let call = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            provider.complete(&request, &mut |ev: &StreamEvent| {
                if events.send(Msg::Event(ev.clone())).is_err() {
                    // Nobody listens any more: leave the stream (without the panic hook).
                    std::panic::resume_unwind(Box::new(Abandoned));
                }
            })
        }));
        match call {
            Ok(result) => {
                let _ = tx.send(Msg::Done(result));
            }
            Err(payload) if payload.is::<Abandoned>() => {}
            Err(payload) => std::panic::resume_unwind(payload),
        }
    });
    if let Err(e) = spawned {
        return Err(LlmError::Other(format!("could not start the model call: {e}")));
    }
    loop {
        if abort.load(Ordering::SeqCst) {
            return Err(aborted());
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Msg::Event(ev)) => on_event(&ev),
            Ok(Msg::Done(result)) => return result,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(LlmError::Other("the model call ended without a reply".into()))
            }
        }
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
            let overflow = turn.compaction.enabled && is_context_overflow(&error);
            let retry = !overflow && turn.retry.enabled && is_retryable_error(&error);
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
                let factor = 2u32.saturating_pow(retry_attempt - 1);
                let wait = turn.retry.base_delay.saturating_mul(factor).min(turn.retry.max_delay);
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

/// The user message pi writes for a prompt.
pub fn user_message(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now_ms()})
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sections_follow_pis_structure() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Run the tests.").unwrap();
        let opts = PromptOptions { cwd: dir.path().to_path_buf(), ..Default::default() };
        let s = system_sections(&opts, &["read", "bash", "edit", "write"]);
        let keys: Vec<&str> = s.keys().map(String::as_str).collect();
        assert_eq!(keys, ["preamble", "tools", "rules", "docs", "project_context", "cwd"]);
        assert!(s["tools"].as_str().unwrap().starts_with("<tools>\n- read: Read file contents\n- bash:"));
        assert!(s["rules"].as_str().unwrap().contains("- Use bash for file operations like ls, rg, find\n"));
        assert!(s["project_context"].as_str().unwrap().contains("Run the tests."));
        let custom = PromptOptions { system_prompt: Some("Be terse.".into()), ..opts };
        let s = system_sections(&custom, &["read"]);
        let keys: Vec<&str> = s.keys().map(String::as_str).collect();
        assert_eq!(keys, ["preamble", "project_context", "cwd"]);
    }

    #[test]
    fn patches_hold_only_what_changed() {
        let mut sections = Map::new();
        sections.insert("preamble".into(), "P".into());
        sections.insert("cwd".into(), "<cwd>\n/x\n</cwd>".into());
        let tools = vec![json!({"name": "read", "description": "r"})];
        let first = system_patch(&[], &sections, &tools).unwrap();
        assert_eq!(first["toolsAdded"], json!(tools));
        let ctx = vec![first];
        assert!(system_patch(&ctx, &sections, &tools).is_none());
        sections.shift_remove("cwd");
        let p = system_patch(&ctx, &sections, &[json!({"name": "bash"})]).unwrap();
        assert_eq!(p["sections"], json!({"cwd": null}));
        assert_eq!(p["toolsAdded"], json!([{"name": "bash"}]));
        assert_eq!(p["toolsRemoved"], json!([{"name": "read"}]));
    }
}
