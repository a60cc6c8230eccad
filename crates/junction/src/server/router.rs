//! The router of one session: decides the family of each request once, admits it within
//! that session's state (handshake, log level, subscriptions), and hands it to the typed
//! route of its method ([`super::route`]). The handlers below receive decoded params.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use junction_protocol::capabilities::ServerCapabilities;
use junction_protocol::completion::{Complete, CompleteParams, CompleteResult};
use junction_protocol::error::ErrorCode;
use junction_protocol::lifecycle::{
    Implementation, Initialize, InitializeParams, InitializeResult, Initialized, Ping,
};
use junction_protocol::logging::{SetLevel, SetLevelParams};
use junction_protocol::meta::{EmptyParams, EmptyResult, PaginatedParams, TaskMetadata};
use junction_protocol::method::{Capability, MethodInfo, Notification as _, Request};
use junction_protocol::prompts::{
    GetPrompt, GetPromptParams, GetPromptResult, ListPrompts, ListPromptsResult,
};
use junction_protocol::resources::{
    ListResourceTemplates, ListResourceTemplatesResult, ListResources, ListResourcesResult,
    ReadResource, ReadResourceResult, Subscribe, Unsubscribe, UriParams,
};
use junction_protocol::roots::RootsListChanged;
use junction_protocol::stateless::{
    Discover, DiscoverParams, DiscoverResult, RequestEnvelope, SubscriptionFilter,
    SubscriptionsAcknowledged, SubscriptionsAcknowledgedParams, SubscriptionsListen,
    SubscriptionsListenParams, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION,
    META_SUBSCRIPTION_ID,
};
use junction_protocol::task_extension::{UpdateTask, TASKS_EXTENSION};
use junction_protocol::tasks::{CancelTask, GetTask, GetTaskPayload, ListTasks};
use junction_protocol::tools::{CallTool, CallToolResult, ListTools, ListToolsResult, TaskSupport};
use junction_protocol::version::Family;
use junction_protocol::ProgressToken;
use junction_protocol::{ErrorObject, Notification, ProtocolVersion};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::registry::{Listen, SessionState};
use super::route::{Admission, Route, Routes, Served};
use super::task::{self, ToolAnswer};
use super::{completion, resource, revision, stateless, ServerHandle};
use crate::session::{BoxFuture, IncomingRequest, Peer, RequestContext, Service};
use crate::sync::lock;
#[cfg(feature = "http-server")]
use crate::transport::http::param;
use crate::transport::TransportEvent;

/// Removes a listen from its session when the listen request ends, however it ends.
struct ListenGuard {
    session: Arc<SessionState>,
    id: junction_protocol::RequestId,
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        lock(&self.session.listens).retain(|l| l.id != self.id);
    }
}

/// Whether the feature `method` belongs to is offered, as `has` tells of each capability
/// (what a session was declared, or what the server offers now).
fn offered(method: &MethodInfo, has: impl Fn(Capability) -> bool) -> bool {
    match method.capability {
        Capability::Completions => [
            Capability::Completions,
            Capability::Prompts,
            Capability::Resources,
        ]
        .into_iter()
        .any(has),
        c @ (Capability::Tools
        | Capability::Resources
        | Capability::Prompts
        | Capability::Tasks) => has(c),
        _ => true,
    }
}

/// Whether `caps` declare `capability`.
fn declares(caps: &ServerCapabilities, capability: Capability) -> bool {
    match capability {
        Capability::Tools => caps.tools.is_some(),
        Capability::Resources => caps.resources.is_some(),
        Capability::Prompts => caps.prompts.is_some(),
        Capability::Completions => caps.completions.is_some(),
        Capability::Tasks => caps.tasks.is_some(),
        _ => true,
    }
}

/// The session's side of a server: what every route of this session shares.
#[derive(Clone)]
pub(super) struct Router {
    pub(super) server: ServerHandle,
    pub(super) session: Arc<SessionState>,
}

