//! pisces: audit, compare and continue coding-agent session trees (pi's JSONL format).
//!
//! Layers, each knowing nothing of the ones after it (see DESIGN.md):
//! [`session`] (bytes -> entries -> tree -> projection), [`llm`] (provider wire formats),
//! [`render`] (writers for people and programs), [`cli`] (one file per subcommand).

pub mod agent;
pub mod cli;
pub mod diff;
pub mod llm;
pub mod render;
pub mod session;
pub mod summarize;
