//! The set of connected servers: one [`Client`] per server, started in parallel.
//!
//! [`Servers::start`] starts every enabled stdio server at once, each under its own start-up
//! timeout (spawn, handshake and the first listing of tools, prompts and resources). A
//! server that exits, times out or fails its handshake is reported as a [`StartFailure`]
//! with the tail of its stderr, and the others go on. [`Servers::add_connection`] adds a
//! server reached over any [`Connection`] (in-process servers, tests).
//!
//! The client offers no sampling, elicitation or roots handlers yet; when it does, they are
//! installed here, per server, through [`StartOptions::client`].

use std::sync::Arc;
use std::time::Duration;

use junction::client::{Client, ClientOptions, ConnectError, ServerNotification};
use junction::transport::child::{self, ChildProcess, CommandSpec, ShutdownTimeouts};
use junction::transport::Connection;
use junction::RequestError;
use junction_protocol::prompts::Prompt;
use junction_protocol::resources::{Resource, ResourceTemplate};
use junction_protocol::tools::Tool;
use tokio::task::JoinSet;

use crate::config::{ServerConfig, TransportConfig};
use crate::events::{Event, EventSink, ServerState};

/// How servers are started.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// The client identity and session settings used for every server.
    pub client: ClientOptions,
    /// How long a server may take to start, unless its config entry says otherwise.
    pub startup_timeout: Duration,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            client: ClientOptions::new("junction", env!("CARGO_PKG_VERSION")),
            startup_timeout: Duration::from_secs(30),
        }
    }
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

/// One connected server and what it offered when it started.
#[derive(Debug)]
pub struct ConnectedServer {
    /// The config key.
    pub name: String,
    /// Whether its annotations are believed.
    pub trusted: bool,
    /// The client connected to it.
    pub client: Client,
    /// Its tools.
    pub tools: Vec<Tool>,
    /// Its prompts.
    pub prompts: Vec<Prompt>,
    /// Its resources.
    pub resources: Vec<Resource>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplate>,
    process: tokio::sync::Mutex<Option<ChildProcess>>,
}

