//! Checks every request passes before it reaches a session, and the error answers.
//!
//! - `Host` and `Origin` against an allow-list of host names (any port): the DNS-rebinding
//!   defence the specification requires. The default list is the loopback names.
//! - `Accept`, `Content-Type`, `MCP-Protocol-Version` and the body size: a declared
//!   `Content-Length` over the limit is refused before a byte of the body is read, and a
//!   body that takes longer than the body timeout to arrive is refused with `408`.
//!
//! Every refusal carries a JSON-RPC error body: with `"id": null` when it comes before the
//! body is read (as the specification allows), else with the id of the request it answers.

use std::convert::Infallible;
use std::future::{ready, Future, Ready};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::header::{ACCEPT, ALLOW, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, RETRY_AFTER};
use axum::http::{HeaderMap, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use junction_protocol::{ErrorCode, ErrorObject, ProtocolVersion, RequestId};

use crate::transport::http::names;

/// The error code the reference SDKs use for transport-level refusals.
pub(super) const TRANSPORT_ERROR: ErrorCode = ErrorCode(-32000);

/// A refusal: the status and the JSON-RPC error for the body.
#[derive(Debug)]
pub(super) struct Refusal {
    status: StatusCode,
    body: serde_json::Value,
    allow: Option<&'static str>,
    retry_after: Option<u32>,
}

impl Refusal {
    /// A refusal whose error names the message's id (or `null`).
    pub(super) fn with_id(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> Self {
        Refusal {
            status,
            body: serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error }),
            allow: None,
            retry_after: None,
        }
    }

    /// Adds a `Retry-After` header, in seconds (a 503).
    pub(super) fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// Adds the `Allow` header of a 405.
    pub(super) fn allow(mut self, methods: &'static str) -> Self {
        self.allow = Some(methods);
        self
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = json_response(self.status, self.body.to_string().into());
        if let Some(methods) = self.allow {
            response
                .headers_mut()
                .insert(ALLOW, axum::http::HeaderValue::from_static(methods));
        }
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(RETRY_AFTER, axum::http::HeaderValue::from(seconds));
        }
        response
    }
}

/// A refusal with a JSON-RPC error body whose id is `null`.
pub(super) fn refuse(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal::with_id(status, None, ErrorObject::new(code, message))
}

/// An `application/json` answer.
pub(super) fn json_response(status: StatusCode, body: bytes::Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Host names a request may address and come from.
#[derive(Debug, Clone)]
pub(super) struct AllowList {
    pub hosts: Vec<String>,
    pub origins: Vec<String>,
}

impl Default for AllowList {
    fn default() -> Self {
        let loopback: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        AllowList {
            hosts: loopback.clone(),
            origins: loopback,
        }
    }
}

impl AllowList {
    /// Checks `Host` (required) and `Origin` (when present).
    pub(super) fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let forbid = |what: &str| Err(refuse(StatusCode::FORBIDDEN, TRANSPORT_ERROR, what));
        let host = headers.get(HOST).and_then(|h| h.to_str().ok());
        match host {
            None => return forbid("Forbidden: the request has no Host header"),
            Some(host) if !allowed(&self.hosts, host_name(host)) => {
                return forbid(&format!("Forbidden: invalid Host: {host}"))
            }
            Some(_) => {}
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let text = origin.to_str().unwrap_or("");
            let name = text.split_once("://").map(|(_, rest)| host_name(rest));
            if !name.is_some_and(|n| allowed(&self.origins, n)) {
                return forbid(&format!("Forbidden: invalid Origin: {text}"));
            }
        }
        Ok(())
    }
}

fn allowed(list: &[String], name: &str) -> bool {
    list.iter().any(|a| a.eq_ignore_ascii_case(name))
}

/// The host name of `host[:port]`, `[v6][:port]`, dropping any path.
fn host_name(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or(authority);
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn header(headers: &HeaderMap, name: impl axum::http::header::AsHeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Which of `media` the `Accept` headers list, read in one pass (media ranges compared
/// without their parameters, ignoring case).
fn accepted<const N: usize>(headers: &HeaderMap, media: [&str; N]) -> [bool; N] {
    let mut found = [false; N];
    for value in headers.get_all(ACCEPT) {
        for item in value.as_bytes().split(|&b| b == b',') {
            let range = item.split(|&b| b == b';').next().unwrap_or_default();
            let range = range.trim_ascii();
            for (found, media) in found.iter_mut().zip(media) {
                *found |= range.eq_ignore_ascii_case(media.as_bytes());
            }
        }
    }
    found
}

/// A POST must accept both JSON and an event stream.
pub(super) fn check_post_accept(headers: &HeaderMap) -> Result<(), Refusal> {
    if accepted(headers, ["application/json", "text/event-stream"]) == [true, true] {
        return Ok(());
    }
    Err(refuse(
        StatusCode::NOT_ACCEPTABLE,
        TRANSPORT_ERROR,
        "Not Acceptable: the Accept header must list both application/json and text/event-stream",
    ))
}

/// A GET must accept an event stream.
pub(super) fn check_get_accept(headers: &HeaderMap) -> Result<(), Refusal> {
    if accepted(headers, ["text/event-stream"]) == [true] {
        return Ok(());
    }
    Err(refuse(
        StatusCode::NOT_ACCEPTABLE,
        TRANSPORT_ERROR,
        "Not Acceptable: the Accept header must list text/event-stream",
    ))
}

/// The body must be JSON.
pub(super) fn check_content_type(headers: &HeaderMap) -> Result<(), Refusal> {
    let media = header(headers, CONTENT_TYPE)
        .split(';')
        .next()
        .unwrap_or("");
    if media.trim().eq_ignore_ascii_case("application/json") {
        return Ok(());
    }
    Err(refuse(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        TRANSPORT_ERROR,
        "Unsupported Media Type: the body must be application/json",
    ))
}

/// The `MCP-Protocol-Version` header's revision, when it names one served here; absent
/// means 2025-03-26, which is served. The error is the unsupported value as sent.
pub(super) fn header_version(headers: &HeaderMap) -> Result<Option<ProtocolVersion>, String> {
    let Some(value) = headers.get(names::PROTOCOL_VERSION) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or("\u{fffd}");
    text.parse::<ProtocolVersion>()
        .map(Some)
        .map_err(|_| text.to_owned())
}

/// `400` with `UnsupportedProtocolVersion` (-32022) for the header's `requested` revision,
/// naming the request `id` it answers.
pub(super) fn unsupported_version(id: Option<RequestId>, requested: &str) -> Refusal {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    let error = junction_protocol::stateless::unsupported_version(
        requested,
        format!(
            "Bad Request: unsupported MCP-Protocol-Version {requested:?}; supported: {}",
            supported.join(", ")
        ),
    );
    Refusal::with_id(StatusCode::BAD_REQUEST, id, error)
}

/// A GET's `MCP-Protocol-Version` header, when present, must name a revision served here.
pub(super) fn check_version(headers: &HeaderMap) -> Result<(), Refusal> {
    header_version(headers)
        .map(|_| ())
        .map_err(|requested| unsupported_version(None, &requested))
}

fn too_large(limit: usize) -> Refusal {
    refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        TRANSPORT_ERROR,
        format!("Payload Too Large: the body exceeds the limit of {limit} bytes"),
    )
}

/// A declared `Content-Length` over `limit` is refused before the body is read.
pub(super) fn check_declared_length(headers: &HeaderMap, limit: usize) -> Result<(), Refusal> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(length) if length > limit as u64 => Err(too_large(limit)),
        _ => Ok(()),
    }
}

