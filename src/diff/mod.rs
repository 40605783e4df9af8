//! Two paths -> common ancestor, shared prefix, aligned divergence (`pisces diff`).
//!
//! [`compare`] takes two leaves (in one session, or in two: a fork and its source) and
//! builds a [`Report`]: the deepest entry on both paths, the shared prefix, each side's
//! entries after it cut into turns (a turn starts at a user message, a `bashExecution` or
//! a custom message, as pi's compaction defines turns) and aligned turn by turn, and a
//! summary per side (files read and modified by pi's file-operation rules, commands and how
//! their last run ended, errors, model calls, tokens, cost, wall time, models).
//!
//! Only the divergent entries are parsed whole, plus what is shown of the shared part
//! (the last user prompt, `--context` turns) and, for files modified on both sides, the
//! write/edit/read calls that rebuild their content. Nothing here prints: the renderers
//! (`render::diff`) and serde (`--format json`) turn the report into output.

mod calls;
mod facts;
mod files;
mod fork;
pub mod sides;
mod summary;
pub mod text;
mod turns;

use serde::Serialize;
use serde_json::Value;

use crate::session::format::Unreadable;
use crate::session::{js, EntryIdx, LineNo, Session};

pub use calls::shell_exit_code;
pub use summary::is_test_command;

/// What to compute.
#[derive(Clone, Debug)]
pub struct Options {
    /// How many shared turns before the fork point to include (`--context`).
    pub context: usize,
    /// Only the per-side summary (`--stat`): no turns, no content diffs.
    pub stat: bool,
    /// Diff the prompts and the replies of aligned turns ([`TurnPair::prompt_diff`],
    /// [`TurnPair::reply_diff`]: the text output shows them, the JSON document does not).
    pub text_diffs: bool,
}

/// Which side of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    A,
    B,
}

/// One side to compare: a session, the leaf, and how the user named it.
pub struct Input<'s, 'a> {
    pub session: &'s Session<'a>,
    pub leaf: EntryIdx,
    pub rev: &'s str,
}

/// The `pisces diff --format json` document. A contract: fields are only ever added; a
/// change of shape bumps `version`. Entry ids are strings as in the file (`null` for an
/// entry without one); `line`s are 1-based physical lines of the entry's file; times are
/// epoch milliseconds; token counts and costs are summed as pi's `getUsageCostBreakdown`
/// sums them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `1`.
    pub version: u32,
    /// Side A: the first REV (in the first SESSION).
    pub a: SideInfo,
    /// Side B: the second REV (in `--against`'s SESSION when given).
    pub b: SideInfo,
    /// The deepest entry on both paths; `null` when the paths share no entry.
    pub common_ancestor: Option<Ancestor>,
    /// `true` when neither side has an entry after the common ancestor (exit status 0).
    pub identical: bool,
    /// The part of the paths both sides share.
    pub shared: Shared,
    /// The two sides' turns after the fork point, aligned (absent with `--stat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns: Option<Vec<TurnPair>>,
    /// What each side did, to answer "which attempt was better".
    pub summary: Summary,
}

/// One side's leaf and path.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideInfo {
    /// The session file as given (`<stdin>` for `-`).
    pub file: String,
    /// The session header's `id`.
    pub session_id: String,
    /// The REV as given.
    pub rev: String,
    /// The leaf's id.
    pub leaf_id: Value,
    pub leaf_line: LineNo,
    /// The leaf's kind: the entry `type`, or `message/<role>` for messages.
    pub leaf_kind: String,
    /// The leaf's label, if it has one.
    pub label: Option<String>,
    /// The leaf is pi's current leaf (the last entry of its file).
    pub is_default_leaf: bool,
    /// Entries on the path root..=leaf.
    pub path_entries: usize,
    /// Entries after the common ancestor (the side's own part of the path).
    pub divergent_entries: usize,
}

/// The deepest entry on both paths.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ancestor {
    /// Its id (in side A's file).
    pub id: Value,
    /// Its id in side B's file (the same unless it was matched by content).
    pub id_b: Value,
    pub line_a: LineNo,
    pub line_b: LineNo,
    /// `"tree"` (one session: the same entry), `"id"` (two files: the same id and
    /// content, as a fork keeps them) or `"content"` (two files: different ids, the same
    /// content apart from `id` and `parentId`).
    pub matched_by: &'static str,
    /// A one-line description of the entry.
    pub preview: String,
}

