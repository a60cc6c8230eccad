//! Each feature end to end over the in-memory transport, with a client scripted by hand so
//! that the exact JSON on the wire is asserted.

use junction_protocol::content::ContentBlock;
use junction_protocol::content::Role;
use junction_protocol::elicitation::{FormParams, RequestedSchema};
use junction_protocol::prompts::PromptMessage;
use junction_protocol::resources::ResourceContents;
use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
use junction_protocol::RequestId;
use serde_json::{json, Value};

use super::*;
use crate::transport::memory::{self, RawPeer};
use crate::transport::Inbound;

const IMG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PromptArgs {
    prompt: String,
}

/// The conformance fixtures, written the way the conformance server will write them.
fn conformance() -> Server {
    async fn with_logging(ctx: Context, _: NoArgs) -> &'static str {
        ctx.info("Tool execution started");
        ctx.info("Tool processing data");
        ctx.debug("hidden unless the level is debug");
        ctx.info("Tool execution completed");
        "Tool with logging executed successfully"
    }
    async fn sampling(ctx: Context, args: PromptArgs) -> String {
        let params = CreateMessageParams::new(vec![SamplingMessage::user_text(args.prompt)], 100);
        match ctx.create_message(params).await {
            Ok(r) => format!(
                "LLM response: {}",
                r.content
                    .blocks()
                    .first()
                    .and_then(|b| b.as_text())
                    .unwrap_or("")
            ),
            Err(e) => format!("Sampling not supported or error: {e}"),
        }
    }
    async fn elicitation(ctx: Context, _: NoArgs) -> String {
        let schema = RequestedSchema::new();
        match ctx
            .elicit(FormParams::new("Please provide your information", schema))
            .await
        {
            Ok(r) => format!("User response: action={:?}", r.action),
            Err(e) => format!("Elicitation not supported or error: {e}"),
        }
    }
    async fn echo_schema(args: serde_json::Map<String, Value>) -> String {
        format!(
            "JSON Schema 2020-12 tool called with: {}",
            Value::Object(args)
        )
    }
    let Value::Object(schema_2020_12) = json!({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
        "$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
        "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},
        "additionalProperties":false})
    else {
        unreachable!()
    };
    Server::builder("mcp-conformance-test-server", "1.0.0")
        .tool(tool("test_tool_with_logging", with_logging).description("Logs"))
        .tool(
            tool("json_schema_2020_12_tool", echo_schema)
                .description("Tool with JSON Schema 2020-12 features")
                .input_schema(schema_2020_12),
        )
        .tool(tool("test_sampling", sampling).description("Samples"))
        .tool(tool("test_elicitation", elicitation).description("Elicits"))
        .resource(
            resource("test://static-text", "static-text", |_| async {
                "This is the content of the static text resource."
            })
            .title("Static Text Resource")
            .mime_type("text/plain"),
        )
        .resource(
            resource("test://static-binary", "static-binary", |_| async {
                Blob(IMG.into())
            })
            .mime_type("image/png"),
        )
        .resource(
            resource("test://watched-resource", "watched-resource", |_| async {
                "Watched resource content"
            })
            .mime_type("text/plain"),
        )
        .template(
            template("test://template/{id}/data", "template", |r| async move {
                let id = r.var("id").unwrap_or_default();
                format!(r#"{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}"#)
            })
            .mime_type("application/json")
            .complete("id", choices(["123", "124", "200"])),
        )
        .prompt(
            prompt("test_simple_prompt", |_| async {
                "This is a simple prompt for testing.".to_owned()
            })
            .description("A simple prompt without arguments"),
        )
        .prompt(
            prompt("test_prompt_with_arguments", |p| async move {
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    p.arg("arg1").unwrap_or_default(),
                    p.arg("arg2").unwrap_or_default()
                )
            })
            .description("A prompt with required arguments")
            .required("arg1", "First test argument")
            .required("arg2", "Second test argument")
            .complete("arg1", |r: CompleteRequest| async move {
                (0..150).map(|i| format!("{}{i}", r.value)).collect()
            }),
        )
        .prompt(
            prompt("test_prompt_with_embedded_resource", |p| async move {
                let uri = p.arg("resourceUri").unwrap_or_default();
                let contents = ResourceContents::text(
                    uri,
                    "text/plain",
                    "Embedded resource content for testing.",
                );
                vec![
                    PromptMessage::new(Role::User, ContentBlock::embedded(contents)),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]
            })
            .description("A prompt that includes an embedded resource")
            .required("resourceUri", "URI of the resource to embed"),
        )
        .prompt(
            prompt("test_prompt_with_image", |_| async {
                vec![
                    PromptMessage::new(Role::User, ContentBlock::image(IMG, "image/png")),
                    PromptMessage::user_text("Please analyze the image above."),
                ]
            })
            .description("A prompt that includes image content"),
        )
        .subscriptions()
        .build()
        .unwrap()
}

