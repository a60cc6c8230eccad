//! The server side of Streamable HTTP (MCP 2025-11-25, basic/transports) and of the legacy
//! 2024-11-05 HTTP+SSE transport.
//!
//! [`HttpServer`] takes a function that serves one session's [`Connection`] (typically
//! `move |c| { server.serve(c); }`) and gives an axum [`Router`](axum::Router) to mount, or
//! binds a socket itself ([`HttpServer::bind`], [`HttpServer::serve`]).
//!
//! What the endpoint does:
//!
//! - `POST /mcp`: one JSON-RPC message. A notification or response is answered `202`. A
//!   request is answered with one `application/json` body when its response is the first
//!   thing the session sends for it, and otherwise with a `text/event-stream` carrying the
//!   progress, logs and server→client requests made while serving it, then the response
//!   ([`ResponseMode`]).
//! - `GET /mcp`: the standalone SSE stream (messages that belong to no request; while none
//!   is open they wait in a bounded backlog, [`HttpServer::standalone_backlog`], whose oldest
//!   entry is dropped with a warning when full; at most one is open per session), or, with
//!   `Last-Event-ID`, the resumption of any stream of the session: the events it missed are
//!   replayed from the [`EventStore`], then it continues live.
//! - `DELETE /mcp`: ends the session.
//! - SSE polling (SEP-1699): every event stream of a 2025-11-25 session opens with a priming
//!   event (an id, the [`HttpServer::retry`] delay, empty data); a server built with
//!   [`HttpServer::with_control`] may close a stream's connection mid-request
//!   ([`SessionControl::close_stream`]) and the client resumes it.
//! - Sessions: a random `MCP-Session-Id` (128 bits from the OS's CSPRNG) comes with the
//!   initialize result; a later request without one gets `400`, with an unknown or ended one
//!   `404`. Sessions idle longer than [`HttpServer::idle_timeout`] are ended and freed.
//! - [`HttpServer::sessionless`]: no session ids (the handshake family without sessions;
//!   not to be confused with the stateless revision 2026-07-28, served in any mode). Each POST gets a fresh session that lives
//!   until it has answered; for a request other than `initialize` that session stands as
//!   initialized ([`TransportEvent::Sessionless`](crate::transport::TransportEvent)) with the
//!   `MCP-Protocol-Version` header's revision (or 2025-03-26 without one, as the
//!   specification says to assume), no client capabilities and the client name
//!   `sessionless`.
//!   Consequently server→client requests cannot be answered and `GET`/`DELETE` get `405`,
//!   as in the TypeScript SDK's stateless mode.
//! - Every request first passes the `Host`/`Origin` allow-list (`403`), then the `Accept`
//!   (`406`), `Content-Type` (`415`), `MCP-Protocol-Version` (`400`) and size (`413`) checks;
//!   each refusal has a JSON-RPC error body with `"id": null`.
//! - Revision 2026-07-28: a request with `_meta["io.modelcontextprotocol/protocolVersion"]`
//!   (or `server/discover`) and no `MCP-Session-Id` is served without a session, its
//!   `Mcp-Method`/`Mcp-Name` headers checked against the body (`400`, -32020), its stream
//!   without event ids, and cancelled when the client closes its response stream.
//! - Legacy transport, on by default: `GET /sse` opens a session whose first event is
//!   `endpoint` (the path to POST to, `/message?sessionId=…`); everything the session sends,
//!   responses included, arrives on that stream. The session ends when the stream closes.
//!
//! ```no_run
//! use junction::server::Server;
//! use junction::transport::http::server::HttpServer;
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::builder("demo", "1.0.0").build().unwrap();
//! // Either mount it in an axum application…
//! let app = axum::Router::new().merge(HttpServer::new({
//!     let server = server.clone();
//!     move |c| { server.serve(c); }
//! }).router());
//! # drop(app);
//! // …or let it bind 127.0.0.1 itself.
//! HttpServer::new(move |c| { server.serve(c); }).serve("127.0.0.1:3000").await
//! # }
//! ```

