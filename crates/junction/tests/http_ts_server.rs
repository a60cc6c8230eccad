//! Junction's client against a server built with the TypeScript SDK over Streamable HTTP, in
//! both of the SDK's modes: with sessions and stateless (`tests-interop/ts-server.mjs`; run
//! through scripts/test, which installs the SDK and exports the paths).
#![cfg(feature = "http-client")]

use std::process::Stdio;

use junction::client::{Client, ClientOptions};
use junction::protocol::prompts::GetPromptParams;
use junction::protocol::tools::CallToolParams;
use junction::transport::http::client::HttpClient;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test, which installs the interop peers and exports their paths")
    })
}

/// Starts the TypeScript SDK server; returns it (killed when dropped) and its URL.
async fn ts_server(stateless: bool) -> (Child, String) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests-interop/ts-server.mjs"
    );
    let mut command = Command::new(env("JUNCTION_NODE"));
    command.arg(script);
    if stateless {
        command.arg("--stateless");
    }
    let mut child = command
        .env("JUNCTION_NODE_MODULES", env("JUNCTION_NODE_MODULES"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .expect("the server prints its URL");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (child, url)
}

/// Lists, calls, reads and gets everything the TypeScript server offers, checking exact results.
async fn exercise(url: &str) {
    let connection = HttpClient::new(url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("junction-test", "1.0.0"))
        .await
        .unwrap();
    assert_eq!(client.server_info().name, "ts-sdk-server");
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");

    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tools, ["echo", "add"]);

    let echo = CallToolParams::new("echo").argument("message", "from Rust");
    let result = client.call_tool(echo, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Echo: from Rust"));

    // `add` has an outputSchema, so the client checks its structured content against it.
    let add = CallToolParams::new("add")
        .argument("a", 2)
        .argument("b", 40);
    let result = client.call_tool(add, Default::default()).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"sum": 42})));
    assert_eq!(result.content[0].as_text(), Some(r#"{"sum":42}"#));

    let read = client.read_resource("ts://greeting").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap(),
        json!([{"uri": "ts://greeting", "mimeType": "text/plain", "text": "Hello from the TypeScript SDK"}])
    );

    let prompt = client
        .get_prompt(GetPromptParams::new("greet").argument("name", "Ada"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text": "Please greet Ada."}}])
    );

    client.ping().await.unwrap();
    client.close();
}

/// The TypeScript SDK 1.32 server speaks only the handshake revisions: a client in auto mode
/// probes `server/discover`, is refused, and falls back to `initialize`.
#[tokio::test]
async fn auto_mode_falls_back_to_the_handshake_with_the_typescript_sdk_server() {
    let (_server, url) = ts_server(false).await;
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(
        connection,
        ClientOptions::new("junction-test", "1.0.0").auto(),
    )
    .await
    .unwrap();
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    let echo = CallToolParams::new("echo").argument("message", "after the probe");
    let result = client.call_tool(echo, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Echo: after the probe"));
    client.close();
}

#[tokio::test]
async fn client_against_the_typescript_sdk_server_with_sessions() {
    let (_server, url) = ts_server(false).await;
    exercise(&url).await;
}

#[tokio::test]
async fn client_against_the_typescript_sdk_server_stateless() {
    let (_server, url) = ts_server(true).await;
    exercise(&url).await;
}
