//! Offline summaries: deterministic, built from the entries alone, in the section layout
//! pi asks its models for (Goal, Constraints & Preferences, Progress with Done / In
//! Progress / Blocked, Key Decisions, Next Steps, Critical Context; a split turn's prefix
//! as Original Request, Progress So Far, Context Needed to Continue).
//!
//! - **Goal**: the user's prompts, in order.
//! - **Constraints & Preferences**: sentences of the prompts that say how (must, never,
//!   only, without, not the …).
//! - **Done**: files written or edited by successful calls, commands whose last run
//!   succeeded (pi's bash tool reports a non-zero exit as an error).
//! - **In Progress**: a prompt without a reply, a turn that ended in tool calls, calls
//!   without results, an aborted reply.
//! - **Blocked**: commands whose last run failed (with the exit code and the first line
//!   that says why), writes and edits and other calls whose last attempt failed, a reply
//!   that ended in an error.
//! - **Key Decisions**: each successful change with the assistant's stated reason (the
//!   first sentence of the text beside the call).
//! - **Next Steps**: what the blocked and unfinished items call for.
//! - **Critical Context**: the last assistant text (the current state).
//!
//! Earlier summaries (the previous compaction, branch summaries among the entries) are
//! merged section by section, their items first. Entries marked with
//! [`GENERATOR`] in `details` so nobody mistakes the result for a model's summary.

use std::collections::HashMap;

use serde_json::Value;

use super::prompts::BRANCH_SUMMARY_PREAMBLE;
use super::text::content_text;
use crate::session::js;

/// What `details.generator` says for an offline summary.
pub const GENERATOR: &str = "pisces-offline";

/// Longest goal, constraint, reason or reply kept (characters).
const GOAL_CHARS: usize = 300;
const LINE_CHARS: usize = 200;
const REPLY_CHARS: usize = 600;

/// The summary sections, as item lists (no bullets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    pub goal: Vec<String>,
    pub constraints: Vec<String>,
    pub done: Vec<String>,
    pub in_progress: Vec<String>,
    pub blocked: Vec<String>,
    pub decisions: Vec<String>,
    pub next: Vec<String>,
    pub critical: Vec<String>,
    /// Files read by successful calls (shown only in a turn prefix's progress; the
    /// summary's `<read-files>` lists them otherwise).
    pub read: Vec<String>,
}

impl Sections {
    /// `self` after `earlier`: earlier items first, duplicates dropped. Next steps and the
    /// unfinished work are the new ones when there are any.
    fn merged_after(self, earlier: Sections) -> Sections {
        fn cat(a: Vec<String>, b: Vec<String>) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for x in a.into_iter().chain(b) {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
            out
        }
        let newer_or = |new: Vec<String>, old: Vec<String>| if new.is_empty() { old } else { new };
        let done = cat(earlier.done, self.done);
        let in_progress: Vec<String> =
            newer_or(self.in_progress, earlier.in_progress).into_iter().filter(|i| !done.contains(i)).collect();
        Sections {
            goal: cat(earlier.goal, self.goal),
            constraints: cat(earlier.constraints, self.constraints),
            in_progress,
            done,
            blocked: newer_or(self.blocked, earlier.blocked),
            decisions: cat(earlier.decisions, self.decisions),
            next: newer_or(self.next, earlier.next),
            critical: cat(earlier.critical, self.critical),
            read: cat(earlier.read, self.read),
        }
    }

    /// pi's layout.
    pub fn render(&self) -> String {
        fn list(items: &[String], bullet: &str) -> String {
            if items.is_empty() {
                return "- (none)".into();
            }
            items.iter().map(|i| format!("{bullet}{i}")).collect::<Vec<_>>().join("\n")
        }
        let next = if self.next.is_empty() {
            "1. (none)".to_string()
        } else {
            self.next.iter().enumerate().map(|(i, s)| format!("{}. {s}", i + 1)).collect::<Vec<_>>().join("\n")
        };
        format!(
            "## Goal\n{}\n\n## Constraints & Preferences\n{}\n\n## Progress\n### Done\n{}\n\n### In Progress\n{}\n\n### Blocked\n{}\n\n## Key Decisions\n{}\n\n## Next Steps\n{}\n\n## Critical Context\n{}",
            list(&self.goal, "- "),
            list(&self.constraints, "- "),
            list(&self.done, "- [x] "),
            list(&self.in_progress, "- [ ] "),
            list(&self.blocked, "- "),
            list(&self.decisions, "- "),
            next,
            list(&self.critical, "- "),
        )
    }
}

