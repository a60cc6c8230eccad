//! Junction's HTTP transport against real peers over Streamable HTTP: our client against
//! `@modelcontextprotocol/server-everything`, and the TypeScript SDK's client against our
//! server (run through scripts/test, which installs them and exports their paths).
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::session::RequestOptions;
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::ResponseMode;
use junction_test_support::http;
use tokio::process::Command;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test, which installs the interop peers and exports their paths")
    })
}

fn peer_paths() -> (String, String) {
    (env("JUNCTION_NODE"), env("JUNCTION_SERVER_EVERYTHING"))
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts server-everything with `transport` on a free port; killed when dropped.
async fn server_everything(transport: &str) -> (tokio::process::Child, u16) {
    let (node, server) = peer_paths();
    let port = free_port();
    let child = Command::new(node)
        .arg(server)
        .arg(transport)
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
    (child, port)
}

#[tokio::test]
async fn client_against_server_everything_over_legacy_http_sse() {
    let (_child, port) = server_everything("sse").await;
    // POST initialize to /sse finds no route, so the client falls back to GET /sse.
    let url = format!("http://127.0.0.1:{port}/sse");
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("junction-test", "1.0.0"))
        .await
        .unwrap();
    let echo = CallToolParams::new("echo").argument("message", "the old way");
    let result = client.call_tool(echo, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Echo: the old way"));
    client.close();
}

#[tokio::test]
async fn client_against_server_everything_over_streamable_http() {
    let (_child, port) = server_everything("streamableHttp").await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_client_against_our_server() {
    let gate = Arc::new(tokio::sync::Semaphore::new(1));
    let running = http::start(|h| h, http::test_server(gate)).await;
    let output = Command::new(env("JUNCTION_NODE"))
        .arg(env("JUNCTION_TS_CLIENT"))
        .args(["--tool", "steps", "--args", r#"{"count":3}"#])
        .arg(running.url("/mcp"))
        .env("JUNCTION_NODE_MODULES", env("JUNCTION_NODE_MODULES"))
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "ts-client failed: {stderr}");
    let out: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["negotiatedProtocolVersion"], "2025-11-25");
    assert_eq!(out["sessionId"].as_str().map(str::len), Some(32));
    assert_eq!(out["errors"], serde_json::json!([]), "{out}");
    let called = &out["called"];
    assert_eq!(called["result"]["content"][0]["text"], "3 steps", "{out}");
    let data: Vec<_> = called["notifications"]
        .as_array()
        .expect("the log messages reached the TypeScript client")
        .iter()
        .map(|n| n["params"]["data"].clone())
        .collect();
    assert_eq!(data, [1, 2, 3]);
}

/// The transport scenarios of the official conformance suite that need no fixture tools, in
/// both response modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_transport_scenarios_pass() {
    for mode in [ResponseMode::JsonWhenPossible, ResponseMode::AlwaysSse] {
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let running = http::start(|h| h.response_mode(mode), http::test_server(gate)).await;
        let url = format!("http://localhost:{}/mcp", running.local_addr().port());
        for scenario in [
            "server-initialize",
            "ping",
            "dns-rebinding-protection",
            "server-sse-multiple-streams",
        ] {
            let output = Command::new(env("JUNCTION_NODE"))
                .arg(env("JUNCTION_CONFORMANCE"))
                .args(["server", "--url", &url, "--scenario", scenario])
                .kill_on_drop(true)
                .output()
                .await
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && stdout.contains(", 0 failed, 0 warnings"),
                "{mode:?} {scenario}: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            if mode == ResponseMode::AlwaysSse && scenario == "server-sse-multiple-streams" {
                assert!(
                    stdout.contains("server-sse-streams-functional") && !stdout.contains("INFO"),
                    "{stdout}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_client_against_our_server() {
    let gate = Arc::new(tokio::sync::Semaphore::new(1));
    let running = http::start(|h| h, http::test_server(gate)).await;
    let output = Command::new(env("JUNCTION_PYTHON"))
        .arg(env("JUNCTION_PY_CLIENT"))
        .args(["--tool", "steps", "--args", r#"{"count":3}"#])
        .arg(running.url("/mcp"))
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "py-client failed: {stderr}");
    let out: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["negotiatedProtocolVersion"], "2025-11-25", "{out}");
    assert_eq!(out["errors"], serde_json::json!([]), "{out}");
    let called = &out["called"];
    assert_eq!(called["result"]["content"][0]["text"], "3 steps", "{out}");
    let data: Vec<_> = called["notifications"]
        .as_array()
        .unwrap_or_else(|| panic!("the log messages reached the Python client: {out}"))
        .iter()
        .map(|n| n["params"]["data"].clone())
        .collect();
    assert_eq!(data, [1, 2, 3]);
}

/// The pending `server-sse-polling` scenario: the server closes a call's stream, the suite
/// resumes it with `GET` + `Last-Event-ID` and must find the result there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_sse_polling_scenario_passes_without_warnings() {
    let running = http::start_polling(|h| h).await;
    let url = format!("http://localhost:{}/mcp", running.local_addr().port());
    let output = Command::new(env("JUNCTION_NODE"))
        .arg(env("JUNCTION_CONFORMANCE"))
        .args(["server", "--url", &url, "--scenario", "server-sse-polling"])
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    for check in [
        "server-sse-priming-event",
        "server-sse-retry-field",
        "server-sse-disconnect-resume",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.contains(check))
            .unwrap_or_else(|| panic!("{check} missing: {stdout}"));
        assert!(line.contains("SUCCESS"), "{stdout}");
    }
}
