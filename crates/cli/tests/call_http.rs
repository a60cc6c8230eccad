//! `junction call URL` over HTTP: against Junction's conformance server served in-process
//! (exact JSON, exit codes, headers on every request, `DELETE` on exit, a new session after
//! the server ended the old one) and against `@modelcontextprotocol/server-everything` over
//! Streamable HTTP and the legacy HTTP+SSE transport (from scripts/test's `JUNCTION_*`).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use junction::transport::http::server::HttpServer;
use junction_test_support::cli::junction;
use junction_test_support::peers::peer;
use junction_test_support::process::Run;
use serde_json::{json, Value};

/// One HTTP request the server received.
#[derive(Debug, Clone)]
struct Seen {
    verb: String,
    /// The JSON-RPC method of a POST, if any.
    method: Option<String>,
    headers: axum::http::HeaderMap,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// The conformance server over HTTP on its own runtime, recording every request.
struct Served {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Served {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Serves `junction_servers::conformance::server()`. With `expire_on`, the first POST of that
/// JSON-RPC method finds its session deleted underneath it (a real `DELETE` is sent first).
fn serve(expire_on: Option<&'static str>) -> Served {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let record = seen.clone();
    let self_url = url.clone();
    let expired = Arc::new(AtomicBool::new(false));
    let router = HttpServer::new(|c| {
        junction_servers::conformance::server().unwrap().serve(c);
    })
    .router()
    .layer(middleware::from_fn(move |request: Request, next: Next| {
        let record = record.clone();
        let self_url = self_url.clone();
        let expired = expired.clone();
        async move {
            let (parts, body) = request.into_parts();
            let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let method = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| v["method"].as_str().map(str::to_owned));
            record.lock().unwrap().push(Seen {
                verb: parts.method.to_string(),
                method: method.clone(),
                headers: parts.headers.clone(),
            });
            let session = parts.headers.get("mcp-session-id").cloned();
            if let (Some(target), Some(session)) = (expire_on, session) {
                if method.as_deref() == Some(target) && !expired.swap(true, Ordering::SeqCst) {
                    let status = reqwest::Client::new()
                        .delete(&self_url)
                        .header("mcp-session-id", session)
                        .send()
                        .await
                        .unwrap()
                        .status();
                    assert!(status.is_success(), "the test's DELETE answered {status}");
                }
            }
            let response: Response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            response
        }
    }));
    runtime.spawn(async move { axum::serve(listener, router).await });
    Served {
        url,
        seen,
        _runtime: runtime,
    }
}

fn assert_code(run: &Run, code: i32) {
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

/// `junction call URL FLAGS...`, speaking 2025-11-25 unless `flags` name a
/// `--protocol-version`: these tests are about the handshake family's sessions.
fn call(url: &str, flags: &[&str]) -> Run {
    let mut args = vec!["call", url];
    if !flags.contains(&"--protocol-version") {
        args.extend_from_slice(&["--protocol-version", "2025-11-25"]);
    }
    args.extend_from_slice(flags);
    junction(&args)
}

#[test]
fn results_tool_errors_and_json_rpc_errors_print_as_over_stdio() {
    let served = serve(None);
    let text = call(
        &served.url,
        &["--method", "tools/call", "--tool", "test_simple_text"],
    );
    assert_code(&text, 0);
    assert_eq!(
        text.json(),
        json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}]})
    );

    let failed = call(
        &served.url,
        &["--method", "tools/call", "--tool", "test_error_handling"],
    );
    assert_code(&failed, 2);
    assert_eq!(
        failed.json(),
        json!({"isError": true, "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}]})
    );

    let unknown = call(
        &served.url,
        &["--method", "tools/call", "--tool", "no_such_tool"],
    );
    assert_code(&unknown, 1);
    assert_eq!(
        unknown.json(),
        json!({"code": -32602, "message": "Unknown tool: no_such_tool"})
    );

    let init = call(
        &served.url,
        &["--method", "initialize", "--protocol-version", "2025-06-18"],
    );
    assert_code(&init, 0);
    assert_eq!(init.json()["protocolVersion"], "2025-06-18");
}

#[test]
fn auto_speaks_2026_07_28_over_http_without_a_session() {
    let served = serve(None);
    let run = call(
        &served.url,
        &[
            "--protocol-version",
            "auto",
            "--method",
            "tools/call",
            "--tool",
            "test_simple_text",
        ],
    );
    assert_code(&run, 0);
    assert_eq!(
        run.json(),
        json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}],
               "resultType": "complete",
               "_meta": {"io.modelcontextprotocol/serverInfo":
                   {"name": "mcp-conformance-test-server", "version": "1.0.0"}}})
    );
    let seen = served.seen();
    let methods: Vec<Option<&str>> = seen.iter().map(|s| s.method.as_deref()).collect();
    assert_eq!(
        methods,
        [
            Some("server/discover"),
            Some("tools/list"),
            Some("tools/call")
        ],
        "no handshake, no DELETE; the tools are listed for their schemas: {seen:?}"
    );
    for request in &seen {
        assert_eq!(request.header("mcp-session-id"), None, "{request:?}");
        assert_eq!(request.header("mcp-protocol-version"), Some("2026-07-28"));
    }
    assert_eq!(seen[2].header("mcp-method"), Some("tools/call"));
    assert_eq!(seen[2].header("mcp-name"), Some("test_simple_text"));
}

