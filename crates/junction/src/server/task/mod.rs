//! Tasks: a tool call answered at once with a handle, its result delivered later
//! (2025-11-25, `basic/utilities/tasks`, experimental).
//!
//! A tool declares that it may ([`TaskSupport::Optional`]) or must
//! ([`TaskSupport::Required`]) run as a task with [`ToolDef::task_support`]; its handler stays
//! an ordinary async function. When a `tools/call` carries `task`, the server answers at once
//! with a `CreateTaskResult` (the ttl it grants, at most [`TaskSettings::max_ttl`], and
//! a `pollInterval`) and runs the handler on, with its own cancellation token. The client then
//!
//! - polls `tasks/get` (the task's status and status message),
//! - waits on `tasks/result`, which blocks until the task is terminal and then answers exactly
//!   what the plain call would have answered (the `CallToolResult`, or the JSON-RPC error),
//!   with `_meta["io.modelcontextprotocol/related-task"]`,
//! - lists its tasks with `tasks/list` (paginated), or cancels one with `tasks/cancel`: the
//!   handler's token fires, the task is `cancelled` before the answer, and stays so.
//!
//! A tool result with `isError: true` ends the task `failed`; any other result `completed`.
//! Each status change is also sent as `notifications/tasks/status` (optional: clients must not
//! rely on it). Progress keeps using the call's progress token for the task's whole life.
//!
//! While a task handler waits on [`Context::elicit`] or [`Context::create_message`], the task
//! is `input_required`; the request carries the related-task `_meta` and travels on the
//! stream of the client's open `tasks/result` (over Streamable HTTP; the standalone stream
//! when none is open). [`Context::task_status`] sets the status message a client shows.
//!
//! Tasks are bound to the caller: to its identity when the session came through bearer
//! authorization ([`Context::identity`]), else to the session that created them. Another
//! caller gets `-32602` for them, exactly as for an unknown id, and never sees them listed.
//! Task ids are 128 random bits from the operating system.
//!
//! # 2026-07-28: the tasks extension (SEP-2663)
//!
//! On 2026-07-28 the client does not ask for a task: a request that declares the extension
//! `io.modelcontextprotocol/tasks` in its `_meta` client capabilities lets the server decide,
//! and `server/discover` lists the extension (not `tasks`). The server polls the handler
//! once: done by then, an `optional` tool answers its result at once; asking the client for
//! input by then, the call goes through the multi round-trip rounds as a plain call (see
//! [`super::stateless`]); otherwise, and always for a `required` tool once its questions are
//! answered, the call becomes a task and the same handler runs on. The answer is the flat
//! handle (`resultType: "task"`, `ttlMs`, `pollIntervalMs`). `tasks/get` inlines the
//! `result` (a tool result with `isError` is `completed` there: `failed` is kept for
//! JSON-RPC errors, such as a handler that panicked) or the `error`; while the handler waits
//! on [`Context::elicit`], [`Context::create_message`] or [`Context::list_roots`], the task is
//! `input_required` and `tasks/get` lists those requests as `inputRequests` (keyed by
//! [`Context::input_key`] when that key is new for the task, else `input-n`) until
//! `tasks/update` answers them, all at once or some at a time. `tasks/cancel` is an
//! acknowledgement, also for a task that had ended; `tasks/result` and `tasks/list` are not
//! served. Without sessions, tasks are bound to the caller's identity when it has one, else
//! to whoever holds the id. A request without the extension gets -32021 from the task
//! methods and from a `required` tool; an `optional` one just runs.
//!
//! The same machinery runs a server's task-augmented `sampling/createMessage` and
//! `elicitation/create` on the client ([`ClientOptions::task_requests`]);
//! [`Context::create_message_as_task`] and [`Context::elicit_as_task`] send those and poll them.
//!
//! Tasks live in a [`TaskStore`]: [`MemoryStore`] by default (bounded, expiring at ttl), or
//! one given with [`ServerBuilder::task_store`](super::ServerBuilder::task_store) (for example
//! a database, so that a finished task's result outlives the process). A task still running
//! when its process ended is marked `failed` when the next server is built on the same store.
//!
//! Instances of one server behind a load balancer share their tasks through a
//! [`SharedTasks`] ([`Server::share_tasks`](super::Server::share_tasks); Redis with the HTTP
//! server's session store): each instance keeps running the tasks it created and writes
//! them through, the others answer `tasks/get`, `tasks/list` and `tasks/result` from the
//! shared records and have `tasks/cancel`, and a 2026-07-28 `tasks/update`, done by the
//! running instance (a 2026-07-28 task's `inputRequests` are in its record).
//!
//! ```
//! use junction::server::{tool, Context, Server};
//! use junction::server::task::TaskSettings;
//! use junction_protocol::tools::TaskSupport;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Report { shelves: u32 }
//!
//! async fn inventory(ctx: Context, args: Report) -> String {
//!     for shelf in 1..=args.shelves {
//!         ctx.task_status(format!("counting shelf {shelf}"));
//!         ctx.progress(f64::from(shelf), Some(f64::from(args.shelves)), None);
//!     }
//!     format!("{} shelves counted", args.shelves)
//! }
//!
//! let server = Server::builder("library", "1.0.0")
//!     .tool(tool("inventory", inventory).task_support(TaskSupport::Required))
//!     .tasks(TaskSettings::default().max_ttl(std::time::Duration::from_secs(600)))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! [`ToolDef::task_support`]: super::ToolDef::task_support
//! [`ClientOptions::task_requests`]: crate::client::ClientOptions::task_requests
//! [`Context::create_message_as_task`]: super::Context::create_message_as_task
//! [`Context::elicit_as_task`]: super::Context::elicit_as_task
//! [`Context::elicit`]: super::Context::elicit
//! [`Context::create_message`]: super::Context::create_message
//! [`Context::list_roots`]: super::Context::list_roots
//! [`Context::input_key`]: super::Context::input_key
//! [`Context::task_status`]: super::Context::task_status
//! [`Context::identity`]: super::Context::identity

