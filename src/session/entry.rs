//! Entries as the index sees them: what a line is, where it is, and how it links.
//!
//! The index keeps only what the tree needs (type, id, parent, timestamp, message role);
//! everything else stays in the file and is parsed on demand into a `serde_json::Value`,
//! which keeps unknown fields and key order exactly as pi would (pi holds the parsed
//! object and hands it on unchanged).

use super::text::utf8;

/// The `type` of an entry (docs/pi-format.md §1.4). Unknown types are kept and carried along
/// the tree like pi does: they have ids and parents but contribute no context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryType {
    Message,
    ThinkingLevelChange,
    ModelChange,
    Compaction,
    BranchSummary,
    Usage,
    ContextEdit,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    /// A `type` pisces does not know (a newer pi, an extension); the raw name is in the line.
    Other,
    /// An object without a string `type`.
    Missing,
    /// A line that is JSON but not an object (`42`, `"text"`, `[1]`, `true`): pi keeps it
    /// as an entry without type or id.
    NotObject,
}

impl EntryType {
    /// Every type, in a fixed order: a type's place in it is its code in a kept index
    /// (`session::kept`).
    pub const ALL: [EntryType; 14] = [
        Self::Message,
        Self::ThinkingLevelChange,
        Self::ModelChange,
        Self::Compaction,
        Self::BranchSummary,
        Self::Usage,
        Self::ContextEdit,
        Self::Custom,
        Self::CustomMessage,
        Self::Label,
        Self::SessionInfo,
        Self::Other,
        Self::Missing,
        Self::NotObject,
    ];

    pub fn from_name(name: &str) -> Self {
        match name {
            "message" => Self::Message,
            "thinking_level_change" => Self::ThinkingLevelChange,
            "model_change" => Self::ModelChange,
            "compaction" => Self::Compaction,
            "branch_summary" => Self::BranchSummary,
            "usage" => Self::Usage,
            "context_edit" => Self::ContextEdit,
            "custom" => Self::Custom,
            "custom_message" => Self::CustomMessage,
            "label" => Self::Label,
            "session_info" => Self::SessionInfo,
            _ => Self::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::ThinkingLevelChange => "thinking_level_change",
            Self::ModelChange => "model_change",
            Self::Compaction => "compaction",
            Self::BranchSummary => "branch_summary",
            Self::Usage => "usage",
            Self::ContextEdit => "context_edit",
            Self::Custom => "custom",
            Self::CustomMessage => "custom_message",
            Self::Label => "label",
            Self::SessionInfo => "session_info",
            Self::Other => "(unknown)",
            Self::Missing => "(none)",
            Self::NotObject => "(not an object)",
        }
    }
}

/// `message.role` of a `message` entry (§1.5). `HookMessage` is the version-2 name of
/// `Custom`; it is migrated when the entry is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    System,
    BashExecution,
    Custom,
    HookMessage,
    Other,
    /// Not a message entry, or a message without a string role.
    None,
}

impl Role {
    /// Every role, in a fixed order (see [`EntryType::ALL`]).
    pub const ALL: [Role; 9] = [
        Self::User,
        Self::Assistant,
        Self::ToolResult,
        Self::System,
        Self::BashExecution,
        Self::Custom,
        Self::HookMessage,
        Self::Other,
        Self::None,
    ];

    pub fn from_name(name: &str) -> Self {
        match name {
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "toolResult" => Self::ToolResult,
            "system" => Self::System,
            "bashExecution" => Self::BashExecution,
            "custom" => Self::Custom,
            "hookMessage" => Self::HookMessage,
            _ => Self::Other,
        }
    }
}

/// A string of the index (an id): up to 8 bytes held inline (pi's ids are 8 hex
/// characters, version-1 ids `L<line>`), else the place of the string inside its entry's
/// line, else an index into the session's table of owned strings (escaped or non-string
/// ids). Twelve bytes instead of a `String`: a 1 GB session has half a million entries,
/// and reading ids back from the mapped file would cost a cache miss each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StrRef {
    bytes: [u8; 8],
    /// The kind in the top two bits, the length below.
    meta: u32,
}

const KIND: u32 = 3 << 30;
const INLINE: u32 = 1 << 30;
const IN_LINE: u32 = 2 << 30;
const OWNED: u32 = 3 << 30;

