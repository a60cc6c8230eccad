//! Sessions shared by several instances of one server behind a load balancer.
//!
//! Without a [`SessionStore`] (the default) a session lives in the memory of the process that
//! created it, exactly as a single server needs. With one ([`super::HttpServer::session_store`];
//! the Redis implementation is `RedisSessionStore`, feature
//! `redis`), every instance can serve every request of a session:
//!
//! - **Records.** The instance that answers `initialize` saves a [`SessionRecord`] (the
//!   client's `initialize` parameters, hence the negotiated revision, its capabilities and
//!   information; the subject that opened it; later its log level and resource
//!   subscriptions), which expires after the idle timeout, renewed by every request. An
//!   instance that gets a request for a session it does not hold loads the record and
//!   restores the session locally ([`TransportEvent::Restored`](crate::transport::TransportEvent)):
//!   a served session standing as initialized, without the handshake's messages.
//! - **Routing.** What the client POSTs besides requests (responses to the server's requests,
//!   `notifications/cancelled`, ...) is published to every instance ([`Routed`]) and taken
//!   by the instance it concerns: a response by the one that sent the request, a
//!   notification by each instance holding the session (an instance that does not hold it
//!   checks its record and publishes, without restoring a copy). A server message for the
//!   standalone GET stream made on an instance that does not hold that stream is published
//!   too, and sent by the instance that does.
//! - **Streams.** Stream ids carry the instance that holds the stream (its upper 32 bits), and
//!   every event of a resumable stream is written through to the store. A `GET` with
//!   `Last-Event-ID` for a stream of another instance replays the stream from the store and
//!   follows it until its response; if the instance holding it stopped (its heartbeat
//!   expired) the request fails with an error response instead of waiting for ever. An event
//!   leaves for the client only once the store has it ([`SessionStore::pending_writes`]),
//!   so a client never holds an event id that another instance cannot replay.
//! - **Handshake.** `notifications/initialized` POSTed to an instance other than the one that
//!   answered `initialize` is recorded in the session's record before it is answered, and
//!   routed; a request that reaches the first instance before the routed notification does
//!   finds it in the record, so the handshake's order holds across instances.
//! - **Changes.** A resource change the server makes is published to every instance rather
//!   than sent to the sessions held where it was made ([`RoutedKind::Changed`]); each
//!   instance hands it to the sessions whose standalone GET stream it holds, with their
//!   subscriptions read from their records, and to the 2026-07-28 listens it holds
//!   ([`super::SharedChanges`]), so each hears it once, whichever instance made the change
//!   and whichever took its `resources/subscribe`. The server publishes from its start when
//!   given [`super::HttpServer::shared_changes`]. A list change is not published: the lists
//!   are each process's own, so every instance makes the change, and each announces it to
//!   the sessions whose standalone stream it holds and to its listens.
//! - **Legacy HTTP+SSE.** A legacy session stays on the instance holding its stream, which
//!   records it in the store ([`SessionStore::legacy_held`]); any instance takes its
//!   `POST /message` and publishes it ([`RoutedKind::Legacy`]) for the holder.
//! - **Cap.** The sessions of all instances are bounded together, with one instance's
//!   rule: a new session ends the one idle the longest, or is refused (`503`) when every
//!   session is busy. Each instance reports which of its sessions are busy
//!   ([`SessionStore::activity`], leases of [`BUSY_LEASE`] that a dead instance stops
//!   renewing), and asks for room before serving `initialize` ([`SessionStore::admit`]).

use std::time::Duration;

use bytes::Bytes;
use junction_protocol::RequestId;

use super::event_store::EventId;
use crate::session::BoxFuture;

/// What a [`SessionStore`] could not do.
#[derive(Debug, thiserror::Error)]
#[error("session store: {0}")]
pub struct StoreError(pub String);

