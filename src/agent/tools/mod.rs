//! pi 1.6.0's built-in tools (dist/core/tools/*.js; docs/pi-format.md §7.2, §7.3): read, bash,
//! edit, write, and grep / find / ls done natively with the ripgrep crates.
//!
//! A tool returns a [`ToolOutput`] shaped for pi's `toolResult` message
//! `{role:"toolResult", toolCallId, toolName, content, details?, isError, timestamp}`: the
//! loop adds the id, name and timestamp. [`execute_tool_call`] is pi's per-call path
//! (unknown tool, `prepareArguments`, schema validation, execution, a throw as an error).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

pub mod bash;
pub mod common;
pub mod edit;
pub mod find;
pub mod grep;
pub mod image;
pub mod ls;
pub mod read;
pub mod schema;
pub mod write;

/// pi's default active tools (the `defaultTools` setting).
pub const DEFAULT_TOOLS: &[&str] = &["read", "bash", "edit", "write"];
/// Every built-in tool, in pi's order.
pub const ALL_TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "find", "ls"];

/// Where and how a tool runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session's cwd: relative paths resolve against it, bash runs in it.
    pub cwd: PathBuf,
    /// The home directory `~` stands for in tool paths (`None`: `~` is kept as it is).
    pub home: Option<PathBuf>,
    /// Set by Ctrl-C / Esc: a running tool stops and fails with `Operation aborted`
    /// (bash: `Command aborted`, after killing its process group).
    pub abort: Arc<AtomicBool>,
    /// Timeout for bash calls that give none (pi has no default; `None` = wait).
    pub bash_timeout: Option<Duration>,
    /// Where bash saves the full output of truncated commands (`pi-bash-<hex>.log`).
    pub temp_dir: PathBuf,
    /// The shell bash runs commands with (see [`bash::shell`]).
    pub shell: String,
    /// What bash's commands see of the session, as pi exposes it: `PI_SESSION_ID`,
    /// `PI_SESSION_FILE`, `PI_PROVIDER`, `PI_MODEL`, `PI_REASONING_LEVEL` (unset ones are
    /// removed from the environment).
    pub session_env: Vec<(&'static str, String)>,
    /// The model's id when it takes no images: read records it in `details`
    /// (`imageUnsupportedByModel`), as pi does; the image is then left out of requests.
    pub model_without_images: Option<String>,
}

/// The variables bash sets from [`ToolContext::session_env`] (and otherwise removes).
pub const SESSION_ENV_VARS: [&str; 5] =
    ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL"];

impl ToolContext {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ToolContext {
            cwd: cwd.into(),
            home: None,
            abort: Arc::new(AtomicBool::new(false)),
            bash_timeout: None,
            temp_dir: PathBuf::from("/tmp"),
            shell: bash::shell(None),
            session_env: Vec::new(),
            model_without_images: None,
        }
    }

    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::SeqCst)
    }
}

/// A tool's result: pi's `content`, `isError` and `details`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// pi content blocks: `{type:"text", text}` and `{type:"image", data, mimeType}`.
    pub content: Vec<Value>,
    pub is_error: bool,
    /// `None` leaves `details` out of the message (pi's `details: undefined`).
    pub details: Option<Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput { content: vec![text_block(text)], is_error: false, details: None }
    }

    pub fn with_details(mut self, details: Option<Value>) -> Self {
        self.details = details;
        self
    }

    /// A thrown error as pi's agent loop records it: `details:{}`, isError.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput { content: vec![text_block(message)], is_error: true, details: Some(json!({})) }
    }

    /// The text of the first text block ("" when none).
    pub fn first_text(&self) -> &str {
        self.content.iter().find_map(|b| (b["type"] == "text").then(|| b["text"].as_str()).flatten()).unwrap_or("")
    }

    /// The `toolResult` message pi writes (key order as pi's).
    pub fn to_message(&self, tool_call_id: &str, tool_name: &str, timestamp: i64) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("role".into(), json!("toolResult"));
        m.insert("toolCallId".into(), json!(tool_call_id));
        m.insert("toolName".into(), json!(tool_name));
        m.insert("content".into(), Value::Array(self.content.clone()));
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        m.insert("isError".into(), json!(self.is_error));
        m.insert("timestamp".into(), json!(timestamp));
        Value::Object(m)
    }
}

pub fn text_block(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The declaration exactly as pi persists it in `toolsAdded`
    /// (`{name, description, parameters, constrainedSampling?}`).
    fn declaration(&self) -> Value;
    fn name(&self) -> &str;
    /// pi's `prepareArguments` (edit folds legacy forms); identity by default.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }
    /// Runs with arguments that passed validation. Errors come back as `is_error` outputs.
    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput;
}

