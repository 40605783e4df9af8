//! Text search over sessions (`pisces grep`, `ls --grep`), against the text a person
//! reads: strings decoded from their JSON, in the common entry shape every format gives
//! (`Dialect::entry`), so a quote, a backslash, a newline or a non-ASCII letter in the
//! pattern finds what it looks like.
//!
//! Decoding every entry is what costs, so lines are looked at raw first, as ripgrep's
//! literal prefilter does: when the pattern cannot match a character that JSON writes
//! escaped (`"`, `\`, control characters), a match in the decoded text is the same bytes
//! in the raw line, and a line the pattern does not match raw cannot match decoded.
//! Non-ASCII and `/` can be written escaped too (`\u00e9`, `\/`), though no agent we read
//! does: a pattern that can match them also takes a line that holds such an escape.

use std::collections::HashSet;
use std::ops::Range;

use regex_syntax::hir::{Capture, Class, Hir, HirKind, Repetition};
use serde_json::Value;

use crate::session::format::Unreadable;
use crate::session::system::content_text;
use crate::session::text::{short_id, sorted_ids};
use crate::session::{EntryIdx, EntryType, LineNo, Session};

/// What a piece of an entry's text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Role {
    /// A user's prompt (and text an extension adds as the user).
    User,
    /// An assistant's text.
    Assistant,
    /// An assistant's thinking.
    Thinking,
    /// A tool call: its name, then its arguments (each string argument as it reads).
    ToolCall,
    /// What a tool returned.
    ToolResult,
    /// A branch summary or a compaction's summary.
    Summary,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Thinking => "thinking",
            Role::ToolCall => "tool-call",
            Role::ToolResult => "tool-result",
            Role::Summary => "summary",
        }
    }
}

/// How the pattern is read (grep's and ripgrep's flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct PatternOptions {
    /// `-F`: the pattern is a literal string.
    pub fixed: bool,
    /// `-i`.
    pub ignore_case: bool,
    /// `-w`: only whole words.
    pub word: bool,
}

/// A compiled search.
pub struct Query {
    decoded: regex::Regex,
    /// The prefilter over raw lines (`None`: every entry is decoded).
    raw: Option<Prefilter>,
    /// Only these kinds of text (empty: all).
    pub roles: Vec<Role>,
    /// Only tool calls and results of this tool.
    pub tool: Option<String>,
}

struct Prefilter {
    regex: regex::bytes::Regex,
    /// Also take lines holding `\u` (non-ASCII may be written escaped) or `\/`.
    escapes: Option<memchr::memmem::Finder<'static>>,
    slash: bool,
}

impl Query {
    pub fn new(pattern: &str, opts: PatternOptions) -> Result<Query, regex::Error> {
        let mut p = if opts.fixed { regex::escape(pattern) } else { pattern.to_string() };
        if opts.word {
            p = format!(r"\b(?:{p})\b");
        }
        if opts.ignore_case {
            p = format!("(?i){p}");
        }
        let decoded = regex::Regex::new(&p)?;
        let raw = match regex_syntax::parse(&p) {
            Ok(hir) => {
                let can = reach(&hir);
                if can.escaped {
                    None
                } else {
                    Some(Prefilter {
                        // (Without its anchors and word boundaries: in a raw line they fall
                        // elsewhere than in the text, `^` before the line's `{`, a `\b`
                        // not after the `n` of an escaped newline.)
                        regex: regex::bytes::Regex::new(&without_looks(&hir).to_string())?,
                        escapes: can.non_ascii.then(|| memchr::memmem::Finder::new(b"\\u").into_owned()),
                        slash: can.slash,
                    })
                }
            }
            Err(_) => None,
        };
        Ok(Query { decoded, raw, roles: Vec::new(), tool: None })
    }

    /// Whether the raw line may hold a match (always, without a prefilter). Also asked of a
    /// whole file: a line that may hold a match makes the file one too.
    fn candidate(&self, raw: &[u8]) -> bool {
        match &self.raw {
            None => true,
            Some(f) => {
                f.regex.is_match(raw)
                    || f.escapes.as_ref().is_some_and(|e| e.find(raw).is_some())
                    || f.slash && memchr::memmem::find(raw, b"\\/").is_some()
            }
        }
    }

