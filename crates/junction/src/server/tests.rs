//! The server framework end to end with Junction's client, and raw where exact errors matter.

use serde_json::json;

use super::*;
use crate::client::{Client, ClientOptions};
use crate::session::RequestOptions;
use crate::transport::memory;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: f64,
}

async fn add(args: AddArgs) -> Json<Sum> {
    Json(Sum {
        sum: args.a + args.b,
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CheckoutArgs {
    title: String,
}

async fn checkout(args: CheckoutArgs) -> Result<String, String> {
    if args.title == "Maps of Small Rivers" {
        Err(format!(
            "No copies of '{}' are available. Search for another title.",
            args.title
        ))
    } else {
        Ok(format!("Checked out '{}'.", args.title))
    }
}

async fn with_progress(ctx: Context, args: CheckoutArgs) -> String {
    for step in 1..=3 {
        ctx.progress(step as f64, Some(3.0), None);
    }
    args.title
}

fn server(page_size: usize) -> Server {
    Server::builder("test", "1.0.0")
        .instructions("Use add_numbers for sums.")
        .tool(tool("add_numbers", add).description("Adds two numbers"))
        .tool(tool("checkout", checkout).title("Check out a book"))
        .tool(tool("slow", with_progress))
        .page_size(page_size)
        .build()
        .unwrap()
}

async fn connect(page_size: usize) -> Client {
    let (a, b) = memory::pair(Default::default());
    server(page_size).serve(b);
    Client::connect(a, ClientOptions::new("c", "1"))
        .await
        .unwrap()
}

#[tokio::test]
async fn tools_are_listed_across_pages_with_derived_schemas() {
    let client = connect(2).await;
    assert_eq!(
        client.instructions().as_deref(),
        Some("Use add_numbers for sums.")
    );
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add_numbers", "checkout", "slow"]);
    let add = &tools[0];
    assert_eq!(add.input_schema["type"], "object");
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));
    assert_eq!(
        add.input_schema["properties"]["a"]["description"],
        "The first number."
    );
    assert_eq!(
        add.output_schema.as_ref().unwrap()["properties"]["sum"]["type"],
        "number"
    );
    assert!(tools[1].output_schema.is_none());
}

#[tokio::test]
async fn structured_output_is_sent_as_structured_content_and_as_the_same_text() {
    let client = connect(100).await;
    let params = junction_protocol::tools::CallToolParams::new("add_numbers")
        .argument("a", 2)
        .argument("b", 3);
    let result = client
        .call_tool(params, RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"sum": 5.0})));
    let text: serde_json::Value =
        serde_json::from_str(result.content[0].as_text().unwrap()).unwrap();
    assert_eq!(Some(text), result.structured_content);
}

#[tokio::test]
async fn tool_failures_and_invalid_arguments_are_tool_errors_naming_the_field() {
    let client = connect(100).await;
    let call = |p| client.call_tool(p, RequestOptions::default());
    use junction_protocol::tools::CallToolParams as P;
    let r = call(P::new("checkout").argument("title", "Maps of Small Rivers"))
        .await
        .unwrap();
    assert!(r.failed());
    assert_eq!(
        r.content[0].as_text(),
        Some("No copies of 'Maps of Small Rivers' are available. Search for another title.")
    );
    let r = call(P::new("add_numbers").argument("a", 1)).await.unwrap();
    assert!(r.failed());
    assert_eq!(
        r.content[0].as_text(),
        Some("Invalid arguments for tool `add_numbers`: missing required argument `b`: add it and call again.")
    );
    let r = call(P::new("add_numbers").argument("a", "two").argument("b", 1))
        .await
        .unwrap();
    assert!(
        r.failed()
            && r.content[0]
                .as_text()
                .unwrap()
                .contains("argument `a` is invalid"),
        "{r:?}"
    );
    let err = call(P::new("nope")).await.unwrap_err();
    assert_eq!(err.remote().unwrap().code.0, -32602);
    assert!(err.remote().unwrap().message.contains("Unknown tool: nope"));
}

