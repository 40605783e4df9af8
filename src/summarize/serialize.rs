//! pi's shared summarization helpers (docs/pi-format.md §6.5): file operations from tool
//! calls, `computeFileLists`, `formatFileOperations` and `serializeConversation`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::text::{content_text, slice_head, sort_utf16, utf16_len};
use crate::session::js;
use crate::session::js::{entries as js_entries, stringify};

/// Paths seen in `read`, `write` and `edit` calls (pi's `FileOperations` sets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

impl FileOps {
    /// Adds a previous summary's `details` (`readFiles` to read, `modifiedFiles` to
    /// edited), as pi carries them from one summary to the next.
    pub fn add_details(&mut self, details: &Value) {
        for f in details.get("readFiles").and_then(Value::as_array).into_iter().flatten() {
            self.read.insert(js::to_js_string(Some(f)));
        }
        for f in details.get("modifiedFiles").and_then(Value::as_array).into_iter().flatten() {
            self.edited.insert(js::to_js_string(Some(f)));
        }
    }

    /// `extractFileOpsFromMessage`: an assistant's tool calls, or the calls a tool result
    /// records as `nestedCalls` (codemode scripts).
    pub fn add_message(&mut self, m: &Value) {
        match m.get("role").and_then(Value::as_str) {
            Some("toolResult") => {
                let calls = m.get("nestedCalls").and_then(|n| n.get("calls")).and_then(Value::as_array);
                for call in calls.into_iter().flatten() {
                    self.add_call(call.get("name"), call.get("arguments"));
                }
            }
            Some("assistant") => {
                for block in m.get("content").and_then(Value::as_array).into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) == Some("toolCall") && block.get("name").is_some() {
                        self.add_call(block.get("name"), block.get("arguments"));
                    }
                }
            }
            _ => {}
        }
    }

    fn add_call(&mut self, name: Option<&Value>, args: Option<&Value>) {
        let Some(path) = args.and_then(|a| a.get("path")).and_then(Value::as_str).filter(|p| !p.is_empty()) else {
            return;
        };
        let set = match name.and_then(Value::as_str) {
            Some("read") => &mut self.read,
            Some("write") => &mut self.written,
            Some("edit") => &mut self.edited,
            _ => return,
        };
        set.insert(path.to_string());
    }

    /// `computeFileLists`: `(readFiles, modifiedFiles)`, where modified = edited ∪
    /// written and read-only = read − modified, both sorted as JS sorts strings.
    pub fn file_lists(&self) -> (Vec<String>, Vec<String>) {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        let mut read: Vec<String> = self.read.iter().filter(|f| !modified.contains(f)).cloned().collect();
        let mut modified: Vec<String> = modified.into_iter().cloned().collect();
        sort_utf16(&mut read);
        sort_utf16(&mut modified);
        (read, modified)
    }
}

/// The three sets as sorted lists (`{read, written, edited}`), as pi-oracle prints them.
impl serde::Serialize for FileOps {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let sorted = |s: &BTreeSet<String>| {
            let mut v: Vec<String> = s.iter().cloned().collect();
            sort_utf16(&mut v);
            v
        };
        let mut st = ser.serialize_struct("FileOps", 3)?;
        st.serialize_field("read", &sorted(&self.read))?;
        st.serialize_field("written", &sorted(&self.written))?;
        st.serialize_field("edited", &sorted(&self.edited))?;
        st.end()
    }
}

/// `formatFileOperations(readFiles, modifiedFiles)`: `""`, or a blank line and the
/// `<read-files>` / `<modified-files>` sections.
pub fn format_file_operations(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!("<modified-files>\n{}\n</modified-files>", modified.join("\n")));
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\n{}", sections.join("\n\n"))
}

/// Tool results are cut to this many UTF-16 units in a serialized conversation.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// `truncateForSummary`.
fn truncate_for_summary(text: &str, max: usize) -> String {
    let len = utf16_len(text);
    if len <= max {
        return text.to_string();
    }
    format!("{}\n\n[... {} more characters truncated]", slice_head(text, max), len - max)
}

/// `serializeConversation(convertToLlm(messages))`: the conversation as text, so the
/// model summarizes it instead of continuing it. Thinking and system messages are left
/// out; tool results are cut to 2000 characters.
pub fn serialize_conversation(messages: &[Value]) -> String {
    let mut parts = Vec::new();
    for m in messages {
        match m.get("role").and_then(Value::as_str) {
            Some("user") => {
                let content = content_text(m.get("content"), "");
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            Some("assistant") => {
                let blocks = m.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                let mut calls = Vec::new();
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) == Some("toolCall") {
                        let args = match b.get("arguments") {
                            Some(Value::Object(map)) => js_entries(map)
                                .into_iter()
                                .map(|(k, v)| format!("{k}={}", stringify(v)))
                                .collect::<Vec<_>>()
                                .join(", "),
                            _ => String::new(),
                        };
                        calls.push(format!("{}({args})", js::to_js_string(b.get("name"))));
                    }
                }
                if blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("text")) {
                    parts.push(format!("[Assistant]: {}", content_text(m.get("content"), "\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Some("toolResult") => {
                let content = content_text(m.get("content"), "");
                if !content.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_for_summary(&content, TOOL_RESULT_MAX_CHARS)));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn file_lists_and_sections() {
        let mut ops = FileOps::default();
        ops.add_message(&json!({"role":"assistant","content":[
            {"type":"toolCall","name":"read","arguments":{"path":"b.js"}},
            {"type":"toolCall","name":"read","arguments":{"path":"a.js"}},
            {"type":"toolCall","name":"edit","arguments":{"path":"b.js"}},
            {"type":"toolCall","name":"write","arguments":{"path":""}},
            {"type":"toolCall","name":"bash","arguments":{"path":"x"}}]}));
        ops.add_message(
            &json!({"role":"toolResult","nestedCalls":{"calls":[{"name":"write","arguments":{"path":"c.js"}}]}}),
        );
        let (read, modified) = ops.file_lists();
        assert_eq!(read, ["a.js"]);
        assert_eq!(modified, ["b.js", "c.js"]);
        assert_eq!(
            format_file_operations(&read, &modified),
            "\n\n<read-files>\na.js\n</read-files>\n\n<modified-files>\nb.js\nc.js\n</modified-files>"
        );
        assert_eq!(format_file_operations(&[], &[]), "");
    }

    #[test]
    fn conversations_serialize_as_pi_does() {
        let long = "x".repeat(2001);
        let msgs = vec![
            json!({"role":"system","content":"ignored"}),
            json!({"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}),
            json!({"role":"user","content":""}),
            json!({"role":"assistant","content":[
                {"type":"thinking","thinking":"hidden"},
                {"type":"text","text":"one"},{"type":"text","text":"two"},
                {"type":"toolCall","name":"bash","arguments":{"command":"ls -la","timeout":5}},
                {"type":"toolCall","name":"read","arguments":{"path":"a"}}]}),
            json!({"role":"toolResult","content":[{"type":"text","text":long}]}),
        ];
        assert_eq!(
            serialize_conversation(&msgs),
            format!(
                "[User]: ab\n\n[Assistant]: one\ntwo\n\n[Assistant tool calls]: bash(command=\"ls -la\", timeout=5); read(path=\"a\")\n\n[Tool result]: {}\n\n[... 1 more characters truncated]",
                "x".repeat(2000)
            )
        );
    }
}
