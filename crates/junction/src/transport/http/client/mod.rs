//! The client side of Streamable HTTP, with fallback to the 2024-11-05 HTTP+SSE transport.
//!
//! [`HttpClient::connect`] returns a [`Connection`] for
//! [`Client::connect`](crate::client::Client::connect). Behind it one task:
//!
//! - POSTs each outgoing message. Requests go out concurrently; notifications and responses
//!   are sent in order, each after the previous one was accepted (so that
//!   `notifications/initialized` reaches the server before the next request).
//! - Reads a request's answer as one JSON body or as an event stream. When a stream ends
//!   before the response, it waits the stream's last `retry` delay and resumes it with
//!   `GET` + `Last-Event-ID` (a few times, then the request fails with an error response).
//!   A `404` to that `GET` means the session is gone: a new one is started (see below) and
//!   the request sent again, once.
//! - Remembers the `MCP-Session-Id` returned with the initialize result and the negotiated
//!   revision (read from the initialize result passing through), and sends both on every
//!   later request, with any custom headers (e.g. `Authorization`).
//! - After `notifications/initialized` is accepted, opens the standalone `GET` stream
//!   (`405` means the server offers none) and reopens it when it breaks. When it cannot be
//!   reopened because nothing accepts connections at the URL any more, the server is gone:
//!   the connection breaks ([`Inbound::Broken`]) with that error.
//! - Falls back to the legacy transport when the initialize POST is answered `400`, `404` or
//!   `405`: `GET` the URL, wait for the `endpoint` event, and POST there from then on.
//! - Sends `DELETE` with the session id when the connection closes.
//!
//! - When the server answers `404` to a message sent with a session id (the session expired
//!   or was deleted), starts a new session as the specification requires: it replays the
//!   recorded `initialize` without a session id, then `notifications/initialized`, reopens
//!   the standalone stream and sends the message again, once. Concurrent messages that hit
//!   the same expired session share one re-initialization. The new session must negotiate
//!   the revision the [`Client`](crate::client::Client) already holds, else the message fails.
//!   The new session's initialize result reaches the session as a
//!   [`TransportEvent::Reinitialized`](crate::transport::TransportEvent::Reinitialized), so
//!   that the `Client` reports what the new session declared.
//! - With [`HttpClient::legacy`] (or when the initialize POST is answered `400`, `404` or
//!   `405`) speaks the 2024-11-05 transport instead.
//!
//! Requests of the stateless revision (2026-07-28, recognised by the protocol version in
//! their `_meta`) are sent differently: no session id, `MCP-Protocol-Version` from the
//! request itself, `Mcp-Method` and (for `tools/call`, `prompts/get` and `resources/read`)
//! `Mcp-Name` headers mirroring the body. A stream that breaks before the response is not
//! resumed (that revision has no event ids): the request fails with
//! [`TransportError::StreamEnded`], and the [`Client`](crate::client::Client) sends it again
//! with a new id. A `tools/call` carries an `Mcp-Param-{Name}` header for each argument the
//! tool's input schema annotates with `x-mcp-header` (Base64-encoded where the value is not
//! plain ASCII; see [`param`](super::param)), learnt from the `tools/list` results that
//! passed through this transport. Cancelling such a request closes its response stream instead
//! of POSTing `notifications/cancelled`, and JSON-RPC responses are never POSTed.
//!
//! With [`HttpClient::oauth`], every request to the endpoint's origin carries the
//! [`OAuthClient`]'s bearer token, and a `401` or `403 insufficient_scope` runs its flow and
//! sends the request again (at most [`MAX_AUTHORIZATIONS`] times per request).
//!
//! Failures of the transport fail the affected requests with a
//! [`TransportError`] naming the URL and what happened (a refused connection, an HTTP
//! status and what its body was, a stream that ended); an error status whose body is a
//! JSON-RPC error reaches the caller as that error, the server's own answer.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use junction::client::{Client, ClientOptions};
//! use junction::transport::http::client::HttpClient;
//!
//! let connection = HttpClient::new("http://127.0.0.1:3000/mcp")?
//!     .header("authorization", "Bearer secret")?
//!     .connect();
//! let client = Client::connect(connection, ClientOptions::new("demo", "1.0.0")).await?;
//! println!("{:?}", client.list_tools().await?);
//! # Ok(()) }
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use junction_protocol::{ErrorObject, Message, RequestId};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Url;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod legacy;
mod post;
mod session;
mod stateless;
mod stream;

use self::stateless::stateless_version;
use super::names;
use super::param::Annotated;
use crate::auth::{AuthError, OAuthClient};
use crate::sync::lock;
use crate::transport::{Connection, Inbound, Outbound, TransportError, INBOUND_QUEUE};

