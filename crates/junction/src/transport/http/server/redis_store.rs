//! The [`SessionStore`] on Redis (feature `redis`): records in hashes, routing on one pub/sub
//! channel, events in Redis Streams.
//!
//! Keys, under a prefix (`junction` by default) so that several deployments share a Redis:
//!
//! | key | type | what | expiry |
//! | --- | --- | --- | --- |
//! | `P:s:ID` | hash | `init` (the client's `initialize` parameters), `subject`, `level`, `ready` (`notifications/initialized` came) | idle timeout, renewed by each request |
//! | `P:s:ID:subs` | set | subscribed resource URIs | as above |
//! | `P:s:ID:ev:STREAM` | stream | the stream's events, entry id `0-(SEQ+1)`, field `d` | event ttl, renewed by each event |
//! | `P:s:ID:req` | hash | stream → the JSON id of the request it answers | event ttl |
//! | `P:s:ID:streams` | set | the session's stream numbers, to delete them with it | event ttl |
//! | `P:s:ID:evi` | list | one `STREAM SEQ BYTES` entry per event kept, oldest first | event ttl |
//! | `P:s:ID:evb` | string | the bytes of the session's events kept | event ttl |
//! | `P:live` | sorted set | every live session, scored by its last activity (ms), or by the end of its lease while busy (a score in the future) | never (pruned) |
//! | `P:i:INSTANCE` | string | an instance's heartbeat | heartbeat ttl |
//! | `P:l:ID` | string | the instance holding legacy HTTP+SSE session ID's stream | 6 s, renewed every 2 s while it does |
//!
//! and the channel `P:route` carries every [`Routed`] message as JSON.
//!
//! What Redis keeps is bounded ([`RedisLimits`]): each session keeps at most
//! [`RedisLimits::session_events`] events and [`RedisLimits::session_bytes`] bytes of them, over
//! all its streams (its oldest events go first; its newest always stays), and at most
//! [`RedisLimits::sessions`] sessions live over all instances (a new one ends the session idle
//! the longest, everywhere, or is refused when every session is busy). So the events of a deployment take at most `sessions x
//! session_bytes` bytes of Redis, besides each key's bookkeeping. The accounting runs in Lua
//! scripts ([`super::redis_scripts`]), atomically. Writes of events go through one task
//! that pipelines them in order, as many as have piled up while the previous pipeline ran;
//! an SSE response sends an event once the pipeline holding it has been answered
//! ([`SessionStore::pending_writes`]), so what a client has seen is in Redis. While Redis is
//! unreachable the writes fail with a logged error, after the command timeout (the streams
//! of this instance go on, that much slower; the instance keeps serving its own sessions
//! from memory), and resume when it returns.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use junction_protocol::RequestId;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::AsyncCommands;
use tokio::sync::{mpsc, watch};

use super::event_store::{EventId, DEFAULT_SESSION_EVENT_BYTES};
use super::redis_scripts::Scripts;
use super::session_store::{
    RecordChange, Routed, SessionRecord, SessionStore, StoreError, StreamEvents, BUSY_LEASE,
};
use super::DEFAULT_MAX_SESSIONS;
use crate::session::BoxFuture;

/// How many events each session keeps in Redis by default (as many as in memory).
pub const DEFAULT_SESSION_EVENTS: usize = 1024;

/// How long events stay in Redis after a stream's last one, by default: 30 minutes, the
/// default idle timeout.
pub const DEFAULT_EVENT_TTL: Duration = Duration::from_secs(30 * 60);

/// How long one Redis command may take before it counts as failed.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// How often [`SessionStore::read_after`] looks for new events while it waits.
const POLL: Duration = Duration::from_millis(20);

/// One entry of `XRANGE`: its id and its fields.
type StreamEntry = (String, Vec<(String, Vec<u8>)>);

/// Sessions, routing and events in Redis.
#[derive(Clone)]
pub struct RedisSessionStore {
    inner: Arc<Inner>,
}

/// What a [`RedisSessionStore`] keeps, at most, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedisLimits {
    /// The most events one session keeps, over all its streams ([`DEFAULT_SESSION_EVENTS`]).
    pub session_events: usize,
    /// The most bytes of events one session keeps ([`DEFAULT_SESSION_EVENT_BYTES`], as in
    /// memory); a single larger event is kept alone.
    pub session_bytes: usize,
    /// The most sessions live at once over all instances ([`DEFAULT_MAX_SESSIONS`]); give
    /// the same number as [`HttpServer::max_sessions`](super::HttpServer::max_sessions).
    pub sessions: usize,
    /// How long a session's events stay after its last one ([`DEFAULT_EVENT_TTL`]).
    pub event_ttl: Duration,
}

