//! Peers that stop reading: a stdio client that never reads its answers, and HTTP clients
//! that never read their GET stream, on a revision that resumes streams and on one that
//! cannot. Whatever they do, what waits for them stays bounded (memory read from
//! /proc/self/status), and nothing is lost silently: a resumable stream is closed and
//! resumed from the event store, anything else is disconnected.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::time::Duration;

use junction::server::{tool, Context, Server};
use junction::transport::http::server::HttpServer;
use junction::transport::http::sse::Parser;
use junction::transport::{stdio, Limits};
use junction_test_support::http::{messages, read_events, session_id, Raw};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The tests measure this process's memory, so they take turns.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A guard against a test hanging for ever; never a measure of speed.
const PATIENCE: Duration = Duration::from_secs(120);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Flood {
    /// How many log messages to send, related to no request.
    count: usize,
    /// How many bytes each carries.
    size: usize,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    /// What to echo.
    text: String,
}

fn server() -> Server {
    Server::builder("flood", "1.0.0")
        .tool(tool("echo", |t: Text| async move { t.text }).description("Echoes"))
        .tool(
            tool("flood", |ctx: Context, f: Flood| async move {
                let data = "x".repeat(f.size);
                let peer = ctx.request().peer();
                let mut sent = 0;
                for _ in 0..f.count {
                    let params = json!({"level": "info", "data": data});
                    let raw = junction::protocol::jsonrpc::to_raw(&params).unwrap();
                    if peer
                        .notify_raw("notifications/message", Some(raw), None)
                        .is_err()
                    {
                        break;
                    }
                    sent += 1;
                }
                format!("{sent} sent")
            })
            .description("Sends log messages on the standalone stream"),
        )
        .build()
        .unwrap()
}

/// This process's resident memory, in kB.
fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test]
async fn a_stdio_client_that_never_reads_is_disconnected_and_costs_a_bounded_amount() {
    let _turn = SERIAL.lock().await;
    let limits = Limits::default();
    let (mut client_in, server_out) = tokio::io::duplex(64 * 1024);
    let (server_in, client_out) = tokio::io::duplex(64 * 1024);
    let _peer = server().serve(stdio::connect(server_in, server_out, limits));
    let before = rss_kb();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut client_out = client_out;
    let mut lines =
        format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    let text = "y".repeat(10 * 1024);
    let mut sent = 0usize;
    let disconnected = tokio::time::timeout(PATIENCE, async {
        loop {
            lines.push_str(
                &json!({"jsonrpc": "2.0", "id": sent + 1, "method": "tools/call",
                        "params": {"name": "echo", "arguments": {"text": text}}})
                .to_string(),
            );
            lines.push('\n');
            if client_out.write_all(lines.as_bytes()).await.is_err() {
                return;
            }
            lines.clear();
            sent += 1;
            assert!(sent < 200_000, "the server kept every unread answer");
        }
    })
    .await;
    assert!(disconnected.is_ok(), "the server never disconnected");
    let grown_mb = rss_kb().saturating_sub(before) / 1024;
    eprintln!("stdio: {sent} unread answers of 10 KiB, then disconnected; RSS grew {grown_mb} MB");
    // Answers for at most max_queued wait (16 MiB), plus the pipe and allocator slack.
    assert!(grown_mb < 64, "RSS grew {grown_mb} MB");
    // What the server wrote before it gave up is still readable, then the pipe ends.
    let mut rest = Vec::new();
    let read = tokio::time::timeout(PATIENCE, client_in.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the server's output never ended");
}

async fn start() -> junction::transport::http::server::RunningServer {
    HttpServer::new(|c| {
        server().serve(c);
    })
    .bind("127.0.0.1:0")
    .await
    .unwrap()
}

async fn initialize(raw: &Raw, version: &str) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": version, "capabilities":{}, "clientInfo":{"name":"t","version":"1"}}});
    let response = raw.post(&[], &init.to_string()).await;
    assert_eq!(response.status(), 200);
    let id = session_id(&response);
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", version),
    ];
    let accepted = raw
        .post(
            &headers,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )
        .await;
    assert_eq!(accepted.status(), 202);
    id
}

/// Opens the GET stream on a raw socket and never reads it.
async fn unread_get_stream(addr: std::net::SocketAddr, session: &str, version: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\nmcp-protocol-version: {version}\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    tcp
}

