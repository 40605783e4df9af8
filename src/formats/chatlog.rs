//! A format made only for tests, to prove the seam: a linear JSONL chat log.
//!
//! ```text
//! {"chatlog":1,"id":"log-1","title":"a chat"}
//! {"role":"user","text":"hello"}
//! {"role":"assistant","text":"hi"}
//! ```
//!
//! It is not a feature (the registry does not list it). Adding it took this one module:
//! its [`Format`] (detection and loading into the common index) and [`Dialect`] (the
//! context at a leaf, tree rows, usage, no writing), and the tests below, which put it in a
//! registry beside pi's and run the same library code the commands run, unchanged.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::session::check::Finding;
use crate::session::entry::{EntryIdx, EntryMeta, EntryType, LineNo, Owned, Role, StrRef};
use crate::session::format::{Dialect, Fit, Format, FormatInfo, RowNeed, Unreadable, Unsupported};
use crate::session::index::{ChildOrder, Header, Parts};
use crate::session::projection::{convert_to_llm, ProjectedEntry, Projection};
use crate::session::rows::{CallMap, Paths, Rows, Text, Tone, ToolCall};
use crate::session::system::content_text;
use crate::session::usage::Totals;
use crate::session::write::Writer;
use crate::session::{js, LoadError, Session, Source};

static INFO: FormatInfo = FormatInfo { name: "chatlog", agent: "chatlog (tests)" };

pub struct ChatLogFormat;

pub static CHATLOG: ChatLogFormat = ChatLogFormat;

impl Format for ChatLogFormat {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn sniff(&self, head: &[u8]) -> Fit {
        let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
        if !crate::session::format::may_hold_any(first, &[b"\"chatlog\""]) {
            return Fit::No;
        }
        match serde_json::from_slice::<Value>(first) {
            Ok(v) if v.get("chatlog").is_some() => Fit::Yes,
            _ => Fit::No,
        }
    }

    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError> {
        let data = source.bytes();
        let mut lines = data.split(|&b| b == b'\n').enumerate();
        let not_ours = |reason: &str| LoadError::NotASession {
            name: source.name.clone(),
            line: Some(LineNo(1)),
            format: "chatlog",
            reason: reason.into(),
            hint: None,
        };
        let (_, first) = lines.next().ok_or_else(|| not_ours("empty"))?;
        let head: Value = serde_json::from_slice(first).map_err(|_| not_ours("no header"))?;
        let mut entries = Vec::new();
        let mut owned = Owned::default();
        let mut start = first.len() + 1;
        let mut prev = StrRef::NONE;
        for (k, line) in lines {
            let here = start;
            start += line.len() + 1;
            let no = LineNo(k as u32 + 1);
            if line.is_empty() || exclude.contains(&no) || serde_json::from_slice::<Value>(line).is_err() {
                continue;
            }
            let role =
                match serde_json::from_slice::<Value>(line).ok().and_then(|v| v["role"].as_str().map(str::to_string)) {
                    Some(r) if r == "user" => Role::User,
                    Some(r) if r == "assistant" => Role::Assistant,
                    _ => Role::Other,
                };
            let mut e = EntryMeta::new(here, line.len(), no, EntryType::Message, role);
            // Ids the reader makes: `m<line>`, each entry the child of the one before.
            e.id = owned.push(&format!("m{no}"));
            e.parent_id = prev;
            prev = e.id;
            entries.push(e);
        }
        let header = Header {
            id: head["id"].as_str().unwrap_or_default().to_string(),
            line: Some(LineNo(1)),
            raw: head.as_object().cloned().unwrap_or_default(),
            ..Header::default()
        };
        let parts = Parts {
            file: source.name.clone(),
            path: source.path.clone(),
            data,
            header,
            entries,
            owned,
            diagnostics: Vec::new(),
            dialect: Box::new(ChatLog),
            synthetic_ids: true,
        };
        let mut s = Session::build(parts, ChildOrder::File);
        s.title = head["title"].as_str().map(str::to_string);
        Ok(s)
    }
}

/// The chat log's behavior: each line is one message.
struct ChatLog;

/// A line as pi's AgentMessage (pisces's common message shape).
fn message(v: &Value) -> Value {
    let role = v["role"].as_str().unwrap_or("user");
    json!({"role": role, "content": [{"type": "text", "text": v["text"]}], "timestamp": 0})
}

impl Dialect for ChatLog {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable> {
        let line: Value = serde_json::from_slice(s.raw_line(i))
            .map_err(|e| Unreadable { skip: true, ..Unreadable::at(s, i, e.to_string()) })?;
        let parent = s.parent(i).map(|p| s.id_value(p));
        Ok(json!({"type": "message", "id": s.id_value(i), "parentId": parent, "message": message(&line)}))
    }

    fn time(&self, _: &Session, _: EntryIdx) -> Option<f64> {
        None
    }

    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String {
        let v: Value = serde_json::from_slice(s.raw_line(i)).unwrap_or_default();
        crate::session::text::one_line(
            &format!("{}: {}", js::to_js_string(v.get("role")), js::to_js_string(v.get("text"))),
            max,
        )
    }

    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable> {
        let path = leaf.map(|l| s.path_to(l)).unwrap_or_default();
        let mut messages = Vec::new();
        let mut entries = Vec::new();
        for &i in &path {
            let start = messages.len();
            messages.push(self.entry(s, i)?["message"].take());
            entries.push(ProjectedEntry { entry: i, messages: start..messages.len(), edit: None });
        }
        Ok(Projection {
            leaf,
            path,
            thinking_level: None,
            model: None,
            entries,
            messages,
            anthropic: None,
            responses: None,
            settings: None,
        })
    }

