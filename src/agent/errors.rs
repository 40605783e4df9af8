//! Error classes: which failed replies pi retries and which mean the context no longer
//! fits (pi-reference §6.7, §7.5), read from an error assistant's text. The loop decides
//! what to do with each class; this module only names them.

use serde_json::Value;

fn matches_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| text.contains(n))
}

/// pi's `isContextOverflow` for an error text (§6.7), matched by fixed substrings (the
/// reference's regular expressions, with their number parts dropped).
pub fn is_context_overflow(error: &str) -> bool {
    let t = error.to_lowercase();
    if t.starts_with("throttling error:") || t.starts_with("service unavailable:") {
        return false;
    }
    if matches_any(&t, &["rate limit", "too many requests"]) {
        return false;
    }
    matches_any(
        &t,
        &[
            "prompt is too long",
            "prompt too long",
            "prompt exceeds max length",
            "request_too_large",
            "input is too long for requested model",
            "exceeds the context window",
            "maximum context length",
            "context window exceeded",
            "reduce the length of the messages",
            "maximum prompt length is",
            "maximum allowed input length of",
            "longer than the model's context length",
            "longer than the models context length",
            "exceeds the limit of",
            "exceeds the available context size",
            "greater than the context length",
            "context window exceeds limit",
            "exceeded model token limit",
            "maximum context length",
            "but the configured context size is",
            "model_context_window_exceeded",
            "range of input length should be",
            "context_length_exceeded",
            "context length exceeded",
            "context_length exceeded",
            "too many tokens",
            "token limit exceeded",
        ],
    ) || (t.contains("input token count") && t.contains("exceeds the maximum"))
        || (t.contains("exceeds") && t.contains("maximum context length"))
        || t.starts_with("413 ")
        || t.starts_with("413:")
        || t == "413"
        || (t.contains("api error (413):"))
}

/// pi's retryable-error pattern (§7.5), by substrings; quota and billing texts and context
/// overflows never count.
pub fn is_retryable_error(error: &str) -> bool {
    let t = error.to_lowercase();
    if is_context_overflow(error) || matches_any(&t, &["insufficient_quota", "quota exceeded", "billing"]) {
        return false;
    }
    let spaced = t.replace(['_', '-'], " ");
    matches_any(
        &spaced,
        &[
            "overloaded",
            "rate limit",
            "ratelimit",
            "too many requests",
            "service unavailable",
            "serviceunavailable",
            "temporarily unavailable",
            "server error",
            "internal error",
            "provider returned an error",
            "provider returned error",
            "network",
            "connection",
            "socket",
            "econnreset",
            "econnrefused",
            "epipe",
            "etimedout",
            "timed out",
            "time out",
            "timeout",
            "terminated",
            "websocket",
            "ended without",
            "cut off",
            "retry delay",
            "please retry your request",
        ],
    ) || ["429", "500", "502", "503", "504", "520", "524", "529"].iter().any(|c| {
        t.match_indices(c).any(|(i, _)| {
            let before = t[..i].chars().last().is_none_or(|ch| !ch.is_ascii_digit());
            let after = t[i + 3..].chars().next().is_none_or(|ch| !ch.is_ascii_digit());
            before && after
        })
    })
}

pub(super) fn error_text(m: &Value) -> &str {
    m.get("errorMessage").and_then(Value::as_str).unwrap_or_default()
}
