//! Tools as plain async functions.
//!
//! A tool's argument type derives `serde::Deserialize` and `schemars::JsonSchema`: its input
//! schema comes from the type, and arguments are validated against it before the function
//! runs. What the function returns becomes the result through [`IntoToolResult`]; returning
//! [`Json`] advertises an `outputSchema` and sends `structuredContent` plus the same JSON as
//! text. Returning `Err(e)` sends a tool execution error (`isError: true`) with `e`'s text.

use std::any::TypeId;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use junction_protocol::content::ContentBlock;
use junction_protocol::tools::{CallToolResult, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::registry::CallFn;
use super::{Context, State};
use crate::schema::{CompiledSchema, SchemaError};
use crate::session::BoxFuture;

/// What a tool function may return.
pub trait IntoToolResult {
    /// The output schema this type advertises, if it is structured.
    fn output_schema() -> Option<Result<CompiledSchema, SchemaError>> {
        None
    }
    /// The result to send.
    fn into_tool_result(self) -> CallToolResult;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::content(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::content(self)
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<Result<CompiledSchema, SchemaError>> {
        T::output_schema()
    }
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(e) => CallToolResult::error(e.to_string()),
        }
    }
}

/// Structured output: sent as `structuredContent` and as JSON text, with `outputSchema`
/// derived from `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Result<CompiledSchema, SchemaError>> {
        Some(CompiledSchema::of::<T>())
    }
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => CallToolResult::structured(value),
            Err(e) => CallToolResult::error(format!("The tool's output could not be encoded: {e}")),
        }
    }
}

/// An async function usable as a tool. Implemented for `Fn(Args) -> impl Future`,
/// `Fn(Context, Args)`, `Fn(State<S>, Args)` and `Fn(State<S>, Context, Args)`; `M` only
/// tells them apart.
pub trait ToolHandler<M>: Send + Sync + 'static {
    /// The function's result type.
    type Output: IntoToolResult + Send + 'static;
    /// The schema of the arguments.
    fn input_schema() -> Result<CompiledSchema, SchemaError>;
    /// The state the function takes, if any: its type and name.
    fn state() -> Option<(TypeId, &'static str)> {
        None
    }
    /// Decodes the (already validated) arguments and runs the function, whose output
    /// becomes the call's result: one boxed future per call.
    fn call(
        &self,
        args: Value,
        context: Context,
    ) -> Result<BoxFuture<'static, CallToolResult>, String>;
}

impl<F, Fut, A, R> ToolHandler<(A,)> for F
where
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    A: DeserializeOwned + JsonSchema,
    R: IntoToolResult + Send + 'static,
{
    type Output = R;
    fn input_schema() -> Result<CompiledSchema, SchemaError> {
        CompiledSchema::of::<A>()
    }
    fn call(&self, args: Value, _: Context) -> Result<BoxFuture<'static, CallToolResult>, String> {
        let args: A = serde_json::from_value(args).map_err(|e| e.to_string())?;
        Ok(finish(self(args)))
    }
}

impl<F, Fut, A, R> ToolHandler<(Context, A)> for F
where
    F: Fn(Context, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    A: DeserializeOwned + JsonSchema,
    R: IntoToolResult + Send + 'static,
{
    type Output = R;
    fn input_schema() -> Result<CompiledSchema, SchemaError> {
        CompiledSchema::of::<A>()
    }
    fn call(
        &self,
        args: Value,
        context: Context,
    ) -> Result<BoxFuture<'static, CallToolResult>, String> {
        let args: A = serde_json::from_value(args).map_err(|e| e.to_string())?;
        Ok(finish(self(context, args)))
    }
}

