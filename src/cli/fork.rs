//! `pisces fork SESSION REV`: a new session file holding the path to an entry, as pi's
//! `/fork` and `/clone` write one (`createBranchedSession`); `--all` copies the whole
//! file as `pi --fork` does (`forkFrom`); `--linear` writes pi's `/export x.jsonl` shape.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use super::TextOrJson as Format;
use super::{read_one, Ctx, ExitStatus};
use crate::render::fork::ForkDoc;
use crate::render::{self, sanitize};
use crate::session::rev;
use crate::session::write::{self, ForkFile, Shape};

const EXAMPLES: &str = "\
Examples:
  pisces fork session.jsonl @                    # the current branch, as pi's /clone
  pisces fork session.jsonl fix-1 -o fix-1.jsonl # the path to the entry labelled fix-1
  pisces fork session.jsonl 3f2a --before > prompt.txt   # as pi's /fork: before a user message
  pisces fork session.jsonl --all --cwd ~/other-checkout # the whole file, as `pi --fork`
  pisces fork session.jsonl @ --linear -o export.jsonl   # as pi's /export export.jsonl

Then resume it with `pi --session <printed path>`.

The new file holds the source's lines byte for byte: only `parentId` values change where
the path is re-chained (and a compaction's `firstKeptEntryId` that named a removed label).
A version-1 or version-2 source is migrated as pi migrates it when it opens the file;
version-1 entries get the ids pisces shows for them (`L<line>`).";

/// Write a new session holding the path to an entry (as pi's /fork and /clone do).
///
/// The new file has a version-3 header with a new session id (a UUIDv7), the time, the
/// source's cwd and `parentSession` = the source file's absolute path; then the entries
/// from the root to REV, with their ids, label entries left out and the rest re-chained
/// around them (as pi 1.6 does); then every label on the path as a new label entry, with
/// its original timestamp. The file is named `<time>_<session id>.jsonl` and written into
/// the source's directory (or --session-dir DIR, or exactly -o FILE), all at once, under a
/// temporary name that is then linked into place; an existing file is never overwritten.
/// The source is only read. Prints the new file's path.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The entry to fork at (included, unless --before).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub rev: Option<String>,

    /// Write exactly this file (it must not exist; its directory must).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Fork before REV, which must be a user message, as pi's /fork does: the path ends at
    /// its parent, and the message's text is printed on stdout to be edited and sent again
    /// (the new path goes to stderr). Before a first user message the new session has no
    /// entries, only its header.
    #[arg(long, conflicts_with = "all")]
    pub before: bool,

    /// Copy every entry of the file, every branch and label, as `pi --fork` does
    /// (forkFrom), into the pi session folder of --cwd (unless --session-dir or -o).
    #[arg(long)]
    pub all: bool,

    /// With --all: the new session's working directory (default: the current one).
    #[arg(long, requires = "all", value_name = "DIR")]
    pub cwd: Option<String>,

    /// Write pi's `/export x.jsonl` shape instead: the same session id, no
    /// parentSession, every entry of the path (labels included) chained one after the
    /// other. Default file: `session-<time>.jsonl` in the current directory (not beside
    /// the source, where two files would have one session id).
    #[arg(long, conflicts_with = "all")]
    pub linear: bool,

    /// Output: the new file's path, or `json` ({version, path, id, entryCount, …}).
    #[arg(long, short, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let shape = if args.all {
        Shape::Whole
    } else if args.linear {
        Shape::Linear
    } else {
        Shape::Branch
    };
    read_one(ctx, &args.session, |session, reading| {
        let writer = session.dialect().writer()?;
        let point = match &args.rev {
            Some(rev) if !args.all => Some(write::fork_point(session, rev, rev::resolve(session, rev)?, args.before)?),
            _ => None,
        };
        let leaf = point.as_ref().and_then(|p| p.leaf);
        let plan =
            writer.fork(session, leaf, shape).map_err(|e| anyhow::anyhow!("{}: cannot fork: {e}", session.file))?;
        let spec = ForkFile {
            shape: Some(shape),
            output: args.output.clone(),
            session_dir: ctx.session_dir.clone(),
            cwd: args.cwd.clone(),
            id: plan.session_id.clone(),
        };
        let new = writer.fork_file(session, &spec, &ctx.env)?;
        reading.start_output()?;
        write::write_new_session(&new, |w| plan.write_to(&new.header, w))
            .with_context(|| format!("could not write the fork of {}", session.file))?;

        let mut err = std::io::stderr().lock();
        for n in plan.notes.iter().chain(&new.notes) {
            let _ = writeln!(err, "pisces: note: {}", sanitize(n));
        }
        let doc = ForkDoc::of(session, &plan, &new, point.as_ref());
        let mut out = std::io::stdout().lock();
        match args.format {
            Format::Json => render::fork::write_json(&mut out, &doc)?,
            Format::Text => render::fork::write_text(&mut out, &mut err, &doc)?,
        }
        out.flush()?;
        Ok(ExitStatus::Ok)
    })
}
