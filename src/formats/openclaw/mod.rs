//! OpenClaw's sessions (docs/openclaw-format.md). OpenClaw's agent is pi's SDK: its
//! transcript rows are pi entries under a version-4 header, kept in a SQLite database per
//! agent (`store`), and archived as JSONL files of the same lines. pisces reads them with
//! pi's reader, and writes nothing into OpenClaw's store: a fork or a conversion is a pi
//! session.

mod context;
mod nav;
mod request;
mod rows;
pub mod store;

use std::collections::BTreeSet;

use serde_json::Value;

use super::pi::load::{load_as, Flavor};
use super::pi::{self, Pi};
use crate::env::Env;
use crate::session::entry::{EntryIdx, LineNo};
use crate::session::format::{Dialect, Fit, Format, FormatInfo, RowNeed, Unreadable, Unsupported};
use crate::session::projection::{convert_to_llm, Projection};
use crate::session::rows::Rows;
use crate::session::usage::Totals;
use crate::session::write::{
    now_iso, AppendError, Fork, ForkError, ForkFile, NewSession, Shape, SummaryEntry, SummaryLines, Writer,
};
use crate::session::{LoadError, Session, Source};

pub static INFO: FormatInfo = FormatInfo { name: "openclaw", agent: "OpenClaw" };

pub struct OpenClawFormat;

pub static OPENCLAW: OpenClawFormat = OpenClawFormat;

/// The entry types OpenClaw writes beyond pi's: navigation controls and `/reset`
/// boundaries (docs/openclaw-format.md §3).
const OWN_TYPES: &[&str] = &["leaf", "reset"];

/// The header version OpenClaw writes (pi 1.6 writes 3).
const VERSION: f64 = 4.0;

impl Format for OpenClawFormat {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    /// `Own` for a pi header of version 4 followed by OpenClaw's own marks (`__openclaw` on
    /// a user message, `openclaw:` and `openclaw.` custom entries, its `model-snapshot`). A
    /// version-4 header alone is a pi file from a newer pi as far as anyone can tell, and
    /// pi's reader says so (`newer-version`) rather than OpenClaw's staying silent.
    fn sniff(&self, head: &[u8]) -> Fit {
        let first = head.split(|&b| b == b'\n').map(<[u8]>::trim_ascii).find(|l| !l.is_empty());
        // Its first line is a header, `"type": "session"`.
        let first = first.filter(|l| crate::session::format::may_hold_any(l, &[b"\"session\""]));
        let Some(v) = first.and_then(|l| crate::session::js::parse_value(l).ok()) else { return Fit::No };
        let header =
            v.get("type").and_then(Value::as_str) == Some("session") && v.get("id").is_some_and(Value::is_string);
        let marked = |mark: &[u8]| head.windows(mark.len()).any(|w| w == mark);
        if header
            && v.get("version").and_then(Value::as_f64) == Some(VERSION)
            && (marked(b"\"__openclaw\"") || marked(b"\"customType\":\"openclaw") || marked(b"\"model-snapshot\""))
        {
            Fit::Own
        } else {
            Fit::No
        }
    }

    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        let flavor = Flavor {
            format: "OpenClaw",
            prelude: 0,
            known_type: |ty| OWN_TYPES.contains(&ty),
            known_role: |_| false,
            not_a_session: "OpenClaw does not open it either; pisces left it unchanged.",
            relink: Some(nav::relink),
        };
        load_as(source, exclude, &flavor, |pi| Box::new(OpenClaw { pi }))
    }
}

/// One OpenClaw session: pi's reading of it.
pub struct OpenClaw {
    pi: Pi,
}

