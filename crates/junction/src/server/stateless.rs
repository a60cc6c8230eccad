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
//! [`super::Context::list_roots`] send nothing to the client. Each such call has a key: the
//! one given with [`super::Context::input_key`], else `input-n` for the n-th call of a
//! handler run (counting from 0). When the retried request carries an answer for that key
//! (in `inputResponses`, or in the `requestState` this server produced for an earlier
//! round), the call returns it; a call without one ends the run, and the client gets an
//! `input_required` result asking for it, together with every other call the handler had
//! started by then without an answer (calls joined with `tokio::join!` are asked in one
//! round). The client then retries the request with a new id, and the handler runs again
//! from the start. An answer that is not the result its method returns is refused with
//! -32602, naming its key.
//!
//! **Rule for handlers:** a handler must be deterministic up to its input requests (the same
//! arguments and answers lead to the same input requests in the same order), and must not
//! have side effects before its last input request that would be wrong to repeat. Anything
//! else a handler wants to carry across rounds has to be recomputed.
//!
//! `requestState` (in every `input_required` result) holds the answers of earlier rounds,
//! tagged with HMAC-SHA256 (a per-server random key, or one shared by every instance:
//! [`super::Server::request_state_key`]) over the method, the target (tool or prompt name,
//! resource URI) and the answers: a state this server did not produce for this request is
//! refused with -32602.

use std::collections::BTreeMap;
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use junction_protocol::capabilities::ClientCapabilities;
use junction_protocol::completion::CompleteResult;
use junction_protocol::error::ErrorCode;
use junction_protocol::lifecycle::{Implementation, InitializeResult};
use junction_protocol::logging::LoggingLevel;
use junction_protocol::meta::{EmptyResult, Meta};
use junction_protocol::prompts::{GetPromptResult, ListPromptsResult};
use junction_protocol::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult,
};
use junction_protocol::stateless::{
    CacheScope, DiscoverResult, InputRequest, InputRequiredResult, InputResponses, RequestEnvelope,
    ResultType, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    META_SERVER_INFO,
};
use junction_protocol::tools::{CallToolResult, ListToolsResult};
use junction_protocol::{ErrorObject, ProtocolVersion};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::lifecycle::Negotiated;
use super::route::{invalid_params, reply};
use crate::sync::lock;

/// One stateless request: who the client is for this request, and its rounds.
pub(super) struct Call {
    /// The client as this request describes it.
    pub(super) client: Arc<Negotiated>,
    /// The log level asked for (none: no log messages).
    pub(super) log_level: Option<LoggingLevel>,
    /// The input rounds of this request.
    pub(super) rounds: Rounds,
    /// Set once the server runs this request on as a task (the tasks extension).
    task: std::sync::OnceLock<Arc<str>>,
    /// A status message the handler set before the request became a task: the task starts
    /// with it. Its lock also orders [`Call::promote`] against [`Call::status_or_pending`].
    pending_status: Mutex<Option<String>>,
}

impl Call {
    /// From now on the handler runs as task `id`: its input requests are the task's. Returns
    /// the status message the handler set before, which the task starts with.
    pub(super) fn promote(&self, id: &str) -> Option<String> {
        let mut pending = lock(&self.pending_status);
        let _ = self.task.set(id.into());
        pending.take()
    }

    /// The task to give status `message` to, or `None` when the request is not (yet) a task:
    /// then `message` is kept for the task it may become.
    pub(super) fn status_or_pending(&self, message: String) -> Option<(Arc<str>, String)> {
        let mut pending = lock(&self.pending_status);
        match self.task.get() {
            Some(id) => Some((id.clone(), message)),
            None => {
                *pending = Some(message);
                None
            }
        }
    }

    /// The task this request's handler runs as, once promoted.
    pub(super) fn task(&self) -> Option<&Arc<str>> {
        self.task.get()
    }
}

/// `UnsupportedProtocolVersion` (-32022) for `requested`.
pub(super) fn unsupported_version(requested: &str) -> ErrorObject {
    junction_protocol::stateless::unsupported_version(
        requested,
        format!(
            "Unsupported protocol version {requested:?} in `_meta[\"{META_PROTOCOL_VERSION}\"]`: requests without `initialize` must use 2026-07-28; the handshake revisions are negotiated with `initialize`"
        ),
    )
}

