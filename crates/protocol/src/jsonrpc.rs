//! JSON-RPC 2.0 framing: the envelope every MCP message travels in.
//!
//! A frame is decoded once into a [`Message`]; the `params` and `result` members are kept as
//! raw JSON text ([`RawValue`]) so that the typed structure behind them is parsed exactly once,
//! by whoever knows its type (see [`crate::method`]).
//!
//! [`Message::decode`] classifies a frame the way the specification asks:
//! invalid JSON is a parse error (-32700); valid JSON that is not a request, notification or
//! response (wrong `jsonrpc`, no `method`, an array batch, a `null` or `-0` id) is an invalid
//! request (-32600), reported with the request id whenever that id could be read. The one
//! message with a `null` id that is valid is an error response: a peer's answer to a message
//! it could not read, which must not be answered in turn.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{ErrorCode, ErrorObject};

/// The only JSON-RPC version MCP uses.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, never `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id (what Junction itself sends).
    Number(i64),
    /// A string id.
    String(String),
}

/// Read by its JSON type, not as an untagged enum: that buffered every id of every message
/// into serde's `Content` first.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<RequestId, E> {
                i64::try_from(n)
                    .map(RequestId::Number)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(n), &self))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<RequestId, E> {
                Ok(RequestId::String(s))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// A request: expects exactly one response with the same id.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, for example `tools/call`.
    pub method: String,
    /// The parameters, as raw JSON text (an object when present).
    pub params: Option<Box<RawValue>>,
}

/// A notification: no id, and never answered.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name, for example `notifications/progress`.
    pub method: String,
    /// The parameters, as raw JSON text.
    pub params: Option<Box<RawValue>>,
}

/// A response: the result or the error of one request.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request this answers; `None` only for an error about a request whose id
    /// could not be read.
    pub id: Option<RequestId>,
    /// The result (raw JSON text) or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

/// Any JSON-RPC message MCP allows.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

/// Why a frame is not a usable message, and the error response it deserves.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The id of the offending message, when it could be read.
    pub id: Option<RequestId>,
    /// The error to answer with (-32700 or -32600).
    pub error: ErrorObject,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)
    }
}

impl std::error::Error for DecodeError {}

impl Message {
    /// Decodes one frame (one line on stdio, one POST body on HTTP).
    pub fn decode(frame: &[u8]) -> Result<Message, DecodeError> {
        let text = std::str::from_utf8(frame).map_err(|e| DecodeError {
            id: None,
            error: ErrorObject::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: the message is not valid UTF-8 ({e})"),
            ),
        })?;
        let envelope: Envelope = match serde_json::from_str(text) {
            Ok(envelope) => envelope,
            Err(e) => return Err(classify_serde_error(text, e)),
        };
        envelope.into_message()
    }

    /// Encodes the message as compact JSON (no embedded newlines), ready for any transport.
    pub fn encode(&self) -> Vec<u8> {
        // Serializing this type cannot fail: every member is already valid JSON.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

impl Response {
    /// A successful response.
    pub fn ok(id: RequestId, result: Box<RawValue>) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    /// An error response.
    pub fn err(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }
}

/// The id of the response that `prefix`, the start of a message too large to read whole,
/// begins: its top-level members are read in order until `result` or `error` starts, which
/// works whenever `id` comes before them (as Junction, the TypeScript and the Python SDKs
/// write it). `None` when the prefix shows a request or notification, or no id in time.
///
/// ```
/// use junction_protocol::jsonrpc::{peek_response_id, RequestId};
///
/// let start = br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"#;
/// assert_eq!(peek_response_id(start), Some(RequestId::Number(7)));
/// assert_eq!(peek_response_id(br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"#), None);
/// ```
pub fn peek_response_id(prefix: &[u8]) -> Option<RequestId> {
    struct Peek<'a>(&'a mut Option<RequestId>);
    impl<'de> Visitor<'de> for Peek<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON-RPC message object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut id = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "id" => id = Some(map.next_value::<RequestId>()?),
                    "result" | "error" => {
                        *self.0 = id;
                        return Ok(());
                    }
                    "method" => return Ok(()),
                    _ => {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }
    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_slice(prefix);
    // The prefix is cut short, so the parse itself fails; what it saw on the way counts.
    let _ = deserializer.deserialize_map(Peek(&mut found));
    found
}

