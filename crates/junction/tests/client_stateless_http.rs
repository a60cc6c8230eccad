//! Junction's client speaking 2026-07-28 over HTTP to a scripted axum server that records
//! every HTTP request: the headers must mirror the body, and nothing of sessions remains.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use axum::routing::any;
use junction::client::{Client, ClientOptions, Elicitation};
use junction::protocol::elicitation::{ElicitResult, ElicitValue};
use junction::protocol::prompts::GetPromptParams;
use junction::protocol::tools::CallToolParams;
use junction::protocol::ProtocolVersion;
use junction::transport::http::client::HttpClient;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// One HTTP request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    http: Method,
    body: Value,
    header: BTreeMap<String, String>,
}

/// What the server saw, and a signal for when the client closed the `slow` stream.
#[derive(Default)]
struct Script {
    seen: Mutex<Vec<Seen>>,
    closed: tokio::sync::Notify,
}

type Shared = Arc<Script>;

fn json_answer(value: Value) -> Response {
    let mut r = Response::new(Body::from(value.to_string()));
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}

/// An event stream of `events`, ending after them.
fn sse(events: Vec<Value>) -> Response {
    let (tx, rx) = mpsc::channel(8);
    for event in events {
        tx.try_send(Ok(Bytes::from(format!(
            "event: message\ndata: {event}\n\n"
        ))))
        .unwrap();
    }
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

async fn on_any(
    State(seen): State<Shared>,
    http: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let header = headers
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("mcp-"))
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    seen.seen.lock().unwrap().push(Seen {
        http: http.clone(),
        body: message.clone(),
        header,
    });
    let id = &message["id"];
    let complete = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match (
        message["method"].as_str(),
        message["params"]["name"].as_str(),
    ) {
        (Some("server/discover"), _) => json_answer(complete(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "ttlMs": 0, "cacheScope": "private", "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}
        }))),
        (Some("tools/call"), Some("ask")) if message["params"]["inputResponses"].is_null() => {
            sse(vec![complete(json!({
                "resultType": "input_required",
                "inputRequests": {"who": {"method": "elicitation/create", "params": {
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                }}},
                "requestState": "st"
            }))])
        }
        (Some("tools/call"), Some("ask")) => {
            let name = message["params"]["inputResponses"]["who"]["content"]["name"].clone();
            json_answer(complete(json!({
                "content": [{"type": "text", "text": format!("Hello, {}", name.as_str().unwrap_or("?"))}],
                "resultType": "complete"
            })))
        }
        (Some("tools/call"), Some("broken")) => sse(vec![]),
        // Its first stream breaks before the response; the one after answers.
        (Some("tools/call"), Some("flaky")) => {
            let calls = seen
                .seen
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.body["params"]["name"] == "flaky")
                .count();
            if calls == 1 {
                sse(vec![])
            } else {
                sse(vec![complete(json!({
                    "content": [{"type": "text", "text": "mended"}],
                    "resultType": "complete"
                }))])
            }
        }
        (Some("tools/call"), Some("slow")) => {
            // Comments until the client closes the stream; then tell the test.
            let (tx, rx) = mpsc::channel(1);
            let script = seen.clone();
            tokio::spawn(async move {
                while tx.send(Ok(Bytes::from_static(b": wait\n\n"))).await.is_ok() {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                script.closed.notify_one();
            });
            let mut r = Response::new(Body::new(ChannelBody(rx)));
            r.headers_mut()
                .insert("content-type", "text/event-stream".parse().unwrap());
            r
        }
        (Some("resources/read"), _) => json_answer(complete(json!({
            "contents": [{"uri": "file:///a", "text": "A"}],
            "ttlMs": 0, "cacheScope": "private", "resultType": "complete"
        }))),
        (Some("prompts/get"), _) => {
            json_answer(complete(json!({"messages": [], "resultType": "complete"})))
        }
        _ => json_answer(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
        ),
    }
}

