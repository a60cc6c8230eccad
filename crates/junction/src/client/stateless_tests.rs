//! The client speaking 2026-07-28 against a server scripted by hand over the in-memory
//! transport, asserting the exact messages it sends.

use std::collections::BTreeMap;

use junction_protocol::elicitation::{ElicitParams, ElicitResult, ElicitValue};
use junction_protocol::roots::Root;
use junction_protocol::sampling::CreateMessageResult;
use serde_json::{json, Value};

use super::tests::{answer, send};
use super::*;
use crate::transport::memory::{self, RawPeer};

/// The `_meta` every request of a client with no handlers carries.
fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}
    })
}

fn options() -> ClientOptions {
    ClientOptions::new("c", "1").version(ProtocolVersion::V2026_07_28)
}

/// Connects with `options`, asserts the exact `server/discover` request (its `_meta` is
/// `expected`) and answers with the server capabilities `caps`.
async fn connect_stateless(
    options: ClientOptions,
    expected: Value,
    caps: Value,
) -> (Client, RawPeer) {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, options));
    let discover = raw.recv().await.unwrap();
    assert_eq!(
        discover,
        json!({"jsonrpc": "2.0", "id": discover["id"], "method": "server/discover", "params": {"_meta": expected}})
    );
    answer(&raw, &discover["id"], json!({
        "supportedVersions": ["2025-11-25", "2026-07-28"], "capabilities": caps,
        "instructions": "Be brief.", "ttlMs": 0, "cacheScope": "private", "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}}
    })).await;
    (connect.await.unwrap().unwrap(), raw)
}

fn text(result: &CallToolResult) -> Value {
    serde_json::to_value(&result.content).unwrap()
}

#[tokio::test]
async fn discover_replaces_the_handshake_and_every_request_carries_meta() {
    let (client, mut raw) =
        connect_stateless(options(), meta(json!({})), json!({"tools": {}})).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().name, "s");
    assert_eq!(client.instructions().as_deref(), Some("Be brief."));
    let call = tokio::spawn(async move {
        let r = client
            .call_tool(
                CallToolParams::new("echo").argument("q", 1),
                RequestOptions::default(),
            )
            .await;
        (client, r)
    });
    let sent = raw.recv().await.unwrap();
    assert_eq!(
        sent["params"],
        json!({"name": "echo", "arguments": {"q": 1}, "_meta": meta(json!({}))})
    );
    answer(
        &raw,
        &sent["id"],
        json!({"content": [{"type": "text", "text": "1"}], "resultType": "complete"}),
    )
    .await;
    let (_client, result) = call.await.unwrap();
    assert_eq!(
        text(&result.unwrap()),
        json!([{"type": "text", "text": "1"}])
    );
}

#[tokio::test]
async fn ping_and_set_level_fail_locally_and_the_log_level_rides_in_meta() {
    let mut expected = meta(json!({}));
    expected["io.modelcontextprotocol/logLevel"] = json!("warning");
    let (client, mut raw) = connect_stateless(
        options().log_level(LoggingLevel::Warning),
        expected.clone(),
        json!({"logging": {}, "prompts": {}}),
    )
    .await;
    for err in [
        client.ping().await.unwrap_err(),
        client.set_level(LoggingLevel::Debug).await.unwrap_err(),
        client.notify_roots_changed().unwrap_err(),
    ] {
        assert!(matches!(err, RequestError::NotSupported { .. }), "{err:?}");
    }
    assert!(raw.sent.try_recv().is_err(), "nothing may be sent");
    let list = tokio::spawn(async move { client.list_prompts().await });
    let sent = raw.recv().await.unwrap();
    assert_eq!(sent["method"], "prompts/list");
    assert_eq!(sent["params"], json!({"_meta": expected}));
    answer(
        &raw,
        &sent["id"],
        json!({"prompts": [], "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
    )
    .await;
    assert!(list.await.unwrap().unwrap().is_empty());
}

fn with_handlers() -> ClientOptions {
    options()
        .elicitation(Elicitation::form(|params, _ctx| async move {
            assert!(matches!(params, ElicitParams::Form(_)));
            Ok(ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::from("Ada"),
            )])))
        }))
        .sampling(Sampling::new(|_params, _ctx| async {
            Ok(CreateMessageResult::text("m", "Hi"))
        }))
        .roots(Roots::new(|_ctx| async {
            Ok(vec![Root::new("file:///srv/p")])
        }))
}

