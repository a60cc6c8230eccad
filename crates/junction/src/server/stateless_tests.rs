//! Revision 2026-07-28 on the wire: a scripted raw client over the in-memory transport,
//! asserting the exact JSON of each answer.

use junction_protocol::elicitation::{FormParams, RequestedSchema};
use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
use junction_protocol::tools::TaskSupport;
use serde_json::{json, Value};

use super::*;
use crate::transport::memory::{self, RawPeer};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

const INFO: &str = "io.modelcontextprotocol/serverInfo";

async fn greet(ctx: Context, _: NoArgs) -> String {
    let client = ctx
        .client()
        .map(|c| (c.info.name.clone(), c.version.as_str()));
    format!("hello {client:?}")
}

/// Two questions and a sampling call: three rounds, the first two answers carried in
/// `requestState`.
async fn survey(ctx: Context, _: NoArgs) -> Result<String, String> {
    let name = ctx
        .elicit(FormParams::new("Your name?", RequestedSchema::new()))
        .await
        .map_err(|e| e.to_string())?;
    let age = ctx
        .elicit(FormParams::new("Your age?", RequestedSchema::new()))
        .await
        .map_err(|e| e.to_string())?;
    let poem = ctx
        .create_message(CreateMessageParams::new(
            vec![SamplingMessage::user_text("A poem")],
            10,
        ))
        .await
        .map_err(|e| e.to_string())?;
    let text = poem
        .content
        .blocks()
        .first()
        .and_then(|b| b.as_text())
        .unwrap_or("")
        .to_owned();
    Ok(format!(
        "{} {} {text}",
        serde_json::to_value(&name.content).unwrap_or_default(),
        serde_json::to_value(&age.content).unwrap_or_default(),
    ))
}

/// Two keyed questions asked at once: one round asks both.
async fn pair(ctx: Context, _: NoArgs) -> Result<String, String> {
    let (city, pet) = (ctx.input_key("city"), ctx.input_key("pet"));
    let (city, pet) = tokio::join!(
        city.elicit(FormParams::new("Your city?", RequestedSchema::new())),
        pet.elicit(FormParams::new("Your pet?", RequestedSchema::new())),
    );
    let content = |r: Result<junction_protocol::elicitation::ElicitResult, _>| {
        r.map(|r| serde_json::to_value(&r.content).unwrap_or_default())
            .map_err(|e: crate::RequestError| e.to_string())
    };
    Ok(format!("{} {}", content(city)?, content(pet)?))
}

async fn roots(ctx: Context, _: NoArgs) -> Result<String, String> {
    let roots = ctx.list_roots().await.map_err(|e| e.to_string())?;
    Ok(roots
        .roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

async fn logs(ctx: Context, _: NoArgs) -> &'static str {
    ctx.info("info message");
    ctx.debug("debug message");
    "logged"
}

fn server() -> Server {
    Server::builder("s", "1.0.0")
        .instructions("Be brief.")
        .tool(tool("greet", greet))
        .tool(tool("survey", survey))
        .tool(tool("pair", pair))
        .tool(tool("roots", roots))
        .tool(tool("logs", logs))
        .resource(resource("test://r", "r", |_| async { "content" }))
        .subscriptions()
        .cache(std::time::Duration::from_secs(60), CacheScope::Public)
        .build()
        .unwrap()
}

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}

fn request(id: i64, method: &str, mut params: Value, caps: Value) -> Vec<u8> {
    params["_meta"] = meta(caps);
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .unwrap()
}

fn start() -> RawPeer {
    let (conn, raw) = memory::raw();
    server().serve(conn);
    raw
}

fn server_info() -> Value {
    json!({INFO: {"name": "s", "version": "1.0.0"}})
}

