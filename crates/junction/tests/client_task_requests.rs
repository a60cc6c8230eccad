//! The client running the server's requests as tasks (2025-11-25): Junction's server asks
//! Junction's client for a task-augmented `sampling/createMessage` or `elicitation/create`
//! and follows it with the task methods, over the in-memory transport and over a stdio
//! framing on a real socket pair.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use junction::client::{Client, ClientOptions, Elicitation, HandlerError, Sampling};
use junction::protocol::elicitation::{
    ElicitResult, ElicitValue, FormParams, PrimitiveSchemaDefinition, RequestedSchema,
};
use junction::protocol::sampling::{CreateMessageParams, CreateMessageResult};
use junction::protocol::tools::CallToolParams;
use junction::server::task::TaskSettings;
use junction::server::{tool, Context, Server};
use junction::session::RequestOptions;
use junction::transport::{memory, Connection};
use junction::RequestError;
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// A request the tool `ask` sends to the client as it is.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Raw {
    method: String,
    params: Value,
}

/// What the tools `sample` and `elicit` ask as a task.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Question {
    text: String,
}

/// `ask`: the client's answer to `method` with `params`, as JSON text; its error as
/// `code: message`.
async fn ask(ctx: Context, raw: Raw) -> Result<String, String> {
    let params = serde_json::value::to_raw_value(&raw.params).map_err(|e| e.to_string())?;
    match ctx
        .request()
        .peer()
        .request_raw(&raw.method, Some(params), Default::default())
        .await
    {
        Ok(answer) => Ok(answer.get().to_owned()),
        Err(RequestError::Remote { error, .. }) => {
            Err(format!("{}: {}", error.code.0, error.message))
        }
        Err(other) => Err(other.to_string()),
    }
}

fn sampling_params(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 50})
}

fn server() -> Server {
    Server::builder("asks-the-client", "1.0.0")
        .tool(tool("ask", ask))
        .tool(tool("sample", |ctx: Context, q: Question| async move {
            let params: CreateMessageParams =
                serde_json::from_value(sampling_params(&q.text)).map_err(|e| e.to_string())?;
            let result = ctx
                .create_message_as_task(params, Some(60_000))
                .await
                .map_err(|e| e.to_string())?;
            serde_json::to_string(&result).map_err(|e| e.to_string())
        }))
        .tool(tool("elicit", |ctx: Context, q: Question| async move {
            let schema =
                RequestedSchema::new().required("name", PrimitiveSchemaDefinition::string());
            let form = FormParams::new(q.text, schema);
            let result = ctx
                .elicit_as_task(form, None)
                .await
                .map_err(|e| e.to_string())?;
            serde_json::to_string(&result).map_err(|e| e.to_string())
        }))
        .build()
        .unwrap()
}

/// What the client's sampling handler lets a test see and steer: it answers once a permit
/// is given (a person answering), refuses a message saying "refuse", and sets `ended` when
/// it returns or is stopped.
#[derive(Clone)]
struct Person {
    gate: Arc<Semaphore>,
    /// It was asked.
    started: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    /// Its context's cancellation token fired.
    cancelled: Arc<AtomicBool>,
}

