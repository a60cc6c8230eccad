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
//! - Remembers the `MCP-Session-Id` returned with the initialize result and the negotiated
//!   revision (read from the initialize result passing through), and sends both on every
//!   later request, with any custom headers (e.g. `Authorization`).
//! - After `notifications/initialized` is accepted, opens the standalone `GET` stream
//!   (`405` means the server offers none) and reopens it when it breaks.
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
//! - With [`HttpClient::legacy`] (or when the initialize POST is answered `400`, `404` or
//!   `405`) speaks the 2024-11-05 transport instead.
//!
//! Requests of the stateless revision (2026-07-28, recognised by the protocol version in
//! their `_meta`) are sent differently: no session id, `MCP-Protocol-Version` from the
//! request itself, `Mcp-Method` and (for `tools/call`, `prompts/get` and `resources/read`)
//! `Mcp-Name` headers mirroring the body. A stream that breaks before the response is not
//! resumed (that revision has no event ids): the request fails with an error saying so, and
//! the caller sends it again. Cancelling such a request closes its response stream instead
//! of POSTing `notifications/cancelled`, and JSON-RPC responses are never POSTed.
//!
//! Failures of the transport reach the caller as JSON-RPC error responses to the affected
//! requests (code -32603 with the HTTP status, or the server's own JSON-RPC error).
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
use std::time::Duration;

use junction_protocol::{ErrorCode, ErrorObject, Message, RequestId};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

mod stateless;

use self::stateless::stateless_version;
use super::sse::{Event, Parser};
use super::{LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};
use crate::sync::lock;
use crate::transport::{Connection, Inbound, Outbound, INBOUND_QUEUE};

/// How long to wait before reconnecting when the server named no `retry` delay.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many reconnections in a row may fail before a stream is given up.
const MAX_RECONNECTS: u32 = 5;
/// How long sending waits, after `notifications/initialized`, for the standalone stream to
/// be established (a server may drop what it has for a stream that is not open yet).
const STANDALONE_WAIT: Duration = Duration::from_secs(2);

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
}

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
        // TCP_NODELAY: without it each exchange waits on delayed ACKs (DESIGN.md).
        let http = reqwest::Client::builder().tcp_nodelay(true).build()?;
        Ok(HttpClient {
            url,
            headers: HeaderMap::new(),
            http,
            legacy: false,
        })
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

    /// Starts the transport. Must be called inside a Tokio runtime.
    pub fn connect(self) -> Connection {
        self.start().0
    }

    /// Starts the transport, with a handle that tells when it has finished: after the
    /// connection closed and the session was deleted on the server. A command that exits
    /// right after closing its client waits on it, so that the `DELETE` is sent.
    pub fn start(self) -> (Connection, Finished) {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
        let driver = Arc::new(Driver {
            http: self.http,
            url: self.url,
            headers: self.headers,
            incoming: in_tx,
            closing: CancellationToken::new(),
            state: Mutex::new(State::default()),
            legacy_only: self.legacy,
            reinitializing: tokio::sync::Mutex::new(()),
        });
        let task = tokio::spawn(driver.run(out_rx));
        let connection = Connection {
            outgoing: out_tx,
            incoming: in_rx,
        };
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
}

