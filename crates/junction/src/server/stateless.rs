//! Serving the stateless family (revision 2026-07-28) from the same [`super::Server`].
//!
//! A request whose `_meta` carries `io.modelcontextprotocol/protocolVersion` is served
//! without `initialize`: its version, `clientCapabilities`, `clientInfo` and `logLevel`
//! stand in for a negotiated session for that request only ([`super::Context::client`]
//! reflects them). A connection that completed the handshake keeps following it; one that
//! served stateless requests refuses `initialize`.
//!
//! Results on 2026-07-28 carry `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`;
//! lists, `resources/read` and `server/discover` carry `ttlMs` and `cacheScope`.
//!
//! # Multi round-trip requests (MRTR)
//!
//! On 2026-07-28, [`super::Context::create_message`], [`super::Context::elicit`] and
//! [`super::Context::list_roots`] send nothing to the client. The n-th such call of a
//! handler run (counting from 0) has the key `input-n`. When the retried request carries an
//! answer for that key (in `inputResponses`, or in the `requestState` this server produced
//! for an earlier round), the call returns it; the first call without one ends the run, and
//! the client gets an `input_required` result asking for it. The client then retries the
//! request with a new id, and the handler runs again from the start.
//!
//! **Rule for handlers:** a handler must be deterministic up to its input requests (the same
//! arguments and answers lead to the same input requests in the same order), and must not
//! have side effects before its last input request that would be wrong to repeat. Anything
//! else a handler wants to carry across rounds has to be recomputed.
//!
//! `requestState` holds the answers of earlier rounds, tagged with a keyed hash (a per-server
//! random key) over the method, the target (tool or prompt name, resource URI) and the
//! answers: a state this server did not produce for this request is refused with -32602.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use junction_protocol::capabilities::ClientCapabilities;
use junction_protocol::error::ErrorCode;
use junction_protocol::lifecycle::Implementation;
use junction_protocol::logging::LoggingLevel;
use junction_protocol::meta::RequestMeta;
use junction_protocol::stateless::{
    InputRequest, InputRequiredResult, InputResponses, StatelessMeta, META_PROTOCOL_VERSION,
    META_SERVER_INFO,
};
use junction_protocol::{ErrorObject, ProtocolVersion};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::lifecycle::Negotiated;
use crate::sync::lock;

/// Methods of the handshake family that 2026-07-28 removed.
pub(super) const REMOVED: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Methods whose results are cacheable (`ttlMs`, `cacheScope`).
pub(super) const CACHEABLE: [&str; 5] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
];

/// The members of a request's params this module reads.
#[derive(Deserialize, Default)]
struct Envelope {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<InputResponses>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
}

/// One stateless request: who the client is for this request, and its rounds.
pub(super) struct Call {
    /// The client as this request describes it.
    pub(super) client: Negotiated,
    /// The log level asked for (none: no log messages).
    pub(super) log_level: Option<LoggingLevel>,
    /// The input rounds of this request.
    pub(super) rounds: Rounds,
}

/// `UnsupportedProtocolVersion` (-32022) for `requested`.
pub(super) fn unsupported_version(requested: &str) -> ErrorObject {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {requested:?} in `_meta[\"{META_PROTOCOL_VERSION}\"]`: requests without `initialize` must use 2026-07-28; the handshake revisions are negotiated with `initialize`"
        ),
    )
    .with_data(json!({"supported": supported, "requested": requested}))
}

/// Reads the stateless members of a request's params: `None` when the request carries no
/// protocol version in `_meta` (a handshake-family request).
pub(super) fn read(
    raw: Option<&RawValue>,
    method: &str,
    key: &StateKey,
) -> Result<Option<Call>, ErrorObject> {
    let envelope: Envelope = match raw {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| {
            ErrorObject::invalid_params(format!("Invalid params for `{method}`: {e}"))
        })?,
        None => Envelope::default(),
    };
    let Some(meta) = envelope.meta else {
        return Ok(None);
    };
    let Some(version) = meta.extra.get(META_PROTOCOL_VERSION) else {
        return Ok(None);
    };
    let Some(version) = version.as_str() else {
        return Err(unsupported_version(&version.to_string()));
    };
    if version.parse::<ProtocolVersion>() != Ok(ProtocolVersion::V2026_07_28) {
        return Err(unsupported_version(version));
    }
    let keys = StatelessMeta::from_meta(&meta).map_err(|e| {
        ErrorObject::invalid_params(format!(
            "Invalid params for `{method}`: the `io.modelcontextprotocol/*` keys of `_meta` are malformed: {e}"
        ))
    })?;
    if !meta
        .extra
        .contains_key(junction_protocol::stateless::META_CLIENT_CAPABILITIES)
    {
        return Err(ErrorObject::invalid_params(format!(
            "Invalid params for `{method}`: `_meta[\"io.modelcontextprotocol/clientCapabilities\"]` is required on 2026-07-28 (send {{}} for none)"
        )));
    }
    let target = envelope.name.or(envelope.uri).unwrap_or_default();
    let mut answers = match &envelope.request_state {
        Some(state) => key.open(state, method, &target)?,
        None => BTreeMap::new(),
    };
    answers.extend(envelope.input_responses.unwrap_or_default());
    Ok(Some(Call {
        client: Negotiated {
            version: ProtocolVersion::V2026_07_28,
            capabilities: keys.client_capabilities,
            info: keys
                .client_info
                .unwrap_or_else(|| Implementation::new("unknown", "")),
        },
        log_level: keys.log_level,
        rounds: Rounds {
            method: method.to_owned(),
            target,
            answers,
            next: AtomicUsize::new(0),
            needed: Mutex::new(None),
            missing: Mutex::new(None),
            signal: tokio::sync::Notify::new(),
        },
    }))
}