/// Why an [`HttpClient`] could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HttpClientError {
    /// The URL does not parse or is not http(s).
    #[error("invalid MCP endpoint URL {url:?}: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A custom header's name or value is not valid HTTP.
    #[error("invalid header {0:?}")]
    Header(String),
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Build(#[from] reqwest::Error),
}

/// A Streamable HTTP client transport, configured by value.
#[derive(Debug, Clone)]
pub struct HttpClient {
    url: Url,
    headers: HeaderMap,
    http: reqwest::Client,
    legacy: bool,
    oauth: Option<Arc<OAuthClient>>,
    max_message: usize,
}

/// How many times one request may be challenged (and authorized again) before it fails.
pub const MAX_AUTHORIZATIONS: usize = 3;

/// How long a kept-alive connection may stay idle before the client drops it: less than the
/// idle timeouts servers close connections at (Node's 5 s, Junction's own 10 s), so that a
/// request is never written to a connection the server is closing at that moment (which
/// fails it with "connection closed before message completed").
pub const IDLE_CONNECTION: std::time::Duration = std::time::Duration::from_secs(4);

impl HttpClient {
    /// A transport for the MCP endpoint at `url`.
    pub fn new(url: impl AsRef<str>) -> Result<Self, HttpClientError> {
        let text = url.as_ref();
        let url = Url::parse(text).map_err(|e| HttpClientError::Url {
            url: text.to_owned(),
            reason: e.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(HttpClientError::Url {
                url: text.to_owned(),
                reason: "the scheme must be http or https".to_owned(),
            });
        }
        // TCP_NODELAY: without it each exchange waits on delayed ACKs.
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_idle_timeout(IDLE_CONNECTION)
            .build()?;
        Ok(HttpClient {
            url,
            headers: HeaderMap::new(),
            http,
            legacy: false,
            oauth: None,
            max_message: crate::transport::DEFAULT_MAX_FRAME,
        })
    }

    /// The largest message accepted from the server, as a JSON body or as one event of a
    /// stream ([`DEFAULT_MAX_FRAME`](crate::transport::DEFAULT_MAX_FRAME), 4 MiB, by
    /// default). A larger answer fails its request at once ("the answer was larger than
    /// 4 MiB") and is read no further; a stream that carries a larger event is dropped.
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

    /// Speaks only the 2024-11-05 HTTP+SSE transport: `url` is its event-stream endpoint
    /// (usually `…/sse`), opened with `GET` before anything is sent.
    pub fn legacy(mut self) -> Self {
        self.legacy = true;
        self
    }

    /// Adds a header sent with every HTTP request (e.g. `Authorization`).
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, HttpClientError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HttpClientError::Header(name.to_owned()))?;
        let value =
            HeaderValue::from_str(value).map_err(|_| HttpClientError::Header(name.to_string()))?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// Authorizes with `oauth`: its token goes on every request to the endpoint's origin,
    /// and challenges run its flow (see the module docs).
    pub fn oauth(mut self, oauth: Arc<OAuthClient>) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Starts the transport. Must be called inside a Tokio runtime.
    pub fn connect(self) -> Connection {
        self.start().0
    }

    /// Starts the transport, with a handle that tells when it has finished: after the
    /// connection closed and the session was deleted on the server. A command that exits
    /// right after closing its client waits on it, so that the `DELETE` is sent.
    pub fn start(self) -> (Connection, Finished) {
        let (out_tx, out_rx) =
            crate::transport::outbound_queue(crate::transport::DEFAULT_MAX_QUEUED);
        let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
        let driver = Arc::new(Driver {
            http: self.http,
            url: self.url,
            headers: self.headers,
            incoming: in_tx,
            closing: CancellationToken::new(),
            state: Mutex::new(State::default()),
            legacy_only: self.legacy,
            oauth: self.oauth,
            reinitializing: tokio::sync::Mutex::new(()),
            max_message: self.max_message,
        });
        let task = tokio::spawn(driver.run(out_rx));
        let connection = Connection::new(out_tx, in_rx);
        (connection, Finished(task))
    }
}

/// Completes when an [`HttpClient`]'s transport has finished (see [`HttpClient::start`]).
#[derive(Debug)]
pub struct Finished(tokio::task::JoinHandle<()>);

impl Finished {
    /// Waits until the connection has closed and the session was deleted (or the attempt
    /// failed).
    pub async fn wait(self) {
        let _ = self.0.await;
    }
}

