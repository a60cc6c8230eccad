//! Server-Sent Events: writing events and reading them back incrementally.
//!
//! Only what MCP uses: the `event`, `data`, `id` and `retry` fields. The reader follows the
//! WHATWG event-stream rules: lines end with LF, CRLF or CR; a line starting with `:` is a
//! comment; several `data` lines join with LF; an event is dispatched on a blank line.
//!
//! ```
//! use junction::transport::http::sse::{Event, Parser};
//!
//! let bytes = Event::message("7", br#"{"jsonrpc":"2.0","method":"ping","id":1}"#).encode();
//! let mut parser = Parser::default();
//! let events = parser.feed(&bytes);
//! assert_eq!(events[0].id.as_deref(), Some("7"));
//! assert_eq!(events[0].data, r#"{"jsonrpc":"2.0","method":"ping","id":1}"#);
//! ```

use std::time::Duration;

/// The most bytes of one event (a line, or the `data` lines joined) a reader made with
/// [`Parser::default`] buffers before it gives up on the stream: 16 MiB.
pub const DEFAULT_MAX_EVENT: usize = 16 * 1024 * 1024;

/// One event, as written or as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event` field; `None` means the default type, `message`.
    pub event: Option<String>,
    /// The `data` lines, joined with LF.
    pub data: String,
    /// The `id` field.
    pub id: Option<String>,
    /// The `retry` field: how long a client waits before reconnecting.
    pub retry: Option<Duration>,
}

impl Event {
    /// A `message` event carrying one JSON-RPC message (compact JSON, so one `data` line).
    pub fn message(id: impl Into<String>, json: &[u8]) -> Event {
        Event::carrying(Some(id.into()), json)
    }

    /// The `message` event carrying `json`, with `id` when given.
    fn carrying(id: Option<String>, json: &[u8]) -> Event {
        Event {
            event: Some("message".to_owned()),
            data: String::from_utf8_lossy(json).into_owned(),
            id,
            retry: None,
        }
    }

    /// Whether this is a `message` event (the type MCP messages travel in).
    pub fn is_message(&self) -> bool {
        matches!(self.event.as_deref(), None | Some("message"))
    }

    /// The event in wire form, ending with the blank line that dispatches it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.data.len() + 64);
        if let Some(event) = &self.event {
            push_field(&mut out, "event", event);
        }
        if let Some(id) = &self.id {
            push_field(&mut out, "id", id);
        }
        if let Some(retry) = self.retry {
            push_field(&mut out, "retry", &retry.as_millis().to_string());
        }
        if self.data.is_empty() {
            out.extend_from_slice(b"data: \n");
        }
        for line in self.data.split('\n').filter(|_| !self.data.is_empty()) {
            push_field(&mut out, "data", line.trim_end_matches('\r'));
        }
        out.push(b'\n');
        out
    }
}

/// The `message` event carrying `json` (one MCP message), with `id` when given, in wire
/// form: the bytes `Event::message(id, json).encode()` gives, without first copying the
/// message into an [`Event`]. Compact JSON has no line breaks, so it is one `data` line,
/// copied whole; anything else takes the general path.
pub fn encode_message(id: Option<&str>, json: &[u8]) -> Vec<u8> {
    if std::str::from_utf8(json).is_err() || memchr::memchr2(b'\n', b'\r', json).is_some() {
        return Event::carrying(id.map(str::to_owned), json).encode();
    }
    let mut out = Vec::with_capacity(json.len() + 64);
    out.extend_from_slice(b"event: message\n");
    if let Some(id) = id {
        push_field(&mut out, "id", id);
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    out
}

fn push_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    // Field values cannot hold line breaks; MCP never needs them outside `data`.
    if memchr::memchr2(b'\n', b'\r', value.as_bytes()).is_none() {
        out.extend_from_slice(value.as_bytes());
    } else {
        out.extend(value.bytes().filter(|b| *b != b'\n' && *b != b'\r'));
    }
    out.push(b'\n');
}

/// Why a stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// One line, or one event's `data` lines together, were longer than the reader
    /// accepts.
    #[error("an event-stream event is longer than {limit} bytes")]
    TooLarge {
        /// The reader's limit ([`Parser::with_limit`]).
        limit: usize,
    },
}

/// Reads an event stream chunk by chunk.
#[derive(Debug)]
pub struct Parser {
    line: Vec<u8>,
    /// A CR ended the previous chunk; an LF at the start of the next one belongs to it.
    after_cr: bool,
    current: Event,
    has_data: bool,
    failed: bool,
    limit: usize,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::with_limit(DEFAULT_MAX_EVENT)
    }
}

impl Parser {
    /// A reader that fails once a line, or one event's `data` lines joined, exceed `bytes`:
    /// a peer that never ends a line or an event would otherwise grow it without bound.
    pub fn with_limit(bytes: usize) -> Self {
        Parser {
            line: Vec::new(),
            after_cr: false,
            current: Event::default(),
            has_data: false,
            failed: false,
            limit: bytes,
        }
    }

