//! The task methods of both families, and the start of a task: a task-augmented
//! `tools/call` on the handshake family, the server's decision on 2026-07-28.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use junction_protocol::capabilities::ClientCapabilities;
use junction_protocol::meta::{EmptyResult, PaginatedParams};
use junction_protocol::stateless::ResultType;
use junction_protocol::task_extension::{DetailedTask, UpdateTaskParams, TASKS_EXTENSION};
use junction_protocol::tasks::{
    CreateTaskResult, GetTaskPayloadResult, ListTasksResult, TaskIdParams, TaskResult, TaskStatus,
};
use junction_protocol::tools::{CallToolResult, TaskSupport};
use junction_protocol::version::Family;
use junction_protocol::{ErrorObject, ProtocolVersion};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{TaskOutcome, TaskRecord, Tasks};
use crate::server::registry::RegisteredTool;
use crate::server::revision;
use crate::server::route::Served;
use crate::server::stateless::{missing_capability, with_server_info, Answer, Placed, ServerInfo};
use crate::server::CacheScope;
use crate::session::{BoxFuture, Peer, RequestContext};

/// A key for a session that no other session of this process, or of a process after it
/// sharing the same store, gets. A session that instances share is keyed by its
/// `MCP-Session-Id` instead, the same on every instance.
fn session_key() -> String {
    static PROCESS: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let process =
        PROCESS.get_or_init(|| super::new_id().unwrap_or_else(|_| format!("t{}", super::now_ms())));
    format!("{process}.{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Who the caller is, for the tasks it may see: its identity when it has one; else, on
/// the handshake family, its session; on 2026-07-28 (no sessions) whoever holds the task's
/// id, which is 128 random bits.
fn owner(s: &Served) -> String {
    let session = &s.router.session;
    #[cfg(feature = "http-server")]
    if let Some(identity) = &session.identity {
        return format!(
            "identity:{}#{}",
            identity.issuer.as_deref().unwrap_or(""),
            identity.subject
        );
    }
    match s.family {
        Family::Handshake => format!("session:{}", session.key.get_or_init(session_key)),
        Family::Stateless => "anyone".to_owned(),
    }
}

/// The tasks, for a task method of the handshake family; on 2026-07-28 for a client that
/// declared the tasks extension on this request (-32021 otherwise).
fn tasks(s: &Served, method: &str) -> Result<Arc<Tasks>, ErrorObject> {
    if !s.router.server.registry.offers_tasks() {
        return Err(ErrorObject::method_not_found(method));
    }
    if s.family == Family::Stateless && !extension_declared(s) {
        return Err(extension_missing());
    }
    Ok(s.router.server.registry.tasks.clone())
}

/// Whether this 2026-07-28 request declares the tasks extension.
pub(in crate::server) fn extension_declared(s: &Served) -> bool {
    s.call.as_ref().is_some_and(|call| {
        call.client
            .capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
    })
}

/// -32021: the request must declare the tasks extension.
pub(in crate::server) fn extension_missing() -> ErrorObject {
    let mut extensions = Map::new();
    extensions.insert(TASKS_EXTENSION.to_owned(), Value::Object(Map::new()));
    missing_capability(&ClientCapabilities::default().with_extension(TASKS_EXTENSION, Map::new()))
}

/// A handler's run: what it answers, or its panic.
type Run = BoxFuture<'static, CallToolResult>;

/// Runs task `id`'s handler to its end and records the outcome, unless the task is
/// cancelled first (the handler is then dropped) or, with `session`, the session that
/// created it ends. A handler that panics fails its task with -32603.
async fn run(
    tasks: Arc<Tasks>,
    id: String,
    handler: Run,
    cancel: CancellationToken,
    version: ProtocolVersion,
    session: Option<Peer>,
) {
    let mut handler = tokio::spawn(handler);
    let closed = async {
        match &session {
            Some(peer) => peer.closed().await,
            None => std::future::pending().await,
        }
    };
    let joined = tokio::select! {
        joined = &mut handler => joined,
        () = cancel.cancelled() => {
            handler.abort();
            return;
        }
        // Nobody else may read a session's tasks: when it ends, so do they.
        () = closed => {
            handler.abort();
            tasks.finish(&id, TaskStatus::Failed, TaskOutcome::Error(ErrorObject::internal("The session that created the task ended")));
            return;
        }
    };
    let result = match joined {
        Ok(result) => revision::call_result(version, result),
        Err(e) => {
            tracing::error!(task = %id, "the task's handler panicked: {e}");
            let error =
                ErrorObject::internal("The tool's handler failed unexpectedly (it panicked)");
            tasks.finish(&id, TaskStatus::Failed, TaskOutcome::Error(error));
            return;
        }
    };
    tasks.finish(&id, ended(version, &result), outcome(&result));
}

/// The status a tool's result ends its task with: on the handshake family a result with
/// `isError` fails it; in the 2026-07-28 extension `failed` is kept for JSON-RPC errors.
fn ended(version: ProtocolVersion, result: &CallToolResult) -> TaskStatus {
    if result.is_error == Some(true) && version.family() == Family::Handshake {
        TaskStatus::Failed
    } else {
        TaskStatus::Completed
    }
}

fn outcome(result: &CallToolResult) -> TaskOutcome {
    match serde_json::to_value(result) {
        Ok(Value::Object(map)) => TaskOutcome::Result(map),
        _ => TaskOutcome::Error(ErrorObject::internal("could not encode the tool's result")),
    }
}

/// Starts `tool` as a task of the caller (handshake family, task-augmented `tools/call`)
/// and answers with its handle; the handler runs on in its own tokio task with its own
/// cancellation token.
pub(in crate::server) async fn start(
    s: Served,
    tool: Arc<RegisteredTool>,
    args: Value,
    ttl: Option<u64>,
) -> Result<CreateTaskResult, ErrorObject> {
    let tasks = s.router.server.registry.tasks.clone();
    let session = s.router.session.clone();
    let owner = owner(&s);
    let peer = s.request.peer().clone();
    let cancel = CancellationToken::new();
    let record = tasks.create(
        &owner,
        "tools/call",
        ttl,
        cancel.clone(),
        Some(peer.clone()),
    )?;
    tasks.created(&record).await;
    let id = record.id().to_owned();
    let request = RequestContext::new(
        s.request.id().clone(),
        s.request.progress_token().cloned(),
        cancel.clone(),
        peer.clone(),
    );
    // A session that instances share lives on after this instance's copy of it idles out
    // (its client may be served by another instance all along): only a session of this
    // process alone ends its tasks when it closes.
    let shared = session.shared.load(std::sync::atomic::Ordering::SeqCst);
    let context =
        crate::server::Context::new(request, session, s.router.server.clone()).in_task(id.clone());
    let bound_to_session = owner.starts_with("session:") && !shared;
    tracing::debug!(task = %id, tool = %tool.tool.name, "task created");
    let run_it = crate::server::layer::run(tool, args, context);
    tokio::spawn(run(
        tasks,
        id,
        run_it,
        cancel,
        s.version,
        bound_to_session.then_some(peer),
    ));
    Ok(CreateTaskResult::new(record.task))
}

/// A 2026-07-28 `tools/call` of a tool that may run as a task, from a client that declared
/// the extension: the server decides. The handler is polled once: one that is done by then
/// answers at once (unless the tool must run as a task); one that asked the client for
/// input goes through the multi round-trip rounds as a plain call; any other becomes a
/// task, its handle answered, the same handler running on (its later input requests are
/// the task's `inputRequests`).
pub(in crate::server) async fn decide(
    s: Served,
    tool: Arc<RegisteredTool>,
    args: Value,
) -> Result<ToolAnswer, ErrorObject> {
    let call = s
        .call
        .clone()
        .ok_or_else(|| ErrorObject::internal("a 2026-07-28 request without its envelope"))?;
    let version = s.version;
    let support = tool.tool.task_support_or_default();
    let tasks = s.router.server.registry.tasks.clone();
    let owner = owner(&s);
    // The handler's own token: a task outlives the request that created it.
    let cancel = CancellationToken::new();
    let request_cancelled = s.request.cancellation();
    let request = RequestContext::new(
        s.request.id().clone(),
        s.request.progress_token().cloned(),
        cancel.clone(),
        s.request.peer().clone(),
    );
    let context = crate::server::Context::stateless(
        request,
        s.router.session.clone(),
        s.router.server.clone(),
        call.clone(),
    );
    let mut running = crate::server::layer::run(tool, args, context);
    let first = std::future::poll_fn(|cx| Poll::Ready(running.as_mut().poll(cx))).await;
    let done = match first {
        Poll::Ready(result) => Some(result),
        Poll::Pending if call.rounds.asked() => {
            let result = tokio::select! {
                result = &mut running => result,
                () = request_cancelled.cancelled() => {
                    cancel.cancel();
                    running.await
                }
            };
            return Ok(ToolAnswer::Done(revision::call_result(version, result)));
        }
        Poll::Pending => None,
    };
    if let (Some(result), TaskSupport::Optional) = (&done, support) {
        return Ok(ToolAnswer::Done(revision::call_result(
            version,
            result.clone(),
        )));
    }
    let mut record = tasks.create(&owner, "tools/call", None, cancel.clone(), None)?;
    tasks.created(&record).await;
    let id = record.id().to_owned();
    if let Some(message) = call.promote(&id) {
        tasks.set_status(&id, TaskStatus::Working, Some(message.clone()));
        record.task.status_message = Some(message);
    }
    tracing::debug!(task = %id, "the call runs on as a task");
    match done {
        Some(result) => {
            let result = revision::call_result(version, result);
            tasks.finish(&id, ended(version, &result), outcome(&result));
        }
        None => {
            tokio::spawn(run(tasks, id, running, cancel, version, None));
        }
    }
    Ok(ToolAnswer::Handle(detailed(record).created()))
}

/// A task as the 2026-07-28 extension shows it, with the payload of its status.
fn detailed(record: TaskRecord) -> DetailedTask {
    let task = record.task;
    let mut detailed = DetailedTask::new(task.task_id, task.status, task.created_at);
    detailed.status_message = task.status_message;
    detailed.last_updated_at = task.last_updated_at;
    detailed.ttl_ms = task.ttl;
    detailed.poll_interval_ms = task.poll_interval;
    match (task.status, record.outcome) {
        (TaskStatus::InputRequired, _) => detailed.input_requests = Some(record.input_requests),
        (TaskStatus::Completed, Some(TaskOutcome::Result(result))) => {
            detailed.result = Some(result);
        }
        (TaskStatus::Failed, Some(TaskOutcome::Error(error))) => detailed.error = Some(error),
        (TaskStatus::Failed, _) => {
            detailed.error = Some(ErrorObject::internal("The task failed"));
        }
        _ => {}
    }
    detailed
}

/// `tasks/get`.
pub(in crate::server) async fn get(s: Served, p: TaskIdParams) -> Result<TaskAnswer, ErrorObject> {
    let tasks = tasks(&s, "tasks/get")?;
    let record = tasks.find(&owner(&s), &p.task_id).await?;
    Ok(match s.family {
        Family::Handshake => TaskAnswer::Task(record.task.into()),
        Family::Stateless => TaskAnswer::Detailed(detailed(record)),
    })
}

/// `tasks/update` (2026-07-28): answers what the task waits for.
pub(in crate::server) async fn update(
    s: Served,
    p: UpdateTaskParams,
) -> Result<EmptyResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/update")?;
    tasks
        .answer(&owner(&s), &p.task_id, p.input_responses)
        .await?;
    Ok(EmptyResult::default())
}

/// `tasks/result`: blocks until the task is terminal, then answers what the request would
/// have, tagged with the task.
pub(in crate::server) async fn result(
    s: Served,
    p: TaskIdParams,
) -> Result<GetTaskPayloadResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/result")?;
    tasks.payload(&owner(&s), &p.task_id, s.request.id()).await
}

