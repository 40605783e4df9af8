//! The one sanitizing policy: session text is data, never terminal commands.
//!
//! Everything pisces writes for people (text and Markdown output, tables, the tree,
//! messages and errors on stderr) goes through [`Safe`], which drops escape sequences
//! (CSI, OSC, DCS and the other string sequences, with their contents), the other C0 and
//! C1 control characters (keeping `\n` and `\t`), and the bidi controls that reorder what
//! the user reads. A hostile session therefore cannot move the cursor, clear the screen,
//! retitle the window, hide a link or reverse a line. What is written for programs (JSON,
//! `--raw`, `--entries`, `fork`'s files) keeps its bytes exactly.
//!
//! [`Safe`] is a writer, not a function on strings, so that nothing written to the
//! terminal can bypass it, and so that a sequence split across two writes is still caught:
//! it keeps its state (inside an escape sequence, in the middle of a UTF-8 character)
//! from one write to the next.

use std::borrow::Cow;
use std::io::{self, Write};

/// Where the filter is between two bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Text,
    /// After ESC.
    Escape,
    /// In a CSI sequence (`ESC [`), until its final byte.
    Csi,
    /// In a string sequence (OSC, DCS, APC, PM, SOS), until BEL or `ESC \`.
    Str,
    /// In a string sequence, after an ESC (a `\` ends it).
    StrEscape,
}

/// The filter itself, usable on strings and behind a writer.
#[derive(Clone, Debug)]
struct Filter {
    state: State,
    /// The bytes of a UTF-8 character begun but not ended.
    pending: Vec<u8>,
}

impl Filter {
    fn new() -> Filter {
        Filter { state: State::Text, pending: Vec::new() }
    }

    /// Filters `input` into `out`; an incomplete character at the end is kept for later.
    fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut bytes = input;
        let owned;
        if !self.pending.is_empty() {
            self.pending.extend_from_slice(input);
            owned = std::mem::take(&mut self.pending);
            bytes = &owned;
        }
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let len = utf8_len(b);
            if i + len > bytes.len() {
                // A character cut by the write: wait for its other bytes.
                self.pending.extend_from_slice(&bytes[i..]);
                return;
            }
            let ch = &bytes[i..i + len];
            i += len;
            let c = std::str::from_utf8(ch).ok().and_then(|s| s.chars().next());
            match self.state {
                State::Text => match c {
                    Some('\u{1b}') => self.state = State::Escape,
                    // C1 CSI and OSC/DCS/… introducers, as a terminal may read them.
                    Some('\u{9b}') => self.state = State::Csi,
                    Some('\u{90}' | '\u{9d}' | '\u{9e}' | '\u{9f}' | '\u{98}') => self.state = State::Str,
                    Some(c) if is_unsafe(c) => {}
                    // Bytes that are not UTF-8 pass (they are not controls); a terminal
                    // shows them as replacement characters.
                    _ => out.extend_from_slice(ch),
                },
                State::Escape => {
                    self.state = match c {
                        Some('[') => State::Csi,
                        Some(']' | 'P' | '_' | '^' | 'X') => State::Str,
                        // A two-byte sequence (ESC 7, ESC c, …): both dropped.
                        _ => State::Text,
                    }
                }
                State::Csi => {
                    if c.is_some_and(|c| ('\u{40}'..='\u{7e}').contains(&c)) {
                        self.state = State::Text;
                    }
                }
                State::Str => match c {
                    Some('\u{7}' | '\u{9c}') => self.state = State::Text,
                    Some('\u{1b}') => self.state = State::StrEscape,
                    _ => {}
                },
                State::StrEscape => {
                    self.state = if c == Some('\\') { State::Text } else { State::Str };
                }
            }
        }
    }
}

/// Control characters a terminal acts on, and bidi controls that reorder text.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// The length of the UTF-8 character a byte starts (1 for a byte that starts none).
fn utf8_len(b: u8) -> usize {
    match b {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

/// `text` made safe for a terminal (see the module docs).
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) || c == '\u{1b}') {
        return Cow::Borrowed(text);
    }
    let mut f = Filter::new();
    let mut out = Vec::with_capacity(text.len());
    f.push(text.as_bytes(), &mut out);
    out.extend_from_slice(&f.pending);
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Characters that do nothing visible: a name holding one looks like another name.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{180e}' | '\u{00ad}')
}

/// A name (a file name, a title, a cwd, a label, a tool or model id) for a terminal:
/// where [`sanitize`] drops what a terminal would act on, this shows it, and also what is
/// invisible (zero-width characters, bidi controls, tabs and newlines), as `\u{202e}`, so
/// that two names that look alike can be told apart and a name cannot hide what it is.
pub fn name(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() || is_unsafe(c) || is_invisible(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() || is_unsafe(c) || is_invisible(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that makes what goes through it safe for a terminal.
pub struct Safe<W: Write> {
    inner: W,
    filter: Filter,
    buf: Vec<u8>,
}

impl<W: Write> Safe<W> {
    pub fn new(inner: W) -> Safe<W> {
        Safe { inner, filter: Filter::new(), buf: Vec::new() }
    }
}

impl<W: Write> Write for Safe<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.clear();
        self.filter.push(data, &mut self.buf);
        self.inner.write_all(&self.buf)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_show_what_is_invisible() {
        assert_eq!(name("plain name"), "plain name");
        assert_eq!(name("a\u{202e}b\u{200b}c"), "a\\u{202e}b\\u{200b}c");
        assert_eq!(name("x\x1b]0;t\x07\ny"), "x\\u{1b}]0;t\\u{7}\\u{a}y");
        // Nothing it leaves is acted on by a terminal.
        assert!(!name("\x1b[2J\u{9b}2J").chars().any(|c| c.is_control()));
    }

    #[test]
    fn sanitize_strips_escapes_and_bidi() {
        assert_eq!(sanitize("ok\x1b[2J\x1b]0;title\x07 text\u{202e}x\r\n"), "ok textx\n");
        assert_eq!(sanitize("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(sanitize("a\u{0}b\u{7f}c"), "abc");
        // A hidden link (OSC 8) keeps its visible text only.
        assert_eq!(sanitize("\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\"), "click");
        // C1 controls: CSI as one character.
        assert_eq!(sanitize("a\u{9b}2Jb"), "ab");
    }

    #[test]
    fn a_sequence_split_across_writes_is_still_caught() {
        let text = "before\x1b]0;owned\x07 middle \x1b[31mred\x1b[0m é\u{202e} after\n";
        for cut in 0..text.len() {
            let mut out = Vec::new();
            {
                let mut w = Safe::new(&mut out);
                w.write_all(&text.as_bytes()[..cut]).unwrap();
                w.write_all(&text.as_bytes()[cut..]).unwrap();
            }
            assert_eq!(String::from_utf8(out).unwrap(), "before middle red é after\n", "cut at {cut}");
        }
    }
}
