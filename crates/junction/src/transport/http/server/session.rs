//! One Streamable HTTP session: its connection to the served session, its SSE streams, and
//! the routing of every outgoing message onto exactly one of them.
//!
//! Stream 0 is the standalone GET stream; every request POSTed gets a stream of its own
//! (1, 2, …). A message related to a request goes on that request's stream and the request's
//! response ends it; anything else goes on stream 0, and waits in a bounded backlog (oldest
//! dropped, with a warning) while no GET stream is open.
//!
//! Every stream's connection is fed through a byte-bounded [`queue`]: a client that stops
//! reading a stream makes its queue overflow. On a resumable stream (2025-11-25 and later,
//! with sessions) the connection is then closed and the stream detached; every event is in
//! the [`EventStore`] already, so the client resumes with `Last-Event-ID` and loses nothing.
//! A stream that cannot be resumed ends the whole session instead, with a warning: it is the
//! only way to stop growing that does not silently drop a message.
//!
//! A request stream starts undecided: if the response is the first thing sent for the request
//! it goes back as one `application/json` body; the first other message turns it into an
//! event stream. In [`ResponseMode::AlwaysSse`](super::ResponseMode::AlwaysSse) the stream
//! is an event stream either way, but it too opens with its first message, or after
//! [`SSE_OPEN_GRACE`](super::SSE_OPEN_GRACE) if none comes sooner: a quick response
//! leaves with its headers and its priming event in one write, and a slow request still
//! gets its priming event promptly.
//! Every event on an event stream has an id and is kept in the
//! [`EventStore`], and routing, storing and (re)attaching a connection all happen under one
//! lock, so a resumed stream neither loses nor repeats a message.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::Frame;
use junction_protocol::{Message, ProtocolVersion, RequestId};
use tokio::sync::{mpsc, oneshot};

use super::changes::SharedChanges;
use super::event_store::{EventId, EventStore};
use super::session_store::{Routed, RoutedKind, SessionStore};
use crate::session::BoxFuture;
use crate::sync::lock;
use crate::transport::http::sse::{self, Event};
use crate::transport::queue::{self, SendError};
use crate::transport::{
    outbound_queue, Connection, Inbound, Outbound, OutboundReceiver, TransportEvent, INBOUND_QUEUE,
};

/// The notification that ends the handshake.
pub(super) const INITIALIZED: &str = "notifications/initialized";

/// What an SSE response reads: encoded events.
pub(super) type EventReceiver = queue::Receiver<Bytes>;
type EventSender = queue::Sender<Bytes>;

/// How a session takes part in a deployment of several instances sharing a
/// [`SessionStore`].
#[derive(Clone)]
pub(super) struct ClusterLink {
    pub store: Arc<dyn SessionStore>,
    /// This instance's id: the upper 32 bits of its stream ids.
    pub instance: u32,
    /// Messages to publish, in order (a task of the server sends them).
    pub publish: mpsc::UnboundedSender<Routed>,
    /// How long a session's record lives without a request (the idle timeout).
    pub record_ttl: Duration,
    /// The server's change notifications, shared with every instance.
    pub changes: SharedChanges,
}

/// What a session needs from the server's configuration.
#[derive(Debug, Clone)]
pub(super) struct SessionSettings {
    pub retry: Duration,
    pub standalone_backlog: usize,
    /// The most bytes that wait on one stream for its client, and in the standalone backlog.
    pub max_queued: usize,
    /// Whether events get ids and a priming event (false for one-shot stateless sessions).
    pub resumable: bool,
    /// The server's change notifications, when instances share a session store.
    pub changes: Option<SharedChanges>,
}

/// The body of an SSE response: events as the session routes them.
///
/// With a shared store, each event is held back until the store has made every write
/// queued before the event reached the body ([`SessionStore::pending_writes`]), its own
/// included: an event leaves for the client only once another instance can replay it, so
/// an instance killed at any moment loses nothing a client has seen the id of. The writes
/// stay batched; a body waits for at most the batches ahead of its event.
pub(super) struct SseBody {
    rx: EventReceiver,
    durable: Option<Arc<dyn SessionStore>>,
    /// An event received from the queue, waiting for the store's writes.
    held: Option<(Bytes, BoxFuture<'static, ()>)>,
}

impl SseBody {
    /// A body sending each event as soon as it is routed.
    pub(super) fn new(rx: EventReceiver) -> Self {
        SseBody {
            rx,
            durable: None,
            held: None,
        }
    }

