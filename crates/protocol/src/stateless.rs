//! The stateless family (revision 2026-07-28): what it adds to the model.
//!
//! There is no `initialize`: each request carries the version, the client's capabilities and
//! (optionally) its identity in `_meta` under the keys below ([`StatelessMeta`]);
//! `server/discover` tells what a server supports; every result carries `resultType`, where
//! `input_required` replaces server→client requests (the client answers `inputRequests` and
//! retries with `inputResponses`); `subscriptions/listen` opens the notification stream.
//!
//! ```
//! use junction_protocol::stateless::ResultType;
//! // A result from an older server has no `resultType`: it is complete.
//! assert_eq!(ResultType::of(None), ResultType::Complete);
//! assert_eq!(ResultType::of(Some("input_required")), ResultType::InputRequired);
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::lifecycle::Implementation;
use crate::logging::LoggingLevel;
use crate::meta::{EmptyResult, Meta, RequestMeta};
use crate::{notification, request, RequestId};

/// `_meta` key: the protocol version of this request (required in 2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required in 2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level wanted for this request (no logs without it; deprecated).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of results: the server's identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of notifications (and of the listen result): the subscription they belong to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key tying a message to a task (2025-11-25 tasks; same as
/// [`crate::tasks::RELATED_TASK_META`]).
pub const META_RELATED_TASK: &str = crate::tasks::RELATED_TASK_META;

/// `resultType`: how to read a result. Open: unknown strings are kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// An ordinary, final result (also what an absent `resultType` means).
    #[default]
    Complete,
    /// The server needs input first; see [`InputRequiredResult`].
    InputRequired,
    /// The server runs the request on as a task (the tasks extension,
    /// [`crate::task_extension`]).
    Task,
    /// A type this crate does not know.
    Other(String),
}

impl ResultType {
    /// Reads a `resultType` member, absent meaning `complete`.
    pub fn of(member: Option<&str>) -> Self {
        match member {
            None | Some("complete") => ResultType::Complete,
            Some("input_required") => ResultType::InputRequired,
            Some(crate::task_extension::RESULT_TYPE_TASK) => ResultType::Task,
            Some(other) => ResultType::Other(other.to_owned()),
        }
    }

    /// The string on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => crate::task_extension::RESULT_TYPE_TASK,
            ResultType::Other(s) => s,
        }
    }

    /// Whether this is `complete`.
    pub fn is_complete(&self) -> bool {
        *self == ResultType::Complete
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(ResultType::of(Some(&s)))
    }
}

/// `cacheScope` of a cacheable result (2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// No user-specific data: any cache may share it across authorization contexts.
    Public,
    /// Reusable only within the same authorization context (the safe default).
    #[default]
    Private,
}

/// The version, capabilities, identity and log level a 2026-07-28 request carries in its
/// `_meta`, read from or written to a [`RequestMeta`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StatelessMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`; an empty object means none.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
}

impl StatelessMeta {
    /// Version and capabilities, no identity or log level.
    pub fn new(protocol_version: impl Into<String>, capabilities: ClientCapabilities) -> Self {
        StatelessMeta {
            protocol_version: protocol_version.into(),
            client_capabilities: capabilities,
            client_info: None,
            log_level: None,
        }
    }

