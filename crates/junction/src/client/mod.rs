//! The client side of MCP: one connection to one server.
//!
//! [`Client::connect`] performs the handshake (offer the newest revision, check the one the
//! server chose, send `notifications/initialized`) and then offers a typed method for each
//! server feature. Every method first checks the capabilities the server declared and returns
//! [`RequestError::NotSupported`] without sending anything when the feature is missing. List
//! methods follow `nextCursor` to the end.
//!
//! The server's requests are answered by the handlers the host sets on [`ClientOptions`]:
//! [`Sampling`], [`Elicitation`] and [`Roots`], each one async closure that gets the params
//! and the request's context (id, cancellation) plus the sub-capabilities it supports. Only
//! the features with a handler are declared in `initialize`; the server's requests for the
//! others, and for anything unknown, are answered -32601. A [`HandlerError`] becomes the
//! JSON-RPC error the server receives.
//!
//! ```
//! use junction::client::{ClientOptions, Roots, Sampling};
//! use junction_protocol::roots::Root;
//! use junction_protocol::sampling::CreateMessageResult;
//!
//! let options = ClientOptions::new("my-host", "1.0.0")
//!     .sampling(Sampling::new(|_params, _ctx| async { Ok(CreateMessageResult::text("m", "Hi")) }).with_tools())
//!     .roots(Roots::new(|_ctx| async { Ok(vec![Root::new("file:///srv/project")]) }));
//! assert_eq!(
//!     serde_json::to_value(options.capabilities()).unwrap(),
//!     serde_json::json!({"sampling": {"tools": {}}, "roots": {"listChanged": true}})
//! );
//! ```
//!
//! [`Client::call_tool`] checks `structuredContent` against the output schema that
//! [`Client::list_tools`] last reported for the tool, when the negotiated revision has
//! structured output (2025-06-18 and later). Its [`RequestOptions`] carry progress (a token is
//! added and every update reaches the sink) and cancellation: when the caller's token fires,
//! `notifications/cancelled` is sent and the call fails with [`RequestError::Cancelled`]. Any
//! other request can be sent with options through [`Client::peer`].
//!
//! Other notifications arrive typed, as [`ServerNotification`], on the stream of
//! [`Client::take_notifications`]; progress for a request reaches that request's sink instead.
//!
//! # Revision 2026-07-28 (the stateless family)
//!
//! With [`ClientOptions::version`]`(ProtocolVersion::V2026_07_28)` the client never sends
//! `initialize`: [`Client::connect`] asks `server/discover` (server identity, capabilities,
//! instructions, versions) and every request carries `_meta` with the protocol version, the
//! client capabilities (from the handlers set, as in `initialize`), the client identity and,
//! when [`ClientOptions::log_level`] is set, the log level. [`ClientOptions::auto`] probes
//! `server/discover` and falls back to the handshake when the server refuses it or does not
//! list 2026-07-28. The default stays the handshake (newest handshake revision), so that an
//! older server never sees a request it does not know.
//!
//! The typed methods keep their signatures. A result with `resultType: "input_required"` is
//! answered with the same [`Sampling`], [`Elicitation`] and [`Roots`] handlers, and the
//! request is sent again with a new id, `inputResponses` and the echoed `requestState`, at
//! most [`ClientOptions::max_input_rounds`] times. `ping`, `logging/setLevel` and
//! `notifications/roots/list_changed` fail locally with [`RequestError::NotSupported`].
//! Notifications are asked for with [`Client::listen`] (`subscriptions/listen`), and
//! [`Client::subscribe`] / [`Client::unsubscribe`] re-open the listen stream with the new set
//! of `resourceSubscriptions`. A server's `-32021` and `-32022` become
//! [`RequestError::NotSupported`] naming the capability or the versions it supports.
//! Lists and reads the server marks with a positive `ttlMs` are answered from a cache while
//! they are fresh (see the `cache` module: bounded by [`ClientOptions::cache_bytes`], made
//! stale by the matching `list_changed` or `resources/updated` notification).

mod cache;
mod form_defaults;
mod handlers;
mod output_schema;
mod service;
mod stateless;
mod task;
mod task_receiver;

#[cfg(test)]
mod handler_tests;
#[cfg(test)]
mod stateless_tests;
#[cfg(test)]
mod tests;