#[tokio::test]
async fn input_required_is_answered_by_the_handlers_and_retried_with_a_new_id() {
    let declared =
        json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": true}});
    let (client, mut raw) = connect_stateless(
        with_handlers(),
        meta(declared.clone()),
        json!({"prompts": {}}),
    )
    .await;
    let get = tokio::spawn(async move { client.get_prompt(GetPromptParams::new("greet")).await });
    let first = raw.recv().await.unwrap();
    assert_eq!(
        first["params"],
        json!({"name": "greet", "_meta": meta(declared.clone())})
    );
    answer(&raw, &first["id"], json!({
        "resultType": "input_required",
        "inputRequests": {
            "who": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
            "draft": {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello?"}}], "maxTokens": 10}},
            "where": {"method": "roots/list"}
        },
        "requestState": "s1"
    })).await;
    let second = raw.recv().await.unwrap();
    assert_ne!(second["id"], first["id"], "a retry needs a new id");
    assert_eq!(
        second["params"],
        json!({
            "name": "greet", "_meta": meta(declared.clone()),
            "inputResponses": {
                "who": {"action": "accept", "content": {"name": "Ada"}},
                "draft": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m", "stopReason": "endTurn"},
                "where": {"roots": [{"uri": "file:///srv/p"}]}
            },
            "requestState": "s1"
        })
    );
    // A second round with only state: the responses of the first are replaced.
    answer(
        &raw,
        &second["id"],
        json!({"resultType": "input_required", "requestState": "s2"}),
    )
    .await;
    let third = raw.recv().await.unwrap();
    assert_eq!(third["params"]["requestState"], "s2");
    assert_eq!(third["params"]["inputResponses"], json!({}));
    answer(
        &raw,
        &third["id"],
        json!({"messages": [], "resultType": "complete"}),
    )
    .await;
    assert!(get.await.unwrap().unwrap().messages.is_empty());
}

#[tokio::test]
async fn the_number_of_input_rounds_is_bounded() {
    let (client, mut raw) = connect_stateless(
        options().max_input_rounds(2),
        meta(json!({})),
        json!({"resources": {}}),
    )
    .await;
    let read = tokio::spawn(async move { client.read_resource("file:///a").await });
    for round in 0..3 {
        let sent = raw.recv().await.unwrap();
        assert_eq!(sent["params"]["uri"], "file:///a");
        answer(
            &raw,
            &sent["id"],
            json!({"resultType": "input_required", "requestState": format!("r{round}")}),
        )
        .await;
    }
    let err = read.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("after 2 rounds"), "{err}");
    assert!(raw.sent.try_recv().is_err(), "no fourth attempt");
}

#[tokio::test]
async fn an_input_request_without_a_handler_fails_the_call_clearly() {
    let (client, mut raw) =
        connect_stateless(options(), meta(json!({})), json!({"tools": {}})).await;
    let call = tokio::spawn(async move {
        client
            .call_tool(CallToolParams::new("t"), RequestOptions::default())
            .await
    });
    let sent = raw.recv().await.unwrap();
    answer(
        &raw,
        &sent["id"],
        json!({"resultType": "input_required", "inputRequests": {"k": {"method": "roots/list"}}}),
    )
    .await;
    let err = call.await.unwrap().unwrap_err();
    assert!(matches!(err, RequestError::NotSupported { .. }), "{err:?}");
    assert!(err.to_string().contains("roots/list"), "{err}");
}

#[tokio::test]
async fn stateless_error_codes_become_clear_errors() {
    let (client, mut raw) =
        connect_stateless(options(), meta(json!({})), json!({"tools": {}})).await;
    let client = std::sync::Arc::new(client);
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.call_tool(CallToolParams::new("t"), RequestOptions::default())
            .await
    });
    let sent = raw.recv().await.unwrap();
    send(&raw, json!({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32021, "message": "needs elicitation", "data": {"requiredCapabilities": {"elicitation": {}}}}})).await;
    let err = call.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("elicitation"), "{err}");
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.call_tool(CallToolParams::new("t"), RequestOptions::default())
            .await
    });
    let sent = raw.recv().await.unwrap();
    send(&raw, json!({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32022, "message": "no", "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}})).await;
    let err = call.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("supports 2025-11-25"), "{err}");
}

#[tokio::test]
async fn listen_is_acknowledged_and_tagged_notifications_reach_the_stream() {
    let (client, mut raw) = connect_stateless(
        options(),
        meta(json!({})),
        json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}}),
    )
    .await;
    let mut notifications = client.take_notifications().unwrap();
    let client = std::sync::Arc::new(client);
    let c = client.clone();
    let listen = tokio::spawn(async move {
        c.listen(
            SubscriptionFilter::default()
                .tools_list_changed(true)
                .prompts_list_changed(true),
        )
        .await
    });
    let sent = raw.recv().await.unwrap();
    assert_eq!(sent["method"], "subscriptions/listen");
    assert_eq!(
        sent["params"],
        json!({"notifications": {"toolsListChanged": true}, "_meta": meta(json!({}))}),
        "types the server did not declare are left out"
    );
    let tag = json!({"io.modelcontextprotocol/subscriptionId": sent["id"]});
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {"toolsListChanged": true}, "_meta": tag}})).await;
    let subscription = listen.await.unwrap().unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": tag}})).await;
    let got = notifications.recv().await.unwrap();
    assert_eq!(got.method(), "notifications/tools/list_changed");
    subscription.cancel();
    let cancelled = raw.recv().await.unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], sent["id"]);
    subscription.ended().await.unwrap();
}

