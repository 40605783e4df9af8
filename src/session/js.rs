//! The few JavaScript semantics pi's algorithms depend on.
//!
//! pi is written in TypeScript and its results depend on JS details: truthiness (`if
//! (entry.summary)`), `new Date(x).getTime()` (NaN for bad input, serialised as `null`),
//! template-string conversion (`${msg.exitCode}`), and numbers having no int/float split.
//! Keeping these in one place lets the projection code read like pi's.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// JS truthiness of an optional (possibly `undefined`) JSON value.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// `x == null` in JS: `undefined` or `null`.
pub fn is_nullish(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// `String(x)` as a template literal would produce it.
pub fn to_js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items.iter().map(|i| to_js_string_or_empty(Some(i))).collect::<Vec<_>>().join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// `String(x)`, but `undefined` and `null` as nothing: how `Array.prototype.join` (and a
/// Handlebars `{{x}}`) print them.
pub fn to_js_string_or_empty(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        v => to_js_string(v),
    }
}

/// A JS number as JSON: integral values print without a fraction (JSON.stringify(5) is
/// `5`), NaN and infinities become `null`.
pub fn number(f: f64) -> Value {
    if !f.is_finite() {
        Value::Null
    } else if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// serde's `serialize_with` for [`number`]: a JSON document's numbers as JavaScript
/// prints them (`44`, not `44.0`).
pub fn serialize_number<S: serde::Serializer>(f: &f64, ser: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&number(*f), ser)
}

/// `new Date(x).getTime()`; `None` stands for NaN.
pub fn date_ms(v: Option<&Value>) -> Option<f64> {
    match v {
        None => None,
        Some(Value::Null) => Some(0.0),
        Some(Value::Bool(b)) => Some(if *b { 1.0 } else { 0.0 }),
        Some(Value::Number(n)) => n.as_f64().and_then(time_clip),
        Some(Value::String(s)) => parse_date(s),
        Some(Value::Array(_)) | Some(Value::Object(_)) => None,
    }
}

fn time_clip(f: f64) -> Option<f64> {
    (f.is_finite() && f.abs() <= 8.64e15).then(|| f.trunc() + 0.0)
}

