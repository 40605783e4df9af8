//! Word diffs of prompts and line diffs of replies, as the text output shows them, under
//! a budget of work.
//!
//! Before a pair of texts is diffed, [`myers_steps`] counts the steps Myers' algorithm
//! (`similar`'s default, used for the diff itself) takes on their tokens. A pair may take
//! [`Budget::EACH`] steps, all pairs of a report [`Budget::ALL`]; a pair over either
//! limit is not diffed, and the texts are shown whole, side by side, as they are when the
//! diff would not be worth reading. Counting steps instead of measuring time makes the
//! output depend on the input only, never on how loaded the machine is.

use similar::{ChangeTag, DiffableStr, TextDiff};

use super::{Prompt, Reply, Turn};

/// Which side a piece of a diff is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// On both sides.
    Equal,
    /// Only on side A.
    Delete,
    /// Only on side B.
    Insert,
}

/// A piece of a diff: text (of one or more words, or one line with its newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub tag: Tag,
    pub text: String,
}

/// Two prompts' word diff: runs of changed words (and the whitespace between them)
/// merged as git's `--word-diff` does: all the deleted text of a stretch, then all the
/// inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordDiff {
    pub runs: Vec<Span>,
}

/// Two replies' line diff: hunks of lines (a [`Span`] a line), each change with up to two
/// lines of context around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineDiff {
    pub hunks: Vec<Vec<Span>>,
}

/// What the word and line diffs of one report may still take, in steps of Myers'
/// algorithm (see [`myers_steps`]).
#[derive(Debug)]
pub struct Budget {
    each: u64,
    left: u64,
}

impl Budget {
    /// Steps one diff may take: counted work, not time, so that the same texts always get
    /// the same diff (about 20 ms of counting and diffing in a release build).
    pub const EACH: u64 = 2_500_000;
    /// Steps all diffs of a report may take together: work, not time, for the same reason
    /// (about 100 ms in a release build).
    pub const ALL: u64 = 12_500_000;

    pub fn new() -> Budget {
        Budget::with(Budget::EACH, Budget::ALL)
    }

    fn with(each: u64, all: u64) -> Budget {
        Budget { each, left: all }
    }

    /// Takes the steps a diff of `a` and `b` needs: `false` when it needs more than a
    /// diff may take or than is left (the steps counted until then are spent).
    fn take<T: PartialEq>(&mut self, a: &[T], b: &[T]) -> bool {
        let limit = self.each.min(self.left);
        match myers_steps(a, b, limit) {
            Some(n) => {
                self.left -= n;
                true
            }
            None => {
                self.left -= limit;
                false
            }
        }
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new()
    }
}

impl Prompt {
    /// The prompt as shown and compared: a custom message's text follows its
    /// `[customType]`.
    pub fn shown_text(&self) -> String {
        match (self.kind, &self.custom_type) {
            ("custom", Some(t)) => format!("[{t}] {}", self.text),
            _ => self.text.clone(),
        }
    }
}

impl Reply {
    /// The reply as shown and compared: its text after `[error: …]`, `[aborted]` or
    /// `[length]` when it ended so, `(no text)` (or `(stopReason)`) when it has neither.
    pub fn shown_text(&self) -> String {
        let stop = self.stop_reason.as_deref().unwrap_or_default();
        let note = match (stop, &self.error_message) {
            ("error" | "aborted" | "length", Some(e)) => format!("[{stop}: {e}] "),
            ("error" | "aborted" | "length", None) => format!("[{stop}] "),
            _ => String::new(),
        };
        if self.text.trim().is_empty() && note.is_empty() {
            return format!("({})", if stop.is_empty() { "no text" } else { stop });
        }
        format!("{note}{}", self.text)
    }
}

/// The diffs the text output shows for two aligned turns: of their prompts when both
/// have one and they differ, of their replies when both have one and they differ, each
/// when it is worth reading and within the budget. Prompts are diffed before replies, and
/// the pairs of a report in order, so that the budget runs out at the same place.
pub(super) fn of_pair(budget: &mut Budget, a: Option<&Turn>, b: Option<&Turn>) -> (Option<WordDiff>, Option<LineDiff>) {
    let prompts = match (a.and_then(|t| t.prompt.as_ref()), b.and_then(|t| t.prompt.as_ref())) {
        (Some(x), Some(y)) if !(x.text == y.text && x.kind == y.kind) => {
            words(budget, &x.shown_text(), &y.shown_text())
        }
        _ => None,
    };
    let replies = match (a.and_then(|t| t.reply.as_ref()), b.and_then(|t| t.reply.as_ref())) {
        (Some(x), Some(y)) => {
            let (tx, ty) = (x.shown_text(), y.shown_text());
            if tx == ty {
                None
            } else {
                lines(budget, &tx, &ty)
            }
        }
        _ => None,
    };
    (prompts, replies)
}

