//! What `pisces check` finds in a pi file beyond what loading reports: what only the
//! whole tree of pi's entry shapes shows (labels naming nothing, compactions keeping an
//! entry off their path, context edits off their branch, tool results without their call,
//! calls never answered), and an old version.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Pi;
use crate::session::check::{Finding, Level};
use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::{js, Session};

/// What the checks need of each entry, read from its whole line.
enum Facts {
    None,
    /// Not readable by pisces (reported when loading).
    Unreadable,
    Label {
        target: Option<String>,
    },
    Compaction {
        first_kept: Option<Value>,
    },
    Assistant {
        calls: Vec<(String, String)>,
    },
    ToolResult {
        call: String,
    },
    ContextEdit {
        target: Option<String>,
    },
}

fn facts_of(session: &Session, i: EntryIdx) -> Facts {
    let Ok(v) = session.parse(i) else { return Facts::Unreadable };
    let str_of = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let e = &session.entries[i];
    match (e.kind, e.role) {
        (EntryType::Label, _) => Facts::Label { target: str_of(v.get("targetId")) },
        (EntryType::Compaction, _) => Facts::Compaction { first_kept: v.get("firstKeptEntryId").cloned() },
        (EntryType::ContextEdit, _) => Facts::ContextEdit { target: str_of(v.get("targetId")) },
        (EntryType::Message, Role::Assistant) => {
            let calls = v["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .map(|b| (js::to_js_string(b.get("id")), js::to_js_string(b.get("name"))))
                .collect();
            // An errored or aborted reply is never sent again (pi-ai drops it), so its
            // calls need no answer.
            let dropped = matches!(v["message"]["stopReason"].as_str(), Some("error" | "aborted"));
            Facts::Assistant { calls: if dropped { vec![] } else { calls } }
        }
        (EntryType::Message, Role::ToolResult) => {
            Facts::ToolResult { call: js::to_js_string(v["message"].get("toolCallId")) }
        }
        _ => Facts::None,
    }
}

/// Fields pi reads with the wrong type or not at all: what pi does with each is in the
/// message. (kind, level, message, hint)
type Shape = (&'static str, Level, String, &'static str);

/// The fields of entry `v` (entry `i`) that are not what pi writes.
fn shapes_of(session: &Session, i: EntryIdx, v: &Value) -> Vec<Shape> {
    let mut out = Vec::new();
    let e = &session.entries[i];
    if e.kind == EntryType::NotObject {
        return out;
    }
    match v.get("id") {
        Some(Value::String(id)) if !id.is_empty() => {}
        // Version 1 files have no ids: pisces names them by line.
        _ if session.synthetic_ids => {}
        Some(Value::String(_)) => out.push((
            "empty-id",
            Level::Warning,
            "the entry's id is an empty string".into(),
            "pi keys it as it is, but JS takes the empty id for false: a child naming it is a root, and no REV names it",
        )),
        None | Some(Value::Null) => out.push((
            "missing-id",
            Level::Warning,
            "the entry has no id".into(),
            "pi keeps it, but nothing can name it: no child, label or REV reaches it",
        )),
        Some(other) => out.push((
            "non-string-id",
            Level::Warning,
            format!("the entry's id is {other}, not a string"),
            "pi keys it as it is; a parentId or label written by pi (a string) never names it",
        )),
    }
    match v.get("timestamp") {
        Some(Value::String(t)) if js::parse_date(t).is_some() => {}
        t => out.push((
            "bad-timestamp",
            Level::Warning,
            match t {
                None => "the entry has no timestamp".into(),
                Some(t) => format!("the timestamp {t} is not a date"),
            },
            "pi orders siblings by time; this one sorts as equal to every sibling (it keeps its place in the file)",
        )),
    }
    let msg = v.get("message").filter(|m| m.is_object());
    // A message entry without a message object is reported when loading.
    if e.kind == EntryType::Message && msg.is_some() {
        let content = msg.and_then(|m| m.get("content"));
        match content {
            Some(Value::String(_) | Value::Array(_)) => {}
            None if e.role == Role::BashExecution => {}
            c => out.push((
                "bad-content",
                Level::Warning,
                format!("the message's content is {}", c.map_or("missing".to_string(), Value::to_string)),
                "pi reads it as no content (an empty list): the model sees an empty message",
            )),
        }
        if e.role == Role::Assistant {
            match msg.and_then(|m| m.get("usage")) {
                None | Some(Value::Object(_)) => {}
                Some(u) => out.push((
                    "bad-usage",
                    Level::Warning,
                    format!("the reply's usage is {u}, not an object"),
                    "pi's /session shows it as undefined/undefined and counts nothing for it",
                )),
            }
        }
    }
    if e.kind == EntryType::Compaction {
        if !matches!(v.get("summary"), Some(Value::String(_))) {
            out.push((
                "bad-compaction-summary",
                Level::Error,
                format!("the compaction's summary is {}", v.get("summary").map_or("missing".into(), Value::to_string)),
                "pi sends the model this value where the summary of the earlier conversation goes",
            ));
        }
        if !v.get("tokensBefore").is_some_and(Value::is_number) {
            out.push((
                "bad-tokens-before",
                Level::Warning,
                format!(
                    "the compaction's tokensBefore is {}",
                    v.get("tokensBefore").map_or("missing".into(), Value::to_string)
                ),
                "pi's /tree shows it as `NaNk tokens`",
            ));
        }
    }
    out
}

/// Parses every entry whole, on two threads.
fn read_whole(session: &Session) -> Vec<(Facts, Vec<Shape>)> {
    let n = session.entries.len();
    let mid = n / 2;
    let facts = |range: std::ops::Range<usize>| {
        range
            .map(|i| {
                let i = EntryIdx::new(i);
                let shapes = session.parse(i).map(|v| shapes_of(session, i, &v)).unwrap_or_default();
                (facts_of(session, i), shapes)
            })
            .collect::<Vec<_>>()
    };
    std::thread::scope(|t| {
        let second = t.spawn(|| facts(mid..n));
        let mut first = facts(0..mid);
        // A panic on the other thread is a bug: surface it as this thread's.
        first.extend(second.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        first
    })
}

/// pi's own findings (the caller adds what loading found).
pub fn findings(pi: &Pi, session: &Session) -> Vec<Finding> {
    let read = read_whole(session);
    let mut out = Vec::new();
    header_findings(pi, session, &mut out);
    for (i, (_, shapes)) in read.iter().enumerate() {
        let line = Some(session.entries[EntryIdx::new(i)].line);
        for (kind, level, message, hint) in shapes {
            out.push(Finding { level: *level, kind, line, message: message.clone(), hint });
        }
    }
    let facts: Vec<Facts> = read.into_iter().map(|(f, _)| f).collect();
    if pi.migrate_v1 || pi.migrate_v2 {
        out.push(Finding {
            level: Level::Info,
            kind: "old-format",
            line: session.header.line,
            message: format!("a version-{} session", pi.version),
            hint: "pi migrates such a file and rewrites it whole when it opens it; pisces reads it in memory and leaves it as it is",
        });
    }
    let line = |i: EntryIdx| Some(session.entries[i].line);
    let depth = depths(session);
    // Whether `k` is on the path to `i` (k == i counts): climb from `i` to `k`'s depth.
    let on_path_to = |k: EntryIdx, i: EntryIdx| {
        let mut cur = i;
        while depth[cur.get()] > depth[k.get()] {
            match session.parent(cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        cur == k
    };
    for (i, f) in facts.iter().enumerate() {
        let i = EntryIdx::new(i);
        match f {
            Facts::Label { target: Some(t) } if session.get(t).is_none() => out.push(Finding {
                level: Level::Error,
                kind: "label-target-unknown",
                line: line(i),
                message: format!("label entry for {t}, which no entry has as its id"),
                hint: "the label names nothing; pi ignores it in /tree",
            }),
            Facts::Compaction { first_kept } => {
                let own = session.id_str(i);
                let fk = first_kept.as_ref().and_then(Value::as_str);
                let on_path = || fk.and_then(|fk| session.get(fk)).is_some_and(|k| k != i && on_path_to(k, i));
                if fk.is_none() {
                    out.push(Finding {
                        level: Level::Error,
                        kind: "compaction-first-kept-missing",
                        line: line(i),
                        message: "compaction without a `firstKeptEntryId`".into(),
                        hint: "pi keeps nothing from before this compaction in the model's context",
                    });
                } else if fk != own && !on_path() {
                    out.push(Finding {
                        level: Level::Error,
                        kind: "compaction-first-kept-off-path",
                        line: line(i),
                        message: format!("compaction keeps from {}, which is not on its path", fk.unwrap_or_default()),
                        hint: "pi keeps nothing from before this compaction in the model's context",
                    });
                }
            }
            Facts::ContextEdit { target: Some(t) } => {
                let on_path = session.get(t).is_some_and(|k| on_path_to(k, i));
                if !on_path {
                    out.push(Finding {
                        level: Level::Warning,
                        kind: "context-edit-off-path",
                        line: line(i),
                        message: format!("context edit of {t}, which is not on its path"),
                        hint: "the edit changes nothing: pi applies edits only to entries on the same branch",
                    });
                }
            }
            _ => {}
        }
    }
    tool_pairs(session, &facts, &mut out);
    out
}

/// The header's version: pi 1.6 writes 3 (a number).
fn header_findings(pi: &Pi, session: &Session, out: &mut Vec<Finding>) {
    let line = session.header.line;
    match session.header.version.as_ref() {
        Some(serde_json::Value::Number(_)) if pi.version > 3.0 => out.push(Finding {
            level: Level::Warning,
            kind: "newer-version",
            line,
            message: format!("a version-{} session: newer than the version-3 files pisces knows", pi.version),
            hint: "written by a newer pi: pisces reads it as version 3, and newer entry shapes may be read wrong",
        }),
        Some(v @ serde_json::Value::String(_)) => out.push(Finding {
            level: Level::Warning,
            kind: "version-not-a-number",
            line,
            message: format!("the header's version is {v}, a string"),
            hint: "pi reads it as the number it spells (a blank one as 0, anything else as NaN: no migration)",
        }),
        Some(v) if !v.is_number() && !v.is_null() => out.push(Finding {
            level: Level::Warning,
            kind: "version-not-a-number",
            line,
            message: format!("the header's version is {v}"),
            hint: "pi reads it as NaN and migrates nothing",
        }),
        _ => {}
    }
}

/// Each entry's depth (roots are 0).
fn depths(session: &Session) -> Vec<u32> {
    let mut depth = vec![0u32; session.entries.len()];
    let mut stack: Vec<EntryIdx> = session.roots().to_vec();
    while let Some(i) = stack.pop() {
        for c in session.children(i) {
            depth[c.get()] = depth[i.get()] + 1;
            stack.push(c);
        }
    }
    depth
}

/// Tool results whose call is not on their path, and calls no result answers: a walk of
/// the tree keeping the calls of the current path.
fn tool_pairs(session: &Session, facts: &[Facts], out: &mut Vec<Finding>) {
    let mut open: HashMap<&str, Vec<EntryIdx>> = HashMap::new();
    let mut answered: HashSet<(EntryIdx, &str)> = HashSet::new();
    // (entry, entering?) pairs: children are pushed after the exit marker.
    let mut stack: Vec<(EntryIdx, bool)> = session.roots().iter().rev().map(|&r| (r, true)).collect();
    while let Some((i, enter)) = stack.pop() {
        let calls = match &facts[i.get()] {
            Facts::Assistant { calls } => calls.as_slice(),
            _ => &[],
        };
        if !enter {
            for (id, _) in calls {
                if let Some(v) = open.get_mut(id.as_str()) {
                    v.pop();
                }
            }
            continue;
        }
        for (id, _) in calls {
            open.entry(id.as_str()).or_default().push(i);
        }
        if let Facts::ToolResult { call } = &facts[i.get()] {
            match open.get(call.as_str()).and_then(|v| v.last()) {
                Some(&a) => {
                    answered.insert((a, call.as_str()));
                }
                None => out.push(Finding {
                    level: Level::Error,
                    kind: "tool-result-without-call",
                    line: Some(session.entries[i].line),
                    message: format!("tool result for call {call}, which no assistant message on its path made"),
                    hint: "providers reject a tool result without its call; the model would see a context it did not produce",
                }),
            }
        }
        stack.push((i, false));
        let children: Vec<EntryIdx> = session.children(i).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, true)));
    }
    for (i, f) in facts.iter().enumerate() {
        let i = EntryIdx::new(i);
        if let Facts::Assistant { calls } = f {
            for (id, name) in calls {
                if !answered.contains(&(i, id.as_str())) {
                    out.push(Finding {
                        level: Level::Warning,
                        kind: "tool-call-unanswered",
                        line: Some(session.entries[i].line),
                        message: format!("tool call {id} ({name}) is never answered by a tool result"),
                        hint: "pi sends a synthetic error result (\"No result provided\") in its place",
                    });
                }
            }
        }
    }
}