pub use form_defaults::{default_of, fill_defaults};
pub use handlers::{Elicitation, HandlerError, Roots, Sampling};
pub use junction_protocol::messages::ServerNotification;
pub use stateless::Subscription;
pub use task::ToolTask;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use junction_protocol::capabilities::{ClientCapabilities, Flag, ServerCapabilities};
use junction_protocol::completion::{Complete, CompleteParams, CompleteResult};
use junction_protocol::lifecycle::{
    Implementation, Initialize, InitializeParams, InitializeResult, Initialized, Ping,
};
use junction_protocol::logging::{LoggingLevel, SetLevel, SetLevelParams};
use junction_protocol::meta::{NotificationParams, PaginatedParams};
use junction_protocol::method::{Notification as _, Request};
use junction_protocol::prompts::{
    GetPrompt, GetPromptParams, GetPromptResult, ListPrompts, Prompt,
};
use junction_protocol::resources::{
    ListResourceTemplates, ListResources, ReadResource, ReadResourceResult, Resource,
    ResourceTemplate, Subscribe, Unsubscribe, UriParams,
};
use junction_protocol::roots::RootsListChanged;
use junction_protocol::stateless::{
    server_info, StatelessMeta, SubscriptionFilter, SubscriptionsListen,
};
use junction_protocol::tools::{CallTool, CallToolParams, CallToolResult, ListTools, Tool};
use junction_protocol::version::Family;
use junction_protocol::ErrorCode;
use junction_protocol::ProtocolVersion;
use tokio::sync::mpsc;

use self::output_schema::OutputSchemas;
use self::service::{ClientService, Handlers};
use self::stateless::Stateless;
pub(crate) use self::task::poll_delay;
use self::task_receiver::TaskReceiver;
use crate::error::RequestError;
use crate::server::task::TaskSettings;
use crate::session::{Peer, RequestOptions, Session, SessionOptions};
use crate::sync::lock;
use crate::transport::{Connection, TransportError};

/// The most pages a list method follows before it decides the server is looping.
const MAX_PAGES: usize = 10_000;

/// The most items a `list_*` call gathers over all its pages by default
/// ([`ClientOptions::max_list_items`]); a server that offers more fails the call with
/// [`RequestError::Invalid`].
pub const MAX_LIST_ITEMS: usize = 100_000;

/// The most bytes (as JSON) a `list_*` call gathers over all its pages by default: 64 MiB
/// ([`ClientOptions::max_list_bytes`]). An endless or bloated listing fails the call with
/// [`RequestError::Invalid`] instead of growing.
pub const MAX_LIST_BYTES: usize = 64 * 1024 * 1024;
/// How many `input_required` rounds one request may take by default.
const DEFAULT_INPUT_ROUNDS: usize = 8;

/// Why the handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The server could not be reached, or the transport broke before an answer (a refused
    /// connection, an HTTP error status, a stdio server writing something that is not
    /// JSON-RPC); the error names the URL and status, or the offending line.
    #[error("{0}")]
    Transport(crate::transport::TransportError),
    /// `initialize` failed.
    #[error("the handshake failed: {0}")]
    Handshake(RequestError),
    /// The server chose a revision this client does not speak; the connection was closed.
    #[error("the server chose protocol version {chosen:?}, which this client does not support (it offered {offered}); disconnected")]
    UnsupportedVersion {
        /// What the client offered.
        offered: ProtocolVersion,
        /// What the server answered.
        chosen: String,
    },
    /// `server/discover` failed (and the options did not allow falling back to
    /// `initialize`); the error names the method.
    #[error("{0}")]
    Discover(RequestError),
    /// The server does not speak 2026-07-28 and the options asked for exactly that revision.
    #[error("the server does not support protocol version 2026-07-28 (it supports {supported:?}); use ClientOptions::auto to fall back to the handshake")]
    NoStatelessVersion {
        /// The revisions the server listed.
        supported: Vec<String>,
    },
}

impl From<RequestError> for ConnectError {
    /// A failure of the transport stands alone; any other failure is the handshake's.
    fn from(error: RequestError) -> Self {
        match error {
            RequestError::Transport { error, .. } => ConnectError::Transport(error),
            error => ConnectError::Handshake(error),
        }
    }
}

/// How to connect: who the client is, the revision it offers, and the handlers that answer
/// the server's requests (builder by value).
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Who this client is.
    pub info: Implementation,
    /// Which revision to speak: exactly the newest handshake revision by default.
    pub negotiation: Negotiation,
    /// The most `input_required` rounds one request may take (2026-07-28).
    pub max_input_rounds: usize,
    /// The log level asked of the server on every request (2026-07-28 only, where it
    /// replaces `logging/setLevel`); none means the server must not log.
    pub log_level: Option<LoggingLevel>,
    /// Session settings (default request timeout, log name).
    pub session: SessionOptions,
    /// The most items one `list_*` call gathers over all its pages ([`MAX_LIST_ITEMS`]).
    pub max_list_items: usize,
    /// The most bytes (as JSON) one `list_*` call gathers over all its pages
    /// ([`MAX_LIST_BYTES`]).
    pub max_list_bytes: usize,
    /// The most bytes of cacheable 2026-07-28 answers kept ([`ClientOptions::cache_bytes`]).
    pub cache_bytes: usize,
    sampling: Option<Sampling>,
    elicitation: Option<Elicitation>,
    roots: Option<Roots>,
    tasks: bool,
    task_requests: Option<TaskSettings>,
}