/// The shared prefix.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shared {
    /// Entries on side A's path up to and including the common ancestor.
    pub entries: usize,
    /// The same on side B's path (differs from `entries` only across files, when a fork
    /// dropped or re-created entries such as labels).
    pub entries_b: usize,
    /// The last user message of the shared prefix.
    pub last_user_prompt: Option<EntryText>,
    /// The last `--context` turns of the shared prefix (oldest first; the last may be cut
    /// by the fork point).
    pub context: Vec<Turn>,
}

/// An entry and its text.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryText {
    pub id: Value,
    pub line: LineNo,
    pub text: String,
}

/// Two turns, one from each side, aligned (by equal prompts first, then in order).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnPair {
    /// 1-based position in the aligned list.
    pub index: usize,
    /// Side A's turn, or `null` when only B has one here.
    pub a: Option<Turn>,
    /// Side B's turn, or `null` when only A has one here.
    pub b: Option<Turn>,
    /// Both turns exist and their prompts are the same text.
    pub same_prompt: bool,
    /// A word diff of the two prompts when they differ, it is worth reading and the
    /// budget allows it ([`text`]); only with [`Options::text_diffs`], not serialized.
    #[serde(skip)]
    pub prompt_diff: Option<text::WordDiff>,
    /// A line diff of the two replies, as `prompt_diff`.
    #[serde(skip)]
    pub reply_diff: Option<text::LineDiff>,
}

/// A turn: from a user message, `bashExecution` or custom message (with the entries
/// without messages just before it: a branch summary, a model change) up to the next.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// The turn's first entry.
    pub start_id: Value,
    pub start_line: LineNo,
    /// What starts the turn; `null` for the part of a turn that continues across the
    /// fork point (the entries before the side's first prompt).
    pub prompt: Option<Prompt>,
    /// Entries in the turn.
    pub entries: usize,
    /// Assistant messages (LLM calls) in the turn.
    pub model_calls: usize,
    /// Every tool call of the turn's assistant messages, in order, with its outcome.
    pub tool_calls: Vec<ToolCall>,
    /// The last assistant message of the turn.
    pub reply: Option<Reply>,
    /// Entries that are not messages, such as branch summaries, compactions and model
    /// changes, in order.
    pub events: Vec<Event>,
}

/// The message a turn starts with.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// `"user"`, `"bash"` (the user's `!command`: `text` is the command) or `"custom"`
    /// (an extension's message).
    pub kind: &'static str,
    pub id: Value,
    pub line: LineNo,
    pub text: String,
    /// `bash`: the command's exit code (`null` when it has none: cancelled, killed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<Option<i64>>,
    /// `custom`: the extension's `customType`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_type: Option<String>,
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The result is not an error.
    Ok,
    /// The result is an error (for bash: the command exited with a code other than 0).
    Error,
    /// bash: the command timed out.
    Timeout,
    /// bash: the command was aborted.
    Aborted,
    /// No result on the path answers the call.
    NoResult,
}

/// One tool call and its result (matched by `toolCallId`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The assistant message holding the call.
    pub entry_id: Value,
    pub line: LineNo,
    /// The call's `id` (the result's `toolCallId`).
    pub call_id: String,
    pub name: String,
    /// What it acted on: the `path` of read/write/edit (`path (lines 25-29)` for a read
    /// with offset or limit), the bash `command`, else the `path` or `pattern` argument.
    pub target: Option<String>,
    pub outcome: Outcome,
    /// bash: the exit code (0 when the result is no error, N from pi's `Command exited
    /// with code N`); `null` otherwise.
    pub exit_code: Option<i64>,
    /// The first line of an error result's text.
    pub error: Option<String>,
    /// The result entry's line.
    pub result_line: Option<LineNo>,
}

/// The last assistant message of a turn.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    pub id: Value,
    pub line: LineNo,
    /// Its text blocks, joined by `\n` (thinking and tool calls left out).
    pub text: String,
    pub stop_reason: Option<String>,
    pub error_message: Option<String>,
}

/// An entry without a message inside a turn.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The entry `type` (`branch_summary`, `compaction`, `model_change`,
    /// `thinking_level_change`, `label`, `session_info`, `context_edit`, …).
    pub kind: String,
    pub id: Value,
    pub line: LineNo,
    /// A one-line description.
    pub text: String,
}

