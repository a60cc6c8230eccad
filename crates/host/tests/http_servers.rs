//! The host reaching servers over HTTP, on real sockets on 127.0.0.1: junction's own
//! `HttpServer` (Streamable HTTP and the legacy HTTP+SSE endpoint) behind a layer that records
//! every request, the reference server-everything (Node) over stdio and over Streamable HTTP,
//! and a URL nobody listens on.
//!
//! Needs the pinned peers: run `scripts/test` (or `. /work/tools/env.sh` first).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use junction::server::{tool, Server};
use junction::transport::http::server::HttpServer;
use junction_host::config::Config;
use junction_host::consent::ScriptedConsent;
use junction_host::conversation::Message;
use junction_host::events::{Event, EventSink, ServerState};
use junction_host::interaction::ScriptedInteraction;
use junction_host::model::ScriptedModel;
use junction_host::servers::{StartFailure, StartOptions};
use junction_host::Host;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

fn peer(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run scripts/test, which installs the pinned peers and exports their paths")
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    city: String,
}

/// One HTTP request as the server received it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    authorization: Option<String>,
}

/// A junction server with a `forecast` tool, served over HTTP on 127.0.0.1, every request
/// recorded before it reaches the MCP endpoint.
struct WeatherServer {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl WeatherServer {
    async fn start() -> WeatherServer {
        WeatherServer::start_with(|http| http).await
    }