impl StrRef {
    pub const NONE: StrRef = StrRef { bytes: [0; 8], meta: 0 };

    /// `s`, found at byte `off` of its entry's line.
    pub fn in_line(s: &str, off: usize) -> StrRef {
        if s.len() <= 8 {
            let mut bytes = [0; 8];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            StrRef { bytes, meta: INLINE | s.len() as u32 }
        } else {
            let mut bytes = [0; 8];
            bytes[..4].copy_from_slice(&(off as u32).to_le_bytes());
            StrRef { bytes, meta: IN_LINE | s.len() as u32 }
        }
    }

    /// The `index`-th string of the session's owned table.
    pub fn owned(index: usize) -> StrRef {
        let mut bytes = [0; 8];
        bytes[..4].copy_from_slice(&(index as u32).to_le_bytes());
        StrRef { bytes, meta: OWNED }
    }

    pub fn is_none(self) -> bool {
        self.meta & KIND == 0
    }

    fn word(&self) -> usize {
        u32::from_le_bytes([self.bytes[0], self.bytes[1], self.bytes[2], self.bytes[3]]) as usize
    }

    /// Resolves the reference against the entry's line and the owned table.
    pub fn get<'s>(&'s self, line: &'s [u8], owned: &'s Owned) -> Option<&'s str> {
        let len = (self.meta & !KIND) as usize;
        match self.meta & KIND {
            INLINE => utf8(&self.bytes[..len]),
            IN_LINE => line.get(self.word()..self.word() + len).and_then(utf8),
            OWNED => owned.get(self.word()),
            _ => None,
        }
    }

    /// Whether the reference means the same string in any entry (inline or owned; not a
    /// place in its own entry's line), so that another entry may hold a copy of it.
    pub fn portable(&self) -> bool {
        self.meta & KIND != IN_LINE
    }

    /// The bytes of an inline string (the usual case), without touching the file.
    pub fn inline_bytes(&self) -> Option<&[u8]> {
        (self.meta & KIND == INLINE).then(|| &self.bytes[..(self.meta & !KIND) as usize])
    }

    /// Whether two references name the same string, when that is known without reading
    /// it: both inline, or both the same owned string (a reader may give an entry's
    /// `parentId` the reference of the id it names); `None` otherwise.
    pub fn same_known(&self, other: &StrRef) -> Option<bool> {
        match (self.meta & KIND, other.meta & KIND) {
            (INLINE, INLINE) => Some(self == other),
            (OWNED, OWNED) if self == other => Some(true),
            _ => None,
        }
    }

    /// The reference's bytes and its kind and length, as a kept index stores it.
    pub(crate) fn to_raw(self) -> ([u8; 8], u32) {
        (self.bytes, self.meta)
    }

    /// A reference read back from a kept index, if it is one that can be valid: an inline
    /// string of at most 8 bytes, a place inside a line of `line_len` bytes, an owned
    /// string below `owned`.
    pub(crate) fn from_raw(bytes: [u8; 8], meta: u32, line_len: usize, owned: usize) -> Option<StrRef> {
        let r = StrRef { bytes, meta };
        let len = (meta & !KIND) as usize;
        let fits = match meta & KIND {
            0 => r == StrRef::NONE,
            INLINE => len <= 8 && bytes[len..].iter().all(|&b| b == 0),
            IN_LINE => r.word().checked_add(len).is_some_and(|end| end <= line_len),
            _ => len == 0 && r.word() < owned,
        };
        fits.then_some(r)
    }

    /// Shifts an owned reference when two tables are concatenated.
    pub fn rebase_owned(self, by: usize) -> StrRef {
        if self.meta & KIND == OWNED {
            StrRef::owned(self.word() + by)
        } else {
            self
        }
    }
}

/// The strings of the index that are not in the file as they are (decoded from escapes,
/// made up, moved), one after the other in one buffer: a `String` each would be a heap
/// allocation each, and a Claude Code file has a few for every one of its tens of
/// thousands of lines. Read through [`StrRef::owned`] references.
#[derive(Debug, Default, Clone)]
pub struct Owned {
    text: String,
    /// Where each string ends in `text`.
    ends: Vec<usize>,
}

