//! [`RequestContext`]: what the handler of one incoming request can do besides answering.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use junction_protocol::jsonrpc;
use junction_protocol::{ProgressToken, RequestId};
use tokio_util::sync::CancellationToken;

use super::peer::{Peer, ProgressUpdate};
use crate::sync::lock;

/// The id, progress token, cancellation signal and peer of one incoming request.
///
/// Cloning is cheap; clones share the progress state, so `progress` stays increasing even
/// when several tasks report it.
#[derive(Debug, Clone)]
pub struct RequestContext {
    id: RequestId,
    progress_token: Option<ProgressToken>,
    cancel: CancellationToken,
    peer: Peer,
    state: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    last_progress: Mutex<Option<f64>>,
    done: AtomicBool,
}

impl RequestContext {
    /// Also used by the client to run its handlers on a 2026-07-28 server's `inputRequests`.
    pub(crate) fn new(
        id: RequestId,
        progress_token: Option<ProgressToken>,
        cancel: CancellationToken,
        peer: Peer,
    ) -> Self {
        RequestContext {
            id,
            progress_token,
            cancel,
            peer,
            state: Arc::default(),
        }
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The progress token the requester sent, if any.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// The peer, for requests and notifications of its own.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Fires when the requester cancels, or the session ends.
    pub fn cancellation(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Sends `notifications/progress` if the requester asked for progress, the request is
    /// still running, and `progress` is larger than the last value sent. Returns whether a
    /// notification was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        let Some(token) = &self.progress_token else {
            return false;
        };
        if self.state.done.load(Ordering::Acquire) || self.cancel.is_cancelled() {
            return false;
        }
        {
            let mut last = lock(&self.state.last_progress);
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
                .peer
                .notify_raw("notifications/progress", Some(raw), Some(self.id.clone()))
                .is_ok(),
            Err(_) => false,
        }
    }

    /// Marks the request as answered: later progress is not sent.
    pub(super) fn finish(&self) {
        self.state.done.store(true, Ordering::Release);
    }
}
