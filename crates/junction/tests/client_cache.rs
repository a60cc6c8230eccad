//! The client's cache of 2026-07-28 results against Junction's own HTTP server configured
//! with `ttlMs`: a fresh list is reused (a tool added on the server stays unseen), and the
//! `notifications/tools/list_changed` of a listen stream makes it stale at once.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::time::Duration;

use junction::client::{Client, ClientOptions};
use junction::protocol::stateless::{CacheScope, SubscriptionFilter};
use junction::protocol::ProtocolVersion;
use junction::server::{tool, Server};
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::HttpServer;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn named(name: &str) -> junction::server::ToolDef {
    tool(name, |_: Nothing| async { "ok" }).description("Answers ok")
}

fn names(tools: &[junction::protocol::tools::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_fresh_list_is_reused_until_the_server_says_it_changed() {
    let server = Server::builder("cached", "1")
        .tool(named("first"))
        .cache(Duration::from_secs(600), CacheScope::Public)
        .build()
        .unwrap();
    let handle = server.handle();
    let serving = server.clone();
    let http = HttpServer::new(move |c| {
        serving.serve(c);
    })
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let connect = |bytes: usize| {
        let url = http.url("/mcp");
        async move {
            let options = ClientOptions::new("cache-test", "1")
                .version(ProtocolVersion::V2026_07_28)
                .cache_bytes(bytes);
            Client::connect(HttpClient::new(url).unwrap().connect(), options)
                .await
                .unwrap()
        }
    };
    let client = connect(1 << 20).await;
    let uncached = connect(0).await;
    assert_eq!(names(&client.list_tools().await.unwrap()), ["first"]);
    assert_eq!(names(&uncached.list_tools().await.unwrap()), ["first"]);

    handle.add_tool(named("second")).unwrap();
    // Within the ttl the cached client keeps its answer; the one without a cache asks.
    assert_eq!(names(&client.list_tools().await.unwrap()), ["first"]);
    assert_eq!(
        names(&uncached.list_tools().await.unwrap()),
        ["first", "second"]
    );

    let mut notifications = client.take_notifications().unwrap();
    let _listening = client
        .listen(SubscriptionFilter::default().tools_list_changed(true))
        .await
        .unwrap();
    handle.add_tool(named("third")).unwrap();
    tokio::time::timeout(Duration::from_secs(30), notifications.recv())
        .await
        .expect("no list_changed within 30 s")
        .unwrap();
    assert_eq!(
        names(&client.list_tools().await.unwrap()),
        ["first", "second", "third"]
    );
}
