//! The HTTP providers against a scripted local server replaying both protocols' event
//! streams: replies mapped into pi's message shape, what was sent, retries, refusals, cut
//! and stalled streams, and the full request bodies against pi's own (testdata/payloads).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::llm::config::PiConfig;
use crate::llm::open::{open_http_provider, ProviderOptions};
use crate::llm::testing::*;

const ANT_KEY: &str = "sk-ant-api03-SECRETSECRET";
const OAI_KEY: &str = "sk-proj-SECRETSECRET";

fn env(name: &str) -> Option<String> {
    match name {
        "ANTHROPIC_API_KEY" => Some(ANT_KEY.into()),
        "OPENAI_API_KEY" => Some(OAI_KEY.into()),
        "CEREBRAS_API_KEY" => Some("csk-test".into()),
        _ => None,
    }
}

fn spec(s: &str) -> ModelSpec {
    ModelSpec::parse(s).unwrap()
}

fn provider_with(server: &ScriptedServer, model: &str, tweak: impl FnOnce(&mut ProviderOptions)) -> HttpProvider {
    let mut o = ProviderOptions::new(spec(model));
    o.base_url = Some(if model.starts_with("anthropic/") { server.url() } else { format!("{}/v1", server.url()) });
    o.retry_base_delay = Duration::from_millis(1);
    o.timeout = Some(Duration::from_secs(10));
    tweak(&mut o);
    open_http_provider(&o, &env).unwrap()
}

fn provider(server: &ScriptedServer, model: &str) -> HttpProvider {
    provider_with(server, model, |_| {})
}

fn read_tool() -> Value {
    json!({"name": "read", "description": "Read a file",
           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}})
}

fn request() -> Request {
    Request {
        system: Some("You are terse.".into()),
        messages: vec![
            json!({"role": "user", "content": [{"type": "text", "text": "What is in a.txt?"}], "timestamp": 1}),
        ],
        tools: vec![read_tool()],
        max_tokens: None,
        thinking_level: None,
    }
}

fn run(p: &HttpProvider, r: &Request) -> (Result<Value, LlmError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let result = p.complete(r, &mut |e| events.push(e.clone()));
    (result, events)
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn text_deltas(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn retries(events: &[StreamEvent]) -> Vec<(u32, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry { attempt, wait_ms, .. } => Some((*attempt, *wait_ms)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Anthropic

#[test]
fn anthropic_text_reply_and_request() {
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_text("claude-sonnet-4-5", "It says hello."))]);
    let p = provider(&server, "anthropic/claude-sonnet-4-5");
    let (result, events) = run(&p, &request());
    let m = result.unwrap();
    assert_eq!(
        keys(&m),
        [
            "role",
            "content",
            "api",
            "provider",
            "model",
            "usage",
            "stopReason",
            "timestamp",
            "responseId",
            "rawStopReason",
            "durationMs",
            "thinkingLevel"
        ]
    );
    assert_eq!(m["content"], json!([{"type": "text", "text": "It says hello."}]));
    assert_eq!(
        (m["api"].as_str(), m["provider"].as_str(), m["model"].as_str()),
        (Some("anthropic-messages"), Some("anthropic"), Some("claude-sonnet-4-5"))
    );
    assert_eq!(m["stopReason"], "stop");
    assert_eq!(m["rawStopReason"], "end_turn");
    assert_eq!(m["responseId"], "msg_01XFDUDYJgAACzvnptvVoYEL");
    assert_eq!(m["thinkingLevel"], "off");
    assert!(m["timestamp"].as_u64().unwrap() > 1_700_000_000_000);
    assert_eq!(
        m["usage"],
        json!({"input": 25, "output": 15, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 40,
               "cost": {"input": (3.0 / 1e6) * 25.0, "output": (15.0 / 1e6) * 15.0, "cacheRead": 0, "cacheWrite": 0,
                        "total": (3.0 / 1e6) * 25.0 + (15.0 / 1e6) * 15.0, "totalFromProvider": false},
               "cacheWrite1h": 0})
    );
    assert_eq!(
        keys(&m["usage"]),
        ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "cacheWrite1h"]
    );
    assert_eq!(text_deltas(&events), "It says hello.");
    assert!(events.len() >= 2, "deltas are reported as they arrive: {events:?}");

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(r.header("x-api-key"), Some(ANT_KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.header("anthropic-beta"), None);
    let body = r.json();
    assert_eq!(keys(&body), ["model", "messages", "max_tokens", "stream", "system", "tools", "thinking"]);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 64000);
    assert_eq!(body["stream"], true);
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "What is in a.txt?", "cache_control": {"type": "ephemeral"}}]}])
    );
    assert_eq!(body["tools"][0]["name"], "read");
    assert_eq!(body["tools"][0]["input_schema"]["required"], json!(["path"]));
}

