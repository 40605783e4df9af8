//! `pisces diff SESSION REV_A [REV_B]` / `pisces diff FILE_A REV_A --against FILE_B
//! [REV_B]`: compare two attempts.

use std::io::{BufWriter, Write};

use clap::ValueEnum;

use super::{read, Ctx, ExitStatus};
use crate::diff::{self, Input, Options};
use crate::render;
use crate::session::rev;

const EXAMPLES: &str = "\
Examples:
  pisces diff session.jsonl fix-1 fix-2           # two labelled attempts
  pisces diff session.jsonl a3f9 @                # an old leaf against pi's current leaf
  pisces diff session.jsonl a3f9                  # the same (REV_B defaults to @)
  pisces diff session.jsonl fix-1 fix-2 --stat    # only what each side did, and the tests
  pisces diff fork.jsonl @ --against source.jsonl @   # a fork against its source
  pisces diff session.jsonl fix-1 fix-2 --format json | jq .summary.b.lastTestRun

Exit status: 0 when both paths end at the same entry (no differences), 1 when they
differ, 2 on trouble (a REV that names nothing, an unreadable file).";

/// Compare two leaves (attempts): where they split, their turns side by side, and what
/// each did.
///
/// Finds the common ancestor of the two leaves (the deepest entry on both paths) and
/// shows the shared prefix (its size, the last shared prompt, `--context` shared turns),
/// then the entries after it on each side, aligned turn by turn (a turn starts at a user
/// message, a `!command` or a custom message): the prompts with a word diff, each side's
/// tool calls with their outcome (ok, error, bash exit code), the final replies with a
/// line diff when that helps. A summary per side follows: files read and modified (pi's
/// rules: the paths of read/write/edit calls), for files modified on both sides a diff of
/// the final content each side left when the calls rebuild it, every command and how its
/// last run ended, errors, model calls, tokens, cost, wall time and model; and one line
/// saying how the last test run ended on each side.
///
/// With `--against`, REV_B names an entry of another file (a fork and its source):
/// shared entries are recognised by id (forks keep ids), else by identical content.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file of side A (and of side B without --against), `-` for stdin, or a
    /// session id / unique id prefix.
    pub session: String,

    /// Side A's leaf.
    pub rev_a: String,

    /// Side B's leaf (default `@`, pi's current leaf).
    pub rev_b: Option<String>,

    /// Read REV_B in this session instead (a fork, its source, a copy).
    #[arg(long, value_name = "SESSION_B")]
    pub against: Option<String>,

    /// Print only the per-side summary (files, commands and their last exit, errors,
    /// calls, tokens, cost, time), like `git diff --stat`.
    #[arg(long)]
    pub stat: bool,

    /// Shared turns before the fork point to show.
    #[arg(long, short = 'C', value_name = "N", default_value_t = 1)]
    pub context: usize,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: color on a terminal only.
    Text,
    /// The whole report as one versioned object (`{"version":1, "a", "b",
    /// "commonAncestor", "identical", "shared", "turns", "summary"}`; no `turns` with
    /// --stat), never colored.
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    if args.against.as_deref() == Some("-") && args.session == "-" {
        anyhow::bail!("only one of SESSION and --against can be `-` (standard input)");
    }
    let rev_b = args.rev_b.clone().unwrap_or_else(|| "@".to_string());
    let opts = Options { context: args.context, stat: args.stat, text_diffs: args.format == Format::Text };
    let mut files = vec![args.session.as_str()];
    files.extend(args.against.as_deref());
    read(ctx, &files, |sessions, reading| {
        let sa = &sessions[0];
        let sb = sessions.get(1).unwrap_or(sa);
        let leaf_a = rev::resolve(sa, &args.rev_a).map_err(|e| anyhow::anyhow!("REV_A: {e}"))?;
        let leaf_b = rev::resolve(sb, &rev_b).map_err(|e| anyhow::anyhow!("REV_B: {e}"))?;
        let a = Input { session: sa, leaf: leaf_a, rev: &args.rev_a };
        let b = Input { session: sb, leaf: leaf_b, rev: &rev_b };
        let report = diff::compare(&a, &b, &opts)?;
        reading.start_output()?;
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        match args.format {
            Format::Json => {
                serde_json::to_writer_pretty(&mut out, &report)?;
                writeln!(out)?;
            }
            Format::Text if args.stat => render::diff::write_stat(&mut out, &ctx.ui, &report)?,
            Format::Text => render::diff::write_text(&mut out, &ctx.ui, &report)?,
        }
        out.flush()?;
        Ok(if report.identical { ExitStatus::Ok } else { ExitStatus::Finding })
    })
}
