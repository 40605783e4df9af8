//! Tokens and cost as Codex counts them (docs/codex-format.md §4).
//!
//! 0.171.0 writes a `token_usage_record` for each response (`usage`: that response's
//! tokens); older rollouts only have `event_msg` `token_count` events, whose
//! `info.last_token_usage` is the last response's and which repeat an unchanged total when
//! nothing new was used. A rollout with records counts those; one without counts each event
//! whose `total_token_usage` changed. OpenAI's `input_tokens` include the cached ones:
//! pisces counts `input - cached` as input and `cached` as cache reads. A fork copies no
//! lines, so what it inherited is counted once, in its parent's file.

use serde_json::Value;

use super::{Codex, Kind};
use crate::session::entry::EntryIdx;
use crate::session::format::{Response, Unreadable};
use crate::session::usage::Totals;
use crate::session::walk;
use crate::session::Session;

/// A model's price in US dollars per million tokens (OpenAI's list prices).
pub struct Price {
    /// The model id starts with this.
    pub prefix: &'static str,
    pub input: f64,
    pub cached: f64,
    pub output: f64,
}

/// Longest prefix first.
pub const PRICES: &[Price] = &[
    Price { prefix: "gpt-5-nano", input: 0.05, cached: 0.005, output: 0.4 },
    Price { prefix: "gpt-5-mini", input: 0.25, cached: 0.025, output: 2.0 },
    Price { prefix: "gpt-5", input: 1.25, cached: 0.125, output: 10.0 },
    Price { prefix: "gpt-4.1-mini", input: 0.4, cached: 0.1, output: 1.6 },
    Price { prefix: "gpt-4.1", input: 2.0, cached: 0.5, output: 8.0 },
    Price { prefix: "o4-mini", input: 1.1, cached: 0.275, output: 4.4 },
    Price { prefix: "o3", input: 2.0, cached: 0.5, output: 8.0 },
];

fn price(model: &str) -> Option<&'static Price> {
    PRICES.iter().find(|p| model.starts_with(p.prefix))
}

/// Codex's usage object (`input_tokens`, `cached_input_tokens`, …) as totals.
pub fn totals_of(u: &Value, model: Option<&str>) -> Totals {
    let n = |k: &str| u.get(k).and_then(Value::as_f64).filter(|f| f.is_finite()).unwrap_or(0.0);
    let cached = n("cached_input_tokens");
    let mut t = Totals {
        input: (n("input_tokens") - cached).max(0.0),
        output: n("output_tokens"),
        cache_read: cached,
        cache_write: n("cache_write_input_tokens"),
        total_tokens: n("total_tokens"),
        cost: 0.0,
    };
    if let Some(p) = model.and_then(price) {
        t.cost = ((t.input + t.cache_write) * p.input + t.cache_read * p.cached + t.output * p.output) / 1e6;
    }
    t
}

pub fn entry_usage(s: &Session, c: &Codex, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
    let item = &c.items[i.get()];
    if !item.counted {
        return Ok(None);
    }
    let u = match usage_walked(s.raw_line(i), item.kind) {
        Some(u) => u,
        None => {
            let line = c.line(s, i)?;
            let u = match item.kind {
                Kind::TokenRecord => line.pointer("/payload/usage"),
                Kind::TokenCount => line.pointer("/payload/info/last_token_usage"),
                _ => None,
            };
            u.cloned()
        }
    };
    Ok(u.map(|u| totals_of(&u, c.model(i))))
}

/// The usage object a counted line holds (`Some(None)`: none), found by walking the line
/// and parsing only that object: `stats` reads one of every response in every session, and
/// a `Value` of the whole line (rate limits and all) cost seven times as much. As a
/// `Value`'s pointer finds it: the last of repeated keys, nothing under what is not an
/// object. `None`: a line that [`Codex::line`] would not read, or with an escaped key;
/// it is parsed whole.
fn usage_walked(raw: &[u8], kind: Kind) -> Option<Option<Value>> {
    crate::session::validate::serde_reads(raw)?;
    let path: &[&[u8]] = match kind {
        Kind::TokenRecord => &[b"payload", b"usage"],
        Kind::TokenCount => &[b"payload", b"info", b"last_token_usage"],
        _ => return Some(None),
    };
    let mut at = walk::skip_ws(raw, 0);
    for key in path {
        if raw.get(at) != Some(&b'{') {
            return Some(None);
        }
        match walk::last_values(raw, at, [*key])? {
            [Some(v)] => at = v,
            [None] => return Some(None),
        }
    }
    let end = walk::value_end(raw, at)?;
    serde_json::from_slice(&raw[at..end]).ok().map(Some)
}

