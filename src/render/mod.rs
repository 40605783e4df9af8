//! Renderers: they write to a writer they are given and decide nothing about the
//! terminal themselves; [`Ui`] holds the decisions (color, width), made once at start-up.

pub mod diff;
pub mod entry;
pub mod table;
pub mod transcript;
pub mod tree;

use std::borrow::Cow;
use std::io::IsTerminal;

use owo_colors::OwoColorize;

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Terminal decisions, made once.
#[derive(Clone, Debug)]
pub struct Ui {
    pub color: bool,
    /// Standard output is a terminal (formats default differently when piped).
    pub stdout_tty: bool,
    /// The width to cut lines to: on a terminal, `$COLUMNS` when set, else the terminal's
    /// size; `None` when piped (nothing is cut then, unless a command's `--width` asks).
    pub width: Option<usize>,
}

impl Ui {
    /// Color precedence (as uv and most CLIs): `--color`, then `NO_COLOR`, then
    /// `CLICOLOR_FORCE`, then whether stdout is a terminal.
    pub fn from_env(choice: ColorChoice) -> Ui {
        let stdout_tty = std::io::stdout().is_terminal();
        let env_set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if env_set("NO_COLOR") => false,
            ColorChoice::Auto
                if env_set("CLICOLOR_FORCE") && std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0") =>
            {
                true
            }
            ColorChoice::Auto => stdout_tty,
        };
        let width = stdout_tty.then(terminal_width).flatten();
        Ui { color, stdout_tty, width }
    }

    /// A Ui for tests and pipes: no color.
    pub fn plain() -> Ui {
        Ui { color: false, stdout_tty: false, width: None }
    }

    /// `text` in the style of `what`, if color is on.
    pub fn paint<'t>(&self, what: Paint, text: &'t str) -> Cow<'t, str> {
        if !self.color {
            return Cow::Borrowed(text);
        }
        Cow::Owned(match what {
            Paint::User => text.green().bold().to_string(),
            Paint::Assistant => text.cyan().bold().to_string(),
            Paint::Tool => text.yellow().to_string(),
            Paint::Error => text.red().bold().to_string(),
            Paint::Summary => text.magenta().bold().to_string(),
            Paint::System => text.blue().bold().to_string(),
            Paint::Label => text.bright_yellow().bold().to_string(),
            Paint::Active => text.bright_green().bold().to_string(),
            Paint::Insert => text.green().to_string(),
            Paint::Delete => text.red().to_string(),
            Paint::Dim => text.dimmed().to_string(),
        })
    }
}

/// `$COLUMNS`, else the size of the terminal on stdout.
fn terminal_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|&c| c > 0);
    columns.or_else(|| terminal_size::terminal_size().map(|(w, _)| w.0 as usize).filter(|&w| w > 0))
}

/// What a piece of output is; the Ui decides how it looks (labels, not raw colors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    User,
    Assistant,
    Tool,
    Error,
    Summary,
    System,
    Label,
    /// The active path's marker.
    Active,
    /// Inserted text in a diff.
    Insert,
    /// Deleted text in a diff.
    Delete,
    Dim,
}

/// Makes session text safe for a terminal: drops escape sequences (CSI, OSC, …), other
/// control characters (keeping `\n` and `\t`) and bidi overrides, so a hostile session
/// cannot move the cursor, retitle the window, or reorder what the user reads.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
    };
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.peek() {
                // CSI: ESC [ params final-byte
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC / DCS / APC / PM / SOS: up to BEL or ESC \
                Some(']') | Some('P') | Some('_') | Some('^') | Some('X') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            }
            continue;
        }
        if c == '\r' {
            continue;
        }
        if !bad(c) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_strips_escapes_and_bidi() {
        assert_eq!(sanitize("ok\x1b[2J\x1b]0;title\x07 text\u{202e}x\r\n"), "ok textx\n");
        assert_eq!(sanitize("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(sanitize("a\u{0}b\u{7f}c"), "abc");
    }
}
