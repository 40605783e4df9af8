//! Tokens and cost of a pi entry, counted as pi's `getUsageCostBreakdown` counts them: an
//! assistant message's `usage`, a `usage` entry's (cache warming), and the `usage` of a
//! tool result, a compaction or a branch summary when they carry one.

use serde::Deserialize;
use serde_json::Value;

use crate::session::entry::{EntryIdx, EntryType, Role};
use crate::session::format::{default_response, response_key, Dialect, Response, Unreadable};
use crate::session::usage::Totals;
use crate::session::{js, walk, Session};

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
    if !may_count(s, i) {
        return Ok(None);
    }
    let line = s.raw_line(i);
    let message = s.entries[i].kind == EntryType::Message;
    // Walked to the value where the line allows it (the value the parse reads), else parsed;
    // an object's counts read where they are.
    let usage = match walked_usage_at(line, message) {
        Some(Some(at)) => match totals_walked(line, at) {
            Some(totals) => return Ok(Some(totals)),
            None => usage_at(line, at),
        },
        Some(None) => None,
        None => parsed_usage(s, i, message)?,
    };
    Ok(counted(usage))
}

/// Where the usage value of a line loading validated and pisces reads is (its message's,
/// for a message), found by walking it; `None` when the walk leaves the line to
/// [`parsed_usage`] (`walk::entry_fields_validated`).
fn walked_usage_at(line: &[u8], message: bool) -> Option<Option<usize>> {
    let (top, inner) = walk::entry_fields_validated(line, [b"usage"], [b"usage"])?;
    Some(if message { inner.and_then(|[u]| u) } else { top[0] })
}

/// The usage value at `at`, `null` as none.
fn usage_at(line: &[u8], at: usize) -> Option<Value> {
    walk::value_at(line, at).filter(|u| !u.is_null())
}

/// [`walked_usage_at`]'s value.
#[cfg(test)]
fn walked_usage(line: &[u8], message: bool) -> Option<Option<Value>> {
    walked_usage_at(line, message).map(|at| at.and_then(|at| usage_at(line, at)))
}

/// The totals pi counts of the usage object at `line[at]` (`counted`: an object is truthy,
/// and `Totals::from_usage` reads its counts and its cost's `total`), read where the
/// counts are, without a `Value` of the object: `ls` and `leaves` read one for every
/// reply. `None` for another value, or a key with an escape: the `Value` decides. (The
/// line is one serde_json reads: `walked_usage_at` found it.)
fn totals_walked(line: &[u8], at: usize) -> Option<Totals> {
    if line.get(at) != Some(&b'{') {
        return None;
    }
    let keys: [&[u8]; 6] = [b"input", b"output", b"cacheRead", b"cacheWrite", b"totalTokens", b"cost"];
    let [input, output, cache_read, cache_write, total, cost] = walk::last_values(line, at, keys)?;
    // A count: a finite number, else 0.
    let n = |v: Option<usize>| -> Option<f64> {
        let Some(v) = v else { return Some(0.0) };
        Some(walk::as_f64(line, v)?.filter(|f| f.is_finite()).unwrap_or(0.0))
    };
    let cost_total = match cost {
        Some(c) if line[c] == b'{' => walk::last_values(line, c, [b"total"])?[0],
        _ => None,
    };
    Some(Totals {
        input: n(input)?,
        output: n(output)?,
        cache_read: n(cache_read)?,
        cache_write: n(cache_write)?,
        total_tokens: n(total)?,
        cost: n(cost_total)?,
    })
}

/// The usage value of entry `i`'s line, parsed with everything else skipped.
fn parsed_usage(s: &Session, i: EntryIdx, message: bool) -> Result<Option<Value>, Unreadable> {
    Ok(match serde_json::from_slice::<UsageFields>(s.raw_line(i)) {
        Ok(f) if message => f.message.and_then(|m| m.usage),
        Ok(f) => f.usage,
        // Not the expected shape (a `message` that is no object, …): no usage, unless the
        // line does not parse at all.
        Err(_) => {
            s.parse(i)?;
            None
        }
    })
}

