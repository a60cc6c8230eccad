//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663): the
//! server decides, per request, to answer with a task instead of the result.
//!
//! Unlike the experimental tasks of 2025-11-25 ([`crate::tasks`]), the client does not ask
//! for a task: it declares the extension in the request's
//! `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`, and the server may then
//! answer a `tools/call` with a flat [`DetailedTask`] whose `resultType` is `"task"`. The
//! client polls `tasks/get`, whose answer inlines the final `result` (or the JSON-RPC
//! `error`, or the `inputRequests` the task waits on); it answers those with `tasks/update`
//! and may `tasks/cancel`. `tasks/result` and `tasks/list` are gone; durations are `ttlMs` and
//! `pollIntervalMs`.
//!
//! ```
//! use junction_protocol::task_extension::{DetailedTask, TASKS_EXTENSION};
//! use junction_protocol::tasks::TaskStatus;
//!
//! let created = DetailedTask::new("t-1", TaskStatus::Working, "2026-07-28T10:00:00Z").created();
//! let wire = serde_json::to_value(&created).unwrap();
//! assert_eq!(wire["resultType"], "task");
//! assert_eq!(wire["ttlMs"], serde_json::Value::Null);
//! assert!(wire.get("task").is_none(), "flat, not wrapped");
//! assert_eq!(TASKS_EXTENSION, "io.modelcontextprotocol/tasks");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::{Meta, RequestMeta};
use crate::request;
use crate::stateless::{InputRequests, InputResponses, ResultType};
use crate::tasks::TaskStatus;
use crate::ErrorObject;

/// The extension's identifier, the key under `capabilities.extensions` on both sides.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `ResultType` of a task's handle.
pub const RESULT_TYPE_TASK: &str = "task";

/// A task as 2026-07-28 sends it: the answer that creates it (`resultType: "task"`, no
/// payload) and every `tasks/get` answer (`resultType: "complete"`, with the payload of its
/// status: `inputRequests`, `result` or `error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DetailedTask {
    /// The id the server chose.
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
    /// Its lifetime from creation in integer milliseconds; `None` (sent as `null`) is
    /// unlimited.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often to poll, in integer milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: what the task waits for, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// `completed`: what the request would have answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// `failed`: the JSON-RPC error of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// `task` when the task is created, else `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<crate::stateless::ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DetailedTask {
    /// A task created (and last updated) at `created_at`, unlimited, without payload.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
    ) -> Self {
        let created_at = created_at.into();
        DetailedTask {
            task_id: task_id.into(),
            status,
            status_message: None,
            last_updated_at: created_at.clone(),
            created_at,
            ttl_ms: None,
            poll_interval_ms: None,
            input_requests: None,
            result: None,
            error: None,
            result_type: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// This task as the handle that creates it: `resultType: "task"` and no payload.
    pub fn created(mut self) -> Self {
        self.input_requests = None;
        self.result = None;
        self.error = None;
        self.result_type = Some(ResultType::Task);
        self
    }

    /// Whether this is a task's handle rather than a `tasks/get` answer.
    pub fn is_handle(&self) -> bool {
        self.result_type == Some(ResultType::Task)
    }

    /// The `resultType` as the stateless envelope reads it.
    pub fn result_type(&self) -> ResultType {
        self.result_type.clone().unwrap_or_default()
    }
}

/// The params of `tasks/update`: answers to the task's `inputRequests`, by key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// The answers; keys not outstanding are ignored.
    pub input_responses: InputResponses,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

request!(
    /// `tasks/update` (2026-07-28 tasks extension): answers what a task waits for; the
    /// answer is an empty acknowledgement.
    UpdateTask, "tasks/update", UpdateTaskParams, crate::meta::EmptyResult,
    families = Stateless, capability = Tasks, mcp_name = TaskId
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_sep_2663_examples_read_and_write_back() {
        let created = json!({
            "resultType": "task",
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
            "status": "working",
            "statusMessage": "The operation is now in progress.",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000
        });
        let task: DetailedTask = serde_json::from_value(created.clone()).unwrap();
        assert!(task.is_handle());
        assert_eq!(task.ttl_ms, Some(60000));
        assert_eq!(serde_json::to_value(&task).unwrap(), created);

        let waiting = json!({
            "resultType": "complete",
            "taskId": "t",
            "status": "input_required",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttlMs": null,
            "inputRequests": {"name": {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}}}
        });
        let task: DetailedTask = serde_json::from_value(waiting.clone()).unwrap();
        assert!(!task.is_handle());
        assert_eq!(task.result_type(), ResultType::Complete);
        assert_eq!(
            task.input_requests.as_ref().unwrap()["name"].method,
            "elicitation/create"
        );
        assert_eq!(serde_json::to_value(&task).unwrap(), waiting);

        let failed = json!({"taskId": "t", "status": "failed", "createdAt": "a", "lastUpdatedAt": "a", "ttlMs": 5, "error": {"code": -32603, "message": "API rate limit exceeded"}});
        let task: DetailedTask = serde_json::from_value(failed.clone()).unwrap();
        assert_eq!(task.error.as_ref().unwrap().code.0, -32603);
        assert_eq!(serde_json::to_value(&task).unwrap(), failed);
    }

    #[test]
    fn a_handle_carries_no_payload_and_update_params_need_their_answers() {
        let mut task = DetailedTask::new("t", TaskStatus::Completed, "a");
        task.result = Some(Map::new());
        let handle = serde_json::to_value(task.created()).unwrap();
        assert!(handle.get("result").is_none());
        let params: UpdateTaskParams = serde_json::from_value(
            json!({"taskId": "t", "inputResponses": {"k": {"action": "decline"}}}),
        )
        .unwrap();
        assert_eq!(params.input_responses["k"]["action"], "decline");
        assert!(serde_json::from_value::<UpdateTaskParams>(json!({"taskId": "t"})).is_err());
        assert_eq!(
            <UpdateTask as crate::method::Request>::INFO
                .mcp_name
                .member(),
            Some("taskId")
        );
    }
}