struct Driver {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    incoming: mpsc::Sender<Inbound>,
    closing: CancellationToken,
    state: Mutex<State>,
    legacy_only: bool,
    /// Held while a new session is started, so that concurrent `404`s start only one.
    reinitializing: tokio::sync::Mutex<()>,
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
    async fn run(self: Arc<Self>, mut outgoing: mpsc::UnboundedReceiver<Outbound>) {
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
                }
                self.initialize(message).await;
            }
            Message::Request(r) if stateless_version(r).is_some() => {
                let cancel = CancellationToken::new();
                {
                    let mut state = lock(&self.state);
                    state.stateless = true;
                    state.in_flight.insert(r.id.clone(), cancel.clone());
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
        let mut headers = self.headers.clone();
        let state = lock(&self.state);
        if let Some(value) = state
            .session_id
            .as_deref()
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            headers.insert(SESSION_ID_HEADER, value);
        }
        if let Some(value) = state
            .version
            .as_deref()
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            headers.insert(PROTOCOL_VERSION_HEADER, value);
        }
        headers
    }

    /// Opens the standalone stream of the current session and waits for it to be established
    /// (or refused) before anything else is sent: servers that drop messages while no GET
    /// stream is open would otherwise lose what the next request causes.
    async fn open_standalone(self: &Arc<Self>) {
        let (ready, established) = oneshot::channel();
        let generation = lock(&self.state).generation;
        tokio::spawn(self.clone().standalone(ready, generation));
        let _ = tokio::time::timeout(STANDALONE_WAIT, established).await;
    }

    async fn post_raw(
        &self,
        url: &Url,
        headers: HeaderMap,
        message: &Message,
    ) -> Result<reqwest::Response, reqwest::Error> {
        self.http
            .post(url.clone())
            .headers(headers)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(message.encode())
            .send()
            .await
    }

    /// `initialize`: POST it, or fall back to the legacy transport.
    async fn initialize(self: &Arc<Self>, message: Message) {
        if self.legacy_only {
            return match self.open_legacy().await {
                Ok(endpoint) => self.post_legacy(&endpoint, &message).await,
                Err(reason) => {
                    let error = ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("the HTTP+SSE endpoint could not be opened: {reason}"),
                    );
                    self.fail(&message, error).await
                }
            };
        }
        let response = match self
            .post_raw(&self.url, self.common_headers(), &message)
            .await
        {
            Ok(response) => response,
            Err(e) => return self.fail(&message, transport_error(&e)).await,
        };
        if matches!(
            response.status(),
            StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
        ) {
            tracing::debug!(status = %response.status(), "initialize refused; trying the 2024-11-05 HTTP+SSE transport");
            match self.open_legacy().await {
                Ok(endpoint) => {
                    self.post_legacy(&endpoint, &message).await;
                    return;
                }
                Err(reason) => {
                    tracing::debug!(%reason, "the legacy transport is not offered either");
                }
            }
        }
        if let Some(id) = response
            .headers()
            .get(SESSION_ID_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            lock(&self.state).session_id = Some(id.to_owned());
        }
        self.answer(&message, response).await;
    }

    /// POSTs one message and handles its answer; returns whether the server accepted it.
    /// A `404` for the session starts a new one and sends the message again, once.
    async fn post(self: &Arc<Self>, message: &Message) -> bool {
        let mut retried = false;
        loop {
            let headers = self.common_headers();
            let session = headers
                .get(SESSION_ID_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let response = match self.post_raw(&self.url, headers, message).await {
                Ok(response) => response,
                Err(e) => {
                    self.fail(message, transport_error(&e)).await;
                    return false;
                }
            };
            if response.status() == StatusCode::NOT_FOUND && !retried {
                if let Some(session) = session {
                    retried = true;
                    match self.reinitialize(&session).await {
                        Ok(()) => continue,
                        Err(reason) => {
                            tracing::warn!(%reason, "could not start a new session");
                        }
                    }
                }
            }
            return self.answer(message, response).await;
        }
    }

    /// Starts a new session in place of `expired`: replays the recorded `initialize` without
    /// a session id, sends `notifications/initialized` and reopens the standalone stream.
    /// Does nothing when another message already replaced that session. Other messages keep
    /// using the expired session (and wait here on their `404`) until the new one is ready.
    async fn reinitialize(self: &Arc<Self>, expired: &str) -> Result<(), String> {
        let _one_at_a_time = self.reinitializing.lock().await;
        let (handshake, expected) = {
            let state = lock(&self.state);
            if state.session_id.as_deref() != Some(expired) {
                return Ok(());
            }
            let handshake = state
                .handshake
                .clone()
                .ok_or("no initialize request was recorded")?;
            (handshake, state.version.clone())
        };
        tracing::info!(session = %expired, "the server ended the session (404); starting a new one");
        let mut headers = self.headers.clone();
        let response = self
            .post_raw(&self.url, headers.clone(), &handshake)
            .await
            .map_err(|e| format!("initialize: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("initialize answered HTTP {}", response.status()));
        }
        let session = response
            .headers()
            .get(SESSION_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let result = read_single_response(response).await?;
        let version = result
            .get("protocolVersion")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        if version != expected {
            return Err(format!(
                "the new session negotiated {version:?} instead of {expected:?}"
            ));
        }
        if let Some(value) = session
            .as_deref()
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            headers.insert(SESSION_ID_HEADER, value);
        }
        if let Some(value) = version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            headers.insert(PROTOCOL_VERSION_HEADER, value);
        }
        let initialized = Message::Notification(junction_protocol::Notification {
            method: "notifications/initialized".to_owned(),
            params: None,
        });
        let response = self
            .post_raw(&self.url, headers, &initialized)
            .await
            .map_err(|e| format!("notifications/initialized: {e}"))?;
        if !response.status().is_success() {
            return Err(format!(
                "notifications/initialized answered HTTP {}",
                response.status()
            ));
        }
        {
            let mut state = lock(&self.state);
            state.session_id = session;
            state.generation += 1;
        }
        self.open_standalone().await;
        Ok(())
    }

    /// Reads the answer to a POST.
    async fn answer(self: &Arc<Self>, message: &Message, response: reqwest::Response) -> bool {
        let status = response.status();
        if !status.is_success() {
            let session_ended =
                status == StatusCode::NOT_FOUND && lock(&self.state).session_id.is_some();
            let body = response.bytes().await.unwrap_or_default();
            let error = match serde_json::from_slice::<ErrorBody>(&body) {
                Ok(ErrorBody { error }) if !session_ended => error,
                _ if session_ended => ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    "HTTP 404: the server ended this session; connect again to start a new one",
                ),
                _ => ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("HTTP {status}: {}", String::from_utf8_lossy(&body).trim()),
                ),
            };
            self.fail(message, error).await;
            return false;
        }
        let Message::Request(request) = message else {
            // A body on the answer to a notification or response carries nothing to read.
            return true;
        };
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if sse {
            self.read_request_stream(request.id.clone(), response).await;
        } else {
            match response.bytes().await {
                Ok(body) if !body.is_empty() => {
                    let peek = self.deliver(body.to_vec()).await;
                    let answered = peek
                        .is_some_and(|p| p.method.is_none() && p.id.as_ref() == Some(&request.id));
                    if !answered {
                        let error = ErrorObject::new(
                            ErrorCode::INTERNAL_ERROR,
                            "the server answered the request with a JSON body that is not its response",
                        );
                        self.fail(message, error).await;
                    }
                }
                Ok(_) => {
                    let error = ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        "the server answered the request with an empty body",
                    );
                    self.fail(message, error).await;
                }
                Err(e) => self.fail(message, transport_error(&e)).await,
            }
        }
        true
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
        let _ = self.incoming.send(Inbound::Frame(frame)).await;
        peek
    }

    /// Reports a failed message: a request gets an error response, other messages a log.
    async fn fail(&self, message: &Message, error: ErrorObject) {
        match message {
            Message::Request(r) => {
                tracing::debug!(id = %r.id, %error, "request failed in the HTTP transport");
                let response =
                    Message::Response(junction_protocol::Response::err(Some(r.id.clone()), error));
                let _ = self.incoming.send(Inbound::Frame(response.encode())).await;
            }
            _ => tracing::warn!(%error, "a message could not be delivered to the server"),
        }
    }

    /// Reads a request's event stream until its response, resuming it when it breaks.
    async fn read_request_stream(self: &Arc<Self>, id: RequestId, response: reqwest::Response) {
        let mut cursor = StreamCursor::default();
        let mut response = Some(response);
        let mut failures = 0;
        loop {
            if let Some(r) = response.take() {
                let progressed = self.read_events(r, &mut cursor, Some(&id)).await;
                if cursor.answered || self.closing.is_cancelled() {
                    return;
                }
                failures = if progressed { 0 } else { failures + 1 };
            }
            if lock(&self.state).cancelled.remove(&id) {
                return;
            }
            let Some(last) = cursor.last_id.clone() else {
                let error = ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    "the server closed the event stream before the response, without an event id to resume from",
                );
                return self.fail_id(&id, error).await;
            };
            if failures >= MAX_RECONNECTS {
                let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("the event stream broke and could not be resumed after {MAX_RECONNECTS} attempts"));
                return self.fail_id(&id, error).await;
            }
            tokio::select! {
                _ = tokio::time::sleep(cursor.retry) => {}
                _ = self.closing.cancelled() => return,
            }
            match self.get(Some(&last)).await {
                Ok(r) if r.status().is_success() => response = Some(r),
                Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                    let error = ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        "HTTP 404 while resuming: the server ended this session",
                    );
                    return self.fail_id(&id, error).await;
                }
                Ok(r) => {
                    tracing::debug!(status = %r.status(), "resuming an event stream failed");
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "resuming an event stream failed");
                    failures += 1;
                }
            }
        }
    }

    async fn fail_id(&self, id: &RequestId, error: ErrorObject) {
        let response = Message::Response(junction_protocol::Response::err(Some(id.clone()), error));
        let _ = self.incoming.send(Inbound::Frame(response.encode())).await;
    }

    /// Reads events until the stream ends (or, for a request stream, until its response).
    /// Returns whether anything arrived.
    async fn read_events(
        &self,
        mut response: reqwest::Response,
        cursor: &mut StreamCursor,
        request: Option<&RequestId>,
    ) -> bool {
        let mut parser = Parser::default();
        let mut progressed = false;
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk,
                _ = self.closing.cancelled() => return progressed,
            };
            let chunk = match chunk {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return progressed,
                Err(e) => {
                    tracing::debug!(error = %e, "event stream broke");
                    return progressed;
                }
            };
            let events = match parser.try_feed(&chunk) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "dropping an unreadable event stream");
                    return progressed;
                }
            };
            for event in events {
                progressed = true;
                if let Some(id) = event.id.as_ref().filter(|id| !id.is_empty()) {
                    cursor.last_id = Some(id.clone());
                }
                if let Some(retry) = event.retry {
                    cursor.retry = retry;
                }
                if !event.is_message() || event.data.trim().is_empty() {
                    continue;
                }
                let peek = self.deliver(event.data.into_bytes()).await;
                let answered = peek.is_some_and(|p| {
                    p.method.is_none() && p.id.is_some() && p.id.as_ref() == request
                });
                if answered {
                    cursor.answered = true;
                    return true;
                }
            }
        }
    }

    async fn get(&self, last_event_id: Option<&str>) -> Result<reqwest::Response, reqwest::Error> {
        let mut request = self
            .http
            .get(self.url.clone())
            .headers(self.common_headers())
            .header(ACCEPT, "text/event-stream");
        if let Some(last) = last_event_id {
            request = request.header(LAST_EVENT_ID_HEADER, last);
        }
        request.send().await
    }

    /// The standalone GET stream: opened after initialization, reopened when it breaks.
    /// `ready` fires once the first attempt is answered (established or refused).
    /// The stream ends with its session (`generation`).
    async fn standalone(self: Arc<Self>, ready: oneshot::Sender<()>, generation: u64) {
        let mut cursor = StreamCursor::default();
        let mut failures = 0;
        let mut opened_once = false;
        let mut ready = Some(ready);
        while failures < MAX_RECONNECTS
            && !self.closing.is_cancelled()
            && lock(&self.state).generation == generation
        {
            let attempt = self.get(cursor.last_id.as_deref()).await;
            if let Some(ready) = ready.take() {
                let _ = ready.send(());
            }
            match attempt {
                Ok(r) if r.status().is_success() => {
                    opened_once = true;
                    let progressed = self.read_events(r, &mut cursor, None).await;
                    failures = if progressed { 0 } else { failures + 1 };
                }
                Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED && !opened_once => {
                    tracing::debug!("the server offers no standalone GET stream");
                    return;
                }
                Ok(r) => {
                    tracing::debug!(status = %r.status(), "the standalone GET stream was refused");
                    if !opened_once {
                        return;
                    }
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "the standalone GET stream failed");
                    failures += 1;
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(cursor.retry) => {}
                _ = self.closing.cancelled() => return,
            }
        }
    }

    /// Ends the session on the server.
    async fn delete_session(&self) {
        if lock(&self.state).legacy.is_some() {
            return;
        }
        let Some(id) = lock(&self.state).session_id.clone() else {
            return;
        };
        let result = self
            .http
            .delete(self.url.clone())
            .headers(self.common_headers())
            .send()
            .await;
        match result {
            Ok(r) => tracing::debug!(session = %id, status = %r.status(), "session deleted"),
            Err(e) => tracing::debug!(session = %id, error = %e, "could not delete the session"),
        }
    }

    /// Opens the legacy event stream and waits for its `endpoint` event.
    async fn open_legacy(self: &Arc<Self>) -> Result<Url, String> {
        let mut response = self
            .http
            .get(self.url.clone())
            .headers(self.headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("GET answered {}", response.status()));
        }
        let mut parser = Parser::default();
        let mut early: Vec<Event> = Vec::new();
        let endpoint = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| e.to_string())?
                .ok_or("the stream ended before the endpoint event")?;
            let events = parser.try_feed(&chunk).map_err(|e| e.to_string())?;
            let mut found = None;
            for event in events {
                if found.is_none() && event.event.as_deref() == Some("endpoint") {
                    found = Some(event.data.trim().to_owned());
                } else {
                    early.push(event);
                }
            }
            if let Some(found) = found {
                break found;
            }
        };
        let endpoint = self
            .url
            .join(&endpoint)
            .map_err(|e| format!("bad endpoint {endpoint:?}: {e}"))?;
        lock(&self.state).legacy = Some(endpoint.clone());
        let driver = self.clone();
        tokio::spawn(async move {
            for event in early
                .into_iter()
                .filter(|e| e.is_message() && !e.data.trim().is_empty())
            {
                driver.deliver(event.data.into_bytes()).await;
            }
            driver.read_legacy(response, parser).await;
            // The legacy session lives and dies with its stream.
            driver.closing.cancel();
        });
        Ok(endpoint)
    }

    /// Reads the legacy stream: every message event goes to the session. The old transport
    /// has no resumption, so the session ends with the stream.
    async fn read_legacy(&self, mut response: reqwest::Response, mut parser: Parser) {
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk,
                _ = self.closing.cancelled() => return,
            };
            let Ok(Some(chunk)) = chunk else { return };
            let Ok(events) = parser.try_feed(&chunk) else {
                return;
            };
            for event in events {
                if event.is_message() && !event.data.trim().is_empty() {
                    self.deliver(event.data.into_bytes()).await;
                }
            }
        }
    }

    async fn post_legacy(&self, endpoint: &Url, message: &Message) {
        let result = self
            .http
            .post(endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(message.encode())
            .send()
            .await;
        match result {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => {
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                let error = ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("HTTP {status}: {}", body.trim()),
                );
                self.fail(message, error).await;
            }
            Err(e) => self.fail(message, transport_error(&e)).await,
        }
    }
}

