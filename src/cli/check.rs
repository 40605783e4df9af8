//! `pisces check SESSION...`: validate session files and report every problem.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{locate_arg, Ctx, ExitStatus};
use crate::render::{self, sanitize};
use crate::session::check::check_file;
use crate::session::locate::{walk_sessions, SessionArg};
use crate::session::Source;

const EXAMPLES: &str = "\
Examples:
  pisces check session.jsonl                    # one file
  pisces check ~/.pi/agent/sessions             # every .jsonl below a directory
  pisces check ~/.openclaw                      # every session in OpenClaw's databases
  pisces check --format json sessions/ | jq '.files[] | select(.status != \"clean\")'

Exit status: 0 every file is clean, 1 problems were found, 2 a file could not be read.";

/// Validate session files: every problem with its line and a hint to fix it.
///
/// Reports what pi reads past (malformed, truncated and blank lines, CRLF, a missing
/// final newline), what breaks the tree (no or bad header, duplicate ids, missing
/// parents, self-parents, cycles), and what only the whole tree shows (labels naming
/// nothing, a compaction keeping an entry off its path, tool results without their call,
/// calls never answered, context edits off their branch). Unknown entry types and roles
/// are warnings; version-1 files are noted (pi rewrites them when it opens them). Every
/// line is read whole. Nothing is written.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session files, directories (searched for *.jsonl, and for the session databases
    /// of an OpenClaw state folder or agent folder), session ids, or `-`.
    #[arg(required = true)]
    pub sessions: Vec<String>,

    /// Output format.
    #[arg(long, short, value_enum, default_value = "text")]
    pub format: Format,

    /// Also list info findings (such as version-1 files), not only problems.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let mut inputs: Vec<(String, Input)> = Vec::new();
    let mut err = std::io::stderr().lock();
    for arg in &args.sessions {
        if arg.is_empty() {
            return Err(crate::session::locate::LocateError::Empty.into());
        }
        let path = Path::new(arg);
        if path.is_dir() {
            let walk = walk_sessions(path, ctx.formats);
            // The sessions of the databases there (an OpenClaw state folder's), each by its
            // name (`openclaw:<agent>/<id>`).
            let stored: Vec<(String, Input)> = crate::formats::stores_under(path)
                .into_iter()
                .flat_map(|st| match (st.ids)(&st.db) {
                    Ok(ids) => ids
                        .into_iter()
                        .map(|id| {
                            let name = format!("{}:{}/{id}", st.scheme, st.agent);
                            (name, Input::Stored { db: st.db.clone(), agent: st.agent.clone(), id })
                        })
                        .collect(),
                    Err(e) => vec![(st.db.display().to_string(), Input::Missing(e))],
                })
                .collect();
            if walk.files.is_empty() && walk.skipped.is_empty() && walk.not_sessions.is_empty() && stored.is_empty() {
                let _ = writeln!(
                    err,
                    "pisces: note: {} holds no session files (*.jsonl) or session databases",
                    sanitize(arg)
                );
            }
            inputs.extend(stored);
            if !walk.skipped.is_empty() {
                let _ = writeln!(
                    err,
                    "pisces: note: skipped {} *.jsonl name{} in {} that {} not a regular file{}",
                    walk.skipped.len(),
                    if walk.skipped.len() == 1 { "" } else { "s" },
                    sanitize(arg),
                    if walk.skipped.len() == 1 { "is" } else { "are" },
                    if args.verbose { ":" } else { " (-v lists them)" }
                );
                if args.verbose {
                    for (p, what) in &walk.skipped {
                        let _ = writeln!(err, "  {} ({what})", sanitize(&p.display().to_string()));
                    }
                }
            }
            if !walk.not_sessions.is_empty() {
                let n = walk.not_sessions.len();
                let _ = writeln!(
                    err,
                    "pisces: note: skipped {n} file{} in {} that {} not a session{}",
                    if n == 1 { "" } else { "s" },
                    sanitize(arg),
                    if n == 1 { "is" } else { "are" },
                    if args.verbose { ":" } else { " (-v lists them)" }
                );
                if args.verbose {
                    for (p, what) in &walk.not_sessions {
                        let _ = writeln!(err, "  {} ({what})", sanitize(&p.display().to_string()));
                    }
                }
            }
            inputs.extend(walk.files.into_iter().map(|p| (p.display().to_string(), Input::Path(p))));
        } else {
            match locate_arg(ctx, arg) {
                Ok(SessionArg::Path(p)) => inputs.push((p.display().to_string(), Input::Path(p))),
                Ok(SessionArg::Stdin) => inputs.push(("<stdin>".into(), Input::Stdin)),
                Ok(SessionArg::Stored { db, agent, id }) => {
                    inputs.push((format!("openclaw:{agent}/{id}"), Input::Stored { db, agent, id }))
                }
                Err(e) => inputs.push((arg.to_string(), Input::Missing(e.to_string()))),
            }
        }
    }
    drop(err);
    let started = Instant::now();
    let progress = indicatif::ProgressBar::hidden();
    progress.set_length(inputs.len() as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template("checking {pos}/{len} {wide_msg}") {
        progress.set_style(style);
    }
    let show_progress = std::io::stderr().is_terminal() && inputs.len() > 1;

    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut reports = Vec::new();
    for (name, input) in inputs {
        // Shown only when the run takes more than a second.
        if show_progress && started.elapsed() > Duration::from_secs(1) && progress.is_hidden() {
            progress.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        progress.set_message(sanitize(&name).into_owned());
        let source = match input {
            Input::Path(p) => Source::open(&p).map_err(|e| e.to_string()),
            Input::Stdin => Source::stdin().map_err(|e| e.to_string()),
            Input::Stored { db, agent, id } => crate::formats::open_stored(&db, &agent, &id).map_err(|e| e.to_string()),
            Input::Missing(e) => Err(e),
        };
        let report = check_file(&name, source, ctx.formats);
        if args.format == Format::Text {
            render::check::write_file(&mut out, &ctx.ui, &report, args.verbose)?;
        }
        reports.push(report);
        progress.inc(1);
    }
    progress.finish_and_clear();

    match args.format {
        Format::Json => render::check::write_json(&mut out, &reports)?,
        Format::Text => render::check::write_summary(&mut out, &reports)?,
    }
    out.flush()?;
    let summary = render::check::Summary::of(&reports);
    Ok(if summary.unreadable > 0 {
        ExitStatus::Error
    } else if summary.problems > 0 {
        ExitStatus::Finding
    } else {
        ExitStatus::Ok
    })
}

/// A file to check.
enum Input {
    Path(PathBuf),
    Stdin,
    /// A session kept in a database.
    Stored {
        db: PathBuf,
        agent: String,
        id: String,
    },
    /// A SESSION that names nothing, and why.
    Missing(String),
}
