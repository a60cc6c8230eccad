//! [`Context`]: what a handler may use besides its arguments: progress, cancellation, logging
//! to the client, and requests to the client (sampling, elicitation, roots), each checked
//! against the capabilities the client declared before anything is sent.

use std::sync::Arc;

use junction_protocol::elicitation::{Elicit, ElicitParams, ElicitResult};
use junction_protocol::logging::LoggingLevel;
use junction_protocol::meta::EmptyParams;
use junction_protocol::meta::TaskMetadata;
use junction_protocol::method::Request;
use junction_protocol::roots::{ListRoots, ListRootsResult};
use junction_protocol::sampling::{CreateMessage, CreateMessageParams, CreateMessageResult};
use junction_protocol::tasks::{
    CancelTask, CreateTaskResult, GetTask, GetTaskPayload, TaskIdParams, TaskStatus,
    RELATED_TASK_META,
};
use junction_protocol::ProtocolVersion;
use serde_json::Value;

use junction_protocol::capabilities::ClientCapabilities;
use junction_protocol::stateless::InputRequest;

use super::lifecycle::Negotiated;
use super::logging;
use super::registry::SessionState;
use super::stateless::Call;
use super::ServerHandle;
use crate::error::RequestError;
use crate::session::{Peer, RequestContext, RequestOptions};

/// What a tool, resource, prompt or completion handler may use besides its arguments.
///
/// Cheap to clone. Server→client requests are sent as related to the request being handled
/// (so multi-stream transports use that request's stream) and are cancelled with it.
#[derive(Clone)]
pub struct Context {
    request: RequestContext,
    client: Option<Arc<Negotiated>>,
    session: Arc<SessionState>,
    server: ServerHandle,
    /// Set for a 2026-07-28 request: its client, log level and input rounds.
    call: Option<Arc<Call>>,
    /// The key of this context's input requests on 2026-07-28 ([`Context::input_key`]).
    input_key: Option<Arc<str>>,
    /// Set when the handler runs as a task: the task's id ([`super::task`]).
    task: Option<Arc<str>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request", &self.request.id())
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The server's layers around tool calls.
    pub(super) fn layers(&self) -> super::layer::Layers {
        self.server.registry.tool_layers.clone()
    }

    pub(super) fn new(
        request: RequestContext,
        session: Arc<SessionState>,
        server: ServerHandle,
    ) -> Self {
        Context {
            request,
            client: session.lifecycle.client(),
            session,
            server,
            call: None,
            input_key: None,
            task: None,
        }
    }

    /// The context of a handler that runs as task `id`.
    pub(super) fn in_task(mut self, id: String) -> Self {
        self.task = Some(id.into());
        self
    }

    /// The task this handler runs as: a task-augmented call (handshake family), or one the
    /// server runs on as a task (2026-07-28 tasks extension).
    pub fn task_id(&self) -> Option<&str> {
        self.task
            .as_deref()
            .or_else(|| self.call.as_ref()?.task().map(|id| &**id))
    }

    /// Sets the status message of the task this handler runs as (what `tasks/get` and
    /// `notifications/tasks/status` show while it works); does nothing outside a task.
    ///
    /// On 2026-07-28 a call becomes a task only once its handler has waited: a message set
    /// before that is kept, and the task starts with it.
    pub fn task_status(&self, message: impl Into<String>) {
        let tasks = &self.server.registry.tasks;
        if let Some(id) = &self.task {
            tasks.set_status(id, TaskStatus::Working, Some(message.into()));
        } else if let Some(call) = &self.call {
            if let Some((id, message)) = call.status_or_pending(message.into()) {
                tasks.set_status(&id, TaskStatus::Working, Some(message));
            }
        }
    }

    /// The context of a 2026-07-28 request: the client is the one its `_meta` describes.
    pub(super) fn stateless(
        request: RequestContext,
        session: Arc<SessionState>,
        server: ServerHandle,
        call: Arc<Call>,
    ) -> Self {
        Context {
            request,
            client: Some(call.client.clone()),
            session,
            server,
            call: Some(call),
            input_key: None,
            task: None,
        }
    }

