//! What a server offers and who it is serving: the tool, resource, template and prompt lists
//! (changeable while sessions run, through [`ServerHandle`]), and the live sessions that hear
//! about each change.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use junction_protocol::capabilities::ServerCapabilities;
use junction_protocol::jsonrpc;
use junction_protocol::lifecycle::Implementation;
use junction_protocol::logging::LoggingLevel;
use junction_protocol::method::Capability;
use junction_protocol::resources::ResourceUpdatedParams;
use junction_protocol::tools::{CallToolResult, Tool};
use serde_json::value::RawValue;
use serde_json::Value;

use super::fixed_keys::FixedKeys;
use super::lifecycle::{Kept, Lifecycle};
use super::prompt::PromptDef;
use super::resource::{ResourceDef, TemplateDef};
use super::state::States;
use super::{BuildError, Context, ToolDef};
use crate::schema::CompiledSchema;
use crate::session::{BoxFuture, Peer};
use crate::sync::lock;

/// A tool's handler, type-erased: its future, or why the arguments do not decode.
pub(super) type CallFn =
    dyn Fn(Value, Context) -> Result<BoxFuture<'static, CallToolResult>, String> + Send + Sync;

pub(super) struct RegisteredTool {
    pub(super) tool: Tool,
    pub(super) input: Arc<CompiledSchema>,
    pub(super) call: Arc<CallFn>,
}

impl RegisteredTool {
    fn may_run_as_task(&self) -> bool {
        self.tool.task_support_or_default() != junction_protocol::tools::TaskSupport::Forbidden
    }

    fn new(def: ToolDef) -> Result<Self, BuildError> {
        let name = def.tool.name.clone();
        let schema_error = |source| BuildError::Schema {
            tool: name.clone(),
            source,
        };
        if let Some(e) = def.output_error {
            return Err(schema_error(e));
        }
        Ok(RegisteredTool {
            input: def.input.map_err(schema_error)?,
            tool: def.tool,
            call: def.call,
        })
    }
}

/// The four lists, in the order items were added.
#[derive(Default)]
pub(super) struct Lists {
    /// The states handlers may take (see [`super::state`]); the registry's.
    pub(super) states: Arc<States>,
    /// In the order they were added, which is the order `tools/list` pages through.
    tools: Vec<Arc<RegisteredTool>>,
    /// The same tools by name: `tools/call` finds its tool in one lookup, not by comparing
    /// its name with every tool's. Changed only with `tools`, in `add_tool` and `remove_tool`.
    tools_by_name: HashMap<String, Arc<RegisteredTool>, FixedKeys>,
    /// How many of the tools may run as a task: every `tools/call` of 2025-11-25 asks
    /// whether any may, and counting them as they come and go answers without a walk.
    task_tools: usize,
    pub(super) resources: Vec<ResourceDef>,
    pub(super) templates: Vec<TemplateDef>,
    pub(super) prompts: Vec<PromptDef>,
}

impl Lists {
    /// Empty lists whose handlers may take `states`.
    pub(super) fn new(states: Arc<States>) -> Self {
        Lists {
            states,
            ..Lists::default()
        }
    }

