//! Layers around tool calls: code that runs before and after the handler of every tool of
//! a server, whichever way the call came (a plain `tools/call`, or a call run as a task in
//! either family). A layer is an async function of the call and the rest of the chain, as
//! axum's `middleware::from_fn` is: it may look at the call, change its arguments, answer
//! without running the tool (a refusal, a cached answer), or run it and change the result.
//!
//! ```
//! use junction::server::{tool, Next, Server, ToolCall};
//! use junction::protocol::tools::CallToolResult;
//!
//! async fn search(args: serde_json::Map<String, serde_json::Value>) -> String {
//!     format!("found {}", args.len())
//! }
//!
//! let server = Server::builder("library", "1.0.0")
//!     .tool(tool("search", search))
//!     .tool(tool("delete_everything", search))
//!     // Timing and logging of every call.
//!     .around_tools(|call: ToolCall, next: Next| async move {
//!         let started = std::time::Instant::now();
//!         let name = call.name().to_owned();
//!         let result = next.run(call).await;
//!         tracing::info!(tool = %name, elapsed = ?started.elapsed(), failed = result.failed());
//!         result
//!     })
//!     // A policy: this tool only for an authenticated caller.
//!     .around_tools(|call: ToolCall, next: Next| async move {
//!         if call.name() == "delete_everything" && call.context.caller().is_none() {
//!             return CallToolResult::error("Sign in to use this tool.");
//!         }
//!         next.run(call).await
//!     })
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! Layers run in the order they were added: the first added sees the call first and the
//! result last. The arguments a layer receives were checked against the tool's input schema;
//! a layer that changes them is trusted (they are not checked again, but the handler still
//! decodes them, and a call it cannot decode ends as the usual "Invalid arguments" error).
//! A layer answers with a [`CallToolResult`]: a refusal is a tool error the model reads
//! (`CallToolResult::error`), as the specification wants for failures of a tool's own.

use std::future::Future;
use std::sync::Arc;

use junction_protocol::tools::CallToolResult;
use serde_json::Value;

use super::registry::RegisteredTool;
use super::Context;
use crate::session::BoxFuture;

/// One layer, type-erased.
pub(super) type LayerFn =
    dyn Fn(ToolCall, Next) -> BoxFuture<'static, CallToolResult> + Send + Sync;

/// A server's layers, outermost first.
pub(super) type Layers = Arc<[Arc<LayerFn>]>;

/// Erases `layer` for [`super::ServerBuilder::around_tools`].
pub(super) fn erase<F, Fut>(layer: F) -> Arc<LayerFn>
where
    F: Fn(ToolCall, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallToolResult> + Send + 'static,
{
    Arc::new(move |call, next| Box::pin(layer(call, next)))
}

/// A tool call on its way to the handler.
pub struct ToolCall {
    tool: Arc<RegisteredTool>,
    /// The arguments (a JSON object), already checked against the tool's input schema.
    pub arguments: Value,
    /// The call's context: the caller ([`Context::caller`]), the client, the task it runs
    /// as, progress and logging towards the client.
    pub context: Context,
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.name())
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl ToolCall {
    /// The name of the tool called.
    pub fn name(&self) -> &str {
        &self.tool.tool.name
    }
}

/// The rest of the chain: the layers after this one, then the tool.
pub struct Next {
    layers: Layers,
    index: usize,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("layers_left", &self.layers.len().saturating_sub(self.index))
            .finish()
    }
}

impl Next {
    /// Runs the rest of the chain with `call`, to the tool's result.
    pub fn run(self, call: ToolCall) -> BoxFuture<'static, CallToolResult> {
        match self.layers.get(self.index).cloned() {
            Some(layer) => layer(
                call,
                Next {
                    layers: self.layers,
                    index: self.index + 1,
                },
            ),
            None => handler(&call.tool, call.arguments, call.context),
        }
    }
}

/// Runs `tool` with `arguments` through the server's layers: how every tool call runs.
pub(super) fn run(
    tool: Arc<RegisteredTool>,
    arguments: Value,
    context: Context,
) -> BoxFuture<'static, CallToolResult> {
    let layers = context.layers();
    if layers.is_empty() {
        return handler(&tool, arguments, context);
    }
    Next { layers, index: 0 }.run(ToolCall {
        tool,
        arguments,
        context,
    })
}