/// A summary of `messages` (pi AgentMessages, oldest first) merged after the earlier
/// summaries among them and `previous` (a compaction's previous summary).
pub fn summarize(messages: &[Value], previous: Option<&str>) -> String {
    summarize_sections(messages, previous).render()
}

/// The sections [`summarize`] renders.
pub fn summarize_sections(messages: &[Value], previous: Option<&str>) -> Sections {
    let mut earlier = previous.map(parse_summary).unwrap_or_default();
    for m in messages {
        if matches!(role(m), "branchSummary" | "compactionSummary") {
            if let Some(s) = m.get("summary").and_then(Value::as_str) {
                earlier = parse_summary(s).merged_after(earlier);
            }
        }
    }
    analyze(messages).merged_after(earlier)
}

/// A split turn's prefix in pi's turn-prefix layout.
pub fn summarize_turn_prefix(messages: &[Value]) -> String {
    let s = analyze(messages);
    let request = s.goal.first().cloned().unwrap_or_else(|| "(none)".into());
    let mut progress: Vec<String> = s.read.iter().map(|p| format!("Read `{p}`")).collect();
    progress.extend(s.done.iter().cloned());
    progress.extend(s.decisions.iter().cloned());
    progress.extend(s.blocked.iter().map(|b| format!("Blocked: {b}")));
    let mut context: Vec<String> = s.goal.iter().skip(1).map(|g| format!("Also asked: {g}")).collect();
    context.extend(s.constraints.iter().cloned());
    context.extend(s.critical.iter().cloned());
    let list = |v: &[String]| {
        if v.is_empty() {
            "- (none)".to_string()
        } else {
            v.iter().map(|x| format!("- {x}")).collect::<Vec<_>>().join("\n")
        }
    };
    format!(
        "## Original Request\n{request}\n\n## Progress So Far\n{}\n\n## Context Needed to Continue\n{}",
        list(&progress),
        list(&context)
    )
}

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or_default()
}

/// Text on one line: whitespace runs become one space, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let cut: String = joined.chars().take(max).collect();
    format!("{}…", cut.trim_end())
}

/// The first sentence of a text (up to `.`, `!`, `?` followed by a space, or a line end).
fn first_sentence(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|c| *c == b' ') {
            return one_line(&line[..=i], LINE_CHARS);
        }
    }
    one_line(line, LINE_CHARS)
}

/// Sentences of a prompt that state a constraint or preference.
fn constraints_in(text: &str) -> Vec<String> {
    const MARKERS: [&str; 16] = [
        "don't",
        "do not",
        "never",
        "always",
        "must",
        "should",
        "without",
        "only",
        "prefer",
        "make sure",
        "avoid",
        "keep ",
        "not the",
        "instead of",
        "no need",
        "please use",
    ];
    let mut out = Vec::new();
    let mut sentence = String::new();
    let mut flush = |s: &mut String| {
        let lower = s.to_lowercase();
        if MARKERS.iter().any(|m| lower.contains(m)) {
            let t = one_line(s, LINE_CHARS);
            if !t.is_empty() && !out.contains(&t) {
                out.push(t);
            }
        }
        s.clear();
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            flush(&mut sentence);
            continue;
        }
        sentence.push(c);
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()) {
            flush(&mut sentence);
        }
    }
    flush(&mut sentence);
    out
}

/// A tool call and what came of it.
struct Call {
    name: String,
    args: Value,
    /// `(isError, text)` of its result.
    result: Option<(bool, String)>,
}

