//! Tasks shared by the instances of one server behind a load balancer ([`SharedTasks`]).
//!
//! Each instance keeps the tasks it runs in its own [`TaskStore`](super::TaskStore), as a
//! single server does, and writes every change of them through to the shared store, in
//! order; it is the only writer of its tasks' records there, so a terminal status stays as
//! sticky as in its own store. Another instance reads the records (`tasks/get`,
//! `tasks/list`), waits for a task's end without polling (the running instance announces it:
//! [`Signal::Ended`]), and asks the running instance to cancel one ([`Signal::Cancel`]), whose
//! handler's token only that instance holds, or to hand a 2026-07-28 task's handler the
//! answers to its input requests ([`Signal::Update`]), which only that instance can. A task whose instance stopped (its heartbeat
//! ran out) is marked failed by the first instance that reads it unfinished, as a restarted
//! single server marks the tasks its predecessor left.
//!
//! The Redis implementation is the HTTP server's
//! ([`HttpServer::shared_tasks`](crate::transport::http::server::HttpServer::shared_tasks)).

use junction_protocol::stateless::InputResponses;
use tokio::sync::mpsc;

use super::{StoreError, TaskRecord};
use crate::session::BoxFuture;

/// What instances tell each other about tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// Task `id` is terminal now; its record says how it ended.
    Ended(String),
    /// The instance `instance` is asked to cancel task `id`, which it runs.
    Cancel {
        /// The instance running the task.
        instance: u32,
        /// The task.
        id: String,
    },
    /// The instance `instance` is asked to hand `responses` (a 2026-07-28 `tasks/update`)
    /// to the handler of task `id`, which it runs.
    Update {
        /// The instance running the task.
        instance: u32,
        /// The task.
        id: String,
        /// The answers, by the key of the input request each answers.
        responses: InputResponses,
    },
    /// The running instance handed an [`Signal::Update`] of task `id` over and saved its
    /// record since: whoever waits for that reads the record again.
    Answered(String),
}

/// A task record as the shared store keeps it: with the instance that runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedRecord {
    /// The record.
    pub record: TaskRecord,
    /// The instance whose process runs the task's handler.
    pub instance: u32,
}

/// Where the instances of a server share their tasks' records and signals.
pub trait SharedTasks: Send + Sync + 'static {
    /// This instance's id, as the records and [`Signal::Cancel`] name it.
    fn instance(&self) -> u32;

    /// Saves `record`, a task run by this instance, after every write queued before it,
    /// unless the stored record is terminal already; a terminal record is announced
    /// ([`Signal::Ended`]) once saved. Resolves when the write is made (or failed).
    fn save(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>>;

    /// Queues [`SharedTasks::save`] of `record` without waiting for it: the writes of one
    /// instance are made in the order they were queued.
    fn save_queued(&self, record: TaskRecord);

    /// Marks `record`, a task of another instance that stopped, failed as `record` says,
    /// unless it became terminal meanwhile; returns the stored record either way.
    fn fail_orphan<'a>(
        &'a self,
        record: &'a SharedRecord,
    ) -> BoxFuture<'a, Result<Option<SharedRecord>, StoreError>>;

    /// Task `id`, unless it is unknown or expired.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SharedRecord>, StoreError>>;

    /// At most `limit` tasks of `owner` alive at `now_ms`, of every instance, in creation
    /// order, starting after the position `after` (creation time, id) when given.
    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<(u64, &'a str)>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>>;

    /// Sends `signal` to every instance (this one included).
    fn signal<'a>(&'a self, signal: &'a Signal) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The signals of every instance, from now on.
    fn listen(&self) -> mpsc::Receiver<Signal>;

    /// Whether instance `instance` is alive (its heartbeat has not run out).
    fn alive(&self, instance: u32) -> BoxFuture<'_, Result<bool, StoreError>>;
}
