//! POSTs of revision 2026-07-28: no session is required or issued.
//!
//! A request sent without `MCP-Session-Id` belongs to 2026-07-28 when its
//! `MCP-Protocol-Version` header says so, when its params carry
//! `_meta["io.modelcontextprotocol/protocolVersion"]`, or when it is `server/discover`. It is
//! served in a one-shot session of its own, without `initialize`, after these checks, each a
//! `400` unless said otherwise and each naming the request's id:
//!
//! - `Mcp-Method` must equal the body's method, and for the methods the method table gives
//!   an `Mcp-Name` member (`tools/call`, `prompts/get`: `name`; `resources/read`: `uri`)
//!   `Mcp-Name` must equal it, Base64 sentinel decoded; an `MCP-Protocol-Version` header must
//!   equal the `_meta` version: otherwise `HeaderMismatch` (-32020).
//! - A method 2026-07-28 does not have (`initialize`, `ping`, `logging/setLevel`, ...) or
//!   that is unknown: `404` with -32601.
//! - `_meta` must carry the protocol version and the client capabilities: otherwise -32602.
//! - `Mcp-Param-*` headers are kept for the server, which checks them against the tool's
//!   `x-mcp-header` annotations ([`super::SessionControl::param_headers`]).
//!
//! The answer's status follows its error: `404` for -32601, `400` for -32020..-32022, `200`
//! otherwise. Streams carry no event ids (2026-07-28 has no resumption), and a response
//! stream the client closes cancels its request.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use junction_protocol::lifecycle::{Cancelled, CancelledParams};
use junction_protocol::method::{self, NameParam, Notification as _, Request as _};
use junction_protocol::stateless::{Discover, RequestEnvelope, META_PROTOCOL_VERSION};
use junction_protocol::version::Family;
use junction_protocol::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId};

use super::endpoint::{answer_reply, settings};
use super::guard::{self, Refusal};
use super::session::{EventReceiver, HttpSession, Reply};
use super::Shared;
use crate::transport::http::{names, param};

/// Whether `request` (sent without a session id, with no 2026-07-28 header) belongs to
/// 2026-07-28 by its body: it is `server/discover` or carries a protocol version in `_meta`.
fn is_2026(request: &Request, envelope: Option<&RequestEnvelope>) -> bool {
    request.method == Discover::METHOD || envelope.is_some_and(|e| e.protocol_version().is_some())
}

/// Whether [`is_2026`] can hold for `request`, judged from its text without reading its
/// envelope: the protocol version's key is in its params, or a backslash is (the key may be
/// written with escapes). When this is false, `is_2026` is too.
fn may_be_2026(request: &Request) -> bool {
    request.method == Discover::METHOD
        || request.params.as_ref().is_some_and(|params| {
            let text = params.get().as_bytes();
            memchr::memchr(b'\\', text).is_some()
                || memchr::memmem::find(text, META_PROTOCOL_VERSION.as_bytes()).is_some()
        })
}

/// The envelope of `request` (sent without a session id) when it is a 2026-07-28 request:
/// by its `MCP-Protocol-Version` header (`by_header`) or by its body ([`is_2026`]). A
/// handshake-family request whose text cannot make it one is not read here at all.
pub(super) fn envelope_if_2026(
    request: &Request,
    by_header: bool,
) -> Option<Result<RequestEnvelope<'_>, serde_json::Error>> {
    if !by_header && !may_be_2026(request) {
        return None;
    }
    let envelope = RequestEnvelope::read(request.params.as_deref());
    (by_header || is_2026(request, envelope.as_ref().ok())).then_some(envelope)
}

fn mismatch(id: &RequestId, message: String) -> Refusal {
    Refusal::with_id(
        StatusCode::BAD_REQUEST,
        Some(id.clone()),
        ErrorObject::new(ErrorCode::HEADER_MISMATCH, message),
    )
}

