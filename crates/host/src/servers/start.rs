//! Starting one server: a child process for a stdio entry, a Streamable HTTP or HTTP+SSE
//! connection for an `http` or `sse` entry, then the handshake and the first listing, all
//! under the start-up timeout; and reporting how it went.

use std::process::ExitStatus;
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use junction::client::{Client, ConnectError, Subscription};
use junction::transport::child::{self, ChildProcess, CommandSpec, ShutdownTimeouts};
use junction::transport::http::client::HttpClient;
use junction::transport::{Connection, Limits};
use junction::RequestError;
use junction_protocol::stateless::SubscriptionFilter;
use junction_protocol::version::Family;

use super::{
    environment, status, Backing, ConnectedServer, Lists, RootsError, ServerSettings, StartFailure,
    StartOptions,
};
use crate::config::{HttpConfig, ServerConfig, StdioConfig, TransportConfig};
use crate::events::{Event, EventSink, ServerState};
use crate::mediation::{invalid_root, Attention, Handshake, SharedRoots};

/// Why a server that ran out of start-up time failed.
pub(super) fn timeout_reason(after: Duration) -> String {
    format!("it did not finish starting within {after:?}")
}

/// Starts the server of one config entry, as its transport says.
pub(super) async fn start_one(
    config: ServerConfig,
    options: StartOptions,
    events: EventSink,
) -> Result<ConnectedServer, StartFailure> {
    let timeout = config.startup_timeout.unwrap_or(options.startup_timeout);
    match &config.transport {
        TransportConfig::Stdio(stdio) => {
            start_child(&config, stdio, timeout, &options, &events).await
        }
        TransportConfig::Http(http) => start_http(&config, http, timeout, &options, &events).await,
    }
}

/// Spawns the child, then connects over its stdin/stdout.
async fn start_child(
    config: &ServerConfig,
    stdio: &StdioConfig,
    timeout: Duration,
    options: &StartOptions,
    events: &EventSink,
) -> Result<ConnectedServer, StartFailure> {
    let name = &config.name;
    let mut spec = CommandSpec::new(&stdio.command).args(stdio.args.iter().cloned());
    spec.clear_env = true;
    spec.env = environment::for_server(std::env::vars(), &stdio.env);
    if let Some(cwd) = &stdio.cwd {
        spec = spec.cwd(cwd);
    }
    let limits = Limits {
        max_frame: options.max_message,
        ..Limits::default()
    };
    let (connection, process) = match child::spawn(&spec, limits) {
        Ok(spawned) => spawned,
        Err(e) => return finish(name, Err((e.to_string(), None)), events).await,
    };
    let mut process = Some(process);
    let connected = tokio::time::timeout(
        timeout,
        connect(name, &config.settings(), connection, options, events),
    )
    .await;
    let result = match connected {
        Ok(Ok(mut server)) => {
            *server.backing.get_mut() = process.take().map(|p| Backing::Process(Box::new(p)));
            Ok(server)
        }
        Ok(Err(reason)) => Err((reason, process.take())),
        Err(_) => Err((timeout_reason(timeout), process.take())),
    };
    finish(name, result, events).await
}

