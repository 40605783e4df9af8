//! Files modified on both sides, and the final content each side left, rebuilt from the
//! session's write / edit / read calls.
//!
//! A side's calls on the file are replayed along its path: a `write` sets the content, a
//! `read` of the whole file (no offset, no truncation notice) shows it, an `edit` replaces
//! each `oldText` (matched exactly and once against the content before the call, as pi
//! does) when that content is known. Calls whose result is an error change nothing; a
//! partial read is checked against the rebuilt content. pi's `/tree` moves the
//! conversation, not the files: an attempt started after another finds the files as the
//! other left them. So when a side edits a file its path never wrote or read whole, the
//! content before that edit is taken from every call on the file before it in the file
//! (all branches, the order things happened), and the side says so. When pi matched an
//! `oldText` loosely, or the content was never seen, the content is unknown and the side
//! says why. Changes made by bash commands cannot be seen.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use similar::TextDiff;

use super::facts::{self, FactKind};
use super::{FileCompare, FileSide, Input, SideSummary};
use crate::session::format::Unreadable;
use crate::session::{EntryIdx, Role, Session};

/// Files modified on both sides (matched after resolving each side's paths against its
/// session's `cwd`); with `detail`, each side's final content and a diff of the two.
pub(super) fn compare(
    a: &Input,
    path_a: &[EntryIdx],
    sum_a: &SideSummary,
    b: &Input,
    path_b: &[EntryIdx],
    sum_b: &SideSummary,
    detail: bool,
) -> Result<Vec<FileCompare>, Unreadable> {
    let (cwd_a, cwd_b) = (cwd(a.session), cwd(b.session));
    let in_b: FxHashMap<String, &str> = sum_b.files_modified.iter().map(|p| (resolve(&cwd_b, p), p.as_str())).collect();
    let mut common: Vec<(String, String)> = Vec::new();
    for p in &sum_a.files_modified {
        let r = resolve(&cwd_a, p);
        if in_b.contains_key(&r) && !common.iter().any(|(_, c)| *c == r) {
            common.push((p.clone(), r));
        }
    }
    if common.is_empty() {
        return Ok(Vec::new());
    }
    let targets: FxHashSet<&str> = common.iter().map(|(_, r)| r.as_str()).collect();
    let same_session = std::ptr::eq(a.session, b.session);
    let upto_a = a.leaf;
    let upto_b = b.leaf;
    let ops_a = if detail {
        let upto = if same_session { upto_a.max(upto_b) } else { upto_a };
        collect_ops(a.session, upto, &targets, &cwd_a)?
    } else {
        Vec::new()
    };
    let ops_b = if !detail || same_session { Vec::new() } else { collect_ops(b.session, upto_b, &targets, &cwd_b)? };
    let ops_b = if same_session { &ops_a } else { &ops_b };
    let on_path = |p: &[EntryIdx]| p.iter().copied().collect::<FxHashSet<EntryIdx>>();
    let (set_a, set_b) = if detail { (on_path(path_a), on_path(path_b)) } else { Default::default() };

    let mut out = Vec::new();
    for (path, resolved) in common {
        if !detail {
            out.push(FileCompare { path, resolved, a: None, b: None, same: None, diff: None });
            continue;
        }
        let fa = replay(a.session, &ops_a, &resolved, upto_a, &set_a)?;
        let fb = replay(b.session, ops_b, &resolved, upto_b, &set_b)?;
        let (same, diff) = match (&fa.content, &fb.content) {
            (Some(x), Some(y)) if x == y => (Some(true), None),
            (Some(x), Some(y)) => (Some(false), Some(unified_diff(x, y, &format!("A/{path}"), &format!("B/{path}")))),
            _ => (None, None),
        };
        out.push(FileCompare { path, resolved, a: Some(fa), b: Some(fb), same, diff });
    }
    Ok(out)
}

fn cwd(s: &Session) -> String {
    s.header.cwd_str().unwrap_or_default().to_string()
}

