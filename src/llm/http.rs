//! The HTTP provider: one POST per attempt over a small blocking client (ureq, rustls), the
//! reply read as server-sent events while it arrives, transient failures retried with
//! backoff.
//!
//! What is retried (each retry is reported as [`StreamEvent::Retry`] before the wait):
//! HTTP 408, 409, 429 and 5xx (Anthropic's 529 "overloaded" included) unless the server
//! says `x-should-retry: false` or the body is about quota or billing; errors the stream
//! reports before it ends (Anthropic `overloaded_error`, `api_error`, `rate_limit_error`;
//! Chat Completions errors that read like overload or rate limits); a connection that
//! cannot be made or breaks before the reply's headers; no reply headers within the
//! timeout. The wait is `base × 2^(retry−1)` capped at the maximum, or the server's
//! `retry-after-ms` / `retry-after`; a server asking for more than the maximum ends the
//! call at once, as pi-ai does.
//!
//! Each [`StreamEvent::Retry`] carries the retry's number (1 for the first retry), the
//! wait in milliseconds and the failure it follows. Deltas of a reply that broke off with
//! a retryable error (an `overloaded_error` event) have already been reported; the next
//! attempt's deltas start over.
//!
//! What is not retried: other 4xx ([`LlmError::Refused`], with the server's own message);
//! a reply cut off after it started, no data for the timeout in the middle of a reply, or a
//! reply that is not an event stream ([`LlmError::Transport`]): the caller has seen part of
//! it, and pi's agent decides about those turns itself.
//!
//! API keys and configured header values never appear in errors, messages or `Debug`
//! output: they are kept in [`Secret`]s and cut out of every server text that could echo
//! them.

use std::fmt;
use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::catalog::Api;
use super::client::anthropic::{self, AnthropicStream};
use super::client::openai::{self, OpenAiStream};
use super::message::{assemble, llm_messages, now_ms, Draft, Meta};
use super::model::ModelInfo;
use super::provider::{LlmError, ModelSpec, Provider, Request, StreamEvent};
use super::sse::SseDecoder;
use super::stream::{Attempt, Flow, StreamParser};

/// A string that must not be shown (an API key, a configured header value).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How the key is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthStyle {
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
    /// `Authorization: Bearer KEY` (OpenAI-compatible).
    Bearer,
}

/// Retries of transient failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: none).
    pub max_retries: u32,
    /// The first wait; each later one doubles.
    pub base_delay: Duration,
    /// The longest wait (also the longest `retry-after` honoured); zero: no limit.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// pi's `retry` defaults: 3 retries, 2 s doubling, at most 60 s.
    fn default() -> Self {
        RetryPolicy { max_retries: 3, base_delay: Duration::from_millis(2000), max_delay: Duration::from_secs(60) }
    }
}

impl RetryPolicy {
    fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        let d = self.base_delay.saturating_mul(factor);
        if self.max_delay.is_zero() {
            d
        } else {
            d.min(self.max_delay)
        }
    }
}

/// A model behind an HTTP API. Made by [`super::open_provider`].
pub struct HttpProvider {
    spec: ModelSpec,
    info: ModelInfo,
    key: Option<Secret>,
    auth: AuthStyle,
    /// Also send the key as `Authorization: Bearer` (models.json `authHeader`).
    bearer_too: bool,
    headers: Vec<(String, Secret)>,
    /// Where the key came from, for a 401's hint (`ANTHROPIC_API_KEY`, `models.json`).
    key_source: Option<String>,
    timeout: Option<Duration>,
    retry: RetryPolicy,
    agent: ureq::Agent,
}

impl fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProvider")
            .field("model", &self.info)
            .field("key", &self.key)
            .field("key_source", &self.key_source)
            .field("headers", &self.headers)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

/// What [`HttpProvider::new`] needs besides the model.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    pub key: Option<Secret>,
    pub key_source: Option<String>,
    /// Send `Authorization: Bearer KEY` in addition to the protocol's own header.
    pub bearer_too: bool,
    /// Extra headers (models.json `headers`).
    pub headers: Vec<(String, Secret)>,
    /// Connecting, and every wait for bytes from the server; `None`: no limit.
    pub timeout: Option<Duration>,
    pub retry: RetryPolicy,
}

