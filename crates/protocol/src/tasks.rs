//! Tasks (schema 2025-11-25, experimental): long-running requests answered with a handle that
//! the requestor polls (`tasks/get`), waits on (`tasks/result`), lists and cancels.
//!
//! A task-augmented request (`task` in its params) is answered at once with a
//! [`CreateTaskResult`]; the real result comes later from `tasks/result`.
//!
//! ```
//! use junction_protocol::tasks::{Task, TaskStatus};
//! let t = Task::new("786512e2", TaskStatus::Working, "2025-11-25T10:30:00Z");
//! // `ttl` is required and may be null: `None` is sent as `null`.
//! assert_eq!(serde_json::to_value(&t).unwrap()["ttl"], serde_json::Value::Null);
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::{Cursor, Meta, PaginatedParams, RequestMeta};
use crate::result_tail::wire_result;
use crate::{notification, request};

pub use crate::meta::TaskMetadata;

/// The `_meta` key that ties a message to a task ([`RelatedTaskMetadata`]).
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// The `_meta` key of a [`CreateTaskResult`] carrying a string for the model to read while
/// the task runs (provisional).
pub const MODEL_IMMEDIATE_RESPONSE_META: &str = "io.modelcontextprotocol/model-immediate-response";

/// `RelatedTaskMetadata`: the task a message belongs to, under [`RELATED_TASK_META`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RelatedTaskMetadata {
    /// The task.
    pub task_id: String,
}

impl RelatedTaskMetadata {
    /// Ties a message to task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        RelatedTaskMetadata {
            task_id: task_id.into(),
        }
    }

    /// Reads the key from a `_meta` object.
    pub fn from_meta(meta: &Meta) -> Option<Self> {
        serde_json::from_value(meta.get(RELATED_TASK_META)?.clone()).ok()
    }

    /// Writes the key into a `_meta` object.
    pub fn write_to(&self, meta: &mut Meta) {
        let mut value = Map::new();
        value.insert("taskId".to_owned(), Value::String(self.task_id.clone()));
        meta.insert(RELATED_TASK_META.to_owned(), Value::Object(value));
    }
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for input (an elicitation or a sampling).
    InputRequired,
    /// Finished; the result is ready.
    Completed,
    /// Finished with an error (for tool calls, also a result with `isError`).
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the status can never change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// Whether moving from `self` to `next` is allowed.
    pub fn can_become(self, next: TaskStatus) -> bool {
        match self {
            TaskStatus::Working => next != TaskStatus::Working,
            TaskStatus::InputRequired => next != TaskStatus::InputRequired,
            _ => false,
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The id the receiver chose.
    pub task_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// A description of the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// Its lifetime from creation in milliseconds; `None` means unlimited. Required on the
    /// wire, so always sent (`null` for `None`); read as `None` when a peer omits it.
    pub ttl: Option<u64>,
    /// How often to poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

impl Task {
    /// A task created (and last updated) at `created_at`, with unlimited lifetime.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
    ) -> Self {
        let created_at = created_at.into();
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            last_updated_at: created_at.clone(),
            created_at,
            ttl: None,
            poll_interval: None,
        }
    }
}

wire_result! {
    /// A result that is a task plus result members (`GetTaskResult`, `CancelTaskResult`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct TaskResult {
        /// The task, flattened into the result.
        #[serde(flatten)]
        pub task: Task,
    }
}

impl From<Task> for TaskResult {
    fn from(task: Task) -> Self {
        TaskResult {
            task,
            meta: None,
            result_type: None,
            extra: Map::new(),
        }
    }
}

/// The result of `tasks/get`.
pub type GetTaskResult = TaskResult;
/// The result of `tasks/cancel`.
pub type CancelTaskResult = TaskResult;

wire_result! {
    /// The answer to a task-augmented request.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct CreateTaskResult {
        /// The new task.
        pub task: Task,
    }
}

impl CreateTaskResult {
    /// The answer carrying `task`.
    pub fn new(task: Task) -> Self {
        CreateTaskResult {
            task,
            meta: None,
            result_type: None,
            extra: Map::new(),
        }
    }
}

/// Params naming one task (`tasks/get`, `tasks/result`, `tasks/cancel`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl TaskIdParams {
    /// Names task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            task_id: task_id.into(),
            meta: None,
        }
    }
}

/// The result of `tasks/result`: the underlying request's result (for `tools/call`, a
/// `CallToolResult`), kept as an open object; decode it with the original method's type.
pub type GetTaskPayloadResult = Map<String, Value>;

/// The params of `tasks/list`.
pub type ListTasksParams = PaginatedParams;

wire_result! {
    /// The result of `tasks/list`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ListTasksResult {
        /// One page of tasks.
        pub tasks: Vec<Task>,
        /// The cursor of the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }
}

impl ListTasksResult {
    /// One page of tasks, and the cursor of the next page (`None` on the last).
    pub fn page(tasks: Vec<Task>, next_cursor: Option<Cursor>) -> Self {
        Self {
            tasks,
            next_cursor,
            ..Self::default()
        }
    }
}

