//! [`Peer`]: the sending half of a session, shared by everything that talks to the other side.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use junction_protocol::jsonrpc::{self, Message, Notification, Request, Response};
use junction_protocol::method;
use junction_protocol::{ErrorObject, ProgressToken, RequestId};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::context::{CancelHandle, RequestContext};
use super::latch::Latch;
use super::SessionOptions;
use crate::error::RequestError;
use crate::sync::lock;
use crate::transport::queue::Watch;
use crate::transport::{Outbound, OutboundSender, TransportError};

/// How long a session that ended waits for its transport to write what was queued before
/// it counts as closed anyway: a peer that stopped reading must not hold it open.
pub const WRITE_GRACE: Duration = Duration::from_secs(5);

/// One `notifications/progress` update for a request this side sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressUpdate {
    /// Progress so far; increases with every update.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable description of the current step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Receives the progress updates of one outgoing request.
pub type ProgressSink = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// Where the task an outgoing request became stands (the peer ran the request as a task).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStatusUpdate {
    /// The peer's id for the task.
    pub task_id: String,
    /// Where it stands.
    pub status: junction_protocol::tasks::TaskStatus,
    /// What it is doing, in the peer's words.
    pub message: Option<String>,
}

/// Receives each status of the task an outgoing request became.
pub type TaskStatusSink = Arc<dyn Fn(TaskStatusUpdate) + Send + Sync>;

/// How one outgoing request is sent and awaited.
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// How long to wait for the answer; the session's default when `None`.
    pub timeout: Option<Duration>,
    /// Ask for progress, and give each update to this sink. A progress token is added to the
    /// params' `_meta`.
    pub progress: Option<ProgressSink>,
    /// With progress: every update restarts the timeout, up to `max_total`.
    pub reset_timeout_on_progress: bool,
    /// The hard limit when the timeout is restarted by progress.
    pub max_total: Option<Duration>,
    /// The incoming request this one is made on behalf of (server→client requests made by a
    /// handler), so multi-stream transports send it on that request's stream.
    pub related: Option<RequestId>,
    /// Stop waiting (and cancel on the peer) when this token fires; the request then fails
    /// with [`RequestError::Cancelled`].
    pub cancel: Option<CancellationToken>,
    /// When the peer runs the request as a task it chose to make (the 2026-07-28 tasks
    /// extension), each change of the task's status or status message, its first included.
    pub task_status: Option<TaskStatusSink>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_total", &self.max_total)
            .field("related", &self.related)
            .field("task_status", &self.task_status.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks for progress updates.
    pub fn on_progress(mut self, sink: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// Cancels the request when `token` fires.
    pub fn cancel_on(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

type Outcome = Result<Box<RawValue>, Failure>;

/// Why an outgoing request got no result.
enum Failure {
    /// The peer answered with an error.
    Remote(ErrorObject),
    /// The transport could not carry it.
    Transport(TransportError),
}

struct Pending {
    tx: oneshot::Sender<Outcome>,
    /// Set on each progress update; read by the waiting side to restart its timer.
    progressed: Option<Arc<Mutex<Instant>>>,
}

struct Inner {
    outgoing: Mutex<Option<OutboundSender>>,
    next_id: AtomicI64,
    /// See [`Connection::request_id_prefix`](crate::transport::Connection::request_id_prefix).
    id_prefix: Option<String>,
    pending: Mutex<HashMap<RequestId, Pending>>,
    progress: Mutex<HashMap<ProgressToken, (ProgressSink, RequestId)>>,
    incoming: Mutex<HashMap<RequestId, CancelHandle>>,
    /// Fires when the session ends, after every running request in `incoming` is cancelled
    /// (each request cancels on its own, rather than as a child of a session token, whose
    /// creation and drop would lock it once per request).
    closed: Latch,
    /// Fires when [`Peer::close`] asks the read loop to stop.
    shutdown: Latch,
    /// Fires when the other side stops sending: no answer can arrive any more.
    input_closed: Latch,
    /// Why the transport broke, when it did ([`crate::transport::Inbound::Broken`]): every
    /// request that can no longer be answered fails with it.
    broken: Mutex<Option<TransportError>>,
    /// Tells when the transport has written what the session queued.
    written: Watch<Outbound>,
    /// Woken whenever the last running incoming request ends.
    idle: tokio::sync::Notify,
    options: SessionOptions,
}

/// The sending half of a session: requests, notifications, cancellation, closing. Cheap to
/// clone; every clone talks to the same peer.
#[derive(Clone)]
pub struct Peer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("name", &self.inner.options.name)
            .finish_non_exhaustive()
    }
}

/// Removes a pending request if its caller stops waiting, and tells the peer.
struct PendingGuard<'a> {
    peer: &'a Peer,
    id: RequestId,
    armed: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.peer.forget(&self.id);
            self.peer
                .send_cancel(&self.id, "the requester stopped waiting");
        }
    }
}

