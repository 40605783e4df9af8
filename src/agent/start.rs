//! `pisces agent` from its options to a run: the mode and the prompt, the tools checked,
//! the session set up ([`super::target`]), the model chosen and its providers opened, the
//! branch left behind summarized when asked, the system prompt built, the model and
//! thinking level recorded; then print mode's one prompt, or the REPL ([`super::repl`]).
//!
//! What it has to say goes to an [`Output`]; the terminal's facts (whether standard input
//! is one, its text) come from the caller.

use std::io;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use super::output::{Notice, Output};
use super::prompt::{self, PromptOptions};
use super::repl::Repl;
use super::run::{self, Outcome, Providers, Turn};
use super::target::{existing_target, new_target, summarize_left_branch, thinking_level, Setup, Target};
use super::{builtin_tools, interrupt, Tool, ToolContext, ALL_TOOLS, DEFAULT_TOOLS};
use crate::env::Env;
use crate::exit::ExitStatus;
use crate::llm::{self, CompactionSettings, ModelSpec, PiConfig, ProviderOptions, RetrySettings};
use crate::session::locate::{locate_with_stores, SessionArg};
use crate::session::Session;

/// What `pisces agent` was asked for: its flags, as the library takes them.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--session`: a file or an id; a new file when it does not exist.
    pub session: Option<String>,
    /// `--from REV`.
    pub from: Option<String>,
    pub summarize: bool,
    pub fork: bool,
    /// `--model PROVIDER/ID`.
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub context_window: Option<u64>,
    pub thinking: Option<String>,
    /// `-p PROMPT`.
    pub prompt: Option<String>,
    /// `--mode json`.
    pub json: bool,
    pub tools: Option<Vec<String>>,
    pub no_tools: bool,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    /// `--bash-timeout`, in seconds.
    pub bash_timeout: Option<f64>,
    pub max_turns: Option<u32>,
    /// `--interactive`.
    pub interactive: bool,
}

/// Print mode with its prompt, or the REPL.
#[derive(Debug, PartialEq, Eq)]
pub enum Mode {
    Print(String),
    Interactive,
}

/// The mode and print mode's prompt: `-p`, else all of standard input when it is not a
/// terminal (`read_stdin` reads it). The REPL is the default on a terminal without `-p`, in
/// text mode.
pub fn mode(
    opts: &Options,
    stdin_is_terminal: bool,
    read_stdin: &mut dyn FnMut() -> io::Result<String>,
) -> anyhow::Result<Mode> {
    let interactive = opts.interactive || (opts.prompt.is_none() && !opts.json && stdin_is_terminal);
    if interactive && opts.json {
        bail!("--interactive shows text; it cannot be used with --mode json");
    }
    let prompt = match &opts.prompt {
        Some(p) => p.clone(),
        None if interactive => String::from("(interactive)"),
        None if !stdin_is_terminal => {
            let s = read_stdin().context("could not read the prompt from standard input")?;
            s.trim_end_matches('\n').to_string()
        }
        None => bail!("no prompt: give -p PROMPT or pipe one in"),
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    Ok(if interactive { Mode::Interactive } else { Mode::Print(prompt) })
}

/// How a print-mode run ended, as its exit status tells.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// The model stopped (or `--max-turns` was reached).
    Stopped,
    /// An error or an abort: what failed beyond the last message (overflow recovery), and
    /// the last message's error.
    Failed { failure: Option<String>, error: String },
    /// The output token limit (`length`): the text may be cut off.
    CutOff,
}

impl Ending {
    pub fn of(outcome: &Outcome) -> Ending {
        match outcome.stop_reason.as_str() {
            "error" | "aborted" => {
                let error = outcome.last.get("errorMessage").and_then(Value::as_str).map(str::to_string);
                Ending::Failed {
                    failure: outcome.failure.clone(),
                    error: error.unwrap_or_else(|| format!("Request {}", outcome.stop_reason)),
                }
            }
            "length" => Ending::CutOff,
            _ => Ending::Stopped,
        }
    }

    pub fn status(&self) -> ExitStatus {
        match self {
            Ending::Stopped => ExitStatus::Ok,
            Ending::Failed { .. } | Ending::CutOff => ExitStatus::Finding,
        }
    }
}

