//! `pisces fork SESSION REV`: a new session file holding the path to an entry, as pi's
//! `/fork` and `/clone` write one (`createBranchedSession`); `--all` copies the whole
//! file as `pi --fork` does (`forkFrom`); `--linear` writes pi's `/export x.jsonl` shape.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::{open_source, report_diagnostics, Ctx, ExitStatus};
use crate::session::fork::{self, ForkError, Shape};
use crate::session::{rev, write, EntryType, Role, Session};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What REV named, for the report.
struct Target {
    id: Value,
    line: u32,
    /// `--before`: the user message's text.
    text: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let source = open_source(ctx, &args.session)?;
    let shape = if args.linear { Shape::Linear } else { Shape::Branch };

    // A line that looked whole to the index may fail to parse whole; pi would have
    // skipped it, so read the file again treating it as malformed.
    let mut damaged = BTreeSet::new();
    let (session, plan, target) = loop {
        let session = Session::load_excluding(&source, &damaged)?;
        let (result, target) = if args.all {
            (fork::whole_fork(&session), None)
        } else {
            let rev = args.rev.as_deref().expect("clap requires REV without --all");
            let (leaf, target) = resolve_target(&session, rev, args.before)?;
            (fork::path_fork(&session, leaf, shape), Some(target))
        };
        match result {
            Ok(plan) => break (session, plan, target),
            Err(ForkError::Damaged(lines)) => {
                let before = damaged.len();
                damaged.extend(lines);
                if damaged.len() == before {
                    bail!("{}: could not read the lines to fork", session.name);
                }
            }
            Err(ForkError::Invalid(why)) => bail!("{}: cannot fork: {why}", session.name),
        }
    };
    report_diagnostics(ctx, &session)?;

    let here = std::env::current_dir().context("the current directory")?;
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    // pi's SessionManager resolves the header's cwd (`resolvePath`), or uses its own cwd
    // when the header has none; forkFrom resolves the target cwd the same way.
    let cwd = match (&args.cwd, args.all, session.header.get("cwd")) {
        (Some(dir), _, _) => fork::resolve_path(dir, &here, home.as_deref()),
        (None, true, _) => fork::resolve_path(&here.to_string_lossy(), &here, home.as_deref()),
        (None, false, Some(Value::String(c))) => fork::resolve_path(c, &here, home.as_deref()),
        (None, false, _) => here.to_string_lossy().into_owned(),
    };
    let timestamp = write::now_iso();
    let id = if args.linear { session.session_id().to_string() } else { fork::new_session_id() };
    let parent_session = match (&source.path, args.linear) {
        (Some(p), false) => Some(fork::resolve_path(&p.to_string_lossy(), &here, None)),
        _ => None,
    };
    let header = fork::header_line(&id, &timestamp, &cwd, parent_session.as_deref());

    let file_name = if args.linear {
        format!("session-{}.jsonl", timestamp.replace([':', '.'], "-"))
    } else {
        fork::file_name(&timestamp, &id)
    };
    let out_path = match &args.output {
        Some(o) => o.clone(),
        None => output_dir(ctx, &args, &source.path, &cwd, home.as_deref())?.join(file_name),
    };
    write::write_new_file(&out_path, |w| plan.write_to(&header, w))
        .with_context(|| format!("could not write the fork of {}", session.name))?;

