//! Real peers: the TypeScript and Python SDK clients against `junction serve conformance`,
//! and `junction call` against `@modelcontextprotocol/server-everything`. The peers come from
//! `scripts/test` (`JUNCTION_NODE`, `JUNCTION_TS_CLIENT`, ...); without them these tests fail
//! and say so.

mod common;

use common::{junction, peer, run, Run, JUNCTION};
use serde_json::{json, Value};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The conformance tools `junction serve conformance` offers, with their exact results
/// (`test_tool_with_progress` is checked apart: its text is the client's progress token).
fn implemented_tools() -> Vec<(&'static str, Value)> {
    let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
    vec![
        ("test_simple_text", text("This is a simple text response for testing.")),
        (
            "test_image_content",
            json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}),
        ),
        (
            "test_audio_content",
            json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}),
        ),
        (
            "test_embedded_resource",
            json!({"content": [{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}]}),
        ),
        (
            "test_multiple_content_types",
            json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"}}]}),
        ),
        (
            "test_error_handling",
            json!({"isError": true, "content": [{"type": "text",
                "text": "This tool intentionally returns an error for testing"}]}),
        ),
        (
            "test_reconnection",
            text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."),
        ),
    ]
}

/// Checks what an SDK client printed after `--all-conformance` against our server.
fn check_sdk_client_output(client: &str, run: &Run) {
    let out = run.json();
    assert_eq!(out["transport"], "stdio", "{client}");
    assert_eq!(out["negotiatedProtocolVersion"], "2025-11-25", "{client}");
    assert_eq!(
        out["serverInfo"],
        json!({"name": "mcp-conformance-test-server", "version": "1.0.0"}),
        "{client}"
    );
    assert_eq!(out["ping"], json!({"result": {}}), "{client}");

    let listed: Vec<&str> = out["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{client}: no tools in {out}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut ours: Vec<&str> = implemented_tools().iter().map(|(n, _)| *n).collect();
    ours.push("test_tool_with_progress");
    for name in &ours {
        assert!(
            listed.contains(name),
            "{client}: {name} not listed: {listed:?}"
        );
    }

    for (name, expected) in implemented_tools() {
        assert_eq!(
            out["calls"][name]["result"], expected,
            "{client}: {name}: {}",
            out["calls"][name]
        );
    }

    let progress_call = &out["calls"]["test_tool_with_progress"];
    let updates: Vec<(f64, f64, &str)> = progress_call["progress"]
        .as_array()
        .unwrap_or_else(|| panic!("{client}: no progress recorded: {progress_call}"))
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap(),
                p["total"].as_f64().unwrap(),
                p["message"].as_str().unwrap(),
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
        "{client}"
    );
    let token = progress_call["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{client}: {progress_call}"));
    assert!(
        token.parse::<i64>().is_ok(),
        "{client}: the SDK's progress token is its request id, echoed as text: {token:?}"
    );

    // Every failed operation must be one of the fixtures the server does not offer yet.
    let mut ours_labels: Vec<String> = ours.iter().map(|n| format!("tools/call {n}")).collect();
    ours_labels.extend(["tools/list".to_owned(), "ping".to_owned()]);
    let errors: Vec<&str> = out["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for error in &errors {
        let label = error.split(':').next().unwrap_or_default();
        assert!(
            !ours_labels.iter().any(|l| l == label),
            "{client}: an implemented fixture failed: {error}"
        );
    }
    assert_eq!(
        run.code,
        if errors.is_empty() { 0 } else { 1 },
        "{client}: stderr:\n{}",
        run.stderr
    );
}

#[test]
fn typescript_sdk_client_gets_every_conformance_fixture_exactly() {
    let node = peer("JUNCTION_NODE");
    let client = peer("JUNCTION_TS_CLIENT");
    let run = run(
        &node,
        &[
            &client,
            "--all-conformance",
            "--answers",
            "suite",
            "--",
            JUNCTION,
            "serve",
            "conformance",
        ],
    );
    check_sdk_client_output("ts-client", &run);
}

#[test]
fn python_sdk_client_gets_every_conformance_fixture_exactly() {
    let python = peer("JUNCTION_PYTHON");
    let client = peer("JUNCTION_PY_CLIENT");
    let run = run(
        &python,
        &[
            &client,
            "--all-conformance",
            "--answers",
            "suite",
            "--",
            JUNCTION,
            "serve",
            "conformance",
        ],
    );
    check_sdk_client_output("py-client", &run);
}

