//! The command line: one file per subcommand, each an `Args` struct and a `run()` that
//! calls the library and a renderer. Shared plumbing (opening a session, printing its
//! diagnostics, exit codes) lives here.

pub mod agent;
pub mod check;
pub mod compact;
pub mod completions;
pub mod convert;
pub mod diff;
pub mod export;
pub mod fork;
pub mod grep;
pub mod label;
pub mod leaves;
pub mod ls;
pub mod man;
pub mod path;
pub mod show;
pub mod stats;
pub mod summarize;
pub mod tree;

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::env::Env;
use crate::render::{sanitize, ColorChoice, Ui};
use crate::session::format::Format;
use crate::session::locate::SessionArg;
use crate::session::open::Reading;
use crate::session::{LoadError, Session, Severity, Source};

pub use crate::exit::ExitStatus;

const AFTER_HELP: &str = "\
SESSION is a session file, `-` for standard input, or a session id (or a unique prefix of
one) looked up like `pi --session <id>`: in --session-dir, else $PI_CODING_AGENT_SESSION_DIR,
else every project folder under ~/.pi/agent/sessions/.

REV names one entry: a full id, a unique id prefix, a label, `@` (pi's current leaf: the last
entry of the file), `#N` (the entry on line N), or `root`; add `^` for the parent and `~N` for
the N-th ancestor (`@~3`, `fix-1^`).

Exit status: 0 done; 1 a finding (`check`: problems, `diff`: the sides differ, `summarize`:
nothing to summarize); 2 a usage or input error (bad arguments, a file pisces cannot read, a
REV that names nothing); 3 a model provider failed (`summarize`, `compact`, `agent`); 101 an
internal error (a bug in pisces: please report it).

pisces never modifies a file it only reads.";

#[derive(Debug, Parser)]
#[command(
    name = "pisces",
    version,
    about = "Audit, compare and continue coding-agent session trees (pi's JSONL sessions)",
    after_help = AFTER_HELP,
    max_term_width = 100
)]
pub struct Cli {
    /// When to color output: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Fail (exit 2) on any problem in a session file instead of reading past it as pi does.
    #[arg(long, global = true)]
    pub strict: bool,

    /// Directory to look up session ids in (default: $PI_CODING_AGENT_SESSION_DIR, else
    /// ~/.pi/agent/sessions/*/).
    #[arg(long, global = true, value_name = "DIR")]
    pub session_dir: Option<PathBuf>,

    /// Read every session file whole, without the cache ($XDG_CACHE_HOME/pisces, else
    /// ~/.cache/pisces: what `ls` and `stats` learnt of each session, and the kept index of
    /// each large pi or oh-my-pi session, from which a read after an append reads only the
    /// new lines), and leave the cache as it is.
    #[arg(long, global = true)]
    pub no_cache: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Tree(tree::Args),
    Path(path::Args),
    Show(show::Args),
    Leaves(leaves::Args),
    Export(export::Args),
    Ls(ls::Args),
    Grep(grep::Args),
    Stats(stats::Args),
    Diff(diff::Args),
    Fork(fork::Args),
    Convert(convert::Args),
    Check(check::Args),
    Label(label::Args),
    Summarize(summarize::Args),
    Compact(compact::Args),
    Completions(completions::Args),
    Agent(agent::Args),
}

/// `--format` of the commands that print a sentence or a plan for people, or one
/// versioned JSON document for programs (`fork`, `label`, `summarize`, `compact`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    /// For people.
    Text,
    /// One versioned JSON document.
    Json,
}

/// Settings every command shares, resolved once.
pub struct Ctx {
    pub ui: Ui,
    pub strict: bool,
    pub env: Env,
    /// `--session-dir`.
    pub session_dir: Option<PathBuf>,
    /// The whole-store cache's folder (`None`: `--no-cache`, or no home to keep it in).
    pub cache_dir: Option<PathBuf>,
    /// The formats sessions are read in.
    pub formats: &'static [&'static dyn Format],
}

impl Ctx {
    /// The folders session ids are looked up in.
    pub fn session_dirs(&self) -> Vec<PathBuf> {
        self.env.session_dirs(self.session_dir.as_deref())
    }
}

