//! What the endpoint does when instances share sessions through a
//! [`SessionStore`](super::SessionStore): saving and restoring records, routing messages
//! between instances, following another instance's stream. The design is in
//! [`super::session_store`]'s documentation.

use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::http::StatusCode;
use bytes::Bytes;
use junction_protocol::lifecycle::InitializeParams;
use junction_protocol::logging::LoggingLevel;
use junction_protocol::{ErrorCode, Message, Notification, ProtocolVersion, Request};
use tokio::sync::mpsc;

use super::endpoint::settings;
use super::event_store::EventId;
use super::guard::{refuse, Refusal, TRANSPORT_ERROR};
use super::session::{EventReceiver, HttpSession, INITIALIZED};
use super::session_store::{
    stream_instance, RecordChange, Routed, RoutedKind, SessionRecord, BUSY_LEASE,
};
use super::Shared;
use crate::sync::lock;
use crate::transport::http::sse;
use crate::transport::{RestoredSession, SharedChange, TransportEvent};

/// The notification of a resource's change, the one change whose audience is its subscribers.
const RESOURCE_UPDATED: &str = "notifications/resources/updated";

/// How long an instance counts as alive after its last heartbeat.
const HEARTBEAT_TTL: Duration = Duration::from_secs(6);

/// How long one read of another instance's stream waits for new events before checking
/// that the instance is still alive.
const FOLLOW_WAIT: Duration = Duration::from_secs(1);

/// Starts the tasks of a shared store: publishing, receiving, heartbeat (with the report of
/// which sessions are busy here).
pub(super) fn start(shared: &Arc<Shared>, publish: mpsc::UnboundedReceiver<Routed>) {
    let Some(cluster) = &shared.cluster else {
        return;
    };
    let store = cluster.store.clone();
    let instance = cluster.instance;
    let mut tasks = lock(&shared.tasks);
    tasks.push(tokio::spawn(publish_all(store.clone(), publish)));
    tasks.push(tokio::spawn(receive(
        Arc::downgrade(shared),
        store.listen(),
    )));
    let weak = Arc::downgrade(shared);
    tasks.push(tokio::spawn(async move {
        let mut failing = false;
        let mut activity = Activity::default();
        loop {
            let Some((sessions, legacy)) = weak
                .upgrade()
                .map(|shared| (shared.activity(), super::legacy::held(&shared)))
            else {
                return;
            };
            let reported = activity.report(sessions, &*store).await;
            let legacy = store.legacy_held(instance, &legacy, BUSY_LEASE).await;
            let beat = store.heartbeat(instance, HEARTBEAT_TTL).await;
            match reported.and(legacy).and(beat) {
                Ok(()) if failing => {
                    tracing::info!("the session store is reachable again");
                    failing = false;
                }
                Ok(()) => {}
                Err(e) if !failing => {
                    tracing::error!(error = %e, "the session store is unreachable; sessions of other instances cannot be served here until it is back");
                    failing = true;
                }
                Err(_) => {}
            }
            tokio::time::sleep(HEARTBEAT_TTL / 3).await;
        }
    }));
}

/// What an instance last reported of its sessions' business
/// ([`SessionStore::activity`](super::SessionStore::activity)).
#[derive(Default)]
struct Activity {
    /// When the last report was made.
    last: Option<std::time::Instant>,
    /// The sessions it reported busy.
    busy: std::collections::HashSet<String>,
}

impl Activity {
    /// Reports the sessions held here that are busy, and those that settled since the last
    /// report (busy then, or active since, and idle now).
    /// `sessions`: each session held here, with when it became idle (`None`: busy).
    async fn report(
        &mut self,
        sessions: Vec<(String, Option<std::time::Instant>)>,
        store: &dyn super::SessionStore,
    ) -> Result<(), super::StoreError> {
        let now = std::time::Instant::now();
        let mut busy = Vec::new();
        let mut settled = Vec::new();
        for (id, idle_since) in sessions {
            match idle_since {
                None => busy.push(id),
                Some(since)
                    if self.busy.contains(&id) || self.last.is_some_and(|last| since >= last) =>
                {
                    settled.push(id)
                }
                Some(_) => {}
            }
        }
        self.last = Some(now);
        self.busy = busy.iter().cloned().collect();
        store.activity(&busy, &settled, BUSY_LEASE).await
    }
}

