//! The seam between pisces and the agents whose sessions it reads.
//!
//! A [`Format`] is one agent's way of writing sessions. It says whether a file is its own
//! ([`Format::sniff`], from the content: never from the file name, since another agent may
//! write a header identical to pi's in front of a log that is not a tree), and reads the
//! file into the common index ([`Format::load`], which returns a [`Session`]). Each loaded
//! session carries its format's [`Dialect`]: what the format alone knows how to do with its
//! entries (read one whole, build the context its agent sends to the model, the text of a
//! tree row, the usage of a reply, write a fork or an appended entry).
//!
//! Commands never ask which format a session is in: they call the session and its dialect,
//! and a dialect that cannot do something says so with [`Unsupported`], which commands
//! print as it is. Adding a format is one module implementing these two traits and one
//! line in the registry (`crate::formats::all`); ARCHITECTURE.md walks through it.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use super::entry::{EntryIdx, LineNo};
use super::index::Session;
use super::projection::Projection;
use super::rows::Rows;
use super::usage::Totals;
use super::{LoadError, Source};

/// One model response (`Dialect::response`).
#[derive(Clone, Debug)]
pub struct Response {
    /// Names the response: two entries with one key, in any sessions of a format, are
    /// copies of one response.
    pub key: String,
    /// The model it came from.
    pub model: Option<String>,
    pub totals: Totals,
    /// The format records that the response was made in another session (a Claude Code
    /// line a `--fork-session` copied, a Codex entry a fork inherits): that session's
    /// to count when both are read.
    pub copied: bool,
}

/// What a format is called.
#[derive(Debug)]
pub struct FormatInfo {
    /// Its name in messages and JSON (`"format"`): `pi`.
    pub name: &'static str,
    /// The agent that writes it, as its users call it: `pi`.
    pub agent: &'static str,
}

/// How sure a format is that a file is its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fit {
    No,
    /// The start looks like it (a JSONL object), nothing says it is another agent's.
    Maybe,
    /// Its own marks are there (pi: a `session` header with a string id first).
    Yes,
    /// Marks that only this format writes, on top of another's (oh-my-pi's title slot
    /// before a pi header): it wins over a format that only says `Yes`.
    Own,
}

/// [`Dialect::response`] by default (for a dialect that reads it faster and falls back).
pub fn default_response<D: Dialect + ?Sized>(s: &Session, d: &D, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
    let Some(totals) = d.usage(s, i)? else { return Ok(None) };
    let v = d.entry(s, i)?;
    let model = v.pointer("/message/model").and_then(Value::as_str).map(str::to_string);
    let key = response_key(s, i, v.get("timestamp"), &totals);
    Ok(Some(Response { key, model, totals, copied: d.place(s, i).is_some() }))
}

/// [`Dialect::response`]'s key by default: the entry's id, its `timestamp` (as JSON) and
/// its tokens.
pub fn response_key(s: &Session, i: EntryIdx, timestamp: Option<&Value>, totals: &Totals) -> String {
    format!(
        "{}\u{1f}{}\u{1f}{:?}",
        s.id_str(i).unwrap_or_default(),
        timestamp.map(Value::to_string).unwrap_or_default(),
        (totals.input, totals.output, totals.cache_read, totals.cache_write, totals.cost)
    )
}

/// How many bytes of a file sniffing looks at.
pub const SNIFF_BYTES: usize = 64 << 10;

/// One agent's session format.
pub trait Format: Sync {
    fn info(&self) -> &'static FormatInfo;

    /// Whether `head` (the first [`SNIFF_BYTES`] of the file, or all of it) is this
    /// format's.
    fn sniff(&self, head: &[u8]) -> Fit;

    /// Reads the file into the common index. `exclude` names lines to treat as malformed
    /// (see [`super::open`]: a line that the validator passed but that does not parse).
    fn load<'a>(&'static self, source: &'a Source, exclude: &BTreeSet<LineNo>) -> Result<Session<'a>, LoadError>;

    /// [`Format::load`] with every line validated, for `check`. A format whose `load`
    /// validates only the lines it uses (Claude Code's: a command finds the others broken
    /// when it parses them, and reads again) validates all here.
    fn load_checked<'a>(&'static self, source: &'a Source) -> Result<Session<'a>, LoadError> {
        self.load(source, &BTreeSet::new())
    }