    /// Reads the keys from a request's `_meta`; fails when the version is missing or a key
    /// has the wrong shape.
    pub fn from_meta(meta: &RequestMeta) -> Result<Self, serde_json::Error> {
        let keys: Map<String, Value> = meta
            .extra
            .iter()
            .filter(|(k, _)| k.starts_with("io.modelcontextprotocol/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        serde_json::from_value(Value::Object(keys))
    }

    /// Writes the keys into a request's `_meta`, replacing any already there.
    pub fn write_to(&self, meta: &mut RequestMeta) -> Result<(), serde_json::Error> {
        if let Value::Object(keys) = serde_json::to_value(self)? {
            meta.extra.extend(keys);
        }
        Ok(())
    }
}

/// The server identity a result's `_meta` carries (`io.modelcontextprotocol/serverInfo`).
pub fn server_info(meta: &Meta) -> Option<Implementation> {
    serde_json::from_value(meta.get(META_SERVER_INFO)?.clone()).ok()
}

/// The subscription a notification was delivered on (`io.modelcontextprotocol/subscriptionId`).
pub fn subscription_id(meta: &Meta) -> Option<RequestId> {
    serde_json::from_value(meta.get(META_SUBSCRIPTION_ID)?.clone()).ok()
}

/// The params of `server/discover`: only `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DiscoverParams {
    /// `_meta`, with the version and capabilities keys.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The result of `server/discover` (2026-07-28, a cacheable result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// The revisions the server speaks.
    pub supported_versions: Vec<String>,
    /// What it supports.
    pub capabilities: ServerCapabilities,
    /// Hints for the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the answer may be cached, in milliseconds (0: stale at once; read as 0
    /// when absent).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may share the cached answer (read as `private` when absent).
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// `resultType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<crate::stateless::ResultType>,
    /// `_meta` (carries the server's identity).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DiscoverResult {
    /// A complete answer, not cacheable (`ttlMs: 0`, `cacheScope: "private"`).
    pub fn new(supported_versions: Vec<String>, capabilities: ServerCapabilities) -> Self {
        DiscoverResult {
            supported_versions,
            capabilities,
            instructions: None,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
            result_type: Some(ResultType::Complete),
            meta: None,
            extra: Map::new(),
        }
    }
}

/// One request the server needs answered before it can finish (`sampling/createMessage`,
/// `roots/list` or `elicitation/create`), in `{method, params}` form.
///
/// The params are kept as the JSON text they came in (or were encoded to), not as a
/// [`Map`]: a `Map` sorts its keys, and the order of a form's fields (the `properties` of
/// an elicitation's `requestedSchema`) is the order the person is asked them in.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputRequest {
    /// The method.
    pub method: String,
    /// Its params, as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Box<RawValue>>,
}

impl PartialEq for InputRequest {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method
            && self.params.as_ref().map(|p| p.get()) == other.params.as_ref().map(|p| p.get())
    }
}

impl InputRequest {
    /// The request `R` with `params`.
    pub fn of<R: crate::method::Request>(params: &R::Params) -> Result<Self, serde_json::Error> {
        Ok(InputRequest {
            method: R::METHOD.to_owned(),
            params: Some(serde_json::value::to_raw_value(params)?),
        })
    }

    /// Reads the params as `T` (absent params read as `{}`).
    pub fn decode_params<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.params.as_ref().map_or("{}", |p| p.get()))
    }
}

/// `inputRequests`: what the server asks, by a key it chose.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// `inputResponses`: the client's result for each key of `inputRequests` (a
/// `CreateMessageResult`, `ListRootsResult` or `ElicitResult`).
pub type InputResponses = BTreeMap<String, Value>;

/// `resultType: "input_required"`: answer `inputRequests` and retry with a new id, sending
/// the answers as `inputResponses` and echoing `requestState`. At least one of the two is
/// present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// What the server asks, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `resultType`: `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<crate::stateless::ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InputRequiredResult {
    /// An empty `input_required` result; add requests with [`InputRequiredResult::ask`].
    pub fn new() -> Self {
        InputRequiredResult {
            result_type: Some(ResultType::InputRequired),
            ..Default::default()
        }
    }

    /// Adds one request under `key`.
    pub fn ask(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.input_requests
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), request);
        self
    }

    /// Sets the state the client must echo.
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// The notification types a client opts in to on `subscriptions/listen` (and the subset the
/// server agreed to, in the acknowledgement).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs (replaces `resources/subscribe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Opts in to (or out of) `notifications/tools/list_changed`.
    pub fn tools_list_changed(mut self, on: bool) -> Self {
        self.tools_list_changed = Some(on);
        self
    }

    /// Opts in to (or out of) `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(mut self, on: bool) -> Self {
        self.prompts_list_changed = Some(on);
        self
    }

    /// Opts in to (or out of) `notifications/resources/list_changed`.
    pub fn resources_list_changed(mut self, on: bool) -> Self {
        self.resources_list_changed = Some(on);
        self
    }

    /// Asks for `notifications/resources/updated` for these URIs.
    pub fn resource_subscriptions<S: Into<String>>(
        mut self,
        uris: impl IntoIterator<Item = S>,
    ) -> Self {
        self.resource_subscriptions = Some(uris.into_iter().map(Into::into).collect());
        self
    }
}

