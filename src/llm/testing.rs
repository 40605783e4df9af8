//! Test doubles for code that talks to models (available to every test, including the CLI
//! tests that run the real binary against `--base-url`):
//!
//! - [`ScriptedServer`]: an HTTP server on `127.0.0.1` that answers each request with the
//!   next scripted [`Reply`] (an event stream, an error status, a stream cut off in the
//!   middle, a stall) and records what it received (method, path, headers, body).
//! - Event streams in both protocols' real shapes: [`anthropic_sse`] / [`openai_sse`] from
//!   events, and ready replies ([`anthropic_text`], [`anthropic_tool_call`],
//!   [`openai_text`], [`openai_tool_call`]), error bodies ([`anthropic_error`],
//!   [`openai_error`]).
//! - [`ScriptedProvider`]: a [`Provider`] without HTTP that returns queued messages and
//!   records the requests, for unit tests of callers.
//!
//! ```
//! use pisces::llm::testing::{anthropic_text, Reply, ScriptedServer};
//! use pisces::llm::{open_provider, ModelSpec, ProviderOptions, Request};
//! let server = ScriptedServer::start(vec![
//!     Reply::status(529, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
//!     Reply::Sse(anthropic_text("claude-sonnet-4-5", "Hello.")),
//! ]);
//! let mut opts = ProviderOptions::new(ModelSpec::parse("anthropic/claude-sonnet-4-5").unwrap());
//! opts.base_url = Some(server.url());
//! opts.retry_base_delay = std::time::Duration::from_millis(1);
//! let env = pisces::env::Env::default();
//! let reply = open_provider(&opts, &env).unwrap().complete(&Request::default(), &mut |_| {}).unwrap();
//! assert_eq!(reply["content"][0]["text"], "Hello.");
//! assert_eq!(server.requests().len(), 2);
//! ```

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use super::provider::{LlmError, ModelSpec, Provider, Request, StreamEvent};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `200 text/event-stream`: the body, written one event at a time (chunked), then the end.
    Sse(String),
    /// Any status with a body and extra headers (`retry-after`, …).
    Status { status: u16, body: String, headers: Vec<(String, String)> },
    /// `200 text/event-stream`: these bytes, then the connection is closed in the middle of
    /// the body (no final chunk), as a dropped connection looks.
    Cut(String),
    /// Reads the request and never answers (until the client gives up or the server stops).
    Stall,
    /// `200 text/event-stream`: these bytes, then silence with the connection open.
    StallAfter(String),
}

impl Reply {
    /// A status with a JSON (or text) body.
    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply::Status { status, body: body.into(), headers: Vec::new() }
    }

    /// Adds a header to a [`Reply::Status`] (other replies are unchanged).
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Status { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RecordedRequest {
    /// A header's value (the name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// A scripted HTTP/1.1 server on `127.0.0.1` (one connection at a time; every reply closes
/// its connection). Stops when dropped.
pub struct ScriptedServer {
    url: String,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ScriptedServer {
    /// Starts a server that answers request N with `replies[N]`, and with a 500 once they
    /// are used up.
    pub fn start(replies: Vec<Reply>) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        listener.set_nonblocking(true).expect("non-blocking listener");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (recorded, stopping) = (Arc::clone(&requests), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut replies: VecDeque<Reply> = replies.into();
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        serve(stream, &mut replies, &recorded, &stopping);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(2)),
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        ScriptedServer { url, requests, stop, thread: Some(thread) }
    }

    /// `http://127.0.0.1:PORT` (an Anthropic base URL; OpenAI-compatible clients append `/v1`).
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    mut stream: TcpStream,
    replies: &mut VecDeque<Reply>,
    recorded: &Mutex<Vec<RecordedRequest>>,
    stop: &AtomicBool,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    if let Ok(mut r) = recorded.lock() {
        r.push(request);
    }
    let reply = replies.pop_front().unwrap_or_else(|| {
        Reply::status(500, r#"{"error":{"message":"scripted server: no reply left","type":"test_error"}}"#)
    });
    let sse_head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                    transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    match reply {
        Reply::Sse(body) => {
            let _ = stream.write_all(sse_head.as_bytes());
            for piece in events_of(&body) {
                if write_chunk(&mut stream, piece.as_bytes()).is_err() {
                    return;
                }
            }
            let _ = stream.write_all(b"0\r\n\r\n");
            let _ = stream.flush();
        }
        Reply::Status { status, body, headers } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                if body.trim_start().starts_with(['{', '[']) { "application/json" } else { "text/plain" },
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
            let _ = stream.flush();
        }
        Reply::Cut(partial) => {
            let _ = stream.write_all(sse_head.as_bytes());
            for piece in events_of(&partial) {
                let _ = write_chunk(&mut stream, piece.as_bytes());
            }
            let _ = stream.flush();
            std::thread::sleep(Duration::from_millis(20));
            let _ = stream.shutdown(Shutdown::Both);
        }
        Reply::Stall => hold(&mut stream, stop),
        Reply::StallAfter(partial) => {
            let _ = stream.write_all(sse_head.as_bytes());
            for piece in events_of(&partial) {
                let _ = write_chunk(&mut stream, piece.as_bytes());
            }
            let _ = stream.flush();
            hold(&mut stream, stop);
        }
    }
}

/// Keeps the connection open, saying nothing, until the client closes it or the server stops.
fn hold(stream: &mut TcpStream, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let mut buf = [0u8; 512];
    while !stop.load(Ordering::SeqCst) {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

fn write_chunk(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    stream.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    stream.write_all(data)?;
    stream.write_all(b"\r\n")?;
    stream.flush()
}

/// The body split after each blank line, so each event is its own write.
fn events_of(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("\n\n") {
        out.push(&rest[..i + 2]);
        rest = &rest[i + 2..];
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let get = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
    let mut body = data[head_end + 4..].to_vec();
    if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        // Read until the terminating chunk, then decode.
        while !body.windows(5).any(|w| w == b"0\r\n\r\n") {
            let n = stream.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&buf[..n]);
        }
        body = dechunk(&body);
    } else {
        let len: usize = get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        while body.len() < len {
            let n = stream.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&buf[..n]);
        }
    }
    Some(RecordedRequest { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..i]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = i + 2;
        out.extend_from_slice(&data[start..(start + size).min(data.len())]);
        data = &data[(start + size + 2).min(data.len())..];
    }
    out
}

// ---------------------------------------------------------------------------------------
// Event streams

/// An Anthropic event stream: `event: <type>` + `data: <json>` for each event.
pub fn anthropic_sse(events: &[Value]) -> String {
    events.iter().map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap_or("message"), e)).collect()
}