impl Default for RedisLimits {
    fn default() -> Self {
        RedisLimits {
            session_events: DEFAULT_SESSION_EVENTS,
            session_bytes: DEFAULT_SESSION_EVENT_BYTES,
            sessions: DEFAULT_MAX_SESSIONS,
            event_ttl: DEFAULT_EVENT_TTL,
        }
    }
}

struct Inner {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: String,
    limits: RedisLimits,
    scripts: Scripts,
    writes: mpsc::UnboundedSender<Write>,
    /// How many writes have been queued.
    queued: AtomicU64,
    /// How many queued writes the writer task has made (or failed), in queue order.
    written: watch::Receiver<u64>,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("prefix", &self.inner.prefix)
            .finish_non_exhaustive()
    }
}

/// An event write waiting for the writer task.
enum Write {
    Event {
        session: String,
        id: EventId,
        data: Bytes,
    },
    Opened {
        session: String,
        stream: u64,
        request: String,
    },
    Record {
        session: String,
        record: SessionRecord,
        ttl: Duration,
    },
}

fn failed(e: redis::RedisError) -> StoreError {
    StoreError(e.to_string())
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn ttl_secs(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_secs().max(1)).unwrap_or(i64::MAX)
}

impl RedisSessionStore {
    /// Connects to `url` (`redis://HOST:PORT[/DB]`) and checks that Redis answers: an
    /// unreachable Redis is an error here, not later.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, "junction", RedisLimits::default()).await
    }

    /// Like [`RedisSessionStore::connect`], with the key prefix and the limits.
    pub async fn connect_with(
        url: &str,
        prefix: &str,
        limits: RedisLimits,
    ) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(failed)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(COMMAND_TIMEOUT))
            .set_response_timeout(Some(COMMAND_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let mut connection = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(failed)?;
        let _: String = redis::cmd("PING")
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let (writes, rx) = mpsc::unbounded_channel();
        let (done, written) = watch::channel(0);
        let inner = Arc::new(Inner {
            client,
            connection,
            prefix: prefix.to_owned(),
            limits: RedisLimits {
                session_events: limits.session_events.max(1),
                sessions: limits.sessions.max(1),
                ..limits
            },
            scripts: Scripts::new(),
            writes,
            queued: AtomicU64::new(0),
            written,
        });
        tokio::spawn(write_events(Arc::downgrade(&inner), rx, done));
        Ok(RedisSessionStore { inner })
    }

    /// What this store keeps, at most.
    pub fn limits(&self) -> RedisLimits {
        self.inner.limits
    }
}

impl Inner {
    fn session_key(&self, id: &str) -> String {
        format!("{}:s:{id}", self.prefix)
    }
    fn stream_key(&self, id: &str, stream: u64) -> String {
        format!("{}:s:{id}:ev:{stream}", self.prefix)
    }
    fn channel(&self) -> String {
        format!("{}:route", self.prefix)
    }
    fn instance_key(&self, instance: u32) -> String {
        format!("{}:i:{instance}", self.prefix)
    }
    fn live_key(&self) -> String {
        format!("{}:live", self.prefix)
    }
    fn legacy_key(&self, id: &str) -> String {
        format!("{}:l:{id}", self.prefix)
    }

    /// Adds to `pipe` the commands that save a new session's `record` under `id`, expiring
    /// after `ttl`, and enter it among the live sessions (which may end the one idle the
    /// longest). The pipeline must load [`Scripts::enter`] first.
    fn create_commands(
        &self,
        pipe: &mut redis::Pipeline,
        id: &str,
        record: &SessionRecord,
        ttl: Duration,
    ) {
        record_commands(pipe, &self.session_key(id), record, ttl);
        let mut enter = self.scripts.enter.prepare_invoke();
        enter
            .arg(self.live_key())
            .arg(id)
            .arg(self.limits.sessions)
            .arg(millis(ttl))
            .arg(format!("{}:s:", self.prefix))
            .arg(self.channel());
        pipe.invoke_script(&enter).ignore();
    }

