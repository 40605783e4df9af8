//! Entries as the index sees them: what a line is, where it is, and how it links.
//!
//! The index keeps only what the tree needs (type, id, parent, timestamp, message role);
//! everything else stays in the file and is parsed on demand into a `serde_json::Value`,
//! which keeps unknown fields and key order exactly as pi would (pi holds the parsed
//! object and hands it on unchanged).

use std::borrow::Cow;
use std::ops::Range;

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

/// One parsed (non-header) line of a session file, as the index holds it.
#[derive(Clone, Debug)]
pub struct EntryMeta<'a> {
    /// 1-based physical line number in the file.
    pub line: u32,
    /// Byte range of the line in the file, without `\n` (a trailing `\r` is kept: it is
    /// JSON whitespace, and `--entries` prints lines as they are).
    pub span: Range<usize>,
    pub kind: EntryType,
    pub role: Role,
    /// The entry's id (for version-1 files: `L<line>`, see `load`). Non-string ids are
    /// kept as their JSON text behind a NUL so they never equal a string id.
    pub id: Option<Cow<'a, str>>,
    /// `parentId` as written (migrated for version-1 files); `None` for null/missing/"".
    pub parent_id: Option<Cow<'a, str>>,
    /// `new Date(timestamp).getTime()`; `None` is NaN.
    pub time: Option<f64>,
    /// The resolved parent entry (index into `Session::entries`), after cycle breaking.
    pub parent: Option<u32>,
    /// A later entry has the same id: pi's index keeps the later one, so this entry
    /// cannot be reached by id.
    pub shadowed: bool,
}
