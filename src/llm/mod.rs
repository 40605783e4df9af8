//! Talking to models: the provider interface, HTTP providers, and provider request
//! formats.

pub mod provider;
pub mod wire;

pub use provider::{LlmError, ModelSpec, Provider, Request, StreamEvent};