    /// A body sending each event once `store` has it (see [`SseBody`]).
    pub(super) fn durable(rx: EventReceiver, store: Option<Arc<dyn SessionStore>>) -> Self {
        SseBody {
            rx,
            durable: store,
            held: None,
        }
    }
}

impl http_body::Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if let Some((_, written)) = &mut this.held {
            if written.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if let Some((event, _)) = this.held.take() {
                return Poll::Ready(Some(Ok(Frame::data(event))));
            }
        }
        let Poll::Ready(event) = this.rx.poll_recv(cx) else {
            return Poll::Pending;
        };
        let Some(event) = event else {
            return Poll::Ready(None);
        };
        if let Some(mut written) = this.durable.as_ref().and_then(|s| s.pending_writes()) {
            if written.as_mut().poll(cx).is_pending() {
                this.held = Some((event, written));
                return Poll::Pending;
            }
        }
        Poll::Ready(Some(Ok(Frame::data(event))))
    }
}

/// What a served session may ask of its HTTP transport ([`super::HttpServer::with_control`]).
#[derive(Clone)]
pub struct SessionControl {
    session: Weak<HttpSession>,
}

impl std::fmt::Debug for SessionControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionControl")
            .field("session", &self.session_id())
            .finish()
    }
}

impl SessionControl {
    /// A control that controls nothing (legacy sessions have a single stream).
    pub(super) fn none() -> Self {
        SessionControl {
            session: Weak::new(),
        }
    }

    /// The session's `MCP-Session-Id`, while the session lives.
    pub fn session_id(&self) -> Option<String> {
        self.session.upgrade().map(|s| s.id.clone())
    }

    /// The identity of the bearer token of the latest request to this session, checked
    /// when that request came (`None` without
    /// [`BearerAuth`](super::BearerAuth)).
    pub fn caller(&self) -> Option<crate::auth::resource::Identity> {
        self.session.upgrade().and_then(|s| lock(&s.caller).clone())
    }

    /// Closes the HTTP response that carries request `id`'s stream without ending the
    /// stream (SSE polling, SEP-1699): the client reconnects after the announced `retry`
    /// delay with `GET` + `Last-Event-ID` and receives what was sent meanwhile, the response
    /// included. A request still undecided between JSON and SSE gets an event stream first,
    /// so the client has an event id to resume from.
    ///
    /// Returns false, changing nothing, when the request has no open stream, or the session
    /// cannot resume streams (stateless mode, or a revision before 2025-11-25).
    pub fn close_stream(&self, id: &RequestId) -> bool {
        self.session
            .upgrade()
            .is_some_and(|s| s.close_stream(Some(id)))
    }

    /// Closes the standalone GET stream's connection in the same way.
    pub fn close_standalone_stream(&self) -> bool {
        self.session.upgrade().is_some_and(|s| s.close_stream(None))
    }

    /// How this server shares its change notifications with the other instances, when the
    /// HTTP server has a [`SessionStore`] (for every session, 2026-07-28
    /// requests' included).
    pub(crate) fn shared_changes(&self) -> Option<SharedChanges> {
        self.session.upgrade()?.settings.changes.clone()
    }

    /// Whether instances share this session through a [`SessionStore`]:
    /// then it hears of changes from the instance holding its standalone stream.
    pub(crate) fn is_shared(&self) -> bool {
        self.session.upgrade().is_some_and(|s| s.cluster.is_some())
    }

    /// Whether the client's standalone GET stream is open on this instance.
    pub(crate) fn holds_standalone(&self) -> bool {
        self.session.upgrade().is_some_and(|s| s.holds_standalone())
    }

    /// The `Mcp-Param-*` headers of the request this session serves (2026-07-28, where a
    /// session serves one request): each name without the prefix, lowercase, and its raw
    /// value. Empty for sessions of the handshake family.
    pub fn param_headers(&self) -> Vec<(String, String)> {
        self.session
            .upgrade()
            .map(|s| lock(&s.param_headers).clone())
            .unwrap_or_default()
    }
}

/// How a POSTed request is answered.
pub(super) enum Reply {
    /// One JSON body: the response was the only message; with its error code, if an error.
    Json(Bytes, Option<junction_protocol::ErrorCode>),
    /// An event stream.
    Sse(EventReceiver),
}

/// Why a POSTed request has no reply.
#[derive(Debug)]
pub(super) enum NoReply {
    /// A request with this id is still in flight in this session.
    DuplicateId,
    /// The session ended.
    Closed,
    /// The client cancelled the request; no response will come.
    Cancelled,
}

/// Why a GET stream could not be opened.
#[derive(Debug)]
pub(super) enum OpenError {
    /// A standalone stream is already open.
    Conflict,
    /// `Last-Event-ID` names a stream this session never had.
    UnknownStream,
    /// The session ended.
    Closed,
}

enum Sink {
    Undecided(oneshot::Sender<Reply>),
    Live(EventSender),
    Detached,
}

struct Stream {
    next_seq: u64,
    sink: Sink,
    /// The request it answers (none for the standalone stream).
    request: Option<RequestId>,
    /// Undecided, it still becomes an event stream, never a JSON body.
    always_sse: bool,
}