impl ClientOptions {
    /// Options for a client called `name`, version `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            info: Implementation::new(name, version),
            negotiation: Negotiation::Exactly(ProtocolVersion::LATEST_HANDSHAKE),
            max_input_rounds: DEFAULT_INPUT_ROUNDS,
            log_level: None,
            session: SessionOptions {
                name: "client".to_owned(),
                ..SessionOptions::default()
            },
            max_list_items: MAX_LIST_ITEMS,
            max_list_bytes: MAX_LIST_BYTES,
            cache_bytes: cache::DEFAULT_BYTES,
            sampling: None,
            elicitation: None,
            roots: None,
            tasks: false,
            task_requests: None,
        }
    }

    /// Speaks as `negotiation` says ([`ClientOptions::version`] or [`ClientOptions::auto`]).
    pub fn negotiation(mut self, negotiation: Negotiation) -> Self {
        self.negotiation = negotiation;
        self
    }

    /// Speaks exactly `version`: a handshake revision is offered in `initialize`;
    /// [`ProtocolVersion::V2026_07_28`] uses `server/discover` and per-request `_meta`, and
    /// fails to connect to a server that does not list it.
    pub fn version(mut self, version: ProtocolVersion) -> Self {
        self.negotiation = Negotiation::Exactly(version);
        self
    }

    /// Speaks the newest revision the server has: probes `server/discover` and uses
    /// 2026-07-28 when the server lists it; when the probe fails (an older server answers
    /// -32601 or refuses it, or answers with something that is not a discover result) or
    /// the server lists only handshake revisions, performs the
    /// `initialize` handshake with the newest handshake revision instead. Not the default,
    /// because an older server sees one extra failed request before `initialize`.
    pub fn auto(mut self) -> Self {
        self.negotiation = Negotiation::Auto;
        self
    }

    /// The most `input_required` rounds one request may take before it fails (2026-07-28).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// The most items one `list_*` call (`list_tools`, `list_prompts`, ...) gathers over
    /// all its pages ([`MAX_LIST_ITEMS`] by default); a server that offers more fails the
    /// call with an error naming the bound.
    pub fn max_list_items(mut self, items: usize) -> Self {
        self.max_list_items = items;
        self
    }

    /// The most bytes (as JSON) one `list_*` call gathers over all its pages
    /// ([`MAX_LIST_BYTES`], 64 MiB, by default); a larger listing fails the call with an
    /// error naming the bound. (One message's size is the transport's bound:
    /// [`Limits::max_frame`](crate::transport::Limits::max_frame) for stdio and child
    /// processes, [`HttpClient::max_message`](crate::transport::http::client::HttpClient::max_message)
    /// over HTTP.)
    pub fn max_list_bytes(mut self, bytes: usize) -> Self {
        self.max_list_bytes = bytes;
        self
    }

    /// The most bytes of answers kept for reuse while the server says they are fresh
    /// (2026-07-28 lists and `resources/read` with a positive `ttlMs`; 4 MiB by default,
    /// the oldest dropped first); 0 turns the cache off, so that every call asks the server.
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    /// Asks for the server's log messages at `level` and above on every request
    /// (2026-07-28, `_meta["io.modelcontextprotocol/logLevel"]`).
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Answers `sampling/createMessage` with `handler`, and declares `sampling`.
    pub fn sampling(mut self, handler: Sampling) -> Self {
        self.sampling = Some(handler);
        self
    }

    /// Answers `elicitation/create` with `handler`, and declares `elicitation` with its modes.
    pub fn elicitation(mut self, handler: Elicitation) -> Self {
        self.elicitation = Some(handler);
        self
    }

    /// Answers `roots/list` with `handler`, and declares `roots`.
    pub fn roots(mut self, handler: Roots) -> Self {
        self.roots = Some(handler);
        self
    }

    /// Declares the tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`): a server
    /// may then run a `tools/call` as a task, which the client follows to its end: it polls
    /// `tasks/get` at the task's `pollIntervalMs`, answers the task's `inputRequests` once
    /// each with the sampling, elicitation and roots handlers through `tasks/update`, and
    /// sends `tasks/cancel` when the call is cancelled; callers still get the call's result
    /// (a failed task's JSON-RPC error as [`RequestError::Remote`]). The handshake family is
    /// unchanged (its tasks are asked for: [`Client::call_tool_as_task`]).
    pub fn tasks(mut self) -> Self {
        self.tasks = true;
        self
    }

    /// Runs the server's task-augmented `sampling/createMessage` and `elicitation/create`
    /// as tasks (2025-11-25), for handlers that take long (a person answering): such a
    /// request is answered at once with a task, and the server follows it with `tasks/get`,
    /// `tasks/result`, `tasks/list` and `tasks/cancel`, which the client then answers;
    /// `tasks/cancel` stops the handler. Declares `tasks.list`, `tasks.cancel` and
    /// `tasks.requests` for the sampling and elicitation handlers set; `settings` bound the
    /// ttl granted and give the `pollInterval` suggested. A request without `task` is
    /// answered as before. On 2026-07-28, which has no such requests, it declares nothing.
    pub fn task_requests(mut self, settings: TaskSettings) -> Self {
        self.task_requests = Some(settings);
        self
    }

    /// The capabilities these options declare in `initialize`.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if let Some(sampling) = &self.sampling {
            caps = caps.with_sampling();
            if sampling.tools {
                caps = caps.with_sampling_tools();
            }
            if let Some(declared) = caps.sampling.as_mut().filter(|_| sampling.context) {
                declared.context = Some(Flag::new());
            }
        }
        if let Some(elicitation) = &self.elicitation {
            if elicitation.form {
                caps = caps.with_elicitation_form();
            }
            if elicitation.url {
                caps = caps.with_elicitation_url();
            }
        }
        if let Some(roots) = &self.roots {
            caps = caps.with_roots(roots.list_changed);
        }
        if self.task_requests.is_some() {
            caps.tasks = Some(TaskReceiver::capability(
                self.sampling.is_some(),
                self.elicitation.is_some(),
            ));
        }
        caps
    }
}