impl Default for Person {
    fn default() -> Self {
        Person {
            gate: Arc::new(Semaphore::new(0)),
            started: Arc::default(),
            ended: Arc::default(),
            cancelled: Arc::default(),
        }
    }
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn options(person: &Person, tasks: bool) -> ClientOptions {
    let sampling = {
        let person = person.clone();
        Sampling::new(move |params: CreateMessageParams, ctx| {
            let person = person.clone();
            async move {
                let _ended = SetOnDrop(person.ended.clone());
                person.started.store(true, Ordering::SeqCst);
                let token = ctx.cancellation();
                let cancelled = person.cancelled.clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    cancelled.store(true, Ordering::SeqCst);
                });
                let text = params.messages[0].content.blocks()[0]
                    .as_text()
                    .unwrap_or_default()
                    .to_owned();
                if text == "refuse" {
                    return Err(HandlerError::rejected("the person said no"));
                }
                if let Ok(permit) = person.gate.acquire().await {
                    permit.forget();
                }
                Ok(CreateMessageResult::text("person", format!("re: {text}")))
            }
        })
    };
    let elicitation = Elicitation::form(|_, _| async {
        Ok(ElicitResult::accept(BTreeMap::from([(
            "name".to_owned(),
            ElicitValue::from("Ada"),
        )])))
    });
    let options = ClientOptions::new("answers-as-tasks", "1.0.0")
        .sampling(sampling)
        .elicitation(elicitation);
    if tasks {
        options.task_requests(
            TaskSettings::default()
                .max_ttl(Duration::from_secs(120))
                .poll_interval(Duration::from_millis(20)),
        )
    } else {
        options
    }
}

#[derive(Clone, Copy, Debug)]
enum Transport {
    Memory,
    Stdio,
}

fn connect(transport: Transport, server: &Server) -> Connection {
    match transport {
        Transport::Memory => {
            let (ours, theirs) = memory::pair(Default::default());
            server.serve(theirs);
            ours
        }
        Transport::Stdio => {
            let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
            let (r, w) = theirs.into_split();
            server.serve(junction::transport::stdio::connect(
                r,
                w,
                Default::default(),
            ));
            let (r, w) = ours.into_split();
            junction::transport::stdio::connect(r, w, Default::default())
        }
    }
}

async fn client(transport: Transport, person: &Person, tasks: bool) -> Arc<Client> {
    let client = Client::connect(connect(transport, &server()), options(person, tasks));
    Arc::new(client.await.unwrap())
}

/// The client's answer to `method` with `params`, asked by the server: its result, or its
/// error as `code: message`.
async fn asked(client: &Client, method: &str, params: Value) -> Result<Value, String> {
    let call = CallToolParams::new("ask")
        .argument("method", method)
        .argument("params", params);
    let result = client.call_tool(call, Default::default()).await.unwrap();
    let text = result.content[0].as_text().unwrap().to_owned();
    if result.failed() {
        Err(text)
    } else {
        Ok(serde_json::from_str(&text).unwrap())
    }
}

/// The client's answer to a `sampling/createMessage` of `text` with `task`: its handle.
async fn sample_as_task(client: &Client, text: &str, task: Value) -> Value {
    let mut params = sampling_params(text);
    params["task"] = task;
    asked(client, "sampling/createMessage", params)
        .await
        .unwrap()
}

/// The status of the client's task `id`, as `tasks/get` gives it to the server.
async fn status(client: &Client, id: &str) -> Value {
    let got = asked(client, "tasks/get", json!({"taskId": id})).await;
    got.unwrap()["status"].clone()
}

async fn each(test: impl AsyncFn(Transport)) {
    for transport in [Transport::Memory, Transport::Stdio] {
        tokio::time::timeout(Duration::from_secs(30), test(transport))
            .await
            .unwrap_or_else(|_| panic!("{transport:?}: timed out"));
    }
}