/// Makes room for a new session under the cap over all instances
/// ([`SessionStore::admit`](super::SessionStore::admit)): refused with `503` when every live
/// session is busy. A store that cannot be reached admits it (the session is then this
/// instance's only).
pub(super) async fn admit(shared: &Shared) -> Result<(), Refusal> {
    let Some(cluster) = &shared.cluster else {
        return Ok(());
    };
    match cluster.store.admit(shared.config.idle_timeout).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(super::all_busy()),
        Err(e) => {
            tracing::error!(error = %e, "cannot check the session cap over all instances; admitting the session");
            Ok(())
        }
    }
}

async fn publish_all(store: Arc<dyn super::SessionStore>, mut rx: mpsc::UnboundedReceiver<Routed>) {
    while let Some(message) = rx.recv().await {
        if let Err(e) = store.publish(&message).await {
            tracing::error!(error = %e, session = %message.session, "could not route a message to the other instances");
        }
    }
}

/// Takes what other instances publish for the sessions held here.
async fn receive(shared: Weak<Shared>, mut rx: mpsc::Receiver<Routed>) {
    while let Some(routed) = rx.recv().await {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let RoutedKind::Changed(frame) = &routed.kind {
            changed(&shared, frame).await;
            continue;
        }
        if let RoutedKind::Legacy { frame, subject } = routed.kind {
            super::legacy::routed(&shared, &routed.session, frame, subject).await;
            continue;
        }
        let me = shared.cluster.as_ref().map(|c| c.instance);
        if Some(routed.origin) == me {
            continue;
        }
        let Some(session) = shared.session(&routed.session) else {
            continue;
        };
        match routed.kind {
            RoutedKind::Deliver(frame) => {
                let Ok(message) = Message::decode(frame.as_bytes()) else {
                    continue;
                };
                let mine = match &message {
                    Message::Response(r) => session.takes_response(r),
                    _ => true,
                };
                if mine {
                    session.deliver(message).await;
                }
            }
            RoutedKind::Standalone(frame) => session.push_standalone(Bytes::from(frame)),
            RoutedKind::End => {
                if let Some(session) = shared.remove_session(&routed.session) {
                    session.close();
                }
            }
            RoutedKind::Changed(_) | RoutedKind::Legacy { .. } => {}
        }
    }
}

/// Hands a change notification published by any instance to the server's hearers (its
/// 2026-07-28 listens, [`super::SharedChanges::hear`]) and to the sessions whose standalone
/// stream is open here, each with the subscriptions of its shared record when the change is
/// a resource's (a subscription may have been taken by another instance).
async fn changed(shared: &Shared, frame: &str) {
    let Ok(Message::Notification(notification)) = Message::decode(frame.as_bytes()) else {
        tracing::warn!("ignoring a published change that is not a notification");
        return;
    };
    let Some(cluster) = &shared.cluster else {
        return;
    };
    cluster.changes.heard(&notification);
    let about_resource = notification.method == RESOURCE_UPDATED;
    let holders: Vec<Arc<HttpSession>> = shared.sessions_holding_standalone();
    for session in holders {
        let subscriptions = if about_resource {
            match cluster.store.load(&session.id).await {
                Ok(Some(record)) => Some(record.subscriptions),
                Ok(None) => continue,
                Err(e) => {
                    tracing::error!(session = %session.id, error = %e, "cannot read a session's subscriptions; using those it had here");
                    None
                }
            }
        } else {
            None
        };
        let change = SharedChange {
            notification: notification.clone(),
            subscriptions,
        };
        session
            .event(TransportEvent::Changed(Box::new(change)))
            .await;
    }
}

/// Queues `message` for the other instances.
pub(super) fn publish(shared: &Shared, session: &str, kind: RoutedKind) {
    if let Some(cluster) = &shared.cluster {
        let _ = cluster.publish.send(Routed {
            origin: cluster.instance,
            session: session.to_owned(),
            kind,
        });
    }
}

/// The refusal of a request that needs the session store while it cannot be reached.
pub(super) fn unavailable(e: impl std::fmt::Display) -> Refusal {
    tracing::error!(error = %e, "the session store is unreachable");
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        "Service Unavailable: the session store cannot be reached; retry later",
    )
    .retry_after(1)
}

/// The subject of the current request, under bearer authorization.
pub(super) fn current_subject() -> Option<String> {
    crate::auth::resource::Identity::current().map(|i| i.subject)
}

pub(super) fn wrong_subject() -> Refusal {
    tracing::warn!("a session id was presented by a subject that did not open it");
    refuse(
        StatusCode::FORBIDDEN,
        ErrorCode::INVALID_REQUEST,
        "this session belongs to another user",
    )
}