#[tokio::test]
async fn stateless_requests_carry_mirrored_headers_and_no_session() {
    let seen: Shared = Arc::default();
    let app = axum::Router::new()
        .route("/mcp", any(on_any))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let (connection, finished) = HttpClient::new(url).unwrap().start();
    let options = ClientOptions::new("stateless-http", "1")
        .version(ProtocolVersion::V2026_07_28)
        .elicitation(Elicitation::form(|_params, _ctx| async {
            Ok(ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::from("Ada"),
            )])))
        }));
    let client = Client::connect(connection, options).await.unwrap();
    assert_eq!(client.server_info().name, "scripted");

    let asked = client
        .call_tool(CallToolParams::new("ask"), Default::default())
        .await
        .unwrap();
    assert_eq!(asked.content[0].as_text(), Some("Hello, Ada"));
    client
        .get_prompt(GetPromptParams::new("greet"))
        .await
        .unwrap();
    let read = client.read_resource("file:///a").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    let mended = client
        .call_tool(CallToolParams::new("flaky"), Default::default())
        .await
        .unwrap();
    assert_eq!(mended.content[0].as_text(), Some("mended"));
    let err = client
        .call_tool(CallToolParams::new("broken"), Default::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.transport(),
            Some(junction::transport::TransportError::StreamEnded { .. })
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("ended before the response"),
        "{err}"
    );
    client.close();
    finished.wait().await;

    let seen = seen.seen.lock().unwrap().clone();
    let methods: Vec<&str> = seen
        .iter()
        .map(|s| s.body["method"].as_str().unwrap_or("(none)"))
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/call",
            "tools/call",
            "prompts/get",
            "resources/read",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call"
        ],
        "no GET, DELETE, notification or response is sent; a broken stream is reissued once"
    );
    for s in &seen {
        assert_eq!(s.http, Method::POST);
        let mut expected = BTreeMap::from([
            ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
            (
                "mcp-method".to_owned(),
                s.body["method"].as_str().unwrap().to_owned(),
            ),
        ]);
        let named = s.body["params"]["name"]
            .as_str()
            .or(s.body["params"]["uri"].as_str());
        if let Some(name) = named {
            expected.insert("mcp-name".to_owned(), name.to_owned());
        }
        assert_eq!(
            s.header, expected,
            "no mcp-session-id, headers match the body"
        );
    }
    assert_ne!(
        seen[1].body["id"], seen[2].body["id"],
        "the retry has a new id"
    );
    assert_eq!(seen[2].body["params"]["requestState"], "st");
    for reissued in [&seen[5..7], &seen[7..9]] {
        assert_eq!(reissued[0].body["params"], reissued[1].body["params"]);
        assert_ne!(
            reissued[0].body["id"], reissued[1].body["id"],
            "the reissue has a new id"
        );
    }
}

#[tokio::test]
async fn auto_speaks_2026_07_28_with_our_own_http_server() {
    use junction::server::{tool, Server};
    use junction::transport::http::server::HttpServer;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Who {
        name: String,
    }
    async fn greet(who: Who) -> String {
        format!("Hello, {}!", who.name)
    }
    let server = Server::builder("greeter", "1.0.0")
        .tool(tool("greet", greet))
        .build()
        .unwrap();
    let running = HttpServer::new(move |c| {
        server.serve(c);
    })
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let connection = HttpClient::new(running.url("/mcp")).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("auto", "1").auto())
        .await
        .unwrap();
    // Our server lists 2026-07-28 in `server/discover`, so no handshake happens.
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let result = client
        .call_tool(
            CallToolParams::new("greet").argument("name", "Ada"),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
    client.close();
}

#[tokio::test]
async fn cancelling_a_stateless_request_closes_its_stream_without_posting() {
    let script: Shared = Arc::default();
    let app = axum::Router::new()
        .route("/mcp", any(on_any))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let (connection, finished) = HttpClient::new(url).unwrap().start();
    let options = ClientOptions::new("cancel", "1").version(ProtocolVersion::V2026_07_28);
    let client = Arc::new(Client::connect(connection, options).await.unwrap());
    let token = tokio_util::sync::CancellationToken::new();
    let c = client.clone();
    let call = tokio::spawn({
        let token = token.clone();
        async move {
            c.call_tool(
                CallToolParams::new("slow"),
                junction::session::RequestOptions::default().cancel_on(token),
            )
            .await
        }
    });
    while script.seen.lock().unwrap().len() < 2 {
        tokio::task::yield_now().await;
    }
    token.cancel();
    let err = call.await.unwrap().unwrap_err();
    assert!(
        matches!(err, junction::RequestError::Cancelled { .. }),
        "{err:?}"
    );
    script.closed.notified().await;
    client.close();
    finished.wait().await;
    let methods: Vec<Value> = script
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [json!("server/discover"), json!("tools/call")],
        "no notifications/cancelled is POSTed"
    );
}