/// Parses the ECMAScript date-time string format (`YYYY-MM-DDTHH:mm:ss.sssZ` and its
/// shorter forms, `±YYYYYY` years, `Z` or `±HH:mm` offsets) to epoch milliseconds.
///
/// Forms without an offset are read as UTC. (JS reads date-time forms without an offset
/// as local time; pi always writes `Z`, and pisces must not depend on the machine's zone.)
/// V8's fallback parser for other shapes ("Nov 29 2026") is not reproduced: they are NaN.
pub fn parse_date(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize, n: usize| -> Option<i64> {
        // One pass that checks each byte as it uses it: the bytes may be a mapped file that
        // another process truncates meanwhile (its pages then read as zeros), so a byte
        // checked once may not be the byte read again.
        let mut value = 0i64;
        for &d in b.get(*i..*i + n)? {
            value = value * 10 + i64::from(d.is_ascii_digit().then(|| d - b'0')?);
        }
        *i += n;
        Some(value)
    };
    let year = match b.first()? {
        b'+' | b'-' => {
            let neg = b[0] == b'-';
            i = 1;
            let y = digits(&mut i, 6)?;
            if neg && y == 0 {
                return None;
            }
            if neg {
                -y
            } else {
                y
            }
        }
        _ => digits(&mut i, 4)?,
    };
    let (mut month, mut day) = (1, 1);
    if b.get(i) == Some(&b'-') {
        i += 1;
        month = digits(&mut i, 2)?;
        if b.get(i) == Some(&b'-') {
            i += 1;
            day = digits(&mut i, 2)?;
        }
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0.0);
    let mut offset_min = 0;
    if matches!(b.get(i), Some(b'T') | Some(b't')) {
        i += 1;
        hour = digits(&mut i, 2)?;
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        minute = digits(&mut i, 2)?;
        if b.get(i) == Some(&b':') {
            i += 1;
            second = digits(&mut i, 2)?;
            if b.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == start {
                    return None;
                }
                // Only milliseconds count; further digits are truncated, as in V8.
                let frac = &s[start..i.min(start + 3)];
                millis = frac.parse::<f64>().ok()? * 10f64.powi(3 - frac.len() as i32);
            }
        }
        match b.get(i) {
            Some(b'Z') | Some(b'z') => i += 1,
            Some(b'+') | Some(b'-') => {
                let sign = if b[i] == b'-' { -1 } else { 1 };
                i += 1;
                let oh = digits(&mut i, 2)?;
                if b.get(i) != Some(&b':') {
                    return None;
                }
                i += 1;
                let om = digits(&mut i, 2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = sign * (oh * 60 + om);
            }
            _ => {}
        }
    }
    if i != b.len() {
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[(month - 1) as usize] {
        return None;
    }
    if hour > 24 || minute > 59 || second > 59 || (hour == 24 && (minute, second, millis) != (0, 0, 0.0)) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let ms = (days as f64) * 86_400_000.0
        + ((hour * 3600 + minute * 60 + second - offset_min * 60) as f64) * 1000.0
        + millis;
    time_clip(ms)
}

/// `new Date(ms).toISOString()`: `2026-11-29T19:18:28.239Z` (years 0-9999).
pub fn iso_string(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, sec, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    if !(0..=9999).contains(&y) {
        return format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{sec:02}.{milli:03}Z");
    }
    // Digit by digit: `ls` writes two times a session, and `format!` showed in its time.
    let mut out = *b"0000-00-00T00:00:00.000Z";
    for (at, width, v) in [(0, 4, y), (5, 2, m), (8, 2, d), (11, 2, h), (14, 2, min), (17, 2, sec), (20, 3, milli)] {
        let mut v = v;
        for k in (at..at + width).rev() {
            out[k] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    // Only ASCII was written.
    String::from_utf8_lossy(&out).into_owned()
}

/// (year, month, day) of a day number since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// JS `text.length`: UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// JS `Number.prototype.toFixed(1)` for a finite `x` ≥ 0 below 10²¹: the decimal with one
/// digit nearest to `x`'s exact value, and of two equally near the larger. Rust's `{:.1}`
/// takes the even one of two, which differs only when `x` is exactly halfway, that is
/// when `x` is an odd number of quarters (x × 10 = k + ½ needs x = j / 4, j odd).
pub fn to_fixed1(x: f64) -> String {
    let quarters = x * 4.0;
    if quarters.fract() == 0.0 && quarters.abs() < 9.0e15 && (quarters as i64) % 2 != 0 {
        let tenths = (quarters as i64 * 5 + 1) / 2;
        return format!("{}.{}", tenths / 10, tenths % 10);
    }
    format!("{x:.1}")
}

/// JS `Number.prototype.toLocaleString()` of an integer in the `en-US` locale (omp runs
/// with it): groups of three digits with commas.
pub fn locale_integer(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// JS `String.prototype.trim` whitespace (used to find blank lines as pi does).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// Sorts `items` as V8's `Array.prototype.sort` does with a comparator that may return
/// NaN (treated as "equal"). For comparators that are a total order every stable sort
/// agrees; with NaN (an entry whose timestamp does not parse) the result depends on the
/// algorithm, so this follows V8's TimSort for short arrays: take the leading natural
/// run (reversing a strictly descending one), then binary-insert the rest.
pub fn v8_sort_by_key<T: Copy>(items: &mut [T], key: impl Fn(T) -> Option<f64>) {
    let cmp = |a: T, b: T| -> f64 {
        match (key(a), key(b)) {
            (Some(x), Some(y)) => x - y,
            _ => f64::NAN,
        }
    };
    let n = items.len();
    if n < 2 {
        return;
    }
    if items.iter().all(|&t| key(t).is_some()) {
        // A total order: any stable sort gives V8's answer.
        items.sort_by(|&a, &b| key(a).unwrap().total_cmp(&key(b).unwrap()));
        return;
    }
    // Natural run at the start.
    let mut run = 2;
    if cmp(items[1], items[0]) < 0.0 {
        while run < n && cmp(items[run], items[run - 1]) < 0.0 {
            run += 1;
        }
        items[..run].reverse();
    } else {
        // "Not less than" on purpose: NaN (incomparable) continues the run, as in V8.
        while run < n && cmp(items[run], items[run - 1]).partial_cmp(&0.0) != Some(std::cmp::Ordering::Less) {
            run += 1;
        }
    }
    for start in run..n {
        let pivot = items[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if cmp(pivot, items[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        items.copy_within(left..start, left + 1);
        items[left] = pivot;
    }
}

/// A number as JS prints it (`String(n)`).
pub fn number_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    // Integers a double holds exactly print as themselves; larger ones go through the
    // shortest round-trip digits below, as JS does (2^64 prints as 18446744073709552000).
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return format!("{}", x as i64);
    }
    // Shortest round-trip digits, then JS's choice of notation.
    let s = format!("{:e}", x);
    let (mantissa, exp) = s.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("exponent");
    let neg = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp + 1;
    let body = if (-5..=0).contains(&(n - 1)) && n <= 0 {
        format!("0.{}{}", "0".repeat((-n) as usize), digits)
    } else if k <= n && n <= 21 {
        format!("{}{}", digits, "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{}", "0".repeat((-n) as usize), digits)
    } else {
        let e = n - 1;
        let sign = if e < 0 { "-" } else { "+" };
        if k == 1 {
            format!("{digits}e{sign}{}", e.abs())
        } else {
            format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs())
        }
    };
    if neg {
        format!("-{body}")
    } else {
        body
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
pub fn entries(map: &Map<String, Value>) -> Vec<(&str, &Value)> {
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
            Some(f) if f.is_finite() => out.push_str(&number_string(f)),
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
            for (i, (k, item)) in entries(map).into_iter().enumerate() {
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

/// Parses a whole line as JSON, as `JSON.parse` would after Node decoded the bytes:
/// invalid UTF-8 becomes U+FFFD, and escaped lone surrogates (which JS accepts and Rust
/// strings cannot hold) become U+FFFD too.
pub fn parse_value(line: &[u8]) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice(line) {
        Ok(v) => Ok(v),
        // Not UTF-8, or a lone surrogate escape: parse what Node would have decoded (the
        // error, if any, is then about the JSON itself).
        Err(_) => serde_json::from_str(&replace_lone_surrogates(&String::from_utf8_lossy(line))),
    }
}

/// Rewrites `\uD800`-`\uDFFF` escapes that are not part of a valid pair to `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let hex = |s: &str| u16::from_str_radix(s, 16).ok();
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i + 6 <= b.len() {
        if b[i] == b'\\' {
            if b[i + 1] == b'u' {
                if let Some(u) = text.get(i + 2..i + 6).and_then(hex) {
                    let is_high = (0xD800..0xDC00).contains(&u);
                    let is_low = (0xDC00..0xE000).contains(&u);
                    let next_low = is_high
                        && text.get(i + 6..i + 8) == Some("\\u")
                        && text.get(i + 8..i + 12).and_then(hex).is_some_and(|l| (0xDC00..0xE000).contains(&l));
                    if is_high && next_low {
                        i += 12;
                        continue;
                    }
                    if is_high || is_low {
                        out.push_str(&text[last..i]);
                        out.push_str("\\ufffd");
                        i += 6;
                        last = i;
                        continue;
                    }
                }
            }
            i += 2; // skip the escaped character
        } else {
            i += 1;
        }
    }
    if last == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The answers are Node's (`(x).toFixed(1)`, `(n).toLocaleString()`), ties included:
    /// 1.25 and 0.75 are exactly halfway and go up; 1.45 and 3.05 are just below halfway.
    #[test]
    fn to_fixed1_and_locale_integer_are_node_s() {
        for (x, want) in [(1.25, "1.3"), (3.05, "3.0"), (1.45, "1.4"), (0.75, "0.8"), (2.5, "2.5"), (0.0, "0.0")] {
            assert_eq!(to_fixed1(x), want, "{x}");
        }
        assert_eq!(locale_integer(1_234_567), "1,234,567");
        assert_eq!(locale_integer(12), "12");
        assert_eq!(locale_integer(100_000), "100,000");
    }

    #[test]
    fn dates_parse_like_js() {
        assert_eq!(parse_date("1970-01-01T00:00:00.000Z"), Some(0.0));
        assert_eq!(parse_date("2026-11-29T19:18:28.239Z"), Some(1_795_979_908_239.0));
        assert_eq!(parse_date("2026-11-29"), Some(1_795_910_400_000.0));
        assert_eq!(parse_date("2026-11-29T19:18:28.2391Z"), Some(1_795_979_908_239.0));
        assert_eq!(parse_date("2026-11-29T20:18:28.239+01:00"), Some(1_795_979_908_239.0));
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("yesterday"), None);
        assert_eq!(parse_date(""), None);
    }

    #[test]
    fn iso_strings_round_trip() {
        for ms in [0i64, 1_795_979_908_239, 951_782_400_000, -1] {
            assert_eq!(parse_date(&iso_string(ms)), Some(ms as f64), "{}", iso_string(ms));
        }
        assert_eq!(iso_string(1_795_979_908_239), "2026-11-29T19:18:28.239Z");
    }

    #[test]
    fn iso_strings_digit_by_digit_are_the_formatted_ones() {
        let formatted = |ms: i64| {
            let rest = ms.rem_euclid(86_400_000);
            let (y, m, d) = civil_from_days(ms.div_euclid(86_400_000));
            let (h, min, s, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
            format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
        };
        // From the first moment of year 0 to the first of year 10000, and a year either side.
        let (first, last) = (-62_167_219_200_000i64, 253_402_300_800_000i64);
        let mut ms = first - 86_400_000 * 400;
        while ms < last + 86_400_000 * 400 {
            assert_eq!(iso_string(ms), formatted(ms));
            ms += 7_919_993_101;
        }
        for ms in [first, first - 1, last - 1, last, 0, -1] {
            assert_eq!(iso_string(ms), formatted(ms));
        }
        assert_eq!(iso_string(first), "0000-01-01T00:00:00.000Z");
        assert_eq!(iso_string(last - 1), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn numbers_print_like_json_stringify() {
        assert_eq!(number(5.0).to_string(), "5");
        assert_eq!(number(0.5).to_string(), "0.5");
        assert_eq!(number(f64::NAN), Value::Null);
    }

    #[test]
    fn nan_sorts_like_v8() {
        // [b(NaN), a(2), c(1)]: natural run [b, a] (NaN is "equal"), then c goes before a
        // but after b, since comparing with b says "equal".
        let ts = [None, Some(2.0), Some(1.0)];
        let mut idx = [0usize, 1, 2];
        v8_sort_by_key(&mut idx, |i| ts[i]);
        assert_eq!(idx, [0, 2, 1]);
    }

    #[test]
    fn numbers_print_like_js() {
        assert_eq!(number_string(12.0), "12");
        assert_eq!(number_string(1.5), "1.5");
        assert_eq!(number_string(-0.0), "0");
        assert_eq!(number_string(1e21), "1e+21");
        assert_eq!(number_string(1e-7), "1e-7");
        assert_eq!(number_string(0.000001), "0.000001");
        assert_eq!(number_string(123456.789), "123456.789");
        assert_eq!(number_string(f64::NAN), "NaN");
    }

    #[test]
    fn stringify_matches_js() {
        let v: Value = serde_json::from_str(
            r#"{"b":1.0,"2":"x","1":[0.5,1e21,1e-7,-0.0,12345678901234567890],"a":"\u0001\n\"é"}"#,
        )
        .unwrap();
        assert_eq!(stringify(&v), r#"{"1":[0.5,1e+21,1e-7,0,12345678901234567000],"2":"x","b":1,"a":"\u0001\n\"é"}"#);
        assert_eq!(stringify(&json!({"path": "src/a.js"})), r#"{"path":"src/a.js"}"#);
        assert_eq!(number_string(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number_string(1.5e-8), "1.5e-8");
        assert_eq!(number_string(1e-6), "0.000001");
    }

    #[test]
    fn lone_surrogates_parse_like_js() {
        let v = parse_value(br#"{"a":"x\ud800y","b":"\ud83d\ude00"}"#).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "\u{1f600}");
    }
}
