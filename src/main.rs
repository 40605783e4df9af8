//! The `pisces` binary: parse arguments, run, map errors to exit codes.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

#[cfg(feature = "alloc-stats")]
mod alloc_stats;

#[cfg(feature = "alloc-stats")]
#[global_allocator]
static ALLOC: alloc_stats::Counting = alloc_stats::Counting;

fn main() -> ExitCode {
    let code = run();
    #[cfg(feature = "alloc-stats")]
    alloc_stats::report();
    code
}

fn run() -> ExitCode {
    let cli = pisces::cli::Cli::parse();
    match pisces::cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // `pisces path big.jsonl | head` closes the pipe early: that is success.
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "pisces: error: {err}");
            for cause in err.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}