/// Serializes a value to raw JSON text, for `params` or `result`.
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// The raw JSON text of an empty object, `{}`.
pub fn empty_object() -> Box<RawValue> {
    // `{}` is always valid JSON, so the fallback is never taken.
    RawValue::from_string("{}".to_owned()).unwrap_or_default()
}

/// When serde rejects the text, tell apart "not JSON" from "JSON of the wrong shape".
fn classify_serde_error(text: &str, err: serde_json::Error) -> DecodeError {
    use serde_json::error::Category;
    match err.classify() {
        Category::Syntax | Category::Eof | Category::Io => DecodeError {
            id: None,
            error: ErrorObject::new(ErrorCode::PARSE_ERROR, format!("Parse error: {err}")),
        },
        Category::Data => {
            // The envelope can fail on its shape before serde has read the whole text, so a
            // frame that is not JSON at all (`[1,`, `{"method":3,`) lands here too: it is a
            // parse error, not an invalid request.
            let Ok(value) = serde_json::from_str::<Value>(text) else {
                return DecodeError {
                    id: None,
                    error: ErrorObject::new(
                        ErrorCode::PARSE_ERROR,
                        "Parse error: the message is not valid JSON",
                    ),
                };
            };
            let value = Some(value);
            // Valid JSON of the wrong shape: read what id we can so the error reaches the sender.
            let id = value
                .as_ref()
                .and_then(|v| v.get("id"))
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            let message = match &value {
                Some(Value::Array(_)) => {
                    "Invalid request: JSON-RPC batches are not supported; send one message at a time"
                        .to_owned()
                }
                Some(Value::Object(_)) => format!("Invalid request: {err}"),
                _ => "Invalid request: a message must be a JSON object".to_owned(),
            };
            DecodeError {
                id,
                error: ErrorObject::new(ErrorCode::INVALID_REQUEST, message),
            }
        }
    }
}

/// The union of every member a JSON-RPC message may have, read in one pass. The id is
/// borrowed from the frame: it is read into a [`RequestId`] once its shape is judged.
struct Envelope<'a> {
    /// Whether `jsonrpc` was the string `"2.0"` (`None`: absent).
    jsonrpc: Option<bool>,
    id: Option<&'a RawValue>,
    method: Option<String>,
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<Value>,
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EnvelopeVisitor;
        impl<'de> Visitor<'de> for EnvelopeVisitor {
            type Value = Envelope<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
                let mut env = Envelope {
                    jsonrpc: None,
                    id: None,
                    method: None,
                    params: None,
                    result: None,
                    error: None,
                };
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Jsonrpc => env.jsonrpc = Some(map.next_value::<IsVersion>()?.0),
                        Key::Id => env.id = Some(map.next_value()?),
                        Key::Method => env.method = Some(map.next_value::<MethodName>()?.0),
                        Key::Params => env.params = Some(map.next_value()?),
                        Key::Result => env.result = Some(map.next_value()?),
                        Key::Error => env.error = Some(map.next_value()?),
                        Key::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(env)
            }
        }
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

/// A member name of the envelope, read without allocating.
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "jsonrpc" => Key::Jsonrpc,
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// The `method` member: a string, read straight into its `String`.
struct MethodName(String);

impl<'de> Deserialize<'de> for MethodName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MethodVisitor;
        impl Visitor<'_> for MethodVisitor {
            type Value = MethodName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`method` to be a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MethodName, E> {
                Ok(MethodName(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<MethodName, E> {
                Ok(MethodName(v))
            }
        }
        deserializer.deserialize_string(MethodVisitor)
    }
}

/// Whether a `jsonrpc` member is the string `"2.0"`; any other value reads as `false`.
struct IsVersion(bool);

impl<'de> Deserialize<'de> for IsVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;
        impl<'de> Visitor<'de> for VersionVisitor {
            type Value = IsVersion;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IsVersion, E> {
                Ok(IsVersion(v == JSONRPC_VERSION))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<IsVersion, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(IsVersion(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IsVersion, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(IsVersion(false))
            }
        }
        deserializer.deserialize_any(VersionVisitor)
    }
}