/// Which revision a client speaks ([`ClientOptions::negotiation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negotiation {
    /// Exactly this revision (see [`ClientOptions::version`]).
    Exactly(ProtocolVersion),
    /// The newest the server has (see [`ClientOptions::auto`]).
    Auto,
}

impl Negotiation {
    /// Every value [`Negotiation::from_str`](std::str::FromStr) reads: `auto`, then each
    /// revision, newest first (for command-line choices).
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["auto"];
        names.extend(ProtocolVersion::ALL.iter().rev().map(|v| v.as_str()));
        names
    }
}

impl std::fmt::Display for Negotiation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Negotiation::Auto => f.write_str("auto"),
            Negotiation::Exactly(version) => f.write_str(version.as_str()),
        }
    }
}

/// Reads `auto` or a revision (`2026-07-28`, `2025-11-25`, ...), as a command line or a
/// configuration file gives it.
///
/// ```
/// use junction::client::Negotiation;
/// use junction_protocol::ProtocolVersion;
///
/// assert_eq!("auto".parse::<Negotiation>().unwrap(), Negotiation::Auto);
/// assert_eq!(
///     "2026-07-28".parse::<Negotiation>().unwrap(),
///     Negotiation::Exactly(ProtocolVersion::V2026_07_28)
/// );
/// assert!("2027-01-01".parse::<Negotiation>().is_err());
/// ```
impl std::str::FromStr for Negotiation {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "auto" {
            return Ok(Negotiation::Auto);
        }
        text.parse::<ProtocolVersion>()
            .map(Negotiation::Exactly)
            .map_err(|_| {
                format!(
                    "unknown protocol version {text:?}: expected one of {}",
                    Negotiation::names().join(", ")
                )
            })
    }
}

/// How a connected client speaks: one handshake session, or 2026-07-28 request by request.
/// Everything that differs between the two families is decided here, once per call.
#[derive(Debug)]
enum Dialect {
    /// A handshake revision, negotiated with `initialize`.
    Handshake(ProtocolVersion),
    /// 2026-07-28: `_meta` on every request and the `input_required` rounds.
    Stateless(Box<Stateless>),
}

impl Dialect {
    fn version(&self) -> ProtocolVersion {
        match self {
            Dialect::Handshake(version) => *version,
            Dialect::Stateless(_) => ProtocolVersion::V2026_07_28,
        }
    }

    fn stateless(&self) -> Option<&Stateless> {
        match self {
            Dialect::Handshake(_) => None,
            Dialect::Stateless(stateless) => Some(stateless),
        }
    }

