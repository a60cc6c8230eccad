//! The session engine: one bidirectional JSON-RPC peer, the same code on both sides.
//!
//! [`Session::start`] takes a [`Connection`] and a [`Service`] (what answers the other side's
//! requests) and returns a [`Peer`], the handle for sending requests and notifications. The
//! engine then:
//!
//! - decodes every frame once, answers malformed ones with -32700 or -32600 and keeps going;
//! - runs each incoming request concurrently: its handler is polled once on the reading task
//!   and, when it has to wait, moves to a task of its own, so a handler that waits never
//!   delays a ping, another request or a cancellation (one that computes for long without
//!   waiting should use `spawn_blocking`); a duplicate id of a request still in flight is
//!   refused;
//! - stops a handler for real when `notifications/cancelled` names its request (its future is
//!   dropped) and sends no response for it;
//! - correlates responses with outgoing requests by id, drops (and logs) responses to unknown
//!   ids, applies a timeout to every outgoing request and cancels it on the peer when it
//!   expires or when the caller stops waiting;
//! - routes `notifications/progress` to the caller that asked for progress;
//! - handles notifications in arrival order, before reading the next message, so that, for
//!   example, `notifications/initialized` is seen before the request that follows it.
//!
//! Lifecycle rules that depend on the role (`initialize` first, for instance) belong to the
//! services built on top: see [`crate::server`] and [`crate::client`].
//!
//! ```
//! use junction::session::{IncomingRequest, Peer, Service, Session, SessionOptions, BoxFuture};
//! use junction_protocol::{jsonrpc, ErrorObject, Notification};
//! use serde_json::value::RawValue;
//!
//! struct Echo;
//! impl Service for Echo {
//!     fn request<'a>(&'a self, req: IncomingRequest) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
//!         Box::pin(async move { Ok(req.params.unwrap_or_else(jsonrpc::empty_object)) })
//!     }
//!     fn notification<'a>(&'a self, _: Notification, _: &'a Peer) -> BoxFuture<'a, ()> {
//!         Box::pin(async {})
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (a, b) = junction::transport::memory::pair(Default::default());
//! let _server = Session::start(b, Echo, SessionOptions::default());
//! let client = Session::start(a, Echo, SessionOptions::default());
//! let answer = client
//!     .request_raw("echo", Some(jsonrpc::to_raw(&serde_json::json!({"x": 1})).unwrap()), Default::default())
//!     .await
//!     .unwrap();
//! assert_eq!(answer.get(), r#"{"x":1}"#);
//! # }
//! ```

mod context;
mod latch;
mod peer;

pub use context::RequestContext;
pub use peer::{
    Peer, ProgressSink, ProgressUpdate, RequestOptions, TaskStatusSink, TaskStatusUpdate,
    WRITE_GRACE,
};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use junction_protocol::jsonrpc::{DecodeError, Message, Notification, Request, Response};
use junction_protocol::{ErrorCode, ErrorObject, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::transport::{Connection, FrameError, Inbound, TransportError, TransportEvent};

/// A boxed, sendable future (what [`Service`] methods return).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What answers the other side: the server router, the client's callback table, a test double.
pub trait Service: Send + Sync + 'static {
    /// Answers one request. Polled once as it is read, then, if it has to wait, in its own
    /// task; dropped if the request is cancelled. Long work without an `.await` belongs in
    /// `spawn_blocking`, or it delays the messages read after it.
    fn request<'a>(
        &'a self,
        request: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>>;

    /// Takes one notification (other than cancellation and routed progress, which the engine
    /// handles). Awaited before the next message is read: keep it short.
    fn notification<'a>(&'a self, notification: Notification, peer: &'a Peer) -> BoxFuture<'a, ()>;

    /// Whether requests for `method` are answered before the next message is read, like
    /// notifications, instead of concurrently. For short requests that change the session's
    /// state, such as `initialize`, so that what follows them sees the change. Default: none.
    fn in_order(&self, method: &str) -> bool {
        let _ = method;
        false
    }

    /// Takes an event of the transport ([`TransportEvent`]), in order with the messages
    /// around it. Default: ignored.
    fn transport_event(&self, event: TransportEvent) {
        let _ = event;
    }
}

impl<S: Service> Service for Arc<S> {
    fn request<'a>(
        &'a self,
        request: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        (**self).request(request)
    }
    fn notification<'a>(&'a self, notification: Notification, peer: &'a Peer) -> BoxFuture<'a, ()> {
        (**self).notification(notification, peer)
    }
    fn in_order(&self, method: &str) -> bool {
        (**self).in_order(method)
    }
    fn transport_event(&self, event: TransportEvent) {
        (**self).transport_event(event)
    }
}