/// A Chat Completions stream: `data: <json>` for each chunk, then `data: [DONE]`.
pub fn openai_sse(chunks: &[Value]) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

/// Splits text into up to three deltas, as streams do.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len().div_ceil(3).max(1);
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// Anthropic's `message_start` with the usage shape the API sends.
pub fn anthropic_message_start(model: &str, input_tokens: u64, cache_read: u64, cache_write: u64) -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_write,
                  "cache_read_input_tokens": cache_read,
                  "cache_creation": {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0},
                  "output_tokens": 1, "service_tier": "standard"}}})
}

/// Anthropic text block events at `index`.
pub fn anthropic_text_block(index: u64, text: &str) -> Vec<Value> {
    let mut v =
        vec![json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})];
    for p in pieces(text) {
        v.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}));
    }
    v.push(json!({"type": "content_block_stop", "index": index}));
    v
}

/// Anthropic `message_delta` + `message_stop`.
pub fn anthropic_end(stop_reason: &str, output_tokens: u64) -> Vec<Value> {
    vec![
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": output_tokens}}),
        json!({"type": "message_stop"}),
    ]
}

/// A complete Anthropic reply with one text block.
pub fn anthropic_text(model: &str, text: &str) -> String {
    let mut events = vec![anthropic_message_start(model, 25, 0, 0), json!({"type": "ping"})];
    events.extend(anthropic_text_block(0, text));
    events.extend(anthropic_end("end_turn", 15));
    anthropic_sse(&events)
}

/// A complete Anthropic reply that calls one tool (arguments streamed in pieces).
pub fn anthropic_tool_call(model: &str, id: &str, name: &str, arguments: &Value) -> String {
    let mut events = vec![anthropic_message_start(model, 472, 0, 0)];
    events.push(json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
    events.push(
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}}),
    );
    for p in pieces(&arguments.to_string()) {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.extend(anthropic_end("tool_use", 89));
    anthropic_sse(&events)
}

/// An Anthropic error body (also the data of an `error` event).
pub fn anthropic_error(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

/// A Chat Completions chunk with one choice.
pub fn openai_chunk(model: &str, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion.chunk", "created": 1741570283,
           "model": model, "system_fingerprint": "fp_06737a9306",
           "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]})
}

/// The usage chunk `stream_options.include_usage` asks for (no choices).
pub fn openai_usage_chunk(model: &str, prompt: u64, completion: u64, cached: u64) -> Value {
    json!({"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion.chunk", "created": 1741570283,
           "model": model, "choices": [],
           "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                     "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                     "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                   "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}})
}

/// A complete Chat Completions reply with text.
pub fn openai_text(model: &str, text: &str) -> String {
    let mut chunks = vec![openai_chunk(model, json!({"role": "assistant", "content": "", "refusal": null}), None)];
    for p in pieces(text) {
        chunks.push(openai_chunk(model, json!({"content": p}), None));
    }
    chunks.push(openai_chunk(model, json!({}), Some("stop")));
    chunks.push(openai_usage_chunk(model, 19, 10, 0));
    openai_sse(&chunks)
}