    /// Whether the prefilter is in use (for tests and `--debug`-like notes).
    pub fn prefiltered(&self) -> bool {
        self.raw.is_some()
    }

    fn wants(&self, role: Role, tool: Option<&str>) -> bool {
        (self.roles.is_empty() || self.roles.contains(&role))
            && self.tool.as_deref().is_none_or(|t| tool.is_some_and(|x| x.eq_ignore_ascii_case(t)))
    }
}

/// What characters a pattern can match that JSON may write escaped.
#[derive(Default)]
struct Reach {
    /// `"`, `\` or a control character: always escaped.
    escaped: bool,
    non_ascii: bool,
    slash: bool,
}

/// `h` with its anchors and word boundaries taken out: it matches wherever `h` does, and more.
fn without_looks(h: &Hir) -> Hir {
    match h.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Repetition(r) => Hir::repetition(Repetition { sub: Box::new(without_looks(&r.sub)), ..r.clone() }),
        HirKind::Capture(c) => Hir::capture(Capture { sub: Box::new(without_looks(&c.sub)), ..c.clone() }),
        HirKind::Concat(hs) => Hir::concat(hs.iter().map(without_looks).collect()),
        HirKind::Alternation(hs) => Hir::alternation(hs.iter().map(without_looks).collect()),
        _ => h.clone(),
    }
}

fn reach(h: &Hir) -> Reach {
    let mut r = Reach::default();
    let mut see = |lo: u32, hi: u32| {
        let hits = |c: u32| lo <= c && c <= hi;
        r.escaped |= lo < 0x20 || hits('"' as u32) || hits('\\' as u32) || hits(0x7f);
        r.non_ascii |= hi >= 0x80;
        r.slash |= hits('/' as u32);
    };
    let mut stack = vec![h];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(l) => {
                for &b in l.0.iter() {
                    see(b.into(), b.into());
                }
            }
            HirKind::Class(Class::Unicode(c)) => {
                for range in c.ranges() {
                    see(range.start().into(), range.end().into());
                }
            }
            HirKind::Class(Class::Bytes(c)) => {
                for range in c.ranges() {
                    see(range.start().into(), range.end().into());
                }
            }
            HirKind::Repetition(rep) => stack.push(&rep.sub),
            HirKind::Capture(cap) => stack.push(&cap.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs.iter()),
        }
    }
    r
}

/// One matching line of an entry's text.
#[derive(Clone, Debug)]
pub struct Hit {
    pub entry: EntryIdx,
    /// A REV that `show` and `path` take: the shortest unique id prefix (at least 8
    /// characters), or `#N` (the line) for an entry without an id of its own.
    pub rev: String,
    pub id: Option<String>,
    /// The file the entry is in when not the session's own (a Codex fork's inherited
    /// history), and its line there.
    pub file: Option<String>,
    pub line: LineNo,
    pub role: Role,
    pub tool: Option<String>,
    /// The line of text the match is on (a window of it around the match when long).
    pub text: String,
    /// Where the matches are in `text` (byte ranges).
    pub matches: Vec<Range<usize>>,
}

/// The kinds of entry whose common shape `pieces` takes text from.
const TEXT_KINDS: [EntryType; 4] =
    [EntryType::Message, EntryType::CustomMessage, EntryType::BranchSummary, EntryType::Compaction];

/// Characters of context kept on each side of a match in a long line.
const WINDOW: usize = 100;

