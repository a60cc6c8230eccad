//! The requests of revision 2026-07-28 over Streamable HTTP: headers that mirror the body,
//! no session, no resumption, cancellation by closing the stream.

use std::sync::Arc;

use junction_protocol::method::{self, NameParam};
use junction_protocol::stateless::RequestEnvelope;
use junction_protocol::{ErrorCode, ErrorObject, Message};
use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use tokio_util::sync::CancellationToken;

use super::stream::StreamCursor;
use super::{Driver, PROTOCOL_VERSION_HEADER};

/// The header naming the JSON-RPC method of a 2026-07-28 POST.
const METHOD_HEADER: &str = "mcp-method";
/// The header naming the tool, prompt or resource of a 2026-07-28 POST.
const NAME_HEADER: &str = "mcp-name";

impl Driver {
    /// POSTs a 2026-07-28 request with its headers and reads the answer, without resuming
    /// a broken stream; `cancel` closes the stream.
    pub(super) async fn post_stateless(
        self: &Arc<Self>,
        message: &Message,
        cancel: CancellationToken,
    ) {
        let Message::Request(request) = message else {
            return;
        };
        let headers = match stateless_headers(&self.headers, request) {
            Ok(headers) => headers,
            Err(reason) => {
                let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, reason);
                return self.fail(message, error).await;
            }
        };
        let exchange = async {
            let response = match self.post_raw(&self.url, headers, message).await {
                Ok(response) => response,
                Err(e) => return self.fail(message, e.error_object()).await,
            };
            let sse = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if !(response.status().is_success() && sse) {
                self.answer(message, response, false).await;
                return;
            }
            let mut cursor = StreamCursor::default();
            self.read_events(response, &mut cursor, Some(&request.id))
                .await;
            if !cursor.answered && !self.closing.is_cancelled() {
                let error = ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    "the server's event stream ended before the response; revision 2026-07-28 cannot resume it, so send the request again",
                );
                self.fail(message, error).await;
            }
        };
        tokio::select! {
            _ = exchange => {}
            _ = cancel.cancelled() => {
                tracing::debug!(id = %request.id, "request cancelled: its stream is closed");
            }
        }
    }
}

/// The protocol version a 2026-07-28 request carries in its `_meta`, if it is one.
pub(super) fn stateless_version(request: &junction_protocol::Request) -> Option<String> {
    version_of(&RequestEnvelope::read(request.params.as_deref()).ok()?)
}

fn version_of(envelope: &RequestEnvelope) -> Option<String> {
    let version = envelope.protocol_version()?.as_str()?;
    match version.parse::<junction_protocol::ProtocolVersion>() {
        Ok(v) if v.family() == junction_protocol::version::Family::Handshake => None,
        _ => Some(version.to_owned()),
    }
}

/// The headers of a 2026-07-28 POST: the custom ones, the version, `Mcp-Method` and, where
/// the method names something (see [`NameParam`]), `Mcp-Name`.
fn stateless_headers(
    custom: &HeaderMap,
    request: &junction_protocol::Request,
) -> Result<HeaderMap, String> {
    let envelope = RequestEnvelope::read(request.params.as_deref()).unwrap_or_default();
    let version = version_of(&envelope).unwrap_or_default();
    let mut headers = custom.clone();
    let value = |v: &str| {
        HeaderValue::from_str(v)
            .map_err(|_| format!("{v:?} cannot be sent as an HTTP header value"))
    };
    headers.insert(PROTOCOL_VERSION_HEADER, value(&version)?);
    headers.insert(METHOD_HEADER, value(&request.method)?);
    let param = method::request(&request.method).map_or(NameParam::Absent, |m| m.mcp_name);
    if let Some(member) = param.member() {
        let name = envelope.target(param).ok_or_else(|| {
            format!(
                "`{}` needs a string `{member}` in its params",
                request.method
            )
        })?;
        headers.insert(NAME_HEADER, value(name)?);
    }
    Ok(headers)
}