/// The built-in tools with these names, in the order given; unknown names are skipped.
pub fn builtin_tools(names: &[&str]) -> Vec<Box<dyn Tool>> {
    names
        .iter()
        .filter_map(|n| -> Option<Box<dyn Tool>> {
            Some(match *n {
                "read" => Box::new(read::ReadTool),
                "bash" => Box::new(bash::BashTool),
                "edit" => Box::new(edit::EditTool),
                "write" => Box::new(write::WriteTool),
                "grep" => Box::new(grep::GrepTool),
                "find" => Box::new(find::FindTool),
                "ls" => Box::new(ls::LsTool),
                _ => return None,
            })
        })
        .collect()
}

/// One tool call as pi's agent loop runs it (agent-loop.js): `Tool <name> not found`,
/// `prepareArguments`, schema validation with coercion, then the tool. A call whose
/// arguments were malformed JSON should be passed as `Value::String` of the raw text …
/// pi reports it through validation as well.
pub fn execute_tool_call(tools: &[Box<dyn Tool>], name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    let Some(tool) = tools.iter().find(|t| t.name() == name) else {
        return ToolOutput::error(format!("Tool {name} not found"));
    };
    if ctx.aborted() {
        return ToolOutput::error("Operation aborted");
    }
    let prepared = tool.prepare_arguments(args.clone());
    let decl = tool.declaration();
    match schema::parse(&decl["parameters"], &prepared) {
        Ok(valid) => tool.run(&valid, ctx),
        Err(errors) => {
            let list: Vec<String> = errors.iter().map(|(p, m)| format!("  - {p}: {m}")).collect();
            let received = js_stringify_indent2(args);
            ToolOutput::error(format!(
                "Validation failed for tool \"{name}\":\n{}\n\nReceived arguments:\n{received}",
                list.join("\n")
            ))
        }
    }
}

/// `JSON.stringify(v, null, 2)`.
fn js_stringify_indent2(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The declaration object in pi's key order.
pub(crate) fn declaration(name: &str, description: &str, parameters: Value, constrained: bool) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("name".into(), json!(name));
    m.insert("description".into(), json!(description));
    m.insert("parameters".into(), parameters);
    if constrained {
        m.insert("constrainedSampling".into(), json!({"type": "json_schema", "strict": "prefer"}));
    }
    Value::Object(m)
}

/// An optional argument as f64 (validated to be a number already).
pub(crate) fn arg_f64(args: &Value, key: &str) -> Option<f64> {
    args.get(key).and_then(Value::as_f64)
}

pub(crate) fn arg_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_declarations_match_pi() {
        let tools = builtin_tools(DEFAULT_TOOLS);
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["read", "bash", "edit", "write"]);
        // The declarations pi 1.6.0 persists in toolsAdded (docs/pi-format.md §7.3).
        let expected = [
            r#"{"name":"read","description":"Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}}},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}"#,
            r#"{"name":"bash","description":"Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.","parameters":{"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"Shell command to execute"},"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}}},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}"#,
            r#"{"name":"edit","description":"Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.","parameters":{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","description":"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},"newText":{"type":"string","description":"Replacement text for this targeted edit."}}},"description":"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."}}},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}"#,
            r#"{"name":"write","description":"Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.","parameters":{"type":"object","required":["path","content"],"properties":{"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},"content":{"type":"string","description":"Content to write to the file"}}},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}"#,
            r#"{"name":"grep","description":"Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.","parameters":{"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string","description":"Search pattern (regex or literal string)"},"path":{"type":"string","description":"Directory or file to search (default: current directory)"},"glob":{"type":"string","description":"Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},"ignoreCase":{"type":"boolean","description":"Case-insensitive search (default: false)"},"literal":{"type":"boolean","description":"Treat pattern as literal string instead of regex (default: false)"},"context":{"type":"number","description":"Number of lines to show before and after each match (default: 0)"},"limit":{"type":"number","description":"Maximum number of matches to return (default: 100)"}}}}"#,
            r#"{"name":"find","description":"Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).","parameters":{"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string","description":"Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},"path":{"type":"string","description":"Directory to search in (default: current directory)"},"limit":{"type":"number","description":"Maximum number of results (default: 1000)"}}}}"#,
            r#"{"name":"ls","description":"List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Directory to list (default: current directory)"},"limit":{"type":"number","description":"Maximum number of entries to return (default: 500)"}}}}"#,
        ];
        for (tool, want) in builtin_tools(ALL_TOOLS).iter().zip(expected) {
            assert_eq!(serde_json::to_string(&tool.declaration()).unwrap(), want, "{}", tool.name());
        }
    }

    #[test]
    fn unknown_tool_and_validation_errors() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        let tools = builtin_tools(DEFAULT_TOOLS);
        let out = execute_tool_call(&tools, "grep", &json!({}), &ctx);
        assert_eq!(out, ToolOutput::error("Tool grep not found"));
        let out = execute_tool_call(&tools, "read", &json!({}), &ctx);
        assert_eq!(
            out.first_text(),
            "Validation failed for tool \"read\":\n  - path: missing\n\nReceived arguments:\n{}"
        );
        assert_eq!(out.details, Some(json!({})));
        assert!(out.is_error);
    }
}
