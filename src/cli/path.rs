//! `pisces path SESSION [REV]`: the context the model saw at a leaf.

use std::io::{BufWriter, Write};

use super::{read_one, Ctx, ExitStatus};
use crate::render::context::{self, Format};
use crate::session::rev;

const EXAMPLES: &str = "\
Examples:
  pisces path session.jsonl                      # the context at pi's current leaf
  pisces path session.jsonl fix-1 --format json  # at the entry labelled fix-1, as JSON
  pisces path session.jsonl @~2 --format llm     # two entries up, as pi sends it to the LLM
  pisces path session.jsonl a3f9 --entries > branch.jsonl   # the path's raw lines
  pisces path 01a228be --format anthropic --system | jq .   # a session id prefix
  pisces path 01a238f7-8605 :33 --format openai-responses   # a Codex thread at ordinal 33, as Codex sends it";

/// Print the context the model saw at a leaf (pi's buildSessionContext + convertToLlm).
///
/// Follows the path from REV back to the root, applies the latest compaction on it,
/// branch summaries, custom messages and context edits exactly as pi 1.6.0 does, and
/// prints the result. Nothing is written to the session file.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The leaf to project (default `@`: the session as its agent resumes it; pi's current
    /// leaf, the last entry in the file; for Claude Code what `claude --resume` sends; for
    /// Codex the thread's end). Codex lines are also named by ordinal: `:33`.
    #[arg(conflicts_with = "leaf_null")]
    pub rev: Option<String>,

    /// Output format [default: text on a terminal, json when piped].
    #[arg(long, short, value_enum)]
    pub format: Option<Format>,

    /// Project pi's null leaf (before the first entry): an empty context.
    #[arg(long)]
    pub leaf_null: bool,

    /// Print the raw JSONL lines of the path's entries instead (root first), unchanged.
    #[arg(long, conflicts_with_all = ["format", "system", "leaf_null"])]
    pub entries: bool,

    /// Include the system prompt and tool declarations replayed from the path's system
    /// messages (pi 1.6).
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    read_one(ctx, &args.session, |session, reading| {
        let projection = match (args.rev.as_deref(), args.leaf_null) {
            (_, true) => session.dialect().project(session, None)?,
            (None | Some("@"), false) => session.dialect().resume(session)?,
            (Some(r), false) => session.dialect().project(session, Some(rev::resolve(session, r)?))?,
        };
        reading.start_output()?;
        // Stdout is line-buffered; a JSON document has a newline per value.
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        if args.entries {
            context::write_entries(&mut out, session, &projection.path)?;
        } else {
            let format = args.format.unwrap_or(if ctx.ui.stdout_tty { Format::Text } else { Format::Json });
            context::write(&mut out, &ctx.ui, session, &projection, format, args.system)?;
        }
        out.flush()?;
        // The process exits right after: freeing the context value by value is wasted work
        // (a thirtieth of `path`'s time on a large Codex fork family), as for the session
        // (`Afterwards::LeaveToExit`).
        std::mem::forget(projection);
        Ok(ExitStatus::Ok)
    })
}