mod auth;
mod changes;
mod cluster;
mod endpoint;
mod event_store;
mod guard;
mod legacy;
mod listener;
#[cfg(feature = "redis")]
mod redis_scripts;
#[cfg(feature = "redis")]
mod redis_store;
#[cfg(feature = "redis")]
mod redis_tasks;
mod session;
mod session_store;
mod stateless;

pub use super::{METHOD_HEADER, NAME_HEADER};
pub use auth::BearerAuth;
pub use changes::SharedChanges;
pub use event_store::{
    BadEventId, EventId, EventStore, InMemoryEventStore, DEFAULT_SESSION_EVENT_BYTES,
    DEFAULT_TOTAL_EVENT_BYTES,
};
#[cfg(feature = "redis")]
pub use redis_store::{RedisLimits, RedisSessionStore, DEFAULT_EVENT_TTL, DEFAULT_SESSION_EVENTS};
pub use session::SessionControl;
pub use session_store::{
    RecordChange, Routed, RoutedKind, SessionRecord, SessionStore, StoreError, StreamEvents,
    BUSY_LEASE,
};

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::routing::{head, post};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::task::JoinHandle;

use crate::sync::lock;
use crate::transport::{Connection, DEFAULT_MAX_FRAME, DEFAULT_MAX_QUEUED};
use guard::AllowList;
use session::HttpSession;

/// How many connections [`HttpServer::bind`] serves at once by default: half of the usual
/// 1,024-descriptor limit, leaving room for everything else the process opens.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How long a connection may take to send a request's headers, or stay idle between
/// requests, by default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request's body may take to arrive by default.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// How many sessions live at once by default.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// How long a request stream in [`ResponseMode::AlwaysSse`] waits for its first message
/// before it opens with only its priming event: long enough for a handler that answers at
/// once, short enough that the client of a slow one can resume soon after its connection
/// drops.
pub const SSE_OPEN_GRACE: Duration = Duration::from_millis(10);

/// When a request's answer is an event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseMode {
    /// JSON when the response is the only message for the request, SSE otherwise.
    #[default]
    JsonWhenPossible,
    /// Always an event stream (with a priming event for resumption). The stream's headers
    /// go out with its first message, or with the priming event alone once a request has
    /// run for [`SSE_OPEN_GRACE`] without sending one: a quick response costs one write, as
    /// in JSON.
    AlwaysSse,
}

type ServeFn = dyn Fn(Connection, SessionControl) + Send + Sync;

/// A Streamable HTTP endpoint (plus the legacy HTTP+SSE endpoints), configured by value.
#[derive(Clone)]
pub struct HttpServer {
    config: Config,
    serve: Arc<ServeFn>,
    store: Arc<dyn EventStore>,
    auth: Option<BearerAuth>,
    sessions: Option<SharedStore>,
}

/// A session store and this instance's link to it, made when the store is given so that
/// [`HttpServer::shared_changes`] works before the router is built.
#[derive(Clone)]
struct SharedStore {
    link: session::ClusterLink,
    /// What the link publishes, taken by the first router built (which sends it).
    publish: Arc<Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Routed>>>>,
}

impl SharedStore {
    fn new(store: Arc<dyn SessionStore>) -> Self {
        let (link, rx) = Self::link(store);
        SharedStore {
            link,
            publish: Arc::new(Mutex::new(Some(rx))),
        }
    }

    /// A new instance's link to `store`, and what it publishes.
    fn link(
        store: Arc<dyn SessionStore>,
    ) -> (
        session::ClusterLink,
        tokio::sync::mpsc::UnboundedReceiver<Routed>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let instance = session_store::new_instance_id().unwrap_or_else(|e| {
            // Without the OS's randomness there are no session ids either; any
            // instance id still keeps streams apart from other processes'.
            tracing::error!(error = %e, "no random instance id available");
            std::process::id() | 1
        });
        let link = session::ClusterLink {
            store,
            instance,
            changes: SharedChanges::new(tx.clone(), instance),
            publish: tx,
            record_ttl: Duration::ZERO,
        };
        (link, rx)
    }