    /// Sends `R`: as is in the handshake family; with `_meta` and the `input_required` retry
    /// loop in 2026-07-28.
    async fn send<R: Request>(
        &self,
        peer: &Peer,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, RequestError> {
        match self {
            Dialect::Handshake(_) => peer.request::<R>(params, options).await,
            Dialect::Stateless(stateless) => stateless.request::<R>(peer, params, options).await,
        }
    }

    /// Refuses, locally, a request this family does not have.
    fn has<R: Request>(&self) -> Result<(), RequestError> {
        let family = self.version().family();
        if R::INFO.families.serves(family) {
            Ok(())
        } else {
            Err(not_in(family, R::METHOD))
        }
    }
}

/// The local refusal of `method`, which `family` does not have.
fn not_in(family: Family, method: &str) -> RequestError {
    let reason = match family {
        Family::Stateless => "protocol version 2026-07-28 has no such request",
        Family::Handshake => "only protocol version 2026-07-28 has it; the handshake family sends notifications without asking",
    };
    RequestError::NotSupported {
        method: method.to_owned(),
        reason: reason.to_owned(),
    }
}

/// A connected, initialized client.
#[derive(Debug)]
pub struct Client {
    peer: Peer,
    /// What the server declared; replaced when the transport starts a new session.
    init: Arc<Mutex<InitializeResult>>,
    dialect: Dialect,
    notifications: Mutex<Option<mpsc::UnboundedReceiver<ServerNotification>>>,
    output_schemas: OutputSchemas,
    /// Each tool's `execution.taskSupport`, from the last `tools/list`.
    task_supports: task::TaskSupports,
    /// The last task the server reported in `notifications/tasks/status`.
    task_updates: task::TaskUpdates,
    /// Whether `roots.listChanged` was declared.
    roots_list_changed: bool,
    /// The resources subscribed to in 2026-07-28, and the listen stream that carries them.
    resource_listen: tokio::sync::Mutex<(BTreeSet<String>, Option<Subscription>)>,
    /// [`ClientOptions::max_list_items`] and [`ClientOptions::max_list_bytes`].
    list_caps: (usize, usize),
}

impl Client {
    /// Connects over `connection`: performs the handshake, or with 2026-07-28 (chosen or
    /// found by [`ClientOptions::auto`]) asks `server/discover`.
    pub async fn connect(
        connection: Connection,
        options: ClientOptions,
    ) -> Result<Client, ConnectError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (ack_tx, ack_rx) = mpsc::unbounded_channel();
        let capabilities = options.capabilities();
        let handlers = Arc::new(Handlers {
            sampling: options.sampling.clone(),
            elicitation: options.elicitation.clone(),
            roots: options.roots.clone(),
        });
        // Until `connect`, no revision: an empty `protocolVersion`.
        let mut unconnected = InitializeResult::new(
            ProtocolVersion::LATEST_HANDSHAKE,
            ServerCapabilities::default(),
            Implementation::new("", ""),
        );
        unconnected.protocol_version.clear();
        let init = Arc::new(Mutex::new(unconnected));
        let cache = Arc::new(cache::ResultCache::new(options.cache_bytes));
        let task_updates = task::TaskUpdates::default();
        let service = ClientService {
            task_updates: task_updates.clone(),
            handlers: handlers.clone(),
            init: init.clone(),
            notifications: tx,
            acks: ack_tx,
            cache: cache.clone(),
            task_receiver: options.task_requests.clone().map(TaskReceiver::new),
        };
        let peer = Session::start(connection, service, options.session.clone());
        let mut client = Client {
            peer,
            init,
            dialect: Dialect::Handshake(ProtocolVersion::LATEST_HANDSHAKE),
            notifications: Mutex::new(Some(rx)),
            output_schemas: OutputSchemas::default(),
            task_supports: Default::default(),
            task_updates,
            roots_list_changed: capabilities.supports_roots_list_changed(),
            resource_listen: tokio::sync::Mutex::new((BTreeSet::new(), None)),
            list_caps: (options.max_list_items, options.max_list_bytes),
        };
        let auto = options.negotiation == Negotiation::Auto;
        let asked = match options.negotiation {
            Negotiation::Exactly(version) => version,
            Negotiation::Auto => ProtocolVersion::V2026_07_28,
        };
        let mut fallback = None;
        if asked.family() == Family::Stateless {
            let mut declared = capabilities.clone();
            // 2026-07-28 sends the server no requests to run as tasks (its tasks are the
            // extension's), so `task_requests` declares nothing there.
            declared.tasks = None;
            if options.tasks {
                declared
                    .extensions
                    .get_or_insert_with(Default::default)
                    .insert(
                        junction_protocol::task_extension::TASKS_EXTENSION.to_owned(),
                        serde_json::Value::Object(serde_json::Map::new()),
                    );
            }
            let mut meta = StatelessMeta::new(ProtocolVersion::V2026_07_28.as_str(), declared);
            meta.client_info = Some(options.info.clone());
            meta.log_level = options.log_level;
            let stateless = Stateless {
                meta,
                max_rounds: options.max_input_rounds,
                handlers,
                acks: tokio::sync::Mutex::new(ack_rx),
                cache,
            };
            match client.discover(&stateless, auto).await {
                Ok(None) => {
                    client.dialect = Dialect::Stateless(Box::new(stateless));
                    return Ok(client);
                }
                Ok(Some(listed)) => fallback = listed,
                Err(e) => {
                    client.peer.close();
                    return Err(e);
                }
            }
        }
        let offered = match (asked.family(), fallback) {
            (Family::Handshake, None) => asked,
            (_, Some(listed)) => listed,
            (Family::Stateless, None) => ProtocolVersion::LATEST_HANDSHAKE,
        };
        let mut params = InitializeParams::new(offered, options.info.clone());
        params.capabilities = capabilities;
        let init = match client
            .peer
            .request::<Initialize>(&params, RequestOptions::default())
            .await
        {
            Ok(init) => init,
            Err(e) => {
                client.peer.close();
                return Err(e.into());
            }
        };
        client.dialect = match init.version() {
            Ok(v) if ProtocolVersion::HANDSHAKE.contains(&v) => Dialect::Handshake(v),
            _ => {
                client.peer.close();
                return Err(ConnectError::UnsupportedVersion {
                    offered,
                    chosen: init.protocol_version,
                });
            }
        };
        *lock(&client.init) = init;
        client
            .peer
            .notify::<Initialized>(&NotificationParams::default(), None)?;
        Ok(client)
    }