#[tokio::test]
async fn discover_and_stateless_requests_need_no_initialize() {
    let mut raw = start();
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#)
        .await;
    let refused = raw.recv().await.unwrap();
    assert_eq!(refused["id"], 0);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    raw.send(request(1, "server/discover", json!({}), json!({})))
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true}},
            "instructions": "Be brief.",
            "ttlMs": 60000, "cacheScope": "public", "resultType": "complete",
            "_meta": server_info()
        }})
    );
    raw.send(request(
        2,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        json!({}),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "hello Some((\"raw\", \"2026-07-28\"))"}],
            "resultType": "complete", "_meta": server_info()
        }})
    );
    raw.send(request(3, "tools/list", json!({}), json!({})))
        .await;
    let list = raw.recv().await.unwrap();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["greet", "survey", "pair", "roots", "logs"]);
    assert_eq!(
        (
            &list["result"]["ttlMs"],
            &list["result"]["cacheScope"],
            &list["result"]["resultType"]
        ),
        (&json!(60000), &json!("public"), &json!("complete"))
    );
    raw.send(request(
        4,
        "resources/read",
        json!({"uri": "test://r"}),
        json!({}),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "contents": [{"uri": "test://r", "text": "content"}],
            "ttlMs": 60000, "cacheScope": "public", "resultType": "complete", "_meta": server_info()
        }})
    );
    raw.send(request(
        5,
        "resources/read",
        json!({"uri": "test://nope"}),
        json!({}),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "test://nope"}}})
    );
    for (id, method) in [
        (6, "ping"),
        (7, "logging/setLevel"),
        (8, "resources/subscribe"),
    ] {
        raw.send(request(id, method, json!({"level": "debug"}), json!({})))
            .await;
        assert_eq!(
            raw.recv().await.unwrap()["error"]["code"],
            -32601,
            "{method}"
        );
    }
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#).await;
    let refused = raw.recv().await.unwrap();
    assert_eq!(refused["error"]["code"], -32600);
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no `initialize`"));
}

#[tokio::test]
async fn bad_versions_and_missing_meta_get_the_errors_of_the_schema() {
    let mut raw = start();
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    let e = raw.recv().await.unwrap();
    assert_eq!(e["error"]["code"], -32022);
    assert_eq!(
        e["error"]["data"],
        json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"], "requested": "1900-01-01"})
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#).await;
    let e = raw.recv().await.unwrap();
    assert_eq!(e["error"]["code"], -32602);
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("clientCapabilities"));
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#)
        .await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32600);
    raw.send(request(
        4,
        "tools/call",
        json!({"name": "survey", "arguments": {}}),
        json!({}),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 4, "error": {
            "code": -32021,
            "message": "Server requires a client capability this request did not declare",
            "data": {"requiredCapabilities": {"elicitation": {}}}
        }})
    );
}

/// `tools/call` reads its params without `_meta` on 2026-07-28 (one walk with the
/// envelope): the envelope refuses what `_meta` may not hold.
#[tokio::test]
async fn a_bad_progress_token_or_a_meta_that_is_no_object_is_refused() {
    let mut raw = start();
    let mut params = json!({"name": "greet", "arguments": {}, "_meta": meta(json!({}))});
    params["_meta"]["progressToken"] = json!({"not": "a token"});
    let call = |id, params: &Value| {
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        )
        .unwrap()
    };
    raw.send(call(1, &params)).await;
    let e = raw.recv().await.unwrap();
    assert_eq!(e["error"]["code"], -32602);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("tools/call") && message.contains("progressToken"),
        "{message}"
    );
    params["_meta"]["progressToken"] = json!(7);
    raw.send(call(2, &params)).await;
    assert!(raw.recv().await.unwrap()["result"]["content"].is_array());
    // Read by position, this array would name 2026-07-28 and no capabilities.
    let positional = json!({"name": "greet", "_meta": ["2026-07-28", {}]});
    raw.send(call(3, &positional)).await;
    let e = raw.recv().await.unwrap();
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("an object"),
        "{e}"
    );
}

#[tokio::test]
async fn handshake_sessions_keep_their_results_unchanged() {
    let mut raw = start();
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#).await;
    assert_eq!(
        raw.recv().await.unwrap()["result"]["protocolVersion"],
        "2025-11-25"
    );
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    // A stateless `_meta` on an initialized session is ignored: the handshake holds.
    raw.send(request(
        3,
        "resources/read",
        json!({"uri": "test://nope"}),
        json!({}),
    ))
    .await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32002);
    raw.send(request(
        4,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        json!({}),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": "hello Some((\"raw\", \"2025-11-25\"))"}]
        }})
    );
}

