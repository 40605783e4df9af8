//! Talking to models: the provider interface, HTTP providers, and provider request
//! formats.

pub mod catalog;
mod client;
pub mod config;
mod http;
pub mod message;
pub mod model;
mod open;
pub mod provider;
pub mod sse;
mod stream;
pub mod testing;
pub mod wire;

pub use catalog::Api;
pub use config::{BranchSummarySettings, CompactionSettings, PiConfig, RetrySettings};
pub use http::{HttpProvider, HttpSettings, RetryPolicy, Secret};
pub use message::error_message;
pub use model::{resolve_model, ModelInfo};
pub use open::{describe_model, open_http_provider, open_provider, ProviderOptions};
pub use provider::{LlmError, ModelSpec, Provider, Request, StreamEvent};