impl Stream {
    fn new(sink: Sink, request: Option<RequestId>) -> Self {
        Stream {
            next_seq: 0,
            sink,
            request,
            always_sse: false,
        }
    }
}

/// An event stream just made live, whose receiver the request's POST has not been given yet.
struct Opened {
    reply: oneshot::Sender<Reply>,
    rx: EventReceiver,
}

struct State {
    next_stream: u64,
    requests: HashMap<RequestId, u64>,
    streams: HashMap<u64, Stream>,
    backlog: VecDeque<Bytes>,
    backlog_bytes: usize,
    initialize: Option<RequestId>,
    /// The client's `initialize` parameters, to save in the shared store once `initialize`
    /// succeeds with an event stream (a JSON answer is saved by the endpoint).
    share: Option<String>,
    version: Option<ProtocolVersion>,
    closed: bool,
    /// The server's requests to the client still waiting for their response.
    outgoing: std::collections::HashSet<RequestId>,
    /// Whether the served session has been handed `notifications/initialized` after the
    /// initialize result (or was restored, standing as initialized).
    initialized: bool,
    /// End the session once no request is in flight (stateless mode).
    one_shot: bool,
    last_seen: Instant,
}

/// One session of the Streamable HTTP endpoint.
pub(super) struct HttpSession {
    pub id: String,
    /// The subject that opened the session, under bearer authorization.
    pub subject: Option<String>,
    /// The standalone stream's id: 0, or this instance's id in its upper 32 bits.
    standalone: u64,
    cluster: Option<ClusterLink>,
    inbound: Mutex<Option<mpsc::Sender<Inbound>>>,
    /// What the served session sends, taken by [`Pump`] as it is sent; dropped when the
    /// session ends, so that its sends fail from then on.
    outbound: Mutex<Option<OutboundReceiver>>,
    state: Mutex<State>,
    store: Arc<dyn EventStore>,
    settings: SessionSettings,
    /// See [`SessionControl::param_headers`].
    param_headers: Mutex<Vec<(String, String)>>,
    /// The identity of the latest request's bearer token (behind `BearerAuth`).
    caller: Mutex<Option<crate::auth::resource::Identity>>,
}

impl HttpSession {
    /// Creates the session, hands its [`Connection`] to `serve`, and starts routing.
    pub(super) fn start(
        id: String,
        settings: SessionSettings,
        store: Arc<dyn EventStore>,
        cluster: Option<ClusterLink>,
        serve: &(dyn Fn(Connection, SessionControl) + Send + Sync),
    ) -> Arc<HttpSession> {
        let standalone = cluster.as_ref().map_or(0, |c| u64::from(c.instance) << 32);
        // Unbounded: [`Pump`] drains it into the streams' bounded queues as it is sent, so
        // only this server's own handlers (never the client) decide how much it holds, and
        // a burst from them must not end the session.
        let (out_tx, out_rx) = outbound_queue(usize::MAX);
        let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
        let mut streams = HashMap::new();
        streams.insert(standalone, Stream::new(Sink::Detached, None));
        let session = Arc::new(HttpSession {
            id,
            subject: crate::auth::resource::Identity::current().map(|i| i.subject),
            standalone,
            cluster,
            inbound: Mutex::new(Some(in_tx)),
            outbound: Mutex::new(Some(out_rx)),
            state: Mutex::new(State {
                next_stream: standalone + 1,
                requests: HashMap::new(),
                streams,
                backlog: VecDeque::new(),
                backlog_bytes: 0,
                initialize: None,
                share: None,
                version: None,
                closed: false,
                outgoing: std::collections::HashSet::new(),
                initialized: false,
                one_shot: false,
                last_seen: Instant::now(),
            }),
            store,
            settings,
            param_headers: Mutex::new(Vec::new()),
            caller: Mutex::new(None),
        });
        let control = SessionControl {
            session: Arc::downgrade(&session),
        };
        if let Some(tx) = lock(&session.inbound).as_ref() {
            // The queue is empty: this is the first thing the served session reads.
            let _ = tx.try_send(Inbound::Event(TransportEvent::Http(control.clone())));
        }
        let mut connection = Connection::new(out_tx, in_rx);
        // Another instance may send this client requests of the same session: ids carry the
        // instance so that the client never sees one twice and each answer finds its sender.
        connection.request_id_prefix = session
            .cluster
            .as_ref()
            .map(|c| format!("{:x}-", c.instance));
        serve(connection, control);
        // The first drain also registers the pump with the queue, for every later send.
        Arc::new(Pump {
            session: session.clone(),
        })
        .drain();
        session
    }

    /// Keeps the `Mcp-Param-*` headers of the one request this session serves.
    pub(super) fn set_param_headers(&self, headers: Vec<(String, String)>) {
        *lock(&self.param_headers) = headers;
    }

