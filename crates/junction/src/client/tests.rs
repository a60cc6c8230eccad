//! The client against a server scripted by hand over the in-memory transport, asserting the
//! exact messages it sends.

use serde_json::{json, Value};

use super::*;
use crate::transport::memory::{self, RawPeer};

async fn answer(raw: &RawPeer, id: &Value, result: Value) {
    let frame = json!({"jsonrpc": "2.0", "id": id, "result": result});
    raw.send(serde_json::to_vec(&frame).unwrap()).await;
}

/// Connects with `caps` as the server's capabilities; returns the client and the raw server.
async fn connected(caps: Value) -> (Client, RawPeer) {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(
        conn,
        ClientOptions::new("test-client", "0.1.0"),
    ));
    let init = raw.recv().await.unwrap();
    assert_eq!(init["method"], "initialize");
    assert_eq!(
        init["params"],
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test-client", "version": "0.1.0"}})
    );
    let result = json!({"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}, "instructions": "Be kind."});
    answer(&raw, &init["id"], result).await;
    let client = connect.await.unwrap().unwrap();
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
    );
    (client, raw)
}

#[tokio::test]
async fn handshake_records_what_the_server_said() {
    let (client, _raw) = connected(json!({"tools": {}})).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().name, "s");
    assert_eq!(client.instructions(), Some("Be kind."));
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
    let n = notifications.recv().await.unwrap();
    assert_eq!(
        n,
        ServerNotification {
            method: "notifications/tools/list_changed".into(),
            params: None
        }
    );
    assert!(client.take_notifications().is_none());
}