/// `tasks/list`: the caller's tasks, oldest first; the cursor is the last one's position.
pub(in crate::server) async fn list(
    s: Served,
    p: PaginatedParams,
) -> Result<ListTasksResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/list")?;
    let size = s.router.server.registry.page_size;
    tasks.list(&owner(&s), p.cursor.as_deref(), size).await
}

/// `tasks/cancel`: on the handshake family the cancelled task, -32602 for one that had
/// ended; on 2026-07-28 an acknowledgement either way.
pub(in crate::server) async fn cancel(
    s: Served,
    p: TaskIdParams,
) -> Result<TaskAnswer, ErrorObject> {
    let tasks = tasks(&s, "tasks/cancel")?;
    match (tasks.cancel(&owner(&s), &p.task_id).await?, s.family) {
        (_, Family::Stateless) => Ok(TaskAnswer::Ack(EmptyResult::default())),
        (cancelled, Family::Handshake) => Ok(TaskAnswer::Task(cancelled.task(&p.task_id)?.into())),
    }
}

/// What `tasks/get` and `tasks/cancel` answer.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(in crate::server) enum TaskAnswer {
    /// The task (handshake family).
    Task(TaskResult),
    /// The task with its payload (2026-07-28).
    Detailed(DetailedTask),
    /// An acknowledgement (2026-07-28 `tasks/cancel`).
    Ack(EmptyResult),
}

