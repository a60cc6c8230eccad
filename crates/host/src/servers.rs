//! The set of connected servers: one [`Client`] per server, started in parallel.
//!
//! [`Servers::start`] starts every enabled server at once, each under its own start-up
//! timeout (spawn or connect, handshake and the first listing of tools, prompts and
//! resources). Stdio entries run as child processes; `http` entries are reached over
//! Streamable HTTP (which falls back by itself to the 2024-11-05 HTTP+SSE transport when the
//! server refuses the initialize POST) and `sse` entries over HTTP+SSE directly, with the
//! entry's `headers` on every request. A server that exits, cannot be reached, times out or
//! fails its handshake is reported as a [`StartFailure`] (with the tail of its stderr for a
//! child), and the others go on. A child starts with a clean environment (see
//! [`environment`]). [`Servers::add_connection`] adds a server reached over any
//! [`Connection`] (in-process servers, tests).
//!
//! A server that stops while the host runs (its process exits, its connection closes; an
//! HTTP server that can no longer be reached, see `ConnectedServer::notice_unreachable`)
//! is noticed at once: [`ConnectedServer::stopped`] says why, with its last stderr lines, and
//! an [`Event::ServerStatus`] with [`ServerState::Stopped`] is sent. [`Servers::restart`]
//! starts it again from its config entry; [`Servers::revive`] does the same when a call
//! needs it, with back-off (see [`Backoff`]) so that a server that dies on every call is not
//! started again and again.
//!
//! Each server's client gets its own handlers for what the server may ask back: sampling
//! and elicitation when [`StartOptions::mediation`] is set (see [`crate::mediation`]), roots
//! when its [`ServerSettings::roots`] are. The server's notifications keep its lists current
//! (see [`crate::notifications`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use junction::client::{Client, ClientOptions, Negotiation, Subscription};
use junction::transport::child::{ChildProcess, ShutdownTimeouts};
use junction::transport::http::client::Finished;
use junction::transport::{Connection, TransportError};
use junction::RequestError;
use junction_protocol::logging::LoggingLevel;
use junction_protocol::prompts::Prompt;
use junction_protocol::resources::{Resource, ResourceTemplate};
use junction_protocol::roots::Root;
use junction_protocol::tools::Tool;
use junction_protocol::version::Family;
use tokio::task::JoinSet;

pub mod environment;
mod start;

use start::{connect, ended, finish, start_one, timeout_reason};

use crate::config::ServerConfig;
use crate::events::{Event, EventSink, ServerState};
use crate::mediation::{invalid_root, Attention, Mediation, SharedRoots};
use crate::policy::Action;

/// How servers are started.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// The client identity and session settings used for every server. Its
    /// [`ClientOptions::log_level`] is the least severe log message servers are asked for:
    /// with `logging/setLevel` after the handshake (to servers that declare `logging`), or
    /// in each request's `_meta` on 2026-07-28, which has no such method; `None` asks
    /// nothing (handshake servers then send what they like, 2026-07-28 servers nothing).
    pub client: ClientOptions,
    /// How long a server may take to start, unless its config entry says otherwise.
    pub startup_timeout: Duration,
    /// Who answers servers' sampling and elicitation requests; `None` declares neither.
    pub mediation: Option<Mediation>,
    /// The roots offered to servers whose config entry gives none (the chat offers the
    /// working directory); empty offers none, leaving the roots capability undeclared.
    pub roots: Vec<Root>,
    /// The largest message read from a server, in bytes: one stdio line of a child
    /// ([`Limits::max_frame`](junction::transport::Limits::max_frame)), one HTTP answer or
    /// event ([`HttpClient::max_message`](junction::transport::http::client::HttpClient::max_message)).
    /// A larger answer fails its request at once, saying so.
    pub max_message: usize,
}

/// The least severe log message servers are asked to send unless told otherwise.
pub const DEFAULT_LOG_LEVEL: LoggingLevel = LoggingLevel::Warning;