/// Every method the server answers, bound once.
fn routes() -> &'static Routes {
    static ROUTES: OnceLock<Routes> = OnceLock::new();
    ROUTES.get_or_init(|| {
        Routes::default()
            .route::<Initialize>(initialize)
            .route::<Ping>(ping)
            .route::<SetLevel>(set_level)
            .route::<Subscribe>(subscribe)
            .route::<Unsubscribe>(unsubscribe)
            .route::<ListTools>(list_tools)
            .route_with::<CallTool, ToolCall, _>(call_tool)
            .route_as::<GetTask, _>(task::get)
            .route::<GetTaskPayload>(task::result)
            .route::<ListTasks>(task::list)
            .route_as::<CancelTask, _>(task::cancel)
            .route::<UpdateTask>(task::update)
            .route::<ListResources>(list_resources)
            .route::<ListResourceTemplates>(list_templates)
            .route::<ReadResource>(read_resource)
            .route::<ListPrompts>(list_prompts)
            .route::<GetPrompt>(get_prompt)
            .route::<Complete>(complete)
            .route::<Discover>(discover)
            .route::<SubscriptionsListen>(listen)
    })
}

/// Cursors are page offsets, opaque to clients.
fn page_bounds(
    cursor: Option<&str>,
    len: usize,
    size: usize,
) -> Result<(usize, usize, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .strip_prefix("offset:")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n <= len)
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "Invalid params: unknown cursor {c:?}; list again from the start"
                ))
            })?,
    };
    let end = (start + size).min(len);
    Ok((start, end, (end < len).then(|| format!("offset:{end}"))))
}

/// One page of `items`, mapped by `f`, and the cursor of the next.
fn page<T, U>(
    p: &PaginatedParams,
    items: &[T],
    size: usize,
    f: impl Fn(&T) -> U,
) -> Result<(Vec<U>, Option<String>), ErrorObject> {
    let (start, end, next) = page_bounds(p.cursor.as_deref(), items.len(), size)?;
    Ok((items[start..end].iter().map(f).collect(), next))
}

async fn initialize(s: Served, params: InitializeParams) -> Result<InitializeResult, ErrorObject> {
    let session = &s.router.session;
    let version = session.lifecycle.initialize(&params)?;
    let registry = &s.router.server.registry;
    let capabilities = registry.capabilities();
    *lock(&session.declared) = Some(capabilities.clone());
    let mut result = InitializeResult::new(version, capabilities, registry.info.clone());
    result.instructions = registry.instructions.clone();
    revision::initialize_result(version, &mut result);
    Ok(result)
}

async fn ping(_: Served, _: EmptyParams) -> Result<EmptyResult, ErrorObject> {
    Ok(EmptyResult::default())
}

async fn set_level(s: Served, p: SetLevelParams) -> Result<EmptyResult, ErrorObject> {
    *lock(&s.router.session.log_level) = p.level;
    Ok(EmptyResult::default())
}

/// `resources/subscribe` and `resources/unsubscribe`, served only when the server offers
/// subscriptions.
fn subscriptions(s: &Served, method: &str) -> Result<(), ErrorObject> {
    if s.router.server.registry.subscriptions {
        Ok(())
    } else {
        Err(ErrorObject::method_not_found(method))
    }
}

async fn subscribe(s: Served, p: UriParams) -> Result<EmptyResult, ErrorObject> {
    subscriptions(&s, Subscribe::METHOD)?;
    let registry = &s.router.server.registry;
    if !lock(&registry.lists).knows_uri(&p.uri, registry.template_steps) {
        return Err(resource::not_found(&p.uri));
    }
    lock(&s.router.session.subscriptions).insert(p.uri);
    Ok(EmptyResult::default())
}

async fn unsubscribe(s: Served, p: UriParams) -> Result<EmptyResult, ErrorObject> {
    subscriptions(&s, Unsubscribe::METHOD)?;
    lock(&s.router.session.subscriptions).remove(&p.uri);
    Ok(EmptyResult::default())
}

fn page_size(s: &Served) -> usize {
    s.router.server.registry.page_size
}

async fn list_tools(s: Served, p: PaginatedParams) -> Result<ListToolsResult, ErrorObject> {
    let v = s.version;
    let lists = lock(&s.router.server.registry.lists);
    let (tools, next_cursor) = page(&p, lists.tools(), page_size(&s), |t| {
        revision::tool(v, t.tool.clone())
    })?;
    Ok(ListToolsResult::page(tools, next_cursor))
}