/// The input requests of one run of a handler.
pub(super) struct Rounds {
    method: String,
    target: String,
    answers: InputResponses,
    next: AtomicUsize,
    needed: Mutex<Option<(String, InputRequest)>>,
    missing: Mutex<Option<ClientCapabilities>>,
    signal: tokio::sync::Notify,
}

impl Rounds {
    /// The answer to the next input request, or `None` after recording it as needed (the run
    /// then ends: see [`Rounds::needed`]).
    pub(super) fn answer(&self, request: InputRequest) -> Option<Value> {
        let key = format!("input-{}", self.next.fetch_add(1, Ordering::SeqCst));
        if let Some(answer) = self.answers.get(&key) {
            return Some(answer.clone());
        }
        let mut needed = lock(&self.needed);
        if needed.is_none() {
            *needed = Some((key, request));
            self.signal.notify_one();
        }
        None
    }

    /// Records that the handler needed a capability the request did not declare.
    pub(super) fn require(&self, capabilities: ClientCapabilities) {
        *lock(&self.missing) = Some(capabilities);
    }

    /// The capabilities the handler needed but the request lacked.
    pub(super) fn missing(&self) -> Option<ClientCapabilities> {
        lock(&self.missing).clone()
    }

    /// Resolves once the handler asked for input that has no answer yet.
    pub(super) async fn needed(&self) {
        self.signal.notified().await;
    }

    /// The `input_required` result for the input asked for.
    pub(super) fn input_required(&self, key: &StateKey) -> InputRequiredResult {
        let mut result = InputRequiredResult::new();
        if let Some((name, request)) = lock(&self.needed).clone() {
            result = result.ask(name, request);
        }
        if !self.answers.is_empty() {
            result = result.state(key.seal(&self.answers, &self.method, &self.target));
        }
        result
    }
}

/// The `MissingRequiredClientCapability` error (-32021).
pub(super) fn missing_capability(required: &ClientCapabilities) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Server requires a client capability this request did not declare",
    )
    .with_data(json!({"requiredCapabilities": required}))
}

/// The per-server key that tags `requestState`.
pub(super) struct StateKey(std::collections::hash_map::RandomState);

impl StateKey {
    pub(super) fn new() -> Self {
        StateKey(std::collections::hash_map::RandomState::new())
    }

    fn tag(&self, method: &str, target: &str, payload: &str) -> u64 {
        self.0.hash_one((method, target, payload))
    }

    fn seal(&self, answers: &InputResponses, method: &str, target: &str) -> String {
        let payload = Value::Object(answers.clone().into_iter().collect()).to_string();
        format!("{:016x}.{payload}", self.tag(method, target, &payload))
    }

    fn open(&self, state: &str, method: &str, target: &str) -> Result<InputResponses, ErrorObject> {
        let refuse = || {
            ErrorObject::invalid_params(format!(
                "Invalid params for `{method}`: `requestState` was not produced by this server for this request; retry without it"
            ))
        };
        let (tag, payload) = state.split_once('.').ok_or_else(refuse)?;
        if u64::from_str_radix(tag, 16).ok() != Some(self.tag(method, target, payload)) {
            return Err(refuse());
        }
        serde_json::from_str(payload).map_err(|_| refuse())
    }
}

/// Adds `resultType: "complete"`, the server's identity and (for cacheable results) the
/// cache members to a result of 2026-07-28.
pub(super) fn decorate(
    raw: &RawValue,
    method: &str,
    info: &Implementation,
    cache: &Map<String, Value>,
) -> Result<Box<RawValue>, ErrorObject> {
    let mut value: Map<String, Value> = serde_json::from_str(raw.get())
        .map_err(|e| ErrorObject::internal(format!("could not encode the result: {e}")))?;
    value
        .entry("resultType")
        .or_insert_with(|| json!("complete"));
    with_server_info(&mut value, info);
    if CACHEABLE.contains(&method) || method == "server/discover" {
        for (k, v) in cache {
            value.insert(k.clone(), v.clone());
        }
    }
    junction_protocol::jsonrpc::to_raw(&value)
        .map_err(|e| ErrorObject::internal(format!("could not encode the result: {e}")))
}

/// Puts `io.modelcontextprotocol/serverInfo` in a result's `_meta`.
pub(super) fn with_server_info(value: &mut Map<String, Value>, info: &Implementation) {
    let meta = value
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(META_SERVER_INFO.to_owned(), json!(info));
    }
}

/// An error as 2026-07-28 states it (resource not found is -32602 there).
pub(super) fn error(mut e: ErrorObject) -> ErrorObject {
    if e.code == ErrorCode::RESOURCE_NOT_FOUND {
        e.code = ErrorCode::INVALID_PARAMS;
    }
    e
}
