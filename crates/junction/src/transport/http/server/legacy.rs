//! The 2024-11-05 HTTP+SSE transport, kept for old clients.
//!
//! `GET /sse` opens a session: its first event is `endpoint`, whose data is the URI to POST
//! messages to (`/message?sessionId=<id>`); every message the session sends follows as a
//! `message` event. `POST /message?sessionId=<id>` takes one message and answers `202`. The
//! session ends when the client closes the event stream, or stops reading it for longer than
//! [`super::HttpServer::max_queued`] bytes of events (this transport cannot resume).
//!
//! With a [`SessionStore`](super::SessionStore) shared by instances, a session's stream
//! stays on the instance that opened it, which records in the store that it holds it
//! (renewed while it does, so a dead instance's sessions are soon unknown), and any instance
//! takes its POSTs: it publishes each message on the routing channel before answering `202`,
//! and the holder hands it to the session. The holder publishes those POSTed to it too, so
//! that the messages reach the session in the order the instances accepted them.
//!
//! Under bearer authorization a session belongs to the subject that opened it, as a
//! Streamable HTTP session does: another subject's POST to it is refused (`403`), on the
//! instance holding it; one POSTed elsewhere is answered `202` before the holder sees it,
//! so the holder drops it (with a warning) instead.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use junction_protocol::{ErrorCode, Message};
use tokio::sync::mpsc;

use super::endpoint::sse_response;
use super::guard::{self, refuse, Refusal, TRANSPORT_ERROR};
use super::session_store::{Routed, RoutedKind, BUSY_LEASE};
use super::{new_session_id, SessionControl, Shared};
use crate::sync::lock;
use crate::transport::http::sse::Event;
use crate::transport::queue::{self, SendError};
use crate::transport::{outbound_queue, Connection, Inbound, OutboundReceiver, INBOUND_QUEUE};

/// The server's handle on one legacy session: where POSTed messages go.
pub(super) struct LegacySession {
    inbound: mpsc::Sender<Inbound>,
    /// Who opened it, under bearer authorization.
    subject: Option<String>,
}

/// `GET /sse`: opens a session.
pub(super) async fn open(State(shared): State<Arc<Shared>>) -> Response {
    let id = match new_session_id() {
        Ok(id) => id,
        Err(e) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
                format!("Internal error: no random session id available: {e}"),
            )
            .into_response()
        }
    };
    let (sse_tx, sse_rx) = queue::queue(shared.config.max_queued);
    let endpoint = Event {
        event: Some("endpoint".to_owned()),
        data: format!("{}?sessionId={id}", shared.config.message_path),
        ..Event::default()
    };
    let _ = sse_tx.send(Bytes::from(endpoint.encode()));
    // Unbounded for the reason the Streamable HTTP session's is: `forward` drains it into
    // the stream's bounded queue without waiting.
    let (out_tx, out_rx) = outbound_queue(usize::MAX);
    let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
    let session = LegacySession {
        inbound: in_tx,
        subject: super::cluster::current_subject(),
    };
    lock(&shared.legacy).insert(id.clone(), session);
    if let Some(cluster) = &shared.cluster {
        // Recorded before the endpoint event leaves: the client may POST anywhere at once.
        let held = [id.clone()];
        if let Err(e) = cluster
            .store
            .legacy_held(cluster.instance, &held, BUSY_LEASE)
            .await
        {
            tracing::error!(session = %id, error = %e, "could not share a legacy SSE session; its messages must reach this instance");
        }
    }
    (shared.serve)(Connection::new(out_tx, in_rx), SessionControl::none());
    tokio::spawn(forward(shared.clone(), id, out_rx, sse_tx));
    sse_response(sse_rx)
}