/// The members of `tools/call` the server acts on. The rest of
/// [`CallToolParams`](junction_protocol::tools::CallToolParams) is the
/// envelope: its progress token was read by the session, and on 2026-07-28 its `_meta`,
/// `inputResponses` and `requestState` go to the envelope read in the same walk
/// ([`RequestEnvelope::read_with`]), which checks the token as `_meta` below does here.
#[derive(Deserialize)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(default)]
    task: Option<TaskMetadata>,
    #[serde(rename = "_meta", default)]
    _meta: Option<MetaShape>,
}

/// A request's `_meta`, checked as [`junction_protocol::meta::RequestMeta`] checks it (an
/// object whose `progressToken`, if any, is a string or an integer, given once) without
/// keeping its keys.
struct MetaShape;

impl<'de> Deserialize<'de> for MetaShape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        enum Key {
            #[serde(rename = "progressToken")]
            ProgressToken,
            #[serde(other)]
            Other,
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = MetaShape;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a `_meta` object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MetaShape, A::Error> {
                let mut token = false;
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::ProgressToken if token => {
                            return Err(serde::de::Error::duplicate_field("progressToken"))
                        }
                        Key::ProgressToken => {
                            token = true;
                            map.next_value::<Option<ProgressToken>>()?;
                        }
                        Key::Other => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(MetaShape)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

async fn call_tool(s: Served, params: ToolCall) -> Result<ToolAnswer, ErrorObject> {
    let entry = lock(&s.router.server.registry.lists).tool(&params.name);
    let Some(entry) = entry else {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown tool: {}",
            params.name
        )));
    };
    let support = entry.tool.task_support_or_default();
    // 2026-07-28: the server decides whether a call runs as a task, for a request that
    // declares the tasks extension; `task` in the params (the handshake family's) is ignored.
    let stateless = s.family == Family::Stateless;
    let extension = stateless && task::extension_declared(&s);
    if stateless && support == TaskSupport::Required && !extension {
        return Err(task::extension_missing());
    }
    // `task` counts only where tasks are declared: 2025-11-25 on, with a tool that has them.
    let tasks_declared = s.family == Family::Handshake
        && s.version >= ProtocolVersion::V2025_11_25
        && s.router.server.registry.offers_tasks();
    let task = params.task.filter(|_| tasks_declared);
    match (support, &task) {
        (TaskSupport::Forbidden, Some(_)) if tasks_declared => {
            return Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!(
                "Tool `{}` cannot run as a task (its execution.taskSupport is \"forbidden\"); call it without `task`",
                params.name
            )));
        }
        (TaskSupport::Required, None) if !stateless => {
            return Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!(
                "Tool `{}` must run as a task (its execution.taskSupport is \"required\"); add `task` to the params",
                params.name
            )));
        }
        _ => {}
    }
    let arguments = params.arguments.unwrap_or_default();
    if s.family == Family::Stateless {
        #[cfg(feature = "http-server")]
        if let Some(http) = s.router.session.http.get() {
            param::check(&entry.tool.input_schema, &arguments, &http.param_headers())
                .map_err(|e| ErrorObject::new(ErrorCode::HEADER_MISMATCH, e))?;
        }
    }
    let args = Value::Object(arguments);
    if let Err(problems) = entry.input.check(&args) {
        return Ok(ToolAnswer::Done(CallToolResult::error(format!(
            "Invalid arguments for tool `{}`: {}.",
            params.name,
            problems.join("; ")
        ))));
    }
    // The task paths are boxed: their futures are large, and unboxed they would make every
    // call's future large (1,320 bytes, beyond the allocator's fast sizes, instead of 384).
    if let Some(task) = task {
        return Box::pin(task::start(s, entry, args, task.ttl))
            .await
            .map(ToolAnswer::Task);
    }
    if extension && support != TaskSupport::Forbidden {
        return Box::pin(task::decide(s, entry, args)).await;
    }
    let version = s.version;
    let result = super::layer::run(entry, args, s.context()).await;
    Ok(ToolAnswer::Done(revision::call_result(version, result)))
}