#[test]
fn anthropic_thinking_signature_and_tool_call() {
    let model = "claude-sonnet-4-5";
    let mut ev = vec![anthropic_message_start(model, 12, 1406, 115)];
    ev.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
    ev.push(
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Look at "}}),
    );
    ev.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "the file."}}));
    ev.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}));
    ev.push(json!({"type": "content_block_stop", "index": 0}));
    ev.extend(anthropic_text_block(1, "Reading it."));
    ev.push(json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "read", "input": {}}}));
    for part in ["", "{\"pa", "th\": \"a.", "txt\"}"] {
        ev.push(json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": part}}));
    }
    ev.push(json!({"type": "content_block_stop", "index": 2}));
    ev.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                   "usage": {"output_tokens": 83, "output_tokens_details": {"thinking_tokens": 20}}}));
    ev.push(json!({"type": "message_stop"}));
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_sse(&ev))]);
    let p = provider(&server, "anthropic/claude-sonnet-4-5");
    let r = Request { thinking_level: Some("medium".into()), ..request() };
    let (result, events) = run(&p, &r);
    let m = result.unwrap();
    assert_eq!(
        m["content"],
        json!([
            {"type": "thinking", "thinking": "Look at the file.", "thinkingSignature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
            {"type": "text", "text": "Reading it."},
            {"type": "toolCall", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "read", "arguments": {"path": "a.txt"}}
        ])
    );
    assert_eq!(m["stopReason"], "toolUse");
    assert_eq!(m["thinkingLevel"], "medium");
    // pi's numbers for these counts (testdata/pi-1.6.0/06-model-thinking.jsonl has 6/83/1406/115).
    assert_eq!(m["usage"]["totalTokens"], 12 + 83 + 1406 + 115);
    assert_eq!(m["usage"]["cost"]["cacheRead"], json!(0.0004218));
    assert_eq!(m["usage"]["cost"]["cacheWrite"], json!(0.00043125));
    assert_eq!(m["usage"]["reasoning"], 20);
    assert_eq!(keys(&m["usage"]).last(), Some(&"reasoning"));
    assert!(events.contains(&StreamEvent::ThinkingDelta("Look at ".into())));
    assert!(events
        .contains(&StreamEvent::ToolCallStart { id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(), name: "read".into() }));

    let sent = &server.requests()[0];
    assert_eq!(sent.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    let body = sent.json();
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"}));
    assert_eq!(body["max_tokens"], 64000);
}

#[test]
fn anthropic_redacted_thinking_and_other_model() {
    let mut ev = vec![anthropic_message_start("claude-opus-4-5-20251101", 5, 0, 0)];
    ev.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}}));
    ev.push(json!({"type": "content_block_stop", "index": 0}));
    ev.extend(anthropic_text_block(1, "ok"));
    ev.extend(anthropic_end("max_tokens", 3));
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_sse(&ev))]);
    let m = run(&provider(&server, "anthropic/claude-opus-4-5"), &request()).0.unwrap();
    assert_eq!(
        m["content"][0],
        json!({"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "EmwKAhgB", "redacted": true})
    );
    assert_eq!(m["stopReason"], "length");
    assert_eq!(m["responseModel"], "claude-opus-4-5-20251101");
}

#[test]
fn anthropic_refusal_and_in_stream_errors_are_messages() {
    let mut refusal = vec![anthropic_message_start("claude-sonnet-4-5", 5, 0, 0)];
    refusal.push(json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_sequence": null}, "usage": {"output_tokens": 1}}));
    refusal.push(json!({"type": "message_stop"}));
    let mut invalid = vec![anthropic_message_start("claude-sonnet-4-5", 5, 0, 0)];
    invalid.extend(anthropic_text_block(0, "partial"));
    let mut invalid = anthropic_sse(&invalid);
    invalid.push_str(&format!("event: error\ndata: {}\n\n", anthropic_error("invalid_request_error", "bad thing")));
    let server = ScriptedServer::start(vec![Reply::Sse(anthropic_sse(&refusal)), Reply::Sse(invalid)]);
    let p = provider(&server, "anthropic/claude-sonnet-4-5");
    let m = run(&p, &request()).0.unwrap();
    assert_eq!(
        (m["stopReason"].as_str(), m["errorMessage"].as_str()),
        (Some("error"), Some("The model refused to complete the request"))
    );
    assert_eq!(keys(&m)[8], "errorMessage");
    let m = run(&p, &request()).0.unwrap();
    assert_eq!(m["stopReason"], "error");
    assert_eq!(m["content"], json!([{"type": "text", "text": "partial"}]));
    assert!(m["errorMessage"].as_str().unwrap().contains("bad thing"));
}

#[test]
fn anthropic_overloaded_in_stream_is_retried() {
    let overloaded = format!(
        "{}event: error\ndata: {}\n\n",
        anthropic_sse(&[anthropic_message_start("claude-sonnet-4-5", 5, 0, 0)]),
        anthropic_error("overloaded_error", "Overloaded")
    );
    let server = ScriptedServer::start(vec![
        Reply::Sse(overloaded),
        Reply::status(529, anthropic_error("overloaded_error", "Overloaded")),
        Reply::Sse(anthropic_text("claude-sonnet-4-5", "fine")),
    ]);
    let (result, events) = run(&provider(&server, "anthropic/claude-sonnet-4-5"), &request());
    assert_eq!(result.unwrap()["content"][0]["text"], "fine");
    assert_eq!(retries(&events), vec![(1, 1), (2, 2)]);
    let reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry { reason, .. } => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, ["overloaded_error: Overloaded", "HTTP 529: Overloaded (overloaded_error)"]);
    assert_eq!(server.requests().len(), 3);
}

// ---------------------------------------------------------------------------------------
// OpenAI-compatible

#[test]
fn openai_text_reply_and_request() {
    let server = ScriptedServer::start(vec![Reply::Sse(openai_text("gpt-4.1-2025-04-14", "Hello there."))]);
    let p = provider(&server, "openai/gpt-4.1");
    let (result, events) = run(&p, &request());
    let m = result.unwrap();
    assert_eq!(m["api"], "openai-completions");
    assert_eq!(m["content"], json!([{"type": "text", "text": "Hello there."}]));
    assert_eq!(m["stopReason"], "stop");
    assert_eq!(m["rawStopReason"], "stop");
    assert_eq!(m["responseId"], "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG");
    assert_eq!(m["responseModel"], "gpt-4.1-2025-04-14");
    assert_eq!(keys(&m["usage"]), ["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]);
    assert_eq!(m["usage"]["input"], 19);
    assert_eq!(m["usage"]["cost"]["input"], json!((2.0 / 1_000_000.0) * 19.0));
    assert_eq!(text_deltas(&events), "Hello there.");

    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {OAI_KEY}").as_str()));
    assert_eq!(r.header("x-api-key"), None);
    let body = r.json();
    assert_eq!(
        keys(&body),
        ["model", "messages", "stream", "stream_options", "store", "max_completion_tokens", "tools"]
    );
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["store"], false);
    assert_eq!(body["max_completion_tokens"], 32768);
    // `developer` only for OpenAI's reasoning models, as pi-ai does.
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "You are terse."}));
    assert_eq!(body["tools"][0]["function"]["name"], "read");
    assert_eq!(
        p.request_body(&Request { thinking_level: Some("low".into()), ..request() })["messages"][0]["role"],
        "system"
    );
    let reasoning = provider(&server, "openai/gpt-5.1");
    assert_eq!(reasoning.request_body(&request())["messages"][0]["role"], "developer");
}