/// Writes every outgoing message on the stream; ends the session when the stream closes.
async fn forward(
    shared: Arc<Shared>,
    id: String,
    mut outgoing: OutboundReceiver,
    sse: queue::Sender<Bytes>,
) {
    loop {
        tokio::select! {
            out = outgoing.recv() => {
                let Some(out) = out else { break };
                let event = Event {
                    event: Some("message".to_owned()),
                    data: String::from_utf8_lossy(&out.message.encode()).into_owned(),
                    ..Event::default()
                };
                match sse.send(Bytes::from(event.encode())) {
                    Ok(()) => {}
                    Err(SendError::Full(_)) => {
                        tracing::warn!(session = %id, "ending a legacy SSE session: its client stopped reading and the events waiting for it passed the limit");
                        break;
                    }
                    Err(SendError::Closed(_)) => break,
                }
            }
            _ = sse.closed() => break,
        }
    }
    tracing::debug!(session = %id, "legacy SSE session ended");
    // Dropping the inbound sender closes the served session's connection.
    lock(&shared.legacy).remove(&id);
    if let Some(cluster) = &shared.cluster {
        if let Err(e) = cluster.store.legacy_ended(&id).await {
            tracing::error!(session = %id, error = %e, "could not forget a legacy SSE session in the session store; it expires on its own");
        }
    }
}

/// The sessions whose stream is held here (renewed in the store while they are).
pub(super) fn held(shared: &Shared) -> Vec<String> {
    lock(&shared.legacy).keys().cloned().collect()
}

/// Hands a message `subject` POSTed to any instance to legacy session `id`, if its stream is
/// here and `subject` opened it.
pub(super) async fn routed(shared: &Shared, id: &str, frame: String, subject: Option<String>) {
    let inbound = match lock(&shared.legacy).get(id) {
        Some(session) if session.subject == subject => session.inbound.clone(),
        Some(_) => {
            tracing::warn!(session = id, "dropped a legacy message POSTed elsewhere by a subject that did not open the session");
            return;
        }
        None => return,
    };
    let _ = inbound.send(Inbound::Frame(frame.into_bytes())).await;
}

fn session_id(uri: &Uri) -> Option<&str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
}

/// `POST /message?sessionId=…`: one message for a legacy session.
pub(super) async fn message(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    message_inner(&shared, &uri, &headers, body)
        .await
        .map_or_else(IntoResponse::into_response, |()| {
            let mut response = Response::new(Body::from("Accepted"));
            *response.status_mut() = StatusCode::ACCEPTED;
            response
        })
}

async fn message_inner(
    shared: &Shared,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
) -> Result<(), Refusal> {
    guard::check_content_type(headers)?;
    let id = session_id(uri).ok_or_else(|| {
        refuse(
            StatusCode::BAD_REQUEST,
            TRANSPORT_ERROR,
            "Bad Request: the sessionId query parameter is missing; use the endpoint the SSE stream announced",
        )
    })?;
    let ended = || {
        refuse(
            StatusCode::NOT_FOUND,
            TRANSPORT_ERROR,
            "Not Found: this session does not exist or has ended; open a new SSE stream",
        )
    };
    let subject = super::cluster::current_subject();
    let inbound = match lock(&shared.legacy).get(id) {
        Some(session) if session.subject != subject => {
            return Err(super::cluster::wrong_subject());
        }
        session => session.map(|s| s.inbound.clone()),
    };
    if let Some(cluster) = &shared.cluster {
        if inbound.is_none()
            && !cluster
                .store
                .legacy_exists(id)
                .await
                .map_err(super::cluster::unavailable)?
        {
            return Err(ended());
        }
    } else if inbound.is_none() {
        return Err(ended());
    }
    let frame = guard::read_body(body, shared.config.max_body).await?;
    Message::decode(&frame)
        .map_err(|e| Refusal::with_id(StatusCode::BAD_REQUEST, e.id, e.error))?;
    if let Some(cluster) = &shared.cluster {
        let routed = Routed {
            origin: cluster.instance,
            session: id.to_owned(),
            kind: RoutedKind::Legacy {
                frame: String::from_utf8_lossy(&frame).into_owned(),
                subject,
            },
        };
        // Published before the answer, so that the client's next message, wherever it
        // is POSTed, is published after this one.
        match cluster.store.publish(&routed).await {
            Ok(()) => return Ok(()),
            Err(e) if inbound.is_some() => {
                tracing::error!(session = id, error = %e, "could not route a legacy message through the session store; handing it over here");
            }
            Err(e) => return Err(super::cluster::unavailable(e)),
        }
    }
    let Some(inbound) = inbound else {
        return Err(ended());
    };
    inbound
        .send(Inbound::Frame(frame.to_vec()))
        .await
        .map_err(|_| ended())
}
