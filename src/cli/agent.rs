//! `pisces agent`: pi's agent loop on a session file (print and JSON modes).

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{json, Map, Value};

use super::{report_diagnostics, Ctx, ExitStatus};
use crate::agent::run::{self, PromptOptions, SessionWriter, Turn};
use crate::agent::{builtin_tools, ToolContext, ALL_TOOLS, DEFAULT_TOOLS};
use crate::agent::{interrupt, navigate};
use crate::llm::{self, ModelInfo, ModelSpec, PiConfig, ProviderOptions};
use crate::session::context::{self, Damaged};
use crate::session::locate::{locate, SessionArg};
use crate::session::{fork, rev, write, EntryType, Role, Session, Source};

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

/// Where the run writes and what the branch holds so far.
struct Target {
    writer: SessionWriter,
    cwd: PathBuf,
    header: Value,
    /// The branch's AgentMessages (the projection at the leaf).
    context: Vec<Value>,
    model: Option<ModelSpec>,
    /// The branch's thinking level, and whether the branch sets one.
    thinking: Option<String>,
    has_thinking_entry: bool,
    new: bool,
}

fn agent_dir() -> Option<PathBuf> {
    match std::env::var("PI_CODING_AGENT_DIR").ok().filter(|d| !d.is_empty()) {
        Some(d) => match (d.strip_prefix('~'), std::env::var_os("HOME")) {
            (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                Some(PathBuf::from(h).join(rest.trim_start_matches('/')))
            }
            _ => Some(PathBuf::from(d)),
        },
        None => std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".pi").join("agent")),
    }
}

/// Where pi keeps the sessions of `cwd`: `--session-dir`, `$PI_CODING_AGENT_SESSION_DIR`,
/// else `~/.pi/agent/sessions/--<cwd>--/`.
fn session_dir(ctx: &Ctx, cwd: &str) -> anyhow::Result<PathBuf> {
    if let Some(d) = &ctx.search.session_dir {
        return Ok(d.clone());
    }
    if let Some(d) = std::env::var_os("PI_CODING_AGENT_SESSION_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    let Some(agent) = agent_dir() else {
        bail!("HOME is not set, so pi's session folder is unknown; give --session FILE or --session-dir DIR")
    };
    Ok(fork::default_session_dir(&agent, cwd))
}

fn new_target(path: Option<PathBuf>, ctx: &Ctx) -> anyhow::Result<Target> {
    let cwd = std::env::current_dir().context("the current directory is unknown")?;
    let cwd_s = cwd.to_string_lossy().into_owned();
    let id = fork::new_session_id();
    let ts = write::now_iso();
    let path = match path {
        Some(p) => p,
        None => session_dir(ctx, &cwd_s)?.join(fork::file_name(&ts, &id)),
    };
    let header = fork::header_line(&id, &ts, &cwd_s, None);
    Ok(Target {
        header: serde_json::from_str(&header)?,
        writer: SessionWriter::new_file(path, header),
        cwd,
        context: Vec::new(),
        model: None,
        thinking: None,
        has_thinking_entry: false,
        new: true,
    })
}