impl Peer {
    pub(super) fn new(
        outgoing: OutboundSender,
        id_prefix: Option<String>,
        options: SessionOptions,
    ) -> Peer {
        Peer {
            inner: Arc::new(Inner {
                written: outgoing.watch(),
                outgoing: Mutex::new(Some(outgoing)),
                next_id: AtomicI64::new(1),
                id_prefix,
                pending: Mutex::new(HashMap::new()),
                progress: Mutex::new(HashMap::new()),
                incoming: Mutex::new(HashMap::new()),
                closed: Latch::default(),
                shutdown: Latch::default(),
                input_closed: Latch::default(),
                broken: Mutex::new(None),
                idle: tokio::sync::Notify::new(),
                options,
            }),
        }
    }

    /// The session's name, for logs.
    pub fn name(&self) -> &str {
        &self.inner.options.name
    }

    /// Sends a typed request and decodes its result.
    pub async fn request<R: method::Request>(
        &self,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, RequestError> {
        let raw = jsonrpc::to_raw(params).map_err(|source| RequestError::Encode {
            method: R::METHOD.to_owned(),
            source,
        })?;
        let result = self.request_raw(R::METHOD, Some(raw), options).await?;
        serde_json::from_str(result.get()).map_err(|source| RequestError::Decode {
            method: R::METHOD.to_owned(),
            source,
        })
    }

    /// Sends a typed notification.
    pub fn notify<N: method::Notification>(
        &self,
        params: &N::Params,
        related: Option<RequestId>,
    ) -> Result<(), RequestError> {
        let raw = jsonrpc::to_raw(params).map_err(|source| RequestError::Encode {
            method: N::METHOD.to_owned(),
            source,
        })?;
        self.notify_raw(N::METHOD, Some(raw), related)
    }

    /// Sends a notification with raw params.
    pub fn notify_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    ) -> Result<(), RequestError> {
        let message = Message::Notification(Notification {
            method: method.to_owned(),
            params,
        });
        if self.send(message, related) {
            Ok(())
        } else {
            Err(RequestError::Closed {
                method: method.to_owned(),
            })
        }
    }

    /// Sends a request with raw params and waits for its raw result.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, RequestError> {
        if self.inner.input_closed.is_set() {
            return Err(self.closed_error(method));
        }
        let n = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let id = match &self.inner.id_prefix {
            Some(prefix) => RequestId::String(format!("{prefix}{n}")),
            None => RequestId::Number(n),
        };
        let mut params = params;
        let (tx, mut rx) = oneshot::channel();
        let progressed = options
            .progress
            .as_ref()
            .map(|_| Arc::new(Mutex::new(Instant::now())));
        if let Some(sink) = &options.progress {
            let token = match &id {
                RequestId::Number(n) => ProgressToken::Number(*n),
                RequestId::String(s) => ProgressToken::String(s.clone()),
            };
            params = Some(
                with_progress_token(params.as_deref(), &token).map_err(|source| {
                    RequestError::Encode {
                        method: method.to_owned(),
                        source,
                    }
                })?,
            );
            lock(&self.inner.progress).insert(token, (sink.clone(), id.clone()));
        }
        lock(&self.inner.pending).insert(
            id.clone(),
            Pending {
                tx,
                progressed: progressed.clone(),
            },
        );
        let mut guard = PendingGuard {
            peer: self,
            id: id.clone(),
            armed: true,
        };

