//! Pieces every JSON document shares.

use std::io::Write;

use serde::Serialize;

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

/// serde_json's pretty formatter (two spaces an indent), started `level` levels deep, so
/// that a document's members can be written one by one, each as serde would write it in
/// its place (see [`Members`]).
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> std::io::Result<()> {
        for _ in 0..self.level {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` as indented JSON, as it stands `level` levels deep in a document.
fn write_at<W: Write>(w: &mut W, level: usize, value: &(impl Serialize + ?Sized)) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Pretty { level, has_value: false });
    value.serialize(&mut ser).map_err(std::io::Error::from)
}

/// The bytes serde_json writes in a string as they are: not a control character, a quote
/// or a backslash.
const PLAIN: [bool; 256] = {
    let mut t = [true; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = false;
        b += 1;
    }
    t[b'"' as usize] = false;
    t[b'\\' as usize] = false;
    t
};

/// A top-level JSON object written member by member, byte for byte as `write_pretty` would
/// write the same members: for a document one of whose members is better written by hand
/// than through serde's calls (`path`'s hundreds of thousands of ids).
pub struct Members<W: Write> {
    w: W,
    first: bool,
}

impl<W: Write> Members<W> {
    pub fn new(mut w: W) -> std::io::Result<Members<W>> {
        w.write_all(b"{")?;
        Ok(Members { w, first: true })
    }

    /// Starts the member `key`; its value is written next, one level deep.
    fn key(&mut self, key: &str) -> std::io::Result<()> {
        self.w.write_all(if self.first { b"\n  " } else { b",\n  " })?;
        self.first = false;
        serde_json::to_writer(&mut self.w, key)?;
        self.w.write_all(b": ")
    }

    /// The member `key: value`.
    pub fn field(&mut self, key: &str, value: &(impl Serialize + ?Sized)) -> std::io::Result<()> {
        self.key(key)?;
        write_at(&mut self.w, 1, value)
    }

    /// The member `key: [strings…]`: each a string written as is when it needs no escape
    /// (ids, nearly always), else as serde writes it.
    pub fn strings<'s>(
        &mut self,
        key: &str,
        items: impl ExactSizeIterator<Item = Result<&'s str, serde_json::Value>>,
    ) -> std::io::Result<()> {
        self.key(key)?;
        if items.len() == 0 {
            return self.w.write_all(b"[]");
        }
        self.w.write_all(b"[")?;
        // A string serde writes as it is (nothing to escape), with the separator and indent
        // before it, copied as one piece when short (a path's ids, hundreds of thousands of
        // them: three writes and a test of each byte's three cases were most of their cost).
        let mut piece = [0u8; 64];
        for (k, item) in items.enumerate() {
            let sep: &[u8] = if k == 0 { b"\n    " } else { b",\n    " };
            match item {
                Ok(s) if s.bytes().all(|b| PLAIN[b as usize]) => {
                    let n = sep.len() + s.len() + 2;
                    if n <= piece.len() {
                        piece[..sep.len()].copy_from_slice(sep);
                        piece[sep.len()] = b'"';
                        piece[sep.len() + 1..n - 1].copy_from_slice(s.as_bytes());
                        piece[n - 1] = b'"';
                        self.w.write_all(&piece[..n])?;
                    } else {
                        self.w.write_all(sep)?;
                        self.w.write_all(b"\"")?;
                        self.w.write_all(s.as_bytes())?;
                        self.w.write_all(b"\"")?;
                    }
                }
                Ok(s) => {
                    self.w.write_all(sep)?;
                    write_at(&mut self.w, 2, s)?
                }
                Err(v) => {
                    self.w.write_all(sep)?;
                    write_at(&mut self.w, 2, &v)?
                }
            }
        }
        self.w.write_all(b"\n  ]")
    }

    /// Closes the object; the writer.
    pub fn end(mut self) -> std::io::Result<W> {
        self.w.write_all(if self.first { b"}" } else { b"\n}" })?;
        Ok(self.w)
    }
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
