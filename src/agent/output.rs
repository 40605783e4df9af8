//! What the agent shows its user, as data: [`Notice`]s, the loop's events, and the session
//! views of the REPL's `/tree` and `/path`; and the [`Output`] a renderer implements to
//! show them (`render::agent` has the terminal's). Nothing in `agent` writes to the
//! terminal itself: the renderer picks the stream, the colors, and what is made safe.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::interrupt::Interrupt;
use super::start::Ending;
use crate::llm::ModelSpec;
use crate::session::projection::Projection;
use crate::session::view::TreeView;
use crate::session::Session;

/// Something the agent tells its user.
#[derive(Debug)]
pub enum Notice<'a> {
    // Setting up, in print mode and before the REPL.
    /// What setting up the session said (`continuing from …`).
    Note(&'a str),
    /// A problem in pi's settings files; the run goes on without the setting.
    ConfigProblem(&'a str),
    /// `--summarize` found nothing left behind: `to` is on the path to the last entry.
    NothingToSummarize { to: &'a str },
    /// `--summarize` appended a summary of `entries` entries as entry `id`.
    Summarized { entries: usize, id: &'a str },

    // Print mode.
    /// The session's header, before the run's events.
    Header(&'a Value),
    /// The run is over: the final assistant's text, the session it is in, how it ended.
    Finished { text: &'a str, session: &'a Path, ending: &'a Ending },

    // The REPL.
    /// The REPL starts: the model and the session file.
    Welcome { model: &'a ModelSpec, session: &'a Path },
    /// The slash commands ([`super::repl::HELP`]).
    Help,
    /// Ctrl-C at the prompt: another one exits.
    ExitHint,
    /// A prompt or a command failed; the REPL goes on.
    Failed(&'a anyhow::Error),
    /// A run failed beyond its last message's own error (overflow recovery).
    RunFailed(&'a str),
    /// The REPL is over.
    Bye { session: &'a Path },
    /// `/name`.
    Named(&'a str),
    /// `/branch` to a prompt: the run continues from its parent; its text, to send again.
    ContinuingFrom { id: &'a str, prompt: &'a str },
    /// `/branch` to anything else: the run continues after it.
    ContinuingAfter { id: &'a str },
    /// `/branch … summarize`: the model is summarizing the branch left behind.
    Summarizing,
    /// `/branch … summarize` where the target is on the current branch.
    NothingLeftBehind,
    /// The summary `/branch … summarize` appended.
    BranchSummary(&'a str),
    /// `/label`.
    Labelled { target: &'a str, name: &'a str },
    /// `/model`, with the thinking level it implies.
    ModelChanged { model: &'a ModelSpec, thinking: &'a str },
    /// `/compact` has started.
    Compacting,
    /// `/compact` is done (`tokens_before` as pi's JSON has it).
    Compacted { tokens_before: &'a Value, summary: &'a str },
    /// `/fork`: the session the REPL continues in.
    Forked { path: &'a Path },
}

/// Where the agent's output goes; `render::agent` is the terminal's.
pub trait Output {
    fn notice(&mut self, notice: Notice<'_>) -> io::Result<()>;

    /// One of the loop's events as it streams (pi's JSON-mode events). A failed write must
    /// not stop the run, so nothing is returned.
    fn event(&mut self, event: &Value);

    /// A run's events are over (a line the stream left open is ended).
    fn end_events(&mut self) -> io::Result<()>;

    /// `/tree`: the session's tree as `view` has it.
    fn tree(&mut self, session: &Session, view: &TreeView) -> io::Result<()>;

    /// `/path`: the context at the leaf.
    fn path(&mut self, session: &Session, projection: &Projection) -> io::Result<()>;

    /// How an interrupt is shown. It runs on the signal handler's thread, while the run
    /// may hold `self`, hence a plain function.
    fn on_interrupt(&self) -> fn(Interrupt);
}