    /// Queues `write`, counted before it is sent so that [`SessionStore::pending_writes`]
    /// never reads a count that misses a write already in the queue.
    fn queue(&self, write: Write) {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let _ = self.writes.send(write);
    }
}

/// Adds to `pipe` the commands that save `record` under `key`, expiring after `ttl`.
fn record_commands(pipe: &mut redis::Pipeline, key: &str, record: &SessionRecord, ttl: Duration) {
    let mut fields = vec![("init", record.initialize.clone())];
    if let Some(subject) = &record.subject {
        fields.push(("subject", subject.clone()));
    }
    if let Some(level) = &record.log_level {
        fields.push(("level", level.clone()));
    }
    if record.initialized {
        fields.push(("ready", "1".to_owned()));
    }
    pipe.hset_multiple(key, &fields)
        .ignore()
        .expire(key, ttl_secs(ttl))
        .ignore();
    if !record.subscriptions.is_empty() {
        let subs = format!("{key}:subs");
        pipe.sadd(&subs, &record.subscriptions)
            .ignore()
            .expire(&subs, ttl_secs(ttl))
            .ignore();
    }
}

/// Writes queued events in order, as pipelines of whatever has piled up, and counts in
/// `done` how many it has made. It ends with the store; `done` then drops, which releases
/// whatever waits for it.
async fn write_events(
    inner: std::sync::Weak<Inner>,
    mut rx: mpsc::UnboundedReceiver<Write>,
    done: watch::Sender<u64>,
) {
    let mut batch = Vec::new();
    let mut written = 0u64;
    while rx.recv_many(&mut batch, 256).await > 0 {
        let Some(inner) = inner.upgrade() else { return };
        written += batch.len() as u64;
        let ttl = ttl_secs(inner.limits.event_ttl);
        let mut pipe = redis::pipe();
        // Loaded by every pipeline: a Redis restarted meanwhile has forgotten them.
        pipe.load_script(&inner.scripts.append)
            .ignore()
            .load_script(&inner.scripts.enter)
            .ignore();
        for write in batch.drain(..) {
            match write {
                Write::Event { session, id, data } => {
                    let mut append = inner.scripts.append.prepare_invoke();
                    append
                        .arg(inner.session_key(&session))
                        .arg(id.stream)
                        .arg(id.seq + 1)
                        .arg(data.as_ref())
                        .arg(inner.limits.session_events)
                        .arg(inner.limits.session_bytes)
                        .arg(ttl)
                        .arg(inner.live_key())
                        .arg(&session);
                    pipe.invoke_script(&append).ignore();
                }
                Write::Opened {
                    session,
                    stream,
                    request,
                } => {
                    let key = format!("{}:req", inner.session_key(&session));
                    pipe.hset(&key, stream, request)
                        .ignore()
                        .expire(&key, ttl)
                        .ignore();
                }
                Write::Record {
                    session,
                    record,
                    ttl,
                } => inner.create_commands(&mut pipe, &session, &record, ttl),
            }
        }
        let mut connection = inner.connection.clone();
        if let Err(e) = pipe.query_async::<()>(&mut connection).await {
            tracing::error!(error = %e, "could not write events to Redis; streams of this instance cannot be resumed elsewhere until it is back");
        }
        done.send_replace(written);
    }
}

