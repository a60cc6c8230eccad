//! The host's handlers for the server's requests, against a server scripted by hand: what
//! `initialize` declares for each combination, and the exact answers on the wire.

use std::collections::BTreeMap;
use std::sync::Arc;

use junction_protocol::elicitation::{ElicitParams, ElicitResult, ElicitValue};
use junction_protocol::roots::Root;
use junction_protocol::sampling::{CreateMessageResult, StopReason};
use serde_json::{json, Value};
use tokio::sync::{mpsc, Barrier};

use super::tests::{connect_with, send};
use super::*;
use crate::transport::memory::RawPeer;

fn options() -> ClientOptions {
    ClientOptions::new("host", "0.1.0")
}

fn sampling() -> Sampling {
    Sampling::new(|params, _ctx| async move {
        let prompt = params.messages[0].content.blocks()[0]
            .as_text()
            .unwrap_or_default()
            .to_owned();
        Ok(
            CreateMessageResult::text("test-model", format!("You said: {prompt}"))
                .stop_reason(StopReason::END_TURN),
        )
    })
}

/// Accepts forms with `{"name": "Ada"}` and URLs with no content.
fn elicitation_form() -> Elicitation {
    Elicitation::form(|params, _ctx| async move {
        Ok(match params {
            ElicitParams::Form(_) => ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::from("Ada"),
            )])),
            ElicitParams::Url(_) => ElicitResult::accept_url(),
        })
    })
}

fn roots() -> Roots {
    Roots::new(|_ctx| async {
        Ok(vec![
            Root::new("file:///home/ada/project").name("project"),
            Root::new("file:///tmp"),
        ])
    })
}

async fn connect(options: ClientOptions, declared: Value) -> (Client, RawPeer) {
    connect_with(options, declared, "2025-11-25", json!({})).await
}

/// Sends a request from the server and returns the client's answer.
async fn ask(raw: &mut RawPeer, id: &str, method: &str, params: Value) -> Value {
    send(
        raw,
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .await;
    raw.recv().await.unwrap()
}

#[tokio::test]
async fn initialize_declares_exactly_the_features_with_handlers() {
    let cases = [
        (options(), json!({})),
        (options().sampling(sampling()), json!({"sampling": {}})),
        (
            options().sampling(sampling().with_tools()),
            json!({"sampling": {"tools": {}}}),
        ),
        (
            options().sampling(sampling().with_context().with_tools()),
            json!({"sampling": {"context": {}, "tools": {}}}),
        ),
        (
            options().elicitation(elicitation_form()),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            options().elicitation(Elicitation::url(|_, _| async {
                Ok(ElicitResult::cancel())
            })),
            json!({"elicitation": {"url": {}}}),
        ),
        (
            options().elicitation(elicitation_form().with_url()),
            json!({"elicitation": {"form": {}, "url": {}}}),
        ),
        (
            options().roots(roots()),
            json!({"roots": {"listChanged": true}}),
        ),
        (
            options().roots(roots().without_list_changed()),
            json!({"roots": {}}),
        ),
        (
            options()
                .sampling(sampling())
                .elicitation(elicitation_form())
                .roots(roots()),
            json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": true}}),
        ),
    ];
    for (options, declared) in cases {
        // `connect_with` asserts the exact initialize params.
        connect(options, declared).await;
    }
}

#[tokio::test]
async fn requests_for_undeclared_features_are_method_not_found() {
    let (_client, mut raw) = connect(options(), json!({})).await;
    for (id, method, params) in [
        (
            "1",
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 5}),
        ),
        (
            "2",
            "elicitation/create",
            json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}),
        ),
        ("3", "roots/list", json!({})),
    ] {
        assert_eq!(
            ask(&mut raw, id, method, params).await,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("Method not found: {method}")}})
        );
    }
}

#[tokio::test]
async fn sampling_is_answered_by_the_handler() {
    let (_client, mut raw) = connect(options().sampling(sampling()), json!({"sampling": {}})).await;
    let reply = ask(
        &mut raw,
        "s1",
        "sampling/createMessage",
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}], "systemPrompt": "Be brief.", "maxTokens": 100, "temperature": 0.7}),
    )
    .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "s1", "result": {"role": "assistant", "content": {"type": "text", "text": "You said: hello"}, "model": "test-model", "stopReason": "endTurn"}})
    );
}

#[tokio::test]
async fn sampling_with_undeclared_tools_or_context_is_refused() {
    let (_client, mut raw) = connect(options().sampling(sampling()), json!({"sampling": {}})).await;
    let message = json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]);
    let tools = ask(
        &mut raw,
        "t",
        "sampling/createMessage",
        json!({"messages": message, "maxTokens": 10, "tools": [{"name": "x", "inputSchema": {"type": "object"}}]}),
    )
    .await;
    assert_eq!(
        tools["error"],
        json!({"code": -32602, "message": "sampling/createMessage failed: the request carries `tools` or `toolChoice`, but this client did not declare `sampling.tools`"})
    );
    let context = ask(
        &mut raw,
        "c",
        "sampling/createMessage",
        json!({"messages": message, "maxTokens": 10, "includeContext": "thisServer"}),
    )
    .await;
    assert_eq!(context["error"]["code"], -32602);
    assert!(
        context["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`sampling.context`"),
        "{context}"
    );
    let malformed = ask(
        &mut raw,
        "m",
        "sampling/createMessage",
        json!({"messages": message}),
    )
    .await;
    assert_eq!(malformed["error"]["code"], -32602);
    assert!(
        malformed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maxTokens"),
        "{malformed}"
    );
}