/// A word diff of `a` and `b`, when they share at least half of the shorter text.
pub fn words(budget: &mut Budget, a: &str, b: &str) -> Option<WordDiff> {
    if !comparable(a, b) {
        return None;
    }
    let (ta, tb) = (a.tokenize_words(), b.tokenize_words());
    if !budget.take(&ta, &tb) {
        return None;
    }
    let diff = TextDiff::configure().diff_slices(&ta, &tb);
    mostly_shared(&diff, a, b).then(|| WordDiff { runs: word_runs(&diff) })
}

/// A line diff of `a` and `b`, when one has three lines or more and they share at least
/// half of their lines.
pub fn lines(budget: &mut Budget, a: &str, b: &str) -> Option<LineDiff> {
    let multi_line = a.lines().count().max(b.lines().count()) >= 3;
    if !multi_line || !comparable(a, b) {
        return None;
    }
    let (ta, tb) = (a.tokenize_lines(), b.tokenize_lines());
    if !budget.take(&ta, &tb) {
        return None;
    }
    let diff = TextDiff::configure().diff_slices(&ta, &tb);
    if diff.ratio() < 0.5 {
        return None;
    }
    let hunks = diff
        .grouped_ops(2)
        .iter()
        .map(|group| {
            group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|c| Span { tag: tag(c.tag()), text: c.value().to_string() })
                .collect()
        })
        .collect();
    Some(LineDiff { hunks })
}

fn tag(t: ChangeTag) -> Tag {
    match t {
        ChangeTag::Equal => Tag::Equal,
        ChangeTag::Delete => Tag::Delete,
        ChangeTag::Insert => Tag::Insert,
    }
}

/// Texts of so different sizes that a diff would be mostly one side.
fn comparable(a: &str, b: &str) -> bool {
    let (x, y) = (a.len().min(b.len()), a.len().max(b.len()));
    x > 0 && (y <= 4000 || x * 4 >= y)
}

/// A diff is worth reading when the texts share at least half of the shorter one.
fn mostly_shared<'x>(diff: &TextDiff<'x, 'x, 'x, str>, a: &str, b: &str) -> bool {
    let shorter = a.trim().len().min(b.trim().len());
    let equal: usize = diff
        .iter_all_changes()
        .filter(|c| c.tag() == ChangeTag::Equal && !c.value().trim().is_empty())
        .map(|c| c.value().len())
        .sum();
    shorter > 0 && equal * 2 >= shorter
}

/// The changes of a word diff as runs: within a stretch of changes (equal whitespace
/// between changed words belongs to the stretch), all deleted text, then all inserted.
fn word_runs<'x>(diff: &TextDiff<'x, 'x, 'x, str>) -> Vec<Span> {
    let changes: Vec<(Tag, &str)> = diff.iter_all_changes().map(|c| (tag(c.tag()), c.value())).collect();
    let mut runs: Vec<Span> = Vec::new();
    let (mut deleted, mut inserted) = (String::new(), String::new());
    for (k, &(t, v)) in changes.iter().enumerate() {
        let in_stretch = !deleted.is_empty() || !inserted.is_empty();
        // Whitespace between two changes joins the stretch (on both sides).
        let joins = t == Tag::Equal
            && in_stretch
            && v.trim().is_empty()
            && changes.get(k + 1).is_some_and(|(t, _)| *t != Tag::Equal);
        match t {
            Tag::Delete => deleted.push_str(v),
            Tag::Insert => inserted.push_str(v),
            Tag::Equal if joins => {
                if !deleted.is_empty() {
                    deleted.push_str(v);
                }
                if !inserted.is_empty() {
                    inserted.push_str(v);
                }
            }
            Tag::Equal => {
                flush(&mut runs, &mut deleted, &mut inserted);
                match runs.last_mut() {
                    Some(Span { tag: Tag::Equal, text }) => text.push_str(v),
                    _ => runs.push(Span { tag: Tag::Equal, text: v.to_string() }),
                }
            }
        }
    }
    flush(&mut runs, &mut deleted, &mut inserted);
    runs
}