    /// Asks `server/discover`; `Ok(None)` when the server speaks 2026-07-28 (the answer is
    /// recorded), `Ok(Some(newest))` when `auto` allows the handshake instead, with the
    /// newest handshake revision the server listed (if it listed any).
    async fn discover(
        &mut self,
        stateless: &Stateless,
        auto: bool,
    ) -> Result<Option<Option<ProtocolVersion>>, ConnectError> {
        let newest = |listed: &[String]| {
            listed
                .iter()
                .filter_map(|v| v.parse::<ProtocolVersion>().ok())
                .filter(|v| v.family() == Family::Handshake)
                .max()
        };
        let found = match stateless.discover(&self.peer).await {
            Ok(found) => found,
            Err(RequestError::Remote { error, .. })
                if auto && error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
            {
                let listed = stateless::supported_versions(&error).unwrap_or_default();
                tracing::debug!(
                    ?listed,
                    "the server refused 2026-07-28; falling back to initialize"
                );
                return Ok(Some(newest(&listed)));
            }
            // An older server refuses the method (with a JSON-RPC error, or over HTTP with a
            // status such as 400 for a request without a session); a lax one may answer it
            // with something that is not a discover result (`{}`): neither speaks
            // 2026-07-28. A server that cannot be reached or authorized with is reported at
            // once: `initialize` would only fail the same way.
            Err(
                e @ (RequestError::Remote { .. }
                | RequestError::Decode { .. }
                | RequestError::Transport {
                    error: TransportError::Status { .. },
                    ..
                }),
            ) if auto => {
                tracing::debug!(error = %e, "server/discover failed; falling back to initialize");
                return Ok(Some(None));
            }
            Err(e @ RequestError::Transport { .. }) => return Err(e.into()),
            Err(e) => {
                return Err(ConnectError::Discover(stateless::explain(
                    e,
                    ProtocolVersion::V2026_07_28.as_str(),
                )))
            }
        };
        let version = ProtocolVersion::V2026_07_28.as_str();
        if !found.supported_versions.iter().any(|v| v == version) {
            if auto {
                return Ok(Some(newest(&found.supported_versions)));
            }
            return Err(ConnectError::NoStatelessVersion {
                supported: found.supported_versions,
            });
        }
        let server_info = found
            .meta
            .as_ref()
            .and_then(server_info)
            .unwrap_or_else(|| Implementation::new("", ""));
        let mut init = InitializeResult::new(
            ProtocolVersion::V2026_07_28,
            found.capabilities,
            server_info,
        );
        init.instructions = found.instructions;
        init.meta = found.meta;
        *lock(&self.init) = init;
        Ok(None)
    }

    async fn send<R: Request>(
        &self,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, RequestError> {
        self.dialect.send::<R>(&self.peer, params, options).await
    }

    /// Opens a `subscriptions/listen` stream for `filter` (2026-07-28) and waits for the
    /// server's acknowledgement; the notifications it carries arrive on
    /// [`Client::take_notifications`]. Types the server did not declare are left out of the
    /// filter (see [`Client::declared`]).
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, RequestError> {
        let Some(stateless) = self.dialect.stateless() else {
            return Err(not_in(Family::Handshake, SubscriptionsListen::METHOD));
        };
        stateless.listen(&self.peer, self.declared(filter)).await
    }

    /// The part of `filter` the server declared it can send: list changes need
    /// `listChanged` on that list, resource updates need `resources.subscribe`.
    pub fn declared(&self, filter: SubscriptionFilter) -> SubscriptionFilter {
        let caps = self.server_capabilities();
        let keep = |asked: Option<bool>, declared: bool| asked.filter(|_| declared);
        let mut kept = SubscriptionFilter::default();
        kept.tools_list_changed = keep(
            filter.tools_list_changed,
            caps.tools
                .as_ref()
                .is_some_and(|t| t.list_changed == Some(true)),
        );
        kept.prompts_list_changed = keep(
            filter.prompts_list_changed,
            caps.prompts
                .as_ref()
                .is_some_and(|p| p.list_changed == Some(true)),
        );
        kept.resources_list_changed = keep(
            filter.resources_list_changed,
            caps.resources
                .as_ref()
                .is_some_and(|r| r.list_changed == Some(true)),
        );
        kept.resource_subscriptions = filter
            .resource_subscriptions
            .filter(|_| caps.supports_resource_subscriptions());
        kept
    }

    /// Replaces the listen stream that carries resource subscriptions (2026-07-28) with one
    /// for `uris`; none when the set is empty.
    async fn relisten(
        &self,
        slot: &mut (BTreeSet<String>, Option<Subscription>),
    ) -> Result<(), RequestError> {
        if let Some(old) = slot.1.take() {
            old.cancel();
        }
        if slot.0.is_empty() {
            return Ok(());
        }
        let filter = SubscriptionFilter::default().resource_subscriptions(slot.0.iter().cloned());
        slot.1 = Some(self.listen(filter).await?);
        Ok(())
    }

    /// The negotiated revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.dialect.version()
    }

    /// What the server declared (in the current session: a transport that starts a new
    /// session reports what the new one declared).
    pub fn server_capabilities(&self) -> ServerCapabilities {
        lock(&self.init).capabilities.clone()
    }