#[tokio::test]
async fn handler_errors_become_json_rpc_errors() {
    let refusing = Sampling::new(|_, _| async {
        Err::<CreateMessageResult, _>(HandlerError::rejected("the user declined"))
    });
    let failing = Roots::new(|_| async { Err(HandlerError::new("the workspace is not open")) });
    let (_client, mut raw) = connect(
        options().sampling(refusing).roots(failing),
        json!({"sampling": {}, "roots": {"listChanged": true}}),
    )
    .await;
    assert_eq!(
        ask(
            &mut raw,
            "1",
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 1})
        )
        .await,
        json!({"jsonrpc": "2.0", "id": "1", "error": {"code": -1, "message": "sampling/createMessage failed: the user declined"}})
    );
    assert_eq!(
        ask(&mut raw, "2", "roots/list", json!({})).await,
        json!({"jsonrpc": "2.0", "id": "2", "error": {"code": -32603, "message": "roots/list failed: the workspace is not open"}})
    );
}

const FORM: &str = r#"{"message": "Who are you?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}"#;

#[tokio::test]
async fn form_elicitation_is_answered_and_url_mode_is_refused_unless_declared() {
    let (_client, mut raw) = connect(
        options().elicitation(elicitation_form()),
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    let form: Value = serde_json::from_str(FORM).unwrap();
    assert_eq!(
        ask(&mut raw, "f", "elicitation/create", form).await,
        json!({"jsonrpc": "2.0", "id": "f", "result": {"action": "accept", "content": {"name": "Ada"}}})
    );
    let url = ask(
        &mut raw,
        "u",
        "elicitation/create",
        json!({"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://example.com/login"}),
    )
    .await;
    assert_eq!(
        url["error"],
        json!({"code": -32602, "message": "elicitation/create failed: URL mode was requested, but this client declared only `elicitation.form`"})
    );
}

#[tokio::test]
async fn url_elicitation_is_answered_and_decline_and_cancel_pass_through() {
    let (tx, mut seen) = mpsc::unbounded_channel();
    let handler = Elicitation::url(move |params, _ctx| {
        let tx = tx.clone();
        async move {
            let ElicitParams::Url(url) = params else {
                return Err(HandlerError::new("expected URL mode"));
            };
            let _ = tx.send(url.url.clone());
            Ok(match url.elicitation_id.as_str() {
                "yes" => ElicitResult::accept_url(),
                "no" => ElicitResult::decline(),
                _ => ElicitResult::cancel(),
            })
        }
    });
    let (_client, mut raw) = connect(
        options().elicitation(handler),
        json!({"elicitation": {"url": {}}}),
    )
    .await;
    for (id, action) in [("yes", "accept"), ("no", "decline"), ("later", "cancel")] {
        let reply = ask(
            &mut raw,
            id,
            "elicitation/create",
            json!({"mode": "url", "message": "Authorize", "elicitationId": id, "url": "https://example.com/auth"}),
        )
        .await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": id, "result": {"action": action}})
        );
        assert_eq!(seen.recv().await.unwrap(), "https://example.com/auth");
    }
    let form: Value = serde_json::from_str(FORM).unwrap();
    assert_eq!(
        ask(&mut raw, "f", "elicitation/create", form).await["error"]["code"],
        -32602
    );
}

#[tokio::test]
async fn accepted_content_that_breaks_the_requested_schema_is_not_sent() {
    let sloppy = Elicitation::form(|_, _| async {
        Ok(ElicitResult::accept(BTreeMap::from([(
            "age".to_owned(),
            ElicitValue::from(3),
        )])))
    });
    let (_client, mut raw) = connect(
        options().elicitation(sloppy),
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    let form: Value = serde_json::from_str(FORM).unwrap();
    assert_eq!(
        ask(&mut raw, "f", "elicitation/create", form).await["error"],
        json!({"code": -32603, "message": "elicitation/create failed: the accepted content does not match the requested schema: `name` is required"})
    );
}

#[tokio::test]
async fn roots_are_listed_and_changes_are_announced() {
    let (client, mut raw) = connect(
        options().roots(roots()),
        json!({"roots": {"listChanged": true}}),
    )
    .await;
    assert_eq!(
        ask(&mut raw, "r", "roots/list", json!({})).await,
        json!({"jsonrpc": "2.0", "id": "r", "result": {"roots": [{"uri": "file:///home/ada/project", "name": "project"}, {"uri": "file:///tmp"}]}})
    );
    client.notify_roots_changed().unwrap();
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {}})
    );
}