/// The params of `subscriptions/listen`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenParams {
    /// What to receive on this stream.
    pub notifications: SubscriptionFilter,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedParams {
    /// The requested types the server will honour.
    pub notifications: SubscriptionFilter,
    /// `_meta` (carries the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SubscriptionsListenParams {
    /// Listens for what `notifications` opts in to.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            notifications,
            meta: None,
        }
    }
}

impl SubscriptionsAcknowledgedParams {
    /// Acknowledges a stream, agreeing to `notifications`; `meta` carries the subscription id.
    pub fn new(notifications: SubscriptionFilter, meta: Option<Meta>) -> Self {
        Self {
            notifications,
            meta,
        }
    }
}

/// The members of a request's params read before the method's own: `_meta`,
/// `inputResponses`, `requestState`, and the `name`, `uri` or `taskId` the request is about. The
/// HTTP transport reads it to check the headers, and the server to decide the family of a
/// request and to serve a multi round-trip request; every other member is skipped.
///
/// It borrows from the params it was read from: the strings are copied only where they
/// hold escapes, and the 2026-07-28 keys of `_meta` ([`EnvelopeMeta`]) are kept as sent,
/// to be decoded by whoever needs them, once.
///
/// ```
/// use junction_protocol::method::NameParam;
/// use junction_protocol::stateless::RequestEnvelope;
///
/// let params = serde_json::value::RawValue::from_string(
///     r#"{"name":"add","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#.into(),
/// ).unwrap();
/// let envelope = RequestEnvelope::read(Some(&params)).unwrap();
/// assert_eq!(envelope.protocol_version().and_then(Result::ok).as_deref(), Some("2026-07-28"));
/// assert_eq!(envelope.target(NameParam::Name), Some("add"));
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RequestEnvelope<'a> {
    /// The 2026-07-28 keys of `_meta`.
    #[serde(rename = "_meta", default, borrow, deserialize_with = "object")]
    pub meta: Option<EnvelopeMeta<'a>>,
    /// `inputResponses`: answers to an earlier `input_required` result.
    #[serde(default)]
    pub input_responses: Option<InputResponses>,
    /// `requestState`: the state an earlier `input_required` result carried.
    #[serde(default, borrow)]
    pub request_state: Option<Cow<'a, str>>,
    /// `name` (a tool or a prompt).
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    /// `uri` (a resource).
    #[serde(default, borrow)]
    pub uri: Option<Cow<'a, str>>,
    /// `taskId` (the tasks extension's methods).
    #[serde(default, borrow)]
    pub task_id: Option<Cow<'a, str>>,
}

/// The keys of a request's `_meta` that make it a 2026-07-28 request, each as sent (present
/// even when `null`); other keys are skipped. See [`StatelessMeta`] for their decoded form.
#[derive(Debug, Clone, Default, Deserialize)]
#[non_exhaustive]
pub struct EnvelopeMeta<'a> {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        borrow,
        deserialize_with = "present"
    )]
    pub protocol_version: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        borrow,
        deserialize_with = "present"
    )]
    pub client_capabilities: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        borrow,
        deserialize_with = "present"
    )]
    pub client_info: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        borrow,
        deserialize_with = "present"
    )]
    pub log_level: Option<&'a RawValue>,
    /// `progressToken` (any family's key), so that a reader of the envelope alone can check
    /// it as [`RequestMeta`] does.
    #[serde(
        rename = "progressToken",
        default,
        borrow,
        deserialize_with = "present"
    )]
    pub progress_token: Option<&'a RawValue>,
}

/// An object as `T`, or `null` (a derived struct alone would also take an array, its
/// fields by position).
fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    struct Visitor<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_none<E>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
            deserializer.deserialize_map(self)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }
    deserializer.deserialize_option(Visitor(std::marker::PhantomData))
}

/// A key that is there, whatever its value (`Option<&RawValue>` alone reads `null` as absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

impl<'a> RequestEnvelope<'a> {
    /// Reads the envelope of `params` (absent params have an empty one).
    pub fn read(params: Option<&'a RawValue>) -> Result<Self, serde_json::Error> {
        match params {
            Some(raw) => serde_json::from_str(raw.get()),
            None => Ok(RequestEnvelope::default()),
        }
    }

