//! Model calls with a scripted provider: pi's requests, failure texts and summaries.

use std::sync::Mutex;

use serde_json::{json, Value};

use super::compaction::{self, Preparation};
use super::serialize::FileOps;
use super::*;
use crate::llm::{LlmError, ModelSpec, Provider, Request, StreamEvent};

/// Answers each call with the next reply, recording the requests.
struct Fake {
    spec: ModelSpec,
    replies: Mutex<Vec<Value>>,
    seen: Mutex<Vec<Request>>,
}

impl Fake {
    fn new(replies: Vec<Value>) -> Fake {
        Fake {
            spec: ModelSpec { provider: "fake".into(), id: "m".into() },
            replies: Mutex::new(replies),
            seen: Mutex::new(vec![]),
        }
    }
}

impl Provider for Fake {
    fn model(&self) -> &ModelSpec {
        &self.spec
    }
    fn context_window(&self) -> Option<u64> {
        None
    }
    fn complete(&self, request: &Request, _: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError> {
        self.seen.lock().unwrap().push(request.clone());
        Ok(self.replies.lock().unwrap().remove(0))
    }
}

fn reply(text: &str, tokens: u64) -> Value {
    json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": text}],
           "stopReason": "stop",
           "usage": {"input": tokens, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + 1,
                     "cost": {"input": 0.5, "output": 0.25, "cacheRead": 0, "cacheWrite": 0, "total": 0.75}}})
}

fn split_preparation() -> Preparation {
    let mut file_ops = FileOps::default();
    file_ops.read.insert("a.js".into());
    Preparation {
        first_kept_index: 3,
        first_kept_entry: crate::session::EntryIdx::new(3),
        is_split_turn: true,
        turn_start_index: Some(2),
        tokens_before: 1234.0,
        messages_to_summarize: vec![json!({"role": "user", "content": "first"})],
        turn_prefix_messages: vec![json!({"role": "user", "content": "second"})],
        previous_summary: Some(json!("PREV")),
        file_ops,
    }
}

#[test]
fn a_split_turn_sends_history_then_prefix_and_joins_them() {
    let prep = split_preparation();
    let fake = Fake::new(vec![reply("H", 10), reply("P", 20)]);
    let out = compaction::compact(&prep, &fake, Some("focus"), Some("high"), &mut |_| {}).unwrap();
    assert_eq!(out.summary, "H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\na.js\n</read-files>");
    let usage = out.usage.unwrap();
    assert_eq!(usage["input"], 30);
    assert_eq!(usage["totalTokens"], 32);
    assert_eq!(usage["cost"]["total"], 1.5);
    assert_eq!(usage["cost"]["totalFromProvider"], false);
    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for r in seen.iter() {
        assert_eq!(r.system.as_deref(), Some(prompts::SUMMARIZATION_SYSTEM_PROMPT));
        assert_eq!((r.max_tokens, r.tools.len(), r.messages.len()), (None, 0, 1));
        assert_eq!(r.thinking_level.as_deref(), Some("high"));
    }
    let history = seen[0].messages[0]["content"][0]["text"].as_str().unwrap();
    assert!(history.starts_with("<conversation>\n[User]: first\n</conversation>\n\n<previous-summary>\nPREV\n</previous-summary>\n\nThe messages above are NEW"));
    assert!(history.ends_with("\n\nAdditional focus: focus"));
    let prefix = seen[1].messages[0]["content"][0]["text"].as_str().unwrap();
    assert!(
        prefix.starts_with("# Conversation\n[User]: second\n\n# Instructions\nThe messages above are earlier context")
    );
    assert!(prefix.ends_with("Do not infer or recreate later messages.\n\nAdditional focus: focus"));
}

#[test]
fn a_split_turn_without_history_keeps_the_previous_summary() {
    let mut prep = split_preparation();
    prep.messages_to_summarize.clear();
    let fake = Fake::new(vec![reply("P", 20)]);
    let out = compaction::compact(&prep, &fake, None, Some("off"), &mut |_| {}).unwrap();
    assert!(out.summary.starts_with("PREV\n\n---\n\n**Turn Context (split turn):**\n\nP"));
    assert_eq!(fake.seen.lock().unwrap()[0].thinking_level, None);
    prep.previous_summary = None;
    assert!(prep
        .summary_template()
        .starts_with("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n<<LLM_OUTPUT:turnPrefix>>"));
}

#[test]
fn failures_read_as_pi_reports_them() {
    let prep = split_preparation();
    let cases = [
        (
            json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "overloaded"}),
            "Summarization failed: overloaded",
        ),
        (json!({"role": "assistant", "content": [], "stopReason": "error"}), "Summarization failed: Unknown error"),
        (
            json!({"role": "assistant", "content": [{"type": "text", "text": "par"}], "stopReason": "length"}),
            "Summarization failed: generation hit the token cap and the summary is incomplete",
        ),
        (
            json!({"role": "assistant", "content": [{"type": "toolCall", "name": "read"}], "stopReason": "toolUse"}),
            "Summarization attempted to call a tool",
        ),
    ];
    for (bad, text) in cases {
        let fake = Fake::new(vec![bad]);
        let err = compaction::compact(&prep, &fake, None, None, &mut |_| {}).unwrap_err();
        assert_eq!(err.to_string(), text);
    }
    let fake = Fake::new(vec![
        reply("H", 1),
        json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "x"}),
    ]);
    let err = compaction::compact(&prep, &fake, None, None, &mut |_| {}).unwrap_err();
    assert_eq!(err.to_string(), "Turn prefix summarization failed: x");
}

#[test]
fn branch_summaries_wrap_the_reply() {
    let mut prepared =
        branch::Prepared { messages: vec![json!({"role": "user", "content": "q"})], ..Default::default() };
    prepared.file_ops.edited.insert("b.js".into());
    let s = branch::summary_from_reply(&prepared, &reply("SUM", 3)).unwrap();
    assert_eq!(
        s.summary,
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nSUM\n\n<modified-files>\nb.js\n</modified-files>"
    );
    assert_eq!(s.modified_files, ["b.js"]);
    assert_eq!(s.usage.unwrap()["input"], 3);
    let aborted = json!({"role": "assistant", "content": [], "stopReason": "aborted"});
    assert!(matches!(branch::summary_from_reply(&prepared, &aborted), Err(SummaryError::Aborted)));
    let err = branch::summary_from_reply(&prepared, &json!({"stopReason": "length", "content": []})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Branch summarization failed: generation hit the token cap and the summary is incomplete"
    );

    let p = branch::prompt(&prepared, Some("only X"), true).unwrap();
    assert_eq!(p, "<conversation>\n[User]: q\n</conversation>\n\nonly X");
    let p = branch::prompt(&prepared, Some("X"), false).unwrap();
    assert!(p.ends_with("error messages.\n\nAdditional focus: X"));
    let p = branch::prompt(&prepared, Some(""), true).unwrap();
    assert!(p.ends_with(prompts::BRANCH_SUMMARY_PROMPT));
    assert_eq!(branch::prompt(&branch::Prepared::default(), None, false), None);
}