pub fn run(cli: Cli, env: Env) -> anyhow::Result<ExitStatus> {
    let cache_dir = if cli.no_cache { None } else { env.cache_dir.clone() };
    let ctx = Ctx {
        ui: Ui::new(cli.color, &env),
        strict: cli.strict,
        env,
        session_dir: cli.session_dir,
        cache_dir,
        formats: crate::formats::all(),
    };
    match cli.command {
        Command::Tree(args) => tree::run(&ctx, args),
        Command::Path(args) => path::run(&ctx, args),
        Command::Show(args) => show::run(&ctx, args),
        Command::Leaves(args) => leaves::run(&ctx, args),
        Command::Export(args) => export::run(&ctx, args),
        Command::Ls(args) => ls::run(&ctx, args),
        Command::Grep(args) => grep::run(&ctx, args),
        Command::Stats(args) => stats::run(&ctx, args),
        Command::Diff(args) => diff::run(&ctx, args),
        Command::Fork(args) => fork::run(&ctx, args),
        Command::Convert(args) => convert::run(&ctx, args),
        Command::Check(args) => check::run(&ctx, args),
        Command::Label(args) => label::run(&ctx, args),
        Command::Summarize(args) => summarize::run(&ctx, args),
        Command::Compact(args) => compact::run(&ctx, args),
        Command::Completions(args) => completions::run(args),
        Command::Agent(args) => agent::run(&ctx, args),
    }
}

/// Where a SESSION argument points.
pub fn locate_arg(ctx: &Ctx, arg: &str) -> anyhow::Result<SessionArg> {
    let stores = || crate::formats::stores(&ctx.env);
    Ok(crate::session::locate::locate_with_stores(arg, || ctx.session_dirs(), stores)?)
}

/// The whole-store cache of `kind`, unless `--no-cache`.
pub fn open_cache(ctx: &Ctx, kind: crate::store::cache::Kind) -> Option<crate::store::cache::Cache> {
    ctx.cache_dir.as_deref().map(|d| crate::store::cache::Cache::open(d, kind, ctx.formats, None))
}

/// Every session of the store, and the whole-store cache of `kind` (unless `--no-cache`),
/// opened while the folders are listed and told the listing.
pub fn discover_cached(
    ctx: &Ctx,
    kind: crate::store::cache::Kind,
) -> (crate::store::Discovery, Option<crate::store::cache::Cache>) {
    let (dir, formats) = (ctx.cache_dir.as_deref(), ctx.formats);
    let open = move || dir.map(|d| crate::store::cache::Cache::open(d, kind, formats, None));
    let (found, mut cache) = crate::store::discover_opening(&ctx.env, ctx.session_dir.as_deref(), formats, open);
    set_listing(cache.as_mut(), &found.sessions);
    (found, cache)
}

/// Tells the cache the whole store's listing, once it was discovered (sessions of formats
/// that read other files of the store are cached only then).
pub fn set_listing(cache: Option<&mut crate::store::cache::Cache>, found: &[crate::store::Where]) {
    if let Some(c) = cache {
        c.set_listing(Some(crate::store::cache::listing_stamp(found.iter().filter_map(|w| match w {
            crate::store::Where::File(p) => Some(p.as_path()),
            crate::store::Where::Stored { .. } => None,
        }))));
    }
}

/// Writes what a run added to the cache; a cache that cannot be written is said once,
/// and is no failure of the command.
pub fn save_cache(cache: Option<crate::store::cache::Cache>) {
    if let Some(c) = cache {
        if let Err(e) = c.save() {
            let _ = writeln!(std::io::stderr(), "pisces: warning: the cache was not saved: {e}");
        }
        // Its tables are freed by the exit: freeing ten thousand entries one by one took
        // longer than a warm `ls` may.
        std::mem::forget(c);
    }
}

/// The sessions SESSION arguments name, for the commands that read many (`grep`,
/// `stats`); `verb` names the command in the error for standard input.
pub fn named_sessions(ctx: &Ctx, args: &[String], verb: &str) -> anyhow::Result<Vec<crate::store::Where>> {
    use crate::store::Where;
    args.iter()
        .map(|arg| {
            Ok(match locate_arg(ctx, arg)? {
                SessionArg::Path(p) => Where::File(p),
                SessionArg::Stored { db, agent, id } => Where::Stored { db, agent, id },
                SessionArg::Stdin => anyhow::bail!("`{verb}` reads sessions by name; standard input is not one"),
            })
        })
        .collect()
}

/// Opens the bytes a SESSION argument names.
pub fn open_source(ctx: &Ctx, arg: &str) -> anyhow::Result<Source> {
    Ok(match locate_arg(ctx, arg)? {
        SessionArg::Stdin => Source::stdin()?,
        SessionArg::Path(p) => Source::open(&p)?,
        SessionArg::Stored { db, agent, id } => crate::formats::open_stored(&db, &agent, &id)?,
    })
}

