//! The host against real child processes: the reference server-everything (Node), a
//! command that fails at once, and an HTTP entry whose URL nobody listens on.
//!
//! Needs the pinned peers: run `scripts/test` (or `. /work/tools/env.sh` first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use junction_host::config::Config;
use junction_host::consent::ScriptedConsent;
use junction_host::conversation::Message;
use junction_host::events::{Event, EventSink, ServerState};
use junction_host::interaction::ScriptedInteraction;
use junction_host::model::ScriptedModel;
use junction_host::servers::StartOptions;
use junction_host::Host;
use serde_json::json;

fn peer(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run scripts/test, which installs the pinned peers and exports their paths")
    })
}

fn config(extra: serde_json::Value) -> Config {
    let mut servers = json!({
        "everything": {
            "command": peer("JUNCTION_NODE"),
            "args": [peer("JUNCTION_SERVER_EVERYTHING"), "stdio"],
            "trusted": true
        },
        "broken": {"command": "sh", "args": ["-c", "echo boom >&2; exit 3"]},
        "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp"}
    });
    if let (Some(servers), serde_json::Value::Object(extra)) = (servers.as_object_mut(), extra) {
        servers.extend(extra);
    }
    let text = json!({ "mcpServers": servers }).to_string();
    Config::parse(&text, Path::new("test.json"), &|_| None).unwrap()
}

async fn start(script: &str) -> (Host, Vec<junction_host::servers::StartFailure>, Vec<Event>) {
    start_with(script, json!({})).await
}

async fn start_with(
    script: &str,
    extra: serde_json::Value,
) -> (Host, Vec<junction_host::servers::StartFailure>, Vec<Event>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let events = EventSink::callback(move |e| log.lock().unwrap().push(e));
    let (host, failures) = Host::from_config(
        &config(extra),
        &StartOptions::default(),
        Arc::new(ScriptedModel::from_json(script).unwrap()),
        Arc::new(ScriptedConsent::deny_all()),
        Arc::new(ScriptedInteraction::new()),
        events,
    )
    .await
    .unwrap();
    let events = seen.lock().unwrap().clone();
    (host, failures, events)
}

