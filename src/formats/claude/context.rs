//! The context Claude Code sends its model at an entry (docs/claude-format.md §2), built
//! the way the client builds it when it resumes there:
//!
//! 1. the chain from the leaf up the `parentUuid`s as written, to a root (a compact
//!    boundary is one);
//! 2. the parts of a split reply that are not on the chain, and the tool results written
//!    under any part, put back after the reply's last part on the chain (the client's
//!    recovery of parallel tool calls; it joins lines by `message.id` even across
//!    branches);
//! 3. cut after the entry asked for (`--resume-session-at`);
//! 4. each line made into API messages (attachments by their `rendered` texts), the
//!    attachments meant for the user's turn moved before it, lines of one reply joined,
//!    neighbouring user messages joined, system texts joined;
//! 5. a call without a result answered with the client's error result.

use rustc_hash::FxHashSet as HashSet;
use serde_json::{json, Map, Value};

use super::Claude;
use crate::session::entry::{EntryIdx, EntryType};
use crate::session::format::Unreadable;
use crate::session::Session;

/// The effort Claude Code asks for unless told otherwise.
pub const DEFAULT_EFFORT: &str = "medium";

/// Whether a client version sends its effort in `messages` (2.1.332 does; older files
/// have no `effort` on their replies).
fn records_effort(version: Option<&str>) -> bool {
    let Some(v) = version else { return false };
    let parts: Vec<u64> = v.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    parts.as_slice() >= [2, 1, 332].as_slice()
}

/// What the client sends for a tool call whose result it cannot find.
pub const MISSING_RESULT: &str = "[Tool result missing due to internal error]";

/// The entries whose lines make the context at `leaf`, in the order the client reads them
/// (steps 1 and 2).
pub fn chain(s: &Session, c: &Claude, leaf: EntryIdx) -> Vec<EntryIdx> {
    let mut chain = Vec::new();
    let mut seen: HashSet<usize> = HashSet::default();
    let mut cur = Some(leaf.get());
    while let Some(k) = cur {
        if !seen.insert(k) {
            break;
        }
        chain.push(k);
        cur = c.lines[k].parent.as_deref().and_then(|p| c.by_uuid.get(p)).map(|&p| p as usize);
    }
    chain.reverse();
    // Step 2: for each reply on the chain (by message.id, once), the parts and results
    // that are not on it go after the last of its parts that is.
    let mut inserts: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut done: HashSet<&str> = HashSet::default();
    for &k in &chain {
        let Some(id) = c.lines[k].message_id.as_deref() else { continue };
        if !done.insert(id) {
            continue;
        }
        let group = c.groups.get(id).map_or(&[][..], Vec::as_slice);
        let mut siblings: Vec<usize> = group.iter().map(|&g| g as usize).filter(|g| !seen.contains(g)).collect();
        let mut results: Vec<usize> = group
            .iter()
            .flat_map(|&g| c.results_under.get(&g).into_iter().flatten())
            .map(|&r| r as usize)
            .filter(|r| !seen.contains(r))
            .collect();
        if siblings.is_empty() && results.is_empty() {
            continue;
        }
        // The client sorts each by timestamp; the file's order is the order they were
        // written in.
        siblings.sort_by(|&a, &b| by_time(s, a, b));
        results.sort_by(|&a, &b| by_time(s, a, b));
        let anchor = *chain.iter().rev().find(|&&a| c.lines[a].message_id.as_deref() == Some(id)).unwrap_or(&k);
        let recovered: Vec<usize> = siblings.into_iter().chain(results).collect();
        seen.extend(recovered.iter().copied());
        inserts.push((anchor, recovered));
    }
    let mut out = Vec::with_capacity(chain.len());
    for k in chain {
        out.push(EntryIdx::new(k));
        if let Some((_, rec)) = inserts.iter().find(|(a, _)| *a == k) {
            out.extend(rec.iter().map(|&r| EntryIdx::new(r)));
        }
    }
    out
}

fn by_time(s: &Session, a: usize, b: usize) -> std::cmp::Ordering {
    let (ta, tb) = (s.time(EntryIdx::new(a)), s.time(EntryIdx::new(b)));
    match (ta, tb) {
        (Some(x), Some(y)) if x != y => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
        _ => a.cmp(&b),
    }
}

/// The entries of the context at `at`: the chain of the leaf the client would resume from
/// to reach it, cut after it. The leaf is the session's own when `at` is in its context,
/// else the newest tip below `at` (not past a compaction) whose context holds it, else
/// `at` itself.
pub fn entries_at(s: &Session, c: &Claude, at: EntryIdx) -> Vec<EntryIdx> {
    let cut = |mut list: Vec<EntryIdx>| {
        list.iter().position(|&e| e == at).map(|p| {
            list.truncate(p + 1);
            list
        })
    };
    if let Some(list) = s.default_leaf().and_then(|d| cut(chain(s, c, d))) {
        return list;
    }
    if let Some(list) = newest_tip_below(s, at).and_then(|t| cut(chain(s, c, t))) {
        return list;
    }
    cut(chain(s, c, at)).unwrap_or_else(|| vec![at])
}

