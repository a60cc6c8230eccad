//! A one-way flag tasks can wait for: set once, never cleared.
//!
//! A session has three (closed, shutdown asked, input ended). A `CancellationToken` would
//! do, but each allocates its node on the heap for the session's life; a latch lives inline
//! in the session, which matters for a server holding many idle sessions.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A flag that is set once and that tasks can wait for.
#[derive(Debug, Default)]
pub(crate) struct Latch {
    set: AtomicBool,
    notify: Notify,
}

impl Latch {
    /// Sets the flag and wakes every waiter.
    pub(crate) fn set(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether the flag is set.
    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Returns once the flag is set.
    pub(crate) async fn wait(&self) {
        let notified = self.notify.notified();
        tokio::pin!(notified);
        // Registered before the check, so a `set` between the check and the wait is seen.
        notified.as_mut().enable();
        if self.is_set() {
            return;
        }
        notified.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn waiters_before_and_after_the_set_all_return() {
        let latch = Arc::new(Latch::default());
        assert!(!latch.is_set());
        let early = tokio::spawn({
            let latch = latch.clone();
            async move { latch.wait().await }
        });
        tokio::task::yield_now().await;
        latch.set();
        early.await.unwrap();
        assert!(latch.is_set());
        latch.wait().await;
    }
}