#[test]
fn openai_tool_calls_assembled_from_deltas_with_reasoning() {
    let m = "qwen3:8b";
    let chunks = vec![
        openai_chunk(m, json!({"role": "assistant", "content": ""}), None),
        openai_chunk(m, json!({"reasoning_content": "Two files, "}), None),
        openai_chunk(m, json!({"reasoning_content": "read both."}), None),
        openai_chunk(
            m,
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
            None,
        ),
        openai_chunk(
            m,
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{\"path\""}}]}),
            None,
        ),
        openai_chunk(m, json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"a"}}]}), None),
        openai_chunk(m, json!({"tool_calls": [{"index": 0, "function": {"arguments": ".txt\"}"}}]}), None),
        openai_chunk(m, json!({"tool_calls": [{"index": 1, "function": {"arguments": ": \"b.txt\"}"}}]}), None),
        openai_chunk(m, json!({}), Some("tool_calls")),
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": m, "choices": [],
               "usage": {"prompt_tokens": 100, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 60},
                         "completion_tokens_details": {"reasoning_tokens": 12}}}),
    ];
    let server = ScriptedServer::start(vec![Reply::Sse(openai_sse(&chunks))]);
    let p = provider(&server, "ollama/qwen3:8b");
    let (result, events) = run(&p, &request());
    let msg = result.unwrap();
    assert_eq!(
        msg["content"],
        json!([
            {"type": "thinking", "thinking": "Two files, read both.", "thinkingSignature": "reasoning_content"},
            {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.txt"}},
            {"type": "toolCall", "id": "call_b", "name": "read", "arguments": {"path": "b.txt"}}
        ])
    );
    assert_eq!(msg["stopReason"], "toolUse");
    assert_eq!(msg["provider"], "ollama");
    assert!(msg.get("responseModel").is_none());
    assert_eq!(
        msg["usage"],
        json!({"input": 40, "output": 30, "cacheRead": 60, "cacheWrite": 0, "reasoning": 12, "totalTokens": 130,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0, "totalFromProvider": false}})
    );
    let starts: Vec<&StreamEvent> = events.iter().filter(|e| matches!(e, StreamEvent::ToolCallStart { .. })).collect();
    assert_eq!(starts.len(), 2);
    // A local model without a key, configuration or known limits: no auth, no output limit.
    let r = &server.requests()[0];
    assert_eq!(r.header("authorization"), None);
    let body = r.json();
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "You are terse."}));
}