/// The per-side summaries and what compares them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub a: SideSummary,
    pub b: SideSummary,
    /// Files modified on both sides (paths resolved against each session's `cwd`), with
    /// the final content each side wrote when write/edit calls rebuild it.
    pub modified_on_both: Vec<FileCompare>,
}

/// What one side did after the fork point.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideSummary {
    /// Entries after the common ancestor.
    pub entries: usize,
    /// Turns (the part continuing across the fork point counts as one).
    pub turns: usize,
    /// Assistant messages (LLM calls).
    pub model_calls: usize,
    pub tool_calls: usize,
    /// Error tool results and assistant messages that ended in `error` or `aborted`.
    pub errors: Vec<ErrorItem>,
    pub usage: Usage,
    /// Last entry's timestamp minus the first's (entry timestamps), or `null`.
    #[serde(serialize_with = "js_number_opt")]
    pub wall_time_ms: Option<f64>,
    /// `provider/model` of the side's assistant messages, in order of first use; when it
    /// has none, the model in effect at the leaf.
    pub models: Vec<String>,
    /// pi's rules: the `path` of every read/write/edit call (assistant tool calls and
    /// nested calls), `filesModified` = written ∪ edited, `filesRead` = read − modified,
    /// both sorted as pi sorts them.
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    /// Calls per path, in the order first used.
    pub file_ops: Vec<FileOps>,
    /// Every distinct command (bash tool calls and the user's `!commands`), in the order
    /// first run, with how its last run ended.
    pub commands: Vec<CommandRuns>,
    /// The last run of a command that looks like a test run (`npm test`, `cargo test`,
    /// `pytest`, …), if any.
    pub last_test_run: Option<Run>,
}

/// An error on one side.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorItem {
    pub id: Value,
    pub line: LineNo,
    /// `"tool"` (an error tool result) or `"assistant"` (stopReason `error` / `aborted`).
    pub kind: &'static str,
    /// The tool's name (tool errors).
    pub tool: Option<String>,
    /// What failed: the bash command, or the read/write/edit path.
    pub target: Option<String>,
    /// The first line of the error text (or `exit N` for bash, or the stopReason).
    pub message: String,
}

/// Tokens and cost.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(serialize_with = "js::serialize_number")]
    pub input: f64,
    #[serde(serialize_with = "js::serialize_number")]
    pub output: f64,
    #[serde(serialize_with = "js::serialize_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "js::serialize_number")]
    pub cache_write: f64,
    /// Sum of `totalTokens` where present.
    #[serde(serialize_with = "js::serialize_number")]
    pub total_tokens: f64,
    /// input + output + cacheRead + cacheWrite (pi's "tokens").
    #[serde(serialize_with = "js::serialize_number")]
    pub tokens: f64,
    /// Dollars (`cost.total`).
    pub cost: f64,
}

/// [`js::serialize_number`] for a number that may be missing (`null`).
fn js_number_opt<S: serde::Serializer>(f: &Option<f64>, ser: S) -> Result<S::Ok, S::Error> {
    f.map(js::number).serialize(ser)
}

/// read/write/edit calls on one path.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOps {
    pub path: String,
    pub read: usize,
    pub write: usize,
    pub edit: usize,
}

/// One command and its runs.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRuns {
    pub command: String,
    /// `"tool"` (the bash tool) or `"user"` (a `!command`).
    pub source: &'static str,
    pub runs: usize,
    /// It looks like a test run.
    pub is_test: bool,
    pub last: Run,
}

/// One run of a command.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub command: String,
    /// The entry with the result (the tool result, or the `bashExecution`), or the call
    /// when it has no result.
    pub id: Value,
    pub line: LineNo,
    pub outcome: Outcome,
    pub exit_code: Option<i64>,
    /// For a command that looks like a test run: passed / failed counts read from the
    /// output's test summary (`# pass N`, `N passed`, `N failed`, …), when there is one.
    pub tests: Option<TestCounts>,
}

/// Test counts found in a command's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestCounts {
    pub passed: Option<u64>,
    pub failed: Option<u64>,
}

