//! The JavaScript string and JSON semantics pi's summarizers depend on: lengths in UTF-16
//! code units (`text.length`), `JSON.stringify` (numbers as JS prints them, object keys in
//! JS property order), `Object.entries`, the default `Array.prototype.sort` (UTF-16 code
//! unit order), pi's `sliceHead` and pi-ai's `contentText`.

use std::cmp::Ordering;

use serde_json::Value;

use crate::session::js;

pub use crate::session::js::utf16_len;

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

pub use crate::session::system::content_text_joined as content_text;

/// `JSON.stringify(value).length` for an optional value (`undefined` has no JSON; pi
/// would throw reading its length, pisces counts 0).
pub fn stringify_len(v: Option<&Value>) -> usize {
    v.map_or(0, |v| utf16_len(&js::stringify(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