        let request = Message::Request(Request {
            id: id.clone(),
            method: method.to_owned(),
            params,
        });
        if !self.send(request, options.related.clone()) {
            guard.armed = false;
            self.forget(&id);
            return Err(RequestError::Closed {
                method: method.to_owned(),
            });
        }

        let timeout = options
            .timeout
            .unwrap_or(self.inner.options.request_timeout);
        let started = Instant::now();
        let hard_deadline = options.max_total.map(|max| started + max);
        let cancel = options.cancel.unwrap_or_default();
        let mut deadline = started + timeout;
        let outcome = loop {
            tokio::select! {
                // An answer read before the input ended wins over the end.
                biased;
                outcome = &mut rx => break outcome.ok(),
                () = self.inner.input_closed.wait() => break None,
                _ = cancel.cancelled() => {
                    guard.armed = false;
                    self.forget(&id);
                    self.send_cancel(&id, "cancelled by the requester");
                    return Err(RequestError::Cancelled { method: method.to_owned() });
                }
                _ = tokio::time::sleep_until(deadline) => {
                    if options.reset_timeout_on_progress {
                        if let Some(last) = progressed.as_ref().map(|p| *lock(p)) {
                            let mut next = last + timeout;
                            if let Some(hard) = hard_deadline {
                                next = next.min(hard);
                            }
                            if next > deadline {
                                deadline = next;
                                continue;
                            }
                        }
                    }
                    guard.armed = false;
                    self.forget(&id);
                    let after = started.elapsed();
                    self.send_cancel(&id, &format!("timed out after {} ms", after.as_millis()));
                    return Err(RequestError::Timeout { method: method.to_owned(), after });
                }
            }
        };
        guard.armed = false;
        self.forget(&id);
        match outcome {
            Some(Ok(result)) => Ok(result),
            Some(Err(Failure::Remote(error))) => Err(RequestError::Remote {
                method: method.to_owned(),
                error,
            }),
            Some(Err(Failure::Transport(error))) => Err(RequestError::Transport {
                method: method.to_owned(),
                error,
            }),
            None => Err(self.closed_error(method)),
        }
    }

    /// Why `method` cannot be answered now that the input ended: the transport's failure
    /// when it broke, else the plain end of the connection.
    fn closed_error(&self, method: &str) -> RequestError {
        match lock(&self.inner.broken).clone() {
            Some(error) => RequestError::Transport {
                method: method.to_owned(),
                error,
            },
            None => RequestError::Closed {
                method: method.to_owned(),
            },
        }
    }

    /// Why the transport broke, when it did (for example, an HTTP server that can no longer
    /// be reached): the error its unanswered requests failed with.
    pub fn broken(&self) -> Option<TransportError> {
        lock(&self.inner.broken).clone()
    }

    /// Closes the session: stops reading, ends the write side once queued messages are out,
    /// fails pending requests and cancels running handlers.
    pub fn close(&self) {
        self.inner.shutdown.set();
        lock(&self.inner.outgoing).take();
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_set()
    }

    /// Waits until the session has ended and its transport has written the messages the
    /// session sent (for at most [`WRITE_GRACE`]): a server's `main` can return when this
    /// resolves without losing its last answers.
    pub async fn closed(&self) {
        self.inner.closed.wait().await
    }

    // ---- engine side ----

    pub(super) async fn shutdown_requested(&self) {
        self.inner.shutdown.wait().await
    }

    /// Whether [`Peer::close`] asked the read loop to stop.
    pub(super) fn is_shutting_down(&self) -> bool {
        self.inner.shutdown.is_set()
    }

    /// The other side stopped sending: outgoing requests can no longer be answered, so they
    /// fail at once (and new ones fail when sent) while running handlers go on.
    pub(super) fn input_ended(&self) {
        self.inner.input_closed.set();
        lock(&self.inner.pending).clear();
        lock(&self.inner.progress).clear();
    }

    /// Waits until no incoming request is running.
    pub(super) async fn drained(&self) {
        loop {
            // Created before the check, so a wake-up between the check and the wait is kept.
            let idle = self.inner.idle.notified();
            if lock(&self.inner.incoming).is_empty() {
                return;
            }
            idle.await;
        }
    }

    /// Ends the session: what `input_ended` does (every waiting requester wakes with
    /// `Closed`), plus running handlers cancelled and the write side closed. The session
    /// counts as closed once the transport has written what was queued (within
    /// [`WRITE_GRACE`]), so that a process that exits when [`Peer::closed`] resolves does
    /// not lose its last answers.
    pub(super) async fn finish(&self) {
        self.input_ended();
        for request in lock(&self.inner.incoming).values() {
            request.cancel();
        }
        lock(&self.inner.outgoing).take();
        if tokio::time::timeout(WRITE_GRACE, self.inner.written.written())
            .await
            .is_err()
        {
            tracing::warn!(session = %self.name(), "the transport did not write the last messages within {WRITE_GRACE:?}; closing without them");
        }
        self.inner.closed.set();
    }

    pub(crate) fn send(&self, message: Message, related: Option<RequestId>) -> bool {
        // Sent under the lock: the queue never waits, and a clone of the sender would cost
        // two more locks of the queue per message.
        match &*lock(&self.inner.outgoing) {
            Some(sender) => sender.send(Outbound { message, related }).is_ok(),
            None => false,
        }
    }

    pub(super) fn send_response(&self, response: Response, related: Option<RequestId>) {
        if !self.send(Message::Response(response), related) {
            tracing::debug!(session = %self.name(), "response not sent: the connection is closed");
        }
    }

    fn send_cancel(&self, id: &RequestId, reason: &str) {
        let params = serde_json::json!({ "requestId": id, "reason": reason });
        if let Ok(raw) = jsonrpc::to_raw(&params) {
            let _ = self.notify_raw("notifications/cancelled", Some(raw), None);
        }
    }

    fn forget(&self, id: &RequestId) {
        lock(&self.inner.pending).remove(id);
        self.forget_progress(id);
    }

    fn forget_progress(&self, id: &RequestId) {
        lock(&self.inner.progress).retain(|_, (_, owner)| owner != id);
    }

    pub(super) fn complete(&self, response: Response) {
        let Some(id) = response.id else {
            match response.outcome {
                Err(error) => {
                    tracing::warn!(session = %self.name(), %error, "the peer reported an error about a message it could not read")
                }
                Ok(_) => tracing::warn!(session = %self.name(), "dropping a result without an id"),
            }
            return;
        };
        let pending = lock(&self.inner.pending).remove(&id);
        match pending {
            Some(pending) => {
                let _ = pending.tx.send(response.outcome.map_err(Failure::Remote));
            }
            None => {
                tracing::warn!(session = %self.name(), %id, "dropping a response to an unknown or finished request")
            }
        }
    }

    /// Fails the outgoing request `id` with the transport's error.
    pub(super) fn fail(&self, id: &RequestId, error: TransportError) {
        match lock(&self.inner.pending).remove(id) {
            Some(pending) => {
                let _ = pending.tx.send(Err(Failure::Transport(error)));
            }
            None => {
                tracing::debug!(session = %self.name(), %id, %error, "a transport failure for an unknown or finished request")
            }
        }
    }

    /// Records why the transport broke, before the input ends.
    pub(super) fn broke(&self, error: TransportError) {
        lock(&self.inner.broken).get_or_insert(error);
    }

    /// Gives a progress notification to the requester that asked for it. Returns false when
    /// no outgoing request owns the token, so the service may see it instead.
    pub(super) fn route_progress(&self, params: Option<&RawValue>) -> bool {
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "progressToken")]
            token: ProgressToken,
            #[serde(flatten)]
            update: ProgressUpdate,
        }
        let Some(Ok(params)) = params.map(|p| serde_json::from_str::<Params>(p.get())) else {
            return false;
        };
        let entry = lock(&self.inner.progress).get(&params.token).cloned();
        let Some((sink, owner)) = entry else {
            return false;
        };
        if let Some(pending) = lock(&self.inner.pending).get(&owner) {
            if let Some(progressed) = &pending.progressed {
                *lock(progressed) = Instant::now();
            }
        }
        sink(params.update);
        true
    }

    pub(super) fn begin_incoming(
        &self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Option<RequestContext> {
        let mut incoming = lock(&self.inner.incoming);
        // One hash of the id for the check and the insertion.
        let std::collections::hash_map::Entry::Vacant(slot) = incoming.entry(id.clone()) else {
            return None;
        };
        let (context, handle) =
            RequestContext::incoming(id.clone(), progress_token_of(params), self.clone());
        slot.insert(handle);
        Some(context)
    }

    pub(super) fn end_incoming(&self, id: &RequestId) {
        let mut incoming = lock(&self.inner.incoming);
        incoming.remove(id);
        if incoming.is_empty() {
            self.inner.idle.notify_waiters();
        }
    }

    pub(super) fn cancel_incoming(&self, id: &RequestId) {
        if let Some(request) = lock(&self.inner.incoming).get(id) {
            request.cancel();
        }
    }
}

