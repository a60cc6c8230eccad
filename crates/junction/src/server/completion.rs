//! Argument completion (`completion/complete`; capability `completions`, declared only when
//! some prompt argument or template variable has a completer).
//!
//! A completer is an async function from a [`CompleteRequest`] to the matching values, best
//! first. The server keeps the first 100 and reports the true `total` and `hasMore`. An
//! argument without a completer gets an empty completion; an unknown prompt, template or
//! argument gets -32602.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use junction_protocol::completion::{CompleteParams, CompleteResult, Completion, CompletionRef};
use junction_protocol::ErrorObject;

use super::registry::Lists;
use super::Context;
use crate::session::BoxFuture;

/// What a completer is asked.
#[derive(Debug, Clone)]
pub struct CompleteRequest {
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What has been typed so far.
    pub value: String,
    /// The other arguments already resolved (`context.arguments`).
    pub arguments: BTreeMap<String, String>,
    /// The handler's context.
    pub context: Context,
}

pub(super) type Completer =
    dyn Fn(CompleteRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync;

pub(super) fn erase<F, Fut>(completer: F) -> Arc<Completer>
where
    F: Fn(CompleteRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |request| Box::pin(completer(request)))
}

impl CompleteRequest {
    /// A clone of the server's state of type `S` (see [`super::State`]).
    pub fn state<S: Clone + Send + Sync + 'static>(&self) -> Option<S> {
        self.context.state()
    }
}

/// A completer offering the values of `choices` that start with what was typed,
/// case-insensitively, in the given order.
pub fn choices<I, S>(
    choices: I,
) -> impl Fn(CompleteRequest) -> std::future::Ready<Vec<String>> + Send + Sync + 'static
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let choices: Vec<String> = choices.into_iter().map(Into::into).collect();
    move |request: CompleteRequest| {
        let typed = request.value.to_lowercase();
        std::future::ready(
            choices
                .iter()
                .filter(|c| c.to_lowercase().starts_with(&typed))
                .cloned()
                .collect(),
        )
    }
}

/// Finds the completer `params` names: `Ok(None)` when the argument exists but has none.
pub(super) fn find(
    lists: &Lists,
    params: &CompleteParams,
) -> Result<Option<Arc<Completer>>, ErrorObject> {
    let argument = &params.argument.name;
    match &params.reference {
        CompletionRef::Prompt { name, .. } => {
            let prompt = lists.prompt(name).ok_or_else(|| {
                ErrorObject::invalid_params(format!("Invalid params: unknown prompt `{name}`"))
            })?;
            if let Some(completer) = prompt.completers.get(argument) {
                return Ok(Some(completer.clone()));
            }
            let declared = prompt
                .prompt
                .arguments
                .iter()
                .flatten()
                .any(|a| &a.name == argument);
            if declared {
                Ok(None)
            } else {
                Err(ErrorObject::invalid_params(format!(
                    "Invalid params: prompt `{name}` has no argument `{argument}`"
                )))
            }
        }
        CompletionRef::Resource { uri } => {
            if let Some(template) = lists
                .templates
                .iter()
                .find(|t| &t.template.uri_template == uri)
            {
                if let Some(completer) = template.completers.get(argument) {
                    return Ok(Some(completer.clone()));
                }
                let declared = template
                    .parsed
                    .as_ref()
                    .is_ok_and(|t| t.variables().contains(&argument.as_str()));
                return if declared {
                    Ok(None)
                } else {
                    Err(ErrorObject::invalid_params(format!(
                        "Invalid params: resource template `{uri}` has no variable `{argument}`"
                    )))
                };
            }
            if lists.resources.iter().any(|r| &r.resource.uri == uri) {
                return Ok(None);
            }
            Err(ErrorObject::invalid_params(format!(
                "Invalid params: unknown resource template `{uri}`"
            )))
        }
    }
}

/// Runs `completer` (if any) and caps its answer.
pub(super) async fn complete(
    completer: Option<Arc<Completer>>,
    params: CompleteParams,
    context: Context,
) -> CompleteResult {
    let values = match completer {
        Some(completer) => {
            completer(CompleteRequest {
                argument: params.argument.name,
                value: params.argument.value,
                arguments: params.context.and_then(|c| c.arguments).unwrap_or_default(),
                context,
            })
            .await
        }
        None => Vec::new(),
    };
    CompleteResult::new(Completion::from_matches(values))
}
