//! `junction call` against `junction serve conformance`, two real processes: the exact JSON
//! printed, the exit codes, version pinning and the refusal of bad usage.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use junction_test_support::cli::{call_conformance, junction, junction_exe};
use junction_test_support::fixtures;
use junction_test_support::process::{self, Run};
use serde_json::{json, Value};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn assert_code(run: &Run, code: i32) {
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

/// Asserts a usage or connection failure: exit 3, nothing on stdout, `message` on stderr.
fn assert_failure(run: &Run, message: &str) {
    assert_code(run, 3);
    assert_eq!(run.stdout, "", "stdout must stay empty on failure");
    assert!(
        run.stderr.contains(message),
        "stderr should contain {message:?}:\n{}",
        run.stderr
    );
}

fn fixture(name: &str, description: &str) -> Value {
    fixture_with(
        name,
        description,
        json!({"type": "object", "properties": {}}),
    )
}

fn fixture_with(name: &str, description: &str, input_schema: Value) -> Value {
    json!({"name": name, "description": description, "inputSchema": input_schema})
}

#[test]
fn tools_list_prints_every_fixture_as_pretty_json() {
    let run = call_conformance(&["--method", "tools/list"]);
    assert_code(&run, 0);
    assert!(
        run.stdout.starts_with("{\n  \"tools\": [\n    {\n") && run.stdout.ends_with("}\n"),
        "pretty JSON with a final newline:\n{}",
        run.stdout
    );
    assert_eq!(
        run.json(),
        json!({"tools": ([
            fixture("test_simple_text", "Tests simple text content response"),
            fixture("test_image_content", "Tests image content response"),
            fixture("test_audio_content", "Tests audio content response"),
            fixture("test_embedded_resource", "Tests embedded resource content response"),
            fixture("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)"),
            fixture("test_tool_with_logging", "Tests tool that emits log messages during execution"),
            fixture("test_error_handling", "Tests error response handling"),
            fixture("test_tool_with_progress", "Tests tool that reports progress notifications"),
            fixture("test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects."),
            fixture_with("test_sampling", "Tests server-initiated sampling (LLM completion request)",
                json!({"type": "object", "properties": {"prompt": {"type": "string",
                    "description": "The prompt to send to the LLM"}}, "required": ["prompt"]})),
            fixture_with("test_elicitation", "Tests server-initiated elicitation (user input request)",
                json!({"type": "object", "properties": {"message": {"type": "string",
                    "description": "The message to show the user"}}, "required": ["message"]})),
            fixture("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034"),
            fixture("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330"),
            fixture_with("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
                fixtures::schema_2020_12()),
        ].into_iter().chain(fixtures::alpha12_tools()).collect::<Vec<_>>())})
    );
}

#[test]
fn each_content_fixture_prints_its_exact_result() {
    let cases = [
        (
            "test_simple_text",
            json!([{"type": "text", "text": "This is a simple text response for testing."}]),
        ),
        (
            "test_image_content",
            json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]),
        ),
        (
            "test_audio_content",
            json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]),
        ),
        (
            "test_embedded_resource",
            json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content."
            }}]),
        ),
        (
            "test_multiple_content_types",
            json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"
                }}
            ]),
        ),
        (
            "test_reconnection",
            json!([{"type": "text", "text": "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."}]),
        ),
    ];
    for (tool, content) in cases {
        let run = call_conformance(&["--method", "tools/call", "--tool", tool]);
        assert_code(&run, 0);
        assert_eq!(run.json(), json!({ "content": content }), "{tool}");
    }
}

