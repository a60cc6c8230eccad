//! The child-process transport against real processes.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use junction::session::{BoxFuture, IncomingRequest, Peer, Service, Session, SessionOptions};
use junction::transport::child::{spawn, CommandSpec, ShutdownTimeouts, StderrLimits};
use junction_protocol::{jsonrpc, ErrorObject, Notification};
use serde_json::value::RawValue;

/// Answers every request with its own params, so a request looped back through `cat`
/// is answered by the same session that sent it.
struct Mirror;

impl Service for Mirror {
    fn request<'a>(
        &'a self,
        req: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        Box::pin(async move { Ok(req.params.unwrap_or_else(jsonrpc::empty_object)) })
    }
    fn notification<'a>(&'a self, _: Notification, _: &'a Peer) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

fn short() -> ShutdownTimeouts {
    ShutdownTimeouts {
        after_close: Duration::from_millis(300),
        after_term: Duration::from_millis(300),
    }
}

#[tokio::test]
async fn messages_cross_a_real_pipe_and_closing_stdin_ends_the_child() {
    let (conn, mut child) = spawn(&CommandSpec::new("cat"), Default::default()).unwrap();
    let peer = Session::start(conn, Mirror, SessionOptions::default());
    let params = jsonrpc::to_raw(&serde_json::json!({"text": "line\nbreak", "n": 3})).unwrap();
    let result = peer
        .request_raw("echo", Some(params), Default::default())
        .await
        .unwrap();
    let result: serde_json::Value = serde_json::from_str(result.get()).unwrap();
    assert_eq!(result, serde_json::json!({"text": "line\nbreak", "n": 3}));
    let status = child.shutdown(short()).await.unwrap();
    assert!(
        status.success(),
        "cat should exit by itself once stdin closes: {status:?}"
    );
}

#[tokio::test]
async fn a_shutdown_right_after_a_message_still_delivers_it() {
    // `cat > file` keeps what reaches it; on this single-threaded runtime the writer task
    // has not run yet when the shutdown asks it to close stdin, so a goodbye that cut the
    // queue short would lose the messages (as `notifications/cancelled` was lost when
    // `junction run` stopped on SIGINT).
    let log = std::env::temp_dir().join(format!("junction-goodbye-{}.jsonl", std::process::id()));
    let spec = CommandSpec::new("sh").args(["-c", &format!("cat > '{}'", log.display())]);
    for round in 0..20 {
        let (conn, mut child) = spawn(&spec, Default::default()).unwrap();
        for id in 0..3 {
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
            );
            let message = junction_protocol::Message::decode(line.as_bytes()).unwrap();
            conn.outgoing
                .send(junction::transport::Outbound {
                    message,
                    related: None,
                })
                .unwrap();
        }
        let status = child.shutdown(short()).await.unwrap();
        assert!(status.success(), "round {round}: {status:?}");
        let got = std::fs::read_to_string(&log).unwrap();
        assert_eq!(got.lines().count(), 3, "round {round}: {got:?}");
    }
    let _ = std::fs::remove_file(&log);
}

#[tokio::test]
async fn a_child_that_ignores_stdin_gets_sigterm() {
    let (_conn, mut child) =
        spawn(&CommandSpec::new("sleep").args(["30"]), Default::default()).unwrap();
    let status = child.shutdown(short()).await.unwrap();
    assert_eq!(status.signal(), Some(15), "{status:?}");
}