/// A client driven by hand: sends requests, answers the server's requests, and keeps the
/// notifications it sees.
struct Wire {
    raw: RawPeer,
    next: i64,
    notes: Vec<Value>,
    /// The server→client requests seen, with the id of the request they were related to.
    asked: Vec<(Value, Option<RequestId>)>,
}

impl Wire {
    async fn open(server: &Server, version: &str, capabilities: Value) -> Wire {
        let (conn, raw) = memory::raw();
        server.serve(conn);
        let mut wire = Wire {
            raw,
            next: 1,
            notes: Vec::new(),
            asked: Vec::new(),
        };
        let init = wire
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], version);
        wire.notify("notifications/initialized", None).await;
        // Notifications are taken in order, so once this is answered the session is ready.
        wire.ok("ping", json!({})).await;
        wire
    }

    async fn notify(&self, method: &str, params: Option<Value>) {
        let mut n = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            n["params"] = p;
        }
        self.raw.send(n.to_string()).await;
    }

    /// Sends a request and returns its response; server requests get `answer`.
    async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        answer: impl Fn(&str) -> Value,
    ) -> Value {
        let id = self.next;
        self.next += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.raw.send(frame.to_string()).await;
        loop {
            let out = self.raw.sent.recv().await.expect("the session ended");
            let message: Value = serde_json::from_slice(&out.message.encode()).unwrap();
            match (message.get("id"), message.get("method")) {
                (Some(got), None) if *got == json!(id) => return message,
                (Some(server_id), Some(m)) => {
                    let reply = json!({"jsonrpc": "2.0", "id": server_id, "result": answer(m.as_str().unwrap())});
                    self.asked.push((message.clone(), out.related));
                    self.raw
                        .frames
                        .send(Inbound::Frame(reply.to_string().into_bytes()))
                        .await
                        .unwrap();
                }
                _ => self.notes.push(message),
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_answering(method, params, |m| panic!("unexpected server request {m}"))
            .await
    }

    /// The result of a request that must succeed.
    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// Notifications already received plus any that arrive before a ping is answered.
    async fn drain(&mut self) -> Vec<Value> {
        self.request("ping", json!({})).await;
        std::mem::take(&mut self.notes)
    }
}

#[tokio::test]
async fn capabilities_declare_every_offered_feature() {
    let (conn, mut raw) = memory::raw();
    conformance().serve(conn);
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#).await;
    let init = raw.recv().await.unwrap();
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},
               "prompts":{"listChanged":true},"logging":{},"completions":{}})
    );
    assert!(init["result"].get("resultType").is_none());
}

#[tokio::test]
async fn a_hand_written_schema_is_listed_verbatim_and_enforced() {
    let mut w = Wire::open(&conformance(), "2025-11-25", json!({})).await;
    let tools = w.ok("tools/list", json!({})).await;
    let listed = &tools["tools"][1];
    assert_eq!(listed["name"], "json_schema_2020_12_tool");
    assert_eq!(
        listed["inputSchema"]["$defs"]["address"]["properties"]["city"],
        json!({"type": "string"})
    );
    assert_eq!(listed["inputSchema"]["additionalProperties"], false);
    let ok = w
        .ok("tools/call", json!({"name": "json_schema_2020_12_tool", "arguments": {"name": "n", "address": {"city": "c"}}}))
        .await;
    assert_eq!(
        ok["content"][0]["text"],
        r#"JSON Schema 2020-12 tool called with: {"address":{"city":"c"},"name":"n"}"#
    );
    let bad = w
        .ok("tools/call", json!({"name": "json_schema_2020_12_tool", "arguments": {"address": {"city": 1}, "extra": true}}))
        .await;
    assert_eq!(bad["isError"], true, "{bad}");
}