/// Reads the envelope of a `method` request's params (see [`call`]).
pub(super) fn envelope<'a>(
    raw: Option<&'a RawValue>,
    method: &str,
) -> Result<RequestEnvelope<'a>, ErrorObject> {
    RequestEnvelope::read(raw).map_err(|e| invalid_params(method, e))
}

/// The stateless request an envelope describes: `None` when it carries no protocol version
/// in `_meta` (a handshake-family request).
pub(super) fn call(
    envelope: RequestEnvelope<'_>,
    method: &str,
    key: &StateKey,
    last: &LastClient,
) -> Result<Option<Arc<Call>>, ErrorObject> {
    let (Some(meta), Some(version)) = (&envelope.meta, envelope.protocol_version()) else {
        return Ok(None);
    };
    // What `RequestMeta` checks of a token, for a route whose params skip `_meta`.
    if let Some(token) = meta.progress_token {
        meta_key::<Option<junction_protocol::ProgressToken>>(token, method, "progressToken")?;
    }
    let version = version.map_err(|raw| unsupported_version(raw.get()))?;
    if version.parse::<ProtocolVersion>() != Ok(ProtocolVersion::V2026_07_28) {
        return Err(unsupported_version(&version));
    }
    let Some(capabilities) = meta.client_capabilities else {
        return Err(ErrorObject::invalid_params(format!(
            "Invalid params for `{method}`: `_meta[\"io.modelcontextprotocol/clientCapabilities\"]` is required on 2026-07-28 (send {{}} for none)"
        )));
    };
    let client = last.client(capabilities, meta.client_info, method)?;
    let log_level = meta
        .log_level
        .map(|raw| meta_key::<LoggingLevel>(raw, method, META_LOG_LEVEL))
        .transpose()?;
    let target = envelope
        .name
        .or(envelope.uri)
        .map(std::borrow::Cow::into_owned)
        .unwrap_or_default();
    let mut answers = match &envelope.request_state {
        Some(state) => key.open(state, method, &target)?,
        None => BTreeMap::new(),
    };
    answers.extend(envelope.input_responses.unwrap_or_default());
    // Built in its `Arc`: the call is large (its rounds' locks), and each move of it cost a copy.
    Ok(Some(Arc::new(Call {
        client,
        log_level,
        rounds: Rounds {
            method: method.to_owned(),
            target,
            answers,
            next: AtomicUsize::new(0),
            needed: Mutex::new(Vec::new()),
            missing: Mutex::new(None),
            invalid: Mutex::new(None),
            signal: tokio::sync::Notify::new(),
        },
        task: std::sync::OnceLock::new(),
        pending_status: Mutex::new(None),
    })))
}

/// The client the last 2026-07-28 request described, kept with the text its
/// `clientCapabilities` and `clientInfo` were sent as. A client sends the same ones with
/// every request; decoding them again each time cost a call about a tenth of its
/// instructions. One entry, replaced by the next request that describes another client.
#[derive(Default)]
pub(super) struct LastClient(Mutex<Option<Described>>);

struct Described {
    capabilities: Box<str>,
    info: Option<Box<str>>,
    client: Arc<Negotiated>,
}

impl LastClient {
    /// The client `capabilities` and `info` describe: the last one when they are the text it
    /// was read from, else decoded (each key once) and kept.
    fn client(
        &self,
        capabilities: &RawValue,
        info: Option<&RawValue>,
        method: &str,
    ) -> Result<Arc<Negotiated>, ErrorObject> {
        if let Some(last) = lock(&self.0).as_ref() {
            if *last.capabilities == *capabilities.get()
                && last.info.as_deref() == info.map(RawValue::get)
            {
                return Ok(last.client.clone());
            }
        }
        let client = Arc::new(Negotiated {
            version: ProtocolVersion::V2026_07_28,
            capabilities: meta_key(capabilities, method, META_CLIENT_CAPABILITIES)?,
            info: match info {
                Some(raw) => meta_key::<Implementation>(raw, method, META_CLIENT_INFO)?,
                None => Implementation::new("unknown", ""),
            },
        });
        *lock(&self.0) = Some(Described {
            capabilities: capabilities.get().into(),
            info: info.map(|raw| raw.get().into()),
            client: client.clone(),
        });
        Ok(client)
    }
}