/// The tool's own handler: arguments it cannot decode are a tool error naming the tool.
fn handler(
    tool: &RegisteredTool,
    arguments: Value,
    context: Context,
) -> BoxFuture<'static, CallToolResult> {
    match (tool.call)(arguments, context) {
        Ok(future) => future,
        Err(e) => {
            let result = CallToolResult::error(format!(
                "Invalid arguments for tool `{}`: {e}.",
                tool.tool.name
            ));
            Box::pin(std::future::ready(result))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use junction_protocol::tasks::TaskStatus;
    use junction_protocol::tools::{CallToolParams, TaskSupport};

    use super::super::{tool, Server};
    use super::*;
    use crate::client::{Client, ClientOptions};
    use crate::session::RequestOptions;
    use crate::transport::memory;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Echo {
        text: String,
    }

    /// What the layers and the tool did, in order.
    type Trail = Arc<Mutex<Vec<String>>>;

    fn server(trail: &Trail) -> Server {
        let ran = trail.clone();
        let echo = move |ctx: Context, args: Echo| {
            let ran = ran.clone();
            async move {
                let as_task = if ctx.task_id().is_some() {
                    " as a task"
                } else {
                    ""
                };
                ran.lock()
                    .unwrap()
                    .push(format!("echo({}){as_task}", args.text));
                args.text
            }
        };
        let outer = trail.clone();
        let inner = trail.clone();
        Server::builder("layered", "1.0.0")
            .tool(tool("echo", echo.clone()))
            .tool(tool("echo_task", echo).task_support(TaskSupport::Optional))
            .tool(tool("forbidden", |_: Echo| async { "should never run" }))
            .around_tools(move |call: ToolCall, next: Next| {
                let trail = outer.clone();
                async move {
                    trail.lock().unwrap().push(format!("outer:{}", call.name()));
                    let mut result = next.run(call).await;
                    trail.lock().unwrap().push("outer:after".to_owned());
                    result
                        .content
                        .push(junction_protocol::content::ContentBlock::text(
                            "(checked by outer)",
                        ));
                    result
                }
            })
            .around_tools(move |mut call: ToolCall, next: Next| {
                let trail = inner.clone();
                async move {
                    trail.lock().unwrap().push(format!("inner:{}", call.name()));
                    if call.name() == "forbidden" {
                        return CallToolResult::error("Refused by policy.");
                    }
                    call.arguments["text"] = Value::from("rewritten");
                    next.run(call).await
                }
            })
            .build()
            .unwrap()
    }

    async fn connect(trail: &Trail) -> Client {
        let (a, b) = memory::pair(Default::default());
        server(trail).serve(b);
        Client::connect(a, ClientOptions::new("c", "1"))
            .await
            .unwrap()
    }

    fn texts(result: &CallToolResult) -> Vec<&str> {
        result.content.iter().filter_map(|b| b.as_text()).collect()
    }

    #[tokio::test]
    async fn layers_run_in_the_order_added_around_the_tool_and_may_change_args_and_result() {
        let trail = Trail::default();
        let client = connect(&trail).await;
        let result = client
            .call_tool(
                CallToolParams::new("echo").argument("text", "hello"),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(texts(&result), ["rewritten", "(checked by outer)"]);
        assert_eq!(
            *trail.lock().unwrap(),
            ["outer:echo", "inner:echo", "echo(rewritten)", "outer:after"]
        );
    }

    #[tokio::test]
    async fn a_layer_that_answers_itself_keeps_the_tool_from_running() {
        let trail = Trail::default();
        let client = connect(&trail).await;
        let result = client
            .call_tool(
                CallToolParams::new("forbidden").argument("text", "x"),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert!(result.failed());
        assert_eq!(texts(&result), ["Refused by policy.", "(checked by outer)"]);
        assert_eq!(
            *trail.lock().unwrap(),
            ["outer:forbidden", "inner:forbidden", "outer:after"]
        );
    }

    #[tokio::test]
    async fn a_call_run_as_a_task_goes_through_the_layers_too() {
        let trail = Trail::default();
        let client = connect(&trail).await;
        // The client learns which tools may run as tasks from the list.
        client.list_tools().await.unwrap();
        let mut statuses = Vec::new();
        let result = client
            .call_tool_preferring_task(
                CallToolParams::new("echo_task").argument("text", "later"),
                true,
                RequestOptions::default(),
                |task| statuses.push(task.status),
            )
            .await
            .unwrap();
        assert_eq!(texts(&result), ["rewritten", "(checked by outer)"]);
        assert_eq!(
            *trail.lock().unwrap(),
            [
                "outer:echo_task",
                "inner:echo_task",
                "echo(rewritten) as a task",
                "outer:after"
            ]
        );
        assert!(statuses.iter().all(|s| *s != TaskStatus::Failed));
    }

    #[tokio::test]
    async fn arguments_a_layer_breaks_end_as_the_tools_invalid_arguments_error() {
        let server = Server::builder("breaking", "1.0.0")
            .tool(tool("echo", |args: Echo| async move { args.text }))
            .around_tools(|mut call: ToolCall, next: Next| async move {
                call.arguments = Value::from(7);
                next.run(call).await
            })
            .build()
            .unwrap();
        let (a, b) = memory::pair(Default::default());
        server.serve(b);
        let client = Client::connect(a, ClientOptions::new("c", "1"))
            .await
            .unwrap();
        let result = client
            .call_tool(
                CallToolParams::new("echo").argument("text", "x"),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        assert!(result.failed());
        assert!(
            texts(&result)[0].starts_with("Invalid arguments for tool `echo`:"),
            "{result:?}"
        );
    }
}
