//! Tools (schema 2025-11-25): `tools/list`, `tools/call`, `notifications/tools/list_changed`.
//!
//! ```
//! use junction_protocol::tools::{CallToolParams, CallToolResult};
//! let params = CallToolParams::new("search").argument("query", "rivers");
//! assert_eq!(
//!     serde_json::to_value(&params).unwrap(),
//!     serde_json::json!({"name": "search", "arguments": {"query": "rivers"}})
//! );
//! let failed = CallToolResult::error("No copies are available. Search for another title.");
//! assert_eq!(failed.is_error, Some(true));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::ContentBlock;
use crate::lifecycle::Icon;
use crate::meta::{Cursor, Meta, NotificationParams, PaginatedParams, RequestMeta, TaskMetadata};
use crate::{notification, request};

/// Hints about a tool's behaviour. Untrusted unless the server is trusted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool changes nothing (default false).
    #[serde(
        rename = "readOnlyHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only_hint: Option<bool>,
    /// Its changes may destroy data (default true; meaningful when not read-only).
    #[serde(
        rename = "destructiveHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(
        rename = "idempotentHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent_hint: Option<bool>,
    /// It reaches an open world of external entities (default true).
    #[serde(
        rename = "openWorldHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world_hint: Option<bool>,
}

/// Whether a tool may or must run as a task (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never as a task (the default).
    Forbidden,
    /// Either way.
    Optional,
    /// Only as a task.
    Required,
}

/// How a tool executes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolExecution {
    /// Task support.
    #[serde(
        rename = "taskSupport",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub task_support: Option<TaskSupport>,
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The programmatic name, unique within the server.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The JSON Schema of the arguments; an object schema, kept verbatim.
    #[serde(rename = "inputSchema")]
    pub input_schema: Map<String, Value>,
    /// The JSON Schema of `structuredContent`, when the tool returns structured output.
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Execution settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: Map<String, Value>) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            icons: None,
            input_schema,
            output_schema: None,
            annotations: None,
            execution: None,
            meta: None,
        }
    }

    /// The name to show a person: `title`, then `annotations.title`, then `name`.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }
}

/// The result of `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListToolsResult {
    /// One page of tools.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent on the last.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<Cursor>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept (results are open).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl CallToolParams {
    /// A call without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolParams {
            name: name.into(),
            arguments: None,
            task: None,
            meta: None,
        }
    }

    /// Adds one argument.
    pub fn argument(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.arguments
            .get_or_insert_with(Map::new)
            .insert(key.into(), value.into());
        self
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// The unstructured result (may be empty).
    pub content: Vec<ContentBlock>,
    /// The structured result, conforming to the tool's `outputSchema` (2025-06-18).
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool failed (a tool execution error, for the model to read).
    #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28); absent means `complete`.
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<String>,
    /// Unknown members, kept (results are open).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }

    /// A tool execution error: `isError: true` and a sentence for the model.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            is_error: Some(true),
            ..Default::default()
        }
    }

    /// Whether this is a tool execution error.
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }
}

request!(
    /// `tools/list`.
    ListTools, "tools/list", PaginatedParams, ListToolsResult
);

request!(
    /// `tools/call`.
    CallTool, "tools/call", CallToolParams, CallToolResult
);

notification!(
    /// `notifications/tools/list_changed`.
    ToolListChanged, "notifications/tools/list_changed", NotificationParams
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_with_every_member_round_trips() {
        let wire = json!({
            "name": "delete_event",
            "title": "Delete an event",
            "description": "Deletes one calendar event.",
            "icons": [{"src": "https://example.org/i.png"}],
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
                "$defs": {"x": {"type": "string"}},
                "additionalProperties": false
            },
            "outputSchema": {"type": "object", "properties": {"deleted": {"type": "boolean"}}},
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false},
            "execution": {"taskSupport": "optional"},
            "_meta": {"io.example/x": 1}
        });
        let tool: Tool = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(tool.display_name(), "Delete an event");
        assert_eq!(
            tool.execution.as_ref().unwrap().task_support,
            Some(TaskSupport::Optional)
        );
        assert_eq!(serde_json::to_value(&tool).unwrap(), wire);
    }

    #[test]
    fn display_name_precedence() {
        let mut tool = Tool::new("search", Map::new());
        assert_eq!(tool.display_name(), "search");
        tool.annotations = Some(ToolAnnotations {
            title: Some("Find".into()),
            ..Default::default()
        });
        assert_eq!(tool.display_name(), "Find");
    }

    #[test]
    fn call_result_forms() {
        let wire = json!({
            "content": [{"type": "text", "text": "{\"count\":1}"}],
            "structuredContent": {"count": 1},
            "resultType": "complete",
            "vendor": true
        });
        let result: CallToolResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(result.structured_content, Some(json!({"count": 1})));
        assert_eq!(result.extra.get("vendor"), Some(&json!(true)));
        assert_eq!(serde_json::to_value(&result).unwrap(), wire);
        let old: CallToolResult = serde_json::from_value(json!({"content": []})).unwrap();
        assert!(!old.failed() && old.result_type.is_none());
        assert_eq!(
            serde_json::to_value(CallToolResult::error("Try again.")).unwrap(),
            json!({"content": [{"type": "text", "text": "Try again."}], "isError": true})
        );
    }

    #[test]
    fn list_and_call_params() {
        let page: ListToolsResult =
            serde_json::from_value(json!({"tools": [], "nextCursor": "abc"})).unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some("abc"));
        let params: CallToolParams = serde_json::from_value(json!({
            "name": "t", "arguments": {"a": 1}, "task": {"ttl": 60000}, "_meta": {"progressToken": "p1"}
        }))
        .unwrap();
        assert_eq!(params.task.unwrap().ttl, Some(60000));
        assert_eq!(
            params.meta.unwrap().progress_token,
            Some(crate::ProgressToken::String("p1".into()))
        );
    }
}
