//! oh-my-pi's spilled outputs: a tool output too large for the session is written whole to
//! `<session file without .jsonl>/<n>.<tool>.log`, and the session keeps the truncated text
//! the model saw, which names it `artifact://<n>` (and `details.meta.truncation.artifactId`).
//! The context is that truncated text, as omp sends it; `show` says where the whole output is.

use serde_json::Value;

use crate::session::entry::{EntryIdx, Role};
use crate::session::format::Spilled;
use crate::session::Session;

/// The outputs entry `i` spilled, each with the file that holds it (or where it should be).
pub fn of(s: &Session, i: EntryIdx) -> Vec<Spilled> {
    let raw = s.raw_line(i);
    if s.entries[i].role != Role::ToolResult || !crate::session::text::contains!(raw, b"artifact") {
        return Vec::new();
    }
    let (Some(file), Ok(v)) = (s.path.as_deref(), s.parse(i)) else { return Vec::new() };
    let mut ids: Vec<String> = Vec::new();
    let mut note = |id: &str| {
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && !ids.iter().any(|k| k == id) {
            ids.push(id.to_string());
        }
    };
    let message = v.get("message");
    let truncation = message.and_then(|m| m.pointer("/details/meta/truncation"));
    if let Some(id) = truncation.and_then(|t| t.get("artifactId")).and_then(Value::as_str) {
        note(id);
    }
    for block in message.and_then(|m| m.get("content")).and_then(Value::as_array).into_iter().flatten() {
        let Some(text) = block.get("text").and_then(Value::as_str) else { continue };
        for (at, _) in text.match_indices("artifact://") {
            let digits: String = text[at + "artifact://".len()..].chars().take_while(char::is_ascii_digit).collect();
            note(&digits);
        }
    }
    let folder = file.with_extension("");
    let files: Vec<std::path::PathBuf> =
        std::fs::read_dir(&folder).map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect()).unwrap_or_default();
    ids.into_iter()
        .map(|id| {
            let prefix = format!("{id}.");
            let found = files.iter().find(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".log"))
            });
            match found {
                Some(p) => Spilled {
                    reference: format!("artifact://{id}"),
                    path: p.clone(),
                    bytes: std::fs::metadata(p).ok().map(|m| m.len()),
                },
                None => Spilled {
                    reference: format!("artifact://{id}"),
                    path: folder.join(format!("{id}.*.log")),
                    bytes: None,
                },
            }
        })
        .collect()
}
