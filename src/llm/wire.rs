//! Provider request bodies built from `convertToLlm` output, as pi-ai builds them.

use serde_json::{json, Value};

/// The model a request is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub id: String,
}

/// Anthropic Messages request body parts (`system`, `messages`, `tools`).
pub fn anthropic_request(llm: &[Value], model: &ModelRef) -> Value {
    let _ = (llm, model);
    json!({})
}

/// OpenAI Chat Completions request body parts (`messages`, `tools`).
pub fn openai_request(llm: &[Value], model: &ModelRef) -> Value {
    let _ = (llm, model);
    json!({})
}
