//! What the host answers when the server asks something of it: sampling
//! (`sampling/createMessage`), elicitation (`elicitation/create`) and roots (`roots/list`),
//! client features of revision 2025-11-25 (client/sampling, client/elicitation, client/roots).
//!
//! Each feature is a value wrapping one async closure plus the sub-capabilities it supports.
//! Setting one on [`ClientOptions`](super::ClientOptions) is what declares the capability in
//! `initialize`; a feature left unset is not declared and its requests are answered -32601.
//! Each handler runs in its own task with the request's [`RequestContext`] (its id, and a
//! cancellation token that fires when the server cancels or the session ends; the handler's
//! future is dropped at that point, so awaiting the token is only needed to clean up early).
//!
//! ```
//! use std::collections::BTreeMap;
//! use junction::client::{ClientOptions, Elicitation, HandlerError, Roots, Sampling};
//! use junction_protocol::elicitation::{ElicitParams, ElicitResult};
//! use junction_protocol::roots::Root;
//! use junction_protocol::sampling::CreateMessageResult;
//!
//! let options = ClientOptions::new("my-host", "1.0.0")
//!     .sampling(Sampling::new(|params, _ctx| async move {
//!         if params.messages.is_empty() {
//!             return Err(HandlerError::rejected("the user declined the sampling request"));
//!         }
//!         Ok(CreateMessageResult::text("some-model", "Hello!"))
//!     }))
//!     .elicitation(Elicitation::form(|params, _ctx| async move {
//!         Ok(match params {
//!             ElicitParams::Form(_) => ElicitResult::accept(BTreeMap::new()),
//!             ElicitParams::Url(_) => ElicitResult::decline(),
//!         })
//!     }))
//!     .roots(Roots::new(|_ctx| async { Ok(vec![Root::new("file:///home/me/project")]) }));
//! assert!(options.capabilities().supports_sampling());
//! assert!(options.capabilities().supports_elicitation_form());
//! assert!(options.capabilities().supports_roots_list_changed());
//! ```

use std::future::Future;
use std::sync::Arc;

use junction_protocol::elicitation::{ElicitParams, ElicitResult};
use junction_protocol::roots::Root;
use junction_protocol::sampling::{CreateMessageParams, CreateMessageResult};
use junction_protocol::{ErrorCode, ErrorObject};

use crate::session::{BoxFuture, RequestContext};

/// Why a handler did not produce a result; becomes the JSON-RPC error the server receives.
/// Its message is prefixed with the method, e.g. `sampling/createMessage failed: …`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct HandlerError {
    /// The JSON-RPC error code.
    pub code: ErrorCode,
    /// What went wrong, for the server (and through it, the model).
    pub message: String,
}

impl HandlerError {
    /// The host failed (-32603).
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError {
            code: ErrorCode::INTERNAL_ERROR,
            message: message.into(),
        }
    }

    /// The user refused (-1, the code the sampling section of the specification shows).
    pub fn rejected(message: impl Into<String>) -> Self {
        HandlerError {
            code: ErrorCode::USER_REJECTED,
            message: message.into(),
        }
    }

    /// The request's params cannot be served (-32602).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        HandlerError {
            code: ErrorCode::INVALID_PARAMS,
            message: message.into(),
        }
    }

    /// The error object sent for `method`.
    pub(super) fn into_error(self, method: &str) -> ErrorObject {
        ErrorObject::new(self.code, format!("{method} failed: {}", self.message))
    }
}

type Handler<P, R> =
    Arc<dyn Fn(P, RequestContext) -> BoxFuture<'static, Result<R, HandlerError>> + Send + Sync>;

fn boxed<P, R, F, Fut>(handler: F) -> Handler<P, R>
where
    F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
{
    Arc::new(move |params, ctx| Box::pin(handler(params, ctx)))
}

/// Answers `sampling/createMessage`: runs the messages through the host's model. Declares
/// `sampling: {}`, plus `sampling.tools` with [`Sampling::with_tools`] and `sampling.context`
/// with [`Sampling::with_context`]; a request that uses tools or `includeContext` without the
/// matching declaration is refused with -32602 before the handler runs.
#[derive(Clone)]
pub struct Sampling {
    pub(super) handler: Handler<CreateMessageParams, CreateMessageResult>,
    pub(super) tools: bool,
    pub(super) context: bool,
}

impl Sampling {
    /// Sampling answered by `handler`.
    pub fn new<F, Fut>(handler: F) -> Self
    where
        F: Fn(CreateMessageParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
    {
        Sampling {
            handler: boxed(handler),
            tools: false,
            context: false,
        }
    }

    /// The handler accepts `tools` and `toolChoice` (declares `sampling.tools`).
    pub fn with_tools(mut self) -> Self {
        self.tools = true;
        self
    }

    /// The handler honours `includeContext` (declares `sampling.context`; soft-deprecated).
    pub fn with_context(mut self) -> Self {
        self.context = true;
        self
    }
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling")
            .field("tools", &self.tools)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

/// Answers `elicitation/create` with accept (and the form's content), decline or cancel.
/// Declares `elicitation.form` and/or `elicitation.url`; a request in a mode not declared is
/// refused with -32602 before the handler runs, and form content the handler accepts is
/// checked against the requested schema before it is sent.
#[derive(Clone)]
pub struct Elicitation {
    pub(super) handler: Handler<ElicitParams, ElicitResult>,
    pub(super) form: bool,
    pub(super) url: bool,
}

impl Elicitation {
    fn of<F, Fut>(handler: F, form: bool, url: bool) -> Self
    where
        F: Fn(ElicitParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        Elicitation {
            handler: boxed(handler),
            form,
            url,
        }
    }

    /// Form-mode elicitation answered by `handler` (declares `elicitation.form`).
    pub fn form<F, Fut>(handler: F) -> Self
    where
        F: Fn(ElicitParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        Self::of(handler, true, false)
    }

    /// URL-mode elicitation answered by `handler` (declares `elicitation.url`).
    pub fn url<F, Fut>(handler: F) -> Self
    where
        F: Fn(ElicitParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        Self::of(handler, false, true)
    }

    /// Also accepts URL mode.
    pub fn with_url(mut self) -> Self {
        self.url = true;
        self
    }

    /// Also accepts form mode.
    pub fn with_form(mut self) -> Self {
        self.form = true;
        self
    }
}

impl std::fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitation")
            .field("form", &self.form)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Answers `roots/list` with the directories the user exposes to the server. Declares
/// `roots: {"listChanged": true}` so that [`Client::notify_roots_changed`] may tell the server
/// when they change; [`Roots::without_list_changed`] declares `roots: {}` instead. Every root
/// must be a `file://` URI; another is an error the server receives rather than a root.
///
/// [`Client::notify_roots_changed`]: super::Client::notify_roots_changed
#[derive(Clone)]
pub struct Roots {
    pub(super) handler: Handler<(), Vec<Root>>,
    pub(super) list_changed: bool,
}

impl Roots {
    /// Roots listed by `handler`.
    pub fn new<F, Fut>(handler: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, HandlerError>> + Send + 'static,
    {
        Roots {
            handler: boxed(move |(), ctx| handler(ctx)),
            list_changed: true,
        }
    }

    /// The roots never change: declare `roots: {}`.
    pub fn without_list_changed(mut self) -> Self {
        self.list_changed = false;
        self
    }
}

impl std::fmt::Debug for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roots")
            .field("list_changed", &self.list_changed)
            .finish_non_exhaustive()
    }
}