/// `junction call FLAGS... -- node server-everything stdio`.
fn call_everything(flags: &[&str]) -> Run {
    let node = peer("JUNCTION_NODE");
    let server = peer("JUNCTION_SERVER_EVERYTHING");
    let mut args = vec!["call"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", &node, &server, "stdio"]);
    junction(&args)
}

fn ok(run: &Run) -> Value {
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run.json()
}

#[test]
fn call_lists_and_calls_server_everything_tools() {
    let tools = ok(&call_everything(&["--method", "tools/list"]));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );

    let echo = ok(&call_everything(&[
        "--method",
        "tools/call",
        "--tool",
        "echo",
        "--arg",
        "message=hi",
    ]));
    assert_eq!(
        echo,
        json!({"content": [{"type": "text", "text": "Echo: hi"}]})
    );

    // A value that parses as JSON travels as JSON: numbers for get-sum, a quoted string for echo.
    let sum = ok(&call_everything(&[
        "--method",
        "tools/call",
        "--tool",
        "get-sum",
        "--arg",
        "a=2",
        "--args",
        r#"{"b": 3}"#,
    ]));
    assert_eq!(
        sum,
        json!({"content": [{"type": "text", "text": "The sum of 2 and 3 is 5."}]})
    );
    let quoted = ok(&call_everything(&[
        "--method",
        "tools/call",
        "--tool",
        "echo",
        "--arg",
        r#"message="42""#,
    ]));
    assert_eq!(
        quoted,
        json!({"content": [{"type": "text", "text": "Echo: 42"}]})
    );

    // Its SDK reports bad arguments as a tool error: exit 2 with the result.
    let wrong = call_everything(&[
        "--method",
        "tools/call",
        "--tool",
        "echo",
        "--arg",
        "message=42",
    ]);
    assert_eq!(wrong.code, 2, "{}\n{}", wrong.stdout, wrong.stderr);
    assert_eq!(wrong.json()["isError"], true);
}

#[test]
fn call_lists_and_reads_server_everything_resources() {
    let listed = ok(&call_everything(&["--method", "resources/list"]));
    let features = json!({
        "uri": "demo://resource/static/document/features.md",
        "name": "features.md",
        "description": "Static document file exposed from /docs: features.md",
        "mimeType": "text/markdown"
    });
    assert!(
        listed["resources"].as_array().unwrap().contains(&features),
        "{listed}"
    );

    let read = ok(&call_everything(&[
        "--method",
        "resources/read",
        "--uri",
        "demo://resource/static/document/features.md",
    ]));
    let contents = read["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1, "{read}");
    assert_eq!(
        contents[0]["uri"],
        "demo://resource/static/document/features.md"
    );
    assert_eq!(contents[0]["mimeType"], "text/markdown");
    assert!(
        contents[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Everything Server - Features\n"),
        "{read}"
    );

    let missing = call_everything(&[
        "--method",
        "resources/read",
        "--uri",
        "demo://no-such-resource",
    ]);
    assert_eq!(missing.code, 1, "{}\n{}", missing.stdout, missing.stderr);
    assert_eq!(
        missing.json(),
        json!({"code": -32602, "message": "MCP error -32602: Resource demo://no-such-resource not found"})
    );
}

#[test]
fn call_lists_and_gets_server_everything_prompts() {
    let listed = ok(&call_everything(&["--method", "prompts/list"]));
    let prompts = listed["prompts"].as_array().unwrap();
    assert!(
        prompts.contains(&json!({
            "name": "simple-prompt", "title": "Simple Prompt",
            "description": "A prompt with no arguments"
        })),
        "{listed}"
    );
    assert!(
        prompts.contains(&json!({
            "name": "args-prompt", "title": "Arguments Prompt",
            "description": "A prompt with two arguments, one required and one optional",
            "arguments": [
                {"name": "city", "description": "Name of the city", "required": true},
                {"name": "state", "required": false}
            ]
        })),
        "{listed}"
    );

    let simple = ok(&call_everything(&[
        "--method",
        "prompts/get",
        "--prompt",
        "simple-prompt",
    ]));
    assert_eq!(
        simple,
        json!({"messages": [{"role": "user", "content": {"type": "text",
            "text": "This is a simple prompt without arguments."}}]})
    );
    let with_args = ok(&call_everything(&[
        "--method",
        "prompts/get",
        "--prompt",
        "args-prompt",
        "--arg",
        "city=Paris",
    ]));
    assert_eq!(
        with_args,
        json!({"messages": [{"role": "user", "content": {"type": "text",
            "text": "What's weather in Paris?"}}]})
    );
}

#[test]
fn call_completes_lists_templates_sets_the_level_and_pings_server_everything() {
    let completed = ok(&call_everything(&[
        "--method",
        "completion/complete",
        "--ref",
        "prompt:completable-prompt",
        "--arg-name",
        "department",
        "--arg-value",
        "E",
    ]));
    assert_eq!(
        completed,
        json!({"completion": {"values": ["Engineering"], "total": 1, "hasMore": false}})
    );
    let templates = ok(&call_everything(&["--method", "resources/templates/list"]));
    assert!(
        templates["resourceTemplates"].as_array().unwrap().contains(&json!({
            "uriTemplate": "demo://resource/dynamic/text/{resourceId}",
            "name": "Dynamic Text Resource",
            "description": "Plaintext dynamic resource fabricated from the {resourceId} variable, which must be an integer.",
            "mimeType": "text/plain"
        })),
        "{templates}"
    );
    let set = call_everything(&["--method", "logging/setLevel", "--level", "debug"]);
    assert_eq!(
        (set.code, set.stdout.as_str()),
        (0, "{}\n"),
        "{}",
        set.stderr
    );
    let ping = call_everything(&["--method", "ping"]);
    assert_eq!(
        (ping.code, ping.stdout.as_str()),
        (0, "{}\n"),
        "{}",
        ping.stderr
    );
}
