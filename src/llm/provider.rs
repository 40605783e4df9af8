//! The interface between pisces and a model: one request, streamed, answered with pi's
//! assistant message shape. Implementations live beside this file (HTTP providers) and in
//! tests (scripted providers); callers (`summarize`, `compact`, later `agent`) only see
//! this trait.

use serde_json::Value;

/// A model, named as pi names it (`anthropic/claude-sonnet-4-5`, `ollama/qwen3:8b`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    pub provider: String,
    pub id: String,
}

impl ModelSpec {
    /// Parses `PROVIDER/ID` (the id may contain further `/` and `:`).
    pub fn parse(s: &str) -> Option<ModelSpec> {
        let (provider, id) = s.split_once('/')?;
        (!provider.is_empty() && !id.is_empty()).then(|| ModelSpec { provider: provider.into(), id: id.into() })
    }
}

/// One model call.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The system prompt (sent as the provider's system field).
    pub system: Option<String>,
    /// pi LLM messages (`convertToLlm` output: user / assistant / toolResult; system
    /// messages, if any, are the provider's to place).
    pub messages: Vec<Value>,
    /// Tool declarations `{name, description, parameters}`; empty for summaries.
    pub tools: Vec<Value>,
    /// `None`: the model's own output limit, as pi 1.6 asks for summaries.
    pub max_tokens: Option<u32>,
    /// pi's thinking level (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`).
    pub thinking_level: Option<String>,
}

/// What a stream reports while it runs (for printing progress; the final message is the
/// return value of [`Provider::complete`]).
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// A text block begins (its deltas follow).
    TextStart,
    TextDelta(String),
    /// A thinking block begins.
    ThinkingStart,
    ThinkingDelta(String),
    /// A tool call block begins.
    ToolCallStart {
        id: String,
        name: String,
    },
    /// A piece of the current tool call's JSON arguments, as the model streams it.
    ToolCallDelta(String),
    /// The usage so far (pi's `usage` shape), whenever the provider reports it.
    Usage(Value),
    /// A retry after a transient failure (429, 5xx, overloaded), with the wait.
    Retry {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
}

/// A call that did not produce a message.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// No key for the provider (the message names the environment variable to set).
    #[error("{0}")]
    NoKey(String),
    /// The server refused the request (4xx): its own explanation.
    #[error("{provider} refused the request (HTTP {status}): {message}")]
    Refused { provider: String, status: u16, message: String },
    /// Transient failures that outlasted the retries.
    #[error("{provider} failed after {attempts} attempts: {message}")]
    GaveUp { provider: String, attempts: u32, message: String },
    /// Network or protocol trouble (connection, timeout, a stream cut in the middle).
    #[error("{provider}: {message}")]
    Transport { provider: String, message: String },
    #[error("{0}")]
    Other(String),
}

/// A model provider. `Send + Sync`: the agent runs each call on a thread of its own, so
/// that an abort does not wait for a silent stream.
pub trait Provider: Send + Sync {
    /// The model this provider calls.
    fn model(&self) -> &ModelSpec;

    /// The model's context window in tokens (for budgets), if known.
    fn context_window(&self) -> Option<u64>;

    /// Sends `request` and returns pi's assistant message: `{role:"assistant", content,
    /// api, provider, model, usage:{input, output, cacheRead, cacheWrite, totalTokens,
    /// cost:{…}}, stopReason, timestamp, …}`, exactly the shape pi writes. A reply that
    /// ends in an error the model reported (`stopReason:"error"`) is a message, not an
    /// `Err`.
    fn complete(&self, request: &Request, events: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError>;
}