#[test]
fn x_mcp_header_arguments_travel_as_mcp_param_headers_our_server_checks() {
    let served = serve(None);
    let arguments = json!({"region": "Hello, 世界", "priority": 42, "query": "SELECT 1"});
    let run = call(
        &served.url,
        &[
            "--protocol-version",
            "2026-07-28",
            "--method",
            "tools/call",
            "--tool",
            "test_x_mcp_header",
            "--args",
            &arguments.to_string(),
        ],
    );
    assert_code(&run, 0);
    let text = run.json()["content"][0]["text"].clone();
    assert!(
        text.as_str().is_some_and(|t| t.contains("Hello, 世界")),
        "the server accepted the headers and ran the tool: {text}"
    );
    let seen = served.seen();
    let call = seen
        .iter()
        .find(|s| s.method.as_deref() == Some("tools/call"))
        .expect("a tools/call");
    // Non-ASCII travels Base64-encoded; an integer as its digits; absent and unannotated
    // arguments get no header.
    assert_eq!(
        call.header("mcp-param-region"),
        Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
    );
    assert_eq!(call.header("mcp-param-priority"), Some("42"));
    let params: Vec<&str> = call
        .headers
        .keys()
        .map(|k| k.as_str())
        .filter(|k| k.starts_with("mcp-param-"))
        .collect();
    assert_eq!(params.len(), 2, "{params:?}");
}

#[test]
fn headers_reach_every_request_and_the_session_is_deleted_on_exit() {
    let served = serve(None);
    let run = call(
        &served.url,
        &[
            "--header",
            "X-Test: one",
            "--header",
            "X-Other:two",
            "--method",
            "ping",
        ],
    );
    assert_code(&run, 0);
    assert_eq!(run.json(), json!({}));
    let seen = served.seen();
    let verbs: Vec<(&str, Option<&str>)> = seen
        .iter()
        .map(|s| (s.verb.as_str(), s.method.as_deref()))
        .collect();
    assert!(
        verbs.contains(&("POST", Some("initialize"))) && verbs.contains(&("POST", Some("ping"))),
        "{verbs:?}"
    );
    for request in &seen {
        assert_eq!(request.header("x-test"), Some("one"), "{request:?}");
        assert_eq!(request.header("x-other"), Some("two"), "{request:?}");
    }
    let last = seen.last().unwrap();
    assert_eq!(
        last.verb, "DELETE",
        "the session is ended on exit: {verbs:?}"
    );
    let session = seen
        .iter()
        .find(|s| s.method.as_deref() == Some("ping"))
        .and_then(|s| s.header("mcp-session-id"));
    assert!(session.is_some());
    assert_eq!(last.header("mcp-session-id"), session);
}