fn flush(runs: &mut Vec<Span>, deleted: &mut String, inserted: &mut String) {
    if !deleted.is_empty() {
        runs.push(Span { tag: Tag::Delete, text: std::mem::take(deleted) });
    }
    if !inserted.is_empty() {
        runs.push(Span { tag: Tag::Insert, text: std::mem::take(inserted) });
    }
}

/// The steps of Myers' greedy algorithm on `a` and `b` (after their common prefix and
/// suffix, which take a step a token): each diagonal tried at each edit distance `d`
/// (`d + 1` of them, as `similar` tries them) and each token compared along a snake.
/// `similar`'s linear-space Myers does work of the same order on the same input. `None`
/// once the count passes `limit`.
pub fn myers_steps<T: PartialEq>(a: &[T], b: &[T], limit: u64) -> Option<u64> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let mut steps = (prefix + suffix) as u64 + 1;
    if steps > limit {
        return None;
    }
    if a.is_empty() || b.is_empty() {
        return Some(steps);
    }
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = n + m;
    // The count passes `limit` before d reaches √(2·limit): d + 1 steps for each d.
    let reach = max.min((2.0 * limit as f64).sqrt() as isize + 1);
    // v[k + reach + 1]: how far (x) the furthest path with d edits reaches on diagonal k.
    let mut v = vec![0isize; 2 * reach as usize + 3];
    let at = |k: isize| (k + reach + 1) as usize;
    for d in 0..=max {
        steps += d as u64 + 1;
        if steps > limit {
            return None;
        }
        for k in (-d..=d).step_by(2) {
            let mut x =
                if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) { v[at(k + 1)] } else { v[at(k - 1)] + 1 };
            let mut y = x - k;
            let start = x;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            steps += (x - start) as u64;
            if steps > limit {
                return None;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                return Some(steps);
            }
        }
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(d: &WordDiff) -> Vec<(Tag, &str)> {
        d.runs.iter().map(|s| (s.tag, s.text.as_str())).collect()
    }

    #[test]
    fn word_diffs_merge_runs() {
        let d = words(&mut Budget::new(), "fix the test please", "fix the code now please").unwrap();
        assert_eq!(
            runs(&d),
            [(Tag::Equal, "fix the "), (Tag::Delete, "test"), (Tag::Insert, "code now"), (Tag::Equal, " please")]
        );
        let d = words(&mut Budget::new(), "Can you fix it?", "Can you fix it? Fix the implementation.").unwrap();
        assert_eq!(runs(&d), [(Tag::Equal, "Can you fix it?"), (Tag::Insert, " Fix the implementation.")]);
    }

    #[test]
    fn texts_sharing_little_get_no_diff() {
        assert_eq!(words(&mut Budget::new(), "fix the test", "write a poem about autumn"), None);
        assert_eq!(words(&mut Budget::new(), "", "something"), None);
        let a = "one\ntwo\nthree\nfour\n";
        assert_eq!(lines(&mut Budget::new(), a, "five\nsix\nseven\neight\n"), None);
        // Fewer than three lines: no line diff.
        assert_eq!(lines(&mut Budget::new(), "one\ntwo", "one\nthree"), None);
    }

    #[test]
    fn line_diffs_have_two_lines_of_context() {
        let a = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let b = "1\n2\n3\n4\nfive\n6\n7\n8\n";
        let d = lines(&mut Budget::new(), a, b).unwrap();
        let hunk: Vec<(Tag, &str)> = d.hunks[0].iter().map(|s| (s.tag, s.text.as_str())).collect();
        assert_eq!(
            hunk,
            [
                (Tag::Equal, "3\n"),
                (Tag::Equal, "4\n"),
                (Tag::Delete, "5\n"),
                (Tag::Insert, "five\n"),
                (Tag::Equal, "6\n"),
                (Tag::Equal, "7\n")
            ]
        );
        assert_eq!(d.hunks.len(), 1);
    }

    #[test]
    fn myers_steps_count_the_work() {
        let t = |s: &str| s.chars().collect::<Vec<char>>();
        // Equal texts: a step a token, and one to start.
        assert_eq!(myers_steps(&t("abcdef"), &t("abcdef"), u64::MAX), Some(7));
        // One side empty after the common part: nothing to search.
        assert_eq!(myers_steps(&t("abc"), &t("abcxyz"), u64::MAX), Some(4));
        // Few edits in long texts cost little; many cost about d²/2.
        let long: String = "ab".repeat(500);
        let one_edit = format!("{}x{}", &long[..500], &long[500..]);
        let few = myers_steps(&t(&long), &t(&one_edit), u64::MAX).unwrap();
        assert!(few < 1_100, "{few}");
        let other: String = "cd".repeat(500);
        let many = myers_steps(&t(&long), &t(&other), u64::MAX).unwrap();
        assert!(many >= 2000 * 2000 / 2, "{many}");
        // Past the limit: None.
        assert_eq!(myers_steps(&t(&long), &t(&other), 10_000), None);
        assert_eq!(myers_steps(&t(&long), &t(&other), many), Some(many));
        assert_eq!(myers_steps(&t(&long), &t(&other), many - 1), None);
    }

    /// Texts whose word diff takes about 600 steps: a shared paragraph, with a few words
    /// changed at each end.
    fn pair() -> (String, String) {
        let middle = "the tests in the parser module fail because the tokenizer drops the last line ".repeat(20);
        (format!("please fix this: {middle} thanks"), format!("could you repair it: {middle} cheers"))
    }

    #[test]
    fn the_same_texts_always_get_the_same_diff() {
        // Every third of 1800 words differs: about 725 000 steps, some 100 ms in a debug
        // build, far past the 20 ms a budget of time allowed a diff.
        let text = |changed: &str| -> String {
            (0..1800).map(|i| if i % 3 == 0 { format!("{changed}{i} ") } else { format!("word{i} ") }).collect()
        };
        let (a, b) = (text("old"), text("new"));
        let need = myers_steps(&a.tokenize_words(), &b.tokenize_words(), u64::MAX).unwrap();
        assert!(need > 500_000 && need <= Budget::EACH, "{need}");
        // The minimal diff, computed with no limit at all.
        let exact = WordDiff { runs: word_runs(&TextDiff::from_words(a.as_str(), b.as_str())) };
        assert_eq!(exact.runs.len(), 600 * 3, "a deletion, an insertion and the words between, 600 times");
        let alone = words(&mut Budget::new(), &a, &b);
        assert_eq!(alone.as_ref(), Some(&exact));
        // The same while both cores are busy with other work.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let loaded = std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let mut x = 1u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                });
            }
            let r = (0..3).map(|_| words(&mut Budget::new(), &a, &b)).collect::<Vec<_>>();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            r
        });
        assert!(loaded.iter().all(|r| *r == alone));
    }

    #[test]
    fn a_diff_over_the_budget_falls_back_to_the_whole_texts() {
        let (a, b) = pair();
        let (ta, tb) = (a.tokenize_words(), b.tokenize_words());
        let need = myers_steps(&ta, &tb, u64::MAX).unwrap();
        // Under its own limit: a word diff.
        assert!(words(&mut Budget::with(need, Budget::ALL), &a, &b).is_some());
        // One step short, for this pair or for what is left of the report's: none.
        assert_eq!(words(&mut Budget::with(need - 1, Budget::ALL), &a, &b), None);
        assert_eq!(words(&mut Budget::with(Budget::EACH, need - 1), &a, &b), None);
        // The budget is shared by the pairs of a report: once spent, no more diffs.
        let mut budget = Budget::with(Budget::EACH, 2 * need + need / 2);
        assert!(words(&mut budget, &a, &b).is_some());
        assert!(words(&mut budget, &a, &b).is_some());
        assert_eq!(words(&mut budget, &a, &b), None);
        assert_eq!(words(&mut budget, "fix it", "fix it now"), None, "nothing left");
        // Completely different long texts are over the default budget.
        let x = (0..3000).map(|i| format!("a{i}")).collect::<Vec<_>>().join(" ");
        let y = (0..3000).map(|i| format!("b{i}")).collect::<Vec<_>>().join(" ");
        assert_eq!(myers_steps(&x.tokenize_words(), &y.tokenize_words(), Budget::EACH), None);
        assert_eq!(lines(&mut Budget::new(), &x.replace(' ', "\n"), &y.replace(' ', "\n")), None);
    }

    #[test]
    fn a_diff_under_the_budget_is_a_word_diff() {
        let (a, b) = pair();
        let d = words(&mut Budget::new(), &a, &b).unwrap();
        assert_eq!(d.runs[0], Span { tag: Tag::Delete, text: "please fix this:".into() });
        assert_eq!(d.runs[1], Span { tag: Tag::Insert, text: "could you repair it:".into() });
        assert_eq!(d.runs[2].tag, Tag::Equal);
        assert_eq!(d.runs.len(), 5);
        assert_eq!(d.runs[3], Span { tag: Tag::Delete, text: "thanks".into() });
        assert_eq!(d.runs[4], Span { tag: Tag::Insert, text: "cheers".into() });
    }
}
