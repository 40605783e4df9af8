//! `pisces convert SESSION [REV] --to pi`: the path to an entry as a pi session.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use super::TextOrJson as Format;
use super::{read_one, Ctx, ExitStatus};
use crate::formats::pi::{convert, fork};
use crate::render::sanitize;
use crate::session::{rev, write};

const EXAMPLES: &str = "\
Examples:
  pisces convert ~/.claude/projects/-home-me-app/4f1c….jsonl --to pi   # the current leaf
  pisces convert 4f1c fix-a --to pi -o fix-a.jsonl   # a session id prefix, at an entry
  pisces agent --session \"$(pisces convert 4f1c --to pi)\" -p 'go on'   # continue it

The new file is pi's: a version-3 header (a new id, the source's cwd, parentSession = the
source file's absolute path, when it is a file), then the path's messages chained one after the other, under their own ids.
From Claude Code: each reply's lines become one assistant message; Bash, Read, Write,
Edit, MultiEdit, Grep and Glob calls become pi's bash, read, write, edit, grep and find
(Bash's timeout in seconds); other tools are kept as they are; the client's attachments
(environment, reminders) are left out, since pi makes its own.";

/// Write the path to an entry as a pi session, to continue it with pi or `pisces agent`.
///
/// The source is only read. The new file goes into pi's session folder for the source's
/// working directory (`~/.pi/agent/sessions/--<cwd>--/`, or --session-dir DIR, or exactly
/// -o FILE), never over an existing file. Prints the new file's path.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The entry to convert the path to (default `@`, the session's current leaf).
    pub rev: Option<String>,

    /// The format to write.
    #[arg(long, value_enum)]
    pub to: Target,

    /// Write exactly this file (it must not exist; its directory must).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Output: the new file's path, or `json` ({version, path, id, entryCount, source}).
    #[arg(long, short, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// pi's session format (version 3).
    Pi,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    read_one(ctx, &args.session, |session, reading| {
        let leaf = match &args.rev {
            Some(r) => rev::resolve(session, r)?,
            None => session.default_leaf().ok_or_else(|| anyhow::anyhow!("{}: no entries to convert", session.file))?,
        };
        let id = fork::new_session_id();
        let cwd = session.header.cwd_str().map(str::to_string).unwrap_or_else(|| ctx.env.cwd_string());
        let made = convert::to_pi(session, leaf, &id, &cwd)?;
        let path = match (&args.output, &ctx.session_dir, &ctx.env.pi_agent_dir) {
            (Some(o), _, _) => o.clone(),
            (None, Some(d), _) => d.join(fork::file_name(&write::now_iso(), &id)),
            (None, None, Some(agent)) => {
                let dir = fork::default_session_dir(agent, &cwd);
                std::fs::create_dir_all(&dir).with_context(|| format!("could not make {}", dir.display()))?;
                dir.join(fork::file_name(&write::now_iso(), &id))
            }
            (None, None, None) => anyhow::bail!("no home directory to find pi's session folder in; give -o FILE"),
        };
        reading.start_output()?;
        write::write_new_file(&path, |w| {
            for l in &made.lines {
                w.write_all(l.as_bytes())?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })
        .with_context(|| format!("could not write the conversion of {}", session.file))?;
        let mut out = std::io::stdout().lock();
        match args.format {
            Format::Text => writeln!(out, "{}", sanitize(&path.display().to_string()))?,
            Format::Json => {
                let doc = serde_json::json!({
                    "version": 1,
                    "path": path.display().to_string(),
                    "id": made.id,
                    "entryCount": made.entries,
                    "source": {"file": session.file, "format": session.format().name, "leafId": session.id_value(leaf)},
                });
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            }
        }
        Ok(ExitStatus::Ok)
    })
}