fn path_of(args: &Value) -> Option<&str> {
    args.get("path").and_then(Value::as_str).filter(|p| !p.is_empty())
}

/// Why a failed call or command failed: the first line that says so.
fn failure_reason(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let is_exit = |l: &str| l.starts_with("Command exited with code");
    let pick = |pred: &dyn Fn(&str) -> bool| lines.iter().copied().find(|l| !is_exit(l) && pred(l));
    let lower_has = |l: &str, w: &[&str]| {
        let ll = l.to_lowercase();
        w.iter().any(|x| ll.contains(x))
    };
    let reason =
        pick(&|l| l.starts_with("not ok") || l.starts_with("FAIL") || l.starts_with('✖') || l.starts_with('✗'))
            .or_else(|| pick(&|l| lower_has(l, &["error:", "error[", "panicked", "exception", "traceback"])))
            .or_else(|| pick(&|l| lower_has(l, &["error", "fail", "cannot", "not found", "no such"])))
            .or_else(|| lines.iter().rev().copied().find(|l| !is_exit(l)));
    reason.map(|r| one_line(r, LINE_CHARS)).unwrap_or_default()
}

/// `Command exited with code N` in a bash result.
fn exit_code(text: &str) -> Option<i64> {
    let at = text.rfind("exited with code ")?;
    let digits: String = text[at + 17..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    digits.parse().ok()
}

/// One write or edit of a file: the operation, whether it succeeded, why not.
type Attempt = (&'static str, bool, String);

/// The runs of one command.
struct Runs {
    /// `(ok, exit code, reason)` per run.
    runs: Vec<(bool, Option<i64>, String)>,
    /// The command as last run.
    shown: String,
}

/// What a command runs, to tell reruns from other commands: its first pipeline stage
/// without redirections (`npm test 2>&1 | tail -9` reruns `npm test`).
fn command_key(cmd: &str) -> String {
    let first = cmd.split('|').next().unwrap_or(cmd);
    let redirect = |t: &&str| {
        let t = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
        t.starts_with('>') || t.starts_with('<')
    };
    first.split_whitespace().filter(|t| !redirect(t)).collect::<Vec<_>>().join(" ")
}

fn analyze(messages: &[Value]) -> Sections {
    let mut results: HashMap<String, (bool, String)> = HashMap::new();
    for m in messages.iter().filter(|m| role(m) == "toolResult") {
        let id = js::to_js_string(m.get("toolCallId"));
        results.insert(id, (js::truthy(m.get("isError")), content_text(m.get("content"), "")));
    }

    let mut s = Sections::default();
    let mut commands: Vec<(String, Runs)> = Vec::new();
    let mut files: Vec<(String, Vec<Attempt>)> = Vec::new();
    let mut other_failures: Vec<(String, bool, String)> = Vec::new();
    let mut last_user: Option<(usize, String)> = None;
    let mut last_assistant: Option<usize> = None;
    let mut last_reply: Option<String> = None;

    let record_command = |commands: &mut Vec<(String, Runs)>, cmd: String, run: (bool, Option<i64>, String)| {
        let key = command_key(&cmd);
        match commands.iter_mut().find(|(k, _)| *k == key) {
            Some((_, r)) => {
                r.runs.push(run);
                r.shown = cmd;
            }
            None => commands.push((key, Runs { runs: vec![run], shown: cmd })),
        }
    };

    for (idx, m) in messages.iter().enumerate() {
        match role(m) {
            "user" => {
                let text = content_text(m.get("content"), "");
                if text.trim().is_empty() {
                    continue;
                }
                let goal = one_line(&text, GOAL_CHARS);
                if !s.goal.contains(&goal) {
                    s.goal.push(goal.clone());
                }
                for c in constraints_in(&text) {
                    if !s.constraints.contains(&c) {
                        s.constraints.push(c);
                    }
                }
                last_user = Some((idx, goal));
            }
            "bashExecution" => {
                if js::truthy(m.get("cancelled")) {
                    continue;
                }
                let cmd = one_line(&js::to_js_string(m.get("command")), LINE_CHARS);
                let code = m.get("exitCode").and_then(Value::as_i64);
                let ok = code.is_none_or(|c| c == 0);
                let reason = if ok {
                    String::new()
                } else {
                    failure_reason(m.get("output").and_then(Value::as_str).unwrap_or(""))
                };
                record_command(&mut commands, cmd, (ok, code, reason));
            }
            "assistant" => {
                last_assistant = Some(idx);
                let text = content_text(m.get("content"), "\n");
                if !text.trim().is_empty() {
                    last_reply = Some(text.clone());
                }
                let blocks = m.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                for b in blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")) {
                    let call = Call {
                        name: js::to_js_string(b.get("name")),
                        args: b.get("arguments").cloned().unwrap_or(Value::Null),
                        result: results.get(&js::to_js_string(b.get("id"))).cloned(),
                    };
                    let Some((is_error, out)) = &call.result else { continue };
                    let ok = !is_error;
                    match (call.name.as_str(), path_of(&call.args)) {
                        ("bash", _) => {
                            let cmd = one_line(&js::to_js_string(call.args.get("command")), LINE_CHARS);
                            let reason = if ok { String::new() } else { failure_reason(out) };
                            let code = if ok { Some(0) } else { exit_code(out) };
                            record_command(&mut commands, cmd, (ok, code, reason));
                        }
                        (op @ ("write" | "edit"), Some(p)) => {
                            let op = if op == "write" { "write" } else { "edit" };
                            let reason = if ok { String::new() } else { failure_reason(out) };
                            match files.iter_mut().find(|(f, _)| f == p) {
                                Some((_, v)) => v.push((op, ok, reason)),
                                None => files.push((p.to_string(), vec![(op, ok, reason)])),
                            }
                            if ok && !text.trim().is_empty() {
                                let verb = if op == "write" { "Wrote" } else { "Edited" };
                                let d = format!("**{verb} `{p}`**: {}", first_sentence(&text));
                                if !s.decisions.contains(&d) {
                                    s.decisions.push(d);
                                }
                            }
                        }
                        ("read", Some(p)) if ok => {
                            let key = format!("`read` of `{p}`");
                            other_failures.retain(|(k, _, _)| *k != key);
                            if !s.read.iter().any(|r| r == p) {
                                s.read.push(p.to_string());
                            }
                        }
                        (name, path) => {
                            let key = match path {
                                Some(p) => format!("`{name}` of `{p}`"),
                                None => format!("`{name}`"),
                            };
                            other_failures.retain(|(k, _, _)| *k != key);
                            other_failures.push((key, ok, if ok { String::new() } else { failure_reason(out) }));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    // Done and blocked, per file and per command: the last attempt decides.
    for (path, ops) in &files {
        let wrote = ops.iter().any(|(op, ok, _)| *op == "write" && *ok);
        let edits = ops.iter().filter(|(op, ok, _)| *op == "edit" && *ok).count();
        let done = match (wrote, edits) {
            (true, 0) => Some(format!("Wrote `{path}`")),
            (true, _) => Some(format!("Wrote and edited `{path}`")),
            (false, 1) => Some(format!("Edited `{path}`")),
            (false, n) if n > 1 => Some(format!("Edited `{path}` ({n} edits)")),
            _ => None,
        };
        s.done.extend(done);
        if let Some((op, false, reason)) = ops.last() {
            s.blocked.push(format!("`{op}` of `{path}` failed: {reason}"));
            s.next.push(format!("Retry the change to `{path}`"));
        }
    }
    for (_, runs) in &commands {
        let cmd = &runs.shown;
        let (ok, code, reason) = runs.runs.last().expect("a command has a run");
        let failed_before = runs.runs.iter().any(|(ok, _, _)| !ok);
        if *ok {
            s.done.push(if failed_before {
                format!("Ran `{cmd}`: it succeeds now (it failed before)")
            } else {
                format!("Ran `{cmd}`")
            });
        } else {
            let exit = code.map(|c| format!(" (exit {c})")).unwrap_or_default();
            let times = if runs.runs.iter().all(|(ok, _, _)| !ok) && runs.runs.len() > 1 {
                format!(", all {} runs", runs.runs.len())
            } else {
                String::new()
            };
            let why = if reason.is_empty() { String::new() } else { format!(": {reason}") };
            s.blocked.push(format!("`{cmd}` fails{exit}{times}{why}"));
            s.next.push(format!("Make `{cmd}` succeed"));
        }
    }
    for (key, ok, reason) in &other_failures {
        if !ok {
            s.blocked.push(format!("{key} failed: {reason}"));
        }
    }

    // How the conversation ends.
    match (last_user, last_assistant) {
        (Some((u, prompt)), a) if a.is_none_or(|a| a < u) => {
            s.in_progress.push(format!("{prompt} (no reply yet)"));
            s.next.push(format!("Reply to: {prompt}"));
        }
        (user, Some(a)) => {
            let m = &messages[a];
            let prompt = user.map(|(_, p)| p);
            let (unfinished, finish) = match &prompt {
                Some(p) => (p.clone(), format!("Finish: {p}")),
                None => ("The current turn".to_string(), "Finish the current turn".to_string()),
            };
            let unanswered: Vec<String> = m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .filter(|b| !results.contains_key(&js::to_js_string(b.get("id"))))
                .map(|b| format!("`{}`", js::to_js_string(b.get("name"))))
                .collect();
            match m.get("stopReason").and_then(Value::as_str) {
                Some("error") => {
                    let msg = one_line(&js::to_js_string(m.get("errorMessage")), LINE_CHARS);
                    s.blocked.push(format!("The last reply ended in an error: {msg}"));
                    s.next.push("Retry the last request".into());
                }
                Some("aborted") => {
                    s.in_progress.push(format!("{unfinished} (the reply was aborted)"));
                    s.next.push(finish);
                }
                Some("length") => {
                    s.in_progress.push(format!("{unfinished} (the reply was cut off at the output limit)"));
                    s.next.push(finish);
                }
                _ if !unanswered.is_empty() => {
                    s.in_progress.push(format!("{} call(s) without a result", unanswered.join(", ")));
                    s.next.push(finish);
                }
                Some("toolUse") => {
                    s.in_progress.push(format!("{unfinished} (the turn was not finished)"));
                    s.next.push(finish);
                }
                _ => {}
            }
        }
        _ => {}
    }
    if let Some(reply) = &last_reply {
        s.critical.push(format!("Last assistant reply: {}", one_line(reply, REPLY_CHARS)));
        if reply.trim_end().ends_with('?') {
            let question = reply.trim_end().rsplit(['.', '!', '\n']).next().unwrap_or(reply).trim();
            s.next.push(format!("Answer the assistant's question: {}", one_line(question, LINE_CHARS)));
        }
    }
    s
}

/// Which section a heading of an earlier summary feeds.
fn section_of(heading: &str) -> Option<&'static str> {
    let h = heading.trim().to_lowercase();
    Some(match h.as_str() {
        "goal" | "goals" | "original request" => "goal",
        "constraints & preferences" | "constraints" => "constraints",
        "done" | "progress so far" | "early progress" => "done",
        "in progress" => "in_progress",
        "blocked" => "blocked",
        "key decisions" => "decisions",
        "next steps" => "next",
        "critical context" | "context needed to continue" | "context for suffix" => "critical",
        "progress" => return None,
        _ => "critical",
    })
}

/// Reads an earlier summary (a model's or ours) back into sections: the preamble, the
/// file lists and placeholders left out, bullets and numbers stripped.
pub fn parse_summary(summary: &str) -> Sections {
    let body = summary.strip_prefix(BRANCH_SUMMARY_PREAMBLE).unwrap_or(summary);
    let mut s = Sections::default();
    let mut current: Option<&'static str> = Some("critical");
    let mut in_files = false;
    for raw in body.lines() {
        let line = raw.trim();
        if line == "<read-files>" || line == "<modified-files>" {
            in_files = true;
            continue;
        }
        if in_files {
            in_files = !(line == "</read-files>" || line == "</modified-files>");
            continue;
        }
        if line == "---" || line == "**Turn Context (split turn):**" || line.is_empty() {
            continue;
        }
        if let Some(h) = line.strip_prefix("### ").or_else(|| line.strip_prefix("## ")) {
            current = section_of(h);
            continue;
        }
        let item = strip_bullet(line);
        if item.is_empty() || item == "(none)" || item == "No prior history." {
            continue;
        }
        let list = match current.unwrap_or("critical") {
            "goal" => &mut s.goal,
            "constraints" => &mut s.constraints,
            "done" => &mut s.done,
            "in_progress" => &mut s.in_progress,
            "blocked" => &mut s.blocked,
            "decisions" => &mut s.decisions,
            "next" => &mut s.next,
            _ => &mut s.critical,
        };
        if !list.contains(&item) {
            list.push(item);
        }
    }
    s
}

fn strip_bullet(line: &str) -> String {
    let mut l = line;
    for p in ["- [x] ", "- [X] ", "- [ ] ", "- ", "* "] {
        if let Some(rest) = l.strip_prefix(p) {
            l = rest;
            break;
        }
    }
    let digits = l.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && l[digits..].starts_with(". ") {
        l = &l[digits + 2..];
    }
    l.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, args: Value) -> Value {
        json!({"type": "toolCall", "id": id, "name": name, "arguments": args})
    }

    fn result(id: &str, error: bool, text: &str) -> Value {
        json!({"role": "toolResult", "toolCallId": id, "toolName": "x", "content": [{"type": "text", "text": text}], "isError": error})
    }

    #[test]
    fn sections_come_from_the_conversation() {
        let msgs = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "Fix the failing test. Do not touch the test file."}]}),
            json!({"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "text", "text": "I'll make parseDue throw. It is the cause."},
                call("1", "edit", json!({"path": "src/todo.js"})), call("2", "bash", json!({"command": "npm test"}))]}),
            result("1", false, "Successfully replaced 1 block(s) in src/todo.js."),
            result("2", true, "TAP\nnot ok 4 - parseDue rejects invalid dates\n# fail 1\n\nCommand exited with code 1"),
            json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Still failing. Should I continue?"}]}),
        ];
        let s = analyze(&msgs);
        assert_eq!(s.goal, ["Fix the failing test. Do not touch the test file."]);
        assert_eq!(s.constraints, ["Do not touch the test file."]);
        assert_eq!(s.done, ["Edited `src/todo.js`"]);
        assert_eq!(s.blocked, ["`npm test` fails (exit 1): not ok 4 - parseDue rejects invalid dates"]);
        assert_eq!(s.decisions, ["**Edited `src/todo.js`**: I'll make parseDue throw."]);
        assert_eq!(s.next, ["Make `npm test` succeed", "Answer the assistant's question: Should I continue?"]);
        assert_eq!(s.critical, ["Last assistant reply: Still failing. Should I continue?"]);
        assert!(s.in_progress.is_empty());
    }

    #[test]
    fn earlier_summaries_merge_first() {
        let earlier = "## Goal\n- Old goal\n\n## Progress\n### Done\n- [x] Old work\n\n### In Progress\n- [ ] Old work\n\n## Next Steps\n1. Old step\n\n<read-files>\na.js\n</read-files>";
        let p = parse_summary(earlier);
        assert_eq!(p.goal, ["Old goal"]);
        assert_eq!(p.done, ["Old work"]);
        assert_eq!(p.next, ["Old step"]);
        assert!(p.critical.is_empty());
        let msgs = vec![json!({"role": "user", "content": "New goal"})];
        let s = summarize_sections(&msgs, Some(earlier));
        assert_eq!(s.goal, ["Old goal", "New goal"]);
        assert!(s.in_progress[0].starts_with("New goal"));
        let text = s.render();
        assert!(text.starts_with("## Goal\n- Old goal\n- New goal\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- [x] Old work\n\n### In Progress\n- [ ] New goal (no reply yet)"));
        assert!(text.ends_with("## Critical Context\n- (none)"));
    }
}