    /// The link of a router being built: this one for the first router, a new instance's
    /// for any other built from the same configuration.
    fn for_router(
        &self,
    ) -> (
        session::ClusterLink,
        tokio::sync::mpsc::UnboundedReceiver<Routed>,
    ) {
        match lock(&self.publish).take() {
            Some(rx) => (self.link.clone(), rx),
            None => Self::link(self.link.store.clone()),
        }
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone)]
struct Config {
    path: String,
    sse_path: String,
    message_path: String,
    legacy: bool,
    sessionless: bool,
    mode: ResponseMode,
    allow: AllowList,
    idle_timeout: Duration,
    max_body: usize,
    retry: Duration,
    standalone_backlog: usize,
    keep_alive: Duration,
    body_timeout: Duration,
    max_queued: usize,
    max_sessions: usize,
    connections: listener::ConnectionLimits,
}

impl HttpServer {
    /// An endpoint whose sessions are served by `serve` (called once per session with its
    /// connection; it should start serving and return).
    pub fn new(serve: impl Fn(Connection) + Send + Sync + 'static) -> Self {
        Self::with_control(move |connection, _| serve(connection))
    }

    /// Like [`HttpServer::new`], and `serve` also gets the session's [`SessionControl`],
    /// for servers that steer their streams (e.g. close one for the client to poll).
    pub fn with_control(
        serve: impl Fn(Connection, SessionControl) + Send + Sync + 'static,
    ) -> Self {
        HttpServer {
            config: Config {
                path: "/mcp".to_owned(),
                sse_path: "/sse".to_owned(),
                message_path: "/message".to_owned(),
                legacy: true,
                sessionless: false,
                mode: ResponseMode::default(),
                allow: AllowList::default(),
                idle_timeout: Duration::from_secs(30 * 60),
                max_body: DEFAULT_MAX_FRAME,
                retry: Duration::from_secs(1),
                standalone_backlog: 256,
                keep_alive: Duration::from_secs(15),
                body_timeout: DEFAULT_BODY_TIMEOUT,
                max_queued: DEFAULT_MAX_QUEUED,
                max_sessions: DEFAULT_MAX_SESSIONS,
                connections: listener::ConnectionLimits {
                    max_connections: DEFAULT_MAX_CONNECTIONS,
                    header_timeout: DEFAULT_HEADER_TIMEOUT,
                },
            },
            serve: Arc::new(serve),
            store: Arc::new(InMemoryEventStore::default()),
            auth: None,
            sessions: None,
        }
    }

