//! The stateless family (revision 2026-07-28): what it adds to the model.
//!
//! There is no `initialize`: each request carries the version, the client's capabilities and
//! (optionally) its identity in `_meta` under the keys below; `server/discover` tells what a
//! server supports; every result carries `resultType`, where `input_required` replaces
//! server→client requests (the client retries with `inputResponses`).
//!
//! ```
//! use junction_protocol::stateless::ResultType;
//! // A result from an older server has no `resultType`: it is complete.
//! assert_eq!(ResultType::of(None), ResultType::Complete);
//! assert_eq!(ResultType::of(Some("input_required")), ResultType::InputRequired);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capabilities::ServerCapabilities;
use crate::meta::{Meta, RequestMeta};
use crate::request;

/// `_meta` key: the protocol version of this request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level wanted for this request (no logs without it).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of results: the server's identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of notifications: the subscription they belong to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `resultType`: how to read a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultType {
    /// An ordinary, final result (also what an absent `resultType` means).
    Complete,
    /// The server needs input first; see [`InputRequiredResult`].
    InputRequired,
    /// A type this crate does not know.
    Other(String),
}

impl ResultType {
    /// Reads a `resultType` member, absent meaning `complete`.
    pub fn of(member: Option<&str>) -> Self {
        match member {
            None | Some("complete") => ResultType::Complete,
            Some("input_required") => ResultType::InputRequired,
            Some(other) => ResultType::Other(other.to_owned()),
        }
    }

    /// The string on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }
}

/// The result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoverResult {
    /// The revisions the server speaks.
    #[serde(rename = "supportedVersions")]
    pub supported_versions: Vec<String>,
    /// What it supports.
    pub capabilities: ServerCapabilities,
    /// Hints for the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the answer may be cached, in milliseconds.
    #[serde(rename = "ttlMs")]
    pub ttl_ms: u64,
    /// `public` or `private`.
    #[serde(rename = "cacheScope")]
    pub cache_scope: String,
    /// `resultType`.
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<String>,
    /// `_meta` (carries the server's identity).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The params of `server/discover`: only `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscoverParams {
    /// `_meta`, with the version and capabilities keys.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// One request the server needs answered before it can finish (sampling, roots or
/// elicitation), in `{method, params}` form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `sampling/createMessage`, `roots/list` or `elicitation/create`.
    pub method: String,
    /// Its params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// `resultType: "input_required"`: answer `inputRequests` and retry with a new id, sending
/// the answers as `inputResponses` and echoing `requestState`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputRequiredResult {
    /// What the server asks, by key.
    #[serde(
        rename = "inputRequests",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque state to echo back.
    #[serde(
        rename = "requestState",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_state: Option<String>,
    /// `resultType`: `input_required`.
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

request!(
    /// `server/discover` (2026-07-28): versions, capabilities and identity of a server.
    Discover, "server/discover", DiscoverParams, DiscoverResult
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn discover_result_round_trips() {
        let wire = json!({
            "supportedVersions": ["2025-11-25", "2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 60000, "cacheScope": "public", "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        });
        let r: DiscoverResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            ResultType::of(r.result_type.as_deref()),
            ResultType::Complete
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn input_required_round_trips() {
        let wire = json!({
            "resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}}}},
            "requestState": "opaque"
        });
        let r: InputRequiredResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            ResultType::of(r.result_type.as_deref()),
            ResultType::InputRequired
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(ResultType::of(Some("later")).as_str(), "later");
    }
}