impl Default for StartOptions {
    /// Automatic negotiation, the tasks extension declared (a call the server runs as a
    /// task is followed to its end), servers' log messages from [`DEFAULT_LOG_LEVEL`] up,
    /// 30 s to start, no mediation, no default roots, messages of up to 4 MiB.
    fn default() -> Self {
        StartOptions {
            client: ClientOptions::new("junction", env!("CARGO_PKG_VERSION"))
                .auto()
                .tasks()
                .log_level(DEFAULT_LOG_LEVEL),
            startup_timeout: Duration::from_secs(30),
            mediation: None,
            roots: Vec::new(),
            max_message: junction::transport::DEFAULT_MAX_FRAME,
        }
    }
}

impl StartOptions {
    /// Sets who answers servers' sampling and elicitation requests.
    pub fn mediation(mut self, mediation: Mediation) -> Self {
        self.mediation = Some(mediation);
        self
    }

    /// Takes the bounds a config sets on what servers send (`junction.maxListItems`,
    /// `maxListBytes`, `maxMessage`); those it leaves out stay as they are.
    pub fn limits_of(mut self, config: &crate::config::Config) -> Self {
        if let Some(items) = config.max_list_items {
            self.client = self.client.max_list_items(items);
        }
        if let Some(bytes) = config.max_list_bytes {
            self.client = self.client.max_list_bytes(bytes);
        }
        if let Some(bytes) = config.max_message {
            self.max_message = bytes;
        }
        self
    }

    /// Sets the roots offered to servers whose config entry gives none.
    pub fn roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.roots = roots.into_iter().collect();
        self
    }
}

/// What the host grants one server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSettings {
    /// Whether its tool annotations are believed.
    pub trusted: bool,
    /// Whether its sampling requests reach the model without asking, after asking, or never.
    pub sampling: Action,
    /// The roots it is told about; `None` leaves the roots capability undeclared.
    pub roots: Option<Vec<Root>>,
    /// How long one of its tool calls may go without an answer or progress; the host's
    /// default when `None`.
    pub tool_timeout: Option<Duration>,
    /// From how long a call of one of its `optional` tools on, that tool runs as a task;
    /// never when `None`.
    pub task_after: Option<Duration>,
    /// The revision to speak with it; the start options' when `None`.
    pub protocol_version: Option<Negotiation>,
}

impl Default for ServerSettings {
    /// Untrusted, sampling after asking, no roots, the host's tool timeout.
    fn default() -> Self {
        ServerSettings {
            trusted: false,
            sampling: Action::Ask,
            roots: None,
            tool_timeout: None,
            task_after: None,
            protocol_version: None,
        }
    }
}

impl ServerSettings {
    /// The default settings, with the server's annotations believed.
    pub fn trusted() -> Self {
        ServerSettings {
            trusted: true,
            ..ServerSettings::default()
        }
    }

    /// Sets the sampling policy.
    pub fn sampling(mut self, action: Action) -> Self {
        self.sampling = action;
        self
    }

    /// Sets the roots (and so declares the roots capability).
    pub fn roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.roots = Some(roots.into_iter().collect());
        self
    }

    /// Runs each of its `optional` tools as a task once a call of it took `after` (every
    /// call when zero).
    pub fn task_after(mut self, after: Duration) -> Self {
        self.task_after = Some(after);
        self
    }

    /// Sets how the protocol revision is chosen (automatic when never set).
    pub fn negotiation(mut self, negotiation: Negotiation) -> Self {
        self.protocol_version = Some(negotiation);
        self
    }
}

impl ServerConfig {
    /// What this entry grants its server.
    pub fn settings(&self) -> ServerSettings {
        ServerSettings {
            trusted: self.trusted,
            sampling: self.sampling,
            roots: self
                .roots
                .as_ref()
                .map(|uris| uris.iter().map(Root::new).collect()),
            tool_timeout: self.tool_timeout,
            task_after: self.task_after,
            protocol_version: self.protocol_version,
        }
    }
}