/// A file modified on both sides.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileCompare {
    /// The path as side A's calls name it (side B's may be written differently).
    pub path: String,
    /// The absolute path both resolve to.
    pub resolved: String,
    /// Side A's final content (`null` with `--stat`, where contents are not rebuilt).
    pub a: Option<FileSide>,
    /// Side B's final content (`null` with `--stat`).
    pub b: Option<FileSide>,
    /// Both final contents are known: are they the same? (`null` when either is unknown
    /// or with `--stat`.)
    pub same: Option<bool>,
    /// A unified diff of A's final content against B's (`null` when either is unknown,
    /// they are the same, or with `--stat`).
    pub diff: Option<String>,
}

/// One side's final content of a file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSide {
    /// write/edit (and full reads) rebuild the content at the leaf.
    pub reconstructed: bool,
    /// Lines in the rebuilt content.
    pub lines: Option<usize>,
    /// Why it could not be rebuilt, or what was assumed to rebuild it.
    pub note: Option<String>,
    /// The rebuilt content (not serialized: it is in `diff`).
    #[serde(skip)]
    pub content: Option<String>,
}

/// Compares two leaves (see the module documentation).
pub fn compare(a: &Input, b: &Input, opts: &Options) -> Result<Report, Unreadable> {
    let same_session = std::ptr::eq(a.session, b.session);
    let path_a = a.session.path_to(a.leaf);
    let path_b = if same_session && a.leaf == b.leaf { path_a.clone() } else { b.session.path_to(b.leaf) };
    let fork = fork::find(a.session, &path_a, b.session, &path_b, same_session)?;
    let (ka, kb) = (fork.shared_a(), fork.shared_b());
    let side_a = &path_a[ka..];
    let side_b = &path_b[kb..];

    // Parse the divergent entries on every core: the lines of long sides are most of
    // the work.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let total = (side_a.len() + side_b.len()).max(1);
    let share = |n: usize| (threads * n).div_ceil(total).max(1);
    let (facts_a, facts_b) = std::thread::scope(|scope| {
        let ha = scope.spawn(|| facts::extract(a.session, side_a, share(side_a.len())));
        let fb = facts::extract(b.session, side_b, share(side_b.len()));
        (ha.join().expect("no panic"), fb)
    });
    let (facts_a, facts_b) = (facts_a?, facts_b?);

    let turns_a = turns::split(a.session, &facts_a);
    let turns_b = turns::split(b.session, &facts_b);

    let (sum_a, sum_b) = std::thread::scope(|scope| {
        let ha = scope.spawn(|| summary::side(a.session, &path_a, ka, &facts_a));
        let sb = summary::side(b.session, &path_b, kb, &facts_b);
        (ha.join().expect("no panic"), sb)
    });
    let mut sum_a = sum_a?;
    let mut sum_b = sum_b?;
    sum_a.turns = turns_a.len();
    sum_b.turns = turns_b.len();

    let modified_on_both = files::compare(a, &path_a, &sum_a, b, &path_b, &sum_b, !opts.stat)?;

    let turns = if opts.stat {
        None
    } else {
        let pairs = turns::align(&facts_a, &turns_a, &facts_b, &turns_b);
        let (res_a, res_b) = (calls::results_by_call(&facts_a), calls::results_by_call(&facts_b));
        let mut budget = text::Budget::new();
        Some(
            pairs
                .into_iter()
                .enumerate()
                .map(|(k, (ta, tb))| {
                    let ta = ta.map(|t| turns::view(a.session, &facts_a, t, &res_a));
                    let tb = tb.map(|t| turns::view(b.session, &facts_b, t, &res_b));
                    let same_prompt = match (&ta, &tb) {
                        (Some(x), Some(y)) => match (&x.prompt, &y.prompt) {
                            (Some(p), Some(q)) => p.kind == q.kind && p.text == q.text,
                            (None, None) => true,
                            _ => false,
                        },
                        _ => false,
                    };
                    let (prompt_diff, reply_diff) = if opts.text_diffs {
                        text::of_pair(&mut budget, ta.as_ref(), tb.as_ref())
                    } else {
                        (None, None)
                    };
                    TurnPair { index: k + 1, a: ta, b: tb, same_prompt, prompt_diff, reply_diff }
                })
                .collect(),
        )
    };

    let shared = Shared {
        entries: ka,
        entries_b: kb,
        last_user_prompt: turns::last_user_prompt(a.session, &path_a[..ka])?,
        context: if opts.stat { Vec::new() } else { turns::context(a.session, &path_a[..ka], opts.context)? },
    };

    let common_ancestor = fork.ancestor.map(|(ia, ib)| Ancestor {
        id: a.session.id_value(path_a[ia]),
        id_b: b.session.id_value(path_b[ib]),
        line_a: a.session.entries[path_a[ia]].line,
        line_b: b.session.entries[path_b[ib]].line,
        matched_by: fork.matched_by,
        preview: a.session.preview(path_a[ia], 80),
    });

    Ok(Report {
        version: 1,
        a: side_info(a, &path_a, side_a.len()),
        b: side_info(b, &path_b, side_b.len()),
        common_ancestor,
        identical: side_a.is_empty() && side_b.is_empty(),
        shared,
        turns,
        summary: Summary { a: sum_a, b: sum_b, modified_on_both },
    })
}