    pub(super) fn tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools_by_name.get(name).cloned()
    }

    /// The tools, in the order they were added.
    pub(super) fn tools(&self) -> &[Arc<RegisteredTool>] {
        &self.tools
    }

    /// Removes the tool called `name`; returns whether there was one.
    fn remove_tool(&mut self, name: &str) -> bool {
        let Some(removed) = self.tools_by_name.remove(name) else {
            return false;
        };
        self.task_tools -= usize::from(removed.may_run_as_task());
        remove_where(&mut self.tools, |t| t.tool.name == name)
    }

    pub(super) fn prompt(&self, name: &str) -> Option<&PromptDef> {
        self.prompts.iter().find(|p| p.prompt.name == name)
    }

    fn add_tool(&mut self, def: ToolDef) -> Result<(), BuildError> {
        if self.tools_by_name.contains_key(&def.tool.name) {
            return Err(BuildError::DuplicateTool(def.tool.name));
        }
        if let Some((id, state)) = def.state {
            if !self.states.has(id) {
                return Err(BuildError::MissingState {
                    tool: def.tool.name,
                    state,
                });
            }
        }
        let tool = Arc::new(RegisteredTool::new(def)?);
        self.task_tools += usize::from(tool.may_run_as_task());
        self.tools_by_name
            .insert(tool.tool.name.clone(), Arc::clone(&tool));
        self.tools.push(tool);
        Ok(())
    }

    fn add_resource(&mut self, def: ResourceDef) -> Result<(), BuildError> {
        if self
            .resources
            .iter()
            .any(|r| r.resource.uri == def.resource.uri)
        {
            return Err(BuildError::DuplicateResource(def.resource.uri));
        }
        self.resources.push(def);
        Ok(())
    }

    fn add_template(&mut self, def: TemplateDef) -> Result<(), BuildError> {
        let text = def.template.uri_template.clone();
        if let Err(source) = &def.parsed {
            return Err(BuildError::Template {
                template: text,
                source: source.clone(),
            });
        }
        if self
            .templates
            .iter()
            .any(|t| t.template.uri_template == text)
        {
            return Err(BuildError::DuplicateTemplate(text));
        }
        self.templates.push(def);
        Ok(())
    }

    fn add_prompt(&mut self, def: PromptDef) -> Result<(), BuildError> {
        if self.prompt(&def.prompt.name).is_some() {
            return Err(BuildError::DuplicatePrompt(def.prompt.name));
        }
        self.prompts.push(def);
        Ok(())
    }

    pub(super) fn add(&mut self, item: Item) -> Result<(), BuildError> {
        match item {
            Item::Tool(d) => self.add_tool(d),
            Item::Resource(d) => self.add_resource(d),
            Item::Template(d) => self.add_template(d),
            Item::Prompt(d) => self.add_prompt(d),
        }
    }

    /// Whether a tool may run as a task.
    pub(super) fn has_task_tools(&self) -> bool {
        self.task_tools > 0
    }

    pub(super) fn has_completions(&self) -> bool {
        self.prompts.iter().any(|p| !p.completers.is_empty())
            || self.templates.iter().any(|t| !t.completers.is_empty())
    }

    /// Whether a resource or template answers to `uri`, matching templates within
    /// `steps` steps each.
    pub(super) fn knows_uri(&self, uri: &str, steps: usize) -> bool {
        self.resources.iter().any(|r| r.resource.uri == uri)
            || self.templates.iter().any(|t| {
                t.parsed
                    .as_ref()
                    .is_ok_and(|p| p.matches_within(uri, steps).is_some())
            })
    }
}

/// One definition, of any kind.
pub(super) enum Item {
    Tool(ToolDef),
    Resource(ResourceDef),
    Template(TemplateDef),
    Prompt(PromptDef),
}

/// Which list a change touched.
#[derive(Clone, Copy)]
enum ListKind {
    Tools,
    Resources,
    Prompts,
}

/// A change that sessions hear of.
enum Change {
    /// `notifications/resources/updated` for this URI.
    Updated(String),
    /// `notifications/*/list_changed` for this list.
    List(ListKind),
}

impl Change {
    /// The change a notification announces, if it announces one.
    fn of(notification: &junction_protocol::Notification) -> Option<Self> {
        #[derive(serde::Deserialize)]
        struct Uri {
            uri: String,
        }
        Some(match notification.method.as_str() {
            UPDATED => {
                let params = notification.params.as_deref()?;
                let uri: Uri = serde_json::from_str(params.get()).ok()?;
                Change::Updated(uri.uri)
            }
            m if m == ListKind::Tools.method() => Change::List(ListKind::Tools),
            m if m == ListKind::Resources.method() => Change::List(ListKind::Resources),
            m if m == ListKind::Prompts.method() => Change::List(ListKind::Prompts),
            _ => return None,
        })
    }
}

const UPDATED: &str = "notifications/resources/updated";

impl ListKind {
    fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
        }
    }
}

/// The state of one served connection.
pub(super) struct SessionState {
    pub(super) lifecycle: Lifecycle,
    pub(super) peer: OnceLock<Peer>,
    pub(super) log_level: Mutex<LoggingLevel>,
    pub(super) subscriptions: Mutex<HashSet<String>>,
    /// What this session was told in `initialize`.
    pub(super) declared: Mutex<Option<ServerCapabilities>>,
    /// Whether a 2026-07-28 request was served (then `initialize` is refused).
    pub(super) stateless: std::sync::atomic::AtomicBool,
    /// Whether the connection is one request of sessionless HTTP, which has no way to
    /// carry server→client requests.
    pub(super) sessionless: std::sync::atomic::AtomicBool,
    /// The open `subscriptions/listen` requests of this connection.
    pub(super) listens: Mutex<Vec<Listen>>,
    /// The HTTP transport's controls over this connection, when it is an HTTP session.
    #[cfg(feature = "http-server")]
    pub(super) http: OnceLock<crate::transport::http::server::SessionControl>,
    /// Whether instances share this HTTP session: it hears of changes from the instance
    /// holding its standalone stream, through the session store ([`Registry::publisher`]).
    pub(super) shared: std::sync::atomic::AtomicBool,
    /// Who opened the session, when it came through bearer authorization.
    #[cfg(feature = "http-server")]
    pub(super) identity: Option<crate::auth::resource::Identity>,
    /// What binds the tasks it creates to it, when it has no identity ([`super::task`]):
    /// the session id of an HTTP session that instances share, else a key of this process.
    pub(super) key: OnceLock<String>,
}

