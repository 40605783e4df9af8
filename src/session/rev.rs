//! REV: naming one entry, git-style.
//!
//! ```text
//! REV   := BASE SUFFIX*
//! BASE  := @ | root | #LINE | ID | ID-PREFIX | LABEL
//! SUFFIX:= ^ | ~N | ~
//! ```
//!
//! `@` is pi's default leaf (the last entry of the file), `root` the root of `@`'s path,
//! `#N` the entry on physical line N. A whole REV is first tried as an id or label as
//! it stands, so labels containing `^` or `~` still work; then the longest base that
//! names something is taken and the suffixes are applied to it.

use std::fmt;
use std::ops::Range;

use super::entry::{EntryIdx, LineNo};
use super::index::Session;

/// A REV that names nothing, with the part that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevError {
    pub rev: String,
    /// Byte range of `rev` that failed.
    pub span: Range<usize>,
    pub message: String,
    /// Extra lines (candidates of an ambiguous prefix, hints).
    pub notes: Vec<String>,
}

impl fmt::Display for RevError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let pad = self.rev[..self.span.start].chars().count();
        let width = self.rev[self.span.clone()].chars().count().max(1);
        writeln!(f, "REV `{}`: {}", self.rev, self.message)?;
        writeln!(f, "  {}", self.rev)?;
        write!(f, "  {}{}", " ".repeat(pad), "^".repeat(width))?;
        for n in &self.notes {
            write!(f, "\n  {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RevError {}

/// Resolves `rev` to an entry (index into `Session::entries`).
pub fn resolve(s: &Session, rev: &str) -> Result<EntryIdx, RevError> {
    let err = |span: Range<usize>, message: String, notes: Vec<String>| RevError {
        rev: rev.to_string(),
        span,
        message,
        notes,
    };
    if rev.is_empty() {
        return Err(err(0..0, "empty REV".into(), vec![hint()]));
    }
    // Candidate split points: the base is rev[..p], the rest a suffix chain.
    let mut splits: Vec<usize> = vec![rev.len()];
    for p in (1..rev.len()).rev() {
        if rev.is_char_boundary(p) && is_suffix_chain(&rev[p..]) {
            splits.push(p);
        }
    }
    let mut first_error = None;
    for &p in &splits {
        match resolve_base(s, &rev[..p]) {
            Ok(i) => return apply_suffixes(s, rev, i, p),
            Err(Base::Ambiguous(message, notes)) => return Err(err(0..p, message, notes)),
            Err(Base::NotFound(message, notes)) => first_error = Some((p, message, notes)),
        }
    }
    // Report against the shortest base: every suffix stripped.
    let (_, message, notes) = first_error.expect("at least one split");
    let p = *splits.last().expect("at least one split");
    let (message, notes) = if p == rev.len() {
        (message, notes)
    } else {
        match resolve_base(s, &rev[..p]) {
            Err(Base::NotFound(m, n)) | Err(Base::Ambiguous(m, n)) => (m, n),
            Ok(_) => unreachable!("tried above"),
        }
    };
    Err(err(0..p, message, notes))
}

fn hint() -> String {
    "a REV is an id, a unique id prefix, a label, @ (the last entry), #LINE or root, with optional ^ (parent) and ~N (N-th ancestor) suffixes".into()
}

fn is_suffix_chain(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'^' => i += 1,
            b'~' => {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => return false,
        }
    }
    !b.is_empty()
}

enum Base {
    NotFound(String, Vec<String>),
    Ambiguous(String, Vec<String>),
}

/// `@` and `root` of a session without entries (a file that is empty, or was emptied while
/// it was read): the error names the file.
fn no_entries(s: &Session) -> Base {
    Base::NotFound(format!("the session has no entries ({} holds none)", s.file), vec![])
}

fn resolve_base(s: &Session, base: &str) -> Result<EntryIdx, Base> {
    match base {
        "@" => return s.default_leaf().ok_or_else(|| no_entries(s)),
        "root" => {
            let leaf = s.default_leaf().ok_or_else(|| no_entries(s))?;
            return Ok(s.path_to(leaf)[0]);
        }
        _ => {}
    }
    if let Some(found) = s.dialect().rev_base(s, base) {
        return found.map_err(|why| Base::NotFound(why, vec![]));
    }
    if let Some(num) = base.strip_prefix('#') {
        let line: u32 =
            num.parse().map_err(|_| Base::NotFound(format!("`{num}` is not a line number"), vec![hint()]))?;
        if line == 0 {
            return Err(Base::NotFound("lines are numbered from 1".into(), vec![hint()]));
        }
        let line = LineNo(line);
        if let Some(i) = s.entries.on_line(line) {
            return Ok(i);
        }
        let what = if Some(line) == s.header.line {
            "is the session header, not an entry".to_string()
        } else if line.get() > total_lines(s) {
            format!("is past the end of the file ({} lines)", total_lines(s))
        } else {
            "holds no entry (blank, malformed, or a second header)".to_string()
        };
        return Err(Base::NotFound(format!("line {line} {what}"), vec![]));
    }
    if let Some(i) = s.get(base) {
        return Ok(i);
    }
    let labelled: Vec<EntryIdx> = s.labels().filter(|(_, l)| l.text == base).filter_map(|(id, _)| s.get(id)).collect();
    match labelled.len() {
        1 => return Ok(labelled[0]),
        0 => {}
        _ => {
            let mut notes: Vec<String> = labelled.iter().map(|&i| candidate(s, i)).collect();
            notes.sort();
            return Err(Base::Ambiguous(
                format!("label `{base}` is on {} entries; name one by id", labelled.len()),
                notes,
            ));
        }
    }
    let mut matches: Vec<(&str, EntryIdx)> = s.ids().filter(|(id, _)| id.starts_with(base)).collect();
    match matches.len() {
        1 => Ok(matches[0].1),
        0 => Err(Base::NotFound("not an id, a unique id prefix or a label in this session".into(), vec![hint()])),
        n => {
            matches.sort_by_key(|&(_, i)| i);
            let mut notes: Vec<String> = matches.iter().take(10).map(|&(_, i)| candidate(s, i)).collect();
            if n > 10 {
                notes.push(format!("… and {} more", n - 10));
            }
            Err(Base::Ambiguous(format!("id prefix `{base}` is ambiguous: {n} entries match"), notes))
        }
    }
}

fn total_lines(s: &Session) -> u32 {
    let data = s.data();
    let n = memchr::memchr_iter(b'\n', data).count() as u32;
    n + u32::from(!data.is_empty() && data.last() != Some(&b'\n'))
}

/// `id  line N  preview` for candidate lists.
fn candidate(s: &Session, i: EntryIdx) -> String {
    format!("{}  line {}  {}", s.display_id(i), s.entries[i].line, s.preview(i, 60))
}

fn apply_suffixes(s: &Session, rev: &str, mut cur: EntryIdx, start: usize) -> Result<EntryIdx, RevError> {
    let b = rev.as_bytes();
    let mut i = start;
    // Ancestors climbed so far, to say how far the base is from its root.
    let mut climbed = 0usize;
    while i < b.len() {
        let op_start = i;
        i += 1;
        let steps: usize = if b[op_start] == b'^' {
            1
        } else {
            let num_start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if num_start == i {
                1
            } else {
                rev[num_start..i].parse().map_err(|_| RevError {
                    rev: rev.to_string(),
                    span: op_start..i,
                    message: "ancestor count is too large".into(),
                    notes: vec![],
                })?
            }
        };
        for _ in 0..steps {
            match s.parent(cur) {
                Some(p) => {
                    cur = p;
                    climbed += 1;
                }
                None => {
                    let base = &rev[..start];
                    return Err(RevError {
                        rev: rev.to_string(),
                        span: op_start..i,
                        message: format!(
                            "goes past the root: `{base}` has {climbed} ancestor{} (the root is {})",
                            if climbed == 1 { "" } else { "s" },
                            s.display_id(cur)
                        ),
                        notes: vec![],
                    });
                }
            }
        }
    }
    Ok(cur)
}
