//! Calling tools as tasks (2025-11-25, experimental): the tool call is answered at once with
//! a task handle; the result comes later.
//!
//! [`Client::call_tool_as_task`] sends a task-augmented `tools/call` (refused locally unless
//! the server declared `tasks.requests.tools.call`). [`Client::wait_for_task`] then polls
//! `tasks/get` at the task's `pollInterval`, hands each status change to a callback, and
//! fetches the result with `tasks/result` once the task is terminal.
//! [`Client::call_tool_auto`] does both for a tool whose `execution.taskSupport` is
//! `required` (from the last [`Client::list_tools`]), and a plain call otherwise.
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
        let params = params.task(TaskMetadata { ttl });
        self.send::<CallToolAsTask>(&params, options).await
    }

    /// Calls a tool the way its `execution.taskSupport` asks (from the last
    /// [`Client::list_tools`]): as a task, waited for with [`Client::wait_for_task`] (which
    /// `options.cancel` cancels), when it is `required` and the server runs tool calls as
    /// tasks; plainly, with `options`, otherwise.
    pub async fn call_tool_auto(
        &self,
        params: CallToolParams,
        options: RequestOptions,
        on_status: impl FnMut(&Task) + Send,
    ) -> Result<CallToolResult, RequestError> {
        let required = self.task_supports.of(&params.name) == TaskSupport::Required
            && self.server_capabilities().supports_task_tool_calls();
        if !required {
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

    /// Follows `task` to its end: polls `tasks/get` at its `pollInterval` (bounded to 50 ms
    /// … 30 s), calls `on_status` for each change of status or status message, then returns
    /// the result from `tasks/result`. When `cancel` fires, the task is cancelled with
    /// `tasks/cancel` and the wait fails with [`RequestError::Cancelled`].
    pub async fn wait_for_task(
        &self,
        task: &Task,
        mut on_status: impl FnMut(&Task) + Send,
        cancel: Option<CancellationToken>,
    ) -> Result<CallToolResult, RequestError> {
        let cancel = cancel.unwrap_or_default();
        let mut last = task.clone();
        on_status(&last);
        while !last.status.is_terminal() {
            let wait = last
                .poll_interval
                .map_or(DEFAULT_POLL, Duration::from_millis)
                .clamp(MIN_POLL, MAX_POLL);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => {
                    if let Err(e) = self.cancel_task(&last.task_id).await {
                        tracing::debug!(task = %last.task_id, "could not cancel the task: {e}");
                    }
                    return Err(RequestError::Cancelled { method: CallTool::METHOD.to_owned() });
                }
            }
            let now = self.get_task(&last.task_id).await?;
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