fn header<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// Checks `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` against the body.
fn check_headers(
    headers: &HeaderMap,
    request: &Request,
    envelope: &RequestEnvelope,
) -> Result<(), Refusal> {
    let id = &request.id;
    match header(headers, &names::METHOD) {
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
        let sent = header(headers, &names::NAME)
            .map(|h| param::decode(h).unwrap_or_else(|_| h.to_owned()));
        match sent.as_deref() {
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
    let meta = envelope.protocol_version().and_then(Result::ok);
    if let (Some(h), Some(meta)) = (header(headers, &names::PROTOCOL_VERSION), meta) {
        if h != meta {
            return Err(mismatch(
                id,
                format!("Header mismatch: MCP-Protocol-Version header value '{h}' does not match body value '{meta}'"),
            ));
        }
    }
    Ok(())
}

/// The status of a 2026-07-28 answer that is the error `code`.
fn status(code: Option<ErrorCode>) -> StatusCode {
    match code {
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(ErrorCode(-32022..=-32020)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// A refusal of request `id`.
fn refusal(status: StatusCode, id: &RequestId, error: ErrorObject) -> Refusal {
    Refusal::with_id(status, Some(id.clone()), error)
}

/// The `Mcp-Param-*` headers: names without the prefix, lowercase.
fn param_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let rest = name.as_str().strip_prefix(param::PREFIX)?;
            Some((
                rest.to_owned(),
                value.to_str().unwrap_or("\u{fffd}").to_owned(),
            ))
        })
        .collect()
}

/// Checks a 2026-07-28 request before it is served ([`serve`]): its envelope, its headers,
/// its method and the `_meta` every such request carries.
pub(super) fn admit(
    headers: &HeaderMap,
    request: &Request,
    envelope: Result<RequestEnvelope<'_>, serde_json::Error>,
) -> Result<(), Refusal> {
    let id = &request.id;
    let envelope = envelope.map_err(|e| {
        refusal(
            StatusCode::BAD_REQUEST,
            id,
            ErrorObject::invalid_params(format!("Invalid params for `{}`: {e}", request.method)),
        )
    })?;
    check_headers(headers, request, &envelope)?;
    let served =
        method::request(&request.method).is_some_and(|m| m.families.serves(Family::Stateless));
    if !served {
        return Err(refusal(
            StatusCode::NOT_FOUND,
            id,
            ErrorObject::method_not_found(&request.method),
        ));
    }
    if let Some(missing) = junction_protocol::stateless::missing_meta(&envelope) {
        let what = if missing == "_meta" {
            "`_meta`".to_owned()
        } else {
            format!("`_meta[\"{missing}\"]`")
        };
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            id,
            ErrorObject::invalid_params(format!(
                "Invalid params for `{}`: {what} is required on 2026-07-28 (the protocol version and the client capabilities, {{}} for none, travel in every request)",
                request.method
            )),
        ));
    }
    Ok(())
}

/// Serves one 2026-07-28 request, admitted ([`admit`]), in a session of its own.
pub(super) async fn serve(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    id: RequestId,
    message: Message,
) -> Result<Response, Refusal> {
    let session = HttpSession::start(
        super::endpoint::one_shot_id(),
        settings(shared, false),
        shared.store.clone(),
        None,
        &*shared.serve,
    );
    session.set_param_headers(param_headers(headers));
    let reply = answer_reply(&session, id.clone(), message, shared.config.mode).await;
    session.close_when_answered();
    match reply? {
        Reply::Json(body, error) => Ok(guard::json_response(status(error), body)),
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
    if rx.is_complete() {
        // The response is in already (a stream opens with its first message): there is
        // nothing left to cancel and no quiet time to fill.
        return rx;
    }
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
        let params = CancelledParams::new(id).reason("the client closed the response stream");
        if let Ok(params) = junction_protocol::jsonrpc::to_raw(&params) {
            let cancel = Notification {
                method: Cancelled::METHOD.to_owned(),
                params: Some(params),
            };
            session.deliver(Message::Notification(cancel)).await;
        }
        session.close();
    });
    relay
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    #[test]
    fn may_be_2026_is_false_only_where_is_2026_is_false() {
        let cases: [(&str, Option<&str>, bool, bool); 7] = [
            (
                "tools/call",
                Some(r#"{"name":"echo","arguments":{}}"#),
                false,
                false,
            ),
            ("tools/list", None, false, false),
            ("server/discover", None, true, true),
            (
                "tools/call",
                Some(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#),
                true,
                true,
            ),
            // Escaped keys name the same member: only a backslash-free text can be judged.
            (
                "tools/call",
                Some(r#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}"#),
                true,
                true,
            ),
            (
                "tools/call",
                Some(r#"{"_meta":{"\u0069o.modelcontextprotocol/protocolVersion":null}}"#),
                true,
                true,
            ),
            // The key's text as a value: worth the read, which then says no.
            (
                "tools/call",
                Some(r#"{"name":"io.modelcontextprotocol/protocolVersion"}"#),
                true,
                false,
            ),
        ];
        for (method, params, may, is) in cases {
            let request = Request {
                id: RequestId::Number(1),
                method: method.to_owned(),
                params: params.map(|p| RawValue::from_string(p.to_owned()).unwrap()),
            };
            let envelope = RequestEnvelope::read(request.params.as_deref());
            assert_eq!(may_be_2026(&request), may, "{method} {params:?}");
            assert_eq!(
                envelope_if_2026(&request, false).is_some(),
                is,
                "{method} {params:?}"
            );
            assert!(
                envelope_if_2026(&request, true).is_some(),
                "{method} {params:?}"
            );
            assert_eq!(
                is_2026(&request, envelope.as_ref().ok()),
                is,
                "{method} {params:?}"
            );
        }
    }
}
