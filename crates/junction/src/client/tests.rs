//! The client against a server scripted by hand over the in-memory transport, asserting the
//! exact messages it sends.

use serde_json::{json, Value};

use super::*;
use crate::session::ProgressUpdate;
use crate::transport::memory::{self, RawPeer};

pub(super) async fn answer(raw: &RawPeer, id: &Value, result: Value) {
    let frame = json!({"jsonrpc": "2.0", "id": id, "result": result});
    raw.send(serde_json::to_vec(&frame).unwrap()).await;
}

pub(super) async fn send(raw: &RawPeer, frame: Value) {
    raw.send(serde_json::to_vec(&frame).unwrap()).await;
}

/// Connects with `options`, asserts that `initialize` declared exactly `declared`, and
/// answers with revision `version` and the server capabilities `caps`.
pub(super) async fn connect_with(
    options: ClientOptions,
    declared: Value,
    version: &str,
    caps: Value,
) -> (Client, RawPeer) {
    let (conn, mut raw) = memory::raw();
    let name = options.info.name.clone();
    let connect = tokio::spawn(Client::connect(conn, options));
    let init = raw.recv().await.unwrap();
    assert_eq!(init["method"], "initialize");
    assert_eq!(
        init["params"],
        json!({"protocolVersion": "2025-11-25", "capabilities": declared, "clientInfo": {"name": name, "version": "0.1.0"}})
    );
    let result = json!({"protocolVersion": version, "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}, "instructions": "Be kind."});
    answer(&raw, &init["id"], result).await;
    let client = connect.await.unwrap().unwrap();
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
    );
    (client, raw)
}

/// Connects with no client capabilities and `caps` as the server's.
async fn connected(caps: Value) -> (Client, RawPeer) {
    connect_with(
        ClientOptions::new("test-client", "0.1.0"),
        json!({}),
        "2025-11-25",
        caps,
    )
    .await
}

#[tokio::test]
async fn handshake_records_what_the_server_said() {
    let (client, _raw) = connected(json!({"tools": {}})).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().name, "s");
    assert_eq!(client.instructions().as_deref(), Some("Be kind."));
}

#[tokio::test]
async fn an_unsupported_version_disconnects_with_a_clear_error() {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, ClientOptions::new("c", "1")));
    let init = raw.recv().await.unwrap();
    answer(&raw, &init["id"], json!({"protocolVersion": "2099-01-01", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})).await;
    let err = connect.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("2099-01-01"), "{err}");
    assert!(
        raw.sent.recv().await.is_none(),
        "nothing (no initialized) may follow"
    );
}

#[tokio::test]
async fn an_older_revision_is_accepted() {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, ClientOptions::new("c", "1")));
    let init = raw.recv().await.unwrap();
    answer(&raw, &init["id"], json!({"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})).await;
    assert_eq!(
        connect.await.unwrap().unwrap().protocol_version(),
        ProtocolVersion::V2024_11_05
    );
}

#[tokio::test]
async fn undeclared_features_fail_locally_without_sending() {
    let (client, mut raw) = connected(json!({"tools": {}})).await;
    for err in [
        client.list_resources().await.unwrap_err(),
        client.list_prompts().await.unwrap_err(),
        client.set_level(LoggingLevel::Debug).await.unwrap_err(),
        client.subscribe("x://y").await.unwrap_err(),
    ] {
        assert!(matches!(err, RequestError::NotSupported { .. }), "{err:?}");
    }
    assert!(
        raw.sent.try_recv().is_err(),
        "a request was sent for an undeclared capability"
    );
}

#[tokio::test]
async fn lists_follow_cursors_and_calls_return_results() {
    let (client, mut raw) = connected(json!({"tools": {"listChanged": true}})).await;
    let server = tokio::spawn(async move {
        let first = raw.recv().await.unwrap();
        assert_eq!(first["params"], json!({}));
        answer(&raw, &first["id"], json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "p2"})).await;
        let second = raw.recv().await.unwrap();
        assert_eq!(second["params"], json!({"cursor": "p2"}));
        answer(
            &raw,
            &second["id"],
            json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}),
        )
        .await;
        let call = raw.recv().await.unwrap();
        assert_eq!(call["params"], json!({"name": "a", "arguments": {"q": 1}}));
        answer(
            &raw,
            &call["id"],
            json!({"content": [{"type": "text", "text": "nope"}], "isError": true}),
        )
        .await;
        raw
    });
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let result = client
        .call_tool(
            CallToolParams::new("a").argument("q", 1),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(result.failed());
    server.await.unwrap();
}