/// One open `subscriptions/listen`: its request id and what the server agreed to send.
pub(super) struct Listen {
    pub(super) id: junction_protocol::RequestId,
    pub(super) filter: junction_protocol::stateless::SubscriptionFilter,
}

impl Listen {
    fn wants(&self, kind: ListKind) -> bool {
        let f = &self.filter;
        match kind {
            ListKind::Tools => f.tools_list_changed,
            ListKind::Resources => f.resources_list_changed,
            ListKind::Prompts => f.prompts_list_changed,
        }
        .unwrap_or(false)
    }

    /// Params tagged with this subscription's id.
    pub(super) fn params(
        &self,
        mut params: serde_json::Map<String, serde_json::Value>,
    ) -> Option<Box<serde_json::value::RawValue>> {
        params.insert(
            "_meta".to_owned(),
            serde_json::json!({ junction_protocol::stateless::META_SUBSCRIPTION_ID: self.id }),
        );
        jsonrpc::to_raw(&params).ok()
    }
}

impl SessionState {
    pub(super) fn new(kept: Kept) -> Self {
        SessionState {
            lifecycle: Lifecycle::with_kept(kept),
            peer: OnceLock::new(),
            log_level: Mutex::new(super::logging::DEFAULT_LEVEL),
            subscriptions: Mutex::new(HashSet::new()),
            declared: Mutex::new(None),
            stateless: Default::default(),
            sessionless: std::sync::atomic::AtomicBool::new(false),
            listens: Mutex::new(Vec::new()),
            #[cfg(feature = "http-server")]
            http: OnceLock::new(),
            shared: std::sync::atomic::AtomicBool::new(false),
            #[cfg(feature = "http-server")]
            identity: crate::auth::resource::Identity::current(),
            key: OnceLock::new(),
        }
    }

    /// Whether this instance holds the session's standalone stream (over HTTP; never for
    /// other transports, whose sessions are not shared).
    fn holds_standalone(&self) -> bool {
        #[cfg(feature = "http-server")]
        if let Some(control) = self.http.get() {
            return control.holds_standalone();
        }
        false
    }

    /// Whether this session hears of `change`: past the handshake, and subscribed to the
    /// resource or told at `initialize` that the list changes.
    fn hears(&self, change: &Change) -> bool {
        self.lifecycle.is_ready()
            && match change {
                Change::Updated(uri) => lock(&self.subscriptions).contains(uri.as_str()),
                Change::List(kind) => self.declared_list_changed(*kind),
            }
    }

    /// Sends `method` if this session hears of `change`; whether it was sent.
    fn tell(&self, change: &Change, method: &str, params: Option<Box<RawValue>>) -> bool {
        self.hears(change)
            && self
                .peer
                .get()
                .is_some_and(|p| p.notify_raw(method, params, None).is_ok())
    }

    fn declared_list_changed(&self, kind: ListKind) -> bool {
        let declared = lock(&self.declared);
        let Some(caps) = declared.as_ref() else {
            return false;
        };
        match kind {
            ListKind::Tools => caps.tools.as_ref().and_then(|c| c.list_changed),
            ListKind::Resources => caps.resources.as_ref().and_then(|c| c.list_changed),
            ListKind::Prompts => caps.prompts.as_ref().and_then(|c| c.list_changed),
        }
        .unwrap_or(false)
    }
}