    /// Like [`WeatherServer::start`], with the endpoint configured by `configure`.
    async fn start_with(configure: impl FnOnce(HttpServer) -> HttpServer) -> WeatherServer {
        let server = Server::builder("weather", "1.0.0")
            .tool(tool("forecast", |q: Query| async move {
                format!("Sunny in {}", q.city)
            }))
            .build()
            .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let record = move |request: Request, next: Next| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(Seen {
                    method: request.method().to_string(),
                    path: request.uri().path().to_owned(),
                    authorization: request
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned),
                });
                let response: Response = next.run(request).await;
                response
            }
        };
        let app = configure(HttpServer::new(move |c| {
            server.serve(c);
        }))
        .router()
        .layer(middleware::from_fn(record));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        WeatherServer { addr, seen, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for WeatherServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A port on 127.0.0.1 that nothing listens on (it was bound, then released).
async fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

async fn start(
    servers: Value,
    script: &str,
    env: &[(&str, &str)],
) -> (Host, Vec<StartFailure>, Vec<Event>) {
    start_in(servers, json!({"policy": {"*": "allow"}}), script, env).await
}

/// [`start`] with `junction` as the config's `junction` section.
async fn start_in(
    servers: Value,
    junction: Value,
    script: &str,
    env: &[(&str, &str)],
) -> (Host, Vec<StartFailure>, Vec<Event>) {
    let text = json!({
        "mcpServers": servers,
        "junction": junction
    })
    .to_string();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let lookup = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let config = Config::parse(&text, Path::new("test.json"), &lookup).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let events = EventSink::callback(move |e| log.lock().unwrap().push(e));
    let (host, failures) = Host::from_config(
        &config,
        &StartOptions::default(),
        Arc::new(ScriptedModel::from_json(script).unwrap()),
        Arc::new(ScriptedConsent::deny_all()),
        Arc::new(ScriptedInteraction::new()),
        events,
    )
    .await
    .unwrap();
    let events = seen.lock().unwrap().clone();
    (host, failures, events)
}

/// The text and error flag of the result of call `id`.
fn result(host: &Host, id: &str) -> Option<(String, bool)> {
    host.conversation().messages().iter().find_map(|m| match m {
        Message::ToolResult {
            call_id,
            text,
            is_error,
            ..
        } if call_id == id => Some((text.clone(), *is_error)),
        _ => None,
    })
}

#[tokio::test]
async fn an_http_server_and_a_stdio_server_work_side_by_side_and_an_unreachable_url_is_reported() {
    let weather = WeatherServer::start().await;
    let nobody = format!("http://127.0.0.1:{}/mcp", free_port().await);
    let servers = json!({
        "weather": {
            "type": "http",
            "url": weather.url("/mcp"),
            "headers": {"Authorization": "Bearer ${WEATHER_TOKEN}"}
        },
        "everything": {
            "command": peer("JUNCTION_NODE"),
            "args": [peer("JUNCTION_SERVER_EVERYTHING"), "stdio"]
        },
        "gone": {"type": "http", "url": nobody}
    });
    let script = r#"[
        {"toolCalls": [
            {"id": "w", "name": "weather__forecast", "arguments": {"city": "Oslo"}},
            {"id": "e", "name": "everything__echo", "arguments": {"message": "hi"}}
        ]},
        {"text": "Done."}
    ]"#;
    let (mut host, failures, events) = start(servers, script, &[("WEATHER_TOKEN", "s3cret")]).await;

    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].server, "gone");
    let expected = format!("connecting over Streamable HTTP to {nobody} failed: ");
    assert!(
        failures[0].reason.starts_with(&expected),
        "{}",
        failures[0].reason
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::ServerStatus { server, state: ServerState::Ready { tools: 1, .. } } if server == "weather")));
    let names: Vec<&str> = host.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["everything", "weather"]);

    let outcome = host.send("Weather in Oslo, and echo hi").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("Done."));
    assert_eq!(
        result(&host, "w"),
        Some(("Sunny in Oslo".to_owned(), false))
    );
    assert_eq!(result(&host, "e"), Some(("Echo: hi".to_owned(), false)));

    host.shutdown().await;
    let seen = weather.seen();
    assert!(seen.iter().any(|s| s.method == "POST"));
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer s3cret")),
        "{seen:?}"
    );
    // Both speak 2026-07-28 (auto), so there is no session to end: discover, the listen
    // stream for list changes, the listing and the call.
    assert_eq!(
        seen.iter().map(|s| s.method.as_str()).collect::<Vec<_>>(),
        ["POST", "POST", "POST", "POST"],
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_sse_entry_uses_the_legacy_transport() {
    let weather = WeatherServer::start().await;
    let servers = json!({
        "weather": {
            "type": "sse",
            "url": weather.url("/sse"),
            "headers": {"Authorization": "Bearer legacy"}
        }
    });
    let script = r#"[
        {"toolCalls": [{"id": "w", "name": "weather__forecast", "arguments": {"city": "Lima"}}]},
        {"text": "Done."}
    ]"#;
    let (mut host, failures, _events) = start(servers, script, &[]).await;
    assert!(failures.is_empty(), "{failures:?}");
    host.send("Weather in Lima").await.unwrap();
    assert_eq!(
        result(&host, "w"),
        Some(("Sunny in Lima".to_owned(), false))
    );
    host.shutdown().await;

    let seen = weather.seen();
    assert!(seen.iter().any(|s| s.method == "GET" && s.path == "/sse"));
    assert!(seen
        .iter()
        .any(|s| s.method == "POST" && s.path == "/message"));
    assert!(!seen.iter().any(|s| s.path == "/mcp"), "{seen:?}");
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer legacy")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_http_entry_falls_back_to_the_legacy_transport_when_the_server_offers_only_that() {
    // `/mcp` is the legacy event stream here: POSTing `initialize` to it gets `405`.
    let weather =
        WeatherServer::start_with(|http| http.path("/streamable").legacy_paths("/mcp", "/message"))
            .await;
    let script = r#"[
        {"toolCalls": [{"id": "w", "name": "weather__forecast", "arguments": {"city": "Quito"}}]},
        {"text": "Done."}
    ]"#;
    let (mut host, failures, _events) = start(
        json!({"weather": {"type": "http", "url": weather.url("/mcp")}}),
        script,
        &[],
    )
    .await;
    assert!(failures.is_empty(), "{failures:?}");
    host.send("Weather in Quito").await.unwrap();
    assert_eq!(
        result(&host, "w"),
        Some(("Sunny in Quito".to_owned(), false))
    );
    host.shutdown().await;
    let seen = weather.seen();
    assert!(seen.iter().any(|s| s.method == "GET" && s.path == "/mcp"));
    assert!(seen
        .iter()
        .any(|s| s.method == "POST" && s.path == "/message"));
    assert!(!seen.iter().any(|s| s.path == "/streamable"), "{seen:?}");
}

