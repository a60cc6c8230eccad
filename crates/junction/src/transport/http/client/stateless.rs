//! The requests of revision 2026-07-28 over Streamable HTTP: headers that mirror the body,
//! no session, no resumption, cancellation by closing the stream.

use std::sync::Arc;

use junction_protocol::method::{self, NameParam};
use junction_protocol::stateless::RequestEnvelope;
use junction_protocol::Message;
use std::collections::HashMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::super::names;
use super::super::param::{self, Annotated};
use super::stream::StreamCursor;
use super::Driver;
use crate::transport::TransportError;

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
        let headers = {
            let state = crate::sync::lock(&self.state);
            stateless_headers(&self.headers, request, &state.tool_headers)
        };
        let headers = match headers {
            Ok(headers) => headers,
            Err(reason) => return self.fail(message, self.exchange(reason)).await,
        };
        let exchange = async {
            let response = match self.post_raw(&self.url, headers, message).await {
                Ok(response) => response,
                Err(e) => return self.fail(message, e.at(&self.url)).await,
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
                let error = TransportError::StreamEnded {
                    url: self.url.to_string(),
                    detail: None,
                };
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
    let version = envelope.protocol_version()?.ok()?;
    match version.parse::<junction_protocol::ProtocolVersion>() {
        Ok(v) if v.family() == junction_protocol::version::Family::Handshake => None,
        _ => Some(version.into_owned()),
    }
}

/// The headers of a 2026-07-28 POST: the custom ones, the version, `Mcp-Method` and, where
/// the method names something (see [`NameParam`]), `Mcp-Name`; for a `tools/call`, the
/// `Mcp-Param-*` headers of its annotated arguments (`tools`, by tool name).
fn stateless_headers(
    custom: &HeaderMap,
    request: &junction_protocol::Request,
    tools: &HashMap<String, Vec<Annotated>>,
) -> Result<HeaderMap, String> {
    let envelope = RequestEnvelope::read(request.params.as_deref()).unwrap_or_default();
    let version = version_of(&envelope).unwrap_or_default();
    let mut headers = custom.clone();
    let value = |v: &str| {
        HeaderValue::from_str(v)
            .map_err(|_| format!("{v:?} cannot be sent as an HTTP header value"))
    };
    headers.insert(names::PROTOCOL_VERSION, value(&version)?);
    headers.insert(names::METHOD, value(&request.method)?);
    let param = method::request(&request.method).map_or(NameParam::Absent, |m| m.mcp_name);
    if let Some(member) = param.member() {
        let name = envelope.target(param).ok_or_else(|| {
            format!(
                "`{}` needs a string `{member}` in its params",
                request.method
            )
        })?;
        headers.insert(names::NAME, value(name)?);
        if request.method == "tools/call" {
            if let Some(annotated) = tools.get(name) {
                param_headers(request, annotated, &mut headers)?;
            }
        }
    }
    Ok(headers)
}

/// Adds `Mcp-Param-{Name}: value` for each annotated argument present (and not `null`).
fn param_headers(
    request: &junction_protocol::Request,
    annotated: &[Annotated],
    headers: &mut HeaderMap,
) -> Result<(), String> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(default)]
        arguments: Map<String, Value>,
    }
    let Some(Params { arguments }) = request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
    else {
        return Ok(());
    };
    for property in annotated {
        let Some(text) = property.value(&arguments).and_then(param::encode) else {
            continue;
        };
        let name =
            HeaderName::from_bytes(format!("{}{}", param::PREFIX, property.header).as_bytes())
                .map_err(|_| {
                    format!("`x-mcp-header` {:?} is not a header name", property.header)
                })?;
        let value = HeaderValue::from_str(&text).map_err(|_| {
            format!(
                "the value of `{}` cannot be sent as a header",
                property.header
            )
        })?;
        headers.insert(name, value);
    }
    Ok(())
}

/// Records the `x-mcp-header` annotations of every tool in a `tools/list` response
/// (`frame`); a tool whose annotations are invalid gets none (the client leaves it out).
pub(super) fn learn_tool_headers(frame: &[u8], tools: &mut HashMap<String, Vec<Annotated>>) {
    #[derive(Deserialize)]
    struct Response {
        result: Listed,
    }
    #[derive(Deserialize)]
    struct Listed {
        tools: Vec<Listing>,
    }
    #[derive(Deserialize)]
    struct Listing {
        name: String,
        #[serde(rename = "inputSchema", default)]
        input_schema: Map<String, Value>,
    }
    let Ok(Response { result }) = serde_json::from_slice::<Response>(frame) else {
        return;
    };
    for tool in result.tools {
        match param::annotations(&tool.input_schema) {
            Ok(annotated) if !annotated.is_empty() => {
                tools.insert(tool.name, annotated);
            }
            _ => {
                tools.remove(&tool.name);
            }
        }
    }
}
