//! `pisces completions SHELL`: shell completion scripts, generated from the clap
//! definitions.

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
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cmd, "pisces", &mut out);
    Ok(0)
}