impl Dialect for OpenClaw {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        self.pi.parse_entry(s, i)
    }

    fn lines_are_entries(&self) -> bool {
        true
    }

    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64> {
        self.pi.time(s, i)
    }

    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String {
        rows::preview(s, i, max)
    }

    /// OpenClaw's context at the leaf (what it adds to each request and does not store
    /// is in docs/openclaw-format.md §5).
    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
        context::project(s, leaf)
    }

    fn llm_messages(&self, p: &Projection) -> Vec<Value> {
        convert_to_llm(&p.messages)
    }

    /// The body as OpenClaw's own Chat Completions layer converts the messages, with its
    /// image captions and strict tool-call ids (docs/openclaw-format.md §5).
    fn openai_request(&self, llm: &[Value], model: &crate::llm::wire::ModelRef) -> Value {
        let mut body = crate::llm::wire::openai_request_by(llm, model, crate::llm::wire::ChatLayer::OpenClaw);
        if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
            request::caption_tool_images(messages, llm);
            request::strict_tool_call_ids(messages);
        }
        body
    }

    fn rows<'s>(&self, s: &'s Session, need: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable> {
        Ok(Box::new(rows::OpenClawRows::read(s, &self.pi, need)?))
    }

    fn usage(&self, s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
        pi::usage::entry_usage(s, i)
    }

    fn writer(&self) -> Result<&dyn Writer, Unsupported> {
        Ok(self)
    }

    fn findings(&self, s: &Session) -> Vec<crate::session::check::Finding> {
        let mut out = self.pi.findings(s);
        // Version 4 is OpenClaw's own, not a pi newer than pisces knows.
        out.retain(|f| f.kind != "newer-version");
        out
    }
}

fn refused(s: &Session, what: &str) -> AppendError {
    AppendError::Refused(format!(
        "{}: pisces does not write into OpenClaw's store ({what}); `pisces fork` and `pisces convert --to pi` make a pi session of it",
        s.file
    ))
}

/// Forks are pi sessions: pi's lines, under a pi header.
impl Writer for OpenClaw {
    fn fork<'s>(&self, s: &Session<'s>, leaf: Option<EntryIdx>, shape: Shape) -> Result<Fork<'s>, ForkError> {
        (&self.pi as &dyn Writer).fork(s, leaf, shape)
    }

    /// A pi session (version 3) in pi's folder for the session's cwd, where `pi --fork`
    /// would put it (`--session-dir` and `-o` choose otherwise); no `parentSession`, since
    /// pi cannot open OpenClaw's database.
    fn fork_file(&self, s: &Session, spec: &ForkFile, env: &Env) -> Result<NewSession, ForkError> {
        let cwd = s.header.cwd_str().map(str::to_string).unwrap_or_else(|| env.cwd_string());
        let timestamp = now_iso();
        let id = pi::fork::new_session_id();
        let header = pi::fork::header_line(&id, &timestamp, &cwd, None);
        let dir = match (&spec.session_dir, &env.pi_session_dir, &env.pi_agent_dir) {
            (Some(d), _, _) | (None, Some(d), _) => d.clone(),
            (None, None, Some(agent)) => pi::fork::default_session_dir(agent, &cwd),
            (None, None, None) => {
                return Err(ForkError::Invalid(
                    "HOME is not set, so pi's session folder is unknown; give --session-dir DIR or -o FILE".into(),
                ))
            }
        };
        let path = spec.output.clone().unwrap_or_else(|| dir.join(pi::fork::file_name(&timestamp, &id)));
        let notes = vec![format!("{} is written as a pi session; OpenClaw's store is not written to", s.file)];
        Ok(NewSession { path, id, header, cwd, parent_session: None, notes, create_dir: spec.output.is_none() })
    }

    fn check_append(&self, s: &Session) -> Result<(), AppendError> {
        Err(refused(s, "appending entries"))
    }

    fn label_line(&self, s: &Session, _: EntryIdx, _: Option<&str>) -> Result<(String, String), AppendError> {
        Err(refused(s, "labels"))
    }

    fn summary_lines(
        &self,
        s: &Session,
        _: Option<&str>,
        _: &SummaryEntry,
        _: Option<&str>,
    ) -> Result<SummaryLines, AppendError> {
        Err(refused(s, "summaries"))
    }
}