/// The tip below `i` written last, not looking past a compaction.
fn newest_tip_below(s: &Session, i: EntryIdx) -> Option<EntryIdx> {
    let mut best = None;
    let mut stack = vec![i];
    while let Some(n) = stack.pop() {
        let mut any = false;
        for ch in s.children(n) {
            if s.entries[ch].kind != EntryType::Compaction {
                any = true;
                stack.push(ch);
            }
        }
        if !any && best.is_none_or(|b: EntryIdx| n > b) {
            best = Some(n);
        }
    }
    best
}

/// One API message before the joins, and where it came from.
struct Item {
    role: &'static str,
    content: Value,
    /// An assistant line's `message.id`.
    reply: Option<String>,
    /// An attachment's text for the user's turn.
    attachment: bool,
}

/// The line of entry `i`, parsed.
pub fn line(s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
    serde_json::from_slice(s.raw_line(i)).map_err(|e| Unreadable { skip: true, ..Unreadable::at(s, i, e.to_string()) })
}

/// `<system-reminder>\n…\n</system-reminder>` without its wrapper (how a system text goes).
fn unwrap_reminder(t: &str) -> &str {
    t.strip_prefix("<system-reminder>")
        .and_then(|r| r.strip_suffix("</system-reminder>"))
        .map(|r| r.strip_prefix('\n').unwrap_or(r))
        .map(|r| r.strip_suffix('\n').unwrap_or(r))
        .unwrap_or(t)
}

