//! The request body `pisces agent` sends is the one pi's provider layer (pi-ai 1.6.0) builds
//! for the same session and leaf, apart from the system prompt's wording (pisces's own).
//!
//! CI (always): every payload golden made by the real pi with `payload.mjs` whose session is
//! a pi-written corpus file or the hand-written edge-cases session (`testdata/payloads/*.json`
//! and `testdata/<corpus>/expected/<stem>/default.payload.json`). The session is copied into
//! a temp dir (its header `cwd` pointed there: the agent refuses a missing cwd), `pisces
//! agent --from LEAF --model <the golden's model> --thinking <its level> -p Continue.` runs
//! against the scripted server speaking the golden's protocol, and the first request it
//! receives must hold the golden's messages followed by the new prompt, in pi-ai's shape,
//! the golden's other top-level fields and (pisces given the golden's tools) its tools. How
//! pi-ai places what comes after the last message (the prompt-cache marker, held system
//! messages, the effort marker) is derived below from the golden itself; the differences
//! pisces is allowed are listed in testdata/payloads/README.md ("What `pisces agent`
//! sends").
//!
//! Live (`PISCES_LIVE_ORACLE=1`, as live_oracle.rs; not registered without it): sessions
//! `pisces agent` wrote are given to `payload.mjs` at the user message it appended, and the
//! WHOLE body pisces sent for that prompt must be pi's, system prompt and tools included
//! (pi 1.x sends the persisted system messages as they are): every CI case above, a new
//! session and a `--from` branch of a corpus file, each with several models.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{anthropic_text, openai_text, RecordedRequest, Reply, ScriptedServer};

use crate::agent_corpus::copy_into;
use crate::common::{check, first_diff, live_oracle, needing, pisces, stderr, testdata, TestResult, LIVE};

/// The prompt every CI case sends.
const PROMPT: &str = "Continue.";
/// pi-ai's server-side conversation threads: pi-ai always asks for them, pisces never uses
/// them (src/llm/client/anthropic.rs), so this beta is never sent.
const THREADS_BETA: &str = "message-threads-2026-08-12";

/// The corpus' `models.json` (`gen-corpus.mjs`, which `payload.mjs` uses for `ollama/...`),
/// plus pi-ai 1.6.0's catalog row for `cerebras/qwen-3.8-27b` (pisces's built-in catalog
/// holds only Anthropic's and OpenAI's models; the unit tests in src/llm/http_tests.rs add
/// the same row).
fn models_json() -> Value {
    json!({"providers": {
        "ollama": {
            "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [
                {"id": "qwen2.5-coder:14b", "name": "Qwen2.5 Coder 14B (local)", "contextWindow": 32768, "maxTokens": 8192},
                {"id": "qwen2.5-coder:7b", "name": "Qwen2.5 Coder 7B (local, 16k)", "contextWindow": 16384, "maxTokens": 4096},
                {"id": "gpt-oss:20b", "name": "gpt-oss 20B (local)", "reasoning": true, "contextWindow": 131072, "maxTokens": 16384}
            ]
        },
        "cerebras": {"models": [{
            "id": "qwen-3.8-27b", "name": "Qwen3.8 27B", "api": "openai-completions", "reasoning": true,
            "input": ["text", "image"], "cost": {"input": 0.99, "output": 1.49, "cacheRead": 0.99, "cacheWrite": 0},
            "contextWindow": 131072, "maxTokens": 40960, "compat": {"supportsStore": false},
            "thinkingLevelMap": {"off": "none", "minimal": null, "low": "low", "medium": "medium", "high": "high",
                                 "xhigh": null, "max": null}
        }]}
    }})
}

