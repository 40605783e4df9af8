//! Turns: cutting a side into turns, aligning two sides' turns, and describing a turn.
//!
//! A turn starts at a user message, a `bashExecution` or a custom message (pi's
//! compaction: `findTurnStartIndex`), together with the entries that yield no message
//! right before it (a branch summary, a model change, a label: what the user did before
//! sending the prompt). Entries before a side's first prompt continue the turn the fork
//! point is in.

use std::ops::Range;

use rustc_hash::FxHashMap;
use similar::{capture_diff_slices, Algorithm, DiffOp};

use super::calls::{outcome, results_by_call, target};
use super::facts::{self, Fact, FactKind};
use super::{Event, Prompt, Reply, ToolCall, Turn};
use crate::session::format::Unreadable;
use crate::session::{EntryIdx, EntryType, LineNo, Role, Session};

/// A turn of one side: a range of its facts, and the fact that starts it.
#[derive(Clone, Debug)]
pub(super) struct Span {
    pub range: Range<usize>,
    pub prompt: Option<usize>,
}

fn is_prompt(s: &Session, i: EntryIdx) -> bool {
    let e = &s.entries[i];
    matches!(
        (e.kind, e.role),
        (EntryType::Message, Role::User | Role::BashExecution | Role::Custom | Role::HookMessage)
            | (EntryType::CustomMessage, _)
    )
}

/// An entry that yields no message (what may come with the next prompt).
fn yields_no_message(s: &Session, i: EntryIdx) -> bool {
    !matches!(s.entries[i].kind, EntryType::Message | EntryType::CustomMessage)
}

/// Cuts a side (its entries, in path order) into turns.
pub(super) fn split(s: &Session, facts: &[Fact]) -> Vec<Span> {
    split_entries(s, &facts.iter().map(|f| f.entry).collect::<Vec<_>>())
}

fn split_entries(s: &Session, entries: &[EntryIdx]) -> Vec<Span> {
    let mut starts: Vec<(usize, usize)> = Vec::new(); // (first entry, prompt)
    let mut floor = 0;
    for (k, &i) in entries.iter().enumerate() {
        if !is_prompt(s, i) {
            continue;
        }
        let mut first = k;
        while first > floor && yields_no_message(s, entries[first - 1]) {
            first -= 1;
        }
        starts.push((first, k));
        floor = k + 1;
    }
    let mut spans = Vec::with_capacity(starts.len() + 1);
    let lead_end = starts.first().map_or(entries.len(), |&(f, _)| f);
    if lead_end > 0 {
        spans.push(Span { range: 0..lead_end, prompt: None });
    }
    for (n, &(first, prompt)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(entries.len(), |&(f, _)| f);
        spans.push(Span { range: first..end, prompt: Some(prompt) });
    }
    spans
}

/// Turns of the two sides together past which they are not aligned by their prompts but
/// paired in order: a size, not a time, so that the same sessions always pair the same
/// way. Patience diffing the prompts is quick, but between its anchors it falls back to
/// Myers' algorithm, which on this many keys can take up to about (N+M)²/2 = 5·10⁷ steps.
const MAX_ALIGNED_TURNS: usize = 10_000;

/// Pairs the two sides' turns: the parts continuing across the fork point together, then
/// the rest by a diff of their prompts (equal prompts pair up; between them, turns pair
/// in order). Sides with no prompt in common, or more than [`MAX_ALIGNED_TURNS`] turns
/// together, pair in order.
pub(super) fn align<'t>(
    fa: &[Fact],
    ta: &'t [Span],
    fb: &[Fact],
    tb: &'t [Span],
) -> Vec<(Option<&'t Span>, Option<&'t Span>)> {
    let (lead_a, ka) = keys(fa, ta);
    let (lead_b, kb) = keys(fb, tb);
    align_keys(lead_a, &ka, lead_b, &kb).into_iter().map(|(x, y)| (x.map(|i| &ta[i]), y.map(|j| &tb[j]))).collect()
}

/// Whether a side's first turn is the part continuing across the fork point (no prompt),
/// and the keys its other turns are aligned by: their prompts' kind and text, hashed.
pub(super) fn keys(facts: &[Fact], turns: &[Span]) -> (bool, Vec<u64>) {
    let lead = turns.first().is_some_and(|t| t.prompt.is_none());
    let key = |t: &Span| -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        if let Some(FactKind::Prompt(p)) = t.prompt.map(|k| &facts[k].kind) {
            p.kind.hash(&mut h);
            p.text.hash(&mut h);
        }
        h.finish()
    };
    (lead, turns[usize::from(lead)..].iter().map(key).collect())
}