#[tokio::test]
async fn subscribe_goes_through_the_listen_filter() {
    let (client, mut raw) = connect_stateless(
        options(),
        meta(json!({})),
        json!({"resources": {"subscribe": true}}),
    )
    .await;
    let client = std::sync::Arc::new(client);
    let c = client.clone();
    let sub = tokio::spawn(async move { c.subscribe("file:///a").await });
    let first = raw.recv().await.unwrap();
    assert_eq!(
        first["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///a"]})
    );
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {"resourceSubscriptions": ["file:///a"]}}})).await;
    sub.await.unwrap().unwrap();
    let c = client.clone();
    let sub = tokio::spawn(async move { c.subscribe("file:///b").await });
    let cancelled = raw.recv().await.unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], first["id"]);
    let second = raw.recv().await.unwrap();
    assert_eq!(
        second["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///a", "file:///b"]})
    );
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {"resourceSubscriptions": ["file:///a", "file:///b"]}}})).await;
    sub.await.unwrap().unwrap();
    let c = client.clone();
    let unsub = tokio::spawn(async move { c.unsubscribe("file:///a").await });
    assert_eq!(
        raw.recv().await.unwrap()["params"]["requestId"],
        second["id"]
    );
    let third = raw.recv().await.unwrap();
    assert_eq!(
        third["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///b"]})
    );
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {"resourceSubscriptions": ["file:///b"]}}})).await;
    unsub.await.unwrap().unwrap();
}

#[tokio::test]
async fn auto_falls_back_to_initialize_when_discover_is_unknown() {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, ClientOptions::new("c", "1").auto()));
    let discover = raw.recv().await.unwrap();
    assert_eq!(discover["method"], "server/discover");
    send(&raw, json!({"jsonrpc": "2.0", "id": discover["id"], "error": {"code": -32601, "message": "Method not found"}})).await;
    let init = raw.recv().await.unwrap();
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    answer(&raw, &init["id"], json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}})).await;
    let client = connect.await.unwrap().unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(
        raw.recv().await.unwrap()["method"],
        "notifications/initialized"
    );
}

#[tokio::test]
async fn auto_uses_the_stateless_revision_when_discover_lists_it() {
    let (client, _raw) = connect_stateless(
        ClientOptions::new("c", "1").auto(),
        meta(json!({})),
        json!({}),
    )
    .await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
}

#[tokio::test]
async fn an_exact_stateless_version_fails_against_a_handshake_only_server() {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, options()));
    let discover = raw.recv().await.unwrap();
    send(&raw, json!({"jsonrpc": "2.0", "id": discover["id"], "error": {"code": -32022, "message": "unsupported", "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}})).await;
    let err = connect.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("2025-11-25"), "{err}");
}

#[tokio::test]
async fn a_refusal_of_a_version_the_server_lists_is_retried_once_with_a_new_id() {
    let refusal = |id: &Value| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": "unsupported", "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}});
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, options()));
    let first = raw.recv().await.unwrap();
    send(&raw, refusal(&first["id"])).await;
    let again = raw.recv().await.unwrap();
    assert_eq!(again["method"], "server/discover");
    assert_ne!(again["id"], first["id"]);
    assert_eq!(again["params"], first["params"]);
    answer(&raw, &again["id"], json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"})).await;
    let client = connect.await.unwrap().unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);

    // A server that keeps refusing is not asked a third time.
    let call = tokio::spawn(async move { client.list_tools().await });
    for _ in 0..2 {
        let sent = raw.recv().await.unwrap();
        assert_eq!(sent["method"], "tools/list");
        send(&raw, refusal(&sent["id"])).await;
    }
    let err = call.await.unwrap().unwrap_err();
    assert!(
        err.to_string()
            .contains("does not accept protocol version 2026-07-28"),
        "{err}"
    );
}

