//! Real peers: the TypeScript and Python SDK clients against `junction serve conformance`
//! (over stdio, and over Streamable HTTP with sessions and stateless),
//! and `junction call` against `@modelcontextprotocol/server-everything`. The peers come from
//! `scripts/test` (`JUNCTION_NODE`, `JUNCTION_TS_CLIENT`, ...); without them these tests fail
//! and say so.

use junction_test_support::cli::{junction, junction_exe, HttpServe};
use junction_test_support::peers::peer;
use junction_test_support::process::{run, Run};
use junction_test_support::sdk_clients::{check_sdk_client_output, Via, NO_FLAGS, SSE_ALWAYS};
use serde_json::{json, Value};

/// Runs an SDK client (`program script`) with `--all-conformance --answers suite` against
/// `junction serve conformance` reached `via`.
fn run_sdk_client(program: &str, script: &str, via: Via) -> Run {
    let all = [script, "--all-conformance", "--answers", "suite"];
    match via {
        Via::Stdio => {
            let mut args = all.to_vec();
            args.extend_from_slice(&["--", junction_exe(), "serve", "conformance"]);
            run(program, &args)
        }
        Via::Http(flags) => over_http(program, &all, flags),
        Via::Stateless => over_http(program, &all, &["--sessionless"]),
    }
}

fn over_http(program: &str, args: &[&str], flags: &[&str]) -> Run {
    let server = HttpServe::start("conformance", flags);
    let mut args = args.to_vec();
    args.push(&server.url);
    let run = run(program, &args);
    assert_eq!(
        server.stop(),
        Some(0),
        "junction serve ends cleanly on SIGTERM"
    );
    run
}

fn typescript(via: Via) {
    let node = peer("JUNCTION_NODE");
    let client = peer("JUNCTION_TS_CLIENT");
    check_sdk_client_output("ts-client", via, &run_sdk_client(&node, &client, via));
}

fn python(via: Via) {
    let python = peer("JUNCTION_PYTHON");
    let client = peer("JUNCTION_PY_CLIENT");
    check_sdk_client_output("py-client", via, &run_sdk_client(&python, &client, via));
}

#[test]
fn typescript_sdk_client_gets_every_conformance_fixture_exactly_over_stdio() {
    typescript(Via::Stdio);
}

#[test]
fn typescript_sdk_client_gets_every_conformance_fixture_exactly_over_http() {
    typescript(Via::Http(NO_FLAGS));
}

#[test]
fn typescript_sdk_client_gets_every_conformance_fixture_exactly_over_http_always_sse() {
    typescript(Via::Http(SSE_ALWAYS));
}

#[test]
fn typescript_sdk_client_gets_every_conformance_fixture_exactly_over_stateless_http() {
    typescript(Via::Stateless);
}

#[test]
fn python_sdk_client_gets_every_conformance_fixture_exactly_over_stdio() {
    python(Via::Stdio);
}

#[test]
fn python_sdk_client_gets_every_conformance_fixture_exactly_over_http() {
    python(Via::Http(NO_FLAGS));
}

#[test]
fn python_sdk_client_gets_every_conformance_fixture_exactly_over_stateless_http() {
    python(Via::Stateless);
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
