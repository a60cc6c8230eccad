//! Junction's client against Junction's server over real HTTP on 127.0.0.1.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::{Arc, Mutex};

use junction::client::{Client, ClientOptions, ServerNotification};
use junction::protocol::tools::CallToolParams;
use junction::session::Peer;
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::{HttpServer, ResponseMode};
use junction::transport::http::sse::Parser;
use junction_test_support::http::*;
use serde_json::json;
use tokio::sync::Semaphore;

async fn connect(url: String) -> Client {
    let connection = HttpClient::new(url).unwrap().connect();
    Client::connect(connection, ClientOptions::new("http-test-client", "1.0.0"))
        .await
        .unwrap()
}

/// The data of a log message; panics on any other notification.
fn log_data(n: ServerNotification) -> serde_json::Value {
    match n {
        ServerNotification::LoggingMessage(message) => message.data,
        other => panic!("expected a log message, got {other:?}"),
    }
}

/// Calls `steps` with a count of 3: its three log messages have all arrived when its result
/// does.
async fn steps_log_before_their_result(
    client: &Client,
    notifications: &mut tokio::sync::mpsc::UnboundedReceiver<ServerNotification>,
) {
    let params = CallToolParams::new("steps").argument("count", 3);
    let result = client.call_tool(params, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("3 steps"));
    for i in 1..=3 {
        let n = notifications
            .try_recv()
            .expect("each log message arrives before the result");
        assert_eq!(log_data(n), json!(i));
    }
}

async fn echo(client: &Client, text: &str) -> String {
    let params = CallToolParams::new("echo").argument("text", text);
    let result = client.call_tool(params, Default::default()).await.unwrap();
    assert_eq!(result.is_error, None, "{result:?}");
    result.content[0].as_text().unwrap().to_owned()
}

#[tokio::test]
async fn session_round_trip_with_related_messages_standalone_stream_and_delete() {
    let peers: Arc<Mutex<Vec<Peer>>> = Arc::default();
    let server = test_server(Arc::new(Semaphore::new(1)));
    let running = HttpServer::new({
        let peers = peers.clone();
        move |c| peers.lock().unwrap().push(server.serve(c))
    })
    .bind("127.0.0.1:0")
    .await
    .unwrap();
    let client = connect(running.url("/mcp")).await;
    assert_eq!(client.server_info().name, "http-test");
    let mut notifications = client.take_notifications().unwrap();
    let names: Vec<_> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["echo", "steps", "announce"]);
    assert_eq!(echo(&client, "hello").await, "hello");

    // The log messages of a call travel on its stream, before its result.
    steps_log_before_their_result(&client, &mut notifications).await;

    // A message related to no request reaches the client on the standalone GET stream.
    let params = CallToolParams::new("announce");
    client.call_tool(params, Default::default()).await.unwrap();
    let n = notifications.recv().await.unwrap();
    assert_eq!(log_data(n), "standalone");

    // Closing the client deletes the session, which closes the server's connection.
    client.close();
    let peer = peers.lock().unwrap()[0].clone();
    peer.closed().await;
}

#[tokio::test]
async fn always_sse_mode_answers_every_request_on_an_event_stream() {
    let running = start(
        |h| h.response_mode(ResponseMode::AlwaysSse),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let raw = Raw::new(running.url("/mcp"));
    let id = raw.session().await;
    let mut response = raw
        .post(
            &[("mcp-session-id", &id)],
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = read_events(&mut response, &mut Parser::default(), |_| false).await;
    // A priming event (id, retry, empty data) first, then the response, then the end.
    assert_eq!(events.len(), 2);
    assert!(events[0].data.is_empty() && events[0].id.is_some() && events[0].retry.is_some());
    assert_eq!(
        messages(&events),
        [json!({"jsonrpc":"2.0","id":1,"result":{}})]
    );

    let client = connect(running.url("/mcp")).await;
    assert_eq!(echo(&client, "sse").await, "sse");
}

/// A request that runs on without sending anything still gets its stream, and the priming
/// event to resume it with, before its response: the stream opens by itself.
#[tokio::test]
async fn always_sse_mode_opens_a_quiet_slow_request_stream_before_the_response() {
    let gate = Arc::new(Semaphore::new(0));
    let waiting = gate.clone();
    let server = junction::server::Server::builder("slow", "1.0.0")
        .tool(
            junction::server::tool("wait", move |_: Nothing| {
                let gate = waiting.clone();
                async move {
                    let _permit = gate.acquire().await;
                    "done"
                }
            })
            .description("Answers once the test lets it"),
        )
        .build()
        .unwrap();
    let running = start(|h| h.response_mode(ResponseMode::AlwaysSse), server).await;
    let raw = Raw::new(running.url("/mcp"));
    let id = raw.session().await;
    let mut response = raw
        .post(
            &[("mcp-session-id", &id)],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}"#,
        )
        .await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut parser = Parser::default();
    let priming = read_events(&mut response, &mut parser, |e| !e.is_empty()).await;
    assert_eq!(priming.len(), 1);
    assert!(priming[0].data.is_empty() && priming[0].id.is_some());

    gate.add_permits(1);
    let rest = read_events(&mut response, &mut parser, |_| false).await;
    assert_eq!(
        messages(&rest),
        [json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}})]
    );
}

