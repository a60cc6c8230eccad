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
use crate::result_tail::wire_result;
use crate::stateless::InputResponses;
use crate::{notification, request};

/// Hints about a tool's behaviour. Untrusted unless the server is trusted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool changes nothing (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// Its changes may destroy data (default true; meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It reaches an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Sets `title`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `readOnlyHint`.
    pub fn read_only(mut self, hint: bool) -> Self {
        self.read_only_hint = Some(hint);
        self
    }

    /// Sets `destructiveHint`.
    pub fn destructive(mut self, hint: bool) -> Self {
        self.destructive_hint = Some(hint);
        self
    }

    /// Sets `idempotentHint`.
    pub fn idempotent(mut self, hint: bool) -> Self {
        self.idempotent_hint = Some(hint);
        self
    }

    /// Sets `openWorldHint`.
    pub fn open_world(mut self, hint: bool) -> Self {
        self.open_world_hint = Some(hint);
        self
    }

    /// `readOnlyHint`, with its default (false).
    pub fn is_read_only(&self) -> bool {
        self.read_only_hint.unwrap_or(false)
    }

    /// `destructiveHint`, with its default (true; meaningful when not read-only).
    pub fn is_destructive(&self) -> bool {
        !self.is_read_only() && self.destructive_hint.unwrap_or(true)
    }

    /// `idempotentHint`, with its default (false).
    pub fn is_idempotent(&self) -> bool {
        self.idempotent_hint.unwrap_or(false)
    }

    /// `openWorldHint`, with its default (true).
    pub fn is_open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }
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
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Task support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
    pub input_schema: Map<String, Value>,
    /// The JSON Schema of `structuredContent`, when the tool returns structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

    /// The smallest input schema, for a tool without arguments: `{"type": "object"}`.
    pub fn empty_input_schema() -> Map<String, Value> {
        let mut schema = Map::new();
        schema.insert("type".to_owned(), Value::String("object".to_owned()));
        schema
    }

    /// Sets the display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Sets the output schema (an object schema).
    pub fn output_schema(mut self, schema: Map<String, Value>) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets `execution.taskSupport`.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.execution = Some(ToolExecution {
            task_support: Some(support),
        });
        self
    }

    /// `execution.taskSupport`, with its default (forbidden).
    pub fn task_support_or_default(&self) -> TaskSupport {
        self.execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or(TaskSupport::Forbidden)
    }

    /// The name to show a person: `title`, then `annotations.title`, then `name`.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }
}

wire_result! {
    /// The result of `tools/list`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    cached pub struct ListToolsResult {
        /// One page of tools.
        pub tools: Vec<Tool>,
        /// The cursor of the next page; absent on the last.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }
}

impl ListToolsResult {
    /// One page of tools, and the cursor of the next page (`None` on the last).
    pub fn page(tools: Vec<Tool>, next_cursor: Option<Cursor>) -> Self {
        Self {
            tools,
            next_cursor,
            ..Self::default()
        }
    }
}

/// The params of `tools/list`.
pub type ListToolsParams = PaginatedParams;

/// The params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `inputResponses` (2026-07-28): answers to a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// `requestState` (2026-07-28): echoed from a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
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
            input_responses: None,
            request_state: None,
            meta: None,
        }
    }

    /// Sets every argument at once.
    pub fn arguments(mut self, arguments: Map<String, Value>) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// Asks for task-augmented execution.
    pub fn task(mut self, task: TaskMetadata) -> Self {
        self.task = Some(task);
        self
    }

    /// Adds one argument.
    pub fn argument(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.arguments
            .get_or_insert_with(Map::new)
            .insert(key.into(), value.into());
        self
    }
}

wire_result! {
    /// The result of `tools/call`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CallToolResult {
        /// The unstructured result (may be empty).
        pub content: Vec<ContentBlock>,
        /// The structured result, conforming to the tool's `outputSchema` (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub structured_content: Option<Value>,
        /// Whether the tool failed (a tool execution error, for the model to read).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub is_error: Option<bool>,
    }
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

    /// A successful structured result: `structuredContent` plus the same JSON as a text block,
    /// for clients that read only `content`.
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..Default::default()
        }
    }

    /// A successful result with these blocks.
    pub fn content(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
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
    ListTools, "tools/list", PaginatedParams, ListToolsResult,
    capability = Tools, cacheable = true
);

