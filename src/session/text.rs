//! Text helpers shared by the model and the renderers.

/// Collapses whitespace and cuts to `max` characters with `…`. Reads no further into
/// `text` than the cut needs (a row of a message of megabytes reads its start).
pub fn one_line(text: &str, max: usize) -> String {
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

/// `ids` sorted (as `str`s sort) for [`short_id`]. Each is sorted by its first eight bytes
/// as a number, kept beside it, and only ties compare the strings: a session's ids are
/// tens of thousands of uuids spread over the heap, and comparing them where they lie
/// misses the cache at every step.
pub fn sorted_ids<'s>(ids: impl Iterator<Item = &'s str>) -> Vec<&'s str> {
    let head = |id: &str| {
        let mut b = [0u8; 8];
        let n = id.len().min(8);
        b[..n].copy_from_slice(&id.as_bytes()[..n]);
        // (Big-endian: the number orders as the bytes do, a shorter id padded with zeros.)
        u64::from_be_bytes(b)
    };
    let mut keyed: Vec<(u64, &str)> = ids.map(|id| (head(id), id)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, id)| id).collect()
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
        let texts = ["", " ", "a", "ab cd", "  a\n\tb  c ", "héllo  wörld  ünïcode", "x y z w v u t s r q p"];
        for text in texts {
            for max in 0..25 {
                assert_eq!(one_line(text, max), whole(text, max), "{text:?} at {max}");
            }
        }
    }
}