async fn list_resources(s: Served, p: PaginatedParams) -> Result<ListResourcesResult, ErrorObject> {
    let v = s.version;
    let lists = lock(&s.router.server.registry.lists);
    let (resources, next_cursor) = page(&p, &lists.resources, page_size(&s), |r| {
        revision::resource(v, r.resource.clone())
    })?;
    Ok(ListResourcesResult::page(resources, next_cursor))
}

async fn list_templates(
    s: Served,
    p: PaginatedParams,
) -> Result<ListResourceTemplatesResult, ErrorObject> {
    let v = s.version;
    let lists = lock(&s.router.server.registry.lists);
    let (resource_templates, next_cursor) = page(&p, &lists.templates, page_size(&s), |t| {
        revision::template(v, t.template.clone())
    })?;
    Ok(ListResourceTemplatesResult::page(
        resource_templates,
        next_cursor,
    ))
}

async fn read_resource(s: Served, params: UriParams) -> Result<ReadResourceResult, ErrorObject> {
    let uri = params.uri;
    let found = {
        let registry = &s.router.server.registry;
        let lists = lock(&registry.lists);
        lists
            .resources
            .iter()
            .find(|r| r.resource.uri == uri)
            .map(|r| {
                (
                    r.read.clone(),
                    r.resource.mime_type.clone(),
                    Default::default(),
                )
            })
            .or_else(|| {
                lists.templates.iter().find_map(|t| {
                    let vars = t
                        .parsed
                        .as_ref()
                        .ok()?
                        .matches_within(&uri, registry.template_steps)?;
                    Some((t.read.clone(), t.template.mime_type.clone(), vars))
                })
            })
    };
    let Some((read, mime_type, variables)) = found else {
        return Err(resource::not_found(&uri));
    };
    let request = resource::ReadRequest {
        uri,
        variables,
        context: s.context(),
    };
    read(request, mime_type).await
}

async fn list_prompts(s: Served, p: PaginatedParams) -> Result<ListPromptsResult, ErrorObject> {
    let v = s.version;
    let lists = lock(&s.router.server.registry.lists);
    let (prompts, next_cursor) = page(&p, &lists.prompts, page_size(&s), |p| {
        revision::prompt(v, p.prompt.clone())
    })?;
    Ok(ListPromptsResult::page(prompts, next_cursor))
}

async fn get_prompt(s: Served, params: GetPromptParams) -> Result<GetPromptResult, ErrorObject> {
    let arguments = params.arguments.unwrap_or_default();
    let get = {
        let lists = lock(&s.router.server.registry.lists);
        let prompt = lists.prompt(&params.name).ok_or_else(|| {
            ErrorObject::invalid_params(format!("Invalid params: unknown prompt `{}`", params.name))
        })?;
        prompt.check(&arguments)?;
        prompt.get.clone()
    };
    let version = s.version;
    let result = get(super::PromptRequest {
        arguments,
        context: s.context(),
    })
    .await?;
    Ok(revision::prompt_result(version, result))
}

async fn complete(s: Served, params: CompleteParams) -> Result<CompleteResult, ErrorObject> {
    let completer = completion::find(&lock(&s.router.server.registry.lists), &params)?;
    Ok(completion::complete(completer, params, s.context()).await)
}

/// `server/discover`: what this server speaks and offers.
async fn discover(s: Served, _: DiscoverParams) -> Result<DiscoverResult, ErrorObject> {
    let registry = &s.router.server.registry;
    let versions = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str().to_owned())
        .collect();
    let mut capabilities = registry.capabilities();
    // 2026-07-28 has no `logging/setLevel`: the level travels in each request's `_meta`.
    capabilities.logging = None;
    // Nor the experimental `tasks`: tasks are the extension there.
    if capabilities.tasks.take().is_some() {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION.to_owned(), json!({}));
    }
    let mut result = DiscoverResult::new(versions, capabilities);
    result.instructions = registry.instructions.clone();
    Ok(result)
}

