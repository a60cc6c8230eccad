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

impl EventId {
    /// The id as the client sees it, `<stream>-<sequence>`. Written by hand: every event
    /// carries one, and the formatting machinery costs more than the digits.
    pub fn text(self) -> String {
        let mut text = String::with_capacity(24);
        push_decimal(&mut text, self.stream);
        text.push('-');
        push_decimal(&mut text, self.seq);
        text
    }
}

fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
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

/// The default store: the newest events of each session, in memory, bounded three ways.
///
/// Each session keeps at most `capacity` events and [`InMemoryEventStore::max_session_bytes`]
/// bytes (the oldest go first), and all sessions together at most
/// [`InMemoryEventStore::max_total_bytes`] (the oldest events of the largest session go
/// first). The newest event of a session is always kept, whatever its size, so the response
/// a client is most likely to resume for is there. An evicted event cannot be replayed; the
/// store warns when a resumption asks for one.
#[derive(Debug)]
pub struct InMemoryEventStore {
    capacity: usize,
    max_session_bytes: usize,
    max_total_bytes: usize,
    state: Mutex<Stored>,
}

#[derive(Debug, Default)]
struct Stored {
    sessions: HashMap<String, SessionEvents>,
    total_bytes: usize,
}

#[derive(Debug, Default)]
struct SessionEvents {
    events: VecDeque<(EventId, Bytes)>,
    bytes: usize,
}

impl SessionEvents {
    fn pop_oldest(&mut self) -> usize {
        match self.events.pop_front() {
            Some((_, data)) => {
                self.bytes -= data.len();
                data.len()
            }
            None => 0,
        }
    }
}

/// How many bytes of events a session keeps by default: 8 MiB.
pub const DEFAULT_SESSION_EVENT_BYTES: usize = 8 * 1024 * 1024;

/// How many bytes of events all sessions keep together by default: 64 MiB.
pub const DEFAULT_TOTAL_EVENT_BYTES: usize = 64 * 1024 * 1024;

impl InMemoryEventStore {
    /// Keeps at most `capacity` events per session (the oldest go first), and the default
    /// byte limits.
    pub fn new(capacity: usize) -> Self {
        InMemoryEventStore {
            capacity: capacity.max(1),
            max_session_bytes: DEFAULT_SESSION_EVENT_BYTES,
            max_total_bytes: DEFAULT_TOTAL_EVENT_BYTES,
            state: Mutex::new(Stored::default()),
        }
    }

    /// The most bytes one session's events may hold ([`DEFAULT_SESSION_EVENT_BYTES`]).
    pub fn max_session_bytes(mut self, bytes: usize) -> Self {
        self.max_session_bytes = bytes;
        self
    }

    /// The most bytes all sessions' events may hold together ([`DEFAULT_TOTAL_EVENT_BYTES`]).
    pub fn max_total_bytes(mut self, bytes: usize) -> Self {
        self.max_total_bytes = bytes;
        self
    }

    /// How many bytes of events are kept now, over all sessions.
    pub fn stored_bytes(&self) -> usize {
        lock(&self.state).total_bytes
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        InMemoryEventStore::new(1024)
    }
}

impl EventStore for InMemoryEventStore {
    fn store(&self, session: &str, id: EventId, data: Bytes) {
        let mut state = lock(&self.state);
        let Stored {
            sessions,
            total_bytes,
        } = &mut *state;
        let events = sessions.entry(session.to_owned()).or_default();
        *total_bytes += data.len();
        events.bytes += data.len();
        events.events.push_back((id, data));
        while events.events.len() > 1
            && (events.events.len() > self.capacity || events.bytes > self.max_session_bytes)
        {
            *total_bytes -= events.pop_oldest();
        }
        while *total_bytes > self.max_total_bytes {
            let largest = sessions
                .values_mut()
                .filter(|s| s.events.len() > 1)
                .max_by_key(|s| s.bytes);
            match largest {
                Some(largest) => *total_bytes -= largest.pop_oldest(),
                None => break,
            }
        }
    }

    fn replay_after(&self, session: &str, after: EventId) -> Vec<(EventId, Bytes)> {
        let state = lock(&self.state);
        let Some(events) = state.sessions.get(session) else {
            return Vec::new();
        };
        let missed: Vec<_> = events
            .events
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
        let mut state = lock(&self.state);
        if let Some(events) = state.sessions.remove(session) {
            state.total_bytes -= events.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_round_trip_and_foreign_ids_are_refused() {
        let id = EventId { stream: 3, seq: 14 };
        assert_eq!(id.to_string().parse::<EventId>(), Ok(id));
        for (stream, seq, text) in [
            (0, 0, "0-0"),
            (7 << 32, 10, "30064771072-10"),
            (u64::MAX, 9, "18446744073709551615-9"),
        ] {
            assert_eq!(EventId { stream, seq }.text(), text);
            assert_eq!(text.parse::<EventId>(), Ok(EventId { stream, seq }));
        }
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
        assert_eq!(store.stored_bytes(), 0);
    }

    /// The attack: 300 answers of 1 MiB in one session kept 549 MB.
    #[test]
    fn big_answers_are_bounded_by_bytes_per_session_and_in_total() {
        let store = InMemoryEventStore::default();
        let mib = Bytes::from(vec![b'x'; 1024 * 1024]);
        for seq in 0..300 {
            store.store("big", EventId { stream: 1, seq }, mib.clone());
        }
        assert!(store.stored_bytes() <= DEFAULT_SESSION_EVENT_BYTES);
        let kept = store.replay_after("big", EventId { stream: 1, seq: 0 });
        assert_eq!(kept.last().map(|(id, _)| id.seq), Some(299));

        let store = InMemoryEventStore::new(1024)
            .max_session_bytes(4096)
            .max_total_bytes(10_000);
        for session in 0..10 {
            for seq in 0..10 {
                let id = EventId { stream: 1, seq };
                store.store(&session.to_string(), id, Bytes::from(vec![0; 1000]));
            }
        }
        assert!(store.stored_bytes() <= 10_000);
        // Every session still has its newest event.
        for session in 0..10 {
            let kept = store.replay_after(&session.to_string(), EventId { stream: 1, seq: 8 });
            assert_eq!(kept.len(), 1, "session {session}");
        }
        // One event larger than the per-session limit is kept alone.
        store.store(
            "huge",
            EventId { stream: 2, seq: 1 },
            Bytes::from(vec![0; 8000]),
        );
        assert_eq!(
            store
                .replay_after("huge", EventId { stream: 2, seq: 0 })
                .len(),
            1
        );
    }
}