/// Every matching line of text in the session (or in `only`'s entries), in file order.
/// `prefilter: false` decodes every entry (the reference the prefiltered search is tested
/// against). `elsewhere`: the files read with the session (a Codex fork's parents) whose
/// lines are searched as sessions of their own, and are not searched again here.
pub fn search(
    s: &Session,
    q: &Query,
    only: Option<&HashSet<EntryIdx>>,
    prefilter: bool,
    elsewhere: &HashSet<String>,
) -> Result<Vec<Hit>, Unreadable> {
    let d = s.dialect();
    let mut sorted: Option<Vec<&str>> = None;
    let mut hits = Vec::new();
    for i in s.entries.indices() {
        if only.is_some_and(|o| !o.contains(&i)) || s.entries[i].unreadable() {
            continue;
        }
        if !elsewhere.is_empty() && d.place(s, i).is_some_and(|(file, _)| elsewhere.contains(&file)) {
            continue;
        }
        // Only these kinds of entry have text in the common shape (`pieces`); the others
        // (Codex's events, Claude Code's progress lines, pi's settings) are not decoded.
        // Codex repeats each tool output in an event line: those were most of its
        // candidate lines.
        if prefilter && (!TEXT_KINDS.contains(&s.entries[i].kind) || !q.candidate(s.raw_line(i))) {
            continue;
        }
        let Ok(v) = d.entry(s, i) else { continue };
        for (role, tool, text) in pieces(&v) {
            if !q.wants(role, tool.as_deref()) {
                continue;
            }
            for (line, matches) in matching_lines(&q.decoded, &text) {
                let sorted = sorted.get_or_insert_with(|| sorted_ids(s.ids().map(|(id, _)| id)));
                let (file, line_no) = s.place(i);
                let own_id = s.id_str(i).filter(|_| !s.synthetic_ids && !s.entries[i].shadowed());
                hits.push(Hit {
                    entry: i,
                    rev: own_id.map_or_else(|| format!("#{}", s.entries[i].line), |id| short_id(id, sorted, 8)),
                    id: s.id_str(i).map(str::to_string),
                    file,
                    line: line_no,
                    role,
                    tool: tool.clone(),
                    text: line,
                    matches,
                });
            }
        }
    }
    Ok(hits)
}

/// The lines of `text` the regex matches, each with its matches (a match that runs over
/// a newline is shown on the line it starts on, up to that line's end).
fn matching_lines(re: &regex::Regex, text: &str) -> Vec<(String, Vec<Range<usize>>)> {
    let mut out: Vec<(Range<usize>, Vec<Range<usize>>)> = Vec::new();
    // Matches come in order: the line of the last one is kept, and a line's start is
    // looked for only back to the end of the line before. Once a line has all the matches
    // `window` can show (WINDOW characters, at most 4 bytes each, after its first), the
    // search goes on from the line's end, so that a long line with millions of matches
    // (one line of a session) costs its length once, not once per match. The matches are
    // those of `find_iter` (its one rule kept: no empty match where the last one ended).
    let mut line: Option<Range<usize>> = None;
    let mut at = 0;
    let mut last_end = None;
    while at <= text.len() {
        let Some(mut m) = re.find_at(text, at) else { break };
        if m.is_empty() && Some(m.end()) == last_end {
            let Some(next) = next_char(text, m.start()) else { break };
            match re.find_at(text, next) {
                Some(x) => m = x,
                None => break,
            }
        }
        last_end = Some(m.end());
        at = if m.is_empty() { next_char(text, m.end()).unwrap_or(text.len() + 1) } else { m.end() };
        if m.start() == m.end() && !text.is_empty() && m.start() == text.len() {
            continue;
        }
        // A match at a `\n` is on the line that `\n` ends.
        let (start, end) = match &line {
            Some(l) if l.start <= m.start() && m.start() <= l.end => (l.start, l.end),
            _ => {
                let from = line.as_ref().map_or(0, |l| l.end.min(m.start()));
                let start = text[from..m.start()].rfind('\n').map_or(from, |k| from + k + 1);
                let end = text[m.start()..].find('\n').map_or(text.len(), |k| m.start() + k);
                line = Some(start..end);
                (start, end)
            }
        };
        let r = m.start() - start..m.end().min(end) - start;
        match out.last_mut() {
            Some((l, ms)) if l.start == start => {
                if r.start <= ms[0].end + 4 * WINDOW {
                    ms.push(r)
                } else if end + 1 > at {
                    // Nothing more of this line can be shown: on from its end.
                    at = end + 1;
                    last_end = None;
                }
            }
            _ => out.push((start..end, vec![r])),
        }
    }
    out.into_iter().map(|(line, ms)| window(&text[line], ms)).collect()
}