impl SessionStore for RedisSessionStore {
    fn create<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .load_script(&self.inner.scripts.enter)
                .ignore();
            self.inner.create_commands(&mut pipe, id, record, ttl);
            let mut connection = self.inner.connection.clone();
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(async move {
            let key = self.inner.session_key(id);
            let mut connection = self.inner.connection.clone();
            let (fields, subscriptions): (std::collections::HashMap<String, String>, Vec<String>) =
                redis::pipe()
                    .hgetall(&key)
                    .smembers(format!("{key}:subs"))
                    .query_async(&mut connection)
                    .await
                    .map_err(failed)?;
            let mut fields = fields;
            let Some(initialize) = fields.remove("init") else {
                return Ok(None);
            };
            Ok(Some(SessionRecord {
                initialize,
                subject: fields.remove("subject"),
                log_level: fields.remove("level"),
                subscriptions,
                initialized: fields.contains_key("ready"),
            }))
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: RecordChange,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.inner.session_key(id);
            let subs = format!("{key}:subs");
            let ttl = ttl_secs(ttl);
            let mut pipe = redis::pipe();
            let lease = match change {
                RecordChange::Initialized => Duration::ZERO,
                _ => BUSY_LEASE,
            };
            let mut touch = self.inner.scripts.touch.prepare_invoke();
            touch.arg(self.inner.live_key()).arg(id).arg(millis(lease));
            pipe.load_script(&self.inner.scripts.touch)
                .ignore()
                .invoke_script(&touch)
                .ignore();
            match change {
                RecordChange::Touch => {}
                RecordChange::LogLevel(level) => {
                    pipe.hset(&key, "level", level).ignore();
                }
                RecordChange::Subscribe(uri) => {
                    pipe.sadd(&subs, uri).ignore();
                }
                RecordChange::Unsubscribe(uri) => {
                    pipe.srem(&subs, uri).ignore();
                }
                RecordChange::Initialized => {
                    pipe.hset(&key, "ready", 1).ignore();
                }
            }
            pipe.expire(&key, ttl).ignore().expire(&subs, ttl).ignore();
            let mut connection = self.inner.connection.clone();
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            self.inner
                .scripts
                .remove
                .arg(self.inner.session_key(id))
                .arg(self.inner.live_key())
                .arg(id)
                .invoke_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn publish<'a>(&'a self, message: &'a Routed) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(message).map_err(|e| StoreError(e.to_string()))?;
            let mut connection = self.inner.connection.clone();
            connection
                .publish::<_, _, ()>(self.inner.channel(), json)
                .await
                .map_err(failed)
        })
    }

    fn listen(&self) -> mpsc::Receiver<Routed> {
        listen_channel(
            self.inner.client.clone(),
            self.inner.channel(),
            "the routing channel",
            "messages for sessions held here from other instances wait until it is back",
            |payload| serde_json::from_slice::<Routed>(payload).ok(),
        )
    }

    fn admit(&self, idle: Duration) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            let admitted: i64 = self
                .inner
                .scripts
                .admit
                .arg(self.inner.live_key())
                .arg(self.inner.limits.sessions)
                .arg(millis(idle))
                .arg(format!("{}:s:", self.inner.prefix))
                .arg(self.inner.channel())
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(admitted != 0)
        })
    }

    fn activity<'a>(
        &'a self,
        busy: &'a [String],
        settled: &'a [String],
        lease: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if busy.is_empty() && settled.is_empty() {
                return Ok(());
            }
            let mut connection = self.inner.connection.clone();
            let mut activity = self.inner.scripts.activity.prepare_invoke();
            activity
                .arg(self.inner.live_key())
                .arg(millis(lease))
                .arg(busy.len())
                .arg(busy)
                .arg(settled);
            activity
                .invoke_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn legacy_held<'a>(
        &'a self,
        instance: u32,
        sessions: &'a [String],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if sessions.is_empty() {
                return Ok(());
            }
            let mut pipe = redis::pipe();
            for id in sessions {
                pipe.pset_ex(self.inner.legacy_key(id), instance, millis(ttl).max(1))
                    .ignore();
            }
            let mut connection = self.inner.connection.clone();
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn legacy_exists<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            connection
                .exists(self.inner.legacy_key(id))
                .await
                .map_err(failed)
        })
    }

    fn legacy_ended<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            connection
                .del::<_, ()>(self.inner.legacy_key(id))
                .await
                .map_err(failed)
        })
    }

    fn heartbeat(&self, instance: u32, ttl: Duration) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            connection
                .pset_ex::<_, _, ()>(self.inner.instance_key(instance), 1, ms)
                .await
                .map_err(failed)
        })
    }

    fn alive(&self, instance: u32) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut connection = self.inner.connection.clone();
            connection
                .exists(self.inner.instance_key(instance))
                .await
                .map_err(failed)
        })
    }

    fn append(&self, session: &str, id: EventId, data: Bytes) {
        self.inner.queue(Write::Event {
            session: session.to_owned(),
            id,
            data,
        });
    }

    fn stream_opened(&self, session: &str, stream: u64, request: &RequestId) {
        let Ok(request) = serde_json::to_string(request) else {
            return;
        };
        self.inner.queue(Write::Opened {
            session: session.to_owned(),
            stream,
            request,
        });
    }

    fn create_queued(&self, id: &str, record: SessionRecord, ttl: Duration) {
        self.inner.queue(Write::Record {
            session: id.to_owned(),
            record,
            ttl,
        });
    }

    fn pending_writes(&self) -> Option<BoxFuture<'static, ()>> {
        let queued = self.inner.queued.load(Ordering::SeqCst);
        let mut written = self.inner.written.clone();
        if *written.borrow() >= queued {
            return None;
        }
        Some(Box::pin(async move {
            // An error means the writer ended with the store: nothing more will be written.
            let _ = written.wait_for(|&n| n >= queued).await;
        }))
    }

    fn read_after<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
        wait: Duration,
    ) -> BoxFuture<'a, Result<StreamEvents, StoreError>> {
        Box::pin(async move {
            let key = self.inner.stream_key(session, after.stream);
            let start = format!("(0-{}", after.seq + 1);
            let deadline = tokio::time::Instant::now() + wait;
            let mut connection = self.inner.connection.clone();
            loop {
                let entries: Vec<StreamEntry> = redis::cmd("XRANGE")
                    .arg(&key)
                    .arg(&start)
                    .arg("+")
                    .query_async(&mut connection)
                    .await
                    .map_err(failed)?;
                let events: Vec<(EventId, Bytes)> = entries
                    .into_iter()
                    .filter_map(|(entry, fields)| {
                        let seq: u64 = entry.strip_prefix("0-")?.parse().ok()?;
                        let data = fields.into_iter().find(|(f, _)| f == "d")?.1;
                        Some((
                            EventId {
                                stream: after.stream,
                                seq: seq.checked_sub(1)?,
                            },
                            Bytes::from(data),
                        ))
                    })
                    .collect();
                if !events.is_empty() || tokio::time::Instant::now() >= deadline {
                    return Ok(StreamEvents { events });
                }
                tokio::time::sleep(POLL).await;
            }
        })
    }

    fn stream_request<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<Option<RequestId>, StoreError>> {
        Box::pin(async move {
            let key = format!("{}:req", self.inner.session_key(session));
            let mut connection = self.inner.connection.clone();
            let raw: Option<String> = connection.hget(key, stream).await.map_err(failed)?;
            Ok(raw.and_then(|r| serde_json::from_str(&r).ok()))
        })
    }

    fn tasks(&self, instance: u32) -> Option<Arc<dyn crate::server::task::SharedTasks>> {
        Some(Arc::new(super::redis_tasks::RedisTasks::new(
            self.inner.client.clone(),
            self.inner.connection.clone(),
            &self.inner.prefix,
            instance,
        )))
    }
}

