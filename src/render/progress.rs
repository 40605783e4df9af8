//! A progress bar on stderr for work over many sessions: shown only when stderr is a
//! terminal and the work has taken more than a second (a quick run prints nothing).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: indicatif::ProgressBar,
    started: Instant,
    allowed: bool,
}

impl Progress {
    /// `what` names the work (`reading`); `{pos}/{len}` follow it.
    pub fn new(what: &str, total: usize) -> Progress {
        let bar = indicatif::ProgressBar::hidden();
        bar.set_length(total as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template(&format!("{what} {{pos}}/{{len}} {{wide_bar}} {{eta}}"))
        {
            bar.set_style(style);
        }
        Progress { bar, started: Instant::now(), allowed: std::io::stderr().is_terminal() && total > 1 }
    }

    pub fn set(&self, done: usize) {
        if self.allowed && self.bar.is_hidden() && self.started.elapsed() > Duration::from_secs(1) {
            self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        self.bar.set_position(done as u64);
    }

    /// Takes the bar off the screen (before the results are printed).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
