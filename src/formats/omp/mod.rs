//! oh-my-pi's session files (docs/omp-format.md): pi's JSONL tree with a fixed-width title
//! line before the header, entry types of its own, images kept as blobs beside the store,
//! and a context builder of its own.
//!
//! Reading is pi's (`formats::pi`, with the title line stripped as omp strips it); what
//! omp does otherwise lives here: the context its session manager builds (`context`), the
//! title (`title`), blobs (`blobs`), the tree's texts for its entry types (`rows`), usage
//! (`usage`) and the files `omp` itself writes for a fork (`fork`).

pub mod blobs;
pub mod context;
pub mod fork;
mod llm;
mod prompt;
pub mod rows;
mod snapcompact;
mod spill;
mod subagents;
pub mod title;
pub mod usage;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use super::pi::load::{load_as, load_kept, Flavor};
use super::pi::{self, Pi};
use crate::session::entry::{EntryIdx, LineNo};
use crate::session::format::{Dialect, Fit, Format, FormatInfo, Response, RowNeed, Unreadable, Unsupported};
use crate::session::projection::Projection;
use crate::session::rows::Rows;
use crate::session::usage::Totals;
use crate::session::write::Writer;
use crate::session::{LoadError, Session, Source};

pub static INFO: FormatInfo = FormatInfo { name: "omp", agent: "oh-my-pi" };

pub struct OmpFormat;

pub static OMP: OmpFormat = OmpFormat;

/// Entry types oh-my-pi 18 writes that pi does not (src/session/session-entries.ts).
pub const OWN_TYPES: &[&str] = &[
    "model_usage",
    "service_tier_change",
    "reset_boundary",
    "ttsr_injection",
    "credential_pin",
    "session_init",
    "mode_change",
    "title_change",
    "mcp_tool_selection",
];

/// Message roles oh-my-pi 18 writes that pi does not (src/session/messages.ts): all are
/// sent to the model (`llm.rs`).
pub const OWN_ROLES: &[&str] = &["pythonExecution", "fileMention", "developer"];

/// The roles among them whose messages have no `content` (their fields are their own).
const CONTENTLESS_ROLES: &[&str] = &["pythonExecution", "fileMention"];

/// The lines of messages in a role of [`CONTENTLESS_ROLES`].
fn contentless_lines(s: &Session) -> BTreeSet<LineNo> {
    s.entries
        .enumerate()
        .filter(|(_, e)| e.kind == crate::session::entry::EntryType::Message && e.role == crate::session::Role::Other)
        .filter(|&(i, _)| {
            let v = crate::session::js::parse_value(s.raw_line(i)).unwrap_or_default();
            v["message"]["role"].as_str().is_some_and(|r| CONTENTLESS_ROLES.contains(&r))
        })
        .map(|(_, e)| e.line)
        .collect()
}

/// Entry `i`'s type when it is one of omp's own ([`OWN_TYPES`]), read from its first keys.
pub fn own_type(s: &Session, i: EntryIdx) -> Option<&'static str> {
    if s.entries[i].kind != crate::session::entry::EntryType::Other {
        return None;
    }
    let fields = pi::scan::object_fields(s.raw_line(i))?;
    let ty = fields.ty?;
    OWN_TYPES.iter().copied().find(|&t| t == ty)
}

impl Format for OmpFormat {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    /// `Own` when the file starts with omp's title slot, or when a pi-shaped header is
    /// followed (within the sniffed bytes) by an entry only omp writes: one of its own
    /// types, or a `model_change` naming its model as `provider/id` (pi writes `provider`
    /// and `modelId`). Files from before omp 16.3 have no title slot; the first
    /// `model_change` omp writes at a session's start marks them.
    fn sniff(&self, head: &[u8]) -> Fit {
        let mut lines = head.split(|&b| b == b'\n');
        let Some(first) = lines.next() else { return Fit::No };
        // Its first line is a title slot (`"type": "title"`) or a header (`"session"`).
        let may_hold = |s: &[u8]| crate::session::format::may_hold_any(first, &[s]);
        if may_hold(b"\"title\"") && title::slot(first).is_some() {
            return Fit::Own;
        }
        if !may_hold(b"\"session\"") {
            return Fit::No;
        }
        let header = crate::session::js::parse_value(first.trim_ascii()).ok();
        let is_header = header.as_ref().is_some_and(|v| {
            v.get("type").and_then(Value::as_str) == Some("session") && v.get("id").is_some_and(Value::is_string)
        });
        if !is_header {
            return Fit::No;
        }
        for line in lines.take(64) {
            let Some(fields) = pi::scan::object_fields(line) else { continue };
            let Some(ty) = fields.ty.as_deref() else { continue };
            if OWN_TYPES.contains(&ty) {
                return Fit::Own;
            }
            if ty == "model_change" && memchr::memmem::find(line, b"\"model\":\"").is_some() {
                return Fit::Own;
            }
        }
        Fit::No
    }

    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        let data = source.bytes();
        let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
        let slot = title::slot(first);
        let slot_width = slot.as_ref().map(|_| (first.len() + 1).min(data.len()));
        let flavor = flavor(slot.is_some());
        let blob_dir = source.path.as_deref().and_then(blobs::store_of);
        let mut session = load_as(source, exclude, &flavor, |pi| {
            Box::new(Omp { pi, slot: slot.clone(), slot_width, blob_dir: blob_dir.clone() })
        })?;
        session.title = title::of(&session, slot.as_ref());
        blobs::report_missing(&mut session, blob_dir.as_deref());
        Ok(session)
    }

    /// pi's reading from a kept index (the title slot is the same: a new one would have
    /// changed the file's first bytes, and the index with them), and the blob references
    /// it kept checked again, with the new entries' (a blob deleted since is reported, and
    /// the index is then not kept again).
    fn load_kept<'a>(&'static self, source: &'a Source, mut kept: crate::session::kept::Kept) -> Option<Session<'a>> {
        let data = source.bytes();
        let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
        let slot = title::slot(first);
        let slot_width = slot.as_ref().map(|_| (first.len() + 1).min(data.len()));
        let flavor = flavor(slot.is_some());
        let (pi_part, old_refs) = split_kept(&kept.extra)?;
        kept.extra = pi_part;
        let from = kept.entries.len();
        let blob_dir = source.path.as_deref().and_then(blobs::store_of);
        let mut session = load_kept(source, kept, &flavor, |pi| {
            Box::new(Omp { pi, slot: slot.clone(), slot_width, blob_dir: blob_dir.clone() })
        })?;
        session.title = title::of(&session, slot.as_ref());
        let mut refs = old_refs;
        refs.extend(blobs::refs(&session, from));
        blobs::report(&mut session, blob_dir.as_deref(), refs);
        Some(session)
    }
}

