//! The task methods of the handshake family, and the start of a task-augmented `tools/call`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use junction_protocol::meta::{Meta, PaginatedParams};
use junction_protocol::tasks::{
    CreateTaskResult, GetTaskPayloadResult, ListTasksResult, RelatedTaskMetadata, TaskIdParams,
    TaskResult, TaskStatus,
};
use junction_protocol::tools::CallToolResult;
use junction_protocol::version::Family;
use junction_protocol::ErrorObject;
use serde_json::{Map, Value};

use super::{TaskOutcome, Tasks};
use crate::server::registry::{RegisteredTool, SessionState};
use crate::server::revision;
use crate::server::route::Served;
use crate::server::stateless::{with_server_info, Answer};
use crate::server::CacheScope;
use crate::session::RequestContext;

/// A key for a session that no other session of this process, or of a process after it
/// sharing the same store, gets.
pub(in crate::server) fn session_key() -> String {
    static PROCESS: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let process =
        PROCESS.get_or_init(|| super::new_id().unwrap_or_else(|_| format!("t{}", super::now_ms())));
    format!("{process}.{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Who the caller is, for the tasks it may see.
fn owner(session: &SessionState) -> String {
    match &session.identity {
        Some(identity) => format!(
            "identity:{}#{}",
            identity.issuer.as_deref().unwrap_or(""),
            identity.subject
        ),
        None => format!("session:{}", session.key),
    }
}

fn tasks(s: &Served, method: &str) -> Result<Arc<Tasks>, ErrorObject> {
    if s.family == Family::Stateless || !s.router.server.registry.offers_tasks() {
        return Err(ErrorObject::method_not_found(method));
    }
    Ok(s.router.server.registry.tasks.clone())
}

/// Starts `tool` as a task of the caller and answers with its handle; the handler runs on
/// in its own tokio task with its own cancellation token.
pub(in crate::server) fn start(
    s: Served,
    tool: Arc<RegisteredTool>,
    args: Value,
    ttl: Option<u64>,
) -> Result<CreateTaskResult, ErrorObject> {
    let tasks = s.router.server.registry.tasks.clone();
    let session = s.router.session.clone();
    let owner = owner(&session);
    let peer = s.request.peer().clone();
    let (record, cancel) = tasks.create(&owner, "tools/call", ttl, peer.clone())?;
    let id = record.id().to_owned();
    let request = RequestContext::new(
        s.request.id().clone(),
        s.request.progress_token().cloned(),
        cancel.clone(),
        peer.clone(),
    );
    let version = s.version;
    let name = tool.tool.name.clone();
    let context =
        crate::server::Context::new(request, session, s.router.server.clone()).in_task(id.clone());
    let bound_to_session = owner.starts_with("session:");
    tracing::debug!(task = %id, tool = %name, "task created");
    let task_id = id.clone();
    tokio::spawn(async move {
        let run = async {
            match (tool.call)(args, context) {
                Ok(future) => future.await,
                Err(e) => {
                    CallToolResult::error(format!("Invalid arguments for tool `{name}`: {e}."))
                }
            }
        };
        let result = tokio::select! {
            result = run => result,
            () = cancel.cancelled() => return,
            // Nobody else may read a session's tasks: when it ends, so do they.
            () = peer.closed(), if bound_to_session => {
                tasks.finish(&task_id, TaskStatus::Failed, TaskOutcome::Error(ErrorObject::internal("The session that created the task ended")));
                return;
            }
        };
        let result = revision::call_result(version, result);
        let status = if result.is_error == Some(true) {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        let outcome = match serde_json::to_value(&result) {
            Ok(Value::Object(map)) => TaskOutcome::Result(map),
            _ => TaskOutcome::Error(ErrorObject::internal("could not encode the tool's result")),
        };
        tasks.finish(&task_id, status, outcome);
    });
    Ok(CreateTaskResult::new(record.task))
}

/// `tasks/get`.
pub(in crate::server) async fn get(s: Served, p: TaskIdParams) -> Result<TaskResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/get")?;
    Ok(tasks
        .get(&owner(&s.router.session), &p.task_id)?
        .task
        .into())
}

/// `tasks/result`: blocks until the task is terminal, then answers what the request would
/// have, tagged with the task.
pub(in crate::server) async fn result(
    s: Served,
    p: TaskIdParams,
) -> Result<GetTaskPayloadResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/result")?;
    let (record, outcome) = tasks
        .outcome(&owner(&s.router.session), &p.task_id, s.request.id())
        .await?;
    match outcome {
        Some(TaskOutcome::Result(mut result)) => {
            let mut meta: Meta = match result.remove("_meta") {
                Some(value) => serde_json::from_value(value).unwrap_or_default(),
                None => Meta::new(),
            };
            RelatedTaskMetadata::new(record.id()).write_to(&mut meta);
            result.insert(
                "_meta".to_owned(),
                serde_json::to_value(meta).unwrap_or_default(),
            );
            Ok(result)
        }
        Some(TaskOutcome::Error(e)) => Err(e),
        None => Err(ErrorObject::internal(format!(
            "Task {:?} was {} and has no result",
            record.id(),
            record.task.status
        ))),
    }
}

/// `tasks/list`: the caller's tasks, oldest first; the cursor is the last one's position.
pub(in crate::server) async fn list(
    s: Served,
    p: PaginatedParams,
) -> Result<ListTasksResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/list")?;
    let after = match &p.cursor {
        None => None,
        Some(cursor) => Some(
            cursor
                .split_once(':')
                .and_then(|(ms, id)| Some((ms.parse::<u64>().ok()?, id)))
                .ok_or_else(|| {
                    ErrorObject::invalid_params(format!(
                        "Invalid params: unknown cursor {cursor:?}; list again from the start"
                    ))
                })?,
        ),
    };
    let size = s.router.server.registry.page_size;
    let (page, more) = tasks.page(&owner(&s.router.session), after, size)?;
    let next_cursor = more
        .then(|| page.last().map(|t| format!("{}:{}", t.created_ms, t.id())))
        .flatten();
    Ok(ListTasksResult {
        tasks: page.into_iter().map(|r| r.task).collect(),
        next_cursor,
        ..Default::default()
    })
}

/// `tasks/cancel`.
pub(in crate::server) async fn cancel(
    s: Served,
    p: TaskIdParams,
) -> Result<TaskResult, ErrorObject> {
    let tasks = tasks(&s, "tasks/cancel")?;
    Ok(tasks.cancel(&owner(&s.router.session), &p.task_id)?.into())
}

/// What `tools/call` answers: the result, or a task's handle.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(in crate::server) enum ToolAnswer {
    /// The tool ran.
    Done(CallToolResult),
    /// The tool runs as a task.
    Task(CreateTaskResult),
}

impl Answer for ToolAnswer {
    fn stamp(&mut self, server_info: &Value, cache: Option<(u64, CacheScope)>) {
        match self {
            ToolAnswer::Done(r) => r.stamp(server_info, cache),
            ToolAnswer::Task(r) => {
                with_server_info(&mut r.meta, server_info);
            }
        }
    }

    fn failed(&self) -> bool {
        matches!(self, ToolAnswer::Done(r) if r.failed())
    }
}

/// The task methods are not served on 2026-07-28 (see [`tasks`]); these only satisfy the
/// route's bound.
macro_rules! unstamped {
    ($($t:ty),*) => {$(
        impl Answer for $t {
            fn stamp(&mut self, _: &Value, _: Option<(u64, CacheScope)>) {}
        }
    )*};
}

unstamped!(TaskResult, ListTasksResult, Map<String, Value>);
