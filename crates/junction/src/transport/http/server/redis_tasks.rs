//! The server's tasks (2025-11-25, and the 2026-07-28 extension's) shared through Redis ([`SharedTasks`], feature `redis`), on
//! the connection of the [`RedisSessionStore`](super::RedisSessionStore) and under its prefix.
//!
//! | key | type | what | expiry |
//! | --- | --- | --- | --- |
//! | `P:t:ID` | hash | `r` (the task's record as JSON), `i` (the instance running it), `t` (`1` once terminal) | at the task's ttl from its creation |
//! | `P:t:o:OWNER` | sorted set | the owner's tasks, members `CREATED:ID` (creation in ms, 20 digits), all scored 0 so that they sort by creation then id | with the owner's last task |
//!
//! and the channel `P:tasks` carries the signals: `e ID` (task ID ended), `c INSTANCE ID`
//! (the instance running task ID is asked to cancel it), `u INSTANCE ID RESPONSES` (it is
//! asked to hand a 2026-07-28 task's handler the `inputResponses` of a `tasks/update`, as
//! JSON), `a ID` (it did, and saved the task's record since).
//!
//! A record is written only by the instance running its task (and by the one that finds
//! it orphaned), through one script that refuses to replace a terminal record, so a
//! terminal status is as sticky as in a single store. Each instance writes its records in
//! order, pipelined, through one task. Redis holds no task that an instance's own store did
//! not accept: the bounds of that store ([`TaskSettings::max_active`] per caller,
//! [`MemoryStore`] capacity) bound what each instance adds.
//!
//! [`TaskSettings::max_active`]: crate::server::task::TaskSettings::max_active
//! [`MemoryStore`]: crate::server::task::MemoryStore

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::ConnectionManager;
use redis::AsyncCommands;
use tokio::sync::{mpsc, oneshot};

use crate::server::task::{SharedRecord, SharedTasks, Signal, StoreError, TaskRecord};
use crate::session::BoxFuture;

/// How long the writer waits before writing again what Redis refused.
const RETRY: Duration = Duration::from_secs(1);

/// How long a record without a ttl stays (the server always grants one; a day bounds the rest).
const NO_TTL: Duration = Duration::from_secs(24 * 3600);

/// Saves a task's record unless the stored one is terminal; announces a terminal one.
/// Drops from the owner's index up to two of its oldest entries whose records expired, so
/// that the index of an owner who never lists does not grow with every task.
/// Returns 1 when saved, 0 when the stored record was terminal.
///
/// ARGV: the record key `P:t:ID`, the owner's index key, the index member, the record's
/// JSON, the instance, `1` if terminal, the expiry (ms since the epoch), the index's ttl in
/// ms, the record key prefix `P:t:`, the channel, the task id.
const SAVE: &str = r"
local key, index = ARGV[1], ARGV[2]
if redis.call('HGET', key, 't') == '1' then return 0 end
redis.call('HSET', key, 'r', ARGV[4], 'i', ARGV[5], 't', ARGV[6])
redis.call('PEXPIREAT', key, tonumber(ARGV[7]))
redis.call('ZADD', index, 0, ARGV[3])
for _ = 1, 2 do
  local oldest = redis.call('ZRANGE', index, 0, 0)[1]
  if not oldest or redis.call('EXISTS', ARGV[9] .. string.sub(oldest, 22)) == 1 then break end
  redis.call('ZREM', index, oldest)
end
local ttl = tonumber(ARGV[8])
if redis.call('PTTL', index) < ttl then redis.call('PEXPIRE', index, ttl) end
if ARGV[6] == '1' then redis.call('PUBLISH', ARGV[10], 'e ' .. ARGV[11]) end
return 1
";

/// The tasks of one instance, shared through Redis.
pub(super) struct RedisTasks {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: String,
    instance: u32,
    save: redis::Script,
    writes: mpsc::UnboundedSender<Write>,
}