    /// Feeds bytes; returns the events they completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.try_feed(bytes).unwrap_or_default()
    }

    /// Feeds bytes; fails when a line exceeds the limit (the stream should then be dropped).
    pub fn try_feed(&mut self, mut bytes: &[u8]) -> Result<Vec<Event>, ParseError> {
        let too_large = ParseError::TooLarge { limit: self.limit };
        if self.failed {
            return Err(too_large);
        }
        let mut events = Vec::new();
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&bytes[..end]);
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            bytes = &bytes[next..];
            let line = std::mem::take(&mut self.line);
            if line.len() > self.limit {
                self.failed = true;
                return Err(too_large);
            }
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
            if self.current.data.len() > self.limit {
                self.failed = true;
                return Err(too_large);
            }
        }
        self.line.extend_from_slice(bytes);
        if self.line.len() > self.limit {
            self.failed = true;
            return Err(too_large);
        }
        Ok(events)
    }

    fn take_line(&mut self, line: &[u8]) -> Option<Event> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.current);
            let dispatch = std::mem::take(&mut self.has_data);
            if dispatch {
                return Some(event);
            }
            // An event without data is not dispatched, but its id and retry still count.
            return (event.id.is_some() || event.retry.is_some()).then_some(Event {
                event: Some(String::new()),
                ..event
            });
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (name, value) = match text.find(':') {
            Some(i) => {
                let value = &text[i + 1..];
                (&text[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&*text, ""),
        };
        match name {
            "event" => self.current.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.current.id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.current.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_event_round_trips_with_id_retry_and_empty_data() {
        let primed = Event {
            event: None,
            data: String::new(),
            id: Some("0-0".into()),
            retry: Some(Duration::from_millis(500)),
        };
        let bytes = primed.encode();
        assert_eq!(bytes, b"id: 0-0\nretry: 500\ndata: \n\n");
        let got = Parser::default().feed(&bytes);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id.as_deref(), Some("0-0"));
        assert_eq!(got[0].retry, Some(Duration::from_millis(500)));
        assert!(got[0].data.is_empty());
    }

    #[test]
    fn encode_message_writes_what_an_encoded_message_event_is() {
        let cases: [&[u8]; 5] = [
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            b"",
            b"{\"a\":\n1}\r\n",
            b"line\rbreak",
            b"not \xff utf-8",
        ];
        for json in cases {
            for id in [None, Some("3-1"), Some("bad\nid")] {
                let general = match id {
                    Some(id) => Event::message(id, json),
                    None => Event {
                        id: None,
                        ..Event::message("", json)
                    },
                };
                assert_eq!(
                    encode_message(id, json),
                    general.encode(),
                    "{:?} with id {id:?}",
                    String::from_utf8_lossy(json)
                );
            }
        }
        assert_eq!(
            encode_message(Some("0-1"), b"{}"),
            b"event: message\nid: 0-1\ndata: {}\n\n"
        );
    }

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let mut p = Parser::default();
        let mut got = p.feed(b"event: message\r");
        got.extend(p.feed(b"\ndata: {\"a\"\r\ndata: :1}\r"));
        got.extend(p.feed(b"\r: comment\nid: 9\n"));
        got.extend(p.feed(b"data: x\n\n"));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].data, "{\"a\"\n:1}");
        assert!(got[0].is_message());
        assert_eq!(got[1].id.as_deref(), Some("9"));
        assert_eq!(got[1].data, "x");
    }

    #[test]
    fn an_id_only_event_reports_its_id_but_is_not_a_message() {
        let got = Parser::default().feed(b"id: 4\n\n");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id.as_deref(), Some("4"));
        assert!(!got[0].is_message());
    }

    /// The attack: `data:` lines for ever, never a blank line, joined into one event that
    /// grew without bound (each line was bounded, their sum was not).
    #[test]
    fn an_event_that_never_ends_fails_at_the_limit() {
        let mut parser = Parser::with_limit(1000);
        let line = format!("data: {}\n", "x".repeat(90));
        let mut fed = 0;
        let err = loop {
            match parser.try_feed(line.as_bytes()) {
                Ok(events) => assert!(events.is_empty()),
                Err(e) => break e,
            }
            fed += 1;
            assert!(fed < 100, "the event grew past its limit");
        };
        assert_eq!(err, ParseError::TooLarge { limit: 1000 });
        assert!(fed * 91 <= 1100, "{fed} lines were kept");
        assert!(parser.try_feed(b"\n").is_err(), "the stream stays failed");
    }

    #[test]
    fn a_line_longer_than_the_limit_fails_whether_or_not_it_ends() {
        let long = vec![b'a'; 101];
        assert!(Parser::with_limit(100).try_feed(&long).is_err());
        let mut ended = long.clone();
        ended.push(b'\n');
        assert!(Parser::with_limit(100).try_feed(&ended).is_err());
        assert_eq!(Parser::with_limit(101).feed(b"data: 1\n\n").len(), 1);
    }
}