    /// Keeps the client's `initialize` parameters, to share the session's record if its
    /// result goes out on an event stream (see [`SessionStore::create_queued`]).
    pub(super) fn share_when_initialized(&self, initialize: String) {
        lock(&self.state).share = Some(initialize);
    }

    /// Records activity, for idle expiry.
    pub(super) fn touch(&self) {
        lock(&self.state).last_seen = Instant::now();
    }

    /// Whether nothing has happened for `idle`: no request in flight, no stream open.
    pub(super) fn idle_for(&self, idle: Duration) -> bool {
        self.idle_since()
            .is_some_and(|since| since.elapsed() >= idle)
    }

    /// When the session was last active, if it is idle now (no request in flight, no
    /// stream open).
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let state = lock(&self.state);
        let live = state.streams.values().any(|s| match &s.sink {
            Sink::Live(tx) => !tx.is_closed(),
            Sink::Undecided(tx) => !tx.is_closed(),
            Sink::Detached => false,
        });
        (!live && state.requests.is_empty()).then_some(state.last_seen)
    }

    /// Ends the session as soon as no request is in flight (stateless mode).
    pub(super) fn close_when_answered(&self) {
        let idle = {
            let mut state = lock(&self.state);
            state.one_shot = true;
            state.requests.is_empty()
        };
        if idle {
            self.close();
        }
    }

    /// Whether the session has ended (from the moment its streams are cleared).
    pub(super) fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Hands a notification or response from the client to the served session.
    ///
    /// `notifications/initialized` is handed over once: with a shared store it may come
    /// both from the session's record ([`HttpSession::awaits_initialized`]) and routed
    /// from the instance the client POSTed it to.
    pub(super) async fn deliver(&self, message: Message) -> bool {
        if let Message::Notification(n) = &message {
            match n.method.as_str() {
                "notifications/cancelled" => self.cancelled(n.params.as_deref()),
                INITIALIZED => return self.hand_over_initialized(message).await,
                _ => {}
            }
        }
        self.forward(message).await
    }

    /// Hands `notifications/initialized` over unless it already was. The mark and the
    /// queueing happen under one lock (a reserved slot makes the send synchronous): a
    /// request that finds the session initialized ([`HttpSession::awaits_initialized`]) is
    /// then queued behind the notification, never before it.
    async fn hand_over_initialized(&self, message: Message) -> bool {
        let Some(tx) = self.sender() else {
            return false;
        };
        let Ok(slot) = tx.reserve().await else {
            return false;
        };
        let mut state = lock(&self.state);
        if state.initialized {
            return true;
        }
        // Before the initialize result it is the served session's to refuse.
        state.initialized = state.version.is_some();
        slot.send(Inbound::Message(Box::new(message)));
        true
    }

    /// Whether `initialize` has been answered here and `notifications/initialized` has not
    /// been handed over yet.
    pub(super) fn awaits_initialized(&self) -> bool {
        let state = lock(&self.state);
        state.version.is_some() && !state.initialized
    }

    /// The shared store that an SSE body of this session waits for (see [`SseBody`]).
    pub(super) fn durable_store(&self) -> Option<Arc<dyn SessionStore>> {
        self.cluster.as_ref().map(|c| c.store.clone())
    }

    /// Hands an event of this transport to the served session.
    pub(super) async fn event(&self, event: TransportEvent) -> bool {
        let Some(tx) = lock(&self.inbound).clone() else {
            return false;
        };
        tx.send(Inbound::Event(event)).await.is_ok()
    }

    /// Whether `response` answers a request this session's server sent (and so is for this
    /// instance); the request stops waiting either way.
    pub(super) fn takes_response(&self, response: &junction_protocol::Response) -> bool {
        response
            .id
            .as_ref()
            .is_some_and(|id| lock(&self.state).outgoing.remove(id))
    }

    /// The revision negotiated, once `initialize` has succeeded.
    pub(super) fn negotiated(&self) -> Option<ProtocolVersion> {
        lock(&self.state).version
    }

    /// Sets the revision of a session restored from its shared record.
    pub(super) fn restored(&self, version: ProtocolVersion) {
        let mut state = lock(&self.state);
        state.version = Some(version);
        state.initialized = true;
    }

    /// The client's request that `stream` answers, for the shared store.
    fn note_stream(&self, stream: u64, request: &RequestId) {
        if let Some(cluster) = &self.cluster {
            cluster.store.stream_opened(&self.id, stream, request);
        }
    }

    /// Sends a message another instance made for the standalone stream, if that stream is
    /// open here.
    pub(super) fn push_standalone(&self, data: Bytes) {
        let mut state = lock(&self.state);
        if self.standalone_live(&state) {
            let stream = self.standalone;
            let _ = self.push(&mut state, stream, data);
        }
    }

    /// Whether the client's standalone GET stream is open on this instance.
    pub(super) fn holds_standalone(&self) -> bool {
        self.standalone_live(&lock(&self.state))
    }

    fn standalone_live(&self, state: &State) -> bool {
        !state.closed
            && matches!(
                state.streams.get(&self.standalone),
                Some(Stream { sink: Sink::Live(tx), .. }) if !tx.is_closed()
            )
    }

    /// Hands a message to the served session, decoded as the endpoint read it.
    async fn forward(&self, message: Message) -> bool {
        let Some(tx) = self.sender() else {
            return false;
        };
        tx.send(Inbound::Message(Box::new(message))).await.is_ok()
    }

    /// The served session's inbound queue, if it still runs; records who is calling, for
    /// what the message sets off.
    fn sender(&self) -> Option<mpsc::Sender<Inbound>> {
        let tx = lock(&self.inbound).clone()?;
        if let Some(caller) = crate::auth::resource::Identity::current() {
            *lock(&self.caller) = Some(caller);
        }
        Some(tx)
    }

    /// The client gave up on a request: end its stream, since no response will come.
    fn cancelled(&self, params: Option<&serde_json::value::RawValue>) {
        #[derive(serde::Deserialize)]
        struct Params {
            #[serde(rename = "requestId")]
            request_id: RequestId,
        }
        let Some(Ok(Params { request_id })) =
            params.map(|p| serde_json::from_str::<Params>(p.get()))
        else {
            return;
        };
        let mut state = lock(&self.state);
        if let Some(stream) = state.requests.remove(&request_id) {
            state.streams.remove(&stream);
        }
    }

    /// Serves one POSTed request: registers its stream, hands it over and waits for the way
    /// it will be answered.
    pub(super) async fn request(
        &self,
        id: RequestId,
        is_initialize: bool,
        message: Message,
        always_sse: bool,
    ) -> Result<Reply, NoReply> {
        let (tx, rx) = oneshot::channel();
        let stream = {
            let mut state = lock(&self.state);
            if state.closed {
                return Err(NoReply::Closed);
            }
            if state.requests.contains_key(&id) {
                return Err(NoReply::DuplicateId);
            }
            let stream = state.next_stream;
            state.next_stream += 1;
            state.requests.insert(id.clone(), stream);
            if is_initialize {
                state.initialize = Some(id.clone());
            }
            let mut entry = Stream::new(Sink::Undecided(tx), Some(id.clone()));
            entry.always_sse = always_sse;
            state.streams.insert(stream, entry);
            stream
        };
        if !self.forward(message).await {
            return Err(NoReply::Closed);
        }
        let reply = if always_sse {
            self.first_reply(stream, rx).await
        } else {
            rx.await
        };
        reply.map_err(|_| {
            if self.is_closed() {
                NoReply::Closed
            } else {
                NoReply::Cancelled
            }
        })
    }

    /// The reply of an always-SSE request: the stream as its first message opens it, or
    /// opened by the grace period's end (see the module docs).
    async fn first_reply(
        &self,
        stream: u64,
        mut rx: oneshot::Receiver<Reply>,
    ) -> Result<Reply, oneshot::error::RecvError> {
        tokio::select! {
            biased;
            reply = &mut rx => return reply,
            () = tokio::time::sleep(super::SSE_OPEN_GRACE) => {}
        }
        self.open_sse(&mut lock(&self.state), stream);
        rx.await
    }

    /// A new queue for one of this session's event streams.
    pub(super) fn event_queue(&self) -> (EventSender, EventReceiver) {
        queue::queue(self.settings.max_queued)
    }

    /// Opens the standalone stream (GET without `Last-Event-ID`), with what waited for it.
    pub(super) fn open_standalone(&self) -> Result<EventReceiver, OpenError> {
        let mut state = lock(&self.state);
        if state.closed {
            return Err(OpenError::Closed);
        }
        let resumable = self.resumable(&state);
        let retry = self.settings.retry;
        let Some(stream) = state.streams.get(&self.standalone) else {
            return Err(OpenError::Closed);
        };
        if matches!(&stream.sink, Sink::Live(tx) if !tx.is_closed()) {
            return Err(OpenError::Conflict);
        }
        // Room for the whole backlog (itself bounded by `max_queued`), then as much again.
        let room = state.backlog_bytes.saturating_add(self.settings.max_queued);
        let backlog = std::mem::take(&mut state.backlog);
        state.backlog_bytes = 0;
        let (tx, rx) = queue::queue(room);
        let Some(stream) = state.streams.get_mut(&self.standalone) else {
            return Err(OpenError::Closed);
        };
        if resumable {
            let _ = tx.send(priming(self.standalone, stream, retry));
        }
        for message in backlog {
            let _ = tx.send(message);
        }
        stream.sink = Sink::Live(tx);
        Ok(rx)
    }

    /// Resumes a stream after `last`: replays what the store kept, then continues live if
    /// the stream is still open (a finished stream ends after the replay).
    pub(super) fn resume(&self, last: EventId) -> Result<EventReceiver, OpenError> {
        let mut state = lock(&self.state);
        if state.closed {
            return Err(OpenError::Closed);
        }
        if last.stream >= state.next_stream || last.stream < self.standalone {
            return Err(OpenError::UnknownStream);
        }
        if matches!(
            state.streams.get(&last.stream),
            Some(Stream {
                sink: Sink::Undecided(_),
                ..
            })
        ) {
            // No event id of an undecided stream was ever given out.
            return Err(OpenError::UnknownStream);
        }
        let replay: Vec<Bytes> = self
            .store
            .replay_after(&self.id, last)
            .into_iter()
            .map(|(id, data)| Bytes::from(sse::encode_message(Some(&id.text()), &data)))
            .collect();
        // The replay must fit whole, or the client would resume from the same id for ever;
        // the store bounds it.
        let replay_bytes: usize = replay.iter().map(Bytes::len).sum();
        let (tx, rx) = queue::queue(replay_bytes.saturating_add(self.settings.max_queued));
        for event in replay {
            let _ = tx.send(event);
        }
        if last.stream == self.standalone {
            // Everything in the backlog was stored too, and has just been replayed.
            state.backlog.clear();
            state.backlog_bytes = 0;
        }
        if let Some(stream) = state.streams.get_mut(&last.stream) {
            stream.sink = Sink::Live(tx);
        }
        Ok(rx)
    }

    /// Detaches the live connection of a stream, keeping the stream (see
    /// [`SessionControl::close_stream`]).
    fn close_stream(&self, request: Option<&RequestId>) -> bool {
        let mut state = lock(&self.state);
        if state.closed || !self.resumable(&state) {
            return false;
        }
        let stream = match request {
            Some(id) => match state.requests.get(id) {
                Some(&stream) => stream,
                None => return false,
            },
            None => self.standalone,
        };
        self.open_sse(&mut state, stream);
        match state.streams.get_mut(&stream) {
            Some(entry) if matches!(entry.sink, Sink::Live(_)) => {
                entry.sink = Sink::Detached;
                true
            }
            _ => false,
        }
    }

    /// Ends the session: the served session sees its connection close, streams end, stored
    /// events are forgotten.
    pub(super) fn close(&self) {
        self.end(true);
    }

    /// Ends a duplicate of a session held here, keeping the stored events they share.
    pub(super) fn discard(&self) {
        self.end(false);
    }

    fn end(&self, forget: bool) {
        {
            let mut state = lock(&self.state);
            state.closed = true;
            state.streams.clear();
            state.requests.clear();
            state.backlog.clear();
            state.backlog_bytes = 0;
        }
        lock(&self.inbound).take();
        lock(&self.outbound).take();
        if forget {
            self.store.forget(&self.id);
        }
    }

    fn resumable(&self, state: &State) -> bool {
        // Older clients do not expect the empty priming event (it arrived in 2025-11-25).
        self.settings.resumable
            && state
                .version
                .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
    }

    /// Makes an undecided stream an event stream and hands it to its POST.
    fn open_sse(&self, state: &mut State, stream: u64) {
        if let Some(opened) = self.start_sse(state, stream) {
            give_stream(state, stream, opened);
        }
    }

    /// Makes an undecided stream an event stream (with its priming event, if resumable);
    /// what its POST is to be given, or `None` if the stream was not undecided.
    fn start_sse(&self, state: &mut State, stream: u64) -> Option<Opened> {
        let resumable = self.resumable(state);
        let entry = state.streams.get_mut(&stream)?;
        let Sink::Undecided(_) = &entry.sink else {
            return None;
        };
        if resumable {
            if let Some(request) = &entry.request {
                self.note_stream(stream, request);
            }
        }
        let (tx, rx) = queue::queue(self.settings.max_queued);
        if resumable {
            let _ = tx.send(priming(stream, entry, self.settings.retry));
        }
        match std::mem::replace(&mut entry.sink, Sink::Live(tx)) {
            Sink::Undecided(reply) => Some(Opened { reply, rx }),
            _ => None,
        }
    }

    /// Puts one outgoing message on its stream.
    fn dispatch(&self, out: Outbound) {
        let Outbound { message, related } = out;
        let is_response = matches!(message, Message::Response(_));
        let data = Bytes::from(message.encode());
        let mut state = lock(&self.state);
        if state.closed {
            return;
        }
        if let Message::Request(r) = &message {
            state.outgoing.insert(r.id.clone());
        }
        let mut answers_initialize = false;
        if let Message::Response(r) = &message {
            if r.id.is_some() && r.id == state.initialize {
                answers_initialize = true;
                state.version = negotiated_version(r);
                // A failed initialize leaves nothing to continue: end the session with it.
                state.one_shot |= r.outcome.is_err();
            }
        }
        let stream = match related.as_ref().and_then(|id| state.requests.get(id)) {
            Some(&stream) => stream,
            None if is_response => {
                tracing::debug!(session = %self.id, "dropping a response whose request has no open stream");
                return;
            }
            None => self.standalone,
        };
        // Whether a response goes back as one JSON body.
        let json_possible = matches!(
            state.streams.get(&stream),
            Some(Stream {
                sink: Sink::Undecided(_),
                always_sse: false,
                ..
            })
        );
        let share = answers_initialize.then(|| state.share.take()).flatten();
        if let (false, Some(_), Some(initialize)) = (json_possible, state.version, share) {
            // The initialize result on an event stream: its record is saved before it
            // leaves (the body waits for the store's writes), so the client's next request
            // finds the session on any instance.
            if let Some(cluster) = &self.cluster {
                let record = super::session_store::SessionRecord {
                    initialize,
                    subject: self.subject.clone(),
                    log_level: None,
                    subscriptions: Vec::new(),
                    initialized: false,
                };
                cluster
                    .store
                    .create_queued(&self.id, record, cluster.record_ttl);
            }
        }
        if is_response && json_possible {
            if let Some(Stream {
                sink: Sink::Undecided(reply),
                ..
            }) = state.streams.remove(&stream)
            {
                let code = match &message {
                    Message::Response(r) => r.outcome.as_ref().err().map(|e| e.code),
                    _ => None,
                };
                let _ = reply.send(Reply::Json(data, code));
            }
        } else {
            let opened = self.start_sse(&mut state, stream);
            if self.push(&mut state, stream, data) == Pushed::Overflowed {
                drop(state);
                tracing::warn!(session = %self.id, "ending the session: its client stopped reading a stream that cannot be resumed, and the events waiting for it passed the limit");
                self.close();
                return;
            }
            // Handed over only now, so the POST's first write holds this message too.
            if let Some(opened) = opened {
                give_stream(&mut state, stream, opened);
            }
        }
        if is_response {
            state.streams.remove(&stream);
            if let Some(related) = &related {
                state.requests.remove(related);
            }
            state.last_seen = Instant::now();
            if state.one_shot && state.requests.is_empty() {
                drop(state);
                self.close();
            }
        }
    }

    fn push(&self, state: &mut State, stream: u64, data: Bytes) -> Pushed {
        let resumable = self.resumable(state);
        let backlog_limit = self.settings.standalone_backlog;
        let Some(entry) = state.streams.get_mut(&stream) else {
            return Pushed::Done;
        };
        let id = EventId {
            stream,
            seq: entry.next_seq,
        };
        entry.next_seq += 1;
        let text = if resumable {
            self.store.store(&self.id, id, data.clone());
            if let Some(cluster) = &self.cluster {
                cluster.store.append(&self.id, id, data.clone());
            }
            Some(id.text())
        } else {
            None
        };
        let event = Bytes::from(sse::encode_message(text.as_deref(), &data));
        let sent = match &entry.sink {
            Sink::Live(tx) => tx.send(event.clone()),
            _ => Err(SendError::Closed(event.clone())),
        };
        match sent {
            Ok(()) => return Pushed::Done,
            Err(SendError::Full(_)) if !resumable => return Pushed::Overflowed,
            Err(SendError::Full(_)) => {
                // The event is stored: closing the connection makes the client resume.
                tracing::info!(session = %self.id, stream, "closing a stream whose client stopped reading; it resumes from the event store");
            }
            Err(SendError::Closed(_)) => {}
        }
        entry.sink = Sink::Detached;
        if stream == self.standalone {
            if let Some(cluster) = &self.cluster {
                // Another instance may hold this session's GET stream; none keeps a backlog,
                // since a message kept by each would arrive once per instance.
                if let Ok(frame) = String::from_utf8(data.to_vec()) {
                    let _ = cluster.publish.send(Routed {
                        origin: cluster.instance,
                        session: self.id.clone(),
                        kind: RoutedKind::Standalone(frame),
                    });
                }
                return Pushed::Done;
            }
            let max_bytes = self.settings.max_queued;
            state.backlog_bytes += event.len();
            state.backlog.push_back(event);
            while state.backlog.len() > backlog_limit
                || (state.backlog.len() > 1 && state.backlog_bytes > max_bytes)
            {
                if let Some(dropped) = state.backlog.pop_front() {
                    state.backlog_bytes -= dropped.len();
                }
                tracing::warn!(session = %self.id, "no GET stream is open and the backlog is full; dropping the oldest waiting message");
            }
        }
        Pushed::Done
    }
}

