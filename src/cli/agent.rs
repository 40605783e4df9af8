//! `pisces agent`: pi's agent loop on a session file (print and JSON modes).

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use super::{locate_arg, report_diagnostics, Ctx, ExitStatus};
use crate::agent::interrupt;
use crate::agent::prompt::{self, PromptOptions};
use crate::agent::run::{self, Turn};
use crate::agent::target::{existing_target, new_target, summarize_left_branch, thinking_level, Setup};
use crate::agent::{builtin_tools, ToolContext, ALL_TOOLS, DEFAULT_TOOLS};
use crate::llm::{self, ModelSpec, PiConfig, ProviderOptions};
use crate::render::sanitize;
use crate::session::locate::SessionArg;

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
    let interactive =
        args.interactive || (args.prompt.is_none() && args.mode == Mode::Text && std::io::stdin().is_terminal());
    if interactive && args.mode == Mode::Json {
        bail!("--interactive shows text; it cannot be used with --mode json");
    }
    let prompt = match &args.prompt {
        Some(p) => p.clone(),
        None if interactive => String::from("(interactive)"),
        None if !std::io::stdin().is_terminal() => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("could not read the prompt from standard input")?;
            s.trim_end_matches('\n').to_string()
        }
        None => bail!("no prompt: give -p PROMPT or pipe one in"),
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }

    let tool_names: Vec<String> = match (&args.tools, args.no_tools) {
        (_, true) => Vec::new(),
        (Some(t), _) => t.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        (None, _) => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
    };
    if let Some(bad) = tool_names.iter().find(|n| !ALL_TOOLS.contains(&n.as_str())) {
        bail!("--tools: unknown tool {bad:?} (the built-in tools are {})", ALL_TOOLS.join(", "));
    }

    let mut setup =
        Setup { env: &ctx.env, session_dir: ctx.session_dir.as_deref(), formats: ctx.formats, notes: Vec::new() };
    let mut report = |s: &crate::session::Session| report_diagnostics(ctx, s);
    let from = args.from.as_deref();
    let mut target = match &args.session {
        None => new_target(None, &setup)?,
        Some(arg) => {
            let p = Path::new(arg);
            if p.is_file() {
                existing_target(&mut setup, p, from, args.fork, &mut report)?
            } else {
                match locate_arg(ctx, arg) {
                    Ok(SessionArg::Path(found)) if found.is_file() => {
                        existing_target(&mut setup, &found, from, args.fork, &mut report)?
                    }
                    Ok(SessionArg::Stdin) => bail!("`agent` writes to its session; it cannot use standard input"),
                    _ if p.exists() => bail!("{arg}: not a session file"),
                    _ => {
                        if args.from.is_some() {
                            bail!("--from: {arg} does not exist yet, so it has no entries");
                        }
                        new_target(Some(p.to_path_buf()), &setup)?
                    }
                }
            }
        }
    };
    if args.mode == Mode::Text {
        for n in &setup.notes {
            eprintln!("{}", sanitize(n));
        }
    }

    let spec = match (&args.model, &target.model) {
        (Some(m), _) => ModelSpec::parse(m).ok_or_else(|| {
            anyhow::anyhow!("--model {m}: expected PROVIDER/ID, for example anthropic/claude-sonnet-4-5")
        })?,
        (None, Some(m)) => m.clone(),
        (None, None) => bail!("no model: give --model PROVIDER/ID (for example anthropic/claude-sonnet-4-5)"),
    };
    let config = PiConfig::load_from(ctx.env.pi_agent_dir.as_deref(), Some(&target.cwd));
    for p in &config.problems {
        eprintln!("warning: {}", sanitize(p));
    }
    let retry = config.retry();
    let compaction = config.compaction(Some(&spec));
    let opts = ProviderOptions {
        base_url: args.base_url.clone(),
        api_key_env: args.api_key_env.clone(),
        context_window: args.context_window,
        ..ProviderOptions::from_config(spec.clone(), config.clone())
    };
    let info = llm::describe_model(&opts)?;
    let api = info.api.as_str().to_string();
    let run::Providers { calls: provider, summarizer } = run::open_providers(&opts, &ctx.env)?;
    let thinking = thinking_level(args.thinking.as_deref(), &target, &config, &spec, &info);

    if args.summarize {
        let to = args.from.as_deref().unwrap_or("@");
        let done = summarize_left_branch(to, &mut target, summarizer.as_ref(), &config, &info, &thinking)?;
        if args.mode == Mode::Text {
            match done {
                None => eprintln!("nothing to summarize: {} is on the path to the session's last entry", sanitize(to)),
                Some(d) => eprintln!("summarized the branch left behind ({} entries) as {}", d.entries, d.id),
            }
        }
    }

    let names: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let tools = builtin_tools(&names);
    let declarations: Vec<Value> = tools.iter().map(|t| t.declaration()).collect();
    let prompt_opts = PromptOptions {
        cwd: target.cwd.clone(),
        system_prompt: args.system_prompt.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        agent_dir: ctx.env.pi_agent_dir.clone(),
    };
    let sections = prompt::system_sections(&prompt_opts, &names);
    let mut starting = Vec::new();
    if let Some(sys) = prompt::system_patch(&target.context, &sections, &declarations) {
        starting.push(sys);
    }
    starting.push(prompt::user_message(&prompt));

    let mut tool_ctx = ToolContext::new(&target.cwd);
    tool_ctx.home = ctx.env.home.clone();
    tool_ctx.bash_timeout = args.bash_timeout.filter(|s| *s > 0.0).map(Duration::from_secs_f64);
    let session_id = target.header.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    tool_ctx.session_env = prompt::session_env(&session_id, target.writer.path(), &spec, &thinking);
    tool_ctx.model_without_images = prompt::model_without_images(&spec);

    let mut out = std::io::stdout().lock();
    if args.mode == Mode::Json {
        writeln!(out, "{}", serde_json::to_string(&target.header)?)?;
    }

    // The selection: model_change and thinking_level_change when the branch implies another.
    if target.new || target.model.as_ref() != Some(&spec) {
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

    if interactive {
        let repl = crate::agent::repl::Repl {
            writer: target.writer,
            context: target.context,
            spec: spec.clone(),
            thinking: thinking.clone(),
            branch_model: Some(spec),
            branch_thinking: Some(thinking),
            has_thinking_entry: true,
            provider_opts: opts,
            provider,
            summarizer,
            session_id,
            api,
            tools,
            tool_ctx,
            sections,
            declarations,
            retry,
            compaction,
            max_turns: args.max_turns,
            cwd: target.cwd,
            ui: ctx.ui.clone(),
            env: ctx.env.clone(),
            hide_thinking: args.hide_thinking,
        };
        drop(out);
        return repl.run();
    }

    let turn = Turn {
        provider,
        summarizer,
        api,
        tools: &tools,
        tool_ctx: &tool_ctx,
        thinking_level: thinking,
        max_turns: args.max_turns,
        retry,
        compaction,
    };
    // Ctrl-C: the first stops the run (the stream, the running tool); the second exits.
    interrupt::install(&tool_ctx.abort);
    interrupt::running(true);
    let json_mode = args.mode == Mode::Json;
    let mut emit = |event: Value| {
        if json_mode {
            let _ = writeln!(out, "{}", event);
            let _ = out.flush();
        }
    };
    let outcome = run::run_prompt(&turn, &mut target.writer, &mut target.context, starting, &mut emit)?;

    let text = run::assistant_text(&outcome.last);
    let error = outcome.last.get("errorMessage").and_then(Value::as_str).map(str::to_string);
    if !json_mode {
        if !text.is_empty() {
            writeln!(out, "{text}")?;
        }
        eprintln!("session: {}", target.writer.path().display());
    }
    Ok(match outcome.stop_reason.as_str() {
        "error" | "aborted" => {
            if let Some(f) = &outcome.failure {
                eprintln!("{f}");
            }
            eprintln!("{}", sanitize(&error.unwrap_or_else(|| format!("Request {}", outcome.stop_reason))));
            ExitStatus::Finding
        }
        "length" => {
            eprintln!("warning: the response hit the output token limit (stopReason length); the text may be cut off");
            ExitStatus::Finding
        }
        _ => ExitStatus::Ok,
    })
}
