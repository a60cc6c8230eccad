//! The HTTP client keeps a connection alive between requests, but drops it once it has been
//! idle for [`IDLE_CONNECTION`], before a server's keep-alive timeout closes it: a request
//! written to a connection the server is closing at that moment fails ("connection closed
//! before message completed"), which happened under load with reqwest's 90 s default.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use junction::client::{Client, ClientOptions};
use junction::server::Server;
use junction::transport::http::client::{HttpClient, IDLE_CONNECTION};
use junction::transport::http::server::HttpServer;
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy to `upstream` that counts the connections made to it; returns its address.
async fn counting_proxy(upstream: std::net::SocketAddr, count: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    format!("http://{address}/mcp")
}

#[tokio::test]
async fn a_connection_is_reused_while_fresh_and_dropped_once_idle_past_the_limit() {
    let server = Server::builder("keepalive", "1.0.0").build().unwrap();
    let running = HttpServer::new(move |c| {
        server.serve(c);
    })
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let url = counting_proxy(running.local_addr(), connections.clone()).await;
    let client = Client::connect(
        HttpClient::new(&url).unwrap().connect(),
        ClientOptions::new("c", "1").version(junction::protocol::ProtocolVersion::V2025_11_25),
    )
    .await
    .unwrap();
    client.ping().await.unwrap();
    let fresh = connections.load(Ordering::SeqCst);
    client.ping().await.unwrap();
    assert_eq!(
        connections.load(Ordering::SeqCst),
        fresh,
        "a request right after another reuses its connection"
    );
    tokio::time::sleep(IDLE_CONNECTION + Duration::from_millis(500)).await;
    client.ping().await.unwrap();
    assert_eq!(
        connections.load(Ordering::SeqCst),
        fresh + 1,
        "a connection idle past IDLE_CONNECTION is not reused"
    );
}