#[tokio::test]
async fn mrtr_elicitation_and_sampling_rerun_the_handler_until_it_completes() {
    let mut raw = start();
    let caps = json!({"elicitation": {}, "sampling": {}});
    let call = |id, extra: Value| {
        let mut params = json!({"name": "survey", "arguments": {}});
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        request(id, "tools/call", params, caps.clone())
    };
    raw.send(call(1, json!({}))).await;
    let mut first = raw.recv().await.unwrap();
    let state = first["result"]
        .as_object_mut()
        .unwrap()
        .remove("requestState");
    assert!(
        state.as_ref().is_some_and(Value::is_string),
        "every round carries a requestState"
    );
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "input_required",
            "inputRequests": {"input-0": {"method": "elicitation/create", "params": {
                "message": "Your name?", "requestedSchema": {"type": "object", "properties": {}}
            }}},
            "_meta": server_info()
        }})
    );
    let name = json!({"action": "accept", "content": {"name": "Ada"}});
    raw.send(call(2, json!({"inputResponses": {"input-0": name}})))
        .await;
    let second = raw.recv().await.unwrap();
    assert_eq!(second["id"], 2);
    assert_eq!(second["result"]["resultType"], "input_required");
    assert_eq!(
        second["result"]["inputRequests"],
        json!({"input-1": {"method": "elicitation/create", "params": {
            "message": "Your age?", "requestedSchema": {"type": "object", "properties": {}}
        }}})
    );
    let state = second["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let age = json!({"action": "accept", "content": {"age": 36}});
    raw.send(call(
        3,
        json!({"inputResponses": {"input-1": age}, "requestState": state}),
    ))
    .await;
    let third = raw.recv().await.unwrap();
    assert_eq!(
        third["result"]["inputRequests"],
        json!({"input-2": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "A poem"}}], "maxTokens": 10
        }}})
    );
    let state = third["result"]["requestState"].as_str().unwrap().to_owned();
    let poem =
        json!({"role": "assistant", "content": {"type": "text", "text": "Roses."}, "model": "m"});
    raw.send(call(
        4,
        json!({"inputResponses": {"input-2": poem}, "requestState": state.clone()}),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": "{\"name\":\"Ada\"} {\"age\":36} Roses."}],
            "resultType": "complete", "_meta": server_info()
        }})
    );
    // A state this server did not produce is refused.
    let forged = format!("0000000000000000.{}", state.split_once('.').unwrap().1);
    raw.send(call(
        5,
        json!({"inputResponses": {"input-2": {}}, "requestState": forged}),
    ))
    .await;
    let e = raw.recv().await.unwrap();
    assert_eq!(e["error"]["code"], -32602);
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("requestState"));
}

#[tokio::test]
async fn mrtr_roots_round_trip() {
    let mut raw = start();
    let caps = json!({"roots": {}});
    raw.send(request(
        1,
        "tools/call",
        json!({"name": "roots", "arguments": {}}),
        caps.clone(),
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap()["result"]["inputRequests"],
        json!({"input-0": {"method": "roots/list", "params": {}}})
    );
    let answer = json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]});
    raw.send(request(
        2,
        "tools/call",
        json!({"name": "roots", "arguments": {}, "inputResponses": {"input-0": answer}}),
        caps,
    ))
    .await;
    assert_eq!(
        raw.recv().await.unwrap()["result"]["content"][0]["text"],
        "file:///a,file:///b"
    );
}

#[tokio::test]
async fn logs_follow_the_level_of_each_request() {
    let mut raw = start();
    raw.send(request(
        1,
        "tools/call",
        json!({"name": "logs", "arguments": {}}),
        json!({}),
    ))
    .await;
    assert_eq!(raw.recv().await.unwrap()["id"], 1, "no log without a level");
    let mut params = json!({"name": "logs", "arguments": {}});
    params["_meta"] = meta(json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    raw.send(
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}),
        )
        .unwrap(),
    )
    .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "info message"}})
    );
    assert_eq!(raw.recv().await.unwrap()["id"], 2);
}

