//! The router of one session: answers each method of the handshake family from the server's
//! registry, within that session's state (handshake, log level, subscriptions).

use std::sync::Arc;

use junction_protocol::completion::CompleteParams;
use junction_protocol::jsonrpc;
use junction_protocol::lifecycle::{InitializeParams, InitializeResult};
use junction_protocol::logging::SetLevelParams;
use junction_protocol::meta::PaginatedParams;
use junction_protocol::method::decode_params;
use junction_protocol::prompts::{GetPromptParams, ListPromptsResult};
use junction_protocol::resources::{ListResourceTemplatesResult, ListResourcesResult, UriParams};
use junction_protocol::tools::{CallToolParams, CallToolResult, ListToolsResult};
use junction_protocol::{ErrorObject, Notification, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use std::sync::atomic::Ordering;

use junction_protocol::stateless::{
    DiscoverResult, SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams,
    META_SUBSCRIPTION_ID,
};
use serde_json::json;

use super::registry::{Listen, SessionState};
use super::{completion, resource, revision, stateless, Context, ServerHandle};
use crate::session::{BoxFuture, IncomingRequest, Peer, RequestContext, Service};
use crate::sync::lock;

/// What one request is served as: its revision and, on 2026-07-28, its own client.
pub(super) struct Req {
    version: ProtocolVersion,
    call: Option<Arc<stateless::Call>>,
}

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

/// Whether a tool result says it failed.
fn is_error_result(raw: &RawValue) -> bool {
    serde_json::from_str::<Value>(raw.get())
        .ok()
        .and_then(|v| v.get("isError").and_then(Value::as_bool))
        .unwrap_or(false)
}

/// Whether `caps` offer the feature `method` belongs to.
fn offered(caps: &junction_protocol::capabilities::ServerCapabilities, method: &str) -> bool {
    match method.split('/').next() {
        Some("tools") => caps.tools.is_some(),
        Some("resources") => caps.resources.is_some(),
        Some("prompts") => caps.prompts.is_some(),
        Some("completion") => {
            caps.completions.is_some() || caps.prompts.is_some() || caps.resources.is_some()
        }
        _ => true,
    }
}

pub(super) struct Router {
    pub(super) server: ServerHandle,
    pub(super) session: Arc<SessionState>,
}

/// Reads a request's params; absent params read as `{}` (see `decode_params`), so a missing
/// required member is reported by name.
fn params<T: DeserializeOwned>(raw: Option<&RawValue>, method: &str) -> Result<T, ErrorObject> {
    decode_params(raw)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params for `{method}`: {e}")))
}

fn reply<T: Serialize>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    jsonrpc::to_raw(value)
        .map_err(|e| ErrorObject::internal(format!("could not encode the result: {e}")))
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
    raw: Option<&RawValue>,
    method: &str,
    items: &[T],
    size: usize,
    f: impl Fn(&T) -> U,
) -> Result<(Vec<U>, Option<String>), ErrorObject> {
    let p: PaginatedParams = params(raw, method)?;
    let (start, end, next) = page_bounds(p.cursor.as_deref(), items.len(), size)?;
    Ok((items[start..end].iter().map(f).collect(), next))
}

impl Router {
    fn context(&self, request: RequestContext, req: &Req) -> Context {
        match &req.call {
            Some(call) => Context::stateless(
                request,
                self.session.clone(),
                self.server.clone(),
                call.clone(),
            ),
            None => Context::new(request, self.session.clone(), self.server.clone()),
        }
    }