#[tokio::test]
async fn handlers_report_progress_through_their_context() {
    let client = connect(100).await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options =
        RequestOptions::default().on_progress(move |u| sink.lock().unwrap().push(u.progress));
    let params = junction_protocol::tools::CallToolParams::new("slow").argument("title", "x");
    let r = client.call_tool(params, options).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("x"));
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[tokio::test]
async fn lifecycle_errors_unknown_methods_and_bad_cursors_on_the_wire() {
    let (conn, mut raw) = memory::raw();
    server(1).serve(conn);
    let frames = raw.frames.clone();
    let exchange = |frame: &'static str| {
        let sent = frames.clone();
        async move {
            sent.send(crate::transport::Inbound::Frame(frame.as_bytes().to_vec()))
                .await
                .unwrap();
        }
    };
    exchange(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    let e = raw.recv().await.unwrap();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(1), json!(-32600))
    );
    exchange(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(raw.recv().await.unwrap()["result"], json!({}));
    exchange(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#).await;
    let init = raw.recv().await.unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(
        init["result"]["serverInfo"],
        json!({"name": "test", "version": "1.0.0"})
    );
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    exchange(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#).await;
    assert!(raw.recv().await.unwrap()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("notifications/initialized"));
    exchange(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    exchange(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#).await;
    let page = raw.recv().await.unwrap();
    assert_eq!(page["result"]["nextCursor"], "offset:1");
    exchange(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"bogus"}}"#).await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32602);
    exchange(r#"{"jsonrpc":"2.0","id":7,"method":"resources/list"}"#).await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32601);
    exchange(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}"#).await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32602);
    exchange(r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#).await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32600);
}

#[test]
fn duplicate_tool_names_are_refused() {
    let err = Server::builder("s", "1")
        .tool(tool("a", add))
        .tool(tool("a", add))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("two tools are named `a`"));
}

/// What the handlers of `shared_server` share.
#[derive(Clone)]
struct Shelf {
    label: std::sync::Arc<str>,
}

fn shared_server() -> Server {
    Server::builder("shared", "1")
        .state(Shelf {
            label: "shelf A".into(),
        })
        .tool(tool(
            "where",
            |State(shelf): State<Shelf>, a: CheckoutArgs| async move {
                format!("{} is on {}", a.title, shelf.label)
            },
        ))
        .tool(tool(
            "where_logged",
            |State(shelf): State<Shelf>, ctx: Context, a: CheckoutArgs| async move {
                format!("{} is on {} ({})", a.title, shelf.label, ctx.request().id())
            },
        ))
        .resource(resource("shelf://label", "label", |r| async move {
            r.state::<Shelf>()
                .map(|s| s.label.to_string())
                .ok_or_else(|| not_found(&r.uri))
        }))
        .prompt(prompt("shelve", |p| async move {
            let shelf: Option<Shelf> = p.state();
            format!("Put it on {}", shelf.map_or("nothing".into(), |s| s.label))
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn tools_resources_and_prompts_share_the_servers_state() {
    let (a, b) = memory::pair(Default::default());
    shared_server().serve(b);
    let client = Client::connect(a, ClientOptions::new("c", "1"))
        .await
        .unwrap();
    let args = json!({"title": "Dune"}).as_object().unwrap().clone();
    let result = client
        .call_tool(
            junction_protocol::tools::CallToolParams::new("where").arguments(args.clone()),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("Dune is on shelf A"));
    let result = client
        .call_tool(
            junction_protocol::tools::CallToolParams::new("where_logged").arguments(args),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(result.content[0]
        .as_text()
        .unwrap()
        .starts_with("Dune is on shelf A ("));
    let read = client.read_resource("shelf://label").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        "shelf A"
    );
    let prompt = client
        .get_prompt(junction_protocol::prompts::GetPromptParams::new("shelve"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages[0].content).unwrap()["text"],
        "Put it on shelf A"
    );
}

#[test]
fn a_tool_that_takes_a_state_the_server_lacks_is_refused_when_added() {
    let error = Server::builder("shared", "1")
        .tool(tool(
            "where",
            |State(shelf): State<Shelf>, a: CheckoutArgs| async move {
                format!("{} is on {}", a.title, shelf.label)
            },
        ))
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, BuildError::MissingState { tool, state } if tool == "where" && state.ends_with("Shelf")),
        "{error}"
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

async fn crashes(_: Nothing) -> String {
    panic!("this handler has a bug")
}

#[tokio::test]
async fn a_handler_that_panics_answers_internal_error_and_the_session_goes_on() {
    let (a, b) = memory::pair(Default::default());
    Server::builder("s", "1")
        .tool(tool("crash", crashes))
        .tool(tool("fine", |_: Nothing| async { "still here" }))
        .build()
        .unwrap()
        .serve(b);
    let client = Client::connect(a, ClientOptions::new("c", "1"))
        .await
        .unwrap();
    let error = client
        .call_tool(
            junction_protocol::tools::CallToolParams::new("crash"),
            Default::default(),
        )
        .await
        .unwrap_err();
    match error {
        crate::RequestError::Remote { error, .. } => {
            assert_eq!(error.code.0, -32603);
            assert!(
                error.message.contains("`tools/call` failed unexpectedly"),
                "{}",
                error.message
            );
        }
        other => panic!("expected the server's -32603, got {other}"),
    }
    let fine = client
        .call_tool(
            junction_protocol::tools::CallToolParams::new("fine"),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(fine.content[0].as_text(), Some("still here"));
}