/// A tool-call path as pi's tools resolve it: a leading `@` dropped, relative paths taken
/// from the cwd, `.` and `..` folded (`~` is left alone: the home is not known).
pub(super) fn resolve(cwd: &str, path: &str) -> String {
    let p = path.strip_prefix('@').unwrap_or(path);
    let joined = if p.starts_with('/') || cwd.is_empty() { p.to_string() } else { format!("{cwd}/{p}") };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    if joined.starts_with('/') {
        format!("/{body}")
    } else {
        body
    }
}

/// A read / write / edit call on a target file, with its result.
struct Op {
    /// The assistant entry with the call.
    entry: EntryIdx,
    call_id: String,
    name: String,
    resolved: String,
    offset: Option<f64>,
    limit: Option<f64>,
    /// The result entry and whether it is an error (`None`: no result found).
    result: Option<(EntryIdx, bool)>,
}

/// read/write/edit calls on `targets` in entries `0..=upto` (file order), with their
/// results. Lines are only parsed when they hold such a call (a substring test first).
fn collect_ops(s: &Session, upto: EntryIdx, targets: &FxHashSet<&str>, cwd: &str) -> Result<Vec<Op>, Unreadable> {
    let finders: Vec<memchr::memmem::Finder> =
        ["\"read\"", "\"write\"", "\"edit\""].iter().map(|n| memchr::memmem::Finder::new(n.as_bytes())).collect();
    // A call on a target names its file: its last path segment is in the line (as JSON
    // writes it: names with quotes, backslashes or control characters are not looked for).
    let mut names: Vec<&str> = targets.iter().map(|t| t.rsplit('/').next().unwrap_or(t)).collect();
    names.sort_unstable();
    names.dedup();
    let plain = |n: &str| !n.is_empty() && !n.chars().any(|c| c == '"' || c == '\\' || c.is_control());
    let name_finders: Option<Vec<memchr::memmem::Finder>> = (names.len() <= 64 && names.iter().all(|n| plain(n)))
        .then(|| names.iter().map(|n| memchr::memmem::Finder::new(n.as_bytes())).collect());
    let n = (upto.get() + 1).min(s.entries.len());
    let mut ops: Vec<Op> = Vec::new();
    let mut pending: FxHashMap<String, usize> = FxHashMap::default();
    for i in s.entries.indices().take(n) {
        let e = &s.entries[i];
        if e.kind != crate::session::EntryType::Message {
            continue;
        }
        match e.role {
            Role::Assistant => {
                // Lines that name none of the paths cannot hold their calls (only when
                // the line as written is the entry; a converted one may spell them
                // otherwise).
                let line = s.raw_line(i);
                if s.dialect().lines_are_entries() {
                    if !finders.iter().any(|f| f.find(line).is_some()) {
                        continue;
                    }
                    if name_finders.as_ref().is_some_and(|nf| !nf.iter().any(|f| f.find(line).is_some())) {
                        continue;
                    }
                }
                let FactKind::Assistant(a) = facts::fact(s, i)? else { continue };
                for c in a.calls {
                    if !matches!(c.name.as_str(), "read" | "write" | "edit") {
                        continue;
                    }
                    let Some(p) = &c.path else { continue };
                    let resolved = resolve(cwd, p);
                    if !targets.contains(resolved.as_str()) {
                        continue;
                    }
                    pending.insert(c.id.clone(), ops.len());
                    ops.push(Op {
                        entry: i,
                        call_id: c.id,
                        name: c.name,
                        resolved,
                        offset: c.offset,
                        limit: c.limit,
                        result: None,
                    });
                }
            }
            Role::ToolResult if !pending.is_empty() => {
                let Some(id) = facts::result_call_id(s, i) else { continue };
                if let Some(k) = pending.remove(&id) {
                    let FactKind::ToolResult(r) = facts::fact(s, i)? else { continue };
                    ops[k].result = Some((i, r.is_error));
                }
            }
            _ => {}
        }
    }
    Ok(ops)
}

enum State {
    Unknown(String),
    Known(String),
}