/// The shared record of session `id`, if there is one; refused when it belongs to another
/// subject than the current request's.
async fn shared_record(shared: &Shared, id: &str) -> Result<Option<SessionRecord>, Refusal> {
    let Some(cluster) = &shared.cluster else {
        return Ok(None);
    };
    let Some(record) = cluster.store.load(id).await.map_err(unavailable)? else {
        return Ok(None);
    };
    if record.subject != current_subject() {
        return Err(wrong_subject());
    }
    Ok(Some(record))
}

/// Restores session `id` from the shared store, if it is there: `Ok(None)` when it is not
/// (or there is no store).
pub(super) async fn restore(
    shared: &Arc<Shared>,
    id: &str,
) -> Result<Option<Arc<HttpSession>>, Refusal> {
    let Some(record) = shared_record(shared, id).await? else {
        return Ok(None);
    };
    let initialize: InitializeParams = match serde_json::from_str(&record.initialize) {
        Ok(params) => params,
        Err(e) => {
            tracing::warn!(session = id, error = %e, "a shared session record cannot be read; treating the session as unknown");
            return Ok(None);
        }
    };
    let version = ProtocolVersion::negotiate(&initialize.protocol_version);
    let log_level = record
        .log_level
        .as_deref()
        .and_then(|l| serde_json::from_value::<LoggingLevel>(l.into()).ok());
    let session = HttpSession::start(
        id.to_owned(),
        settings(shared, true),
        shared.store.clone(),
        shared.cluster.clone(),
        &*shared.serve,
    );
    session.restored(version);
    let restored = RestoredSession {
        initialize,
        log_level,
        subscriptions: record.subscriptions,
    };
    if !session
        .event(TransportEvent::Restored(Box::new(restored)))
        .await
    {
        session.close();
        return Ok(None);
    }
    tracing::debug!(
        session = id,
        "restored a session opened on another instance"
    );
    Ok(Some(shared.adopt_session(session)?))
}

/// Routes a notification or response POSTed for session `id`, which this instance does not
/// hold, to the instances that do, without restoring a copy here: the record is read only to
/// refuse another subject (`403`) or an unknown session (`Ok(false)`).
pub(super) async fn route_only(
    shared: &Shared,
    id: &str,
    message: &Message,
    frame: &[u8],
) -> Result<bool, Refusal> {
    if shared_record(shared, id).await?.is_none() {
        return Ok(false);
    }
    if matches!(message, Message::Notification(n) if n.method == INITIALIZED) {
        initialized(shared, id).await;
    }
    if let Ok(text) = std::str::from_utf8(frame) {
        publish(shared, id, RoutedKind::Deliver(text.to_owned()));
    }
    Ok(true)
}

/// Saves the record of a session this instance has just initialized.
pub(super) async fn created(shared: &Shared, session: &HttpSession, initialize: String) {
    let Some(cluster) = &shared.cluster else {
        return;
    };
    let record = SessionRecord {
        initialize,
        subject: session.subject.clone(),
        log_level: None,
        subscriptions: Vec::new(),
        initialized: false,
    };
    if let Err(e) = cluster
        .store
        .create(&session.id, &record, shared.config.idle_timeout)
        .await
    {
        tracing::error!(session = %session.id, error = %e, "could not share a new session; it is served by this instance only");
    }
}

/// Records in the shared record that the client sent `notifications/initialized`, before its
/// POST is answered.
pub(super) async fn initialized(shared: &Shared, id: &str) {
    let Some(cluster) = &shared.cluster else {
        return;
    };
    let ttl = shared.config.idle_timeout;
    if let Err(e) = cluster
        .store
        .update(id, RecordChange::Initialized, ttl)
        .await
    {
        tracing::error!(session = id, error = %e, "could not record notifications/initialized in the shared record; a request reaching another instance first may be refused");
    }
}

/// A request reached the instance that answered `initialize` before the routed
/// `notifications/initialized`: hands that notification to the served session first if the
/// shared record has it, so the request is served in the order the client sent them.
pub(super) async fn catch_up_initialized(shared: &Shared, session: &HttpSession) {
    let Some(cluster) = &shared.cluster else {
        return;
    };
    match cluster.store.load(&session.id).await {
        Ok(Some(record)) if record.initialized => {
            let initialized = Message::Notification(Notification {
                method: INITIALIZED.to_owned(),
                params: None,
            });
            session.deliver(initialized).await;
        }
        Ok(_) => {}
        Err(e) => {
            tracing::error!(session = %session.id, error = %e, "cannot read whether the client sent notifications/initialized to another instance");
        }
    }
}