/// Where a stream stands: the id to resume after, the delay before reconnecting.
struct StreamCursor {
    last_id: Option<String>,
    retry: Duration,
    answered: bool,
}

impl Default for StreamCursor {
    fn default() -> Self {
        StreamCursor {
            last_id: None,
            retry: DEFAULT_RETRY,
            answered: false,
        }
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

/// The `result` of the one response an answer carries, as a JSON body or on an event
/// stream (other messages on the stream are skipped: nothing is pending on a new session).
async fn read_single_response(
    mut response: reqwest::Response,
) -> Result<serde_json::Value, String> {
    #[derive(Deserialize)]
    struct Answer {
        method: Option<String>,
        result: Option<serde_json::Value>,
        error: Option<ErrorObject>,
    }
    fn read(frame: &[u8]) -> Option<Result<serde_json::Value, String>> {
        let answer: Answer = serde_json::from_slice(frame).ok()?;
        if answer.method.is_some() {
            return None;
        }
        Some(match (answer.result, answer.error) {
            (Some(result), None) => Ok(result),
            (_, Some(error)) => Err(format!("initialize failed: {error}")),
            (None, None) => Err("initialize answered neither a result nor an error".to_owned()),
        })
    }
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !sse {
        let body = response.bytes().await.map_err(|e| e.to_string())?;
        return read(&body).unwrap_or_else(|| {
            Err("initialize answered a body that is not its response".to_owned())
        });
    }
    let mut parser = Parser::default();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        let events = parser.try_feed(&chunk).map_err(|e| e.to_string())?;
        for event in events.into_iter().filter(Event::is_message) {
            if let Some(answer) = read(event.data.as_bytes()) {
                return answer;
            }
        }
    }
    Err("the initialize stream ended before its response".to_owned())
}

/// The error with its causes: reqwest's own message alone ("error sending request") hides
/// the reason a person can act on, such as "Connection refused".
fn transport_error(e: &reqwest::Error) -> ErrorObject {
    let mut text = format!("HTTP transport error: {e}");
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, text)
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
