//! `pisces show SESSION REV...`: entries, whole and readable.

use std::io::{BufWriter, Write};

use super::{read_one, Ctx, ExitStatus};
use crate::render::entry::{self, Shown};
use crate::session::rev;
use clap::ValueEnum;

const EXAMPLES: &str = "\
Examples:
  pisces show session.jsonl @                  # pi's current leaf (the last entry)
  pisces show session.jsonl fix-1^             # the parent of the entry labelled fix-1
  pisces show session.jsonl a3f9 '#12' '#13'   # several entries, one after the other
  pisces show session.jsonl a3f9 --raw         # the line exactly as it is in the file
  pisces show session.jsonl @~2 --format json | jq '.entries[0].entry.message.usage'";

/// Show entries whole: type, id, parent, line, timestamp, label, children, and the payload.
///
/// Messages are shown block by block: text, thinking, tool calls with their arguments as
/// pretty JSON, tool results, images as `[image/png 34 KB]`, and usage and cost of
/// assistant messages. Every entry type of pi 1.6 is shown with its fields; a field or an
/// entry type pisces does not know is shown as pretty JSON, so nothing in the line is
/// hidden. `--raw` prints the line as it is in the file.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The entries to show (see REV in `pisces --help`), in this order.
    #[arg(required = true, value_name = "REV")]
    pub revs: Vec<String>,

    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Print each entry's line exactly as it is in the file (a trailing `\r` included).
    #[arg(long, conflicts_with = "format")]
    pub raw: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text (color on a terminal).
    Text,
    /// `{"version":1, "session":…, "entries":[{"id", "line", "parentLine", "depth", "label",
    /// "isLeaf", "isDefaultLeaf", "children", "entry"}]}`: each entry as pi holds it in
    /// memory (`entry`), plus what the whole file says about it.
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    read_one(ctx, &args.session, |session, reading| {
        let mut picked = Vec::with_capacity(args.revs.len());
        for r in &args.revs {
            let i = rev::resolve(session, r)?;
            // `--raw` prints the line whatever it holds; an entry pisces cannot read whole
            // is shown with what the index knows of it, and why.
            let value = if args.raw {
                Shown::Raw
            } else {
                match session.parse(i) {
                    Ok(v) => Shown::Whole(v),
                    Err(u) if !u.skip => Shown::Unreadable(u.why),
                    Err(u) => return Err(u.into()),
                }
            };
            picked.push((i, value));
        }
        reading.start_output()?;
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        if args.raw {
            for (i, _) in &picked {
                out.write_all(session.raw_line(*i))?;
                out.write_all(b"\n")?;
            }
        } else {
            match args.format {
                Format::Text => entry::write_entries(&mut out, &ctx.ui, session, &picked)?,
                Format::Json => entry::write_json(&mut out, session, &picked)?,
            }
        }
        out.flush()?;
        Ok(ExitStatus::Ok)
    })
}