#[tokio::test]
async fn resources_are_listed_read_and_unknown_uris_get_32002() {
    let mut w = Wire::open(&conformance(), "2025-11-25", json!({})).await;
    let list = w.ok("resources/list", json!({})).await;
    assert_eq!(
        list["resources"][0],
        json!({"uri":"test://static-text","name":"static-text","title":"Static Text Resource","mimeType":"text/plain"})
    );
    assert_eq!(list["resources"].as_array().unwrap().len(), 3);
    let templates = w.ok("resources/templates/list", json!({})).await;
    assert_eq!(
        templates,
        json!({"resourceTemplates":[{"uriTemplate":"test://template/{id}/data","name":"template","mimeType":"application/json"}]})
    );
    assert_eq!(
        w.ok("resources/read", json!({"uri": "test://static-text"}))
            .await,
        json!({"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]})
    );
    assert_eq!(
        w.ok("resources/read", json!({"uri": "test://static-binary"}))
            .await,
        json!({"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":IMG}]})
    );
    assert_eq!(
        w.ok("resources/read", json!({"uri": "test://template/123/data"}))
            .await,
        json!({"contents":[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]})
    );
    let missing = w
        .request("resources/read", json!({"uri": "test://nope"}))
        .await;
    assert_eq!(
        missing["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "test://nope"}})
    );
}

#[tokio::test]
async fn subscribers_alone_hear_of_updates_and_empty_results_are_exactly_empty() {
    let server = conformance();
    let mut a = Wire::open(&server, "2025-11-25", json!({})).await;
    let mut b = Wire::open(&server, "2025-11-25", json!({})).await;
    let sub = a
        .request(
            "resources/subscribe",
            json!({"uri": "test://watched-resource"}),
        )
        .await;
    assert_eq!(sub["result"], json!({}));
    assert_eq!(
        server
            .handle()
            .notify_resource_updated("test://watched-resource"),
        1
    );
    assert_eq!(
        a.drain().await,
        [
            json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched-resource"}})
        ]
    );
    assert!(b.drain().await.is_empty());
    let unsub = a
        .request(
            "resources/unsubscribe",
            json!({"uri": "test://watched-resource"}),
        )
        .await;
    assert_eq!(unsub["result"], json!({}));
    assert_eq!(
        server
            .handle()
            .notify_resource_updated("test://watched-resource"),
        0
    );
    let unknown = a
        .request("resources/subscribe", json!({"uri": "test://nope"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32002);
    assert_eq!(a.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn prompts_render_and_check_their_arguments() {
    let mut w = Wire::open(&conformance(), "2025-11-25", json!({})).await;
    let list = w.ok("prompts/list", json!({})).await;
    assert_eq!(
        list["prompts"][1]["arguments"],
        json!([{"name":"arg1","description":"First test argument","required":true},
               {"name":"arg2","description":"Second test argument","required":true}])
    );
    assert_eq!(
        w.ok("prompts/get", json!({"name": "test_simple_prompt"}))
            .await,
        json!({"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]})
    );
    let args = w
        .ok("prompts/get", json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "hello", "arg2": "world"}}))
        .await;
    assert_eq!(
        args["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='hello', arg2='world'"
    );
    let embedded = w
        .ok("prompts/get", json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://example-resource"}}))
        .await;
    assert_eq!(
        embedded["messages"][0]["content"],
        json!({"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}})
    );
    let image = w
        .ok("prompts/get", json!({"name": "test_prompt_with_image"}))
        .await;
    assert_eq!(image["messages"][0]["content"]["type"], "image");
    let missing = w
        .request(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32602);
    assert_eq!(
        missing["error"]["message"],
        "Invalid params: prompt `test_prompt_with_arguments` needs the argument `arg2`"
    );
    let unknown = w.request("prompts/get", json!({"name": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602);
}

#[tokio::test]
async fn completions_are_capped_at_100_with_truthful_totals() {
    let mut w = Wire::open(&conformance(), "2025-11-25", json!({})).await;
    let prompt_ref = json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"});
    let r = w
        .ok(
            "completion/complete",
            json!({"ref": prompt_ref, "argument": {"name": "arg1", "value": "v"}}),
        )
        .await;
    assert_eq!(r["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(
        (
            r["completion"]["total"].clone(),
            r["completion"]["hasMore"].clone()
        ),
        (json!(150), json!(true))
    );
    let none = w
        .ok(
            "completion/complete",
            json!({"ref": prompt_ref, "argument": {"name": "arg2", "value": "v"}}),
        )
        .await;
    assert_eq!(
        none,
        json!({"completion": {"values": [], "total": 0, "hasMore": false}})
    );
    let template_ref = json!({"type": "ref/resource", "uri": "test://template/{id}/data"});
    let ids = w
        .ok("completion/complete", json!({"ref": template_ref, "argument": {"name": "id", "value": "12"}, "context": {"arguments": {}}}))
        .await;
    assert_eq!(
        ids["completion"],
        json!({"values": ["123", "124"], "total": 2, "hasMore": false})
    );
    for bad in [
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
        json!({"ref": prompt_ref, "argument": {"name": "nope", "value": ""}}),
        json!({"ref": {"type": "ref/resource", "uri": "test://x/{y}"}, "argument": {"name": "y", "value": ""}}),
    ] {
        assert_eq!(
            w.request("completion/complete", bad).await["error"]["code"],
            -32602
        );
    }
}

#[tokio::test]
async fn logs_arrive_at_the_default_level_and_follow_set_level() {
    let mut w = Wire::open(&conformance(), "2025-11-25", json!({})).await;
    let call = json!({"name": "test_tool_with_logging", "arguments": {}});
    w.ok("tools/call", call.clone()).await;
    let notes = w.drain().await;
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert_eq!(
        notes[0],
        json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"Tool execution started"}})
    );
    assert_eq!(
        w.request("logging/setLevel", json!({"level": "debug"}))
            .await["result"],
        json!({})
    );
    w.ok("tools/call", call.clone()).await;
    assert_eq!(w.drain().await.len(), 4);
    w.ok("logging/setLevel", json!({"level": "error"})).await;
    w.ok("tools/call", call).await;
    assert!(w.drain().await.is_empty());
}

#[tokio::test]
async fn client_requests_follow_capabilities_and_ride_the_calling_request() {
    let server = conformance();
    let mut w = Wire::open(
        &server,
        "2025-11-25",
        json!({"sampling": {}, "elicitation": {}}),
    )
    .await;
    let r = w
        .request_answering(
            "tools/call",
            json!({"name": "test_sampling", "arguments": {"prompt": "Test prompt for sampling"}}),
            |m| match m {
                "sampling/createMessage" => json!({"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model","stopReason":"endTurn"}),
                other => panic!("unexpected {other}"),
            },
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "LLM response: This is a test response from the client"
    );
    let (asked, related) = &w.asked[0];
    assert_eq!(
        asked["params"],
        json!({"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100})
    );
    assert_eq!(*related, Some(RequestId::Number(r["id"].as_i64().unwrap())));
    let e = w
        .request_answering(
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {}}),
            |_| json!({"action": "decline"}),
        )
        .await;
    assert_eq!(
        e["result"]["content"][0]["text"],
        "User response: action=Decline"
    );

    let mut bare = Wire::open(&server, "2025-11-25", json!({})).await;
    let r = bare
        .ok(
            "tools/call",
            json!({"name": "test_sampling", "arguments": {"prompt": "p"}}),
        )
        .await;
    assert_eq!(
        r["content"][0]["text"],
        "Sampling not supported or error: `sampling/createMessage` was not sent: the client did not declare the `sampling` capability"
    );
    let r = bare
        .ok(
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {}}),
        )
        .await;
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("form-mode elicitation"));
    assert!(bare.asked.is_empty());
}

#[tokio::test]
async fn run_time_changes_are_listed_at_once_and_announced_to_initialized_sessions() {
    let server = conformance();
    let handle = server.handle();
    let mut w = Wire::open(&server, "2025-11-25", json!({})).await;
    let (conn, mut pending) = memory::raw();
    server.serve(conn);
    handle
        .add_tool(tool("late", |_: NoArgs| async { "late" }).description("Added later"))
        .unwrap();
    assert!(handle.remove_prompt("test_simple_prompt"));
    assert!(!handle.remove_prompt("test_simple_prompt"));
    assert!(handle
        .add_template(template("bad://{", "bad", |_| async { "" }))
        .is_err());
    handle
        .add_resource(resource("test://late", "late", |_| async { "" }))
        .unwrap();
    assert_eq!(
        w.drain().await,
        [
            json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}),
            json!({"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}),
            json!({"jsonrpc":"2.0","method":"notifications/resources/list_changed"}),
        ]
    );
    let tools = w.ok("tools/list", json!({})).await;
    assert_eq!(
        tools["tools"].as_array().unwrap().last().unwrap()["name"],
        "late"
    );
    let late = w.ok("tools/call", json!({"name": "late"})).await;
    assert_eq!(late["content"][0]["text"], "late");
    let prompts = w.ok("prompts/list", json!({})).await;
    assert_eq!(prompts["prompts"].as_array().unwrap().len(), 3);
    // A session that never initialized hears nothing (notifications are queued at once).
    assert!(pending.sent.try_recv().is_err());
}

#[tokio::test]
async fn calls_and_lists_agree_on_many_tools_through_removal_and_readding() {
    let mut builder = Server::builder("many", "1");
    for i in 0..200 {
        builder = builder.tool(tool(format!("t{i}"), move |_: NoArgs| async move {
            format!("ran t{i}")
        }));
    }
    let server = builder.build().unwrap();
    let handle = server.handle();
    let mut w = Wire::open(&server, "2025-11-25", json!({})).await;
    let last = w.ok("tools/call", json!({"name": "t199"})).await;
    assert_eq!(last["content"][0]["text"], "ran t199");

    assert!(handle.remove_tool("t7"));
    assert!(!handle.remove_tool("t7"));
    let gone = w.request("tools/call", json!({"name": "t7"})).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(gone["error"]["message"], "Unknown tool: t7");
    assert!(handle
        .add_tool(tool("t8", |_: NoArgs| async { "twin" }))
        .is_err());
    handle
        .add_tool(tool("t7", |_: NoArgs| async { "back" }))
        .unwrap();
    let back = w.ok("tools/call", json!({"name": "t7"})).await;
    assert_eq!(back["content"][0]["text"], "back");
    let kept = w.ok("tools/call", json!({"name": "t8"})).await;
    assert_eq!(kept["content"][0]["text"], "ran t8");

    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = w.ok("tools/list", params).await;
        for t in page["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let mut expected: Vec<String> = (0..200)
        .filter(|&i| i != 7)
        .map(|i| format!("t{i}"))
        .collect();
    expected.push("t7".to_owned());
    assert_eq!(names, expected);
}

#[tokio::test]
async fn older_revisions_get_only_what_they_know() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Out {
        n: u32,
    }
    let server = Server::builder("old", "1")
        .title("Old Server")
        .tool(
            tool("structured", |_: NoArgs| async { Json(Out { n: 1 }) })
                .title("Structured")
                .description("d"),
        )
        .tool(
            tool("audio", |_: NoArgs| async {
                vec![ContentBlock::audio("AAAA", "audio/wav")]
            })
            .description("d"),
        )
        .prompt(
            prompt("p", |_| async { "x".to_owned() })
                .complete("a", choices(["a"]))
                .optional("a", "A"),
        )
        .build()
        .unwrap();
    let mut w = Wire::open(&server, "2024-11-05", json!({})).await;
    let tools = w.ok("tools/list", json!({})).await;
    assert_eq!(
        tools["tools"][0],
        json!({"name":"structured","description":"d","inputSchema":tools["tools"][0]["inputSchema"]})
    );
    let r = w
        .ok("tools/call", json!({"name": "structured", "arguments": {}}))
        .await;
    assert_eq!(r, json!({"content":[{"type":"text","text":"{\"n\":1}"}]}));
    let r = w
        .ok("tools/call", json!({"name": "audio", "arguments": {}}))
        .await;
    assert_eq!(r["content"][0]["type"], "text");
    let completion = w
        .ok("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}))
        .await;
    assert_eq!(completion["completion"]["values"], json!(["a"]));
    let (conn, mut raw) = memory::raw();
    server.serve(conn);
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#).await;
    let init = raw.recv().await.unwrap();
    assert_eq!(
        init["result"]["serverInfo"],
        json!({"name": "old", "version": "1"})
    );
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools":{"listChanged":true},"prompts":{"listChanged":true},"logging":{}})
    );
}

#[tokio::test]
async fn each_client_request_is_refused_locally_without_its_exact_capability() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Which {
        what: String,
    }
    async fn ask(ctx: Context, args: Which) -> String {
        let outcome = match args.what.as_str() {
            "url" => {
                let url = junction_protocol::elicitation::UrlParams::new(
                    "Sign in",
                    "e1",
                    "https://example.com/login",
                );
                ctx.elicit(url).await.map(|_| ())
            }
            "sampling-tools" => {
                let schema = junction_protocol::tools::Tool::empty_input_schema();
                let params = CreateMessageParams::new(vec![SamplingMessage::user_text("hi")], 10)
                    .tools(vec![junction_protocol::tools::Tool::new("t", schema)], None);
                ctx.create_message(params).await.map(|_| ())
            }
            _ => ctx.list_roots().await.map(|_| ()),
        };
        match outcome {
            Ok(()) => "sent".to_owned(),
            Err(e) => e.to_string(),
        }
    }
    let server = Server::builder("s", "1")
        .tool(tool("ask", ask))
        .build()
        .unwrap();
    let mut w = Wire::open(
        &server,
        "2025-11-25",
        json!({"sampling": {}, "elicitation": {}}),
    )
    .await;
    let r = w
        .ok(
            "tools/call",
            json!({"name": "ask", "arguments": {"what": "url"}}),
        )
        .await;
    assert_eq!(
        r["content"][0]["text"],
        "`elicitation/create` was not sent: the client did not declare URL-mode elicitation (`elicitation.url`)"
    );
    let r = w
        .ok(
            "tools/call",
            json!({"name": "ask", "arguments": {"what": "sampling-tools"}}),
        )
        .await;
    assert_eq!(
        r["content"][0]["text"],
        "`sampling/createMessage` was not sent: the request carries tools but the client did not declare `sampling.tools`"
    );
    let r = w
        .ok(
            "tools/call",
            json!({"name": "ask", "arguments": {"what": "roots"}}),
        )
        .await;
    assert_eq!(
        r["content"][0]["text"],
        "`roots/list` was not sent: the client did not declare the `roots` capability"
    );
    assert!(w.asked.is_empty());
    let mut old = Wire::open(&server, "2025-03-26", json!({"elicitation": {"url": {}}})).await;
    let r = old
        .ok(
            "tools/call",
            json!({"name": "ask", "arguments": {"what": "url"}}),
        )
        .await;
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("added in 2025-06-18"));
}

#[tokio::test]
async fn a_roots_change_runs_the_hook_which_can_list_the_roots() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::builder("s", "1")
        .on_roots_changed(move |changed| {
            let tx = tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(changed.list_roots().await.map(|r| r.roots[0].uri.clone()));
            });
        })
        .build()
        .unwrap();
    let mut w = Wire::open(
        &server,
        "2025-11-25",
        json!({"roots": {"listChanged": true}}),
    )
    .await;
    w.notify("notifications/roots/list_changed", None).await;
    let ask = w.raw.recv().await.unwrap();
    assert_eq!(
        (ask["method"].clone(), ask.get("params")),
        (json!("roots/list"), Some(&json!({})))
    );
    let reply =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///work"}]}});
    w.raw.send(reply.to_string()).await;
    assert_eq!(rx.recv().await.unwrap().unwrap(), "file:///work");
}