impl HttpProvider {
    pub fn new(info: ModelInfo, settings: HttpSettings) -> HttpProvider {
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(settings.timeout)
            .timeout_per_read(settings.timeout)
            .timeout_per_write(settings.timeout)
            .user_agent(concat!("pisces/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&info.base_url) {
            // A local server (Ollama, llama.cpp, a test) is never reached through a proxy.
            config = config.proxy(None);
        }
        let agent: ureq::Agent = config.build().into();
        HttpProvider {
            spec: ModelSpec { provider: info.provider.clone(), id: info.id.clone() },
            auth: match info.api {
                Api::AnthropicMessages => AuthStyle::XApiKey,
                Api::OpenAiCompletions => AuthStyle::Bearer,
            },
            info,
            key: settings.key.filter(|k| !k.0.is_empty()),
            bearer_too: settings.bearer_too,
            headers: settings.headers,
            key_source: settings.key_source,
            timeout: settings.timeout,
            retry: settings.retry,
            agent,
        }
    }

    /// The resolved model (api, endpoint, limits, prices).
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> String {
        match self.info.api {
            Api::AnthropicMessages => format!("{}/v1/messages", self.info.base_url),
            Api::OpenAiCompletions => format!("{}/chat/completions", self.info.base_url),
        }
    }

    /// The request body this provider would send (for `--dry-run`-style output and tests).
    pub fn request_body(&self, request: &Request) -> Value {
        self.build(request).0
    }

    fn build(&self, request: &Request) -> (Value, Vec<(&'static str, String)>) {
        let llm = llm_messages(request);
        match self.info.api {
            Api::AnthropicMessages => {
                let (body, betas) = anthropic::build(&self.info, request, &llm);
                let mut headers = vec![("anthropic-version", "2023-06-01".to_string())];
                if !betas.is_empty() {
                    headers.push(("anthropic-beta", betas.join(",")));
                }
                (body, headers)
            }
            Api::OpenAiCompletions => (openai::build(&self.info, request, &llm), Vec::new()),
        }
    }

    /// Removes the key and configured header values (8 characters or longer: a short one
    /// such as Ollama's dummy key `ollama` would mangle ordinary words) from a server's text.
    fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in self.key.iter().chain(self.headers.iter().map(|(_, v)| v)) {
            if secret.0.len() >= 8 {
                out = out.replace(&secret.0, "[redacted]");
            }
        }
        out
    }

    fn redact_error(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::NoKey(m) => LlmError::NoKey(self.redact(&m)),
            LlmError::Refused { provider, status, message } => {
                LlmError::Refused { provider, status, message: self.redact(&message) }
            }
            LlmError::GaveUp { provider, attempts, message } => {
                LlmError::GaveUp { provider, attempts, message: self.redact(&message) }
            }
            LlmError::Transport { provider, message } => {
                LlmError::Transport { provider, message: self.redact(&message) }
            }
            LlmError::Other(m) => LlmError::Other(self.redact(&m)),
        }
    }

    fn transport(&self, message: String) -> LlmError {
        LlmError::Transport { provider: self.spec.provider.clone(), message }
    }