mod routes;
mod shared;
mod store;

pub use junction_protocol::tools::TaskSupport;
pub use shared::{SharedRecord, SharedTasks, Signal};
pub use store::{MemoryStore, StoreError, TaskOutcome, TaskRecord, TaskStore};

pub(super) use routes::{
    cancel, decide, extension_declared, extension_missing, get, list, result, start, update,
    ToolAnswer,
};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use junction_protocol::capabilities::TasksCapability;
use junction_protocol::meta::Meta;
use junction_protocol::stateless::{InputRequest, InputRequests, InputResponses};
use junction_protocol::tasks::{
    GetTaskPayloadResult, ListTasksResult, RelatedTaskMetadata, Task, TaskStatus,
    TaskStatusChanged, TaskStatusParams,
};
use junction_protocol::{ErrorObject, RequestId};
use tokio_util::sync::CancellationToken;

use crate::session::Peer;
use crate::sync::lock;

/// How a server runs tasks.
#[derive(Debug, Clone)]
pub struct TaskSettings {
    max_ttl: Duration,
    default_ttl: Duration,
    poll_interval: Duration,
    max_active: usize,
}

impl TaskSettings {
    /// How many tasks [`MemoryStore::default`] holds.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// The longest ttl granted; longer requests are clamped to it (default one hour).
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }

    /// The ttl granted when the request asks for none (default ten minutes, clamped to
    /// [`TaskSettings::max_ttl`]).
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }

    /// The `pollInterval` suggested to clients (default 500 ms).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// How many unfinished tasks one caller may have at once (default 32); one more is
    /// refused with -32600.
    pub fn max_active(mut self, count: usize) -> Self {
        self.max_active = count.max(1);
        self
    }

    fn granted_ttl(&self, asked: Option<u64>) -> u64 {
        let max = millis(self.max_ttl);
        asked.unwrap_or_else(|| millis(self.default_ttl)).min(max)
    }
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            max_ttl: Duration::from_secs(3600),
            default_ttl: Duration::from_secs(600),
            poll_interval: Duration::from_millis(500),
            max_active: 32,
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

/// A task whose handler runs in this process.
struct Live {
    owner: String,
    cancel: CancellationToken,
    /// Bumped at each change of the record.
    changed: tokio::sync::watch::Sender<u64>,
    /// The latest open `tasks/result` for this task: requests of the handler go on its stream.
    waiter: Mutex<Option<RequestId>>,
    /// The session that created the task, told of status changes (handshake family: the
    /// 2026-07-28 extension has no such notification outside `subscriptions/listen`).
    peer: Option<Peer>,
    /// 2026-07-28: what the handler waits for, until `tasks/update` answers it.
    inputs: Mutex<Inputs>,
}

