//! Tokens and cost of a Claude Code reply (docs/claude-format.md §4).
//!
//! The lines of one reply (one per content block) each carry the reply's whole `usage`:
//! it is counted once, on the reply's first line. Cost is the model's list price per
//! million tokens ([`PRICES`], stated in `pisces leaves --help`); a model not in the table
//! costs nothing and says so there.

use serde_json::Value;

use super::context::line;
use super::load::Str;
use super::Claude;
use crate::session::entry::{EntryIdx, Role};
use crate::session::format::{Response, Unreadable};
use crate::session::usage::Totals;
use crate::session::Session;

/// A model's price in US dollars per million tokens.
pub struct Price {
    /// The model id starts with this.
    pub prefix: &'static str,
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

const fn p(prefix: &'static str, input: f64, output: f64) -> Price {
    // Anthropic's rule: a cache write costs 1.25 times the input price, a read 0.1 times.
    Price { prefix, input, output, cache_write: input * 1.25, cache_read: input / 10.0 }
}

/// Longest prefix first. Opus 5.5's price is the one Claude Code 2.1.332 charges in its own
/// `cost-state` lines.
pub const PRICES: &[Price] = &[
    p("claude-opus-5-5", 4.0, 20.0),
    p("claude-opus-4-5", 5.0, 25.0),
    p("claude-opus-4-1", 15.0, 75.0),
    p("claude-opus-4", 15.0, 75.0),
    p("claude-sonnet-4", 3.0, 15.0),
    p("claude-3-7-sonnet", 3.0, 15.0),
    p("claude-3-5-sonnet", 3.0, 15.0),
    p("claude-haiku-4-5", 1.0, 5.0),
    p("claude-3-5-haiku", 0.8, 4.0),
    p("claude-3-haiku", 0.25, 1.25),
    p("claude-3-opus", 15.0, 75.0),
];

fn price(model: &str) -> Option<&'static Price> {
    PRICES.iter().find(|p| model.starts_with(p.prefix))
}

/// A `message`'s usage and its cost at its model's price.
pub fn totals_of(message: &Value) -> Totals {
    let u = message.get("usage");
    let n = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_f64);
    let counts = Counts {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cache_read_input_tokens"),
        cache_write: n("cache_creation_input_tokens"),
    };
    priced(message.get("model").and_then(Value::as_str), &counts)
}

/// The token counts of a `usage` object, each a number or none.
#[derive(Default, Debug, PartialEq)]
struct Counts {
    input: Option<f64>,
    output: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
}

/// The totals of `counts` (a count that is not a finite number is 0), at `model`'s price.
fn priced(model: Option<&str>, counts: &Counts) -> Totals {
    let n = |c: Option<f64>| c.filter(|f| f.is_finite()).unwrap_or(0.0);
    let mut t = Totals {
        input: n(counts.input),
        output: n(counts.output),
        cache_read: n(counts.cache_read),
        cache_write: n(counts.cache_write),
        total_tokens: 0.0,
        cost: 0.0,
    };
    t.total_tokens = t.tokens();
    if let Some(p) = price(model.unwrap_or_default()) {
        t.cost =
            (t.input * p.input + t.output * p.output + t.cache_write * p.cache_write + t.cache_read * p.cache_read)
                / 1e6;
    }
    t
}

/// A `usage` value read straight into its counts, as [`totals_of`] reads it from a `Value`
/// (numbers as `f64`, anything else as none, the last of repeated keys; `null` is no usage,
/// another value is usage with no counts), without building the value: `leaves` reads one
/// for every reply of the file.
struct UsageValue(Option<Counts>);