#[test]
fn openai_content_filter_and_stream_errors() {
    let m = "gpt-4.1";
    let filtered = openai_sse(&[
        openai_chunk(m, json!({"content": "Sor"}), None),
        openai_chunk(m, json!({}), Some("content_filter")),
    ]);
    let error =
        "data: {\"error\":{\"message\":\"Invalid schema for function\",\"type\":\"invalid_request_error\"}}\n\n";
    let server = ScriptedServer::start(vec![Reply::Sse(filtered), Reply::Sse(error.into())]);
    let p = provider(&server, "openai/gpt-4.1");
    let msg = run(&p, &request()).0.unwrap();
    assert_eq!(msg["stopReason"], "error");
    assert_eq!(msg["errorMessage"], "Provider finish_reason: content_filter");
    assert_eq!(msg["rawStopReason"], "content_filter");
    let msg = run(&p, &request()).0.unwrap();
    assert_eq!(
        (msg["stopReason"].as_str(), msg["errorMessage"].as_str()),
        (Some("error"), Some("Invalid schema for function"))
    );
}

// ---------------------------------------------------------------------------------------
// Retries and refusals

#[test]
fn rate_limited_then_success_honours_retry_after() {
    let server = ScriptedServer::start(vec![
        Reply::status(429, openai_error("Rate limit reached for gpt-4.1", "requests", Some("rate_limit_exceeded")))
            .with_header("retry-after-ms", "30"),
        Reply::Sse(openai_text("gpt-4.1", "ok")),
    ]);
    let (result, events) = run(&provider(&server, "openai/gpt-4.1"), &request());
    assert_eq!(result.unwrap()["content"][0]["text"], "ok");
    assert_eq!(retries(&events), vec![(1, 30)]);
    match &events[0] {
        StreamEvent::Retry { reason, .. } => {
            assert_eq!(reason, "HTTP 429: Rate limit reached for gpt-4.1 (requests)")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_give_up_after_the_retries() {
    let server = ScriptedServer::start(vec![
        Reply::status(500, "upstream exploded"),
        Reply::status(502, "<html>bad gateway</html>"),
        Reply::status(503, openai_error("The server is overloaded", "server_error", None)),
    ]);
    let p = provider_with(&server, "openai/gpt-4.1", |o| {
        o.max_retries = 2;
        o.retry_base_delay = Duration::from_millis(5);
    });
    let (result, events) = run(&p, &request());
    match result.unwrap_err() {
        LlmError::GaveUp { provider, attempts, message } => {
            assert_eq!((provider.as_str(), attempts), ("openai", 3));
            assert_eq!(message, "HTTP 503: The server is overloaded (server_error)");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(retries(&events), vec![(1, 5), (2, 10)]);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_bad_key_is_refused_with_the_servers_message_and_never_shown() {
    let body = anthropic_error("authentication_error", &format!("invalid x-api-key: {ANT_KEY}"));
    let server = ScriptedServer::start(vec![Reply::status(401, body)]);
    let err = run(&provider(&server, "anthropic/claude-sonnet-4-5"), &request()).0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LlmError::Refused { status: 401, .. }), "{err:?}");
    assert!(text.contains("invalid x-api-key: [redacted] (authentication_error)"), "{text}");
    assert!(text.contains("check the API key from ANTHROPIC_API_KEY"), "{text}");
    assert!(!text.contains(ANT_KEY) && !format!("{err:?}").contains(ANT_KEY));
    assert_eq!(server.requests().len(), 1, "4xx is not retried");
}

#[test]
fn quota_and_other_4xx_are_not_retried() {
    let server = ScriptedServer::start(vec![
        Reply::status(
            429,
            openai_error("You exceeded your current quota", "insufficient_quota", Some("insufficient_quota")),
        ),
        Reply::status(404, r#"{"error":"model \"qwen9\" not found, try pulling it first"}"#),
        Reply::status(429, "slow down").with_header("retry-after", "3600"),
    ]);
    let p = provider(&server, "openai/gpt-4.1");
    let err = run(&p, &request()).0.unwrap_err();
    assert!(matches!(err, LlmError::Refused { status: 429, .. }), "{err:?}");
    let ollama = provider(&server, "ollama/qwen9");
    let err = run(&ollama, &request()).0.unwrap_err().to_string();
    assert!(err.contains("model \"qwen9\" not found, try pulling it first"), "{err}");
    assert!(err.contains("/v1/chat/completions"), "{err}");
    let (result, events) = run(&p, &request());
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::GaveUp { attempts: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("asked to wait 3600s"), "{err}");
    assert!(retries(&events).is_empty());
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn x_should_retry_overrides_the_status() {
    let server = ScriptedServer::start(vec![
        Reply::status(500, "no").with_header("x-should-retry", "false"),
        Reply::status(400, "yes").with_header("x-should-retry", "true"),
        Reply::Sse(openai_text("gpt-4.1", "ok")),
    ]);
    let p = provider(&server, "openai/gpt-4.1");
    assert!(matches!(run(&p, &request()).0.unwrap_err(), LlmError::Refused { status: 500, .. }));
    assert_eq!(run(&p, &request()).0.unwrap()["content"][0]["text"], "ok");
}

// ---------------------------------------------------------------------------------------
// Cut, stalled and broken streams

#[test]
fn a_cut_anthropic_stream_is_a_transport_error() {
    let mut ev = vec![anthropic_message_start("claude-sonnet-4-5", 5, 0, 0)];
    ev.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
    ev.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half a"}}));
    let mut partial = anthropic_sse(&ev);
    partial.push_str("event: content_block_delta\ndata: {\"type\":\"content_bl");
    let server = ScriptedServer::start(vec![Reply::Cut(partial), Reply::Sse(anthropic_sse(&ev))]);
    let p = provider(&server, "anthropic/claude-sonnet-4-5");
    let (result, events) = run(&p, &request());
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("cut off"), "{err}");
    assert_eq!(text_deltas(&events), "Half a");
    // A stream that ends cleanly without message_stop is cut off too.
    let err = run(&p, &request()).0.unwrap_err();
    assert!(err.to_string().contains("ended before message_stop"), "{err}");
    assert_eq!(server.requests().len(), 2, "cut streams are not retried");
}

#[test]
fn a_cut_openai_stream_is_a_transport_error() {
    let partial = format!("data: {}\n\n", openai_chunk("gpt-4.1", json!({"content": "Hal"}), None));
    let server = ScriptedServer::start(vec![Reply::Cut(partial.clone()), Reply::Sse(partial)]);
    let p = provider(&server, "openai/gpt-4.1");
    let err = run(&p, &request()).0.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    let err = run(&p, &request()).0.unwrap_err();
    assert!(err.to_string().contains("without finish_reason"), "{err}");
}

#[test]
fn timeouts() {
    let server = ScriptedServer::start(vec![Reply::Stall, Reply::Stall, Reply::Stall]);
    let quick = |retries: u32| {
        provider_with(&server, "openai/gpt-4.1", |o| {
            o.timeout = Some(Duration::from_millis(150));
            o.max_retries = retries;
        })
    };
    let err = run(&quick(0), &request()).0.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("timed out"), "{err}");
    let (result, events) = run(&quick(1), &request());
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::GaveUp { attempts: 2, .. }), "{err:?}");
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_stalled_stream_times_out() {
    let partial = anthropic_sse(&[anthropic_message_start("claude-sonnet-4-5", 5, 0, 0)]);
    let server = ScriptedServer::start(vec![Reply::StallAfter(partial)]);
    let p = provider_with(&server, "anthropic/claude-sonnet-4-5", |o| o.timeout = Some(Duration::from_millis(150)));
    let err = run(&p, &request()).0.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("stalled"), "{err}");
}

#[test]
fn nothing_listening() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut o = ProviderOptions::new(spec("ollama/qwen3:8b"));
    o.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    o.max_retries = 0;
    let err = run(&open_http_provider(&o, &env).unwrap(), &request()).0.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("127.0.0.1"), "{err}");
    assert!(err.to_string().contains("is the server running"), "{err}");
}