/// `subscriptions/listen`: acknowledges, then holds the request open while this
/// connection's list changes and resource updates are sent on it, until it is cancelled.
async fn listen(s: Served, p: SubscriptionsListenParams) -> Result<EmptyResult, ErrorObject> {
    let registry = &s.router.server.registry;
    let caps = registry.capabilities();
    let want = p.notifications;
    let mut honoured = SubscriptionFilter::default();
    honoured.tools_list_changed = want
        .tools_list_changed
        .filter(|&b| b && caps.tools.is_some());
    honoured.prompts_list_changed = want
        .prompts_list_changed
        .filter(|&b| b && caps.prompts.is_some());
    honoured.resources_list_changed = want
        .resources_list_changed
        .filter(|&b| b && caps.resources.is_some());
    honoured.resource_subscriptions = want
        .resource_subscriptions
        .filter(|_| registry.subscriptions);
    let context = &s.request;
    let id = context.id().clone();
    let tagged = json!({ META_SUBSCRIPTION_ID: id });
    let meta: Option<junction_protocol::Meta> = serde_json::from_value(tagged).ok();
    {
        // Under the lock, so that no change is sent on this stream before the ack.
        let mut listens = lock(&s.router.session.listens);
        let ack = SubscriptionsAcknowledgedParams::new(honoured.clone(), meta.clone());
        context
            .peer()
            .notify::<SubscriptionsAcknowledged>(&ack, Some(id.clone()))
            .map_err(|e| ErrorObject::internal(format!("could not acknowledge: {e}")))?;
        listens.push(Listen {
            id: id.clone(),
            filter: honoured,
        });
    }
    let _open = ListenGuard {
        session: s.router.session.clone(),
        id,
    };
    let cancel = context.cancellation();
    tokio::select! {
        () = cancel.cancelled() => {}
        () = context.peer().closed() => {}
    }
    let mut result = EmptyResult::default();
    result.meta = meta;
    Ok(result)
}

impl Router {
    /// Refuses (-32601) a method of a feature this session was not told about in
    /// `initialize`, so a session sees one consistent server.
    fn declared(&self, method: &str, info: Option<&MethodInfo>) -> Result<(), ErrorObject> {
        let declared = lock(&self.session.declared);
        match (declared.as_ref(), info) {
            (Some(caps), Some(info)) if !offered(info, |c| declares(caps, c)) => {
                Err(ErrorObject::method_not_found(method))
            }
            _ => Ok(()),
        }
    }

    /// Finds the route of one request and admits it in its family: at once on a connection
    /// that completed the handshake, else by the envelope its route reads with the params.
    fn admit(
        &self,
        request: IncomingRequest,
    ) -> Result<(&'static Route, Admission, Option<Box<RawValue>>), ErrorObject> {
        let IncomingRequest {
            method,
            params,
            context,
        } = request;
        let route = routes().get(&method);
        let negotiated = self.session.lifecycle.version();
        if negotiated.is_none() {
            let Some(route) = route else {
                // No route reads it: the envelope alone tells which refusal is due.
                let envelope = stateless::envelope(params.as_deref(), &method)?;
                return Err(match self.decide(&method, None, envelope, context) {
                    Err(e) => e,
                    Ok(_) => ErrorObject::method_not_found(&method),
                });
            };
            let undecided = Admission::Undecided {
                router: self.clone(),
                request: context,
            };
            return Ok((route, undecided, params));
        }
        let served = self.handshake(&method, route.map(|r| &r.info), context, negotiated)?;
        let route = route.ok_or_else(|| ErrorObject::method_not_found(&method))?;
        Ok((route, Admission::Served(served), params))
    }

    /// Decides the family of a request of `method` (described by `info` when the server
    /// routes it) from its envelope, once, and admits it.
    pub(super) fn decide(
        &self,
        method: &str,
        info: Option<&MethodInfo>,
        envelope: RequestEnvelope<'_>,
        request: RequestContext,
    ) -> Result<Served, ErrorObject> {
        let registry = &self.server.registry;
        let Some(call) =
            stateless::call(envelope, method, &registry.state_key, &registry.last_client)?
        else {
            return self.handshake(method, info, request, None);
        };
        self.session.stateless.store(true, Ordering::SeqCst);
        let served = info.is_some_and(|info| {
            info.families.serves(Family::Stateless) && offered(info, |c| registry.offers(c))
        });
        if !served {
            return Err(ErrorObject::method_not_found(method));
        }
        Ok(self.served(
            request,
            Family::Stateless,
            ProtocolVersion::V2026_07_28,
            Some(call),
        ))
    }

