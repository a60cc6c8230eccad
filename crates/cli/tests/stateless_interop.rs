//! A real 2026-07-28 peer: the Python SDK client (`tests-interop/py-client.py --mode
//! 2026-07-28`, PyPI `mcp` 2.3.0) against `junction serve conformance` over stdio and over
//! Streamable HTTP without sessions, calling the fixtures, sampling and elicitation included
//! (answered through multi round-trip requests), with exact payloads. The peers come from
//! `scripts/test`; without them these tests fail and say so.

use junction_test_support::cli::{junction_exe, HttpServe};
use junction_test_support::peers::peer;
use junction_test_support::process::run;
use serde_json::{json, Value};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// Runs the Python client with `flags` against `target` (a URL, or stdio when `None`).
fn py_client(flags: &[&str], target: Option<&str>) -> Value {
    let python = peer("JUNCTION_PYTHON");
    let client = peer("JUNCTION_PY_CLIENT");
    let mut args = vec![client.as_str()];
    args.extend_from_slice(flags);
    match target {
        Some(url) => args.push(url),
        None => args.extend_from_slice(&["--", junction_exe(), "serve", "conformance"]),
    }
    let done = run(&python, &args);
    assert_eq!(
        done.code, 0,
        "py-client failed: {}\n{}",
        done.stdout, done.stderr
    );
    done.json()
}

/// A result of 2026-07-28 from the conformance server.
fn complete(mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": {"name": "mcp-conformance-test-server", "version": "1.0.0"}});
    result
}

fn text(t: &str) -> Value {
    complete(json!({"content": [{"type": "text", "text": t}]}))
}

/// Each fixture call and exactly what the client must print for it.
fn fixtures() -> Vec<(Vec<&'static str>, Value)> {
    vec![
        (
            vec!["--tool", "test_simple_text"],
            json!({"name": "test_simple_text", "result": text("This is a simple text response for testing.")}),
        ),
        (
            vec!["--tool", "test_image_content"],
            json!({"name": "test_image_content", "result": complete(json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}))}),
        ),
        (
            vec!["--tool", "test_error_handling"],
            json!({"name": "test_error_handling", "result": complete(json!({"content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}], "isError": true}))}),
        ),
        (
            vec!["--tool", "test_tool_with_progress", "--progress"],
            json!({"name": "test_tool_with_progress",
                "progress": [
                    {"progress": 0.0, "total": 100.0, "message": "Completed step 0 of 100"},
                    {"progress": 50.0, "total": 100.0, "message": "Completed step 50 of 100"},
                    {"progress": 100.0, "total": 100.0, "message": "Completed step 100 of 100"}],
                "result": text("1")}),
        ),
        (
            // The client sets no `io.modelcontextprotocol/logLevel`, so no log may arrive.
            vec!["--tool", "test_tool_with_logging"],
            json!({"name": "test_tool_with_logging", "result": text("Tool with logging executed successfully")}),
        ),
        (
            vec!["--tool", "test_sampling", "--args", r#"{"prompt":"Hi"}"#],
            json!({"name": "test_sampling", "arguments": {"prompt": "Hi"}, "result": text("LLM response: sampled: Hi")}),
        ),
        (
            vec![
                "--tool",
                "test_elicitation",
                "--args",
                r#"{"message":"Who?"}"#,
            ],
            json!({"name": "test_elicitation", "arguments": {"message": "Who?"},
                "result": text(r#"User response: action=accept, content={"username":"testuser","email":"test@example.com"}"#)}),
        ),
    ]
}

fn check(target: Option<&str>) {
    for (flags, called) in fixtures() {
        let mut args = vec!["--mode", "2026-07-28", "--no-list-tools"];
        args.extend_from_slice(&flags);
        let out = py_client(&args, target);
        assert_eq!(out["negotiatedProtocolVersion"], "2026-07-28");
        assert_eq!(out["called"], called, "{flags:?}");
        // Sampling and elicitation went through input_required rounds, not server requests.
        assert_eq!(out["serverRequests"], json!([]), "{flags:?}");
        assert_eq!(out["notifications"], json!([]), "{flags:?}");
        assert_eq!(out["errors"], json!([]), "{flags:?}");
    }
    let probed = py_client(&["--mode", "auto", "--tool", "test_simple_text"], target);
    assert_eq!(probed["negotiatedProtocolVersion"], "2026-07-28");
    assert_eq!(
        probed["serverInfo"],
        json!({"name": "mcp-conformance-test-server", "version": "1.0.0"})
    );
    let names: Vec<&str> = probed["tools"]
        .as_array()
        .expect("tools were listed")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"test_sampling"), "{names:?}");
}

#[test]
fn python_sdk_client_speaks_2026_07_28_over_stdio() {
    check(None);
}

#[test]
fn python_sdk_client_speaks_2026_07_28_over_http() {
    let server = HttpServe::start("conformance", &[]);
    check(Some(&server.url));
}