#[derive(Default)]
struct State {
    session_id: Option<String>,
    version: Option<String>,
    initialize: Option<RequestId>,
    /// The `initialize` request, replayed to start a new session after a `404`.
    handshake: Option<Message>,
    /// Counts sessions; a standalone stream belongs to the session it was opened for.
    generation: u64,
    /// Where to POST in legacy mode.
    legacy: Option<Url>,
    /// Requests the client cancelled: their streams are not resumed.
    cancelled: HashSet<RequestId>,
    /// Whether a 2026-07-28 request was sent: responses are then never POSTed.
    stateless: bool,
    /// The 2026-07-28 requests in flight; cancelling one closes its stream.
    in_flight: HashMap<RequestId, CancellationToken>,
    /// The `tools/list` requests in flight, whose results teach [`State::tool_headers`].
    tool_lists: HashSet<RequestId>,
    /// Each listed tool's `x-mcp-header` annotations, for the `Mcp-Param-*` headers of its
    /// calls (2026-07-28).
    tool_headers: HashMap<String, Vec<Annotated>>,
}

struct Driver {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    incoming: mpsc::Sender<Inbound>,
    closing: CancellationToken,
    state: Mutex<State>,
    legacy_only: bool,
    oauth: Option<Arc<OAuthClient>>,
    /// Held while a new session is started, so that concurrent `404`s start only one.
    reinitializing: tokio::sync::Mutex<()>,
    /// [`HttpClient::max_message`].
    max_message: usize,
}

/// What the client needs to know about a frame the server sent.
#[derive(Deserialize)]
struct Peek {
    id: Option<RequestId>,
    method: Option<String>,
    result: Option<InitPeek>,
}

#[derive(Deserialize)]
struct InitPeek {
    #[serde(rename = "protocolVersion")]
    version: Option<String>,
}

impl Driver {
    async fn run(self: Arc<Self>, mut outgoing: crate::transport::OutboundReceiver) {
        loop {
            let out = tokio::select! {
                out = outgoing.recv() => out,
                _ = self.closing.cancelled() => None,
            };
            let Some(Outbound { message, .. }) = out else {
                break;
            };
            self.send(message).await;
        }
        self.closing.cancel();
        self.delete_session().await;
    }

    async fn send(self: &Arc<Self>, message: Message) {
        let legacy = lock(&self.state).legacy.clone();
        if let Some(endpoint) = legacy {
            self.post_legacy(&endpoint, &message).await;
            return;
        }
        match &message {
            Message::Request(r) if r.method == "initialize" => {
                {
                    let mut state = lock(&self.state);
                    state.initialize = Some(r.id.clone());
                    state.handshake = Some(message.clone());
                    // A handshake after a refused `server/discover` (auto negotiation): the
                    // handshake family POSTs its responses again.
                    state.stateless = false;
                }
                self.initialize(message).await;
            }
            Message::Request(r) if stateless_version(r).is_some() => {
                let cancel = CancellationToken::new();
                {
                    let mut state = lock(&self.state);
                    state.stateless = true;
                    state.in_flight.insert(r.id.clone(), cancel.clone());
                    if r.method == "tools/list" {
                        state.tool_lists.insert(r.id.clone());
                    }
                }
                let driver = self.clone();
                let id = r.id.clone();
                tokio::spawn(async move {
                    driver.post_stateless(&message, cancel).await;
                    lock(&driver.state).in_flight.remove(&id);
                });
            }
            Message::Request(r) => {
                let driver = self.clone();
                let id = r.id.clone();
                tokio::spawn(async move {
                    driver.post(&message).await;
                    lock(&driver.state).cancelled.remove(&id);
                });
            }
            Message::Notification(n) => {
                if n.method == "notifications/cancelled" {
                    if let Some(id) = cancelled_id(n.params.as_deref()) {
                        let mut state = lock(&self.state);
                        if let Some(stream) = state.in_flight.remove(&id) {
                            // 2026-07-28: closing the response stream is the cancellation.
                            stream.cancel();
                            return;
                        }
                        state.cancelled.insert(id);
                    }
                }
                let accepted = self.post(&message).await;
                if accepted && n.method == "notifications/initialized" {
                    self.open_standalone().await;
                }
            }
            Message::Response(_) => {
                if lock(&self.state).stateless {
                    tracing::debug!("not POSTing a JSON-RPC response: 2026-07-28 forbids it");
                    return;
                }
                self.post(&message).await;
            }
        }
    }

    /// The headers of every request: custom ones, then session and version.
    fn common_headers(&self) -> HeaderMap {
        let state = lock(&self.state);
        with_session(
            self.headers.clone(),
            state.session_id.as_deref(),
            state.version.as_deref(),
        )
    }

    /// Adds the access token (and for a DPoP-bound one its proof) for a `method` request
    /// to `url`, when there is one and `url` is on the endpoint's origin (a token never goes
    /// anywhere else); returns the token added.
    async fn authorize(&self, method: &str, url: &Url, headers: &mut HeaderMap) -> Option<String> {
        let oauth = self.oauth.as_ref()?;
        if url.origin() != self.url.origin() {
            return None;
        }
        let presented = oauth.credentials_for(method, url).await?;
        let (Ok(mut value), Ok(proof)) = (
            HeaderValue::from_str(&presented.authorization),
            presented
                .proof
                .as_deref()
                .map(HeaderValue::from_str)
                .transpose(),
        ) else {
            tracing::warn!("the access token is not a valid header value; not sent");
            return None;
        };
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
        if let Some(proof) = proof {
            headers.insert(crate::auth::dpop::DPOP_HEADER, proof);
        }
        Some(presented.token)
    }