/// [`align`] on the sides' [`keys`]: pairs of indices into each side's turns.
pub(super) fn align_keys(lead_a: bool, ka: &[u64], lead_b: bool, kb: &[u64]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut pairs = Vec::new();
    if lead_a || lead_b {
        pairs.push((lead_a.then_some(0), lead_b.then_some(0)));
    }
    // (Indices of the turns after the leads.)
    let (oa, ob) = (usize::from(lead_a), usize::from(lead_b));
    let a = |d: usize| (d < ka.len()).then_some(oa + d);
    let b = |d: usize| (d < kb.len()).then_some(ob + d);
    // Too many turns, or no prompt in common (attempts usually differ in every prompt):
    // pair in order.
    let in_b: rustc_hash::FxHashSet<u64> = kb.iter().copied().collect();
    if ka.len() + kb.len() > MAX_ALIGNED_TURNS || !ka.iter().any(|k| in_b.contains(k)) {
        for d in 0..ka.len().max(kb.len()) {
            pairs.push((a(d), b(d)));
        }
        return pairs;
    }
    for op in capture_diff_slices(Algorithm::Patience, ka, kb) {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                pairs.extend((0..len).map(|d| (a(old_index + d), b(new_index + d))));
            }
            DiffOp::Delete { old_index, old_len, .. } => {
                pairs.extend((0..old_len).map(|d| (a(old_index + d), None)));
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                pairs.extend((0..new_len).map(|d| (None, b(new_index + d))));
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                for d in 0..old_len.max(new_len) {
                    pairs.push(((d < old_len).then(|| oa + old_index + d), (d < new_len).then(|| ob + new_index + d)));
                }
            }
        }
    }
    pairs
}

/// Describes one turn (`results`: [`results_by_call`] of all `facts`).
pub(super) fn view(s: &Session, all: &[Fact], span: &Span, results: &FxHashMap<&str, usize>) -> Turn {
    let facts = &all[span.range.clone()];
    let prompt = span.prompt;
    let start = facts.first().map(|f| f.entry);
    let mut turn = Turn {
        start_id: start.map_or(serde_json::Value::Null, |i| s.id_value(i)),
        start_line: start.map_or(LineNo(0), |i| s.entries[i].line),
        prompt: prompt.and_then(|k| match &all[k].kind {
            FactKind::Prompt(p) => Some(Prompt {
                kind: p.kind,
                id: s.id_value(all[k].entry),
                line: s.entries[all[k].entry].line,
                text: p.text.clone(),
                exit_code: p.exit_code,
                custom_type: p.custom_type.clone(),
            }),
            _ => None,
        }),
        entries: facts.len(),
        model_calls: 0,
        tool_calls: Vec::new(),
        reply: None,
        events: Vec::new(),
    };
    for f in facts {
        let line = s.entries[f.entry].line;
        match &f.kind {
            FactKind::Assistant(a) => {
                turn.model_calls += 1;
                for c in &a.calls {
                    let result = results.get(c.id.as_str()).map(|&k| &all[k]);
                    let r = result.and_then(|f| match &f.kind {
                        FactKind::ToolResult(r) => Some(r),
                        _ => None,
                    });
                    let (outcome, exit_code, error) = outcome(c, r);
                    turn.tool_calls.push(ToolCall {
                        entry_id: s.id_value(f.entry),
                        line,
                        call_id: c.id.clone(),
                        name: c.name.clone(),
                        target: target(c),
                        outcome,
                        exit_code,
                        error,
                        result_line: result.map(|f| s.entries[f.entry].line),
                    });
                }
                turn.reply = Some(Reply {
                    id: s.id_value(f.entry),
                    line,
                    text: a.text.clone(),
                    stop_reason: a.stop_reason.clone(),
                    error_message: a.error_message.clone(),
                });
            }
            FactKind::Event(text) => turn.events.push(Event {
                kind: s.entries[f.entry].kind.name().to_string(),
                id: s.id_value(f.entry),
                line,
                text: text.clone(),
            }),
            _ => {}
        }
    }
    turn
}

/// The last user message of the shared prefix.
pub(super) fn last_user_prompt(s: &Session, shared: &[EntryIdx]) -> Result<Option<super::EntryText>, Unreadable> {
    let Some(&i) = shared.iter().rev().find(|&&i| {
        let e = &s.entries[i];
        e.kind == EntryType::Message && e.role == Role::User
    }) else {
        return Ok(None);
    };
    let text = match facts::fact(s, i)? {
        FactKind::Prompt(p) => p.text,
        _ => String::new(),
    };
    Ok(Some(super::EntryText { id: s.id_value(i), line: s.entries[i].line, text }))
}

