//! [`RequestContext`]: what the handler of one incoming request can do besides answering.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use junction_protocol::jsonrpc;
use junction_protocol::{ProgressToken, RequestId};
use tokio_util::sync::CancellationToken;

use super::peer::{Peer, ProgressUpdate};
use crate::sync::lock;

/// The id, progress token, cancellation signal and peer of one incoming request.
///
/// Cloning is cheap (one shared allocation); clones share the progress state, so
/// `progress` stays increasing even when several tasks report it.
#[derive(Debug, Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

/// Shared by the clones: a request's context is cloned several times on its way to the
/// handler, and a cancellation token's own clone and drop each take a lock.
#[derive(Debug)]
struct Inner {
    id: RequestId,
    progress_token: Option<ProgressToken>,
    /// Made when a handler first asks for it ([`RequestContext::cancellation`]): most
    /// requests end without anyone waiting on their cancellation, and a token costs each of
    /// them an allocation and several locks.
    token: OnceLock<CancellationToken>,
    /// Set by [`CancelHandle::cancel`]; a token made later starts cancelled.
    cancelled: AtomicBool,
    peer: Peer,
    last_progress: Mutex<Option<f64>>,
    done: AtomicBool,
}

/// What a session keeps of a running request to cancel it. It holds no strong reference:
/// the context holds the peer, whose table of running requests holds these.
#[derive(Debug)]
pub(super) struct CancelHandle(Weak<Inner>);

impl CancelHandle {
    /// Cancels the request, if it still runs.
    pub(super) fn cancel(&self) {
        if let Some(inner) = self.0.upgrade() {
            inner.cancelled.store(true, Ordering::SeqCst);
            // Pairs with the fence in `cancellation`: either this sees the token made
            // there, or that sees the flag set here.
            fence(Ordering::SeqCst);
            if let Some(token) = inner.token.get() {
                token.cancel();
            }
        }
    }
}

impl RequestContext {
    /// A context whose cancellation is `cancel`. Also used by the client to run its
    /// handlers on a 2026-07-28 server's `inputRequests`, and for tasks.
    pub(crate) fn new(
        id: RequestId,
        progress_token: Option<ProgressToken>,
        cancel: CancellationToken,
        peer: Peer,
    ) -> Self {
        Self::with(id, progress_token, OnceLock::from(cancel), peer)
    }

    /// The context of an incoming request, which its session cancels through the handle.
    pub(super) fn incoming(
        id: RequestId,
        progress_token: Option<ProgressToken>,
        peer: Peer,
    ) -> (Self, CancelHandle) {
        let context = Self::with(id, progress_token, OnceLock::new(), peer);
        let handle = CancelHandle(Arc::downgrade(&context.inner));
        (context, handle)
    }

    fn with(
        id: RequestId,
        progress_token: Option<ProgressToken>,
        token: OnceLock<CancellationToken>,
        peer: Peer,
    ) -> Self {
        RequestContext {
            inner: Arc::new(Inner {
                id,
                progress_token,
                token,
                cancelled: AtomicBool::new(false),
                peer,
                last_progress: Mutex::new(None),
                done: AtomicBool::new(false),
            }),
        }
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The progress token the requester sent, if any.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.inner.progress_token.as_ref()
    }

    /// The peer, for requests and notifications of its own.
    pub fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// Fires when the requester cancels, or the session ends.
    pub fn cancellation(&self) -> CancellationToken {
        let token = self.inner.token.get_or_init(CancellationToken::new);
        fence(Ordering::SeqCst);
        if self.inner.cancelled.load(Ordering::SeqCst) {
            token.cancel();
        }
        token.clone()
    }

    /// Resolves once the request is cancelled; its token is made only when this is polled.
    pub(super) async fn cancelled(&self) {
        self.cancellation().cancelled_owned().await;
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
            || self
                .inner
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// Sends `notifications/progress` if the requester asked for progress, the request is
    /// still running, and `progress` is larger than the last value sent. Returns whether a
    /// notification was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        let Some(token) = &self.inner.progress_token else {
            return false;
        };
        if self.inner.done.load(Ordering::Acquire) || self.is_cancelled() {
            return false;
        }
        {
            let mut last = lock(&self.inner.last_progress);
            if last.is_some_and(|last| progress <= last) {
                return false;
            }
            *last = Some(progress);
        }
        #[derive(serde::Serialize)]
        struct Params<'a> {
            #[serde(rename = "progressToken")]
            token: &'a ProgressToken,
            #[serde(flatten)]
            update: ProgressUpdate,
        }
        let params = Params {
            token,
            update: ProgressUpdate {
                progress,
                total,
                message,
            },
        };
        match jsonrpc::to_raw(&params) {
            Ok(raw) => self
                .inner
                .peer
                .notify_raw(
                    "notifications/progress",
                    Some(raw),
                    Some(self.inner.id.clone()),
                )
                .is_ok(),
            Err(_) => false,
        }
    }

    /// Marks the request as answered: later progress is not sent.
    pub(super) fn finish(&self) {
        self.inner.done.store(true, Ordering::Release);
    }
}