/// The input requests of a 2026-07-28 task handler.
#[derive(Default)]
struct Inputs {
    /// Every key given out: a key names one request for the task's whole life.
    issued: HashSet<String>,
    /// The requests without an answer yet, and where their answer goes.
    pending: BTreeMap<
        String,
        (
            InputRequest,
            tokio::sync::oneshot::Sender<serde_json::Value>,
        ),
    >,
}

/// What `tasks/cancel` found.
pub(crate) enum Cancelled {
    /// The task was running and is now cancelled.
    Now(Task),
    /// The task had ended already, with this status.
    Already(TaskStatus),
}

impl Cancelled {
    /// What the handshake family's `tasks/cancel` of task `id` answers: the cancelled task,
    /// or -32602 for one that had ended.
    pub(crate) fn task(self, id: &str) -> Result<Task, ErrorObject> {
        match self {
            Cancelled::Now(task) => Ok(task),
            Cancelled::Already(status) => Err(ErrorObject::invalid_params(format!(
                "Invalid params: task {id:?} is already {status} and cannot be cancelled"
            ))),
        }
    }
}

/// The tasks of one server (or of a client that runs the server's requests as tasks):
/// settings, store, and the handlers running now.
pub(crate) struct Tasks {
    pub(super) settings: TaskSettings,
    store: Arc<dyn TaskStore>,
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// The other instances' tasks, when instances share them ([`Tasks::share`]).
    shared: OnceLock<Arc<dyn SharedTasks>>,
    /// Who waits here for the end of a task run by another instance, by task id.
    foreign: Mutex<HashMap<String, tokio::sync::watch::Sender<u64>>>,
}

/// How often a wait for another instance's task reads its record again: a lost
/// [`Signal::Ended`] (the store reconnecting) or a stopped instance is noticed then.
const RECHECK: Duration = Duration::from_secs(2);

/// Where a task was found.
enum Found {
    /// In this process's store: this process runs it (or ran it).
    Here(TaskRecord),
    /// In the shared store, run by another instance.
    There(SharedRecord),
}

impl Found {
    fn record(self) -> TaskRecord {
        match self {
            Found::Here(record) => record,
            Found::There(shared) => shared.record,
        }
    }
}

/// A task id: 128 bits from the operating system's CSPRNG, in hex.
fn new_id() -> Result<String, ErrorObject> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ErrorObject::internal(format!("could not make a task id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn store_error(e: StoreError) -> ErrorObject {
    ErrorObject::internal(e.to_string())
}

/// -32602 for a task this caller cannot see, whether it exists or not.
fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Invalid params: no task {id:?} (unknown, expired, or not yours)"
    ))
}

impl Tasks {
    /// Runs tasks with `settings` in `store`; tasks the store holds unfinished (their handler
    /// died with an earlier process) are marked failed.
    pub(crate) fn new(settings: TaskSettings, store: Arc<dyn TaskStore>) -> Self {
        match store.unfinished() {
            Ok(orphans) => {
                for mut record in orphans {
                    let now = now_ms();
                    let message = "The server restarted before the task finished; run it again";
                    record.set_status(TaskStatus::Failed, Some(message.to_owned()), now);
                    record.outcome = Some(TaskOutcome::Error(ErrorObject::internal(message)));
                    if let Err(e) = store.update(&record) {
                        tracing::warn!(
                            task = record.id(),
                            "could not mark an orphaned task failed: {e}"
                        );
                    }
                }
            }
            Err(e) => tracing::warn!("could not read the unfinished tasks of the store: {e}"),
        }
        Tasks {
            settings,
            store,
            live: Mutex::new(HashMap::new()),
            shared: OnceLock::new(),
            foreign: Mutex::default(),
        }
    }