#[tokio::test]
async fn stateless_round_trip() {
    let running = start(
        |h| h.sessionless(),
        test_server(Arc::new(Semaphore::new(0))),
    )
    .await;
    let client = connect(running.url("/mcp")).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 3);
    assert_eq!(echo(&client, "no session").await, "no session");
    // A request without any handshake is served too: each POST is initialized on the fly.
    let raw = Raw::new(running.url("/mcp"));
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"raw"}}}"#;
    let response = raw.post(&[], call).await;
    assert_eq!(response.status(), 200);
    assert!(!response.headers().contains_key("mcp-session-id"));
    let body = body_json(response).await;
    assert_eq!(body["id"], 7);
    assert_eq!(body["result"]["content"][0]["text"], "raw");
}

#[tokio::test]
async fn a_sessionless_call_s_log_messages_travel_on_its_stream_before_its_result() {
    let running = start(
        |h| h.sessionless(),
        test_server(Arc::new(Semaphore::new(1))),
    )
    .await;
    let connection = HttpClient::new(running.url("/mcp")).unwrap().connect();
    let options = ClientOptions::new("http-test-client", "1.0.0")
        .version(junction::protocol::ProtocolVersion::V2025_11_25);
    let client = Client::connect(connection, options).await.unwrap();
    let mut notifications = client.take_notifications().unwrap();
    steps_log_before_their_result(&client, &mut notifications).await;
}

#[tokio::test]
async fn a_sessionless_call_without_a_handshake_streams_its_log_messages_before_its_result() {
    // The tool logs once, waits for the gate, then logs on: opened later, so the handler's
    // second half runs after it waited, as a real tool's does.
    let gate = Arc::new(Semaphore::new(0));
    let running = start(|h| h.sessionless(), test_server(gate.clone())).await;
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        gate.add_permits(1);
    });
    let raw = Raw::new(running.url("/mcp"));
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{"count":3}}}"#;
    let mut response = raw
        .post(&[("mcp-protocol-version", "2025-11-25")], call)
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = read_events(&mut response, &mut Parser::default(), |_| false).await;
    let sent = messages(&events);
    let logged: Vec<_> = sent
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["data"].clone())
        .collect();
    assert_eq!(logged, [json!(1), json!(2), json!(3)], "{sent:?}");
    assert_eq!(
        sent.last().unwrap()["result"]["content"][0]["text"],
        "3 steps"
    );
}

#[tokio::test]
async fn legacy_http_sse_round_trip_through_the_client_fallback() {
    let running = start(|h| h, test_server(Arc::new(Semaphore::new(1)))).await;
    // POST initialize to /sse is answered 405, so the client falls back to GET /sse.
    let client = connect(running.url("/sse")).await;
    assert_eq!(client.server_info().name, "http-test");
    assert_eq!(echo(&client, "old times").await, "old times");
    let mut notifications = client.take_notifications().unwrap();
    let params = CallToolParams::new("steps").argument("count", 2);
    let result = client.call_tool(params, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("2 steps"));
    assert_eq!(log_data(notifications.recv().await.unwrap()), 1);
    assert_eq!(log_data(notifications.recv().await.unwrap()), 2);
}