    /// Reads the envelope and the method's params `P` in one walk of `params`, for a server
    /// that needs both: `P` is given every member but `_meta`, `inputResponses` and
    /// `requestState`, which only the envelope keeps (`name`, `uri` and `taskId` go to both).
    /// Absent params read as `{}`.
    ///
    /// A `P` that reads `_meta` itself sees none: read it with [`RequestEnvelope::read`] and
    /// then decode `P` from the whole params instead.
    ///
    /// ```
    /// use junction_protocol::stateless::RequestEnvelope;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Call { name: String, arguments: serde_json::Value }
    ///
    /// let params = serde_json::value::RawValue::from_string(
    ///     r#"{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"a":1}}"#.into(),
    /// ).unwrap();
    /// let (envelope, call) = RequestEnvelope::read_with::<Call>(Some(&params)).unwrap();
    /// assert_eq!(envelope.name.as_deref(), Some("add"));
    /// assert!(envelope.protocol_version().is_some());
    /// assert_eq!((call.name.as_str(), call.arguments["a"].as_i64()), ("add", Some(1)));
    /// ```
    pub fn read_with<P: Deserialize<'a>>(
        params: Option<&'a RawValue>,
    ) -> Result<(Self, P), serde_json::Error> {
        let text = params.map_or("{}", RawValue::get);
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let read = deserializer.deserialize_map(split::Visitor(std::marker::PhantomData))?;
        deserializer.end()?;
        Ok(read)
    }

    /// `_meta["io.modelcontextprotocol/protocolVersion"]` when it is there: the version, or
    /// (`Err`) the JSON sent where a string belongs.
    pub fn protocol_version(&self) -> Option<Result<Cow<'a, str>, &'a RawValue>> {
        let raw = self.meta.as_ref()?.protocol_version?;
        Some(text(raw).ok_or(raw))
    }

    /// The member `param` names: what the `Mcp-Name` header repeats.
    pub fn target(&self, param: crate::method::NameParam) -> Option<&str> {
        match param {
            crate::method::NameParam::Absent => None,
            crate::method::NameParam::Name => self.name.as_deref(),
            crate::method::NameParam::Uri => self.uri.as_deref(),
            crate::method::NameParam::TaskId => self.task_id.as_deref(),
        }
    }
}

/// [`RequestEnvelope::read_with`]: one map, its members dealt to the envelope and to `P`.
mod split {
    use std::borrow::Cow;
    use std::marker::PhantomData;

    use serde::de::value::{CowStrDeserializer, MapAccessDeserializer};
    use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess};
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;

    use super::{text, EnvelopeMeta, RequestEnvelope};

    pub(super) struct Visitor<P>(pub(super) PhantomData<P>);

    impl<'de, P: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<P> {
        type Value = (RequestEnvelope<'de>, P);

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("params (an object)")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Members {
                map: &mut map,
                envelope: RequestEnvelope::default(),
                shared: None,
                seen: [false; 3],
            };
            let params = P::deserialize(MapAccessDeserializer::new(&mut members))?;
            // A `P` that stops early leaves members the envelope may still need.
            let mut rest = &mut members;
            while rest.next_key::<IgnoredAny>()?.is_some() {
                rest.next_value::<IgnoredAny>()?;
            }
            Ok((members.envelope, params))
        }
    }

    /// The members `P` reads, the envelope's taken out on the way.
    struct Members<'m, 'de, A> {
        map: &'m mut A,
        envelope: RequestEnvelope<'de>,
        /// The value of a member both read (`name`, `uri`, `taskId`), for `P` to read next.
        shared: Option<&'de RawValue>,
        /// `_meta`, `inputResponses`, `requestState` seen (a second one is an error, as the
        /// derived envelope has it).
        seen: [bool; 3],
    }

    /// Reads `_meta` as the derived envelope does.
    struct Object;

    impl<'de> DeserializeSeed<'de> for Object {
        type Value = Option<EnvelopeMeta<'de>>;
        fn deserialize<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Self::Value, D::Error> {
            super::object(deserializer)
        }
    }

    /// A member name, borrowed unless it has escapes.
    struct Key<'de>(Cow<'de, str>);

    impl<'de> Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct KeyVisitor;
            impl<'de> serde::de::Visitor<'de> for KeyVisitor {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a member name")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Borrowed(v)))
                }
                fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(v.to_owned())))
                }
            }
            deserializer.deserialize_str(KeyVisitor)
        }
    }

    impl<'de, A: MapAccess<'de>> MapAccess<'de> for &mut Members<'_, 'de, A> {
        type Error = A::Error;

        fn next_key_seed<K: DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, A::Error> {
            loop {
                let Some(Key(key)) = self.map.next_key::<Key<'de>>()? else {
                    return Ok(None);
                };
                let only = |seen: &mut bool| {
                    if std::mem::replace(seen, true) {
                        Err(A::Error::custom(format_args!("duplicate field `{key}`")))
                    } else {
                        Ok(())
                    }
                };
                match &*key {
                    "_meta" => {
                        only(&mut self.seen[0])?;
                        self.envelope.meta = self.map.next_value_seed(Object)?;
                    }
                    "inputResponses" => {
                        only(&mut self.seen[1])?;
                        self.envelope.input_responses = self.map.next_value()?;
                    }
                    "requestState" => {
                        only(&mut self.seen[2])?;
                        self.envelope.request_state = self
                            .map
                            .next_value::<Option<Key<'de>>>()?
                            .map(|Key(state)| state);
                    }
                    "name" | "uri" | "taskId" => {
                        let raw: &'de RawValue = self.map.next_value()?;
                        let value = match raw.get() {
                            "null" => None,
                            _ => Some(text(raw).ok_or_else(|| {
                                A::Error::custom(format_args!("`{key}` is not a string"))
                            })?),
                        };
                        match &*key {
                            "name" => self.envelope.name = value,
                            "uri" => self.envelope.uri = value,
                            _ => self.envelope.task_id = value,
                        }
                        self.shared = Some(raw);
                        return seed.deserialize(CowStrDeserializer::new(key)).map(Some);
                    }
                    _ => return seed.deserialize(CowStrDeserializer::new(key)).map(Some),
                }
            }
        }

        fn next_value_seed<V: DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, A::Error> {
            match self.shared.take() {
                Some(raw) => seed
                    .deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
                    .map_err(A::Error::custom),
                None => self.map.next_value_seed(seed),
            }
        }
    }
}