/// A complete Chat Completions reply that calls one tool (arguments streamed in pieces).
pub fn openai_tool_call(model: &str, id: &str, name: &str, arguments: &Value) -> String {
    let args = arguments.to_string();
    let parts = pieces(&args);
    let mut chunks = vec![openai_chunk(
        model,
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function",
               "function": {"name": name, "arguments": ""}}]}),
        None,
    )];
    for p in parts {
        chunks.push(openai_chunk(model, json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}), None));
    }
    chunks.push(openai_chunk(model, json!({}), Some("tool_calls")));
    chunks.push(openai_usage_chunk(model, 82, 17, 0));
    openai_sse(&chunks)
}

/// An OpenAI error body.
pub fn openai_error(message: &str, kind: &str, code: Option<&str>) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}}).to_string()
}

// ---------------------------------------------------------------------------------------
// A provider without HTTP

/// A [`Provider`] that answers with queued replies, reporting their content as stream
/// events, and records every request.
pub struct ScriptedProvider {
    model: ModelSpec,
    context_window: Option<u64>,
    replies: Mutex<VecDeque<Result<Value, LlmError>>>,
    requests: Mutex<Vec<Request>>,
}

impl ScriptedProvider {
    pub fn new(model: ModelSpec, replies: Vec<Result<Value, LlmError>>) -> ScriptedProvider {
        ScriptedProvider {
            model,
            context_window: Some(128_000),
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        }
    }

    pub fn with_context_window(mut self, window: Option<u64>) -> ScriptedProvider {
        self.context_window = window;
        self
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Replies not used yet.
    pub fn remaining(&self) -> usize {
        self.replies.lock().map(|r| r.len()).unwrap_or(0)
    }
}

impl Provider for ScriptedProvider {
    fn model(&self) -> &ModelSpec {
        &self.model
    }

    fn context_window(&self) -> Option<u64> {
        self.context_window
    }

    fn complete(&self, request: &Request, events: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request.clone());
        }
        let next = self.replies.lock().ok().and_then(|mut r| r.pop_front());
        let reply = next.unwrap_or_else(|| Err(LlmError::Other("scripted provider: no reply left".into())))?;
        for block in reply.get("content").and_then(Value::as_array).into_iter().flatten() {
            let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    events(&StreamEvent::TextStart);
                    events(&StreamEvent::TextDelta(s("text")));
                }
                Some("thinking") => {
                    events(&StreamEvent::ThinkingStart);
                    events(&StreamEvent::ThinkingDelta(s("thinking")));
                }
                Some("toolCall") => {
                    events(&StreamEvent::ToolCallStart { id: s("id"), name: s("name") });
                    let args = block.get("arguments").map(Value::to_string).unwrap_or_default();
                    events(&StreamEvent::ToolCallDelta(args));
                }
                _ => {}
            }
        }
        Ok(reply)
    }
}

/// A pi assistant message (`openai-completions`, zero cost) with these content blocks.
pub fn assistant_message(model: &ModelSpec, content: Vec<Value>, stop_reason: &str) -> Value {
    json!({
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": model.provider,
        "model": model.id,
        "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0, "totalTokens": 120,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0, "totalFromProvider": false}},
        "stopReason": stop_reason,
        "timestamp": super::message::now_ms(),
        "responseId": "chatcmpl-scripted",
        "rawStopReason": if stop_reason == "toolUse" { "tool_calls" } else { "stop" },
        "durationMs": 1,
        "thinkingLevel": "off",
    })
}

/// A pi assistant message that answers with text.
pub fn assistant_text(model: &ModelSpec, text: &str) -> Value {
    assistant_message(model, vec![json!({"type": "text", "text": text})], "stop")
}

/// A pi assistant message that calls tools: `(id, name, arguments)`.
pub fn assistant_tool_calls(model: &ModelSpec, calls: &[(&str, &str, Value)]) -> Value {
    let content = calls
        .iter()
        .map(|(id, name, args)| json!({"type": "toolCall", "id": id, "name": name, "arguments": args}))
        .collect();
    assistant_message(model, content, "toolUse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_provider_replays_and_records() {
        let model = ModelSpec::parse("fake/model").unwrap();
        let p = ScriptedProvider::new(
            model.clone(),
            vec![
                Ok(assistant_tool_calls(&model, &[("call_1", "ls", json!({"path": "."}))])),
                Ok(assistant_text(&model, "done")),
            ],
        );
        let mut seen = Vec::new();
        let r = Request { system: Some("s".into()), ..Request::default() };
        let a = p.complete(&r, &mut |e| seen.push(e.clone())).unwrap();
        assert_eq!(a["stopReason"], "toolUse");
        assert_eq!(
            seen,
            vec![
                StreamEvent::ToolCallStart { id: "call_1".into(), name: "ls".into() },
                StreamEvent::ToolCallDelta(r#"{"path":"."}"#.into())
            ]
        );
        assert_eq!(p.complete(&r, &mut |_| {}).unwrap()["content"][0]["text"], "done");
        assert!(p.complete(&r, &mut |_| {}).is_err());
        assert_eq!(p.requests().len(), 3);
        assert_eq!(p.remaining(), 0);
    }

    #[test]
    fn dechunks() {
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), b"abcde");
    }
}