/// A request from the other side, with what its handler may need.
#[derive(Debug)]
pub struct IncomingRequest {
    /// The method name.
    pub method: String,
    /// The raw params.
    pub params: Option<Box<RawValue>>,
    /// The id, progress token, cancellation signal and peer of this request.
    pub context: RequestContext,
}

/// Settings of one session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// How long an outgoing request waits for its answer unless told otherwise.
    pub request_timeout: Duration,
    /// A name for this session in logs.
    pub name: String,
    /// When the other side stops sending (end of input), let the requests already running
    /// finish and send their answers before the session ends. A stdio server wants this: a
    /// client may write its requests and close stdin. Outgoing requests fail at once either
    /// way, since no answer can arrive.
    pub finish_running_on_eof: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            request_timeout: Duration::from_secs(60),
            name: "session".to_owned(),
            finish_running_on_eof: false,
        }
    }
}

/// Starts sessions.
#[derive(Debug)]
pub struct Session;

impl Session {
    /// Starts a session over `connection`, answering requests with `service`.
    ///
    /// Must be called inside a Tokio runtime. The session runs until the transport closes or
    /// [`Peer::close`] is called; [`Peer::closed`] waits for that.
    pub fn start(connection: Connection, service: impl Service, options: SessionOptions) -> Peer {
        let Connection {
            outgoing,
            incoming,
            request_id_prefix,
        } = connection;
        let finish_running_on_eof = options.finish_running_on_eof;
        let peer = Peer::new(outgoing, request_id_prefix, options);
        tokio::spawn(run(
            incoming,
            Arc::new(service),
            peer.clone(),
            finish_running_on_eof,
        ));
        peer
    }
}

async fn run(
    mut incoming: tokio::sync::mpsc::Receiver<Inbound>,
    service: Arc<dyn Service>,
    peer: Peer,
    finish_running_on_eof: bool,
) {
    // Waited for across messages: made anew for each one, its registration and removal
    // cost a message more than the rest of its reading.
    let shutdown = peer.shutdown_requested();
    tokio::pin!(shutdown);
    loop {
        // Checked first, so that a peer that never stops sending cannot hold the close off.
        if peer.is_shutting_down() {
            peer.finish().await;
            return;
        }
        let item = tokio::select! {
            biased;
            item = incoming.recv() => item,
            () = &mut shutdown => {
                peer.finish().await;
                return;
            }
        };
        let Some(item) = item else { break };
        match item {
            Inbound::Frame(bytes) => dispatch(Message::decode(&bytes), &service, &peer).await,
            Inbound::Message(message) => dispatch(Ok(*message), &service, &peer).await,
            Inbound::Strict(bytes) => match Message::decode(&bytes) {
                Err(e) if e.error.code == ErrorCode::PARSE_ERROR => {
                    let error = TransportError::not_json(&bytes);
                    tracing::debug!(session = %peer.name(), %error, "the connection is unusable");
                    peer.broke(error);
                    break;
                }
                decoded => dispatch(decoded, &service, &peer).await,
            },
            Inbound::Refused(refused) => match *refused {
                FrameError::TooLarge {
                    size,
                    limit,
                    response_to: Some(id),
                } => {
                    // An answer to one of ours: fail that request now, not at its timeout.
                    tracing::warn!(session = %peer.name(), size, limit, %id, "discarding an oversized answer");
                    let error = ErrorObject::internal(format!(
                    "the answer was larger than {} ({size} bytes or more arrived) and was discarded",
                    crate::transport::human_bytes(limit)
                ));
                    peer.complete(Response::err(Some(id), error));
                }
                FrameError::TooLarge { size, limit, .. } => {
                    tracing::warn!(session = %peer.name(), size, limit, "refusing an oversized message");
                    let error = ErrorObject::invalid_request(format!(
                    "Invalid request: the message of at least {size} bytes exceeds the limit of {limit} bytes"
                ));
                    peer.send_response(Response::err(None, error), None);
                }
            },
            Inbound::Failed(id, error) => peer.fail(&id, *error),
            Inbound::Broken(error) => {
                tracing::debug!(session = %peer.name(), %error, "the connection is unusable");
                peer.broke(*error);
                break;
            }
            Inbound::Event(event) => service.transport_event(event),
        }
    }
    peer.input_ended();
    if finish_running_on_eof {
        tokio::select! {
            _ = peer.drained() => {}
            _ = peer.shutdown_requested() => {}
        }
    }
    peer.finish().await;
}