async fn until(condition: impl Fn() -> bool) {
    while !condition() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn the_client_declares_the_task_requests_of_its_handlers() {
    let person = Person::default();
    assert_eq!(
        serde_json::to_value(options(&person, true).capabilities()).unwrap()["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}})
    );
    assert!(options(&person, false).capabilities().tasks.is_none());
}

#[tokio::test]
async fn a_task_augmented_sampling_request_is_answered_with_a_task_and_then_exactly_its_result() {
    each(async |t| {
        let person = Person::default();
        let client = client(t, &person, true).await;
        let created = sample_as_task(&client, "hello", json!({"ttl": 60_000})).await;
        let task = &created["task"];
        assert_eq!(task["status"], "working", "{t:?}: {created}");
        assert_eq!(task["ttl"], 60_000);
        assert_eq!(task["pollInterval"], 20);
        let id = task["taskId"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
        assert!(!person.ended.load(Ordering::SeqCst), "the handler runs on");

        assert_eq!(status(&client, &id).await, "working");
        let listed = asked(&client, "tasks/list", json!({})).await.unwrap();
        assert_eq!(listed["tasks"][0]["taskId"], id.as_str());

        let waiting = {
            let client = client.clone();
            let id = id.clone();
            tokio::spawn(async move { asked(&client, "tasks/result", json!({"taskId": id})).await })
        };
        person.gate.add_permits(1);
        let result = waiting.await.unwrap().unwrap();
        assert_eq!(
            result,
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": "re: hello"},
                "model": "person",
                "stopReason": "endTurn",
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}
            })
        );
        assert_eq!(status(&client, &id).await, "completed");
        let unknown = asked(&client, "tasks/get", json!({"taskId": "nope"})).await;
        assert!(unknown.unwrap_err().starts_with("-32602"));
    })
    .await;
}

#[tokio::test]
async fn a_refused_request_fails_its_task_with_the_same_error() {
    each(async |t| {
        let person = Person::default();
        let client = client(t, &person, true).await;
        let plain = asked(&client, "sampling/createMessage", sampling_params("refuse")).await;
        let created = sample_as_task(&client, "refuse", json!({})).await;
        let id = created["task"]["taskId"].as_str().unwrap().to_owned();
        let result = asked(&client, "tasks/result", json!({"taskId": id})).await;
        assert_eq!(result, plain, "{t:?}");
        assert!(result
            .unwrap_err()
            .starts_with("-1: sampling/createMessage failed"));
        assert_eq!(status(&client, &id).await, "failed");
    })
    .await;
}

#[tokio::test]
async fn params_the_handler_cannot_take_are_refused_at_once_without_a_task() {
    each(async |t| {
        let person = Person::default();
        let client = client(t, &person, true).await;
        let mut params = sampling_params("use a tool");
        params["tools"] = json!([{"name": "search", "inputSchema": {"type": "object"}}]);
        params["task"] = json!({});
        let refused = asked(&client, "sampling/createMessage", params).await;
        let refused = refused.unwrap_err();
        assert!(refused.starts_with("-32602"), "{t:?}: {refused}");
        assert!(refused.contains("sampling.tools"), "{refused}");
        let broken = asked(&client, "elicitation/create", json!({"task": {}})).await;
        assert!(broken.unwrap_err().starts_with("-32602"));
        let listed = asked(&client, "tasks/list", json!({})).await.unwrap();
        assert_eq!(listed["tasks"], json!([]));
        assert!(!person.started.load(Ordering::SeqCst));
    })
    .await;
}

#[tokio::test]
async fn tasks_cancel_stops_the_handler_and_the_task_stays_cancelled() {
    each(async |t| {
        let person = Person::default();
        let client = client(t, &person, true).await;
        let created = sample_as_task(&client, "hello", json!({"ttl": 60_000})).await;
        let id = created["task"]["taskId"].as_str().unwrap().to_owned();
        until(|| person.started.load(Ordering::SeqCst)).await;
        let cancelled = asked(&client, "tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(cancelled["status"], "cancelled", "{t:?}: {cancelled}");
        until(|| person.ended.load(Ordering::SeqCst) && person.cancelled.load(Ordering::SeqCst))
            .await;
        person.gate.add_permits(1);
        assert_eq!(status(&client, &id).await, "cancelled");
        let again = asked(&client, "tasks/cancel", json!({"taskId": id})).await;
        assert!(again.unwrap_err().starts_with("-32602"));
        assert!(asked(&client, "tasks/result", json!({"taskId": id}))
            .await
            .is_err());
    })
    .await;
}

#[tokio::test]
async fn the_server_framework_follows_the_clients_task_to_its_result() {
    each(async |t| {
        let person = Person::default();
        let client = client(t, &person, true).await;
        person.gate.add_permits(1);
        let call = CallToolParams::new("sample").argument("text", "poll me");
        let result = client.call_tool(call, Default::default()).await.unwrap();
        let text = result.content[0].as_text().unwrap();
        let sampled: Value = serde_json::from_str(text).unwrap();
        assert_eq!(sampled["content"]["text"], "re: poll me", "{t:?}: {text}");
        assert_eq!(sampled["model"], "person");

        let call = CallToolParams::new("elicit").argument("text", "Your name?");
        let result = client.call_tool(call, Default::default()).await.unwrap();
        let elicited: Value = serde_json::from_str(result.content[0].as_text().unwrap()).unwrap();
        assert_eq!(elicited["action"], "accept");
        assert_eq!(elicited["content"]["name"], "Ada");
        let listed = asked(&client, "tasks/list", json!({})).await.unwrap();
        let statuses: Vec<&Value> = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|task| &task["status"])
            .collect();
        assert_eq!(statuses, [&json!("completed"), &json!("completed")]);
    })
    .await;
}