    /// Other files that belong to this one's session and are loaded with it, after it, in
    /// one joined source ([`Source::join`]). Codex: the rollouts a fork inherits its history
    /// from (each up to where the history it gives ends), and the forks made of it. Most
    /// formats: none (a session is one file).
    fn companions(&self, _source: &Source) -> Vec<Companion> {
        Vec::new()
    }

    /// Whether [`Format::companions`] finds files by listing the store, so that a new
    /// file elsewhere (a fork) can change what a session holds (Codex: yes). The
    /// whole-store cache keys such sessions on the store's listing too.
    fn reads_family(&self) -> bool {
        false
    }

    /// Reads the file again from its kept index ([`super::kept`]): the common index of its
    /// first `kept.covered` bytes as an earlier whole read built it, and what
    /// [`Dialect::keep`] kept beside it. Only the bytes after those are read. `None` when
    /// the format keeps no index or cannot extend this one (the new lines hold something
    /// it would report, or change what the old ones mean): the caller reads the file
    /// whole.
    fn load_kept<'a>(&'static self, _source: &'a Source, _kept: super::kept::Kept) -> Option<Session<'a>> {
        None
    }

    /// Whether the files this format claims are sessions. A format that recognises a file
    /// only to refuse it (an event log that starts like a pi session) says no, and
    /// commands that walk a store skip such files with a note.
    fn is_session(&self) -> bool {
        true
    }
}

/// A file loaded with another ([`Format::companions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Companion {
    pub path: std::path::PathBuf,
    /// Only its first `limit` bytes belong to the session (a parent's history ends there).
    pub limit: Option<u64>,
}

/// [`Dialect::model`]'s default: where the line already is the entry, only its
/// `message.model` is read of it (the content is skipped unbuilt), else the entry is built.
pub fn default_model<D: Dialect + ?Sized>(d: &D, s: &Session, i: EntryIdx) -> Result<Option<String>, Unreadable> {
    // (A line that does not fit, a duplicate key say, is read whole as below.)
    if d.lines_are_entries() {
        if let Some(model) = parsed_model(s.raw_line(i)) {
            return Ok(model);
        }
    }
    Ok(model_of(&d.entry(s, i)?))
}

/// A line's `message.model` when a string, parsed with the rest of the line skipped; `None`
/// when the line does not read so.
pub(crate) fn parsed_model(line: &[u8]) -> Option<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Line {
        message: Option<Message>,
    }
    #[derive(serde::Deserialize)]
    struct Message {
        model: Option<Value>,
    }
    let l = serde_json::from_slice::<Line>(line).ok()?;
    Some(l.message.and_then(|m| m.model).and_then(|m| m.as_str().map(str::to_string)))
}

/// `message.model` of an entry in the common shape, when a string.
pub fn model_of(entry: &Value) -> Option<String> {
    entry.get("message").and_then(|m| m.get("model")).and_then(Value::as_str).map(str::to_string)
}

/// What the format alone knows how to do with one loaded session.
pub trait Dialect: Send + Sync {
    fn info(&self) -> &'static FormatInfo;

    /// Entry `i` whole, in the common entry shape, which is pi's (`type`, `id`,
    /// `parentId`, `timestamp`, and a message entry's `message` as pi's AgentMessage).
    /// Everything past the seam (leaves, diff, show, summaries) reads entries so. pi: the
    /// entry as pi holds it in memory, its migrations of old versions applied; another
    /// format converts its own lines (the line as written stays in [`Session::raw_line`]).
    fn entry(&self, s: &Session, i: EntryIdx) -> Result<Value, Unreadable>;

    /// Whether each line as written already is its entry in the common shape, so that a
    /// reader after a few fields may take them from [`Session::raw_line`] without building
    /// the whole value (diff's fast paths do). pi: yes (its migrations touch only what the
    /// index already holds: ids, parents, roles). A format that converts says no, and
    /// those readers go through [`Dialect::entry`].
    fn lines_are_entries(&self) -> bool {
        false
    }

    /// The entry's time in ms since the epoch (`None`: it has none, or not a date).
    fn time(&self, s: &Session, i: EntryIdx) -> Option<f64>;

    /// `user: fix the tests`, `[compaction: 12k tokens]`, …: a one-line description of
    /// the entry (candidate lists and error messages), cut to `max` characters.
    fn preview(&self, s: &Session, i: EntryIdx, max: usize) -> String;

    /// The context the agent sends to its model at `leaf` (`None`: before the first entry).
    fn project(&self, s: &Session, leaf: Option<EntryIdx>) -> Result<Projection, Unreadable>;

