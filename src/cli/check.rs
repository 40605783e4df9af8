//! `pisces check SESSION...`: validate session files and report every problem.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{Ctx, ExitStatus};
use crate::render::{sanitize, Paint};
use crate::session::check::{check, Finding, Level};
use crate::session::locate::{locate, SessionArg};
use crate::session::{LoadError, Source};

const EXAMPLES: &str = "\
Examples:
  pisces check session.jsonl                    # one file
  pisces check ~/.pi/agent/sessions             # every .jsonl below a directory
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
    /// Session files, directories (searched for *.jsonl), session ids, or `-`.
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

/// One file's result (`--format json`: an element of `files`).
#[derive(Serialize)]
struct FileReport {
    file: String,
    /// `clean`, `problems` or `unreadable`.
    status: &'static str,
    errors: usize,
    warnings: usize,
    infos: usize,
    findings: Vec<Finding>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let mut inputs = Vec::new();
    for arg in &args.sessions {
        expand(ctx, arg, &mut inputs);
    }
    let started = Instant::now();
    let progress = indicatif::ProgressBar::hidden();
    progress.set_length(inputs.len() as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("checking {pos}/{len} {wide_msg}").expect("a valid template"),
    );
    let show_progress = std::io::stderr().is_terminal() && inputs.len() > 1;

    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut reports = Vec::new();
    for input in inputs {
        // Shown only when the run takes more than a second.
        if show_progress && started.elapsed() > Duration::from_secs(1) && progress.is_hidden() {
            progress.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        let name = match &input {
            Ok(SessionArg::Path(p)) => p.display().to_string(),
            Ok(SessionArg::Stdin) => "<stdin>".into(),
            Err((arg, _)) => arg.clone(),
        };
        progress.set_message(name.clone());
        let report = check_one(&name, input);
        if args.format == Format::Text {
            write_text(&mut out, ctx, &report, args.verbose)?;
        }
        reports.push(report);
        progress.inc(1);
    }
    progress.finish_and_clear();

    let count = |s: &str| reports.iter().filter(|r| r.status == s).count();
    let (clean, problems, unreadable) = (count("clean"), count("problems"), count("unreadable"));
    match args.format {
        Format::Json => {
            let doc = serde_json::json!({
                "version": 1,
                "files": reports,
                "summary": {"files": reports.len(), "clean": clean, "problems": problems, "unreadable": unreadable},
            });
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Text if reports.len() > 1 || problems + unreadable > 0 => {
            let errors: usize = reports.iter().map(|r| r.errors).sum();
            let warnings: usize = reports.iter().map(|r| r.warnings).sum();
            writeln!(
                out,
                "{} file{} checked: {clean} clean, {problems} with problems ({errors} error{}, {warnings} warning{}){}",
                reports.len(),
                plural(reports.len()),
                plural(errors),
                plural(warnings),
                if unreadable > 0 { format!(", {unreadable} unreadable") } else { String::new() }
            )?;
        }
        Format::Text => writeln!(out, "{}: clean", reports[0].file)?,
    }
    out.flush()?;
    Ok(if unreadable > 0 {
        2
    } else if problems > 0 {
        1
    } else {
        0
    })
}

type Input = Result<SessionArg, (String, String)>;

/// A SESSION argument as files: a directory gives every `*.jsonl` below it, sorted.
fn expand(ctx: &Ctx, arg: &str, inputs: &mut Vec<Input>) {
    let path = Path::new(arg);
    if path.is_dir() {
        let mut files = Vec::new();
        walk(path, &mut files);
        files.sort();
        inputs.extend(files.into_iter().map(|p| Ok(SessionArg::Path(p))));
        return;
    }
    inputs.push(locate(arg, &ctx.search).map_err(|e| (arg.to_string(), e.to_string())));
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    for e in read.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

fn check_one(name: &str, input: Input) -> FileReport {
    let unreadable = |message: String| FileReport {
        file: name.to_string(),
        status: "unreadable",
        errors: 1,
        warnings: 0,
        infos: 0,
        findings: vec![Finding { level: Level::Error, kind: "unreadable", line: None, message, hint: "" }],
    };
    let source = match input {
        Err((_, e)) => return unreadable(e),
        Ok(SessionArg::Stdin) => Source::stdin(),
        Ok(SessionArg::Path(p)) => Source::open(&p),
    };
    let source = match source {
        Ok(s) => s,
        Err(e) => return unreadable(e.to_string()),
    };
    let findings = match check(&source) {
        Ok(f) => f,
        Err(LoadError::Empty { .. }) => vec![Finding {
            level: Level::Error,
            kind: "empty",
            line: None,
            message: "empty file (0 bytes): no session header".into(),
            hint: "pi writes a new header into an empty file when it opens it; delete the file if it is not meant to be a session",
        }],
        Err(LoadError::NotASession { line, reason, .. }) => vec![Finding {
            level: Level::Error,
            kind: "no-header",
            line,
            message: format!("not a valid pi session: {reason}"),
            hint: "pi 1.6 refuses to open the file (0.73 overwrote it); a pi session starts with a `session` header line",
        }],
        Err(e) => return unreadable(e.to_string()),
    };
    let n = |l: Level| findings.iter().filter(|f| f.level == l).count();
    let (errors, warnings, infos) = (n(Level::Error), n(Level::Warning), n(Level::Info));
    FileReport {
        file: name.to_string(),
        status: if errors + warnings > 0 { "problems" } else { "clean" },
        errors,
        warnings,
        infos,
        findings,
    }
}

fn write_text(out: &mut dyn Write, ctx: &Ctx, r: &FileReport, verbose: bool) -> std::io::Result<()> {
    for f in r.findings.iter().filter(|f| verbose || f.level != Level::Info) {
        let at = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        let level = match f.level {
            Level::Error => ctx.ui.paint(Paint::Error, "error"),
            Level::Warning => ctx.ui.paint(Paint::Label, "warning"),
            Level::Info => ctx.ui.paint(Paint::Dim, "info"),
        };
        writeln!(out, "{}{at}: {level}: {}", r.file, sanitize(&f.message))?;
        if !f.hint.is_empty() {
            writeln!(out, "  {}", ctx.ui.paint(Paint::Dim, &format!("hint: {}", f.hint)))?;
        }
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
