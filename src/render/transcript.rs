//! A projected context as a readable transcript (`path --format text|markdown`).
//!
//! Text is for reading in a terminal: role headers, message text in full, thinking,
//! tool calls and results shortened to a few lines. Markdown is the same content for
//! pasting into an issue or a pull request (tool output in fenced blocks).

use std::io::{self, Write};

use serde_json::Value;

use super::{sanitize, Paint, Ui};
use crate::session::js;
use crate::session::system::content_text;

/// What the transcript shows besides the messages.
pub struct TranscriptHead<'a> {
    pub file: &'a str,
    pub session_name: Option<&'a str>,
    pub leaf: Option<&'a str>,
    pub model: Option<String>,
    pub thinking_level: Option<String>,
    /// `--system`: the replayed prompt and tool names.
    pub system: Option<(String, Vec<String>)>,
}

/// Lines of tool output shown in text mode before "… N more lines".
const TOOL_LINES: usize = 4;
/// Lines of thinking shown in text mode.
const THINKING_LINES: usize = 3;

pub fn write_text(w: &mut dyn Write, ui: &Ui, head: &TranscriptHead, messages: &[Value]) -> io::Result<()> {
    let mut parts = vec![format!("{}", head.file)];
    if let Some(n) = head.session_name {
        parts.push(format!("\"{}\"", sanitize(n)));
    }
    parts.push(match head.leaf {
        Some(l) => format!("leaf {l}"),
        None => "null leaf".into(),
    });
    if let Some(m) = &head.model {
        parts.push(m.clone());
    }
    if let Some(t) = &head.thinking_level {
        parts.push(format!("thinking {t}"));
    }
    parts.push(format!("{} message{}", messages.len(), if messages.len() == 1 { "" } else { "s" }));
    // Every part may come from the session (the file's name, the model): one sanitizing.
    writeln!(w, "{}", ui.paint(Paint::Dim, &sanitize(&parts.join(" · "))))?;
    if let Some((prompt, tools)) = &head.system {
        writeln!(w)?;
        writeln!(w, "{}", ui.paint(Paint::System, "▍system prompt"))?;
        writeln!(w, "{}", sanitize(prompt))?;
        let tools = if tools.is_empty() { "(none)".into() } else { tools.join(", ") };
        writeln!(w, "{}", ui.paint(Paint::Dim, &sanitize(&format!("tools: {tools}"))))?;
    }
    for m in messages {
        writeln!(w)?;
        write_text_message(w, ui, m)?;
    }
    Ok(())
}

fn write_text_message(w: &mut dyn Write, ui: &Ui, m: &Value) -> io::Result<()> {
    let role = js::to_js_string(m.get("role"));
    let s = |k: &str| js::to_js_string(m.get(k));
    match role.as_str() {
        "user" => {
            writeln!(w, "{}", ui.paint(Paint::User, "▍user"))?;
            write_blocks(w, ui, m.get("content"))?;
        }
        "assistant" => {
            let mut title = format!("▍assistant  {}", s("model"));
            match s("stopReason").as_str() {
                "error" => title += &format!("  [error: {}]", one_line_str(&s("errorMessage"))),
                "aborted" => title += "  [aborted]",
                "length" => title += "  [cut off: length]",
                _ => {}
            }
            writeln!(w, "{}", ui.paint(Paint::Assistant, &sanitize(&title)))?;
            write_blocks(w, ui, m.get("content"))?;
        }
        "toolResult" => {
            let error = js::truthy(m.get("isError"));
            let mark = if error { "✗" } else { "✓" };
            let title = format!("  {mark} {} result", s("toolName"));
            writeln!(w, "{}", ui.paint(if error { Paint::Error } else { Paint::Tool }, &sanitize(&title)))?;
            write_clipped(w, ui, &content_text(m.get("content")), TOOL_LINES, "    ")?;
            write_images(w, ui, m.get("content"), "    ")?;
        }
        "bashExecution" => {
            let mut title = format!("▍user ran  $ {}", s("command"));
            if js::truthy(m.get("excludeFromContext")) {
                title += "  (not sent to the model)";
            }
            writeln!(w, "{}", ui.paint(Paint::User, &sanitize(&title)))?;
            write_clipped(w, ui, &s("output"), TOOL_LINES, "    ")?;
            if js::truthy(m.get("cancelled")) {
                writeln!(w, "    {}", ui.paint(Paint::Error, "(cancelled)"))?;
            } else if let Some(code) = m.get("exitCode").filter(|c| !c.is_null()) {
                if code.as_f64() != Some(0.0) {
                    writeln!(w, "    {}", ui.paint(Paint::Error, &format!("exit code {code}")))?;
                }
            }
        }
        "custom" => {
            writeln!(w, "{}", ui.paint(Paint::Summary, &sanitize(&format!("▍custom message  {}", s("customType")))))?;
            write_blocks(w, ui, m.get("content"))?;
        }
        "branchSummary" => {
            writeln!(w, "{}", ui.paint(Paint::Summary, "▍branch summary"))?;
            writeln!(w, "{}", sanitize(&s("summary")))?;
        }
        "compactionSummary" => {
            let tokens = m.get("tokensBefore").map_or("?".into(), |t| t.to_string());
            writeln!(w, "{}", ui.paint(Paint::Summary, &format!("▍compaction summary  ({tokens} tokens before)")))?;
            writeln!(w, "{}", sanitize(&s("summary")))?;
        }
        "system" => {
            let sections = m.get("sections").and_then(Value::as_object).map_or(0, |o| o.len());
            let tools = m.get("toolsAdded").and_then(Value::as_array).map_or(0, Vec::len);
            let removed = m.get("toolsRemoved").and_then(Value::as_array).map_or(0, Vec::len);
            let mut what = vec![format!("{sections} section{}", if sections == 1 { "" } else { "s" })];
            if tools > 0 {
                what.push(format!("+{tools} tool{}", if tools == 1 { "" } else { "s" }));
            }
            if removed > 0 {
                what.push(format!("-{removed} tool{}", if removed == 1 { "" } else { "s" }));
            }
            writeln!(
                w,
                "{}",
                ui.paint(Paint::System, &format!("▍system  {}  (--system prints the prompt)", what.join(", ")))
            )?;
            let text = content_text(m.get("content"));
            if !text.is_empty() {
                writeln!(w, "{}", sanitize(&text))?;
            }
        }
        other => {
            writeln!(w, "{}", ui.paint(Paint::Dim, &sanitize(&format!("▍{other} (not sent to the model)"))))?;
        }
    }
    Ok(())
}