    /// This context, whose sampling, elicitation and roots requests are keyed `key` on
    /// 2026-07-28: the key of the input request in the `input_required` result and of its
    /// answer in the retried request's `inputResponses` (see [`super::stateless`]). Without
    /// one, the n-th request of a handler run is `input-n`. The handshake family has no keys;
    /// there the request is sent as usual.
    ///
    /// ```
    /// # async fn handler(context: junction::server::Context) {
    /// use junction_protocol::elicitation::{FormParams, RequestedSchema};
    /// let form = FormParams::new("Your name?", RequestedSchema::default());
    /// let answer = context.input_key("user_name").elicit(form).await;
    /// # }
    /// ```
    pub fn input_key(&self, key: impl Into<Arc<str>>) -> Context {
        Context {
            input_key: Some(key.into()),
            ..self.clone()
        }
    }

    /// Reports progress, if the caller asked for it (see [`RequestContext::progress`]).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        // The tasks extension carries no progress: the request it would belong to is answered.
        if self.call.as_ref().is_some_and(|c| c.task().is_some()) {
            return false;
        }
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
        self.client.as_deref()
    }

    /// A clone of the state of type `S` given to
    /// [`ServerBuilder::state`](super::ServerBuilder::state), if any.
    pub fn state<S: Clone + Send + Sync + 'static>(&self) -> Option<S> {
        self.server.registry.states.get::<S>()
    }

    /// The HTTP transport's controls over this connection's streams (to close a stream for
    /// the client to resume it, SEP-1699), when the connection is a Streamable HTTP session;
    /// `None` over other transports.
    #[cfg(feature = "http-server")]
    pub fn http(&self) -> Option<&crate::transport::http::server::SessionControl> {
        self.session.http.get()
    }

    /// The caller, as the bearer token that opened this session says (set when the HTTP
    /// server requires authorization, [`BearerAuth`](crate::transport::http::server::BearerAuth)):
    /// the session's owner, which every later request must match.
    #[cfg(feature = "http-server")]
    pub fn identity(&self) -> Option<&crate::auth::resource::Identity> {
        self.session.identity.as_ref()
    }

    /// The caller as checked on the latest request: the same subject as
    /// [`Context::identity`] (`BearerAuth` refuses another), with the scopes and expiry of
    /// the token that request carried, so that a step-up or a refresh shows here. The
    /// session's opening identity when the transport has no per-request one.
    #[cfg(feature = "http-server")]
    pub fn caller(&self) -> Option<crate::auth::resource::Identity> {
        self.session
            .http
            .get()
            .and_then(|control| control.caller())
            .or_else(|| self.session.identity.clone())
    }

    /// The server this request is served by, to change its tools, resources or prompts.
    pub fn server(&self) -> &ServerHandle {
        &self.server
    }

    /// Sends `notifications/message` when `level` is at or above the session's level (set by
    /// `logging/setLevel`; [`logging::DEFAULT_LEVEL`] until then). On 2026-07-28 the level is
    /// the request's `_meta["io.modelcontextprotocol/logLevel"]`, and nothing is sent without
    /// it. Returns whether it was sent.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) -> bool {
        let threshold = match &self.call {
            Some(call) => call.log_level,
            None => Some(*crate::sync::lock(&self.session.log_level)),
        };
        logging::send(
            threshold,
            self.request.peer(),
            level,
            logger,
            data.into(),
            Some(self.request.id().clone()),
        )
    }

    /// Logs at `debug`.
    pub fn debug(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Debug, None, data)
    }

    /// Logs at `info`.
    pub fn info(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Info, None, data)
    }

    /// Logs at `notice`.
    pub fn notice(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Notice, None, data)
    }

    /// Logs at `warning`.
    pub fn warning(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Warning, None, data)
    }

    /// Logs at `error`.
    pub fn error(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Error, None, data)
    }

    /// Asks the client's model for a message (`sampling/createMessage`, client capability
    /// `sampling`; `sampling.tools` when `params` carries tools, `sampling.context` when it
    /// asks for context). Without the capability nothing is sent and
    /// [`RequestError::NotSupported`] says which one is missing.
    pub async fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, RequestError> {
        let required = ClientCapabilities::default().with_sampling();
        let missing = self.sampling_missing(&params);
        self.send::<CreateMessage>(missing, required, &params).await
    }

    /// Asks the client to sample as a task (2025-11-25): for a client whose sampling takes
    /// long (a person reviewing it), `sampling/createMessage` with `task` (lifetime `ttl` ms
    /// asked) is answered at once with a task, which this follows with `tasks/get` at its
    /// `pollInterval` until it is terminal, then returns what `tasks/result` gives. Needs
    /// what [`Context::create_message`] needs and the client capability
    /// `tasks.requests.sampling.createMessage`, else nothing is sent and
    /// [`RequestError::NotSupported`] says what is missing. When this handler is cancelled,
    /// so is the task (`tasks/cancel`, if the client declared `tasks.cancel`).
    pub async fn create_message_as_task(
        &self,
        mut params: CreateMessageParams,
        ttl: Option<u64>,
    ) -> Result<CreateMessageResult, RequestError> {
        let missing = self.sampling_missing(&params).or_else(|| {
            (!self
                .capabilities()
                .is_some_and(|c| c.supports_task_sampling()))
            .then_some("the client did not declare `tasks.requests.sampling.createMessage`")
        });
        params.task = Some(TaskMetadata::new(ttl));
        self.send_as_task::<CreateMessage>(missing, &params).await
    }

    /// Why the client cannot take `params` (`sampling/createMessage`), if it cannot.
    fn sampling_missing(&self, params: &CreateMessageParams) -> Option<&'static str> {
        let caps = self.capabilities();
        if !caps.is_some_and(|c| c.supports_sampling()) {
            Some("the client did not declare the `sampling` capability")
        } else if params.uses_tools() && !caps.is_some_and(|c| c.supports_sampling_tools()) {
            Some("the request carries tools but the client did not declare `sampling.tools`")
        } else if params.uses_context() && !caps.is_some_and(|c| c.supports_sampling_context()) {
            Some("the request asks for context but the client did not declare `sampling.context`")
        } else {
            None
        }
    }

    /// Asks the client's user for input (`elicitation/create`, 2025-06-18 and later). Form
    /// mode needs the client capability `elicitation` (an empty object means form) or
    /// `elicitation.form`; URL mode needs `elicitation.url`. Without it nothing is sent and
    /// [`RequestError::NotSupported`] says which one is missing.
    pub async fn elicit(
        &self,
        params: impl Into<ElicitParams>,
    ) -> Result<ElicitResult, RequestError> {
        let params = params.into();
        let required = ClientCapabilities::default().with_elicitation();
        let missing = self.elicitation_missing(&params);
        self.send::<Elicit>(missing, required, &params).await
    }

    /// Asks the client's user for input as a task (2025-11-25), as
    /// [`Context::create_message_as_task`] does for sampling: needs what [`Context::elicit`]
    /// needs and the client capability `tasks.requests.elicitation.create`.
    pub async fn elicit_as_task(
        &self,
        params: impl Into<ElicitParams>,
        ttl: Option<u64>,
    ) -> Result<ElicitResult, RequestError> {
        let mut params = params.into();
        let missing = self.elicitation_missing(&params).or_else(|| {
            (!self
                .capabilities()
                .is_some_and(|c| c.supports_task_elicitation()))
            .then_some("the client did not declare `tasks.requests.elicitation.create`")
        });
        let task = Some(TaskMetadata::new(ttl));
        match &mut params {
            ElicitParams::Form(form) => form.task = task,
            ElicitParams::Url(url) => url.task = task,
        }
        self.send_as_task::<Elicit>(missing, &params).await
    }

    /// Why the client cannot take `params` (`elicitation/create`), if it cannot.
    fn elicitation_missing(&self, params: &ElicitParams) -> Option<&'static str> {
        let caps = self.capabilities();
        if !self.version().is_some_and(|v| v.has_structured_output()) {
            return Some(
                "the negotiated protocol revision has no elicitation (added in 2025-06-18)",
            );
        }
        match params {
            ElicitParams::Form(_) if !caps.is_some_and(|c| c.supports_elicitation_form()) => {
                Some("the client did not declare form-mode elicitation (`elicitation` or `elicitation.form`)")
            }
            ElicitParams::Url(_) if !caps.is_some_and(|c| c.supports_elicitation_url()) => {
                Some("the client did not declare URL-mode elicitation (`elicitation.url`)")
            }
            _ => None,
        }
    }

    /// Asks the client for its roots (`roots/list`, client capability `roots`). Without the
    /// capability nothing is sent and [`RequestError::NotSupported`] says so.
    pub async fn list_roots(&self) -> Result<ListRootsResult, RequestError> {
        let missing = (!self.capabilities().is_some_and(|c| c.supports_roots()))
            .then_some("the client did not declare the `roots` capability");
        let required = ClientCapabilities::default().with_roots(false);
        self.send::<ListRoots>(missing, required, &EmptyParams::default())
            .await
    }

    fn capabilities(&self) -> Option<&ClientCapabilities> {
        self.client().map(|c| &c.capabilities)
    }

    fn version(&self) -> Option<ProtocolVersion> {
        self.client().map(|c| c.version)
    }

    async fn send<R: Request>(
        &self,
        missing: Option<&str>,
        required: ClientCapabilities,
        params: &R::Params,
    ) -> Result<R::Result, RequestError> {
        let sessionless = self.call.is_none()
            && self
                .session
                .sessionless
                .load(std::sync::atomic::Ordering::SeqCst);
        let missing = if sessionless {
            Some("this connection is sessionless HTTP, which cannot carry server-to-client requests; use an HTTP session (or 2026-07-28, where they travel as input requests)")
        } else {
            missing
        };
        if let Some(reason) = missing {
            if let Some(call) = &self.call {
                call.rounds.require(required);
            }
            return Err(RequestError::NotSupported {
                method: R::METHOD.to_owned(),
                reason: reason.to_owned(),
            });
        }
        if let Some(call) = &self.call {
            if let Some(id) = call.task() {
                return self.extension_input::<R>(id, params).await;
            }
            return self.input::<R>(call, params).await;
        }
        if let Some(id) = &self.task {
            return self.task_input::<R>(id, params).await;
        }
        let options = RequestOptions {
            related: Some(self.request.id().clone()),
            cancel: Some(self.request.cancellation()),
            ..RequestOptions::default()
        };
        self.request.peer().request::<R>(params, options).await
    }
}