impl<'de> serde::Deserialize<'de> for UsageValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        /// A number as `Value::as_f64` gives it; `None` for any other value.
        struct Num(Option<f64>);
        impl<'de> serde::Deserialize<'de> for Num {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                Ok(Num(Value::deserialize(d)?.as_f64()))
            }
        }
        /// Which count a key names (read from the key's bytes, never copied: serde's own
        /// `Cow<str>` always copies).
        enum Key {
            Input,
            Output,
            CacheRead,
            CacheWrite,
            Other,
        }
        impl<'de> serde::Deserialize<'de> for Key {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct K;
                impl Visitor<'_> for K {
                    type Value = Key;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a key")
                    }
                    fn visit_str<E>(self, k: &str) -> Result<Key, E> {
                        Ok(match k {
                            "input_tokens" => Key::Input,
                            "output_tokens" => Key::Output,
                            "cache_read_input_tokens" => Key::CacheRead,
                            "cache_creation_input_tokens" => Key::CacheWrite,
                            _ => Key::Other,
                        })
                    }
                }
                d.deserialize_str(K)
            }
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UsageValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<UsageValue, E> {
                Ok(UsageValue(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<UsageValue, E> {
                Ok(UsageValue(Some(Counts::default())))
            }
            fn visit_i64<E>(self, _: i64) -> Result<UsageValue, E> {
                Ok(UsageValue(Some(Counts::default())))
            }
            fn visit_u64<E>(self, _: u64) -> Result<UsageValue, E> {
                Ok(UsageValue(Some(Counts::default())))
            }
            fn visit_f64<E>(self, _: f64) -> Result<UsageValue, E> {
                Ok(UsageValue(Some(Counts::default())))
            }
            fn visit_str<E>(self, _: &str) -> Result<UsageValue, E> {
                Ok(UsageValue(Some(Counts::default())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<UsageValue, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(UsageValue(Some(Counts::default())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<UsageValue, A::Error> {
                let mut c = Counts::default();
                while let Some(key) = m.next_key::<Key>()? {
                    let slot = match key {
                        Key::Input => &mut c.input,
                        Key::Output => &mut c.output,
                        Key::CacheRead => &mut c.cache_read,
                        Key::CacheWrite => &mut c.cache_write,
                        Key::Other => {
                            m.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = m.next_value::<Num>()?.0;
                }
                Ok(UsageValue(Some(c)))
            }
        }
        d.deserialize_any(V)
    }
}

/// What entry `i` adds: a reply's usage, on its first line only.
pub fn entry_usage(s: &Session, c: &Claude, i: EntryIdx) -> Result<Option<Totals>, Unreadable> {
    if s.entries[i].role != Role::Assistant || !c.first_of_reply(i) {
        return Ok(None);
    }
    // The model and the usage where the index found them, else from the whole line.
    if let Some(spans) = c.lines[i.get()].reply {
        let raw = s.raw_line(i);
        let model = spans.model.read::<Str>(raw).unwrap_or(Some(Str::default()));
        let usage = spans.usage.read::<UsageValue>(raw).unwrap_or(Some(UsageValue(None)));
        if let (Some(model), Some(usage)) = (model, usage) {
            return Ok(usage.0.map(|counts| priced(model.as_deref(), &counts)));
        }
    }
    // Only the model and the usage are read (serde skips the content unbuilt).
    #[derive(serde::Deserialize)]
    struct Reply {
        message: Option<Message>,
    }
    #[derive(serde::Deserialize)]
    struct Message {
        model: Option<Value>,
        usage: Option<Value>,
    }
    let r: Reply = match serde_json::from_slice(s.raw_line(i)) {
        Ok(r) => r,
        Err(_) => {
            line(s, i)?;
            return Ok(None);
        }
    };
    Ok(r.message.filter(|m| m.usage.is_some()).map(|m| reply_totals(m.model, m.usage.unwrap_or_default())))
}

/// Entry `i`'s response for `pisces stats`: keyed by the API's message and request ids (a
/// reply's lines share them, and a `--fork-session` copies them), as ccusage keys it. A
/// copied line names the session that made the request in `requestSessionId`.
pub fn response(s: &Session, c: &Claude, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
    let Some(totals) = entry_usage(s, c, i)? else { return Ok(None) };
    match response_from_spans(s, c, i, totals) {
        Some(r) => Ok(Some(r)),
        None => response_parsed(s, i, totals).map(Some),
    }
}

/// [`response`] from the whole line.
fn response_parsed(s: &Session, i: EntryIdx, totals: Totals) -> Result<Response, Unreadable> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Ids {
        uuid: Option<String>,
        timestamp: Option<String>,
        session_id: Option<String>,
        request_id: Option<String>,
        request_session_id: Option<String>,
        message: Option<Message>,
    }
    #[derive(serde::Deserialize)]
    struct Message {
        id: Option<String>,
        model: Option<String>,
    }
    // The usage was read, so the line parses.
    let ids: Ids = serde_json::from_slice(s.raw_line(i)).map_err(|e| Unreadable::at(s, i, e.to_string()))?;
    let (id, model) = ids.message.map_or((None, None), |m| (m.id, m.model));
    let key = match (id, &ids.request_id) {
        (Some(id), Some(req)) => format!("{id}:{req}"),
        (Some(id), None) => id,
        _ => format!("{}@{}", ids.uuid.unwrap_or_default(), ids.timestamp.unwrap_or_default()),
    };
    let copied = ids.request_session_id.is_some_and(|r| Some(&r) != ids.session_id.as_ref());
    Ok(Response { key, model, totals, copied })
}

/// [`response`]'s answer from the index (the reply's `message.id`, the spans of its
/// `requestId` and `model`) when the parse would read the same: the line is one serde_json
/// reads, its ids are plain ([`super::ReplySpans::plain_ids`]), and it has a message id.
/// `stats` asks this of every reply of every session, and the parse, which skips the
/// reply's content string by string, was an eighth of its time.
fn response_from_spans(s: &Session, c: &Claude, i: EntryIdx, totals: Totals) -> Option<Response> {
    let spans = c.lines[i.get()].reply.filter(|r| r.plain_ids)?;
    let raw = s.raw_line(i);
    crate::session::validate::serde_reads(raw)?;
    let text = |at: super::At| -> Option<Option<String>> { at.read::<Option<String>>(raw).unwrap_or(Some(None)) };
    let id = super::Texts::of(s).get(i.get(), &c.lines[i.get()].message_id)?.to_string();
    let key = match text(spans.request_id)? {
        Some(req) => format!("{id}:{req}"),
        None => id,
    };
    Some(Response { key, model: text(spans.model)?, totals, copied: false })
}

fn reply_totals(model: Option<Value>, usage: Value) -> Totals {
    let mut o = serde_json::Map::new();
    o.insert("model".into(), model.unwrap_or_default());
    o.insert("usage".into(), usage);
    totals_of(&Value::Object(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response read from the index is the response read from the whole line, on every
    /// reply of the corpus (each alone in a session) and on replies made to need the parse
    /// (repeated or odd ids, a copy, a line serde_json refuses).
    #[test]
    fn a_response_from_the_index_is_the_response_from_the_line() {
        let mut lines: Vec<String> = Vec::new();
        for path in crate::corpus::jsonl_files(&["claude-code-2.1.332", "claude-code-log"]) {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            lines.extend(text.lines().filter(|l| l.contains("\"assistant\"")).map(str::to_string));
        }
        let reply = |rest: &str| {
            format!(
                r#"{{"type":"assistant","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","sessionId":"s1",{rest}}}"#
            )
        };
        let usage = r#""usage":{"input_tokens":3,"output_tokens":4}"#;
        let made = [
            reply(&format!(
                r#""requestId":"r1","message":{{"id":"m1","role":"assistant","model":"claude-x",{usage}}}"#
            )),
            reply(&format!(r#""requestId":"r1","requestId":"r2","message":{{"id":"m1","role":"assistant",{usage}}}"#)),
            reply(&format!(r#""requestId":7,"message":{{"id":"m1","role":"assistant",{usage}}}"#)),
            reply(&format!(r#""message":{{"id":"m1","id":"m2","role":"assistant",{usage}}}"#)),
            reply(&format!(r#""message":{{"id":null,"role":"assistant",{usage}}}"#)),
            reply(&format!(r#""message":{{"id":"m\u0031","role":"assistant","model":"a\"b",{usage}}}"#)),
            reply(&format!(r#""message":{{"id":"m1","role":"assistant","model":5,{usage}}}"#)),
            reply(&format!(
                r#""requestSessionId":"s0","requestId":"r1","message":{{"id":"m1","role":"assistant",{usage}}}"#
            )),
            reply(&format!(r#""requestSessionId":null,"message":{{"id":"m1","role":"assistant",{usage}}}"#)),
            reply(&format!(r#""uuid":"u2","message":{{"id":"m1","role":"assistant",{usage}}}"#)),
            reply(&format!(r#""message":{{"id":"m1","role":"assistant",{usage},"content":"\udc00"}}"#)),
        ];
        lines.extend(made);
        let (mut fast, mut replies) = (0, 0);
        let mut blocks = crate::session::walk::Blocks::default();
        for l in &lines {
            let source = crate::session::Source::from_bytes("t.jsonl", format!("{l}\n").into_bytes());
            let Ok(session) = super::super::load::load(&source, &Default::default()) else { continue };
            for i in session.entries.indices() {
                let Ok(Some(answer)) = session.dialect().response(&session, i) else { continue };
                replies += 1;
                let parsed = response_parsed(&session, i, answer.totals).ok();
                // Whether the index had the ids (else the answer was the parse's).
                let mut head = super::super::load::Head::default();
                let plain = super::super::scan::head(session.raw_line(i), &mut blocks, true, &mut head)
                    .and(head.reply)
                    .is_some_and(|r| r.plain_ids && head.message_id.as_deref().is_some());
                if !plain {
                    continue;
                }
                fast += 1;
                let parsed = parsed.unwrap_or_else(|| panic!("read from the index, refused by the parse: {l:.300}"));
                assert_eq!(
                    (&answer.key, &answer.model, answer.copied),
                    (&parsed.key, &parsed.model, parsed.copied),
                    "{l:.300}"
                );
            }
        }
        assert!(replies > 100 && fast * 10 > replies * 9, "{fast} of {replies} replies read from the index");
    }

    /// `leaves --help` states the table; it must be this one.
    #[test]
    fn help_states_the_price_table() {
        use clap::CommandFactory;
        let mut cmd = crate::cli::Cli::command();
        let help = cmd.find_subcommand_mut("leaves").expect("a leaves command").render_long_help().to_string();
        for p in PRICES {
            let row = format!("{:<20} {} / {} / {} / {}", p.prefix, p.input, p.output, p.cache_write, p.cache_read);
            assert!(help.contains(&row), "leaves --help lacks {row:?}");
        }
    }

    /// The counts read straight from a usage value are what `totals_of` reads from the
    /// value, on every usage in the corpus and on values made to differ (repeated keys,
    /// strings, floats, nested objects, not an object at all).
    #[test]
    fn usage_read_straight_is_usage_read_as_a_value() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/claude-code-2.1.332");
        let mut usages: Vec<String> = Vec::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                for line in std::fs::read_to_string(&path).unwrap().lines() {
                    if let Some(u) =
                        serde_json::from_str::<Value>(line).ok().and_then(|v| v.pointer("/message/usage").cloned())
                    {
                        usages.push(u.to_string());
                    }
                }
            }
        }
        assert!(usages.len() > 50, "{}", usages.len());
        usages.extend(
            [
                r#"{"input_tokens":1,"input_tokens":7,"output_tokens":"9"}"#,
                r#"{"cache_read_input_tokens":1.5e3,"cache_creation_input_tokens":-2,"output_tokens":{"x":1}}"#,
                r#"{"input_tokens":null,"output_tokens":[1],"other":{"input_tokens":5}}"#,
                r#"{"input_tokens":18446744073709551615,"output_tokens":-9223372036854775808}"#,
                r#"7"#,
                r#""text""#,
                r#"[1,2]"#,
                r#"null"#,
                r#"{}"#,
            ]
            .map(String::from),
        );
        for u in &usages {
            let value: Value = serde_json::from_str(u).unwrap();
            let straight: UsageValue = serde_json::from_str(u).unwrap();
            let message = serde_json::json!({"model": "claude-opus-5-5", "usage": value});
            let expected = (!value.is_null()).then(|| totals_of(&message));
            let got = straight.0.map(|c| priced(Some("claude-opus-5-5"), &c));
            assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{u}");
        }
    }

    #[test]
    fn a_reply_costs_its_models_price() {
        let m = serde_json::json!({"model": "claude-opus-5-5-20261101", "usage": {"input_tokens": 1_000_000, "output_tokens": 1_000_000, "cache_read_input_tokens": 1_000_000, "cache_creation_input_tokens": 1_000_000}});
        assert!((totals_of(&m).cost - 29.4).abs() < 1e-9);
        let unknown = serde_json::json!({"model": "gpt-9", "usage": {"input_tokens": 10}});
        assert_eq!((totals_of(&unknown).cost, totals_of(&unknown).input), (0.0, 10.0));
    }
}
