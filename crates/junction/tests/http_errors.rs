//! Every refusal of the Streamable HTTP endpoint: status code and JSON-RPC error body.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::Arc;
use std::time::Duration;

use junction_test_support::http::*;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

async fn server() -> (junction::transport::http::server::RunningServer, Raw) {
    let running = start(
        |h| h.max_body(1024),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let raw = Raw::new(running.url("/mcp"));
    (running, raw)
}

/// Asserts a refusal: the status, and a JSON-RPC error body with a null id whose message
/// contains `words`.
async fn assert_refused(response: reqwest::Response, status: u16, words: &str) -> Value {
    assert_error(response, status, Value::Null, words).await
}

/// Asserts a refusal answered to the request `id`: the status, and a JSON-RPC error body
/// whose message contains `words`.
async fn assert_error(response: reqwest::Response, status: u16, id: Value, words: &str) -> Value {
    assert_eq!(response.status(), status);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = body_json(response).await;
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], id);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(words),
        "{message:?} should mention {words:?}"
    );
    assert!(body["error"]["code"].is_i64());
    body
}

#[tokio::test]
async fn foreign_host_and_origin_are_forbidden_before_anything_else() {
    let (_s, raw) = server().await;
    let evil = raw
        .post(
            &[
                ("host", "evil.example.com"),
                ("origin", "http://evil.example.com"),
            ],
            INIT,
        )
        .await;
    assert_refused(evil, 403, "Host").await;
    let evil_origin = raw
        .post(&[("origin", "http://evil.example.com")], INIT)
        .await;
    assert_refused(evil_origin, 403, "Origin").await;
    // Even a request the endpoint would refuse for other reasons is refused as forbidden.
    let evil_get = raw.get(&[("host", "evil.example.com:80")]).await;
    assert_refused(evil_get, 403, "Host").await;
    let port = raw
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let localhost = format!("localhost:{port}");
    let origin = format!("http://{localhost}");
    let good = raw
        .post(&[("host", &localhost), ("origin", &origin)], INIT)
        .await;
    assert_eq!(good.status(), 200);
    assert!(good.headers().contains_key("mcp-session-id"));
}

#[tokio::test]
async fn accept_content_type_and_size_are_checked() {
    let (_s, raw) = server().await;
    let json_only = raw.post(&[("accept", "application/json")], INIT).await;
    assert_refused(json_only, 406, "Accept").await;
    let text = raw.post(&[("content-type", "text/plain")], INIT).await;
    assert_refused(text, 415, "application/json").await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"p":"{}"}}}}"#,
        "a".repeat(2000)
    );
    assert_refused(raw.post(&[], &big).await, 413, "1024 bytes").await;
    let get_json = raw
        .http
        .get(&raw.url)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_refused(get_json, 406, "text/event-stream").await;
}

#[tokio::test]
async fn malformed_bodies_get_parse_and_invalid_request_errors() {
    let (_s, raw) = server().await;
    let garbage = raw.post(&[], "{not json").await;
    assert_eq!(garbage.status(), 400);
    assert_eq!(body_json(garbage).await["error"]["code"], -32700);
    let batch = raw
        .post(&[], r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await;
    assert_eq!(batch.status(), 400);
    assert_eq!(body_json(batch).await["error"]["code"], -32600);
}

#[tokio::test]
async fn session_ids_are_required_known_and_end_with_delete() {
    let (_s, raw) = server().await;
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    assert_refused(raw.post(&[], ping).await, 400, "MCP-Session-Id").await;
    assert_refused(
        raw.post(&[("mcp-session-id", "nope")], ping).await,
        404,
        "initialize",
    )
    .await;
    let id = raw.session().await;
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    let pong = raw.post(&[("mcp-session-id", &id)], ping).await;
    assert_eq!(pong.status(), 200);
    assert_eq!(body_json(pong).await["result"], serde_json::json!({}));
    let again = raw.post(&[("mcp-session-id", &id)], INIT).await;
    assert_refused(again, 400, "without MCP-Session-Id").await;

    let delete = raw
        .http
        .delete(&raw.url)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 200);
    assert_refused(
        raw.post(&[("mcp-session-id", &id)], ping).await,
        404,
        "ended",
    )
    .await;
    let twice = raw
        .http
        .delete(&raw.url)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_refused(twice, 404, "initialize").await;
    let anonymous = raw.http.delete(&raw.url).send().await.unwrap();
    assert_refused(anonymous, 400, "MCP-Session-Id").await;
    assert_refused(raw.get(&[]).await, 400, "MCP-Session-Id").await;
}