/// The model entry `i`'s message names (see [`Dialect::model`]), read by walking its line
/// where loading found it readable (pi's loading validated it), else as the default reads it.
pub fn model(s: &Session, d: &dyn Dialect, i: EntryIdx) -> Result<Option<String>, Unreadable> {
    match walked_model(s.raw_line(i)).filter(|_| !s.entries[i].unreadable()) {
        Some(model) => Ok(model),
        None => crate::session::format::default_model(d, s, i),
    }
}

/// A validated line's `message.model` when a string, found by walking the line; `None`
/// when the walk leaves the line to the parse (`walk::entry_fields_validated`).
fn walked_model(line: &[u8]) -> Option<Option<String>> {
    let (_, message) = walk::entry_fields_validated(line, [], [b"model"])?;
    let model = message.and_then(|[m]| m).and_then(|at| walk::value_at(line, at));
    Some(model.as_ref().and_then(Value::as_str).map(str::to_string))
}

/// Whether entry `i` may add usage: its kind may carry it, pisces can read it, and (a tool
/// result, which seldom has any) its line has a `usage` key.
fn may_count(s: &Session, i: EntryIdx) -> bool {
    let e = &s.entries[i];
    let kind = matches!(
        (e.kind, e.role),
        (EntryType::Message, Role::Assistant | Role::ToolResult)
            | (EntryType::Usage, _)
            | (EntryType::Compaction, _)
            | (EntryType::BranchSummary, _)
    );
    // An entry pisces cannot read adds nothing (loading reported it). Most tool results
    // carry no usage: they are skipped without parsing.
    kind && !e.unreadable()
        && (e.role != Role::ToolResult || crate::session::text::contains!(s.raw_line(i), b"\"usage\""))
}

/// The totals of a usage value, when pi counts it: `if (!key || !usage) continue` (an
/// assistant's usage is taken as it is).
fn counted(usage: Option<Value>) -> Option<Totals> {
    usage.filter(|u| js::truthy(Some(u))).map(|u| Totals::from_usage(&u))
}