/// The byte offset of the character after the one at `i` (`None` at the end).
fn next_char(text: &str, i: usize) -> Option<usize> {
    text[i..].chars().next().map(|c| i + c.len_utf8())
}

/// A long line cut to `WINDOW` characters either side of its first match, with `…`.
fn window(line: &str, ms: Vec<Range<usize>>) -> (String, Vec<Range<usize>>) {
    let first = ms.first().cloned().unwrap_or(0..0);
    let back = line[..first.start].char_indices().rev().nth(WINDOW).map(|(k, _)| k);
    let fwd = line[first.end..].char_indices().nth(WINDOW).map(|(k, _)| first.end + k);
    let (from, to) = (back.unwrap_or(0), fwd.unwrap_or(line.len()));
    let mut text = String::new();
    let mut shift = -(from as isize);
    if from > 0 {
        text.push('…');
        shift += '…'.len_utf8() as isize;
    }
    text.push_str(&line[from..to]);
    if to < line.len() {
        text.push('…');
    }
    let ms = ms
        .into_iter()
        .filter(|m| m.start >= from && m.end <= to)
        .map(|m| (m.start as isize + shift) as usize..(m.end as isize + shift) as usize)
        .collect();
    (text, ms)
}

/// The texts of an entry in the common shape, with what each is.
pub fn pieces(v: &Value) -> Vec<(Role, Option<String>, String)> {
    let mut out = Vec::new();
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    match v.get("type").and_then(Value::as_str) {
        Some("message") => {
            let Some(m) = v.get("message") else { return out };
            match m.get("role").and_then(Value::as_str) {
                Some("user" | "custom" | "hookMessage") => out.push((Role::User, None, content_text(m.get("content")))),
                Some("assistant") => {
                    for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => out.extend(s(b.get("text")).map(|t| (Role::Assistant, None, t))),
                            Some("thinking") => out.extend(s(b.get("thinking")).map(|t| (Role::Thinking, None, t))),
                            Some("toolCall") => {
                                let name = s(b.get("name")).unwrap_or_default();
                                out.push((Role::ToolCall, Some(name.clone()), call_text(&name, b.get("arguments"))));
                            }
                            _ => {}
                        }
                    }
                    if let Some(Value::String(t)) = m.get("content") {
                        out.push((Role::Assistant, None, t.clone()));
                    }
                }
                Some("toolResult") => {
                    out.push((Role::ToolResult, s(m.get("toolName")), content_text(m.get("content"))))
                }
                Some("bashExecution") => {
                    let bash = Some("bash".to_string());
                    out.extend(s(m.get("command")).map(|c| (Role::ToolCall, bash.clone(), c)));
                    out.extend(s(m.get("output")).map(|o| (Role::ToolResult, bash.clone(), o)));
                }
                _ => {}
            }
        }
        Some("custom_message") => out.push((Role::User, None, content_text(v.get("content")))),
        Some("branch_summary" | "compaction") => out.extend(s(v.get("summary")).map(|t| (Role::Summary, None, t))),
        _ => {}
    }
    out.retain(|(_, _, t)| !t.is_empty());
    out
}

/// A call as text: its name, then each argument on a line of its own, its name and a tab
/// before it, a string as it reads (`command\tnpm test`), anything else as JSON. Only
/// characters JSON writes escaped join the parts, so that the prefilter's promise holds:
/// a match within one part is in the raw line as it is.
fn call_text(name: &str, args: Option<&Value>) -> String {
    let mut text = name.to_string();
    match args {
        Some(Value::Object(map)) => {
            for (k, v) in map {
                text.push('\n');
                text.push_str(k);
                text.push('\t');
                match v {
                    Value::String(s) => text.push_str(s),
                    other => text.push_str(&other.to_string()),
                }
            }
        }
        Some(Value::String(s)) => {
            text.push('\n');
            text.push_str(s);
        }
        Some(other) if !other.is_null() => {
            text.push('\n');
            text.push_str(&other.to_string());
        }
        _ => {}
    }
    text
}

