//! POSTs of revision 2026-07-28: no session is required or issued.
//!
//! A request whose params carry `_meta["io.modelcontextprotocol/protocolVersion"]` (or a
//! `server/discover`), sent without `MCP-Session-Id`, is served in a one-shot session of its
//! own, without `initialize`. Its `Mcp-Method` header must equal the body's method, and for
//! `tools/call` and `prompts/get` its `Mcp-Name` the `name` (for `resources/read`, the `uri`);
//! an `MCP-Protocol-Version` header must equal the `_meta` version. Otherwise the answer is
//! `400` with a `HeaderMismatch` (-32020) error. Streams carry no event ids (2026-07-28 has
//! no resumption), and a response stream the client closes cancels its request.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use junction_protocol::method::{self, NameParam, Request as _};
use junction_protocol::stateless::{Discover, RequestEnvelope};
use junction_protocol::{ErrorCode, ErrorObject, Message, Request, RequestId};
use serde_json::Value;

use super::endpoint::{answer_reply, settings};
use super::guard::{self, Refusal};
use super::session::{EventReceiver, HttpSession, Reply};
use super::Shared;
use crate::transport::http::PROTOCOL_VERSION_HEADER;

/// The header that repeats the JSON-RPC method.
pub const METHOD_HEADER: &str = "mcp-method";
/// The header that repeats the tool or prompt name, or the resource URI.
pub const NAME_HEADER: &str = "mcp-name";

/// The envelope of `request` (sent without a session id) when it belongs to 2026-07-28: it
/// is `server/discover` or carries a protocol version in `_meta`.
pub(super) fn envelope(request: &Request) -> Option<RequestEnvelope> {
    let envelope = RequestEnvelope::read(request.params.as_deref()).ok();
    if request.method == Discover::METHOD {
        return Some(envelope.unwrap_or_default());
    }
    envelope.filter(|e| e.protocol_version().is_some())
}

fn mismatch(id: &RequestId, message: String) -> Refusal {
    Refusal::with_id(
        StatusCode::BAD_REQUEST,
        Some(id.clone()),
        ErrorObject::new(ErrorCode::HEADER_MISMATCH, message),
    )
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// Checks `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` against the body.
fn check_headers(
    headers: &HeaderMap,
    request: &Request,
    envelope: &RequestEnvelope,
) -> Result<(), Refusal> {
    let id = &request.id;
    match header(headers, METHOD_HEADER) {
        None => {
            return Err(mismatch(
                id,
                format!(
                    "Header mismatch: the Mcp-Method header is required and must be '{}'",
                    request.method
                ),
            ))
        }
        Some(m) if m != request.method => {
            return Err(mismatch(
                id,
                format!(
                    "Header mismatch: Mcp-Method header value '{m}' does not match body value '{}'",
                    request.method
                ),
            ))
        }
        Some(_) => {}
    }
    let name = method::request(&request.method).map_or(NameParam::Absent, |m| m.mcp_name);
    if name != NameParam::Absent {
        let body = envelope.target(name).unwrap_or("");
        match header(headers, NAME_HEADER) {
            None => {
                return Err(mismatch(
                    id,
                    format!("Header mismatch: the Mcp-Name header is required for {} and must be '{body}'", request.method),
                ))
            }
            Some(n) if n != body => {
                return Err(mismatch(
                    id,
                    format!("Header mismatch: Mcp-Name header value '{n}' does not match body value '{body}'"),
                ))
            }
            Some(_) => {}
        }
    }
    let meta = envelope.protocol_version().and_then(Value::as_str);
    if let (Some(h), Some(meta)) = (header(headers, PROTOCOL_VERSION_HEADER), meta) {
        if h != meta {
            return Err(mismatch(
                id,
                format!("Header mismatch: MCP-Protocol-Version header value '{h}' does not match body value '{meta}'"),
            ));
        }
    }
    Ok(())
}

/// Errors the 2026-07-28 transport answers with `400` rather than `200`.
fn is_refusal(code: Option<ErrorCode>) -> bool {
    matches!(code, Some(ErrorCode(-32022..=-32020)))
}

/// Serves one 2026-07-28 request in a session of its own.
pub(super) async fn serve(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    request: Request,
    envelope: RequestEnvelope,
    frame: Bytes,
) -> Result<Response, Refusal> {
    check_headers(headers, &request, &envelope)?;
    let session = HttpSession::start(
        super::endpoint::one_shot_id(),
        settings(shared, false),
        shared.store.clone(),
        None,
        &*shared.serve,
    );
    let id = request.id.clone();
    let reply = answer_reply(&session, id.clone(), frame, shared.config.mode).await;
    session.close_when_answered();
    match reply? {
        Reply::Json(body, error) => {
            let status = if is_refusal(error) {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            Ok(guard::json_response(status, body))
        }
        Reply::Sse(rx) => Ok(super::endpoint::sse_response(cancel_on_close(
            session,
            id,
            rx,
            shared.config.keep_alive,
        ))),
    }
}

/// Relays a response stream; when the client closes it before the response, the request is
/// cancelled (the 2026-07-28 rule) and its session ends. A quiet stream gets a comment
/// every `keep_alive`, since the server only learns of a closed connection by writing.
fn cancel_on_close(
    session: Arc<HttpSession>,
    id: RequestId,
    mut rx: EventReceiver,
    keep_alive: std::time::Duration,
) -> EventReceiver {
    let (tx, relay) = session.event_queue();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(keep_alive);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if tx.send(Bytes::from_static(b": keep-alive\n\n")).is_err() {
                        break;
                    }
                }
                event = rx.recv() => match event {
                    Some(event) => {
                        if tx.send(event).is_err() {
                            break;
                        }
                    }
                    None => return,
                },
                () = tx.closed() => break,
            }
        }
        if session.is_closed() {
            return;
        }
        let cancel = serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the client closed the response stream"}
        });
        let frame = Bytes::from(cancel.to_string());
        if let Ok(message) = Message::decode(&frame) {
            session.deliver(&message, frame).await;
        }
        session.close();
    });
    relay
}