/// What each branch root..=leaf did, as [`compare`] sums a side (the whole path is the
/// side): tokens, cost, models, files, commands and the last test run. `pisces export`
/// shows it for every leaf. Each entry is read once, however many branches share it.
pub fn branches(s: &Session, leaves: &[EntryIdx]) -> Result<Vec<SideSummary>, Unreadable> {
    branches_of(s, leaves, &PathFacts::read(s, leaves)?)
}

/// [`branches`] from facts already read.
pub fn branches_of(s: &Session, leaves: &[EntryIdx], facts: &PathFacts) -> Result<Vec<SideSummary>, Unreadable> {
    leaves
        .iter()
        .map(|&leaf| {
            let path = s.path_to(leaf);
            let facts = facts.of(&path);
            let mut sum = summary::side(s, &path, 0, &facts)?;
            sum.turns = turns::split(s, &facts).len();
            Ok(sum)
        })
        .collect()
}

/// What the diff reads of every entry on some leaves' paths: each entry read once (on every
/// core), however many of the paths share it, for all that is then computed from them.
pub struct PathFacts(Vec<Option<facts::Fact>>);

impl PathFacts {
    pub fn read(s: &Session, leaves: &[EntryIdx]) -> Result<PathFacts, Unreadable> {
        let mut wanted = vec![false; s.entries.len()];
        let mut entries = Vec::new();
        for &leaf in leaves {
            let mut cur = Some(leaf);
            while let Some(c) = cur.filter(|c| !wanted[c.get()]) {
                wanted[c.get()] = true;
                entries.push(c);
                cur = s.parent(c);
            }
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let mut by_entry: Vec<Option<facts::Fact>> = vec![None; s.entries.len()];
        for f in facts::extract(s, &entries, threads)? {
            let at = f.entry.get();
            by_entry[at] = Some(f);
        }
        Ok(PathFacts(by_entry))
    }

    /// The facts of `path` (entries whose facts were read), in its order.
    fn of(&self, path: &[EntryIdx]) -> Vec<facts::Fact> {
        path.iter().filter_map(|e| self.0[e.get()].clone()).collect()
    }
}

fn side_info(x: &Input, path: &[EntryIdx], divergent: usize) -> SideInfo {
    let s = x.session;
    let e = &s.entries[x.leaf];
    SideInfo {
        file: s.file.clone(),
        session_id: s.session_id().to_string(),
        rev: x.rev.to_string(),
        leaf_id: s.id_value(x.leaf),
        leaf_line: e.line,
        leaf_kind: entry_kind(s, x.leaf),
        label: s.label_at(x.leaf).map(|l| l.text.clone()),
        is_default_leaf: s.default_leaf() == Some(x.leaf),
        path_entries: path.len(),
        divergent_entries: divergent,
    }
}

/// `message/user`, `branch_summary`, …
fn entry_kind(s: &Session, i: EntryIdx) -> String {
    use crate::session::{EntryType, Role};
    let e = &s.entries[i];
    if e.kind != EntryType::Message {
        return e.kind.name().to_string();
    }
    let role = match e.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::ToolResult => "toolResult",
        Role::System => "system",
        Role::BashExecution => "bashExecution",
        Role::Custom | Role::HookMessage => "custom",
        Role::Other | Role::None => "?",
    };
    format!("message/{role}")
}