    fn initialize(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let params: InitializeParams = params(raw, "initialize")?;
        let version = self.session.lifecycle.initialize(&params)?;
        let registry = &self.server.registry;
        let capabilities = registry.capabilities();
        *lock(&self.session.declared) = Some(capabilities.clone());
        let mut result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities,
            server_info: registry.info.clone(),
            instructions: registry.instructions.clone(),
            meta: None,
            extra: Default::default(),
        };
        revision::initialize_result(version, &mut result);
        reply(&result)
    }

    fn list_tools(&self, raw: Option<&RawValue>, req: &Req) -> Result<Box<RawValue>, ErrorObject> {
        let v = req.version;
        let lists = lock(&self.server.registry.lists);
        let (tools, next_cursor) = page(raw, "tools/list", &lists.tools, self.page_size(), |t| {
            revision::tool(v, t.tool.clone())
        })?;
        reply(&ListToolsResult {
            tools,
            next_cursor,
            ..Default::default()
        })
    }

    fn page_size(&self) -> usize {
        self.server.registry.page_size
    }

    async fn call_tool(
        &self,
        raw: Option<&RawValue>,
        request: RequestContext,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CallToolParams = params(raw, "tools/call")?;
        let entry = lock(&self.server.registry.lists).tool(&params.name);
        let Some(entry) = entry else {
            return Err(ErrorObject::invalid_params(format!(
                "Unknown tool: {}",
                params.name
            )));
        };
        let args = Value::Object(params.arguments.unwrap_or_default());
        if let Err(problems) = entry.input.check(&args) {
            return reply(&CallToolResult::error(format!(
                "Invalid arguments for tool `{}`: {}.",
                params.name,
                problems.join("; ")
            )));
        }
        let result = match (entry.call)(args, self.context(request, req)) {
            Ok(future) => future.await,
            Err(e) => CallToolResult::error(format!(
                "Invalid arguments for tool `{}`: {e}.",
                params.name
            )),
        };
        reply(&revision::call_result(req.version, result))
    }

    fn list_resources(
        &self,
        raw: Option<&RawValue>,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let v = req.version;
        let lists = lock(&self.server.registry.lists);
        let (resources, next_cursor) = page(
            raw,
            "resources/list",
            &lists.resources,
            self.page_size(),
            |r| revision::resource(v, r.resource.clone()),
        )?;
        reply(&ListResourcesResult {
            resources,
            next_cursor,
            ..Default::default()
        })
    }

    fn list_templates(
        &self,
        raw: Option<&RawValue>,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let v = req.version;
        let lists = lock(&self.server.registry.lists);
        let (resource_templates, next_cursor) = page(
            raw,
            "resources/templates/list",
            &lists.templates,
            self.page_size(),
            |t| revision::template(v, t.template.clone()),
        )?;
        reply(&ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
            ..Default::default()
        })
    }

    async fn read_resource(
        &self,
        raw: Option<&RawValue>,
        request: RequestContext,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: UriParams = params(raw, "resources/read")?;
        let uri = params.uri;
        let found = {
            let lists = lock(&self.server.registry.lists);
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
                        let vars = t.parsed.as_ref().ok()?.matches(&uri)?;
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
            context: self.context(request, req),
        };
        reply(&read(request, mime_type).await?)
    }

    fn subscription(
        &self,
        raw: Option<&RawValue>,
        method: &str,
    ) -> Result<Box<RawValue>, ErrorObject> {
        if !self.server.registry.subscriptions {
            return Err(ErrorObject::method_not_found(method));
        }
        let UriParams { uri, .. } = params(raw, method)?;
        if method == "resources/subscribe" {
            if !lock(&self.server.registry.lists).knows_uri(&uri) {
                return Err(resource::not_found(&uri));
            }
            lock(&self.session.subscriptions).insert(uri);
        } else {
            lock(&self.session.subscriptions).remove(&uri);
        }
        Ok(jsonrpc::empty_object())
    }

    fn list_prompts(
        &self,
        raw: Option<&RawValue>,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let v = req.version;
        let lists = lock(&self.server.registry.lists);
        let (prompts, next_cursor) =
            page(raw, "prompts/list", &lists.prompts, self.page_size(), |p| {
                revision::prompt(v, p.prompt.clone())
            })?;
        reply(&ListPromptsResult {
            prompts,
            next_cursor,
            ..Default::default()
        })
    }

    async fn get_prompt(
        &self,
        raw: Option<&RawValue>,
        request: RequestContext,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: GetPromptParams = params(raw, "prompts/get")?;
        let arguments = params.arguments.unwrap_or_default();
        let get = {
            let lists = lock(&self.server.registry.lists);
            let prompt = lists.prompt(&params.name).ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "Invalid params: unknown prompt `{}`",
                    params.name
                ))
            })?;
            prompt.check(&arguments)?;
            prompt.get.clone()
        };
        let result = get(super::PromptRequest {
            arguments,
            context: self.context(request, req),
        })
        .await?;
        reply(&revision::prompt_result(req.version, result))
    }

    async fn complete(
        &self,
        raw: Option<&RawValue>,
        request: RequestContext,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CompleteParams = params(raw, "completion/complete")?;
        let completer = completion::find(&lock(&self.server.registry.lists), &params)?;
        reply(&completion::complete(completer, params, self.context(request, req)).await)
    }

    /// Refuses (-32601) a method of a feature this session was not told about in
    /// `initialize`, so a session sees one consistent server.
    fn declared(&self, method: &str) -> Result<(), ErrorObject> {
        let declared = lock(&self.session.declared);
        let Some(caps) = declared.as_ref() else {
            return Ok(());
        };
        if offered(caps, method) {
            Ok(())
        } else {
            Err(ErrorObject::method_not_found(method))
        }
    }

    /// The methods both families serve.
    async fn dispatch(
        &self,
        method: &str,
        raw: Option<&RawValue>,
        context: RequestContext,
        req: &Req,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            "tools/list" => self.list_tools(raw, req),
            "tools/call" => self.call_tool(raw, context, req).await,
            "resources/list" => self.list_resources(raw, req),
            "resources/templates/list" => self.list_templates(raw, req),
            "resources/read" => self.read_resource(raw, context, req).await,
            "prompts/list" => self.list_prompts(raw, req),
            "prompts/get" => self.get_prompt(raw, context, req).await,
            "completion/complete" => self.complete(raw, context, req).await,
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// One 2026-07-28 request: served with its own client, its handler run until it ends or
    /// asks for input that the request does not carry (see [`stateless`]).
    async fn serve_stateless(
        &self,
        method: &str,
        raw: Option<&RawValue>,
        context: RequestContext,
        call: Arc<stateless::Call>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let registry = &self.server.registry;
        if stateless::REMOVED.contains(&method) || !offered(&registry.capabilities(), method) {
            return Err(ErrorObject::method_not_found(method));
        }
        if method == "subscriptions/listen" {
            let result = self.listen(raw, context).await?;
            return stateless::decorate(&result, method, &registry.info, &registry.cache);
        }
        let req = Req {
            version: ProtocolVersion::V2026_07_28,
            call: Some(call.clone()),
        };
        let outcome = tokio::select! {
            result = self.dispatch(method, raw, context, &req) => Some(result),
            () = call.rounds.needed() => None,
        };
        let missing = call.rounds.missing();
        match outcome {
            None => {
                let result = call.rounds.input_required(&registry.state_key);
                let mut value = match serde_json::to_value(&result) {
                    Ok(Value::Object(map)) => map,
                    _ => return Err(ErrorObject::internal("could not encode the result")),
                };
                stateless::with_server_info(&mut value, &registry.info);
                reply(&value)
            }
            Some(Ok(result)) => match missing {
                Some(required) if is_error_result(&result) => {
                    Err(stateless::missing_capability(&required))
                }
                _ => stateless::decorate(&result, method, &registry.info, &registry.cache),
            },
            Some(Err(e)) => Err(match missing {
                Some(required) => stateless::missing_capability(&required),
                None => stateless::error(e),
            }),
        }
    }

    /// `server/discover`: what this server speaks and offers.
    fn discover(&self) -> Result<Box<RawValue>, ErrorObject> {
        let registry = &self.server.registry;
        let versions = ProtocolVersion::ALL
            .iter()
            .rev()
            .map(|v| v.as_str().to_owned())
            .collect();
        let mut result = DiscoverResult::new(versions, registry.capabilities());
        result.instructions = registry.instructions.clone();
        stateless::decorate(
            &reply(&result)?,
            "server/discover",
            &registry.info,
            &registry.cache,
        )
    }

    /// `subscriptions/listen`: acknowledges, then holds the request open while this
    /// connection's list changes and resource updates are sent on it, until it is cancelled.
    async fn listen(
        &self,
        raw: Option<&RawValue>,
        context: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p: SubscriptionsListenParams = params(raw, "subscriptions/listen")?;
        let caps = self.server.registry.capabilities();
        let want = p.notifications;
        let honoured = SubscriptionFilter {
            tools_list_changed: want
                .tools_list_changed
                .filter(|&b| b && caps.tools.is_some()),
            prompts_list_changed: want
                .prompts_list_changed
                .filter(|&b| b && caps.prompts.is_some()),
            resources_list_changed: want
                .resources_list_changed
                .filter(|&b| b && caps.resources.is_some()),
            resource_subscriptions: want
                .resource_subscriptions
                .filter(|_| self.server.registry.subscriptions),
        };
        let id = context.id().clone();
        let tagged = json!({ META_SUBSCRIPTION_ID: id });
        {
            // Under the lock, so that no change is sent on this stream before the ack.
            let mut listens = lock(&self.session.listens);
            let ack = SubscriptionsAcknowledgedParams {
                notifications: honoured.clone(),
                meta: serde_json::from_value(tagged.clone()).ok(),
            };
            context
                .peer()
                .notify_raw(
                    "notifications/subscriptions/acknowledged",
                    Some(reply(&ack)?),
                    Some(id.clone()),
                )
                .map_err(|e| ErrorObject::internal(format!("could not acknowledge: {e}")))?;
            listens.push(Listen {
                id: id.clone(),
                filter: honoured,
            });
        }
        let _open = ListenGuard {
            session: self.session.clone(),
            id,
        };
        let cancel = context.cancellation();
        tokio::select! {
            () = cancel.cancelled() => {}
            () = context.peer().closed() => {}
        }
        reply(&json!({ "_meta": tagged }))
    }

    fn set_level(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let p: SetLevelParams = params(raw, "logging/setLevel")?;
        *lock(&self.session.log_level) = p.level;
        Ok(jsonrpc::empty_object())
    }
}

