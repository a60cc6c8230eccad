//! `junction serve` limits set from the command line: over `--http`, each met by a raw client
//! over a socket (`--max-body` refuses a larger body from its `Content-Length` before reading
//! it, `--body-timeout` refuses a body that stops arriving); over stdio,
//! `--template-match-steps` bounds the work of matching a URI against a template.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use junction_test_support::cli::{self, HttpServe};
use junction_test_support::process;

/// Sends `head` (and `body`) on a new connection; returns the status line of the answer.
fn status_after(server: &HttpServe, head: &str, body: &[u8]) -> String {
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .replace("localhost", "127.0.0.1");
    let mut socket = TcpStream::connect(&address).expect("the server accepts connections");
    socket.write_all(head.as_bytes()).expect("the head is sent");
    socket.write_all(body).expect("the body is sent");
    let mut answer = Vec::new();
    let mut chunk = [0; 1024];
    while !answer.windows(2).any(|w| w == b"\r\n") {
        let n = socket.read(&mut chunk).expect("the server answers");
        assert!(n > 0, "the connection closed without an answer");
        answer.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    text.lines().next().unwrap_or_default().to_owned()
}

/// A POST head declaring a body of `length` bytes.
fn post_head(server: &HttpServe, length: usize) -> String {
    let host = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    )
}

#[test]
fn max_body_refuses_a_larger_body_before_reading_it() {
    let server = HttpServe::start("conformance", &["--max-body", "1024"]);
    // Only the head is sent: the refusal must not wait for the 4 KiB it announces.
    let status = status_after(&server, &post_head(&server, 4096), b"");
    assert!(status.contains(" 413 "), "{status}");
}

#[test]
fn body_timeout_refuses_a_body_that_stops_arriving() {
    let server = HttpServe::start("conformance", &["--body-timeout", "1"]);
    let status = status_after(&server, &post_head(&server, 100), b"{\"jsonrpc\"");
    assert!(status.contains(" 408 "), "{status}");
}

#[test]
fn the_event_store_flags_need_the_in_memory_store() {
    let run = cli::junction(&[
        "serve",
        "conformance",
        "--http",
        "127.0.0.1:0",
        "--redis",
        "redis://127.0.0.1:1",
        "--event-session-bytes",
        "1024",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--event-session-bytes"),
        "{}",
        run.stderr
    );
}

/// Reads `library://books/9780000000011` from `junction serve library FLAGS` over stdio; the
/// answer to the read.
fn read_book(flags: &[&str]) -> serde_json::Value {
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"library://books/9780000000011"}}"#,
    ]
    .map(|line| format!("{line}\n"))
    .concat();
    let run = process::Run::of(
        Command::new(cli::junction_exe())
            .args(["serve", "library"])
            .args(flags),
        Some(&input),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no answer to the read:\n{}\n{}", run.stdout, run.stderr))
}

#[test]
fn template_match_steps_bounds_the_work_of_matching_a_uri() {
    let read = read_book(&[]);
    assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    let refused = read_book(&["--template-match-steps", "5"]);
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
}