/// Hands a decoded message on; answers a malformed one with its error and goes on.
async fn dispatch(decoded: Result<Message, DecodeError>, service: &Arc<dyn Service>, peer: &Peer) {
    match decoded {
        Ok(Message::Request(request)) => start_request(request, service, peer).await,
        Ok(Message::Notification(n)) => on_notification(n, service, peer).await,
        Ok(Message::Response(response)) => peer.complete(response),
        Err(e) => {
            tracing::debug!(session = %peer.name(), error = %e, "refusing a malformed message");
            peer.send_response(Response::err(e.id, e.error), None);
        }
    }
}

/// Runs a request's handler. It is polled once right here, and most handlers (those that
/// finish without waiting on anything) are answered without a task of their own; one that
/// has to wait moves to its own task, so it never delays the next message. When the service
/// asks for it (see [`Service::in_order`]) it runs to the end before the next message is read.
async fn start_request(request: Request, service: &Arc<dyn Service>, peer: &Peer) {
    let Request { id, method, params } = request;
    let Some(context) = peer.begin_incoming(&id, params.as_deref()) else {
        let error = ErrorObject::invalid_request(format!(
            "Invalid request: id {id} is already in use by a request still in flight"
        ));
        peer.send_response(Response::err(Some(id.clone()), error), Some(id));
        return;
    };
    let in_order = service.in_order(&method);
    let method_name = method.clone();
    let service = service.clone();
    let peer = peer.clone();
    let handle = async move {
        let incoming = IncomingRequest {
            method,
            params,
            context: context.clone(),
        };
        // The handler first: most end on their first poll, before the cancellation needs a
        // waiter, whose registration would cost them more than their own work. A request
        // cancelled while it ran is not answered either way (see below).
        let outcome = tokio::select! {
            biased;
            outcome = Unwinding(service.request(incoming)) => Some(outcome.unwrap_or_else(|panic| {
                let reason = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(session = %peer.name(), method = %method_name, "the handler panicked: {reason}");
                Err(ErrorObject::internal(format!(
                    "Internal error: the server's handler of `{method_name}` failed unexpectedly"
                )))
            })),
            () = context.cancelled() => None,
        };
        context.finish();
        peer.end_incoming(&id);
        match outcome {
            Some(outcome) if !context.is_cancelled() => {
                peer.send_response(
                    Response {
                        id: Some(id.clone()),
                        outcome,
                    },
                    Some(id),
                );
            }
            _ => {
                tracing::debug!(session = %peer.name(), %id, "request cancelled; no response sent")
            }
        }
    };
    if in_order {
        handle.await;
        return;
    }
    // A spawned task costs an allocation, a trip through the scheduler and often a wake-up
    // of another thread: more than a short handler's own work.
    let mut handle = Box::pin(handle);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    if handle.as_mut().poll(&mut cx).is_pending() {
        // The task polls it again at once, with a waker of its own, so nothing the no-op
        // waker missed is lost.
        tokio::spawn(handle);
    }
}

#[derive(Deserialize)]
struct CancelledParams {
    #[serde(rename = "requestId")]
    request_id: Option<RequestId>,
    reason: Option<String>,
}

async fn on_notification(n: Notification, service: &Arc<dyn Service>, peer: &Peer) {
    match n.method.as_str() {
        "notifications/cancelled" => {
            match n
                .params
                .as_deref()
                .map(|p| serde_json::from_str::<CancelledParams>(p.get()))
            {
                Some(Ok(CancelledParams {
                    request_id: Some(id),
                    reason,
                })) => {
                    tracing::debug!(session = %peer.name(), %id, reason = reason.as_deref().unwrap_or(""), "peer cancelled a request");
                    peer.cancel_incoming(&id);
                }
                // Malformed cancellations are ignored, as the specification asks.
                _ => tracing::debug!(session = %peer.name(), "ignoring a malformed cancellation"),
            }
        }
        "notifications/progress" if peer.route_progress(n.params.as_deref()) => {}
        _ => service.notification(n, peer).await,
    }
}

/// A handler's future whose panic is caught and returned: the request then gets -32603
/// instead of no answer (and, for an in-order request, instead of taking the session down).
struct Unwinding<F>(F);

impl<F: Future + Unpin> Future for Unwinding<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = &mut self.0;
        // The future is dropped right after a panic, never polled again.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => std::task::Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests;