/// The bounds of [`lifecycle::Kept`] and of template matching are the server's, set on its
/// builder.
#[tokio::test]
async fn what_a_session_keeps_and_template_work_are_set_on_the_builder() {
    async fn who(ctx: Context, _: NoArgs) -> String {
        ctx.client()
            .map(|c| c.info.name.clone())
            .unwrap_or_default()
    }
    let build = |kept, steps| {
        Server::builder("bounds", "1")
            .tool(tool("who", who))
            .template(template("t://{a}{b}x", "pair", |r| async move {
                r.var("a").unwrap_or_default().to_owned()
            }))
            .kept(kept)
            .template_match_steps(steps)
            .build()
            .unwrap()
    };
    let uri = format!("t://{}x", "y".repeat(200));
    let tight = build(
        lifecycle::Kept {
            capability_bytes: 64,
            info_bytes: 2,
        },
        100,
    );
    let mut w = Wire::open(&tight, "2025-11-25", json!({})).await;
    let called = w
        .ok("tools/call", json!({"name": "who", "arguments": {}}))
        .await;
    assert_eq!(
        called["content"][0]["text"], "ra",
        "the name `raw` cut at 2 bytes"
    );
    let missing = w.request("resources/read", json!({"uri": uri})).await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    assert!(
        w.ok("resources/read", json!({"uri": "t://yyx"})).await["contents"][0]["text"].is_string()
    );

    let roomy = build(
        lifecycle::Kept::default(),
        crate::uri_template::MAX_ATTEMPTS,
    );
    let mut w = Wire::open(&roomy, "2025-11-25", json!({})).await;
    let called = w
        .ok("tools/call", json!({"name": "who", "arguments": {}}))
        .await;
    assert_eq!(called["content"][0]["text"], "raw");
    let read = w.ok("resources/read", json!({"uri": uri})).await;
    assert_eq!(read["contents"][0]["uri"], uri);
}
