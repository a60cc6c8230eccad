//! `junction call` with its default negotiation (`auto`) against servers built with the
//! official SDKs: the Python SDK server (`tests-interop/py-server.py`, PyPI `mcp` 2.3.0), which
//! speaks 2026-07-28, is reached on that revision over stdio and Streamable HTTP; the
//! TypeScript SDK server (`tests-interop/ts-server.mjs`, 1.32.2), which has only the handshake
//! revisions, refuses `server/discover` and is reached through the `initialize` fallback.
//! The peers come from `scripts/test`; without them these tests fail and say so.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use junction_test_support::cli::junction;
use junction_test_support::peers::{peer, python_http_server, PY_SERVER};
use junction_test_support::process::Run;
use serde_json::{json, Value};

const TS_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests-interop/ts-server.mjs"
);

/// Both SDK servers have a tool `add` of two integers.
const ADD_2_AND_40: &[&str] = &[
    "--method",
    "tools/call",
    "--tool",
    "add",
    "--arg",
    "a=2",
    "--arg",
    "b=40",
];

/// A server process killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `junction call -v` with `flags`, the server given by `target` (a URL, or a command).
fn call(flags: &[&str], target: &[&str]) -> Run {
    let mut args = vec!["call", "-v"];
    args.extend_from_slice(flags);
    args.extend_from_slice(target);
    junction(&args)
}

/// The call succeeded on `revision` (as `-v` reports it) and printed this result.
fn assert_reached(run: &Run, revision: &str) -> Value {
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!("protocol={revision}")),
        "expected {revision}:\n{}",
        run.stderr
    );
    run.json()
}

/// Adds, gets a prompt and reads a resource of the Python server at `target`.
fn exercise_python_server(target: &[&str]) {
    let add = call(ADD_2_AND_40, target);
    let result = assert_reached(&add, "2026-07-28");
    assert_eq!(result["content"], json!([{"type": "text", "text": "42"}]));
    assert_eq!(result["isError"], json!(false), "{result}");

    let prompt = call(
        &[
            "--method",
            "prompts/get",
            "--prompt",
            "hello",
            "--arg",
            "who=Ada",
        ],
        target,
    );
    let prompt = assert_reached(&prompt, "2026-07-28");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );

    let read = call(
        &["--method", "resources/read", "--uri", "file:///readme.txt"],
        target,
    );
    let read = assert_reached(&read, "2026-07-28");
    assert_eq!(read["contents"][0]["text"], "read me");
}

#[test]
fn auto_reaches_2026_07_28_with_the_python_sdk_server_over_stdio() {
    let python = peer("JUNCTION_PYTHON");
    exercise_python_server(&["--", &python, PY_SERVER]);
}

#[test]
fn auto_reaches_2026_07_28_with_the_python_sdk_server_over_http() {
    let server = python_http_server();
    exercise_python_server(&[&server.url()]);
}

#[test]
fn auto_falls_back_to_the_handshake_with_the_typescript_sdk_server() {
    let mut child = Command::new(peer("JUNCTION_NODE"))
        .arg(TS_SERVER)
        .env("JUNCTION_NODE_MODULES", peer("JUNCTION_NODE_MODULES"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let _server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the server prints its URL");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();

    let echo = call(
        &[
            "--method",
            "tools/call",
            "--tool",
            "echo",
            "--arg",
            "message=from junction",
        ],
        &[&url],
    );
    let result = assert_reached(&echo, "2025-11-25");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "Echo: from junction"}])
    );
    let add = call(ADD_2_AND_40, &[&url]);
    assert_eq!(
        assert_reached(&add, "2025-11-25")["structuredContent"],
        json!({"sum": 42})
    );
    let ping = call(&["--method", "ping"], &[&url]);
    assert_eq!(assert_reached(&ping, "2025-11-25"), json!({}));
}
