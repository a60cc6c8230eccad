//! Our `Client` against the real `@modelcontextprotocol/server-everything` over stdio: tools,
//! structured output, progress, cancellation, resources, prompts, completion, and the server's
//! own sampling and roots requests answered by our handlers.
//!
//! Needs `JUNCTION_NODE` and `JUNCTION_SERVER_EVERYTHING`, which `scripts/test` exports.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use junction::client::{Client, ClientOptions, Roots, Sampling};
use junction::session::{ProgressUpdate, RequestOptions};
use junction::transport::child::{spawn, ChildProcess, CommandSpec, ShutdownTimeouts};
use junction::RequestError;
use junction_protocol::completion::{CompleteParams, CompleteResult, CompletionRef};
use junction_protocol::prompts::GetPromptParams;
use junction_protocol::roots::Root;
use junction_protocol::sampling::{CreateMessageParams, CreateMessageResult, StopReason};
use junction_protocol::tools::{CallToolParams, CallToolResult};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run this test through `scripts/test`, which installs the interop peers and exports their paths")
    })
}

/// The sampling requests the server sent, as JSON.
type Seen = Arc<Mutex<Vec<Value>>>;

async fn start() -> (Client, ChildProcess, Seen) {
    let spec = CommandSpec::new(env("JUNCTION_NODE"))
        .args([env("JUNCTION_SERVER_EVERYTHING"), "stdio".to_owned()]);
    let (conn, child) = spawn(&spec, Default::default()).expect("server-everything starts");
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let sampling = Sampling::new(move |params: CreateMessageParams, _ctx| {
        let record = record.clone();
        async move {
            let text = params.messages[0].content.blocks()[0]
                .as_text()
                .unwrap_or_default()
                .to_owned();
            record
                .lock()
                .unwrap()
                .push(serde_json::to_value(&params).unwrap());
            Ok(
                CreateMessageResult::text("junction-test-model", format!("Echoed: {text}"))
                    .stop_reason(StopReason::END_TURN),
            )
        }
    });
    let roots = Roots::new(|_ctx| async {
        Ok(vec![
            Root::new("file:///tmp/junction-project").name("project")
        ])
    });
    let options = ClientOptions::new("junction-e2e", "0.1.0")
        .sampling(sampling)
        .roots(roots);
    let client = Client::connect(conn, options)
        .await
        .expect("the handshake with server-everything succeeds");
    (client, child, seen)
}

fn text_of(result: &CallToolResult) -> &str {
    result.content[0]
        .as_text()
        .expect("the first content block is text")
}

async fn stop(client: Client, mut child: ChildProcess) {
    client.close();
    let timeouts = ShutdownTimeouts {
        after_close: Duration::from_secs(5),
        after_term: Duration::from_secs(5),
    };
    child.shutdown(timeouts).await.expect("the server exits");
}

#[tokio::test]
async fn tools_resources_prompts_and_sampling_against_server_everything() {
    let (client, child, seen) = start().await;
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    assert_eq!(client.server_info().name, "mcp-servers/everything");

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-structured-content",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    let echo = client
        .call_tool(
            CallToolParams::new("echo").argument("message", "hello"),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&echo), "Echo: hello");

    let sum = client
        .call_tool(
            CallToolParams::new("get-sum")
                .argument("a", 2)
                .argument("b", 3),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&sum), "The sum of 2 and 3 is 5.");

    // Its output schema was listed, so this result has been checked against it.
    let weather = client
        .call_tool(
            CallToolParams::new("get-structured-content").argument("location", "Chicago"),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        weather.structured_content,
        Some(json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );

    let sampled = client
        .call_tool(
            CallToolParams::new("trigger-sampling-request")
                .argument("prompt", "Say hi")
                .argument("maxTokens", 20),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let expected_result = json!({"role": "assistant", "content": {"type": "text", "text": "Echoed: Resource trigger-sampling-request context: Say hi"}, "model": "junction-test-model", "stopReason": "endTurn"});
    // The server prints our result back as pretty JSON in its own member order.
    let printed = text_of(&sampled)
        .strip_prefix("LLM sampling result: \n")
        .expect("the sampling tool's prefix");
    assert_eq!(
        serde_json::from_str::<Value>(printed).unwrap(),
        expected_result
    );
    let requests = seen.lock().unwrap().clone();
    assert_eq!(
        requests,
        [
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Resource trigger-sampling-request context: Say hi"}}], "systemPrompt": "You are a helpful test server.", "maxTokens": 20, "temperature": 0.7})
        ]
    );

    let roots = client
        .call_tool(
            CallToolParams::new("get-roots-list"),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(
        text_of(&roots).starts_with(
            "Current MCP Roots (1 total):\n\n1. project\n   URI: file:///tmp/junction-project\n\n"
        ),
        "{}",
        text_of(&roots)
    );

    let resource = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    let resource = serde_json::to_value(&resource.contents[0]).unwrap();
    assert_eq!(resource["uri"], "demo://resource/dynamic/text/1");
    assert_eq!(resource["mimeType"], "text/plain");
    assert!(
        resource["text"]
            .as_str()
            .unwrap()
            .starts_with("Resource 1: This is a plaintext resource created at "),
        "{resource}"
    );

    let prompt = client
        .get_prompt(GetPromptParams::new("simple-prompt"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt without arguments."}}])
    );

    // The pinned server-everything offers completion for its `completable-prompt`.
    assert!(client.server_capabilities().completions.is_some());
    let completed: CompleteResult = client
        .complete(CompleteParams::new(
            CompletionRef::prompt("completable-prompt"),
            "department",
            "S",
        ))
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["Sales", "Support"]);

    stop(client, child).await;
}

#[tokio::test]
async fn progress_and_cancellation_against_server_everything() {
    let (client, child, _) = start().await;
    let updates: Arc<Mutex<Vec<ProgressUpdate>>> = Arc::default();
    let sink = updates.clone();
    let done = client
        .call_tool(
            CallToolParams::new("trigger-long-running-operation")
                .argument("duration", 0.2)
                .argument("steps", 2),
            RequestOptions::default().on_progress(move |u| sink.lock().unwrap().push(u)),
        )
        .await
        .unwrap();
    assert_eq!(
        text_of(&done),
        "Long running operation completed. Duration: 0.2 seconds, Steps: 2."
    );
    assert_eq!(
        *updates.lock().unwrap(),
        [
            ProgressUpdate {
                progress: 1.0,
                total: Some(2.0),
                message: None
            },
            ProgressUpdate {
                progress: 2.0,
                total: Some(2.0),
                message: None
            },
        ]
    );

    // Cancel a long operation after its first progress update.
    let token = CancellationToken::new();
    let on_progress = token.clone();
    let err = client
        .call_tool(
            CallToolParams::new("trigger-long-running-operation")
                .argument("duration", 600)
                .argument("steps", 600),
            RequestOptions::default()
                .on_progress(move |_| on_progress.cancel())
                .cancel_on(token),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RequestError::Cancelled { method } if method == "tools/call"),
        "{err:?}"
    );
    client.ping().await.unwrap();
    stop(client, child).await;
}