/// The hits of one session.
pub struct SessionHits {
    pub session: String,
    pub agent: &'static str,
    pub format: &'static str,
    pub session_id: String,
    pub hits: Vec<Hit>,
}

/// Searches every session of `sessions` on `threads` threads and hands each one's hits
/// (or why it could not be read) to `emit` in the order given, as soon as it and the
/// ones before it are done. `on_path`: only the entries the model saw at that REV, in each
/// session.
///
/// Each line is searched once: a Codex fork's inherited lines are its parent's, and are
/// searched there when the parent is one of `sessions` (as `stats` counts them there),
/// so that a family of forks does not repeat its parent's hits once per fork. With
/// `on_path`, what the model saw is searched whole, inherited lines too.
pub fn search_all(
    sessions: &[super::Where],
    formats: &'static [&'static dyn crate::session::format::Format],
    q: &Query,
    on_path: Option<&str>,
    prefilter: bool,
    threads: usize,
    emit: &mut dyn FnMut(Result<SessionHits, (String, String)>),
) {
    let mut pending = std::collections::BTreeMap::new();
    let mut next = 0;
    let searched = match on_path {
        Some(_) => HashSet::new(),
        None => searched_paths(sessions),
    };
    super::each_parallel(
        sessions,
        threads,
        |_, w| search_one(w, formats, q, on_path, prefilter, &searched).map_err(|e| (w.name(), e)),
        |k, r| {
            pending.insert(k, r);
            while let Some(r) = pending.remove(&next) {
                emit(r);
                next += 1;
            }
        },
    );
}

/// The files of `sessions`, as `elsewhere` compares them.
pub fn searched_paths(sessions: &[super::Where]) -> HashSet<std::path::PathBuf> {
    sessions
        .iter()
        .filter_map(|w| match w {
            super::Where::File(p) => std::fs::canonicalize(p).ok(),
            super::Where::Stored { .. } => None,
        })
        .collect()
}

/// The files a session was read with (`parts`: its own first, then the others) that are
/// among `searched`, by the names they are reported by: their lines are searched as
/// sessions of their own (see [`search_all`]).
pub fn elsewhere<'p>(
    parts: impl IntoIterator<Item = (&'p str, Option<&'p std::path::Path>)>,
    searched: &HashSet<std::path::PathBuf>,
) -> HashSet<String> {
    if searched.is_empty() {
        return HashSet::new();
    }
    parts
        .into_iter()
        .skip(1)
        .filter(|(_, path)| path.and_then(|p| std::fs::canonicalize(p).ok()).is_some_and(|p| searched.contains(&p)))
        .map(|(name, _)| name.to_string())
        .collect()
}

fn searched_elsewhere(source: &crate::session::Source, searched: &HashSet<std::path::PathBuf>) -> HashSet<String> {
    elsewhere(source.parts().into_iter().map(|(name, path, _)| (name, path)), searched)
}

