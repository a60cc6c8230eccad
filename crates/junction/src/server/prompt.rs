//! Prompts as async functions (`prompts/list`, `prompts/get`; every handshake revision).
//!
//! A prompt declares its arguments; the server refuses a `prompts/get` that lacks a required
//! one (-32602 naming it) before the handler runs. The handler takes a [`PromptRequest`] and
//! returns anything [`IntoPromptResult`]: a `String` (one user message), a [`PromptMessage`],
//! a `Vec` of them, a full [`GetPromptResult`], or `Result<_, ErrorObject>`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use junction_protocol::lifecycle::Icon;
use junction_protocol::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use junction_protocol::ErrorObject;

use super::completion::{CompleteRequest, Completer};
use super::Context;
use crate::session::BoxFuture;

/// A request to render one prompt.
#[derive(Debug, Clone)]
pub struct PromptRequest {
    /// The arguments given (every required one is present).
    pub arguments: BTreeMap<String, String>,
    /// The handler's context.
    pub context: Context,
}

impl PromptRequest {
    /// A clone of the server's state of type `S` (see [`super::State`]).
    pub fn state<S: Clone + Send + Sync + 'static>(&self) -> Option<S> {
        self.context.state()
    }

    /// An argument's value.
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }
}

/// What a prompt handler may return.
pub trait IntoPromptResult {
    /// The result to send.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Result<T, ErrorObject> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.and_then(IntoPromptResult::into_prompt_result)
    }
}

pub(super) type GetFn =
    dyn Fn(PromptRequest) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> + Send + Sync;

/// A prompt ready to register: its description, render function and argument completers.
#[derive(Clone)]
pub struct PromptDef {
    pub(super) prompt: Prompt,
    pub(super) get: Arc<GetFn>,
    pub(super) completers: BTreeMap<String, Arc<Completer>>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

/// Declares a prompt called `name` rendered by `handler`.
pub fn prompt<F, Fut, R>(name: impl Into<String>, handler: F) -> PromptDef
where
    F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoPromptResult,
{
    PromptDef {
        prompt: Prompt::new(name),
        get: Arc::new(move |request| {
            let future = handler(request);
            Box::pin(async move { future.await.into_prompt_result() })
        }),
        completers: BTreeMap::new(),
    }
}

impl PromptDef {
    /// Sets the display name.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.prompt.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.prompt.description = Some(text.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.prompt.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Declares an argument (see [`PromptArgument`]'s builder for title and description).
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }

    /// Declares a required argument with its description.
    pub fn required(self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.argument(
            PromptArgument::new(name)
                .description(description)
                .required(),
        )
    }

    /// Declares an optional argument with its description.
    pub fn optional(self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.argument(PromptArgument::new(name).description(description))
    }

    /// Completes the argument `argument` with `completer` (`completion/complete` with a
    /// `ref/prompt`).
    pub fn complete<F, Fut>(mut self, argument: impl Into<String>, completer: F) -> Self
    where
        F: Fn(CompleteRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers
            .insert(argument.into(), super::completion::erase(completer));
        self
    }

    /// The description as it will be listed.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    /// The first required argument missing from `arguments`, as the error to answer.
    pub(super) fn check(&self, arguments: &BTreeMap<String, String>) -> Result<(), ErrorObject> {
        match self
            .prompt
            .arguments
            .iter()
            .flatten()
            .find(|a| a.is_required() && !arguments.contains_key(&a.name))
        {
            Some(a) => Err(ErrorObject::invalid_params(format!(
                "Invalid params: prompt `{}` needs the argument `{}`",
                self.prompt.name, a.name
            ))),
            None => Ok(()),
        }
    }
}