impl Answer for TaskAnswer {
    fn stamp(&mut self, server_info: &ServerInfo, cache: Option<(u64, CacheScope)>) -> Placed {
        match self {
            TaskAnswer::Task(_) => Placed::Done,
            TaskAnswer::Detailed(task) => task.stamp(server_info, cache),
            TaskAnswer::Ack(ack) => ack.stamp(server_info, cache),
        }
    }
}

impl Answer for DetailedTask {
    fn stamp(&mut self, server_info: &ServerInfo, _: Option<(u64, CacheScope)>) -> Placed {
        self.result_type.get_or_insert(ResultType::Complete);
        with_server_info(&mut self.meta, server_info)
    }
}

/// What `tools/call` answers: the result, or a task's handle.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(in crate::server) enum ToolAnswer {
    /// The tool ran.
    Done(CallToolResult),
    /// The tool runs as a task (handshake family).
    Task(CreateTaskResult),
    /// The tool runs as a task (2026-07-28 extension).
    Handle(DetailedTask),
}

impl Answer for ToolAnswer {
    fn stamp(&mut self, server_info: &ServerInfo, cache: Option<(u64, CacheScope)>) -> Placed {
        match self {
            ToolAnswer::Done(r) => r.stamp(server_info, cache),
            ToolAnswer::Task(r) => with_server_info(&mut r.meta, server_info),
            ToolAnswer::Handle(task) => task.stamp(server_info, cache),
        }
    }

    fn failed(&self) -> bool {
        matches!(self, ToolAnswer::Done(r) if r.failed())
    }
}

/// `tasks/result` and `tasks/list` are not served on 2026-07-28; these only satisfy the
/// route's bound.
macro_rules! unstamped {
    ($($t:ty),*) => {$(
        impl Answer for $t {
            fn stamp(&mut self, _: &ServerInfo, _: Option<(u64, CacheScope)>) -> Placed {
                Placed::Done
            }
        }
    )*};
}

unstamped!(ListTasksResult, Map<String, Value>);