/// Everything a server is, shared by its handle and every session.
pub(super) struct Registry {
    pub(super) info: Implementation,
    pub(super) instructions: Option<String>,
    pub(super) page_size: usize,
    pub(super) subscriptions: bool,
    pub(super) declare: Declare,
    pub(super) lists: Mutex<Lists>,
    pub(super) on_roots_changed: Option<super::RootsHook>,
    /// `info` as JSON, for the `_meta` of 2026-07-28 results.
    pub(super) server_info: super::stateless::ServerInfo,
    /// `ttlMs` and `cacheScope` of cacheable 2026-07-28 results.
    pub(super) cache: (u64, junction_protocol::stateless::CacheScope),
    /// The states handlers may take (see [`super::state`]).
    pub(super) states: Arc<States>,
    /// Tags `requestState` (see [`super::stateless`]).
    pub(super) state_key: super::stateless::StateKey,
    /// The client the last 2026-07-28 request described.
    pub(super) last_client: super::stateless::LastClient,
    /// The tasks of every session ([`super::task`]).
    pub(super) tasks: Arc<super::task::Tasks>,
    /// How much of its `initialize` each session keeps.
    pub(super) kept: Kept,
    /// The most work matching a URI against one template may do.
    pub(super) template_steps: usize,
    /// The layers around every tool call ([`super::layer`]).
    pub(super) tool_layers: super::layer::Layers,
    sessions: Mutex<Vec<Weak<SessionState>>>,
    /// Publishes resource changes to every instance and hears theirs, once the HTTP server
    /// gave the link ([`Registry::share_changes`]).
    #[cfg(feature = "http-server")]
    pub(super) publisher: OnceLock<crate::transport::http::server::SharedChanges>,
}

/// How many items a list page holds unless the builder says otherwise.
pub(super) const DEFAULT_PAGE_SIZE: usize = 100;

/// Lists declared even while empty, because items will be added at run time.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Declare {
    pub(super) tools: bool,
    pub(super) resources: bool,
    pub(super) prompts: bool,
}

impl Registry {
    /// A registry serving `info` and `lists`, with the defaults of [`super::Server::builder`];
    /// `ServerBuilder::build` then sets what was asked for.
    pub(super) fn new(info: Implementation, lists: Lists, tasks: super::task::Tasks) -> Self {
        Registry {
            server_info: super::stateless::ServerInfo::new(&info),
            info,
            instructions: None,
            page_size: DEFAULT_PAGE_SIZE,
            subscriptions: false,
            declare: Declare::default(),
            states: lists.states.clone(),
            lists: Mutex::new(lists),
            on_roots_changed: None,
            cache: (0, junction_protocol::stateless::CacheScope::Private),
            state_key: super::stateless::StateKey::new(),
            last_client: Default::default(),
            tasks: Arc::new(tasks),
            kept: Kept::default(),
            template_steps: crate::uri_template::MAX_ATTEMPTS,
            tool_layers: Arc::from(Vec::new()),
            sessions: Mutex::new(Vec::new()),
            #[cfg(feature = "http-server")]
            publisher: OnceLock::new(),
        }
    }

