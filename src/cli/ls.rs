//! `pisces ls`: every session of every agent on this machine, one row each.

use std::io::{BufWriter, Write};

use super::{Ctx, ExitStatus};
use crate::render::{self, progress::Progress};
use crate::store::cache::Kind;
use crate::store::grep::{PatternOptions, Query};
use crate::store::list::{self, Filter, SortKey};

const EXAMPLES: &str = "\
Examples:
  pisces ls                                   # this directory's sessions, newest first
  pisces ls --all --since 7d                  # every session active in the last week
  pisces ls --all --agent claude --sort cost  # Claude Code sessions, most expensive first
  pisces ls --all --grep 'npm test' --format json | jq -r '.sessions[].session'
  pisces ls --all --format csv > sessions.csv

Sessions are found where each agent keeps them: pi ($PI_CODING_AGENT_SESSION_DIR, else
~/.pi/agent/sessions/*/, or --session-dir alone), oh-my-pi (~/.omp/agent/sessions/*/ and its
archive), Claude Code (~/.claude/projects/*/, or each $CLAUDE_CONFIG_DIR), Codex CLI
($CODEX_HOME/sessions/YYYY/MM/DD/ and archived_sessions/) and OpenClaw (the databases under
$OPENCLAW_STATE_DIR, else ~/.openclaw). The `session` column of the JSON and CSV (and the id)
is a SESSION every other command takes.";

/// List sessions: agent, id, title, cwd, times, size, branches, forks, models and cost.
///
/// One row per session, as its own agent reads it: the title (its name, else its first
/// prompt), the directory it ran in, when it started and was last active (UTC), its entries,
/// its leaves (branch tips), how many listed sessions were forked from it, the models its
/// replies came from, and the tokens and cost of the entries in its own file (what a Codex
/// fork inherits is its parent's; a pi fork's copies of its source's entries are counted
/// in both: `pisces stats` counts each response once). Without --all, only the sessions that ran in the
/// current directory are listed, as pi's /resume lists them. Files in session folders that
/// are not sessions are skipped and counted (-v lists them).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Every session, not only the current directory's.
    #[arg(long, short)]
    pub all: bool,

    /// Only sessions that ran in DIR (implies --all's search, filtered by DIR).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub cwd: Option<std::path::PathBuf>,

    /// Only sessions of these agents: pi, omp, openclaw, claude, codex (repeat or
    /// comma-separate).
    #[arg(long, value_delimiter = ',', value_name = "AGENT")]
    pub agent: Vec<String>,

    /// Only sessions last active at or after WHEN: a date (2026-11-01), a time
    /// (2026-11-01T12:00:00Z) or a span back from now (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only sessions last active before WHEN (as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Only sessions with a reply from a model whose id contains TEXT (any case).
    #[arg(long, value_name = "TEXT")]
    pub model: Option<String>,

    /// Only sessions whose text matches PATTERN (a regex, as `pisces grep` reads it).
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,

    /// Row order.
    #[arg(long, value_enum, default_value_t = SortKey::LastActive)]
    pub sort: SortKey,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Also list the files skipped as not sessions.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table (fitted to the terminal), and a count on stderr.
    Text,
    /// `{"version":1, "sessions":[{"agent", "format", "session", "id", "shortId", "title",
    /// "cwd", "started", "lastActive", "entries", "leaves", "forks", "parentSession",
    /// "models", "usage", "warnings"}], "skipped":[{"path","what"}], "failed":[{"session",
    /// "error"}]}`.
    Json,
    /// One header line, then one line per session (RFC 4180).
    Csv,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_millis() as f64);
    let time = |w: &Option<String>| w.as_deref().map(|w| list::parse_time(w, now)).transpose();
    let cwd = match (&args.cwd, args.all) {
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
        grep: args.grep.as_deref().map(|p| Query::new(p, PatternOptions::default())).transpose()?,
    };
    let (found, cache) = super::discover_cached(ctx, Kind::Summaries);
    let progress = Progress::new("reading", found.sessions.len());
    let threads = crate::store::threads();
    let listing =
        list::list(found, ctx.formats, &filter, args.sort, threads, cache.as_ref(), &mut |done, _| progress.set(done));
    progress.finish();
    let cached = cache.as_ref().map_or((0, 0), |c| {
        (c.hits.load(std::sync::atomic::Ordering::Relaxed), c.extended.load(std::sync::atomic::Ordering::Relaxed))
    });
    super::save_cache(cache);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match args.format {
        Format::Text => {
            render::ls::write_text(&mut out, &ctx.ui, &listing, ctx.env.home.as_ref().and_then(|h| h.to_str()))?
        }
        Format::Json => render::ls::write_json(&mut out, &listing)?,
        Format::Csv => render::ls::write_csv(&mut out, &ctx.ui, &listing)?,
    }
    out.flush()?;
    let scope = match &filter.cwd {
        Some(c) => format!("in {}", render::sanitize(c)),
        None => "in all".into(),
    };
    let mut err = std::io::stderr().lock();
    if args.format == Format::Text {
        render::ls::write_footer(&mut err, &listing, args.verbose, &scope, cached)?;
    } else {
        for (name, e) in &listing.failed {
            writeln!(err, "{}", render::failure_line(name, e))?;
        }
    }
    Ok(if listing.failed.is_empty() { ExitStatus::Ok } else { ExitStatus::Error })
}
