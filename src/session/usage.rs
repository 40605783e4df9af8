//! Tokens and cost: the totals every format's usage adds up to (what each entry adds is
//! the format's to say: `Dialect::usage`).

use serde_json::Value;

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
