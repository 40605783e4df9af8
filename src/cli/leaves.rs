//! `pisces leaves SESSION`: every branch tip, with what happened on its path.

use std::io::{BufWriter, Write};

use clap::ValueEnum;

use super::{read_one, Ctx, ExitStatus};
use crate::render;
use crate::session::leaves;

const EXAMPLES: &str = "\
Examples:
  pisces leaves session.jsonl                  # a table, oldest leaf first; @ is pi's current leaf
  pisces leaves session.jsonl --format json | jq '.leaves[] | select(.usage.cost > 0.1)'
  pisces leaves 01a228be                       # a session found by id prefix

Claude Code sessions: a reply written as several lines (one per content block, sharing
`message.id`) is counted once. Its cost is the model's list price, in US$ per million
tokens (input / output / cache write / cache read), by model id prefix:
  claude-opus-5-5      4 / 20 / 5 / 0.4   (what Claude Code 2.1.332 itself charges)
  claude-opus-4-5      5 / 25 / 6.25 / 0.5
  claude-opus-4-1      15 / 75 / 18.75 / 1.5
  claude-opus-4        15 / 75 / 18.75 / 1.5
  claude-sonnet-4      3 / 15 / 3.75 / 0.3
  claude-3-7-sonnet    3 / 15 / 3.75 / 0.3
  claude-3-5-sonnet    3 / 15 / 3.75 / 0.3
  claude-haiku-4-5     1 / 5 / 1.25 / 0.1
  claude-3-5-haiku     0.8 / 4 / 1 / 0.08
  claude-3-haiku       0.25 / 1.25 / 0.3125 / 0.025
  claude-3-opus        15 / 75 / 18.75 / 1.5
Codex CLI rollouts: each response's `token_usage_record` (older rollouts: each
`token_count` event whose total changed); what a fork inherits is counted once, in its
parent's file. Input includes the cached tokens, counted as cache reads. US$ per million
tokens (input / cached input / output), by the turn's model id prefix:
  gpt-5-nano           0.05 / 0.005 / 0.4
  gpt-5-mini           0.25 / 0.025 / 2
  gpt-5                1.25 / 0.125 / 10
  gpt-4.1-mini         0.4 / 0.1 / 1.6
  gpt-4.1              2 / 0.5 / 8
  o4-mini              1.1 / 0.275 / 4.4
  o3                   2 / 0.5 / 8
Any other model costs 0 (its tokens are still counted). pi sessions carry their own costs.";

/// List every leaf (an entry without children: the tip of a branch), oldest first.
///
/// For each: its short id (the shortest unique prefix, at least 4 characters), its depth
/// (entries above it), its label or its nearest labelled ancestor's, the last user prompt
/// and the last assistant reply on its path, the model in effect, its time (UTC), and the
/// tokens and cost of the whole path (assistant messages, `usage` entries, and the usage
/// of tool results and summaries, as pi's /session counts them). `@` marks the current leaf
/// (pi: the last entry of the file; Claude Code: the one it resumes at).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table; fitted to the terminal's width (COLUMNS), whole when piped.
    Text,
    /// `{"version":1, "session":…, "defaultLeafId":…, "leaves":[{"id", "shortId", "line",
    /// "isDefault", "depth", "timestamp", "time", "label", "lastUserPrompt", "lastAssistant",
    /// "model", "usage"}]}`, oldest leaf first.
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    read_one(ctx, &args.session, |session, reading| {
        let leaves = leaves::collect(session)?;
        reading.start_output()?;
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        match args.format {
            Format::Text => render::leaves::write_text(&mut out, &ctx.ui, session, &leaves)?,
            Format::Json => render::leaves::write_json(&mut out, session, &leaves)?,
        }
        out.flush()?;
        Ok(ExitStatus::Ok)
    })
}
