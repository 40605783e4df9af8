//! Tokens and cost of a pi entry, counted as pi's `getUsageCostBreakdown` counts them: an
//! assistant message's `usage`, a `usage` entry's (cache warming), and the `usage` of a
//! tool result, a compaction or a branch summary when they carry one.

use serde::Deserialize;
use serde_json::Value;

use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::Unreadable;
use crate::session::usage::Totals;
use crate::session::{js, Session};

/// The fields of a line that carry usage; everything else is skipped unread.
#[derive(Deserialize)]
struct UsageFields {
    message: Option<UsageMessage>,
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct UsageMessage {
    usage: Option<Value>,
}

/// The usage entry `i` adds to its path's totals, as pi's getUsageCostBreakdown counts:
/// an assistant message's `usage`, a `usage` entry's, and the `usage` of a tool result,
/// a compaction or a branch summary when they have one.
pub fn entry_usage(s: &Session, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
    let e = &s.entries[i];
    let counts = matches!(
        (e.kind, e.role),
        (EntryType::Message, Role::Assistant | Role::ToolResult)
            | (EntryType::Usage, _)
            | (EntryType::Compaction, _)
            | (EntryType::BranchSummary, _)
    );
    // An entry pisces cannot read adds nothing (loading reported it).
    if !counts || e.unreadable {
        return Ok(None);
    }
    let line = s.raw_line(i);
    // Most tool results carry no usage: skip them without parsing.
    if e.role == Role::ToolResult && memchr::memmem::find(line, b"\"usage\"").is_none() {
        return Ok(None);
    }
    let usage = match serde_json::from_slice::<UsageFields>(line) {
        Ok(f) => {
            if e.kind == EntryType::Message {
                f.message.and_then(|m| m.usage)
            } else {
                f.usage
            }
        }
        // Not the expected shape (a `message` that is no object, …): no usage, unless the
        // line does not parse at all.
        Err(_) => {
            s.parse(i)?;
            None
        }
    };
    // pi: `if (!key || !usage) continue` (an assistant's usage is taken as it is).
    Ok(usage.filter(|u| js::truthy(Some(u))).map(|u| Totals::from_usage(&u)))
}