#[test]
fn a_tool_error_prints_the_result_and_exits_2() {
    let run = call_conformance(&["--method", "tools/call", "--tool", "test_error_handling"]);
    assert_code(&run, 2);
    assert_eq!(
        run.json(),
        json!({"isError": true, "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}]})
    );
}

#[test]
fn a_json_rpc_error_prints_the_error_object_and_exits_1() {
    let run = call_conformance(&["--method", "tools/call", "--tool", "no_such_tool"]);
    assert_code(&run, 1);
    assert_eq!(
        run.json(),
        json!({"code": -32602, "message": "Unknown tool: no_such_tool"})
    );
}

#[test]
fn progress_is_logged_with_v_and_the_token_comes_back() {
    let run = call_conformance(&[
        "-v",
        "--method",
        "tools/call",
        "--tool",
        "test_tool_with_progress",
    ]);
    assert_code(&run, 0);
    let result = run.json();
    let token = result["content"][0]["text"].as_str().unwrap();
    assert!(
        token.parse::<i64>().is_ok(),
        "the token junction sent is its request id: {result}"
    );
    for step in [0, 50, 100] {
        let line = format!("progress {step}/100 Completed step {step} of 100");
        assert!(run.stderr.contains(&line), "{line:?} in\n{}", run.stderr);
    }
}

#[test]
fn ping_prints_an_empty_object() {
    let run = call_conformance(&["--method", "ping"]);
    assert_code(&run, 0);
    assert_eq!(run.stdout, "{}\n");
}

#[test]
fn initialize_prints_the_servers_answer() {
    let run = call_conformance(&["--method", "initialize"]);
    assert_code(&run, 0);
    assert_eq!(
        run.json(),
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "prompts": {"listChanged": true}, "logging": {}, "completions": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
            "serverInfo": {"name": "mcp-conformance-test-server", "version": "1.0.0"},
            "instructions": "Test fixtures of the MCP conformance suites 0.1.16 and 0.2.0-alpha.12. Every tool returns a fixed payload; call one to see how a client handles that kind of content."
        })
    );
}

#[test]
fn protocol_version_pins_the_offered_revision() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let run = call_conformance(&["--method", "initialize", "--protocol-version", version]);
        assert_code(&run, 0);
        assert_eq!(run.json()["protocolVersion"], version);
    }
    let pinned = call_conformance(&[
        "--protocol-version",
        "2024-11-05",
        "--method",
        "tools/call",
        "--tool",
        "test_simple_text",
    ]);
    assert_code(&pinned, 0);
    assert_eq!(
        pinned.json(),
        json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}]})
    );
    let stateless = call_conformance(&[
        "--protocol-version",
        "2026-07-28",
        "--method",
        "tools/call",
        "--tool",
        "test_simple_text",
    ]);
    assert_code(&stateless, 0);
    assert_eq!(stateless.json(), stateless_result(SIMPLE_TEXT));
    let no_ping = call_conformance(&["--method", "ping", "--protocol-version", "2026-07-28"]);
    assert_failure(
        &no_ping,
        "`ping` was not sent: protocol version 2026-07-28 has no such request",
    );
    let unknown = call_conformance(&["--method", "ping", "--protocol-version", "2025-01-01"]);
    assert_failure(
        &unknown,
        "[possible values: auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05]",
    );
}

const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// `test_simple_text`'s result as 2026-07-28 prints it: `resultType` and the server's
/// identity in `_meta`.
fn stateless_result(text: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": text}],
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo":
            {"name": "mcp-conformance-test-server", "version": "1.0.0"}}
    })
}

#[test]
fn auto_speaks_2026_07_28_to_a_server_that_has_it_and_the_handshake_for_ping() {
    let auto = |flags: &[&str]| {
        let mut args = vec!["call", "-v"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", junction_exe(), "serve", "conformance"]);
        junction(&args)
    };
    let call = auto(&["--method", "tools/call", "--tool", "test_simple_text"]);
    assert_code(&call, 0);
    assert_eq!(call.json(), stateless_result(SIMPLE_TEXT));
    assert!(
        call.stderr.contains("protocol=2026-07-28"),
        "{}",
        call.stderr
    );
    // 2026-07-28 has no `ping`: auto goes by the handshake for it.
    let ping = auto(&["--method", "ping"]);
    assert_code(&ping, 0);
    assert_eq!(ping.stdout, "{}\n");
    assert!(
        ping.stderr.contains("protocol=2025-11-25"),
        "{}",
        ping.stderr
    );
}

#[test]
fn auto_reports_a_server_that_dies_during_the_probe() {
    assert_death_reported("tools/list", "server/discover");
}

/// `junction call --method METHOD` against a server that writes to stderr and exits 7
/// before answering `first` (the first request sent): the failure names that request, the
/// exit status and the server's last words.
fn assert_death_reported(method: &str, first: &str) {
    let run = junction(&[
        "call",
        "--method",
        method,
        "--",
        "sh",
        "-c",
        "echo 'cannot open the database' >&2; exit 7",
    ]);
    assert_failure(
        &run,
        &format!("the connection closed before `{first}` was answered"),
    );
    assert!(run.stderr.contains("exit status: 7"), "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot open the database"),
        "{}",
        run.stderr
    );
}

/// `junction call FLAGS...` against the conformance server; must exit 0.
fn ok(flags: &[&str]) -> Value {
    let run = call_conformance(flags);
    assert_code(&run, 0);
    run.json()
}