#[tokio::test]
async fn roots_changes_are_refused_without_list_changed_and_bad_roots_are_errors() {
    let bad = Roots::new(|_| async { Ok(vec![Root::new("https://example.com/")]) })
        .without_list_changed();
    let (client, mut raw) = connect(options().roots(bad), json!({"roots": {}})).await;
    let err = client.notify_roots_changed().unwrap_err();
    assert!(matches!(err, RequestError::NotSupported { .. }), "{err:?}");
    assert_eq!(
        ask(&mut raw, "r", "roots/list", json!({})).await["error"],
        json!({"code": -32603, "message": "roots/list failed: the root \"https://example.com/\" is not a file:// URI"})
    );
    let (plain, _raw) = connect(options(), json!({})).await;
    assert!(matches!(
        plain.notify_roots_changed(),
        Err(RequestError::NotSupported { .. })
    ));
}

#[tokio::test]
async fn handlers_run_concurrently_and_see_their_request() {
    // Each handler waits for the other: they finish only if both run at once.
    let barrier = Arc::new(Barrier::new(2));
    let handler = Sampling::new(move |_, ctx| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok(CreateMessageResult::text("m", ctx.id().to_string()))
        }
    });
    let (_client, mut raw) = connect(options().sampling(handler), json!({"sampling": {}})).await;
    for id in ["a", "b"] {
        send(&raw, json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}})).await;
    }
    let mut answered = BTreeMap::new();
    for _ in 0..2 {
        let reply = raw.recv().await.unwrap();
        answered.insert(
            reply["id"].as_str().unwrap().to_owned(),
            reply["result"]["content"]["text"].clone(),
        );
    }
    assert_eq!(
        answered,
        BTreeMap::from([
            ("a".to_owned(), json!("\"a\"")),
            ("b".to_owned(), json!("\"b\""))
        ])
    );
}

#[tokio::test]
async fn a_cancelled_handler_is_stopped_and_sends_no_answer() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (dropped_tx, mut dropped) = mpsc::unbounded_channel::<()>();
    let handler = Sampling::new(move |_, ctx| {
        let started = started_tx.clone();
        let dropped = dropped_tx.clone();
        async move {
            // Dropped with the future when the request is cancelled.
            let _guard = DropSignal(dropped);
            let _ = started.send(ctx.cancellation());
            std::future::pending::<Result<CreateMessageResult, HandlerError>>().await
        }
    });
    let (client, mut raw) = connect(options().sampling(handler), json!({"sampling": {}})).await;
    send(&raw, json!({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}})).await;
    let token = started.recv().await.unwrap();
    send(&raw, json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "no longer needed"}})).await;
    token.cancelled().await;
    assert_eq!(
        dropped.recv().await,
        Some(()),
        "the handler was not dropped"
    );
    // The next thing on the wire is the ping's answer, not one for request 9.
    let ping = ask(&mut raw, "p", "ping", json!({})).await;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    drop(client);
}

/// Sends `()` when dropped.
struct DropSignal(mpsc::UnboundedSender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn sampling_histories_that_break_the_tool_rules_are_refused() {
    let (_client, mut raw) = connect(
        options().sampling(sampling().with_tools()),
        json!({"sampling": {"tools": {}}}),
    )
    .await;
    let tools = json!([{"name": "get_weather", "inputSchema": {"type": "object"}}]);
    let asks = json!({"role": "user", "content": {"type": "text", "text": "Weather?"}});
    let uses = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {}}]});
    let result = json!({"type": "tool_result", "toolUseId": "call_1", "content": [{"type": "text", "text": "Sunny"}]});

    let mixed = ask(&mut raw, "1", "sampling/createMessage", json!({"messages": [asks, uses, {"role": "user", "content": [result, {"type": "text", "text": "and?"}]}], "maxTokens": 10, "tools": tools})).await;
    assert_eq!(
        mixed["error"],
        json!({"code": -32602, "message": "sampling/createMessage failed: message 2 mixes tool_result blocks with other content; a user message with tool results must hold only tool results"})
    );
    let unanswered = ask(&mut raw, "2", "sampling/createMessage", json!({"messages": [asks, uses, {"role": "user", "content": {"type": "text", "text": "never mind"}}], "maxTokens": 10, "tools": tools})).await;
    assert_eq!(
        unanswered["error"],
        json!({"code": -32602, "message": "sampling/createMessage failed: the tool_use \"call_1\" in message 1 has no tool_result in the user message that directly follows it"})
    );
    let complete = ask(&mut raw, "3", "sampling/createMessage", json!({"messages": [asks, uses, {"role": "user", "content": [result]}], "maxTokens": 10, "tools": tools, "toolChoice": {"mode": "auto"}})).await;
    assert_eq!(
        complete["result"]["content"],
        json!({"type": "text", "text": "You said: Weather?"})
    );
}