    pub(super) fn attach(&self, session: &Arc<SessionState>) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    /// The sessions still open.
    fn live_sessions(&self) -> Vec<Arc<SessionState>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| {
            s.upgrade()
                .is_some_and(|s| s.peer.get().is_none_or(|p| !p.is_closed()))
        });
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// Sends `method` to each open listen of each session that `wants` it, tagged with its
    /// subscription id and on its stream; returns how many were told.
    fn to_listens(
        &self,
        method: &str,
        params: &serde_json::Map<String, serde_json::Value>,
        wants: impl Fn(&Listen) -> bool,
    ) -> usize {
        let mut told = 0;
        for session in self.live_sessions() {
            let Some(peer) = session.peer.get() else {
                continue;
            };
            for listen in lock(&session.listens).iter().filter(|l| wants(l)) {
                let sent = listen.params(params.clone()).is_some_and(|raw| {
                    peer.notify_raw(method, Some(raw), Some(listen.id.clone()))
                        .is_ok()
                });
                told += usize::from(sent);
            }
        }
        told
    }

    /// What this server declares in `initialize`, from what it offers now.
    pub(super) fn capabilities(&self) -> ServerCapabilities {
        let lists = lock(&self.lists);
        let has = |capability| self.offers_in(&lists, capability);
        let mut caps = ServerCapabilities::default().with_logging();
        if has(Capability::Tools) {
            caps = caps.with_tools(true);
        }
        if has(Capability::Resources) {
            caps = caps.with_resources(self.subscriptions, true);
        }
        if has(Capability::Prompts) {
            caps = caps.with_prompts(true);
        }
        if has(Capability::Completions) {
            caps = caps.with_completions();
        }
        if has(Capability::Tasks) {
            caps.tasks = Some(super::task::capability());
        }
        caps
    }

    /// Whether the server offers the feature `capability` names now: what
    /// [`Registry::capabilities`] would declare, without building them.
    pub(super) fn offers(&self, capability: Capability) -> bool {
        self.offers_in(&lock(&self.lists), capability)
    }

    fn offers_in(&self, lists: &Lists, capability: Capability) -> bool {
        match capability {
            Capability::Tools => self.declare.tools || !lists.tools.is_empty(),
            Capability::Resources => {
                self.declare.resources || !lists.resources.is_empty() || !lists.templates.is_empty()
            }
            Capability::Prompts => self.declare.prompts || !lists.prompts.is_empty(),
            Capability::Completions => lists.has_completions(),
            Capability::Tasks => lists.has_task_tools(),
            Capability::Always | Capability::Logging => true,
            Capability::Sampling | Capability::Elicitation | Capability::Roots => false,
        }
    }

    /// Whether a tool may run as a task now (then `tasks` is declared and served).
    pub(super) fn offers_tasks(&self) -> bool {
        lock(&self.lists).has_task_tools()
    }

    /// Takes the link through which instances sharing sessions share their resource
    /// changes; the first one given stays. From then on this server's resource changes are
    /// published, and the published changes of every instance reach its listens.
    #[cfg(feature = "http-server")]
    pub(super) fn share_changes(
        registry: &Arc<Registry>,
        changes: crate::transport::http::server::SharedChanges,
    ) {
        if registry.publisher.set(changes.clone()).is_err() {
            return;
        }
        let registry = Arc::downgrade(registry);
        changes.hear(move |notification| {
            if let Some(registry) = registry.upgrade() {
                registry.heard(notification);
            }
        });
    }

    /// A resource change published by any instance (this one included): told to the
    /// listens held here that subscribed to it.
    #[cfg(feature = "http-server")]
    fn heard(&self, notification: &junction_protocol::Notification) {
        if let Some(Change::Updated(uri)) = Change::of(notification) {
            self.updated_to_listens(&uri);
        }
    }

    /// Tells the listens held here that subscribed to `uri` that it changed.
    fn updated_to_listens(&self, uri: &str) -> usize {
        self.to_listens(
            UPDATED,
            &serde_json::Map::from_iter([("uri".to_owned(), serde_json::json!(uri))]),
            |l| {
                l.filter
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.iter().any(|u| u == uri))
            },
        )
    }

    /// A list changed here: told to the sessions held here, and to the listens. In a
    /// deployment every instance makes the same change (the lists are each process's own),
    /// so a list change is not published: a session that instances share hears it from the
    /// instance holding its standalone stream, once.
    fn changed(&self, kind: ListKind) -> usize {
        let method = kind.method();
        let change = Change::List(kind);
        let mut told = 0;
        for session in self.live_sessions() {
            let shared = session.shared.load(std::sync::atomic::Ordering::SeqCst);
            if shared && !session.holds_standalone() {
                continue;
            }
            told += usize::from(session.tell(&change, method, None));
        }
        told + self.to_listens(method, &Default::default(), |l| l.wants(kind))
    }

    /// A resource changed here: told to the sessions and listens it concerns. Once instances
    /// share changes, it is published instead of told to what instances share (sessions
    /// shared through the store, listens), and each instance tells those it holds
    /// ([`Registry::shared_change`], [`Registry::heard`]), so each hears it once.
    fn updated(&self, uri: &str, params: Box<RawValue>) -> usize {
        let change = Change::Updated(uri.to_owned());
        let mut told = 0;
        for session in self.live_sessions() {
            if session.shared.load(std::sync::atomic::Ordering::SeqCst) {
                continue;
            }
            told += usize::from(session.tell(&change, UPDATED, Some(params.clone())));
        }
        #[cfg(feature = "http-server")]
        if let Some(publisher) = self.publisher.get() {
            publisher.publish(UPDATED, Some(&params));
            return told;
        }
        told + self.updated_to_listens(uri)
    }

    /// A change published by an instance sharing sessions with this one, for `session`,
    /// whose standalone stream is held here: sent if the session hears of it, after taking
    /// the subscriptions of its shared record.
    pub(super) fn shared_change(
        &self,
        session: &SessionState,
        change: crate::transport::SharedChange,
    ) {
        if let Some(subscriptions) = change.subscriptions {
            *lock(&session.subscriptions) = subscriptions.into_iter().collect();
        }
        let notification = change.notification;
        let Some(heard) = Change::of(&notification) else {
            return;
        };
        if session.hears(&heard) {
            if let Some(peer) = session.peer.get() {
                let _ = peer.notify_raw(&notification.method, notification.params.clone(), None);
            }
        }
    }
}