/// The checks every request passes before routing, as a layer over the router: `Host` and
/// `Origin` first, then a declared length over the limit; the body then gets its deadline.
/// All three read the server's own [`super::Config`]. A plain [`tower_service::Service`]
/// rather than two `from_fn` middlewares, which cloned the inner service and boxed a future
/// each, on every request.
#[derive(Clone)]
pub(super) struct Checks(pub(super) Arc<super::Shared>);

impl<S> tower_layer::Layer<S> for Checks {
    type Service = Checked<S>;

    fn layer(&self, inner: S) -> Checked<S> {
        Checked {
            inner,
            shared: self.0.clone(),
        }
    }
}

/// A service behind [`Checks`].
#[derive(Clone)]
pub(super) struct Checked<S> {
    inner: S,
    shared: Arc<super::Shared>,
}

impl<S> tower_service::Service<Request<Body>> for Checked<S>
where
    S: tower_service::Service<Request<Body>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let config = &self.shared.config;
        let checked = config
            .allow
            .check(request.headers())
            .and_then(|()| check_declared_length(request.headers(), config.max_body));
        if let Err(refusal) = checked {
            return Either::Left(ready(Ok(refusal.into_response())));
        }
        let (parts, body) = request.into_parts();
        let body = Body::new(DeadlineBody::new(body, config.body_timeout));
        Either::Right(self.inner.call(Request::from_parts(parts, body)))
    }
}

/// The error a body gives when it did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub(super) struct BodyTimeout(Duration);

/// A request body that fails with [`BodyTimeout`] once its time is up.
pub(super) struct DeadlineBody {
    body: Body,
    timeout: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl DeadlineBody {
    /// `body`, which must have arrived whole within `timeout` from now.
    pub(super) fn new(body: Body, timeout: Duration) -> Self {
        DeadlineBody {
            body,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyTimeout(this.timeout))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<BodyTimeout>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Reads the whole body, refusing more than `limit` bytes with 413.
pub(super) async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, Refusal> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large(limit)),
        Err(e) if timed_out(&*e) => Err(refuse(
            StatusCode::REQUEST_TIMEOUT,
            TRANSPORT_ERROR,
            format!("Request Timeout: {e}"),
        )),
        Err(e) => Err(refuse(
            StatusCode::BAD_REQUEST,
            TRANSPORT_ERROR,
            format!("Bad Request: the body could not be read: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn loopback_hosts_with_any_port_pass_and_others_are_forbidden() {
        let list = AllowList::default();
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:3000",
            "[::1]",
        ] {
            assert!(list.check(&headers(&[("host", host)])).is_ok(), "{host}");
        }
        for host in ["evil.example.com", "localhost.evil.com:80", "[::2]:1"] {
            let refused = list.check(&headers(&[("host", host)])).unwrap_err();
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{host}");
        }
        let bad_origin = headers(&[("host", "localhost"), ("origin", "http://evil.example.com")]);
        assert!(list.check(&bad_origin).is_err());
        let good_origin = headers(&[("host", "localhost"), ("origin", "http://localhost:5173")]);
        assert!(list.check(&good_origin).is_ok());
        assert!(list
            .check(&headers(&[("host", "localhost"), ("origin", "null")]))
            .is_err());
    }

    #[test]
    fn accept_lists_are_read_item_by_item() {
        let both = headers(&[("accept", "application/json;q=0.9, text/event-stream")]);
        assert!(check_post_accept(&both).is_ok());
        let split = headers(&[
            ("accept", "application/json"),
            ("accept", "text/event-stream"),
        ]);
        assert!(check_post_accept(&split).is_ok());
        let json_only = headers(&[("accept", "application/json")]);
        assert_eq!(check_post_accept(&json_only).unwrap_err().status, 406);
    }
}
