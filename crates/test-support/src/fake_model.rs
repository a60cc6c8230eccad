//! A stand-in for a model provider's API on 127.0.0.1: it records each request's JSON body
//! and answers with the next of its queued answers, whole or as server-sent events, the
//! way the Anthropic Messages and OpenAI Chat Completions APIs answer (hosts.md section 7).
//! Plain threads and sockets, so that a test drives the `junction` binary against it
//! without a runtime.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// One answer: a status, a content type and a body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The `content-type` header.
    pub content_type: &'static str,
    /// The body, sent whole.
    pub body: String,
    /// Sends the body and then nothing more, holding the answer open, as a model stream
    /// that stalls midway.
    pub stalls: bool,
}

impl Answer {
    /// `200` with a JSON body.
    pub fn json(body: Value) -> Answer {
        Answer {
            status: 200,
            content_type: "application/json",
            body: body.to_string(),
            stalls: false,
        }
    }

    /// `200` with `events` as a `text/event-stream`: each `(name, data)` one event.
    pub fn events(events: &[(&str, Value)]) -> Answer {
        let mut body = String::new();
        for (name, data) in events {
            if !name.is_empty() {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Answer {
            status: 200,
            content_type: "text/event-stream",
            body,
            stalls: false,
        }
    }

    /// This answer's start, then no more: the stream stays open without its end.
    pub fn stalled(self) -> Answer {
        Answer {
            stalls: true,
            ..self
        }
    }

    /// `200` with raw `text/event-stream` text, e.g. OpenAI's closing `data: [DONE]`.
    pub fn raw_events(body: String) -> Answer {
        Answer {
            status: 200,
            content_type: "text/event-stream",
            body,
            stalls: false,
        }
    }
}

/// The events that open an Anthropic text reply, its first text delta `text` included.
fn anthropic_opening(text: &str) -> Vec<(&'static str, Value)> {
    use serde_json::json;
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 11, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
    ]
}

/// The Anthropic answer of one text reply, as the stream of events the API sends.
pub fn anthropic_text(text: &str) -> Answer {
    use serde_json::json;
    let (first, second) = text.split_at(text.len() / 2);
    let mut events = anthropic_opening(first);
    events.extend([
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": second}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 7}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    Answer::events(&events)
}

/// The start of an Anthropic text reply whose text so far is `text`: it stalls there.
pub fn anthropic_partial(text: &str) -> Answer {
    Answer::events(&anthropic_opening(text)).stalled()
}

#[derive(Default)]
struct State {
    received: Vec<Value>,
    answers: VecDeque<Answer>,
}

/// The fake API; it serves until the test ends.
pub struct FakeModel {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl FakeModel {
    /// Starts serving `answers`, in order; a request beyond them gets a 418.
    pub fn start(answers: Vec<Answer>) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            received: Vec::new(),
            answers: answers.into(),
        }));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        FakeModel { base, state }
    }

    /// The JSON bodies received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        self.state.lock().unwrap().received.clone()
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let answer = {
        let mut state = state.lock().unwrap();
        state
            .received
            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
        state.answers.pop_front()
    };
    let answer = answer.unwrap_or(Answer {
        status: 418,
        content_type: "application/json",
        body: r#"{"error":{"message":"the fake API has no answer left"}}"#.to_owned(),
        stalls: false,
    });
    let mut stream = reader.into_inner();
    if answer.stalls {
        // No length: the client reads until the connection ends, which it never does.
        let head = format!(
            "HTTP/1.1 {} Fake\r\ncontent-type: {}\r\nconnection: close\r\n\r\n",
            answer.status, answer.content_type
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(answer.body.as_bytes());
        let _ = stream.flush();
        // Held until the client goes away (a read then ends).
        let _ = stream.read(&mut [0u8; 1]);
        return;
    }
    let head = format!(
        "HTTP/1.1 {} Fake\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        answer.status,
        answer.content_type,
        answer.body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(answer.body.as_bytes());
    let _ = stream.flush();
}
