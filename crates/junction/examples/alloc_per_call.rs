//! Counts the heap allocations a server makes per `tools/call`, on both protocol families
//! and over sessionless HTTP, and what building a server of 20 tools costs.
//!
//! Run it with `cargo run --release -p junction --example alloc_per_call`. The frames are
//! written to and read from a [`junction::transport::memory::raw`] connection, so the figures
//! are the session engine's and the server framework's, without a transport: one call in
//! flight at a time, after a warm-up. The speed of a call is the benchmark's (bench/).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use junction::server::{tool, Server};
use junction::transport::http::server::HttpServer;
use junction::transport::memory;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

const CALLS: u64 = 2000;

/// Sends `frame(i)` and waits for its answer, `CALLS` times; returns allocations and bytes
/// per call.
async fn measure(peer: &mut memory::RawPeer, frame: impl Fn(u64) -> String) -> (f64, f64) {
    for i in 0..100 {
        peer.send(frame(1_000_000 + i)).await;
        peer.recv().await.expect("an answer");
    }
    let frames: Vec<String> = (0..CALLS).map(&frame).collect();
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    for f in frames {
        peer.frames
            .send(junction::transport::Inbound::Frame(f.into_bytes()))
            .await
            .expect("the server reads");
        let out = peer.sent.recv().await.expect("an answer");
        drop(out);
    }
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    (
        (a1 - a0) as f64 / CALLS as f64,
        (b1 - b0) as f64 / CALLS as f64,
    )
}

fn server() -> Server {
    Server::builder("alloc", "1")
        .tool(tool("echo", |a: Echo| async move { a.text }))
        .build()
        .expect("a valid server")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Search {
    /// What to look for.
    query: String,
    /// How many results at most.
    limit: Option<u32>,
    /// Where to look.
    scope: Vec<String>,
}

/// Defines and builds a server of 20 tools, as a server's `main` does before it serves
/// (the first build also derives the schema once per argument type).
fn build_twenty() {
    let started = std::time::Instant::now();
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    let mut builder = Server::builder("twenty", "1");
    for i in 0..20 {
        builder = builder.tool(tool(format!("search_{i}"), |a: Search| async move {
            format!("{} {:?} {:?}", a.query, a.limit, a.scope)
        }));
    }
    let server = builder.build().expect("a valid server");
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    let took = started.elapsed();
    drop(server);
    println!(
        "20 tools defined and built: {} allocations, {} bytes, {} us",
        a1 - a0,
        b1 - b0,
        took.as_micros()
    );
}

/// POSTs `CALLS` sequential `tools/call` to a sessionless HTTP server over one keep-alive
/// connection; returns allocations and bytes per call (the whole process: the few the
/// client here makes included).
async fn measure_sessionless() -> (f64, f64) {
    let server = server();
    let http = HttpServer::new(move |c| {
        server.serve(c);
    })
    .sessionless();
    let running = http.bind("127.0.0.1:0").await.expect("a free port");
    let mut tcp = tokio::net::TcpStream::connect(running.local_addr())
        .await
        .expect("the server accepts");
    tcp.set_nodelay(true).expect("TCP_NODELAY");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut buf = vec![0u8; 64 * 1024];
    let mut exchange = async |tcp: &mut tokio::net::TcpStream| {
        tcp.write_all(request.as_bytes()).await.expect("written");
        let mut have = 0;
        loop {
            have += tcp.read(&mut buf[have..]).await.expect("read");
            let text = &buf[..have];
            let Some(end) = text.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = std::str::from_utf8(&text[..end]).expect("ASCII headers");
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_owned)
                })
                .and_then(|n| n.trim().parse().ok())
                .expect("a content length");
            if have >= end + 4 + length {
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                return;
            }
        }
    };
    for _ in 0..100 {
        exchange(&mut tcp).await;
    }
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    for _ in 0..CALLS {
        exchange(&mut tcp).await;
    }
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    (
        (a1 - a0) as f64 / CALLS as f64,
        (b1 - b0) as f64 / CALLS as f64,
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    build_twenty();
    let (allocs, bytes) = measure_sessionless().await;
    println!("sessionless HTTP, tools/call: {allocs:.1} allocations, {bytes:.0} bytes per call");
    let (connection, mut peer) = memory::raw();
    let _served = server().serve(connection);
    peer.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}"#).await;
    peer.recv().await.expect("the initialize result");
    peer.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let (allocs, bytes) = measure(&mut peer, |i| {
        format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}}}}}}"#)
    })
    .await;
    println!("handshake family, tools/call: {allocs:.1} allocations, {bytes:.0} bytes per call");

    let (connection, mut peer) = memory::raw();
    let _served = server().serve(connection);
    let (allocs, bytes) = measure(&mut peer, |i| {
        format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#)
    })
    .await;
    println!("2026-07-28, tools/call: {allocs:.1} allocations, {bytes:.0} bytes per call");
}