    /// The context the agent sends when the session is resumed as it is, no entry named (the
    /// leaf it picks itself). pi: the context at its default leaf. Claude Code: `--resume`,
    /// which answers a turn the file left unfinished (docs/claude-format.md §2).
    fn resume(&self, s: &Session) -> Result<Projection, Unreadable> {
        self.project(s, s.default_leaf())
    }

    /// A projection's messages as the agent hands them to its model's API layer (pi:
    /// `convertToLlm`).
    fn llm_messages(&self, p: &Projection) -> Vec<Value>;

    /// The OpenAI Chat Completions body (`model`, `messages`, `tools`) the agent sends for
    /// `llm`: pi-ai's, unless the agent's own provider layer builds it otherwise.
    fn openai_request(&self, llm: &[Value], model: &crate::llm::wire::ModelRef) -> Value {
        crate::llm::wire::openai_request(llm, model)
    }

    /// What the tree shows of each entry.
    fn rows<'s>(&self, s: &'s Session, need: RowNeed) -> Result<Box<dyn Rows + 's>, Unreadable>;

    /// The tokens and cost entry `i` adds to its path (each model response counted once).
    fn usage(&self, s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable>;

    /// The model entry `i`'s message names (`message.model` of [`Dialect::entry`], when a
    /// string). `ls` reads it of every reply: where the line already is the entry, only
    /// that field is read of it (the content is skipped unbuilt), else the entry is built.
    fn model(&self, s: &Session, i: EntryIdx) -> Result<Option<String>, Unreadable> {
        default_model(self, s, i)
    }

    /// The one model [`Dialect::model`] can name for entry `i` (besides none or `""`), when
    /// the format knows it without reading the line: `Some(None)` when it can name none.
    /// Codex: the model of the entry's turn, which each reply of the turn names. `ls` then
    /// reads a reply's model only when its bound is one it has not seen (a turn's first
    /// reply): reading one is checking the whole line. `None` (the default): not known.
    fn model_bound(&self, _s: &Session, _i: EntryIdx) -> Option<Option<&str>> {
        None
    }

    /// The model response entry `i` records, as `pisces stats` counts it across sessions:
    /// [`Dialect::usage`] with a key that is the same wherever a fork or a copy carries the
    /// response. Its totals must be `usage`'s, and it must be `None` exactly when `usage` is:
    /// `stats` sums a session's own usage from them (`store::facts::of`). By default the
    /// entry's id and time (a pi fork or clone copies entries verbatim), and its tokens,
    /// since an 8-digit id alone can recur across sessions.
    fn response(&self, s: &Session, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
        default_response(s, self, i)
    }

    /// Writing into this format: forks, and entries appended to the file.
    fn writer(&self) -> Result<&dyn super::write::Writer, Unsupported>;

    /// What `pisces check` finds that only this format's shapes show (loading's own
    /// diagnostics are added by the caller).
    fn findings(&self, s: &Session) -> Vec<super::check::Finding>;

    /// The path to `leaf` as pi entries (`pisces convert --to pi`): the common entry shape
    /// of each entry that is part of the conversation, ids kept, each the child of the one
    /// before; the format's tools named as pi's where they correspond. By default, the
    /// message entries of the projection's path as [`Dialect::entry`] gives them.
    fn pi_entries(&self, s: &Session, leaf: EntryIdx) -> Result<Vec<Value>, Unreadable> {
        let path = self.project(s, Some(leaf))?.path;
        let mut out = Vec::new();
        for i in path {
            let e = self.entry(s, i)?;
            if e.get("type").and_then(Value::as_str) == Some("message") {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// A tool call of this format's agent as the pi tool it corresponds to (name and
    /// arguments), so that diff's report of files read and written and of commands run
    /// reads every agent's calls alike (`None`: no pi tool does the same; pi: always, since
    /// its calls are pi's).
    fn pi_tool(&self, _name: &str, _arguments: &Value) -> Option<(&'static str, Value)> {
        None
    }

    /// The text a read's result entry `i` shows of the file, as pi's `read` would show it
    /// (diff rebuilds files from reads). `None`: the result's text is that (pi). Claude
    /// Code numbers the lines it sends; its line keeps the file's text beside them.
    fn read_text(&self, _s: &Session, _i: EntryIdx) -> Option<String> {
        None
    }

    /// Whether user message `i` is one the client wrote itself, not what the user typed
    /// (Claude Code's `isMeta` lines: a pasted image's path, a local command's caveat):
    /// `leaves` names the prompt above it instead. pi: none is.
    fn client_written(&self, _s: &Session, _i: EntryIdx) -> bool {
        false
    }

    /// The transcripts of subagents that entry `i` started (Claude Code's `Agent` / `Task`
    /// calls write theirs to files of their own), for the tree to hang under it. pi: none.
    fn subagents(&self, _s: &Session, _i: EntryIdx) -> Vec<Subagent> {
        Vec::new()
    }

    /// Outputs of entry `i` that were too large for the session and went to files of their
    /// own (oh-my-pi's `<session>/<n>.<tool>.log`): the reference the entry holds, and the
    /// file. Most formats: none.
    fn spilled(&self, _s: &Session, _i: EntryIdx) -> Vec<Spilled> {
        Vec::new()
    }

    /// Where entry `i`'s line is when the session was read from several files (a Codex fork
    /// and the rollouts it inherits from) and the line is not in the first: that file's name
    /// and the line's number in it. `None`: line `entries[i].line` of the file read.
    fn place(&self, _s: &Session, _i: EntryIdx) -> Option<(String, LineNo)> {
        None
    }

    /// A REV base in this format's own syntax (Codex: `:N`, an item's ordinal), tried before
    /// ids and labels. `None`: not this format's syntax; `Some(Err(why))`: it is, and names
    /// nothing.
    fn rev_base(&self, _s: &Session, _base: &str) -> Option<Result<EntryIdx, String>> {
        None
    }

    /// What this format keeps of a session beside the common index, for
    /// [`Format::load_kept`] to read it again from (`None`: the format keeps no index, or
    /// not of this session).
    fn keep(&self, _s: &Session) -> Option<Vec<u8>> {
        None
    }

    /// The fix hint `check` gives for a problem loading found, when this format's agent
    /// treats it otherwise than pi does (`None`: pi's hint holds).
    fn hint(&self, _problem: super::Problem) -> Option<&'static str> {
        None
    }
}

/// An output kept in a file beside the session ([`Dialect::spilled`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Spilled {
    /// How the entry names it (`artifact://0`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// The file (where it should be, when it is missing).
    pub path: std::path::PathBuf,
    /// Its size; `None` when it is missing.
    pub bytes: Option<u64>,
}

/// A subagent's transcript, found beside the session that started it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subagent {
    pub path: std::path::PathBuf,
    /// The kind of agent (`general-purpose`, `Explore`, …) and what it was asked to do.
    pub kind: Option<String>,
    pub description: Option<String>,
}