    /// Shares the tasks with the other instances through `shared` (the first call only),
    /// and follows their signals. Must be called within a Tokio runtime.
    pub(crate) fn share(tasks: &Arc<Tasks>, shared: Arc<dyn SharedTasks>) {
        if tasks.shared.set(shared.clone()).is_err() {
            return;
        }
        let mut signals = shared.listen();
        let weak = Arc::downgrade(tasks);
        tokio::spawn(async move {
            while let Some(signal) = signals.recv().await {
                let Some(tasks) = weak.upgrade() else { return };
                tasks.signalled(signal);
            }
        });
    }

    /// Acts on a signal of an instance: wakes who waits for a task that ended; cancels a
    /// task run here.
    fn signalled(&self, signal: Signal) {
        match signal {
            Signal::Ended(id) | Signal::Answered(id) => {
                if let Some(waiters) = lock(&self.foreign).remove(&id) {
                    waiters.send_modify(|n| *n += 1);
                }
            }
            Signal::Cancel { instance, id }
                if self.shared.get().is_some_and(|s| s.instance() == instance) =>
            {
                if let Err(e) = self.cancel_running(&id) {
                    tracing::warn!(task = %id, "could not cancel a task for another instance: {e}");
                }
            }
            Signal::Update {
                instance,
                id,
                responses,
            } if self.shared.get().is_some_and(|s| s.instance() == instance) => {
                self.answer_here(&id, responses);
                self.announce_answered(id);
            }
            Signal::Cancel { .. } | Signal::Update { .. } => {}
        }
    }