/// Forwards the routing channel into `tx` until the connection fails (`Err`) or nobody
/// listens any more (`Ok`).
/// Hands each message of Redis channel `channel` that `parse` reads to the receiver it
/// returns, subscribing again (after 100 ms, doubling up to 2 s) whenever the subscription
/// is lost, until the receiver is dropped. `what` names the channel in logs, `meanwhile`
/// says what waits while it is lost.
pub(super) fn listen_channel<T: Send + 'static>(
    client: redis::Client,
    channel: String,
    what: &'static str,
    meanwhile: &'static str,
    parse: fn(&[u8]) -> Option<T>,
) -> mpsc::Receiver<T> {
    let (tx, rx) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(100);
        while !tx.is_closed() {
            match subscribe(&client, &channel, what, parse, &tx).await {
                Ok(()) => return,
                Err(e) => {
                    tracing::error!(error = %e, "lost {what} in Redis; {meanwhile}");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
    });
    rx
}

/// One subscription of [`listen_channel`]: `Ok` once the receiver is gone.
async fn subscribe<T>(
    client: &redis::Client,
    channel: &str,
    what: &str,
    parse: fn(&[u8]) -> Option<T>,
    tx: &mpsc::Sender<T>,
) -> Result<(), redis::RedisError> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    tracing::debug!(channel, "listening on {what}");
    let mut messages = pubsub.into_on_message();
    while let Some(message) = messages.next().await {
        match parse(message.get_payload_bytes()) {
            Some(item) => {
                if tx.send(item).await.is_err() {
                    return Ok(());
                }
            }
            None => tracing::warn!("ignoring a malformed message on {what}"),
        }
    }
    Err(redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        format!("the subscription to {what} ended"),
    )))
}
