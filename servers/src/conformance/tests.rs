//! Every fixture's exact payload, through Junction's client over an in-memory connection.

use std::sync::{Arc, Mutex};

use junction::client::{Client, ClientOptions};
use junction::session::RequestOptions;
use junction::transport::memory;
use junction_protocol::jsonrpc;
use junction_protocol::tools::CallToolParams;
use serde_json::{json, Value};

use super::*;

async fn connect() -> Client {
    let (client_end, server_end) = memory::pair(Default::default());
    server().unwrap().serve(server_end);
    Client::connect(client_end, ClientOptions::new("test", "1"))
        .await
        .unwrap()
}

async fn call(client: &Client, name: &str) -> Value {
    let result = client
        .call_tool(CallToolParams::new(name), RequestOptions::default())
        .await
        .unwrap();
    serde_json::to_value(result).unwrap()
}

#[tokio::test]
async fn identity_and_tool_list_match_the_reference() {
    let client = connect().await;
    assert_eq!(client.server_info().name, "mcp-conformance-test-server");
    assert_eq!(client.server_info().version, "1.0.0");
    assert_eq!(client.instructions().as_deref(), Some(INSTRUCTIONS));
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_error_handling",
            "test_tool_with_progress",
            "test_reconnection",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "json_schema_2020_12_tool",
            "test_input_required_result_elicitation",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_request_state",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_multi_round",
            "test_input_required_result_tampered_state",
            "test_input_required_result_capabilities",
            "test_missing_capability",
            "test_streaming_elicitation",
            "test_logging_tool",
            "test_trigger_tool_change",
            "test_trigger_prompt_change",
            "test_x_mcp_header",
            "greet",
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
            "test_tool_with_task",
        ]
    );
    assert_eq!(
        serde_json::to_value(client.server_capabilities()).unwrap(),
        json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
               "prompts": {"listChanged": true}, "logging": {}, "completions": {},
               "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}})
    );
    let schema = &tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap()
        .input_schema;
    assert_eq!(*schema, tools::schema_2020_12(), "listed verbatim");
    for tool in &tools {
        assert!(
            tool.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{} needs a description",
            tool.name
        );
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        assert!(tool.output_schema.is_none(), "{}", tool.name);
    }
}

#[tokio::test]
async fn content_fixtures_return_the_exact_payloads() {
    let client = connect().await;
    assert_eq!(
        call(&client, "test_simple_text").await,
        json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}]})
    );
    assert_eq!(
        call(&client, "test_image_content").await,
        json!({"content": [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]})
    );
    assert_eq!(
        call(&client, "test_audio_content").await,
        json!({"content": [{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}]})
    );
    assert_eq!(
        call(&client, "test_embedded_resource").await,
        json!({"content": [{"type": "resource", "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content."
        }}]})
    );
    assert_eq!(
        call(&client, "test_multiple_content_types").await,
        json!({"content": [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": "{\"test\":\"data\",\"value\":123}"
            }}
        ]})
    );
    assert_eq!(
        call(&client, "test_reconnection").await,
        json!({"content": [{"type": "text", "text": RECONNECTION_TEXT}]})
    );
}

#[tokio::test]
async fn error_handling_is_a_tool_error_not_a_protocol_error() {
    let client = connect().await;
    assert_eq!(
        call(&client, "test_error_handling").await,
        json!({"isError": true, "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}]})
    );
}

#[tokio::test]
async fn progress_comes_in_three_steps_before_the_result() {
    let client = connect().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options =
        RequestOptions::default().on_progress(move |update| sink.lock().unwrap().push(update));
    let result = client
        .call_tool(CallToolParams::new("test_tool_with_progress"), options)
        .await
        .unwrap();
    let updates: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect();
    assert_eq!(
        updates,
        [
            json!({"progress": 0.0, "total": 100.0, "message": "Completed step 0 of 100"}),
            json!({"progress": 50.0, "total": 100.0, "message": "Completed step 50 of 100"}),
            json!({"progress": 100.0, "total": 100.0, "message": "Completed step 100 of 100"}),
        ]
    );
    // The token Junction's client chose is the request id: an integer, echoed as text.
    let text = result.content[0].as_text().unwrap();
    assert!(text.parse::<i64>().is_ok(), "{text:?}");
}

#[tokio::test]
async fn a_string_progress_token_is_echoed_and_used_in_every_notification() {
    let client = connect().await;
    let mut notifications = client.take_notifications().unwrap();
    let params = json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "progress-test-1"}});
    let raw = client
        .peer()
        .request_raw(
            "tools/call",
            Some(jsonrpc::to_raw(&params).unwrap()),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let result: Value = serde_json::from_str(raw.get()).unwrap();
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "progress-test-1"}]})
    );
    for step in [0.0, 50.0, 100.0] {
        let n = notifications.recv().await.unwrap();
        assert_eq!(n.method(), "notifications/progress");
        let (_, params) = n.into_parts().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(params.unwrap().get()).unwrap(),
            json!({"progressToken": "progress-test-1", "progress": step, "total": 100.0,
                   "message": format!("Completed step {step} of 100")})
        );
    }
}

#[tokio::test]
async fn without_a_token_the_progress_tool_still_answers() {
    let client = connect().await;
    assert_eq!(
        call(&client, "test_tool_with_progress").await,
        json!({"content": [{"type": "text", "text": "No progress token was sent, so no progress was reported."}]})
    );
}

#[tokio::test]
async fn catalog_reads_and_prompts_return_the_exact_payloads() {
    let client = connect().await;
    let read = client
        .read_resource("test://template/123/data")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(read).unwrap(),
        json!({"contents": [{"uri": "test://template/123/data", "mimeType": "application/json",
            "text": "{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]})
    );
    client.subscribe("test://watched-resource").await.unwrap();
    client.unsubscribe("test://watched-resource").await.unwrap();
    let completed = client
        .complete(
            serde_json::from_value(
                json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                "argument": {"name": "arg1", "value": "par"}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(completed).unwrap(),
        json!({"completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": false}})
    );
}