/// pi's agent directory for the runs: the models above, and compaction off. `payload.mjs`
/// builds the body for the context as it is; pi's agent (and pisces) would first compact a
/// context over the window's threshold (the v1 `real` session on the 16k model), and the
/// request compared here is the one for the context itself.
fn agent_dir(dir: &Path) -> std::io::Result<()> {
    fs::write(dir.join("models.json"), serde_json::to_string_pretty(&models_json())?)?;
    fs::write(dir.join("settings.json"), r#"{"compaction": {"enabled": false}}"#)
}

pub fn trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = goldens()
        .into_iter()
        .map(|g| {
            let name = format!("agent_payload::{}", g.name);
            Trial::test(name, move || continued_request_matches(&g))
        })
        .collect();
    let live = live_oracle();
    for g in goldens() {
        let name = format!("agent_payload::live/continued/{}", g.name);
        trials.push(needing(name, LIVE, live, move || live_continued(&g)));
    }
    for (name, model, thinking) in LIVE_MODELS {
        trials.push(needing(format!("agent_payload::live/new-session/{name}"), LIVE, live, move || {
            live_new_session(model, thinking)
        }));
        trials.push(needing(format!("agent_payload::live/corpus-branch/{name}"), LIVE, live, move || {
            live_corpus_branch(model, thinking)
        }));
    }
    trials
}

// ---------------------------------------------------------------------------------------
// The goldens

/// One `payload.mjs` output and the session and leaf it was made for.
struct Golden {
    name: String,
    file: PathBuf,
    session: PathBuf,
    /// `default`, an entry id, or `lineN`.
    leaf: String,
}

fn goldens() -> Vec<Golden> {
    let mut out = Vec::new();
    // testdata/payloads/<corpus>__<stem>__<leaf>__<provider>.json (README.md there).
    let dir = testdata().join("payloads");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir).expect("testdata/payloads").flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json") else { continue };
        let parts: Vec<&str> = stem.split("__").collect();
        let [corpus, session, leaf, provider] = parts[..] else { continue };
        if provider == "context" {
            continue; // context.mjs output, not a payload
        }
        let session = if corpus == "payloads" {
            dir.join("sessions").join(format!("{session}.jsonl"))
        } else {
            testdata().join(corpus).join(format!("{session}.jsonl"))
        };
        out.push(Golden { name: format!("payloads/{stem}"), file, session, leaf: leaf.to_string() });
    }
    // testdata/<corpus>/expected/<stem>/default.payload.json (make-expected.mjs: the default
    // leaf, the session's own model).
    for corpus in crate::conformance::corpora() {
        let corpus_name = corpus.file_name().unwrap().to_string_lossy().into_owned();
        let mut stems: Vec<PathBuf> =
            fs::read_dir(corpus.join("expected")).unwrap().flatten().map(|e| e.path()).collect();
        stems.sort();
        for goldens in stems {
            let stem = goldens.file_name().unwrap().to_string_lossy().into_owned();
            let file = goldens.join("default.payload.json");
            let session = corpus.join(format!("{stem}.jsonl"));
            if file.exists() && session.exists() {
                let name = format!("{corpus_name}/expected/{stem}/default.payload");
                out.push(Golden { name, file, session, leaf: "default".into() });
            }
        }
    }
    out
}

fn read_json(path: &Path) -> Result<Value, libtest_mimic::Failed> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// The lines of a session file as JSON, with their 1-based line numbers (header included).
fn session_lines(path: &Path) -> Vec<(usize, Value)> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter_map(|(i, l)| serde_json::from_str::<Value>(l).ok().map(|v| (i + 1, v)))
        .collect()
}

/// The golden's leaf entry and the REV naming it for pisces: pi's default leaf is the last
/// entry (`@`), `lineN` is `#N`, anything else an entry id.
fn leaf_entry(lines: &[(usize, Value)], leaf: &str) -> Option<(String, Value)> {
    if leaf == "default" {
        return lines.iter().rfind(|(n, _)| *n > 1).map(|(_, e)| ("@".to_string(), e.clone()));
    }
    if let Some(n) = leaf.strip_prefix("line").and_then(|n| n.parse::<usize>().ok()) {
        return lines.iter().find(|(l, _)| *l == n).map(|(_, e)| (format!("#{n}"), e.clone()));
    }
    lines.iter().find(|(_, e)| e["id"] == leaf).map(|(_, e)| (leaf.to_string(), e.clone()))
}