#[tokio::test]
async fn a_failing_server_is_reported_with_its_stderr_and_the_others_go_on() {
    let (host, failures, events) = start(r#"[{"text": "unused"}]"#).await;
    let failed: Vec<&str> = failures.iter().map(|f| f.server.as_str()).collect();
    assert_eq!(failed, ["broken", "remote"]);
    assert_eq!(failures[0].stderr_tail, ["boom"]);
    assert!(
        failures[0].reason.contains("status 3"),
        "{}",
        failures[0].reason
    );
    assert!(
        failures[1]
            .reason
            .starts_with("connecting over Streamable HTTP to http://127.0.0.1:9/mcp failed: "),
        "{}",
        failures[1].reason
    );

    let everything = host
        .servers()
        .get("everything")
        .expect("everything started");
    assert!(everything.tools().iter().any(|t| t.name == "echo"));
    assert_eq!(host.servers().len(), 1);
    assert!(events.iter().any(|e| matches!(e,
        Event::ServerStatus { server, state: ServerState::Failed { stderr_tail, .. } }
            if server == "broken" && stderr_tail == &["boom".to_owned()])));
    assert!(events.iter().any(|e| matches!(e,
        Event::ServerStatus { server, state: ServerState::Ready { .. } } if server == "everything")));
    host.shutdown().await;
}

#[tokio::test]
async fn a_trusted_read_only_tool_of_a_child_server_runs_without_asking() {
    let (mut host, _failures, _events) = start(
        r#"[
            {"toolCalls": [{"id": "e", "name": "everything__echo", "arguments": {"message": "hello there"}}]},
            {"text": "It echoed."}
        ]"#,
    )
    .await;
    let outcome = host.send("echo something").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("It echoed."));
    let result = host.conversation().messages().iter().find_map(|m| match m {
        Message::ToolResult {
            call_id,
            text,
            is_error,
            ..
        } if call_id == "e" => Some((text.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(result, Some(("Echo: hello there".to_owned(), false)));
    host.shutdown().await;
}

#[tokio::test]
async fn prompts_run_as_commands_with_completion() {
    let (mut host, _failures, _events) = start(r#"[{"text": "unused"}]"#).await;
    let added = host
        .apply_prompt("/everything:args-prompt Paris state=\"Île-de-France\"")
        .await
        .unwrap();
    assert_eq!(added, 1);
    assert!(matches!(host.conversation().messages().last(),
        Some(Message::User { text }) if text == "What's weather in Paris, Île-de-France?"));

    let err = host
        .apply_prompt("/everything:args-prompt")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs city"), "{err}");

    let none = BTreeMap::new();
    let departments = host
        .complete_prompt_argument(
            "everything",
            "completable-prompt",
            "department",
            "Eng",
            &none,
        )
        .await
        .unwrap();
    assert_eq!(departments, ["Engineering"]);
    let chosen = BTreeMap::from([("department".to_owned(), "Sales".to_owned())]);
    let names = host
        .complete_prompt_argument("everything", "completable-prompt", "name", "", &chosen)
        .await
        .unwrap();
    assert_eq!(names, ["David", "Eve", "Frank"]);
    host.shutdown().await;
}

#[tokio::test]
async fn an_attached_resource_enters_the_conversation_as_context() {
    let (mut host, _failures, _events) = start(r#"[{"text": "unused"}]"#).await;
    let uri = "demo://resource/static/document/architecture.md";
    let listed = host.attachables();
    assert!(
        listed
            .iter()
            .any(|a| a.reference() == format!("@everything:{uri}")),
        "{listed:?}"
    );
    assert!(listed.iter().any(|a| a.template));
    host.attach(&format!("@everything:{uri}")).await.unwrap();
    let docs = PathBuf::from(peer("JUNCTION_SERVER_EVERYTHING"))
        .parent()
        .unwrap()
        .join("docs/architecture.md");
    let expected = std::fs::read_to_string(docs).unwrap();
    assert!(matches!(host.conversation().messages().last(),
        Some(Message::Context { source, text, .. }) if source == &format!("@everything:{uri}") && text == &expected));
    host.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_with_its_stderr() {
    let silent = json!({"silent": {
        "command": "sh",
        "args": ["-c", "echo waiting for nothing >&2; exec sleep 30"],
        "startupTimeoutMs": 300
    }});
    let (host, failures, _events) = start_with(r#"[{"text": "unused"}]"#, silent).await;
    let silent = failures
        .iter()
        .find(|f| f.server == "silent")
        .expect("silent failed");
    assert!(
        silent.reason.contains("did not finish starting"),
        "{}",
        silent.reason
    );
    assert_eq!(silent.stderr_tail, ["waiting for nothing"]);
    assert!(host.servers().get("everything").is_some());
    host.shutdown().await;
}

#[tokio::test]
async fn template_variables_complete_and_filled_templates_attach_text_and_blobs() {
    let (mut host, _failures, _events) = start(r#"[{"text": "unused"}]"#).await;
    let template = "demo://resource/dynamic/text/{resourceId}";
    assert!(host
        .attachables()
        .iter()
        .any(|a| a.template && a.uri == template));
    let none = BTreeMap::new();
    let ids = host
        .complete_template_variable("everything", template, "resourceId", "3", &none)
        .await
        .unwrap();
    assert_eq!(ids, ["3"]);
    let refused = host
        .complete_template_variable("everything", template, "resourceId", "x", &none)
        .await
        .unwrap();
    assert!(refused.is_empty());

    host.attach("@everything:demo://resource/dynamic/text/3")
        .await
        .unwrap();
    assert!(matches!(host.conversation().messages().last(),
        Some(Message::Context { text, .. }) if text.starts_with("Resource 3: This is a plaintext resource")));
    host.attach("@everything:demo://resource/dynamic/blob/4")
        .await
        .unwrap();
    assert!(matches!(host.conversation().messages().last(),
        Some(Message::Context { text, .. }) if text.starts_with("Resource 4: This is a base64 blob created at")));
    host.shutdown().await;
}
