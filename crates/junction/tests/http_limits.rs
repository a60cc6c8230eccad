//! The HTTP server's connection and request limits, attacked over raw TCP sockets: idle
//! sockets, slow headers, slow bodies, oversized declared bodies, HEAD, and a descriptor
//! exhaustion run against a server process limited to 1,024 descriptors.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use junction_test_support::http::{start, test_server, Raw, INIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// A guard against a test hanging for ever; never a measure of speed.
const PATIENCE: Duration = Duration::from_secs(60);

/// Everything the server sends until it closes the connection.
async fn read_to_close(tcp: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(PATIENCE, tcp.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server never closed the connection");
    String::from_utf8_lossy(&out).into_owned()
}

fn post_head(length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    )
}

#[tokio::test]
async fn a_connection_that_sends_no_complete_headers_is_closed() {
    let running = start(
        |h| h.header_timeout(Duration::from_millis(200)),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let mut silent = TcpStream::connect(running.local_addr()).await.unwrap();
    let mut partial = TcpStream::connect(running.local_addr()).await.unwrap();
    partial
        .write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .unwrap();
    read_to_close(&mut silent).await;
    read_to_close(&mut partial).await;
}

#[tokio::test]
async fn a_kept_alive_connection_left_idle_is_closed() {
    let running = start(
        |h| h.header_timeout(Duration::from_millis(200)),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let mut tcp = TcpStream::connect(running.local_addr()).await.unwrap();
    tcp.write_all(format!("{}{INIT}", post_head(INIT.len())).as_bytes())
        .await
        .unwrap();
    let answered = read_to_close(&mut tcp).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(answered.contains("\"protocolVersion\""), "{answered}");
}

#[tokio::test]
async fn a_body_slower_than_the_body_timeout_is_refused_with_408() {
    let running = start(
        |h| h.body_timeout(Duration::from_millis(200)),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let mut tcp = TcpStream::connect(running.local_addr()).await.unwrap();
    tcp.write_all(format!("{}{{\"jsonrpc\"", post_head(100)).as_bytes())
        .await
        .unwrap();
    let answer = read_to_close(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within"), "{answer}");
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_the_body_is_sent() {
    let running = start(
        |h| h.max_body(1024),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let mut tcp = TcpStream::connect(running.local_addr()).await.unwrap();
    // Only the head: a server that waited for the body would never answer.
    tcp.write_all(post_head(1_000_000_000).as_bytes())
        .await
        .unwrap();
    let answer = read_to_close(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("exceeds the limit of 1024 bytes"),
        "{answer}"
    );
}

#[tokio::test]
async fn head_is_refused_with_405_and_opens_nothing() {
    let running = start(|h| h, test_server(Arc::new(Semaphore::new(0)))).await;
    let http = reqwest::Client::new();
    for path in ["/mcp", "/sse"] {
        let response = http
            .head(running.url(path))
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{path}");
        assert_eq!(response.headers()["allow"], "GET, POST, DELETE", "{path}");
    }
}

#[tokio::test]
async fn connections_beyond_the_cap_get_503_and_idle_ones_make_room() {
    let running = start(
        |h| {
            h.max_connections(4)
                .header_timeout(Duration::from_millis(300))
        },
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(running.local_addr()).await.unwrap());
    }
    // The server accepts in order, so the fifth is beyond the cap whatever the timing.
    let mut extra = TcpStream::connect(running.local_addr()).await.unwrap();
    let refused = read_to_close(&mut extra).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("retry-after: 1"), "{refused}");
    for tcp in &mut idle {
        read_to_close(tcp).await;
    }
    let raw = Raw::new(running.url("/mcp"));
    raw.session().await;
}

/// Run by [`idle_sockets_do_not_lock_out_a_server_limited_to_1024_descriptors`] in a child
/// process: serves with the default limits under a 1,024-descriptor limit and prints its
/// address.
#[tokio::test]
#[ignore = "the server half of a test; runs only in the child that test starts"]
async fn server_limited_to_1024_descriptors() {
    if std::env::var_os("JUNCTION_FD_CHILD").is_none() {
        return;
    }
    let limit = rustix::process::Rlimit {
        current: Some(1024),
        maximum: rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum,
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    let running = start(|h| h, test_server(Arc::new(Semaphore::new(0)))).await;
    println!("ADDR {}", running.local_addr());
    // Serve until the parent closes our stdin.
    let mut stdin = tokio::io::stdin();
    let mut sink = Vec::new();
    let _ = stdin.read_to_end(&mut sink).await;
}

#[tokio::test]
async fn idle_sockets_do_not_lock_out_a_server_limited_to_1024_descriptors() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "server_limited_to_1024_descriptors",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("JUNCTION_FD_CHILD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        // The harness may print the test's name on the same line first.
        .find_map(|l| l.split_once("ADDR ").map(|(_, a)| a.trim().to_owned()))
        .expect("the child prints its address");
    let mut idle = Vec::new();
    for _ in 0..1100 {
        match TcpStream::connect(&addr).await {
            Ok(tcp) => idle.push(tcp),
            Err(e) => panic!("connect failed after {} sockets: {e}", idle.len()),
        }
    }
    // With all 1,100 still open, a legitimate client gets through (after a 503 while the
    // server is full, or at once if idle ones were already closed).
    let http = reqwest::Client::new();
    let served = tokio::time::timeout(PATIENCE, async {
        loop {
            let sent = http
                .post(format!("http://{addr}/mcp"))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(INIT)
                .send()
                .await;
            match sent {
                Ok(response) if response.status() == 200 => return,
                Ok(response) => assert_eq!(response.status(), 503),
                // Closed unanswered: more refusals were waiting than the server answers.
                Err(_) => {}
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(
        served.is_ok(),
        "no request was served while 1,100 sockets sat idle"
    );
    drop(idle);
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.flush();
    drop(stdin);
    child.wait().unwrap();
}