impl Owned {
    /// Adds `s`; the reference to it.
    pub fn push(&mut self, s: &str) -> StrRef {
        self.text.push_str(s);
        self.ends.push(self.text.len());
        StrRef::owned(self.ends.len() - 1)
    }

    /// Adds the string `args` makes, written in place (no `String` of its own: a loader
    /// may name tens of thousands of entries this way).
    pub fn push_fmt(&mut self, args: std::fmt::Arguments) -> StrRef {
        // Writing into a `String` cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut self.text, args);
        self.ends.push(self.text.len());
        StrRef::owned(self.ends.len() - 1)
    }

    /// Adds `head`'s strings then `n` in decimal: a loader's made-up names (`9cac33b1d38d:29`),
    /// tens of thousands of them, where `fmt`'s machinery showed in the time.
    pub fn push_numbered(&mut self, head: &[&str], n: u64) -> StrRef {
        for h in head {
            self.text.push_str(h);
        }
        let mut digits = [0u8; 20];
        let mut k = digits.len();
        let mut n = n;
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        // Only ASCII digits were written.
        self.text.push_str(utf8(&digits[k..]).unwrap_or_default());
        self.ends.push(self.text.len());
        StrRef::owned(self.ends.len() - 1)
    }

    /// The `k`-th string.
    pub fn get(&self, k: usize) -> Option<&str> {
        let end = *self.ends.get(k)?;
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        self.text.get(start..end)
    }

    /// How many strings there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The strings one after the other, and where each ends (for a kept index).
    pub(crate) fn parts(&self) -> (&str, &[usize]) {
        (&self.text, &self.ends)
    }

    /// A table read back from a kept index, if its ends can be valid.
    pub(crate) fn from_parts(text: String, ends: Vec<usize>) -> Option<Owned> {
        let mut at = 0;
        for &e in &ends {
            if e < at || !text.is_char_boundary(e) {
                return None;
            }
            at = e;
        }
        Some(Owned { text, ends })
    }

    /// Adds `other`'s strings after these; how many there were before (what references
    /// into `other` are rebased by).
    pub fn append(&mut self, other: Owned) -> usize {
        let (n, shift) = (self.ends.len(), self.text.len());
        // (Exactly: the tables are megabytes, and doubling would leave up to half unused.)
        self.text.reserve_exact(other.text.len());
        self.ends.reserve_exact(other.ends.len());
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.into_iter().map(|e| e + shift));
        n
    }
}

/// An entry's place in its session's index: the `n`-th entry line of the file (headers,
/// blank and malformed lines are not entries). Not a line number: see [`LineNo`].
///
/// Stored plus one, so that an `Option<EntryIdx>` takes four bytes, not eight: the tree
/// keeps one for every row and entry of a session.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryIdx(std::num::NonZeroU32);

impl EntryIdx {
    pub fn new(i: usize) -> EntryIdx {
        let plus_one = u32::try_from(i).ok().and_then(|i| i.checked_add(1)).expect("fewer than 2^32 - 1 entries");
        EntryIdx(std::num::NonZeroU32::new(plus_one).expect("one or more"))
    }

    /// The position, to index arrays kept beside the entries.
    pub fn get(self) -> usize {
        (self.0.get() - 1) as usize
    }
}

impl Default for EntryIdx {
    fn default() -> Self {
        EntryIdx::new(0)
    }
}

impl std::fmt::Debug for EntryIdx {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "EntryIdx({})", self.get())
    }
}

/// A 1-based physical line number in a session file, as editors and `pisces check` show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct LineNo(pub u32);

