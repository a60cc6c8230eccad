//! Tasks (schema 2025-11-25, experimental): long-running requests answered with a handle that
//! the requestor polls (`tasks/get`), waits on (`tasks/result`), lists and cancels.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::{Cursor, Meta, PaginatedParams};
use crate::{notification, request};

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The id the receiver chose.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// A description of the status.
    #[serde(
        rename = "statusMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    #[serde(rename = "createdAt")]
    pub created_at: String,
    /// When it last changed (ISO 8601).
    #[serde(rename = "lastUpdatedAt")]
    pub last_updated_at: String,
    /// Its lifetime in milliseconds; `null` (None) means unlimited. Always sent.
    pub ttl: Option<u64>,
    /// How often to poll, in milliseconds.
    #[serde(
        rename = "pollInterval",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub poll_interval: Option<u64>,
}

/// A result that is a task plus result members (`tasks/get`, `tasks/cancel`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task, flattened into the result.
    #[serde(flatten)]
    pub task: Task,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The answer to a task-augmented request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateTaskResult {
    /// The new task.
    pub task: Task,
    /// `_meta` (may carry `io.modelcontextprotocol/model-immediate-response`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params naming one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskIdParams {
    /// The task.
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// The result of `tasks/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListTasksResult {
    /// One page of tasks.
    pub tasks: Vec<Task>,
    /// The cursor of the next page.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<Cursor>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

request!(
    /// `tasks/get`: the task's current state.
    GetTask, "tasks/get", TaskIdParams, TaskResult
);
request!(
    /// `tasks/result`: waits until the task is terminal, then gives the underlying result.
    GetTaskPayload, "tasks/result", TaskIdParams, Map<String, Value>
);
request!(
    /// `tasks/cancel`.
    CancelTask, "tasks/cancel", TaskIdParams, TaskResult
);
request!(
    /// `tasks/list`.
    ListTasks, "tasks/list", PaginatedParams, ListTasksResult
);
notification!(
    /// `notifications/tasks/status`: optional; requestors must not rely on it.
    TaskStatusChanged, "notifications/tasks/status", TaskResult
);

#[cfg(test)]
mod tests {
    use super::*;
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
    }

    #[test]
    fn flattened_results_and_transitions() {
        let wire = json!({"taskId": "t", "status": "cancelled", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 60000, "pollInterval": 500});
        let r: TaskResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(r.task.status.is_terminal());
        assert!(!TaskStatus::Completed.can_become(TaskStatus::Working));
        assert!(TaskStatus::InputRequired.can_become(TaskStatus::Working));
    }
}
