//! `pisces export --parquet`: the rows of the tables, computed from a loaded session (no
//! file format here: `render::parquet` writes them). The schema is docs/export-parquet.md.

use std::collections::HashMap;

use serde_json::Value;

use crate::session::format::Unreadable;
use crate::session::{EntryIdx, EntryType, Role, Session};
use crate::store::facts::Facts;

/// The schema's version, written into every file's metadata (`pisces.schema`).
pub const SCHEMA: &str = "1";

/// Who a row belongs to: the session as commands name it, and its id.
#[derive(Clone, Debug)]
pub struct Owner {
    pub session: String,
    pub session_id: String,
}

pub struct EntryRow {
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub line: i64,
    pub kind: &'static str,
    pub role: Option<&'static str>,
    pub timestamp: Option<i64>,
    /// Entries above it.
    pub depth: i64,
    /// The branch tips (leaves) whose path holds it, by REV (id, else `#LINE`).
    pub tips: Vec<String>,
}

pub struct MessageRow {
    pub entry_id: Option<String>,
    pub line: i64,
    pub role: String,
    pub timestamp: Option<i64>,
    /// The message's text blocks (a tool result's output, a summary), joined by newlines.
    pub text: String,
    pub thinking: Option<String>,
}

pub struct ToolCallRow {
    pub entry_id: Option<String>,
    pub line: i64,
    pub call_id: String,
    pub name: String,
    /// The arguments as JSON.
    pub arguments: String,
    pub result_entry_id: Option<String>,
    pub result: Option<String>,
    pub is_error: Option<bool>,
    pub exit_code: Option<i64>,
    /// From the call's entry to its result's (entry times).
    pub duration_ms: Option<i64>,
}

/// One session's rows of every table but `usage` (which is counted across sessions).
pub struct SessionRows {
    pub owner: Owner,
    pub entries: Vec<EntryRow>,
    pub messages: Vec<MessageRow>,
    pub tool_calls: Vec<ToolCallRow>,
}

fn role_name(r: Role) -> Option<&'static str> {
    Some(match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::ToolResult => "toolResult",
        Role::System => "system",
        Role::BashExecution => "bashExecution",
        Role::Custom | Role::HookMessage => "custom",
        Role::Other => "other",
        Role::None => return None,
    })
}

fn rev(s: &Session, i: EntryIdx) -> String {
    match s.id_str(i) {
        Some(id) => id.to_string(),
        None => format!("#{}", s.entries[i].line),
    }
}

/// The texts of a message's blocks of one type (`text`, `thinking`), joined.
fn blocks(content: Option<&Value>, ty: &str, field: &str) -> Option<String> {
    match content? {
        Value::String(t) if ty == "text" => Some(t.clone()),
        Value::Array(a) => {
            let parts: Vec<&str> =
                a.iter().filter(|b| b["type"] == ty).filter_map(|b| b.get(field).and_then(Value::as_str)).collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        _ => None,
    }
}

/// The rows of `s` (named as `facts.summary` names it).
pub fn session_rows(s: &Session, facts: &Facts) -> Result<SessionRows, Unreadable> {
    let owner = Owner { session: facts.summary.name.clone(), session_id: facts.summary.id.clone() };
    let n = s.entries.len();
    let ms = |i: EntryIdx| s.time(i).filter(|t| t.is_finite()).map(|t| t as i64);
    let id = |i: EntryIdx| s.id_str(i).map(str::to_string);

    // Depth: entries above, walking up to the first entry whose depth is known.
    let mut depth: Vec<Option<i64>> = vec![None; n];
    for i in s.entries.indices() {
        let mut chain = Vec::new();
        let mut cur = Some(i);
        let mut base = -1;
        while let Some(c) = cur {
            if let Some(d) = depth[c.get()] {
                base = d;
                break;
            }
            chain.push(c);
            cur = s.parent(c);
        }
        for (k, c) in chain.iter().rev().enumerate() {
            depth[c.get()] = Some(base + 1 + k as i64);
        }
    }
    let mut tips: Vec<Vec<String>> = vec![Vec::new(); n];
    for leaf in s.leaves() {
        let name = rev(s, leaf);
        for i in s.path_to(leaf) {
            tips[i.get()].push(name.clone());
        }
    }
    // Rows for the entries of this session's own file: what a Codex fork inherits is its
    // parent's rows (as `ls` counts entries).
    let own = |i: &EntryIdx| s.dialect().place(s, *i).is_none();
    let entries = s
        .entries
        .indices()
        .filter(own)
        .map(|i| {
            let e = &s.entries[i];
            EntryRow {
                id: id(i),
                parent_id: s.parent(i).and_then(id),
                line: e.line.get() as i64,
                kind: e.kind.name(),
                role: if e.kind == EntryType::Message { role_name(e.role) } else { None },
                timestamp: ms(i),
                depth: depth[i.get()].unwrap_or(0),
                tips: std::mem::take(&mut tips[i.get()]),
            }
        })
        .collect();

    let mut messages = Vec::new();
    let mut tool_calls: Vec<ToolCallRow> = Vec::new();
    let mut call_at: HashMap<String, (usize, Option<i64>)> = HashMap::new();
    for i in s.entries.indices().filter(|i| s.entries[*i].kind == EntryType::Message && own(i)) {
        let v = s.dialect().entry(s, i)?;
        let m = &v["message"];
        let role = m["role"].as_str().unwrap_or_default().to_string();
        let content = m.get("content");
        let text = match role.as_str() {
            "bashExecution" => {
                format!("{}\n{}", m["command"].as_str().unwrap_or_default(), m["output"].as_str().unwrap_or_default())
            }
            "compactionSummary" | "branchSummary" => m["summary"].as_str().unwrap_or_default().to_string(),
            _ => blocks(content, "text", "text").unwrap_or_default(),
        };
        if let Some(Value::Array(blocks)) = content.filter(|_| role == "assistant") {
            for b in blocks.iter().filter(|b| b["type"] == "toolCall") {
                let call_id = b["id"].as_str().unwrap_or_default().to_string();
                call_at.insert(call_id.clone(), (tool_calls.len(), ms(i)));
                tool_calls.push(ToolCallRow {
                    entry_id: id(i),
                    line: s.entries[i].line.get() as i64,
                    call_id,
                    name: b["name"].as_str().unwrap_or_default().to_string(),
                    arguments: b.get("arguments").map_or("null".into(), Value::to_string),
                    result_entry_id: None,
                    result: None,
                    is_error: None,
                    exit_code: None,
                    duration_ms: None,
                });
            }
        }
        if role == "toolResult" {
            if let Some(&(k, at)) = m["toolCallId"].as_str().and_then(|c| call_at.get(c)) {
                let row = &mut tool_calls[k];
                let is_error = m["isError"].as_bool().unwrap_or(false);
                row.result_entry_id = id(i);
                row.exit_code = crate::diff::shell_exit_code(&row.name, is_error, &text);
                row.result = Some(text.clone());
                row.is_error = Some(is_error);
                row.duration_ms = at.zip(ms(i)).map(|(a, b)| b - a);
            }
        }
        messages.push(MessageRow {
            entry_id: id(i),
            line: s.entries[i].line.get() as i64,
            role,
            timestamp: ms(i),
            text,
            thinking: blocks(content, "thinking", "thinking"),
        });
    }
    Ok(SessionRows { owner, entries, messages, tool_calls })
}