impl LineNo {
    pub fn get(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for LineNo {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// An entry's id as pi's `Map` keys it: a string, or for any other JSON value (a number, an
/// object) its JSON text, which never equals a string id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Id<'a> {
    Str(&'a str),
    /// The JSON text of an id that is not a string (`7`, `{"a":1}`).
    Json(&'a str),
}

/// How the index stores a non-string id: its JSON text behind a NUL, so that one table of
/// strings holds both kinds and the two never compare equal.
pub(crate) const NON_STRING_ID: char = '\0';

impl<'a> Id<'a> {
    /// Decodes the index's stored form (see [`NON_STRING_ID`]).
    pub(crate) fn from_stored(s: &'a str) -> Id<'a> {
        match s.strip_prefix(NON_STRING_ID) {
            Some(json) => Id::Json(json),
            None => Id::Str(s),
        }
    }

    /// The id when it is a string (the only kind a label, a `parentId` written by pi, or a
    /// REV can name).
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Id::Str(s) => Some(s),
            Id::Json(_) => None,
        }
    }

    /// Whether JS would take the id for true (an empty string id, a `0` id are not).
    pub fn is_truthy(self) -> bool {
        match self {
            Id::Str(s) => !s.is_empty(),
            Id::Json(_) => super::js::truthy(Some(&self.to_value())),
        }
    }

    /// The id as pi would print it in JSON: the string, or the value itself.
    pub fn to_value(self) -> serde_json::Value {
        match self {
            Id::Str(s) => serde_json::Value::String(s.to_string()),
            Id::Json(json) => serde_json::from_str(json).unwrap_or(serde_json::Value::Null),
        }
    }
}

impl std::fmt::Display for Id<'_> {
    /// The string, or the JSON text of a non-string id.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Id::Str(s) | Id::Json(s) => f.write_str(s),
        }
    }
}

/// One parsed (non-header) line of a session file, as the index holds it.
#[derive(Clone, Debug)]
pub struct EntryMeta {
    /// Byte offset of the line in the file.
    pub start: usize,
    /// Length of the line without `\n` (a trailing `\r` is kept: it is JSON whitespace,
    /// and `--entries` prints lines as they are).
    pub len: u32,
    /// Where the line is in the file.
    pub line: LineNo,
    /// The resolved parent entry, after cycle breaking; read it with `parent()`. (Four
    /// bytes: `EntryIdx` leaves `None` room.)
    parent: Option<EntryIdx>,
    /// The entry's id (version-1 files: `L<line>`, see `tree`). Non-string ids are kept as
    /// their JSON text behind a NUL so they never equal a string id. Read it with
    /// `Session::id`.
    pub id: StrRef,
    /// `parentId` as written (migrated for version-1 files); none for null/missing/"".
    pub parent_id: StrRef,
    pub kind: EntryType,
    pub role: Role,
    /// `SHADOWED`, `UNREADABLE`, `CYCLE_CUT` (one byte, not three: the entry then takes 48
    /// bytes instead of 56, and a large session has hundreds of thousands of them).
    flags: u8,
}

// (Every session's index holds one for each entry.)
const _: () = assert!(std::mem::size_of::<EntryMeta>() <= 48);

/// A later entry has the same id: pi's index keeps the later one, so this entry cannot
/// be reached by id.
const SHADOWED: u8 = 1;
/// Valid JSON that pisces cannot parse whole (see `formats::pi::scan::Flags`).
const UNREADABLE: u8 = 2;
/// The index cut a parent cycle here: the entry is a root, though its `parentId` names an
/// entry of the file.
const CYCLE_CUT: u8 = 4;

impl EntryMeta {
    pub fn new(start: usize, len: usize, line: LineNo, kind: EntryType, role: Role) -> EntryMeta {
        EntryMeta {
            start,
            len: len as u32,
            line,
            parent: None,
            id: StrRef::NONE,
            parent_id: StrRef::NONE,
            kind,
            role,
            flags: 0,
        }
    }

