//! The server side of MCP: declare tools, resources, templates, prompts and completions as
//! async functions, then serve any connection.
//!
//! ```
//! use junction::server::{choices, prompt, resource, template, tool, Json, Server};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first number.
//!     a: f64,
//!     /// The second number.
//!     b: f64,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum {
//!     sum: f64,
//! }
//!
//! async fn add(args: AddArgs) -> Json<Sum> {
//!     Json(Sum { sum: args.a + args.b })
//! }
//!
//! let server = Server::builder("calculator", "1.0.0")
//!     .tool(tool("add_numbers", add).description("Adds two numbers"))
//!     .resource(
//!         resource("calc://readme", "readme", |_| async { "Adds numbers." }).mime_type("text/plain"),
//!     )
//!     .template(
//!         template("calc://constants/{name}", "constant", |r| async move {
//!             match r.var("name") {
//!                 Some("pi") => Ok(std::f64::consts::PI.to_string()),
//!                 _ => Err(junction::server::not_found(&r.uri)),
//!             }
//!         })
//!         .complete("name", choices(["pi"])),
//!     )
//!     .prompt(
//!         prompt("explain", |p| async move { format!("Explain {} step by step.", p.arg("topic").unwrap_or("")) })
//!             .description("Explains a topic")
//!             .required("topic", "What to explain")
//!             .complete("topic", choices(["addition", "subtraction"])),
//!     )
//!     .build()
//!     .unwrap();
//! let _handle = server.handle(); // add or remove items later; sessions are told
//! ```
//!
//! Served methods (handshake family, 2024-11-05 … 2025-11-25): the handshake
//! ([`lifecycle`]), `ping`, `tools/list`, `tools/call`, `resources/list`,
//! `resources/templates/list`, `resources/read`, `resources/subscribe`/`unsubscribe` (when
//! [`ServerBuilder::subscriptions`] is on), `prompts/list`, `prompts/get`,
//! `completion/complete`, `logging/setLevel`, and, when a tool may run as a task,
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` ([`task`]); list pages hold [`ServerBuilder::page_size`]
//! items. Handlers get a [`Context`] for progress, logging ([`logging`]) and requests to the
//! client. Results sent to a client of an older revision are trimmed to what it knows.
//!
//! The same server speaks the stateless family (2026-07-28): requests that carry their
//! version and capabilities in `_meta`, `server/discover`, `subscriptions/listen`, and
//! multi round-trip requests in place of server→client requests; see [`stateless`].

mod completion;
mod context;
mod fixed_keys;
mod last_member;
pub mod layer;
pub mod lifecycle;
pub mod logging;
mod prompt;
mod registry;
mod resource;
mod revision;
mod route;
mod router;
mod state;
pub mod stateless;
pub mod task;
mod tool;

pub use completion::{choices, CompleteRequest};
pub use context::{Context, RootsChanged};
pub use layer::{Next, ToolCall};
pub use prompt::{prompt, IntoPromptResult, PromptDef, PromptRequest};
pub use registry::ServerHandle;
pub use resource::{
    not_found, resource, template, Blob, IntoReadResult, ReadRequest, ResourceDef, TemplateDef,
};
pub use state::State;
pub use tool::{tool, IntoToolResult, Json, ToolDef, ToolHandler};

use std::sync::Arc;

use junction_protocol::lifecycle::Implementation;
pub use junction_protocol::stateless::CacheScope;

use crate::schema::SchemaError;
use crate::session::{Peer, Session, SessionOptions};
use crate::transport::Connection;
use crate::uri_template::TemplateError;
use registry::{Declare, Item, Lists, Registry, SessionState};

/// Why a server could not be built, or an item not added.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Two tools share a name.
    #[error("two tools are named `{0}`; tool names must be unique within a server")]
    DuplicateTool(String),
    /// Two resources share a URI.
    #[error("two resources have the URI `{0}`; resource URIs must be unique within a server")]
    DuplicateResource(String),
    /// A template is registered twice.
    #[error("the resource template `{0}` is registered twice")]
    DuplicateTemplate(String),
    /// Two prompts share a name.
    #[error("two prompts are named `{0}`; prompt names must be unique within a server")]
    DuplicatePrompt(String),
    /// A tool's argument or output type does not give a usable schema.
    #[error("tool `{tool}`: {source}")]
    Schema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        #[source]
        source: SchemaError,
    },
    /// A tool takes a [`State`] the server was not given ([`ServerBuilder::state`]).
    #[error("tool `{tool}` takes a State<{state}>, but the server has no such state; give it with ServerBuilder::state")]
    MissingState {
        /// The tool.
        tool: String,
        /// The state's type.
        state: &'static str,
    },
    /// A resource template is not valid RFC 6570.
    #[error("resource template `{template}`: {source}")]
    Template {
        /// The template text.
        template: String,
        /// What is wrong with it.
        #[source]
        source: TemplateError,
    },
}

/// Called when a client sends `notifications/roots/list_changed`.
type RootsHook = Arc<dyn Fn(RootsChanged) + Send + Sync>;

/// Collects a server's definition.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    items: Vec<Item>,
    page_size: usize,
    subscriptions: bool,
    declare: Declare,
    on_roots_changed: Option<RootsHook>,
    cache: (u64, CacheScope),
    states: state::States,
    task_settings: task::TaskSettings,
    task_store: Option<Arc<dyn task::TaskStore>>,
    kept: lifecycle::Kept,
    template_match_steps: usize,
    layers: Vec<Arc<layer::LayerFn>>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("items", &self.items.len())
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Sets the instructions a host may give its model.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Sets the display name in `serverInfo`.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.info.title = Some(text.into());
        self
    }

    /// Gives the handlers `state`: a tool takes it as a [`State<S>`] parameter, other
    /// handlers ask their request for it (see [`State`]). One value per type; cloned for
    /// each call, so share what is expensive behind an `Arc`.
    pub fn state<S: Clone + Send + Sync + 'static>(mut self, state: S) -> Self {
        self.states.insert(state);
        self
    }

    /// Adds a layer around every tool call (see the [`layer`] module for examples): `layer`
    /// gets the call and the rest of the chain, and answers with the result, running
    /// [`Next::run`] or not. Layers run in the order added, the first outermost.
    pub fn around_tools<F, Fut>(mut self, layer: F) -> Self
    where
        F: Fn(ToolCall, Next) -> Fut + Send + Sync + 'static,
        Fut:
            std::future::Future<Output = junction_protocol::tools::CallToolResult> + Send + 'static,
    {
        self.layers.push(layer::erase(layer));
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.items.push(Item::Tool(tool));
        self
    }

    /// Adds a resource.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.items.push(Item::Resource(resource));
        self
    }

    /// Adds a resource template.
    pub fn template(mut self, template: TemplateDef) -> Self {
        self.items.push(Item::Template(template));
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.items.push(Item::Prompt(prompt));
        self
    }

    /// Serves `resources/subscribe` and `resources/unsubscribe` (capability
    /// `resources.subscribe: true`); see [`ServerHandle::notify_resource_updated`].
    pub fn subscriptions(mut self) -> Self {
        self.subscriptions = true;
        self
    }

    /// Declares `tools`, `resources` and `prompts` even while their lists are empty (each is
    /// otherwise declared only when it has an item at `initialize`), for servers that add
    /// items at run time through [`ServerHandle`].
    pub fn declare_all_lists(mut self) -> Self {
        self.declare = Declare {
            tools: true,
            resources: true,
            prompts: true,
        };
        self
    }

    /// Runs `hook` when a client says its roots changed. It runs before the next message
    /// is read: keep it short, and spawn a task to call [`RootsChanged::list_roots`].
    pub fn on_roots_changed(mut self, hook: impl Fn(RootsChanged) + Send + Sync + 'static) -> Self {
        self.on_roots_changed = Some(Arc::new(hook));
        self
    }

    /// Sets how many items a list page holds (at least 1; 100 by default).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Sets `ttlMs` and `cacheScope` of the cacheable 2026-07-28 results (lists,
    /// `resources/read`, `server/discover`). The default is `0` and `private`: lists may change
    /// at run time through [`ServerHandle`], and a client that does not listen would not learn
    /// of it, so nothing is cached unless the server says its items are stable.
    pub fn cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.cache = (u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX), scope);
        self
    }

    /// Sets how tools run as tasks (ttl bounds, poll interval, tasks per caller); see
    /// [`task`].
    pub fn tasks(mut self, settings: task::TaskSettings) -> Self {
        self.task_settings = settings;
        self
    }

    /// Keeps tasks in `store` instead of a [`task::MemoryStore`]; tasks it holds unfinished
    /// from an earlier process are marked failed when the server is built.
    pub fn task_store(mut self, store: Arc<dyn task::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Sets how much of a client's `initialize` each session keeps for its life (by default
    /// 4 KiB of each free-form capability member and 256 bytes of each client info string;
    /// see [`lifecycle::Kept`]).
    pub fn kept(mut self, kept: lifecycle::Kept) -> Self {
        self.kept = kept;
        self
    }

    /// Sets the most work matching one URI against one resource template may do
    /// ([`crate::uri_template::MAX_ATTEMPTS`], 100,000 steps, by default); a URI that needs
    /// more does not match the template.
    pub fn template_match_steps(mut self, steps: usize) -> Self {
        self.template_match_steps = steps;
        self
    }

    /// Checks the definition and builds the server.
    pub fn build(self) -> Result<Server, BuildError> {
        let mut lists = Lists::new(Arc::new(self.states));
        for item in self.items {
            lists.add(item)?;
        }
        let mut registry = Registry::new(
            self.info,
            lists,
            task::Tasks::new(
                self.task_settings,
                self.task_store
                    .unwrap_or_else(|| Arc::new(task::MemoryStore::default())),
            ),
        );
        registry.instructions = self.instructions;
        registry.page_size = self.page_size;
        registry.subscriptions = self.subscriptions;
        registry.declare = self.declare;
        registry.on_roots_changed = self.on_roots_changed;
        registry.cache = self.cache;
        registry.kept = self.kept;
        registry.template_steps = self.template_match_steps;
        registry.tool_layers = self.layers.into();
        Ok(Server {
            handle: ServerHandle {
                registry: Arc::new(registry),
            },
        })
    }
}

/// A built server; cheap to clone, serves any number of connections.
#[derive(Clone)]
pub struct Server {
    handle: ServerHandle,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.handle.registry.info)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Sets the secret that signs the `requestState` of 2026-07-28 multi-round requests
    /// (random per server by default). Instances behind one load balancer need the same
    /// secret, since a client retries on whichever instance it reaches; use at least 32
    /// random bytes. Set it before serving: states signed with the former key are refused.
    pub fn request_state_key(&self, secret: &[u8]) {
        self.handle.registry.state_key.set(secret);
    }

    /// Shares this server's resource changes with the other instances of a deployment
    /// ([`HttpServer::shared_changes`](crate::transport::http::server::HttpServer::shared_changes)),
    /// from now on: [`ServerHandle::notify_resource_updated`] publishes to every instance, and
    /// 2026-07-28 `subscriptions/listen` requests hear the changes made on every instance.
    /// Without it the server learns the link from the first session the HTTP server gives
    /// it, and a change made before that reaches the sessions held here only.
    #[cfg(feature = "http-server")]
    pub fn share_changes(&self, changes: crate::transport::http::server::SharedChanges) {
        registry::Registry::share_changes(&self.handle.registry, changes);
    }

    /// Shares the server's 2025-11-25 tasks with the other instances of a deployment (from
    /// [`HttpServer::shared_tasks`](crate::transport::http::server::HttpServer::shared_tasks)):
    /// `tasks/get`, `tasks/list`, `tasks/result` and `tasks/cancel` then answer on every
    /// instance, while each task's handler runs on the instance that created it. Must be
    /// called within a Tokio runtime; only the first call counts.
    pub fn share_tasks(&self, shared: Arc<dyn task::SharedTasks>) {
        task::Tasks::share(&self.handle.registry.tasks, shared);
    }

    /// Starts declaring a server with its name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            items: Vec::new(),
            page_size: registry::DEFAULT_PAGE_SIZE,
            subscriptions: false,
            declare: Declare::default(),
            on_roots_changed: None,
            cache: (0, CacheScope::Private),
            states: state::States::default(),
            task_settings: task::TaskSettings::default(),
            task_store: None,
            kept: lifecycle::Kept::default(),
            template_match_steps: crate::uri_template::MAX_ATTEMPTS,
            layers: Vec::new(),
        }
    }

    /// The handle that changes this server's lists while it serves.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Serves one connection; the returned peer ends when the connection does.
    pub fn serve(&self, connection: Connection) -> Peer {
        let session = Arc::new(SessionState::new(self.handle.registry.kept));
        self.handle.registry.attach(&session);
        let router = router::Router {
            server: self.handle.clone(),
            session: session.clone(),
        };
        let options = SessionOptions {
            name: self.handle.registry.info.name.clone(),
            finish_running_on_eof: true,
            ..SessionOptions::default()
        };
        let peer = Session::start(connection, router, options);
        // Only this function sets it, once per session.
        let _ = session.peer.set(peer.clone());
        peer
    }
}

#[cfg(test)]
mod feature_tests;
#[cfg(test)]
mod stateless_tests;
#[cfg(test)]
mod tests;