#[test]
fn resources_and_the_template_are_listed_and_read_exactly() {
    assert_eq!(
        ok(&["--method", "resources/list"]),
        json!({"resources": fixtures::resources()})
    );
    assert_eq!(
        ok(&["--method", "resources/templates/list"]),
        json!({"resourceTemplates": [{"uriTemplate": "test://template/{id}/data", "name": "template",
            "title": "Resource Template", "description": "A resource template with parameter substitution",
            "mimeType": "application/json"}]})
    );
    let reads = [
        (
            "test://static-text",
            json!({"uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
        ),
        (
            "test://static-binary",
            json!({"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}),
        ),
        (
            "test://watched-resource",
            json!({"uri": "test://watched-resource", "mimeType": "text/plain",
                "text": "Watched resource content"}),
        ),
        (
            "test://template/123/data",
            json!({"uri": "test://template/123/data", "mimeType": "application/json",
                "text": "{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}),
        ),
    ];
    for (uri, contents) in reads {
        assert_eq!(
            ok(&["--method", "resources/read", "--uri", uri]),
            json!({ "contents": [contents] }),
            "{uri}"
        );
    }
    let missing = call_conformance(&["--method", "resources/read", "--uri", "test://nothing"]);
    assert_code(&missing, 1);
    assert_eq!(missing.json()["code"], -32002);
}

#[test]
fn prompts_are_listed_and_rendered_exactly() {
    assert_eq!(
        ok(&["--method", "prompts/list"]),
        json!({"prompts": fixtures::prompts()})
    );
    let user = |content: Value| json!({"role": "user", "content": content});
    let text = |t: &str| user(json!({"type": "text", "text": t}));
    let cases: [(&[&str], Value); 4] = [
        (
            &["--prompt", "test_simple_prompt"],
            json!([text("This is a simple prompt for testing.")]),
        ),
        (
            &[
                "--prompt",
                "test_prompt_with_arguments",
                "--arg",
                "arg1=testValue1",
                "--arg",
                "arg2=testValue2",
            ],
            json!([text(
                "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
            )]),
        ),
        (
            &[
                "--prompt",
                "test_prompt_with_embedded_resource",
                "--arg",
                "resourceUri=test://example-resource",
            ],
            json!([
                user(
                    json!({"type": "resource", "resource": {"uri": "test://example-resource",
                    "mimeType": "text/plain", "text": "Embedded resource content for testing."}})
                ),
                text("Please process the embedded resource above."),
            ]),
        ),
        (
            &["--prompt", "test_prompt_with_image"],
            json!([
                user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                text("Please analyze the image above."),
            ]),
        ),
    ];
    for (flags, messages) in cases {
        let mut args = vec!["--method", "prompts/get"];
        args.extend_from_slice(flags);
        assert_eq!(ok(&args), json!({ "messages": messages }), "{flags:?}");
    }
    let missing = call_conformance(&[
        "--method",
        "prompts/get",
        "--prompt",
        "test_prompt_with_arguments",
    ]);
    assert_code(&missing, 1);
    assert_eq!(missing.json()["code"], -32602);
}

#[test]
fn completion_and_log_level_answer_exactly() {
    let complete = |value: &str| {
        ok(&[
            "--method",
            "completion/complete",
            "--ref",
            "prompt:test_prompt_with_arguments",
            "--arg-name",
            "arg1",
            "--arg-value",
            value,
        ])
    };
    // What the suite sends, answered as the reference answers it.
    assert_eq!(
        complete("test"),
        json!({"completion": {"values": [], "total": 0, "hasMore": false}})
    );
    assert_eq!(
        complete("par"),
        json!({"completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": false}})
    );
    for level in ["debug", "info", "emergency"] {
        let run = call_conformance(&["--method", "logging/setLevel", "--level", level]);
        assert_code(&run, 0);
        assert_eq!(run.stdout, "{}\n", "exactly an empty object");
    }
}

#[test]
fn the_logging_tool_sends_three_info_messages_before_its_result() {
    let run = call_conformance(&[
        "-v",
        "--method",
        "tools/call",
        "--tool",
        "test_tool_with_logging",
    ]);
    assert_code(&run, 0);
    assert_eq!(
        run.json(),
        json!({"content": [{"type": "text", "text": "Tool with logging executed successfully"}]})
    );
    let logged: Vec<&str> = run
        .stderr
        .lines()
        .filter_map(|l| l.split_once("method=notifications/message params="))
        .map(|(_, params)| params)
        .collect();
    assert_eq!(
        logged,
        [
            r#"{"level":"info","data":"Tool execution started"}"#,
            r#"{"level":"info","data":"Tool processing data"}"#,
            r#"{"level":"info","data":"Tool execution completed"}"#,
        ],
        "{}",
        run.stderr
    );
}

#[test]
fn tools_that_ask_the_client_explain_when_it_cannot_answer() {
    // `junction call` declares neither sampling nor elicitation: each tool says so.
    let cases = [
        ("test_sampling", r#"{"prompt":"hi"}"#, "Sampling not supported or error: `sampling/createMessage` was not sent: the client did not declare the `sampling` capability"),
        ("test_elicitation", r#"{"message":"hi"}"#, "Elicitation not supported or error: `elicitation/create` was not sent: the client did not declare form-mode elicitation (`elicitation` or `elicitation.form`)"),
        ("test_elicitation_sep1034_defaults", "{}", "Elicitation not supported or error: `elicitation/create` was not sent: the client did not declare form-mode elicitation (`elicitation` or `elicitation.form`)"),
        ("test_elicitation_sep1330_enums", "{}", "Elicitation not supported or error: `elicitation/create` was not sent: the client did not declare form-mode elicitation (`elicitation` or `elicitation.form`)"),
    ];
    for (tool, args, text) in cases {
        assert_eq!(
            ok(&["--method", "tools/call", "--tool", tool, "--args", args]),
            json!({"content": [{"type": "text", "text": text}]}),
            "{tool}"
        );
    }
    assert_eq!(
        ok(&[
            "--method",
            "tools/call",
            "--tool",
            "json_schema_2020_12_tool",
            "--args",
            r#"{"name":"Ada","address":{"city":"London"},"email":"ada@example.com"}"#
        ]),
        json!({"content": [{"type": "text",
            "text": "JSON Schema 2020-12 tool called with: {\"address\":{\"city\":\"London\"},\"email\":\"ada@example.com\",\"name\":\"Ada\"}"}]})
    );
    let extra = call_conformance(&[
        "--method",
        "tools/call",
        "--tool",
        "json_schema_2020_12_tool",
        "--args",
        r#"{"nickname":"x"}"#,
    ]);
    assert_ne!(
        extra.code, 0,
        "additionalProperties: false refuses unknown members"
    );
}

#[test]
fn bad_usage_exits_3_and_names_the_problem() {
    let conformance = [junction_exe(), "serve", "conformance"];
    let with_server = |flags: &[&'static str]| -> Vec<&'static str> {
        let mut args = vec!["call"];
        args.extend_from_slice(flags);
        args.push("--");
        args.extend_from_slice(&conformance);
        args
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            with_server(&["--method", "tools/call"]),
            "--method tools/call needs --tool NAME",
        ),
        (
            with_server(&["--method", "resources/read"]),
            "--method resources/read needs --uri URI",
        ),
        (
            with_server(&["--method", "tools/list", "--tool", "x"]),
            "--tool is not used by --method tools/list; it goes with --method tools/call",
        ),
        (
            with_server(&["--method", "tools/call", "--tool", "x", "--arg", "novalue"]),
            "expected KEY=VALUE, got \"novalue\"",
        ),
        (
            with_server(&["--method", "tools/call", "--tool", "x", "--args", "[1, 2]"]),
            "--args must be a JSON object, not [1,2]",
        ),
        (
            with_server(&["--method", "bogus"]),
            "invalid value 'bogus' for '--method <METHOD>'",
        ),
        (
            with_server(&["--method", "ping", "--timeout", "0"]),
            "expected a positive number of seconds, got \"0\"",
        ),
        (
            with_server(&[
                "--method",
                "ping",
                "--cwd",
                "/nonexistent/junction-test-dir",
            ]),
            "--cwd /nonexistent/junction-test-dir: not a directory",
        ),
        (vec!["call", "--method", "ping"], "give the server: a URL"),
        (
            vec![
                "-v",
                "call",
                "--method",
                "tools/call",
                "--",
                junction_exe(),
                "serve",
                "conformance",
            ],
            "--method tools/call needs --tool NAME",
        ),
        (
            vec![
                "call",
                "--method",
                "tools/list",
                "--",
                "http://127.0.0.1:9/mcp",
            ],
            "http://127.0.0.1:9/mcp: a URL goes before the flags, not after `--`",
        ),
        (
            vec![
                "call",
                "--method",
                "ping",
                "--",
                "/nonexistent/junction-test-server",
            ],
            "could not start `/nonexistent/junction-test-server`",
        ),
    ];
    for (args, message) in cases {
        let run = junction(&args);
        assert_failure(&run, message);
    }
}

#[test]
fn a_server_that_dies_is_reported_with_its_exit_status_and_stderr() {
    assert_death_reported("ping", "initialize");
}

#[test]
fn a_server_that_never_answers_times_out() {
    let run = junction(&[
        "call",
        "--method",
        "ping",
        "--timeout",
        "0.2",
        "--",
        "sleep",
        "30",
    ]);
    assert_failure(&run, "`initialize` timed out");
}

#[test]
fn server_stderr_is_shown_only_with_v_and_env_and_cwd_reach_the_server() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let dir = dir.to_str().unwrap();
    let script = format!(
        "echo \"marker FOO=$FOO in $(pwd)\" >&2; exec {junction} serve conformance",
        junction = junction_exe()
    );
    let args = |verbose: bool| {
        let mut args = vec!["call"];
        if verbose {
            args.push("-v");
        }
        args.extend_from_slice(&[
            "--method",
            "ping",
            "--env",
            "FOO=bar=baz",
            "--cwd",
            dir,
            "--",
            "sh",
            "-c",
            &script,
        ]);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let quiet = process::run(
        junction_exe(),
        &args(false).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_code(&quiet, 0);
    assert!(!quiet.stderr.contains("marker"), "{}", quiet.stderr);
    let verbose = process::run(
        junction_exe(),
        &args(true).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_code(&verbose, 0);
    let expected = format!("marker FOO=bar=baz in {dir}");
    assert!(
        verbose.stderr.contains(&expected),
        "{expected:?} in\n{}",
        verbose.stderr
    );
    assert_eq!(verbose.stdout, "{}\n");
}

#[test]
fn serve_with_an_unknown_name_lists_the_known_ones_and_exits_2() {
    let run = junction(&["serve", "no-such-server"]);
    assert_code(&run, 2);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("invalid value 'no-such-server'")
            && run
                .stderr
                .contains("[possible values: library, calendar, tasks, conformance]"),
        "{}",
        run.stderr
    );
}

#[test]
fn serve_writes_only_protocol_on_stdout_and_exits_when_stdin_closes() {
    let mut child = Command::new(junction_exe())
        .args(["serve", "conformance"])
        .env("RUST_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut receive = || {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "stdout ended early"
        );
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a stdout line that is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let init = receive();
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_simple_text"}}),
    );
    assert_eq!(
        receive(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [
            {"type": "text", "text": "This is a simple text response for testing."}]}})
    );
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the answers");
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    let logs = String::from_utf8_lossy(&output.stderr);
    assert!(
        logs.contains("serving over stdio"),
        "logs go to stderr:\n{logs}"
    );
}

/// A client may write a whole session and close stdin without waiting: `initialize` is
/// answered before what follows it is read, and requests still running when stdin closes are
/// answered before the server exits.
#[test]
fn serve_answers_a_session_written_at_once_and_then_closed() {
    let mut child = Command::new(junction_exe())
        .args(["serve", "conformance"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let session = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "test_tool_with_progress", "_meta": {"progressToken": "p"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "test_simple_text"}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for message in &session {
        writeln!(stdin, "{message}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    let messages: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let answer = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to request {id} in {messages:#?}"))
    };
    assert_eq!(answer(1)["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        answer(2)["result"],
        json!({"content": [{"type": "text", "text": "p"}]})
    );
    assert_eq!(
        answer(3)["result"]["content"][0]["text"],
        "This is a simple text response for testing."
    );
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"]["progress"])
        .collect();
    assert_eq!(progress, [&json!(0.0), &json!(50.0), &json!(100.0)]);
}

#[test]
fn serve_http_options_need_http_and_a_valid_address() {
    for flag in ["--stateless", "--sse-always"] {
        let run = junction(&["serve", "conformance", flag]);
        assert_code(&run, 2);
        assert!(run.stderr.contains("--http <ADDR>"), "{}", run.stderr);
    }
    let bad = junction(&["serve", "conformance", "--http", "not-an-address"]);
    assert_code(&bad, 2);
    assert!(
        bad.stderr
            .contains("expected HOST:PORT (e.g. 127.0.0.1:0) or a port, got `not-an-address`"),
        "{}",
        bad.stderr
    );
}