async fn flood(raw: &Raw, session: &str, version: &str, count: usize) -> reqwest::Response {
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"flood","arguments":{"count": count, "size": 10 * 1024}}});
    let headers = [
        ("mcp-session-id", session),
        ("mcp-protocol-version", version),
    ];
    raw.post(&headers, &call.to_string()).await
}

#[tokio::test]
async fn an_unread_get_stream_of_a_resumable_session_is_closed_and_resumed() {
    let _turn = SERIAL.lock().await;
    let running = start().await;
    let raw = Raw::new(running.url("/mcp"));
    let version = "2025-11-25";
    let session = initialize(&raw, version).await;
    let before = rss_kb();
    let mut tcp = unread_get_stream(running.local_addr(), &session, version).await;
    // 6,000 events of 10 KiB: 60 MB if the server kept them all for this socket.
    let answer = tokio::time::timeout(PATIENCE, flood(&raw, &session, version, 6_000))
        .await
        .expect("the flood call was answered");
    assert_eq!(answer.status(), 200);
    let grown_mb = rss_kb().saturating_sub(before) / 1024;
    eprintln!("GET stream, 2025-11-25: 6,000 unread events of 10 KiB; RSS grew {grown_mb} MB");
    assert!(grown_mb < 100, "RSS grew {grown_mb} MB");
    // The server closed the stalled stream: reading it now ends.
    let mut seen = Vec::new();
    let ended = tokio::time::timeout(PATIENCE, tcp.read_to_end(&mut seen)).await;
    assert!(ended.is_ok(), "the stalled stream was never closed");
    let text = String::from_utf8_lossy(&seen);
    let last_id = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("the stream carried event ids")
        .to_owned();
    // The client resumes from the last event it got, and the session is alive.
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", version),
        ("last-event-id", last_id.as_str()),
    ];
    let mut resumed = raw.get(&headers).await;
    assert_eq!(resumed.status(), 200);
    let events = read_events(&mut resumed, &mut Parser::default(), |e| !e.is_empty()).await;
    assert!(
        !messages(&events).is_empty(),
        "the resumed stream replays what the store kept"
    );
    let echo = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"still here"}}});
    let still = raw.post(&headers[..2], &echo.to_string()).await;
    assert_eq!(still.status(), 200);
}

#[tokio::test]
async fn an_unread_get_stream_that_cannot_resume_ends_its_session() {
    let _turn = SERIAL.lock().await;
    let running = start().await;
    let raw = Raw::new(running.url("/mcp"));
    let version = "2025-06-18";
    let session = initialize(&raw, version).await;
    let before = rss_kb();
    let _tcp = unread_get_stream(running.local_addr(), &session, version).await;
    let answer = tokio::time::timeout(PATIENCE, flood(&raw, &session, version, 6_000))
        .await
        .expect("the flood call was answered");
    // The session ended under the call: its answer says so instead of never coming.
    assert_eq!(answer.status(), 404);
    let grown_mb = rss_kb().saturating_sub(before) / 1024;
    eprintln!(
        "GET stream, 2025-06-18: unread events of 10 KiB; session ended; RSS grew {grown_mb} MB"
    );
    assert!(grown_mb < 100, "RSS grew {grown_mb} MB");
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", version),
    ];
    let echo = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"gone"}}});
    assert_eq!(raw.post(&headers, &echo.to_string()).await.status(), 404);
}

#[tokio::test]
async fn an_unread_legacy_sse_stream_ends_its_session() {
    let _turn = SERIAL.lock().await;
    let running = start().await;
    let mut tcp = TcpStream::connect(running.local_addr()).await.unwrap();
    tcp.write_all(b"GET /sse HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();
    let mut head = vec![0u8; 4096];
    let n = tcp.read(&mut head).await.unwrap();
    let text = String::from_utf8_lossy(&head[..n]).into_owned();
    let endpoint = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the endpoint event")
        .to_owned();
    let raw = Raw::new(running.url(&endpoint));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert_eq!(raw.post(&[], init).await.status(), 202);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(raw.post(&[], initialized).await.status(), 202);
    let before = rss_kb();
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"flood","arguments":{"count": 6_000, "size": 10 * 1024}}});
    let ended = tokio::time::timeout(PATIENCE, async {
        loop {
            if raw.post(&[], &call.to_string()).await.status() == 404 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(ended.is_ok(), "the legacy session never ended");
    let grown_mb = rss_kb().saturating_sub(before) / 1024;
    eprintln!("legacy /sse: unread events of 10 KiB; session ended; RSS grew {grown_mb} MB");
    assert!(grown_mb < 100, "RSS grew {grown_mb} MB");
}
