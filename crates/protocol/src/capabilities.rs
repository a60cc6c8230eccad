//! Capability negotiation: what each side declares in `initialize` (schema 2025-11-25,
//! `ClientCapabilities` and `ServerCapabilities`).
//!
//! Capability sets are open: keys this crate does not know are kept in `extra` and sent back
//! unchanged. A present empty object (`{}`) means "supported"; [`Flag`] is that object.
//!
//! ```
//! use junction_protocol::capabilities::ClientCapabilities;
//! let caps: ClientCapabilities = serde_json::from_str(r#"{"elicitation":{}}"#).unwrap();
//! // `elicitation: {}` counts as form mode only, for backward compatibility.
//! assert!(caps.supports_elicitation_form());
//! assert!(!caps.supports_elicitation_url());
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An open object whose presence means "supported" (`{}` on the wire).
pub type Flag = Map<String, Value>;

/// A capability whose only known member is `listChanged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChanged {
    /// Whether the sender emits `list_changed` notifications for this list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ListChanged {
    /// `{"listChanged": true}`.
    pub fn notifying() -> Self {
        ListChanged {
            list_changed: Some(true),
            extra: Map::new(),
        }
    }
}

/// `sampling`: the client can run the server's LLM requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingCapability {
    /// `includeContext` other than `none` is allowed (soft-deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Flag>,
    /// `tools` and `toolChoice` are allowed in sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Flag>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `elicitation`: the client can ask its user on the server's behalf.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Flag>,
    /// URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Flag>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tasks.requests.sampling` (client side).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskSamplingRequests {
    /// `sampling/createMessage` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<Flag>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tasks.requests.elicitation` (client side).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskElicitationRequests {
    /// `elicitation/create` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<Flag>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tasks.requests.tools` (server side).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskToolRequests {
    /// `tools/call` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Flag>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tasks.requests`: the request types that accept task augmentation. The set is exhaustive:
/// a request type not listed cannot be augmented. A client fills `sampling` and
/// `elicitation`, a server fills `tools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRequests {
    /// Client side: `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<TaskSamplingRequests>,
    /// Client side: `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<TaskElicitationRequests>,
    /// Server side: `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<TaskToolRequests>,
    /// Unknown request groups, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tasks` (experimental in 2025-11-25): task support of the side that declares it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TasksCapability {
    /// `tasks/list` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<Flag>,
    /// `tasks/cancel` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<Flag>,
    /// The request types that accept augmentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<TaskRequests>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TasksCapability {
    /// Declares `list`: `tasks/list` is served.
    pub fn with_list(mut self) -> Self {
        self.list.get_or_insert_with(Flag::new);
        self
    }

    /// Declares `cancel`: `tasks/cancel` is served.
    pub fn with_cancel(mut self) -> Self {
        self.cancel.get_or_insert_with(Flag::new);
        self
    }

    /// Declares `requests.tools.call`: `tools/call` may run as a task (a server).
    pub fn with_tool_calls(mut self) -> Self {
        let tools = self.requests().tools.get_or_insert_with(Default::default);
        tools.call.get_or_insert_with(Flag::new);
        self
    }

    /// Declares `requests.sampling.createMessage`: sampling may run as a task (a client).
    pub fn with_sampling_requests(mut self) -> Self {
        let sampling = self
            .requests()
            .sampling
            .get_or_insert_with(Default::default);
        sampling.create_message.get_or_insert_with(Flag::new);
        self
    }

    /// Declares `requests.elicitation.create`: elicitation may run as a task (a client).
    pub fn with_elicitation_requests(mut self) -> Self {
        let elicitation = self
            .requests()
            .elicitation
            .get_or_insert_with(Default::default);
        elicitation.create.get_or_insert_with(Flag::new);
        self
    }

    /// `requests`, declared.
    fn requests(&mut self) -> &mut TaskRequests {
        self.requests.get_or_insert_with(Default::default)
    }

    /// Whether `requests.<group>.<method>` is declared, e.g. `("tools", "call")` or
    /// `("sampling", "createMessage")`; groups this crate does not know are looked up too.
    pub fn accepts(&self, group: &str, method: &str) -> bool {
        let Some(r) = &self.requests else {
            return false;
        };
        match (group, method) {
            ("tools", "call") => r.tools.as_ref().is_some_and(|t| t.call.is_some()),
            ("sampling", "createMessage") => r
                .sampling
                .as_ref()
                .is_some_and(|s| s.create_message.is_some()),
            ("elicitation", "create") => r.elicitation.as_ref().is_some_and(|e| e.create.is_some()),
            _ => r
                .extra
                .get(group)
                .and_then(|g| g.get(method))
                .is_some_and(Value::is_object),
        }
    }
}