/// Connects over Streamable HTTP, or HTTP+SSE for `sse` entries, authorizing when the server
/// answers `401` ([`crate::auth`]). A failure names the URL
/// (never the headers, which may hold secrets).
async fn start_http(
    config: &ServerConfig,
    http: &HttpConfig,
    timeout: Duration,
    options: &StartOptions,
    events: &EventSink,
) -> Result<ConnectedServer, StartFailure> {
    let name = &config.name;
    let kind = if http.legacy_sse {
        "HTTP+SSE"
    } else {
        "Streamable HTTP"
    };
    let oauth = match crate::auth::oauth_client(
        &http.url,
        http.oauth.as_ref(),
        crate::auth::user_store(),
    ) {
        Ok(oauth) => oauth,
        Err(e) => {
            let reason = format!("its {kind} transport could not be set up: {e}");
            return finish(name, Err((reason, None)), events).await;
        }
    };
    let build = || {
        let client = HttpClient::new(&http.url).and_then(|client| {
            let client = client.max_message(options.max_message);
            http.headers
                .iter()
                .try_fold(client, |client, (key, value)| client.header(key, value))
        });
        client.map(|c| {
            let c = c.oauth(oauth.clone());
            if http.legacy_sse {
                c.legacy()
            } else {
                c
            }
        })
    };
    let failed = |reason: String| {
        let reason = format!("connecting over {kind} to {} failed: {reason}", http.url);
        (reason, None)
    };
    let settings = config.settings();
    let mut retried = false;
    let result = loop {
        let client = match build() {
            Ok(client) => client,
            Err(e) => {
                let reason = format!("its {kind} transport could not be set up: {e}");
                return finish(name, Err((reason, None)), events).await;
            }
        };
        let logins = oauth.user_authorizations();
        let (connection, finished) = client.start();
        let mut connecting = std::pin::pin!(connect(name, &settings, connection, options, events));
        let mut seen = logins;
        let connected = loop {
            match tokio::time::timeout(timeout, &mut connecting).await {
                // A person is logging in: the startup timeout is for servers, not for them
                // (the redirect listener bounds the wait).
                Err(_) if oauth.authorizing() => continue,
                // They finished during this wait: the server's time starts now, not when
                // the wait began (the token exchange and the handshake are still to come).
                Err(_) if oauth.user_authorizations() != seen => {
                    seen = oauth.user_authorizations();
                    continue;
                }
                outcome => break outcome,
            }
        };
        match connected {
            Ok(Ok(mut server)) => {
                *server.backing.get_mut() = Some(Backing::Http(finished));
                server.oauth = Some(oauth.clone());
                break Ok(server);
            }
            // The handshake's own request timed out while the person was logging in: once
            // they are done, connect again with the token.
            Ok(Err(_))
                if !retried && (oauth.authorizing() || oauth.user_authorizations() != logins) =>
            {
                oauth.user_done().await;
                retried = true;
            }
            Ok(Err(reason)) => break Err(failed(reason)),
            Err(_) => break Err(failed(timeout_reason(timeout))),
        }
    };
    finish(name, result, events).await
}

