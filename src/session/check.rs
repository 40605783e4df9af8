//! `check`: every problem of a session file, with a level and a fix hint.
//!
//! Loading already reports what the lenient reader works around (malformed lines,
//! broken links). `check` also reads every line whole (the index only reads the first
//! keys), and looks at what only the whole tree shows: labels naming nothing, compactions
//! keeping an entry that is not on their path, tool results without their call, calls
//! never answered.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use super::entry::{EntryType, Role};
use super::{js, LoadError, Problem, Session, Severity, Source};

/// How bad a finding is. `Error`s and `Warning`s are problems (`check` exits 1);
/// `Info` is worth knowing but not wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub level: Level,
    /// A stable name for the kind of finding (`malformed`, `dangling-parent`, …).
    pub kind: &'static str,
    pub line: Option<u32>,
    pub message: String,
    pub hint: &'static str,
}

/// Checks one session's bytes. `Err` only when the file has no session at all (no valid
/// header, empty): that is reported as one error finding by the caller.
pub fn check(source: &Source) -> Result<Vec<Finding>, LoadError> {
    // The index reads only the first keys of each line; read every line whole, and read
    // the file again treating any line that fails as malformed, as pi would.
    let mut bad = BTreeSet::new();
    loop {
        let session = Session::load_excluding(source, &bad)?;
        let facts = read_whole(&session);
        let damaged: BTreeSet<u32> = facts
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f, Facts::Damaged))
            .map(|(i, _)| session.entries[i].line)
            .collect();
        if damaged.is_empty() || damaged.is_subset(&bad) {
            return Ok(findings(&session, &facts));
        }
        bad.extend(damaged);
    }
}

/// What the checks need of each entry, read from its whole line.
enum Facts {
    None,
    Damaged,
    Label { target: Option<String> },
    Compaction { first_kept: Option<Value> },
    Assistant { calls: Vec<(String, String)> },
    ToolResult { call: String },
    ContextEdit { target: Option<String> },
}

