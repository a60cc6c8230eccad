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
//! Each server's client gets its own handlers for what the server may ask back: sampling
//! and elicitation when [`StartOptions::mediation`] is set (see [`crate::mediation`]), roots
//! when its [`ServerSettings::roots`] are. The server's notifications keep its lists current
//! (see [`crate::notifications`]).

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use junction::client::{Client, ClientOptions, Negotiation};
use junction::transport::child::{ChildProcess, ShutdownTimeouts};
use junction::transport::http::client::Finished;
use junction::transport::Connection;
use junction::RequestError;
use junction_protocol::prompts::Prompt;
use junction_protocol::resources::{Resource, ResourceTemplate};
use junction_protocol::roots::Root;
use junction_protocol::tools::Tool;
use junction_protocol::version::Family;
use tokio::task::JoinSet;

pub mod environment;
mod start;

use start::{connect, finish, start_one, timeout_reason};

use crate::config::ServerConfig;
use crate::events::{Event, EventSink, ServerState};
use crate::mediation::{invalid_root, Attention, Mediation, SharedRoots};
use crate::policy::Action;

/// How servers are started.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// The client identity and session settings used for every server.
    pub client: ClientOptions,
    /// How long a server may take to start, unless its config entry says otherwise.
    pub startup_timeout: Duration,
    /// Who answers servers' sampling and elicitation requests; `None` declares neither.
    pub mediation: Option<Mediation>,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            client: ClientOptions::new("junction", env!("CARGO_PKG_VERSION")).auto(),
            startup_timeout: Duration::from_secs(30),
            mediation: None,
        }
    }
}

impl StartOptions {
    /// Sets who answers servers' sampling and elicitation requests.
    pub fn mediation(mut self, mediation: Mediation) -> Self {
        self.mediation = Some(mediation);
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
    /// Whether the user is answering one of its questions (see [`Attention`]).
    pub attention: Attention,
    /// The client connected to it.
    pub client: Client,
    lists: RwLock<Lists>,
    roots: Option<SharedRoots>,
    backing: tokio::sync::Mutex<Option<Backing>>,
    /// The OAuth client of an HTTP server.
    oauth: Option<std::sync::Arc<junction::auth::OAuthClient>>,
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

    /// The last lines the server wrote to stderr (child processes only).
    pub async fn stderr_tail(&self) -> Vec<String> {
        match self.backing.lock().await.as_ref() {
            Some(Backing::Process(process)) => process.stderr_tail(),
            Some(Backing::Http(_)) | None => Vec::new(),
        }
    }
}

/// Every connected server, by config key.
#[derive(Debug, Default)]
pub struct Servers {
    servers: Vec<Arc<ConnectedServer>>,
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
        let mut servers = Servers::new();
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
            server.client.close();
            match server.backing.lock().await.take() {
                Some(Backing::Process(mut process)) => {
                    if let Err(e) = process.shutdown(ShutdownTimeouts::default()).await {
                        tracing::warn!(server = %server.name, "could not stop the server process: {e}");
                    }
                }
                Some(Backing::Http(finished)) => {
                    let ended = tokio::time::timeout(HTTP_SHUTDOWN, finished.wait()).await;
                    if ended.is_err() {
                        tracing::warn!(server = %server.name, "the HTTP session was not ended within {HTTP_SHUTDOWN:?}");
                    }
                }
                None => {}
            }
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
            sampling: Action::Ask,
            roots: None,
            protocol_version: None,
            source: "t.json".into(),
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
