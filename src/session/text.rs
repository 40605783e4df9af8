//! Text helpers shared by the model and the renderers.

/// Collapses whitespace and cuts to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
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
