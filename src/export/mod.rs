//! `pisces export`: what a session's page shows, computed once (no markup here: the page
//! itself is written by `render::html`).
//!
//! The page shows the context the model saw at each leaf exactly as `pisces path` gives it
//! (the format's own projection, pi's message shape), the facts of each branch as `pisces
//! diff` sums a side, and the tree as `pisces tree` draws it. A message shared by many
//! leaves (everything before a fork) is kept once: each leaf lists the messages of its
//! context by number.

pub mod store;
pub mod tables;

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::diff::{self, SideSummary};
use crate::session::format::Unreadable;
use crate::session::leaves::{self, Leaf};
use crate::session::{EntryIdx, Session};

/// Where `pisces export` writes a session's page by default: the session file's name with
/// `.html`, in the current directory (`session.html` for standard input).
pub fn default_file(session_file: &str) -> std::path::PathBuf {
    let stem = std::path::Path::new(session_file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && !s.starts_with('<'))
        .unwrap_or_else(|| "session".into());
    format!("{stem}.html").into()
}

/// One message of some leaf's context, serialized once.
pub struct Message {
    /// The entry it was projected from.
    pub entry: EntryIdx,
    /// pi's message shape, as `pisces path --format json` prints it (compact JSON).
    pub json: String,
}

/// One leaf: its context and what its branch did.
pub struct LeafPage {
    pub leaf: Leaf,
    /// Its context, in order: numbers into [`Page::messages`].
    pub messages: Vec<u32>,
    /// The model in effect at the leaf, `{provider, modelId}` (as `pisces path` has it).
    pub model: Option<Value>,
    /// The branch root..=leaf summed as `pisces diff` sums a side.
    pub branch: SideSummary,
}

/// Everything the page shows but the tree's rows.
pub struct Page {
    pub leaves: Vec<LeafPage>,
    pub messages: Vec<Message>,
    /// The parts of `pisces diff`'s report for any two leaves, which the page puts
    /// together (numbers into `leaves`).
    pub sides: diff::sides::Sides,
}

/// The sides of the reports read at most about this many path entries in all (past it,
/// the compare view shows, for a pair without them, each side's own messages and facts).
pub const DIFF_BUDGET: usize = 1_000_000;

/// One leaf's context as built: each message with the entry it came from, serialized; the
/// model in effect.
type Context = (Vec<(EntryIdx, String)>, Option<Value>);

/// The page's data for `s`: every leaf's context and facts. The contexts are built on two
/// threads (each is a projection of its own: on a session of many branches they are most
/// of the work).
pub fn page(s: &Session) -> Result<Page, Unreadable> {
    let leaves = leaves::collect(s)?;
    let ends: Vec<EntryIdx> = leaves.iter().map(|l| l.entry).collect();
    let build = |part: std::ops::Range<usize>| -> Result<Vec<Context>, Unreadable> {
        ends[part]
            .iter()
            .map(|&leaf| {
                let p = s.dialect().project(s, Some(leaf))?;
                // Each message in the context's order, with the entry that made it (one no
                // entry claims, if a format makes any, goes with the leaf).
                let mut from = vec![leaf; p.messages.len()];
                for pe in &p.entries {
                    for k in pe.messages.clone() {
                        if let Some(f) = from.get_mut(k) {
                            *f = pe.entry;
                        }
                    }
                }
                let out = p
                    .messages
                    .iter()
                    .zip(from)
                    .map(|(m, entry)| (entry, serde_json::to_string(m).expect("a Value serializes")))
                    .collect();
                Ok((out, p.model.clone()))
            })
            .collect()
    };
    let built = crate::session::on_two_threads(ends.len(), 8, build)?;
    let facts = diff::PathFacts::read(s, &ends)?;
    let branches = diff::branches_of(s, &ends, &facts)?;
    let sides = diff::sides::for_page(s, &ends, &facts, DIFF_BUDGET)?;
    let mut messages: Vec<Message> = Vec::new();
    let mut seen: FxHashMap<(EntryIdx, String), u32> = FxHashMap::default();
    let mut pages = Vec::with_capacity(leaves.len());
    for ((leaf, (context, model)), branch) in leaves.into_iter().zip(built).zip(branches) {
        let numbers = context
            .into_iter()
            .map(|(entry, json)| {
                *seen.entry((entry, json)).or_insert_with_key(|(entry, json)| {
                    messages.push(Message { entry: *entry, json: json.clone() });
                    (messages.len() - 1) as u32
                })
            })
            .collect();
        pages.push(LeafPage { leaf, messages: numbers, model, branch });
    }
    Ok(Page { leaves: pages, messages, sides })
}
