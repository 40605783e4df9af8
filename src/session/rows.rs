//! What a format tells the tree about each entry: its one-line text, the tool calls it
//! makes (a tool result's row names its call), and the quirks of its agent's tree.

use std::borrow::Cow;

use super::entry::EntryIdx;

/// How a piece of a row's text looks in pi's theme (`render::tree` maps these to colors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// `user: ` (pi: accent).
    User,
    /// `assistant: ` (pi: success).
    Assistant,
    /// Tool rows (pi: muted).
    Tool,
    /// `(aborted)`, `(no content)` (pi: muted).
    Muted,
    /// An assistant's error message (pi: error).
    Error,
    /// `[system]`, `[bash]: …`, settings rows (pi: dim).
    Dim,
    /// `[compaction: …]` and `[branch summary]: ` (pi: borderAccent, warning).
    Summary,
    /// `[<customType>]: ` (pi: customMessageLabel).
    Custom,
}

/// pi's one-line text of an entry: a head (`user: `, `[read: …]`) and a body.
#[derive(Clone, Debug)]
pub struct Text {
    pub head: Cow<'static, str>,
    pub head_tone: Tone,
    pub body: String,
    pub body_tone: Tone,
}

impl Text {
    pub fn new(head: impl Into<Cow<'static, str>>, head_tone: Tone, body: String, body_tone: Tone) -> Text {
        Text { head: head.into(), head_tone, body, body_tone }
    }

    pub fn whole(text: String, tone: Tone) -> Text {
        Text::new(Cow::Owned(text), tone, String::new(), Tone::Plain)
    }

    /// Head and body as one string.
    pub fn to_plain(&self) -> String {
        format!("{}{}", self.head, self.body)
    }
}

/// One tool call an entry makes (pi: a `toolCall` block of an assistant message).
#[derive(Debug)]
pub struct ToolCall<'a> {
    pub id: Cow<'a, str>,
    pub name: Cow<'a, str>,
    /// The arguments' JSON text as written (the line was validated when read).
    pub arguments: Option<&'a str>,
}

/// Where tool rows' paths are seen from: pi shows paths under the home directory as `~/…`,
/// and resolves a relative home against its working directory.
#[derive(Clone, Copy, Debug)]
pub struct Paths<'p> {
    pub home: &'p str,
    pub cwd: &'p str,
}

/// The tool calls of the visible tree by call id (a later call with the same id wins, as
/// in pi's `toolCallMap`): a table sorted by the ids' hashes, 16 bytes a call where a hash
/// map took 48 (a big session makes a quarter of a million calls), and where each hash's
/// run starts, by its top bits (a lookup reads one or two cache lines, where a binary
/// search over the table missed the cache at every step).
#[derive(Default)]
pub struct CallMap<'c> {
    by_hash: Vec<(u64, &'c ToolCall<'c>)>,
    /// `by_hash[starts[b]..starts[b + 1]]` are the calls whose hash's top `bits` are `b`.
    starts: Vec<u32>,
    bits: u32,
}

impl std::fmt::Debug for CallMap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "CallMap({} calls)", self.by_hash.len())
    }
}

impl<'c> CallMap<'c> {
    /// The map of `calls`, given in order (a later one wins over an earlier one).
    pub fn new(calls: impl Iterator<Item = &'c ToolCall<'c>>) -> Self {
        let mut by_hash: Vec<(u64, &ToolCall)> = calls.map(|c| (hash(&c.id), c)).collect();
        // Stable: calls of one hash stay in their order, so the last of an id is found first
        // from the end.
        by_hash.sort_by_key(|&(h, _)| h);
        // About two calls a bucket.
        let bits = (by_hash.len() / 2).max(1).next_power_of_two().trailing_zeros();
        let mut starts = vec![0u32; (1 << bits) + 1];
        for &(h, _) in &by_hash {
            starts[bucket(h, bits) + 1] += 1;
        }
        for b in 0..1 << bits {
            starts[b + 1] += starts[b];
        }
        CallMap { by_hash, starts, bits }
    }

    pub fn get(&self, id: &str) -> Option<&'c ToolCall<'c>> {
        let h = hash(id);
        let b = bucket(h, self.bits);
        let run = &self.by_hash[*self.starts.get(b)? as usize..self.starts[b + 1] as usize];
        run.iter().rev().find(|(k, c)| *k == h && c.id == id).map(|&(_, c)| c)
    }
}

fn bucket(h: u64, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (h >> (64 - bits)) as usize
    }
}

fn hash(id: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(id)
}

/// A format's rows: read once for the tree, asked per entry.
pub trait Rows: Sync {
    /// pi's quirk: an entry without a `parentId` key (not `null`: absent) hangs under the
    /// last entry without an id. `false` for agents without it.
    fn parent_undefined(&self, i: EntryIdx) -> bool;

    /// An assistant reply the tree hides unless it is the leaf (pi: one that only called
    /// tools).
    fn hidden_unless_leaf(&self, i: EntryIdx) -> bool;

    /// The tool calls entry `i` makes.
    fn calls(&self, i: EntryIdx) -> &[ToolCall<'_>];

    /// The row's text; `calls` finds the call a tool result answers.
    fn text(&self, i: EntryIdx, calls: &CallMap, paths: &Paths) -> Text;

    /// What `--search` matches against (with the entry's label, when it has one).
    fn searchable(&self, i: EntryIdx, label: Option<&str>) -> String;
}