/// Why the roots of a server could not be changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootsError {
    /// The server was connected without roots, so it was never offered the capability.
    #[error("server `{0}` was connected without roots, so the roots capability was not declared to it; give it `roots` in its config")]
    NotDeclared(String),
    /// A root is not a `file://` URI.
    #[error("{0:?} is not a file:// URI; roots must be file:// URIs")]
    NotAFileUri(String),
    /// The server could not be told.
    #[error("server `{server}` could not be told its roots changed: {reason}")]
    Notify {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
}

/// A server that could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("server `{server}` did not start: {reason}{}", tail_text(.stderr_tail))]
pub struct StartFailure {
    /// The server's config key.
    pub server: String,
    /// Why.
    pub reason: String,
    /// The last lines it wrote to stderr.
    pub stderr_tail: Vec<String>,
}

fn tail_text(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n{}", tail.join("\n"))
    }
}

/// Why a server that was running stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Why, in words (its exit status, for a child).
    pub reason: String,
    /// The last lines it wrote to stderr, if it is a child process.
    pub stderr_tail: Vec<String>,
}

/// Why a server could not be started again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestartError {
    /// No config entry has that name.
    #[error("no configured server is called `{0}`")]
    Unknown(String),
    /// It was connected by the program (in-process), not started from a config entry.
    #[error("server `{0}` was not started from a config entry, so it cannot be started again")]
    NotConfigured(String),
    /// It was started again a moment ago and stopped again; the next try waits.
    #[error("server `{server}` stopped again soon after it was started again; it is tried again in {} s (or now with /restart {server})", .wait.as_secs().max(1))]
    BackingOff {
        /// The server.
        server: String,
        /// How long until the next automatic try.
        wait: Duration,
    },
    /// Starting it failed.
    #[error(transparent)]
    Failed(#[from] StartFailure),
}

/// How long the host waits before starting a stopped server again by itself: nothing the
/// first time, then twice as long after each start that was not followed by a successful
/// call, up to [`Backoff::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Starts since the server last answered a call.
    pub starts: u32,
    /// When the last start was tried.
    pub last: Instant,
}

impl Backoff {
    /// The longest wait.
    pub const MAX: Duration = Duration::from_secs(60);

    /// How long after [`Backoff::last`] the next automatic start may be tried.
    pub fn delay(&self) -> Duration {
        match self.starts {
            0 => Duration::ZERO,
            n => Duration::from_secs(1u64 << (n - 1).min(6)).min(Backoff::MAX),
        }
    }

    /// How long from `now` until the next automatic start may be tried; zero when it may
    /// be tried now.
    pub fn wait(&self, now: Instant) -> Duration {
        (self.last + self.delay()).saturating_duration_since(now)
    }
}

/// How long shutdown waits for an HTTP session to be deleted on its server.
const HTTP_SHUTDOWN: Duration = Duration::from_secs(5);

/// What the host runs for a server besides its client, ended on shutdown.
#[derive(Debug)]
enum Backing {
    /// The server's child process.
    Process(Box<ChildProcess>),
    /// The HTTP transport, finished once the session was deleted on the server.
    Http(Finished),
}

/// What a server offers, as last listed.
#[derive(Debug, Default)]
struct Lists {
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
}