/// What became of an event [`HttpSession::push`] was given.
#[derive(Debug, PartialEq, Eq)]
enum Pushed {
    /// Sent, stored, put in the backlog, or dropped as the backlog's rules say.
    Done,
    /// Its stream cannot be resumed and its client stopped reading: the session must end.
    Overflowed,
}

/// Gives a stream's POST its event stream; a POST that is gone leaves the stream detached.
fn give_stream(state: &mut State, stream: u64, opened: Opened) {
    if opened.reply.send(Reply::Sse(opened.rx)).is_err() {
        if let Some(entry) = state.streams.get_mut(&stream) {
            entry.sink = Sink::Detached;
        }
    }
}

/// The first event of a stream: an id to resume from, the retry delay, no message.
fn priming(id: u64, stream: &mut Stream, retry: Duration) -> Bytes {
    let seq = stream.next_seq;
    stream.next_seq += 1;
    Bytes::from(
        Event {
            event: None,
            data: String::new(),
            id: Some(EventId { stream: id, seq }.text()),
            retry: Some(retry),
        }
        .encode(),
    )
}

fn negotiated_version(response: &junction_protocol::Response) -> Option<ProtocolVersion> {
    #[derive(serde::Deserialize)]
    struct Init {
        #[serde(rename = "protocolVersion")]
        version: String,
    }
    let raw = response.outcome.as_ref().ok()?;
    serde_json::from_str::<Init>(raw.get())
        .ok()?
        .version
        .parse()
        .ok()
}

