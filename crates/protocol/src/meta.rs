//! `_meta` and the small shared pieces every params and result type uses.

use crate::result_tail::wire_result;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A `_meta` object: reserved and implementation-defined keys, kept verbatim.
pub type Meta = Map<String, Value>;

/// A progress token: a string or an integer chosen by the requester.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

/// An opaque pagination cursor.
pub type Cursor = String;

/// The `_meta` of a request's params: the progress token plus any other keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RequestMeta {
    /// Asks the receiver for `notifications/progress` carrying this token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// Every other key, kept as it came.
    #[serde(flatten)]
    pub extra: Meta,
}

/// Written by hand: `#[serde(flatten)]` would buffer every key of every request's `_meta`
/// (a 2026-07-28 request carries its version, client and capabilities there) before
/// reading it a second time into `extra`.
impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RequestMeta;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a `_meta` object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RequestMeta, A::Error> {
                let mut meta = RequestMeta::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "progressToken" {
                        if meta.progress_token.is_some() {
                            return Err(serde::de::Error::duplicate_field("progressToken"));
                        }
                        meta.progress_token = map.next_value()?;
                    } else {
                        let value = map.next_value()?;
                        meta.extra.insert(key, value);
                    }
                }
                Ok(meta)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl RequestMeta {
    /// A `_meta` asking for progress notifications with `token`.
    pub fn with_progress_token(token: impl Into<ProgressToken>) -> Self {
        RequestMeta {
            progress_token: Some(token.into()),
            extra: Meta::new(),
        }
    }
}

/// Params that carry nothing but `_meta` (ping, list_changed notifications, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmptyParams {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

wire_result! {
    /// A result with no members but `_meta` and whatever a peer adds (`{}` on the wire).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct EmptyResult {

    }
}

/// The params of a notification that carries nothing but `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NotificationParams {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The params of a paginated list request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PaginatedParams {
    /// Where to continue, from the previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl PaginatedParams {
    /// The page after `cursor` (the previous page's `nextCursor`).
    pub fn after(cursor: impl Into<Cursor>) -> Self {
        PaginatedParams {
            cursor: Some(cursor.into()),
            meta: None,
        }
    }
}

/// `task` in request params: run the request as a task (2025-11-25, experimental).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskMetadata {
    /// The requested lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

impl TaskMetadata {
    /// Asks for a task, kept `ttl` milliseconds after creation when given (else as long as
    /// the receiver chooses).
    pub fn new(ttl: Option<u64>) -> Self {
        TaskMetadata { ttl }
    }

    /// Asks for a task kept `ttl` milliseconds after creation.
    pub fn with_ttl(ttl: u64) -> Self {
        TaskMetadata { ttl: Some(ttl) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_result_keeps_unknown_members_and_result_type() {
        let wire = json!({"resultType": "complete", "_meta": {"a": 1}, "vendor": [1]});
        let r: EmptyResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.result_type, Some(crate::stateless::ResultType::Complete));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(
            serde_json::to_value(EmptyResult::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn request_meta_and_pagination() {
        let p = PaginatedParams {
            meta: Some(RequestMeta::with_progress_token(3)),
            ..PaginatedParams::after("c2")
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"cursor": "c2", "_meta": {"progressToken": 3}})
        );
        let m: RequestMeta =
            serde_json::from_value(json!({"progressToken": "t", "io.example/x": true})).unwrap();
        assert_eq!(m.progress_token, Some(ProgressToken::from("t")));
        assert_eq!(m.extra.get("io.example/x"), Some(&json!(true)));
        assert_eq!(
            serde_json::to_value(PaginatedParams::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn request_meta_reads_from_text_as_it_writes_and_refuses_a_bad_token() {
        let text = r#"{"io.example/a":{"b":[1,"c"]},"progressToken":7,"z":null}"#;
        let m: RequestMeta = serde_json::from_str(text).unwrap();
        assert_eq!(m.progress_token, Some(ProgressToken::from(7)));
        assert_eq!(m.extra.len(), 2);
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        let none: RequestMeta = serde_json::from_str(r#"{"progressToken":null}"#).unwrap();
        assert_eq!(none, RequestMeta::default());
        assert!(serde_json::from_str::<RequestMeta>(r#"{"progressToken":{}}"#).is_err());
        assert!(
            serde_json::from_str::<RequestMeta>(r#"{"progressToken":1,"progressToken":2}"#)
                .is_err()
        );
        assert!(serde_json::from_str::<RequestMeta>("[]").is_err());
    }
}