/// A run set up: the session and its branch, the model, the tools, the system prompt.
pub struct Agent {
    target: Target,
    spec: ModelSpec,
    thinking: String,
    provider_opts: ProviderOptions,
    providers: Providers,
    api: String,
    retry: RetrySettings,
    compaction: CompactionSettings,
    tools: Vec<Box<dyn Tool>>,
    declarations: Vec<Value>,
    sections: Map<String, Value>,
    tool_ctx: ToolContext,
    session_id: String,
    max_turns: Option<u32>,
    env: Env,
}

/// Sets the run up as `opts` asks. `report` shows a session's diagnostics as the other
/// commands do; what the setup says goes to `out` as it happens, so that it is shown even
/// when a later step fails.
pub fn prepare(
    mut setup: Setup,
    opts: &Options,
    report: &mut dyn FnMut(&Session) -> anyhow::Result<()>,
    out: &mut dyn Output,
) -> anyhow::Result<Agent> {
    let tool_names = tool_names(opts)?;
    let mut target = open_target(&mut setup, opts, report)?;
    for n in &setup.notes {
        out.notice(Notice::Note(n))?;
    }

    let spec = match (&opts.model, &target.model) {
        (Some(m), _) => ModelSpec::parse(m).ok_or_else(|| {
            anyhow::anyhow!("--model {m}: expected PROVIDER/ID, for example anthropic/claude-sonnet-4-5")
        })?,
        (None, Some(m)) => m.clone(),
        (None, None) => bail!("no model: give --model PROVIDER/ID (for example anthropic/claude-sonnet-4-5)"),
    };
    let config = PiConfig::load_from(setup.env.pi_agent_dir.as_deref(), Some(&target.cwd));
    for p in &config.problems {
        out.notice(Notice::ConfigProblem(p))?;
    }
    let retry = config.retry();
    let compaction = config.compaction(Some(&spec));
    let provider_opts = ProviderOptions {
        base_url: opts.base_url.clone(),
        api_key_env: opts.api_key_env.clone(),
        context_window: opts.context_window,
        ..ProviderOptions::from_config(spec.clone(), config.clone())
    };
    let info = llm::describe_model(&provider_opts)?;
    let api = info.api.as_str().to_string();
    let providers = run::open_providers(&provider_opts, setup.env)?;
    let thinking = thinking_level(opts.thinking.as_deref(), &target, &config, &spec, &info);

    if opts.summarize {
        let to = opts.from.as_deref().unwrap_or("@");
        let done = summarize_left_branch(to, &mut target, providers.summarizer.as_ref(), &config, &info, &thinking)?;
        out.notice(match &done {
            None => Notice::NothingToSummarize { to },
            Some(d) => Notice::Summarized { entries: d.entries, id: &d.id },
        })?;
    }

    let names: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let tools = builtin_tools(&names);
    let declarations: Vec<Value> = tools.iter().map(|t| t.declaration()).collect();
    let prompt_opts = PromptOptions {
        cwd: target.cwd.clone(),
        system_prompt: opts.system_prompt.clone(),
        append_system_prompt: opts.append_system_prompt.clone(),
        agent_dir: setup.env.pi_agent_dir.clone(),
    };
    let sections = prompt::system_sections(&prompt_opts, &names);

    let mut tool_ctx = ToolContext::new(&target.cwd);
    tool_ctx.home = setup.env.home.clone();
    tool_ctx.temp_dir = setup.env.temp_dir.clone();
    tool_ctx.shell = super::tools::bash::shell(setup.env.var_os("PATH").map(|p| p.as_os_str()));
    tool_ctx.bash_timeout = opts.bash_timeout.filter(|s| *s > 0.0).map(Duration::from_secs_f64);
    let session_id = target.header.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    tool_ctx.session_env = prompt::session_env(&session_id, target.writer.path(), &spec, &thinking);
    tool_ctx.model_without_images = prompt::model_without_images(&spec);

    Ok(Agent {
        target,
        spec,
        thinking,
        provider_opts,
        providers,
        api,
        retry,
        compaction,
        tools,
        declarations,
        sections,
        tool_ctx,
        session_id,
        max_turns: opts.max_turns,
        env: setup.env.clone(),
    })
}