    /// Admits a handshake-family request within this session's state (`negotiated`: the
    /// version its handshake agreed on, if it has).
    fn handshake(
        &self,
        method: &str,
        info: Option<&MethodInfo>,
        request: RequestContext,
        negotiated: Option<ProtocolVersion>,
    ) -> Result<Served, ErrorObject> {
        if method == Discover::METHOD {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params for `{method}`: `_meta[\"{META_PROTOCOL_VERSION}\"]` and `_meta[\"{META_CLIENT_CAPABILITIES}\"]` are required (server/discover is a 2026-07-28 request)"
            )));
        }
        if method == Initialize::METHOD && self.session.stateless.load(Ordering::SeqCst) {
            return Err(ErrorObject::invalid_request(
                "Invalid request: this connection serves 2026-07-28 requests, which have no `initialize`; open a new connection for the handshake",
            ));
        }
        self.session.lifecycle.admit(method)?;
        self.declared(method, info)?;
        if !info.is_some_and(|info| info.families.serves(Family::Handshake)) {
            return Err(ErrorObject::method_not_found(method));
        }
        let version = negotiated.unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        Ok(self.served(request, Family::Handshake, version, None))
    }

    fn served(
        &self,
        request: RequestContext,
        family: Family,
        version: ProtocolVersion,
        call: Option<Arc<stateless::Call>>,
    ) -> Served {
        Served {
            router: self.clone(),
            request,
            version,
            family,
            call,
        }
    }
}

impl Service for Router {
    fn request<'a>(
        &'a self,
        request: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        match self.admit(request) {
            Ok((route, admission, params)) => route.serve(admission, params),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// `initialize` is answered before the next message is read, so that a client that writes
    /// `notifications/initialized` and its first requests without waiting is served in order.
    fn in_order(&self, method: &str) -> bool {
        method == Initialize::METHOD
    }

    /// A sessionless or restored HTTP connection stands as initialized, without the
    /// handshake's messages.
    /// The controls of an HTTP connection are kept for the handlers ([`super::Context::http`]).
    fn transport_event(&self, event: TransportEvent) {
        match event {
            TransportEvent::Sessionless { version } => {
                self.session.sessionless.store(true, Ordering::SeqCst);
                let params =
                    InitializeParams::new(version, Implementation::new("sessionless", "0"));
                if self.session.lifecycle.initialize(&params).is_ok() {
                    *lock(&self.session.declared) = Some(self.server.registry.capabilities());
                    self.session.lifecycle.initialized();
                }
            }
            TransportEvent::Restored(restored)
                if self
                    .session
                    .lifecycle
                    .initialize(&restored.initialize)
                    .is_ok() =>
            {
                *lock(&self.session.declared) = Some(self.server.registry.capabilities());
                self.session.lifecycle.initialized();
                if let Some(level) = restored.log_level {
                    *lock(&self.session.log_level) = level;
                }
                lock(&self.session.subscriptions).extend(restored.subscriptions);
            }
            #[cfg(feature = "http-server")]
            TransportEvent::Http(control) => {
                if control.is_shared() {
                    self.session.shared.store(true, Ordering::SeqCst);
                    // Every instance serving the session binds its tasks to the same owner.
                    if let Some(id) = control.session_id() {
                        let _ = self.session.key.set(id);
                    }
                }
                if let Some(changes) = control.shared_changes() {
                    super::registry::Registry::share_changes(&self.server.registry, changes);
                }
                let _ = self.session.http.set(control);
            }
            TransportEvent::Changed(change) => {
                self.server.registry.shared_change(&self.session, *change);
            }
            _ => {}
        }
    }

    fn notification<'a>(&'a self, n: Notification, peer: &'a Peer) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let hook = &self.server.registry.on_roots_changed;
            if n.method == Initialized::METHOD {
                if !self.session.lifecycle.initialized() {
                    tracing::debug!("ignoring notifications/initialized outside the handshake");
                }
            } else if n.method == RootsListChanged::METHOD {
                if let Some(on_change) = hook {
                    on_change(super::context::RootsChanged {
                        peer: peer.clone(),
                        session: self.session.clone(),
                    });
                }
            }
        })
    }
}