impl Service for Router {
    fn request<'a>(
        &'a self,
        request: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        Box::pin(async move {
            let IncomingRequest {
                method,
                params,
                context,
            } = request;
            let raw = params.as_deref();
            if method == "server/discover" {
                return self.discover();
            }
            let handshake = method == "initialize" || self.session.lifecycle.negotiated().is_some();
            let call = if handshake {
                None
            } else {
                stateless::read(raw, &method, &self.server.registry.state_key)?
            };
            if let Some(call) = call {
                self.session.stateless.store(true, Ordering::SeqCst);
                return self
                    .serve_stateless(&method, raw, context, Arc::new(call))
                    .await;
            }
            if method == "initialize" && self.session.stateless.load(Ordering::SeqCst) {
                return Err(ErrorObject::invalid_request(
                    "Invalid request: this connection serves 2026-07-28 requests, which have no `initialize`; open a new connection for the handshake",
                ));
            }
            self.session.lifecycle.admit(&method)?;
            self.declared(&method)?;
            let req = Req {
                version: self
                    .session
                    .lifecycle
                    .negotiated()
                    .map_or(ProtocolVersion::LATEST_HANDSHAKE, |n| n.version),
                call: None,
            };
            match method.as_str() {
                "initialize" => self.initialize(raw),
                "ping" => Ok(jsonrpc::empty_object()),
                "resources/subscribe" | "resources/unsubscribe" => self.subscription(raw, &method),
                "logging/setLevel" => self.set_level(raw),
                _ => self.dispatch(&method, raw, context, &req).await,
            }
        })
    }

    /// `initialize` is answered before the next message is read, so that a client that writes
    /// `notifications/initialized` and its first requests without waiting is served in order.
    fn in_order(&self, method: &str) -> bool {
        method == "initialize"
    }

    fn notification<'a>(&'a self, n: Notification, peer: &'a Peer) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let hook = &self.server.registry.on_roots_changed;
            match (n.method.as_str(), hook) {
                ("notifications/initialized", _) if !self.session.lifecycle.initialized() => {
                    tracing::debug!("ignoring notifications/initialized outside the handshake");
                }
                ("notifications/roots/list_changed", Some(on_change)) => {
                    on_change(super::context::RootsChanged {
                        peer: peer.clone(),
                        session: self.session.clone(),
                    });
                }
                _ => {}
            }
        })
    }
}
