//! What the HTTP tests share: a small server built with junction::server, and a raw HTTP
//! client that can send exactly the bytes and headers a test needs.

use std::sync::Arc;

use junction::server::{tool, Context, Server};
use junction::transport::http::server::{HttpServer, RunningServer, SessionControl};
use junction::transport::http::sse::{Event, Parser};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

/// The arguments of `echo`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Text {
    /// What to echo.
    pub text: String,
}

/// The arguments of `steps`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Steps {
    /// How many log messages to send before the result.
    pub count: u32,
}

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Nothing {}

/// Sends a `notifications/message` with `data`, related to the running call or to nothing.
fn log(ctx: &Context, data: Value, related: bool) {
    let params = json!({"level": "info", "data": data});
    let raw = junction::protocol::jsonrpc::to_raw(&params).unwrap();
    let related = related.then(|| ctx.request().id().clone());
    ctx.request()
        .peer()
        .notify_raw("notifications/message", Some(raw), related)
        .unwrap();
}

/// The test server. `gate`: `steps` sends its first message, then waits for one permit
/// before sending the rest, so a test can break the stream in between.
pub fn test_server(gate: Arc<Semaphore>) -> Server {
    Server::builder("http-test", "1.0.0")
        .tool(tool("echo", |t: Text| async move { t.text }).description("Echoes"))
        .tool(
            tool("steps", move |ctx: Context, s: Steps| {
                let gate = gate.clone();
                async move {
                    log(&ctx, json!(1), true);
                    if let Ok(permit) = gate.acquire().await {
                        permit.forget();
                    }
                    for i in 2..=s.count {
                        log(&ctx, json!(i), true);
                    }
                    format!("{} steps", s.count)
                }
            })
            .description("Sends numbered log messages on the call's stream"),
        )
        .tool(
            tool("announce", |ctx: Context, _: Nothing| async move {
                log(&ctx, json!("standalone"), false);
                "announced"
            })
            .description("Sends a log message related to no request"),
        )
        .build()
        .unwrap()
}

/// A server whose one tool, `test_reconnection`, closes its own stream's connection, sends a
/// log message, and answers: the client must resume the stream to see either.
pub fn polling_server(control: SessionControl) -> Server {
    Server::builder("polling-test", "1.0.0")
        .tool(
            tool("test_reconnection", move |ctx: Context, _: Nothing| {
                let closed = control.close_stream(ctx.request().id());
                async move {
                    log(&ctx, json!("after the break"), true);
                    if closed {
                        "Reconnection test completed successfully"
                    } else {
                        "the stream could not be closed"
                    }
                }
            })
            .description("Closes its SSE stream before answering"),
        )
        .build()
        .unwrap()
}

/// Starts an HTTP server whose sessions are served by [`polling_server`].
pub async fn start_polling(http: impl FnOnce(HttpServer) -> HttpServer) -> RunningServer {
    let base = HttpServer::with_control(|c, control| {
        polling_server(control).serve(c);
    });
    http(base).bind("127.0.0.1:0").await.unwrap()
}

/// Starts `http` serving `server` on 127.0.0.1 with a free port.
pub async fn start(http: impl FnOnce(HttpServer) -> HttpServer, server: Server) -> RunningServer {
    let base = HttpServer::new(move |c| {
        server.serve(c);
    });
    http(base).bind("127.0.0.1:0").await.unwrap()
}

/// A raw HTTP client for one endpoint.
pub struct Raw {
    /// The client it sends with.
    pub http: reqwest::Client,
    /// The endpoint.
    pub url: String,
}

/// An `initialize` request of the 2025-11-25 handshake, with id 0.
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
/// The `notifications/initialized` that completes the handshake.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

impl Raw {
    /// A client for the endpoint `url`.
    pub fn new(url: String) -> Raw {
        Raw {
            // Idle connections dropped before the server's keep-alive timeout closes them.
            http: reqwest::Client::builder()
                .pool_idle_timeout(junction::transport::http::client::IDLE_CONNECTION)
                .build()
                .expect("a reqwest client"),
            url,
        }
    }

    /// POSTs `body` with the usual headers plus `extra` (an empty value removes a header).
    pub async fn post(&self, extra: &[(&str, &str)], body: &str) -> reqwest::Response {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            "accept",
            "application/json, text/event-stream".parse().unwrap(),
        );
        headers.insert("content-type", "application/json".parse().unwrap());
        for (k, v) in extra {
            let name: reqwest::header::HeaderName = k.parse().unwrap();
            if v.is_empty() {
                headers.remove(&name);
            } else {
                headers.insert(name, v.parse().unwrap());
            }
        }
        self.http
            .post(&self.url)
            .headers(headers)
            .body(body.to_owned())
            .send()
            .await
            .unwrap()
    }

    /// GETs the endpoint (the standalone SSE stream) with `extra` headers.
    pub async fn get(&self, extra: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream");
        for (k, v) in extra {
            request = request.header(*k, *v);
        }
        request.send().await.unwrap()
    }

    /// Initializes a session; returns its id.
    pub async fn session(&self) -> String {
        let response = self.post(&[], INIT).await;
        assert_eq!(response.status(), 200);
        let id = session_id(&response);
        let body = answer(response).await;
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        let accepted = self.post(&[("mcp-session-id", &id)], INITIALIZED).await;
        assert_eq!(accepted.status(), 202);
        id
    }
}

/// The `Mcp-Session-Id` a response carries.
pub fn session_id(response: &reqwest::Response) -> String {
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The body as JSON, whatever the status.
pub async fn body_json(response: reqwest::Response) -> Value {
    let bytes = response.bytes().await.unwrap();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "body is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    })
}

/// The JSON-RPC answer to a request, whether sent as JSON or as the last SSE message.
pub async fn answer(mut response: reqwest::Response) -> Value {
    if response.headers()["content-type"] != "text/event-stream" {
        return body_json(response).await;
    }
    let events = read_events(&mut response, &mut Parser::default(), |_| false).await;
    messages(&events)
        .pop()
        .expect("the stream carries the response")
}

/// Reads events until `done` says so or the stream ends.
pub async fn read_events(
    response: &mut reqwest::Response,
    parser: &mut Parser,
    mut done: impl FnMut(&[Event]) -> bool,
) -> Vec<Event> {
    let mut events = Vec::new();
    while !done(&events) {
        match response.chunk().await {
            Ok(Some(chunk)) => events.extend(parser.feed(&chunk)),
            _ => break,
        }
    }
    events
}

/// The JSON-RPC messages among `events`.
pub fn messages(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.is_message() && !e.data.is_empty())
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}
