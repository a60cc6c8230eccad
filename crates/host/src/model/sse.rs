//! Server-sent events as providers stream them: `event: NAME` and `data: ...` lines, an
//! empty line ending each event. Bytes arrive in arbitrary pieces (a line, even a UTF-8
//! character, may be split between two), so the parser keeps what it has not finished.

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event:` name; empty when it had none (OpenAI sends none).
    pub name: String,
    /// Its `data:` lines joined by newlines.
    pub data: String,
}

/// The most bytes one unfinished line may hold: a provider's line is one JSON object, far
/// smaller; a stream that never ends its line is refused rather than held in memory.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Turns pieces of a stream into events.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    name: String,
    data: Vec<String>,
}

impl SseParser {
    /// Takes the next piece; returns the events it completed, or why the stream is
    /// unreadable.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, String> {
        let mut events = Vec::new();
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                if self.line.len() > MAX_LINE_BYTES {
                    return Err(format!(
                        "a line of the stream is longer than {MAX_LINE_BYTES} bytes"
                    ));
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8(line)
                .map_err(|_| "a line of the stream is not UTF-8".to_owned())?;
            if let Some(event) = self.line_done(&line) {
                events.push(event);
            }
        }
        Ok(events)
    }

    /// The event left unfinished when the stream ended without its empty line.
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        let line = String::from_utf8(std::mem::take(&mut self.line)).ok()?;
        let event = self.line_done(line.trim_end_matches('\r'));
        event.or_else(|| self.line_done(""))
    }

    fn line_done(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            if self.data.is_empty() && self.name.is_empty() {
                return None;
            }
            return Some(SseEvent {
                name: std::mem::take(&mut self.name),
                data: std::mem::take(&mut self.data).join("\n"),
            });
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = value.to_owned(),
            "data" => self.data.push(value.to_owned()),
            // Comments (`: ping`), `id` and `retry` mean nothing to a model's answer.
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent {
            name: name.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let stream =
            "event: a\r\ndata: {\"x\":\"é\"}\r\n\r\n: keep-alive\n\ndata: one\ndata: two\n\n";
        let bytes = stream.as_bytes();
        for cut in 0..bytes.len() {
            let mut parser = SseParser::default();
            let mut events = parser.feed(&bytes[..cut]).unwrap();
            events.extend(parser.feed(&bytes[cut..]).unwrap());
            assert_eq!(
                events,
                [event("a", "{\"x\":\"é\"}"), event("", "one\ntwo")],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn an_event_without_its_empty_line_is_given_at_the_end() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b"data: [DONE]").unwrap().is_empty());
        assert_eq!(parser.finish(), Some(event("", "[DONE]")));
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_refused() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b"data: \xff\xfe\n").is_err());
    }
}
