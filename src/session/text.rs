//! Text helpers shared by the model and the renderers.

/// `memchr::memmem::find(hay, needle).is_some()` with the needle's searcher built once per
/// process: `find` builds it on every call, and for a key looked for in every line of a
/// session (`"usage"` in each tool result, a Codex line's second `"timestamp"`) building it
/// cost more than the search.
macro_rules! contains {
    ($hay:expr, $needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        FINDER.find($hay).is_some()
    }};
}
pub(crate) use contains;

/// `b` as text, if it is UTF-8. The strings a walk reads (ids, keys, types) are short and
/// nearly always ASCII: `from_utf8` spent a hundred instructions setting up for a dozen
/// bytes, and such strings are read from every line.
#[inline]
pub fn utf8(b: &[u8]) -> Option<&str> {
    match b.is_ascii() {
        // SAFETY: ASCII bytes are UTF-8.
        true => Some(unsafe { std::str::from_utf8_unchecked(b) }),
        false => std::str::from_utf8(b).ok(),
    }
}

/// Collapses whitespace and cuts to `max` characters with `…`. Reads no further into
/// `text` than the cut needs (a row of a message of megabytes reads its start).
pub fn one_line(text: &str, max: usize) -> String {
    if let Some(flat) = one_line_ascii(text.as_bytes(), max) {
        return flat;
    }
    let mut flat = String::new();
    let mut count = 0;
    'words: for word in text.split_whitespace() {
        if count > 0 {
            flat.push(' ');
            count += 1;
        }
        for c in word.chars() {
            if count > max {
                break 'words;
            }
            flat.push(c);
            count += 1;
        }
    }
    if count <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// [`one_line`] of a text that is ASCII as far as the cut reads it, a byte at a time (`None`
/// at the first other byte, for the general way): a tree row's text, a table's cell. Char
/// by char, with Unicode's whitespace test and a `String` push for each, it cost 50
/// instructions a character (a Codex family's `tree`: a tenth of its time).
fn one_line_ascii(b: &[u8], max: usize) -> Option<String> {
    let mut flat = Vec::with_capacity(b.len().min(max.saturating_add(2)));
    let mut space = false;
    for &c in b {
        match c {
            0x80.. => return None,
            // What `char::is_whitespace` is among ASCII (with the vertical tab, which
            // `u8::is_ascii_whitespace` leaves out).
            b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => space = !flat.is_empty(),
            _ => {
                if space {
                    flat.push(b' ');
                    space = false;
                }
                if flat.len() > max {
                    break;
                }
                flat.push(c);
            }
        }
    }
    if flat.len() > max {
        flat.truncate(max.saturating_sub(1));
        flat.extend_from_slice("…".as_bytes());
    }
    String::from_utf8(flat).ok()
}

/// `ids` sorted (as `str`s sort) for [`short_id`]. Each is sorted by its first eight bytes
/// as a number, kept beside it, and only ties compare the strings: a session's ids are
/// tens of thousands of uuids spread over the heap, and comparing them where they lie
/// misses the cache at every step.
pub fn sorted_ids<'s>(ids: impl Iterator<Item = &'s str>) -> Vec<&'s str> {
    let mut keyed: Vec<(u64, &str)> = ids.map(|id| (head(id), id)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// An id's first eight bytes as a number that orders as the bytes do (big-endian), a
/// shorter id padded with zeros.
fn head(id: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = id.len().min(8);
    b[..n].copy_from_slice(&id.as_bytes()[..n]);
    u64::from_be_bytes(b)
}

/// [`short_id`] of each of `wanted` among `all` (every id of the session), without sorting
/// `all`: `leaves` names a few hundred tips among tens of thousands of ids, and the sort was
/// a twentieth of its time. What `short_id` reads of the sorted ids is each wanted id's two
/// neighbours; one pass over `all` finds, for each wanted id's first eight bytes, the
/// nearest other first eight bytes on either side, and the ids that share them. An id that
/// differs within its first eight bytes shares with the wanted one exactly the bytes their
/// numbers share, so only the ids with the same eight bytes are compared as strings.
pub fn short_ids<'s>(all: impl Iterator<Item = &'s str>, wanted: &[&str], min: usize) -> Vec<String> {
    let mut heads: Vec<u64> = wanted.iter().map(|w| head(w)).collect();
    heads.sort_unstable();
    heads.dedup();
    let n = heads.len();
    let (mut below, mut above) = (vec![None::<u64>; n], vec![None::<u64>; n]);
    let mut same: Vec<Vec<&str>> = vec![Vec::new(); n];
    let mut everything = Vec::new();
    for id in all {
        everything.push(id);
        let h = head(id);
        let j = heads.partition_point(|&x| x < h);
        // The nearest head below each wanted head, and the nearest above.
        let up_to = if heads.get(j) == Some(&h) {
            same[j].push(id);
            j + 1
        } else {
            j
        };
        if let Some(b) = below.get_mut(up_to) {
            *b = (*b).max(Some(h));
        }
        if j > 0 {
            let a = &mut above[j - 1];
            *a = Some(a.map_or(h, |a| a.min(h)));
        }
    }
    // Nothing between two wanted heads: the nearest is past the next one (which no id has,
    // else it would be the nearest).
    for k in 1..n {
        below[k] = below[k].or(below[k - 1]);
    }
    for k in (0..n.saturating_sub(1)).rev() {
        above[k] = above[k].or(above[k + 1]);
    }
    for s in &mut same {
        s.sort_unstable();
    }
    let mut sorted = None;
    wanted
        .iter()
        .map(|&id| {
            // A zero byte in the first eight is the padding's, to the numbers: sorted.
            if id.as_bytes().iter().take(8).any(|&b| b == 0) {
                let sorted = sorted.get_or_insert_with(|| sorted_ids(everything.iter().copied()));
                return short_id(id, sorted, min);
            }
            let k = heads.binary_search(&head(id)).unwrap_or_default();
            let Ok(pos) = same[k].binary_search(&id) else { return id.to_string() };
            // Characters of `id` within the bytes it shares with an id of another head.
            let shared = |other: u64| {
                let bytes = ((head(id) ^ other).leading_zeros() / 8) as usize;
                id.char_indices().take_while(|(at, c)| at + c.len_utf8() <= bytes.min(id.len())).count()
            };
            let common = |other: &str| id.chars().zip(other.chars()).take_while(|(a, b)| a == b).count();
            let before = match pos {
                0 => below[k].map(shared),
                _ => Some(common(same[k][pos - 1])),
            };
            let after = match same[k].get(pos + 1) {
                Some(next) => Some(common(next)),
                None => above[k].map(shared),
            };
            let need = before.unwrap_or(0).max(after.unwrap_or(0));
            cut(id, need, min)
        })
        .collect()
}

