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

/// The keys of Codex's usage object that pisces counts, in [`totals_from`]'s order.
const COUNTS: [&str; 5] =
    ["input_tokens", "cached_input_tokens", "output_tokens", "cache_write_input_tokens", "total_tokens"];

/// Codex's usage object (`input_tokens`, `cached_input_tokens`, …) as totals.
pub fn totals_of(u: &Value, model: Option<&str>) -> Totals {
    totals_from(COUNTS.map(|k| u.get(k).and_then(Value::as_f64)), model)
}

/// The totals of the counts of [`COUNTS`] (each a number or none; a count that is not a
/// finite number is 0), at `model`'s price.
fn totals_from(counts: [Option<f64>; 5], model: Option<&str>) -> Totals {
    let [input, cached, output, cache_write, total] = counts.map(|n| n.filter(|f| f.is_finite()).unwrap_or(0.0));
    let mut t = Totals {
        input: (input - cached).max(0.0),
        output,
        cache_read: cached,
        cache_write,
        total_tokens: total,
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
        Some(Some(Usage::Counts(counts))) => return Ok(Some(totals_from(counts, c.model(i)))),
        Some(Some(Usage::Value(u))) => Some(u),
        Some(None) => None,
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
/// it is parsed whole. An object's counts are read where they are, without a `Value`.
fn usage_walked(raw: &[u8], kind: Kind) -> Option<Option<Usage>> {
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
    if raw.get(at) == Some(&b'{') {
        let mut counts = [None; 5];
        for (n, v) in counts.iter_mut().zip(walk::last_values(raw, at, COUNTS.map(str::as_bytes))?) {
            if let Some(v) = v {
                *n = walk::as_f64(raw, v)?;
            }
        }
        return Some(Some(Usage::Counts(counts)));
    }
    let end = walk::value_end(raw, at)?;
    serde_json::from_slice(&raw[at..end]).ok().map(|v| Some(Usage::Value(v)))
}

/// A usage as [`usage_walked`] finds it: an object's counts, or another value.
#[derive(Debug)]
enum Usage {
    Counts([Option<f64>; 5]),
    Value(Value),
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
        let counts = [
            r#"{"input_tokens":12345678901234567890,"input_tokens":-3,"output_tokens":"9","total_tokens":null}"#,
            r#"{ "cached_input_tokens" : 1.5e3 , "output_tokens" : {"x":[1]} , "cache_write_input_tokens" : -0 }"#,
            r#"{"input_tokens":123456789012345678901234567890,"total_tokens":999999999999999999,"x":true}"#,
        ];
        let mut usual = Vec::new();
        for usage in [u, "null", "7", r#""x""#, "[1]", "{}"].into_iter().chain(counts) {
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
                // The totals each gives, at a priced model.
                let walked = w.flatten().map(|u| match u {
                    Usage::Counts(counts) => totals_from(counts, Some("gpt-5")),
                    Usage::Value(v) => totals_of(&v, Some("gpt-5")),
                });
                let parsed = usage_parsed(line.as_bytes(), kind).flatten().map(|v| totals_of(&v, Some("gpt-5")));
                assert_eq!(format!("{walked:?}"), format!("{parsed:?}"), "{kind:?} {line}");
                found += usize::from(walked.is_some());
            }
        }
        assert_eq!(found, 9 * 4, "each usage value is found in the lines of its kind that hold it");
        // Left to the parse: an escaped key, not JSON, not UTF-8, a lone surrogate, a count
        // too large for a float.
        let odd: [&[u8]; 6] = [
            br#"{"payload":{"us\u0061ge":{}}}"#,
            br#"{"payload":{"usage":{"input\u005ftokens":3}}}"#,
            br#"{"payload":{"usage":{"input_tokens":1e400}}}"#,
            br#"{"payload":{"usage":{}}"#,
            b"{\"payload\":{\"usage\":{}},\"x\":\"\xff\"}",
            br#"{"payload":{"usage":{}},"x":"\udc00"}"#,
        ];
        for line in odd {
            assert!(usage_walked(line, Kind::TokenRecord).is_none(), "{}", String::from_utf8_lossy(line));
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