fn existing_target(ctx: &Ctx, path: &Path, from: Option<&str>, mode: Mode, fork: bool) -> anyhow::Result<Target> {
    let source = Source::open(path)?;
    let mut session = Session::load(&source)?;
    report_diagnostics(ctx, &session)?;
    // pi's navigateTree: a user or custom message target continues from its parent.
    let leaf = match from {
        None => session.default_leaf(),
        Some(r) => {
            let target = rev::resolve(&session, r)?;
            let e = &session.entries[target as usize];
            let is_prompt =
                (e.kind == EntryType::Message && e.role == Role::User) || e.kind == EntryType::CustomMessage;
            if is_prompt {
                let v = session.parse(target)?;
                let text = fork::user_text(v.get("message").unwrap_or(&v));
                if mode == Mode::Text {
                    eprintln!("continuing from the parent of {}; its prompt was:\n{text}", session.display_id(target));
                }
                session.parent(target)
            } else {
                Some(target)
            }
        }
    };
    if fork {
        // pi's Fork choice for a missing cwd: the branch copied into a new session of the
        // current directory, which the run continues in; the source is only read.
        let cwd = std::env::current_dir().context("the current directory is unknown")?;
        let cwd = cwd.to_string_lossy().into_owned();
        let forked = navigate::fork_branch(&session, path, leaf, &cwd, &session_dir(ctx, &cwd)?)?;
        if mode == Mode::Text {
            eprintln!("continuing in a new session: {}", forked.path.display());
        }
        return existing_target(ctx, &forked.path, None, mode, false);
    }
    if session.migrate_v1 || session.migrate_v2 {
        bail!(
            "{}: a version-{} session; pi rewrites such a file in the current format when it opens it, and pisces does not append to it unmigrated (give --fork to continue in a new session in the current format)",
            path.display(),
            session.version
        );
    }
    let cwd = session.header.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let Some(cwd) = cwd.filter(|c| c.is_dir()) else {
        bail!(
            "{}: the session's cwd {} does not exist here (pi asks whether to fork it; give --fork to continue in a new session of the current directory)",
            path.display(),
            session.header.get("cwd").map(Value::to_string).unwrap_or_else(|| "(none)".into())
        );
    };
    let projection = match context::project(&session, leaf) {
        Ok(p) => p,
        Err(Damaged(bad)) => {
            session = Session::load_excluding(&source, &bad)?;
            context::project(&session, leaf).map_err(|_| anyhow::anyhow!("{}: unreadable lines", path.display()))?
        }
    };
    let model = projection.model.as_ref().and_then(|m| {
        Some(ModelSpec {
            provider: m.get("provider")?.as_str()?.to_string(),
            id: m.get("modelId")?.as_str()?.to_string(),
        })
    });
    let has_thinking_entry =
        projection.path.iter().any(|&i| session.entries[i as usize].kind == EntryType::ThinkingLevelChange);
    let leaf_id = leaf.and_then(|l| session.id(l)).map(str::to_string);
    Ok(Target {
        writer: SessionWriter::existing(path.to_path_buf(), leaf_id),
        cwd,
        header: Value::Object(session.header.clone()),
        context: projection.messages,
        model,
        thinking: projection.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string),
        has_thinking_entry,
        new: false,
    })
}

/// The thinking level as pi's `createAgentSession` picks it: `--thinking`; else a branch
/// with messages keeps its own level (pi's `defaultThinkingLevel`, else `medium`, when it
/// never set one); else `modelThinkingLevels` for the model, else `defaultThinkingLevel`,
/// else `medium`. Then clamped to what the model supports (`off` for a model that does not
/// reason).
fn thinking_level(args: &Args, target: &Target, config: &PiConfig, spec: &ModelSpec, info: &ModelInfo) -> String {
    let default = || config.default_thinking_level().unwrap_or("medium").to_string();
    let level = args.thinking.clone().or_else(|| {
        (!target.context.is_empty()).then(|| {
            if target.has_thinking_entry {
                target.thinking.clone().unwrap_or_else(default)
            } else {
                default()
            }
        })
    });
    let level = level.or_else(|| config.model_thinking_level(spec).map(str::to_string)).unwrap_or_else(default);
    info.clamp_thinking_level(&level).to_string()
}