#[tokio::test]
async fn a_child_that_ignores_sigterm_gets_sigkill() {
    let spec = CommandSpec::new("sh").args(["-c", "trap '' TERM; echo ready >&2; sleep 30 & wait"]);
    let (_conn, mut child) = spawn(&spec, Default::default()).unwrap();
    // Let the shell install its trap before the shutdown starts.
    for _ in 0..50 {
        if !child.stderr_tail().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = child.shutdown(short()).await.unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[tokio::test]
async fn stderr_is_kept_and_args_env_cwd_are_passed() {
    let dir = std::env::temp_dir();
    let spec = CommandSpec::new("sh")
        .args([
            "-c",
            "echo \"$GREETING from $(pwd) with $0\" >&2; exit 3",
            "arg0",
        ])
        .env("GREETING", "hello")
        .cwd(&dir);
    let (_conn, mut child) = spawn(&spec, Default::default()).unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(3));
    // stderr is read by its own task; give it a moment to drain.
    let mut tail = Vec::new();
    for _ in 0..50 {
        tail = child.stderr_tail();
        if !tail.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let canonical = dir.canonicalize().unwrap();
    assert_eq!(
        tail,
        vec![format!("hello from {} with arg0", canonical.display())]
    );
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error() {
    let err = spawn(
        &CommandSpec::new("/nonexistent/junction-test-server"),
        Default::default(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/nonexistent/junction-test-server"), "{text}");
}

#[tokio::test]
async fn the_session_ends_when_the_child_exits() {
    let (conn, _child) = spawn(&CommandSpec::new("true"), Default::default()).unwrap();
    let peer = Session::start(conn, Mirror, SessionOptions::default());
    tokio::time::timeout(Duration::from_secs(10), peer.closed())
        .await
        .unwrap();
    let err = peer
        .request_raw("ping", None, Default::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, junction::RequestError::Closed { .. }),
        "{err:?}"
    );
}

/// The attack: one byte of invalid UTF-8 on stderr used to stop the reading, close the pipe
/// and kill the server with SIGPIPE at its next write; a long line was kept whole.
#[tokio::test]
async fn stderr_with_invalid_utf8_and_a_huge_line_neither_kills_the_child_nor_grows() {
    let script = r"printf 'bad \377 byte\n' >&2; sleep 0.2; head -c 100000 /dev/zero | tr '\0' x >&2; echo >&2; echo after >&2; exec cat";
    let (conn, mut child) = spawn(
        &CommandSpec::new("sh").args(["-c", script]),
        Default::default(),
    )
    .unwrap();
    let peer = Session::start(conn, Mirror, SessionOptions::default());
    let seen = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let tail = child.stderr_tail();
            if tail.iter().any(|l| l == "after") {
                return tail;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the child's later stderr lines arrive");
    assert_eq!(seen[0], "bad \u{fffd} byte");
    let long = &seen[1];
    assert!(long.ends_with('…') && long.len() <= junction::transport::child::STDERR_LINE + 3);
    // Still alive: `cat` answers through the same pipes.
    let params = jsonrpc::to_raw(&serde_json::json!({"alive": true})).unwrap();
    let result = peer
        .request_raw("echo", Some(params), Default::default())
        .await
        .unwrap();
    assert_eq!(result.get(), r#"{"alive":true}"#);
    assert!(child.try_status().is_none());
    child.shutdown(short()).await.unwrap();
}

/// The bounds on stderr are the spec's: lines cut at `line_bytes`, `kept_lines` kept.
#[tokio::test]
async fn stderr_lines_are_cut_and_kept_as_the_spec_bounds_them() {
    let script =
        r"for i in 1 2 3 4 5; do echo ${i}xxxxxxxxxxxxxxxxxx >&2; done; echo end >&2; exec cat";
    let limits = StderrLimits {
        line_bytes: 8,
        kept_lines: 3,
    };
    let spec = CommandSpec::new("sh").args(["-c", script]).stderr(limits);
    let (_conn, mut child) = spawn(&spec, Default::default()).unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let tail = child.stderr_tail();
            if tail.iter().any(|l| l == "end") {
                return tail;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the child's stderr arrives");
    assert_eq!(seen, ["4xxxxxxx…", "5xxxxxxx…", "end"]);
    child.shutdown(short()).await.unwrap();
}

/// The attack: an answer over the 4 MiB frame limit used to be dropped, leaving its request
/// to time out 60 s later; it fails at once, saying why.
#[tokio::test]
async fn an_answer_over_the_frame_limit_fails_its_request_at_once() {
    let script = r#"read line; id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); printf '{"jsonrpc":"2.0","id":%s,"result":{"x":"' "$id"; head -c 5000000 /dev/zero | tr '\0' a; printf '"}}\n'; exec cat >/dev/null"#;
    let (conn, mut child) = spawn(
        &CommandSpec::new("sh").args(["-c", script]),
        Default::default(),
    )
    .unwrap();
    let peer = Session::start(conn, Mirror, SessionOptions::default());
    // Shorter than the request timeout: only the early failure can end it in time.
    let answered = tokio::time::timeout(
        Duration::from_secs(45),
        peer.request_raw("tools/list", None, Default::default()),
    )
    .await
    .expect("the request failed before its timeout");
    let error = answered.unwrap_err().to_string();
    assert!(
        error.contains("the answer was larger than 4 MiB"),
        "{error}"
    );
    child.shutdown(short()).await.unwrap();
}