/// Reads the sessions the SESSION arguments name and runs `step` on them, the one way
/// every command reads (`session::open::read`: REVs resolved in the step, reads repeated
/// when a file changed, diagnostics reported before the output).
pub fn read<R>(
    ctx: &Ctx,
    args: &[&str],
    step: impl FnMut(&[Session], &mut Reading) -> anyhow::Result<R>,
) -> anyhow::Result<R> {
    let open = || args.iter().map(|a| open_source(ctx, a)).collect::<anyhow::Result<Vec<_>>>();
    let mut report = |s: &Session| report_diagnostics(ctx, s);
    // Large sessions are read from their kept index when it holds (the cache, unless
    // `--no-cache`).
    let kept = ctx.cache_dir.as_deref().map(crate::session::kept::Store::new);
    // Every command reads once and exits after its output.
    crate::session::open::read_with(
        &open,
        ctx.formats,
        &mut report,
        step,
        crate::session::open::Afterwards::LeaveToExit,
        kept.as_ref(),
    )
}

/// [`read`] for one SESSION.
pub fn read_one<R>(
    ctx: &Ctx,
    arg: &str,
    mut step: impl FnMut(&Session, &mut Reading) -> anyhow::Result<R>,
) -> anyhow::Result<R> {
    read(ctx, &[arg], |sessions, reading| step(&sessions[0], reading))
}

/// Prints a session's problems to stderr (`file:line: what`), and fails under `--strict`.
pub fn report_diagnostics(ctx: &Ctx, session: &Session) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    for d in session.diagnostics.iter().filter(|d| d.severity == Severity::Warning) {
        let at = d.line.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = writeln!(err, "{}{at}: {}", sanitize(&session.file), sanitize(&d.message));
    }
    if ctx.strict && session.warnings() > 0 {
        return Err(LoadError::Strict { name: session.file.clone(), count: session.warnings() }.into());
    }
    Ok(())
}

pub use crate::render::json::SessionJson;

/// The model options of `summarize` and `compact`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelArgs {
    /// The model to summarize with, as pi names it (`anthropic/claude-sonnet-4-5`).
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,

    /// The provider's API base URL (an OpenAI-compatible server, a proxy).
    #[arg(long, value_name = "URL", requires = "model")]
    pub base_url: Option<String>,

    /// The environment variable holding the API key [default: the provider's usual one].
    #[arg(long, value_name = "VAR", requires = "model")]
    pub api_key_env: Option<String>,

    /// The model's context window in tokens [default: pi's catalog, else 128000].
    #[arg(long, value_name = "N")]
    pub context_window: Option<u64>,

    /// Testing: a scripted model that answers every request with TEXT (`{kind}` becomes
    /// `history`, `turnPrefix` or `branch`), with zero usage.
    #[arg(long, hide = true, value_name = "TEXT", conflicts_with = "model")]
    pub scripted_reply: Option<String>,
}

impl ModelArgs {
    /// The options as the library takes them.
    pub fn choice(&self) -> crate::summarize::model::ModelChoice {
        crate::summarize::model::ModelChoice {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            context_window: self.context_window,
            scripted_reply: self.scripted_reply.clone(),
        }
    }
}

/// The file a SESSION names, for a command that appends to it (not `-`).
pub fn append_target(ctx: &Ctx, arg: &str, what: &str) -> anyhow::Result<PathBuf> {
    match locate_arg(ctx, arg)? {
        SessionArg::Stdin => {
            anyhow::bail!("`{what}` appends to a session file; it cannot write to standard input")
        }
        SessionArg::Path(p) => Ok(p),
        SessionArg::Stored { agent, id, .. } => anyhow::bail!(
            "`{what}` appends to a session file; {agent}/{id} is a row set in OpenClaw's database, which pisces does not write to (`pisces fork` makes a pi session of it)"
        ),
    }
}

/// pi's configuration for a session, its problems reported on stderr.
pub fn pi_config(ctx: &Ctx, session: &Session) -> crate::llm::PiConfig {
    let config = crate::summarize::model::pi_config(session, &ctx.env);
    let mut err = std::io::stderr().lock();
    for p in &config.problems {
        let _ = writeln!(err, "warning: {}", sanitize(p));
    }
    config
}

/// A model call's retry, said on stderr as it happens (the wait can be long).
fn report_retry(e: &crate::llm::StreamEvent) {
    if let crate::llm::StreamEvent::Retry { attempt, wait_ms, reason } = e {
        eprintln!("retrying (attempt {attempt}) in {wait_ms} ms: {}", crate::render::sanitize(reason));
    }
}
