//! Where tasks are kept: the [`TaskStore`] trait, and [`MemoryStore`], the bounded in-memory
//! store a server uses unless it is given another one.
//!
//! A store keeps [`TaskRecord`]s: the task as the wire shows it, who owns it, and, once the
//! task is terminal, its outcome. Its one rule of concurrency is in [`TaskStore::update`]: a
//! terminal record is never replaced, so when a cancellation races the handler's completion,
//! whichever reaches the store first wins and the other is refused, atomically.
//!
//! ```
//! use junction::server::task::{MemoryStore, TaskRecord, TaskStore};
//! use junction_protocol::tasks::TaskStatus;
//!
//! let store = MemoryStore::new(100);
//! let record = TaskRecord::new("t1", "session:a", "tools/call", 1_000, Some(60_000), Some(500));
//! store.insert(&record).unwrap();
//! let mut done = record.clone();
//! done.set_status(TaskStatus::Cancelled, None, 2_000);
//! assert!(store.update(&done).unwrap());
//! let mut late = record;
//! late.set_status(TaskStatus::Completed, None, 3_000);
//! assert!(!store.update(&late).unwrap(), "a terminal task stays as it is");
//! assert_eq!(store.get("t1", 3_000).unwrap().unwrap().task.status, TaskStatus::Cancelled);
//! ```

use std::collections::BTreeMap;
use std::sync::Mutex;

use junction_protocol::stateless::InputRequests;
use junction_protocol::tasks::{Task, TaskStatus};
use junction_protocol::ErrorObject;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::sync::lock;

/// How a terminal task ended: what the underlying request would have answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskOutcome {
    /// The request's result (for `tools/call`, a `CallToolResult`).
    Result(Map<String, Value>),
    /// The request's JSON-RPC error.
    Error(ErrorObject),
}

/// One task as a store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task as `tasks/get` shows it.
    pub task: Task,
    /// Who may see it: the caller's identity, or the session that created it.
    pub owner: String,
    /// The method of the request the task runs (`tools/call`).
    pub method: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Its outcome, once terminal (none for a cancelled task).
    pub outcome: Option<TaskOutcome>,
    /// 2026-07-28: what its handler waits for while it is `input_required`, by key, kept
    /// in the record so that every instance sharing it shows them.
    #[serde(default, skip_serializing_if = "InputRequests::is_empty")]
    pub input_requests: InputRequests,
}

impl TaskRecord {
    /// A new `working` task created at `now_ms`.
    pub fn new(
        id: impl Into<String>,
        owner: impl Into<String>,
        method: impl Into<String>,
        now_ms: u64,
        ttl: Option<u64>,
        poll_interval: Option<u64>,
    ) -> Self {
        let mut task = Task::new(id, TaskStatus::Working, timestamp(now_ms));
        task.ttl = ttl;
        task.poll_interval = poll_interval;
        TaskRecord {
            task,
            owner: owner.into(),
            method: method.into(),
            created_ms: now_ms,
            outcome: None,
            input_requests: InputRequests::new(),
        }
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// Moves the task to `status` at `now_ms`, with `message` as its status message.
    pub fn set_status(&mut self, status: TaskStatus, message: Option<String>, now_ms: u64) {
        self.task.status = status;
        self.task.status_message = message;
        self.task.last_updated_at = timestamp(now_ms);
    }

    /// Whether the task's ttl ran out at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.task
            .ttl
            .is_some_and(|ttl| now_ms >= self.created_ms.saturating_add(ttl))
    }

    /// Where it sorts in `tasks/list`: by creation, then id.
    fn order(&self) -> (u64, String) {
        (self.created_ms, self.task.task_id.clone())
    }
}

/// Why a store could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store holds as many tasks as it may.
    #[error("the task store is full ({0} tasks); wait for tasks to finish and expire")]
    Full(usize),
    /// The storage behind the store failed.
    #[error("the task store failed: {0}")]
    Backend(String),
}

/// Where a server keeps its tasks. Calls are short (a lookup, an insert, one update), made
/// from async code: a store backed by a file or a database keeps them brief.
pub trait TaskStore: Send + Sync + 'static {
    /// Saves a new task.
    fn insert(&self, record: &TaskRecord) -> Result<(), StoreError>;

    /// The task `id`, unless it is unknown or expired at `now_ms`.
    fn get(&self, id: &str, now_ms: u64) -> Result<Option<TaskRecord>, StoreError>;

    /// Replaces the stored task with `record`, unless the stored one is terminal (or gone):
    /// returns whether it was replaced. Atomic: this is what keeps terminal statuses sticky.
    fn update(&self, record: &TaskRecord) -> Result<bool, StoreError>;

    /// At most `limit` tasks of `owner` alive at `now_ms`, in creation order, starting after
    /// the position `after` (creation time, id) when given.
    fn list(
        &self,
        owner: &str,
        after: Option<(u64, &str)>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<TaskRecord>, StoreError>;

    /// The tasks not yet terminal, of every owner (after a restart, those whose handler
    /// died with the previous process).
    fn unfinished(&self) -> Result<Vec<TaskRecord>, StoreError>;
}