fn write_blocks(w: &mut dyn Write, ui: &Ui, content: Option<&Value>) -> io::Result<()> {
    let blocks = match content {
        Some(Value::String(s)) => return writeln!(w, "{}", sanitize(s)),
        Some(Value::Array(b)) => b,
        _ => return Ok(()),
    };
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => writeln!(w, "{}", sanitize(&js::to_js_string(b.get("text"))))?,
            Some("thinking") => {
                let text = if js::truthy(b.get("redacted")) {
                    "(redacted)".to_string()
                } else {
                    js::to_js_string(b.get("thinking"))
                };
                write_clipped(w, ui, &format!("thinking: {text}"), THINKING_LINES, "  ")?;
            }
            Some("toolCall") => {
                let name = js::to_js_string(b.get("name"));
                let args = b.get("arguments").map_or(String::new(), |a| a.to_string());
                let line = format!("→ {name} {}", one_line_str(&args));
                writeln!(w, "{}", ui.paint(Paint::Tool, &sanitize(&clip_chars(&line, 200))))?;
            }
            Some("image") => write_images(w, ui, Some(&Value::Array(vec![b.clone()])), "")?,
            _ => writeln!(w, "{}", ui.paint(Paint::Dim, &clip_chars(&b.to_string(), 120)))?,
        }
    }
    Ok(())
}

fn write_images(w: &mut dyn Write, ui: &Ui, content: Option<&Value>, indent: &str) -> io::Result<()> {
    for b in content.and_then(Value::as_array).into_iter().flatten() {
        if b.get("type").and_then(Value::as_str) == Some("image") {
            writeln!(w, "{indent}{}", ui.paint(Paint::Dim, &image_note(b)))?;
        }
    }
    Ok(())
}

/// `[image/png 34 KB]`: the decoded size of a base64 image block.
pub fn image_note(b: &Value) -> String {
    let data = b.get("data").and_then(Value::as_str).unwrap_or("");
    let padding = data.bytes().rev().take_while(|&c| c == b'=').count();
    let bytes = (data.len() * 3 / 4).saturating_sub(padding.min(2));
    format!("[{} {}]", sanitize(&js::to_js_string(b.get("mimeType"))), human_bytes(bytes))
}

fn human_bytes(n: usize) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{} KB", (n as f64 / 1024.0).round())
    } else {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    }
}

