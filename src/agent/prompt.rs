//! What a prompt sends besides the conversation (docs/pi-format.md §7.4, §7.5): the system
//! prompt pi 1.6.0 assembles (with pisces's own wording where it names itself), the system
//! patch a prompt writes when its sections or tools changed, the user message, and what
//! the tools learn about the session (bash's `PI_*` variables, whether the model takes
//! images).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::llm::message::now_ms;
use crate::session::system;

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

/// The model's id when it takes no images (see [`super::ToolContext::model_without_images`]).
pub fn model_without_images(model: &crate::llm::ModelSpec) -> Option<String> {
    let r = crate::llm::wire::ModelRef { provider: model.provider.clone(), id: model.id.clone() };
    (!crate::llm::wire::takes_images(&r)).then(|| model.id.clone())
}

/// The user message pi writes for a prompt.
pub fn user_message(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now_ms()})
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
