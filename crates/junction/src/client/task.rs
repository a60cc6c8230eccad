//! Calling tools as tasks (2025-11-25, experimental): the tool call is answered at once with
//! a task handle; the result comes later.
//!
//! [`Client::call_tool_as_task`] sends a task-augmented `tools/call` (refused locally unless
//! the server declared `tasks.requests.tools.call`). [`Client::wait_for_task`] then polls
//! `tasks/get` at the task's `pollInterval`, hands each status change to a callback, and
//! fetches the result with `tasks/result` once the task is terminal.
//! [`Client::call_tool_auto`] does both for a tool whose `execution.taskSupport` is
//! `required` (from the last [`Client::list_tools`]), and a plain call otherwise;
//! [`Client::call_tool_preferring_task`] also for an `optional` one when asked to.
//! [`Client::get_task`], [`Client::task_result`], [`Client::list_tasks`] and
//! [`Client::cancel_task`] are the task methods themselves.
//!
//! ```no_run
//! # async fn run(client: junction::client::Client) -> Result<(), junction::RequestError> {
//! use junction::protocol::tools::CallToolParams;
//! let created = client
//!     .call_tool_as_task(CallToolParams::new("inventory"), Some(60_000), Default::default())
//!     .await?;
//! let result = client
//!     .wait_for_task(&created.task, |task| println!("{}", task.status), None)
//!     .await?;
//! println!("{:?}", result.content);
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use junction_protocol::meta::TaskMetadata;
use junction_protocol::method::{MethodInfo, Request};
use junction_protocol::tasks::{
    CancelTask, CreateTaskResult, GetTask, GetTaskPayload, ListTasks, Task, TaskIdParams,
    TaskStatus,
};
use junction_protocol::tools::{CallTool, CallToolParams, CallToolResult, TaskSupport, Tool};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Client;
use crate::error::RequestError;
use crate::session::RequestOptions;
use crate::sync::lock;

/// `tools/call` with `task`: the same method, answered with a task's handle.
enum CallToolAsTask {}

impl Request for CallToolAsTask {
    const METHOD: &'static str = CallTool::METHOD;
    const INFO: MethodInfo = CallTool::INFO;
    type Params = CallToolParams;
    type Result = CreateTaskResult;
}

/// How long to wait between polls when the server suggests nothing, and the bounds put on
/// what it suggests (a server cannot make the client poll in a busy loop or never).
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(30);

