//! Golden tests: our request bodies against the ones the real pi 1.6.0 built.
//!
//! Goldens: `testdata/pi-1.6.0/expected/<stem>/default.payload.json` (with the matching
//! `default.context.json`) and every `testdata/payloads/<corpus>__<stem>__<leaf>__<provider>.json`
//! (with `…__context.json` beside it); see `testdata/payloads/README.md`. Each holds pi-ai's
//! exact request body in `payload`, the model in `model` and the thinking level in
//! `reasoning`. The context golden's `llm` is our input.
//!
//! Sessions without system messages (pi 0.73.1 files and other pre-1.x files): the oracle
//! then sends an empty prompt and pi's 4 default tools, because that is what pi's agent
//! would add before its next request. `path --format` shows the request for the history as
//! it is, without them, so only `messages` is compared there.

use serde_json::Value;
use std::path::{Path, PathBuf};

use super::*;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every (name, payload golden, context golden) pair.
fn goldens() -> Vec<(String, PathBuf, PathBuf)> {
    let mut cases = Vec::new();
    let expected = testdata().join("pi-1.6.0/expected");
    for dir in std::fs::read_dir(&expected).expect("testdata/pi-1.6.0/expected") {
        let dir = dir.unwrap().path();
        let payload = dir.join("default.payload.json");
        if payload.exists() {
            let name = format!("pi-1.6.0/{}", dir.file_name().unwrap().to_string_lossy());
            cases.push((name, payload, dir.join("default.context.json")));
        }
    }
    let payloads = testdata().join("payloads");
    for file in std::fs::read_dir(&payloads).expect("testdata/payloads") {
        let file = file.unwrap().path();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let Some((case, provider)) = stem.rsplit_once("__") else {
            continue;
        };
        if provider == "context" {
            continue;
        }
        cases.push((stem.to_string(), file.clone(), payloads.join(format!("{case}__context.json"))));
    }
    cases.sort();
    cases
}

/// Compares one golden; `Err` describes the first difference of each field.
fn check(payload_path: &Path, context_path: &Path) -> Result<(), String> {
    let golden = read_json(payload_path);
    let llm = read_json(context_path)["llm"].as_array().cloned().expect("context golden without `llm`");
    let model = &golden["model"];
    let model_ref = ModelRef {
        provider: model["provider"].as_str().unwrap_or_default().into(),
        id: model["id"].as_str().unwrap_or_default().into(),
    };
    let options = RequestOptions { thinking_level: golden["reasoning"].as_str().map(str::to_string) };
    let (ours, fields): (Value, &[&str]) = match model["api"].as_str() {
        Some("anthropic-messages") => {
            (anthropic_request_with(&llm, &model_ref, &options), &["model", "system", "messages", "tools"])
        }
        Some("openai-completions") => (openai_request(&llm, &model_ref), &["model", "messages", "tools"]),
        other => return Err(format!("unsupported api {other:?}")),
    };
    let from_session = golden["systemSource"].as_str() == Some("session system messages");
    let fields: &[&str] = if from_session { fields } else { &["messages"] };
    let payload = &golden["payload"];
    let diffs: Vec<String> = fields.iter().filter_map(|f| first_diff(ours.get(*f), payload.get(*f), f)).collect();
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("\n    "))
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// The first place where `ours` and pi's value differ, as `path: …`, key order included.
fn first_diff(ours: Option<&Value>, pis: Option<&Value>, path: &str) -> Option<String> {
    match (ours, pis) {
        (None, None) => None,
        (Some(o), None) => Some(format!("{path}: only in ours: {}", short(o))),
        (None, Some(p)) => Some(format!("{path}: missing in ours; pi has {}", short(p))),
        (Some(Value::Object(o)), Some(Value::Object(p))) => {
            for (k, v) in o {
                if let Some(d) = first_diff(Some(v), p.get(k), &format!("{path}.{k}")) {
                    return Some(d);
                }
            }
            if let Some(k) = p.keys().find(|k| !o.contains_key(*k)) {
                return first_diff(None, p.get(k), &format!("{path}.{k}"));
            }
            let (ko, kp): (Vec<_>, Vec<_>) = (o.keys().collect(), p.keys().collect());
            (ko != kp).then(|| format!("{path}: key order {ko:?}, pi has {kp:?}"))
        }
        (Some(Value::Array(o)), Some(Value::Array(p))) => {
            for (i, (a, b)) in o.iter().zip(p).enumerate() {
                if let Some(d) = first_diff(Some(a), Some(b), &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (o.len() != p.len()).then(|| {
                let n = o.len().min(p.len());
                let extra = if o.len() > n {
                    format!("ours has more: {}", short(&o[n]))
                } else {
                    format!("pi has more: {}", short(&p[n]))
                };
                format!("{path}: {} items, pi has {}; {extra}", o.len(), p.len())
            })
        }
        (Some(o), Some(p)) => (o != p).then(|| format!("{path}: ours {}, pi {}", short(o), short(p))),
    }
}

#[test]
fn requests_match_pi_goldens() {
    let cases = goldens();
    assert!(cases.len() >= 22, "expected the 22 default payload goldens at least, found {}", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(name, payload, context)| check(payload, context).err().map(|e| format!("{name}:\n    {e}")))
        .collect();
    assert!(failures.is_empty(), "{} of {} goldens differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn first_diff_reports_a_path() {
    let a = serde_json::json!({"messages": [{"role": "user", "content": "a"}]});
    let b = serde_json::json!({"messages": [{"role": "user", "content": "b"}]});
    assert_eq!(first_diff(Some(&a), Some(&b), "body").unwrap(), r#"body.messages[0].content: ours "a", pi "b""#);
    let c = serde_json::json!({"y": 1, "x": 2});
    let d = serde_json::json!({"x": 2, "y": 1});
    assert!(first_diff(Some(&c), Some(&d), "o").unwrap().contains("key order"));
}

/// `@openclaw/ai`'s conversion where no OpenClaw golden has the rows (its mock cannot make
/// them; docs/openclaw-format.md §5): read from its `convertMessages`, against pi-ai's on
/// the same messages.
#[test]
fn openclaw_layer_differs_from_pi_ai_as_its_code_does() {
    let llm: Vec<Value> = serde_json::from_str(
        r#"[
        {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "toolCall", "id": "c1", "name": "t", "arguments": {}}, {"type": "text", "text": "b"}]},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "t", "content": [{"type": "text", "text": ""}, {"type": "image", "mimeType": "image/png", "data": " "}]}
    ]"#,
    )
    .unwrap();
    let model = ModelRef { provider: "mock".into(), id: "m".into() };
    let messages = |layer| openai_request_by(&llm, &model, layer)["messages"].clone();
    let (pi, oc) = (messages(ChatLayer::PiAi), messages(ChatLayer::OpenClaw));
    assert_eq!(pi[0]["content"].as_array().map(Vec::len), Some(1), "pi-ai drops the empty text part");
    assert_eq!(oc[0]["content"].as_array().map(Vec::len), Some(2), "@openclaw/ai keeps it");
    assert_eq!(pi[1]["content"], "ab");
    assert_eq!(oc[1]["content"], "a\nb");
    assert_eq!(pi[2]["content"], "(see attached image)", "pi-ai counts any image block");
    assert_eq!(oc[2]["content"], "(no output)", "@openclaw/ai counts an image only with its bytes");
}