#[test]
fn a_reply_that_is_not_an_event_stream() {
    let server = ScriptedServer::start(vec![Reply::status(200, r#"{"id":"x","choices":[]}"#)]);
    let err = run(&provider(&server, "openai/gpt-4.1"), &request()).0.unwrap_err();
    assert!(err.to_string().contains("did not answer with an event stream: {\"id\""), "{err}");
}

// ---------------------------------------------------------------------------------------
// Request settings

#[test]
fn thinking_settings_per_model() {
    let server = ScriptedServer::start(vec![]);
    let body = |model: &str, level: Option<&str>| {
        let p = provider(&server, model);
        let r = Request { thinking_level: level.map(str::to_string), ..request() };
        p.request_body(&r)
    };
    let b = body("anthropic/claude-opus-4-7", Some("xhigh"));
    assert_eq!(b["thinking"], json!({"type": "adaptive", "display": "summarized"}));
    assert_eq!(b["output_config"], json!({"effort": "xhigh"}));
    let b = body("anthropic/claude-sonnet-4-5", Some("max"));
    assert_eq!(b["thinking"]["budget_tokens"], 16384);
    let b = body("openai/gpt-5.1", Some("medium"));
    assert_eq!(b["reasoning_effort"], "medium");
    let b = body("openai/gpt-5.1", None);
    assert_eq!(b["reasoning_effort"], "none");
    let b = body("openai/gpt-4.1", Some("high"));
    assert!(b.get("reasoning_effort").is_none());
    let r = Request { max_tokens: Some(1000), ..request() };
    assert_eq!(provider(&server, "anthropic/claude-haiku-4-5").request_body(&r)["max_tokens"], 1000);
    assert_eq!(provider(&server, "anthropic/claude-x").request_body(&request())["max_tokens"], 8192);
}

#[test]
fn models_json_headers_and_keys_are_sent() {
    let server = ScriptedServer::start(vec![Reply::Sse(openai_text("m", "ok"))]);
    let config = PiConfig::from_values(
        Some(json!({"providers": {"proxy": {
            "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "literal-key",
            "headers": {"X-Team": "pisces"},
            "models": [{"id": "m", "contextWindow": 100000, "maxTokens": 100}]}}})),
        None,
    );
    let mut o = ProviderOptions::new(spec("proxy/m"));
    o.config = config;
    let p = open_http_provider(&o, &env).unwrap();
    assert_eq!(p.context_window(), Some(100000));
    run(&p, &request()).0.unwrap();
    let r = &server.requests()[0];
    assert_eq!(r.header("authorization"), Some("Bearer literal-key"));
    assert_eq!(r.header("x-team"), Some("pisces"));
    assert_eq!(r.json()["max_completion_tokens"], 100);
}

// ---------------------------------------------------------------------------------------
// Whole request bodies against pi's (testdata/payloads, made by pi-ai 1.6.0)

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The corpus' models.json (shared/pi-oracle/gen-corpus.mjs), and cerebras' catalog row.
fn golden_config() -> PiConfig {
    PiConfig::from_values(
        Some(json!({"providers": {
            "ollama": {
                "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
                "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                "models": [
                    {"id": "qwen2.5-coder:14b", "contextWindow": 32768, "maxTokens": 8192},
                    {"id": "qwen2.5-coder:7b", "contextWindow": 16384, "maxTokens": 4096},
                    {"id": "gpt-oss:20b", "reasoning": true, "contextWindow": 131072, "maxTokens": 16384}
                ]
            },
            "cerebras": {"models": [{"id": "qwen-3.8-27b", "api": "openai-completions", "reasoning": true,
                "contextWindow": 131072, "maxTokens": 40960, "compat": {"supportsStore": false},
                "thinkingLevelMap": {"off": "none", "minimal": null, "low": "low", "medium": "medium", "high": "high", "xhigh": null, "max": null}}]}
        }})),
        None,
    )
}

#[test]
fn request_bodies_match_pi() {
    let mut cases = Vec::new();
    for dir in std::fs::read_dir(testdata().join("pi-1.6.0/expected")).unwrap() {
        let dir = dir.unwrap().path();
        if dir.join("default.payload.json").exists() {
            cases.push((dir.join("default.payload.json"), dir.join("default.context.json")));
        }
    }
    for f in std::fs::read_dir(testdata().join("payloads")).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if let Some((case, provider)) = name.strip_suffix(".json").and_then(|s| s.rsplit_once("__")) {
            if provider != "context" {
                cases.push((f.clone(), testdata().join("payloads").join(format!("{case}__context.json"))));
            }
        }
    }
    let config = golden_config();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (payload_path, context_path) in &cases {
        let golden: Value = serde_json::from_str(&std::fs::read_to_string(payload_path).unwrap()).unwrap();
        if golden["systemSource"] != "session system messages" {
            continue; // pi added its own prompt and tools there (see src/llm/wire/tests.rs)
        }
        let context: Value = serde_json::from_str(&std::fs::read_to_string(context_path).unwrap()).unwrap();
        let model =
            format!("{}/{}", golden["model"]["provider"].as_str().unwrap(), golden["model"]["id"].as_str().unwrap());
        let mut o = ProviderOptions::new(spec(&model));
        o.config = config.clone();
        let p = open_http_provider(&o, &env).unwrap();
        let request = Request {
            messages: context["llm"].as_array().unwrap().clone(),
            thinking_level: golden["reasoning"].as_str().map(str::to_string),
            ..Request::default()
        };
        let (ours, headers) = p.build(&request);
        let mut theirs = golden["payload"].clone();
        let betas: Vec<String> = theirs
            .as_object_mut()
            .unwrap()
            .shift_remove("betas")
            .and_then(|b| b.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|b| b.as_str())
            .filter(|b| *b != "message-threads-2026-08-12") // pi's server-side threads, not used
            .map(str::to_string)
            .collect();
        let our_betas: Vec<String> = headers
            .iter()
            .find(|(k, _)| *k == "anthropic-beta")
            .map(|(_, v)| v.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let name = payload_path.file_name().unwrap().to_string_lossy();
        if keys(&ours) != keys(&theirs) {
            failures.push(format!("{name}: keys {:?}, pi {:?}", keys(&ours), keys(&theirs)));
        }
        for k in keys(&theirs) {
            if ours.get(k) != theirs.get(k) {
                let show = |v: Option<&Value>| v.map(|v| v.to_string().chars().take(200).collect::<String>());
                failures.push(format!("{name}: {k}: ours {:?}, pi {:?}", show(ours.get(k)), show(theirs.get(k))));
            }
        }
        if our_betas != betas {
            failures.push(format!("{name}: betas {our_betas:?}, pi {betas:?}"));
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} goldens checked");
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}