/// The last `n` turns of the shared prefix (the last one cut by the fork point).
pub(super) fn context(s: &Session, shared: &[EntryIdx], n: usize) -> Result<Vec<Turn>, Unreadable> {
    if n == 0 || shared.is_empty() {
        return Ok(Vec::new());
    }
    // Find the n-th prompt from the end, reading only the index.
    let mut seen = 0;
    let mut from = 0;
    for k in (0..shared.len()).rev() {
        if is_prompt(s, shared[k]) {
            seen += 1;
            if seen == n {
                from = k;
                break;
            }
        }
    }
    if seen == 0 {
        return Ok(Vec::new());
    }
    // Take in the entries without messages just before it, as `split` does.
    while from > 0 && yields_no_message(s, shared[from - 1]) {
        from -= 1;
    }
    let part = &shared[from..];
    let facts: Vec<Fact> = part
        .iter()
        .map(|&i| Ok(Fact { entry: i, kind: facts::fact(s, i)?, usage: None }))
        .collect::<Result<_, Unreadable>>()?;
    let spans = split_entries(s, part);
    let results = results_by_call(&facts);
    Ok(spans.iter().filter(|sp| sp.prompt.is_some()).map(|sp| view(s, &facts, sp, &results)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::facts::PromptFact;

    /// A side whose turns are each one prompt.
    fn side(prompts: &[String]) -> (Vec<Fact>, Vec<Span>) {
        let facts = prompts
            .iter()
            .enumerate()
            .map(|(k, p)| Fact {
                entry: EntryIdx::new(k),
                kind: FactKind::Prompt(PromptFact {
                    kind: "user",
                    text: p.clone(),
                    exit_code: None,
                    cancelled: false,
                    output: None,
                    custom_type: None,
                }),
                usage: None,
            })
            .collect();
        let spans = (0..prompts.len()).map(|k| Span { range: k..k + 1, prompt: Some(k) }).collect();
        (facts, spans)
    }

    /// The aligned pairs as (A's turn, B's turn) positions.
    fn aligned(a: &[String], b: &[String]) -> Vec<(Option<usize>, Option<usize>)> {
        let ((fa, ta), (fb, tb)) = (side(a), side(b));
        let at = |t: Option<&Span>| t.and_then(|t| t.prompt);
        align(&fa, &ta, &fb, &tb).into_iter().map(|(x, y)| (at(x), at(y))).collect()
    }

    fn texts(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn turns_pair_by_equal_prompts() {
        let a = texts(&["fix it", "run the tests", "commit"]);
        let b = texts(&["run the tests", "push"]);
        assert_eq!(aligned(&a, &b), [(Some(0), None), (Some(1), Some(0)), (Some(2), Some(1))]);
        // No prompt in common: in order.
        let c = texts(&["one", "two"]);
        assert_eq!(aligned(&a, &c), [(Some(0), Some(0)), (Some(1), Some(1)), (Some(2), None)]);
    }

    #[test]
    fn too_many_turns_pair_in_order() {
        // B has one more turn at the start: aligned, every turn of A pairs with the next of B.
        let n = MAX_ALIGNED_TURNS / 2 - 1;
        let a: Vec<String> = (0..n).map(|k| format!("prompt {k}")).collect();
        let b: Vec<String> = std::iter::once("first".to_string()).chain(a.iter().cloned()).collect();
        let pairs = aligned(&a, &b);
        assert_eq!(pairs.len(), n + 1);
        assert_eq!(pairs[0], (None, Some(0)));
        assert!(pairs[1..].iter().enumerate().all(|(k, &p)| p == (Some(k), Some(k + 1))));
        // One turn more than the limit: in order, the same way each time.
        let a: Vec<String> = (0..n + 2).map(|k| format!("prompt {k}")).collect();
        assert_eq!(a.len() + b.len(), MAX_ALIGNED_TURNS + 1);
        let pairs = aligned(&a, &b);
        assert_eq!(pairs.len(), a.len());
        assert!(
            pairs.iter().enumerate().all(|(k, &p)| p == (Some(k), (k < b.len()).then_some(k))),
            "{:?}",
            &pairs[..3]
        );
        assert_eq!(aligned(&a, &b), pairs);
    }
}