#[tokio::test]
async fn protocol_version_header_must_name_a_served_revision() {
    let (_s, raw) = server().await;
    let id = raw.session().await;
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let bad = raw
        .post(
            &[
                ("mcp-session-id", &id),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            ping,
        )
        .await;
    // The body is read before refusing, so the error answers the request's id.
    let refused = assert_error(bad, 400, json!(5), "1999-01-01").await;
    assert_eq!(
        refused["error"]["data"],
        json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"], "requested": "1999-01-01"})
    );
    // Any served revision passes, not only the negotiated one; absent means 2025-03-26.
    let older = raw
        .post(
            &[
                ("mcp-session-id", &id),
                ("mcp-protocol-version", "2025-03-26"),
            ],
            ping,
        )
        .await;
    assert_eq!(older.status(), 200);
    let bad_get = raw
        .get(&[("mcp-session-id", &id), ("mcp-protocol-version", "x")])
        .await;
    assert_refused(bad_get, 400, "MCP-Protocol-Version").await;
}

#[tokio::test]
async fn notifications_and_responses_are_accepted_with_202_and_no_body() {
    let (_s, raw) = server().await;
    let id = raw.session().await;
    let note = raw
        .post(
            &[("mcp-session-id", &id)],
            r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        )
        .await;
    assert_eq!(note.status(), 202);
    assert!(note.bytes().await.unwrap().is_empty());
    let response = raw
        .post(
            &[("mcp-session-id", &id)],
            r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        )
        .await;
    assert_eq!(response.status(), 202);
}

#[tokio::test]
async fn other_methods_bad_event_ids_and_second_standalone_streams_are_refused() {
    let (_s, raw) = server().await;
    let put = raw.http.put(&raw.url).send().await.unwrap();
    assert_eq!(put.headers()["allow"], "GET, POST, DELETE");
    assert_refused(put, 405, "Method Not Allowed").await;
    let id = raw.session().await;
    let first = raw.get(&[("mcp-session-id", &id)]).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["content-type"], "text/event-stream");
    assert_refused(raw.get(&[("mcp-session-id", &id)]).await, 409, "already").await;
    let foreign = raw
        .get(&[("mcp-session-id", &id), ("last-event-id", "event-7")])
        .await;
    assert_refused(foreign, 400, "event-7").await;
    let future = raw
        .get(&[("mcp-session-id", &id), ("last-event-id", "99-0")])
        .await;
    assert_refused(future, 400, "never had").await;
    drop(first);
}

#[tokio::test]
async fn stateless_mode_refuses_get_and_delete_with_405() {
    let running = start(
        |h| h.sessionless(),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let raw = Raw::new(running.url("/mcp"));
    assert_refused(raw.get(&[]).await, 405, "sessionless").await;
    let delete = raw.http.delete(&raw.url).send().await.unwrap();
    assert_refused(delete, 405, "sessionless").await;
}

#[tokio::test]
async fn idle_sessions_expire_and_then_answer_404() {
    let running = start(
        |h| h.idle_timeout(Duration::from_millis(50)),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let raw = Raw::new(running.url("/mcp"));
    let id = raw.session().await;
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    // Each ping is activity, so wait well past the idle time between pings; how long the
    // reaper takes is not asserted.
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let response = raw.post(&[("mcp-session-id", &id)], ping).await;
        if response.status() == 404 {
            assert_refused(response, 404, "ended").await;
            break;
        }
        assert_eq!(response.status(), 200);
    }
}

#[tokio::test]
async fn legacy_message_endpoint_refusals() {
    let (s, raw) = server().await;
    let message = s.url("/message");
    let no_id = raw
        .http
        .post(&message)
        .header("content-type", "application/json")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_refused(no_id, 400, "sessionId").await;
    let unknown = raw
        .http
        .post(format!("{message}?sessionId=abc"))
        .header("content-type", "application/json")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_refused(unknown, 404, "SSE").await;
    let text = raw
        .http
        .post(format!("{message}?sessionId=abc"))
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_refused(text, 415, "application/json").await;
}

#[tokio::test]
async fn a_failed_initialize_ends_its_session() {
    let (_s, raw) = server().await;
    let bad = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7}}"#;
    let response = raw.post(&[], bad).await;
    assert_eq!(response.status(), 200);
    let id = session_id(&response);
    assert_eq!(body_json(response).await["error"]["code"], -32602);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_refused(
        raw.post(&[("mcp-session-id", &id)], ping).await,
        404,
        "ended",
    )
    .await;
}