fn progress_token_of(params: Option<&RawValue>) -> Option<ProgressToken> {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "_meta")]
        meta: Option<PeekMeta>,
    }
    #[derive(Deserialize)]
    struct PeekMeta {
        #[serde(rename = "progressToken")]
        token: Option<ProgressToken>,
    }
    let params = params?.get();
    // Most requests carry no token: a scan is cheaper than a parse. The key has a `T`, or
    // spells it with an escape; text with neither (most params) needs no further search.
    if memchr::memchr2(b'T', b'\\', params.as_bytes()).is_none()
        || (!params.contains("progressToken") && !params.contains("\\u"))
    {
        return None;
    }
    let peek: Peek = serde_json::from_str(params).ok()?;
    peek.meta?.token
}

fn with_progress_token(
    params: Option<&RawValue>,
    token: &ProgressToken,
) -> Result<Box<RawValue>, serde_json::Error> {
    let mut map: Map<String, Value> = match params {
        Some(raw) => serde_json::from_str(raw.get())?,
        None => Map::new(),
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert("progressToken".to_owned(), serde_json::to_value(token)?);
    }
    jsonrpc::to_raw(&map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(params: &str) -> Option<ProgressToken> {
        let raw = RawValue::from_string(params.to_owned()).expect("test params are JSON");
        progress_token_of(Some(&raw))
    }

    #[test]
    fn a_progress_token_is_found_however_its_key_is_written() {
        assert_eq!(
            token(r#"{"_meta":{"progressToken":7}}"#),
            Some(ProgressToken::Number(7))
        );
        // The same key with its letters escaped, which no substring test sees.
        assert_eq!(
            token(r#"{"_meta":{"progress\u0054oken":"t"}}"#),
            Some(ProgressToken::String("t".into()))
        );
        assert_eq!(token(r#"{"name":"progressToken","_meta":{}}"#), None);
        assert_eq!(token(r#"{"name":"x"}"#), None);
    }
}