/// Routes what the served session sends onto its streams, in the sender's own task: the
/// queue wakes the pump when an item arrives, and waking it dispatches every item waiting.
/// A task of its own would cost each message a trip through the scheduler.
///
/// Only one drain runs at a time: the queue holds one waker, and gives it to the send that
/// finds it, while a drain takes items until the queue is empty and then registers it
/// again. The receiver's lock is not held while a message is dispatched, so a dispatch that
/// ends the session (which drops the receiver) does not wait on itself.
///
/// The waker the queue holds keeps the session alive, as a routing task would: a
/// sessionless POST's session is held by nothing else once its response has begun. That
/// lasts until the served session drops its connection, which it does once the session
/// ends and its input with it.
struct Pump {
    session: Arc<HttpSession>,
}

impl Pump {
    fn drain(self: Arc<Self>) {
        let session = self.session.clone();
        let waker = std::task::Waker::from(self);
        let mut cx = Context::from_waker(&waker);
        loop {
            let polled = match lock(&session.outbound).as_mut() {
                Some(outbound) => outbound.poll_recv(&mut cx),
                None => return,
            };
            match polled {
                Poll::Ready(Some(out)) => session.dispatch(out),
                // The served session dropped its connection: nothing more will be sent.
                Poll::Ready(None) => {
                    session.close();
                    return;
                }
                Poll::Pending => return,
            }
        }
    }
}