/// `junction.maxMessage` reaches the HTTP client: an answer larger than it fails its call at
/// once, saying so, while smaller ones go through.
#[tokio::test]
async fn an_http_answer_over_the_configured_max_message_fails_its_call_naming_the_bound() {
    let weather = WeatherServer::start().await;
    let long = "x".repeat(3000);
    let script = json!([
        {"toolCalls": [
            {"id": "small", "name": "weather__forecast", "arguments": {"city": "Oslo"}},
            {"id": "big", "name": "weather__forecast", "arguments": {"city": long}}
        ]},
        {"text": "Done."}
    ])
    .to_string();
    let (mut host, failures, _events) = start_in(
        json!({"weather": {"type": "http", "url": weather.url("/mcp")}}),
        json!({"policy": {"*": "allow"}, "maxMessage": 2000}),
        &script,
        &[],
    )
    .await;
    assert!(failures.is_empty(), "{failures:?}");
    host.send("Weather in Oslo and somewhere long")
        .await
        .unwrap();
    assert_eq!(
        result(&host, "small"),
        Some(("Sunny in Oslo".to_owned(), false))
    );
    let (text, is_error) = result(&host, "big").unwrap();
    assert!(is_error, "{text}");
    assert!(
        text.contains("the answer was larger than 2000 bytes"),
        "{text}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn an_sse_entry_pointing_nowhere_is_reported_as_http_sse() {
    let nobody = format!("http://127.0.0.1:{}/sse", free_port().await);
    let (host, failures, _events) = start(
        json!({"old": {"type": "sse", "url": nobody}}),
        r#"[{"text": "unused"}]"#,
        &[],
    )
    .await;
    assert!(host.servers().is_empty());
    assert_eq!(failures.len(), 1);
    let expected = format!("connecting over HTTP+SSE to {nobody} failed: ");
    assert!(
        failures[0].reason.starts_with(&expected),
        "{}",
        failures[0].reason
    );
}

/// server-everything run with `streamableHttp` on a free port; killed when dropped.
struct EverythingOverHttp {
    _child: tokio::process::Child,
    url: String,
}

impl EverythingOverHttp {
    async fn start() -> EverythingOverHttp {
        let port = free_port().await;
        let child = tokio::process::Command::new(peer("JUNCTION_NODE"))
            .arg(peer("JUNCTION_SERVER_EVERYTHING"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("server-everything starts");
        // Ready once it accepts connections; Node takes a moment to load the server.
        let mut ready = false;
        for _ in 0..300 {
            if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ready, "server-everything never listened on port {port}");
        EverythingOverHttp {
            _child: child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

#[tokio::test]
async fn the_reference_server_is_reached_over_streamable_http() {
    let everything = EverythingOverHttp::start().await;
    let script = r#"[
        {"toolCalls": [{"id": "e", "name": "everything__echo", "arguments": {"message": "over http"}}]},
        {"text": "It echoed."}
    ]"#;
    let (mut host, failures, _events) = start(
        json!({"everything": {"type": "http", "url": everything.url}}),
        script,
        &[],
    )
    .await;
    assert!(failures.is_empty(), "{failures:?}");
    let server = host.servers().get("everything").expect("connected");
    assert!(server.tools().iter().any(|t| t.name == "echo"));
    let outcome = host.send("echo over http").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("It echoed."));
    assert_eq!(
        result(&host, "e"),
        Some(("Echo: over http".to_owned(), false))
    );
    host.shutdown().await;
}

#[tokio::test]
async fn a_server_pinned_to_the_handshake_family_has_its_session_ended_at_shutdown() {
    let weather = WeatherServer::start().await;
    let servers = json!({
        "weather": {"type": "http", "url": weather.url("/mcp"), "protocolVersion": "2025-11-25"}
    });
    let (host, failures, _) = start(servers, r#"[{"text": "Done."}]"#, &[]).await;
    assert!(failures.is_empty(), "{failures:?}");
    host.shutdown().await;
    let seen = weather.seen();
    assert!(
        seen.iter()
            .any(|s| s.method == "DELETE" && s.path == "/mcp"),
        "shutdown ends the session: {seen:?}"
    );
}