/// The string `raw` holds, borrowed unless it has escapes; `None` when it is not a string.
fn text(raw: &RawValue) -> Option<Cow<'_, str>> {
    // Valid JSON (which a `RawValue` is) between quotes and without a backslash is a string
    // whose text is what lies between them: no decoding needed.
    let json = raw.get();
    if let Some(inner) = json
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .filter(|inner| !inner.contains(['\\', '"']))
    {
        return Some(Cow::Borrowed(inner));
    }
    // Only a string with escapes (or not a string at all) is left: it cannot be borrowed.
    serde_json::from_str::<String>(json).ok().map(Cow::Owned)
}

/// `UnsupportedProtocolVersion` (-32022): `requested` is not served here; `data` lists the
/// versions that are (newest first) and echoes the one asked for, as the revision says.
/// `message` tells where the version was read (the header or `_meta`).
pub fn unsupported_version(requested: &str, message: impl Into<String>) -> crate::ErrorObject {
    let supported: Vec<&str> = crate::ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    crate::ErrorObject::new(crate::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, message)
        .with_data(serde_json::json!({"supported": supported, "requested": requested}))
}

/// Which required member of a 2026-07-28 request's `_meta` is missing, if one is: the
/// protocol version and the client capabilities (`{}` for none) are required.
pub fn missing_meta(envelope: &RequestEnvelope) -> Option<&'static str> {
    let Some(meta) = &envelope.meta else {
        return Some("_meta");
    };
    if meta.protocol_version.is_none() {
        return Some(META_PROTOCOL_VERSION);
    }
    if meta.client_capabilities.is_none() {
        return Some(META_CLIENT_CAPABILITIES);
    }
    None
}