impl Envelope<'_> {
    fn into_message(self) -> Result<Message, DecodeError> {
        let null_id = self.id.as_ref().is_some_and(|raw| raw.get() == "null");
        let id = match &self.id {
            None => None,
            // A peer that could not read our message answers with an error whose id is null;
            // that is a response (answering it would start an endless exchange of errors).
            Some(_) if null_id && self.error.is_some() && self.method.is_none() => None,
            Some(raw) => Some(request_id(raw).ok_or_else(|| {
                invalid(None, "`id` must be a string or an integer (and never null)")
            })?),
        };
        if self.jsonrpc != Some(true) {
            return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
        }
        if let Some(params) = &self.params {
            if !params.get().trim_start().starts_with('{') {
                return Err(invalid(id, "`params` must be an object"));
            }
        }
        match (self.method, self.result, self.error) {
            (Some(method), None, None) => match id {
                Some(id) => Ok(Message::Request(Request {
                    id,
                    method,
                    params: self.params,
                })),
                None if null_id => Err(invalid(None, "`id` must not be null")),
                None => Ok(Message::Notification(Notification {
                    method,
                    params: self.params,
                })),
            },
            (None, Some(result), None) => match id {
                Some(id) => Ok(Message::Response(Response::ok(id, result))),
                None => Err(invalid(None, "a response must carry the id of its request")),
            },
            (None, None, Some(error)) => {
                let error: ErrorObject = serde_json::from_value(error)
                    .map_err(|e| invalid(id.clone(), &format!("malformed `error` member: {e}")))?;
                Ok(Message::Response(Response {
                    id,
                    outcome: Err(error),
                }))
            }
            (None, None, None) => Err(invalid(
                id,
                "a message needs `method` (request or notification), `result` or `error`",
            )),
            _ => Err(invalid(
                id,
                "a message must have exactly one of `method`, `result` and `error`",
            )),
        }
    }
}