/// The active tools: none with `--no-tools`, else `--tools`, else pi's defaults.
fn tool_names(opts: &Options) -> anyhow::Result<Vec<String>> {
    let names: Vec<String> = match (&opts.tools, opts.no_tools) {
        (_, true) => Vec::new(),
        (Some(t), _) => t.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        (None, _) => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
    };
    if let Some(bad) = names.iter().find(|n| !ALL_TOOLS.contains(&n.as_str())) {
        bail!("--tools: unknown tool {bad:?} (the built-in tools are {})", ALL_TOOLS.join(", "));
    }
    Ok(names)
}

/// The session the run writes to: `--session` (a file, else an id, else a new file
/// there), or a new session in pi's folder.
fn open_target(
    setup: &mut Setup,
    opts: &Options,
    report: &mut dyn FnMut(&Session) -> anyhow::Result<()>,
) -> anyhow::Result<Target> {
    let from = opts.from.as_deref();
    let Some(arg) = &opts.session else { return new_target(None, setup) };
    let p = Path::new(arg);
    if p.is_file() {
        return existing_target(setup, p, from, opts.fork, report);
    }
    let stores = || crate::formats::stores(setup.env);
    match locate_with_stores(arg, || setup.env.pi_session_dirs(setup.session_dir), stores) {
        Ok(SessionArg::Path(found)) if found.is_file() => existing_target(setup, &found, from, opts.fork, report),
        Ok(SessionArg::Stdin) => bail!("`agent` writes to its session; it cannot use standard input"),
        // A database's rows are not a file a run could append to, nor a name for a new one.
        Ok(SessionArg::Stored { agent, id, .. }) => bail!(
            "{arg}: session {id} lives in agent {agent}'s database, which pisces does not write to; \
             `pisces fork {arg} @ -o FILE` makes a pi session of it to continue with `--session FILE`"
        ),
        _ if p.exists() => bail!("{arg}: not a session file"),
        _ => {
            if opts.from.is_some() {
                bail!("--from: {arg} does not exist yet, so it has no entries");
            }
            new_target(Some(p.to_path_buf()), setup)
        }
    }
}

impl Agent {
    /// Print mode: `prompt` through the loop, its events to `out` as they come. The exit
    /// status says how the run ended.
    pub fn print(mut self, prompt: &str, out: &mut dyn Output) -> anyhow::Result<ExitStatus> {
        let mut starting = Vec::new();
        if let Some(sys) = prompt::system_patch(&self.target.context, &self.sections, &self.declarations) {
            starting.push(sys);
        }
        starting.push(prompt::user_message(prompt));
        out.notice(Notice::Header(&self.target.header))?;
        self.write_selection()?;
        let Agent { mut target, providers, api, tools, tool_ctx, thinking, max_turns, retry, compaction, .. } = self;
        let turn = Turn {
            provider: providers.calls,
            summarizer: providers.summarizer,
            api,
            tools: &tools,
            tool_ctx: &tool_ctx,
            thinking_level: thinking,
            max_turns,
            retry,
            compaction,
        };
        // Ctrl-C: the first stops the run (the stream, the running tool); the second exits.
        interrupt::install(&tool_ctx.abort, out.on_interrupt());
        interrupt::running(true);
        let outcome =
            run::run_prompt(&turn, &mut target.writer, &mut target.context, starting, &mut |e| out.event(&e))?;
        let ending = Ending::of(&outcome);
        let text = run::assistant_text(&outcome.last);
        out.notice(Notice::Finished { text: &text, session: target.writer.path(), ending: &ending })?;
        Ok(ending.status())
    }

    /// The REPL on this session, once the selection is recorded (see [`Repl::run`]).
    pub fn into_repl(mut self) -> anyhow::Result<Repl> {
        self.write_selection()?;
        let Agent {
            target,
            spec,
            thinking,
            provider_opts,
            providers,
            api,
            retry,
            compaction,
            tools,
            declarations,
            sections,
            tool_ctx,
            session_id,
            max_turns,
            env,
        } = self;
        Ok(Repl {
            writer: target.writer,
            context: target.context,
            spec: spec.clone(),
            thinking: thinking.clone(),
            branch_model: Some(spec),
            branch_thinking: Some(thinking),
            has_thinking_entry: true,
            provider_opts,
            provider: providers.calls,
            summarizer: providers.summarizer,
            session_id,
            api,
            tools,
            tool_ctx,
            sections,
            declarations,
            retry,
            compaction,
            max_turns,
            cwd: target.cwd,
            env,
        })
    }