    /// Who the server is (as the current session's server said).
    pub fn server_info(&self) -> Implementation {
        lock(&self.init).server_info.clone()
    }

    /// The server's instructions for the model, if any (the current session's).
    pub fn instructions(&self) -> Option<String> {
        lock(&self.init).instructions.clone()
    }

    /// The session, for requests this type has no method for.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The server's notifications, typed (unknown methods arrive as
    /// [`ServerNotification::Other`], and so do known ones whose params are malformed, after a
    /// warning in the log); `None` after the first call.
    pub fn take_notifications(&self) -> Option<mpsc::UnboundedReceiver<ServerNotification>> {
        lock(&self.notifications).take()
    }

    /// Sends `notifications/roots/list_changed`: call it whenever the roots change. Refused
    /// locally unless the options declared roots with `listChanged`.
    pub fn notify_roots_changed(&self) -> Result<(), RequestError> {
        if !RootsListChanged::INFO
            .families
            .serves(self.protocol_version().family())
        {
            return Err(RequestError::NotSupported {
                method: RootsListChanged::METHOD.to_owned(),
                reason: "protocol version 2026-07-28 removed it (servers ask for roots in inputRequests)".to_owned(),
            });
        }
        if !self.roots_list_changed {
            return Err(RequestError::NotSupported {
                method: RootsListChanged::METHOD.to_owned(),
                reason: "this client did not declare `roots.listChanged`".to_owned(),
            });
        }
        self.peer
            .notify::<RootsListChanged>(&NotificationParams::default(), None)
    }

    /// Closes the connection.
    pub fn close(&self) {
        self.peer.close();
    }

    fn require<R: Request>(&self, supported: bool, capability: &str) -> Result<(), RequestError> {
        if supported {
            Ok(())
        } else {
            Err(RequestError::NotSupported {
                method: R::METHOD.to_owned(),
                reason: format!("the server did not declare the `{capability}` capability"),
            })
        }
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), RequestError> {
        self.dialect.has::<Ping>()?;
        self.peer
            .request::<Ping>(&Default::default(), RequestOptions::default())
            .await
            .map(drop)
    }

    /// Whether the server answers at all: `ping`, or `server/discover` on 2026-07-28,
    /// which has no `ping`.
    pub async fn probe(&self) -> Result<(), RequestError> {
        match self.dialect.stateless() {
            Some(stateless) => stateless.discover(&self.peer).await.map(drop),
            None => self.ping().await,
        }
    }