/// The attack: an endless `tools/list` (a fresh cursor on every page) used to be gathered
/// until memory ran out (4.7 GB seen).
#[tokio::test]
async fn an_endless_listing_stops_at_the_byte_cap_with_a_clear_error() {
    let (client, mut raw) = connected(json!({"tools": {}})).await;
    let description = "d".repeat(10_000);
    tokio::spawn(async move {
        let mut page = 0;
        while let Some(req) = raw.recv().await {
            page += 1;
            let tools: Vec<Value> = (0..100)
                .map(|i| json!({"name": format!("t{page}-{i}"), "description": description, "inputSchema": {"type": "object"}}))
                .collect();
            answer(
                &raw,
                &req["id"],
                json!({"tools": tools, "nextCursor": format!("c{page}")}),
            )
            .await;
        }
    });
    let err = client.list_tools().await.unwrap_err().to_string();
    assert!(err.contains("more than 64 MiB of items"), "{err}");
}

#[tokio::test]
async fn an_endless_listing_stops_at_the_item_cap() {
    let (client, mut raw) = connected(json!({"prompts": {}})).await;
    tokio::spawn(async move {
        let mut page = 0;
        while let Some(req) = raw.recv().await {
            page += 1;
            let prompts: Vec<Value> = (0..1000)
                .map(|i| json!({"name": format!("p{i}")}))
                .collect();
            answer(
                &raw,
                &req["id"],
                json!({"prompts": prompts, "nextCursor": format!("c{page}")}),
            )
            .await;
        }
    });
    let err = client.list_prompts().await.unwrap_err().to_string();
    assert!(
        err.contains(&format!("more than {MAX_LIST_ITEMS} items")),
        "{err}"
    );
}

/// A listing served in pages of 3 tools of about 100 bytes each, for ever.
fn endless_tools(mut raw: RawPeer) {
    tokio::spawn(async move {
        let mut page = 0;
        while let Some(req) = raw.recv().await {
            page += 1;
            let tools: Vec<Value> = (0..3)
                .map(|i| json!({"name": format!("t{page}-{i}"), "description": "d".repeat(50), "inputSchema": {"type": "object"}}))
                .collect();
            answer(
                &raw,
                &req["id"],
                json!({"tools": tools, "nextCursor": format!("c{page}")}),
            )
            .await;
        }
    });
}

#[tokio::test]
async fn the_list_caps_are_the_options() {
    let options = ClientOptions::new("test-client", "0.1.0").max_list_items(7);
    let (client, raw) = connect_with(options, json!({}), "2025-11-25", json!({"tools": {}})).await;
    endless_tools(raw);
    let err = client.list_tools().await.unwrap_err().to_string();
    assert!(
        err.contains("more than 7 items (stopped after 3 pages)"),
        "{err}"
    );

    let options = ClientOptions::new("test-client", "0.1.0").max_list_bytes(1024);
    let (client, raw) = connect_with(options, json!({}), "2025-11-25", json!({"tools": {}})).await;
    endless_tools(raw);
    let err = client.list_tools().await.unwrap_err().to_string();
    assert!(err.contains("more than 1 KiB of items"), "{err}");
}

#[tokio::test]
async fn a_repeated_cursor_is_an_error_not_a_loop() {
    let (client, mut raw) = connected(json!({"prompts": {}})).await;
    tokio::spawn(async move {
        while let Some(req) = raw.recv().await {
            answer(
                &raw,
                &req["id"],
                json!({"prompts": [], "nextCursor": "same"}),
            )
            .await;
        }
    });
    let err = client.list_prompts().await.unwrap_err();
    assert!(err.to_string().contains("same cursor"), "{err}");
}