fn facts_of(session: &Session, i: u32) -> Facts {
    let Ok(v) = session.parse(i) else { return Facts::Damaged };
    let str_of = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let e = &session.entries[i as usize];
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

/// Parses every entry whole, on two threads.
fn read_whole(session: &Session) -> Vec<Facts> {
    let n = session.entries.len() as u32;
    let mid = n / 2;
    std::thread::scope(|t| {
        let second = t.spawn(|| (mid..n).map(|i| facts_of(session, i)).collect::<Vec<_>>());
        let mut first: Vec<Facts> = (0..mid).map(|i| facts_of(session, i)).collect();
        first.extend(second.join().expect("checker thread panicked"));
        first
    })
}

fn findings(session: &Session, facts: &[Facts]) -> Vec<Finding> {
    let mut out: Vec<Finding> = session
        .diagnostics
        .iter()
        .map(|d| {
            let (level, kind, hint) = describe(d.kind, d.severity);
            Finding { level, kind, line: d.line, message: d.message.clone(), hint }
        })
        .collect();
    if session.migrate_v1 || session.migrate_v2 {
        out.push(Finding {
            level: Level::Info,
            kind: "old-format",
            line: Some(session.header_line),
            message: format!("a version-{} session", session.version),
            hint: "pi migrates such a file and rewrites it whole when it opens it; pisces reads it in memory and leaves it as it is",
        });
    }
    let line = |i: u32| Some(session.entries[i as usize].line);
    let depth = depths(session);
    // Whether `k` is on the path to `i` (k == i counts): climb from `i` to `k`'s depth.
    let on_path_to = |k: u32, i: u32| {
        let mut cur = i;
        while depth[cur as usize] > depth[k as usize] {
            cur = session.parent(cur).expect("a deeper entry has a parent");
        }
        cur == k
    };
    for (i, f) in facts.iter().enumerate() {
        let i = i as u32;
        match f {
            Facts::Label { target: Some(t) } if session.get(t).is_none() => out.push(Finding {
                level: Level::Error,
                kind: "label-target-unknown",
                line: line(i),
                message: format!("label entry for {t}, which no entry has as its id"),
                hint: "the label names nothing; pi ignores it in /tree",
            }),
            Facts::Compaction { first_kept } => {
                let own = session.id(i);
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
    tool_pairs(session, facts, &mut out);
    out.sort_by_key(|f| (f.line.unwrap_or(0), std::cmp::Reverse(f.level)));
    out
}

/// Each entry's depth (roots are 0).
fn depths(session: &Session) -> Vec<u32> {
    let mut depth = vec![0u32; session.entries.len()];
    let mut stack: Vec<u32> = session.roots.clone();
    while let Some(i) = stack.pop() {
        for c in session.children(i) {
            depth[c as usize] = depth[i as usize] + 1;
            stack.push(c);
        }
    }
    depth
}

/// Tool results whose call is not on their path, and calls no result answers: a walk of
/// the tree keeping the calls of the current path.
fn tool_pairs(session: &Session, facts: &[Facts], out: &mut Vec<Finding>) {
    let mut open: HashMap<&str, Vec<u32>> = HashMap::new();
    let mut answered: HashSet<(u32, &str)> = HashSet::new();
    // (entry, entering?) pairs: children are pushed after the exit marker.
    let mut stack: Vec<(u32, bool)> = session.roots.iter().rev().map(|&r| (r, true)).collect();
    while let Some((i, enter)) = stack.pop() {
        let calls = match &facts[i as usize] {
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
        if let Facts::ToolResult { call } = &facts[i as usize] {
            match open.get(call.as_str()).and_then(|v| v.last()) {
                Some(&a) => {
                    answered.insert((a, call.as_str()));
                }
                None => out.push(Finding {
                    level: Level::Error,
                    kind: "tool-result-without-call",
                    line: Some(session.entries[i as usize].line),
                    message: format!("tool result for call {call}, which no assistant message on its path made"),
                    hint: "providers reject a tool result without its call; the model would see a context it did not produce",
                }),
            }
        }
        stack.push((i, false));
        let children: Vec<u32> = session.children(i).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, true)));
    }
    for (i, f) in facts.iter().enumerate() {
        if let Facts::Assistant { calls } = f {
            for (id, name) in calls {
                if !answered.contains(&(i as u32, id.as_str())) {
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

/// Level, kind name and fix hint for what loading found.
fn describe(p: Problem, severity: Severity) -> (Level, &'static str, &'static str) {
    use Problem::*;
    let (kind, hint) = match p {
        Malformed => ("malformed", "pi skips this line; delete it, or restore it from a copy of the file"),
        Truncated => ("truncated", "the last write was cut off (a crash?); pi skips the line; delete the partial line"),
        BlankLines => ("blank-lines", "harmless: pi skips blank lines"),
        Crlf => ("crlf", "harmless for pi; tools that expect \\n may not like it (`dos2unix` converts)"),
        NoFinalNewline => (
            "no-final-newline",
            "pi 1.6 adds the newline when it opens the file; `pisces label --force` ends the line too",
        ),
        SecondHeader => ("second-header", "pi ignores it (pi 0.73 wrote these by mistake); delete it"),
        NotAnEntry => ("not-an-entry", "pi skips it; delete the line"),
        NotObject => ("not-an-object", "pi keeps it as an entry without an id; delete the line"),
        V1NotObject => {
            ("not-an-object", "pi cannot open this file (its migration crashes on the line); delete the line")
        }
        MessageWithoutMessage => {
            ("message-without-message", "pi crashes on a path through this entry; delete it or give it a message")
        }
        UnknownType => {
            ("unknown-type", "written by a newer pi or an extension: pi keeps it in the tree and sends nothing for it")
        }
        UnknownRole => ("unknown-role", "pi keeps the message in the projection and does not send it to the model"),
        DuplicateId => ("duplicate-id", "pi keeps the later entry; the earlier one cannot be reached by its id"),
        SelfParent => {
            ("self-parent", "pi's context builder loops on a path through it; set its parentId to its real parent")
        }
        DanglingParent => {
            ("dangling-parent", "the entry starts a separate root in pi's tree; its parent is missing from the file")
        }
        Cycle => ("parent-cycle", "pi's context builder loops on a path through it; fix one parentId in the cycle"),
        Unreadable => (
            "unreadable",
            "pi reads the line but pisces cannot; `pisces show --raw` prints it as it is, and commands that need its content stop there",
        ),
        InvalidUtf8 => (
            "invalid-utf8",
            "pi reads the line with U+FFFD in place of the bad bytes; re-encode the file as UTF-8 to keep the original text",
        ),
    };
    let level = match (p, severity) {
        (BlankLines | Crlf | NoFinalNewline | SecondHeader | UnknownType | UnknownRole | NotObject | InvalidUtf8, _) => {
            Level::Warning
        }
        (_, Severity::Note) => Level::Info,
        _ => Level::Error,
    };
    (level, kind, hint)
}