/// The shortest prefix of `id` that no other id in `sorted` (every id of the session,
/// sorted and deduplicated) starts with; at least `min` characters, or the whole id when
/// it is shorter or when every prefix of it is shared (an id that is a prefix of another).
pub fn short_id(id: &str, sorted: &[&str], min: usize) -> String {
    let Ok(pos) = sorted.binary_search(&id) else { return id.to_string() };
    let common = |other: &str| id.chars().zip(other.chars()).take_while(|(a, b)| a == b).count();
    let mut need = 0;
    if pos > 0 {
        need = need.max(common(sorted[pos - 1]));
    }
    if let Some(next) = sorted.get(pos + 1) {
        need = need.max(common(next));
    }
    cut(id, need, min)
}

/// `id`'s first `need + 1` characters, at least `min`; the whole id when that is all of it.
fn cut(id: &str, need: usize, min: usize) -> String {
    let len = id.chars().count();
    let take = (need + 1).max(min);
    if take >= len {
        return id.to_string();
    }
    id.chars().take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same order as sorting the strings, on ids that share their first eight bytes,
    /// are shorter than eight, or end in zero bytes.
    #[test]
    fn sorted_ids_sort_as_strings_do() {
        let ids =
            ["abcdefgh2", "abcdefgh1", "abc", "ab", "ab\0", "ab\0\0x", "", "zz", "abcdefgh", "é", "abcdefgi", "b"];
        let mut want: Vec<&str> = ids.to_vec();
        want.sort_unstable();
        assert_eq!(sorted_ids(ids.into_iter()), want);
    }

    /// The same short ids as sorting every id and reading each one's neighbours, on ids
    /// that share their first eight bytes or fewer, repeat, are shorter than eight bytes,
    /// hold zero bytes or non-ASCII letters; some wanted ids are not among them.
    #[test]
    fn short_ids_are_short_id_of_the_sorted_ids() {
        let alphabet = ["a", "b", "é", "\0", "0", "ab", "aé"];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let mut all_cases = 0;
        for round in 0..300 {
            let count = 1 + next(40);
            let ids: Vec<String> = (0..count)
                .map(|_| {
                    let len = 1 + next(14);
                    let mut id: String = if round % 2 == 0 { "abcdef".into() } else { String::new() };
                    for _ in 0..len {
                        id.push_str(alphabet[next(alphabet.len())]);
                    }
                    id
                })
                .collect();
            let mut wanted: Vec<&str> = (0..1 + next(6)).map(|_| ids[next(ids.len())].as_str()).collect();
            wanted.extend(["abcdefaaa", "zz", "abcdef"]);
            let sorted = sorted_ids(ids.iter().map(String::as_str));
            for min in [4, 8] {
                let got = short_ids(ids.iter().map(String::as_str), &wanted, min);
                let want: Vec<String> = wanted.iter().map(|w| short_id(w, &sorted, min)).collect();
                assert_eq!(got, want, "{ids:?} at {min}");
                all_cases += want.len();
            }
        }
        assert!(all_cases > 3000);
    }

    /// The same as collapsing the whole text and cutting it, at every length around the cut.
    #[test]
    fn one_line_cuts_as_collapsing_everything_would() {
        let whole = |text: &str, max: usize| {
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if flat.chars().count() <= max {
                flat
            } else {
                let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
                cut.push('…');
                cut
            }
        };
        let long = "word ".repeat(60);
        let texts = [
            "",
            " ",
            "a",
            "ab cd",
            "  a\n\tb  c ",
            "héllo  wörld  ünïcode",
            "x y z w v u t s r q p",
            "vertical\x0Btab\x0Cfeed\rreturn",
            "no-break\u{a0}space and\u{3000}ideographic\u{85}next line",
            "ascii first, then ünïcode",
            "ascii up to the cut and more, then é past it",
            "\u{1F389} first",
            "ends with spaces   \n ",
            long.as_str(),
        ];
        for text in texts {
            for max in 0..40 {
                assert_eq!(one_line(text, max), whole(text, max), "{text:?} at {max}");
            }
        }
    }
}