/// Reports the outcome; a failed child is stopped and its stderr tail collected.
pub(super) async fn finish(
    name: &str,
    result: Result<ConnectedServer, (String, Option<ChildProcess>)>,
    events: &EventSink,
) -> Result<ConnectedServer, StartFailure> {
    match result {
        Ok(server) => {
            let state = server.read(|l| ServerState::Ready {
                tools: l.tools.len(),
                prompts: l.prompts.len(),
                resources: l.resources.len() + l.templates.len(),
            });
            events.emit(status(name, state));
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
    let (status, tail) = ended(&mut process).await;
    if let Some(code) = status.and_then(|s| s.code()) {
        reason.push_str(&format!(" (the process exited with status {code})"));
    }
    tail
}

/// Ends a child whose connection is over (it is given half a second after its stdin is
/// closed, and as long after SIGTERM); returns its exit status and last stderr lines.
pub(super) async fn ended(process: &mut ChildProcess) -> (Option<ExitStatus>, Vec<String>) {
    let quick = ShutdownTimeouts {
        after_close: Duration::from_millis(500),
        after_term: Duration::from_millis(500),
    };
    let status = match process.try_status() {
        Some(status) => Some(status),
        None => process.shutdown(quick).await.ok(),
    };
    // The stderr reader runs on its own task; once the process is gone it drains the pipe
    // quickly, so wait a little for the last lines rather than report an empty tail.
    for _ in 0..50 {
        if !process.stderr_tail().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (status, process.stderr_tail())
}

/// On 2026-07-28 a server announces list changes only on a `subscriptions/listen` stream:
/// opens one for each list the server says can change, and returns it (its end is how a
/// server that went away is noticed, see `notifications::follow`). A server that refuses it
/// is still used, with a warning that its lists will not be refreshed.
async fn listen_for_changes(
    name: &str,
    client: &Client,
    events: &EventSink,
) -> Option<Subscription> {
    let filter = client.declared(
        SubscriptionFilter::default()
            .tools_list_changed(true)
            .prompts_list_changed(true)
            .resources_list_changed(true),
    );
    if filter == SubscriptionFilter::default() {
        return None;
    }
    match client.listen(filter).await {
        Ok(subscription) => Some(subscription),
        Err(e) => {
            events.emit(Event::Warning {
                message: format!("server `{name}`: could not listen for list changes: {e}"),
            });
            None
        }
    }
}

/// Handshake (with this server's own handlers), then the first listing.
pub(super) async fn connect(
    name: &str,
    settings: &ServerSettings,
    connection: Connection,
    options: &StartOptions,
    events: &EventSink,
) -> Result<ConnectedServer, String> {
    let mut client_options = options.client.clone();
    client_options.session.name = name.to_owned();
    if let Some(negotiation) = settings.protocol_version {
        client_options = client_options.negotiation(negotiation);
    }
    let handshake = Handshake::default();
    let attention = Attention::default();
    if let Some(mediation) = &options.mediation {
        client_options = mediation.install(
            name,
            settings.sampling,
            events,
            &handshake,
            &attention,
            client_options,
        );
    }
    let defaults = (!options.roots.is_empty()).then_some(&options.roots);
    let roots = match settings.roots.as_ref().or(defaults) {
        Some(roots) => {
            if let Some(bad) = invalid_root(roots) {
                return Err(RootsError::NotAFileUri(bad.uri.clone()).to_string());
            }
            let shared = SharedRoots::new(roots.clone());
            client_options = client_options.roots(shared.handler(&handshake));
            Some(shared)
        }
        None => None,
    };
    let client = Client::connect(connection, client_options)
        .await
        .map_err(|e| match e {
            ConnectError::Handshake(RequestError::Closed { .. }) => {
                "the server closed the connection during the handshake".to_owned()
            }
            other => other.to_string(),
        })?;
    handshake.finish();
    tracing::info!(
        server = name,
        protocol = %client.protocol_version(),
        "connected"
    );
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
    let mut listening = None;
    if client.protocol_version().family() == Family::Stateless {
        listening = listen_for_changes(name, &client, events).await;
    } else if let (Some(level), Some(_)) = (options.client.log_level, &capabilities.logging) {
        // On 2026-07-28 the level rides in every request's `_meta` instead.
        if let Err(e) = client.set_level(level).await {
            events.emit(Event::Warning {
                message: format!("server `{name}`: could not set its log level to {level}: {e}"),
            });
        }
    }
    Ok(ConnectedServer {
        name: name.to_owned(),
        trusted: settings.trusted,
        tool_timeout: settings.tool_timeout,
        slow_tools: crate::tool_call::SlowTools::new(settings.task_after),
        attention,
        client,
        lists: RwLock::new(Lists {
            tools,
            prompts,
            resources,
            templates,
        }),
        roots,
        backing: tokio::sync::Mutex::new(None),
        oauth: None,
        stopped: Mutex::new(None),
        listening: Mutex::new(listening),
        closing: Default::default(),
        answered: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Action;
    use crate::servers::Servers;

    #[tokio::test]
    async fn a_bad_header_is_named_without_its_value() {
        let config = ServerConfig {
            name: "remote".to_owned(),
            transport: TransportConfig::Http(HttpConfig {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: [("Bad Name".to_owned(), "secret-value".to_owned())].into(),
                legacy_sse: false,
                oauth: None,
            }),
            trusted: false,
            disabled: false,
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
        let (_, failures) =
            Servers::start(&[config], &StartOptions::default(), &EventSink::discard()).await;
        assert_eq!(failures.len(), 1);
        let reason = &failures[0].reason;
        assert!(
            reason.starts_with("its Streamable HTTP transport could not be set up: ")
                && reason.contains("Bad Name"),
            "{reason}"
        );
        assert!(!reason.contains("secret-value"), "{reason}");
    }
}
