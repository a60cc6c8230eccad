//! The handlers of the MCP endpoint: POST, GET and DELETE.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use junction_protocol::lifecycle::Initialize;
use junction_protocol::method::Request as _;
use junction_protocol::{ErrorCode, Message, ProtocolVersion, RequestId};

use super::guard::{self, refuse, Refusal, TRANSPORT_ERROR};
use super::session::{
    EventReceiver, HttpSession, NoReply, OpenError, Reply, SessionSettings, SseBody, INITIALIZED,
};
use super::session_store::RoutedKind;
use super::{cluster, new_session_id, EventId, ResponseMode, Shared};
use crate::transport::http::names;
use crate::transport::TransportEvent;

/// An SSE response over `rx`, sending each event as soon as it comes.
pub(super) fn sse_response(rx: EventReceiver) -> Response {
    body_response(SseBody::new(rx))
}

/// An SSE response over `rx`, a stream of `session`: with a shared store, each event is sent
/// once the store has it.
fn session_sse(session: &HttpSession, rx: EventReceiver) -> Response {
    body_response(SseBody::durable(rx, session.durable_store()))
}

fn body_response(body: SseBody) -> Response {
    let mut response = Response::new(Body::new(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

fn missing_session() -> Refusal {
    refuse(
        StatusCode::BAD_REQUEST,
        TRANSPORT_ERROR,
        "Bad Request: no MCP-Session-Id header; send the id returned with the initialize result, or initialize first",
    )
}

fn unknown_session() -> Refusal {
    refuse(
        StatusCode::NOT_FOUND,
        TRANSPORT_ERROR,
        "Not Found: this session does not exist or has ended; start a new session with initialize",
    )
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(names::SESSION_ID).and_then(|v| v.to_str().ok())
}

/// Finds the session a request names: held here, or restored from the shared store.
async fn find_session(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
) -> Result<Arc<HttpSession>, Refusal> {
    let id = session_header(headers).ok_or_else(missing_session)?;
    let session = match shared.session(id) {
        Some(session) => {
            // Bearer authorization checks the subject of the sessions opened here; one
            // restored from the store was checked against its record, and is checked here.
            if shared.cluster.is_some() && session.subject != cluster::current_subject() {
                return Err(cluster::wrong_subject());
            }
            session
        }
        None => cluster::restore(shared, id)
            .await?
            .ok_or_else(unknown_session)?,
    };
    session.touch();
    Ok(session)
}

pub(super) fn settings(shared: &Shared, resumable: bool) -> SessionSettings {
    SessionSettings {
        retry: shared.config.retry,
        standalone_backlog: shared.config.standalone_backlog,
        max_queued: shared.config.max_queued,
        resumable,
        changes: shared.cluster.as_ref().map(|c| c.changes.clone()),
    }
}

/// `POST`: one message from the client. It takes the whole request, whose headers are
/// then borrowed: the `HeaderMap` extractor would copy them for every message.
pub(super) async fn post(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    post_inner(&shared, &parts.headers, body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

async fn post_inner(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, Refusal> {
    guard::check_post_accept(headers)?;
    guard::check_content_type(headers)?;
    let frame = guard::read_body(body, shared.config.max_body).await?;
    let message = Message::decode(&frame)
        .map_err(|e| Refusal::with_id(StatusCode::BAD_REQUEST, e.id, e.error))?;
    // Read after the body, so that the refusal names the request it answers.
    if let Err(requested) = guard::header_version(headers) {
        let id = match &message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        return Err(guard::unsupported_version(id, &requested));
    }
    let revision_2026 = headers
        .get(names::PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        == Some(ProtocolVersion::V2026_07_28.as_str());
    if session_header(headers).is_none() {
        if let Message::Request(request) = &message {
            if let Some(envelope) = super::stateless::envelope_if_2026(request, revision_2026) {
                super::stateless::admit(headers, request, envelope)?;
                let id = request.id.clone();
                return super::stateless::serve(shared, headers, id, message).await;
            }
        } else if revision_2026 {
            // 2026-07-28 has no session to deliver to; a client cancels by closing its stream.
            return Ok(empty(StatusCode::ACCEPTED));
        }
    }
    if shared.config.sessionless {
        return sessionless(shared, headers, message).await;
    }
    let request = match &message {
        Message::Request(r) => Some((r.id.clone(), r.method == "initialize")),
        _ => None,
    };
    let Some((id, is_initialize)) = request else {
        if let Some(session_id) = session_header(headers) {
            if shared.cluster.is_some() && shared.session(session_id).is_none() {
                return match cluster::route_only(shared, session_id, &message, &frame).await? {
                    true => Ok(empty(StatusCode::ACCEPTED)),
                    false => Err(unknown_session()),
                };
            }
        }
        let session = find_session(shared, headers).await?;
        if matches!(&message, Message::Notification(n) if n.method == INITIALIZED) {
            // Recorded before it is answered: the client's next request may reach the
            // instance holding the session before the routed notification does.
            cluster::initialized(shared, &session.id).await;
        }
        if shared.cluster.is_some() {
            // A response is for the instance whose server asked; a notification for every
            // instance holding the session.
            let here = match &message {
                Message::Response(r) => session.takes_response(r),
                _ => true,
            };
            let elsewhere = !here || !matches!(message, Message::Response(_));
            if elsewhere {
                if let Ok(text) = std::str::from_utf8(&frame) {
                    cluster::publish(shared, &session.id, RoutedKind::Deliver(text.to_owned()));
                }
            }
            if !here {
                return Ok(empty(StatusCode::ACCEPTED));
            }
        }
        if !session.deliver(message).await {
            return Err(unknown_session());
        }
        return Ok(empty(StatusCode::ACCEPTED));
    };
    let initialize_params = match &message {
        Message::Request(r) if is_initialize && shared.cluster.is_some() => Some(
            r.params
                .as_ref()
                .map_or_else(|| "{}".to_owned(), |p| p.get().to_owned()),
        ),
        _ => None,
    };
    if let (Message::Request(r), Some(session_id)) = (&message, session_header(headers)) {
        cluster::requested(shared, session_id, r);
    }
    let session = if is_initialize {
        if session_header(headers).is_some() {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Bad Request: initialize starts a new session and must be sent without MCP-Session-Id",
            ));
        }
        let session_id = new_session_id().map_err(|e| {
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
                format!("Internal error: no random session id available: {e}"),
            )
        })?;
        cluster::admit(shared).await?;
        let session = HttpSession::start(
            session_id,
            settings(shared, true),
            shared.store.clone(),
            shared.cluster.clone(),
            &*shared.serve,
        );
        if let Err(refusal) = shared.insert_session(session.clone()) {
            session.close();
            return Err(refusal);
        }
        session
    } else {
        let session = find_session(shared, headers).await?;
        if session.awaits_initialized()
            && !matches!(&message, Message::Request(r) if r.method == "ping")
        {
            cluster::catch_up_initialized(shared, &session).await;
        }
        session
    };
    if let Some(params) = &initialize_params {
        session.share_when_initialized(params.clone());
    }
    let mut response = answer(&session, id, is_initialize, message, shared.config.mode).await?;
    if let Some(params) = initialize_params {
        // Answered as JSON: saved here, before the answer. An event stream's result was
        // saved by the session before it left.
        if session.negotiated().is_some() && is_json(&response) {
            cluster::created(shared, &session, params).await;
        }
    }
    if is_initialize {
        if let Ok(value) = HeaderValue::from_str(&session.id) {
            response.headers_mut().insert(names::SESSION_ID, value);
        }
    }
    Ok(response)
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// Hands a request to `session` and turns its reply into the HTTP answer.
async fn answer(
    session: &HttpSession,
    id: RequestId,
    is_initialize: bool,
    message: Message,
    mode: ResponseMode,
) -> Result<Response, Refusal> {
    let always_sse = mode == ResponseMode::AlwaysSse;
    let reply = session
        .request(id.clone(), is_initialize, message, always_sse)
        .await;
    match reply_or_refusal(reply, &id)? {
        Reply::Json(body, _) => Ok(guard::json_response(StatusCode::OK, body)),
        Reply::Sse(rx) => Ok(session_sse(session, rx)),
    }
}

/// Hands a request (not `initialize`) to `session`; the reply, or the refusal to answer.
pub(super) async fn answer_reply(
    session: &HttpSession,
    id: RequestId,
    message: Message,
    mode: ResponseMode,
) -> Result<Reply, Refusal> {
    let always_sse = mode == ResponseMode::AlwaysSse;
    let reply = session
        .request(id.clone(), false, message, always_sse)
        .await;
    reply_or_refusal(reply, &id)
}

fn reply_or_refusal(reply: Result<Reply, NoReply>, id: &RequestId) -> Result<Reply, Refusal> {
    match reply {
        Ok(reply) => Ok(reply),
        Err(NoReply::DuplicateId) => Err(refuse(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            format!("Bad Request: request id {id} is already in use by a request still in flight in this session"),
        )),
        Err(NoReply::Closed) => Err(unknown_session()),
        Err(NoReply::Cancelled) => {
            let error = junction_protocol::ErrorObject::new(
                ErrorCode::REQUEST_CANCELLED,
                "Request cancelled by the client",
            );
            let body = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error });
            Ok(Reply::Json(body.to_string().into(), Some(error.code)))
        }
    }
}

/// Sessionless mode: a one-shot session per POST, standing as initialized with the
/// `MCP-Protocol-Version` header's revision (2025-03-26 without one, as the specification
/// says to assume) and no client capabilities ([`TransportEvent::Sessionless`]).
async fn sessionless(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    message: Message,
) -> Result<Response, Refusal> {
    let Message::Request(request) = &message else {
        tracing::debug!("sessionless mode: a notification or response has no session to go to; accepted and dropped");
        return Ok(empty(StatusCode::ACCEPTED));
    };
    let session = HttpSession::start(
        one_shot_id(),
        settings(shared, false),
        shared.store.clone(),
        None,
        &*shared.serve,
    );
    let is_initialize = request.method == Initialize::METHOD;
    if !is_initialize {
        let version = headers
            .get(names::PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .map_or(ProtocolVersion::V2025_03_26, ProtocolVersion::negotiate);
        if !session.event(TransportEvent::Sessionless { version }).await {
            session.close();
            return Err(refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
                "Internal error: the sessionless session ended before its request",
            ));
        }
    }
    let id = request.id.clone();
    let answered = answer(&session, id, is_initialize, message, shared.config.mode).await;
    session.close_when_answered();
    answered
}

/// The id of a session that serves one request: never sent to the client nor looked up, so
/// a counter (for logs and [`super::SessionControl::session_id`]) rather than a random id.
pub(super) fn one_shot_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("one-shot-{n}")
}

/// `GET`: the standalone stream, or a resumption with `Last-Event-ID`.
pub(super) async fn get(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let result = async {
        guard::check_get_accept(&headers)?;
        guard::check_version(&headers)?;
        if shared.config.sessionless {
            return Err(method_not_allowed_response(
                "GET is not offered in sessionless mode",
                true,
            ));
        }
        let session = find_session(&shared, &headers).await?;
        let opened = match headers.get(names::LAST_EVENT_ID) {
            Some(last) => {
                let last = last.to_str().unwrap_or("");
                let id: EventId = last.parse().map_err(|e: super::BadEventId| {
                    refuse(
                        StatusCode::BAD_REQUEST,
                        TRANSPORT_ERROR,
                        format!("Bad Request: Last-Event-ID {e}"),
                    )
                })?;
                if cluster::is_foreign(&shared, id) {
                    return Ok(sse_response(cluster::follow(&shared, &session, id)));
                }
                session.resume(id)
            }
            None => session.open_standalone(),
        };
        match opened {
            Ok(rx) => Ok(session_sse(&session, rx)),
            Err(OpenError::Conflict) => Err(refuse(
                StatusCode::CONFLICT,
                TRANSPORT_ERROR,
                "Conflict: this session already has an open GET stream; only one is allowed",
            )),
            Err(OpenError::UnknownStream) => Err(refuse(
                StatusCode::BAD_REQUEST,
                TRANSPORT_ERROR,
                "Bad Request: Last-Event-ID names a stream this session never had",
            )),
            Err(OpenError::Closed) => Err(unknown_session()),
        }
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

/// `DELETE`: the client ends its session.
pub(super) async fn delete(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if shared.config.sessionless {
        return method_not_allowed_response("DELETE is not offered in sessionless mode", true)
            .into_response();
    }
    let Some(id) = session_header(&headers) else {
        return missing_session().into_response();
    };
    if shared.cluster.is_some() {
        // The session may be held by other instances only: it is ended through the store.
        let session = match find_session(&shared, &headers).await {
            Ok(session) => session,
            Err(refusal) => return refusal.into_response(),
        };
        shared.remove_session(id);
        session.close();
        cluster::ended(&shared, id).await;
        return empty(StatusCode::OK);
    }
    match shared.remove_session(id) {
        Some(session) if !session.is_closed() => {
            session.close();
            empty(StatusCode::OK)
        }
        _ => unknown_session().into_response(),
    }
}

fn method_not_allowed_response(message: &str, sessionless: bool) -> Refusal {
    refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        TRANSPORT_ERROR,
        format!("Method Not Allowed: {message}"),
    )
    .allow(if sessionless {
        "POST"
    } else {
        "GET, POST, DELETE"
    })
}

/// Any other method.
pub(super) async fn method_not_allowed(State(shared): State<Arc<Shared>>) -> Response {
    let sessionless = shared.config.sessionless;
    let served = if sessionless {
        "this endpoint serves POST"
    } else {
        "this endpoint serves GET, POST and DELETE"
    };
    method_not_allowed_response(served, sessionless).into_response()
}