/// Connects in auto mode, answers `server/discover` with `answer` (a whole JSON-RPC frame
/// but for the id) and returns the revision the following `initialize` offers.
async fn auto_fallback_offers(answer: Value) -> Value {
    let (conn, mut raw) = memory::raw();
    let connect = tokio::spawn(Client::connect(conn, ClientOptions::new("c", "1").auto()));
    let discover = raw.recv().await.unwrap();
    let mut frame = answer;
    frame["jsonrpc"] = json!("2.0");
    frame["id"] = discover["id"].clone();
    send(&raw, frame).await;
    let init = raw.recv().await.unwrap();
    assert_eq!(init["method"], "initialize");
    let offered = init["params"]["protocolVersion"].clone();
    answer_init(&raw, &init).await;
    connect.await.unwrap().unwrap();
    offered
}

async fn answer_init(raw: &RawPeer, init: &Value) {
    let version = init["params"]["protocolVersion"].clone();
    answer(raw, &init["id"], json!({"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}})).await;
}

#[tokio::test]
async fn auto_falls_back_to_the_newest_handshake_revision_the_server_lists() {
    let refused = json!({"error": {"code": -32022, "message": "unsupported", "data": {"supported": ["2024-11-05", "2025-06-18"], "requested": "2026-07-28"}}});
    assert_eq!(auto_fallback_offers(refused).await, "2025-06-18");
    let listed = json!({"result": {"supportedVersions": ["2025-03-26"], "capabilities": {}}});
    assert_eq!(auto_fallback_offers(listed).await, "2025-03-26");
}

#[tokio::test]
async fn auto_falls_back_when_discover_is_answered_with_something_else() {
    // A lax server answers every method it does not know with an empty result.
    let lax = json!({"result": {}});
    assert_eq!(auto_fallback_offers(lax).await, "2025-11-25");
}

#[tokio::test]
async fn a_fresh_list_is_answered_from_the_cache_until_list_changed_makes_it_stale() {
    let (client, mut raw) = connect_stateless(
        options(),
        meta(json!({})),
        json!({"tools": {"listChanged": true}}),
    )
    .await;
    let client = std::sync::Arc::new(client);
    let list = |c: &std::sync::Arc<Client>| {
        let c = c.clone();
        tokio::spawn(async move { c.list_tools().await.unwrap() })
    };
    // Two pages, the second with its own ttl; both kept.
    let first = list(&client);
    let page1 = raw.recv().await.unwrap();
    answer(&raw, &page1["id"], json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "2", "ttlMs": 60000, "cacheScope": "public", "resultType": "complete"})).await;
    let page2 = raw.recv().await.unwrap();
    assert_eq!(page2["params"]["cursor"], "2");
    answer(&raw, &page2["id"], json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}], "ttlMs": 60000, "cacheScope": "private", "resultType": "complete"})).await;
    assert_eq!(first.await.unwrap().len(), 2);

    // Fresh: answered without a request (the next message the server sees is the call).
    let again = list(&client).await.unwrap();
    assert_eq!(again.len(), 2);
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.call_tool(CallToolParams::new("a"), RequestOptions::default())
            .await
    });
    let sent = raw.recv().await.unwrap();
    assert_eq!(sent["method"], "tools/call", "a fresh list was asked again");
    answer(
        &raw,
        &sent["id"],
        json!({"content": [], "resultType": "complete"}),
    )
    .await;
    call.await.unwrap().unwrap();

    // The notification makes it stale; the next listing asks, and a ttl of 0 is not kept.
    send(
        &raw,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
    )
    .await;
    let mut notifications = client.take_notifications().unwrap();
    notifications.recv().await.unwrap();
    for _ in 0..2 {
        let listing = list(&client);
        let sent = raw.recv().await.unwrap();
        assert_eq!(sent["method"], "tools/list");
        assert!(sent["params"].get("cursor").is_none());
        answer(
            &raw,
            &sent["id"],
            json!({"tools": [], "ttlMs": 0, "cacheScope": "public", "resultType": "complete"}),
        )
        .await;
        assert!(listing.await.unwrap().is_empty());
    }
}