fn search_one(
    w: &super::Where,
    formats: &'static [&'static dyn crate::session::format::Format],
    q: &Query,
    on_path: Option<&str>,
    prefilter: bool,
    searched: &HashSet<std::path::PathBuf>,
) -> Result<SessionHits, String> {
    // A session whose bytes (with the files its format reads with it: a Codex fork's
    // parents) hold no line that may match has no hit, and is not read at all, as ripgrep
    // skips a file without its literal: most of a search of every session is spent reading
    // sessions that do not hold it. Only a file whose head shows it is a session: any other
    // is read, so that what is wrong with it is reported.
    let open = || Ok(vec![w.open()?]);
    let mut assembled = None;
    if prefilter && q.raw.is_some() && on_path.is_none() {
        let source = w.open().map_err(|e| format!("{:#}", anyhow::Error::from(e)))?;
        let format = crate::session::format::detect(&source, formats);
        match format.filter(|f| f.is_session()) {
            Some(format) => {
                let whole = crate::session::open::with_companions(source, format);
                // Only the bytes searched here: the session's own, and those of the files
                // read with it that are not searched as sessions of their own.
                let elsewhere = searched_elsewhere(&whole, searched);
                let here = whole.parts().into_iter().filter(|(name, _, _)| !elsewhere.contains(*name));
                let bytes = whole.bytes();
                if !here.into_iter().any(|(_, _, range)| q.candidate(&bytes[range])) {
                    let info = format.info();
                    return Ok(SessionHits {
                        session: w.name(),
                        agent: info.agent,
                        format: info.name,
                        session_id: String::new(),
                        hits: Vec::new(),
                    });
                }
                // Read as it is: mapped and joined with its companions once.
                assembled = Some(vec![whole]);
            }
            None => assembled = Some(crate::session::open::assemble(vec![source], formats)),
        }
    }
    let assembled = match assembled {
        Some(a) => a,
        None => crate::session::open::assemble(open().map_err(|e| format!("{e:#}"))?, formats),
    };
    let elsewhere = assembled.first().map(|a| searched_elsewhere(a, searched)).unwrap_or_default();
    let step = |sessions: &[Session], _: &mut crate::session::open::Reading| {
        let s = &sessions[0];
        let only = match on_path {
            Some(rev) => {
                let leaf = crate::session::rev::resolve(s, rev)?;
                let p = s.dialect().project(s, Some(leaf))?;
                Some(p.entries.iter().map(|e| e.entry).collect::<HashSet<_>>())
            }
            None => None,
        };
        Ok(SessionHits {
            session: w.name(),
            agent: s.format().agent,
            format: s.format().name,
            session_id: s.header.id.clone(),
            hits: search(s, q, only.as_ref(), prefilter, &elsewhere)?,
        })
    };
    let free = crate::session::open::Afterwards::Free;
    crate::session::open::read_assembled(assembled, &open, formats, &mut |_| Ok(()), step, free, None)
        .map_err(|e| format!("{e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `matching_lines` computed before it kept the current line: each match's line
    /// looked for from scratch.
    fn naive(re: &regex::Regex, text: &str) -> Vec<(String, Vec<Range<usize>>)> {
        let mut out: Vec<(Range<usize>, Vec<Range<usize>>)> = Vec::new();
        for m in re.find_iter(text) {
            if m.start() == m.end() && !text.is_empty() && m.start() == text.len() {
                continue;
            }
            let start = text[..m.start()].rfind('\n').map_or(0, |k| k + 1);
            let end = text[m.start()..].find('\n').map_or(text.len(), |k| m.start() + k);
            let r = m.start() - start..m.end().min(end) - start;
            match out.last_mut() {
                Some((line, ms)) if line.start == start => ms.push(r),
                _ => out.push((start..end, vec![r])),
            }
        }
        out.into_iter().map(|(line, ms)| window(&text[line], ms)).collect()
    }

    #[test]
    fn lines_of_matches_as_before_in_linear_time() {
        let texts = [
            "",
            "\n",
            "ab\nab\n\nxab",
            "abab abab\nab",
            "\n\nab\n",
            "a\nb\n",
            "é ab\nαβ ab ab\n",
            "aab",
            &"ab".repeat(5000),
        ];
        let long = format!("{}\n{}\nab", "ab ".repeat(3000), "é".repeat(2000));
        for pattern in
            ["ab", "b\\n", "\\n", "(a*)*b", "^", "$", "(?m)^", "(?m)$", "a\\nb", "x*", "a*", "\\b", "", "(?m)$|b"]
        {
            let re = regex::Regex::new(pattern).unwrap();
            for t in texts.iter().copied().chain([long.as_str()]) {
                assert_eq!(matching_lines(&re, t), naive(&re, t), "{pattern:?} on {t:?}");
            }
        }
    }
}