    fn llm_messages(&self, p: &Projection) -> Vec<Value> {
        convert_to_llm(&p.messages)
    }

    fn rows<'s>(&self, s: &'s Session, _: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable> {
        let texts =
            s.entries.indices().map(|i| Ok(self.entry(s, i)?["message"].take())).collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(ChatRows { texts }))
    }

    fn usage(&self, _: &Session, _: EntryIdx) -> Result<Option<Totals>, Unreadable> {
        Ok(None)
    }

    fn writer(&self) -> Result<&dyn Writer, Unsupported> {
        Err(Unsupported { format: "chatlog", what: "writing", hint: Some("chat logs are read only") })
    }

    fn findings(&self, _: &Session) -> Vec<Finding> {
        Vec::new()
    }
}

struct ChatRows {
    texts: Vec<Value>,
}

impl Rows for ChatRows {
    fn parent_undefined(&self, _: EntryIdx) -> bool {
        false
    }

    fn hidden_unless_leaf(&self, _: EntryIdx) -> bool {
        false
    }

    fn calls(&self, _: EntryIdx) -> &[ToolCall<'_>] {
        &[]
    }

    fn text(&self, i: EntryIdx, _: &CallMap, _: &Paths) -> Text {
        let m = &self.texts[i.get()];
        let role = m["role"].as_str().unwrap_or("?");
        let tone = if role == "user" { Tone::User } else { Tone::Assistant };
        Text::new(format!("{role}: "), tone, content_text(m.get("content")), Tone::Plain)
    }

    fn searchable(&self, i: EntryIdx, _: Option<&str>) -> String {
        content_text(self.texts[i.get()].get("content"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{self, Ui};
    use crate::session::view::{self, Filter, Options};
    use crate::session::{leaves, open, rev};

    /// The registry with the test format beside pi's: its one line of registration.
    fn formats() -> Vec<&'static dyn Format> {
        vec![&crate::formats::pi::PI, &CHATLOG]
    }

    fn log() -> Source {
        let text = concat!(
            "{\"chatlog\":1,\"id\":\"log-1\",\"title\":\"a chat\"}\n",
            "{\"role\":\"user\",\"text\":\"hello\"}\n",
            "{\"role\":\"assistant\",\"text\":\"hi there\"}\n",
            "{\"role\":\"user\",\"text\":\"bye\"}\n",
        );
        Source::from_bytes("chat.jsonl", text.as_bytes().to_vec())
    }

    #[test]
    fn the_format_is_found_from_the_content() {
        let formats = formats();
        let chat = log();
        assert_eq!(open::load(&chat, &formats, &BTreeSet::new()).unwrap().format().name, "chatlog");
        let pi = Source::open(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pi-1.6.0/01-linear-chat.jsonl"),
        )
        .unwrap();
        assert_eq!(open::load(&pi, &formats, &BTreeSet::new()).unwrap().format().name, "pi");
    }

    /// What `path`, `tree`, `leaves` and `fork` run, on the test format, unchanged.
    #[test]
    fn commands_work_through_the_seam() {
        let formats = formats();
        let source = log();
        let s = open::load(&source, &formats, &BTreeSet::new()).unwrap();
        // path: REVs resolve on the common index; the projection is the format's.
        let leaf = rev::resolve(&s, "@~1").unwrap();
        let p = s.dialect().project(&s, Some(leaf)).unwrap();
        let mut out = Vec::new();
        render::context::write(&mut out, &Ui::plain(), &s, &p, render::context::Format::Json, false).unwrap();
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["session"]["agent"], "chatlog (tests)");
        assert_eq!(doc["pathIds"], json!(["m2", "m3"]));
        assert_eq!(doc["messages"][1]["content"][0]["text"], "hi there");
        // tree: the common tree algorithm over the format's rows.
        let opts = Options {
            filter: Filter::Default,
            search: None,
            folds: vec![],
            leaf: s.default_leaf(),
            home: String::new(),
            cwd: String::new(),
            cycle_roots: true,
        };
        let rows = view::read_rows(&s, &opts).unwrap();
        let tree = view::build(&s, rows.as_ref(), &opts);
        let mut out = Vec::new();
        render::tree::write_text(&mut out, &Ui::plain(), &s, &tree, &Default::default()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "• user: hello\n• assistant: hi there\n• user: bye\n");
        // leaves: one branch tip.
        let tips = leaves::collect(&s).unwrap();
        assert_eq!(tips.len(), 1);
        assert_eq!(tips[0].prompt.as_ref().map(|(_, t)| &**t), Some("bye"));
        // diff: the same comparison, over the common entry shape.
        let input = |leaf, rev| crate::diff::Input { session: &s, leaf, rev };
        let report = crate::diff::compare(
            &input(leaf, "@~1"),
            &input(s.default_leaf().unwrap(), "@"),
            &crate::diff::Options { context: 0, stat: false, text_diffs: false },
        )
        .unwrap();
        let doc = serde_json::to_value(&report).unwrap();
        assert_eq!(doc["commonAncestor"]["id"], "m3");
        assert_eq!(doc["summary"]["b"]["turns"], 1);
        assert_eq!(doc["summary"]["b"]["models"], json!([]), "the log names no model");
        assert_eq!(doc["turns"][0]["b"]["prompt"]["text"], "bye", "{doc:#}");
        // fork: the format says it cannot, and how the command will say it.
        let err = s.dialect().writer().err().unwrap();
        assert_eq!(err.to_string(), "writing is not supported for chatlog sessions");
    }
}