/// Tasks in memory: at most `capacity` of them; expired ones are dropped as new ones come.
#[derive(Debug)]
pub struct MemoryStore {
    capacity: usize,
    tasks: Mutex<BTreeMap<String, TaskRecord>>,
}

impl MemoryStore {
    /// A store holding at most `capacity` tasks (at least one).
    pub fn new(capacity: usize) -> Self {
        MemoryStore {
            capacity: capacity.max(1),
            tasks: Mutex::new(BTreeMap::new()),
        }
    }
}

impl Default for MemoryStore {
    /// At most [`super::TaskSettings::DEFAULT_CAPACITY`] tasks.
    fn default() -> Self {
        MemoryStore::new(super::TaskSettings::DEFAULT_CAPACITY)
    }
}

impl TaskStore for MemoryStore {
    fn insert(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let mut tasks = lock(&self.tasks);
        if tasks.len() >= self.capacity {
            tasks.retain(|_, t| !t.expired(record.created_ms));
        }
        if tasks.len() >= self.capacity {
            return Err(StoreError::Full(self.capacity));
        }
        tasks.insert(record.task.task_id.clone(), record.clone());
        Ok(())
    }

    fn get(&self, id: &str, now_ms: u64) -> Result<Option<TaskRecord>, StoreError> {
        let mut tasks = lock(&self.tasks);
        match tasks.get(id) {
            Some(t) if t.expired(now_ms) => {
                tasks.remove(id);
                Ok(None)
            }
            found => Ok(found.cloned()),
        }
    }

    fn update(&self, record: &TaskRecord) -> Result<bool, StoreError> {
        let mut tasks = lock(&self.tasks);
        match tasks.get_mut(&record.task.task_id) {
            Some(stored) if !stored.task.status.is_terminal() => {
                *stored = record.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn list(
        &self,
        owner: &str,
        after: Option<(u64, &str)>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let tasks = lock(&self.tasks);
        let mut mine: Vec<&TaskRecord> = tasks
            .values()
            .filter(|t| t.owner == owner && !t.expired(now_ms))
            .filter(|t| after.is_none_or(|(ms, id)| t.order() > (ms, id.to_owned())))
            .collect();
        mine.sort_by_key(|t| t.order());
        Ok(mine.into_iter().take(limit).cloned().collect())
    }

    fn unfinished(&self) -> Result<Vec<TaskRecord>, StoreError> {
        Ok(lock(&self.tasks)
            .values()
            .filter(|t| !t.task.status.is_terminal())
            .cloned()
            .collect())
    }
}

/// `ms` since the Unix epoch as an RFC 3339 UTC timestamp with milliseconds.
pub(crate) fn timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rest = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc_3339() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(1_764_066_600_123), "2025-11-25T10:30:00.123Z");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_store_is_bounded_and_expires_and_lists_in_order() {
        let store = MemoryStore::new(2);
        let a = TaskRecord::new("a", "o", "tools/call", 10, Some(5), None);
        let b = TaskRecord::new("b", "o", "tools/call", 12, None, None);
        store.insert(&a).unwrap();
        store.insert(&b).unwrap();
        assert!(matches!(
            store.insert(&TaskRecord::new("c", "o", "tools/call", 13, None, None)),
            Err(StoreError::Full(2))
        ));
        // At 15, `a` has expired and makes room.
        store
            .insert(&TaskRecord::new("c", "p", "tools/call", 15, None, None))
            .unwrap();
        assert!(store.get("a", 15).unwrap().is_none());
        let ids = |v: Vec<TaskRecord>| v.into_iter().map(|t| t.task.task_id).collect::<Vec<_>>();
        assert_eq!(ids(store.list("o", None, 10, 16).unwrap()), ["b"]);
        assert_eq!(ids(store.list("p", None, 10, 16).unwrap()), ["c"]);
        assert!(store.list("o", Some((12, "b")), 10, 16).unwrap().is_empty());
        assert_eq!(store.unfinished().unwrap().len(), 2);
    }
}