    /// The selection: model_change and thinking_level_change when the branch implies
    /// another (always in a new session).
    fn write_selection(&mut self) -> anyhow::Result<()> {
        let (target, spec, thinking) = (&mut self.target, &self.spec, &self.thinking);
        if target.new || target.model.as_ref() != Some(spec) {
            let mut p = Map::new();
            p.insert("provider".into(), spec.provider.clone().into());
            p.insert("modelId".into(), spec.id.clone().into());
            target.writer.append("model_change", p)?;
        }
        if target.new || !target.has_thinking_entry || target.thinking.as_deref() != Some(thinking.as_str()) {
            let mut p = Map::new();
            p.insert("thinkingLevel".into(), thinking.clone().into());
            target.writer.append("thinking_level_change", p)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_stdin() -> io::Result<String> {
        Err(io::Error::other("standard input is not read here"))
    }

    #[test]
    fn the_repl_is_the_default_on_a_terminal_in_text_mode() {
        let opts = Options::default();
        assert_eq!(mode(&opts, true, &mut no_stdin).unwrap(), Mode::Interactive);
        let json = Options { json: true, ..Options::default() };
        let e = mode(&json, true, &mut no_stdin).unwrap_err();
        assert_eq!(e.to_string(), "no prompt: give -p PROMPT or pipe one in");
        let both = Options { json: true, interactive: true, ..Options::default() };
        assert!(mode(&both, false, &mut no_stdin).unwrap_err().to_string().contains("--mode json"));
    }

    #[test]
    fn a_piped_prompt_loses_its_last_newlines_and_may_not_be_empty() {
        let mut piped = || Ok("list the files\n\n".to_string());
        assert_eq!(mode(&Options::default(), false, &mut piped).unwrap(), Mode::Print("list the files".into()));
        let mut blank = || Ok(" \n".to_string());
        assert_eq!(mode(&Options::default(), false, &mut blank).unwrap_err().to_string(), "the prompt is empty");
        let given = Options { prompt: Some("hi".into()), ..Options::default() };
        assert_eq!(mode(&given, true, &mut no_stdin).unwrap(), Mode::Print("hi".into()));
    }

    #[test]
    fn tools_are_checked_by_name() {
        assert_eq!(tool_names(&Options::default()).unwrap(), DEFAULT_TOOLS);
        let some = Options { tools: Some(vec![" ls".into(), "".into(), "grep".into()]), ..Options::default() };
        assert_eq!(tool_names(&some).unwrap(), ["ls", "grep"]);
        let none = Options { no_tools: true, tools: Some(vec!["nope".into()]), ..Options::default() };
        assert!(tool_names(&none).unwrap().is_empty());
        let bad = Options { tools: Some(vec!["rm".into()]), ..Options::default() };
        assert!(tool_names(&bad).unwrap_err().to_string().starts_with("--tools: unknown tool \"rm\""));
    }

    #[test]
    fn endings_map_to_exit_statuses() {
        let outcome =
            |stop: &str, last: Value| Outcome { last, stop_reason: stop.into(), messages: Vec::new(), failure: None };
        assert_eq!(Ending::of(&outcome("stop", Value::Null)), Ending::Stopped);
        assert_eq!(Ending::of(&outcome("length", Value::Null)).status(), ExitStatus::Finding);
        let aborted = Ending::of(&outcome("aborted", Value::Null));
        assert_eq!(aborted, Ending::Failed { failure: None, error: "Request aborted".into() });
        let failed = Ending::of(&outcome("error", serde_json::json!({"errorMessage": "no such model"})));
        assert_eq!(failed, Ending::Failed { failure: None, error: "no such model".into() });
        assert_eq!(failed.status(), ExitStatus::Finding);
    }
}
