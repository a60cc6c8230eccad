//! What the SDK clients (tests-interop/ts-client.mjs, py-client.py) print after
//! `--all-conformance --answers suite` against `junction serve conformance`, and the check of
//! it: shared by the interop tests (one server) and the scale-out tests (a cluster).

use serde_json::{json, Value};

use crate::fixtures;
use crate::process::Run;

/// The 1x1 PNG of the image fixtures, base64.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// The WAV of the audio fixture, base64.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// How an SDK client reaches `junction serve conformance`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Via {
    /// `junction serve conformance` as the client's child process.
    Stdio,
    /// Streamable HTTP with sessions; the flags given to `junction serve`.
    Http(&'static [&'static str]),
    /// Streamable HTTP without sessions: the server cannot ask the client anything.
    Stateless,
}

/// `junction serve` with its defaults.
pub const NO_FLAGS: &[&str] = &[];
/// `junction serve` answering every request with an SSE stream.
pub const SSE_ALWAYS: &[&str] = &["--sse-always"];

/// The forms the elicitation tools send.
pub fn forms() -> [Value; 3] {
    [
        json!({"message": "Please provide your information", "requestedSchema": {"type": "object",
            "properties": {"username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}},
            "required": ["username", "email"]}}),
        json!({"message": "Please review and update the form fields with defaults",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                    "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true}},
            "required": []}}),
        json!({"message": "Please select options from the enum fields",
            "requestedSchema": {"type": "object", "properties": {
                "untitledSingle": {"type": "string", "description": "Select one option",
                    "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "description": "Select one option with titles",
                    "oneOf": [{"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "description": "Select multiple options",
                    "minItems": 1, "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                    "minItems": 1, "maxItems": 3,
                    "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}]}}},
            "required": []}}),
    ]
}

/// Everything an SDK client prints after `--all-conformance --answers suite` against our
/// server, except `transport` and the progress tool's result (the client's own token).
pub fn expected(via: Via) -> Value {
    let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
    let empty = json!({"type": "object", "properties": {}});
    let tool = |name: &str, description: &str, schema: &Value| json!({"name": name, "description": description, "inputSchema": schema});
    let asks = via != Via::Stateless;
    let [user_form, defaults_form, enums_form] = forms();
    let sampling_request = json!({"method": "sampling/createMessage", "params": {"messages": [
        {"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}], "maxTokens": 100}});
    let elicit_request = |form: &Value| json!({"method": "elicitation/create", "params": form});
    // Sessionless HTTP cannot carry a request from the server, whatever the client declared.
    let cannot_ask = |method: &str| {
        format!("`{method}` was not sent: this connection is sessionless HTTP, which cannot carry server-to-client requests; use an HTTP session (or 2026-07-28, where they travel as input requests)")
    };
    let no_elicitation = &format!(
        "Elicitation not supported or error: {}",
        cannot_ask("elicitation/create")
    );
    let no_sampling = &format!(
        "Sampling not supported or error: {}",
        cannot_ask("sampling/createMessage")
    );
    // A call whose tool asks the client: the request it sent and the result, or (stateless)
    // the tool's explanation.
    let asking = |name: &str, args: Value, request: Value, answer: &str, refusal: &str| {
        if asks {
            json!({"name": name, "arguments": args, "serverRequests": [request], "result": text(answer)})
        } else {
            json!({"name": name, "arguments": args, "result": text(refusal)})
        }
    };
    let logs = json!([
        {"method": "notifications/message", "params": {"level": "info", "data": "Tool execution started"}},
        {"method": "notifications/message", "params": {"level": "info", "data": "Tool processing data"}},
        {"method": "notifications/message", "params": {"level": "info", "data": "Tool execution completed"}},
    ]);
    let user = |content: Value| json!({"role": "user", "content": content});
    let user_text = |t: &str| user(json!({"type": "text", "text": t}));
    json!({
        "negotiatedProtocolVersion": "2025-11-25",
        "serverInfo": {"name": "mcp-conformance-test-server", "version": "1.0.0"},
        "serverCapabilities": {"tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true}, "logging": {}, "completions": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
        "instructions": "Test fixtures of the MCP conformance suites 0.1.16 and 0.2.0-alpha.12. Every tool returns a fixed payload; call one to see how a client handles that kind of content.",
        "tools": ([
            tool("test_simple_text", "Tests simple text content response", &empty),
            tool("test_image_content", "Tests image content response", &empty),
            tool("test_audio_content", "Tests audio content response", &empty),
            tool("test_embedded_resource", "Tests embedded resource content response", &empty),
            tool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", &empty),
            tool("test_tool_with_logging", "Tests tool that emits log messages during execution", &empty),
            tool("test_error_handling", "Tests error response handling", &empty),
            tool("test_tool_with_progress", "Tests tool that reports progress notifications", &empty),
            tool("test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.", &empty),
            tool("test_sampling", "Tests server-initiated sampling (LLM completion request)",
                &json!({"type": "object", "properties": {"prompt": {"type": "string",
                    "description": "The prompt to send to the LLM"}}, "required": ["prompt"]})),
            tool("test_elicitation", "Tests server-initiated elicitation (user input request)",
                &json!({"type": "object", "properties": {"message": {"type": "string",
                    "description": "The message to show the user"}}, "required": ["message"]})),
            tool("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", &empty),
            tool("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", &empty),
            tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
                &fixtures::schema_2020_12()),
        ].into_iter().chain(fixtures::alpha12_tools()).collect::<Vec<_>>()),
        "ping": {"result": {}},
        "setLevel": {"result": {}},
        "complete": {"result": {"completion": {"values": [], "total": 0, "hasMore": false}}},
        "calls": {
            "test_simple_text": {"name": "test_simple_text", "result": text("This is a simple text response for testing.")},
            "test_image_content": {"name": "test_image_content", "arguments": {},
                "result": {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}},
            "test_audio_content": {"name": "test_audio_content", "arguments": {},
                "result": {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}},
            "test_embedded_resource": {"name": "test_embedded_resource", "arguments": {},
                "result": {"content": [{"type": "resource", "resource": {"uri": "test://embedded-resource",
                    "mimeType": "text/plain", "text": "This is an embedded resource content."}}]}},
            "test_multiple_content_types": {"name": "test_multiple_content_types", "arguments": {},
                "result": {"content": [
                    {"type": "text", "text": "Multiple content types test:"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                        "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}]}},
            "test_tool_with_logging": {"name": "test_tool_with_logging", "arguments": {},
                "notifications": logs, "result": text("Tool with logging executed successfully")},
            "test_error_handling": {"name": "test_error_handling", "arguments": {},
                "result": {"isError": true, "content": [{"type": "text",
                    "text": "This tool intentionally returns an error for testing"}]}},
            "test_sampling": asking("test_sampling", json!({"prompt": "Test prompt for sampling"}),
                sampling_request.clone(), "LLM response: This is a test response from the client",
                no_sampling),
            "test_elicitation": asking("test_elicitation", json!({"message": "Please provide your information"}),
                elicit_request(&user_form),
                "User response: action=accept, content={\"username\":\"testuser\",\"email\":\"test@example.com\"}",
                no_elicitation),
            "test_elicitation_sep1034_defaults": asking("test_elicitation_sep1034_defaults", json!({}),
                elicit_request(&defaults_form),
                "Elicitation completed: action=accept, content={\"name\":\"Jane Smith\",\"age\":25,\"score\":88,\"status\":\"inactive\",\"verified\":false}",
                no_elicitation),
            "test_elicitation_sep1330_enums": asking("test_elicitation_sep1330_enums", json!({}),
                elicit_request(&enums_form),
                "Elicitation completed: action=accept, content={\"untitledSingle\":\"option1\",\"titledSingle\":\"value1\",\"legacyEnum\":\"opt1\",\"untitledMulti\":[\"option1\",\"option2\"],\"titledMulti\":[\"value1\",\"value2\"]}",
                no_elicitation),
            "json_schema_2020_12_tool": {"name": "json_schema_2020_12_tool",
                "arguments": {"name": "Ada", "address": {"street": "1 Main St", "city": "Springfield"}, "email": "ada@example.com"},
                "result": text("JSON Schema 2020-12 tool called with: {\"address\":{\"city\":\"Springfield\",\"street\":\"1 Main St\"},\"email\":\"ada@example.com\",\"name\":\"Ada\"}")},
            "test_reconnection": {"name": "test_reconnection", "arguments": {},
                "result": text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.")},
        },
        "resources": fixtures::resources(),
        "resourceTemplates": [{"uriTemplate": "test://template/{id}/data", "name": "template",
            "title": "Resource Template", "description": "A resource template with parameter substitution",
            "mimeType": "application/json"}],
        "reads": {
            "test://static-text": {"result": {"contents": [{"uri": "test://static-text",
                "mimeType": "text/plain", "text": "This is the content of the static text resource."}]}},
            "test://static-binary": {"result": {"contents": [{"uri": "test://static-binary",
                "mimeType": "image/png", "blob": PNG}]}},
            "test://template/123/data": {"result": {"contents": [{"uri": "test://template/123/data",
                "mimeType": "application/json",
                "text": "{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]}},
            "test://watched-resource": {"result": {"contents": [{"uri": "test://watched-resource",
                "mimeType": "text/plain", "text": "Watched resource content"}]}},
        },
        "subscribe": {"result": {}},
        "unsubscribe": {"result": {}},
        "prompts": fixtures::prompts(),
        "getPrompts": {
            "test_simple_prompt": {"name": "test_simple_prompt",
                "result": {"messages": [user_text("This is a simple prompt for testing.")]}},
            "test_prompt_with_arguments": {"name": "test_prompt_with_arguments",
                "arguments": {"arg1": "testValue1", "arg2": "testValue2"},
                "result": {"messages": [user_text("Prompt with arguments: arg1='testValue1', arg2='testValue2'")]}},
            "test_prompt_with_embedded_resource": {"name": "test_prompt_with_embedded_resource",
                "arguments": {"resourceUri": "test://example-resource"},
                "result": {"messages": [
                    user(json!({"type": "resource", "resource": {"uri": "test://example-resource",
                        "mimeType": "text/plain", "text": "Embedded resource content for testing."}})),
                    user_text("Please process the embedded resource above.")]}},
            "test_prompt_with_image": {"name": "test_prompt_with_image",
                "result": {"messages": [
                    user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                    user_text("Please analyze the image above.")]}},
        },
        "notifications": logs,
        "serverRequests": if asks {
            json!([sampling_request, elicit_request(&user_form), elicit_request(&defaults_form),
                elicit_request(&enums_form)])
        } else {
            json!([])
        },
        "errors": [],
    })
}

/// Checks what an SDK client printed after `--all-conformance --answers suite`.
pub fn check_sdk_client_output(client: &str, via: Via, run: &Run) {
    let mut out = run.json();
    let transport = if via == Via::Stdio {
        "stdio"
    } else {
        "streamable-http"
    };
    assert_eq!(out["transport"], transport, "{client}");

    // The progress tool answers with the SDK's token: its request id, an integer.
    let progress_call = out["calls"]
        .as_object_mut()
        .and_then(|calls| calls.remove("test_tool_with_progress"))
        .unwrap_or_else(|| panic!("{client} {via:?}: the progress tool was not called"));
    // Python's callback gets floats, TypeScript's the numbers as sent: compare values.
    let updates: Vec<(f64, f64, &str)> = progress_call["progress"]
        .as_array()
        .unwrap_or_else(|| panic!("{client} {via:?}: no progress recorded: {progress_call}"))
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap_or(-1.0),
                p["total"].as_f64().unwrap_or(-1.0),
                p["message"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        updates,
        [
            (0.0, 100.0, "Completed step 0 of 100"),
            (50.0, 100.0, "Completed step 50 of 100"),
            (100.0, 100.0, "Completed step 100 of 100"),
        ],
        "{client} {via:?}: every update arrives before the result"
    );
    let token = progress_call["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{client} {via:?}: {progress_call}"));
    assert!(
        token.parse::<i64>().is_ok(),
        "{client} {via:?}: the SDK's progress token is its request id, echoed as text: {token:?}"
    );

    let expected = expected(via);
    for (key, want) in expected.as_object().unwrap() {
        if let (Some(got), Some(want)) = (out[key].as_object(), want.as_object()) {
            for (name, want) in want {
                assert_eq!(got.get(name), Some(want), "{client} {via:?}: {key}.{name}");
            }
            assert_eq!(
                got.len(),
                want.len(),
                "{client} {via:?}: {key} has extra members"
            );
        } else {
            assert_eq!(&out[key], want, "{client} {via:?}: {key}");
        }
    }
    assert_eq!(run.code, 0, "{client} {via:?}: stderr:\n{}", run.stderr);
}