#[tokio::test]
async fn server_pings_are_answered_and_notifications_are_streamed() {
    let (client, mut raw) = connected(json!({})).await;
    let mut notifications = client.take_notifications().unwrap();
    raw.send(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": "s1", "result": {}})
    );
    raw.send(r#"{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32601);
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    assert!(matches!(
        notifications.recv().await.unwrap(),
        ServerNotification::ToolListChanged(_)
    ));
    assert!(client.take_notifications().is_none());
}

#[tokio::test]
async fn notifications_arrive_typed_and_unknown_or_malformed_ones_are_kept() {
    let (client, raw) = connected(json!({"logging": {}})).await;
    let mut notifications = client.take_notifications().unwrap();
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "db", "data": {"n": 1}}})).await;
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a.txt"}})).await;
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "e-1"}})).await;
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/io.example/custom", "params": {"x": [1, 2]}})).await;
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"url": "oops"}})).await;
    // Progress for a token no request of ours owns is passed on, typed.
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "nobody", "progress": 1}})).await;

    match notifications.recv().await.unwrap() {
        ServerNotification::LoggingMessage(m) => {
            assert_eq!(m.level, LoggingLevel::Warning);
            assert_eq!(m.logger.as_deref(), Some("db"));
            assert_eq!(m.data, json!({"n": 1}));
        }
        other => panic!("expected a log message, got {other:?}"),
    }
    match notifications.recv().await.unwrap() {
        ServerNotification::ResourceUpdated(u) => assert_eq!(u.uri, "file:///a.txt"),
        other => panic!("expected resources/updated, got {other:?}"),
    }
    match notifications.recv().await.unwrap() {
        ServerNotification::ElicitationComplete(c) => assert_eq!(c.elicitation_id, "e-1"),
        other => panic!("expected elicitation/complete, got {other:?}"),
    }
    assert_eq!(
        notifications.recv().await.unwrap(),
        ServerNotification::Other {
            method: "notifications/io.example/custom".into(),
            params: Some(json!({"x": [1, 2]}))
        }
    );
    assert_eq!(
        notifications.recv().await.unwrap(),
        ServerNotification::Other {
            method: "notifications/resources/updated".into(),
            params: Some(json!({"url": "oops"}))
        }
    );
    match notifications.recv().await.unwrap() {
        ServerNotification::Progress(p) => assert_eq!(p.progress, 1.0),
        other => panic!("expected progress, got {other:?}"),
    }
}

const WEATHER_SCHEMA: &str = r#"{"type": "object", "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}}, "required": ["temperature", "conditions"]}"#;

/// Lists one tool `weather` with an output schema and one `plain` without; then answers each
/// `tools/call` with the next of `results`.
async fn tool_server(mut raw: RawPeer, results: Vec<Value>) {
    let list = raw.recv().await.unwrap();
    assert_eq!(list["method"], "tools/list");
    let schema: Value = serde_json::from_str(WEATHER_SCHEMA).unwrap();
    answer(
        &raw,
        &list["id"],
        json!({"tools": [
            {"name": "weather", "inputSchema": {"type": "object"}, "outputSchema": schema},
            {"name": "plain", "inputSchema": {"type": "object"}},
        ]}),
    )
    .await;
    for result in results {
        let call = raw.recv().await.unwrap();
        assert_eq!(call["method"], "tools/call");
        answer(&raw, &call["id"], result).await;
    }
}

fn call(name: &str) -> CallToolParams {
    CallToolParams::new(name)
}

#[tokio::test]
async fn structured_content_is_checked_against_the_listed_output_schema() {
    let (client, raw) = connected(json!({"tools": {}})).await;
    let good = json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"temperature": 21.5, "conditions": "Sunny"}});
    let server = tokio::spawn(tool_server(
        raw,
        vec![
            good.clone(),
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"temperature": "hot", "conditions": "Sunny"}}),
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"temperature": 3}}),
            json!({"content": [{"type": "text", "text": "no structure"}]}),
            json!({"content": [{"type": "text", "text": "it broke"}], "isError": true}),
            json!({"content": [{"type": "text", "text": "anything"}], "structuredContent": 5}),
        ],
    ));
    client.list_tools().await.unwrap();

    let ok = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(
        ok.structured_content,
        Some(good["structuredContent"].clone())
    );

    let wrong_type = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap_err();
    let RequestError::Invalid { method, reason } = &wrong_type else {
        panic!("expected Invalid, got {wrong_type:?}")
    };
    assert_eq!(method, "tools/call");
    assert!(
        reason
            .starts_with("the structuredContent of tool `weather` does not match its outputSchema")
            && reason.contains("`temperature`"),
        "{reason}"
    );

    let missing_field = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        missing_field.to_string().contains("`conditions`"),
        "{missing_field}"
    );

    let absent = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        absent.to_string().contains(
            "tool `weather` declares an outputSchema but its result has no structuredContent"
        ),
        "{absent}"
    );

    // Error results are not checked.
    let failed = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap();
    assert!(failed.failed());

    // A tool without an output schema is not checked.
    let plain = client
        .call_tool(call("plain"), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(plain.structured_content, Some(json!(5)));
    server.await.unwrap();
}

