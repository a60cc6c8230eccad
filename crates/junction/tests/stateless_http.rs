//! Revision 2026-07-28 over Streamable HTTP on 127.0.0.1: no session, `Mcp-Method` /
//! `Mcp-Name` checked against the body, streams without event ids, a closed response stream
//! cancels its request, and `subscriptions/listen` on its own stream.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::{Arc, Mutex};

use junction::server::{tool, Context, Server};
use junction::transport::http::server::{ResponseMode, RunningServer};
use junction::transport::http::sse::Parser;
use junction_test_support::http::*;
use serde_json::{json, Value};
use tokio::sync::oneshot;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

type Cancelled = Arc<Mutex<Option<oneshot::Sender<()>>>>;

/// Tells the test when the handler holding it is dropped.
struct Told(Option<oneshot::Sender<()>>);

impl Drop for Told {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

fn server(cancelled: Cancelled) -> Server {
    Server::builder("s", "1.0.0")
        .tool(tool("echo", |t: Text| async move { t.text }))
        .tool(tool("wait", move |ctx: Context, _: NoArgs| {
            let cancelled = cancelled.clone();
            async move {
                // Cancelling drops the handler's future, and with it this guard.
                let _told = Told(cancelled.lock().unwrap().take());
                ctx.info("waiting");
                std::future::pending::<()>().await;
                "never"
            }
        }))
        .build()
        .unwrap()
}

async fn running(cancelled: Cancelled) -> (RunningServer, Raw, Server) {
    let s = server(cancelled);
    let running = start(
        |h| h.keep_alive(std::time::Duration::from_millis(50)),
        s.clone(),
    )
    .await;
    let raw = Raw::new(running.url("/mcp"));
    (running, raw, s)
}

fn body(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "info"
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[tokio::test]
async fn requests_are_served_without_a_session_and_headers_must_match_the_body() {
    let (_s, raw, _) = running(Cancelled::default()).await;
    let call = body(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let ok = raw
        .post(
            &[
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
                ("mcp-protocol-version", "2026-07-28"),
            ],
            &call,
        )
        .await;
    assert_eq!(ok.status(), 200);
    assert!(ok.headers().get("mcp-session-id").is_none());
    assert_eq!(
        body_json(ok).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "hi"}], "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1.0.0"}}
        }})
    );
    let wrong_name = raw
        .post(&[("mcp-method", "tools/call"), ("mcp-name", "foo")], &call)
        .await;
    assert_eq!(wrong_name.status(), 400);
    assert_eq!(
        body_json(wrong_name).await,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020,
            "message": "Header mismatch: Mcp-Name header value 'foo' does not match body value 'echo'"}})
    );
    let no_method = raw.post(&[("mcp-name", "echo")], &call).await;
    assert_eq!(no_method.status(), 400);
    assert_eq!(body_json(no_method).await["error"]["code"], -32020);
    let wrong_version = raw
        .post(
            &[
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &call,
        )
        .await;
    assert_eq!(wrong_version.status(), 400);
    assert_eq!(body_json(wrong_version).await["error"]["code"], -32020);
    let old = body(2, "tools/list", json!({})).replace("2026-07-28", "1900-01-01");
    let unsupported = raw.post(&[("mcp-method", "tools/list")], &old).await;
    assert_eq!(unsupported.status(), 400);
    assert_eq!(
        body_json(unsupported).await["error"]["data"]["requested"],
        "1900-01-01"
    );
    // `server/discover` is a 2026-07-28 request like the others: without `_meta` it is
    // refused, with it it is answered.
    let bare = raw
        .post(
            &[("mcp-method", "server/discover")],
            r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#,
        )
        .await;
    assert_eq!(bare.status(), 400);
    assert_eq!(body_json(bare).await["error"]["code"], -32602);
    let discover = raw
        .post(
            &[("mcp-method", "server/discover")],
            &body(3, "server/discover", json!({})),
        )
        .await;
    assert_eq!(discover.status(), 200);
    assert!(discover.headers().get("mcp-session-id").is_none());
    assert_eq!(
        body_json(discover).await["result"]["supportedVersions"][0],
        "2026-07-28"
    );
    // The handshake family is untouched on the same endpoint.
    raw.session().await;
}

/// In always-SSE mode a request answered at once gets an event stream that holds just its
/// response and then ends.
#[tokio::test]
async fn an_always_sse_server_answers_a_quick_request_on_a_stream_that_then_ends() {
    let running = start(
        |h| h.response_mode(ResponseMode::AlwaysSse),
        server(Cancelled::default()),
    )
    .await;
    let raw = Raw::new(running.url("/mcp"));
    let call = body(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let mut response = raw
        .post(&[("mcp-method", "tools/call"), ("mcp-name", "echo")], &call)
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = read_events(&mut response, &mut Parser::default(), |_| false).await;
    assert_eq!(
        messages(&events),
        [json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "hi"}], "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1.0.0"}}
        }})]
    );
    assert_eq!(events.len(), 1, "no keep-alive or other event: {events:?}");
}

#[tokio::test]
async fn streams_have_no_event_ids_and_closing_one_cancels_its_request() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (tx, rx) = oneshot::channel();
    let (s, _raw, _) = running(Arc::new(Mutex::new(Some(tx)))).await;
    let call = body(1, "tools/call", json!({"name": "wait", "arguments": {}}));
    let addr = s.local_addr();
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\nmcp-method: tools/call\r\nmcp-name: wait\r\ncontent-length: {}\r\n\r\n{call}",
        call.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("waiting") {
        let n = socket.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("content-type: text/event-stream"), "{seen}");
    assert!(!seen.contains("mcp-session-id"), "{seen}");
    assert!(!seen.contains("\nid:"), "no event ids: {seen}");
    assert!(seen.contains(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"waiting"}}"#), "{seen}");
    drop(socket);
    rx.await.expect("closing the stream cancels the tool");
}

#[tokio::test]
async fn listen_streams_list_changes_tagged_with_the_listen_id() {
    let (_s, raw, server) = running(Cancelled::default()).await;
    let mut response = raw
        .post(
            &[("mcp-method", "subscriptions/listen")],
            &body(
                9,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            ),
        )
        .await;
    assert_eq!(response.status(), 200);
    let mut parser = Parser::default();
    let ack = read_events(&mut response, &mut parser, |e| !messages(e).is_empty()).await;
    assert_eq!(
        messages(&ack),
        [
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
                "notifications": {"toolsListChanged": true},
                "_meta": {"io.modelcontextprotocol/subscriptionId": 9}
            }})
        ]
    );
    assert!(server.handle().remove_tool("echo"));
    let changed = read_events(&mut response, &mut parser, |e| !messages(e).is_empty()).await;
    assert_eq!(
        messages(&changed),
        [
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 9}
            }})
        ]
    );
}
