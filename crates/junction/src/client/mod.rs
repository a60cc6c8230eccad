//! The client side of MCP: one connection to one server.
//!
//! [`Client::connect`] performs the handshake (offer the newest revision, check the one the
//! server chose, send `notifications/initialized`) and then offers a typed method for each
//! server feature. Every method first checks the capabilities the server declared and returns
//! [`RequestError::NotSupported`] without sending anything when the feature is missing. List
//! methods follow `nextCursor` to the end.
//!
//! This client declares no client capabilities yet (sampling, elicitation and roots arrive
//! with their handlers), so it answers server requests other than `ping` with -32601.

#[cfg(test)]
mod tests;

use std::sync::Mutex;

use junction_protocol::capabilities::ServerCapabilities;
use junction_protocol::completion::{Complete, CompleteParams, CompleteResult};
use junction_protocol::jsonrpc;
use junction_protocol::lifecycle::{
    Implementation, Initialize, InitializeParams, InitializeResult, Initialized, Ping,
};
use junction_protocol::logging::{LoggingLevel, SetLevel, SetLevelParams};
use junction_protocol::meta::{NotificationParams, PaginatedParams};
use junction_protocol::method::Request;
use junction_protocol::prompts::{
    GetPrompt, GetPromptParams, GetPromptResult, ListPrompts, Prompt,
};
use junction_protocol::resources::{
    ListResourceTemplates, ListResources, ReadResource, ReadResourceResult, Resource,
    ResourceTemplate, Subscribe, Unsubscribe, UriParams,
};
use junction_protocol::tools::{CallTool, CallToolParams, CallToolResult, ListTools, Tool};
use junction_protocol::{ErrorObject, Notification, ProtocolVersion};
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::RequestError;
use crate::session::{
    BoxFuture, IncomingRequest, Peer, RequestOptions, Service, Session, SessionOptions,
};
use crate::sync::lock;
use crate::transport::Connection;

/// The most pages a list method follows before it decides the server is looping.
const MAX_PAGES: usize = 10_000;

/// A notification the server sent (other than progress, which reaches its request).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerNotification {
    /// The method, e.g. `notifications/tools/list_changed`.
    pub method: String,
    /// The params, if any.
    pub params: Option<Value>,
}

/// Why the handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `initialize` failed.
    #[error("the handshake failed: {0}")]
    Handshake(#[from] RequestError),
    /// The server chose a revision this client does not speak; the connection was closed.
    #[error("the server chose protocol version {chosen:?}, which this client does not support (it offered {offered}); disconnected")]
    UnsupportedVersion {
        /// What the client offered.
        offered: ProtocolVersion,
        /// What the server answered.
        chosen: String,
    },
}

/// How to connect.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Who this client is.
    pub info: Implementation,
    /// The revision to offer; the newest handshake revision by default.
    pub version: ProtocolVersion,
    /// Session settings (default request timeout, log name).
    pub session: SessionOptions,
}

impl ClientOptions {
    /// Options for a client called `name`, version `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            info: Implementation::new(name, version),
            version: ProtocolVersion::LATEST_HANDSHAKE,
            session: SessionOptions {
                name: "client".to_owned(),
                ..SessionOptions::default()
            },
        }
    }
}

/// A connected, initialized client.
#[derive(Debug)]
pub struct Client {
    peer: Peer,
    init: InitializeResult,
    version: ProtocolVersion,
    notifications: Mutex<Option<mpsc::UnboundedReceiver<ServerNotification>>>,
}

/// Answers the server: `ping`, and -32601 for everything this client does not declare.
struct ClientService {
    notifications: mpsc::UnboundedSender<ServerNotification>,
}

impl Service for ClientService {
    fn request<'a>(
        &'a self,
        request: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        Box::pin(async move {
            match request.method.as_str() {
                "ping" => Ok(jsonrpc::empty_object()),
                other => Err(ErrorObject::method_not_found(other)),
            }
        })
    }

    fn notification<'a>(&'a self, n: Notification, _: &'a Peer) -> BoxFuture<'a, ()> {
        let params = n.params.and_then(|p| serde_json::from_str(p.get()).ok());
        // Nobody listening is fine: notifications are advisory.
        let _ = self.notifications.send(ServerNotification {
            method: n.method,
            params,
        });
        Box::pin(async {})
    }
}

