//! `pisces label SESSION REV NAME` / `--clear`: append a label entry, as pi's /tree
//! Shift+L does.

use anyhow::{bail, Context};

use super::TextOrJson as Format;
use super::{append_target, report_diagnostics, Ctx, ExitStatus};
use crate::render;
use crate::render::label::LabelDoc;
use crate::session::{rev, write};

const EXAMPLES: &str = "\
Examples:
  pisces label session.jsonl @ fix-1             # label pi's current leaf
  pisces label session.jsonl 3f2a 'before refactor'
  pisces label session.jsonl fix-1 --clear       # remove the label
  pisces path session.jsonl fix-1                # then name the entry by its label";

/// Label an entry (append a `label` entry, exactly as pi writes one).
///
/// The label entry is appended as pi appends it: a new 8-hex id, `parentId` = the file's
/// last entry (pi's leaf), the current time, `targetId`, and the label (trimmed; with
/// `--clear` the `label` key is left out, which clears it). The line is written in one
/// `write` on an append-only handle under an advisory lock; nothing else in the file
/// changes. pi shows the label in /tree when it next opens the session.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file or session id (not `-`: the label is appended to the file).
    pub session: String,

    /// The entry to label.
    pub rev: String,

    /// The label.
    #[arg(required_unless_present = "clear", conflicts_with = "clear")]
    pub name: Option<String>,

    /// Remove the entry's label instead.
    #[arg(long)]
    pub clear: bool,

    /// Append even if the file's last line is incomplete (ends it with a newline first).
    #[arg(long)]
    pub force: bool,

    /// Output: a sentence, or `json` ({version, file, id, targetId, label, line}).
    #[arg(long, short, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let path = append_target(ctx, &args.session, "label")?;
    let label = match &args.name {
        Some(n) if n.trim().is_empty() => bail!("a label cannot be empty; use --clear to remove one"),
        Some(n) if n.contains('\n') || n.contains('\r') => bail!("a label is one line; it cannot contain a newline"),
        Some(n) => Some(n.trim().to_string()),
        None => None,
    };
    let mut written = None;
    let mut redirected = None;
    let result = write::append_to_session(&path, write::Appended::Label, args.force, ctx.formats, |session| {
        // Read the file as it is now, under the lock: the new entry's parent is the last
        // entry at the moment of writing.
        report_diagnostics(ctx, session)?;
        let named = rev::resolve(session, &args.rev)?;
        let target = session.label_target(named);
        if target != named {
            redirected = Some((session.display_id(named).into_owned(), session.display_id(target).into_owned()));
        }
        let (id, line) = session.dialect().writer()?.label_line(session, target, label.as_deref())?;
        written = Some((id, session.named_id(target)?.to_string()));
        Ok::<_, anyhow::Error>(vec![line])
    });
    let appended = result.with_context(|| format!("could not label an entry of {}", path.display()))?;
    let (id, target_id) = written.expect("set before writing");
    if let Some((named, target)) = redirected {
        render::label::write_redirect_note(&mut std::io::stderr().lock(), &named, &target)?;
    }
    let doc = LabelDoc {
        version: 1,
        file: path.display().to_string(),
        id: &id,
        target_id: &target_id,
        label: label.as_deref(),
        line: appended.first_line,
    };
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => render::label::write_json(&mut out, &doc)?,
        Format::Text => render::label::write_text(&mut out, &doc)?,
    }
    Ok(ExitStatus::Ok)
}
