//! The command line: one file per subcommand, each an `Args` struct and a `run()` that
//! calls the library and a renderer. Shared plumbing (opening a session, printing its
//! diagnostics, exit codes) lives here.

pub mod agent;
pub mod check;
pub mod compact;
pub mod completions;
pub mod diff;
pub mod fork;
pub mod label;
pub mod leaves;
pub mod man;
pub mod path;
pub mod show;
pub mod summarize;
pub mod tree;

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::render::{ColorChoice, Ui};
use crate::session::locate::{locate, SearchDirs, SessionArg};
use serde_json::{Map, Value};

use crate::session::{LoadError, Session, Severity, Source};

const AFTER_HELP: &str = "\
SESSION is a session file, `-` for standard input, or a session id (or a unique prefix of
one) looked up like `pi --session <id>`: in --session-dir, else $PI_CODING_AGENT_SESSION_DIR,
else every project folder under ~/.pi/agent/sessions/.

REV names one entry: a full id, a unique id prefix, a label, `@` (pi's current leaf: the last
entry of the file), `#N` (the entry on line N), or `root`; add `^` for the parent and `~N` for
the N-th ancestor (`@~3`, `fix-1^`).

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

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Tree(tree::Args),
    Path(path::Args),
    Show(show::Args),
    Leaves(leaves::Args),
    Diff(diff::Args),
    Fork(fork::Args),
    Check(check::Args),
    Label(label::Args),
    Summarize(summarize::Args),
    Compact(compact::Args),
    Completions(completions::Args),
    Agent(agent::Args),
}

/// Settings every command shares, resolved once.
pub struct Ctx {
    pub ui: Ui,
    pub strict: bool,
    pub search: SearchDirs,
}

/// What a command asks `main` to exit with (errors are reported separately, with 2).
pub type ExitStatus = u8;

pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let ctx =
        Ctx { ui: Ui::from_env(cli.color), strict: cli.strict, search: SearchDirs { session_dir: cli.session_dir } };
    match cli.command {
        Command::Tree(args) => tree::run(&ctx, args),
        Command::Path(args) => path::run(&ctx, args),
        Command::Show(args) => show::run(&ctx, args),
        Command::Leaves(args) => leaves::run(&ctx, args),
        Command::Diff(args) => diff::run(&ctx, args),
        Command::Fork(args) => fork::run(&ctx, args),
        Command::Check(args) => check::run(&ctx, args),
        Command::Label(args) => label::run(&ctx, args),
        Command::Summarize(args) => summarize::run(&ctx, args),
        Command::Compact(args) => compact::run(&ctx, args),
        Command::Completions(args) => completions::run(args),
        Command::Agent(args) => agent::run(&ctx, args),
    }
}

/// Opens the bytes a SESSION argument names.
pub fn open_source(ctx: &Ctx, arg: &str) -> anyhow::Result<Source> {
    Ok(match locate(arg, &ctx.search)? {
        SessionArg::Stdin => Source::stdin()?,
        SessionArg::Path(p) => Source::open(&p)?,
    })
}

/// Prints a session's problems to stderr (`file:line: what`), and fails under `--strict`.
pub fn report_diagnostics(ctx: &Ctx, session: &Session) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    for d in session.diagnostics.iter().filter(|d| d.severity == Severity::Warning) {
        let at = d.line.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = writeln!(err, "{}{at}: {}", session.name, d.message);
    }
    if ctx.strict && session.warnings() > 0 {
        return Err(LoadError::Strict { name: session.name.clone(), count: session.warnings() }.into());
    }
    Ok(())
}

/// The `session` object every JSON document carries: the file as given, the header's id,
/// version (1 when absent), cwd and parentSession, and the session name.
pub fn session_json(session: &Session) -> Value {
    let mut info = Map::new();
    info.insert("file".into(), session.name.clone().into());
    info.insert("id".into(), session.session_id().into());
    info.insert("version".into(), session.header.get("version").cloned().unwrap_or(Value::from(1)));
    info.insert("cwd".into(), session.header.get("cwd").cloned().unwrap_or(Value::Null));
    info.insert("name".into(), session.name_of_session().map_or(Value::Null, Value::from));
    if let Some(parent) = session.header.get("parentSession") {
        info.insert("parentSession".into(), parent.clone());
    }
    Value::Object(info)
}