request!(
    /// `server/discover` (2026-07-28): versions, capabilities and identity of a server.
    Discover, "server/discover", DiscoverParams, DiscoverResult,
    families = Stateless, cacheable = true
);
request!(
    /// `subscriptions/listen` (2026-07-28): a long-lived notification stream. The result
    /// (empty but for `_meta` with the subscription id) comes only when the server ends it.
    SubscriptionsListen, "subscriptions/listen", SubscriptionsListenParams, EmptyResult,
    families = Stateless
);
notification!(
    /// `notifications/subscriptions/acknowledged` (2026-07-28): the first message of a
    /// subscription stream.
    SubscriptionsAcknowledged, "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams,
    families = Stateless
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elicitation::Elicit;
    use serde_json::json;

    #[test]
    fn a_string_is_read_borrowed_unless_it_has_escapes() {
        let raw = |json: &str| RawValue::from_string(json.to_owned()).unwrap();
        let plain = raw(r#""2026-07-28""#);
        assert!(matches!(text(&plain), Some(Cow::Borrowed("2026-07-28"))));
        let escaped = raw(r#""a\u0041\"b""#);
        assert_eq!(text(&escaped).as_deref(), Some("aA\"b"));
        assert!(matches!(text(&escaped), Some(Cow::Owned(_))));
        assert_eq!(text(&raw(r#""""#)).as_deref(), Some(""));
        for other in ["20260728", "null", r#"["2026-07-28"]"#, r#"{"a":"b"}"#] {
            assert_eq!(text(&raw(other)), None, "{other}");
        }
    }

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
            r.result_type.clone().unwrap_or_default(),
            ResultType::Complete
        );
        assert_eq!(r.cache_scope, CacheScope::Public);
        assert_eq!(
            server_info(r.meta.as_ref().unwrap()).map(|i| i.name),
            Some("s".to_owned())
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let built = DiscoverResult::new(vec!["2026-07-28".into()], ServerCapabilities::default());
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0, "cacheScope": "private", "resultType": "complete"})
        );
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
            r.result_type.clone().unwrap_or_default(),
            ResultType::InputRequired
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let confirm = &r.input_requests.as_ref().unwrap()["confirm"];
        let params: crate::elicitation::ElicitParams = confirm.decode_params().unwrap();
        let rebuilt = InputRequiredResult::new()
            .ask("confirm", InputRequest::of::<Elicit>(&params).unwrap())
            .state("opaque");
        assert_eq!(serde_json::to_value(&rebuilt).unwrap(), wire);
        let shed = json!({"resultType": "input_required", "requestState": "s"});
        let r: InputRequiredResult = serde_json::from_value(shed.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), shed);
    }

    #[test]
    fn an_input_request_keeps_the_order_of_its_forms_fields() {
        let text = r#"{"inputRequests":{"who":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"boolean"}}}}}},"resultType":"input_required"}"#;
        let r: InputRequiredResult = serde_json::from_str(text).unwrap();
        let who = &r.input_requests.as_ref().unwrap()["who"];
        let params: crate::elicitation::ElicitParams = who.decode_params().unwrap();
        let crate::elicitation::ElicitParams::Form(form) = &params else {
            panic!("a form: {params:?}");
        };
        let names: Vec<&str> = form
            .requested_schema
            .properties
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, ["zeta", "alpha"]);
        // Encoded again (as a server does), the order holds too.
        let again = InputRequest::of::<Elicit>(&params).unwrap();
        assert_eq!(&again, who);
        assert_eq!(serde_json::to_string(&r).unwrap(), text);
    }

    #[test]
    fn result_type_is_open() {
        assert_eq!(ResultType::of(Some("later")).as_str(), "later");
        let t: ResultType = serde_json::from_value(json!("input_required")).unwrap();
        assert_eq!(t, ResultType::InputRequired);
        assert_eq!(
            serde_json::to_value(ResultType::Other("x".into())).unwrap(),
            json!("x")
        );
        assert!(ResultType::of(None).is_complete());
        let task: ResultType = serde_json::from_value(json!("task")).unwrap();
        assert_eq!(task, ResultType::Task);
        assert_eq!(serde_json::to_value(task).unwrap(), json!("task"));
    }

    #[test]
    fn a_results_result_type_is_typed_and_absent_means_complete() {
        let listed: crate::tools::ListToolsResult =
            serde_json::from_value(json!({"tools": [], "resultType": "complete"})).unwrap();
        assert_eq!(listed.result_type, Some(ResultType::Complete));
        let plain: crate::tools::CallToolResult =
            serde_json::from_value(json!({"content": []})).unwrap();
        assert_eq!(plain.result_type.unwrap_or_default(), ResultType::Complete);
    }

    #[test]
    fn request_meta_keys_read_and_write() {
        let wire = json!({
            "progressToken": 1,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/logLevel": "warning",
            "com.example/other": true
        });
        let meta: RequestMeta = serde_json::from_value(wire.clone()).unwrap();
        let keys = StatelessMeta::from_meta(&meta).unwrap();
        assert_eq!(keys.protocol_version, "2026-07-28");
        assert!(keys.client_capabilities.supports_elicitation_form());
        assert_eq!(keys.log_level, Some(LoggingLevel::Warning));
        let mut rebuilt: RequestMeta =
            serde_json::from_value(json!({"progressToken": 1, "com.example/other": true})).unwrap();
        keys.write_to(&mut rebuilt).unwrap();
        assert_eq!(serde_json::to_value(&rebuilt).unwrap(), wire);
        assert!(StatelessMeta::from_meta(&RequestMeta::default()).is_err());
    }

    #[test]
    fn subscriptions_wire_forms() {
        let wire = json!({
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
        });
        let p: SubscriptionsListenParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.notifications.tools_list_changed, Some(true));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        let ack = json!({"notifications": {"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/subscriptionId": 7}});
        let a: SubscriptionsAcknowledgedParams = serde_json::from_value(ack.clone()).unwrap();
        assert_eq!(
            subscription_id(a.meta.as_ref().unwrap()),
            Some(RequestId::Number(7))
        );
        assert_eq!(serde_json::to_value(&a).unwrap(), ack);
        let closed = json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}});
        let r: EmptyResult = serde_json::from_value(closed.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), closed);
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Call {
        name: String,
        #[serde(default)]
        arguments: Option<Map<String, Value>>,
    }

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn one_walk_deals_the_envelope_its_members_and_the_params_theirs() {
        let params = raw(
            r#"{"name":"survey","requestState":"s1","arguments":{"a":1},"inputResponses":{"k":{"action":"accept"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":3,"other":[1,{"x":2}]}}"#,
        );
        // `Call` refuses unknown members: it saw neither `_meta` nor the MRTR members.
        let (envelope, call) = RequestEnvelope::read_with::<Call>(Some(&params)).unwrap();
        assert_eq!(call.name, "survey");
        assert_eq!(call.arguments.unwrap()["a"], json!(1));
        assert_eq!(envelope.name.as_deref(), Some("survey"));
        assert_eq!(envelope.request_state.as_deref(), Some("s1"));
        assert_eq!(
            envelope.input_responses.unwrap()["k"],
            json!({"action": "accept"})
        );
        let meta = envelope.meta.unwrap();
        assert_eq!(meta.client_capabilities.map(RawValue::get), Some("{}"));
        assert_eq!(meta.progress_token.map(RawValue::get), Some("3"));
        let by_two_walks = RequestEnvelope::read(Some(&params)).unwrap();
        assert_eq!(
            by_two_walks.protocol_version().unwrap().unwrap(),
            "2026-07-28"
        );
    }

    #[test]
    fn one_walk_reads_escaped_names_and_absent_params() {
        let params = raw(
            r#"{"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"},"n\u0061me":"a\"b"}"#,
        );
        let (envelope, call) = RequestEnvelope::read_with::<Call>(Some(&params)).unwrap();
        assert_eq!(call.name, "a\"b");
        assert_eq!(envelope.name.as_deref(), Some("a\"b"));
        assert_eq!(envelope.protocol_version().unwrap().unwrap(), "2026-07-28");
        let (envelope, none) = RequestEnvelope::read_with::<Map<String, Value>>(None).unwrap();
        assert!(envelope.meta.is_none());
        assert!(none.is_empty());
    }

    #[test]
    fn one_walk_refuses_what_the_derived_envelope_refuses() {
        for bad in [
            r#"{"name":"a","_meta":{},"_meta":{}}"#,
            r#"{"name":"a","requestState":"x","requestState":"y"}"#,
            r#"{"name":7}"#,
            r#"{"name":"a","requestState":5}"#,
            r#"{"name":"a","_meta":[]}"#,
            r#"{"name":"a","_meta":["2026-07-28",{}]}"#,
            r#"{"name":"a","extra":1}"#,
            r#"[1]"#,
        ] {
            assert!(
                RequestEnvelope::read_with::<Call>(Some(&raw(bad))).is_err(),
                "{bad} was read"
            );
        }
        let positional = raw(r#"{"_meta":["2026-07-28",{}]}"#);
        assert!(RequestEnvelope::read(Some(&positional)).is_err());
    }
}
