//! The `pisces` binary: read the environment once, parse arguments, run, and turn the
//! outcome into an exit status (see `pisces::exit`).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

#[cfg(not(feature = "alloc-stats"))]
mod alloc;
#[cfg(feature = "alloc-stats")]
mod alloc_stats;

#[cfg(feature = "alloc-stats")]
#[global_allocator]
static ALLOC: alloc_stats::Counting = alloc_stats::Counting;

#[cfg(not(feature = "alloc-stats"))]
#[global_allocator]
static ALLOC: alloc::Alloc = alloc::Alloc;

fn main() -> ExitCode {
    let code = run();
    #[cfg(feature = "alloc-stats")]
    alloc_stats::report();
    code
}

fn run() -> ExitCode {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("pisces: internal error (a bug in pisces; please report it with the command that caused it)");
        default_hook(info);
    }));
    let cli = pisces::cli::Cli::parse();
    let env = pisces::env::Env::from_process();
    match pisces::cli::run(cli, env) {
        Ok(status) => status.into(),
        Err(err) => {
            // `pisces path big.jsonl | head` closes the pipe early: that is success.
            if pisces::exit::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            let hints = pisces::exit::hints_of(&err);
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{}", pisces::render::error_text(&err, &hints));
            pisces::exit::status_of(&err).into()
        }
    }
}