#[tokio::test]
async fn listen_acknowledges_then_tags_list_changes_with_its_id() {
    let (conn, mut raw) = memory::raw();
    let server = server();
    server.serve(conn);
    raw.send(request(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["test://r"]}}),
        json!({}),
    ))
    .await;
    let ack = raw.sent.recv().await.unwrap();
    assert_eq!(ack.related, Some(junction_protocol::RequestId::Number(7)));
    assert_eq!(
        serde_json::from_slice::<Value>(&ack.message.encode()).unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://r"]},
            "_meta": {"io.modelcontextprotocol/subscriptionId": 7}
        }})
    );
    assert!(server.handle().remove_tool("logs"));
    let changed = raw.sent.recv().await.unwrap();
    assert_eq!(
        changed.related,
        Some(junction_protocol::RequestId::Number(7))
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&changed.message.encode()).unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": 7}
        }})
    );
    assert_eq!(server.handle().notify_resource_updated("test://r"), 1);
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
            "uri": "test://r", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}
        }})
    );
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#)
        .await;
    // Once cancelled, the listen is gone: a change reaches nobody.
    raw.send(request(8, "tools/list", json!({}), json!({})))
        .await;
    assert_eq!(raw.recv().await.unwrap()["id"], 8);
    assert_eq!(server.handle().notify_resource_updated("test://r"), 0);
}

#[tokio::test]
async fn keyed_inputs_asked_together_come_in_one_round_and_bad_answers_are_refused() {
    let mut raw = start();
    let caps = json!({"elicitation": {}});
    let call = |id, extra: Value| {
        let mut params = json!({"name": "pair", "arguments": {}});
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        request(id, "tools/call", params, caps.clone())
    };
    raw.send(call(1, json!({}))).await;
    let first = raw.recv().await.unwrap();
    let asked = first["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["city", "pet"], "{first}");
    let state = first["result"]["requestState"].clone();
    assert!(state.is_string(), "{first}");

    let city = json!({"action": "accept", "content": {"city": "Oslo"}});
    let pet = json!({"action": "accept", "content": {"pet": "cat"}});
    raw.send(call(
        2,
        json!({"inputResponses": {"city": city, "pet": pet}, "requestState": state}),
    ))
    .await;
    let done = raw.recv().await.unwrap();
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        r#"{"city":"Oslo"} {"pet":"cat"}"#
    );

    raw.send(call(3, json!({"inputResponses": {"city": 12345}})))
        .await;
    let refused = raw.recv().await.unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(r#"inputResponses["city"]"#) && message.contains("elicitation/create"),
        "{message}"
    );
}

/// Waits a moment (the call runs on as a task), then asks for a confirmation.
async fn confirm(ctx: Context, _: NoArgs) -> Result<String, String> {
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let answer = ctx
        .input_key("ok")
        .elicit(FormParams::new("Go on?", RequestedSchema::new()))
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "answer: {}",
        serde_json::to_value(&answer.content).unwrap_or_default()
    ))
}

/// Says what it is doing at once, then works a while, then says more.
async fn staged(ctx: Context, _: NoArgs) -> String {
    ctx.task_status("fetching the catalogue");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    ctx.task_status("counting copies");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    "counted".to_owned()
}

fn task_server() -> Server {
    Server::builder("s", "1.0.0")
        .tool(tool("confirm", confirm).task_support(TaskSupport::Optional))
        .tool(tool("staged", staged).task_support(TaskSupport::Optional))
        .tool(tool("quick", greet).task_support(TaskSupport::Optional))
        .tool(tool("must", greet).task_support(TaskSupport::Required))
        .build()
        .unwrap()
}

