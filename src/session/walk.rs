//! Finding where JSON values end in a line already known to be JSON, without parsing
//! them: for readers that want a few fields of a line whose bulk is strings (pi's fork
//! splicing parents into lines as written, Claude Code's index reading keys).

/// The index after the JSON whitespace at `b[i..]`.
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string starting at `b[i] == '"'`. Jumps
/// from quote to quote: a quote ends the string unless an odd number of backslashes comes
/// right before it (text with many escapes, `\n` in every line of a tool's output, would
/// stop a search for backslashes at each one).
pub fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = j + memchr::memchr(b'"', b.get(j..)?)?;
        let backslashes = b[j..k].iter().rev().take_while(|&&c| c == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(k + 1);
        }
        j = k + 1;
    }
}

/// The end of the JSON value starting at `b[i]`.
pub fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_values() {
        let b = br#"{"a":"x\"y\\","b":[1,{"c":"]"}],"d":true}"#;
        assert_eq!(value_end(b, 0), Some(b.len()));
        assert_eq!(string_end(b, 5), Some(13));
        assert_eq!(value_end(b, 18), Some(31));
        assert_eq!(value_end(b, 36), Some(40));
    }
}