/// How long to wait before polling `task` again: its `pollInterval`, bounded.
pub(crate) fn poll_delay(task: &Task) -> Duration {
    task.poll_interval
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

/// The last task the server reported in `notifications/tasks/status`, for
/// [`Client::wait_for_task`] to follow without waiting for its next poll.
#[derive(Debug, Clone)]
pub(super) struct TaskUpdates(std::sync::Arc<watch::Sender<Option<Task>>>);

impl Default for TaskUpdates {
    fn default() -> Self {
        TaskUpdates(std::sync::Arc::new(watch::channel(None).0))
    }
}

impl TaskUpdates {
    pub(super) fn tell(&self, task: &Task) {
        self.0.send_replace(Some(task.clone()));
    }

    fn subscribe(&self) -> watch::Receiver<Option<Task>> {
        self.0.subscribe()
    }
}

/// The `execution.taskSupport` of each tool, as the last `tools/list` gave it.
#[derive(Debug, Default)]
pub(super) struct TaskSupports(Mutex<HashMap<String, TaskSupport>>);

impl TaskSupports {
    pub(super) fn remember(&self, tools: &[Tool]) {
        *lock(&self.0) = tools
            .iter()
            .map(|t| (t.name.clone(), t.task_support_or_default()))
            .collect();
    }

    fn of(&self, name: &str) -> TaskSupport {
        lock(&self.0)
            .get(name)
            .copied()
            .unwrap_or(TaskSupport::Forbidden)
    }
}

/// Where the task of a tool call stands ([`Client::tool_task`]).
#[derive(Debug)]
pub enum ToolTask {
    /// Still running: `working`, or `input_required` (waiting for answers its caller must
    /// give while following it).
    Running {
        /// Its status.
        status: TaskStatus,
        /// What the server last said it is doing.
        message: Option<String>,
    },
    /// Ended: the tool's result, or what the call ended with instead (a failure or a
    /// cancellation, as [`RequestError::Remote`]).
    Ended(Result<CallToolResult, RequestError>),
}

impl Client {
    fn require_tasks(&self, method: &str, ok: bool, what: &str) -> Result<(), RequestError> {
        if ok {
            Ok(())
        } else {
            Err(RequestError::NotSupported {
                method: method.to_owned(),
                reason: format!("the server did not declare `{what}`"),
            })
        }
    }

    /// Calls a tool as a task, kept `ttl` ms if the server agrees (it may grant less).
    /// Refused locally unless the server declared `tasks.requests.tools.call`.
    pub async fn call_tool_as_task(
        &self,
        params: CallToolParams,
        ttl: Option<u64>,
        options: RequestOptions,
    ) -> Result<CreateTaskResult, RequestError> {
        let caps = self.server_capabilities();
        self.require_tasks(
            CallTool::METHOD,
            caps.supports_task_tool_calls(),
            "tasks.requests.tools.call",
        )?;
        let params = params.task(TaskMetadata::new(ttl));
        self.send::<CallToolAsTask>(&params, options).await
    }

    /// The `execution.taskSupport` of tool `name`, as the last [`Client::list_tools`] gave
    /// it (`forbidden` for a tool it did not list).
    pub fn task_support(&self, name: &str) -> TaskSupport {
        self.task_supports.of(name)
    }

    /// Calls a tool the way its `execution.taskSupport` asks (from the last
    /// [`Client::list_tools`]): as a task when it is `required`, plainly otherwise (see
    /// [`Client::call_tool_preferring_task`]).
    pub async fn call_tool_auto(
        &self,
        params: CallToolParams,
        options: RequestOptions,
        on_status: impl FnMut(&Task) + Send,
    ) -> Result<CallToolResult, RequestError> {
        self.call_tool_preferring_task(params, false, options, on_status)
            .await
    }

    /// Calls a tool as a task, waited for with [`Client::wait_for_task`] (which
    /// `options.cancel` cancels), when the server runs tool calls as tasks and the tool's
    /// `execution.taskSupport` (from the last [`Client::list_tools`]) is `required`, or is
    /// `optional` and `prefer_task` is set; plainly, with `options`, otherwise.
    pub async fn call_tool_preferring_task(
        &self,
        params: CallToolParams,
        prefer_task: bool,
        options: RequestOptions,
        on_status: impl FnMut(&Task) + Send,
    ) -> Result<CallToolResult, RequestError> {
        let as_task = match self.task_supports.of(&params.name) {
            TaskSupport::Required => true,
            TaskSupport::Optional => prefer_task,
            TaskSupport::Forbidden => false,
        } && self.server_capabilities().supports_task_tool_calls();
        if !as_task {
            return self.call_tool(params, options).await;
        }
        let cancel = options.cancel.clone();
        let created = self.call_tool_as_task(params, None, options).await?;
        self.wait_for_task(&created.task, on_status, cancel).await
    }

    /// `tasks/get`: the task's state now.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, RequestError> {
        let caps = self.server_capabilities();
        self.require_tasks(GetTask::METHOD, caps.tasks.is_some(), "tasks")?;
        let result = self
            .send::<GetTask>(&TaskIdParams::new(task_id), RequestOptions::default())
            .await?;
        Ok(result.task)
    }

    /// `tasks/result` of a tool call's task: waits until the task is terminal, then gives
    /// the tool's result (or the error the call would have had).
    pub async fn task_result(&self, task_id: &str) -> Result<CallToolResult, RequestError> {
        let caps = self.server_capabilities();
        self.require_tasks(GetTaskPayload::METHOD, caps.tasks.is_some(), "tasks")?;
        let payload = self
            .send::<GetTaskPayload>(&TaskIdParams::new(task_id), RequestOptions::default())
            .await?;
        serde_json::from_value(Value::Object(payload)).map_err(|source| RequestError::Decode {
            method: GetTaskPayload::METHOD.to_owned(),
            source,
        })
    }

    /// `tasks/list`, following pages (capability `tasks.list`).
    pub async fn list_tasks(&self) -> Result<Vec<Task>, RequestError> {
        let caps = self.server_capabilities();
        self.require_tasks(ListTasks::METHOD, caps.supports_task_list(), "tasks.list")?;
        self.collect::<ListTasks, _>(|r| (r.tasks, r.next_cursor))
            .await
    }

    /// `tasks/cancel` (capability `tasks.cancel`): the task as the server left it,
    /// `cancelled`.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, RequestError> {
        let caps = self.server_capabilities();
        self.require_tasks(
            CancelTask::METHOD,
            caps.supports_task_cancel(),
            "tasks.cancel",
        )?;
        let result = self
            .send::<CancelTask>(&TaskIdParams::new(task_id), RequestOptions::default())
            .await?;
        Ok(result.task)
    }

    /// Where the task of a tool call stands now, read once, in either family: on 2026-07-28
    /// the tasks extension's `tasks/get` (the result or error inlined once it ended); in the
    /// handshake family `tasks/get`, then `tasks/result` once the task is terminal. For a
    /// task made by an earlier session: whether the server still knows it is the server's
    /// to say (its tasks may be bound to a session or an identity).
    pub async fn tool_task(&self, task_id: &str) -> Result<ToolTask, RequestError> {
        if let Some(stateless) = self.dialect.stateless() {
            let options = RequestOptions::default();
            let mut task = stateless.get_task(&self.peer, task_id, &options).await?;
            return Ok(match super::stateless::ended::<CallTool>(&mut task) {
                Some(ended) => ToolTask::Ended(ended),
                None => ToolTask::Running {
                    status: task.status,
                    message: task.status_message,
                },
            });
        }
        let task = self.get_task(task_id).await?;
        Ok(match task.status {
            TaskStatus::Working | TaskStatus::InputRequired => ToolTask::Running {
                status: task.status,
                message: task.status_message,
            },
            TaskStatus::Completed | TaskStatus::Failed => {
                ToolTask::Ended(self.task_result(task_id).await)
            }
            TaskStatus::Cancelled => ToolTask::Ended(Err(super::stateless::cancelled(
                CallTool::METHOD,
                task_id,
                task.status_message.as_deref(),
            ))),
        })
    }

    /// Cancels the task of a tool call, in either family (`tasks/cancel`).
    pub async fn cancel_tool_task(&self, task_id: &str) -> Result<(), RequestError> {
        match self.dialect.stateless() {
            Some(stateless) => stateless.cancel_task(&self.peer, task_id).await,
            None => self.cancel_task(task_id).await.map(drop),
        }
    }

    /// Follows `task` to its end: polls `tasks/get` at its `pollInterval` (bounded to 50 ms
    /// … 30 s), taking the task from a `notifications/tasks/status` instead when one comes
    /// first, calls `on_status` for each change of status or status message, then returns
    /// the result from `tasks/result`. When `cancel` fires, the task is cancelled with
    /// `tasks/cancel` and the wait fails with [`RequestError::Cancelled`].
    pub async fn wait_for_task(
        &self,
        task: &Task,
        mut on_status: impl FnMut(&Task) + Send,
        cancel: Option<CancellationToken>,
    ) -> Result<CallToolResult, RequestError> {
        let cancel = cancel.unwrap_or_default();
        let mut updates = self.task_updates.subscribe();
        // A notification may have come between the task's creation and now.
        updates.mark_changed();
        let mut last = task.clone();
        on_status(&last);
        let poll = |task: &Task| Instant::now() + poll_delay(task);
        let mut next_poll = poll(&last);
        while !last.status.is_terminal() {
            let told = tokio::select! {
                () = tokio::time::sleep_until(next_poll) => None,
                Ok(()) = updates.changed() => updates
                    .borrow_and_update()
                    .clone()
                    .filter(|t| t.task_id == last.task_id && t.last_updated_at >= last.last_updated_at),
                () = cancel.cancelled() => {
                    if let Err(e) = self.cancel_task(&last.task_id).await {
                        tracing::debug!(task = %last.task_id, "could not cancel the task: {e}");
                    }
                    return Err(RequestError::Cancelled { method: CallTool::METHOD.to_owned() });
                }
            };
            let now = match told {
                Some(task) => task,
                None if Instant::now() >= next_poll => self.get_task(&last.task_id).await?,
                // Another task's notification.
                None => continue,
            };
            next_poll = poll(&now);
            if now.status != last.status || now.status_message != last.status_message {
                on_status(&now);
            }
            last = now;
            if last.status == TaskStatus::InputRequired {
                // The server's requests for the task travel on the `tasks/result` stream.
                break;
            }
        }
        tokio::select! {
            result = self.task_result(&last.task_id) => result,
            () = cancel.cancelled() => {
                if let Err(e) = self.cancel_task(&last.task_id).await {
                    tracing::debug!(task = %last.task_id, "could not cancel the task: {e}");
                }
                Err(RequestError::Cancelled { method: CallTool::METHOD.to_owned() })
            }
        }
    }
}