#[test]
fn a_session_the_server_ended_is_replaced_by_a_new_one() {
    let served = serve(Some("tools/call"));
    let run = call(
        &served.url,
        &["--method", "tools/call", "--tool", "test_simple_text"],
    );
    assert_code(&run, 0);
    assert_eq!(
        run.json(),
        json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}]})
    );
    let seen = served.seen();
    let inits: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.method.as_deref() == Some("initialize"))
        .collect();
    assert_eq!(inits.len(), 2, "a second handshake: {seen:?}");
    assert_eq!(inits[1].header("mcp-session-id"), None);
    let calls: Vec<Option<&str>> = seen
        .iter()
        .filter(|s| s.method.as_deref() == Some("tools/call"))
        .map(|s| s.header("mcp-session-id"))
        .collect();
    assert_eq!(calls.len(), 2, "the call was sent again: {seen:?}");
    assert_ne!(calls[0], calls[1], "on the new session");
}

#[test]
fn flags_for_the_other_kind_of_target_are_usage_errors() {
    let url = "http://127.0.0.1:9/mcp";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["call", url, "--method", "ping", "--env", "A=1"],
            "--env is for servers started as a command",
        ),
        (
            vec!["call", url, "--method", "ping", "--cwd", "/tmp"],
            "--cwd is for servers started as a command",
        ),
        (
            vec!["call", "--method", "ping", "--header", "A: 1", "--", "true"],
            "--header is for servers reached by URL",
        ),
        (
            vec!["call", url, "--method", "ping", "--", "true"],
            "give either a URL or a command",
        ),
        (
            vec!["call", "--method", "ping", "--", url],
            "a URL goes before the flags",
        ),
        (
            vec!["call", url, "--method", "ping", "--header", "no colon"],
            "expected NAME: VALUE",
        ),
        (
            vec!["call", "ftp://example/mcp", "--method", "ping"],
            "not an http:// or https:// URL",
        ),
        (vec!["call", "--method", "ping"], "give the server: a URL"),
    ];
    for (args, message) in cases {
        let run = junction(&args);
        assert_code(&run, 3);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn an_unreachable_server_exits_3_with_the_reason() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let run = call(&url, &["--method", "ping"]);
    assert_code(&run, 3);
    assert_eq!(run.stdout, "");
    assert_said_once(&run, &format!("could not connect to {url}: "));
    assert!(
        run.stderr.to_lowercase().contains("connection refused"),
        "{}",
        run.stderr
    );
    // Asking for 2026-07-28 (no fallback to try) says the same.
    let exact = call(
        &url,
        &["--method", "tools/list", "--protocol-version", "2026-07-28"],
    );
    assert_code(&exact, 3);
    assert_said_once(&exact, &format!("could not connect to {url}: "));
}

/// The run printed one line, saying `expected`, with the URL in it once (no "X: X" chain,
/// no JSON-RPC error code for what no server answered).
fn assert_said_once(run: &Run, expected: &str) {
    let text = run.stderr.trim_end();
    assert_eq!(text.lines().count(), 1, "one line:\n{}", run.stderr);
    assert!(text.contains(expected), "{expected:?} in:\n{}", run.stderr);
    assert!(!text.contains("code -32603"), "{}", run.stderr);
    let url = text
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .map(|w| w.trim_end_matches(':'))
        .expect("the URL is named");
    assert_eq!(text.matches(url).count(), 1, "the URL once: {}", run.stderr);
}

/// A plain HTTP server that answers every request with `status`, `content_type` and
/// `body`, the way a misconfigured proxy or a wrong URL does; its URL.
fn answering(status: &'static str, content_type: &'static str, body: &'static str) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
            }
            let _ = reader.by_ref().take(length).read_to_end(&mut Vec::new());
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = reader.get_mut().write_all(answer.as_bytes());
        }
    });
    url
}

