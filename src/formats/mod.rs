//! The formats pisces reads, one module each, behind the seam in `session::format`.
//!
//! To add a format: a module implementing `Format` (detection and loading) and `Dialect`
//! (what is done with a loaded session), and one line in [`all`]. See ARCHITECTURE.md.

pub mod claude;
pub mod codex;
pub mod events;
pub mod omp;
pub mod pi;

#[cfg(test)]
mod chatlog;

use crate::session::format::Format;

/// Every format, in the order detection prefers them when two fit equally well.
pub static ALL: &[&dyn Format] = &[&pi::PI, &omp::OMP, &claude::CLAUDE, &codex::CODEX, &events::EVENTS];

/// Every format (see [`ALL`]).
pub fn all() -> &'static [&'static dyn Format] {
    ALL
}