    /// Every tool, following pages. Remembers each tool's output schema, which
    /// [`Client::call_tool`] then checks results against. Under 2026-07-28, a tool whose
    /// `x-mcp-header` annotations are invalid (see
    /// [`param::annotations`](crate::transport::http::param::annotations)) is left out, with
    /// a warning, as the revision requires. Each tool's schema is kept as the server sent it.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, RequestError> {
        self.require::<ListTools>(lock(&self.init).capabilities.tools.is_some(), "tools")?;
        let mut tools = self
            .collect::<ListTools, _>(|r| (r.tools, r.next_cursor))
            .await?;
        if self.dialect.stateless().is_some() {
            // 2026-07-28: a tool whose `x-mcp-header` annotations break the rules must not
            // be offered (its headers could not be sent right); the others stay usable.
            tools.retain(
                |tool| match crate::transport::http::param::annotations(&tool.input_schema) {
                    Ok(_) => true,
                    Err(reason) => {
                        tracing::warn!(tool = %tool.name, %reason, "leaving out a tool with invalid x-mcp-header annotations");
                        false
                    }
                },
            );
        }
        self.output_schemas.remember(&tools);
        self.task_supports.remember(&tools);
        Ok(tools)
    }

    /// Calls a tool. A tool execution error is an `Ok` result with `isError: true`.
    ///
    /// `options` carries progress (each `notifications/progress` reaches the sink) and
    /// cancellation. When the negotiated revision has structured output and the last
    /// [`Client::list_tools`] gave this tool an `outputSchema`, a successful result must carry
    /// `structuredContent` that matches it, else the call fails with
    /// [`RequestError::Invalid`] naming the problem. Under 2026-07-28 over HTTP, the
    /// `Mcp-Param-*` headers of the call come from the tool's schema as the last
    /// [`Client::list_tools`] gave it: list the tools before calling one that annotates its
    /// arguments with `x-mcp-header`.
    pub async fn call_tool(
        &self,
        params: CallToolParams,
        options: RequestOptions,
    ) -> Result<CallToolResult, RequestError> {
        self.require::<CallTool>(lock(&self.init).capabilities.tools.is_some(), "tools")?;
        let result = self.send::<CallTool>(&params, options).await?;
        if self.protocol_version().has_structured_output() {
            self.output_schemas
                .check(&params.name, &result)
                .map_err(|reason| RequestError::Invalid {
                    method: CallTool::METHOD.to_owned(),
                    reason,
                })?;
        }
        Ok(result)
    }

    /// Every resource, following pages.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, RequestError> {
        self.require::<ListResources>(
            lock(&self.init).capabilities.resources.is_some(),
            "resources",
        )?;
        self.collect::<ListResources, _>(|r| (r.resources, r.next_cursor))
            .await
    }

    /// Every resource template, following pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, RequestError> {
        self.require::<ListResourceTemplates>(
            lock(&self.init).capabilities.resources.is_some(),
            "resources",
        )?;
        self.collect::<ListResourceTemplates, _>(|r| (r.resource_templates, r.next_cursor))
            .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, RequestError> {
        self.require::<ReadResource>(
            lock(&self.init).capabilities.resources.is_some(),
            "resources",
        )?;
        self.send::<ReadResource>(&UriParams::new(uri), RequestOptions::default())
            .await
    }

    /// Subscribes to a resource's updates.
    pub async fn subscribe(&self, uri: &str) -> Result<(), RequestError> {
        self.require::<Subscribe>(
            lock(&self.init)
                .capabilities
                .supports_resource_subscriptions(),
            "resources.subscribe",
        )?;
        if self.dialect.stateless().is_some() {
            let mut slot = self.resource_listen.lock().await;
            if slot.0.insert(uri.to_owned()) {
                if let Err(e) = self.relisten(&mut slot).await {
                    slot.0.remove(uri);
                    return Err(e);
                }
            }
            return Ok(());
        }
        self.peer
            .request::<Subscribe>(&UriParams::new(uri), RequestOptions::default())
            .await
            .map(drop)
    }

    /// Ends a subscription.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), RequestError> {
        self.require::<Unsubscribe>(
            lock(&self.init)
                .capabilities
                .supports_resource_subscriptions(),
            "resources.subscribe",
        )?;
        if self.dialect.stateless().is_some() {
            let mut slot = self.resource_listen.lock().await;
            if slot.0.remove(uri) {
                self.relisten(&mut slot).await?;
            }
            return Ok(());
        }
        self.peer
            .request::<Unsubscribe>(&UriParams::new(uri), RequestOptions::default())
            .await
            .map(drop)
    }

    /// Every prompt, following pages.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, RequestError> {
        self.require::<ListPrompts>(lock(&self.init).capabilities.prompts.is_some(), "prompts")?;
        self.collect::<ListPrompts, _>(|r| (r.prompts, r.next_cursor))
            .await
    }

    /// Gets a prompt with its arguments filled in.
    pub async fn get_prompt(
        &self,
        params: GetPromptParams,
    ) -> Result<GetPromptResult, RequestError> {
        self.require::<GetPrompt>(lock(&self.init).capabilities.prompts.is_some(), "prompts")?;
        self.send::<GetPrompt>(&params, RequestOptions::default())
            .await
    }

    /// Completes a prompt argument or template variable.
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, RequestError> {
        self.require::<Complete>(
            lock(&self.init).capabilities.completions.is_some(),
            "completions",
        )?;
        self.send::<Complete>(&params, RequestOptions::default())
            .await
    }

    /// Sets the level of the server's log messages.
    pub async fn set_level(&self, level: LoggingLevel) -> Result<(), RequestError> {
        self.dialect.has::<SetLevel>()?;
        self.require::<SetLevel>(lock(&self.init).capabilities.logging.is_some(), "logging")?;
        self.peer
            .request::<SetLevel>(&SetLevelParams::new(level), RequestOptions::default())
            .await
            .map(drop)
    }

    async fn collect<R, T>(
        &self,
        split: impl Fn(R::Result) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, RequestError>
    where
        R: Request<Params = PaginatedParams>,
        T: serde::Serialize,
    {
        let mut all = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        for page in 1..=MAX_PAGES {
            let mut params = PaginatedParams::default();
            params.cursor = cursor.clone();
            let (items, next) = split(self.send::<R>(&params, RequestOptions::default()).await?);
            bytes = bytes.saturating_add(encoded_len(&items));
            all.extend(items);
            let (max_items, max_bytes) = self.list_caps;
            let too_much = if all.len() > max_items {
                Some(format!("more than {max_items} items"))
            } else if bytes > max_bytes {
                Some(format!(
                    "more than {} of items",
                    crate::transport::human_bytes(max_bytes)
                ))
            } else {
                None
            };
            if let Some(what) = too_much {
                return Err(RequestError::Invalid {
                    method: R::METHOD.to_owned(),
                    reason: format!("the server offered {what} (stopped after {page} pages)"),
                });
            }
            match next {
                None => return Ok(all),
                Some(next) if Some(&next) == cursor.as_ref() => {
                    return Err(RequestError::Invalid {
                        method: R::METHOD.to_owned(),
                        reason: format!("the server returned the same cursor {next:?} twice"),
                    })
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(RequestError::Invalid {
            method: R::METHOD.to_owned(),
            reason: format!("more than {MAX_PAGES} pages"),
        })
    }
}

/// How many bytes `value` takes as JSON, counted without keeping them.
fn encoded_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Values that were just deserialized serialize again; a failure only undercounts.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