/// The `_meta` member `key` of a `method` request, decoded from `raw`.
fn meta_key<T: serde::de::DeserializeOwned>(
    raw: &RawValue,
    method: &str,
    key: &str,
) -> Result<T, ErrorObject> {
    serde_json::from_str(raw.get())
        .map_err(|e| invalid_params(method, format_args!("`_meta[\"{key}\"]` is malformed: {e}")))
}

/// The input requests of one run of a handler.
pub(super) struct Rounds {
    method: String,
    target: String,
    answers: InputResponses,
    next: AtomicUsize,
    needed: Mutex<Vec<(String, InputRequest)>>,
    missing: Mutex<Option<ClientCapabilities>>,
    invalid: Mutex<Option<ErrorObject>>,
    signal: tokio::sync::Notify,
}

impl Rounds {
    /// The key of an input request (`key`, or `input-n` for the n-th unkeyed one) and its
    /// answer, or `None` after recording it as needed (the run then ends: see
    /// [`Rounds::needed`]).
    pub(super) fn answer(
        &self,
        key: Option<&str>,
        request: InputRequest,
    ) -> (String, Option<Value>) {
        let key = match key {
            Some(key) => key.to_owned(),
            None => format!("input-{}", self.next.fetch_add(1, Ordering::SeqCst)),
        };
        if let Some(answer) = self.answers.get(&key) {
            return (key, Some(answer.clone()));
        }
        let mut needed = lock(&self.needed);
        if !needed.iter().any(|(k, _)| *k == key) {
            needed.push((key.clone(), request));
        }
        self.signal.notify_one();
        (key, None)
    }

    /// Records that the answer under `key` is not a result of `method`; the request is then
    /// refused with -32602.
    pub(super) fn invalid(&self, key: &str, method: &str, problem: &str) {
        let error = ErrorObject::invalid_params(format!(
            "Invalid params for `{}`: `inputResponses[\"{key}\"]` is not a `{method}` result: {problem}",
            self.method
        ));
        lock(&self.invalid).get_or_insert(error);
        self.signal.notify_one();
    }

    /// Records that the handler needed a capability the request did not declare.
    pub(super) fn require(&self, capabilities: ClientCapabilities) {
        *lock(&self.missing) = Some(capabilities);
    }

    /// The capabilities the handler needed but the request lacked.
    pub(super) fn missing(&self) -> Option<ClientCapabilities> {
        lock(&self.missing).clone()
    }

    /// Whether the handler asked for input that has no answer yet (or gave a bad one).
    pub(super) fn asked(&self) -> bool {
        !lock(&self.needed).is_empty() || lock(&self.invalid).is_some()
    }

    /// Resolves once the handler asked for input that has no answer yet.
    pub(super) async fn needed(&self) {
        self.signal.notified().await;
    }