/// Sends `tasks/get` until the task's status is `status`.
async fn poll(raw: &mut RawPeer, id: &mut i64, task: &str, status: &str, caps: &Value) -> Value {
    for _ in 0..500 {
        *id += 1;
        raw.send(request(
            *id,
            "tasks/get",
            json!({"taskId": task}),
            caps.clone(),
        ))
        .await;
        let got = raw.recv().await.unwrap();
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("task {task} never became {status}");
}

#[tokio::test]
async fn the_tasks_extension_runs_a_slow_call_as_a_task_the_client_answers_and_polls() {
    let (conn, mut raw) = memory::raw();
    task_server().serve(conn);
    let caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});

    raw.send(request(1, "server/discover", json!({}), caps.clone()))
        .await;
    let discovered = raw.recv().await.unwrap();
    let declared = &discovered["result"]["capabilities"];
    assert_eq!(
        declared["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert!(declared.get("tasks").is_none(), "{declared}");

    // A handler done at its first poll answers at once.
    raw.send(request(
        2,
        "tools/call",
        json!({"name": "quick", "arguments": {}}),
        caps.clone(),
    ))
    .await;
    let quick = raw.recv().await.unwrap();
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");

    raw.send(request(
        3,
        "tools/call",
        json!({"name": "confirm", "arguments": {}}),
        caps.clone(),
    ))
    .await;
    let handle = raw.recv().await.unwrap()["result"].clone();
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert!(
        handle.get("task").is_none() && handle.get("result").is_none(),
        "{handle}"
    );
    assert!(
        handle["ttlMs"].is_u64() && handle["pollIntervalMs"].is_u64(),
        "{handle}"
    );
    let task = handle["taskId"].as_str().unwrap().to_owned();

    let mut id = 10;
    let waiting = poll(&mut raw, &mut id, &task, "input_required", &caps).await;
    assert_eq!(waiting["resultType"], "complete");
    assert_eq!(
        waiting["inputRequests"]["ok"]["method"], "elicitation/create",
        "{waiting}"
    );

    let answer = json!({"ok": {"action": "accept", "content": {"go": "yes"}}, "unknown": {}});
    raw.send(request(
        100,
        "tasks/update",
        json!({"taskId": task, "inputResponses": answer}),
        caps.clone(),
    ))
    .await;
    let ack = raw.recv().await.unwrap();
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(
        ack["result"].get("taskId").is_none(),
        "an empty acknowledgement: {ack}"
    );

    let done = poll(&mut raw, &mut id, &task, "completed", &caps).await;
    assert_eq!(
        done["result"]["content"][0]["text"], r#"answer: {"go":"yes"}"#,
        "{done}"
    );
    assert!(done.get("inputRequests").is_none(), "{done}");

    // Cancelling a task that ended is acknowledged; it stays completed.
    raw.send(request(
        101,
        "tasks/cancel",
        json!({"taskId": task}),
        caps.clone(),
    ))
    .await;
    let cancelled = raw.recv().await.unwrap();
    assert_eq!(
        cancelled["result"],
        json!({"resultType": "complete", "_meta": server_info()})
    );
    poll(&mut raw, &mut id, &task, "completed", &caps).await;

    raw.send(request(
        102,
        "tasks/get",
        json!({"taskId": "nope"}),
        caps.clone(),
    ))
    .await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32602);
    raw.send(request(103, "tasks/list", json!({}), caps.clone()))
        .await;
    assert_eq!(
        raw.recv().await.unwrap()["error"]["code"],
        -32601,
        "removed in the extension"
    );
}

#[tokio::test]
async fn a_status_set_before_the_call_became_a_task_is_the_tasks_first_status() {
    let (conn, mut raw) = memory::raw();
    task_server().serve(conn);
    let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    raw.send(request(
        1,
        "tools/call",
        json!({"name": "staged", "arguments": {}}),
        caps.clone(),
    ))
    .await;
    let handle = raw.recv().await.unwrap()["result"].clone();
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(
        handle["statusMessage"], "fetching the catalogue",
        "{handle}"
    );
    let task = handle["taskId"].as_str().unwrap().to_owned();

    raw.send(request(
        2,
        "tasks/get",
        json!({"taskId": task}),
        caps.clone(),
    ))
    .await;
    let first = raw.recv().await.unwrap()["result"].clone();
    assert_eq!(first["statusMessage"], "fetching the catalogue", "{first}");

    let mut id = 10;
    let done = poll(&mut raw, &mut id, &task, "completed", &caps).await;
    assert_eq!(done["result"]["content"][0]["text"], "counted", "{done}");
}

#[tokio::test]
async fn without_the_extension_task_methods_and_required_tools_say_which_capability_is_missing() {
    let (conn, mut raw) = memory::raw();
    task_server().serve(conn);
    let none = json!({});
    raw.send(request(
        1,
        "tasks/get",
        json!({"taskId": "x"}),
        none.clone(),
    ))
    .await;
    let refused = raw.recv().await.unwrap();
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"],
        json!({})
    );
    raw.send(request(
        2,
        "tools/call",
        json!({"name": "must", "arguments": {}}),
        none.clone(),
    ))
    .await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32021);
    // An optional tool just runs, whatever `task` a handshake-era client adds.
    raw.send(request(
        3,
        "tools/call",
        json!({"name": "confirm", "arguments": {}, "task": {"ttl": 1000}}),
        json!({"elicitation": {}}),
    ))
    .await;
    let asked = raw.recv().await.unwrap();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(asked["result"].get("taskId").is_none(), "{asked}");
}
