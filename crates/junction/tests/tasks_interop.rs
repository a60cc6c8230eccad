//! Tasks against real peers: our client against `@modelcontextprotocol/server-everything`'s
//! `simulate-research-query` (`execution.taskSupport: "required"`, with an elicitation while
//! `input_required`) over stdio.
//!
//! Needs `JUNCTION_NODE` and `JUNCTION_SERVER_EVERYTHING`, which `scripts/test` exports.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use junction::client::{Client, ClientOptions, Elicitation};
use junction::protocol::elicitation::{ElicitParams, ElicitResult, ElicitValue};
use junction::protocol::tasks::{TaskStatus, RELATED_TASK_META};
use junction::protocol::tools::{CallToolParams, TaskSupport};
use junction::transport::child::{spawn, CommandSpec, ShutdownTimeouts};
use junction::RequestError;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run this test through `scripts/test`, which installs the interop peers and exports their paths")
    })
}

#[tokio::test]
async fn simulate_research_query_runs_as_a_task_with_its_clarification() {
    let spec = CommandSpec::new(env("JUNCTION_NODE"))
        .args([env("JUNCTION_SERVER_EVERYTHING"), "stdio".to_owned()]);
    let (conn, mut child) = spawn(&spec, Default::default()).expect("server-everything starts");
    let asked: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let record = asked.clone();
    let elicitation = Elicitation::form(move |params, _ctx| {
        let record = record.clone();
        async move {
            if let ElicitParams::Form(form) = &params {
                record
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&form.meta).unwrap());
            }
            Ok(ElicitResult::accept(BTreeMap::from([(
                "interpretation".to_owned(),
                ElicitValue::from("technical"),
            )])))
        }
    });
    let options = ClientOptions::new("junction-tasks", "0.1.0").elicitation(elicitation);
    let client = Client::connect(conn, options).await.unwrap();
    assert!(client.server_capabilities().supports_task_tool_calls());
    let tools = client.list_tools().await.unwrap();
    let research = tools
        .iter()
        .find(|t| t.name == "simulate-research-query")
        .unwrap();
    assert_eq!(research.task_support_or_default(), TaskSupport::Required);

    // Called plainly, the server refuses it (the TypeScript SDK reports its -32601 as a
    // tool error).
    let plain = client
        .call_tool(
            CallToolParams::new("simulate-research-query").argument("topic", "rust"),
            Default::default(),
        )
        .await;
    match plain {
        Err(RequestError::Remote { error, .. }) => assert_eq!(error.code.0, -32601),
        Ok(r) => {
            assert_eq!(r.is_error, Some(true));
            assert!(r.content[0].as_text().unwrap().contains("-32601"), "{r:?}");
        }
        Err(e) => panic!("{e}"),
    }

    let params = CallToolParams::new("simulate-research-query")
        .argument("topic", "rust")
        .argument("ambiguous", true);
    let mut seen = Vec::new();
    let result = client
        .call_tool_auto(params, Default::default(), |task| {
            seen.push((task.status, task.status_message.clone()))
        })
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap();
    assert!(
        text.contains("# Research Report: rust (technical)"),
        "{text}"
    );
    assert_eq!(seen.first().map(|s| s.0), Some(TaskStatus::Working));
    assert!(
        seen.iter()
            .any(|(_, m)| m.as_deref() == Some("Gathering sources...")),
        "{seen:?}"
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one clarification");
    assert!(
        asked[0][RELATED_TASK_META]["taskId"].is_string(),
        "{asked:?}"
    );
    let listed = client.list_tasks().await.unwrap();
    assert!(listed.iter().any(|t| t.status == TaskStatus::Completed));

    client.close();
    child.shutdown(ShutdownTimeouts::default()).await.unwrap();
}