/// What a client declares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// `roots/list` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<ListChanged>,
    /// `sampling/createMessage` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// `elicitation/create` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Task augmentation of server→client requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientCapabilities {
    /// Whether form-mode elicitation may be sent (`elicitation: {}` counts as form).
    pub fn supports_elicitation_form(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// Whether URL-mode elicitation may be sent.
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// Whether sampling may be requested at all.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether sampling requests may carry `tools` / `toolChoice`.
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Whether `includeContext` other than `none` may be used in sampling.
    pub fn supports_sampling_context(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.context.is_some())
    }

    /// Whether `roots/list` may be requested.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// Whether the client sends `notifications/roots/list_changed`.
    pub fn supports_roots_list_changed(&self) -> bool {
        self.roots
            .as_ref()
            .is_some_and(|r| r.list_changed == Some(true))
    }

    /// Whether `sampling/createMessage` may be task-augmented.
    pub fn supports_task_sampling(&self) -> bool {
        self.tasks
            .as_ref()
            .is_some_and(|t| t.accepts("sampling", "createMessage"))
    }

    /// Whether `elicitation/create` may be task-augmented.
    pub fn supports_task_elicitation(&self) -> bool {
        self.tasks
            .as_ref()
            .is_some_and(|t| t.accepts("elicitation", "create"))
    }

    /// Declares `roots`, with or without `listChanged`.
    pub fn with_roots(mut self, list_changed: bool) -> Self {
        self.roots = Some(ListChanged {
            list_changed: list_changed.then_some(true),
            extra: Map::new(),
        });
        self
    }

    /// Declares `sampling: {}`.
    pub fn with_sampling(mut self) -> Self {
        self.sampling.get_or_insert_with(Default::default);
        self
    }

    /// Declares `sampling.tools` (and `sampling`).
    pub fn with_sampling_tools(mut self) -> Self {
        self.sampling
            .get_or_insert_with(Default::default)
            .tools
            .get_or_insert_with(Flag::new);
        self
    }

    /// Declares `elicitation: {}` (form mode, as a client that names no mode means).
    pub fn with_elicitation(mut self) -> Self {
        self.elicitation.get_or_insert_with(Default::default);
        self
    }

    /// Declares `elicitation.form`.
    pub fn with_elicitation_form(mut self) -> Self {
        self.elicitation
            .get_or_insert_with(Default::default)
            .form
            .get_or_insert_with(Flag::new);
        self
    }

    /// Declares `elicitation.url`.
    pub fn with_elicitation_url(mut self) -> Self {
        self.elicitation
            .get_or_insert_with(Default::default)
            .url
            .get_or_insert_with(Flag::new);
        self
    }

    /// Declares extension `name` (e.g. `io.modelcontextprotocol/tasks`) with its settings.
    pub fn with_extension(mut self, name: impl Into<String>, settings: Map<String, Value>) -> Self {
        self.extensions
            .get_or_insert_with(Map::new)
            .insert(name.into(), Value::Object(settings));
        self
    }

    /// Declares `tasks`.
    pub fn with_tasks(mut self, tasks: TasksCapability) -> Self {
        self.tasks = Some(tasks);
        self
    }
}

