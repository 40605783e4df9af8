//! `pisces agent`: pi's agent loop on a session file (print and JSON modes, and the REPL).
//! The flags become [`start::Options`]; `agent::start` sets the run up and runs it; what it
//! says is shown by `render::agent`.

use std::io::{IsTerminal, Read};

use super::{report_diagnostics, Ctx, ExitStatus};
use crate::agent::start::{self, Options};
use crate::agent::target::Setup;
use crate::render::agent::{Lines, Style, Terminal};

const EXAMPLES: &str = "\
Examples:
  pisces agent --model anthropic/claude-sonnet-4-5 -p 'list the files here'
  pisces agent --session s.jsonl -p 'now run the tests'        # continue from the last entry
  pisces agent --session s.jsonl --from fix-1 -p 'try again'   # a new branch (pi's /tree)
  pisces agent --session s.jsonl --from fix-1 --summarize -p 'try again'  # ...summarizing the old one
  pisces agent --model openai/gpt-4.1 --mode json -p 'hi' | jq -c .type
  echo 'summarize README.md' | pisces agent --model ollama/qwen3:8b --tools read

Exit status: 0 when the model finished (stop), 1 when the run ended in an error, an abort
or the output limit (`length`), 2 on trouble before the run.";

/// Run pi's agent loop: prompt a model that uses tools, and record it all in a session.
///
/// Without --session, a new session is made where pi makes one (--session-dir, else
/// $PI_CODING_AGENT_SESSION_DIR, else ~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl).
/// With --session FILE, the session continues from its last entry (pi's leaf), or from
/// --from REV as pi's /tree navigates (a user message: from its parent, and its text is
/// shown; anything else: after it); a missing FILE is a new session there.
///
/// A new session starts as pi 1.6.0 writes one: model_change, thinking_level_change, the
/// system message (pi's prompt sections and the active tools' declarations), then the
/// user message, each assistant message and each tool result (in call order). A continued
/// branch gets model_change / thinking_level_change only when they differ, and a system
/// message only for changed sections or tools. Every entry is one whole line appended
/// under a lock; the file is written only when the first user message is.
///
/// `-p PROMPT` (or the prompt on standard input) prints the final assistant's text;
/// `--mode json` prints the session header and then pi's JSON events, one per line.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The session to continue (file or id); a new file when it does not exist.
    #[arg(long, value_name = "SESSION")]
    pub session: Option<String>,

    /// Continue from this entry instead of the last one (pi's /tree navigation).
    #[arg(long, requires = "session", value_name = "REV")]
    pub from: Option<String>,

    /// With --from: first summarize the branch being left (from the session's last entry back
    /// to where it meets REV) with the model, and append pi's branch_summary where the run
    /// continues, as pi's /tree "Summarize" does.
    #[arg(long, requires = "from", conflicts_with = "fork")]
    pub summarize: bool,

    /// Continue in a new session instead of SESSION: its branch (to the last entry, or to
    /// --from) copied in the current format into a new file of the current directory, with
    /// `parentSession` pointing back, as pi's Fork choice for a session whose cwd is gone.
    /// SESSION is only read; this is how a version-1 or -2 session is continued.
    #[arg(long, requires = "session")]
    pub fork: bool,

    /// The model, as pi names it (`anthropic/claude-sonnet-4-5`) [default: the session's].
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,

    /// The provider's API base URL (an OpenAI-compatible server, a proxy).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// The environment variable holding the API key [default: the provider's usual one].
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,

    /// The model's context window in tokens [default: pi's catalog, else 128000].
    #[arg(long, value_name = "N")]
    pub context_window: Option<u64>,

    /// Thinking level: off, minimal, low, medium, high, xhigh, max [default: the branch's, else
    /// pi's settings (modelThinkingLevels, defaultThinkingLevel), else medium]; clamped to what
    /// the model supports.
    #[arg(long, value_name = "LEVEL", value_parser = ["off", "minimal", "low", "medium", "high", "xhigh", "max"])]
    pub thinking: Option<String>,

    /// The prompt (print mode); without it, the prompt is read from standard input.
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// Output: the final text, or pi's JSON event stream.
    #[arg(long, value_enum, default_value = "text")]
    pub mode: Mode,

    /// The active tools, comma-separated [default: read,bash,edit,write; all: read, bash,
    /// edit, write, grep, find, ls].
    #[arg(long, value_delimiter = ',', value_name = "NAMES", conflicts_with = "no_tools")]
    pub tools: Option<Vec<String>>,

    /// No tools.
    #[arg(long)]
    pub no_tools: bool,

    /// Replace pi's system prompt (the tools, rules and docs sections go with it).
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,

    /// Add to the system prompt (pi's `addendum` section).
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Timeout for bash calls that do not give one [default: none, as pi].
    #[arg(long, value_name = "SECONDS")]
    pub bash_timeout: Option<f64>,

    /// Stop after this many model calls [default: no limit, as pi].
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,

    /// Interactive mode even when standard input is not a terminal (the default on a
    /// terminal without -p): prompts and slash commands, one per line.
    #[arg(long, short = 'i', conflicts_with = "prompt")]
    pub interactive: bool,

    /// Interactive mode: show thinking as `[thinking…]` instead of streaming it.
    #[arg(long)]
    pub hide_thinking: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    Text,
    Json,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let opts = options(&args);
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let mode = start::mode(&opts, stdin_is_terminal, &mut read_stdin)?;
    let style = match (&mode, args.mode) {
        (start::Mode::Interactive, _) => Style::Interactive,
        (_, Mode::Json) => Style::Json,
        (_, Mode::Text) => Style::Text,
    };
    let mut out = Terminal::new(ctx.ui.clone(), style, args.hide_thinking, std::io::stdout(), std::io::stderr());
    let setup =
        Setup { env: &ctx.env, session_dir: ctx.session_dir.as_deref(), formats: ctx.formats, notes: Vec::new() };
    let agent = start::prepare(setup, &opts, &mut |s| report_diagnostics(ctx, s), &mut out)?;
    match mode {
        start::Mode::Print(prompt) => agent.print(&prompt, &mut out),
        start::Mode::Interactive => {
            let repl = agent.into_repl()?;
            // Made only now: the line editor takes SIGINT for itself when it is made, and the
            // REPL then installs its own Ctrl-C handler over it (see `Repl::run`).
            let mut input = Lines::new(std::io::stdin().lock(), stdin_is_terminal, std::io::stdout());
            repl.run(&mut input, &mut out)
        }
    }
}

fn read_stdin() -> std::io::Result<String> {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s)?;
    Ok(s)
}

fn options(args: &Args) -> Options {
    Options {
        session: args.session.clone(),
        from: args.from.clone(),
        summarize: args.summarize,
        fork: args.fork,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        api_key_env: args.api_key_env.clone(),
        context_window: args.context_window,
        thinking: args.thinking.clone(),
        prompt: args.prompt.clone(),
        json: args.mode == Mode::Json,
        tools: args.tools.clone(),
        no_tools: args.no_tools,
        system_prompt: args.system_prompt.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        bash_timeout: args.bash_timeout,
        max_turns: args.max_turns,
        interactive: args.interactive,
    }
}
