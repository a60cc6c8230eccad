//! Tools as tasks (2025-11-25): Junction's client against Junction's server, each rule over
//! a stdio framing on a real socket pair and over Streamable HTTP on 127.0.0.1.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use junction::client::{Client, ClientOptions, Elicitation};
use junction::protocol::elicitation::{
    ElicitParams, ElicitResult, ElicitValue, FormParams, PrimitiveSchemaDefinition, RequestedSchema,
};
use junction::protocol::tasks::{TaskStatus, RELATED_TASK_META};
use junction::protocol::tools::{CallToolParams, TaskSupport};
use junction::server::task::TaskSettings;
use junction::server::{tool, Context, Server};
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::{HttpServer, RunningServer};
use junction::RequestError;
use tokio::sync::Semaphore;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// What the handlers let a test see and steer.
#[derive(Clone)]
struct Probe {
    /// `slow` waits for a permit.
    gate: Arc<Semaphore>,
    /// `slow` ended: it returned, or was stopped.
    ended: Arc<AtomicBool>,
}

/// Sets its flag when dropped: when the handler holding it returns or is stopped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            gate: Arc::new(Semaphore::new(0)),
            ended: Arc::default(),
        }
    }
}

fn server(probe: &Probe) -> Server {
    let slow = {
        let probe = probe.clone();
        move |ctx: Context, _: Nothing| {
            let probe = probe.clone();
            async move {
                let _ended = SetOnDrop(probe.ended.clone());
                ctx.task_status("waiting for the gate");
                if let Ok(permit) = probe.gate.acquire().await {
                    permit.forget();
                }
                "through the gate"
            }
        }
    };
    Server::builder("tasks-test", "1.0.0")
        .tool(tool("slow", slow).task_support(TaskSupport::Optional))
        .tool(
            tool("report", |_: Nothing| async { "report ready" })
                .task_support(TaskSupport::Required),
        )
        .tool(tool("plain", |_: Nothing| async { "plain" }))
        .tool(
            tool("later", |ctx: Context, _: Nothing| async move {
                // Busy past its first poll, so that on 2026-07-28 the server runs it as a task.
                tokio::time::sleep(Duration::from_millis(20)).await;
                let task = ctx.task_id().is_some();
                let answer = ctx
                    .elicit(FormParams::new(
                        "Your name?",
                        RequestedSchema::new()
                            .required("name", PrimitiveSchemaDefinition::string()),
                    ))
                    .await;
                match answer {
                    Ok(r) => format!(
                        "as a task: {task}; {:?}",
                        r.content.unwrap_or_default().get("name")
                    ),
                    Err(e) => format!("no answer: {e}"),
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            tool("broken", |_: Nothing| async {
                Err::<String, _>("the shelf is missing")
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            tool("asks", |ctx: Context, _: Nothing| async move {
                let answer = ctx
                    .elicit(FormParams::new(
                        "Your name?",
                        RequestedSchema::new()
                            .required("name", PrimitiveSchemaDefinition::string()),
                    ))
                    .await;
                match answer {
                    Ok(r) => format!("{:?}", r.content.unwrap_or_default().get("name")),
                    Err(e) => format!("no answer: {e}"),
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .tasks(
            TaskSettings::default()
                .max_ttl(Duration::from_secs(60))
                .poll_interval(Duration::from_millis(50)),
        )
        .build()
        .unwrap()
}

/// The `_meta` the elicitation requests of a task carried.
type Seen = Arc<Mutex<Vec<serde_json::Value>>>;

fn options(seen: &Seen) -> ClientOptions {
    let seen = seen.clone();
    ClientOptions::new("tasks-client", "1.0.0").elicitation(Elicitation::form(
        move |params, _ctx| {
            let seen = seen.clone();
            async move {
                if let ElicitParams::Form(form) = &params {
                    seen.lock()
                        .unwrap()
                        .push(serde_json::to_value(&form.meta).unwrap());
                }
                Ok(ElicitResult::accept(BTreeMap::from([(
                    "name".to_owned(),
                    ElicitValue::from("Ada"),
                )])))
            }
        },
    ))
}

/// How a test reaches the server.
#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
}

/// A server and the clients connected to it; clients over HTTP are separate sessions.
struct Setup {
    probe: Probe,
    server: Server,
    http: Option<RunningServer>,
    seen: Seen,
}

impl Setup {
    async fn new(transport: Transport) -> Setup {
        let probe = Probe::default();
        let server = server(&probe);
        let http = match transport {
            Transport::Stdio => None,
            Transport::Http => {
                let served = server.clone();
                Some(
                    HttpServer::new(move |c| {
                        served.serve(c);
                    })
                    .bind("127.0.0.1:0")
                    .await
                    .unwrap(),
                )
            }
        };
        Setup {
            probe,
            server,
            http,
            seen: Seen::default(),
        }
    }

    /// A new client (a new session).
    async fn client(&self) -> Client {
        self.client_with(options(&self.seen)).await
    }

    /// A new client with `options`.
    async fn client_with(&self, options: ClientOptions) -> Client {
        let connection = match &self.http {
            Some(http) => HttpClient::new(http.url("/mcp")).unwrap().connect(),
            None => {
                let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
                let (r, w) = theirs.into_split();
                self.server.serve(junction::transport::stdio::connect(
                    r,
                    w,
                    Default::default(),
                ));
                let (r, w) = ours.into_split();
                junction::transport::stdio::connect(r, w, Default::default())
            }
        };
        let client = Client::connect(connection, options).await.unwrap();
        client.list_tools().await.unwrap();
        client
    }
}

fn code(e: RequestError) -> i32 {
    match e {
        RequestError::Remote { error, .. } => error.code.0,
        other => panic!("expected an error from the server, got {other}"),
    }
}

fn text(result: &junction::protocol::tools::CallToolResult) -> String {
    result.content[0].as_text().unwrap().to_owned()
}

async fn each(test: impl AsyncFn(Transport)) {
    for transport in [Transport::Stdio, Transport::Http] {
        tokio::time::timeout(Duration::from_secs(30), test(transport))
            .await
            .unwrap_or_else(|_| panic!("{transport:?}: timed out"));
    }
}

#[tokio::test]
async fn a_task_answers_at_once_runs_on_and_delivers_exactly_its_result() {
    each(async |t| {
        let setup = Setup::new(t).await;
        let client = setup.client().await;
        let caps = client.server_capabilities();
        assert!(
            caps.supports_task_tool_calls()
                && caps.supports_task_list()
                && caps.supports_task_cancel(),
            "{t:?}"
        );
        // Ten hours asked, the configured minute granted.
        let created = client
            .call_tool_as_task(
                CallToolParams::new("slow"),
                Some(36_000_000),
                Default::default(),
            )
            .await
            .unwrap();
        let task = created.task;
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!((task.ttl, task.poll_interval), (Some(60_000), Some(50)));
        assert_eq!(task.task_id.len(), 32, "128 random bits in hex");
        let now = client.get_task(&task.task_id).await.unwrap();
        assert_eq!(now.status, TaskStatus::Working);
        assert_eq!(now.status_message.as_deref(), Some("waiting for the gate"));
        assert_eq!(
            client
                .list_tasks()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.task_id)
                .collect::<Vec<_>>(),
            std::slice::from_ref(&task.task_id)
        );
        // tasks/result blocks until the gate opens.
        let waiting = client.task_result(&task.task_id);
        setup.probe.gate.add_permits(1);
        let result = waiting.await.unwrap();
        assert_eq!(text(&result), "through the gate");
        let meta = serde_json::to_value(result.meta.unwrap()).unwrap();
        assert_eq!(meta[RELATED_TASK_META]["taskId"], task.task_id.as_str());
        let done = client.get_task(&task.task_id).await.unwrap();
        assert_eq!(done.status, TaskStatus::Completed);
        assert_eq!(done.created_at, task.created_at);
        // The result stays for the ttl: asked again, the same.
        assert_eq!(
            text(&client.task_result(&task.task_id).await.unwrap()),
            "through the gate"
        );
    })
    .await;
}

#[tokio::test]
async fn task_support_is_enforced_and_unknown_tasks_are_invalid_params() {
    each(async |t| {
        let setup = Setup::new(t).await;
        let client = setup.client().await;
        let plain_required = client
            .call_tool(CallToolParams::new("report"), Default::default())
            .await;
        assert_eq!(code(plain_required.unwrap_err()), -32601, "{t:?}");
        let forbidden_as_task = client
            .call_tool_as_task(CallToolParams::new("plain"), None, Default::default())
            .await;
        assert_eq!(code(forbidden_as_task.unwrap_err()), -32601);
        // Optional tools still run plainly, and the plain tool plainly.
        assert_eq!(
            text(
                &client
                    .call_tool(CallToolParams::new("plain"), Default::default())
                    .await
                    .unwrap()
            ),
            "plain"
        );
        for e in [
            client.get_task("no-such-task").await.unwrap_err(),
            client.task_result("no-such-task").await.unwrap_err(),
            client.cancel_task("no-such-task").await.unwrap_err(),
        ] {
            assert_eq!(code(e), -32602);
        }
        let bad_cursor = client
            .peer()
            .request::<junction::protocol::tasks::ListTasks>(
                &junction::protocol::meta::PaginatedParams::after("garbage"),
                Default::default(),
            )
            .await;
        assert_eq!(code(bad_cursor.unwrap_err()), -32602);
        // call_tool_auto runs a required tool as a task and reports its statuses.
        let mut statuses = Vec::new();
        let result = client
            .call_tool_auto(CallToolParams::new("report"), Default::default(), |task| {
                statuses.push(task.status)
            })
            .await
            .unwrap();
        assert_eq!(text(&result), "report ready");
        assert_eq!(statuses.first(), Some(&TaskStatus::Working));
        assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
    })
    .await;
}

#[tokio::test]
async fn a_tool_error_fails_the_task_with_the_same_result() {
    each(async |t| {
        let setup = Setup::new(t).await;
        let client = setup.client().await;
        let created = client
            .call_tool_as_task(CallToolParams::new("broken"), None, Default::default())
            .await
            .unwrap();
        let result = client
            .wait_for_task(&created.task, |_| {}, None)
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{t:?}");
        assert_eq!(text(&result), "the shelf is missing");
        assert_eq!(
            client.get_task(&created.task.task_id).await.unwrap().status,
            TaskStatus::Failed
        );
    })
    .await;
}

#[tokio::test]
async fn cancel_stops_the_handler_and_the_status_stays_cancelled() {
    each(async |t| {
        let setup = Setup::new(t).await;
        let client = setup.client().await;
        let created = client
            .call_tool_as_task(CallToolParams::new("slow"), None, Default::default())
            .await
            .unwrap();
        let id = created.task.task_id;
        let cancelled = client.cancel_task(&id).await.unwrap();
        assert_eq!(cancelled.status, TaskStatus::Cancelled, "{t:?}");
        // The handler was stopped though its gate stays shut.
        while !setup.probe.ended.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(code(client.cancel_task(&id).await.unwrap_err()), -32602);
        assert_eq!(
            client.get_task(&id).await.unwrap().status,
            TaskStatus::Cancelled
        );
        assert_eq!(code(client.task_result(&id).await.unwrap_err()), -32603);
    })
    .await;
}

#[tokio::test]
async fn a_cancellation_racing_completion_has_one_winner() {
    each(async |t| {
        let setup = Setup::new(t).await;
        let client = setup.client().await;
        let (mut won, mut lost) = (0, 0);
        for _ in 0..20 {
            let created = client
                .call_tool_as_task(CallToolParams::new("report"), None, Default::default())
                .await
                .unwrap();
            let id = created.task.task_id;
            match client.cancel_task(&id).await {
                Ok(task) => {
                    won += 1;
                    assert_eq!(task.status, TaskStatus::Cancelled);
                    assert_eq!(
                        client.get_task(&id).await.unwrap().status,
                        TaskStatus::Cancelled
                    );
                    assert_eq!(code(client.task_result(&id).await.unwrap_err()), -32603);
                }
                Err(e) => {
                    lost += 1;
                    assert_eq!(code(e), -32602);
                    assert_eq!(
                        client.get_task(&id).await.unwrap().status,
                        TaskStatus::Completed
                    );
                    assert_eq!(
                        text(&client.task_result(&id).await.unwrap()),
                        "report ready"
                    );
                }
            }
        }
        assert_eq!(won + lost, 20, "{t:?}");
    })
    .await;
}

#[tokio::test]
async fn input_required_while_the_handler_asks_and_the_request_names_its_task() {
    each(async |t| {
        let setup = Setup::new(t).await;
        let client = setup.client().await;
        let created = client
            .call_tool_as_task(CallToolParams::new("asks"), None, Default::default())
            .await
            .unwrap();
        let id = created.task.task_id.clone();
        let mut statuses = Vec::new();
        let result = client
            .wait_for_task(&created.task, |task| statuses.push(task.status), None)
            .await
            .unwrap();
        assert_eq!(text(&result), "Some(String(\"Ada\"))", "{t:?}");
        let seen = setup.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0][RELATED_TASK_META]["taskId"], id.as_str());
        assert_eq!(
            client.get_task(&id).await.unwrap().status,
            TaskStatus::Completed
        );
    })
    .await;
}

#[tokio::test]
async fn another_session_can_neither_see_read_nor_cancel_a_task() {
    // Over HTTP, each client is its own session of the one server.
    let setup = Setup::new(Transport::Http).await;
    let owner = setup.client().await;
    let other = setup.client().await;
    let created = owner
        .call_tool_as_task(CallToolParams::new("slow"), None, Default::default())
        .await
        .unwrap();
    let id = created.task.task_id;
    assert_eq!(code(other.get_task(&id).await.unwrap_err()), -32602);
    assert_eq!(code(other.task_result(&id).await.unwrap_err()), -32602);
    assert_eq!(code(other.cancel_task(&id).await.unwrap_err()), -32602);
    assert!(other.list_tasks().await.unwrap().is_empty());
    assert_eq!(
        owner.get_task(&id).await.unwrap().status,
        TaskStatus::Working
    );
    assert_eq!(owner.list_tasks().await.unwrap().len(), 1);
    owner.cancel_task(&id).await.unwrap();
}

/// A client speaking 2026-07-28 that declares the tasks extension.
fn extension(seen: &Seen) -> ClientOptions {
    options(seen)
        .version(junction::protocol::ProtocolVersion::V2026_07_28)
        .tasks()
}

#[tokio::test]
async fn on_2026_07_28_the_server_runs_a_busy_call_as_a_task_and_the_client_follows_it() {
    each(async |transport| {
        let setup = Setup::new(transport).await;
        let client = setup.client_with(extension(&setup.seen)).await;
        // Its question is asked through the task's inputRequests, answered by tasks/update.
        let result = client
            .call_tool(CallToolParams::new("later"), Default::default())
            .await
            .unwrap();
        assert_eq!(
            text(&result),
            r#"as a task: true; Some(String("Ada"))"#,
            "{transport:?}"
        );
        // A handler done at its first poll answers at once, as a plain call.
        let plain = client
            .call_tool(CallToolParams::new("report"), Default::default())
            .await
            .unwrap();
        assert_eq!(text(&plain), "report ready");

        let without = setup
            .client_with(
                options(&setup.seen).version(junction::protocol::ProtocolVersion::V2026_07_28),
            )
            .await;
        let refused = without
            .call_tool(CallToolParams::new("report"), Default::default())
            .await
            .unwrap_err();
        // -32021, explained by the client.
        assert!(
            matches!(&refused, RequestError::NotSupported { .. })
                && refused
                    .to_string()
                    .contains("io.modelcontextprotocol/tasks"),
            "a required tool needs the extension: {refused}"
        );
        let untasked = without
            .call_tool(CallToolParams::new("later"), Default::default())
            .await
            .unwrap();
        assert_eq!(text(&untasked), r#"as a task: false; Some(String("Ada"))"#);
    })
    .await;
}

#[tokio::test]
async fn on_2026_07_28_cancelling_a_followed_call_cancels_its_task() {
    each(async |transport| {
        let setup = Setup::new(transport).await;
        let client = setup.client_with(extension(&setup.seen)).await;
        let cancel = tokio_util::sync::CancellationToken::new();
        let options = junction::session::RequestOptions {
            cancel: Some(cancel.clone()),
            ..Default::default()
        };
        let call =
            tokio::spawn(
                async move { client.call_tool(CallToolParams::new("slow"), options).await },
            );
        // The handler is running on as a task (it waits for the gate) when the call is cancelled.
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
        let outcome = call.await.unwrap();
        assert!(
            matches!(outcome, Err(RequestError::Cancelled { .. })),
            "{outcome:?}"
        );
        for _ in 0..200 {
            if setup.probe.ended.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{transport:?}: tasks/cancel did not stop the handler");
    })
    .await;
}

/// A client connected to `server` over a socket pair through a tap that keeps the method
/// of every message the client sends.
async fn tapped_client(server: &Server) -> (Client, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (client_end, tap_in) = tokio::net::UnixStream::pair().unwrap();
    let (tap_out, server_end) = tokio::net::UnixStream::pair().unwrap();
    let (r, w) = server_end.into_split();
    server.serve(junction::transport::stdio::connect(
        r,
        w,
        Default::default(),
    ));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let (tap_in_r, mut tap_in_w) = tap_in.into_split();
    let (mut tap_out_r, mut tap_out_w) = tap_out.into_split();
    let record = sent.clone();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(tap_in_r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) {
                if let Some(method) = message["method"].as_str() {
                    record.lock().unwrap().push(method.to_owned());
                }
            }
            if tap_out_w
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    tokio::spawn(async move { tokio::io::copy(&mut tap_out_r, &mut tap_in_w).await });
    let (r, w) = client_end.into_split();
    let connection = junction::transport::stdio::connect(r, w, Default::default());
    let client = Client::connect(connection, ClientOptions::new("tasks-client", "1.0.0"))
        .await
        .unwrap();
    (client, sent)
}

#[tokio::test]
async fn wait_for_task_follows_status_notifications_between_polls() {
    let gate = Arc::new(Semaphore::new(0));
    let waits = gate.clone();
    let server = Server::builder("tasks-test", "1.0.0")
        .tool(
            tool("gated", move |ctx: Context, _: Nothing| {
                let waits = waits.clone();
                async move {
                    ctx.task_status("waiting for the gate");
                    if let Ok(permit) = waits.acquire().await {
                        permit.forget();
                    }
                    "through the gate"
                }
            })
            .task_support(TaskSupport::Optional),
        )
        // Polls an hour apart (the client waits at most 30 s): what the client learns in
        // between comes from notifications/tasks/status.
        .tasks(TaskSettings::default().poll_interval(Duration::from_secs(3600)))
        .build()
        .unwrap();
    let (client, sent) = tapped_client(&server).await;
    let created = client
        .call_tool_as_task(CallToolParams::new("gated"), None, Default::default())
        .await
        .unwrap();
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let record = statuses.clone();
    let opened = gate.clone();
    let waited = client.wait_for_task(
        &created.task,
        move |task| {
            record
                .lock()
                .unwrap()
                .push((task.status, task.status_message.clone()));
            // The gate opens once the client has heard what the task waits for.
            if task.status_message.as_deref() == Some("waiting for the gate") {
                opened.add_permits(1);
            }
        },
        None,
    );
    let result = tokio::time::timeout(Duration::from_secs(25), waited)
        .await
        .expect("the task was followed by its notifications, not by 30 s polls")
        .unwrap();
    assert_eq!(text(&result), "through the gate");
    let statuses = statuses.lock().unwrap().clone();
    assert_eq!(
        statuses.last().map(|s| s.0),
        Some(TaskStatus::Completed),
        "{statuses:?}"
    );
    let sent = sent.lock().unwrap().clone();
    assert!(
        !sent.iter().any(|m| m == "tasks/get"),
        "no poll was needed: {sent:?}"
    );
    assert!(sent.iter().any(|m| m == "tasks/result"), "{sent:?}");
}