/// The API messages a line makes (step 4, before the joins).
fn items(v: &Value) -> Vec<Item> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
    let content = || v.get("message").and_then(|m| m.get("content")).cloned().unwrap_or(Value::Null);
    match ty {
        "user" => vec![Item { role: "user", content: content(), reply: None, attachment: false }],
        "assistant" => {
            if v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
                return Vec::new();
            }
            let reply = v.get("message").and_then(|m| m.get("id")).and_then(Value::as_str).map(str::to_string);
            vec![Item { role: "assistant", content: content(), reply, attachment: false }]
        }
        "attachment" => {
            let role = v.get("renderedRole").and_then(Value::as_str).unwrap_or("user");
            let rendered = v.get("rendered").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            rendered
                .iter()
                .filter_map(|r| r.get("content"))
                .map(|c| match (role, c) {
                    ("system", Value::String(t)) => {
                        Item { role: "system", content: unwrap_reminder(t).into(), reply: None, attachment: false }
                    }
                    (_, Value::String(t)) => Item {
                        role: "user",
                        content: json!([{"type": "text", "text": t}]),
                        reply: None,
                        attachment: true,
                    },
                    (_, other) => Item { role: "user", content: other.clone(), reply: None, attachment: true },
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

fn blocks(content: Value) -> Vec<Value> {
    match content {
        Value::String(t) => vec![json!({"type": "text", "text": t})],
        Value::Array(a) => a,
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

fn is_type(b: &Value, t: &str) -> bool {
    b.get("type").and_then(Value::as_str) == Some(t)
}

fn has_tool_result(content: &Value) -> bool {
    content.as_array().is_some_and(|a| a.iter().any(|b| is_type(b, "tool_result")))
}

/// User message `b` joined onto `a`: a text at the seam ends with a newline.
fn join_user(a: &mut Value, b: Value) {
    let mut left = blocks(a.take());
    let right = blocks(b);
    if let (Some(l), Some(r)) = (left.last_mut(), right.first()) {
        if is_type(l, "text") && is_type(r, "text") {
            if let Some(Value::String(t)) = l.get_mut("text") {
                t.push('\n');
            }
        }
    }
    left.extend(right);
    *a = Value::Array(left);
}

/// The `messages` Claude Code sends for the context of `entries` (steps 4 and 5).
pub fn api_messages(s: &Session, entries: &[EntryIdx]) -> Result<Vec<Value>, Unreadable> {
    let mut list: Vec<Item> = Vec::new();
    let mut effort = None;
    for &i in entries {
        let v = line(s, i)?;
        if let Some(e) = v.get("effort").filter(|e| e.is_string()) {
            effort = Some(e.clone());
        }
        list.extend(items(&v));
    }
    // The effort a turn asks for rides on the first system message; the client asks for
    // the session's (its replies record it), so a context before the first reply takes
    // the first reply's, and a file without replies the client's default.
    if effort.is_none() {
        effort = s
            .entries
            .indices()
            .filter(|&i| s.entries[i].role == crate::session::Role::Assistant)
            .find_map(|i| line(s, i).ok().and_then(|v| v.get("effort").filter(|e| e.is_string()).cloned()));
    }
    if effort.is_none() && records_effort(s.header.version.as_ref().and_then(Value::as_str)) {
        effort = Some(DEFAULT_EFFORT.into());
    }
    // Attachments for the user's turn go before it: up past user and system messages, to
    // the reply or the tool results before them.
    let mut ordered: Vec<Item> = Vec::with_capacity(list.len());
    for item in list {
        if item.attachment {
            let mut at = ordered.len();
            while at > 0 {
                let prev = &ordered[at - 1];
                if prev.role == "assistant"
                    || (prev.role == "user" && has_tool_result(&prev.content))
                    || prev.attachment
                {
                    break;
                }
                at -= 1;
            }
            ordered.insert(at, item);
        } else {
            ordered.push(item);
        }
    }
    let mut out: Vec<Item> = Vec::new();
    for item in ordered {
        match item.role {
            "assistant" => {
                if let Some(last) = out.last_mut() {
                    if last.role == "assistant" && last.reply.is_some() && last.reply == item.reply {
                        let mut c = blocks(last.content.take());
                        c.extend(blocks(item.content));
                        last.content = Value::Array(c);
                        continue;
                    }
                }
                out.push(item);
            }
            "system" => {
                if let Some(last) = out.last_mut().filter(|l| l.role == "system") {
                    let joined = format!(
                        "{}\n\n{}",
                        last.content.as_str().unwrap_or_default(),
                        item.content.as_str().unwrap_or_default()
                    );
                    last.content = joined.into();
                    continue;
                }
                out.push(item);
            }
            _ => {
                if let Some(last) = out.iter_mut().rev().find(|l| l.role != "system").filter(|l| l.role == "user") {
                    join_user(&mut last.content, item.content);
                    continue;
                }
                out.push(item);
            }
        }
    }
    // A reply that is only thinking, last (resumed at its thinking line), is not sent.
    if out.last().is_some_and(|m| {
        m.role == "assistant"
            && m.content.as_array().is_some_and(|a| {
                !a.is_empty() && a.iter().all(|b| is_type(b, "thinking") || is_type(b, "redacted_thinking"))
            })
    }) {
        out.pop();
    }
    answer_unanswered(&mut out);
    let mut effort = effort.map(|e| json!({"effort": e}));
    Ok(out
        .into_iter()
        .map(|m| {
            let mut o = Map::new();
            o.insert("role".into(), m.role.into());
            let content = if m.role == "user" { tool_results_first(m.content) } else { m.content };
            o.insert("content".into(), content);
            if m.role == "system" {
                if let Some(e) = effort.take() {
                    o.insert("output_config".into(), e);
                }
            }
            Value::Object(o)
        })
        .collect())
}

/// Tool results lead a user message.
fn tool_results_first(content: Value) -> Value {
    match content {
        Value::Array(a) if a.iter().any(|b| is_type(b, "tool_result")) => {
            let (mut results, rest): (Vec<Value>, Vec<Value>) = a.into_iter().partition(|b| is_type(b, "tool_result"));
            results.extend(rest);
            Value::Array(results)
        }
        other => other,
    }
}

/// Step 5: every call gets a result in the user message after its reply.
fn answer_unanswered(out: &mut Vec<Item>) {
    let mut k = 0;
    while k < out.len() {
        if out[k].role != "assistant" {
            k += 1;
            continue;
        }
        let calls: Vec<String> = out[k]
            .content
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| is_type(b, "tool_use"))
            .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_string))
            .collect();
        if calls.is_empty() {
            k += 1;
            continue;
        }
        let next = (k + 1..out.len()).find(|&j| out[j].role != "system");
        let answered: HashSet<String> = next
            .filter(|&j| out[j].role == "user")
            .and_then(|j| out[j].content.as_array())
            .into_iter()
            .flatten()
            .filter(|b| is_type(b, "tool_result"))
            .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str).map(str::to_string))
            .collect();
        let missing: Vec<Value> = calls
            .iter()
            .filter(|c| !answered.contains(*c))
            .map(|c| json!({"type": "tool_result", "tool_use_id": c, "content": MISSING_RESULT, "is_error": true}))
            .collect();
        if !missing.is_empty() {
            match next.filter(|&j| out[j].role == "user") {
                Some(j) => {
                    let mut c = missing;
                    c.extend(blocks(out[j].content.take()));
                    out[j].content = Value::Array(c);
                }
                None => out.insert(
                    k + 1,
                    Item { role: "user", content: Value::Array(missing), reply: None, attachment: false },
                ),
            }
        }
        k += 1;
    }
}