/// What a shared store keeps of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// The client's `initialize` parameters, as JSON.
    pub initialize: String,
    /// The subject that opened the session, under bearer authorization.
    pub subject: Option<String>,
    /// The level set by `logging/setLevel`, if any.
    pub log_level: Option<String>,
    /// The resources the client subscribed to.
    pub subscriptions: Vec<String>,
    /// Whether the client has sent `notifications/initialized` (to any instance).
    pub initialized: bool,
}

/// A change to a [`SessionRecord`]; each one renews its expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordChange {
    /// Only renews the expiry (any request).
    Touch,
    /// `logging/setLevel`.
    LogLevel(String),
    /// `resources/subscribe`.
    Subscribe(String),
    /// `resources/unsubscribe`.
    Unsubscribe(String),
    /// `notifications/initialized`, recorded before the client's POST of it is answered.
    Initialized,
}

/// A message between instances.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Routed {
    /// The instance that published it.
    #[serde(rename = "o")]
    pub origin: u32,
    /// The session it concerns.
    #[serde(rename = "s")]
    pub session: String,
    /// What to do.
    #[serde(flatten)]
    pub kind: RoutedKind,
}

/// What a [`Routed`] message asks of the instances holding its session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "k", content = "f", rename_all = "snake_case")]
pub enum RoutedKind {
    /// A notification or response POSTed by the client, to hand to the served session.
    Deliver(String),
    /// A message of the served session for the standalone GET stream.
    Standalone(String),
    /// The client ended the session (`DELETE`).
    End,
    /// A change notification (`notifications/resources/updated`, `notifications/*/list_changed`)
    /// made on the publishing instance, for every session of every instance that it concerns
    /// (its [`Routed::session`] is empty): each session hears it from the instance holding
    /// its standalone GET stream, the publisher included.
    Changed(String),
    /// A message POSTed to `/message` for a legacy HTTP+SSE session, for the instance holding
    /// its stream (every instance publishes them, the holder included, so that they reach
    /// the session in the order they were accepted).
    Legacy {
        /// The message.
        frame: String,
        /// Who POSTed it, under bearer authorization: the holder hands it over only if
        /// that is who opened the session.
        subject: Option<String>,
    },
}

/// Events read back from a shared stream.
#[derive(Debug, Default)]
pub struct StreamEvents {
    /// The events, oldest first.
    pub events: Vec<(EventId, Bytes)>,
}

