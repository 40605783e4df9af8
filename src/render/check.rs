//! `pisces check` for people (`file:line: level: message` and its hint) and programs (a
//! versioned JSON document).

use std::io::Write;

use serde::Serialize;

use super::{sanitize, Paint, Ui};
use crate::session::check::{FileReport, Level};

/// One file's findings (`verbose`: the info ones too). File names and messages may come
/// from strangers: both are made safe for the terminal.
pub fn write_file(out: &mut dyn Write, ui: &Ui, r: &FileReport, verbose: bool) -> std::io::Result<()> {
    let file = super::safe::name(&r.file);
    for f in r.findings.iter().filter(|f| verbose || f.level != Level::Info) {
        let at = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        let level = match f.level {
            Level::Error => ui.paint(Paint::Error, "error"),
            Level::Warning => ui.paint(Paint::Label, "warning"),
            Level::Info => ui.paint(Paint::Dim, "info"),
        };
        writeln!(out, "{file}{at}: {level}: {}", sanitize(&f.message))?;
        if !f.hint.is_empty() {
            writeln!(out, "  {}", ui.paint(Paint::Dim, &format!("hint: {}", f.hint)))?;
        }
    }
    Ok(())
}

/// The closing line: how many files, how many of each kind.
pub fn write_summary(out: &mut dyn Write, reports: &[FileReport]) -> std::io::Result<()> {
    let s = Summary::of(reports);
    if reports.len() == 1 && s.problems + s.unreadable == 0 {
        return writeln!(out, "{}: clean", super::safe::name(&reports[0].file));
    }
    let errors: usize = reports.iter().map(|r| r.errors).sum();
    let warnings: usize = reports.iter().map(|r| r.warnings).sum();
    writeln!(
        out,
        "{} file{} checked: {} clean, {} with problems ({errors} error{}, {warnings} warning{}){}",
        s.files,
        plural(s.files),
        s.clean,
        s.problems,
        plural(errors),
        plural(warnings),
        if s.unreadable > 0 { format!(", {} unreadable", s.unreadable) } else { String::new() }
    )
}

/// `check --format json`.
#[derive(Serialize)]
struct CheckDocument<'r> {
    version: u32,
    files: &'r [FileReport],
    summary: Summary,
}

/// How many files were clean, had problems, could not be read.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Summary {
    pub files: usize,
    pub clean: usize,
    pub problems: usize,
    pub unreadable: usize,
}

impl Summary {
    pub fn of(reports: &[FileReport]) -> Summary {
        let count = |s: &str| reports.iter().filter(|r| r.status == s).count();
        Summary {
            files: reports.len(),
            clean: count("clean"),
            problems: count("problems"),
            unreadable: count("unreadable"),
        }
    }
}

pub fn write_json(out: &mut dyn Write, reports: &[FileReport]) -> std::io::Result<()> {
    let doc = CheckDocument { version: 1, files: reports, summary: Summary::of(reports) };
    super::json::write_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
