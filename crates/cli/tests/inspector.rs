//! The MCP Inspector 2.x CLI (`mcp-inspector --cli`, npm `@modelcontextprotocol/inspector`
//! 2.12.0, a client built on the TypeScript SDK 2.x) against `junction serve conformance`:
//! in `--protocol-era modern` it pins 2026-07-28 through `server/discover` and fails against
//! a server without it, so every call here is the revision end to end: over Streamable HTTP
//! with and without sessions and over stdio; `legacy` (the handshake) works too. The
//! Inspector comes from `scripts/test`; without it these tests fail and say so.

use junction_test_support::cli::{junction_exe, HttpServe};
use junction_test_support::fixtures;
use junction_test_support::peers::peer;
use junction_test_support::process::Run;
use serde_json::{json, Value};

/// Runs the Inspector CLI with `--format json` against `target` (a URL, or a command).
fn inspector(era: &str, target: &[&str], args: &[&str]) -> Run {
    let home = std::env::temp_dir().join(format!("junction-inspector-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a scratch HOME");
    let script = peer("JUNCTION_INSPECTOR");
    let mut command = std::process::Command::new(peer("JUNCTION_NODE"));
    command
        .args([script.as_str(), "--cli"])
        .args(target)
        .args(["--protocol-era", era, "--format", "json"])
        .args(args)
        // The Inspector keeps a catalog under ~/.mcp-inspector.
        .env("HOME", &home);
    Run::of(&mut command, None)
}

/// The `result` the Inspector printed for a call that succeeded.
fn result(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()["result"].clone()
}

/// What a 2026-07-28 result of the conformance server carries besides its content.
fn modern(mut result: Value) -> Value {
    result["_meta"] = json!({"io.modelcontextprotocol/serverInfo":
        {"name": "mcp-conformance-test-server", "version": "1.0.0"}});
    result
}

fn simple_text() -> Value {
    json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}]})
}

/// Tools, resources and prompts through the Inspector in the modern era.
fn exercise_modern(target: &[&str]) {
    let call = inspector(
        "modern",
        target,
        &["--method", "tools/call", "--tool-name", "test_simple_text"],
    );
    let mut expected = modern(simple_text());
    expected["resultType"] = json!("complete");
    assert_eq!(result(&call), expected);

    let list = result(&inspector("modern", target, &["--method", "tools/list"]));
    let tools = list["tools"].as_array().expect("a tool list");
    let schema_tool = tools
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .expect("the 2020-12 fixture is listed");
    assert_eq!(schema_tool["inputSchema"], fixtures::schema_2020_12());
    let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
    for tool in fixtures::alpha12_tools() {
        assert!(
            names.contains(&&tool["name"]),
            "{} is listed: {names:?}",
            tool["name"]
        );
    }

    // The arguments mirrored into Mcp-Param-* headers reach the tool as sent.
    let headers = inspector(
        "modern",
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "test_x_mcp_header",
            "--tool-args-json",
            r#"{"region":"eu-west1","priority":3,"verbose":true,"query":"SELECT 1"}"#,
        ],
    );
    assert_eq!(
        result(&headers)["content"][0]["text"],
        r#"Called with {"priority":3,"query":"SELECT 1","region":"eu-west1","verbose":true}"#
    );

    let read = inspector(
        "modern",
        target,
        &["--method", "resources/read", "--uri", "test://static-text"],
    );
    assert_eq!(
        result(&read)["contents"],
        json!([{"uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}])
    );

    let prompt = inspector(
        "modern",
        target,
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "test_prompt_with_arguments",
            "--prompt-args",
            "arg1=a",
            "arg2=b",
        ],
    );
    assert_eq!(
        result(&prompt),
        modern(json!({"messages": [{"role": "user", "content":
            {"type": "text", "text": "Prompt with arguments: arg1='a', arg2='b'"}}]}))
    );

    let unknown = inspector(
        "modern",
        target,
        &["--method", "tools/call", "--tool-name", "no_such_tool"],
    );
    assert_eq!(unknown.code, 5, "{}\n{}", unknown.stdout, unknown.stderr);
    let error = serde_json::from_str::<Value>(unknown.stdout.trim())
        .or_else(|_| serde_json::from_str::<Value>(unknown.stderr.trim()))
        .unwrap_or_else(|e| panic!("an error object ({e}): {unknown:?}"));
    assert_eq!(error["error"]["code"], "tool_not_found");
}

#[test]
fn the_inspector_speaks_2026_07_28_with_junction_over_http_with_sessions() {
    let server = HttpServe::start("conformance", &[]);
    exercise_modern(&[&server.url]);
}

#[test]
fn the_inspector_speaks_2026_07_28_with_junction_over_sessionless_http() {
    let server = HttpServe::start("conformance", &["--stateless"]);
    exercise_modern(&[&server.url]);
}

#[test]
fn the_inspector_speaks_2026_07_28_with_junction_over_stdio() {
    exercise_modern(&[junction_exe(), "serve", "conformance"]);
}

#[test]
fn the_inspector_in_the_legacy_era_gets_the_handshake() {
    let server = HttpServe::start("conformance", &[]);
    let call = inspector(
        "legacy",
        &[&server.url],
        &["--method", "tools/call", "--tool-name", "test_simple_text"],
    );
    assert_eq!(result(&call), simple_text());
}
