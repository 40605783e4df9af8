//! `pisces stats`: tokens and cost over many sessions, each model response counted once.

use std::io::{BufWriter, Write};

use super::{open_cache, save_cache, Ctx, ExitStatus};
use crate::render::{self, progress::Progress};
use crate::store::cache::Kind;
use crate::store::list::parse_time;
use crate::store::stats::{self, By, Filter};

const EXAMPLES: &str = "\
Examples:
  pisces stats --all                          # every session, by UTC day
  pisces stats --all --by model --since 7d    # last week's tokens per model
  pisces stats --all --agent claude --by month --format csv > claude.csv
  pisces stats --by branch session.jsonl      # each branch's cost, and what it added
  pisces stats --all --by session --format json | jq '.rows[] | {session, cost: .usage.cost}'

Counted once: a response that several files hold (a pi or oh-my-pi fork or clone copies its
source's entries, a Claude Code --fork-session copies lines under the same uuids, one
Claude Code reply spans several lines, a Codex fork reads its parent's rollout) is counted
once, for the session that made it: the one whose lines are not marked as copies (Claude
Code's requestSessionId, a Codex fork's inherited items), else the oldest (fewest fork
links, then earliest start). The footer says how many copies were read and not counted.

--by branch gives each branch tip (as `pisces leaves` lists them) its path's responses,
the context the model saw there, and what it added: the responses on its path and on no
other branch's, in any session read. Paths share their prefix, so they add up to more than
the total.

Costs are each format's: what pi, oh-my-pi and OpenClaw wrote on each reply, and list
prices for Claude Code and Codex (the tables in `pisces leaves --help`).";

/// Tokens and cost, grouped by day, week, month, agent, model, project, session or branch.
///
/// Input, output, cache read and cache write tokens and the cost of every model response
/// in the sessions read, each response counted once however many forks and copies hold it.
/// Without --all or SESSION, only the sessions that ran in the current directory are
/// read, as `pisces ls` lists them. --since and --until select responses by their time.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Sessions to count (files, ids or id prefixes); default the current directory's.
    pub sessions: Vec<String>,

    /// Every session found, not only the current directory's.
    #[arg(long, short, conflicts_with = "sessions")]
    pub all: bool,

    /// Only sessions that ran in DIR.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["all", "sessions"])]
    pub cwd: Option<std::path::PathBuf>,

    /// Only sessions of these agents: pi, omp, openclaw, claude, codex (repeat or
    /// comma-separate); with --no-cache, the others are not read.
    #[arg(long, value_delimiter = ',', value_name = "AGENT")]
    pub agent: Vec<String>,

    /// Only responses at or after WHEN: a date (2026-11-01), a time
    /// (2026-11-01T12:00:00Z) or a span back from now (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only responses before WHEN (as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Only responses from a model whose id contains TEXT (any case).
    #[arg(long, value_name = "TEXT")]
    pub model: Option<String>,

    /// How rows are grouped.
    #[arg(long, value_enum, default_value_t = By::Day)]
    pub by: By,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table with a total (fitted to the terminal), and a count on stderr.
    Text,
    /// `{"version":1, "by", "rows":[{"key", "agent"?, "session"?, "sessionId"?, "title"?,
    /// "responses", "usage":{"input", "output", "cacheRead", "cacheWrite", "totalTokens",
    /// "tokens", "cost"}, "added"?:{"responses", "usage"}}], "total":{"responses", "usage"},
    /// "copies", "sessions", "cached" (sessions the cache answered for), "extended" (sessions
    /// that grew, counted from what the cache held and their new entries), "failed":[{"session",
    /// "error"}]}`.
    Json,
    /// One header line, then one line per row (RFC 4180; no total row).
    Csv,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_millis() as f64);
    let time = |w: &Option<String>| w.as_deref().map(|w| parse_time(w, now)).transpose();
    let cwd = match (&args.cwd, args.all || !args.sessions.is_empty()) {
        (Some(dir), _) => Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone())),
        (None, false) => ctx.env.cwd.clone(),
        (None, true) => None,
    };
    let filter = Filter {
        agent: args.agent.clone(),
        cwd: cwd.as_ref().map(|c| c.to_string_lossy().into_owned()),
        since: time(&args.since).map_err(anyhow::Error::msg)?,
        until: time(&args.until).map_err(anyhow::Error::msg)?,
        model: args.model.clone(),
    };
    let (sessions, heads, cache) = if args.sessions.is_empty() {
        let (found, cache) = super::discover_cached(ctx, Kind::Responses);
        (found.sessions, found.heads, cache)
    } else {
        (super::named_sessions(ctx, &args.sessions, "stats")?, Vec::new(), open_cache(ctx, Kind::Responses))
    };
    let progress = Progress::new("reading", sessions.len());
    let threads = crate::store::threads();
    // (The process exits after the report.)
    let leave = crate::session::open::Afterwards::LeaveToExit;
    let report =
        stats::stats(&sessions, &heads, ctx.formats, &filter, args.by, threads, cache.as_ref(), leave, &mut |done| {
            progress.set(done)
        });
    progress.finish();
    save_cache(cache);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match args.format {
        Format::Text => render::stats::write_text(&mut out, &ctx.ui, &report)?,
        Format::Json => render::stats::write_json(&mut out, &report)?,
        Format::Csv => render::stats::write_csv(&mut out, &ctx.ui, &report)?,
    }
    out.flush()?;
    let mut err = std::io::stderr().lock();
    if args.format == Format::Text {
        let scope = match &filter.cwd {
            Some(c) => format!("in {}", render::sanitize(c)),
            None => "read".into(),
        };
        render::stats::write_footer(&mut err, &report, &scope)?;
    } else {
        for (name, e) in &report.failed {
            writeln!(err, "{}", render::failure_line(name, e))?;
        }
    }
    Ok(if report.failed.is_empty() { ExitStatus::Ok } else { ExitStatus::Error })
}
