//! An incremental server-sent-events decoder (the WHATWG `text/event-stream` rules, as
//! pi-ai's `iterateSseMessages` applies them): bytes go in as they arrive, complete events
//! come out. Lines end in `\n`, `\r\n` or `\r`; `data:` lines of one event are joined with
//! `\n`; comment lines (`:`) are skipped; a blank line ends an event; text after the last
//! blank line still makes an event at the end of the stream.

/// One event: its `event:` name (if any) and its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line being read (UTF-8 is decoded per line, so a character split
    /// between two reads stays whole).
    line: Vec<u8>,
    /// The previous byte was `\r`: a following `\n` belongs to the same line break.
    after_cr: bool,
    event: Option<String>,
    data: Vec<String>,
    /// The event has at least one field line.
    started: bool,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(e) = self.line_done(&line) {
                        out.push(e);
                    }
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// The end of the stream: the unfinished line and event, if any.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            if let Some(e) = self.line_done(&line) {
                return Some(e);
            }
        }
        self.flush()
    }

    fn line_done(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.flush();
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.find(':') {
            Some(i) => (&text[..i], text[i + 1..].strip_prefix(' ').unwrap_or(&text[i + 1..])),
            None => (&text[..], ""),
        };
        match field {
            "event" => {
                self.event = Some(value.to_string());
                self.started = true;
            }
            "data" => {
                self.data.push(value.to_string());
                self.started = true;
            }
            _ => {}
        }
        None
    }

    fn flush(&mut self) -> Option<SseEvent> {
        if !self.started {
            return None;
        }
        self.started = false;
        let data = std::mem::take(&mut self.data).join("\n");
        Some(SseEvent { event: self.event.take(), data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| d.push(c)).collect();
        out.extend(d.finish());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent { event: event.map(str::to_string), data: data.into() }
    }

    #[test]
    fn events_data_and_comments() {
        let s = b": keep-alive\n\nevent: ping\ndata: {}\n\ndata: a\ndata:b\n\nid: 7\nretry: 10\n\n";
        assert_eq!(all(&[s]), vec![ev(Some("ping"), "{}"), ev(None, "a\nb")]);
    }

    #[test]
    fn any_split_and_line_ending() {
        let text = "event: x\r\ndata: héllo\r\n\r\ndata: [DONE]\r\rdata: tail";
        let bytes = text.as_bytes();
        let expected = vec![ev(Some("x"), "héllo"), ev(None, "[DONE]"), ev(None, "tail")];
        for cut in 0..bytes.len() {
            assert_eq!(all(&[&bytes[..cut], &bytes[cut..]]), expected, "split at {cut}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(all(&singles), expected);
    }

    #[test]
    fn field_without_colon_and_empty_stream() {
        assert_eq!(all(&[b"data\n\n"]), vec![ev(None, "")]);
        assert_eq!(all(&[b""]), vec![]);
        assert_eq!(all(&[b"\n\n\n"]), vec![]);
    }
}