/// The params of `notifications/tasks/status`: the whole task plus `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskStatusParams {
    /// The task, flattened.
    #[serde(flatten)]
    pub task: Task,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl From<Task> for TaskStatusParams {
    fn from(task: Task) -> Self {
        TaskStatusParams { task, meta: None }
    }
}

request!(
    /// `tasks/get`: the task's current state.
    GetTask, "tasks/get", TaskIdParams, TaskResult,
    capability = Tasks, mcp_name = TaskId
);
request!(
    /// `tasks/result`: waits until the task is terminal, then gives the underlying result.
    GetTaskPayload, "tasks/result", TaskIdParams, GetTaskPayloadResult,
    families = Handshake, capability = Tasks
);
request!(
    /// `tasks/cancel` (capability `tasks.cancel`).
    CancelTask, "tasks/cancel", TaskIdParams, TaskResult,
    capability = Tasks, mcp_name = TaskId
);
request!(
    /// `tasks/list` (capability `tasks.list`).
    ListTasks, "tasks/list", PaginatedParams, ListTasksResult,
    families = Handshake, capability = Tasks
);
notification!(
    /// `notifications/tasks/status`: optional; requestors must not rely on it.
    TaskStatusChanged, "notifications/tasks/status", TaskStatusParams,
    capability = Tasks
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::CallToolResult;
    use serde_json::json;

    #[test]
    fn ttl_null_is_sent_and_read() {
        let wire = json!({"taskId": "t-1", "status": "input_required", "createdAt": "2025-11-25T10:00:00Z", "lastUpdatedAt": "2025-11-25T10:00:01Z", "ttl": null});
        let t: Task = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(t.ttl, None);
        assert_eq!(serde_json::to_value(&t).unwrap(), wire);
        let missing =
            json!({"taskId": "t", "status": "working", "createdAt": "x", "lastUpdatedAt": "x"});
        assert!(serde_json::from_value::<Task>(missing).is_ok_and(|t| t.ttl.is_none()));
        assert!(serde_json::from_value::<Task>(
            json!({"taskId": "t", "status": "paused", "createdAt": "x", "lastUpdatedAt": "x", "ttl": null})
        )
        .is_err());
    }

    #[test]
    fn create_task_result_spec_example() {
        let wire = json!({
            "task": {
                "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
                "status": "working",
                "statusMessage": "The operation is now in progress.",
                "createdAt": "2025-11-25T10:30:00Z",
                "lastUpdatedAt": "2025-11-25T10:40:00Z",
                "ttl": 60000,
                "pollInterval": 5000
            },
            "_meta": {"io.modelcontextprotocol/model-immediate-response": "Started."}
        });
        let r: CreateTaskResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.task.poll_interval, Some(5000));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let built =
            CreateTaskResult::new(Task::new("a", TaskStatus::Working, "2025-11-25T10:30:00Z"));
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"task": {"taskId": "a", "status": "working", "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null}})
        );
    }

    #[test]
    fn flattened_results_keep_unknown_members_and_transitions() {
        let wire = json!({"taskId": "t", "status": "cancelled", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 60000, "pollInterval": 500, "resultType": "complete", "_meta": {"m": 1}, "vendor": true});
        let r: TaskResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.extra.len(), 1);
        assert_eq!(r.extra.get("vendor"), Some(&json!(true)));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(r.task.status.is_terminal());
        assert!(!TaskStatus::Completed.can_become(TaskStatus::Working));
        assert!(TaskStatus::InputRequired.can_become(TaskStatus::Working));
        let n = json!({"taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}});
        let p: TaskStatusParams = serde_json::from_value(n.clone()).unwrap();
        assert_eq!(
            RelatedTaskMetadata::from_meta(p.meta.as_ref().unwrap()),
            Some(RelatedTaskMetadata::new("t"))
        );
        assert_eq!(serde_json::to_value(&p).unwrap(), n);
    }

    #[test]
    fn payload_and_list_and_params() {
        let mut meta = Meta::new();
        RelatedTaskMetadata::new("t9").write_to(&mut meta);
        let payload = json!({"content": [{"type": "text", "text": "done"}], "isError": false, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t9"}}});
        let raw: GetTaskPayloadResult = serde_json::from_value(payload.clone()).unwrap();
        let call: CallToolResult = serde_json::from_value(Value::Object(raw)).unwrap();
        assert_eq!(call.meta, Some(meta));
        assert_eq!(serde_json::to_value(&call).unwrap(), payload);
        let page = json!({"tasks": [{"taskId": "t", "status": "failed", "createdAt": "a", "lastUpdatedAt": "a", "ttl": 5}], "nextCursor": "n"});
        let l: ListTasksResult = serde_json::from_value(page.clone()).unwrap();
        assert_eq!(serde_json::to_value(&l).unwrap(), page);
        assert_eq!(
            serde_json::to_value(TaskIdParams::new("t")).unwrap(),
            json!({"taskId": "t"})
        );
        assert_eq!(TaskStatus::InputRequired.to_string(), "input_required");
    }
}
