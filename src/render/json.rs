//! Pieces every JSON document shares.

use std::io::Write;

use crate::session::Session;

/// Writes `doc` as indented JSON to `w`. serde's pretty printer writes a document in many
/// small pieces (each indent, quote and comma); through `&mut dyn Write` each is a call
/// that cannot be inlined, which for the 270,000 path ids of a 1 GB session was a quarter
/// of `path`'s time. A local buffer of a known type makes them copies.
pub fn write_pretty(w: &mut dyn Write, doc: &impl serde::Serialize) -> std::io::Result<()> {
    let mut buf = std::io::BufWriter::with_capacity(64 << 10, w);
    serde_json::to_writer_pretty(&mut buf, doc)?;
    buf.flush()
}

/// The `session` object every JSON document carries: the file as given, the header's id,
/// the agent that wrote it, version (1 when absent), cwd, the session name and
/// parentSession.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionJson<'s> {
    pub file: &'s str,
    pub id: &'s str,
    pub agent: &'static str,
    pub version: serde_json::Value,
    pub cwd: Option<&'s serde_json::Value>,
    pub name: Option<&'s str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<&'s serde_json::Value>,
}

impl<'s> SessionJson<'s> {
    pub fn of(session: &'s Session) -> SessionJson<'s> {
        let h = &session.header;
        SessionJson {
            file: &session.file,
            id: &h.id,
            agent: session.format().agent,
            version: h.version.clone().unwrap_or(serde_json::Value::from(1)),
            cwd: h.cwd.as_ref(),
            name: session.title.as_deref(),
            parent_session: h.parent_session.as_ref(),
        }
    }
}

/// A summary request as pi sends it (`summarize` and `compact` dry runs), with
/// pi-oracle's field names.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestDoc<'a> {
    /// `compact`: `history` or `turnPrefix`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub system_prompt: &'static str,
    pub prompt_text: String,
    /// Always 1: the prompt is one user message.
    pub message_count: usize,
    /// Always `null`: pi leaves the output limit to the model.
    pub max_tokens: Option<u64>,
    pub cache_retention: &'static str,
    /// The thinking level sent, `null` for none.
    pub reasoning: Option<&'a str>,
}

impl<'a> RequestDoc<'a> {
    pub fn new(kind: Option<&'static str>, prompt_text: String, reasoning: Option<&'a str>) -> RequestDoc<'a> {
        RequestDoc {
            kind,
            system_prompt: crate::summarize::prompts::SUMMARIZATION_SYSTEM_PROMPT,
            prompt_text,
            message_count: 1,
            max_tokens: None,
            cache_retention: "none",
            reasoning,
        }
    }
}
