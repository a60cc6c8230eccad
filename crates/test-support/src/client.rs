//! A client connected to an in-process server over the in-memory transport,
//! tool calls from JSON, and the checks every tool result gets.

use std::path::PathBuf;

use junction::client::{Client, ClientOptions};
use junction::server::Server;
use junction_protocol::completion::{CompleteParams, CompletionRef};
use junction_protocol::prompts::GetPromptParams;
use junction_protocol::tools::{CallToolParams, CallToolResult};
use serde_json::Value;

/// Connects a client with `options` to `server` over the in-memory transport.
pub async fn connect_with(server: &Server, options: ClientOptions) -> Client {
    let (client_end, server_end) = junction::transport::memory::pair(Default::default());
    server.serve(server_end);
    Client::connect(client_end, options)
        .await
        .expect("the handshake succeeds")
}

/// Connects a plain client (no sampling, elicitation or roots).
pub async fn connect(server: &Server) -> Client {
    connect_with(server, ClientOptions::new("test", "1")).await
}

/// Calls `name` with `arguments` (a JSON object) and returns the result; also lists the tools
/// first so that the client checks structured output against the advertised schema.
pub async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    client.list_tools().await.expect("tools/list succeeds");
    call_unlisted(client, name, arguments).await
}

/// Calls `name` with `arguments` (a JSON object) and returns the result, sending nothing
/// else (no `tools/list` first).
pub async fn call_unlisted(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be a JSON object")
    };
    client
        .call_tool(
            CallToolParams::new(name).arguments(arguments),
            Default::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("tools/call {name} failed: {e}"))
}

/// The result's only text, asserting it succeeded.
pub fn ok_text(result: &CallToolResult) -> String {
    assert_ne!(
        result.is_error,
        Some(true),
        "unexpected tool error: {result:?}"
    );
    only_text(result)
}

/// The result's only text, asserting it is a tool error.
pub fn error_text(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a tool error: {result:?}"
    );
    only_text(result)
}

/// The result's only text, error or not.
pub fn only_text(result: &CallToolResult) -> String {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    result.content[0]
        .as_text()
        .expect("the content is text")
        .to_owned()
}

/// The structured content of a successful result, after checking that the text content is
/// the same JSON.
pub fn structured(result: &CallToolResult) -> Value {
    let text = ok_text(result);
    let parsed: Value = serde_json::from_str(&text).expect("the text is JSON");
    let structured = result
        .structured_content
        .clone()
        .expect("the result has structuredContent");
    assert_eq!(
        structured, parsed,
        "structuredContent equals the parsed text"
    );
    structured
}

/// The text of the first content of `uri`.
pub async fn read_text(client: &Client, uri: &str) -> String {
    let result = client
        .read_resource(uri)
        .await
        .unwrap_or_else(|e| panic!("reading {uri} failed: {e}"));
    result.contents[0]
        .as_text()
        .expect("the resource is text")
        .to_owned()
}

/// The first message's text of prompt `name` with `arguments`.
pub async fn prompt_text(client: &Client, name: &str, arguments: &[(&str, &str)]) -> String {
    let mut params = GetPromptParams::new(name);
    for (key, value) in arguments {
        params = params.argument(*key, *value);
    }
    let result = client
        .get_prompt(params)
        .await
        .unwrap_or_else(|e| panic!("prompts/get {name} failed: {e}"));
    result.messages[0]
        .content
        .as_text()
        .expect("the message is text")
        .to_owned()
}

/// The completions of `argument` typed as `value` for a prompt or template.
pub async fn complete(
    client: &Client,
    reference: CompletionRef,
    argument: &str,
    value: &str,
) -> Vec<String> {
    client
        .complete(CompleteParams::new(reference, argument, value))
        .await
        .expect("completion/complete succeeds")
        .completion
        .values
}

/// A fresh path for a database file, in a directory the test owns.
pub fn temp_db(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("junction-servers-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the temporary directory can be created");
    dir.join("data.db")
}

/// Options with the database at `path`.
#[cfg(feature = "servers")]
pub fn at(path: &std::path::Path) -> junction_servers::Options {
    junction_servers::Options {
        db: Some(path.to_owned().into()),
        ..junction_servers::Options::default()
    }
}

/// Checks that every tool has a title, a description and all four annotation hints.
pub async fn assert_tools_fully_described(client: &Client) {
    for tool in client.list_tools().await.expect("tools/list succeeds") {
        assert!(tool.title.is_some(), "{} has a title", tool.name);
        assert!(
            tool.description.is_some(),
            "{} has a description",
            tool.name
        );
        let a = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has annotations", tool.name));
        assert!(a.read_only_hint.is_some(), "{} readOnlyHint", tool.name);
        assert!(a.idempotent_hint.is_some(), "{} idempotentHint", tool.name);
        assert!(a.open_world_hint.is_some(), "{} openWorldHint", tool.name);
        if !a.is_read_only() {
            assert!(
                a.destructive_hint.is_some(),
                "{} destructiveHint",
                tool.name
            );
        }
    }
}
