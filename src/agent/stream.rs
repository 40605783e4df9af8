//! One model call as the loop makes it: on a thread of its own, so that an abort ends the
//! wait at once, and its stream turned into pi's `message_update` events (pi 1.6's JSON
//! mode, §8.2).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use serde_json::{json, Value};

use crate::llm::{LlmError, Provider, Request, StreamEvent};

/// pi's streaming events for one reply: a provider's stream turned into delta-only
/// `message_update` events, each with the usage so far (pi 1.6's JSON mode, §8.2), and
/// the blocks that have arrived (what an aborted reply keeps).
pub(super) struct Updates {
    pub(super) usage: Value,
    /// Content blocks so far in pi's shape; a tool call's raw argument text beside it.
    blocks: Vec<(Value, String)>,
    /// Whether the last block's `*_end` is still to come.
    open: bool,
}

impl Updates {
    pub(super) fn new() -> Updates {
        let zero = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
        Updates { usage: zero, blocks: Vec::new(), open: false }
    }

    fn update(&self, event: Value) -> Value {
        json!({"type": "message_update", "usage": self.usage, "assistantMessageEvent": event})
    }

    /// Opens a block (closing the one before) and emits its `*_start`.
    fn start(&mut self, block: Value, emit: &mut dyn FnMut(Value)) {
        self.close(None, emit);
        let index = self.blocks.len();
        let event = match block["type"].as_str() {
            Some("toolCall") => {
                json!({"type": "toolcall_start", "contentIndex": index, "id": block["id"], "toolName": block["name"]})
            }
            Some(kind) => json!({"type": format!("{kind}_start"), "contentIndex": index}),
            None => return,
        };
        self.blocks.push((block, String::new()));
        self.open = true;
        emit(self.update(event));
    }

    /// The open block of `kind`, opened if the provider did not say it started.
    fn open_block(&mut self, kind: &str, emit: &mut dyn FnMut(Value)) -> usize {
        let is_open = self.open && self.blocks.last().is_some_and(|(b, _)| b["type"] == kind);
        if !is_open {
            let field = if kind == "text" { "text" } else { "thinking" };
            self.start(json!({"type": kind, field: ""}), emit);
        }
        self.blocks.len() - 1
    }

    pub(super) fn on(&mut self, ev: &StreamEvent, emit: &mut dyn FnMut(Value)) {
        match ev {
            StreamEvent::TextStart => self.start(json!({"type": "text", "text": ""}), emit),
            StreamEvent::ThinkingStart => self.start(json!({"type": "thinking", "thinking": ""}), emit),
            StreamEvent::ToolCallStart { id, name } => {
                self.start(json!({"type": "toolCall", "id": id, "name": name, "arguments": {}}), emit)
            }
            StreamEvent::TextDelta(d) | StreamEvent::ThinkingDelta(d) => {
                let kind = if matches!(ev, StreamEvent::TextDelta(_)) { "text" } else { "thinking" };
                let i = self.open_block(kind, emit);
                if let Some(Value::String(t)) = self.blocks[i].0.get_mut(kind) {
                    t.push_str(d);
                }
                emit(self.update(json!({"type": format!("{kind}_delta"), "contentIndex": i, "delta": d})));
            }
            StreamEvent::ToolCallDelta(d) => {
                let Some(i) = self.blocks.len().checked_sub(1).filter(|_| self.open) else { return };
                if self.blocks[i].0["type"] != "toolCall" {
                    return;
                }
                self.blocks[i].1.push_str(d);
                emit(self.update(json!({"type": "toolcall_delta", "contentIndex": i, "delta": d})));
            }
            StreamEvent::Usage(u) => self.usage = u.clone(),
            StreamEvent::Retry { .. } => {}
        }
    }

    /// Emits the open block's `*_end`: its text, or the finished tool call (from the final
    /// message when there is one, else parsed from the streamed arguments).
    pub(super) fn close(&mut self, last: Option<&Value>, emit: &mut dyn FnMut(Value)) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        let i = self.blocks.len() - 1;
        let (block, args) = &self.blocks[i];
        let event = match block["type"].as_str() {
            Some("toolCall") => {
                let finished = last.and_then(|m| m["content"].get(i)).filter(|b| b["id"] == block["id"]).cloned();
                let call = finished.unwrap_or_else(|| {
                    let mut call = block.clone();
                    call["arguments"] = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
                    call
                });
                json!({"type": "toolcall_end", "contentIndex": i, "toolCall": call})
            }
            Some(kind) => json!({"type": format!("{kind}_end"), "contentIndex": i, "content": block[kind]}),
            None => return,
        };
        emit(self.update(event));
    }

    /// The text and thinking that arrived (an aborted reply keeps them).
    pub(super) fn partial(&self) -> Vec<Value> {
        self.blocks.iter().map(|(b, _)| b).filter(|b| b["type"] != "toolCall").cloned().collect()
    }
}

/// A provider whose calls end as soon as `abort` is set (see [`call_model`]).
pub(super) struct Abortable {
    pub(super) inner: Arc<dyn Provider>,
    pub(super) abort: Arc<AtomicBool>,
}

impl Provider for Abortable {
    fn model(&self) -> &crate::llm::ModelSpec {
        self.inner.model()
    }

    fn context_window(&self) -> Option<u64> {
        self.inner.context_window()
    }

    fn complete(&self, request: &Request, events: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError> {
        call_model(&self.inner, request.clone(), &self.abort, events)
    }
}

/// Calls the model on a thread of its own and hands its stream events to `on_event` on
/// this one, so that an abort ends the wait at once even while the stream is silent (a
/// server still thinking, a stalled connection): the call is abandoned, and its thread
/// drops the connection at the stream's next event, or ends with it.
pub(super) fn call_model(
    provider: &Arc<dyn Provider>,
    request: Request,
    abort: &AtomicBool,
    on_event: &mut dyn FnMut(&StreamEvent),
) -> Result<Value, LlmError> {
    enum Msg {
        Event(StreamEvent),
        Done(Result<Value, LlmError>),
    }
    /// The unwinding payload that ends an abandoned call's stream.
    struct Abandoned;
    let aborted = || LlmError::Other("Request was aborted".into());
    let (tx, rx) = mpsc::channel();
    let provider = Arc::clone(provider);
    let spawned = std::thread::Builder::new().name("model-call".into()).spawn(move || {
        let events = tx.clone();
        let call = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            provider.complete(&request, &mut |ev: &StreamEvent| {
                if events.send(Msg::Event(ev.clone())).is_err() {
                    // Nobody listens any more: leave the stream (without the panic hook).
                    std::panic::resume_unwind(Box::new(Abandoned));
                }
            })
        }));
        match call {
            Ok(result) => {
                let _ = tx.send(Msg::Done(result));
            }
            Err(payload) if payload.is::<Abandoned>() => {}
            Err(payload) => std::panic::resume_unwind(payload),
        }
    });
    if let Err(e) = spawned {
        return Err(LlmError::Other(format!("could not start the model call: {e}")));
    }
    loop {
        if abort.load(Ordering::SeqCst) {
            return Err(aborted());
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Msg::Event(ev)) => on_event(&ev),
            Ok(Msg::Done(result)) => return result,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(LlmError::Other("the model call ended without a reply".into()))
            }
        }
    }
}