/// Entry `i`'s response for `pisces stats`: an entry's id names its thread and its place
/// in it, the same in the rollout that wrote it and in every fork that inherits it.
pub fn response(s: &Session, c: &Codex, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
    let Some(totals) = entry_usage(s, c, i)? else { return Ok(None) };
    let key = format!("{}@{:?}", s.id_str(i).unwrap_or_default(), s.time(i));
    let copied = s.dialect().place(s, i).is_some();
    Ok(Some(Response { key, model: c.model(i).map(str::to_string), totals, copied }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `leaves --help` states the table; it must be this one.
    #[test]
    fn help_states_the_price_table() {
        use clap::CommandFactory;
        let mut cmd = crate::cli::Cli::command();
        let help = cmd.find_subcommand_mut("leaves").expect("a leaves command").render_long_help().to_string();
        for p in PRICES {
            let row = format!("{:<20} {} / {} / {}", p.prefix, p.input, p.cached, p.output);
            assert!(help.contains(&row), "leaves --help lacks {row:?}");
        }
    }

    /// The usage object as a `Value` of the whole line finds it (`None`: not JSON).
    fn usage_parsed(raw: &[u8], kind: Kind) -> Option<Option<Value>> {
        let line: Value = serde_json::from_slice(raw).ok()?;
        let pointer = if kind == Kind::TokenRecord { "/payload/usage" } else { "/payload/info/last_token_usage" };
        Some(line.pointer(pointer).cloned())
    }

    #[test]
    fn usage_walked_is_usage_parsed() {
        let u = r#"{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2.5e1,"total_tokens":36}"#;
        let mut usual = Vec::new();
        for usage in [u, "null", "7", r#""x""#, "[1]", "{}"] {
            usual.push(format!(
                r#"{{"timestamp":"t","type":"token_usage_record","payload":{{"model":"m","usage":{usage}}}}}"#
            ));
            usual.push(format!(
                r#"{{"timestamp":"t","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{u},"last_token_usage":{usage}}},"rate_limits":null}}}}"#
            ));
            // Repeated keys: the last one, as in a `Value`.
            usual.push(format!(r#"{{"payload":{{"usage":{u}}},"payload":{{"usage":{usage},"usage":{usage}}}}}"#));
            usual.push(format!(
                r#"{{"payload":{{"info":{{"last_token_usage":{u}}},"info":{{"last_token_usage":{usage}}}}}}}"#
            ));
        }
        for line in [
            r#"{"payload":null}"#,
            r#"{"payload":[{"usage":{}}]}"#,
            r#"{"payload":{"info":null}}"#,
            r#"{"payload":{"info":"x"}}"#,
            r#"{"payload":{}}"#,
            r#"[{"payload":{"usage":{}}}]"#,
            r#"{"other":{"usage":{}}}"#,
        ] {
            usual.push(line.to_string());
        }
        let mut found = 0;
        for line in &usual {
            for kind in [Kind::TokenRecord, Kind::TokenCount] {
                let w = usage_walked(line.as_bytes(), kind);
                assert!(w.is_some(), "a usual line is walked: {line}");
                assert_eq!(w, usage_parsed(line.as_bytes(), kind), "{kind:?} {line}");
                found += usize::from(w.is_some_and(|u| u.is_some()));
            }
        }
        assert_eq!(found, 6 * 4, "each usage value is found in the lines of its kind that hold it");
        // Left to the parse: an escaped key, not JSON, not UTF-8, a lone surrogate.
        let odd: [&[u8]; 4] = [
            br#"{"payload":{"us\u0061ge":{}}}"#,
            br#"{"payload":{"usage":{}}"#,
            b"{\"payload\":{\"usage\":{}},\"x\":\"\xff\"}",
            br#"{"payload":{"usage":{}},"x":"\udc00"}"#,
        ];
        for line in odd {
            assert_eq!(usage_walked(line, Kind::TokenRecord), None, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_response_costs_its_models_price_cached_input_apart() {
        let u =
            serde_json::json!({"input_tokens": 1_000_000, "cached_input_tokens": 400_000, "output_tokens": 1_000_000});
        let t = totals_of(&u, Some("gpt-5-codex"));
        assert_eq!((t.input, t.cache_read, t.output), (600_000.0, 400_000.0, 1_000_000.0));
        assert!((t.cost - (0.6 * 1.25 + 0.4 * 0.125 + 10.0)).abs() < 1e-9);
        assert_eq!(totals_of(&u, Some("mock-model")).cost, 0.0);
    }
}