    /// Hands a frame to the session, learning the negotiated revision on the way.
    async fn deliver(&self, frame: Vec<u8>) -> Option<Peek> {
        let peek: Option<Peek> = serde_json::from_slice(&frame).ok();
        if let Some(Peek {
            id: Some(id),
            method: None,
            result: Some(InitPeek {
                version: Some(version),
            }),
        }) = &peek
        {
            let mut state = lock(&self.state);
            if state.initialize.as_ref() == Some(id) {
                state.version = Some(version.clone());
            }
        }
        if let Some(Peek {
            id: Some(id),
            method: None,
            ..
        }) = &peek
        {
            let mut state = lock(&self.state);
            if state.tool_lists.remove(id) {
                stateless::learn_tool_headers(&frame, &mut state.tool_headers);
            }
        }
        let _ = self.incoming.send(Inbound::Frame(frame)).await;
        peek
    }

    /// Reports a failed message: a request fails with `error`, other messages get a log.
    async fn fail(&self, message: &Message, error: TransportError) {
        match message {
            Message::Request(r) => self.fail_id(&r.id, error).await,
            _ => tracing::warn!(%error, "a message could not be delivered to the server"),
        }
    }

    async fn fail_id(&self, id: &RequestId, error: TransportError) {
        tracing::debug!(%id, %error, "request failed in the HTTP transport");
        let _ = self
            .incoming
            .send(Inbound::Failed(id.clone(), Box::new(error)))
            .await;
    }

    /// Hands the session the JSON-RPC error the server put in the body of an error status.
    async fn refused(&self, message: &Message, error: ErrorObject) {
        match message {
            Message::Request(r) => {
                let response =
                    Message::Response(junction_protocol::Response::err(Some(r.id.clone()), error));
                let _ = self
                    .incoming
                    .send(Inbound::Message(Box::new(response)))
                    .await;
            }
            _ => tracing::warn!(%error, "the server refused a message"),
        }
    }

    /// An exchange with the endpoint that failed for `reason`.
    fn exchange(&self, reason: impl Into<String>) -> TransportError {
        TransportError::Exchange {
            url: self.url.to_string(),
            reason: reason.into(),
        }
    }
}

/// Why a POST got no answer to read.
#[derive(Debug)]
pub(super) enum PostError {
    Http(reqwest::Error),
    Auth(AuthError),
}

impl PostError {
    fn at(&self, url: &Url) -> TransportError {
        match self {
            PostError::Http(e) => transport_error(url, e),
            PostError::Auth(e) => TransportError::Auth {
                url: url.to_string(),
                reason: e.to_string(),
            },
        }
    }
}

/// A body that grew past the limit; how many bytes had arrived.
struct TooLarge(usize);

/// Reads a response's body, stopping as soon as it is longer than `limit` bytes (a declared
/// `Content-Length` over it is refused before reading).
async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Result<Vec<u8>, TooLarge>, reqwest::Error> {
    if let Some(declared) = response.content_length().filter(|n| *n > limit as u64) {
        return Ok(Err(TooLarge(
            usize::try_from(declared).unwrap_or(usize::MAX),
        )));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(Err(TooLarge(body.len() + chunk.len())));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Ok(body))
}

/// A failed HTTP exchange with `url`, by what happened. reqwest's own message ("error
/// sending request for url (...)") hides the reason a person can act on, such as
/// "Connection refused", which is the innermost cause.
fn transport_error(url: &Url, e: &reqwest::Error) -> TransportError {
    let mut causes = Vec::new();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        causes.push(c.to_string());
        cause = c.source();
    }
    let url = url.to_string();
    if e.is_connect() {
        let reason = causes.pop().unwrap_or_else(|| e.to_string());
        return TransportError::Connect { url, reason };
    }
    let reason = if causes.is_empty() {
        e.to_string()
    } else {
        causes.join(": ")
    };
    TransportError::Exchange { url, reason }
}

fn cancelled_id(params: Option<&serde_json::value::RawValue>) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    serde_json::from_str::<Params>(params?.get())
        .ok()
        .map(|p| p.request_id)
}

/// `headers` with the session id and the negotiated version, those that are known (and
/// can be header values).
fn with_session(mut headers: HeaderMap, session: Option<&str>, version: Option<&str>) -> HeaderMap {
    for (name, value) in [
        (names::SESSION_ID, session),
        (names::PROTOCOL_VERSION, version),
    ] {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(name, value);
        }
    }
    headers
}