request!(
    /// `tools/call`.
    CallTool, "tools/call", CallToolParams, CallToolResult,
    capability = Tools, mcp_name = Name
);

notification!(
    /// `notifications/tools/list_changed`.
    ToolListChanged, "notifications/tools/list_changed", NotificationParams,
    capability = Tools
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stateless::CacheScope;
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
    fn builders_give_the_spec_wire_forms() {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert(
            "properties".into(),
            json!({"location": {"type": "string", "description": "City name or zip code"}}),
        );
        schema.insert("required".into(), json!(["location"]));
        let tool = Tool::new("get_weather", schema)
            .title("Weather Information Provider")
            .description("Get current weather information for a location")
            .icon(Icon::new("https://example.com/weather.png"))
            .output_schema(serde_json::from_value(json!({"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]})).unwrap())
            .annotations(ToolAnnotations::default().read_only(true).open_world(true))
            .task_support(TaskSupport::Forbidden);
        assert_eq!(
            serde_json::to_value(&tool).unwrap(),
            json!({
                "name": "get_weather",
                "title": "Weather Information Provider",
                "description": "Get current weather information for a location",
                "icons": [{"src": "https://example.com/weather.png"}],
                "inputSchema": {"type": "object", "properties": {"location": {"type": "string", "description": "City name or zip code"}}, "required": ["location"]},
                "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]},
                "annotations": {"readOnlyHint": true, "openWorldHint": true},
                "execution": {"taskSupport": "forbidden"}
            })
        );
        let hints = tool.annotations.as_ref().unwrap();
        assert!(hints.is_read_only() && !hints.is_destructive() && !hints.is_idempotent());
        assert!(ToolAnnotations::default().is_destructive());
        assert_eq!(
            Tool::new("t", Tool::empty_input_schema()).task_support_or_default(),
            TaskSupport::Forbidden
        );
        assert_eq!(
            serde_json::to_value(CallToolResult::structured(json!({"temperature": 22.5}))).unwrap(),
            json!({"content": [{"type": "text", "text": "{\"temperature\":22.5}"}], "structuredContent": {"temperature": 22.5}})
        );
    }

    #[test]
    fn call_result_with_every_block_kind() {
        let wire = json!({
            "content": [
                {"type": "text", "text": "Found 2 files"},
                {"type": "image", "data": "base64-encoded-data", "mimeType": "image/png", "annotations": {"audience": ["user"], "priority": 0.9}},
                {"type": "audio", "data": "base64-encoded-audio-data", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs", "description": "Primary application entry point", "mimeType": "text/x-rust"},
                {"type": "resource", "resource": {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust", "text": "fn main() {}", "_meta": {"k": 1}}, "annotations": {"lastModified": "2025-05-03T14:30:00Z"}}
            ],
            "isError": false,
            "_meta": {"io.example/trace": "t"}
        });
        let result: CallToolResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(result.content.len(), 5);
        assert!(!result.failed());
        assert_eq!(serde_json::to_value(&result).unwrap(), wire);
    }

    #[test]
    fn stateless_members_round_trip() {
        let wire =
            json!({"tools": [], "ttlMs": 30000, "cacheScope": "public", "resultType": "complete"});
        let page: ListToolsResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(page.cache_scope, Some(CacheScope::Public));
        assert_eq!(serde_json::to_value(&page).unwrap(), wire);
        let retry = json!({
            "name": "book", "arguments": {},
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
            "requestState": "s1"
        });
        let p: CallToolParams = serde_json::from_value(retry.clone()).unwrap();
        assert_eq!(p.request_state.as_deref(), Some("s1"));
        assert_eq!(serde_json::to_value(&p).unwrap(), retry);
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