    fn set_flag(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    /// A later entry has the same id: pi's index keeps the later one, so this entry
    /// cannot be reached by id.
    pub fn shadowed(&self) -> bool {
        self.flags & SHADOWED != 0
    }

    pub fn set_shadowed(&mut self, on: bool) {
        self.set_flag(SHADOWED, on);
    }

    /// Valid JSON that pisces cannot parse whole (see `formats::pi::scan::Flags`).
    pub fn unreadable(&self) -> bool {
        self.flags & UNREADABLE != 0
    }

    pub fn set_unreadable(&mut self, on: bool) {
        self.set_flag(UNREADABLE, on);
    }

    /// The index cut a parent cycle here: the entry is a root, though its `parentId`
    /// names an entry of the file.
    pub fn cycle_cut(&self) -> bool {
        self.flags & CYCLE_CUT != 0
    }

    pub fn set_cycle_cut(&mut self, on: bool) {
        self.set_flag(CYCLE_CUT, on);
    }

    /// The resolved parent entry.
    pub fn parent(&self) -> Option<EntryIdx> {
        self.parent
    }

    pub fn set_parent(&mut self, parent: Option<EntryIdx>) {
        self.parent = parent;
    }

    pub fn span(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.len as usize
    }

    /// The entry's type, and a message's role, for listings: `user`, `compaction`, ….
    pub fn kind_label(&self) -> &'static str {
        match (self.kind, self.role) {
            (EntryType::Message, Role::User) => "user",
            (EntryType::Message, Role::Assistant) => "assistant",
            (EntryType::Message, Role::ToolResult) => "toolResult",
            (EntryType::Message, Role::System) => "system",
            (EntryType::Message, Role::BashExecution) => "bashExecution",
            (EntryType::Message, Role::Custom | Role::HookMessage) => "custom",
            (EntryType::Message, _) => "message",
            (k, _) => k.name(),
        }
    }
}

/// A session's entries in file order, indexed by [`EntryIdx`].
#[derive(Clone, Debug, Default)]
pub struct Entries(Vec<EntryMeta>);

impl Entries {
    pub fn new(v: Vec<EntryMeta>) -> Entries {
        Entries(v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, EntryMeta> {
        self.0.iter()
    }

    pub fn as_slice(&self) -> &[EntryMeta] {
        &self.0
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, EntryMeta> {
        self.0.iter_mut()
    }

    /// Every entry with its index.
    pub fn enumerate(&self) -> impl DoubleEndedIterator<Item = (EntryIdx, &EntryMeta)> + ExactSizeIterator {
        self.0.iter().enumerate().map(|(i, e)| (EntryIdx::new(i), e))
    }

    /// Every index, in file order.
    pub fn indices(&self) -> impl DoubleEndedIterator<Item = EntryIdx> + ExactSizeIterator {
        (0..self.0.len()).map(EntryIdx::new)
    }

    pub fn first(&self) -> Option<&EntryMeta> {
        self.0.first()
    }

    pub fn last(&self) -> Option<&EntryMeta> {
        self.0.last()
    }

    /// The entry on physical line `line`.
    pub fn on_line(&self, line: LineNo) -> Option<EntryIdx> {
        self.0.binary_search_by_key(&line, |e| e.line).ok().map(EntryIdx::new)
    }

    /// How many entries start before byte `offset` (the index of the first that does not).
    pub fn before_offset(&self, offset: usize) -> usize {
        self.0.partition_point(|e| e.start < offset)
    }

    /// How many entries lie before line `line`.
    pub fn before_line(&self, line: LineNo) -> usize {
        self.0.partition_point(|e| e.line < line)
    }

    /// The last entry whose kind matches, from the end (pi's "latest" lookups).
    pub fn rposition(&self, f: impl FnMut(&EntryMeta) -> bool) -> Option<EntryIdx> {
        self.0.iter().rposition(f).map(EntryIdx::new)
    }
}

impl std::ops::Index<EntryIdx> for Entries {
    type Output = EntryMeta;
    fn index(&self, i: EntryIdx) -> &EntryMeta {
        &self.0[i.get()]
    }
}

impl std::ops::IndexMut<EntryIdx> for Entries {
    fn index_mut(&mut self, i: EntryIdx) -> &mut EntryMeta {
        &mut self.0[i.get()]
    }
}

#[cfg(test)]
mod tests {
    use super::Owned;

    #[test]
    fn a_numbered_name_is_the_formatted_one() {
        let mut owned = Owned::default();
        let cases: [(&[&str], u64); 5] = [
            (&["9cac33b1d38d", ":"], 29),
            (&["9cac33b1d38d", ":L"], 0),
            (&["L"], 7),
            (&[], u64::MAX),
            (&["a", "", "b"], 1000),
        ];
        for (k, (head, n)) in cases.into_iter().enumerate() {
            assert!(owned.push_numbered(head, n) == super::StrRef::owned(k));
            let want = format!("{}{n}", head.concat());
            assert_eq!(owned.get(k), Some(want.as_str()));
        }
    }
}
