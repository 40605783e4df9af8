//! Ctrl-C for the agent, as pi treats it: the first one aborts what is running (the model's
//! stream, a tool, a compaction: they watch the abort flag), the second one exits at once
//! (status 130), whatever is still running.
//!
//! The handler runs on `ctrlc`'s own thread, so the second Ctrl-C exits even while the main
//! thread is blocked. It is installed once per process; in the REPL, after the line editor,
//! which takes SIGINT for itself when it is created (at its prompt the terminal is raw and
//! Ctrl-C is a key it reads).
//!
//! The handler says what it did ([`Interrupt`]) through the `show` it is given: the
//! library never writes to the terminal itself.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Interrupts since the last [`reset`].
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Whether a run is going (an interrupt then aborts it); else it only warns.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// What an interrupt did, for the user to see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// A run was going: it is being aborted.
    Aborting,
    /// Nothing was running: only a second one would do something (exit).
    Idle,
}

/// Installs the handler: the first interrupt sets `abort` while a run is going, a second one
/// exits with status 130. `show` tells the user; it runs on the handler's thread.
pub fn install(abort: &Arc<AtomicBool>, show: fn(Interrupt)) {
    let abort = Arc::clone(abort);
    // An error here means a handler is already installed: the first one stays.
    let _ = ctrlc::set_handler(move || {
        if COUNT.fetch_add(1, Ordering::SeqCst) >= 1 {
            std::process::exit(130);
        }
        if RUNNING.load(Ordering::SeqCst) {
            abort.store(true, Ordering::SeqCst);
            show(Interrupt::Aborting);
        } else {
            show(Interrupt::Idle);
        }
    });
}

/// A run starts (`true`) or ends: interrupts abort it only while it runs.
pub fn running(yes: bool) {
    RUNNING.store(yes, Ordering::SeqCst);
}

/// A new prompt was read: the next Ctrl-C is a first one again.
pub fn reset() {
    COUNT.store(0, Ordering::SeqCst);
}