/// Where sessions, their routing and their events are shared between instances.
///
/// Writes of events ([`SessionStore::append`], [`SessionStore::stream_opened`]) are made while a
/// session's routing lock is held: they must only queue the write, in order, and return. An
/// SSE response sends each event only once [`SessionStore::pending_writes`] says every write
/// queued before it is made.
pub trait SessionStore: Send + Sync + 'static {
    /// Saves a new session's record, expiring after `ttl` unless renewed.
    fn create<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The record of session `id`, if it exists and has not expired.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>>;
    /// Changes a record and renews its expiry. Any change but
    /// [`RecordChange::Initialized`] comes with a request, which marks the session busy
    /// for [`BUSY_LEASE`] (see [`SessionStore::admit`]).
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: RecordChange,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Deletes a session's record and events.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Sends `message` to every instance (this one included).
    fn publish<'a>(&'a self, message: &'a Routed) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Starts receiving what every instance publishes; called once per server. The channel
    /// ends only when the store is dropped: a lost connection is logged and re-established.
    fn listen(&self) -> tokio::sync::mpsc::Receiver<Routed>;
    /// Makes room for a new session under the cap over all instances, before it is served:
    /// ends the sessions idle the longest (on every instance) while the live ones are at the
    /// cap. `false`, ending none, when there is no room and every live session is busy: the
    /// new one is then refused (`503`), as one instance alone refuses it.
    fn admit(&self, idle: Duration) -> BoxFuture<'_, Result<bool, StoreError>>;
    /// Reports which of the sessions held by an instance are `busy` there (a request in
    /// flight, a stream open: kept busy for `lease`, renewed by the next report) and which
    /// `settled` since the last report (idle now: no longer busy).
    fn activity<'a>(
        &'a self,
        busy: &'a [String],
        settled: &'a [String],
        lease: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Records that `instance` holds the streams of these legacy HTTP+SSE sessions, for `ttl`
    /// (renewed while it does).
    fn legacy_held<'a>(
        &'a self,
        instance: u32,
        sessions: &'a [String],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Whether an instance holds the stream of legacy session `id`.
    fn legacy_exists<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// Forgets legacy session `id`: its stream ended.
    fn legacy_ended<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Marks `instance` alive for `ttl`.
    fn heartbeat(&self, instance: u32, ttl: Duration) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Whether `instance`'s last heartbeat has not expired.
    fn alive(&self, instance: u32) -> BoxFuture<'_, Result<bool, StoreError>>;
    /// Queues the write of event `id` of `session` (see the trait's documentation).
    fn append(&self, session: &str, id: EventId, data: Bytes);
    /// Queues the note that `stream` of `session` answers `request`.
    fn stream_opened(&self, session: &str, stream: u64, request: &RequestId);
    /// Queues the saving of a new session's record, as [`SessionStore::create`] does, in
    /// order with the event writes: an `initialize` answered with an event stream sends its
    /// result only once [`SessionStore::pending_writes`] says the record is saved.
    fn create_queued(&self, id: &str, record: SessionRecord, ttl: Duration);
    /// `None` when every write queued so far ([`SessionStore::append`],
    /// [`SessionStore::stream_opened`]) has been made; otherwise a future that ends when they
    /// have been, or have failed (a store that cannot write must not stop the streams).
    /// A store that writes before `append` returns keeps the default.
    fn pending_writes(&self) -> Option<BoxFuture<'static, ()>> {
        None
    }
    /// The events of `after.stream` that follow `after`; when there are none yet, waits up
    /// to `wait` for one.
    fn read_after<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
        wait: Duration,
    ) -> BoxFuture<'a, Result<StreamEvents, StoreError>>;
    /// The request that `stream` of `session` answers, if it is a request's stream.
    fn stream_request<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<Option<RequestId>, StoreError>>;

    /// Where the server's tasks are shared, for instance `instance` (none by default: each
    /// instance keeps the tasks it runs). Called within a Tokio runtime.
    fn tasks(
        &self,
        _instance: u32,
    ) -> Option<std::sync::Arc<dyn crate::server::task::SharedTasks>> {
        None
    }
}

/// How long a session stays busy for the cap over all instances after its instance last
/// said so ([`SessionStore::activity`], a request's [`SessionStore::update`]): an instance
/// renews it a few times within it, and a dead instance's sessions become idle after it.
pub const BUSY_LEASE: Duration = Duration::from_secs(6);

/// The instance that holds a stream: the upper 32 bits of its id.
pub(super) fn stream_instance(stream: u64) -> u32 {
    (stream >> 32) as u32
}

/// A new instance id: random, never 0 (0 is the instance of a server without a store).
pub(super) fn new_instance_id() -> Result<u32, getrandom::Error> {
    loop {
        let mut bytes = [0u8; 4];
        getrandom::fill(&mut bytes)?;
        let id = u32::from_le_bytes(bytes) & 0x7fff_ffff;
        if id != 0 {
            return Ok(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routed_messages_round_trip_as_json() {
        for kind in [
            RoutedKind::Deliver("{\"a\":1}".into()),
            RoutedKind::Standalone("{}".into()),
            RoutedKind::End,
            RoutedKind::Changed("{}".into()),
            RoutedKind::Legacy {
                frame: "{}".into(),
                subject: Some("alice".into()),
            },
        ] {
            let m = Routed {
                origin: 7,
                session: "s".into(),
                kind,
            };
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<Routed>(&json).unwrap(), m);
        }
    }

    #[test]
    fn stream_ids_name_their_instance() {
        let id = new_instance_id().unwrap();
        assert_ne!(id, 0);
        assert_eq!(stream_instance((u64::from(id) << 32) | 5), id);
        assert_eq!(stream_instance(3), 0);
    }
}
