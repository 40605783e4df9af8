//! pi's session format (docs/pi-format.md): an append-only JSONL tree, a `session` header
//! first, every entry with an `id` and a `parentId`, pi's default leaf the last entry of
//! the file. This module is everything pisces knows about it: reading (`scan`, `load`),
//! the context pi builds at a leaf (`context`), the tree's row texts (`rows`), usage
//! (`usage`), descriptions (`preview`), checks only pi's shapes allow (`check`), and
//! writing forks and appended entries as pi writes them (`fork`, `write`).

pub mod check;
pub mod context;
pub mod convert;
pub mod entries;
pub mod fork;
pub(crate) mod load;
pub mod preview;
pub mod rows;
pub mod scan;
pub mod usage;
pub mod write;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::session::entry::{EntryIdx, LineNo};
use crate::session::format::{Dialect, Fit, Format, FormatInfo, Response, RowNeed, Unreadable, Unsupported};
use crate::session::projection::{convert_to_llm, Projection};
use crate::session::rows::Rows;
use crate::session::usage::Totals;
use crate::session::write::Writer;
use crate::session::{LoadError, Session, Source};

pub static INFO: FormatInfo = FormatInfo { name: "pi", agent: "pi" };

/// The format: detection and loading.
pub struct PiFormat;

pub static PI: PiFormat = PiFormat;

impl Format for PiFormat {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    /// `Yes` when the first line pi would parse is a `session` header with a string id;
    /// `Maybe` otherwise, so that a file no format claims gets pi's precise account of
    /// what is wrong with it.
    fn sniff(&self, head: &[u8]) -> Fit {
        // A header is `"type": "session"`: a head that cannot hold that string has none.
        let is_header = crate::session::format::may_hold_any(head, &[b"\"session\""])
            && head
                .split(|&b| b == b'\n')
                .map(|l| l.trim_ascii())
                .filter(|l| !l.is_empty())
                .find_map(|l| crate::session::js::parse_value(l).ok())
                .is_some_and(|v| {
                    v.get("type").and_then(Value::as_str) == Some("session")
                        && v.get("id").is_some_and(Value::is_string)
                });
        if is_header {
            Fit::Yes
        } else {
            Fit::Maybe
        }
    }

    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        load::load(source, exclude)
    }

    fn load_kept<'a>(&'static self, source: &'a Source, kept: crate::session::kept::Kept) -> Option<Session<'a>> {
        load::load_pi_kept(source, kept)
    }
}

/// Reads a file known to be pi's (one pisces wrote, or the agent's own session) as pi
/// reads it, and runs `step` on it, through [`crate::session::open::read_path`]: a line
/// the parser cannot read makes it load again without that line, as for every command.
pub fn read_path<R>(path: &Path, step: impl FnMut(&Session) -> anyhow::Result<R>) -> anyhow::Result<R> {
    crate::session::open::read_path(path, &[&PI], step)
}

/// A pi file in memory, loaded once (tests).
#[cfg(test)]
pub fn read(source: &Source) -> Result<Session<'_>, LoadError> {
    load::load(source, &BTreeSet::new())
}

/// What one pi file needs beyond the common index: its version and the migrations pi
/// applies in memory when it opens an older file.
#[derive(Debug)]
pub struct Pi {
    /// The header's `version` as pi reads it (`?? 1`).
    pub version: f64,
    /// Version 1: ids and parents are assigned in memory (`L<line>`, linear).
    pub migrate_v1: bool,
    /// Version < 3: `hookMessage` roles are read as `custom`.
    pub migrate_v2: bool,
    /// Positions of `session` lines in pi's parsed-entry list (version-1
    /// `firstKeptEntryIndex`).
    header_ordinals: Vec<u32>,
}

/// What a format that is pi's with additions (oh-my-pi) reuses of pi's reading.
impl Pi {
    /// Entry `i` whole, pi's migrations applied.
    pub(crate) fn parse_entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        load::parse(self, s, i)
    }

    pub(crate) fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        load::line_time(s.raw_line(i))
    }

    pub(crate) fn findings(&self, s: &Session) -> Vec<crate::session::check::Finding> {
        check::findings(self, s)
    }
}

impl Dialect for Pi {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        load::parse(self, s, i)
    }

    fn lines_are_entries(&self) -> bool {
        true
    }

    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        load::line_time(s.raw_line(i))
    }

    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String {
        preview::preview(s, i, max)
    }

    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
        context::project(s, leaf)
    }

    fn llm_messages(&self, p: &Projection) -> Vec<Value> {
        convert_to_llm(&p.messages)
    }

    /// The `session` lines' places (a version-1 file, whose ids are made up on every
    /// read, is not kept).
    fn keep(&self, _s: &Session) -> Option<Vec<u8>> {
        (!self.migrate_v1).then(|| load::encode_ordinals(self))
    }

    fn rows<'s>(&self, s: &'s Session, need: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable> {
        Ok(Box::new(rows::PiRows::read(s, self, need)?))
    }

    fn usage(&self, s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
        usage::entry_usage(s, i)
    }

    fn response(&self, s: &Session, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
        usage::response(s, self, i)
    }

    fn model(&self, s: &Session, i: EntryIdx) -> Result<Option<String>, Unreadable> {
        usage::model(s, self, i)
    }

    fn writer(&self) -> Result<&dyn Writer, Unsupported> {
        Ok(self)
    }

    fn findings(&self, s: &Session) -> Vec<crate::session::check::Finding> {
        check::findings(self, s)
    }
}