/// The text of a user message's content (a string or blocks), or of a wire message's.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// Running the agent

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wire {
    Anthropic,
    OpenAi,
}

impl Wire {
    fn of(api: &str) -> Option<Wire> {
        match api {
            "anthropic-messages" => Some(Wire::Anthropic),
            "openai-completions" => Some(Wire::OpenAi),
            _ => None,
        }
    }

    fn reply(self, model: &str, text: &str) -> Reply {
        match self {
            Wire::Anthropic => Reply::Sse(anthropic_text(model, text)),
            Wire::OpenAi => Reply::Sse(openai_text(model, text)),
        }
    }

    /// The base URL: Anthropic's SDK adds `/v1/messages`, OpenAI-compatible clients
    /// `/chat/completions`.
    fn base_url(self, server: &ScriptedServer) -> String {
        match self {
            Wire::Anthropic => server.url(),
            Wire::OpenAi => format!("{}/v1", server.url()),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Wire::Anthropic => "/v1/messages",
            Wire::OpenAi => "/v1/chat/completions",
        }
    }
}

/// One `pisces agent` run against a scripted server that answers once with text.
struct AgentRun<'a> {
    project: &'a Path,
    agent_dir: &'a Path,
    wire: Wire,
    model: &'a str,
    args: Vec<String>,
}

impl AgentRun<'_> {
    fn run(&self) -> Result<(Output, Vec<RecordedRequest>), libtest_mimic::Failed> {
        let model_id = self.model.split_once('/').map_or(self.model, |(_, id)| id);
        let server = ScriptedServer::start(vec![self.wire.reply(model_id, "Continuing.")]);
        let out = pisces()
            .current_dir(self.project)
            .env("PI_CODING_AGENT_DIR", self.agent_dir)
            .env("PISCES_TEST_KEY", "test-key")
            .args(["agent", "--model", self.model, "--base-url", &self.wire.base_url(&server)])
            .args(["--api-key-env", "PISCES_TEST_KEY"])
            .args(&self.args)
            .output()?;
        check(out.status.success(), || format!("pisces agent: exit {:?}: {}", out.status.code(), stderr(&out)))?;
        let requests = server.requests();
        check(requests.len() == 1, || format!("{} model calls, 1 expected", requests.len()))?;
        check(requests[0].path == self.wire.path(), || format!("POST {}", requests[0].path))?;
        Ok((out, requests))
    }
}

// ---------------------------------------------------------------------------------------
// CI: the request for "Continue." after each golden's leaf

/// A golden's session continued by `pisces agent` with "Continue.".
struct Continuation {
    /// The temp dirs (the project, holding the session, and pi's agent dir).
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    golden: Value,
    model: String,
    wire: Wire,
    /// The file the agent appended to (the copy, or its fork for a version-1 file).
    session: PathBuf,
    /// The leaf's text when it is a user message.
    leaf_prompt: Option<String>,
    /// pisces was given the golden's tools.
    same_tools: bool,
    request: RecordedRequest,
}

