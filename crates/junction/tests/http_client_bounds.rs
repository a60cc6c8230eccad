//! What a hostile HTTP server can make Junction's HTTP client hold: an answer body that
//! never ends, or an event whose `data` lines never end, is read only as far as
//! [`HttpClient::max_message`]; the request fails at once instead of memory growing.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::session::RequestOptions;
use junction::transport::http::client::HttpClient;
use serde_json::{json, Value};

/// A body that starts with `head`, then repeats `chunk` for ever; `declared` is the length
/// it announces.
struct Endless {
    head: Option<Bytes>,
    chunk: Bytes,
    declared: Option<u64>,
}

impl http_body::Body for Endless {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let next = self.head.take().unwrap_or_else(|| self.chunk.clone());
        Poll::Ready(Some(Ok(http_body::Frame::data(next))))
    }
    fn size_hint(&self) -> http_body::SizeHint {
        self.declared.map_or_else(
            http_body::SizeHint::default,
            http_body::SizeHint::with_exact,
        )
    }
}

fn answer(content_type: &str, body: Body) -> Response {
    let mut r = Response::new(body);
    r.headers_mut()
        .insert("content-type", content_type.parse().unwrap());
    r
}

/// Answers `tools/call` as its argument `how` says: `json` an endless JSON body, `sse` an
/// event stream whose one event never ends, `declared` a body declared 5 MiB long.
async fn on_post(body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap();
    let method = message["method"].as_str().unwrap_or("response");
    let id = &message["id"];
    match method {
        "initialize" => answer(
            "application/json",
            Body::from(
                json!({"jsonrpc":"2.0","id":id,"result":{
                    "protocolVersion":"2025-11-25","capabilities":{"tools":{}},
                    "serverInfo":{"name":"hoarder","version":"1"}}})
                .to_string(),
            ),
        ),
        "tools/call" => match message["params"]["arguments"]["how"].as_str() {
            Some("json") => {
                // The start of a real answer, then text for ever.
                let head = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
                );
                let body = Endless {
                    head: Some(Bytes::from(head)),
                    chunk: Bytes::from("x".repeat(64 * 1024)),
                    declared: None,
                };
                answer("application/json", Body::new(body))
            }
            Some("sse") => {
                let body = Endless {
                    head: None,
                    chunk: Bytes::from(format!("data: {}\n", "x".repeat(64 * 1024))),
                    declared: None,
                };
                answer("text/event-stream", Body::new(body))
            }
            _ => {
                let body = Endless {
                    head: None,
                    chunk: Bytes::from("x".repeat(64 * 1024)),
                    declared: Some(5 * 1024 * 1024),
                };
                answer("application/json", Body::new(body))
            }
        },
        _ => {
            let mut r = Response::new(Body::empty());
            *r.status_mut() = StatusCode::ACCEPTED;
            r
        }
    }
}

async fn connect() -> (Client, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new().route("/mcp", post(on_post));
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    let transport = HttpClient::new(url).unwrap().max_message(1024 * 1024);
    let client = Client::connect(transport.connect(), ClientOptions::new("c", "1"))
        .await
        .unwrap();
    (client, server)
}

async fn call(client: &Client, how: &str) -> String {
    client
        .call_tool(
            CallToolParams::new("hoard").argument("how", how),
            RequestOptions::default(),
        )
        .await
        .unwrap_err()
        .to_string()
}

#[tokio::test]
async fn an_endless_json_answer_fails_its_request_at_the_limit() {
    let (client, _server) = connect().await;
    let err = call(&client, "json").await;
    assert!(err.contains("the answer was larger than 1 MiB"), "{err}");
}

#[tokio::test]
async fn a_declared_length_over_the_limit_fails_before_the_body_is_read() {
    let (client, _server) = connect().await;
    let err = call(&client, "declared").await;
    assert!(
        err.contains("the answer was larger than 1 MiB (5242880 bytes or more arrived)"),
        "{err}"
    );
}

#[tokio::test]
async fn an_event_that_never_ends_drops_the_stream_and_fails_the_request() {
    let (client, _server) = connect().await;
    let err = call(&client, "sse").await;
    assert!(err.contains("the answer was larger than 1 MiB"), "{err}");
}