/// `resources`: the server offers resources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// `resources/subscribe` and `resources/unsubscribe` are served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// `notifications/resources/list_changed` is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a server declares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// `logging/setLevel` is served and `notifications/message` may be sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Flag>,
    /// `completion/complete` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Flag>,
    /// Prompts are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChanged>,
    /// Resources are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Tools are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChanged>,
    /// Task augmentation of client→server requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ServerCapabilities {
    /// Whether tools are offered.
    pub fn supports_tools(&self) -> bool {
        self.tools.is_some()
    }

    /// Whether prompts are offered.
    pub fn supports_prompts(&self) -> bool {
        self.prompts.is_some()
    }

    /// Whether resources are offered.
    pub fn supports_resources(&self) -> bool {
        self.resources.is_some()
    }

    /// Whether `logging/setLevel` may be sent.
    pub fn supports_logging(&self) -> bool {
        self.logging.is_some()
    }

    /// Whether `completion/complete` may be sent.
    pub fn supports_completions(&self) -> bool {
        self.completions.is_some()
    }

    /// Whether `tasks/list` may be sent.
    pub fn supports_task_list(&self) -> bool {
        self.tasks.as_ref().is_some_and(|t| t.list.is_some())
    }

    /// Whether `tasks/cancel` may be sent.
    pub fn supports_task_cancel(&self) -> bool {
        self.tasks.as_ref().is_some_and(|t| t.cancel.is_some())
    }

    /// Declares `tools`, with or without `listChanged`.
    pub fn with_tools(mut self, list_changed: bool) -> Self {
        self.tools = Some(ListChanged {
            list_changed: list_changed.then_some(true),
            extra: Map::new(),
        });
        self
    }

    /// Declares `prompts`, with or without `listChanged`.
    pub fn with_prompts(mut self, list_changed: bool) -> Self {
        self.prompts = Some(ListChanged {
            list_changed: list_changed.then_some(true),
            extra: Map::new(),
        });
        self
    }

    /// Declares `resources`, with or without `subscribe` and `listChanged`.
    pub fn with_resources(mut self, subscribe: bool, list_changed: bool) -> Self {
        self.resources = Some(ResourcesCapability {
            subscribe: subscribe.then_some(true),
            list_changed: list_changed.then_some(true),
            extra: Map::new(),
        });
        self
    }

    /// Declares `logging: {}`.
    pub fn with_logging(mut self) -> Self {
        self.logging = Some(Flag::new());
        self
    }

    /// Declares extension `name` (e.g. `io.modelcontextprotocol/tasks`) with its settings.
    pub fn with_extension(mut self, name: impl Into<String>, settings: Map<String, Value>) -> Self {
        self.extensions
            .get_or_insert_with(Map::new)
            .insert(name.into(), Value::Object(settings));
        self
    }

    /// Declares `tasks`.
    pub fn with_tasks(mut self, tasks: TasksCapability) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Declares `completions: {}`.
    pub fn with_completions(mut self) -> Self {
        self.completions = Some(Flag::new());
        self
    }

    /// Whether `resources/subscribe` may be sent.
    pub fn supports_resource_subscriptions(&self) -> bool {
        self.resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true))
    }

    /// Whether `tools/call` may be task-augmented.
    pub fn supports_task_tool_calls(&self) -> bool {
        self.tasks
            .as_ref()
            .is_some_and(|t| t.accepts("tools", "call"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_capabilities_round_trip_with_unknown_keys() {
        let wire = json!({
            "roots": {"listChanged": true},
            "sampling": {"tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"list": {}, "requests": {"elicitation": {"create": {}}}},
            "experimental": {"x": {}},
            "futureThing": {"a": 1}
        });
        let caps: ClientCapabilities = serde_json::from_value(wire.clone()).unwrap();
        assert!(caps.supports_sampling_tools() && caps.supports_roots());
        assert!(caps.supports_elicitation_form() && caps.supports_elicitation_url());
        assert!(caps
            .tasks
            .as_ref()
            .unwrap()
            .accepts("elicitation", "create"));
        assert_eq!(serde_json::to_value(&caps).unwrap(), wire);
    }

    #[test]
    fn absent_means_unsupported_and_empty_means_supported() {
        let none = ClientCapabilities::default();
        assert_eq!(serde_json::to_value(&none).unwrap(), json!({}));
        assert!(!none.supports_sampling() && !none.supports_elicitation_form());
        let url_only: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        assert!(!url_only.supports_elicitation_form() && url_only.supports_elicitation_url());
        let sampling: ClientCapabilities = serde_json::from_value(json!({"sampling": {}})).unwrap();
        assert!(sampling.supports_sampling() && !sampling.supports_sampling_tools());
    }

    #[test]
    fn builders_give_the_spec_wire_forms() {
        let client = ClientCapabilities::default()
            .with_roots(true)
            .with_sampling_tools()
            .with_elicitation_form()
            .with_elicitation_url();
        assert_eq!(
            serde_json::to_value(&client).unwrap(),
            json!({"roots": {"listChanged": true}, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
        );
        assert!(client.supports_roots_list_changed() && !client.supports_sampling_context());
        let server = ServerCapabilities::default()
            .with_tools(false)
            .with_prompts(true)
            .with_resources(true, false)
            .with_logging()
            .with_completions();
        assert_eq!(
            serde_json::to_value(&server).unwrap(),
            json!({"tools": {}, "prompts": {"listChanged": true}, "resources": {"subscribe": true}, "logging": {}, "completions": {}})
        );
        assert!(
            server.supports_tools() && server.supports_logging() && server.supports_completions()
        );
    }

    #[test]
    fn task_capabilities_of_both_sides() {
        let wire = json!({
            "tasks": {
                "list": {}, "cancel": {},
                "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}, "future": {"do": {}}}
            }
        });
        let caps: ClientCapabilities = serde_json::from_value(wire.clone()).unwrap();
        assert!(caps.supports_task_sampling() && caps.supports_task_elicitation());
        assert!(caps.tasks.as_ref().unwrap().accepts("future", "do"));
        assert!(!caps.tasks.as_ref().unwrap().accepts("tools", "call"));
        assert_eq!(serde_json::to_value(&caps).unwrap(), wire);
        let server: ServerCapabilities = serde_json::from_value(
            json!({"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}),
        )
        .unwrap();
        assert!(server.supports_task_list() && server.supports_task_cancel());
        assert!(server.supports_task_tool_calls());
    }

    #[test]
    fn extensions_and_experimental_round_trip() {
        let wire = json!({
            "experimental": {"io.example/beta": {"level": 2}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "tools": {"listChanged": true, "vendorFlag": 1}
        });
        let caps: ServerCapabilities = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            caps.tools.as_ref().unwrap().extra.get("vendorFlag"),
            Some(&json!(1))
        );
        assert_eq!(serde_json::to_value(&caps).unwrap(), wire);
    }

    #[test]
    fn server_capabilities_wire_form() {
        let caps = ServerCapabilities {
            logging: Some(Flag::new()),
            completions: Some(Flag::new()),
            prompts: Some(ListChanged::notifying()),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            }),
            tools: Some(ListChanged::notifying()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&caps).unwrap(),
            json!({
                "logging": {}, "completions": {}, "prompts": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true}, "tools": {"listChanged": true}
            })
        );
        assert!(caps.supports_resource_subscriptions() && !caps.supports_task_tool_calls());
        let tasks: ServerCapabilities =
            serde_json::from_value(json!({"tasks": {"requests": {"tools": {"call": {}}}}}))
                .unwrap();
        assert!(tasks.supports_task_tool_calls());
    }
}
