//! Renderers: they write to a writer they are given and decide nothing about the
//! terminal themselves; [`Ui`] holds the decisions (color, width), made once at start-up.

pub mod agent;
pub mod check;
pub mod compact;
pub mod context;
pub mod diff;
pub mod entry;
pub mod fork;
pub mod grep;
pub mod html;
pub mod json;
pub mod label;
pub mod leaves;
pub mod ls;
pub mod parquet;
pub mod progress;
pub mod safe;
pub mod stats;
pub mod summarize;
pub mod table;
pub mod transcript;
pub mod tree;

use std::borrow::Cow;
use std::io::IsTerminal;

use owo_colors::OwoColorize;

pub use safe::{sanitize, Safe};

use crate::env::Env;

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
    pub fn new(choice: ColorChoice, env: &Env) -> Ui {
        let stdout_tty = std::io::stdout().is_terminal();
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if env.var_os("NO_COLOR").is_some() => false,
            ColorChoice::Auto if env.var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0") => true,
            ColorChoice::Auto => stdout_tty,
        };
        let width = stdout_tty.then(|| terminal_width(env)).flatten();
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
            Paint::Match => text.red().bold().to_string(),
            Paint::Path => text.magenta().to_string(),
        })
    }
}

/// `$COLUMNS`, else the size of the terminal on stdout.
fn terminal_width(env: &Env) -> Option<usize> {
    let columns = env.var("COLUMNS").and_then(|c| c.trim().parse::<usize>().ok()).filter(|&c| c > 0);
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
    /// What a search matched.
    Match,
    /// A file or session name in a list of hits.
    Path,
}

/// An error as pisces prints it on stderr: `pisces: error: …`, then each cause that says
/// something new (an OS error already quoted in its parent's text is not repeated), then
/// the hints errors carry, all made safe for a terminal (an error may quote session text).
pub fn error_text(err: &anyhow::Error, hints: &[String]) -> String {
    let mut out = format!("pisces: error: {err}");
    let mut said = err.to_string();
    for cause in err.chain().skip(1) {
        let text = cause.to_string();
        if said.contains(&text) {
            continue;
        }
        out.push_str(&format!("\n  caused by: {text}"));
        said.push_str(&text);
    }
    for hint in hints {
        out.push_str(&format!("\n  hint: {hint}"));
    }
    sanitize(&out).into_owned()
}

/// A session a whole-store command could not read, as one stderr line: `pisces: NAME:
/// ERROR`, the name left out when the error already starts with it.
pub fn failure_line(name: &str, error: &str) -> String {
    let what = if error.starts_with(name) { error.to_string() } else { format!("{name}: {error}") };
    format!("pisces: {}", sanitize(&what))
}