/// Records what a request changes in the shared record (and renews its expiry), without
/// making the request wait.
pub(super) fn requested(shared: &Shared, session: &str, request: &Request) {
    let Some(cluster) = &shared.cluster else {
        return;
    };
    #[derive(serde::Deserialize)]
    struct Level {
        level: String,
    }
    #[derive(serde::Deserialize)]
    struct Uri {
        uri: String,
    }
    fn params<T: serde::de::DeserializeOwned>(request: &Request) -> Option<T> {
        serde_json::from_str(request.params.as_deref()?.get()).ok()
    }
    let change = match request.method.as_str() {
        "logging/setLevel" => params::<Level>(request).map(|p| RecordChange::LogLevel(p.level)),
        "resources/subscribe" => params::<Uri>(request).map(|p| RecordChange::Subscribe(p.uri)),
        "resources/unsubscribe" => params::<Uri>(request).map(|p| RecordChange::Unsubscribe(p.uri)),
        _ => None,
    }
    .unwrap_or(RecordChange::Touch);
    let store = cluster.store.clone();
    let id = session.to_owned();
    let ttl = shared.config.idle_timeout;
    tokio::spawn(async move {
        if let Err(e) = store.update(&id, change, ttl).await {
            tracing::error!(session = %id, error = %e, "could not update a shared session record");
        }
    });
}

/// The client ended the session: forget it everywhere.
pub(super) async fn ended(shared: &Shared, id: &str) {
    let Some(cluster) = &shared.cluster else {
        return;
    };
    publish(shared, id, RoutedKind::End);
    if let Err(e) = cluster.store.remove(id).await {
        tracing::error!(session = id, error = %e, "could not delete a shared session record; it expires on its own");
    }
}

/// Whether a `Last-Event-ID` names a stream another instance holds.
pub(super) fn is_foreign(shared: &Shared, last: EventId) -> bool {
    shared
        .cluster
        .as_ref()
        .is_some_and(|c| stream_instance(last.stream) != c.instance)
}

/// Resumes another instance's stream: replays it from the store, then follows it until its
/// response (or, if its instance stopped, fails its request with an error response).
pub(super) fn follow(shared: &Arc<Shared>, session: &HttpSession, last: EventId) -> EventReceiver {
    let (tx, rx) = session.event_queue();
    let Some(cluster) = shared.cluster.clone() else {
        return rx;
    };
    let id = session.id.clone();
    tokio::spawn(async move {
        let store = cluster.store;
        let owner = stream_instance(last.stream);
        let request = match store.stream_request(&id, last.stream).await {
            Ok(request) => request,
            Err(e) => {
                tracing::error!(session = %id, error = %e, "cannot resume a stream: the session store is unreachable");
                return;
            }
        };
        if request.is_none() && last.stream as u32 != 0 {
            // Not the standalone stream (its instance's id with 0 below), and the store no
            // longer knows its request: the session's bounds or the event ttl dropped the stream.
            tracing::info!(session = %id, stream = last.stream, "a resumed stream is no longer in the session store; ending it");
            return;
        }
        let mut after = last;
        while !tx.is_closed() {
            let events = match store.read_after(&id, after, FOLLOW_WAIT).await {
                Ok(events) => events.events,
                Err(e) => {
                    tracing::error!(session = %id, error = %e, "lost the session store while following a stream");
                    tokio::time::sleep(FOLLOW_WAIT).await;
                    continue;
                }
            };
            let quiet = events.is_empty();
            for (event, data) in events {
                after = event;
                let done = matches!(Message::decode(&data), Ok(Message::Response(_)));
                let encoded = sse::encode_message(Some(&event.text()), &data);
                if tx.send(Bytes::from(encoded)).is_err() || done {
                    return;
                }
            }
            if quiet && !store.alive(owner).await.unwrap_or(true) {
                let Some(request) = &request else {
                    // A standalone stream of a stopped instance: nothing more will come.
                    return;
                };
                tracing::info!(session = %id, stream = last.stream, "the instance serving a resumed request stopped; failing the request");
                let error = junction_protocol::ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    "the server instance serving this request stopped before answering; send the request again",
                );
                let body = serde_json::json!({ "jsonrpc": "2.0", "id": request, "error": error });
                let event = EventId {
                    stream: after.stream,
                    seq: after.seq + 1,
                };
                let encoded = sse::encode_message(Some(&event.text()), body.to_string().as_bytes());
                let _ = tx.send(Bytes::from(encoded));
                return;
            }
        }
    });
    rx
}