impl Context {
    /// A task-augmented request to the client (2025-11-25), followed to its end: polls
    /// `tasks/get` until the task is terminal, then gives `tasks/result`; cancels the task
    /// when this handler is cancelled.
    async fn send_as_task<R: Request>(
        &self,
        missing: Option<&str>,
        params: &R::Params,
    ) -> Result<R::Result, RequestError> {
        let missing = if self.call.is_some() {
            Some("2026-07-28 has no task-augmented requests to the client")
        } else {
            missing
        };
        if let Some(reason) = missing {
            return Err(RequestError::NotSupported {
                method: R::METHOD.to_owned(),
                reason: reason.to_owned(),
            });
        }
        let peer = self.request.peer();
        let cancel = self.request.cancellation();
        let options = || RequestOptions {
            related: Some(self.request.id().clone()),
            ..RequestOptions::default()
        };
        let raw =
            junction_protocol::jsonrpc::to_raw(params).map_err(|source| RequestError::Encode {
                method: R::METHOD.to_owned(),
                source,
            })?;
        let decode = |method: &str, source| RequestError::Decode {
            method: method.to_owned(),
            source,
        };
        let created = peer
            .request_raw(
                R::METHOD,
                Some(raw),
                RequestOptions {
                    cancel: Some(cancel.clone()),
                    ..options()
                },
            )
            .await?;
        let created: CreateTaskResult =
            serde_json::from_str(created.get()).map_err(|e| decode(R::METHOD, e))?;
        let mut task = created.task;
        let id = TaskIdParams::new(task.task_id.clone());
        let follow = async {
            while !task.status.is_terminal() {
                tokio::time::sleep(crate::client::poll_delay(&task)).await;
                task = peer.request::<GetTask>(&id, options()).await?.task;
            }
            let payload = peer.request::<GetTaskPayload>(&id, options()).await?;
            serde_json::from_value(Value::Object(payload)).map_err(|e| decode(R::METHOD, e))
        };
        // The session drops a cancelled handler's future: the guard cancels the task then.
        let cancels = self
            .capabilities()
            .and_then(|c| c.tasks.as_ref())
            .is_some_and(|t| t.cancel.is_some());
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            task: cancels.then(|| id.clone()),
        };
        let result = tokio::select! {
            result = follow => result,
            () = cancel.cancelled() => {
                return Err(RequestError::Cancelled { method: R::METHOD.to_owned() });
            }
        };
        guard.task = None;
        result
    }

    /// A request of a task handler: the task is `input_required` while it waits; the request
    /// carries the related-task `_meta` and goes on the stream of the client's open
    /// `tasks/result`, if any.
    async fn task_input<R: Request>(
        &self,
        id: &str,
        params: &R::Params,
    ) -> Result<R::Result, RequestError> {
        let encode = |source| RequestError::Encode {
            method: R::METHOD.to_owned(),
            source,
        };
        let mut value = serde_json::to_value(params).map_err(encode)?;
        if let Value::Object(map) = &mut value {
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(meta) = meta {
                meta.insert(
                    RELATED_TASK_META.to_owned(),
                    serde_json::json!({ "taskId": id }),
                );
            }
        }
        let raw = junction_protocol::jsonrpc::to_raw(&value).map_err(encode)?;
        let tasks = &self.server.registry.tasks;
        tasks.set_status(id, TaskStatus::InputRequired, None);
        let options = RequestOptions {
            related: tasks.waiter(id),
            cancel: Some(self.request.cancellation()),
            ..RequestOptions::default()
        };
        let answer = self
            .request
            .peer()
            .request_raw(R::METHOD, Some(raw), options)
            .await;
        tasks.set_status(id, TaskStatus::Working, None);
        serde_json::from_str(answer?.get()).map_err(|source| RequestError::Decode {
            method: R::METHOD.to_owned(),
            source,
        })
    }

    /// 2026-07-28, in a task: the request waits among the task's `inputRequests` until a
    /// `tasks/update` answers it.
    async fn extension_input<R: Request>(
        &self,
        id: &str,
        params: &R::Params,
    ) -> Result<R::Result, RequestError> {
        let request = InputRequest::of::<R>(params).map_err(|source| RequestError::Encode {
            method: R::METHOD.to_owned(),
            source,
        })?;
        let tasks = &self.server.registry.tasks;
        let closed = || RequestError::Closed {
            method: R::METHOD.to_owned(),
        };
        let answer = tasks
            .ask(id, self.input_key.as_deref(), request)
            .ok_or_else(closed)?;
        let cancel = self.request.cancellation();
        let answer = tokio::select! {
            answer = answer => answer.map_err(|_| closed())?,
            () = cancel.cancelled() => {
                return Err(RequestError::Cancelled { method: R::METHOD.to_owned() });
            }
        };
        serde_json::from_value(answer).map_err(|source| RequestError::Decode {
            method: R::METHOD.to_owned(),
            source,
        })
    }

    /// 2026-07-28: the answer from the retried request, or the end of this run (the router
    /// answers `input_required`); see [`super::stateless`].
    async fn input<R: Request>(
        &self,
        call: &Call,
        params: &R::Params,
    ) -> Result<R::Result, RequestError> {
        let request = InputRequest::of::<R>(params).map_err(|source| RequestError::Encode {
            method: R::METHOD.to_owned(),
            source,
        })?;
        let (key, answer) = call.rounds.answer(self.input_key.as_deref(), request);
        match answer.map(serde_json::from_value) {
            Some(Ok(result)) => Ok(result),
            Some(Err(e)) => {
                call.rounds.invalid(&key, R::METHOD, &e.to_string());
                std::future::pending().await
            }
            None => std::future::pending().await,
        }
    }
}