/// Entry `i`'s response for `pisces stats` ([`Dialect::response`]'s default: its usage,
/// its id, `timestamp` and `message.model`), read in one parse that skips all else, where
/// the default reads the usage and then builds the whole entry: `stats` asks it of every
/// reply in every session, and building the entry was a third of its time. A line this
/// parse refuses (a repeated key, what pi's own reading may take otherwise) is left to the
/// default.
pub fn response(s: &Session, d: &dyn Dialect, i: EntryIdx) -> Result<Option<Response>, Unreadable> {
    #[derive(Deserialize)]
    struct Fields {
        message: Option<Message>,
        usage: Option<Value>,
        // (`"timestamp": null` is `Some(Null)`, as the entry holds it and the key reads it.)
        #[serde(default, deserialize_with = "present")]
        timestamp: Option<Value>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(d).map(Some)
    }
    #[derive(Deserialize)]
    struct Message {
        usage: Option<Value>,
        model: Option<Value>,
    }
    if !may_count(s, i) {
        return Ok(None);
    }
    // The timestamp as the entry holds it: a string or null reads the same in pi's parse
    // and in serde_json's; anything else is left to the default.
    let fields = serde_json::from_slice::<Fields>(s.raw_line(i))
        .ok()
        .filter(|f| matches!(f.timestamp, None | Some(Value::Null | Value::String(_))));
    let Some(Fields { message, usage, timestamp }) = fields else { return default_response(s, d, i) };
    let (usage, model) = match message {
        Some(m) if s.entries[i].kind == EntryType::Message => (m.usage, m.model),
        Some(m) => (usage, m.model),
        None => (usage, None),
    };
    let Some(totals) = counted(usage) else { return Ok(None) };
    Ok(Some(Response {
        key: response_key(s, i, timestamp.as_ref(), &totals),
        model: model.as_ref().and_then(Value::as_str).map(str::to_string),
        totals,
        copied: d.place(s, i).is_some(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of the pi corpora, and one of entries made to need a whole parse
    /// (repeated keys, an escaped key, a timestamp that is a number, a message that is
    /// text, a lone surrogate) or to read as null.
    fn files() -> Vec<(String, Vec<u8>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for dir in ["pi-1.6.0", "pi-0.73.1", "edge", "real"] {
            for f in std::fs::read_dir(root.join(dir)).unwrap().map(Result::unwrap) {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "jsonl") {
                    files.push((p.display().to_string(), std::fs::read(&p).unwrap()));
                }
            }
        }
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
        let usage = r#"{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"total":0.5}}"#;
        let made = [
            format!(
                r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{{"role":"assistant","model":"m","usage":{usage}}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"t","timestamp":"u","message":{{"role":"assistant","usage":{usage}}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"a3","parentId":"a2","timestamp":17,"message":{{"role":"assistant","model":"m","usage":{usage}}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"a4","parentId":"a3","timestamp":"t","message":{{"role":"assistant","model":"m","model":"n","usage":{usage}}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"a5","parentId":"a4","timestamp":"t","message":{{"role":"assistant","model":7,"usage":{usage}}}}}"#
            ),
            format!(
                r#"{{"type":"usage","id":"a6","parentId":"a5","timestamp":"t","usage":{usage},"message":{{"model":"m"}}}}"#
            ),
            format!(
                r#"{{"type":"compaction","id":"a7","parentId":"a6","timestamp":"t","summary":"s","firstKeptEntryId":"a1","tokensBefore":1,"usage":{usage}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"a8","parentId":"a7","timestamp":"t\u00e9","message":{{"role":"toolResult","toolCallId":"c","content":[],"usage":{usage}}}}}"#
            ),
            r#"{"type":"message","id":"a9","parentId":"a8","timestamp":"t","message":{"role":"assistant","usage":0}}"#.to_string(),
            format!(
                r#"{{"type":"message","id":"b1","parentId":"a9","timestamp":null,"message":{{"role":"assistant","model":null,"usage":{usage}}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"b2","parentId":"b1","message":{{"role":"assistant","usage":{usage},"usage":{usage}}}}}"#
            ),
            format!(r#"{{"type":"usage","id":"b3","parentId":"b2","timestamp":"t","usage":{usage},"usage":null}}"#),
            format!(
                r#"{{"type":"message","id":"b4","parentId":"b3","timestamp":"t","message":{{"role":"assistant","us\u0061ge":{usage}}}}}"#
            ),
            format!(r#"{{"type":"usage","id":"b5","parentId":"b4","timestamp":"t","message":null,"usage":{usage}}}"#),
            format!(r#"{{"type":"usage","id":"b6","parentId":"b5","timestamp":"t","message":"text","usage":{usage}}}"#),
            r#"{"type":"message","id":"b7","parentId":"b6","timestamp":"t","message":{"role":"assistant","usage":null}}"#.to_string(),
            format!(
                r#"{{"type":"message","id":"b8","parentId":"b7","timestamp":"t","message":{{"role":"assistant","usage":{usage}}},"message":{{"role":"assistant"}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"b9","parentId":"b8","timestamp":"t\ud800","message":{{"role":"assistant","usage":{usage}}}}}"#
            ),
        ];
        // Usage objects whose counts the walk reads as the value does: repeated keys, counts
        // that are not numbers or not finite, a cost that is no object, large and odd numbers,
        // an escaped key inside (left to the value).
        let odd = [
            r#"{"input":1,"input":2.5,"output":"3","cacheRead":null,"cacheWrite":-4,"totalTokens":1e308,"cost":{"total":1,"total":0.25}}"#,
            r#"{ "input" : 12345678901234567890 , "output" : [1] , "cost" : 7 , "totalTokens" : 999999999999999999 }"#,
            r#"{"input":123456789012345678901234567890,"cost":{"total":"1"},"x":{"input":5}}"#,
            r#"{"inp\u0075t":3,"output":4}"#,
            r#"{}"#,
        ];
        let made = made.into_iter().chain(odd.iter().enumerate().map(|(k, u)| {
            let parent = if k == 0 { "b9".to_string() } else { format!("c{k}") };
            format!(
                r#"{{"type":"message","id":"c{}","parentId":"{parent}","timestamp":"t","message":{{"role":"assistant","usage":{u}}}}}"#,
                k + 1
            )
        }));
        let made: Vec<String> = made.collect();
        files.push(("made.jsonl".into(), format!("{header}\n{}\n", made.join("\n")).into_bytes()));
        files
    }

    /// The response read in one parse is the default's (the usage, then the entry built
    /// whole), on every entry of [`files`].
    #[test]
    fn a_response_read_at_once_is_the_default_response() {
        let (mut responses, mut at_once) = (0, 0);
        for (name, bytes) in files() {
            let source = crate::session::Source::from_bytes(&name, bytes);
            let Ok(session) = super::super::load::load(&source, &Default::default()) else { continue };
            let d = session.dialect();
            for i in session.entries.indices() {
                let fast = response(&session, d, i).map_err(|e| e.to_string());
                let slow = default_response(&session, d, i).map_err(|e| e.to_string());
                let show = |r: &Result<Option<Response>, String>| match r {
                    Ok(r) => {
                        format!("{:?}", r.as_ref().map(|r| (&r.key, &r.model, r.copied, format!("{:?}", r.totals))))
                    }
                    Err(e) => e.clone(),
                };
                assert_eq!(show(&fast), show(&slow), "{name}, entry {}", i.get());
                responses += usize::from(matches!(slow, Ok(Some(_))));
                at_once += usize::from(
                    matches!(slow, Ok(Some(_))) && serde_json::from_slice::<Value>(session.raw_line(i)).is_ok(),
                );
            }
        }
        assert!(responses > 50 && at_once > 50, "{responses} responses, {at_once} read at once");
    }

    /// A usage or model walked to is the one serde reads with the rest of the line skipped,
    /// on every line of [`files`]; the walk reads most lines itself, and leaves to the parse
    /// those made to need it.
    #[test]
    fn a_walked_usage_and_model_are_the_parsed_ones() {
        use crate::session::format::parsed_model;
        use crate::session::validate::{validate, Verdict};
        let (mut lines, mut walked, mut objects) = (0, 0, 0);
        for (name, bytes) in files() {
            // (The lines loading validates whole: the walk is for those alone.)
            let valid = |l: &&[u8]| matches!(validate(l), Verdict::Whole { .. });
            for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).filter(valid) {
                lines += 1;
                let text = String::from_utf8_lossy(line);
                for message in [true, false] {
                    let parsed = serde_json::from_slice::<UsageFields>(line).ok().map(|f| {
                        if message {
                            f.message.and_then(|m| m.usage)
                        } else {
                            f.usage
                        }
                    });
                    if let Some(w) = walked_usage(line, message) {
                        walked += 1;
                        assert_eq!(Some(&w), parsed.as_ref(), "{name}: {text}");
                        // The totals walked where the counts are, when they are, are the
                        // totals counted of the value.
                        if let Some(totals) =
                            walked_usage_at(line, message).flatten().and_then(|at| totals_walked(line, at))
                        {
                            objects += 1;
                            assert_eq!(format!("{:?}", Some(totals)), format!("{:?}", counted(w)), "{name}: {text}");
                        }
                    }
                }
                if let Some(w) = walked_model(line) {
                    assert_eq!(Some(w), parsed_model(line), "{name}: {text}");
                }
                let id = serde_json::from_slice::<Value>(line).ok().and_then(|v| v["id"].as_str().map(str::to_string));
                if name == "made.jsonl" && matches!(id.as_deref(), Some("b2" | "b3" | "b4" | "b6" | "b8")) {
                    assert_eq!(walked_usage(line, true).or(walked_usage(line, false)), None, "{text}");
                }
                if name == "made.jsonl" && id.as_deref() == Some("c4") {
                    let at = walked_usage_at(line, true).flatten().expect("walked to");
                    assert!(totals_walked(line, at).is_none(), "an escaped key is left to the value: {text}");
                }
                if name == "made.jsonl" && id.as_deref() == Some("a4") {
                    assert_eq!(walked_model(line), None, "{text}");
                }
                if name == "made.jsonl" && text.contains("\\ud800") {
                    assert_eq!((walked_usage(line, true), walked_model(line)), (None, None), "{text}");
                }
            }
        }
        assert!(walked > lines, "{walked} walked of {lines} lines, twice each");
        assert!(objects > 100, "{objects} usage objects walked to their counts");
    }
}