/// The content of `target` at entry `upto` as the side's own path wrote it: the calls on
/// the path root..=leaf, in order. When an edit finds no known content (the path never
/// wrote or read the whole file), the content before it is taken from file order: every
/// call on the file before that edit, on any branch (what was on disk then, as /tree
/// does not restore files).
fn replay(
    s: &Session,
    ops: &[Op],
    target: &str,
    upto: EntryIdx,
    on_path: &FxHashSet<EntryIdx>,
) -> Result<FileSide, Unreadable> {
    let mut state = State::Unknown("it is never written or read whole before its first edit".into());
    let mut note = None;
    let mut fell_back = false;
    for (k, op) in ops.iter().enumerate() {
        if op.resolved != target || op.entry > upto || !on_path.contains(&op.entry) {
            continue;
        }
        if op.name == "edit" && matches!(state, State::Unknown(_)) && !fell_back && op.result.is_some_and(|r| !r.1) {
            fell_back = true;
            let mut before = State::Unknown(String::new());
            for o in ops[..k].iter().filter(|o| o.resolved == target) {
                before = step(s, before, o)?;
            }
            if let State::Known(c) = before {
                let line = s.entries[op.entry].line;
                note = Some(format!(
                    "the content before the edit on line {line} is taken from the calls before it in the file, other branches included (pi's /tree does not restore files)"
                ));
                state = State::Known(c);
            }
        }
        state = step(s, state, op)?;
    }
    Ok(match state {
        State::Known(c) => FileSide { reconstructed: true, lines: Some(c.lines().count()), note, content: Some(c) },
        State::Unknown(why) => FileSide { reconstructed: false, lines: None, note: Some(why), content: None },
    })
}

/// The content after one call.
fn step(s: &Session, state: State, op: &Op) -> Result<State, Unreadable> {
    let line = s.entries[op.entry].line;
    let Some((result, is_error)) = op.result else { return Ok(state) };
    if is_error {
        return Ok(state);
    }
    Ok(match op.name.as_str() {
        "write" => match facts::call_arguments(s, op.entry, &op.call_id)? {
            Some(args) => match args.get("content").and_then(Value::as_str) {
                Some(c) => State::Known(c.to_string()),
                None => State::Unknown(format!("the write on line {line} has no string content")),
            },
            None => state,
        },
        "read" => {
            let (text, image) = facts::result_text(s, result)?;
            if image {
                state
            } else if let Some(body) = whole_read(&text, op.offset, op.limit) {
                State::Known(body.to_string())
            } else {
                match state {
                    State::Known(c) if !partial_read_agrees(&c, &text, op.offset) => {
                        let rline = s.entries[result].line;
                        State::Unknown(format!(
                            "the read on line {rline} shows other text than the calls before it wrote (the file changed outside them)"
                        ))
                    }
                    other => other,
                }
            }
        }
        _ => match state {
            State::Known(c) => {
                let args = facts::call_arguments(s, op.entry, &op.call_id)?.unwrap_or(Value::Null);
                match apply_edit(&c, &args) {
                    Ok(next) => State::Known(next),
                    Err(why) => State::Unknown(format!("the edit on line {line} cannot be replayed: {why}")),
                }
            }
            unknown => unknown,
        },
    })
}

/// The file's whole content when a read shows all of it: no offset past the first line,
/// and no notice of more lines or truncation at the end.
fn whole_read(text: &str, offset: Option<f64>, limit: Option<f64>) -> Option<&str> {
    if offset.is_some_and(|o| o > 1.0) {
        return None;
    }
    if let Some(at) = text.rfind("\n\n[") {
        let notice = &text[at + 3..];
        let is_notice = notice.ends_with(']')
            && !notice.contains('\n')
            && (notice.starts_with("Showing lines ")
                || notice.contains(" more lines in file.")
                || notice.starts_with("Line "));
        if is_notice {
            return None;
        }
    }
    if text.starts_with("[Line ") && text.ends_with(']') && text.contains("exceeds") {
        return None;
    }
    let _ = limit; // a limit that cut the file leaves a notice
    Some(text)
}

/// A partial read's lines match the rebuilt content's lines from `offset`.
fn partial_read_agrees(content: &str, text: &str, offset: Option<f64>) -> bool {
    let body = match text.rfind("\n\n[") {
        Some(at) if text.ends_with(']') => &text[..at],
        _ => text,
    };
    let start = offset.map_or(0, |o| (o.max(1.0) as usize) - 1);
    let known: Vec<&str> = content.split('\n').skip(start).collect();
    let shown: Vec<&str> = body.split('\n').collect();
    shown.len() <= known.len() && shown.iter().zip(&known).all(|(a, b)| a == b)
}