/// A record to save, and who waits for the write.
struct Write {
    record: TaskRecord,
    instance: u32,
    done: Option<oneshot::Sender<Result<bool, String>>>,
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The index member of a task: its creation, padded so that members sort by it, and its id.
fn member(created_ms: u64, id: &str) -> String {
    format!("{created_ms:020}:{id}")
}

impl RedisTasks {
    /// The tasks of instance `instance` on `connection`, keys under `prefix`. Starts the
    /// task that writes the records: must be called within a Tokio runtime.
    pub(super) fn new(
        client: redis::Client,
        connection: ConnectionManager,
        prefix: &str,
        instance: u32,
    ) -> Self {
        let (writes, rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            client,
            connection,
            prefix: prefix.to_owned(),
            instance,
            save: redis::Script::new(SAVE),
            writes,
        });
        tokio::spawn(write_records(Arc::downgrade(&inner), rx));
        RedisTasks { inner }
    }
}

impl Inner {
    fn record_key(&self, id: &str) -> String {
        format!("{}:t:{id}", self.prefix)
    }
    fn owner_key(&self, owner: &str) -> String {
        format!("{}:t:o:{owner}", self.prefix)
    }
    fn channel(&self) -> String {
        format!("{}:tasks", self.prefix)
    }

    /// Adds to `pipe` the script call that saves `record` run by `instance`.
    fn save_command(
        &self,
        pipe: &mut redis::Pipeline,
        record: &TaskRecord,
        instance: u32,
    ) -> Result<(), String> {
        let json = serde_json::to_string(record).map_err(|e| e.to_string())?;
        let ttl = record
            .task
            .ttl
            .unwrap_or_else(|| u64::try_from(NO_TTL.as_millis()).unwrap_or(u64::MAX));
        let expires = record.created_ms.saturating_add(ttl);
        let left = expires.saturating_sub(now_ms()).max(1);
        let mut save = self.save.prepare_invoke();
        save.arg(self.record_key(record.id()))
            .arg(self.owner_key(&record.owner))
            .arg(member(record.created_ms, record.id()))
            .arg(json)
            .arg(instance)
            .arg(if record.task.status.is_terminal() {
                "1"
            } else {
                "0"
            })
            .arg(expires)
            .arg(left)
            .arg(format!("{}:t:", self.prefix))
            .arg(self.channel())
            .arg(record.id());
        pipe.invoke_script(&save);
        Ok(())
    }

    fn queue(&self, record: TaskRecord, done: Option<oneshot::Sender<Result<bool, String>>>) {
        let write = Write {
            record,
            instance: self.instance,
            done,
        };
        if let Err(mpsc::error::SendError(write)) = self.writes.send(write) {
            if let Some(done) = write.done {
                let _ = done.send(Err("the task writer has stopped".to_owned()));
            }
        }
    }
}