#[test]
fn an_http_error_status_is_a_transport_error_naming_the_url_and_status() {
    let html = answering(
        "404 Not Found",
        "text/html",
        "<html><body><h1>Not Found</h1></body></html>",
    );
    let run = call(&html, &["--method", "tools/list"]);
    assert_code(&run, 3);
    assert_said_once(
        &run,
        &format!("{html} answered HTTP 404 Not Found (an HTML page)"),
    );
    // In auto mode too: the probe's 404 falls back to the handshake, which says the same.
    let auto = junction(&["call", &html, "--method", "tools/list"]);
    assert_code(&auto, 3);
    assert_said_once(
        &auto,
        &format!("{html} answered HTTP 404 Not Found (an HTML page)"),
    );

    let failing = answering(
        "500 Internal Server Error",
        "text/plain",
        "database\x1b[2J down\n",
    );
    let run = call(&failing, &["--method", "ping"]);
    assert_code(&run, 3);
    assert_said_once(
        &run,
        &format!("{failing} answered HTTP 500 Internal Server Error: database\\u{{1b}}[2J down"),
    );

    let refusing = answering("401 Unauthorized", "application/json", "{}");
    let run = call(&refusing, &["--method", "ping", "--bearer", "expired"]);
    assert_code(&run, 3);
    assert_said_once(
        &run,
        &format!("{refusing} answered HTTP 401 Unauthorized: {{}}"),
    );
}

#[test]
fn a_stdio_server_writing_junk_to_stdout_is_reported_at_once_with_the_line() {
    // The server would answer nothing for an hour: only the line can end the call early. A
    // line that starts like JSON but is not (a log line in braces) counts as junk too.
    for (printed, reported) in [
        (
            "Server listening on port 8080\\033[0m",
            "`Server listening on port 8080\\u{1b}[0m`",
        ),
        ("{pid: 42} ready", "`{pid: 42} ready`"),
    ] {
        let script = format!("printf '{printed}\\n'; exec sleep 3600");
        let run = junction(&[
            "call",
            "--method",
            "tools/list",
            "--timeout",
            "3600",
            "--",
            "sh",
            "-c",
            &script,
        ]);
        assert_code(&run, 3);
        assert!(
            run.stderr.contains(&format!(
                "the server wrote to stdout a line that is not JSON-RPC: {reported}"
            )),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("timed out"), "{}", run.stderr);
    }
}

/// server-everything on a free port with `transport`; killed when dropped.
struct Everything(Child, u16);

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn everything(transport: &str) -> Everything {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(peer("JUNCTION_NODE"))
        .arg(peer("JUNCTION_SERVER_EVERYTHING"))
        .arg(transport)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("server-everything starts");
    let server = Everything(child, port);
    // Wait until it listens (how long it takes is not asserted).
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

fn check_everything(url: &str) {
    let echo = call(
        url,
        &[
            "--method",
            "tools/call",
            "--tool",
            "echo",
            "--arg",
            "message=hi",
        ],
    );
    assert_code(&echo, 0);
    assert_eq!(
        echo.json(),
        json!({"content": [{"type": "text", "text": "Echo: hi"}]})
    );
    let sum = call(
        url,
        &[
            "--method",
            "tools/call",
            "--tool",
            "get-sum",
            "--arg",
            "a=2",
            "--arg",
            "b=3",
        ],
    );
    assert_code(&sum, 0);
    assert_eq!(
        sum.json(),
        json!({"content": [{"type": "text", "text": "The sum of 2 and 3 is 5."}]})
    );
    let missing = call(
        url,
        &["--method", "prompts/get", "--prompt", "no-such-prompt"],
    );
    assert_code(&missing, 1);
    assert!(missing.json()["code"].is_i64(), "{}", missing.stdout);
}

#[test]
fn call_reaches_server_everything_over_streamable_http() {
    let server = everything("streamableHttp");
    check_everything(&format!("http://127.0.0.1:{}/mcp", server.1));
}

#[test]
fn call_reaches_server_everything_over_legacy_http_sse() {
    let server = everything("sse");
    check_everything(&format!("http://127.0.0.1:{}/sse", server.1));
}