#[tokio::test]
async fn a_dropped_stream_resumes_without_losing_or_repeating_a_message() {
    let gate = Arc::new(Semaphore::new(0));
    let running = start(|h| h, test_server(gate.clone())).await;
    let raw = Raw::new(running.url("/mcp"));
    let session = raw.session().await;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{"count":4}}}"#;
    let mut response = raw.post(&[("mcp-session-id", &session)], call).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut parser = Parser::default();
    let first = read_events(&mut response, &mut parser, |e| !messages(e).is_empty()).await;
    assert_eq!(messages(&first)[0]["params"]["data"], 1);
    let last_id = first.last().unwrap().id.clone().unwrap();
    // The connection goes away in the middle of the call; the call goes on.
    drop(response);
    gate.add_permits(1);

    let mut resumed = raw
        .get(&[("mcp-session-id", &session), ("last-event-id", &last_id)])
        .await;
    assert_eq!(resumed.status(), 200);
    let rest = read_events(&mut resumed, &mut Parser::default(), |_| false).await;
    let rest = messages(&rest);
    let data: Vec<_> = rest[..rest.len() - 1]
        .iter()
        .map(|m| m["params"]["data"].clone())
        .collect();
    assert_eq!(data, [json!(2), json!(3), json!(4)]);
    assert_eq!(rest.last().unwrap()["id"], 3);
    assert_eq!(
        rest.last().unwrap()["result"]["content"][0]["text"],
        "4 steps"
    );

    // Resuming the finished stream again replays the same events, then ends.
    let again = raw
        .get(&[("mcp-session-id", &session), ("last-event-id", &last_id)])
        .await;
    assert_eq!(
        messages(&read_events(&mut { again }, &mut Parser::default(), |_| false).await).len(),
        4
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sessions_of_a_hundred_calls_each_get_their_own_answers() {
    let running = start(|h| h, test_server(Arc::new(Semaphore::new(0)))).await;
    let url = running.url("/mcp");
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..100 {
        let url = url.clone();
        tasks.spawn(async move {
            let client = connect(url).await;
            for i in 0..100 {
                let text = format!("client {c} call {i}");
                assert_eq!(echo(&client, &text).await, text);
            }
            client.close();
        });
    }
    let mut done = 0;
    while let Some(joined) = tasks.join_next().await {
        joined.unwrap();
        done += 1;
    }
    assert_eq!(done, 100);
}

#[tokio::test]
async fn unrelated_messages_wait_for_the_standalone_stream_and_go_nowhere_else() {
    let running = start(|h| h, test_server(Arc::new(Semaphore::new(0)))).await;
    let raw = Raw::new(running.url("/mcp"));
    let session = raw.session().await;
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"announce","arguments":{}}}"#;
    // The call's own stream carries only its response, so it comes back as plain JSON.
    let response = raw.post(&[("mcp-session-id", &session)], call).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "announced"
    );
    // The message sent while no GET stream was open waited for one.
    let mut standalone = raw.get(&[("mcp-session-id", &session)]).await;
    let events = read_events(&mut standalone, &mut Parser::default(), |e| {
        !messages(e).is_empty()
    })
    .await;
    assert!(
        events[0].data.is_empty() && events[0].id.is_some(),
        "priming event first"
    );
    let received = messages(&events);
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["method"], "notifications/message");
    assert_eq!(received[0]["params"]["data"], "standalone");
}

#[tokio::test]
async fn cancelling_a_request_ends_its_stream_without_a_response() {
    let gate = Arc::new(Semaphore::new(0));
    let running = start(|h| h, test_server(gate.clone())).await;
    let raw = Raw::new(running.url("/mcp"));
    let session = raw.session().await;
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"steps","arguments":{"count":2}}}"#;
    let mut response = raw.post(&[("mcp-session-id", &session)], call).await;
    let mut parser = Parser::default();
    let first = read_events(&mut response, &mut parser, |e| !messages(e).is_empty()).await;
    assert_eq!(messages(&first)[0]["params"]["data"], 1);
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8,"reason":"changed my mind"}}"#;
    assert_eq!(
        raw.post(&[("mcp-session-id", &session)], cancel)
            .await
            .status(),
        202
    );
    let rest = read_events(&mut response, &mut parser, |_| false).await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
    // The session goes on.
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    let pong = raw.post(&[("mcp-session-id", &session)], ping).await;
    assert_eq!(body_json(pong).await["id"], 9);
}

#[tokio::test]
async fn a_stream_the_server_closes_is_resumed_by_the_client() {
    let running = start_polling(|h| h.retry(std::time::Duration::from_millis(20))).await;
    let client = connect(running.url("/mcp")).await;
    let mut notifications = client.take_notifications().unwrap();
    let result = client
        .call_tool(CallToolParams::new("test_reconnection"), Default::default())
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Reconnection test completed successfully")
    );
    let n = notifications
        .try_recv()
        .expect("the log message was replayed before the result");
    assert_eq!(log_data(n), "after the break");
}