    fn attempt(
        &self,
        url: &str,
        extra: &[(&'static str, String)],
        body: &[u8],
        events: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Draft, Attempt> {
        let mut req =
            self.agent.post(url).header("content-type", "application/json").header("accept", "text/event-stream");
        for (k, v) in extra {
            req = req.header(*k, v.as_str());
        }
        if let Some(key) = &self.key {
            match self.auth {
                AuthStyle::XApiKey => req = req.header("x-api-key", key.expose()),
                AuthStyle::Bearer => req = req.header("authorization", format!("Bearer {}", key.expose())),
            }
            if self.bearer_too && self.auth != AuthStyle::Bearer {
                req = req.header("authorization", format!("Bearer {}", key.expose()));
            }
        }
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.expose());
        }
        let response = req.send(body).map_err(|e| self.send_error(e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let headers = response.headers();
            let retry_after = retry_after(headers);
            let should_retry =
                headers.get("x-should-retry").and_then(|v| v.to_str().ok()).map(|v| v.trim().to_ascii_lowercase());
            let mut text = String::new();
            let _ = response.into_body().into_reader().take(256 * 1024).read_to_string(&mut text);
            return Err(self.http_error(status, &text, retry_after, should_retry.as_deref()));
        }

        let mut reader = response.into_body().into_reader();
        let mut parser: Box<dyn StreamParser + '_> = match self.info.api {
            Api::AnthropicMessages => Box::new(AnthropicStream::new(&self.info)),
            Api::OpenAiCompletions => Box::new(OpenAiStream::new(&self.info)),
        };
        let mut decoder = SseDecoder::new();
        let mut buf = vec![0u8; 16 * 1024];
        let mut head: Vec<u8> = Vec::new();
        let mut saw_event = false;
        let mut done = false;
        while !done {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Attempt::Stream(self.read_error(&e))),
            };
            if head.len() < 512 {
                head.extend_from_slice(&buf[..n.min(512 - head.len())]);
            }
            for ev in decoder.push(&buf[..n]) {
                saw_event = true;
                if let Flow::Done = parser.on_event(&ev, events)? {
                    done = true;
                    break;
                }
            }
        }
        if !done {
            if let Some(ev) = decoder.finish() {
                saw_event = true;
                parser.on_event(&ev, events)?;
            }
        }
        match parser.finish() {
            Err(Attempt::Stream(_)) if !saw_event => {
                let head = String::from_utf8_lossy(&head);
                let head = head.trim();
                Err(Attempt::Stream(if head.is_empty() {
                    "the server answered with an empty body instead of an event stream".into()
                } else {
                    format!("the server did not answer with an event stream: {}", truncate(head, 300))
                }))
            }
            other => other,
        }
    }

    /// A request that got no reply.
    fn send_error(&self, e: ureq::Error) -> Attempt {
        let base = &self.info.base_url;
        match e {
            ureq::Error::Timeout(_) => {
                let secs = self.timeout.map_or(0.0, |t| t.as_secs_f64());
                Attempt::transient(format!("no answer from {base} within {secs}s (timed out)"), None, true)
            }
            ureq::Error::ConnectionFailed => Attempt::transient(
                format!("cannot connect to {base} (is the server running, and is the URL right?)"),
                None,
                true,
            ),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => Attempt::transient(
                format!("cannot connect to {base}: connection refused (is the server running, and is the URL right?)"),
                None,
                true,
            ),
            ureq::Error::Io(io) => Attempt::transient(format!("connection to {base} failed: {io}"), None, true),
            ureq::Error::HostNotFound => {
                Attempt::Fatal(self.transport(format!("cannot resolve the host of {base} (is the URL right?)")))
            }
            other => Attempt::Fatal(self.transport(format!("request to {base} failed: {other}"))),
        }
    }

    /// A read that failed in the middle of a reply.
    fn read_error(&self, e: &std::io::Error) -> String {
        let timed_out = e.kind() == std::io::ErrorKind::TimedOut
            || e.get_ref()
                .and_then(|i| i.downcast_ref::<ureq::Error>())
                .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
        if timed_out {
            let secs = self.timeout.map_or(0.0, |t| t.as_secs_f64());
            format!("the reply stalled: no data from the server for {secs}s (timed out)")
        } else {
            format!("the reply was cut off: {e}")
        }
    }

    /// A reply with a non-2xx status.
    fn http_error(
        &self,
        status: u16,
        body: &str,
        retry_after: Option<Duration>,
        should_retry: Option<&str>,
    ) -> Attempt {
        let message = server_message(body);
        let lower = body.to_lowercase();
        let quota =
            lower.contains("insufficient_quota") || lower.contains("quota exceeded") || lower.contains("billing");
        let transient = match should_retry {
            Some("true") => true,
            Some("false") => false,
            _ => matches!(status, 408 | 409 | 429) || status >= 500,
        } && !quota;
        if transient {
            return Attempt::transient(format!("HTTP {status}: {message}"), retry_after, false);
        }
        let hint = match status {
            401 | 403 => match &self.key_source {
                Some(source) => format!(" (check the API key from {source})"),
                None => " (no API key was sent; set one with --api-key-env NAME or in models.json)".to_string(),
            },
            404 if self.info.api == Api::OpenAiCompletions => format!(
                " (is the model id {:?} right? An OpenAI-compatible base URL usually ends in /v1; requests go to {})",
                self.info.id,
                self.url()
            ),
            404 => format!(" (is the model id {:?} right?)", self.info.id),
            _ => String::new(),
        };
        Attempt::Fatal(LlmError::Refused { provider: self.spec.provider.clone(), status, message: message + &hint })
    }
}

