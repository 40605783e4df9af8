//! Entries as the index sees them: what a line is, where it is, and how it links.
//!
//! The index keeps only what the tree needs (type, id, parent, timestamp, message role);
//! everything else stays in the file and is parsed on demand into a `serde_json::Value`,
//! which keeps unknown fields and key order exactly as pi would (pi holds the parsed
//! object and hands it on unchanged).

/// The `type` of an entry (pi-reference §1.4). Unknown types are kept and carried along
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
    /// No string `type` at all (including lines that are JSON but not objects).
    Missing,
}

impl EntryType {
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

/// Where a string of the index lives: inside its entry's line (the usual case: pi writes
/// ids without escapes), or in the session's table of owned strings (escaped ids,
/// version-1 ids, non-string ids). Eight bytes instead of a `String` or `Cow`, because a
/// 1 GB session has half a million entries and the index must stay small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrRef {
    off: u32,
    len: u32,
}

const OWNED: u32 = 1 << 31;

impl StrRef {
    pub const NONE: StrRef = StrRef { off: u32::MAX, len: 0 };

    /// A string at `off..off + len` of the entry's line.
    pub fn in_line(off: usize, len: usize) -> StrRef {
        StrRef { off: off as u32, len: len as u32 }
    }

    /// The `index`-th string of the session's owned table.
    pub fn owned(index: usize) -> StrRef {
        StrRef { off: index as u32, len: OWNED }
    }

    pub fn is_none(self) -> bool {
        self.off == u32::MAX && self.len == 0
    }

    /// Resolves the reference against the entry's line and the owned table.
    pub fn get<'s>(self, line: &'s [u8], owned: &'s [String]) -> Option<&'s str> {
        if self.is_none() {
            None
        } else if self.len == OWNED {
            owned.get(self.off as usize).map(String::as_str)
        } else {
            let bytes = line.get(self.off as usize..(self.off + self.len) as usize)?;
            std::str::from_utf8(bytes).ok()
        }
    }

    /// Shifts an owned reference when two tables are concatenated.
    pub fn rebase_owned(self, by: usize) -> StrRef {
        if self.len == OWNED {
            StrRef { off: self.off + by as u32, len: OWNED }
        } else {
            self
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
    /// 1-based physical line number in the file.
    pub line: u32,
    /// `new Date(timestamp).getTime()`; NaN when it does not parse.
    pub time: f64,
    /// The resolved parent entry (index into `Session::entries`), after cycle breaking.
    pub parent: Option<u32>,
    /// The entry's id (version-1 files: `L<line>`, see `tree`). Non-string ids are kept as
    /// their JSON text behind a NUL so they never equal a string id. Read it with
    /// `Session::id`.
    pub id: StrRef,
    /// `parentId` as written (migrated for version-1 files); none for null/missing/"".
    pub parent_id: StrRef,
    pub kind: EntryType,
    pub role: Role,
    /// A later entry has the same id: pi's index keeps the later one, so this entry
    /// cannot be reached by id.
    pub shadowed: bool,
}

impl EntryMeta {
    pub fn span(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.len as usize
    }

    /// The timestamp, unless it is NaN.
    pub fn time(&self) -> Option<f64> {
        (!self.time.is_nan()).then_some(self.time)
    }
}
