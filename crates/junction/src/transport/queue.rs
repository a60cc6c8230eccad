//! A queue bounded by bytes: what every transport's outgoing side waits in.
//!
//! A peer that stops reading must not make Junction keep everything sent to it. Counting
//! messages is no bound (one message may be megabytes), so the queue counts the bytes of
//! what it holds ([`Weigh`]) and refuses to grow past [`queue`]'s `max_bytes`. One item is
//! always accepted into an empty queue, however large, so a big answer still goes out to a
//! peer that reads.
//!
//! Sending never waits: the senders are the session engine and the server's routing, which
//! must not stall on a slow peer. When an item does not fit, the queue **overflows**: what it
//! held is dropped at once, the receiver's next [`Receiver::recv`] returns `None`, and every
//! send fails from then on. What that means is the transport's choice: stdio and child
//! processes disconnect the peer (with a logged reason), an HTTP SSE stream is closed and
//! its client resumes from the event store where the revision allows it.
//!
//! ```
//! use bytes::Bytes;
//! use junction::transport::queue::{queue, SendError};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (tx, mut rx) = queue::<Bytes>(8);
//! tx.send(Bytes::from_static(b"12345")).unwrap();
//! assert!(matches!(tx.send(Bytes::from_static(b"6789")), Err(SendError::Full(_))));
//! assert!(rx.recv().await.is_none());
//! assert!(rx.overflowed());
//! # }
//! ```

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use junction_protocol::Message;
use tokio::sync::Notify;

use super::Outbound;
use crate::sync::lock;

/// How many bytes an item counts for in a [`queue`].
pub trait Weigh {
    /// The item's size in bytes, or a close estimate of what it will take on the wire.
    fn weight(&self) -> usize;
}

impl Weigh for Bytes {
    fn weight(&self) -> usize {
        self.len()
    }
}

impl Weigh for Outbound {
    fn weight(&self) -> usize {
        // The envelope's members are raw JSON text, so their lengths are the bulk of the
        // encoded size; the constant covers `jsonrpc`, the id and punctuation.
        const ENVELOPE: usize = 64;
        ENVELOPE
            + match &self.message {
                Message::Request(r) => {
                    r.method.len() + r.params.as_ref().map_or(0, |p| p.get().len())
                }
                Message::Notification(n) => {
                    n.method.len() + n.params.as_ref().map_or(0, |p| p.get().len())
                }
                Message::Response(r) => match &r.outcome {
                    Ok(result) => result.get().len(),
                    Err(error) => {
                        error.message.len() + error.data.as_ref().map_or(0, |d| d.to_string().len())
                    }
                },
            }
    }
}

/// Why [`Sender::send`] gave the item back.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError<T> {
    /// The receiver is gone, or the queue overflowed earlier.
    #[error("the queue is closed")]
    Closed(T),
    /// The item did not fit: the queue has overflowed with it, and is closed now.
    #[error("the queue is full")]
    Full(T),
}

impl<T> SendError<T> {
    /// The item that was not queued.
    pub fn into_inner(self) -> T {
        match self {
            SendError::Closed(item) | SendError::Full(item) => item,
        }
    }
}

/// [`Receiver::try_recv`] found nothing waiting (none yet, or none will come).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("nothing is waiting in the queue")]
pub struct Empty;

struct State<T> {
    items: VecDeque<T>,
    bytes: usize,
    senders: usize,
    receiver_alive: bool,
    overflowed: bool,
    waker: Option<Waker>,
    /// The receiver came back after every sender went, and learned that the queue ended.
    end_taken: bool,
}

struct Shared<T> {
    max_bytes: usize,
    state: Mutex<State<T>>,
    /// Wakes [`Sender::closed`] when the receiver goes or the queue overflows, and
    /// [`Watch::written`] also when the receiver waits on an empty queue.
    closed: Notify,
    /// Set once a [`Watch::written`] waits: only then does the receiver wake it when it
    /// waits on an empty queue, which it otherwise does after every batch it takes.
    watched: AtomicBool,
}

impl<T> Shared<T> {
    /// Whether sends fail now: the receiver is gone or the queue overflowed.
    fn is_closed(&self) -> bool {
        let state = lock(&self.state);
        state.overflowed || !state.receiver_alive
    }

    /// Whether nothing waits to be taken, and the receiver has come back for more (or is gone).
    fn is_written(&self) -> bool {
        let state = lock(&self.state);
        state.overflowed
            || !state.receiver_alive
            || (state.items.is_empty() && (state.waker.is_some() || state.end_taken))
    }

    async fn wait(&self, done: impl Fn(&Self) -> bool) {
        loop {
            // Created before the check, so a wake-up between the check and the wait is kept.
            let notified = self.closed.notified();
            if done(self) {
                return;
            }
            notified.await;
        }
    }
}

/// The sending half of a [`queue`]; clone it freely.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half of a [`queue`].
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// Watches a [`queue`] without holding it open as a [`Sender`] does: see [`Watch::written`].
pub struct Watch<T> {
    shared: Arc<Shared<T>>,
}

