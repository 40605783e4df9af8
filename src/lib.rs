//! pisces: audit, compare and continue coding-agent session trees.
//!
//! Layers, each knowing nothing of the ones after it (ARCHITECTURE.md is the map):
//! [`env`] (the process environment, read once), [`session`] (bytes -> the common tree
//! index -> views, behind the format seam), [`formats`] (one module per agent's format),
//! [`llm`] (provider wire formats), [`diff`], [`summarize`] and [`agent`] (what commands
//! compute), [`render`] (writers for people and programs), [`cli`] (one file per
//! subcommand: arguments in, library and renderer called, nothing else).

pub mod agent;
pub mod cli;
#[cfg(test)]
mod corpus;
pub mod diff;
pub mod env;
pub mod exit;
pub mod export;
pub mod formats;
#[doc(hidden)]
pub mod fuzzing;
pub mod llm;
pub mod render;
pub mod session;
pub mod store;
pub mod summarize;
