//! The frames every subject is sent, and the check that an answer is the right one.
//!
//! Each call echoes a message unique to its id (`m<id>`), so an answer matches only when its
//! id is the call's and its first text block reads `Echo: m<id>`.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The handshake revision sent by `initialize` and the sessionless header.
pub const HANDSHAKE_VERSION: &str = "2025-11-25";
/// The revision whose requests carry their version and capabilities in `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// Which protocol family a call is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// After an `initialize` handshake (or sessionless HTTP at the handshake revision).
    Handshake,
    /// A 2026-07-28 request: no handshake, `_meta` names version, client and capabilities.
    Stateless,
}

/// The `initialize` request (id 0).
pub fn initialize() -> &'static str {
    concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
        r#""capabilities":{},"clientInfo":{"name":"junction-bench","version":"0.0.0"}}}"#
    )
}

/// The notification that ends the handshake.
pub fn initialized() -> &'static str {
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
}

/// Appends the `tools/call` of `echo` with id `id` to `out` (no newline).
pub fn call(out: &mut Vec<u8>, id: u64, family: Family) {
    let mut text = String::with_capacity(256);
    // Writing to a String cannot fail.
    let _ = write!(
        text,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m{id}"}}"#
    );
    if family == Family::Stateless {
        text.push_str(concat!(
            r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
            r#""io.modelcontextprotocol/clientInfo":{"name":"junction-bench","version":"0.0.0"},"#,
            r#""io.modelcontextprotocol/clientCapabilities":{}}"#
        ));
    }
    text.push_str("}}");
    out.extend_from_slice(text.as_bytes());
}

#[derive(Deserialize)]
struct Answer<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<CallResult<'a>>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<Text<'a>>,
}

#[derive(Deserialize)]
struct Text<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// What one message from a server turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The answer to call `id`, and whether it echoed the right text.
    Answer { id: u64, matched: bool },
    /// An answer with an error, or one whose id is not a number.
    Error(String),
    /// A notification or server request: not an answer.
    Other,
}

/// Judges one JSON message received from a server.
pub fn judge(message: &[u8]) -> Verdict {
    let answer: Answer = match serde_json::from_slice(message) {
        Ok(answer) => answer,
        Err(e) => return Verdict::Error(format!("not JSON-RPC ({e}): {}", lossy(message))),
    };
    let Some(id) = answer.id else {
        return if answer.result.is_some() || answer.error.is_some() {
            Verdict::Error(format!(
                "an answer without a numeric id: {}",
                lossy(message)
            ))
        } else {
            Verdict::Other
        };
    };
    if let Some(error) = answer.error {
        return Verdict::Error(format!("call {id} failed: {}", error.get()));
    }
    let matched = answer
        .result
        .and_then(|r| r.content.into_iter().next())
        .and_then(|t| t.text)
        .is_some_and(|text| {
            text.strip_prefix("Echo: m")
                .is_some_and(|rest| rest.parse() == Ok(id))
        });
    Verdict::Answer { id, matched }
}

/// A message shortened for an error line.
pub fn lossy(message: &[u8]) -> String {
    let text = String::from_utf8_lossy(message);
    text.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_of_the_calls_own_message_matches() {
        let answer =
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: m7"}]}}"#;
        assert_eq!(
            judge(answer),
            Verdict::Answer {
                id: 7,
                matched: true
            }
        );
    }

    #[test]
    fn an_echo_of_another_calls_message_does_not_match() {
        let answer =
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: m8"}]}}"#;
        assert_eq!(
            judge(answer),
            Verdict::Answer {
                id: 7,
                matched: false
            }
        );
    }

    #[test]
    fn an_error_answer_and_a_notification_are_told_apart() {
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
        assert!(matches!(judge(error), Verdict::Error(_)));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(judge(note), Verdict::Other);
    }

    #[test]
    fn a_stateless_call_carries_its_version_in_meta_and_parses() {
        let mut out = Vec::new();
        call(&mut out, 3, Family::Stateless);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            value["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            STATELESS_VERSION
        );
        assert_eq!(value["params"]["arguments"]["message"], "m3");
    }
}