    /// Tells the instance that routed an update of task `id` here that it was handed over,
    /// once the record it changed is saved (after every write queued before it).
    fn announce_answered(&self, id: String) {
        let Some(shared) = self.shared.get().cloned() else {
            return;
        };
        let record = match self.store.get(&id, now_ms()) {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(task = %id, "could not read an updated task: {e}");
                None
            }
        };
        tokio::spawn(async move {
            if let Some(record) = record {
                if let Err(e) = shared.save(record).await {
                    tracing::warn!(task = %id, "could not share an updated task: {e}");
                }
            }
            if let Err(e) = shared.signal(&Signal::Answered(id.clone())).await {
                tracing::warn!(task = %id, "could not announce an update handed over: {e}");
            }
        });
    }

    /// Writes a task just created through to the shared store, before its handle is
    /// answered, so that every instance finds it at once. While the store cannot be
    /// reached the task is this instance's only (the store writes it when it can).
    pub(crate) async fn created(&self, record: &TaskRecord) {
        if let Some(shared) = self.shared.get() {
            if let Err(e) = shared.save(record.clone()).await {
                tracing::error!(
                    task = record.id(),
                    "could not share a new task yet; only this instance knows it: {e}"
                );
            }
        }
    }

    /// A receiver told when task `id`, run by another instance, ends. Taken before reading
    /// its record, so that an end between the read and the wait is not missed.
    fn ended(&self, id: &str) -> tokio::sync::watch::Receiver<u64> {
        let mut foreign = lock(&self.foreign);
        // Waits given up (their request dropped) leave senders nobody listens to.
        foreign.retain(|_, waiters| waiters.receiver_count() > 0);
        foreign
            .entry(id.to_owned())
            .or_insert_with(|| tokio::sync::watch::Sender::new(0))
            .subscribe()
    }

    /// The task `id` as `owner` may see it: in this process's store, else, when instances
    /// share tasks, in the shared one. An unfinished task of an instance that stopped is
    /// marked failed there.
    async fn locate(&self, owner: &str, id: &str) -> Result<Found, ErrorObject> {
        let now = now_ms();
        if let Some(record) = self.store.get(id, now).map_err(store_error)? {
            return match record.owner == owner {
                true => Ok(Found::Here(record)),
                false => Err(unknown(id)),
            };
        }
        let Some(shared) = self.shared.get() else {
            return Err(unknown(id));
        };
        let found = shared.load(id).await.map_err(store_error)?;
        let Some(found) = found.filter(|f| f.record.owner == owner && !f.record.expired(now))
        else {
            return Err(unknown(id));
        };
        if found.record.task.status.is_terminal() || found.instance == shared.instance() {
            return Ok(Found::There(found));
        }
        match shared.alive(found.instance).await {
            Ok(true) => Ok(Found::There(found)),
            Ok(false) => {
                let mut orphan = found;
                let message =
                    "The server instance running the task stopped before it finished; run it again";
                orphan
                    .record
                    .set_status(TaskStatus::Failed, Some(message.to_owned()), now);
                orphan.record.outcome = Some(TaskOutcome::Error(ErrorObject::internal(message)));
                match shared.fail_orphan(&orphan).await.map_err(store_error)? {
                    Some(stored) => Ok(Found::There(stored)),
                    None => Err(unknown(id)),
                }
            }
            Err(e) => {
                tracing::warn!(
                    task = id,
                    "cannot tell whether the instance running a task is alive: {e}"
                );
                Ok(Found::There(found))
            }
        }
    }

    /// The task `id` as `owner` may see it, whichever instance runs it.
    pub(crate) async fn find(&self, owner: &str, id: &str) -> Result<TaskRecord, ErrorObject> {
        Ok(self.locate(owner, id).await?.record())
    }

    /// Waits until task `id`, run by another instance, is terminal; its terminal record.
    async fn await_end(&self, owner: &str, id: &str) -> Result<TaskRecord, ErrorObject> {
        loop {
            let mut ended = self.ended(id);
            let record = self.find(owner, id).await?;
            if record.task.status.is_terminal() {
                return Ok(record);
            }
            // Woken by the running instance's signal; the timeout only catches a lost one.
            let _ = tokio::time::timeout(RECHECK, ended.changed()).await;
        }
    }

    /// Creates a `working` task of `owner` for `method`, run by the caller, whose handler
    /// `cancel` stops; `peer` hears of its status changes.
    pub(crate) fn create(
        &self,
        owner: &str,
        method: &str,
        ttl: Option<u64>,
        cancel: CancellationToken,
        peer: Option<Peer>,
    ) -> Result<TaskRecord, ErrorObject> {
        let mut live = lock(&self.live);
        let active = live.values().filter(|l| l.owner == owner).count();
        if active >= self.settings.max_active {
            return Err(ErrorObject::invalid_request(format!(
                "Invalid request: you have {active} unfinished tasks, the most this server runs for one caller; wait for one to finish or cancel one"
            )));
        }
        let record = TaskRecord::new(
            new_id()?,
            owner,
            method,
            now_ms(),
            Some(self.settings.granted_ttl(ttl)),
            Some(millis(self.settings.poll_interval)),
        );
        self.store.insert(&record).map_err(store_error)?;
        live.insert(
            record.id().to_owned(),
            Arc::new(Live {
                owner: owner.to_owned(),
                cancel,
                changed: tokio::sync::watch::Sender::new(0),
                waiter: Mutex::new(None),
                peer,
                inputs: Mutex::default(),
            }),
        );
        Ok(record)
    }

    /// The task `id` as `owner` may see it.
    pub(crate) fn get(&self, owner: &str, id: &str) -> Result<TaskRecord, ErrorObject> {
        match self.store.get(id, now_ms()).map_err(store_error)? {
            Some(record) if record.owner == owner => Ok(record),
            _ => Err(unknown(id)),
        }
    }

    /// Applies `change` to the task `id` unless it is terminal; returns the new record, or
    /// `None` when the task was terminal (or gone) already. Tells the task's session.
    fn change(
        &self,
        id: &str,
        change: impl FnOnce(&mut TaskRecord, u64),
    ) -> Result<Option<TaskRecord>, ErrorObject> {
        let now = now_ms();
        let Some(mut record) = self.store.get(id, now).map_err(store_error)? else {
            return Ok(None);
        };
        if record.task.status.is_terminal() {
            return Ok(None);
        }
        change(&mut record, now);
        if !self.store.update(&record).map_err(store_error)? {
            return Ok(None);
        }
        if let Some(shared) = self.shared.get() {
            shared.save_queued(record.clone());
        }
        let live = lock(&self.live).get(id).cloned();
        if let Some(live) = live {
            live.changed.send_modify(|n| *n += 1);
            if let Some(peer) = &live.peer {
                let params = TaskStatusParams::from(record.task.clone());
                if let Err(e) = peer.notify::<TaskStatusChanged>(&params, None) {
                    tracing::debug!(task = id, "could not send the task's status: {e}");
                }
            }
            if record.task.status.is_terminal() {
                lock(&self.live).remove(id);
            }
        }
        Ok(Some(record))
    }

    /// Moves a running task to `status` (working or input_required) with `message`.
    pub(super) fn set_status(&self, id: &str, status: TaskStatus, message: Option<String>) {
        let result = self.change(id, |r, now| {
            if r.task.status != status || r.task.status_message != message {
                r.set_status(status, message, now);
            }
        });
        if let Err(e) = result {
            tracing::warn!(task = id, "could not update the task: {e}");
        }
    }

    /// Ends the task `id` with its handler's outcome, unless it was cancelled first.
    pub(crate) fn finish(&self, id: &str, status: TaskStatus, outcome: TaskOutcome) {
        let result = self.change(id, |r, now| {
            let message = r.task.status_message.take();
            r.set_status(status, message, now);
            r.outcome = Some(outcome);
            r.input_requests.clear();
        });
        match result {
            Ok(Some(_)) => {}
            Ok(None) => tracing::debug!(
                task = id,
                "the task ended after it was cancelled or expired; its outcome is dropped"
            ),
            Err(e) => tracing::warn!(task = id, "could not record the task's outcome: {e}"),
        }
    }

    /// `tasks/cancel`: marks the task cancelled (before answering, for good) and fires its
    /// handler's token; a task that had ended stays as it was. -32602 for an unknown task.
    /// A task run by another instance is cancelled by that instance, asked through the
    /// shared store; the answer waits until its record is terminal.
    pub(crate) async fn cancel(&self, owner: &str, id: &str) -> Result<Cancelled, ErrorObject> {
        let found = match self.locate(owner, id).await? {
            Found::Here(record) if record.task.status.is_terminal() => {
                return Ok(Cancelled::Already(record.task.status));
            }
            Found::Here(_) => match self.cancel_running(id)? {
                Some(record) => return Ok(Cancelled::Now(record.task)),
                // The handler finished between the read and the cancel: report what it became.
                None => return Ok(Cancelled::Already(self.get(owner, id)?.task.status)),
            },
            Found::There(found) => found,
        };
        if found.record.task.status.is_terminal() {
            return Ok(Cancelled::Already(found.record.task.status));
        }
        let Some(shared) = self.shared.get() else {
            return Err(unknown(id));
        };
        let signal = Signal::Cancel {
            instance: found.instance,
            id: id.to_owned(),
        };
        loop {
            let mut ended = self.ended(id);
            let record = self.find(owner, id).await?;
            match record.task.status {
                TaskStatus::Cancelled => return Ok(Cancelled::Now(record.task)),
                status if status.is_terminal() => return Ok(Cancelled::Already(status)),
                _ => {}
            }
            // Asked again at each look: a request lost while the store reconnected, or
            // taken before the running instance had the task, is not the end of it.
            shared.signal(&signal).await.map_err(store_error)?;
            let _ = tokio::time::timeout(RECHECK, ended.changed()).await;
        }
    }

    /// Cancels task `id`, run by this process, unless it is terminal: the cancelled
    /// record, or `None` when it had ended.
    fn cancel_running(&self, id: &str) -> Result<Option<TaskRecord>, ErrorObject> {
        let live = lock(&self.live).get(id).cloned();
        let changed = self.change(id, |r, now| {
            r.set_status(
                TaskStatus::Cancelled,
                Some("Cancelled at the client's request".to_owned()),
                now,
            );
            r.outcome = Some(TaskOutcome::Error(ErrorObject::internal(format!(
                "Task {id:?} was cancelled"
            ))));
            r.input_requests.clear();
        })?;
        if let (Some(_), Some(live)) = (&changed, live) {
            live.cancel.cancel();
        }
        Ok(changed)
    }

    /// 2026-07-28: records that the handler of task `id` waits for `request`, under `hint`
    /// if that key was never given out for this task (else `input-n`); the task is
    /// `input_required` until every such request is answered. The answer comes on the
    /// returned channel; `None` when the task does not run in this process.
    pub(super) fn ask(
        &self,
        id: &str,
        hint: Option<&str>,
        request: InputRequest,
    ) -> Option<tokio::sync::oneshot::Receiver<serde_json::Value>> {
        let live = lock(&self.live).get(id).cloned()?;
        let (send, receive) = tokio::sync::oneshot::channel();
        // The status changes under the lock, so that an answer cannot slip between them.
        let mut inputs = lock(&live.inputs);
        let key = match hint {
            Some(key) if !inputs.issued.contains(key) => key.to_owned(),
            _ => (inputs.issued.len()..)
                .map(|n| format!("input-{n}"))
                .find(|k| !inputs.issued.contains(k))?,
        };
        inputs.issued.insert(key.clone());
        inputs.pending.insert(key, (request, send));
        self.record_inputs(id, &inputs);
        Some(receive)
    }

    /// Writes what the handler of task `id` waits for into its record (hence to every
    /// instance): `input_required` with those requests, or `working` again once none is
    /// left. Called under the lock of `inputs`, so that the record follows them in order.
    fn record_inputs(&self, id: &str, inputs: &Inputs) {
        let waiting: InputRequests = inputs
            .pending
            .iter()
            .map(|(key, (request, _))| (key.clone(), request.clone()))
            .collect();
        let result = self.change(id, |r, now| {
            match (waiting.is_empty(), r.task.status) {
                (false, _) => r.set_status(TaskStatus::InputRequired, None, now),
                (true, TaskStatus::InputRequired) => r.set_status(TaskStatus::Working, None, now),
                (true, _) => {}
            }
            r.input_requests = waiting;
        });
        if let Err(e) = result {
            tracing::warn!(task = id, "could not update the task: {e}");
        }
    }

    /// 2026-07-28 `tasks/update`: hands each answer to the request waiting under its key;
    /// keys not outstanding are ignored. The task is `working` again once nothing waits.
    /// A task run by another instance gets the answers from that instance, asked through
    /// the shared store; the acknowledgement waits until its record shows them handed over
    /// (or the task ended), so that a `tasks/get` after it, on any instance, does too.
    pub(super) async fn answer(
        &self,
        owner: &str,
        id: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorObject> {
        let found = match self.locate(owner, id).await? {
            Found::Here(_) => {
                self.answer_here(id, responses);
                return Ok(());
            }
            Found::There(found) => found,
        };
        let Some(shared) = self.shared.get() else {
            return Err(unknown(id));
        };
        // No handler of this process waits for it (it is not in this process's store).
        if found.record.task.status.is_terminal() || found.instance == shared.instance() {
            return Ok(());
        }
        let keys: Vec<String> = responses.keys().cloned().collect();
        let signal = Signal::Update {
            instance: found.instance,
            id: id.to_owned(),
            responses,
        };
        loop {
            let mut answered = self.ended(id);
            // Sent again at each look: one lost while the store reconnected is not the end
            // of it, and a key is asked once in a task's life, so a second copy is ignored.
            shared.signal(&signal).await.map_err(store_error)?;
            let _ = tokio::time::timeout(RECHECK, answered.changed()).await;
            let record = self.find(owner, id).await?;
            if record.task.status.is_terminal()
                || !keys.iter().any(|k| record.input_requests.contains_key(k))
            {
                return Ok(());
            }
        }
    }

    /// Hands `responses` to the handler of task `id`, run by this process, if it still runs.
    fn answer_here(&self, id: &str, responses: InputResponses) {
        let Some(live) = lock(&self.live).get(id).cloned() else {
            return;
        };
        let mut inputs = lock(&live.inputs);
        for (key, answer) in responses {
            match inputs.pending.remove(&key) {
                Some((_, waiting)) => {
                    let _ = waiting.send(answer);
                }
                None => tracing::debug!(task = id, key, "ignoring an answer nothing waits for"),
            }
        }
        self.record_inputs(id, &inputs);
    }

    /// `tasks/result`: waits until the task is terminal, then gives its outcome. `request` is
    /// the waiting request, on whose stream the handler's requests then travel.
    pub(crate) async fn outcome(
        &self,
        owner: &str,
        id: &str,
        request: &RequestId,
    ) -> Result<(TaskRecord, Option<TaskOutcome>), ErrorObject> {
        loop {
            let live = lock(&self.live).get(id).cloned();
            let mut changed = live.as_ref().map(|l| l.changed.subscribe());
            let record = match self.locate(owner, id).await? {
                Found::Here(record) => record,
                Found::There(_) => {
                    let record = self.await_end(owner, id).await?;
                    let outcome = record.outcome.clone();
                    return Ok((record, outcome));
                }
            };
            if record.task.status.is_terminal() {
                let outcome = record.outcome.clone();
                return Ok((record, outcome));
            }
            let (Some(live), Some(changed)) = (live, changed.as_mut()) else {
                // A handler removes itself only after its terminal status is stored, so an
                // unfinished task without one is not run by this process.
                return Err(ErrorObject::internal(format!(
                    "task {id:?} is not running in this server process; run it again"
                )));
            };
            *lock(&live.waiter) = Some(request.clone());
            // The sender lives in `live`, which this loop holds: this only returns on a change.
            let _ = changed.changed().await;
        }
    }

    /// The request the handler of task `id` sends its own requests on behalf of.
    pub(super) fn waiter(&self, id: &str) -> Option<RequestId> {
        let live = lock(&self.live).get(id).cloned()?;
        let waiter = lock(&live.waiter).clone();
        waiter
    }

    /// `tasks/result`: waits until the task is terminal, then answers what the request would
    /// have (its result tagged with the related-task `_meta`, or its error).
    pub(crate) async fn payload(
        &self,
        owner: &str,
        id: &str,
        request: &RequestId,
    ) -> Result<GetTaskPayloadResult, ErrorObject> {
        let (record, outcome) = self.outcome(owner, id, request).await?;
        match outcome {
            Some(TaskOutcome::Result(mut result)) => {
                let mut meta: Meta = match result.remove("_meta") {
                    Some(value) => serde_json::from_value(value).unwrap_or_default(),
                    None => Meta::new(),
                };
                RelatedTaskMetadata::new(record.id()).write_to(&mut meta);
                result.insert(
                    "_meta".to_owned(),
                    serde_json::to_value(meta).unwrap_or_default(),
                );
                Ok(result)
            }
            Some(TaskOutcome::Error(e)) => Err(e),
            None => Err(ErrorObject::internal(format!(
                "Task {:?} was {} and has no result",
                record.id(),
                record.task.status
            ))),
        }
    }

    /// `tasks/list`: `owner`'s tasks, oldest first, `size` a page; the cursor is the last
    /// one's position.
    pub(crate) async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ListTasksResult, ErrorObject> {
        let after = match cursor {
            None => None,
            Some(cursor) => Some(
                cursor
                    .split_once(':')
                    .and_then(|(ms, id)| Some((ms.parse::<u64>().ok()?, id)))
                    .ok_or_else(|| {
                        ErrorObject::invalid_params(format!(
                            "Invalid params: unknown cursor {cursor:?}; list again from the start"
                        ))
                    })?,
            ),
        };
        let (page, more) = self.page(owner, after, size).await?;
        let next_cursor = more
            .then(|| page.last().map(|t| format!("{}:{}", t.created_ms, t.id())))
            .flatten();
        Ok(ListTasksResult::page(
            page.into_iter().map(|r| r.task).collect(),
            next_cursor,
        ))
    }

    /// One page of `owner`'s tasks after `after`, and whether more follow: of every
    /// instance when instances share tasks (those run here as this process has them).
    async fn page(
        &self,
        owner: &str,
        after: Option<(u64, &str)>,
        size: usize,
    ) -> Result<(Vec<TaskRecord>, bool), ErrorObject> {
        let now = now_ms();
        let mut page = match self.shared.get() {
            Some(shared) => {
                let mut page = shared
                    .list(owner, after, size + 1, now)
                    .await
                    .map_err(store_error)?;
                for record in &mut page {
                    // The shared copy of a task run here may lag a write still queued.
                    if let Some(here) = self.store.get(record.id(), now).map_err(store_error)? {
                        *record = here;
                    }
                }
                page
            }
            None => self
                .store
                .list(owner, after, size + 1, now)
                .map_err(store_error)?,
        };
        let more = page.len() > size;
        page.truncate(size);
        Ok((page, more))
    }
}

/// The `tasks` capability of a server whose tools may run as tasks: `tasks/list`,
/// `tasks/cancel`, and task-augmented `tools/call`.
pub(super) fn capability() -> TasksCapability {
    TasksCapability::default()
        .with_list()
        .with_cancel()
        .with_tool_calls()
}
