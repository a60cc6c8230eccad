//! The server side of MCP: declare tools as async functions, then serve any connection.
//!
//! ```
//! use junction::server::{tool, Json, Server};
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
//!     .build()
//!     .unwrap();
//! # drop(server);
//! ```
//!
//! So far the framework serves the handshake ([`lifecycle`]), `ping`, `tools/list` (paginated)
//! and `tools/call`; other methods are answered with -32601.

pub mod lifecycle;
mod tool;

pub use tool::{tool, IntoToolResult, Json, ToolDef, ToolHandler};

use std::collections::HashMap;
use std::sync::Arc;

use junction_protocol::capabilities::{ListChanged, ServerCapabilities};
use junction_protocol::jsonrpc;
use junction_protocol::lifecycle::{Implementation, InitializeParams, InitializeResult};
use junction_protocol::meta::PaginatedParams;
use junction_protocol::method::decode_params;
use junction_protocol::tools::{CallToolParams, CallToolResult, ListToolsResult};
use junction_protocol::{ErrorObject, Notification};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::schema::{CompiledSchema, SchemaError};
use crate::session::{
    BoxFuture, IncomingRequest, Peer, RequestContext, Service, Session, SessionOptions,
};
use crate::transport::Connection;
use lifecycle::{Lifecycle, Negotiated};

/// What a tool function may use besides its arguments.
#[derive(Debug, Clone)]
pub struct Context {
    request: RequestContext,
    client: Option<Negotiated>,
}

impl Context {
    /// Reports progress, if the caller asked for it (see [`RequestContext::progress`]).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.request.progress(progress, total, message)
    }

    /// Whether the caller cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.request.is_cancelled()
    }

    /// The request's context: id, cancellation signal, peer.
    pub fn request(&self) -> &RequestContext {
        &self.request
    }

    /// The client: negotiated revision, capabilities and identity.
    pub fn client(&self) -> Option<&Negotiated> {
        self.client.as_ref()
    }
}

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Two tools share a name.
    #[error("two tools are named `{0}`; tool names must be unique within a server")]
    DuplicateTool(String),
    /// A tool's argument or output type does not give a usable schema.
    #[error("tool `{tool}`: {source}")]
    Schema {
        /// The tool.
        tool: String,
        /// What is wrong with the schema.
        #[source]
        source: SchemaError,
    },
}

/// Collects a server's definition.
#[derive(Debug)]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolDef>,
    page_size: usize,
}

impl ServerBuilder {
    /// Sets the instructions a host may give its model.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }

    /// Sets how many items a list page holds (at least 1; 100 by default).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Checks the definition and builds the server.
    pub fn build(self) -> Result<Server, BuildError> {
        let mut tools = Vec::with_capacity(self.tools.len());
        let mut index = HashMap::new();
        for def in self.tools {
            let name = def.tool.name.clone();
            let schema_error = |source| BuildError::Schema {
                tool: name.clone(),
                source,
            };
            if let Some(e) = def.output_error {
                return Err(schema_error(e));
            }
            let input = def.input.map_err(schema_error)?;
            if index.insert(name.clone(), tools.len()).is_some() {
                return Err(BuildError::DuplicateTool(name));
            }
            tools.push(RegisteredTool {
                tool: def.tool,
                input,
                call: def.call,
            });
        }
        Ok(Server {
            inner: Arc::new(Registry {
                info: self.info,
                instructions: self.instructions,
                tools,
                index,
                page_size: self.page_size,
            }),
        })
    }
}

struct RegisteredTool {
    tool: junction_protocol::tools::Tool,
    input: Arc<CompiledSchema>,
    call: Arc<
        dyn Fn(Value, Context) -> Result<BoxFuture<'static, CallToolResult>, String> + Send + Sync,
    >,
}

struct Registry {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<RegisteredTool>,
    index: HashMap<String, usize>,
    page_size: usize,
}

/// A built server; cheap to clone, serves any number of connections.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Registry>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts declaring a server with its name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            page_size: 100,
        }
    }

    /// Serves one connection; the returned peer ends when the connection does.
    pub fn serve(&self, connection: Connection) -> Peer {
        let router = Router {
            registry: self.inner.clone(),
            lifecycle: Lifecycle::new(),
        };
        let options = SessionOptions {
            name: self.inner.info.name.clone(),
            ..SessionOptions::default()
        };
        Session::start(connection, router, options)
    }

    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ListChanged::default()),
            ..Default::default()
        }
    }
}

struct Router {
    registry: Arc<Registry>,
    lifecycle: Lifecycle,
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

impl Router {
    fn initialize(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let params: InitializeParams = params(raw, "initialize")?;
        let version = self.lifecycle.initialize(&params)?;
        let server = Server {
            inner: self.registry.clone(),
        };
        reply(&InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: server.capabilities(),
            server_info: self.registry.info.clone(),
            instructions: self.registry.instructions.clone(),
            meta: None,
            extra: Default::default(),
        })
    }

    fn list_tools(&self, raw: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let params: PaginatedParams = params(raw, "tools/list")?;
        let tools = &self.registry.tools;
        let (start, end, next_cursor) = page_bounds(
            params.cursor.as_deref(),
            tools.len(),
            self.registry.page_size,
        )?;
        reply(&ListToolsResult {
            tools: tools[start..end].iter().map(|t| t.tool.clone()).collect(),
            next_cursor,
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        raw: Option<&RawValue>,
        request: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: CallToolParams = params(raw, "tools/call")?;
        let Some(&i) = self.registry.index.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "Unknown tool: {}",
                params.name
            )));
        };
        let entry = &self.registry.tools[i];
        let args = Value::Object(params.arguments.unwrap_or_default());
        if let Err(problems) = entry.input.check(&args) {
            return reply(&CallToolResult::error(format!(
                "Invalid arguments for tool `{}`: {}.",
                params.name,
                problems.join("; ")
            )));
        }
        let context = Context {
            request,
            client: self.lifecycle.negotiated(),
        };
        let result = match (entry.call)(args, context) {
            Ok(future) => future.await,
            Err(e) => CallToolResult::error(format!(
                "Invalid arguments for tool `{}`: {e}.",
                params.name
            )),
        };
        reply(&result)
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
            self.lifecycle.admit(&method)?;
            match method.as_str() {
                "initialize" => self.initialize(params.as_deref()),
                "ping" => Ok(jsonrpc::empty_object()),
                "tools/list" => self.list_tools(params.as_deref()),
                "tools/call" => self.call_tool(params.as_deref(), context).await,
                other => Err(ErrorObject::method_not_found(other)),
            }
        })
    }

    fn notification<'a>(&'a self, n: Notification, _: &'a Peer) -> BoxFuture<'a, ()> {
        if n.method == "notifications/initialized" && !self.lifecycle.initialized() {
            tracing::debug!("ignoring notifications/initialized outside the handshake");
        }
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests;
