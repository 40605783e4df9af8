//! Error classes: which failed replies pi retries and which mean the context no longer
//! fits (docs/pi-format.md §6.7, §7.5), read from an error assistant's text, and pi's wait
//! before a retry. The loop acts on the class (records, omits, compacts, retries); this
//! module only decides it.

use std::time::Duration;

use serde_json::Value;

use crate::llm::{CompactionSettings, RetrySettings};

/// What an error assistant calls for, given pi's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The context no longer fits: compact the branch and call again (compaction is on).
    Overflow,
    /// A passing failure worth another call (retries are on).
    Retryable,
    /// Recorded as it is; the run ends.
    Final,
}

/// The class of `error` (an error assistant's `errorMessage`). An overflow is never
/// retried as such: with compaction off it is final.
pub fn classify(error: &str, compaction: &CompactionSettings, retry: &RetrySettings) -> ErrorClass {
    if compaction.enabled && is_context_overflow(error) {
        ErrorClass::Overflow
    } else if retry.enabled && is_retryable_error(error) {
        ErrorClass::Retryable
    } else {
        ErrorClass::Final
    }
}

/// pi's backoff before retry `attempt` (counted from 1): `baseDelayMs × 2^(attempt − 1)`,
/// at most `maxAgentDelayMs`.
pub fn retry_delay(retry: &RetrySettings, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    retry.base_delay.saturating_mul(factor).min(retry.max_delay)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(compaction: bool, retry: bool) -> (CompactionSettings, RetrySettings) {
        let c = CompactionSettings { enabled: compaction, reserve_tokens: 16384, keep_recent_tokens: 20000 };
        (c, RetrySettings { enabled: retry, ..RetrySettings::default() })
    }

    #[test]
    fn overflow_wins_over_retry_and_is_never_retried() {
        let overflow = "prompt is too long: 210000 tokens > 200000 maximum";
        let (c, r) = settings(true, true);
        assert_eq!(classify(overflow, &c, &r), ErrorClass::Overflow);
        assert_eq!(classify("529 Overloaded", &c, &r), ErrorClass::Retryable);
        assert_eq!(classify("invalid x-api-key", &c, &r), ErrorClass::Final);
        let (c, r) = settings(false, true);
        assert_eq!(classify(overflow, &c, &r), ErrorClass::Final);
        let (c, r) = settings(true, false);
        assert_eq!(classify("529 Overloaded", &c, &r), ErrorClass::Final);
    }

    #[test]
    fn quota_and_status_codes_inside_numbers_are_not_retryable() {
        assert!(!is_retryable_error("insufficient_quota: rate limit"));
        assert!(!is_retryable_error("request 15290 failed"));
        assert!(is_retryable_error("HTTP 503: upstream"));
        assert!(is_retryable_error("Rate_Limit reached"));
    }

    #[test]
    fn the_backoff_doubles_up_to_the_maximum() {
        let r = RetrySettings::default();
        let waits: Vec<u64> = (1..=7).map(|a| retry_delay(&r, a).as_millis() as u64).collect();
        assert_eq!(waits, [2000, 4000, 8000, 16000, 32000, 60000, 60000]);
        assert_eq!(retry_delay(&r, 200), r.max_delay);
    }
}
