//! What a reply's parser tells the HTTP provider: the interface between [`super::http`],
//! which sends requests, reads the event stream and retries, and the per-API parsers of
//! [`super::client`], which turn the events into pi's assistant message.

use std::time::Duration;

use super::message::Draft;
use super::provider::{LlmError, StreamEvent};
use super::sse::SseEvent;

/// Whether the reader should go on.
pub(crate) enum Flow {
    Continue,
    /// The reply is complete (`message_stop`, `[DONE]`, or an error event).
    Done,
}

/// Why an attempt produced no message.
pub(crate) enum Attempt {
    /// Worth another attempt.
    Transient {
        reason: String,
        retry_after: Option<Duration>,
        /// Connection-level (no reply at all).
        network: bool,
    },
    /// Trouble after the reply started (cut off, stalled, not an event stream).
    Stream(String),
    /// Not worth retrying.
    Fatal(LlmError),
}

impl Attempt {
    pub(crate) fn transient(reason: String, retry_after: Option<Duration>, network: bool) -> Attempt {
        Attempt::Transient { reason, retry_after, network }
    }

    pub(crate) fn stream(message: String) -> Attempt {
        Attempt::Stream(message)
    }
}

/// A protocol's view of the event stream.
pub(crate) trait StreamParser {
    fn on_event(&mut self, ev: &SseEvent, events: &mut dyn FnMut(&StreamEvent)) -> Result<Flow, Attempt>;
    /// The stream is over (complete or not): the message, or why there is none.
    fn finish(self: Box<Self>) -> Result<Draft, Attempt>;
}
