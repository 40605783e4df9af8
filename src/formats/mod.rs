//! The formats pisces reads, one module each, behind the seam in `session::format`.
//!
//! To add a format: a module implementing `Format` (detection and loading) and `Dialect`
//! (what is done with a loaded session), and one line in [`all`]. See ARCHITECTURE.md.

pub mod claude;
pub mod codex;
pub mod events;
pub mod omp;
pub mod openclaw;
pub mod pi;

#[cfg(test)]
mod chatlog;

use crate::session::format::Format;

/// Every format, in the order detection prefers them when two fit equally well.
pub static ALL: &[&dyn Format] =
    &[&pi::PI, &omp::OMP, &openclaw::OPENCLAW, &claude::CLAUDE, &codex::CODEX, &events::EVENTS];

/// Every format (see [`ALL`]).
pub fn all() -> &'static [&'static dyn Format] {
    ALL
}

/// The databases of sessions on this machine (OpenClaw's), where session ids are also
/// looked up.
pub fn stores(env: &crate::env::Env) -> Vec<crate::session::locate::Store<'static>> {
    fn ids(db: &std::path::Path) -> Result<Vec<String>, String> {
        openclaw::store::session_ids(db).map_err(|e| e.to_string())
    }
    openclaw::store::databases(&env.openclaw_states)
        .into_iter()
        .map(|(agent, db)| crate::session::locate::Store { scheme: "openclaw", agent, db, ids: &ids })
        .collect()
}

/// The databases of sessions in or under a folder (an OpenClaw state folder, or one of its
/// agents' folders), for commands that walk a folder (`check DIR`).
pub fn stores_under(dir: &std::path::Path) -> Vec<crate::session::locate::Store<'static>> {
    fn ids(db: &std::path::Path) -> Result<Vec<String>, String> {
        openclaw::store::session_ids(db).map_err(|e| e.to_string())
    }
    openclaw::store::databases_under(dir)
        .into_iter()
        .map(|(agent, db)| crate::session::locate::Store { scheme: "openclaw", agent, db, ids: &ids })
        .collect()
}

/// The session a store holds (see [`stores`]), as a source its format reads.
pub fn open_stored(
    db: &std::path::Path,
    agent: &str,
    id: &str,
) -> Result<crate::session::Source, crate::session::LoadError> {
    openclaw::store::source(db, agent, id)
}