/// `--summarize`: the branch from the session's last entry (pi's leaf) to `--from` is
/// summarized and the summary appended under the navigation's new leaf; the run then
/// continues after the summary.
fn summarize_left_branch(
    args: &Args,
    target: &mut Target,
    provider: &dyn llm::Provider,
    config: &PiConfig,
    info: &ModelInfo,
    thinking: &str,
) -> anyhow::Result<()> {
    let path = target.writer.path().to_path_buf();
    let to = args.from.as_deref().unwrap_or("@");
    let budget = crate::agent::navigate::token_budget(provider, info, config);
    let level = (thinking != "off").then_some(thinking);
    let Some(done) = crate::agent::navigate::summarize_left_branch(&path, "@", to, provider, level, budget)? else {
        if args.mode == Mode::Text {
            eprintln!("nothing to summarize: {to} is on the path to the session's last entry");
        }
        return Ok(());
    };
    if args.mode == Mode::Text {
        eprintln!("summarized the branch left behind ({} entries) as {}", done.entries, done.id);
    }
    let source = Source::open(&path)?;
    let session = Session::load(&source)?;
    let leaf = session.get(&done.id);
    let projection =
        context::project(&session, leaf).map_err(|_| anyhow::anyhow!("{}: unreadable lines", path.display()))?;
    target.context = projection.messages;
    target.writer = SessionWriter::existing(path, Some(done.id));
    Ok(())
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

    let mut target = match &args.session {
        None => new_target(None, ctx)?,
        Some(arg) => {
            let p = Path::new(arg);
            if p.is_file() {
                existing_target(ctx, p, args.from.as_deref(), args.mode, args.fork)?
            } else {
                match locate(arg, &ctx.search) {
                    Ok(SessionArg::Path(found)) if found.is_file() => {
                        existing_target(ctx, &found, args.from.as_deref(), args.mode, args.fork)?
                    }
                    Ok(SessionArg::Stdin) => bail!("`agent` writes to its session; it cannot use standard input"),
                    _ if p.exists() => bail!("{arg}: not a session file"),
                    _ => {
                        if args.from.is_some() {
                            bail!("--from: {arg} does not exist yet, so it has no entries");
                        }
                        new_target(Some(p.to_path_buf()), ctx)?
                    }
                }
            }
        }
    };

    let spec = match (&args.model, &target.model) {
        (Some(m), _) => ModelSpec::parse(m).ok_or_else(|| {
            anyhow::anyhow!("--model {m}: expected PROVIDER/ID, for example anthropic/claude-sonnet-4-5")
        })?,
        (None, Some(m)) => m.clone(),
        (None, None) => bail!("no model: give --model PROVIDER/ID (for example anthropic/claude-sonnet-4-5)"),
    };
    let config = PiConfig::load(&target.cwd);
    for p in &config.problems {
        eprintln!("warning: {p}");
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
    let run::Providers { calls: provider, summarizer } = run::open_providers(&opts)?;
    let thinking = thinking_level(&args, &target, &config, &spec, &info);

    if args.summarize {
        summarize_left_branch(&args, &mut target, summarizer.as_ref(), &config, &info, &thinking)?;
    }

    let names: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let tools = builtin_tools(&names);
    let declarations: Vec<Value> = tools.iter().map(|t| t.declaration()).collect();
    let prompt_opts = PromptOptions {
        cwd: target.cwd.clone(),
        system_prompt: args.system_prompt.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        agent_dir: agent_dir(),
    };
    let sections = run::system_sections(&prompt_opts, &names);
    let mut starting = Vec::new();
    if let Some(sys) = run::system_patch(&target.context, &sections, &declarations) {
        starting.push(sys);
    }
    starting.push(run::user_message(&prompt));

    let mut tool_ctx = ToolContext::new(&target.cwd);
    tool_ctx.bash_timeout = args.bash_timeout.filter(|s| *s > 0.0).map(Duration::from_secs_f64);
    let session_id = target.header.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    tool_ctx.session_env = run::session_env(&session_id, target.writer.path(), &spec, &thinking);
    tool_ctx.model_without_images = run::model_without_images(&spec);

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
            eprintln!("{}", error.unwrap_or_else(|| format!("Request {}", outcome.stop_reason)));
            1
        }
        "length" => {
            eprintln!("warning: the response hit the output token limit (stopReason length); the text may be cut off");
            1
        }
        _ => {
            let _ = json!(null);
            0
        }
    })
}
