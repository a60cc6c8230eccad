//! Where SSE events are kept so that a client can resume a stream with `Last-Event-ID`.
//!
//! Event ids are `<stream>-<sequence>`: unique within a session, and they name the stream
//! they belong to, so a resumption replays only that stream (the specification forbids
//! replaying another stream's messages).
//!
//! ```
//! use junction::transport::http::server::{EventId, EventStore, InMemoryEventStore};
//!
//! let store = InMemoryEventStore::new(100);
//! store.store("s", EventId { stream: 1, seq: 1 }, b"a".to_vec().into());
//! store.store("s", EventId { stream: 2, seq: 1 }, b"other stream".to_vec().into());
//! store.store("s", EventId { stream: 1, seq: 2 }, b"b".to_vec().into());
//! let missed = store.replay_after("s", EventId { stream: 1, seq: 1 });
//! assert_eq!(missed, vec![(EventId { stream: 1, seq: 2 }, b"b".to_vec().into())]);
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use bytes::Bytes;

use crate::sync::lock;

/// The id of one SSE event: its stream and its place in that stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The stream, unique within the session (0 is the standalone GET stream).
    pub stream: u64,
    /// The event's sequence number within its stream, from 0 (the priming event).
    pub seq: u64,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.stream, self.seq)
    }
}

/// A `Last-Event-ID` this server did not issue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an event id of this server (expected <stream>-<sequence>)")]
pub struct BadEventId(pub String);

impl FromStr for EventId {
    type Err = BadEventId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadEventId(s.to_owned());
        let (stream, seq) = s.split_once('-').ok_or_else(bad)?;
        Ok(EventId {
            stream: stream.parse().map_err(|_| bad())?,
            seq: seq.parse().map_err(|_| bad())?,
        })
    }
}

/// Keeps the events of every session for replay.
///
/// Calls are made while the session's routing lock is held, so that an event is either
/// replayed or delivered live, never both and never neither: keep them fast and non-blocking.
pub trait EventStore: Send + Sync + 'static {
    /// Records the encoded message `data` of event `id` of `session`.
    fn store(&self, session: &str, id: EventId, data: Bytes);
    /// The stored events of `after.stream` that follow `after`, oldest first.
    fn replay_after(&self, session: &str, after: EventId) -> Vec<(EventId, Bytes)>;
    /// Drops everything kept for `session` (it ended).
    fn forget(&self, session: &str);
}

/// The default store: the newest `capacity` events of each session, in memory.
#[derive(Debug)]
pub struct InMemoryEventStore {
    capacity: usize,
    sessions: Mutex<HashMap<String, VecDeque<(EventId, Bytes)>>>,
}

impl InMemoryEventStore {
    /// Keeps at most `capacity` events per session (the oldest go first).
    pub fn new(capacity: usize) -> Self {
        InMemoryEventStore {
            capacity: capacity.max(1),
            sessions: Mutex::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        InMemoryEventStore::new(1024)
    }
}

impl EventStore for InMemoryEventStore {
    fn store(&self, session: &str, id: EventId, data: Bytes) {
        let mut sessions = lock(&self.sessions);
        let events = sessions.entry(session.to_owned()).or_default();
        if events.len() == self.capacity {
            events.pop_front();
        }
        events.push_back((id, data));
    }

    fn replay_after(&self, session: &str, after: EventId) -> Vec<(EventId, Bytes)> {
        let sessions = lock(&self.sessions);
        let Some(events) = sessions.get(session) else {
            return Vec::new();
        };
        let missed: Vec<_> = events
            .iter()
            .filter(|(id, _)| id.stream == after.stream && id.seq > after.seq)
            .cloned()
            .collect();
        if missed.first().is_some_and(|(id, _)| id.seq > after.seq + 1) {
            tracing::warn!(
                session,
                stream = after.stream,
                "events after {after} were evicted from the event store before the client resumed"
            );
        }
        missed
    }

    fn forget(&self, session: &str) {
        lock(&self.sessions).remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_round_trip_and_foreign_ids_are_refused() {
        let id = EventId { stream: 3, seq: 14 };
        assert_eq!(id.to_string().parse::<EventId>(), Ok(id));
        assert!("event-1".parse::<EventId>().is_err());
        assert!("1-".parse::<EventId>().is_err());
    }

    #[test]
    fn capacity_evicts_the_oldest_and_forget_frees_the_session() {
        let store = InMemoryEventStore::new(2);
        for seq in 0..3 {
            store.store("s", EventId { stream: 1, seq }, Bytes::from_static(b"x"));
        }
        let ids: Vec<_> = store
            .replay_after("s", EventId { stream: 1, seq: 0 })
            .into_iter()
            .map(|(id, _)| id.seq)
            .collect();
        assert_eq!(ids, vec![1, 2]);
        store.forget("s");
        assert!(store
            .replay_after("s", EventId { stream: 1, seq: 0 })
            .is_empty());
    }
}