/// What the tree needs read from each entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowNeed {
    /// Only user messages are shown (and only their texts are needed).
    pub user_only: bool,
    /// Searchable text, for `--search`.
    pub search: bool,
}

/// An entry that pisces cannot read whole.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}: entry {entry} cannot be read: {why}")]
pub struct Unreadable {
    pub file: String,
    pub line: LineNo,
    /// The entry's id, or `#LINE`.
    pub entry: String,
    pub why: String,
    /// The validator passed the line but the parser did not: pi would skip it, so the
    /// session is read again without it (see [`super::open`]).
    pub skip: bool,
}

impl Unreadable {
    pub fn at(s: &Session, i: EntryIdx, why: impl Into<String>) -> Unreadable {
        Unreadable {
            file: s.file.clone(),
            line: s.entries[i].line,
            entry: s.display_id(i).into_owned(),
            why: why.into(),
            skip: false,
        }
    }
}

/// Something a format cannot do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub format: &'static str,
    /// What was asked: `appending entries`, `forking`.
    pub what: &'static str,
    /// What to do instead, when there is something.
    pub hint: Option<&'static str>,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} is not supported for {} sessions", self.what, self.format)
    }
}

impl std::error::Error for Unsupported {}

/// Whether the JSON text `bytes` may hold one of the strings whose quoted forms are
/// `quoted` (as a key or a value): it holds one of those quoted forms, or a `\u` escape,
/// which could spell any letter (looked for once, however many strings). `false` is
/// certain, so that a sniff refuses a line without parsing it (discovery sniffs the head of
/// every file in the store with every format; parsing a Codex rollout's first line, its
/// instructions, once per format was a sixth of a cold `stats --agent codex`).
pub fn may_hold_any(bytes: &[u8], quoted: &[&[u8]]) -> bool {
    quoted.iter().any(|q| memchr::memmem::find(bytes, q).is_some()) || memchr::memmem::find(bytes, b"\\u").is_some()
}