/// A request id from its JSON text: a string, or an integer written as one. `-0` is refused:
/// it is no integer distinct from `0`, and an answer carrying `0` would not match its text.
fn request_id(raw: &RawValue) -> Option<RequestId> {
    if raw.get() == "-0" {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

fn invalid(id: Option<RequestId>, why: &str) -> DecodeError {
    DecodeError {
        id,
        error: ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {why}"),
        ),
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => {
                let mut s = serializer.serialize_struct("Request", 4)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                s.serialize_field("id", &r.id)?;
                s.serialize_field("method", &r.method)?;
                if let Some(p) = &r.params {
                    s.serialize_field("params", p)?;
                }
                s.end()
            }
            Message::Notification(n) => {
                let mut s = serializer.serialize_struct("Notification", 3)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                s.serialize_field("method", &n.method)?;
                if let Some(p) = &n.params {
                    s.serialize_field("params", p)?;
                }
                s.end()
            }
            Message::Response(r) => {
                let mut s = serializer.serialize_struct("Response", 3)?;
                s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
                if let Some(id) = &r.id {
                    s.serialize_field("id", id)?;
                }
                match &r.outcome {
                    Ok(result) => s.serialize_field("result", result)?,
                    Err(error) => s.serialize_field("error", error)?,
                }
                s.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(frame: &str) -> (Option<RequestId>, i32) {
        let err = Message::decode(frame.as_bytes()).expect_err("should be rejected");
        (err.id, err.error.code.0)
    }

    #[test]
    fn decodes_each_kind() {
        let m = Message::decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(
            m,
            Message::Request(Request {
                id: RequestId::Number(1),
                ..
            })
        ));
        let m =
            Message::decode(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        let m = Message::decode(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(
            m,
            Message::Response(Response { outcome: Ok(_), .. })
        ));
        let m =
            Message::decode(br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}"#)
                .unwrap();
        assert!(matches!(
            m,
            Message::Response(Response {
                outcome: Err(_),
                ..
            })
        ));
    }

    #[test]
    fn classifies_bad_frames() {
        assert_eq!(code("{not json"), (None, -32700));
        assert_eq!(code(""), (None, -32700));
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#),
            (Some(3.into()), -32600)
        );
        assert_eq!(
            code(r#"{"id":4,"method":"ping"}"#),
            (Some(4.into()), -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":5}"#),
            (Some(5.into()), -32600)
        );
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#),
            (None, -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (None, -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":7,"method":3}"#),
            (Some(7.into()), -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":8,"method":"x","params":[1]}"#),
            (Some(8.into()), -32600)
        );
        assert_eq!(code("42"), (None, -32600));
        let invalid_utf8 = [b'{', 0xff, b'}'];
        assert_eq!(
            Message::decode(&invalid_utf8).unwrap_err().error.code.0,
            -32700
        );
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error_whatever_its_start() {
        for frame in [
            "[1,",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,",
            "\"unterminated",
            "tru",
            r#"{"jsonrpc":"2.0","id":7,"method":3,"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
        ] {
            assert_eq!(code(frame), (None, -32700), "{frame}");
        }
    }

    #[test]
    fn an_error_response_with_a_null_id_is_a_response_not_an_invalid_request() {
        let m = Message::decode(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        )
        .unwrap();
        assert!(matches!(
            m,
            Message::Response(Response {
                id: None,
                outcome: Err(ErrorObject {
                    code: ErrorCode::PARSE_ERROR,
                    ..
                }),
            })
        ));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            (None, -32600)
        );
    }

    #[test]
    fn minus_zero_is_not_an_integer_id() {
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#).1,
            -32600
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            (None, -32600)
        );
        let m = Message::decode(br#"{"jsonrpc":"2.0","id":-3,"method":"ping"}"#).unwrap();
        assert!(matches!(
            m,
            Message::Request(Request {
                id: RequestId::Number(-3),
                ..
            })
        ));
    }

    #[test]
    fn an_id_is_read_by_its_json_type() {
        let id = |text: &str| serde_json::from_str::<RequestId>(text).ok();
        assert_eq!(id("9223372036854775807"), Some(RequestId::Number(i64::MAX)));
        assert_eq!(
            id("-9223372036854775808"),
            Some(RequestId::Number(i64::MIN))
        );
        assert_eq!(id(r#""a\"b""#), Some(RequestId::from("a\"b")));
        assert_eq!(id(r#""""#), Some(RequestId::from("")));
        for bad in [
            "9223372036854775808",
            "1e3",
            "true",
            "null",
            "[1]",
            r#"{"a":1}"#,
        ] {
            assert_eq!(id(bad), None, "{bad}");
        }
        // Values already decoded (as the client reads them back) take the same path.
        let value = serde_json::json!("x");
        assert_eq!(
            RequestId::deserialize(&value).ok(),
            Some(RequestId::from("x"))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#),
            (None, -32600)
        );
    }

    #[test]
    fn the_id_of_a_cut_response_is_read_from_its_start() {
        let cut = br#"{"jsonrpc":"2.0","id":"a-1","error":{"code":1,"message":"xxxx"#;
        assert_eq!(peek_response_id(cut), Some(RequestId::from("a-1")));
        assert_eq!(peek_response_id(br#"{"result":{"x":1},"id":3"#), None);
        assert_eq!(peek_response_id(br#"{"jsonrpc":"2.0","id":3"#), None);
        assert_eq!(peek_response_id(b"\xff\xfe"), None);
        assert_eq!(peek_response_id(br#"[{"id":1,"result":"#), None);
    }

    #[test]
    fn encodes_compactly_and_round_trips() {
        let m = Message::Request(Request {
            id: 9.into(),
            method: "tools/call".into(),
            params: Some(to_raw(&serde_json::json!({"name": "a\nb"})).unwrap()),
        });
        let bytes = m.encode();
        assert!(!bytes.contains(&b'\n'));
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a\nb"}})
        );
        let err = Message::Response(Response::err(
            None,
            ErrorObject::new(ErrorCode::PARSE_ERROR, "bad"),
        ));
        let back: Value = serde_json::from_slice(&err.encode()).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}})
        );
    }
}