/// One connected server and what it offers (kept current by its list-changed
/// notifications).
#[derive(Debug)]
pub struct ConnectedServer {
    /// The config key.
    pub name: String,
    /// Whether its annotations are believed.
    pub trusted: bool,
    /// How long one of its tool calls may go quiet; the host's default when `None`.
    pub tool_timeout: Option<Duration>,
    /// Which of its `optional` tools run as tasks.
    pub(crate) slow_tools: crate::tool_call::SlowTools,
    /// Whether the user is answering one of its questions (see [`Attention`]).
    pub attention: Attention,
    /// The client connected to it.
    pub client: Client,
    lists: RwLock<Lists>,
    roots: Option<SharedRoots>,
    backing: tokio::sync::Mutex<Option<Backing>>,
    /// The OAuth client of an HTTP server.
    oauth: Option<std::sync::Arc<junction::auth::OAuthClient>>,
    /// Set once it is known to have stopped.
    stopped: Mutex<Option<Stopped>>,
    /// Its `subscriptions/listen` stream (2026-07-28), until `notifications::follow` takes
    /// it to watch for its end.
    listening: Mutex<Option<Subscription>>,
    /// Set when the host itself ends it (shutdown, restart): that is no crash.
    closing: AtomicBool,
    /// Set once one of its tool calls got an answer (which resets the back-off).
    answered: AtomicBool,
}