/// Writes queued records in order, as pipelines of whatever piled up, and tells each
/// waiter whether its record was saved. The records of a pipeline that failed (Redis lost)
/// are written again, the latest of each task, before newer ones, every [`RETRY`] until
/// Redis takes them: a task that ended meanwhile is not left unfinished in Redis.
async fn write_records(inner: std::sync::Weak<Inner>, mut rx: mpsc::UnboundedReceiver<Write>) {
    let mut batch = Vec::new();
    let mut unwritten: Vec<(TaskRecord, u32)> = Vec::new();
    let mut failing = false;
    loop {
        let received = if unwritten.is_empty() {
            rx.recv_many(&mut batch, 256).await
        } else {
            tokio::select! {
                received = rx.recv_many(&mut batch, 256) => received,
                () = tokio::time::sleep(RETRY) => usize::MAX,
            }
        };
        if received == 0 {
            return;
        }
        let Some(inner) = inner.upgrade() else { return };
        let mut pipe = redis::pipe();
        // Loaded by every pipeline: a Redis restarted meanwhile has forgotten it.
        pipe.load_script(&inner.save).ignore();
        let mut written = Vec::new();
        let writes = unwritten
            .drain(..)
            .map(|(record, instance)| Write {
                record,
                instance,
                done: None,
            })
            .chain(batch.drain(..));
        for write in writes {
            match inner.save_command(&mut pipe, &write.record, write.instance) {
                Ok(()) => written.push(write),
                Err(e) => {
                    tracing::error!(
                        task = write.record.id(),
                        "could not encode a task's record: {e}"
                    );
                    if let Some(done) = write.done {
                        let _ = done.send(Err(e));
                    }
                }
            }
        }
        let mut connection = inner.connection.clone();
        match pipe.query_async::<Vec<i64>>(&mut connection).await {
            Ok(saved) => {
                if std::mem::take(&mut failing) {
                    tracing::info!("tasks are written to Redis again");
                }
                for (write, saved) in written.into_iter().zip(saved) {
                    if let Some(done) = write.done {
                        let _ = done.send(Ok(saved == 1));
                    }
                }
            }
            Err(e) => {
                if !std::mem::replace(&mut failing, true) {
                    tracing::error!(error = %e, "could not write tasks to Redis; other instances see them as they were until it is back");
                }
                let mut latest = std::collections::HashMap::new();
                for (n, write) in written.iter().enumerate() {
                    latest.insert(write.record.id().to_owned(), n);
                }
                for (n, write) in written.into_iter().enumerate() {
                    if let Some(done) = write.done {
                        let _ = done.send(Err(e.to_string()));
                    }
                    if latest.get(write.record.id()) == Some(&n) {
                        unwritten.push((write.record, write.instance));
                    }
                }
            }
        }
    }
}

impl SharedTasks for RedisTasks {
    fn instance(&self) -> u32 {
        self.inner.instance
    }

    fn save(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>> {
        let (done, saved) = oneshot::channel();
        self.inner.queue(record, Some(done));
        Box::pin(async move {
            match saved.await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(StoreError::Backend(e)),
                Err(_) => Err(StoreError::Backend("the task writer has stopped".into())),
            }
        })
    }

    fn save_queued(&self, record: TaskRecord) {
        self.inner.queue(record, None);
    }