/// pi's reading as omp does it: its own entry types known, and a title slot (`slotted`)
/// skipped before the header.
fn flavor(slotted: bool) -> Flavor {
    Flavor {
        format: "oh-my-pi",
        prelude: u32::from(slotted),
        known_type: |ty| OWN_TYPES.contains(&ty),
        known_role: |role| OWN_ROLES.contains(&role),
        not_a_session: "omp does not open it either (it starts a new session in its place); pisces left it unchanged.",
        relink: None,
    }
}

/// What omp keeps beside the common index: pi's part, and the blob references (checked
/// again on every read: a blob can be deleted without the session changing).
fn keep_omp(omp: &Omp, s: &Session) -> Option<Vec<u8>> {
    let pi_part = omp.pi.keep(s)?;
    let refs: Vec<(u32, String, String)> =
        blobs::refs(s, 0).into_iter().map(|(line, id, hash)| (line.get(), id, hash)).collect();
    let mut out = (pi_part.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&pi_part);
    out.extend_from_slice(&serde_json::to_vec(&refs).ok()?);
    Some(out)
}

fn split_kept(extra: &[u8]) -> Option<(Vec<u8>, Vec<blobs::BlobRef>)> {
    let (len, rest) = extra.split_first_chunk::<8>()?;
    let (pi_part, refs) = rest.split_at_checked(usize::try_from(u64::from_le_bytes(*len)).ok()?)?;
    let refs: Vec<(u32, String, String)> = serde_json::from_slice(refs).ok()?;
    Some((pi_part.to_vec(), refs.into_iter().map(|(line, id, hash)| (LineNo(line), id, hash)).collect()))
}

/// One omp session: pi's reading of it, its title slot, and where its blobs are.
pub struct Omp {
    pi: Pi,
    /// The title slot as it was read (`None`: the file starts with its header).
    pub slot: Option<title::Slot>,
    /// The title line's width, newline included (omp writes 256 bytes).
    pub slot_width: Option<usize>,
    /// The store's `blobs/` folder, found from the file's place in the store.
    pub blob_dir: Option<PathBuf>,
}

impl Dialect for Omp {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    /// The entry as omp holds it after loading: pi's migrations, and its images' blob
    /// references resolved (a blob that is missing stays a reference, as in omp).
    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        let mut v = self.pi.parse_entry(s, i)?;
        if memchr::memmem::find(s.raw_line(i), blobs::PREFIX.as_bytes()).is_some() {
            blobs::resolve(&mut v, self.blob_dir.as_deref());
        }
        Ok(v)
    }

    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        self.pi.time(s, i)
    }

    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String {
        rows::preview(s, i, max)
    }

    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
        context::project(s, leaf, self.blob_dir.as_deref())
    }

    /// omp's own `convertToLlm` (`llm.rs`), not pi's.
    fn llm_messages(&self, p: &Projection) -> Vec<Value> {
        llm::convert_to_llm(&p.messages)
    }

    fn rows<'s>(&self, s: &'s Session, need: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable> {
        Ok(Box::new(rows::OmpRows::read(s, &self.pi, need)?))
    }

    fn usage(&self, s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
        usage::entry_usage(s, i)
    }

    fn response(&self, s: &Session, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
        usage::response(s, self, i)
    }

    fn writer(&self) -> Result<&dyn Writer, Unsupported> {
        Ok(self)
    }

    fn subagents(&self, s: &Session, i: EntryIdx) -> Vec<crate::session::format::Subagent> {
        subagents::of(s, i)
    }

    fn spilled(&self, s: &Session, i: EntryIdx) -> Vec<crate::session::format::Spilled> {
        spill::of(s, i)
    }

    fn keep(&self, s: &Session) -> Option<Vec<u8>> {
        keep_omp(self, s)
    }

    fn findings(&self, s: &Session) -> Vec<crate::session::check::Finding> {
        let mut out = self.pi.findings(s);
        // (A run of Python or a file mention has no `content`: its fields are its own.)
        if out.iter().any(|f| f.kind == "bad-content") {
            let lines = contentless_lines(s);
            out.retain(|f| f.kind != "bad-content" || f.line.is_none_or(|l| !lines.contains(&l)));
        }
        out.extend(fork::rewrites(self, s));
        out
    }
}
