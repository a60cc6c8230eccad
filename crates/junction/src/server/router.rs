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

use super::registry::SessionState;
use super::{completion, resource, revision, Context, ServerHandle};
use crate::session::{BoxFuture, IncomingRequest, Peer, RequestContext, Service};
use crate::sync::lock;

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
    fn version(&self) -> ProtocolVersion {
        self.session
            .lifecycle
            .negotiated()
            .map_or(ProtocolVersion::LATEST_HANDSHAKE, |n| n.version)
    }

    fn context(&self, request: RequestContext) -> Context {
        Context::new(request, self.session.clone(), self.server.clone())
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

    fn list_tools(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let v = self.version();
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
        let result = match (entry.call)(args, self.context(request)) {
            Ok(future) => future.await,
            Err(e) => CallToolResult::error(format!(
                "Invalid arguments for tool `{}`: {e}.",
                params.name
            )),
        };
        reply(&revision::call_result(self.version(), result))
    }

    fn list_resources(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let v = self.version();
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

    fn list_templates(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let v = self.version();
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
            context: self.context(request),
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

    fn list_prompts(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let v = self.version();
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
            context: self.context(request),
        })
        .await?;
        reply(&revision::prompt_result(self.version(), result))
    }

    async fn complete(
        &self,
        raw: Option<&RawValue>,
        request: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CompleteParams = params(raw, "completion/complete")?;
        let completer = completion::find(&lock(&self.server.registry.lists), &params)?;
        reply(&completion::complete(completer, params, self.context(request)).await)
    }

    /// Refuses (-32601) a method of a feature this session was not told about in
    /// `initialize`, so a session sees one consistent server.
    fn declared(&self, method: &str) -> Result<(), ErrorObject> {
        let declared = lock(&self.session.declared);
        let Some(caps) = declared.as_ref() else {
            return Ok(());
        };
        let offered = match method.split('/').next() {
            Some("tools") => caps.tools.is_some(),
            Some("resources") => caps.resources.is_some(),
            Some("prompts") => caps.prompts.is_some(),
            Some("completion") => {
                caps.completions.is_some() || caps.prompts.is_some() || caps.resources.is_some()
            }
            _ => true,
        };
        if offered {
            Ok(())
        } else {
            Err(ErrorObject::method_not_found(method))
        }
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
            self.session.lifecycle.admit(&method)?;
            self.declared(&method)?;
            let raw = params.as_deref();
            match method.as_str() {
                "initialize" => self.initialize(raw),
                "ping" => Ok(jsonrpc::empty_object()),
                "tools/list" => self.list_tools(raw),
                "tools/call" => self.call_tool(raw, context).await,
                "resources/list" => self.list_resources(raw),
                "resources/templates/list" => self.list_templates(raw),
                "resources/read" => self.read_resource(raw, context).await,
                "resources/subscribe" | "resources/unsubscribe" => self.subscription(raw, &method),
                "prompts/list" => self.list_prompts(raw),
                "prompts/get" => self.get_prompt(raw, context).await,
                "completion/complete" => self.complete(raw, context).await,
                "logging/setLevel" => self.set_level(raw),
                other => Err(ErrorObject::method_not_found(other)),
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
