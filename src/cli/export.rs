//! `pisces export SESSION --html`: the session as one self-contained page;
//! `pisces export --parquet DIR [SESSION… | --all]`: sessions as tables.

use std::io::Write;
use std::path::PathBuf;

use super::{open_cache, read_one, save_cache, Ctx, ExitStatus};
use crate::render::{self, progress::Progress, sanitize};
use crate::session::view::{self, Filter, Options};
use crate::session::write;
use crate::store::cache::Kind;

const EXAMPLES: &str = "\
Examples:
  pisces export session.jsonl --html                 # writes session.html here
  pisces export 4f1c --html -o /tmp/fix.html         # a session found by id prefix
  pisces export session.jsonl --html -o - | gzip > s.html.gz
  xdg-open session.html#a3f9c1d2                     # open at an entry (a deep link)
  pisces export --parquet ~/pisces-tables --all      # every session on this machine, as tables
  duckdb -c \"select agent, sum(cost) from read_parquet('t/usage/**/*.parquet',
             hive_partitioning = true) group by agent\"";

/// Write a session as one HTML page to read in a browser, or sessions as Parquet tables.
///
/// --html: the page is one file that loads nothing: its style and script are inline, and
/// its Content-Security-Policy forbids every network load. On the left, the tree as
/// `pisces tree` draws it (fold branches with ⊟/⊞; search every message as `pisces grep`
/// would, by role, literally or by regex). On the right, the context the model saw at the
/// selected leaf, exactly the messages `pisces path LEAF` gives: thinking folded, each tool
/// call with its result under it, long outputs cut with a "show all", images inline,
/// compaction and branch summaries marked. Above it, the branch's facts: tokens, cost,
/// model, time, the files it changed, and how its last test command ended. "Compare" sets
/// two leaves side by side from their fork point as `pisces diff` reports them, with the
/// side whose tests pass marked (on a very large session, the pairs that part late; for
/// the others, each side's messages and facts).
/// Clicking an entry shows the newest leaf below it (or the one shown, when the entry is on
/// its path) and scrolls to the entry's message. `page.html#ID` opens at entry ID. Session
/// text is shown as text, never run or rendered as markup. Light or dark follows the system
/// (◐ switches).
///
/// --parquet DIR: the tables `sessions`, `entries`, `messages`, `tool_calls` and `usage`
/// (each response once, as `pisces stats` counts it), partitioned by agent and month
/// (DIR/TABLE/agent=A/month=YYYY-MM/*.parquet), schema in docs/export-parquet.md. Run again,
/// it reads only the sessions whose files changed, rewrites their files, and removes those
/// of sessions gone from the store (with --all). Prints what it did.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["html", "parquet"])))]
pub struct Args {
    /// Session files, `-` for stdin, or session ids / unique id prefixes (--html: one).
    pub sessions: Vec<String>,

    /// Write one session as an HTML page.
    #[arg(long)]
    pub html: bool,

    /// Write the sessions as Parquet tables into DIR (made if needed).
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,

    /// --parquet: every session of every agent found on this machine (as `pisces ls --all`).
    #[arg(long)]
    pub all: bool,

    /// --html: where to write the page (`-`: standard output). Default: the session file's
    /// name with `.html`, in the current directory.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// --html: replace FILE if it exists (atomically: a reader sees the old page or the new one).
    #[arg(long)]
    pub force: bool,

    /// --parquet: what it did as `text` or one JSON document (`{dir, sessions, written,
    /// unchanged, removed, responses, failed}`).
    #[arg(long, short, value_enum, default_value = "text")]
    pub format: super::TextOrJson,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    if let Some(dir) = &args.parquet {
        return parquet(ctx, &args, dir);
    }
    let [session] = args.sessions.as_slice() else {
        anyhow::bail!("--html writes one session: name exactly one SESSION");
    };
    read_one(ctx, session, |session, reading| {
        let page = crate::export::page(session)?;
        let opts = Options {
            filter: Filter::Default,
            search: None,
            folds: Vec::new(),
            leaf: session.default_leaf(),
            home: ctx.env.pi_home(),
            cwd: ctx.env.cwd_string(),
            cycle_roots: true,
        };
        let rows = view::read_rows(session, &opts)?;
        let tree = view::build(session, rows.as_ref(), &opts);
        let generator = format!("pisces {}", env!("CARGO_PKG_VERSION"));
        let fill = |w: &mut dyn Write| render::html::write(w, session, &tree, &page, &generator);
        reading.start_output()?;
        let path = match &args.output {
            Some(p) if p.as_os_str() == "-" => {
                let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                fill(&mut out)?;
                out.flush()?;
                return Ok(ExitStatus::Ok);
            }
            Some(p) => p.clone(),
            None => crate::export::default_file(&session.file),
        };
        if args.force {
            write::replace_file(&path, fill)?;
        } else {
            write::write_new_file(&path, fill)?;
        }
        println!("{}", sanitize(&path.display().to_string()));
        Ok(ExitStatus::Ok)
    })
}

fn parquet(ctx: &Ctx, args: &Args, dir: &std::path::Path) -> anyhow::Result<ExitStatus> {
    if args.all != args.sessions.is_empty() {
        anyhow::bail!("--parquet: name the SESSIONs to export, or give --all (not both)");
    }
    let (sessions, cache) = if args.all {
        let (found, cache) = super::discover_cached(ctx, Kind::Responses);
        (found.sessions, cache)
    } else {
        (super::named_sessions(ctx, &args.sessions, "export")?, open_cache(ctx, Kind::Responses))
    };
    let progress = Progress::new("exporting", sessions.len());
    let report = crate::export::store::export(
        &sessions,
        ctx.formats,
        dir,
        args.all,
        cache.as_ref(),
        crate::store::threads(),
        &mut |done| progress.set(done),
    )?;
    progress.finish();
    save_cache(cache);
    let mut out = std::io::stdout().lock();
    match args.format {
        super::TextOrJson::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        super::TextOrJson::Text => writeln!(
            out,
            "{}: {} sessions ({} written, {} unchanged, {} removed), {} responses in usage",
            sanitize(&report.dir),
            report.sessions,
            report.written,
            report.unchanged,
            report.removed,
            report.responses
        )?,
    }
    let mut err = std::io::stderr().lock();
    for (name, e) in &report.failed {
        writeln!(err, "{}", render::failure_line(name, e))?;
    }
    Ok(if report.failed.is_empty() { ExitStatus::Ok } else { ExitStatus::Error })
}
