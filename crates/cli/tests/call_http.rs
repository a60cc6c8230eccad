//! `junction call URL` over HTTP: against Junction's conformance server served in-process
//! (exact JSON, exit codes, headers on every request, `DELETE` on exit, a new session after
//! the server ended the old one) and against `@modelcontextprotocol/server-everything` over
//! Streamable HTTP and the legacy HTTP+SSE transport (from scripts/test's `JUNCTION_*`).

mod common;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use common::{junction, peer, Run};
use junction::transport::http::server::HttpServer;
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
        [Some("server/discover"), Some("tools/call")],
        "no handshake, no DELETE: {seen:?}"
    );
    for request in &seen {
        assert_eq!(request.header("mcp-session-id"), None, "{request:?}");
        assert_eq!(request.header("mcp-protocol-version"), Some("2026-07-28"));
    }
    assert_eq!(seen[1].header("mcp-method"), Some("tools/call"));
    assert_eq!(seen[1].header("mcp-name"), Some("test_simple_text"));
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
    assert!(
        run.stderr.contains(&url)
            && run.stderr.contains("HTTP transport error")
            && run.stderr.to_lowercase().contains("connection refused"),
        "{}",
        run.stderr
    );
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