impl ConnectedServer {
    fn read<T>(&self, f: impl FnOnce(&Lists) -> T) -> T {
        f(&self.lists.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn write(&self, f: impl FnOnce(&mut Lists)) {
        f(&mut self.lists.write().unwrap_or_else(PoisonError::into_inner))
    }

    /// What is stored of its authorization (`None` for a server without OAuth, a stdio
    /// one); never a token.
    pub fn authorization(&self) -> Option<Option<junction::auth::TokenStatus>> {
        self.oauth.as_ref().map(|o| o.status())
    }

    /// Its tools.
    pub fn tools(&self) -> Vec<Tool> {
        self.read(|l| l.tools.clone())
    }

    /// Its prompts.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.read(|l| l.prompts.clone())
    }

    /// Its resources.
    pub fn resources(&self) -> Vec<Resource> {
        self.read(|l| l.resources.clone())
    }

    /// Its resource templates.
    pub fn templates(&self) -> Vec<ResourceTemplate> {
        self.read(|l| l.templates.clone())
    }

    /// Lists its tools again and keeps the new list.
    pub async fn refresh_tools(&self) -> Result<Vec<Tool>, RequestError> {
        let tools = self.client.list_tools().await?;
        self.write(|l| l.tools.clone_from(&tools));
        Ok(tools)
    }

    /// Lists its prompts again and keeps the new list.
    pub async fn refresh_prompts(&self) -> Result<Vec<Prompt>, RequestError> {
        let prompts = self.client.list_prompts().await?;
        self.write(|l| l.prompts.clone_from(&prompts));
        Ok(prompts)
    }

    /// Lists its resources and resource templates again and keeps the new lists; returns
    /// how many there are.
    pub async fn refresh_resources(&self) -> Result<usize, RequestError> {
        let resources = self.client.list_resources().await?;
        let templates = self.client.list_resource_templates().await?;
        let count = resources.len() + templates.len();
        self.write(|l| {
            l.resources = resources;
            l.templates = templates;
        });
        Ok(count)
    }

    /// The roots it is told about; `None` when it was connected without roots.
    pub fn roots(&self) -> Option<Vec<Root>> {
        self.roots.as_ref().map(SharedRoots::get)
    }

    /// Replaces its roots and sends it `notifications/roots/list_changed` (on 2026-07-28,
    /// where servers ask for roots with each request, there is nothing to send).
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<(), RootsError> {
        let shared = self
            .roots
            .as_ref()
            .ok_or_else(|| RootsError::NotDeclared(self.name.clone()))?;
        if let Some(bad) = invalid_root(&roots) {
            return Err(RootsError::NotAFileUri(bad.uri.clone()));
        }
        shared.set(roots);
        // 2026-07-28 has no such notification: servers ask for roots in each request's
        // input requests, so they see the new ones next time.
        if self.client.protocol_version().family() == Family::Stateless {
            return Ok(());
        }
        self.client
            .notify_roots_changed()
            .map_err(|e| RootsError::Notify {
                server: self.name.clone(),
                reason: e.to_string(),
            })
    }

    /// Its `subscriptions/listen` stream, taken once.
    pub(crate) fn take_listening(&self) -> Option<Subscription> {
        self.listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Whether the host itself is ending it (shutdown, restart).
    pub(crate) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// Why it stopped, once it did; `None` while it runs.
    pub fn stopped(&self) -> Option<Stopped> {
        self.stopped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records that one of its calls got an answer: it works, so a later stop is started
    /// again without waiting.
    pub(crate) fn answered(&self) {
        self.answered.store(true, Ordering::Relaxed);
    }

    /// Whether its connection is known to be gone (it stopped, or its session closed
    /// without the host noticing yet).
    pub fn is_down(&self) -> bool {
        self.stopped().is_some() || self.client.peer().is_closed()
    }

    /// Called when its connection ended: finds out why (a child's exit status and last
    /// stderr lines; the child is ended if it still runs, since its connection is gone),
    /// records it and reports [`ServerState::Stopped`], once. `None` when the host itself
    /// ended it.
    pub(crate) async fn notice_stop(&self, events: &EventSink) -> Option<Stopped> {
        let mut backing = self.backing.lock().await;
        if let Some(stopped) = self.stopped() {
            return Some(stopped);
        }
        if self.closing.load(Ordering::SeqCst) {
            return None;
        }
        let stopped = match backing.as_mut() {
            Some(Backing::Process(process)) => {
                let (status, stderr_tail) = ended(process).await;
                let reason = match status {
                    Some(status) => exit_reason(status),
                    None => "its process stopped answering".to_owned(),
                };
                Stopped {
                    reason,
                    stderr_tail,
                }
            }
            Some(Backing::Http(_)) | None => Stopped {
                reason: match self.client.peer().broken() {
                    Some(error) => unreachable_reason(&error.to_string()),
                    None => "its connection closed".to_owned(),
                },
                stderr_tail: Vec::new(),
            },
        };
        Some(self.record_stop(stopped, events))
    }

    /// Called when one of its calls failed in the transport: an HTTP server that does not
    /// answer a ping (`server/discover` on 2026-07-28) either (the connection is refused,
    /// the session is gone and a new one cannot be started, the stream ends) has stopped,
    /// and is recorded and reported as [`ServerState::Stopped`] like a child that exited. `None` when it still answers, is
    /// not reached over HTTP, or the host itself ended it.
    pub(crate) async fn notice_unreachable(&self, events: &EventSink) -> Option<Stopped> {
        if !matches!(*self.backing.lock().await, Some(Backing::Http(_))) {
            return None;
        }
        if self.stopped().is_some() || self.client.peer().is_closed() {
            return self.notice_stop(events).await;
        }
        let reason = match tokio::time::timeout(PING_TIMEOUT, self.client.probe()).await {
            // It answers, or it is there and wants authorization (which `/mcp` shows).
            Ok(Ok(()))
            | Ok(Err(RequestError::Transport {
                error: TransportError::Auth { .. },
                ..
            })) => return None,
            Ok(Err(e)) => unreachable_reason(&e.to_string()),
            Err(_) => format!("it did not answer a ping within {PING_TIMEOUT:?}"),
        };
        let _backing = self.backing.lock().await;
        if let Some(stopped) = self.stopped() {
            return Some(stopped);
        }
        if self.closing.load(Ordering::SeqCst) {
            return None;
        }
        let stopped = Stopped {
            reason,
            stderr_tail: Vec::new(),
        };
        Some(self.record_stop(stopped, events))
    }

    /// Records why it stopped and reports it; the caller holds its backing's lock, so that
    /// this happens once.
    fn record_stop(&self, stopped: Stopped, events: &EventSink) -> Stopped {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(stopped.clone());
        tracing::info!(server = %self.name, reason = %stopped.reason, "server stopped");
        events.emit(status(
            &self.name,
            ServerState::Stopped {
                reason: stopped.reason.clone(),
                stderr_tail: stopped.stderr_tail.clone(),
            },
        ));
        stopped
    }

    /// Ends it on the host's behalf: not reported as a stop.
    async fn end(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.client.close();
        match self.backing.lock().await.take() {
            Some(Backing::Process(mut process)) => {
                if let Err(e) = process.shutdown(ShutdownTimeouts::default()).await {
                    tracing::warn!(server = %self.name, "could not stop the server process: {e}");
                }
            }
            Some(Backing::Http(finished)) => {
                let ended = tokio::time::timeout(HTTP_SHUTDOWN, finished.wait()).await;
                if ended.is_err() {
                    tracing::warn!(server = %self.name, "the HTTP session was not ended within {HTTP_SHUTDOWN:?}");
                }
            }
            None => {}
        }
    }

    /// The last lines the server wrote to stderr (child processes only).
    pub async fn stderr_tail(&self) -> Vec<String> {
        match self.backing.lock().await.as_ref() {
            Some(Backing::Process(process)) => process.stderr_tail(),
            Some(Backing::Http(_)) | None => Vec::new(),
        }
    }
}

/// How long a server whose call failed in the transport has to answer a ping before it is
/// taken as stopped.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Why an HTTP server is taken as stopped, from the transport's failure.
fn unreachable_reason(error: &str) -> String {
    format!("it could not be reached: {error}")
}

/// Why a child process ended, in words.
fn exit_reason(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("its process exited with status {code}"),
        (None, Some(signal)) => format!("its process was killed by signal {signal}"),
        (None, None) => "its process ended".to_owned(),
    }
}

/// Every connected server, by config key.
#[derive(Debug, Default)]
pub struct Servers {
    servers: Vec<Arc<ConnectedServer>>,
    /// The entries they were started from, to start them again.
    configs: Vec<ServerConfig>,
    /// How they were started.
    options: Option<StartOptions>,
    /// The automatic starts of each server since it last answered a call.
    backoff: HashMap<String, Backoff>,
}

impl Servers {
    /// No servers.
    pub fn new() -> Self {
        Servers::default()
    }

    /// Starts every enabled server in `configs` in parallel. Returns the ones that came up
    /// and the ones that did not.
    pub async fn start(
        configs: &[ServerConfig],
        options: &StartOptions,
        events: &EventSink,
    ) -> (Servers, Vec<StartFailure>) {
        let mut tasks = JoinSet::new();
        let mut names = std::collections::HashMap::new();
        for config in configs {
            if config.disabled {
                events.emit(status(&config.name, ServerState::Disabled));
                continue;
            }
            events.emit(status(&config.name, ServerState::Starting));
            let config = config.clone();
            let options = options.clone();
            let events = events.clone();
            let name = config.name.clone();
            let task = tasks.spawn(async move { start_one(config, options, events).await });
            names.insert(task.id(), name);
        }
        let mut servers = Servers {
            configs: configs.iter().filter(|c| !c.disabled).cloned().collect(),
            options: Some(options.clone()),
            ..Servers::new()
        };
        let mut failures = Vec::new();
        while let Some(joined) = tasks.join_next_with_id().await {
            match joined {
                Ok((_, Ok(server))) => servers.insert(server, events),
                Ok((_, Err(failure))) => failures.push(failure),
                Err(e) => {
                    let server = names.get(&e.id()).cloned().unwrap_or_default();
                    let reason = format!("starting it failed inside the host: {e}");
                    events.emit(status(
                        &server,
                        ServerState::Failed {
                            reason: reason.clone(),
                            stderr_tail: Vec::new(),
                        },
                    ));
                    failures.push(StartFailure {
                        server,
                        reason,
                        stderr_tail: Vec::new(),
                    });
                }
            }
        }
        failures.sort_by(|a, b| a.server.cmp(&b.server));
        (servers, failures)
    }

    /// Connects a server over `connection` (an in-process server, for example).
    pub async fn add_connection(
        &mut self,
        name: impl Into<String>,
        connection: Connection,
        settings: ServerSettings,
        options: &StartOptions,
        events: &EventSink,
    ) -> Result<(), StartFailure> {
        let name = name.into();
        if self.get(&name).is_some() {
            return Err(StartFailure {
                server: name,
                reason: "a server with this name is already connected".to_owned(),
                stderr_tail: Vec::new(),
            });
        }
        events.emit(status(&name, ServerState::Starting));
        let connected = tokio::time::timeout(
            options.startup_timeout,
            connect(&name, &settings, connection, options, events),
        )
        .await;
        let result = match connected {
            Ok(result) => result.map_err(|reason| (reason, None)),
            Err(_) => Err((timeout_reason(options.startup_timeout), None)),
        };
        let server = finish(&name, result, events).await?;
        self.insert(server, events);
        Ok(())
    }

    /// Adds the server and starts following its notifications (those that arrived since
    /// the handshake waited in the client's queue).
    fn insert(&mut self, server: ConnectedServer, events: &EventSink) {
        let server = Arc::new(server);
        crate::notifications::follow(&server, events);
        self.servers.push(server);
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Starts the server of config entry `name` again (the one running, if any, is ended
    /// first), whether it stopped, failed to start or runs; its tools are listed afresh.
    /// While it starts, the old one stays listed, stopped.
    pub async fn restart(&mut self, name: &str, events: &EventSink) -> Result<(), RestartError> {
        self.backoff.remove(name);
        self.start_again(name, events).await
    }

    /// Starts `name` again if it stopped, unless it was started again too recently (see
    /// [`Backoff`]). `Ok` when it runs.
    pub async fn revive(&mut self, name: &str, events: &EventSink) -> Result<(), RestartError> {
        let Some(server) = self.get(name).cloned() else {
            return Err(RestartError::Unknown(name.to_owned()));
        };
        if !server.is_down() {
            return Ok(());
        }
        server.notice_stop(events).await;
        if server.answered.load(Ordering::Relaxed) {
            self.backoff.remove(name);
        }
        if let Some(backoff) = self.backoff.get(name) {
            let wait = backoff.wait(Instant::now());
            if !wait.is_zero() {
                return Err(RestartError::BackingOff {
                    server: name.to_owned(),
                    wait,
                });
            }
        }
        self.start_again(name, events).await
    }

    async fn start_again(&mut self, name: &str, events: &EventSink) -> Result<(), RestartError> {
        let Some(config) = self.configs.iter().find(|c| c.name == name).cloned() else {
            return Err(if self.get(name).is_some() {
                RestartError::NotConfigured(name.to_owned())
            } else {
                RestartError::Unknown(name.to_owned())
            });
        };
        let Some(options) = self.options.clone() else {
            return Err(RestartError::NotConfigured(name.to_owned()));
        };
        let backoff = self.backoff.entry(name.to_owned()).or_insert(Backoff {
            starts: 0,
            last: Instant::now(),
        });
        backoff.starts += 1;
        backoff.last = Instant::now();
        if let Some(old) = self.get(name).cloned() {
            if old.stopped().is_none() {
                *old.stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(Stopped {
                    reason: "it is being started again".to_owned(),
                    stderr_tail: Vec::new(),
                });
            }
            old.end().await;
        }
        events.emit(status(name, ServerState::Starting));
        let server = match start_one(config, options, events.clone()).await {
            Ok(server) => server,
            Err(failure) => {
                // The old one stays listed, stopped, saying why it is not back.
                if let Some(old) = self.get(name) {
                    *old.stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(Stopped {
                        reason: format!("it could not be started again: {}", failure.reason),
                        stderr_tail: failure.stderr_tail.clone(),
                    });
                }
                return Err(failure.into());
            }
        };
        self.servers.retain(|s| s.name != name);
        self.insert(server, events);
        Ok(())
    }

    /// The config entry server `name` was started from; `None` for a server connected by
    /// the program.
    pub fn config(&self, name: &str) -> Option<&ServerConfig> {
        self.configs.iter().find(|c| c.name == name)
    }

    /// The server called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<ConnectedServer>> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Every server, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ConnectedServer>> {
        self.servers.iter()
    }

    /// How many servers are connected.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether no server is connected.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Every (server key, tool) pair.
    pub fn tools(&self) -> Vec<(String, Tool)> {
        self.servers
            .iter()
            .flat_map(|s| s.tools().into_iter().map(|t| (s.name.clone(), t)))
            .collect()
    }

    /// Closes every connection and ends every child process (stdin closed, then SIGTERM,
    /// then SIGKILL, as the specification asks) and every HTTP session (`DELETE`, waited
    /// for at most a few seconds).
    pub async fn shutdown(&self) {
        for server in &self.servers {
            server.end().await;
        }
    }
}

fn status(server: &str, state: ServerState) -> Event {
    Event::ServerStatus {
        server: server.to_owned(),
        state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_url_fails_clearly_and_disabled_entries_are_skipped() {
        use crate::config::{HttpConfig, StdioConfig, TransportConfig};
        let entry = |name: &str, transport, disabled| ServerConfig {
            name: name.to_owned(),
            transport,
            trusted: false,
            disabled,
            startup_timeout: None,
            tool_timeout: None,
            task_after: None,
            sampling: Action::Ask,
            roots: None,
            protocol_version: None,
            source: "t.json".into(),
            scope: crate::config::Scope::Given,
            fingerprint: String::new(),
        };
        let configs = [
            entry(
                "remote",
                TransportConfig::Http(HttpConfig {
                    url: "http://127.0.0.1:9/mcp".into(),
                    headers: Default::default(),
                    legacy_sse: false,
                    oauth: None,
                }),
                false,
            ),
            entry("off", TransportConfig::Stdio(StdioConfig::default()), true),
        ];
        let (events, mut rx) = EventSink::channel();
        let (servers, failures) = Servers::start(&configs, &StartOptions::default(), &events).await;
        assert!(servers.is_empty());
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].server, "remote");
        assert!(
            failures[0]
                .reason
                .starts_with("connecting over Streamable HTTP to http://127.0.0.1:9/mcp failed: "),
            "{}",
            failures[0].reason
        );
        let mut states = Vec::new();
        while let Ok(Event::ServerStatus { server, state }) = rx.try_recv() {
            states.push((server, state));
        }
        assert!(states.contains(&("off".to_owned(), ServerState::Disabled)));
        assert!(!states
            .iter()
            .any(|(s, st)| s == "off" && *st == ServerState::Starting));
    }

    #[test]
    fn backoff_starts_at_once_then_doubles_up_to_a_minute() {
        let last = Instant::now();
        let delays: Vec<u64> = (0..10)
            .map(|starts| Backoff { starts, last }.delay().as_secs())
            .collect();
        assert_eq!(delays, [0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
        let backoff = Backoff { starts: 3, last };
        assert_eq!(backoff.wait(last), Duration::from_secs(4));
        assert_eq!(
            backoff.wait(last + Duration::from_secs(3)),
            Duration::from_secs(1)
        );
        assert!(backoff.wait(last + Duration::from_secs(5)).is_zero());
    }

    #[test]
    fn a_failure_shows_its_stderr_tail() {
        let failure = StartFailure {
            server: "bad".into(),
            reason: "it exited".into(),
            stderr_tail: vec!["boom".into()],
        };
        assert_eq!(
            failure.to_string(),
            "server `bad` did not start: it exited; its stderr ended with:\nboom"
        );
    }
}