    /// The `input_required` result for the input asked for, with the state of the answers
    /// so far; or the refusal of an invalid answer.
    pub(super) fn input_required(
        &self,
        key: &StateKey,
    ) -> Result<InputRequiredResult, ErrorObject> {
        if let Some(error) = lock(&self.invalid).clone() {
            return Err(error);
        }
        let mut result = InputRequiredResult::new();
        for (name, request) in lock(&self.needed).iter() {
            result = result.ask(name.clone(), request.clone());
        }
        Ok(result.state(key.seal(&self.answers, &self.method, &self.target)))
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

/// The key that tags `requestState`: random per server unless set
/// ([`super::Server::request_state_key`]) so that every instance of a deployment accepts the
/// states any of them produced.
pub(super) struct StateKey(std::sync::RwLock<Vec<u8>>);

/// How many bytes of HMAC-SHA256 a tag keeps: 128 bits, as hex.
const TAG_BYTES: usize = 16;

type Mac = hmac::Hmac<sha2::Sha256>;

impl StateKey {
    pub(super) fn new() -> Self {
        let mut key = vec![0u8; 32];
        if let Err(e) = getrandom::fill(&mut key) {
            // Without the OS's randomness the key is only as secret as the process's
            // memory layout; say so rather than refuse to serve.
            tracing::error!(error = %e, "no random key for requestState; set one with Server::request_state_key");
            let fallback = std::collections::hash_map::RandomState::new().hash_one(0u8);
            key[..8].copy_from_slice(&fallback.to_le_bytes());
        }
        StateKey(std::sync::RwLock::new(key))
    }

    pub(super) fn set(&self, key: &[u8]) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = key.to_vec();
    }

    fn mac(&self, method: &str, target: &str, payload: &str) -> Mac {
        use hmac::Mac as _;
        let key = self.0.read().unwrap_or_else(|p| p.into_inner());
        // HMAC takes keys of any length.
        let mut mac = <Mac as hmac::Mac>::new_from_slice(&key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
        for part in [method, target, payload] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }

    fn seal(&self, answers: &InputResponses, method: &str, target: &str) -> String {
        use hmac::Mac as _;
        let payload = Value::Object(answers.clone().into_iter().collect()).to_string();
        let tag = self.mac(method, target, &payload).finalize().into_bytes();
        let hex: String = tag[..TAG_BYTES]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{hex}.{payload}")
    }

    fn open(&self, state: &str, method: &str, target: &str) -> Result<InputResponses, ErrorObject> {
        use hmac::Mac as _;
        let refuse = || {
            ErrorObject::invalid_params(format!(
                "Invalid params for `{method}`: `requestState` was not produced by this server for this request; retry without it"
            ))
        };
        let (tag, payload) = state.split_once('.').ok_or_else(refuse)?;
        let tag = decode_hex(tag)
            .filter(|t| t.len() == TAG_BYTES)
            .ok_or_else(refuse)?;
        self.mac(method, target, payload)
            .verify_truncated_left(&tag)
            .map_err(|_| refuse())?;
        serde_json::from_str(payload).map_err(|_| refuse())
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    text.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [high, low] => Some((hex_digit(*high)? << 4) | hex_digit(*low)?),
            _ => None,
        })
        .collect()
}

fn hex_digit(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// A result of a method the server serves on 2026-07-28: it gets `resultType: "complete"`
/// (unless its handler chose one), the server's identity in `_meta`, and, for the methods the
/// method table marks cacheable, `ttlMs` and `cacheScope`: set on the typed result before it
/// is encoded, once.
pub(super) trait Answer: Serialize + Send + 'static {
    /// Stamps the members above; `cache` is `Some` for a cacheable method. Returns where
    /// the server's identity went (see [`with_server_info`]).
    fn stamp(&mut self, server_info: &ServerInfo, cache: Option<(u64, CacheScope)>) -> Placed;

    /// Whether the result reports a failure (a tool's `isError`).
    fn failed(&self) -> bool {
        false
    }
}

fn complete(result_type: &mut Option<ResultType>) {
    result_type.get_or_insert(ResultType::Complete);
}

/// The server's identity as 2026-07-28 results carry it in `_meta`: as a value to merge into
/// a `_meta` a handler set, and, for the results without one (nearly all), as that whole
/// `_meta` encoded once.
pub(super) struct ServerInfo {
    value: Value,
    meta: Box<RawValue>,
}

impl ServerInfo {
    pub(super) fn new(info: &Implementation) -> Self {
        let value = serde_json::to_value(info).unwrap_or_default();
        // Encoding a `Value` does not fail (its keys are strings); the fallback only types.
        let meta = reply(&json!({ META_SERVER_INFO: &value }))
            .unwrap_or_else(|_| junction_protocol::jsonrpc::empty_object());
        ServerInfo { value, meta }
    }
}

/// Where [`with_server_info`] put the server's identity.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placed {
    /// In the result's `_meta`, or nowhere for a result that carries none.
    Done,
    /// Nowhere yet: the result has no `_meta`, and [`encode`] writes one holding only the
    /// identity, from its encoded form, instead of building a map to encode and drop.
    Pending,
}