/// The format of `source`, among `formats`: the surest fit, the first of equals.
pub fn detect(source: &Source, formats: &[&'static dyn Format]) -> Option<&'static dyn Format> {
    detect_bytes(source.bytes(), formats)
}

/// [`detect`] on a file's first bytes.
pub fn detect_bytes(bytes: &[u8], formats: &[&'static dyn Format]) -> Option<&'static dyn Format> {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    let mut best: Option<(Fit, &'static dyn Format)> = None;
    for &f in formats {
        let fit = f.sniff(head);
        if fit > Fit::No && best.is_none_or(|(b, _)| fit > b) {
            best = Some((fit, f));
        }
    }
    best.map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::may_hold_any;
    use serde_json::Value;

    /// Every string of `v`, keys and values.
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                out.push(k.clone());
                strings(x, out);
            }),
            _ => {}
        }
    }

    /// `v` as JSON text with every character of every string spelt as a `\u` escape.
    fn escaped(v: &Value) -> String {
        let s = |t: &str| {
            let mut out = String::from("\"");
            for u in t.encode_utf16() {
                out.push_str(&format!("\\u{u:04x}"));
            }
            out + "\""
        };
        match v {
            Value::String(t) => s(t),
            Value::Array(a) => format!("[{}]", a.iter().map(escaped).collect::<Vec<_>>().join(",")),
            Value::Object(m) => {
                format!(
                    "{{{}}}",
                    m.iter().map(|(k, x)| format!("{}:{}", s(k), escaped(x))).collect::<Vec<_>>().join(",")
                )
            }
            other => other.to_string(),
        }
    }

    #[test]
    fn a_string_a_line_holds_is_never_refused() {
        let probes = ["session", "title", "chatlog", "payload", "record_type", "instructions", "type"];
        let mut checked = 0;
        for f in crate::corpus::jsonl_files(&["."]) {
            let bytes = std::fs::read(&f).unwrap();
            for line in bytes.split(|&b| b == b'\n').take(64) {
                let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
                let mut held = Vec::new();
                strings(&v, &mut held);
                let again = escaped(&v);
                assert_eq!(serde_json::from_str::<Value>(&again).ok().as_ref(), Some(&v));
                for p in probes {
                    let quoted = format!("\"{p}\"");
                    let holds = held.iter().any(|s| s == p);
                    if holds {
                        checked += 1;
                        assert!(may_hold_any(line, &[quoted.as_bytes()]), "{}: {p}", f.display());
                        assert!(may_hold_any(again.as_bytes(), &[quoted.as_bytes()]), "{}: {p}", f.display());
                    } else if !line.windows(2).any(|w| w == b"\\u") {
                        assert!(!may_hold_any(line, &[quoted.as_bytes()]), "{}: {p}", f.display());
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
        // Quotes inside a string are escaped: `a "session" b` holds no string "session".
        assert!(!may_hold_any(br#"{"text":"a \"session\" b","type":"session_meta"}"#, &[b"\"session\""]));
    }

    #[test]
    fn a_header_spelt_with_escapes_is_still_recognised() {
        let header = r#"{"type":"session","version":3,"id":"h1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let entry = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
        let title = r#"{"type":"title","v":1,"title":"t","updatedAt":"2026-01-01T00:00:00.000Z","pad":"  "}"#;
        let omp_entry = r#"{"type":"model_usage","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}"#;
        let event = r#"{"type":"agent_start"}"#;
        let rollout = r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"t1"}}"#;
        let spelt = |l: &str| escaped(&serde_json::from_str(l).unwrap());
        let cases: [(Vec<String>, &str); 5] = [
            (vec![spelt(rollout)], "codex"),
            (vec![spelt(header), entry.into()], "pi"),
            (vec![spelt(title), header.into(), omp_entry.into()], "omp"),
            (vec![spelt(header), omp_entry.into()], "omp"),
            (vec![spelt(header), event.into()], "event-log"),
        ];
        for (lines, want) in cases {
            let head = lines.join("\n") + "\n";
            let found = super::detect_bytes(head.as_bytes(), crate::formats::all()).map(|f| f.info().name);
            assert_eq!(found, Some(want), "{head}");
        }
    }
}
