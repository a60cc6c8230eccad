//! Locking shared by the engine, the client and the server.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data even if a panic elsewhere poisoned it: every structure kept
/// behind these mutexes stays consistent between statements, so it remains usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
