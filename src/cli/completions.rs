//! `pisces completions SHELL`: shell completion scripts, generated from the clap
//! definitions.

use std::io::Write;

use clap::CommandFactory;

use super::{Cli, ExitStatus};

const EXAMPLES: &str = "\
Examples:
  pisces completions bash > ~/.local/share/bash-completion/completions/pisces
  pisces completions zsh > \"${fpath[1]}/_pisces\"
  pisces completions fish > ~/.config/fish/completions/pisces.fish";

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args) -> anyhow::Result<ExitStatus> {
    let mut cmd = Cli::command();
    // clap_complete panics when its writer fails (`| head -c 10` closes the pipe), so the
    // script is made in memory and written here, where a closed pipe is an error like any.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "pisces", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitStatus::Ok)
}
