//! The context at a leaf, written in each of `pisces path`'s formats: the transcript
//! (`transcript`), the JSON documents, and the request bodies of the two wire APIs.

use std::borrow::Cow;
use std::io::Write;

use clap::ValueEnum;
use serde::Serialize;
use serde_json::{json, Value};

use super::json::SessionJson;
use super::transcript::{self, TranscriptHead};
use super::Ui;
use crate::llm::wire::{self, ModelRef};
use crate::session::projection::Projection;
use crate::session::{js, system, EntryIdx, Session};

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
    /// An OpenAI Responses request body (`model`, `input`): a Codex session's as the client
    /// sends it.
    #[value(name = "openai-responses")]
    OpenaiResponses,
}

/// Writes `p` in `format`. `system`: with the replayed system prompt and tools.
pub fn write(
    w: &mut dyn Write,
    ui: &Ui,
    session: &Session,
    p: &Projection,
    format: Format,
    system: bool,
) -> anyhow::Result<()> {
    match format {
        Format::Text | Format::Markdown => {
            let leaf_id = p.leaf.map(|l| session.display_id(l).into_owned());
            let head = TranscriptHead {
                file: &session.file,
                session_name: session.title.as_deref(),
                leaf: leaf_id.as_deref(),
                model: model_name(p),
                thinking_level: p.thinking_level.as_ref().map(|t| js::to_js_string(Some(t))),
                system: system.then(|| system_view(&p.messages)),
            };
            if format == Format::Text {
                transcript::write_text(w, ui, &head, &p.messages)?;
            } else {
                // No colors in Markdown: all of it goes through the terminal filter.
                transcript::write_markdown(&mut super::Safe::new(&mut *w), &head, &p.messages)?;
            }
        }
        Format::Json | Format::Llm => {
            let llm = (format == Format::Llm).then(|| session.dialect().llm_messages(p));
            write_document(&mut *w, &document(session, p, llm, system))?;
            writeln!(w)?;
        }
        Format::OpenaiResponses => {
            let input = match &p.responses {
                Some(input) => Cow::Borrowed(input.as_slice()),
                None => Cow::Owned(wire::responses::input(&session.dialect().llm_messages(p))),
            };
            super::json::write_pretty(&mut *w, &json!({"model": model_ref(p).id, "input": input}))?;
            writeln!(w)?;
        }
        Format::Openai | Format::Anthropic => {
            let llm = session.dialect().llm_messages(p);
            let model = model_ref(p);
            let body = if let (Format::Anthropic, Some(messages)) = (format, &p.anthropic) {
                json!({"model": model.id, "messages": messages})
            } else if format == Format::Openai {
                session.dialect().openai_request(&llm, &model)
            } else {
                // Some Anthropic models carry the requested effort inside `messages`.
                let thinking_level = p.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string);
                wire::anthropic_request_with(&llm, &model, &wire::RequestOptions { thinking_level })
            };
            super::json::write_pretty(&mut *w, &body)?;
            writeln!(w)?;
        }
    }
    Ok(())
}

/// `--entries`: the raw lines of the path's entries, root first, byte for byte.
pub fn write_entries(w: &mut dyn Write, session: &Session, path: &[EntryIdx]) -> std::io::Result<()> {
    for &i in path {
        w.write_all(session.raw_line(i))?;
        w.write_all(b"\n")?;
    }
    Ok(())
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
    session: SessionJson<'a>,
    leaf_id: Value,
    leaf_line: Option<crate::session::LineNo>,
    model: &'a Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_level: &'a Option<Value>,
    path_ids: PathIds<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    settings: &'a Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Value>,
    messages: Cow<'a, [Value]>,
}

/// Ids of the path's entries, serialized without copying them.
struct PathIds<'a>(&'a Session<'a>, &'a [EntryIdx]);

impl Serialize for PathIds<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = ser.serialize_seq(Some(self.1.len()))?;
        for &i in self.1 {
            match self.0.id_str(i) {
                Some(id) => seq.serialize_element(id)?,
                None => seq.serialize_element(&self.0.id_value(i))?,
            }
        }
        seq.end()
    }
}

