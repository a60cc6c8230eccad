//! Junction's HTTP client against a scripted server that behaves like the conformance
//! suite's `sse-retry` scenario: the event stream of a tool call ends before its response,
//! which only a `GET` with `Last-Event-ID` delivers.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::transport::http::client::HttpClient;
use serde_json::{json, Value};
use tokio::sync::mpsc;

#[derive(Default)]
struct Script {
    /// (method, last-event-id, session id, protocol version, authorization) of each request.
    seen: Vec<[Option<String>; 5]>,
    pending_call: Option<Value>,
    /// Keeps GET streams open.
    open: Vec<mpsc::Sender<Result<Bytes, Infallible>>>,
}

type Shared = Arc<Mutex<Script>>;

fn record(script: &Shared, method: &str, headers: &HeaderMap) {
    let h = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    script.lock().unwrap().seen.push([
        Some(method.to_owned()),
        h("last-event-id"),
        h("mcp-session-id"),
        h("mcp-protocol-version"),
        h("authorization"),
    ]);
}

fn json_answer(value: Value) -> Response {
    let mut r = Response::new(Body::from(value.to_string()));
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r.headers_mut()
        .insert("mcp-session-id", "s1".parse().unwrap());
    r
}

fn sse(rx: mpsc::Receiver<Result<Bytes, Infallible>>) -> Response {
    let mut r = Response::new(Body::new(ChannelBody(rx)));
    r.headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    r
}

/// A body fed by a channel.
struct ChannelBody(mpsc::Receiver<Result<Bytes, Infallible>>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|o| o.map(|r| r.map(http_body::Frame::data)))
    }
}

async fn on_post(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap();
    let method = message["method"].as_str().unwrap_or("response").to_owned();
    record(&script, &method, &headers);
    match method.as_str() {
        "initialize" => json_answer(json!({"jsonrpc":"2.0","id":message["id"],"result":{
            "protocolVersion":"2025-03-26","capabilities":{"tools":{}},
            "serverInfo":{"name":"sse-retry-test-server","version":"1.0.0"}}})),
        "tools/call" => {
            script.lock().unwrap().pending_call = Some(message["id"].clone());
            let (tx, rx) = mpsc::channel(4);
            tx.send(Ok(Bytes::from_static(b"id: e1\nretry: 100\ndata: \n\n")))
                .await
                .unwrap();
            // Dropping the sender ends the stream without the response.
            sse(rx)
        }
        m if m.starts_with("notifications/") => {
            let mut r = Response::new(Body::empty());
            *r.status_mut() = StatusCode::ACCEPTED;
            r
        }
        _ => json_answer(json!({"jsonrpc":"2.0","id":message["id"],"result":{}})),
    }
}

async fn on_get(State(script): State<Shared>, headers: HeaderMap) -> Response {
    record(&script, "GET", &headers);
    let (tx, rx) = mpsc::channel(4);
    tx.send(Ok(Bytes::from_static(b"id: e2\nretry: 100\ndata: \n\n")))
        .await
        .unwrap();
    let mut script = script.lock().unwrap();
    if headers.contains_key("last-event-id") {
        if let Some(id) = script.pending_call.take() {
            let result = json!({"jsonrpc":"2.0","id":id,"result":{"content":[
                {"type":"text","text":"Reconnection test completed successfully"}]}});
            let event = format!("event: message\nid: e3\ndata: {result}\n\n");
            tx.try_send(Ok(Bytes::from(event))).unwrap();
        }
    }
    script.open.push(tx);
    sse(rx)
}

#[tokio::test]
async fn a_stream_ended_before_its_response_is_resumed_with_last_event_id() {
    let script: Shared = Arc::default();
    let app = axum::Router::new()
        .route("/mcp", post(on_post).get(on_get))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let connection = HttpClient::new(url)
        .unwrap()
        .header("authorization", "Bearer t0k3n")
        .unwrap()
        .connect();
    let client = Client::connect(connection, ClientOptions::new("retry-client", "1"))
        .await
        .unwrap();
    assert_eq!(client.protocol_version().as_str(), "2025-03-26");
    let result = client
        .call_tool(CallToolParams::new("test_reconnection"), Default::default())
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Reconnection test completed successfully")
    );

    let seen = script.lock().unwrap().seen.clone();
    let resume = seen
        .iter()
        .find(|r| r[0].as_deref() == Some("GET") && r[1].is_some())
        .expect("a GET with Last-Event-ID");
    assert_eq!(resume[1].as_deref(), Some("e1"));
    for request in &seen {
        assert_eq!(request[4].as_deref(), Some("Bearer t0k3n"), "{request:?}");
        if request[0].as_deref() != Some("initialize") {
            assert_eq!(request[2].as_deref(), Some("s1"), "{request:?}");
            assert_eq!(request[3].as_deref(), Some("2025-03-26"), "{request:?}");
        }
    }
}