    fn fail_orphan<'a>(
        &'a self,
        orphan: &'a SharedRecord,
    ) -> BoxFuture<'a, Result<Option<SharedRecord>, StoreError>> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.load_script(&self.inner.save).ignore();
            self.inner
                .save_command(&mut pipe, &orphan.record, orphan.instance)
                .map_err(StoreError::Backend)?;
            let mut connection = self.inner.connection.clone();
            let (saved,): (i64,) = pipe.query_async(&mut connection).await.map_err(failed)?;
            if saved == 1 {
                tracing::info!(
                    task = orphan.record.id(),
                    instance = orphan.instance,
                    "marked failed a task whose instance stopped"
                );
                return Ok(Some(orphan.clone()));
            }
            self.load(orphan.record.id()).await
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SharedRecord>, StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            let (record, instance): (Option<String>, Option<u32>) = connection
                .hmget(self.inner.record_key(id), &["r", "i"])
                .await
                .map_err(failed)?;
            let (Some(record), Some(instance)) = (record, instance) else {
                return Ok(None);
            };
            let record: TaskRecord = serde_json::from_str(&record).map_err(failed)?;
            Ok(Some(SharedRecord { record, instance }))
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<(u64, &'a str)>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let index = self.inner.owner_key(owner);
            let mut start = match after {
                Some((ms, id)) => format!("({}", member(ms, id)),
                None => "-".to_owned(),
            };
            let mut connection = self.inner.connection.clone();
            let mut page = Vec::new();
            let mut gone = Vec::new();
            // Expired tasks leave members behind: read on until the page is full.
            while page.len() < limit {
                let members: Vec<String> = redis::cmd("ZRANGEBYLEX")
                    .arg(&index)
                    .arg(&start)
                    .arg("+")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(limit - page.len())
                    .query_async(&mut connection)
                    .await
                    .map_err(failed)?;
                let Some(last) = members.last() else { break };
                start = format!("({last}");
                let mut pipe = redis::pipe();
                for m in &members {
                    pipe.hget(self.inner.record_key(m.get(21..).unwrap_or("")), "r");
                }
                let records: Vec<Option<String>> =
                    pipe.query_async(&mut connection).await.map_err(failed)?;
                for (m, record) in members.iter().zip(records) {
                    let record = record.and_then(|r| serde_json::from_str::<TaskRecord>(&r).ok());
                    match record {
                        Some(r) if r.owner == owner && !r.expired(now_ms) => page.push(r),
                        Some(_) => {}
                        None => gone.push(m.clone()),
                    }
                }
            }
            if !gone.is_empty() {
                connection
                    .zrem::<_, _, ()>(&index, gone)
                    .await
                    .map_err(failed)?;
            }
            Ok(page)
        })
    }

    fn signal<'a>(&'a self, signal: &'a Signal) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let message = match signal {
                Signal::Ended(id) => format!("e {id}"),
                Signal::Cancel { instance, id } => format!("c {instance} {id}"),
                Signal::Update {
                    instance,
                    id,
                    responses,
                } => {
                    let responses = serde_json::to_string(responses).map_err(failed)?;
                    format!("u {instance} {id} {responses}")
                }
                Signal::Answered(id) => format!("a {id}"),
            };
            let mut connection = self.inner.connection.clone();
            connection
                .publish::<_, _, ()>(self.inner.channel(), message)
                .await
                .map_err(failed)
        })
    }

    fn listen(&self) -> mpsc::Receiver<Signal> {
        super::redis_store::listen_channel(
            self.inner.client.clone(),
            self.inner.channel(),
            "the channel of tasks",
            "waits for other instances' tasks fall back to reading their records",
            |payload| parse(&String::from_utf8_lossy(payload)),
        )
    }

    fn alive(&self, instance: u32) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            connection
                .exists(format!("{}:i:{instance}", self.inner.prefix))
                .await
                .map_err(failed)
        })
    }
}

/// A signal as the channel carries it.
fn parse(message: &str) -> Option<Signal> {
    match message.split_once(' ')? {
        ("e", id) => Some(Signal::Ended(id.to_owned())),
        ("c", rest) => {
            let (instance, id) = rest.split_once(' ')?;
            Some(Signal::Cancel {
                instance: instance.parse().ok()?,
                id: id.to_owned(),
            })
        }
        ("u", rest) => {
            let (instance, rest) = rest.split_once(' ')?;
            let (id, responses) = rest.split_once(' ')?;
            Some(Signal::Update {
                instance: instance.parse().ok()?,
                id: id.to_owned(),
                responses: serde_json::from_str(responses).ok()?,
            })
        }
        ("a", id) => Some(Signal::Answered(id.to_owned())),
        _ => None,
    }
}

/// Forwards the channel of tasks into `tx` until the connection fails (`Err`) or nobody
/// listens any more (`Ok`).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_read_back_as_sent() {
        assert_eq!(parse("e ab12"), Some(Signal::Ended("ab12".into())));
        assert_eq!(
            parse("c 77 ab12"),
            Some(Signal::Cancel {
                instance: 77,
                id: "ab12".into()
            })
        );
        assert_eq!(parse("c x ab12"), None);
        assert_eq!(
            parse(r#"u 77 ab12 {"first": {"action": "accept"}}"#),
            Some(Signal::Update {
                instance: 77,
                id: "ab12".into(),
                responses: [("first".into(), serde_json::json!({"action": "accept"}))].into()
            })
        );
        assert_eq!(parse("u 77 ab12 {"), None);
        assert_eq!(parse("a ab12"), Some(Signal::Answered("ab12".into())));
        assert_eq!(parse("z ab12"), None);
    }

    #[test]
    fn index_members_sort_by_creation_then_id() {
        assert!(member(999, "b") < member(1_000, "a"));
        assert!(member(1_000, "a") < member(1_000, "b"));
        assert_eq!(&member(5, "id")[21..], "id");
    }
}
