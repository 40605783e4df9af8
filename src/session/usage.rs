//! Tokens and cost, counted as pi's `getUsageCostBreakdown` counts them: an assistant
//! message's `usage`, a `usage` entry's (cache warming), and the `usage` of a tool result,
//! a compaction or a branch summary when they carry one.

use serde::Deserialize;
use serde_json::Value;

use super::entry::{EntryType, Role};
use super::{js, Session};

/// Token and cost totals, summed as pi's `getUsageCostBreakdown` sums them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// Sum of `totalTokens` where present.
    pub total_tokens: f64,
    pub cost: f64,
}

impl Totals {
    pub fn add(&mut self, o: &Totals) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.total_tokens += o.total_tokens;
        self.cost += o.cost;
    }

    /// pi's "tokens": input + output + cache read + cache write.
    pub fn tokens(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    pub fn from_usage(u: &Value) -> Totals {
        let n = |v: Option<&Value>| v.and_then(Value::as_f64).filter(|f| f.is_finite()).unwrap_or(0.0);
        Totals {
            input: n(u.get("input")),
            output: n(u.get("output")),
            cache_read: n(u.get("cacheRead")),
            cache_write: n(u.get("cacheWrite")),
            total_tokens: n(u.get("totalTokens")),
            cost: n(u.get("cost").and_then(|c| c.get("total"))),
        }
    }
}

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

/// The usage entry `i` adds to its path's totals (`Err(line)` when its line is damaged), as pi's getUsageCostBreakdown counts:
/// an assistant message's `usage`, a `usage` entry's, and the `usage` of a tool result,
/// a compaction or a branch summary when they have one.
pub fn entry_usage(s: &Session, i: u32) -> Result<Option<Totals>, u32> {
    let e = &s.entries[i as usize];
    let counts = matches!(
        (e.kind, e.role),
        (EntryType::Message, Role::Assistant | Role::ToolResult)
            | (EntryType::Usage, _)
            | (EntryType::Compaction, _)
            | (EntryType::BranchSummary, _)
    );
    if !counts {
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
            s.parse(i).map_err(|_| e.line)?;
            None
        }
    };
    // pi: `if (!key || !usage) continue` (an assistant's usage is taken as it is).
    Ok(usage.filter(|u| js::truthy(Some(u))).map(|u| Totals::from_usage(&u)))
}