#[tokio::test]
async fn tools_never_listed_are_not_checked() {
    let (client, mut raw) = connected(json!({"tools": {}})).await;
    let server = tokio::spawn(async move {
        let call = raw.recv().await.unwrap();
        answer(
            &raw,
            &call["id"],
            json!({"content": [], "structuredContent": {"temperature": "hot"}}),
        )
        .await;
    });
    let result = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"temperature": "hot"}))
    );
    server.await.unwrap();
}

#[tokio::test]
async fn revisions_before_structured_output_are_not_checked() {
    let (client, raw) = connect_with(
        ClientOptions::new("test-client", "0.1.0"),
        json!({}),
        "2025-03-26",
        json!({"tools": {}}),
    )
    .await;
    let server = tokio::spawn(tool_server(
        raw,
        vec![json!({"content": [{"type": "text", "text": "21.5 and sunny"}]})],
    ));
    client.list_tools().await.unwrap();
    let result = client
        .call_tool(call("weather"), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(result.structured_content, None);
    server.await.unwrap();
}

#[tokio::test]
async fn an_unusable_output_schema_is_reported_when_the_tool_is_called() {
    let (client, mut raw) = connected(json!({"tools": {}})).await;
    let server = tokio::spawn(async move {
        let list = raw.recv().await.unwrap();
        answer(&raw, &list["id"], json!({"tools": [{"name": "odd", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}]})).await;
        let call = raw.recv().await.unwrap();
        answer(
            &raw,
            &call["id"],
            json!({"content": [], "structuredContent": {}}),
        )
        .await;
    });
    client.list_tools().await.unwrap();
    let err = client
        .call_tool(call("odd"), RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the outputSchema of tool `odd` cannot be used"),
        "{err}"
    );
    server.await.unwrap();
}

#[tokio::test]
async fn cancelling_a_call_returns_cancelled_and_tells_the_server() {
    let (client, mut raw) = connected(json!({"tools": {}})).await;
    let token = tokio_util::sync::CancellationToken::new();
    let options = RequestOptions::default().cancel_on(token.clone());
    let client = std::sync::Arc::new(client);
    let calling = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool(call("slow"), options).await })
    };
    let request = raw.recv().await.unwrap();
    assert_eq!(request["method"], "tools/call");
    token.cancel();
    let err = calling.await.unwrap().unwrap_err();
    assert!(
        matches!(&err, RequestError::Cancelled { method } if method == "tools/call"),
        "{err:?}"
    );
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request["id"], "reason": "cancelled by the requester"}})
    );
    // A late answer is dropped and the session goes on.
    answer(&raw, &request["id"], json!({"content": []})).await;
    let ping = tokio::spawn(async move { client.ping().await });
    let next = raw.recv().await.unwrap();
    assert_eq!(next["method"], "ping");
    answer(&raw, &next["id"], json!({})).await;
    ping.await.unwrap().unwrap();
}

#[tokio::test]
async fn progress_updates_reach_the_callers_sink() {
    let (client, mut raw) = connected(json!({"tools": {}})).await;
    let mut notifications = client.take_notifications().unwrap();
    let (tx, mut updates) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default().on_progress(move |u| {
        let _ = tx.send(u);
    });
    let server = tokio::spawn(async move {
        let request = raw.recv().await.unwrap();
        let token = request["params"]["_meta"]["progressToken"].clone();
        assert!(!token.is_null(), "no progress token in {request}");
        assert_eq!(request["params"]["name"], "slow");
        for (progress, message) in [(1, "one"), (2, "two")] {
            send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": progress, "total": 2, "message": message}})).await;
        }
        answer(
            &raw,
            &request["id"],
            json!({"content": [{"type": "text", "text": "done"}]}),
        )
        .await;
    });
    let result = client.call_tool(call("slow"), options).await.unwrap();
    assert!(!result.failed());
    server.await.unwrap();
    let got: Vec<ProgressUpdate> =
        [updates.recv().await.unwrap(), updates.recv().await.unwrap()].into();
    assert_eq!(
        got,
        [
            ProgressUpdate {
                progress: 1.0,
                total: Some(2.0),
                message: Some("one".into())
            },
            ProgressUpdate {
                progress: 2.0,
                total: Some(2.0),
                message: Some("two".into())
            },
        ]
    );
    assert!(
        notifications.try_recv().is_err(),
        "routed progress must not reach the notification stream"
    );
}