/// Writes `d` as `write_pretty` would (the derived `Serialize` stays the reference the
/// test compares with), but its path's ids by hand: through serde's calls, one an id, the
/// 270,000 ids of a 1 GB session's path were a sixth of `path`'s time when the session
/// comes from its kept index.
fn write_document(w: &mut dyn Write, d: &PathDocument) -> std::io::Result<()> {
    let mut m = super::json::Members::new(std::io::BufWriter::with_capacity(64 << 10, w))?;
    m.field("version", &d.version)?;
    m.field("session", &d.session)?;
    m.field("leafId", &d.leaf_id)?;
    m.field("leafLine", &d.leaf_line)?;
    m.field("model", d.model)?;
    if d.thinking_level.is_some() {
        m.field("thinkingLevel", d.thinking_level)?;
    }
    let PathIds(session, path) = &d.path_ids;
    m.strings("pathIds", path.iter().map(|&i| session.id_str(i).ok_or_else(|| session.id_value(i))))?;
    if d.settings.is_some() {
        m.field("settings", d.settings)?;
    }
    if d.system.is_some() {
        m.field("system", &d.system)?;
    }
    m.field("messages", &d.messages)?;
    m.end()?.flush()
}

fn document<'a>(
    session: &'a Session,
    p: &'a Projection,
    llm: Option<Vec<Value>>,
    with_system: bool,
) -> PathDocument<'a> {
    let system = with_system.then(|| {
        json!({
            "prompt": system::current_system_prompt(&p.messages),
            "tools": system::current_tools(&p.messages),
            "replayed": system::current_system_message(&p.messages),
        })
    });
    PathDocument {
        version: 1,
        session: SessionJson::of(session),
        leaf_id: p.leaf.map_or(Value::Null, |l| session.id_value(l)),
        leaf_line: p.leaf.map(|l| session.entries[l].line),
        model: &p.model,
        thinking_level: &p.thinking_level,
        // pi's getBranch(leafId) starts from the leaf's id: a leaf without one (a last line
        // that is JSON but no object) gives an empty branch, though the context is built
        // from it.
        path_ids: PathIds(session, if p.leaf.is_some_and(|l| session.id(l).is_none()) { &[] } else { &p.path }),
        settings: &p.settings,
        system,
        messages: match llm {
            Some(m) => Cow::Owned(m),
            None => Cow::Borrowed(&p.messages),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{open, Source};

    /// The document written member by member is byte for byte serde's, at every leaf of
    /// every corpus file (odd ids, non-string ids, empty paths, each format), with and
    /// without the system part and the LLM messages.
    #[test]
    fn the_document_written_by_hand_is_serdes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        // Ids no corpus file has: a number, an object, strings with escapes.
        let odd = concat!(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}"#,
            "\n",
            r#"{"type":"message","id":42,"parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","id":{"a":[1,{"b":null}],"c":{}},"parentId":42,"timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"more","timestamp":2}}"#,
            "\n",
            r#"{"type":"message","id":"q\"x\u0001\\é","parentId":{"a":[1,{"b":null}],"c":{}},"timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"end","timestamp":3}}"#,
            "\n",
            r#"{"type":"message","id":"tab\tonly","parentId":"q\"x\u0001\\é","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"user","content":"last","timestamp":4}}"#,
            "\n",
        );
        let mut inputs: Vec<(std::path::PathBuf, Vec<u8>)> = vec![("odd.jsonl".into(), odd.as_bytes().to_vec())];
        for dir in ["edge", "pi-1.6.0", "pi-0.73.1", "claude-code-2.1.332", "codex-0.171.0", "omp-18.2.3"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort();
            inputs.extend(
                files
                    .into_iter()
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .map(|p| (p.clone(), std::fs::read(p).unwrap())),
            );
        }
        let mut compared = 0;
        let mut odd_ids = 0;
        for (path, bytes) in inputs {
            let open = || Ok(vec![Source::from_bytes("t.jsonl", bytes.clone())]);
            let Ok(n) = open::read(&open, crate::formats::ALL, &mut |_| Ok(()), |sessions, _| {
                let s = &sessions[0];
                let mut n = 0;
                let leaves = s.leaves().into_iter().map(Some).chain([None]);
                for leaf in leaves {
                    let Ok(p) = s.dialect().project(s, leaf) else { continue };
                    odd_ids +=
                        p.path.iter().filter(|&&i| s.id_str(i).is_none_or(|id| id.contains(['"', '\t']))).count();
                    for (llm, system) in [(false, false), (true, true)] {
                        let llm = llm.then(|| s.dialect().llm_messages(&p));
                        let d = document(s, &p, llm, system);
                        let (mut fast, mut slow) = (Vec::new(), Vec::new());
                        write_document(&mut fast, &d).unwrap();
                        crate::render::json::write_pretty(&mut slow, &d).unwrap();
                        assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow), "{path:?}");
                        n += 1;
                    }
                }
                Ok(n)
            }) else {
                continue;
            };
            compared += n;
        }
        assert!(compared > 200, "{compared}");
        assert!(odd_ids >= 8, "{odd_ids}");
    }
}
