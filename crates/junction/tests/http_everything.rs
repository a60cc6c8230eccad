//! Junction's HTTP client against the real `@modelcontextprotocol/server-everything` over
//! Streamable HTTP (run through scripts/test, which installs it and exports its path).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::session::RequestOptions;
use junction::transport::http::client::HttpClient;
use tokio::process::Command;

fn peer_paths() -> (String, String) {
    match (
        std::env::var("JUNCTION_NODE"),
        std::env::var("JUNCTION_SERVER_EVERYTHING"),
    ) {
        (Ok(node), Ok(server)) => (node, server),
        _ => panic!(
            "JUNCTION_NODE and JUNCTION_SERVER_EVERYTHING are not set: run the tests with scripts/test, which installs the interop peers and exports them"
        ),
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn client_against_server_everything_over_streamable_http() {
    let (node, server) = peer_paths();
    let port = free_port();
    let _child = Command::new(node)
        .arg(server)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("server-everything starts");
    // Wait until it listens (how long it takes is not asserted).
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let url = format!("http://127.0.0.1:{port}/mcp");
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("junction-test", "1.0.0"))
        .await
        .unwrap();
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(tools.iter().any(|t| t == "echo"), "{tools:?}");

    let echo = CallToolParams::new("echo").argument("message", "over HTTP");
    let result = client.call_tool(echo, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Echo: over HTTP"));

    let sum = CallToolParams::new("get-sum")
        .argument("a", 2)
        .argument("b", 3);
    let result = client.call_tool(sum, Default::default()).await.unwrap();
    assert!(
        result.content[0].as_text().unwrap().contains('5'),
        "{result:?}"
    );

    // Progress arrives on the call's event stream before the result.
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let updates = updates.clone();
        Arc::new(move |u: junction::session::ProgressUpdate| {
            updates.lock().unwrap().push(u.progress)
        })
    };
    let long = CallToolParams::new("trigger-long-running-operation")
        .argument("duration", 0.2)
        .argument("steps", 2);
    let options = RequestOptions {
        progress: Some(sink),
        ..Default::default()
    };
    let result = client.call_tool(long, options).await.unwrap();
    assert!(result.content[0].as_text().unwrap().contains("Steps: 2"));
    assert_eq!(*updates.lock().unwrap(), [1.0, 2.0]);

    client.ping().await.unwrap();
    client.close();
}