    /// The MCP endpoint's path (`/mcp` by default).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.config.path = path.into();
        self
    }

    /// Serves (true, the default) or not the legacy `GET /sse` and `POST /message` endpoints.
    pub fn legacy(mut self, on: bool) -> Self {
        self.config.legacy = on;
        self
    }

    /// The legacy endpoints' paths (`/sse` and `/message` by default). The `endpoint` event
    /// announces the message path as given, so include any prefix the router is nested under.
    pub fn legacy_paths(mut self, sse: impl Into<String>, message: impl Into<String>) -> Self {
        self.config.sse_path = sse.into();
        self.config.message_path = message.into();
        self
    }

    /// Serves without sessions (see the module documentation for what that implies).
    pub fn sessionless(mut self) -> Self {
        self.config.sessionless = true;
        self
    }

    /// The former name of [`HttpServer::sessionless`].
    #[deprecated(note = "renamed `sessionless`: \"stateless\" names the 2026-07-28 revision")]
    pub fn stateless(self) -> Self {
        self.sessionless()
    }

    /// When to answer with an event stream.
    pub fn response_mode(mut self, mode: ResponseMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// The host names (any port) requests may be addressed to: compared with the `Host`
    /// header. Replaces the default loopback names.
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.config.allow.hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The host names (any scheme and port) of the `Origin`s requests may come from.
    /// Replaces the default loopback names. Requests without `Origin` are not browsers' and
    /// pass.
    pub fn allowed_origins<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.config.allow.origins = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// How long a session may stay idle (no request, no open stream) before it is ended;
    /// 30 minutes by default.
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.config.idle_timeout = idle;
        self
    }

    /// The largest POST body accepted (4 MiB by default); larger ones get `413`.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.config.max_body = bytes;
        self
    }

    /// How long a request's body may take to arrive once its headers have (30 s by default,
    /// [`DEFAULT_BODY_TIMEOUT`]); a slower body is refused with `408`.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.config.body_timeout = timeout;
        self
    }

    /// The most bytes of events that wait for a client reading one stream, and in the
    /// standalone backlog ([`DEFAULT_MAX_QUEUED`], 16 MiB, by default). A client that lets
    /// more pile up has the stream's connection closed, and resumes it from the event store;
    /// on a stream that cannot be resumed (revisions before 2025-11-25, stateless mode, the
    /// legacy transport) the session ends instead.
    pub fn max_queued(mut self, bytes: usize) -> Self {
        self.config.max_queued = bytes;
        self
    }

    /// How many connections [`HttpServer::bind`] serves at once ([`DEFAULT_MAX_CONNECTIONS`]);
    /// one more is answered `503` with `Retry-After` and closed. Each open SSE stream holds
    /// a connection. (A router served by the application is limited by the application.)
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.config.connections.max_connections = connections.max(1);
        self
    }

    /// How long [`HttpServer::bind`] waits for a request's headers, on a new connection or
    /// between requests on a kept-alive one, before closing it (10 s by default,
    /// [`DEFAULT_HEADER_TIMEOUT`]).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.config.connections.header_timeout = timeout;
        self
    }

    /// How many sessions (Streamable HTTP; legacy SSE sessions hold a connection each and are
    /// bounded by [`HttpServer::max_connections`]) live at once ([`DEFAULT_MAX_SESSIONS`]).
    ///
    /// A new session beyond the cap ends the session idle the longest: its client gets
    /// `404` at its next request and, as the specification requires, starts a new session.
    /// When every session is busy (a request in flight or a stream open), the new
    /// `initialize` is refused with `503` and `Retry-After` instead. Evicting rather than
    /// refusing means that a client opening sessions in a loop cannot lock everyone else out
    /// for the idle timeout (30 minutes): the cost falls on idle sessions, which recover.
    /// With a [`HttpServer::session_store`] the same rule holds over the sessions of all
    /// instances together ([`SessionStore::admit`]).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.config.max_sessions = sessions.max(1);
        self
    }

    /// The `retry` delay announced in each stream's priming event (1 s by default).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.config.retry = retry;
        self
    }

    /// How many messages for the standalone stream wait while no GET stream is open (256
    /// by default); beyond that the oldest is dropped with a warning.
    pub fn standalone_backlog(mut self, messages: usize) -> Self {
        self.config.standalone_backlog = messages.max(1);
        self
    }

    /// How often a 2026-07-28 response stream with nothing to send gets an SSE comment
    /// (15 s by default): a write is how a closed stream is noticed, and closing a stream
    /// cancels its request in that revision.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.config.keep_alive = every.max(Duration::from_millis(1));
        self
    }

    /// Requires a bearer token on every endpoint and serves the protected resource
    /// metadata ([`BearerAuth`]).
    pub fn authorization(mut self, auth: BearerAuth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Where events are kept for resumption ([`InMemoryEventStore`] by default).
    pub fn event_store(mut self, store: impl EventStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Shares sessions with the other instances of this server through `store` (see
    /// [`SessionStore`]): any instance then serves any request of a session, and resumes
    /// any stream. Without one (the default) sessions live in this process only.
    ///
    /// [`HttpServer::router`] must then be called within a Tokio runtime: it starts the
    /// tasks that route messages between instances and keep this instance's heartbeat.
    pub fn session_store(mut self, store: impl SessionStore) -> Self {
        self.sessions = Some(SharedStore::new(Arc::new(store)));
        self
    }

    /// How a server shares its change notifications with the other instances (with a
    /// [`HttpServer::session_store`]; `None` without one): give it to
    /// [`Server::share_changes`](crate::server::Server::share_changes) so that the server
    /// publishes its changes from its start, and its 2026-07-28 `subscriptions/listen`
    /// requests hear the changes of every instance. Without it the server learns the link
    /// from its first session.
    pub fn shared_changes(&self) -> Option<SharedChanges> {
        self.sessions.as_ref().map(|s| s.link.changes.clone())
    }

    /// Where the server's tasks are shared with the other instances (with a
    /// [`HttpServer::session_store`] that shares them, as Redis does; `None` otherwise):
    /// give it to [`Server::share_tasks`](crate::server::Server::share_tasks) so that
    /// `tasks/get`, `tasks/list`, `tasks/result` and `tasks/cancel` answer on every
    /// instance. Must be called within a Tokio runtime.
    pub fn shared_tasks(&self) -> Option<Arc<dyn crate::server::task::SharedTasks>> {
        let link = &self.sessions.as_ref()?.link;
        link.store.tasks(link.instance)
    }

    /// The endpoints as an axum router, with the Host/Origin guard, the declared-length
    /// check and the body timeout on every route.
    ///
    /// When serving it yourself, set TCP_NODELAY on accepted sockets (as [`HttpServer::bind`]
    /// does): without it every exchange stalls on delayed ACKs; and bound connections and
    /// header reads yourself, since [`HttpServer::max_connections`] and
    /// [`HttpServer::header_timeout`] are [`HttpServer::bind`]'s. The router has no fallback,
    /// so it merges into an application's router.
    pub fn router(self) -> axum::Router {
        let config = self.config.clone();
        let (cluster, publish_rx) = match &self.sessions {
            Some(store) => {
                let (mut link, rx) = store.for_router();
                link.record_ttl = config.idle_timeout;
                (Some(link), Some(rx))
            }
            None => (None, None),
        };
        let shared = Arc::new(Shared {
            config: self.config,
            serve: self.serve,
            store: self.store,
            cluster,
            sessions: Mutex::new(HashMap::new()),
            legacy: Mutex::new(HashMap::new()),
            reaper: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
        });
        if let Some(rx) = publish_rx {
            cluster::start(&shared, rx);
        }
        let mut router = axum::Router::new().route(
            &config.path,
            // HEAD first: axum would otherwise run GET for it, opening a stream nobody reads.
            head(endpoint::method_not_allowed)
                .post(endpoint::post)
                .get(endpoint::get)
                .delete(endpoint::delete)
                .fallback(endpoint::method_not_allowed),
        );
        if config.legacy {
            router = router
                .route(
                    &config.sse_path,
                    head(endpoint::method_not_allowed)
                        .get(legacy::open)
                        .fallback(endpoint::method_not_allowed),
                )
                .route(
                    &config.message_path,
                    post(legacy::message).fallback(endpoint::method_not_allowed),
                );
        }
        if let Some(auth) = &self.auth {
            router = auth
                .clone()
                .max_body(config.max_body)
                .protect_sessions(router, self.sessions.is_some());
        }
        router
            .layer(guard::Checks(shared.clone()))
            .with_state(shared)
    }

    /// Binds `addr` (use 127.0.0.1 for a local server) and serves in a background task.
    pub async fn bind(self, addr: impl ToSocketAddrs) -> std::io::Result<RunningServer> {
        self.bind_listener(TcpListener::bind(addr).await?)
    }

    /// Serves on a listener already bound (e.g. to learn the port before configuring
    /// [`BearerAuth`] with the public URL).
    pub fn bind_listener(self, listener: TcpListener) -> std::io::Result<RunningServer> {
        let local_addr = listener.local_addr()?;
        let limits = self.config.connections;
        let app = self.router();
        let task = tokio::spawn(listener::serve(listener, app, limits));
        Ok(RunningServer { local_addr, task })
    }

    /// Binds `addr` and serves until the process ends.
    pub async fn serve(self, addr: impl ToSocketAddrs) -> std::io::Result<()> {
        let mut running = self.bind(addr).await?;
        tracing::info!(addr = %running.local_addr, "serving MCP over HTTP");
        (&mut running.task).await.map_err(std::io::Error::other)
    }
}

/// A server started by [`HttpServer::bind`]; dropping it stops accepting connections (open
/// ones finish on their own).
#[derive(Debug)]
pub struct RunningServer {
    local_addr: SocketAddr,
    task: JoinHandle<()>,
}

impl RunningServer {
    /// The address bound (with the actual port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL of a path on this server, e.g. `url("/mcp")`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.local_addr)
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What every handler shares.
struct Shared {
    config: Config,
    serve: Arc<ServeFn>,
    store: Arc<dyn EventStore>,
    /// The shared session store, when instances share sessions.
    cluster: Option<session::ClusterLink>,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    legacy: Mutex<HashMap<String, legacy::LegacySession>>,
    reaper: Mutex<Option<JoinHandle<()>>>,
    /// The tasks of a shared session store (routing, heartbeat).
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.reaper).take() {
            task.abort();
        }
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

impl Shared {
    /// Adds a session, first making room under [`HttpServer::max_sessions`] by ending the
    /// one idle the longest; `503` when every session is busy.
    fn insert_session(self: &Arc<Self>, session: Arc<HttpSession>) -> Result<(), guard::Refusal> {
        let evicted = {
            let mut sessions = lock(&self.sessions);
            sessions.retain(|_, s| !s.is_closed());
            let evicted = if sessions.len() >= self.config.max_sessions {
                let oldest = sessions
                    .iter()
                    .filter_map(|(id, s)| s.idle_since().map(|since| (since, id.clone())))
                    .min();
                let Some((_, id)) = oldest else {
                    return Err(all_busy());
                };
                sessions.remove(&id)
            } else {
                None
            };
            sessions.insert(session.id.clone(), session);
            evicted
        };
        if let Some(evicted) = evicted {
            tracing::info!(session = %evicted.id, limit = self.config.max_sessions, "ending the session idle the longest to make room for a new one");
            evicted.close();
        }
        let mut reaper = lock(&self.reaper);
        if reaper.is_none() {
            *reaper = Some(tokio::spawn(reap(Arc::downgrade(self))));
        }
        Ok(())
    }

    /// Adds a session restored from the shared store, unless a concurrent request restored
    /// it first: the session held here afterwards.
    fn adopt_session(
        self: &Arc<Self>,
        session: Arc<HttpSession>,
    ) -> Result<Arc<HttpSession>, guard::Refusal> {
        if let Some(existing) = self.session(&session.id) {
            session.discard();
            return Ok(existing);
        }
        if let Err(refusal) = self.insert_session(session.clone()) {
            session.close();
            return Err(refusal);
        }
        Ok(session)
    }

    fn session(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.sessions)
            .get(id)
            .filter(|s| !s.is_closed())
            .cloned()
    }

    /// Each session held here, with when it became idle (`None` while it is busy).
    fn activity(&self) -> Vec<(String, Option<std::time::Instant>)> {
        lock(&self.sessions)
            .iter()
            .filter(|(_, s)| !s.is_closed())
            .map(|(id, s)| (id.clone(), s.idle_since()))
            .collect()
    }

    /// The sessions whose standalone GET stream is open on this instance.
    fn sessions_holding_standalone(&self) -> Vec<Arc<HttpSession>> {
        lock(&self.sessions)
            .values()
            .filter(|s| s.holds_standalone())
            .cloned()
            .collect()
    }

    fn remove_session(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.sessions).remove(id)
    }
}

/// The refusal of a new session when the sessions are at the cap and all busy.
fn all_busy() -> guard::Refusal {
    guard::refuse(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        guard::TRANSPORT_ERROR,
        "Service Unavailable: the server has as many sessions as it allows, all busy; retry later",
    )
    .retry_after(1)
}

/// Ends idle sessions and forgets ended ones, a few times per idle period.
async fn reap(shared: Weak<Shared>) {
    loop {
        let period = match shared.upgrade() {
            Some(s) => (s.config.idle_timeout / 4)
                .clamp(Duration::from_millis(10), Duration::from_secs(60)),
            None => return,
        };
        tokio::time::sleep(period).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let idle = shared.config.idle_timeout;
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = lock(&shared.sessions);
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.is_closed() || s.idle_for(idle))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in expired {
            if !session.is_closed() {
                tracing::debug!(session = %session.id, "ending an idle session");
            }
            session.close();
        }
    }
}

/// A new session id: 128 bits from the operating system's CSPRNG, in hex.
fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