/// Cancels a task of the client (`tasks/cancel`) when dropped while it holds one: the
/// handler that followed the task was cancelled.
struct CancelOnDrop {
    peer: Peer,
    task: Option<TaskIdParams>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(task), Ok(runtime)) = (self.task.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            if let Err(e) = peer
                .request::<CancelTask>(&task, RequestOptions::default())
                .await
            {
                tracing::debug!(task = %task.task_id, "could not cancel the client's task: {e}");
            }
        });
    }
}

/// A client said its roots changed (`notifications/roots/list_changed`); see
/// [`super::ServerBuilder::on_roots_changed`].
#[derive(Clone)]
pub struct RootsChanged {
    pub(super) peer: crate::session::Peer,
    pub(super) session: Arc<SessionState>,
}

impl std::fmt::Debug for RootsChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootsChanged").finish_non_exhaustive()
    }
}

impl RootsChanged {
    /// The client that sent it.
    pub fn client(&self) -> Option<Negotiated> {
        self.session.lifecycle.negotiated()
    }

    /// Asks that client for its roots now (`roots/list`).
    pub async fn list_roots(&self) -> Result<ListRootsResult, RequestError> {
        if !self
            .client()
            .is_some_and(|c| c.capabilities.supports_roots())
        {
            return Err(RequestError::NotSupported {
                method: ListRoots::METHOD.to_owned(),
                reason: "the client did not declare the `roots` capability".to_owned(),
            });
        }
        self.peer
            .request::<ListRoots>(&EmptyParams::default(), RequestOptions::default())
            .await
    }
}