impl<F, Fut, S, A, R> ToolHandler<(State<S>, A)> for F
where
    F: Fn(State<S>, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    S: Clone + Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema,
    R: IntoToolResult + Send + 'static,
{
    type Output = R;
    fn input_schema() -> Result<CompiledSchema, SchemaError> {
        CompiledSchema::of::<A>()
    }
    fn state() -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<S>(), std::any::type_name::<S>()))
    }
    fn call(
        &self,
        args: Value,
        context: Context,
    ) -> Result<BoxFuture<'static, CallToolResult>, String> {
        let args: A = serde_json::from_value(args).map_err(|e| e.to_string())?;
        let state = context.state::<S>().ok_or_else(missing_state::<S>)?;
        Ok(finish(self(State(state), args)))
    }
}

impl<F, Fut, S, A, R> ToolHandler<(State<S>, Context, A)> for F
where
    F: Fn(State<S>, Context, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    S: Clone + Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema,
    R: IntoToolResult + Send + 'static,
{
    type Output = R;
    fn input_schema() -> Result<CompiledSchema, SchemaError> {
        CompiledSchema::of::<A>()
    }
    fn state() -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<S>(), std::any::type_name::<S>()))
    }
    fn call(
        &self,
        args: Value,
        context: Context,
    ) -> Result<BoxFuture<'static, CallToolResult>, String> {
        let args: A = serde_json::from_value(args).map_err(|e| e.to_string())?;
        let state = context.state::<S>().ok_or_else(missing_state::<S>)?;
        Ok(finish(self(State(state), context, args)))
    }
}

/// A handler's future, boxed once with the step that makes its output the call's result.
fn finish<R: IntoToolResult>(
    future: impl Future<Output = R> + Send + 'static,
) -> BoxFuture<'static, CallToolResult> {
    Box::pin(async move { future.await.into_tool_result() })
}

/// Unreachable once the tool is registered (see [`super::BuildError::MissingState`]).
fn missing_state<S>() -> String {
    format!(
        "the server has no state of type {}",
        std::any::type_name::<S>()
    )
}

/// A tool ready to register: its description, schema and function.
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) input: Result<Arc<CompiledSchema>, SchemaError>,
    pub(crate) output_error: Option<SchemaError>,
    pub(crate) state: Option<(TypeId, &'static str)>,
    pub(crate) call: Arc<CallFn>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

/// Declares a tool called `name` that runs `handler`.
pub fn tool<M, H: ToolHandler<M>>(name: impl Into<String>, handler: H) -> ToolDef {
    let input = H::input_schema().map(Arc::new);
    let mut tool = Tool::new(
        name,
        input
            .as_ref()
            .map(|s| s.schema().clone())
            .unwrap_or_default(),
    );
    let mut output_error = None;
    match H::Output::output_schema() {
        Some(Ok(schema)) => tool.output_schema = Some(schema.schema().clone()),
        Some(Err(e)) => output_error = Some(e),
        None => {}
    }
    let handler = Arc::new(handler);
    let call: Arc<CallFn> = Arc::new(move |args, context| handler.call(args, context));
    ToolDef {
        tool,
        input,
        output_error,
        state: H::state(),
        call,
    }
}

impl ToolDef {
    /// Sets the description the model reads.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.tool.description = Some(text.into());
        self
    }

    /// Sets the display name.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.tool.title = Some(text.into());
        self
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Lets the tool run as a task (`execution.taskSupport`): `Optional` when the client
    /// asks, `Required` always (a plain call is refused with -32601). See [`super::task`].
    pub fn task_support(mut self, support: junction_protocol::tools::TaskSupport) -> Self {
        self.tool = self.tool.task_support(support);
        self
    }

    /// Lists `schema` verbatim as the input schema (for example a hand-written JSON Schema
    /// 2020-12 with `$defs`) and validates arguments against it instead of the derived one.
    /// The function's argument type should then accept anything the schema allows
    /// (`serde_json::Map<String, Value>` does).
    pub fn input_schema(mut self, schema: Map<String, Value>) -> Self {
        self.input = CompiledSchema::new(schema.clone()).map(Arc::new);
        self.tool.input_schema = schema;
        self
    }

    /// The description as it will be listed.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}