/// Puts `io.modelcontextprotocol/serverInfo` in a result's `_meta`, or leaves it for
/// [`encode`] when the result has no `_meta`.
pub(super) fn with_server_info(meta: &mut Option<Meta>, server_info: &ServerInfo) -> Placed {
    match meta {
        None => Placed::Pending,
        Some(meta) => {
            meta.insert(META_SERVER_INFO.to_owned(), server_info.value.clone());
            Placed::Done
        }
    }
}

/// Stamps `result` ([`Answer::stamp`]) and encodes it.
fn stamped<T: Answer>(
    mut result: T,
    server_info: &ServerInfo,
    cache: Option<(u64, CacheScope)>,
) -> Result<Box<RawValue>, ErrorObject> {
    let placed = result.stamp(server_info, cache);
    encode(&result, placed, server_info)
}

/// Encodes a stamped result, with the `_meta` [`with_server_info`] left [`Placed::Pending`]
/// written after its members ([`super::last_member`]).
fn encode<T: Serialize>(
    result: &T,
    placed: Placed,
    server_info: &ServerInfo,
) -> Result<Box<RawValue>, ErrorObject> {
    match placed {
        Placed::Pending => super::last_member::encode(result, "_meta", &server_info.meta)
            .map_err(|e| ErrorObject::internal(format!("could not encode the result: {e}"))),
        Placed::Done => reply(result),
    }
}

/// Implements [`Answer`] for results with `_meta` and `resultType`, and with optional
/// `ttlMs` / `cacheScope` for those after `cached:`.
macro_rules! answer {
    ($($t:ty),* ; cached: $($c:ty),*) => {
        $(impl Answer for $t {
            fn stamp(&mut self, server_info: &ServerInfo, _: Option<(u64, CacheScope)>) -> Placed {
                complete(&mut self.result_type);
                with_server_info(&mut self.meta, server_info)
            }
        })*
        $(impl Answer for $c {
            fn stamp(&mut self, server_info: &ServerInfo, cache: Option<(u64, CacheScope)>) -> Placed {
                complete(&mut self.result_type);
                if let Some((ttl, scope)) = cache {
                    self.ttl_ms = Some(ttl);
                    self.cache_scope = Some(scope);
                }
                with_server_info(&mut self.meta, server_info)
            }
        })*
    };
}

answer!(EmptyResult, GetPromptResult, CompleteResult, InputRequiredResult;
    cached: ListToolsResult, ListResourcesResult, ListResourceTemplatesResult, ReadResourceResult, ListPromptsResult);

impl Answer for CallToolResult {
    fn stamp(&mut self, server_info: &ServerInfo, _: Option<(u64, CacheScope)>) -> Placed {
        complete(&mut self.result_type);
        with_server_info(&mut self.meta, server_info)
    }

    fn failed(&self) -> bool {
        self.is_error == Some(true)
    }
}

impl Answer for DiscoverResult {
    fn stamp(&mut self, server_info: &ServerInfo, cache: Option<(u64, CacheScope)>) -> Placed {
        complete(&mut self.result_type);
        if let Some((ttl, scope)) = cache {
            self.ttl_ms = ttl;
            self.cache_scope = scope;
        }
        with_server_info(&mut self.meta, server_info)
    }
}

/// `initialize` is not a 2026-07-28 method; its result carries only the server's identity.
impl Answer for InitializeResult {
    fn stamp(&mut self, server_info: &ServerInfo, _: Option<(u64, CacheScope)>) -> Placed {
        with_server_info(&mut self.meta, server_info)
    }
}

/// Runs the handler of one 2026-07-28 request until it ends, or until it asks for input
/// the request does not carry (the answer is then `input_required`), and stamps its result
/// (see [`Answer`]). Without a `call` (`server/discover`) the handler just runs.
pub(super) async fn finish<T: Answer>(
    run: impl Future<Output = Result<T, ErrorObject>>,
    call: Option<Arc<Call>>,
    server_info: &ServerInfo,
    cache: Option<(u64, CacheScope)>,
    key: &StateKey,
) -> Result<Box<RawValue>, ErrorObject> {
    let Some(call) = call else {
        return stamped(run.await?, server_info, cache);
    };
    let outcome = tokio::select! {
        // Most handlers end without asking: the first poll of `run` decides, with no waiter
        // registered for input.
        biased;
        result = run => Some(result),
        () = call.rounds.needed() => None,
    };
    let missing = call.rounds.missing();
    match outcome {
        // Its `resultType` stays `input_required`: stamping only sets an absent one.
        None => stamped(call.rounds.input_required(key)?, server_info, None),
        Some(Ok(result)) => match missing {
            Some(required) if result.failed() => Err(missing_capability(&required)),
            _ => stamped(result, server_info, cache),
        },
        Some(Err(e)) => Err(match missing {
            Some(required) => missing_capability(&required),
            None => error(e),
        }),
    }
}