impl Client {
    /// Connects over `connection` and performs the handshake.
    pub async fn connect(
        connection: Connection,
        options: ClientOptions,
    ) -> Result<Client, ConnectError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let peer = Session::start(
            connection,
            ClientService { notifications: tx },
            options.session.clone(),
        );
        let params = InitializeParams::new(options.version, options.info.clone());
        let init = match peer
            .request::<Initialize>(&params, RequestOptions::default())
            .await
        {
            Ok(init) => init,
            Err(e) => {
                peer.close();
                return Err(e.into());
            }
        };
        let version = match init.version() {
            Ok(v) if ProtocolVersion::HANDSHAKE.contains(&v) => v,
            _ => {
                peer.close();
                return Err(ConnectError::UnsupportedVersion {
                    offered: options.version,
                    chosen: init.protocol_version,
                });
            }
        };
        peer.notify::<Initialized>(&NotificationParams::default(), None)?;
        Ok(Client {
            peer,
            init,
            version,
            notifications: Mutex::new(Some(rx)),
        })
    }

    /// The negotiated revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// What the server declared.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.init.capabilities
    }

    /// Who the server is.
    pub fn server_info(&self) -> &Implementation {
        &self.init.server_info
    }

    /// The server's instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.init.instructions.as_deref()
    }

    /// The session, for requests this type has no method for.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The server's notifications; `None` after the first call.
    pub fn take_notifications(&self) -> Option<mpsc::UnboundedReceiver<ServerNotification>> {
        lock(&self.notifications).take()
    }

    /// Closes the connection.
    pub fn close(&self) {
        self.peer.close();
    }

    fn require<R: Request>(&self, supported: bool, capability: &str) -> Result<(), RequestError> {
        if supported {
            Ok(())
        } else {
            Err(RequestError::NotSupported {
                method: R::METHOD.to_owned(),
                reason: format!("the server did not declare the `{capability}` capability"),
            })
        }
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), RequestError> {
        self.peer
            .request::<Ping>(&Default::default(), RequestOptions::default())
            .await
            .map(drop)
    }

    /// Every tool, following pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, RequestError> {
        self.require::<ListTools>(self.init.capabilities.tools.is_some(), "tools")?;
        self.collect::<ListTools, _>(|r| (r.tools, r.next_cursor))
            .await
    }

    /// Calls a tool. A tool execution error is an `Ok` result with `isError: true`.
    pub async fn call_tool(
        &self,
        params: CallToolParams,
        options: RequestOptions,
    ) -> Result<CallToolResult, RequestError> {
        self.require::<CallTool>(self.init.capabilities.tools.is_some(), "tools")?;
        self.peer.request::<CallTool>(&params, options).await
    }

    /// Every resource, following pages.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, RequestError> {
        self.require::<ListResources>(self.init.capabilities.resources.is_some(), "resources")?;
        self.collect::<ListResources, _>(|r| (r.resources, r.next_cursor))
            .await
    }

    /// Every resource template, following pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, RequestError> {
        self.require::<ListResourceTemplates>(
            self.init.capabilities.resources.is_some(),
            "resources",
        )?;
        self.collect::<ListResourceTemplates, _>(|r| (r.resource_templates, r.next_cursor))
            .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, RequestError> {
        self.require::<ReadResource>(self.init.capabilities.resources.is_some(), "resources")?;
        self.peer
            .request::<ReadResource>(&UriParams::new(uri), RequestOptions::default())
            .await
    }

    /// Subscribes to a resource's updates.
    pub async fn subscribe(&self, uri: &str) -> Result<(), RequestError> {
        self.require::<Subscribe>(
            self.init.capabilities.supports_resource_subscriptions(),
            "resources.subscribe",
        )?;
        self.peer
            .request::<Subscribe>(&UriParams::new(uri), RequestOptions::default())
            .await
            .map(drop)
    }

    /// Ends a subscription.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), RequestError> {
        self.require::<Unsubscribe>(
            self.init.capabilities.supports_resource_subscriptions(),
            "resources.subscribe",
        )?;
        self.peer
            .request::<Unsubscribe>(&UriParams::new(uri), RequestOptions::default())
            .await
            .map(drop)
    }

    /// Every prompt, following pages.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, RequestError> {
        self.require::<ListPrompts>(self.init.capabilities.prompts.is_some(), "prompts")?;
        self.collect::<ListPrompts, _>(|r| (r.prompts, r.next_cursor))
            .await
    }

    /// Gets a prompt with its arguments filled in.
    pub async fn get_prompt(
        &self,
        params: GetPromptParams,
    ) -> Result<GetPromptResult, RequestError> {
        self.require::<GetPrompt>(self.init.capabilities.prompts.is_some(), "prompts")?;
        self.peer
            .request::<GetPrompt>(&params, RequestOptions::default())
            .await
    }

    /// Completes a prompt argument or template variable.
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, RequestError> {
        self.require::<Complete>(self.init.capabilities.completions.is_some(), "completions")?;
        self.peer
            .request::<Complete>(&params, RequestOptions::default())
            .await
    }

    /// Sets the level of the server's log messages.
    pub async fn set_level(&self, level: LoggingLevel) -> Result<(), RequestError> {
        self.require::<SetLevel>(self.init.capabilities.logging.is_some(), "logging")?;
        self.peer
            .request::<SetLevel>(
                &SetLevelParams { level, meta: None },
                RequestOptions::default(),
            )
            .await
            .map(drop)
    }

    async fn collect<R, T>(
        &self,
        split: impl Fn(R::Result) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, RequestError>
    where
        R: Request<Params = PaginatedParams>,
    {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedParams {
                cursor: cursor.clone(),
                meta: None,
            };
            let (items, next) = split(
                self.peer
                    .request::<R>(&params, RequestOptions::default())
                    .await?,
            );
            all.extend(items);
            match next {
                None => return Ok(all),
                Some(next) if Some(&next) == cursor.as_ref() => {
                    return Err(RequestError::Invalid {
                        method: R::METHOD.to_owned(),
                        reason: format!("the server returned the same cursor {next:?} twice"),
                    })
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(RequestError::Invalid {
            method: R::METHOD.to_owned(),
            reason: format!("more than {MAX_PAGES} pages"),
        })
    }
}