impl<T> std::fmt::Debug for Watch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").finish_non_exhaustive()
    }
}

impl<T> Watch<T> {
    /// Waits until the receiver has taken everything sent and come back for more (a writer
    /// has then written it), or is gone, or the queue overflowed. A process that ends once
    /// its session has, waits for this so that the answers it gave last are not lost.
    pub async fn written(&self) {
        self.shared.watched.store(true, Ordering::SeqCst);
        self.shared.wait(Shared::is_written).await
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("max_bytes", &self.shared.max_bytes)
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("max_bytes", &self.shared.max_bytes)
            .finish_non_exhaustive()
    }
}

/// A queue that holds at most `max_bytes` (but always one item).
pub fn queue<T: Weigh>(max_bytes: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        max_bytes,
        state: Mutex::new(State {
            items: VecDeque::new(),
            bytes: 0,
            senders: 1,
            receiver_alive: true,
            overflowed: false,
            waker: None,
            end_taken: false,
        }),
        closed: Notify::new(),
        watched: AtomicBool::new(false),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

impl<T: Weigh> Sender<T> {
    /// Queues `item` without waiting; see the module documentation for what a full queue does.
    pub fn send(&self, item: T) -> Result<(), SendError<T>> {
        let weight = item.weight();
        let mut state = lock(&self.shared.state);
        if state.overflowed || !state.receiver_alive {
            return Err(SendError::Closed(item));
        }
        if !state.items.is_empty() && state.bytes.saturating_add(weight) > self.shared.max_bytes {
            state.overflowed = true;
            state.items = VecDeque::new();
            state.bytes = 0;
            let waker = state.waker.take();
            drop(state);
            if let Some(waker) = waker {
                waker.wake();
            }
            self.shared.closed.notify_waiters();
            return Err(SendError::Full(item));
        }
        state.bytes += weight;
        state.items.push_back(item);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }
}

impl<T> Sender<T> {
    /// Whether sends fail now: the receiver is gone or the queue overflowed.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Waits until [`Sender::is_closed`].
    pub async fn closed(&self) {
        self.shared.wait(Shared::is_closed).await
    }

    /// A [`Watch`] of this queue.
    pub fn watch(&self) -> Watch<T> {
        Watch {
            shared: self.shared.clone(),
        }
    }

    /// How many bytes wait in the queue.
    pub fn queued_bytes(&self) -> usize {
        lock(&self.shared.state).bytes
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        lock(&self.shared.state).senders += 1;
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.shared.state);
            state.senders -= 1;
            if state.senders > 0 {
                return;
            }
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T: Weigh> Receiver<T> {
    /// The next item; `None` once every sender is gone and the queue is empty, or at once
    /// after an overflow.
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Whether every sender is gone: what the queue holds now is all it will ever hold.
    pub fn is_complete(&self) -> bool {
        lock(&self.shared.state).senders == 0
    }

    /// The next item if one is waiting.
    pub fn try_recv(&mut self) -> Result<T, Empty> {
        let mut state = lock(&self.shared.state);
        if state.overflowed {
            return Err(Empty);
        }
        let item = state.items.pop_front().ok_or(Empty)?;
        state.bytes -= item.weight();
        Ok(item)
    }

    /// Polls for the next item, as [`Receiver::recv`].
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.shared.state);
        if state.overflowed {
            return Poll::Ready(None);
        }
        if let Some(item) = state.items.pop_front() {
            state.bytes -= item.weight();
            return Poll::Ready(Some(item));
        }
        if state.senders == 0 {
            if !state.end_taken {
                state.end_taken = true;
                drop(state);
                self.shared.closed.notify_waiters();
            }
            return Poll::Ready(None);
        }
        let was_waiting = state.waker.replace(cx.waker().clone()).is_some();
        drop(state);
        if !was_waiting && self.shared.watched.load(Ordering::SeqCst) {
            // Everything sent so far is taken: a [`Watch::written`] may be waiting for that.
            self.shared.closed.notify_waiters();
        }
        Poll::Pending
    }

    /// Whether the queue overflowed (as opposed to ending because every sender went).
    pub fn overflowed(&self) -> bool {
        lock(&self.shared.state).overflowed
    }

    /// Waits until the queue overflows: a writer blocked on a peer that does not read uses
    /// it to give up instead of waiting for ever.
    pub async fn overflow(&self) {
        self.shared
            .wait(|shared| lock(&shared.state).overflowed)
            .await
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        {
            let mut state = lock(&self.shared.state);
            state.receiver_alive = false;
            state.items = VecDeque::new();
            state.bytes = 0;
        }
        self.shared.closed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_is_complete_once_every_sender_is_gone() {
        let (tx, mut rx) = queue::<Bytes>(64);
        let second = tx.clone();
        tx.send(Bytes::from_static(b"last")).unwrap();
        drop(tx);
        assert!(!rx.is_complete());
        drop(second);
        assert!(rx.is_complete());
        assert_eq!(rx.try_recv().ok(), Some(Bytes::from_static(b"last")));
    }
}