/// The server's explanation in an error body: `error.message` (Anthropic, OpenAI), a string
/// `error` (Ollama), `message`, or the text itself; the error type follows in parentheses.
pub(crate) fn server_message(body: &str) -> String {
    let text = body.trim();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        let error = v.get("error").unwrap_or(&v);
        let message = match error {
            Value::String(s) => Some(s.clone()),
            _ => error.get("message").and_then(Value::as_str).map(str::to_string),
        };
        if let Some(message) = message {
            let kind = error.get("type").and_then(Value::as_str).filter(|t| !t.is_empty());
            return match kind {
                Some(kind) => format!("{message} ({kind})"),
                None => message,
            };
        }
    }
    if text.is_empty() {
        "(no body)".into()
    } else {
        truncate(text, 1000)
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds); HTTP dates are ignored.
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let get = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok());
    let ms = get("retry-after-ms").or_else(|| get("retry-after").map(|s| s * 1000.0))?;
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_millis(ms as u64))
}

fn is_loopback(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost") || host == "::1" || host.starts_with("127.")
}

impl Provider for HttpProvider {
    fn model(&self) -> &ModelSpec {
        &self.spec
    }

    fn context_window(&self) -> Option<u64> {
        self.info.context_window
    }

    fn complete(&self, request: &Request, events: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError> {
        let started = Instant::now();
        let timestamp = now_ms();
        let (body, extra) = self.build(request);
        let body = serde_json::to_vec(&body).map_err(|e| LlmError::Other(format!("cannot encode the request: {e}")))?;
        let url = self.url();
        let meta = Meta {
            info: &self.info,
            timestamp,
            started,
            thinking_level: request.thinking_level.as_deref().unwrap_or("off"),
        };
        let mut retries = 0u32;
        loop {
            match self.attempt(&url, &extra, &body, events) {
                Ok(mut draft) => {
                    draft.error_message = draft.error_message.map(|m| self.redact(&m));
                    return Ok(assemble(&meta, draft));
                }
                Err(Attempt::Fatal(e)) => return Err(self.redact_error(e)),
                Err(Attempt::Stream(m)) => return Err(self.redact_error(self.transport(m))),
                Err(Attempt::Transient { reason, retry_after, network }) => {
                    let reason = self.redact(&reason);
                    let provider = self.spec.provider.clone();
                    if retries >= self.retry.max_retries {
                        return Err(if retries == 0 && network {
                            LlmError::Transport { provider, message: reason }
                        } else {
                            LlmError::GaveUp { provider, attempts: retries + 1, message: reason }
                        });
                    }
                    let wait = match retry_after {
                        Some(asked) if !self.retry.max_delay.is_zero() && asked > self.retry.max_delay => {
                            return Err(LlmError::GaveUp {
                                provider,
                                attempts: retries + 1,
                                message: format!(
                                    "{reason} (the server asked to wait {}s, more than the {}s limit)",
                                    asked.as_secs_f64().ceil(),
                                    self.retry.max_delay.as_secs_f64().ceil()
                                ),
                            });
                        }
                        Some(asked) => asked,
                        None => self.retry.backoff(retries + 1),
                    };
                    retries += 1;
                    events(&StreamEvent::Retry { attempt: retries, wait_ms: wait.as_millis() as u64, reason });
                    std::thread::sleep(wait);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;

#[cfg(test)]
impl HttpProvider {
    pub(crate) fn key_for_tests(&self) -> Option<&str> {
        self.key.as_ref().map(Secret::expose)
    }

    pub(crate) fn header_names_for_tests(&self) -> Vec<&str> {
        self.headers.iter().map(|(k, _)| k.as_str()).collect()
    }
}