#[tokio::test]
async fn cancelling_the_tool_call_cancels_the_clients_task() {
    each(async |t| {
        let person = Person::default();
        let client = client(t, &person, true).await;
        let cancel = CancellationToken::new();
        let call = {
            let client = client.clone();
            let options = RequestOptions {
                cancel: Some(cancel.clone()),
                ..Default::default()
            };
            tokio::spawn(async move {
                let call = CallToolParams::new("sample").argument("text", "never mind");
                client.call_tool(call, options).await
            })
        };
        until(|| person.started.load(Ordering::SeqCst)).await;
        let listed = asked(&client, "tasks/list", json!({})).await.unwrap();
        let id = listed["tasks"][0]["taskId"].as_str().unwrap().to_owned();
        cancel.cancel();
        assert!(matches!(
            call.await.unwrap(),
            Err(RequestError::Cancelled { .. })
        ));
        until(|| person.cancelled.load(Ordering::SeqCst)).await;
        assert!(person.ended.load(Ordering::SeqCst), "{t:?}");
        assert_eq!(status(&client, &id).await, "cancelled");
    })
    .await;
}

#[tokio::test]
async fn a_request_without_task_is_answered_as_before() {
    each(async |t| {
        let person = Person::default();
        person.gate.add_permits(2);
        let client = client(t, &person, true).await;
        let plain = asked(&client, "sampling/createMessage", sampling_params("plain"))
            .await
            .unwrap();
        assert_eq!(
            plain,
            json!({"role": "assistant", "content": {"type": "text", "text": "re: plain"}, "model": "person", "stopReason": "endTurn"}),
            "{t:?}"
        );
        let listed = asked(&client, "tasks/list", json!({})).await.unwrap();
        assert_eq!(listed["tasks"], json!([]));

        // A client that does not take tasks answers a task-augmented request plainly, and
        // has no task methods.
        let client = client_without_tasks(t, &person).await;
        let mut params = sampling_params("plain");
        params["task"] = json!({"ttl": 1000});
        let answered = asked(&client, "sampling/createMessage", params).await.unwrap();
        assert_eq!(answered["content"]["text"], "re: plain");
        let get = asked(&client, "tasks/get", json!({"taskId": "x"})).await;
        assert!(get.unwrap_err().starts_with("-32601"));
        let sampled = client
            .call_tool(
                CallToolParams::new("sample").argument("text", "as a task"),
                Default::default(),
            )
            .await
            .unwrap();
        assert!(sampled.failed());
        assert!(
            sampled.content[0]
                .as_text()
                .unwrap()
                .contains("tasks.requests.sampling.createMessage"),
            "{sampled:?}"
        );
    })
    .await;
}

async fn client_without_tasks(t: Transport, person: &Person) -> Arc<Client> {
    client(t, person, false).await
}
