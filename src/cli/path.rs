//! `pisces path SESSION [REV]`: the context the model saw at a leaf.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::{BufWriter, Write};

use clap::ValueEnum;
use serde::Serialize;
use serde_json::{json, Value};

use super::{open_source, report_diagnostics, session_json, Ctx, ExitStatus};
use crate::llm::wire::{self, ModelRef};
use crate::render::transcript::{self, TranscriptHead};
use crate::session::context::{self, Projection};
use crate::session::{js, rev, system, Session};

const EXAMPLES: &str = "\
Examples:
  pisces path session.jsonl                      # the context at pi's current leaf
  pisces path session.jsonl fix-1 --format json  # at the entry labelled fix-1, as JSON
  pisces path session.jsonl @~2 --format llm     # two entries up, as pi sends it to the LLM
  pisces path session.jsonl a3f9 --entries > branch.jsonl   # the path's raw lines
  pisces path 01a228be --format anthropic --system | jq .   # a session id prefix";

/// Print the context the model saw at a leaf (pi's buildSessionContext + convertToLlm).
///
/// Follows the path from REV back to the root, applies the latest compaction on it,
/// branch summaries, custom messages and context edits exactly as pi 1.6.0 does, and
/// prints the result. Nothing is written to the session file.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The leaf to project (default `@`, pi's current leaf: the last entry in the file).
    #[arg(conflicts_with = "leaf_null")]
    pub rev: Option<String>,

    /// Output format [default: text on a terminal, json when piped].
    #[arg(long, short, value_enum)]
    pub format: Option<Format>,

    /// Project pi's null leaf (before the first entry): an empty context.
    #[arg(long)]
    pub leaf_null: bool,

    /// Print the raw JSONL lines of the path's entries instead (root first), unchanged.
    #[arg(long, conflicts_with_all = ["format", "system", "leaf_null"])]
    pub entries: bool,

    /// Include the system prompt and tool declarations replayed from the path's system
    /// messages (pi 1.6).
    #[arg(long)]
    pub system: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable transcript.
    Text,
    /// The transcript as Markdown, for an issue or a pull request.
    Markdown,
    /// pi's AgentMessages, exactly as buildSessionContext returns them.
    Json,
    /// The same object with `messages` = convertToLlm's output (what pi hands the provider layer).
    Llm,
    /// An OpenAI Chat Completions request body (`messages`, `tools`).
    Openai,
    /// An Anthropic Messages request body (`system`, `messages`, `tools`).
    Anthropic,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let source = open_source(ctx, &args.session)?;
    // A line that looked whole to the index may fail to parse whole; pi would have
    // skipped it, so read the file again treating it as malformed.
    let mut damaged = BTreeSet::new();
    let (session, projection) = loop {
        let session = Session::load_excluding(&source, &damaged)?;
        let leaf = match (&args.rev, args.leaf_null) {
            (_, true) => None,
            (Some(r), false) => Some(rev::resolve(&session, r)?),
            (None, false) => session.default_leaf(),
        };
        match context::project(&session, leaf) {
            Ok(p) => break (session, p),
            Err(context::Damaged(lines)) => damaged.extend(lines),
        }
    };
    report_diagnostics(ctx, &session)?;

    // Stdout is line-buffered; a JSON document has a newline per value.
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if args.entries {
        for &i in &projection.path {
            out.write_all(session.raw_line(i))?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        return Ok(0);
    }
    let format = args.format.unwrap_or(if ctx.ui.stdout_tty { Format::Text } else { Format::Json });
    match format {
        Format::Text | Format::Markdown => {
            let name = session.name_of_session();
            let leaf_id = projection.leaf.map(|l| session.display_id(l).into_owned());
            let head = TranscriptHead {
                file: &session.name,
                session_name: name.as_deref(),
                leaf: leaf_id.as_deref(),
                model: model_name(&projection),
                thinking_level: projection.thinking_level.as_ref().map(|t| js::to_js_string(Some(t))),
                system: args.system.then(|| system_view(&projection.messages)),
            };
            if format == Format::Text {
                transcript::write_text(&mut out, &ctx.ui, &head, &projection.messages)?;
            } else {
                transcript::write_markdown(&mut out, &head, &projection.messages)?;
            }
        }
        Format::Json | Format::Llm => {
            let doc = document(&session, &projection, format == Format::Llm, args.system);
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Openai | Format::Anthropic => {
            let llm = context::convert_to_llm(&projection.messages);
            let model = model_ref(&projection);
            let body = if format == Format::Openai {
                wire::openai_request(&llm, &model)
            } else {
                // Some Anthropic models carry the requested effort inside `messages`.
                let thinking_level = projection.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string);
                wire::anthropic_request_with(&llm, &model, &wire::RequestOptions { thinking_level })
            };
            serde_json::to_writer_pretty(&mut out, &body)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(0)
}

fn model_name(p: &Projection) -> Option<String> {
    let m = p.model.as_ref()?;
    let s = |k| js::to_js_string(m.get(k));
    Some(format!("{}/{}", s("provider"), s("modelId")))
}

fn model_ref(p: &Projection) -> ModelRef {
    let get = |k: &str| p.model.as_ref().and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or_default().to_string();
    ModelRef { provider: get("provider"), id: get("modelId") }
}

/// The replayed system prompt and tool names, for `--system` in text formats.
fn system_view(messages: &[Value]) -> (String, Vec<String>) {
    let tools = system::current_tools(messages).iter().map(|t| js::to_js_string(t.get("name"))).collect();
    (system::current_system_prompt(messages), tools)
}

/// The `--format json|llm` document (versioned; see README "JSON output"). Serialized
/// straight from borrowed parts: a 1 GB session's path has hundreds of thousands of ids.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PathDocument<'a> {
    version: u32,
    session: Value,
    leaf_id: Value,
    leaf_line: Option<u32>,
    model: &'a Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_level: &'a Option<Value>,
    path_ids: PathIds<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Value>,
    messages: Cow<'a, [Value]>,
}

/// Ids of the path's entries, serialized without copying them.
struct PathIds<'a>(&'a Session<'a>, &'a [u32]);

impl Serialize for PathIds<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = ser.serialize_seq(Some(self.1.len()))?;
        for &i in self.1 {
            match self.0.id(i) {
                Some(id) if !id.starts_with('\0') => seq.serialize_element(id)?,
                _ => seq.serialize_element(&self.0.id_value(i))?,
            }
        }
        seq.end()
    }
}

fn document<'a>(session: &'a Session, p: &'a Projection, llm: bool, with_system: bool) -> PathDocument<'a> {
    let system = with_system.then(|| {
        json!({
            "prompt": system::current_system_prompt(&p.messages),
            "tools": system::current_tools(&p.messages),
            "replayed": system::current_system_message(&p.messages),
        })
    });
    PathDocument {
        version: 1,
        session: session_json(session),
        leaf_id: p.leaf.map_or(Value::Null, |l| session.id_value(l)),
        leaf_line: p.leaf.map(|l| session.entries[l as usize].line),
        model: &p.model,
        thinking_level: &p.thinking_level,
        // pi's getBranch(leafId) starts from the leaf's id: a leaf without one (a last line
        // that is JSON but no object) gives an empty branch, though the context is built
        // from it.
        path_ids: PathIds(session, if p.leaf.is_some_and(|l| session.id(l).is_none()) { &[] } else { &p.path }),
        system,
        messages: if llm { Cow::Owned(context::convert_to_llm(&p.messages)) } else { Cow::Borrowed(&p.messages) },
    }
}