    let mut err = std::io::stderr().lock();
    for n in &plan.notes {
        let _ = writeln!(err, "pisces: note: {n}");
    }
    if source.path.is_none() && !args.linear {
        let _ =
            writeln!(err, "pisces: note: the source came from standard input, so the new header has no parentSession");
    }
    let shown = out_path.display().to_string();
    let entry_count = plan.lines.len();
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            let mut doc = json!({
                "version": 1,
                "path": shown,
                "id": id,
                "entryCount": entry_count,
                "cwd": cwd,
                "parentSession": parent_session,
                "source": { "file": session.name, "id": session.session_id() },
                "leafId": plan.copied.last().filter(|_| !args.all).map_or(Value::Null, |&i| session.id_value(i)),
                "labels": { "dropped": plan.labels_dropped, "reemitted": plan.labels_emitted },
            });
            if let Some(t) = &target {
                doc["target"] = json!({ "id": t.id, "line": t.line });
                if let Some(text) = &t.text {
                    doc["text"] = text.clone().into();
                }
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => match target.and_then(|t| t.text.map(|text| (t.line, text))) {
            Some((line, text)) => {
                let _ = writeln!(err, "pisces: forked before the user message on line {line}: {shown}");
                out.write_all(text.as_bytes())?;
                if !text.ends_with('\n') {
                    out.write_all(b"\n")?;
                }
            }
            None => writeln!(out, "{shown}")?,
        },
    }
    out.flush()?;
    Ok(0)
}

/// The leaf of the fork (`None`: no entries) for REV, and what REV named.
fn resolve_target(session: &Session, rev: &str, before: bool) -> anyhow::Result<(Option<u32>, Target)> {
    let i = rev::resolve(session, rev)?;
    let e = &session.entries[i as usize];
    let mut target = Target { id: session.id_value(i), line: e.line, text: None };
    if !before {
        return Ok((Some(i), target));
    }
    if e.kind != EntryType::Message || e.role != Role::User {
        let what = if e.kind == EntryType::Message {
            let role = session.parse(i).ok().and_then(|v| v.pointer("/message/role").cloned());
            format!("a message with role {}", role.map_or("(none)".into(), |r| r.to_string()))
        } else {
            format!("a `{}` entry", e.kind.name())
        };
        bail!(
            "REV `{rev}` names {what} (line {}), not a user message\n  --before forks before a user message, as pi's /fork does (the message is left out and printed to be sent again); without --before the fork ends at the entry itself, as pi's /clone does",
            e.line
        );
    }
    let message = session.parse(i).with_context(|| format!("line {} cannot be read", e.line))?;
    target.text = Some(fork::user_text(message.get("message").unwrap_or(&Value::Null)));
    Ok((session.parent(i), target))
}

/// Where the new file goes when -o is not given.
fn output_dir(
    ctx: &Ctx,
    args: &Args,
    source_path: &Option<PathBuf>,
    cwd: &str,
    home: Option<&Path>,
) -> anyhow::Result<PathBuf> {
    if let Some(d) = &ctx.search.session_dir {
        return Ok(d.clone());
    }
    if args.linear {
        // pi's /export writes `session-<time>.jsonl` into the current directory.
        return Ok(PathBuf::new());
    }
    if args.all {
        // Where `pi --fork` run in that directory puts it: $PI_CODING_AGENT_SESSION_DIR,
        // else the project's folder under the agent directory (created, as pi does).
        if let Some(d) = std::env::var_os("PI_CODING_AGENT_SESSION_DIR").filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(d));
        }
        let agent = match std::env::var("PI_CODING_AGENT_DIR").ok().filter(|d| !d.is_empty()) {
            // pi expands a leading `~` in it and takes the rest as it is.
            Some(d) => match (d.strip_prefix("~"), home) {
                (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                    h.join(rest.trim_start_matches('/'))
                }
                _ => PathBuf::from(d),
            },
            None => match home {
                Some(h) => h.join(".pi").join("agent"),
                None => bail!("HOME is not set, so pi's session folder is unknown; give --session-dir DIR or -o FILE"),
            },
        };
        let dir = fork::default_session_dir(&agent, cwd);
        std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
        return Ok(dir);
    }
    match source_path {
        Some(p) => Ok(p.parent().map(Path::to_path_buf).unwrap_or_default()),
        None => bail!("the session came from standard input, so it has no directory to fork into; give -o FILE or --session-dir DIR"),
    }
}
