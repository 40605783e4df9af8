//! The JavaScript string and JSON semantics pi's summarizers depend on: lengths in UTF-16
//! code units (`text.length`), `JSON.stringify` (numbers as JS prints them, object keys in
//! JS property order), `Object.entries`, the default `Array.prototype.sort` (UTF-16 code
//! unit order), pi's `sliceHead` and pi-ai's `contentText`.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::session::js;

/// `text.length`: UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// pi's `sliceHead(text, maxUnits)`: at most `max` UTF-16 units, never splitting a
/// surrogate pair (a pair that straddles the cut is left out whole).
pub fn slice_head(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (at, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &s[..at];
        }
    }
    s
}

/// The default `Array.prototype.sort` order for strings: UTF-16 code units.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Sorts as `[...strings].sort()` does.
pub fn sort_utf16(v: &mut [String]) {
    v.sort_by(|a, b| cmp_utf16(a, b));
}

/// pi-ai's `contentText(content, separator)`: a string as is, else the `text` blocks'
/// texts joined by `separator`. Anything else (pi would throw on it) is empty.
pub fn content_text(content: Option<&Value>, separator: &str) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| js::to_js_string(b.get("text")))
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}

/// Whether a key is an array index, which JS objects list first, in numeric order.
fn array_index(k: &str) -> Option<u32> {
    if k == "0" {
        return Some(0);
    }
    if k.is_empty() || k.starts_with('0') || !k.bytes().all(|b| b.is_ascii_digit()) || k.len() > 10 {
        return None;
    }
    k.parse::<u64>().ok().filter(|&n| n < u64::from(u32::MAX)).map(|n| n as u32)
}

/// An object's properties in JS order (`Object.entries`): array-index keys ascending,
/// then the other keys in insertion order.
pub fn js_entries(map: &Map<String, Value>) -> Vec<(&str, &Value)> {
    let mut indexed: Vec<(u32, &str, &Value)> =
        map.iter().filter_map(|(k, v)| array_index(k).map(|n| (n, k.as_str(), v))).collect();
    if indexed.is_empty() {
        return map.iter().map(|(k, v)| (k.as_str(), v)).collect();
    }
    indexed.sort_by_key(|&(n, _, _)| n);
    let mut out: Vec<(&str, &Value)> = indexed.into_iter().map(|(_, k, v)| (k, v)).collect();
    out.extend(map.iter().filter(|(k, _)| array_index(k).is_none()).map(|(k, v)| (k.as_str(), v)));
    out
}

/// `String(number)` / `JSON.stringify(number)` for a finite double.
pub fn js_number(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let abs = f.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust's Display prints the shortest round-trip digits without an exponent, as JS
        // does in this range.
        format!("{f}")
    } else {
        // `1.5e21` in Rust, `1.5e+21` in JS.
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    }
}

/// `JSON.stringify(value)` (compact).
pub fn stringify(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.is_finite() => out.push_str(&js_number(f)),
            _ => out.push_str("null"),
        },
        // serde_json escapes exactly what JSON.stringify escapes in a well-formed string.
        Value::String(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in js_entries(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

/// `JSON.stringify(value).length` for an optional value (`undefined` has no JSON; pi
/// would throw reading its length, pisces counts 0).
pub fn stringify_len(v: Option<&Value>) -> usize {
    v.map_or(0, |v| utf16_len(&stringify(v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lengths_and_cuts_count_utf16_units() {
        assert_eq!(utf16_len("a😀é"), 4);
        assert_eq!(slice_head("ab😀c", 3), "ab");
        assert_eq!(slice_head("ab😀c", 4), "ab😀");
        assert_eq!(slice_head("abc", 10), "abc");
    }

    #[test]
    fn sort_is_by_utf16_code_units() {
        // U+FF5E sorts after U+1F600 in UTF-16 (0xFF5E > 0xD83D), before it by code point.
        let mut v = vec!["\u{ff5e}".to_string(), "😀".to_string(), "a".to_string()];
        sort_utf16(&mut v);
        assert_eq!(v, ["a", "😀", "\u{ff5e}"]);
    }

    #[test]
    fn stringify_matches_js() {
        let v: Value = serde_json::from_str(
            r#"{"b":1.0,"2":"x","1":[0.5,1e21,1e-7,-0.0,12345678901234567890],"a":"\u0001\n\"é"}"#,
        )
        .unwrap();
        assert_eq!(stringify(&v), r#"{"1":[0.5,1e+21,1e-7,0,12345678901234567000],"2":"x","b":1,"a":"\u0001\n\"é"}"#);
        assert_eq!(stringify(&json!({"path": "src/a.js"})), r#"{"path":"src/a.js"}"#);
        assert_eq!(js_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js_number(1.5e-8), "1.5e-8");
        assert_eq!(js_number(1e-6), "0.000001");
    }
}