/// An error as 2026-07-28 states it (resource not found is -32602 there).
pub(super) fn error(mut e: ErrorObject) -> ErrorObject {
    if e.code == ErrorCode::RESOURCE_NOT_FOUND {
        e.code = ErrorCode::INVALID_PARAMS;
    }
    e
}

#[cfg(test)]
mod key_tests {
    use super::*;

    #[test]
    fn the_identity_is_written_once_whether_or_not_the_handler_set_meta() {
        let info = ServerInfo::new(&Implementation::new("s", "1"));
        let identity = json!({"name": "s", "version": "1"});
        let mut bare = EmptyResult::default();
        let placed = bare.stamp(&info, None);
        assert_eq!(placed, Placed::Pending);
        let text = encode(&bare, placed, &info).unwrap();
        let bare: Value = serde_json::from_str(text.get()).unwrap();
        assert_eq!(
            bare,
            json!({"resultType": "complete", "_meta": {META_SERVER_INFO: identity}})
        );
        // A result with no other member gets `_meta` alone, with no stray comma.
        let text = encode(&EmptyResult::default(), Placed::Pending, &info).unwrap();
        assert_eq!(
            text.get(),
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#
        );
        let mut own = EmptyResult::default();
        own.meta = Some([("k".to_owned(), json!(1))].into_iter().collect());
        let placed = own.stamp(&info, None);
        assert_eq!(placed, Placed::Done);
        let text = encode(&own, placed, &info).unwrap();
        let own: Value = serde_json::from_str(text.get()).unwrap();
        assert_eq!(
            own,
            json!({"resultType": "complete", "_meta": {"k": 1, META_SERVER_INFO: identity}})
        );
    }

    #[test]
    fn a_client_described_again_in_the_same_words_is_not_decoded_again() {
        let last = LastClient::default();
        let raw = |text: &str| RawValue::from_string(text.to_owned()).unwrap();
        let (caps, info) = (raw("{}"), raw(r#"{"name":"c","version":"1"}"#));
        let first = last.client(&caps, Some(&info), "tools/call").unwrap();
        let again = last.client(&caps, Some(&info), "tools/call").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let other = last
            .client(&raw(r#"{"roots":{}}"#), Some(&info), "tools/call")
            .unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert!(other.capabilities.roots.is_some());
        let anonymous = last.client(&caps, None, "tools/call").unwrap();
        assert_eq!(anonymous.info.name, "unknown");
        let bad = last.client(&raw(r#"{"roots":7}"#), None, "tools/call");
        assert!(bad.unwrap_err().message.contains("clientCapabilities"));
    }

    fn answers() -> InputResponses {
        [("input-0".to_owned(), json!({"action": "accept"}))].into()
    }

    #[test]
    fn a_state_sealed_by_one_instance_opens_on_another_with_the_same_key() {
        let (a, b) = (StateKey::new(), StateKey::new());
        let state = a.seal(&answers(), "tools/call", "survey");
        assert!(
            b.open(&state, "tools/call", "survey").is_err(),
            "random keys differ"
        );
        a.set(b"a secret shared by every instance, 32+ bytes");
        b.set(b"a secret shared by every instance, 32+ bytes");
        let state = a.seal(&answers(), "tools/call", "survey");
        assert_eq!(b.open(&state, "tools/call", "survey").unwrap(), answers());
        assert!(
            b.open(&state, "tools/call", "other").is_err(),
            "a state is bound to its target"
        );
        let forged = state.replacen("accept", "decline", 1);
        assert!(b.open(&forged, "tools/call", "survey").is_err());
        assert!(b.open("zz.{}", "tools/call", "survey").is_err());
    }
}