/// pi's edit: every `oldText` is found once in the content before the call, the
/// replacements do not overlap and are made together. Exact matches only (pi's fuzzy
/// matching is not replayed).
fn apply_edit(content: &str, args: &Value) -> Result<String, String> {
    let edits: Vec<(&str, &str)> = match args.get("edits").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .map(|e| {
                let get = |k: &str| e.get(k).and_then(Value::as_str);
                get("oldText").zip(get("newText")).ok_or_else(|| "an edit without oldText/newText".to_string())
            })
            .collect::<Result<_, _>>()?,
        None => {
            let get = |k: &str| args.get(k).and_then(Value::as_str);
            vec![get("oldText").zip(get("newText")).ok_or_else(|| "no edits".to_string())?]
        }
    };
    let mut spans: Vec<(usize, usize, &str)> = Vec::with_capacity(edits.len());
    for (k, (old, new)) in edits.iter().enumerate() {
        if old.is_empty() {
            return Err(format!("edits[{k}].oldText is empty"));
        }
        let mut found = content.match_indices(old);
        let Some((at, _)) = found.next() else {
            return Err(format!("edits[{k}].oldText is not in the content exactly (pi may have matched it loosely)"));
        };
        if found.next().is_some() {
            return Err(format!("edits[{k}].oldText occurs more than once"));
        }
        spans.push((at, at + old.len(), new));
    }
    spans.sort_by_key(|s| s.0);
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err("the edits overlap".into());
    }
    let mut out = String::with_capacity(content.len());
    let mut pos = 0;
    for (start, end, new) in spans {
        out.push_str(&content[pos..start]);
        out.push_str(new);
        pos = end;
    }
    out.push_str(&content[pos..]);
    Ok(out)
}

/// A unified diff (3 lines of context) of `a` against `b`.
pub(super) fn unified_diff(a: &str, b: &str, label_a: &str, label_b: &str) -> String {
    TextDiff::from_lines(a, b).unified_diff().context_radius(3).header(label_a, label_b).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_resolve_against_the_cwd() {
        assert_eq!(resolve("/home/dev/p", "src/a.js"), "/home/dev/p/src/a.js");
        assert_eq!(resolve("/home/dev/p", "/home/dev/p/src/a.js"), "/home/dev/p/src/a.js");
        assert_eq!(resolve("/home/dev/p", "@./src/../src/a.js"), "/home/dev/p/src/a.js");
    }

    #[test]
    fn edits_apply_like_pi() {
        let c = "a\nb\nc\n";
        let args = json!({"path": "x", "edits": [{"oldText": "c", "newText": "C"}, {"oldText": "a", "newText": "A"}]});
        assert_eq!(apply_edit(c, &args).unwrap(), "A\nb\nC\n");
        let legacy = json!({"path": "x", "oldText": "b", "newText": "B"});
        assert_eq!(apply_edit(c, &legacy).unwrap(), "a\nB\nc\n");
        assert!(apply_edit(c, &json!({"edits": [{"oldText": "z", "newText": ""}]})).is_err());
        assert!(apply_edit("aa", &json!({"edits": [{"oldText": "a", "newText": ""}]})).is_err());
    }

    #[test]
    fn reads_whole_or_partial() {
        assert_eq!(whole_read("x\ny\n", None, None), Some("x\ny\n"));
        assert_eq!(whole_read("x\n\n[1 more lines in file. Use offset=30 to continue.]", Some(25.0), Some(5.0)), None);
        assert_eq!(whole_read("x\n\n[Showing lines 1-2 of 9. Use offset=3 to continue.]", None, None), None);
        assert!(partial_read_agrees(
            "1\n2\n3\n4\n",
            "2\n3\n\n[1 more lines in file. Use offset=4 to continue.]",
            Some(2.0)
        ));
        assert!(!partial_read_agrees("1\n2\n3\n4\n", "2\nX", Some(2.0)));
    }
}