fn write_clipped(w: &mut dyn Write, ui: &Ui, text: &str, max_lines: usize, indent: &str) -> io::Result<()> {
    let text = sanitize(text);
    let text = text.trim_start_matches('\n').trim_end_matches('\n');
    if text.is_empty() {
        return writeln!(w, "{indent}{}", ui.paint(Paint::Dim, "(no output)"));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    for l in lines.iter().take(max_lines) {
        writeln!(w, "{indent}{}", ui.paint(Paint::Dim, &clip_chars(l, 200)))?;
    }
    if lines.len() > max_lines {
        writeln!(w, "{indent}{}", ui.paint(Paint::Dim, &format!("… {} more lines", lines.len() - max_lines)))?;
    }
    Ok(())
}

fn one_line_str(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn clip_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// Markdown: headings per message, tool calls and results in fenced blocks.
pub fn write_markdown(w: &mut dyn Write, head: &TranscriptHead, messages: &[Value]) -> io::Result<()> {
    let title = head.session_name.map_or_else(|| head.file.to_string(), str::to_string);
    writeln!(w, "# {}", title)?;
    writeln!(w)?;
    let mut facts = vec![format!("- File: `{}`", head.file)];
    if let Some(l) = head.leaf {
        facts.push(format!("- Leaf: `{l}`"));
    }
    if let Some(m) = &head.model {
        facts.push(format!("- Model: `{m}`"));
    }
    if let Some(t) = &head.thinking_level {
        facts.push(format!("- Thinking: {t}"));
    }
    facts.push(format!("- Messages: {}", messages.len()));
    writeln!(w, "{}", facts.join("\n"))?;
    if let Some((prompt, tools)) = &head.system {
        writeln!(w, "\n## System prompt\n")?;
        writeln!(w, "{}", fence(prompt, ""))?;
        writeln!(w, "\nTools: {}", tools.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "))?;
    }
    for m in messages {
        writeln!(w)?;
        let role = js::to_js_string(m.get("role"));
        let s = |k: &str| js::to_js_string(m.get(k));
        match role.as_str() {
            "user" => {
                writeln!(w, "## User\n")?;
                md_blocks(w, m.get("content"))?;
            }
            "assistant" => {
                let mut h = format!("## Assistant (`{}`)", s("model"));
                if matches!(s("stopReason").as_str(), "error" | "aborted" | "length") {
                    h += &format!(" — {}", s("stopReason"));
                }
                writeln!(w, "{h}\n")?;
                if m.get("stopReason").and_then(Value::as_str) == Some("error") {
                    writeln!(w, "> Error: {}\n", one_line_str(&s("errorMessage")))?;
                }
                md_blocks(w, m.get("content"))?;
            }
            "toolResult" => {
                let status = if js::truthy(m.get("isError")) { "error" } else { "ok" };
                writeln!(w, "**Result of `{}`** ({status}):\n", s("toolName"))?;
                writeln!(w, "{}", fence(&content_text(m.get("content")), ""))?;
            }
            "bashExecution" => {
                writeln!(w, "## User ran `{}`\n", s("command"))?;
                writeln!(w, "{}", fence(&s("output"), ""))?;
                if let Some(code) = m.get("exitCode").filter(|c| !c.is_null()) {
                    writeln!(w, "\nExit code: {code}")?;
                }
            }
            "custom" => {
                writeln!(w, "## Custom message (`{}`)\n", s("customType"))?;
                md_blocks(w, m.get("content"))?;
            }
            "branchSummary" => writeln!(w, "## Branch summary\n\n{}", s("summary"))?,
            "compactionSummary" => writeln!(w, "## Compaction summary\n\n{}", s("summary"))?,
            "system" => writeln!(w, "## System message\n\n{}", fence(&content_text(m.get("content")), ""))?,
            other => writeln!(w, "## {other}\n\n{}", fence(&m.to_string(), "json"))?,
        }
    }
    Ok(())
}

fn md_blocks(w: &mut dyn Write, content: Option<&Value>) -> io::Result<()> {
    let blocks = match content {
        Some(Value::String(s)) => return writeln!(w, "{s}"),
        Some(Value::Array(b)) => b,
        _ => return Ok(()),
    };
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => writeln!(w, "{}\n", js::to_js_string(b.get("text")))?,
            Some("thinking") => {
                let text = js::to_js_string(b.get("thinking"));
                writeln!(w, "<details><summary>Thinking</summary>\n\n{text}\n\n</details>\n")?;
            }
            Some("toolCall") => {
                let args =
                    b.get("arguments").map_or("{}".into(), |a| serde_json::to_string_pretty(a).unwrap_or_default());
                writeln!(w, "**Tool call `{}`**\n\n{}\n", js::to_js_string(b.get("name")), fence(&args, "json"))?;
            }
            Some("image") => writeln!(w, "{}\n", image_note(b))?,
            _ => writeln!(w, "{}\n", fence(&b.to_string(), "json"))?,
        }
    }
    Ok(())
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn fence(text: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let f = "`".repeat(longest.max(2) + 1);
    format!("{f}{lang}\n{}\n{f}", text.trim_end_matches('\n'))
}
