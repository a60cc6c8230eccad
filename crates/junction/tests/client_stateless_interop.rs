//! Junction's client speaking 2026-07-28 to a server built with the Python SDK (PyPI `mcp`,
//! `tests-interop/py-server.py`) over stdio and Streamable HTTP: discover, tools, an
//! elicitation answered through `input_required`, prompts and resources. Run through
//! scripts/test, which exports `JUNCTION_PYTHON`.
#![cfg(feature = "http-client")]

use std::collections::BTreeMap;

use junction::client::{Client, ClientOptions, Elicitation, ServerNotification};
use junction::protocol::elicitation::{ElicitParams, ElicitResult, ElicitValue};
use junction::protocol::prompts::GetPromptParams;
use junction::protocol::stateless::SubscriptionFilter;
use junction::protocol::tools::CallToolParams;
use junction::protocol::ProtocolVersion;
use junction::transport::child::{spawn, CommandSpec};
use junction::transport::http::client::HttpClient;
use junction::transport::Limits;
use junction_test_support::peers::{peer, PY_SERVER};

fn options(auto: bool) -> ClientOptions {
    let options = ClientOptions::new("junction-test", "1.0.0").elicitation(Elicitation::form(
        |params, _ctx| async move {
            let ElicitParams::Form(form) = params else {
                panic!("a form was expected");
            };
            assert_eq!(form.message, "What is your name?");
            Ok(ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::from("Ada"),
            )])))
        },
    ));
    if auto {
        options.auto()
    } else {
        options.version(ProtocolVersion::V2026_07_28)
    }
}

/// Calls, reads and gets what the Python server offers, checking exact results.
async fn exercise(client: &Client) {
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().name, "py-stateless");
    assert_eq!(
        client.instructions().as_deref(),
        Some("Interop server for Junction.")
    );
    let mut tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    tools.sort();
    assert_eq!(tools, ["add", "greet", "touch"]);
    let add = CallToolParams::new("add")
        .argument("a", 2)
        .argument("b", 40);
    let result = client.call_tool(add, Default::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("42"));
    let greet = client
        .call_tool(CallToolParams::new("greet"), Default::default())
        .await
        .unwrap();
    assert_eq!(greet.content[0].as_text(), Some("Hello, Ada!"));
    let prompt = client
        .get_prompt(GetPromptParams::new("hello").argument("who", "Ada"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages[0].content).unwrap()["text"],
        "Say hello to Ada."
    );
    let read = client.read_resource("file:///readme.txt").await.unwrap();
    assert_eq!(read.contents[0].as_text(), Some("read me"));
    assert!(
        client.ping().await.is_err(),
        "ping is not part of 2026-07-28"
    );
}

#[tokio::test]
async fn python_sdk_server_over_stdio() {
    for auto in [false, true] {
        let spec = CommandSpec::new(peer("JUNCTION_PYTHON")).args([PY_SERVER]);
        let (connection, _child) = spawn(&spec, Limits::default()).unwrap();
        let client = Client::connect(connection, options(auto)).await.unwrap();
        exercise(&client).await;
        notifications(&client).await;
        client.close();
    }
}

#[tokio::test]
async fn python_sdk_server_over_http() {
    let server = junction_test_support::peers::python_http_server();
    let url = server.url();
    for auto in [false, true] {
        let connection = HttpClient::new(&url).unwrap().connect();
        let client = Client::connect(connection, options(auto)).await.unwrap();
        exercise(&client).await;
        notifications(&client).await;
        client.close();
    }
}

/// Listens for tool-list changes and subscribes to a resource, then has the server announce
/// both: they arrive on the notification stream.
async fn notifications(client: &Client) {
    let mut stream = client.take_notifications().unwrap();
    let listening = client
        .listen(SubscriptionFilter::default().tools_list_changed(true))
        .await
        .unwrap();
    assert_eq!(listening.acknowledged().tools_list_changed, Some(true));
    client.subscribe("file:///readme.txt").await.unwrap();
    let touch = CallToolParams::new("touch").argument("uri", "file:///readme.txt");
    client.call_tool(touch, Default::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match stream.recv().await.unwrap() {
            ServerNotification::ToolListChanged(_) => seen.push("tools"),
            ServerNotification::ResourceUpdated(p) => {
                assert_eq!(p.uri, "file:///readme.txt");
                seen.push("resource")
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    seen.sort();
    assert_eq!(seen, ["resource", "tools"]);
    listening.cancel();
    listening.ended().await.unwrap();
}