fn continue_golden(g: &Golden) -> Result<Continuation, libtest_mimic::Failed> {
    let golden = read_json(&g.file)?;
    let model =
        format!("{}/{}", golden["model"]["provider"].as_str().unwrap(), golden["model"]["id"].as_str().unwrap());
    let wire = Wire::of(golden["model"]["api"].as_str().unwrap_or_default())
        .ok_or_else(|| format!("{}: api {} is not spoken by pisces", g.name, golden["model"]["api"]))?;

    let project = tempfile::tempdir()?;
    let agent = tempfile::tempdir()?;
    agent_dir(agent.path())?;
    let copy = copy_into(&g.session, project.path());
    let lines = session_lines(&copy);
    let (mut rev, leaf) = leaf_entry(&lines, &g.leaf).ok_or_else(|| format!("leaf {} not in the session", g.leaf))?;
    // The leaf's own prompt, when it is a user message: pi's navigateTree continues from its
    // parent, so the context sent ends before it (payload.mjs's context ends with it).
    let leaf_prompt =
        (leaf["type"] == "message" && leaf["message"]["role"] == "user").then(|| text_of(&leaf["message"]["content"]));

    // A version-1 file (`real/`): pi rewrites it in the current format when it opens it;
    // pisces never appends to it unmigrated (it refuses). `pisces fork` writes the path to the
    // leaf as a current-format file (same messages), and the agent continues that at `@`.
    let mut session = copy.clone();
    let version = lines.first().and_then(|(_, h)| h["version"].as_u64()).unwrap_or(1);
    if version < 2 {
        let fork = project.path().join("fork.jsonl");
        let out = pisces().args(["fork", copy.to_str().unwrap(), &rev, "-o", fork.to_str().unwrap()]).output()?;
        check(out.status.success(), || format!("pisces fork: {}", stderr(&out)))?;
        session = fork;
        rev = "@".into();
    }

    let thinking = golden["reasoning"].as_str().unwrap_or("off").to_string();
    let mut args = vec!["--session".to_string(), session.to_str().unwrap().to_string(), "--from".into(), rev];
    args.extend(["--thinking".to_string(), thinking, "-p".into(), PROMPT.into()]);
    // The golden's tools, when pisces has them all: pi's agent sends its active tools, and a
    // user with these active gets the same declarations from pisces.
    let tools: Vec<&str> =
        golden["toolNames"].as_array().map(|t| t.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let same_tools = !tools.is_empty() && tools.iter().all(|t| PISCES_TOOLS.contains(t));
    if same_tools {
        args.extend(["--tools".to_string(), tools.join(",")]);
    }
    let run = AgentRun { project: project.path(), agent_dir: agent.path(), wire, model: &model, args };
    let (_, mut requests) = run.run()?;
    let request = requests.remove(0);
    Ok(Continuation { _dirs: (project, agent), golden, model, wire, session, leaf_prompt, same_tools, request })
}

fn continued_request_matches(g: &Golden) -> TestResult {
    let c = continue_golden(g)?;
    let (golden, body) = (&c.golden, c.request.json());
    let payload = &golden["payload"];
    match c.wire {
        Wire::Anthropic => anthropic_messages_match(golden, &body, c.leaf_prompt.as_deref())?,
        Wire::OpenAi => openai_messages_match(payload, &body, c.leaf_prompt.as_deref())?,
    }
    // pi 0.73.1's own goldens (testdata/pi-0.73.1/expected/) are pi-ai 0.73.1's requests;
    // pisces sends pi-ai 1.6.0's, whose output limit and betas differ: only the other fields
    // are compared for those.
    let same_pi = golden["pi"] == "1.6.0";
    top_level_fields_match(payload, &body, &c.request, c.wire, same_pi)?;
    // The tool declarations, when pisces was given the golden's tools: pisces's are pi
    // 1.6.0's (name, description, schema), so a pi 1.6.0 golden's must be sent as they are
    // (pi 0.73.1 described its tools in other words).
    if c.same_tools && same_pi {
        if let Some(d) = first_diff(&body["tools"], &payload["tools"], "$.tools") {
            return Err(d.into());
        }
    }
    Ok(())
}

/// The tools `pisces agent --tools` knows (pi 1.6.0's built-in ones).
const PISCES_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// pi-ai's shape for a user message of one text block (every prompt in the goldens).
fn user_message(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

/// The first `cache_control` value anywhere in a body (pi-ai uses one value per request:
/// on the system prompt, the last tool and the last message); `None` when pi-ai sends none.
fn cache_marker(v: &Value) -> Option<Value> {
    match v {
        Value::Object(m) => m.get("cache_control").cloned().or_else(|| m.values().find_map(cache_marker)),
        Value::Array(a) => a.iter().find_map(cache_marker),
        _ => None,
    }
}

/// Removes `cache_control` from a message's last content block, returning it.
fn take_cache_marker(message: &mut Value) -> Option<Value> {
    message["content"].as_array_mut()?.last_mut()?.as_object_mut()?.shift_remove("cache_control")
}

/// pi-ai's active-effort marker (`insertThinkingLevelMessages`: last, with no content).
fn is_effort_marker(m: &Value) -> bool {
    m["role"] == "system" && m.get("output_config").is_some() && m["content"] == json!([])
}

fn diff(got: &[Value], want: &[Value], path: &str) -> TestResult {
    match first_diff(&Value::Array(got.to_vec()), &Value::Array(want.to_vec()), path) {
        Some(d) => Err(d.into()),
        None => Ok(()),
    }
}

/// Removes the leaf's own prompt from the end of pi's messages (its context for a user
/// leaf ends with it; pisces continues from the leaf's parent).
fn drop_leaf_prompt(messages: &mut Vec<Value>, prompt: Option<&str>) -> TestResult {
    let Some(prompt) = prompt else { return Ok(()) };
    match messages.last() {
        Some(m) if m["role"] == "user" && text_of(&m["content"]) == prompt => {
            messages.pop();
            Ok(())
        }
        // pi-ai drops a user message whose text is blank.
        _ if prompt.trim().is_empty() => Ok(()),
        last => Err(format!("pi's messages do not end with the leaf's prompt {prompt:?}: {last:?}").into()),
    }
}

/// Anthropic Messages: pi-ai converts the transcript, holds later system messages (models
/// that take them natively) until the next assistant message or the end, puts the cache
/// marker on the last message when it is a user or system one, then appends the active
/// effort marker (models with mid-conversation effort). So with one more user message, pi
/// would send: the golden's messages without the effort marker, the held system messages
/// and the cache marker, then the prompt, the held system messages, any system message for
/// this turn, the cache marker on the last of these, and the effort marker.
///
/// Allowed difference: pisces's system prompt is its own (wording, cwd, date), so continuing
/// a session adds a system message with the changed sections (and tools, when they differ);
/// it is folded into `system` for other models and, for models that take system messages
/// natively (pi-ai's `inline-tools` beta, or system messages in the golden), sent after the
/// prompt as pi-ai sends a held update. Only its role is checked here; the live test
/// compares its text with pi's.
fn anthropic_messages_match(golden: &Value, body: &Value, leaf_prompt: Option<&str>) -> TestResult {
    let payload = &golden["payload"];
    let mut want = payload["messages"].as_array().cloned().unwrap_or_default();
    let marker = cache_marker(payload);
    let mut effort = want.last().filter(|m| is_effort_marker(m)).cloned();
    if effort.is_some() {
        want.pop();
    }
    // Thinking "off" on a model that cannot turn it off (pi-ai still sends adaptive thinking,
    // not `disabled`: claude-fable-5-1's `thinkingLevelMap.off` is null). payload.mjs hands
    // pi-ai the context's level as it is, and pi-ai marks the reply with its default effort,
    // "high"; pi's agent first clamps the level to the model's (`clampThinkingLevel`: "off"
    // becomes "minimal", the lowest it supports), whose effort is "low". pisces clamps as
    // pi's agent does, so the marker is "low".
    if golden["reasoning"].is_null() && payload["thinking"]["type"] != "disabled" {
        if let Some(e) = effort.as_mut() {
            e["output_config"]["effort"] = json!("low");
        }
    }
    let held_from = want.iter().rposition(|m| m["role"] != "system").map_or(0, |i| i + 1);
    let mut held = want.split_off(held_from);
    if let Some(last) = held.last_mut().or(want.last_mut()) {
        let m = take_cache_marker(last);
        check(m.is_none() || m == marker, || format!("cache marker {m:?}"))?;
    }
    drop_leaf_prompt(&mut want, leaf_prompt)?;
    let native_system = payload["betas"].as_array().is_some_and(|b| b.iter().any(|b| b == "inline-tools-2026-09-15"))
        || payload["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "system" && !is_effort_marker(m)));

    let mut got = body["messages"].as_array().cloned().ok_or("no messages in pisces's request")?;
    if let Some(effort) = &effort {
        let last = got.pop();
        check(last.as_ref() == Some(effort), || format!("the effort marker: pisces {last:?}, pi {effort}"))?;
    }
    // The cache marker: on the last message (before the effort marker), as pi-ai puts it.
    if let Some(last) = got.last_mut() {
        let m = take_cache_marker(last);
        check(m == marker, || format!("cache marker on the last message: pisces {m:?}, pi {marker:?}"))?;
    }
    check(got.len() > want.len(), || format!("{} messages in pisces's request, pi's are {}", got.len(), want.len()))?;
    diff(&got[..want.len()], &want, "$.messages")?;
    let after = &got[want.len()..];
    check(after[0] == user_message(PROMPT), || format!("the prompt: {}", after[0]))?;
    let rest = &after[1..];
    check(rest.len() >= held.len(), || format!("held system messages: pisces {rest:?}, pi {held:?}"))?;
    diff(&rest[..held.len()], &held, "$.messages[held system messages]")?;
    let ours = &rest[held.len()..];
    check(ours.iter().all(|m| m["role"] == "system" && m.get("output_config").is_none()), || {
        format!("after the prompt, pisces sends more than system messages: {ours:?}")
    })?;
    check(native_system || ours.is_empty(), || format!("system messages for a model that takes none: {ours:?}"))
}

/// OpenAI Chat Completions: pi-ai sends the system prompt as the first message (`system`,
/// or `developer` for reasoning models with that role) with every later system message
/// folded into it, so pi's body for one more user message is the golden's messages after
/// that first one, then the prompt. pisces's first message carries its own prompt (allowed
/// difference: wording; the pi 0.73.1 and `real` goldens have none, as payload.mjs sends an
/// empty prompt for sessions without system messages): only its role is compared.
fn openai_messages_match(payload: &Value, body: &Value, leaf_prompt: Option<&str>) -> TestResult {
    let mut want = payload["messages"].as_array().cloned().unwrap_or_default();
    let is_prompt = |m: &Value| m["role"] == "system" || m["role"] == "developer";
    let pi_prompt = want.first().filter(|m| is_prompt(m)).cloned();
    if pi_prompt.is_some() {
        want.remove(0);
    }
    drop_leaf_prompt(&mut want, leaf_prompt)?;
    want.push(user_message(PROMPT));
    let got = body["messages"].as_array().cloned().ok_or("no messages in pisces's request")?;
    let first = got.first().ok_or("no messages")?;
    check(is_prompt(first), || format!("pisces's first message is not the system prompt: {first}"))?;
    if let Some(p) = &pi_prompt {
        check(first["role"] == p["role"], || format!("prompt role: pisces {}, pi {}", first["role"], p["role"]))?;
    }
    diff(&got[1..], &want, "$.messages[1..]")
}

/// Every top-level field but `messages`, `system` and `tools` (the prompt's wording is
/// allowed to differ; the tools are compared by the caller), with two documented
/// differences:
///
/// - `betas`: pi-ai's SDK sends them as the `anthropic-beta` header, and so does pisces,
///   without pi-ai's server-side threads beta.
/// - the output limit (`max_tokens`, `max_completion_tokens`): pi-ai fits it to the window
///   minus the estimated input, system prompt and tools included, so where that clamp is in
///   play (the 16k local model) pisces's longer prompt and the new message may make it
///   smaller than pi's, never larger.
fn top_level_fields_match(
    payload: &Value,
    body: &Value,
    request: &RecordedRequest,
    wire: Wire,
    same_pi: bool,
) -> TestResult {
    let theirs = payload.as_object().ok_or("golden payload is not an object")?;
    let ours = body.as_object().ok_or("pisces's body is not an object")?;
    const OWN: [&str; 4] = ["messages", "system", "tools", "betas"];
    for k in ours.keys() {
        check(theirs.contains_key(k) || OWN.contains(&k.as_str()), || format!("$.{k}: extra in pisces ({})", ours[k]))?;
    }
    for (k, want) in theirs {
        if OWN.contains(&k.as_str()) {
            continue;
        }
        let got = ours.get(k).ok_or_else(|| format!("$.{k}: missing in pisces (pi: {want})"))?;
        if k == "max_tokens" || k == "max_completion_tokens" {
            if !same_pi {
                continue;
            }
            let (g, w) = (got.as_u64().unwrap_or(0), want.as_u64().unwrap_or(0));
            check(g == w || (1..w).contains(&g) && request.body.len() > payload.to_string().len(), || {
                format!("$.{k}: {g} in pisces, {w} in pi")
            })?;
            continue;
        }
        if let Some(d) = first_diff(got, want, &format!("$.{k}")) {
            return Err(d.into());
        }
    }
    if wire == Wire::Anthropic && same_pi {
        let want: Vec<&str> = theirs
            .get("betas")
            .and_then(Value::as_array)
            .map(|b| b.iter().filter_map(Value::as_str).filter(|b| *b != THREADS_BETA).collect())
            .unwrap_or_default();
        let got: Vec<&str> = request.header("anthropic-beta").map(|h| h.split(',').collect()).unwrap_or_default();
        check(got == want, || format!("anthropic-beta: pisces {got:?}, pi {want:?}"))?;
        check(ours.contains_key("system"), || "pisces sends no system prompt".into())?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Live: pi's payload for the sessions pisces writes

/// Models the live checks run with: a name, `PROVIDER/ID` and the thinking level. Sonnet
/// with and without a thinking budget; Opus 4.8 (system messages and tool changes sent
/// natively, adaptive thinking); Fable 5.1 at "off", which it cannot turn off (pisces writes
/// the clamped level, "minimal", as pi's agent does, and pi's payload is built for that);
/// the corpus' local openai-completions models, one of them reasoning.
const LIVE_MODELS: [(&str, &str, &str); 6] = [
    ("anthropic-claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "off"),
    ("anthropic-claude-sonnet-4-5-high", "anthropic/claude-sonnet-4-5", "high"),
    ("anthropic-claude-opus-4-8-medium", "anthropic/claude-opus-4-8", "medium"),
    ("anthropic-claude-fable-5-1-off", "anthropic/claude-fable-5-1", "off"),
    ("ollama-qwen2.5-coder-7b", "ollama/qwen2.5-coder:7b", "off"),
    ("ollama-gpt-oss-20b-medium", "ollama/gpt-oss:20b", "medium"),
];

fn oracle(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pi-oracle").join(script)
}

fn wire_of(model: &str) -> Wire {
    if model.starts_with("anthropic/") {
        Wire::Anthropic
    } else {
        Wire::OpenAi
    }
}

/// pi's payload for continuing `file` at `leaf` (a user message: the context that ends
/// with it, i.e. what is sent for that prompt).
fn pi_payload(file: &Path, leaf: &str, model: &str) -> Result<Value, libtest_mimic::Failed> {
    let out = Command::new("node").arg(oracle("payload.mjs")).arg(file).arg(leaf).args(["--model", model]).output()?;
    check(out.status.success(), || format!("payload.mjs: {}", String::from_utf8_lossy(&out.stderr)))?;
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// The id of the last user message pisces wrote.
fn last_prompt_id(file: &Path) -> Result<String, libtest_mimic::Failed> {
    session_lines(file)
        .iter()
        .rev()
        .find(|(_, e)| e["type"] == "message" && e["message"]["role"] == "user")
        .and_then(|(_, e)| e["id"].as_str().map(str::to_string))
        .ok_or_else(|| "no user message written".into())
}

/// Every difference between two JSON values (up to 40), as `$.path: pisces vs pi`.
fn all_diffs(got: &Value, want: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= 40 {
        return;
    }
    match (got, want) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, w) in b {
                match a.get(k) {
                    Some(g) => all_diffs(g, w, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing in pisces (pi: {})", short(w))),
                }
            }
            for (k, g) in a {
                if !b.contains_key(k) {
                    out.push(format!("{path}.{k}: extra in pisces ({})", short(g)));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (g, w)) in a.iter().zip(b).enumerate() {
                all_diffs(g, w, &format!("{path}[{i}]"), out);
            }
            if a.len() != b.len() {
                out.push(format!("{path}: {} items in pisces, {} in pi", a.len(), b.len()));
            }
        }
        _ => {
            if let Some(d) = first_diff(got, want, path) {
                out.push(d);
            }
        }
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

/// The whole body against pi's: `betas` compared with the `anthropic-beta` header (the
/// SDK's place for them), without pi-ai's server-side threads beta.
fn whole_body_matches(request: &RecordedRequest, pi: &Value, what: &str) -> TestResult {
    let ours = request.json();
    let mut theirs = pi["payload"].clone();
    let mut diffs = Vec::new();
    if let Some(betas) = theirs.as_object_mut().and_then(|o| o.shift_remove("betas")) {
        let want: Vec<&str> =
            betas.as_array().unwrap().iter().filter_map(Value::as_str).filter(|b| *b != THREADS_BETA).collect();
        let got: Vec<&str> = request.header("anthropic-beta").map(|h| h.split(',').collect()).unwrap_or_default();
        if got != want {
            diffs.push(format!("anthropic-beta: pisces {got:?}, pi {want:?}"));
        }
    }
    all_diffs(&ours, &theirs, "$", &mut diffs);
    check(diffs.is_empty(), || format!("{what}: {} differences from pi's body:\n{}", diffs.len(), diffs.join("\n")))
}

/// A new session written by `pisces agent`: pi's payload at its prompt is the body pisces
/// sent for it.
fn live_new_session(model: &str, thinking: &str) -> TestResult {
    let project = tempfile::tempdir()?;
    let agent = tempfile::tempdir()?;
    agent_dir(agent.path())?;
    let file = project.path().join("new.jsonl");
    let args = ["--session", file.to_str().unwrap(), "--thinking", thinking, "-p", "List the files here."];
    let run = AgentRun {
        project: project.path(),
        agent_dir: agent.path(),
        wire: wire_of(model),
        model,
        args: args.iter().map(|s| s.to_string()).collect(),
    };
    let (_, requests) = run.run()?;
    let pi = pi_payload(&file, &last_prompt_id(&file)?, model)?;
    whole_body_matches(&requests[0], &pi, "new session")
}

/// A branch of a pi 1.6.0 corpus session written by `pisces agent --from`: pisces appends a
/// system message with its prompt's changed sections before the prompt, and pi's payload at
/// that prompt replays the corpus's system messages and that one.
fn live_corpus_branch(model: &str, thinking: &str) -> TestResult {
    let project = tempfile::tempdir()?;
    let agent = tempfile::tempdir()?;
    agent_dir(agent.path())?;
    let file = copy_into(&testdata().join("pi-1.6.0/22-two-fix-attempts.jsonl"), project.path());
    let f = file.to_str().unwrap();
    let args = ["--session", f, "--from", "adbfcbd8", "--thinking", thinking, "-p", "Try once more."];
    let run = AgentRun {
        project: project.path(),
        agent_dir: agent.path(),
        wire: wire_of(model),
        model,
        args: args.iter().map(|s| s.to_string()).collect(),
    };
    let (_, requests) = run.run()?;
    let pi = pi_payload(&file, &last_prompt_id(&file)?, model)?;
    whole_body_matches(&requests[0], &pi, "branch of 22-two-fix-attempts")
}

/// Each CI case again, against pi itself: pi's payload at the prompt pisces appended (the
/// session as pisces left it: the golden's session, pisces's system message for its own
/// prompt, model and thinking changes, the prompt) is the whole body pisces sent.
fn live_continued(g: &Golden) -> TestResult {
    let c = continue_golden(g)?;
    let pi = pi_payload(&c.session, &last_prompt_id(&c.session)?, &c.model)?;
    whole_body_matches(&c.request, &pi, &g.name)
}