/// A cloneable handle on a built server: changes its tools, resources, templates and prompts
/// while sessions are live (each change is visible to the next list request and announced
/// with `notifications/*/list_changed` to every initialized session), and tells subscribers
/// that a resource changed.
#[derive(Clone)]
pub struct ServerHandle {
    pub(super) registry: Arc<Registry>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("info", &self.registry.info)
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    fn add(&self, item: Item, kind: ListKind) -> Result<(), BuildError> {
        lock(&self.registry.lists).add(item)?;
        self.registry.changed(kind);
        Ok(())
    }

    fn remove(&self, kind: ListKind, remove: impl FnOnce(&mut Lists) -> bool) -> bool {
        let removed = remove(&mut lock(&self.registry.lists));
        if removed {
            self.registry.changed(kind);
        }
        removed
    }

    /// Adds a tool; refused if one has the same name.
    pub fn add_tool(&self, tool: ToolDef) -> Result<(), BuildError> {
        self.add(Item::Tool(tool), ListKind::Tools)
    }

    /// Removes the tool called `name`; returns whether there was one.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.remove(ListKind::Tools, |l| l.remove_tool(name))
    }

    /// Adds a resource; refused if one has the same URI.
    pub fn add_resource(&self, resource: ResourceDef) -> Result<(), BuildError> {
        self.add(Item::Resource(resource), ListKind::Resources)
    }

    /// Removes the resource at `uri`; returns whether there was one.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.remove(ListKind::Resources, |l| {
            remove_where(&mut l.resources, |r| r.resource.uri == uri)
        })
    }

    /// Adds a resource template; refused if it is not RFC 6570 or already registered.
    pub fn add_template(&self, template: TemplateDef) -> Result<(), BuildError> {
        self.add(Item::Template(template), ListKind::Resources)
    }

    /// Removes the template `uri_template`; returns whether there was one.
    pub fn remove_template(&self, uri_template: &str) -> bool {
        self.remove(ListKind::Resources, |l| {
            remove_where(&mut l.templates, |t| {
                t.template.uri_template == uri_template
            })
        })
    }

    /// Adds a prompt; refused if one has the same name.
    pub fn add_prompt(&self, prompt: super::PromptDef) -> Result<(), BuildError> {
        self.add(Item::Prompt(prompt), ListKind::Prompts)
    }

    /// Removes the prompt called `name`; returns whether there was one.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.remove(ListKind::Prompts, |l| {
            remove_where(&mut l.prompts, |p| p.prompt.name == name)
        })
    }

    /// Sends `notifications/resources/updated` for `uri` to the sessions and 2026-07-28
    /// listens subscribed to it; returns how many were told here. When instances share
    /// changes ([`Server::share_changes`](super::Server::share_changes)) the change is
    /// published to every instance instead, and what instances share (sessions shared
    /// through the store, listens) hears it from the instance holding its stream, uncounted:
    /// call it once per change, on the instance that made it.
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        let Ok(params) = jsonrpc::to_raw(&ResourceUpdatedParams::new(uri)) else {
            return 0;
        };
        self.registry.updated(uri, params)
    }
}

fn remove_where<T>(items: &mut Vec<T>, hit: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|item| !hit(item));
    items.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::tool;
    use junction_protocol::tools::TaskSupport;

    /// A tool that takes any arguments and answers nothing.
    fn any_tool(name: &str) -> ToolDef {
        tool(name, |_: serde_json::Map<String, Value>| async { "" })
    }

    #[test]
    fn tasks_are_offered_while_a_tool_that_may_run_as_one_is_listed() {
        let mut lists = Lists::default();
        lists.add(Item::Tool(any_tool("plain"))).unwrap();
        assert!(!lists.has_task_tools());
        for name in ["a", "b"] {
            let def = any_tool(name).task_support(TaskSupport::Optional);
            lists.add(Item::Tool(def)).unwrap();
        }
        // A refused duplicate counts nothing.
        assert!(lists.add(Item::Tool(any_tool("plain"))).is_err());
        assert!(lists.remove_tool("a"));
        assert!(lists.has_task_tools());
        assert!(!lists.remove_tool("a"));
        assert!(lists.remove_tool("b"));
        assert!(!lists.has_task_tools());
        assert_eq!(lists.tools().len(), 1);
        assert!(lists.tool("plain").is_some() && lists.tool("b").is_none());
    }
}