impl std::task::Wake for Pump {
    fn wake(self: Arc<Self>) {
        self.drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::server::event_store::InMemoryEventStore;

    fn settings() -> SessionSettings {
        SessionSettings {
            retry: Duration::from_millis(100),
            standalone_backlog: 8,
            max_queued: 1 << 20,
            resumable: false,
            changes: None,
        }
    }

    fn start(serve: &(dyn Fn(Connection, SessionControl) + Send + Sync)) -> Arc<HttpSession> {
        HttpSession::start(
            "test".to_owned(),
            settings(),
            Arc::new(InMemoryEventStore::new(16)),
            None,
            serve,
        )
    }

    fn ping() -> Outbound {
        let message = Message::decode(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#);
        Outbound {
            message: message.unwrap(),
            related: None,
        }
    }

    #[test]
    fn a_served_session_that_drops_its_connection_ends_the_http_session() {
        let session = start(&|connection, _| drop(connection));
        assert!(session.is_closed());
    }

    #[test]
    fn what_the_served_session_sends_is_routed_at_once_and_fails_once_the_session_ends() {
        let kept = Arc::new(Mutex::new(None));
        let keep = kept.clone();
        let session = start(&move |connection, _| *lock(&keep) = Some(connection));
        let Some(connection) = lock(&kept).take() else {
            panic!("serve was not called");
        };
        // No GET stream: an unrelated message waits in the standalone backlog, put there by
        // the send itself (no task ran in between).
        connection.outgoing.send(ping()).unwrap();
        connection.outgoing.send(ping()).unwrap();
        assert_eq!(lock(&session.state).backlog.len(), 2);
        let weak = Arc::downgrade(&session);
        session.close();
        drop(session);
        assert!(connection.outgoing.is_closed());
        assert!(connection.outgoing.send(ping()).is_err());
        // Only the served side's queue still holds the session (its waker); it goes with it.
        drop(connection);
        assert!(
            weak.upgrade().is_none(),
            "the session outlived its connection"
        );
    }
}