impl ConnectedServer {
    /// The last lines the server wrote to stderr (child processes only).
    pub async fn stderr_tail(&self) -> Vec<String> {
        self.process
            .lock()
            .await
            .as_ref()
            .map(ChildProcess::stderr_tail)
            .unwrap_or_default()
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
                Ok((_, Ok(server))) => servers.insert(server),
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
        trusted: bool,
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
            connect(&name, trusted, connection, options, events),
        )
        .await;
        let result = match connected {
            Ok(result) => result.map_err(|reason| (reason, None)),
            Err(_) => Err((timeout_reason(options.startup_timeout), None)),
        };
        let server = finish(&name, result, events).await?;
        self.insert(server);
        Ok(())
    }

    fn insert(&mut self, server: ConnectedServer) {
        self.servers.push(Arc::new(server));
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
            .flat_map(|s| s.tools.iter().map(|t| (s.name.clone(), t.clone())))
            .collect()
    }

    /// Closes every connection and ends every child process (stdin closed, then SIGTERM,
    /// then SIGKILL, as the specification asks).
    pub async fn shutdown(self) {
        for server in self.servers {
            server.client.close();
            if let Some(mut process) = server.process.lock().await.take() {
                if let Err(e) = process.shutdown(ShutdownTimeouts::default()).await {
                    tracing::warn!(server = %server.name, "could not stop the server process: {e}");
                }
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

fn timeout_reason(after: Duration) -> String {
    format!("it did not finish starting within {after:?}")
}

async fn start_one(
    config: ServerConfig,
    options: StartOptions,
    events: EventSink,
) -> Result<ConnectedServer, StartFailure> {
    let name = config.name.clone();
    let stdio = match &config.transport {
        TransportConfig::Stdio(stdio) => stdio,
        TransportConfig::Http(http) => {
            let kind = if http.legacy_sse { "sse" } else { "http" };
            let reason = format!(
                "the {kind} transport is not supported yet ({}); only stdio servers can be started",
                http.url
            );
            return finish(&name, Err((reason, None)), &events).await;
        }
    };
    let mut spec = CommandSpec::new(&stdio.command).args(stdio.args.iter().cloned());
    for (key, value) in &stdio.env {
        match value {
            Some(value) => spec = spec.env(key, value),
            None => {
                tracing::warn!(server = %name, variable = %key, "removing an inherited variable is not supported; it stays set")
            }
        }
    }
    if let Some(cwd) = &stdio.cwd {
        spec = spec.cwd(cwd);
    }
    let (connection, process) = match child::spawn(&spec, Default::default()) {
        Ok(spawned) => spawned,
        Err(e) => return finish(&name, Err((e.to_string(), None)), &events).await,
    };
    let timeout = config.startup_timeout.unwrap_or(options.startup_timeout);
    let mut process = Some(process);
    let connected = tokio::time::timeout(
        timeout,
        connect(&name, config.trusted, connection, &options, &events),
    )
    .await;
    let result = match connected {
        Ok(Ok(mut server)) => {
            *server.process.get_mut() = process.take();
            Ok(server)
        }
        Ok(Err(reason)) => Err((reason, process.take())),
        Err(_) => Err((timeout_reason(timeout), process.take())),
    };
    finish(&name, result, &events).await
}

/// Reports the outcome; a failed child is stopped and its stderr tail collected.
async fn finish(
    name: &str,
    result: Result<ConnectedServer, (String, Option<ChildProcess>)>,
    events: &EventSink,
) -> Result<ConnectedServer, StartFailure> {
    match result {
        Ok(server) => {
            events.emit(status(
                name,
                ServerState::Ready {
                    tools: server.tools.len(),
                    prompts: server.prompts.len(),
                    resources: server.resources.len() + server.templates.len(),
                },
            ));
            Ok(server)
        }
        Err((mut reason, process)) => {
            let stderr_tail = match process {
                Some(process) => stop_and_collect(process, &mut reason).await,
                None => Vec::new(),
            };
            events.emit(status(
                name,
                ServerState::Failed {
                    reason: reason.clone(),
                    stderr_tail: stderr_tail.clone(),
                },
            ));
            Err(StartFailure {
                server: name.to_owned(),
                reason,
                stderr_tail,
            })
        }
    }
}

/// Ends a child that failed to start and returns what it wrote to stderr.
async fn stop_and_collect(mut process: ChildProcess, reason: &mut String) -> Vec<String> {
    let quick = ShutdownTimeouts {
        after_close: Duration::from_millis(500),
        after_term: Duration::from_millis(500),
    };
    let status = match process.try_status() {
        Some(status) => Ok(status),
        None => process.shutdown(quick).await,
    };
    if let Ok(status) = status {
        if let Some(code) = status.code() {
            reason.push_str(&format!(" (the process exited with status {code})"));
        }
    }
    // The stderr reader runs on its own task; once the process is gone it drains the pipe
    // quickly, so wait a little for the last lines rather than report an empty tail.
    for _ in 0..50 {
        if !process.stderr_tail().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    process.stderr_tail()
}

/// Handshake, then the first listing; forwards the server's notifications as events.
async fn connect(
    name: &str,
    trusted: bool,
    connection: Connection,
    options: &StartOptions,
    events: &EventSink,
) -> Result<ConnectedServer, String> {
    let mut client_options = options.client.clone();
    client_options.session.name = name.to_owned();
    let client = Client::connect(connection, client_options)
        .await
        .map_err(|e| match e {
            ConnectError::Handshake(RequestError::Closed { .. }) => {
                "the server closed the connection during the handshake".to_owned()
            }
            other => other.to_string(),
        })?;
    let capabilities = client.server_capabilities().clone();
    let tools = if capabilities.tools.is_some() {
        client
            .list_tools()
            .await
            .map_err(|e| format!("could not list its tools: {e}"))?
    } else {
        Vec::new()
    };
    let optional = |what: &str, e: RequestError| {
        events.emit(Event::Warning {
            message: format!("server `{name}`: could not list its {what}: {e}"),
        });
    };
    let prompts = if capabilities.prompts.is_some() {
        client.list_prompts().await.unwrap_or_else(|e| {
            optional("prompts", e);
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let (resources, templates) = if capabilities.resources.is_some() {
        let resources = client.list_resources().await.unwrap_or_else(|e| {
            optional("resources", e);
            Vec::new()
        });
        let templates = client.list_resource_templates().await.unwrap_or_else(|e| {
            optional("resource templates", e);
            Vec::new()
        });
        (resources, templates)
    } else {
        (Vec::new(), Vec::new())
    };
    if let Some(mut notifications) = client.take_notifications() {
        let events = events.clone();
        let server = name.to_owned();
        tokio::spawn(async move {
            while let Some(n) = notifications.recv().await {
                events.emit(notification_event(&server, n));
            }
        });
    }
    Ok(ConnectedServer {
        name: name.to_owned(),
        trusted,
        client,
        tools,
        prompts,
        resources,
        templates,
        process: tokio::sync::Mutex::new(None),
    })
}

fn notification_event(server: &str, notification: ServerNotification) -> Event {
    if let ServerNotification::LoggingMessage(p) = notification {
        return Event::LogLine {
            server: server.to_owned(),
            level: p.level.as_str().to_owned(),
            logger: p.logger,
            data: p.data,
        };
    }
    let method = notification.method().to_owned();
    // Re-encoding a notification that was just decoded cannot fail; if it did, the event
    // still names the method.
    let params = notification
        .into_parts()
        .ok()
        .and_then(|(_, raw)| raw)
        .and_then(|raw| serde_json::from_str(raw.get()).ok());
    Event::ServerNotification {
        server: server.to_owned(),
        method,
        params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_messages_become_log_lines_and_others_stay_notifications() {
        let log = notification_event(
            "s",
            ServerNotification::LoggingMessage(
                serde_json::from_value(
                    serde_json::json!({"level": "warning", "logger": "db", "data": "slow"}),
                )
                .unwrap(),
            ),
        );
        assert_eq!(
            log,
            Event::LogLine {
                server: "s".into(),
                level: "warning".into(),
                logger: Some("db".into()),
                data: serde_json::json!("slow"),
            }
        );
        let other =
            notification_event("s", ServerNotification::ToolListChanged(Default::default()));
        assert!(matches!(other, Event::ServerNotification { .. }));
    }

    #[tokio::test]
    async fn http_entries_fail_clearly_and_disabled_entries_are_skipped() {
        use crate::config::{HttpConfig, StdioConfig};
        let entry = |name: &str, transport, disabled| ServerConfig {
            name: name.to_owned(),
            transport,
            trusted: false,
            disabled,
            startup_timeout: None,
            source: "t.json".into(),
        };
        let configs = [
            entry(
                "remote",
                TransportConfig::Http(HttpConfig {
                    url: "https://example.invalid/mcp".into(),
                    headers: Default::default(),
                    legacy_sse: false,
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
            failures[0].reason.contains("not supported yet"),
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
