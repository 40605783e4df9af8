//! `pisces grep PATTERN [SESSION...]`: find text in sessions, with a REV for each hit.

use std::io::{BufWriter, Write};

use super::{Ctx, ExitStatus};
use crate::render::{self, progress::Progress};
use crate::store::grep::{search_all, PatternOptions, Query, Role};
use crate::store::Where;

const EXAMPLES: &str = "\
Examples:
  pisces grep 'npm test'                         # every session of every agent
  pisces grep -i 'segfault' --role tool-result   # in what tools returned
  pisces grep -F 'say \"hi\"' session.jsonl        # a literal, quotes and all
  pisces grep TODO session.jsonl --on-path @     # only what the model saw at the leaf
  pisces grep 'rm -rf' --tool bash --format json | jq -r '.rev'
  pisces show session.jsonl 3f9a2c1b             # a hit's REV, opened

Each hit is SESSION:LINE:REV ROLE: TEXT. REV names the entry for `pisces show` and
`pisces path` (an id prefix, or #LINE for an entry without an id of its own). The text is
what a person reads (JSON strings decoded), so quotes, backslashes, non-ASCII letters and
line breaks (\\n in a regex) match as they look.

Each line is reported once, in the session whose file holds it: a Codex fork's inherited
lines are searched in its parent when the parent is searched too (with no SESSION, it is).

A session none of whose raw lines may match is not read at all (as ripgrep skips a file
without its literal), so a broken session is reported only when it may hold a match:
`pisces check` reports it always.

Exit status: 0 a match was found, 1 none, 2 an error (a session that may hold a match but
could not be read, a bad pattern).";

/// Search sessions for text: prompts, replies, thinking, tool calls and their results.
///
/// PATTERN is a regular expression in ripgrep's syntax (the regex crate's), or a literal
/// with -F. Without SESSION, every session of every agent is searched (as `pisces ls --all`
/// finds them), one at a time per processor. Lines are matched raw first and decoded only
/// when they may hold a match, as ripgrep's literal prefilter does.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The pattern (a regex, or a literal with -F).
    pub pattern: String,

    /// Sessions to search (files, ids or id prefixes); default every session found.
    pub sessions: Vec<String>,

    /// Only this kind of text (repeat or comma-separate).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub role: Vec<Role>,

    /// Only calls to and results of the tool NAME (any case).
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,

    /// Only the entries the model saw at REV (its context there), in each session.
    #[arg(long, value_name = "REV")]
    pub on_path: Option<String>,

    /// Case-insensitive.
    #[arg(long, short = 'i')]
    pub ignore_case: bool,

    /// Whole words only.
    #[arg(long, short = 'w')]
    pub word_regexp: bool,

    /// PATTERN is a literal string, not a regex.
    #[arg(long, short = 'F')]
    pub fixed_strings: bool,

    /// Print each session's number of matching lines instead.
    #[arg(long, short = 'c', conflicts_with = "files_with_matches")]
    pub count: bool,

    /// Print only the names of sessions with a match.
    #[arg(long, short = 'l')]
    pub files_with_matches: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Decode every entry, without the raw-line prefilter (slower; the reference the
    /// prefilter is tested against).
    #[arg(long, hide = true)]
    pub no_prefilter: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per hit: SESSION:LINE:REV ROLE: TEXT.
    Text,
    /// One JSON object per line per hit: `{"agent", "format", "session", "sessionId",
    /// "line", "rev", "id", "role", "tool", "text", "matches":[[start,end]]}` (with
    /// --count: `{"session", "sessionId", "count"}`).
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let opts = PatternOptions { fixed: args.fixed_strings, ignore_case: args.ignore_case, word: args.word_regexp };
    let mut query = Query::new(&args.pattern, opts)?;
    query.roles = args.role.clone();
    query.tool = args.tool.clone();
    let sessions: Vec<Where> = if args.sessions.is_empty() {
        crate::store::discover(&ctx.env, ctx.session_dir.as_deref(), ctx.formats, None).sessions
    } else {
        super::named_sessions(ctx, &args.sessions, "grep")?
    };
    let progress = Progress::new("searching", sessions.len());
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (mut found, mut failed, mut done) = (false, false, 0);
    let mut result = Ok(());
    let threads = crate::store::threads();
    search_all(&sessions, ctx.formats, &query, args.on_path.as_deref(), !args.no_prefilter, threads, &mut |r| {
        done += 1;
        progress.set(done);
        if result.is_err() {
            return;
        }
        let s = match r {
            Ok(s) => s,
            Err((name, e)) => {
                failed = true;
                progress.finish();
                let _ = writeln!(std::io::stderr(), "{}", render::failure_line(&name, &e));
                return;
            }
        };
        found |= !s.hits.is_empty();
        result = (|| -> std::io::Result<()> {
            match (args.count, args.files_with_matches, args.format) {
                (true, _, Format::Text) if !s.hits.is_empty() => render::grep::write_count(&mut out, &ctx.ui, &s)?,
                (true, _, Format::Json) if !s.hits.is_empty() => render::grep::write_count_json(&mut out, &s)?,
                (true, _, _) => {}
                (_, true, _) if !s.hits.is_empty() => render::grep::write_name(&mut out, &ctx.ui, &s)?,
                (_, true, _) => {}
                (_, _, Format::Text) => {
                    for h in &s.hits {
                        render::grep::write_hit(&mut out, &ctx.ui, &s, h)?;
                    }
                }
                (_, _, Format::Json) => {
                    for h in &s.hits {
                        render::grep::write_json(&mut out, &s, h)?;
                    }
                }
            }
            Ok(())
        })();
    });
    progress.finish();
    result?;
    out.flush()?;
    Ok(match (failed, found) {
        (true, _) => ExitStatus::Error,
        (false, true) => ExitStatus::Ok,
        (false, false) => ExitStatus::Finding,
    })
}
