//! Counts the heap allocations a server makes per `tools/call`, on both protocol families,
//! and what building a server of 20 tools costs.
//!
//! Run it with `cargo run --release -p junction --example alloc_per_call`. The frames are
//! written to and read from a [`junction::transport::memory::raw`] connection, so the figures
//! are the session engine's and the server framework's, without a transport: one call in
//! flight at a time, after a warm-up. The speed of a call is the benchmark's (bench/).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use junction::server::{tool, Server};
use junction::transport::memory;

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

#[tokio::main(flavor = "current_thread")]
async fn main() {
    build_twenty();
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
