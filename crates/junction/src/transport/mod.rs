//! Transports: how frames get between two peers.
//!
//! A transport turns a byte channel into a [`Connection`]: a stream of inbound frames (raw
//! bytes, one JSON-RPC message each, not yet decoded) and a sink of outbound messages. The
//! session engine decodes frames itself, so every transport reports bad input the same way.
//!
//! - [`stdio`]: newline-delimited JSON over any reader/writer pair, and the process's own
//!   stdin/stdout for servers.
//! - [`child`]: spawns a server process and speaks stdio to it, with the specification's
//!   shutdown sequence.
//! - [`memory`]: two connected ends in one process, for tests and embedding.
//! - [`http`]: Streamable HTTP, server and client, with the legacy HTTP+SSE transport.
//! - [`tap`]: wraps any connection to log every frame it receives (a wire log).
//! - [`queue`]: the byte-bounded queue every transport's outgoing side waits in, so a peer
//!   that stops reading costs at most [`Limits::max_queued`].

pub mod child;
mod error;
pub mod http;
pub mod memory;
mod pipe;
pub mod queue;
pub mod stdio;
pub mod tap;

use junction_protocol::lifecycle::InitializeResult;
use junction_protocol::{Message, ProtocolVersion, RequestId};
use tokio::sync::mpsc;

pub use self::error::TransportError;

/// The default largest frame a transport accepts: 4 MiB.
pub const DEFAULT_MAX_FRAME: usize = 4 * 1024 * 1024;

/// The default most bytes that wait to be written to one peer: 16 MiB.
pub const DEFAULT_MAX_QUEUED: usize = 16 * 1024 * 1024;

/// The sending half of a connection's outgoing queue.
pub type OutboundSender = queue::Sender<Outbound>;

/// The receiving half of a connection's outgoing queue.
pub type OutboundReceiver = queue::Receiver<Outbound>;

/// A new outgoing queue of at most `max_bytes`.
pub fn outbound_queue(max_bytes: usize) -> (OutboundSender, OutboundReceiver) {
    queue::queue(max_bytes)
}

/// A message on its way out, with the request it belongs to.
///
/// `related` lets a transport that has several streams (Streamable HTTP) put a response, and
/// the progress, logs and requests a handler sends while serving a request, on that
/// request's stream. Single-stream transports ignore it.
#[derive(Debug, Clone)]
pub struct Outbound {
    /// The message.
    pub message: Message,
    /// The incoming request this message is part of, if any.
    pub related: Option<RequestId>,
}

/// What a transport delivers.
#[derive(Debug)]
pub enum Inbound {
    /// One frame: the bytes of one message, without its delimiter.
    Frame(Vec<u8>),
    /// One frame from a peer that must write nothing but JSON-RPC (a stdio server, read by
    /// its client): one that is not JSON at all breaks the connection naming it, as
    /// [`Inbound::Broken`] does, instead of being answered with -32700 while the requests
    /// waiting on that peer run into their timeouts.
    Strict(Vec<u8>),
    /// A message the transport has decoded already (the HTTP server reads every POSTed one
    /// to route it): the session takes it as it is, instead of decoding its frame again.
    Message(Box<Message>),
    /// A frame the transport refused before decoding it. (Boxed, as the rare variants are:
    /// every connection's inbound queue reserves room for a block of these.)
    Refused(Box<FrameError>),
    /// The transport could not carry this request of ours: it fails with
    /// [`RequestError::Transport`](crate::error::RequestError::Transport).
    Failed(RequestId, Box<TransportError>),
    /// The connection is unusable (for example a stdio server wrote something that is not
    /// JSON-RPC): every waiting and later request fails with this error, and the session
    /// stops reading.
    Broken(Box<TransportError>),
    /// Something the transport itself did, for the service of the session (see
    /// [`crate::session::Service::transport_event`]); never on the wire.
    Event(TransportEvent),
}

/// What a transport tells the session above it, besides the messages it carries.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TransportEvent {
    /// The HTTP client transport started a new session after the server ended the old one
    /// (`404`): the new session's initialize result, so that the
    /// [`Client`](crate::client::Client) reports what the new session declared.
    Reinitialized(Box<InitializeResult>),
    /// The HTTP server serves this connection without a session
    /// ([`http::server::HttpServer::sessionless`]), for one request: it stands as if the
    /// client had sent `initialize` offering `version` with no capabilities, then
    /// `notifications/initialized`.
    Sessionless {
        /// The revision of the request (its `MCP-Protocol-Version` header).
        version: ProtocolVersion,
    },
    /// The HTTP server restored a session that another instance opened, from its shared
    /// record ([`http::server::SessionStore`]): it stands as if the client had sent this
    /// `initialize` and `notifications/initialized`, then set this log level and these
    /// subscriptions.
    Restored(Box<RestoredSession>),
    /// The HTTP server's controls over this connection's streams, sent before anything
    /// else; a server's handlers reach them through
    /// [`Context::http`](crate::server::Context::http).
    #[cfg(feature = "http-server")]
    Http(http::server::SessionControl),
    /// A change notification made by an instance sharing sessions with this one (or by this
    /// one), for a session whose standalone stream this instance holds: the server sends it
    /// if the session is concerned (subscribed to the resource, told of the list's changes).
    Changed(Box<SharedChange>),
}

/// What [`TransportEvent::Changed`] carries.
#[derive(Debug, Clone)]
pub struct SharedChange {
    /// `notifications/resources/updated` or `notifications/*/list_changed`, as made.
    pub notification: junction_protocol::Notification,
    /// The session's resource subscriptions as its shared record holds them, when the
    /// change is a resource's; they replace those this instance knew.
    pub subscriptions: Option<Vec<String>>,
}

/// What [`TransportEvent::Restored`] restores.
#[derive(Debug, Clone)]
pub struct RestoredSession {
    /// The client's `initialize` parameters.
    pub initialize: junction_protocol::lifecycle::InitializeParams,
    /// The level of its last `logging/setLevel`.
    pub log_level: Option<junction_protocol::logging::LoggingLevel>,
    /// The resources it subscribed to.
    pub subscriptions: Vec<String>,
}

/// Why a transport refused a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The frame was longer than the configured limit and was discarded.
    #[error("message of at least {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// How many bytes had arrived when the frame was refused.
        size: usize,
        /// The limit.
        limit: usize,
        /// The request it answered, when its start showed a response
        /// ([`junction_protocol::jsonrpc::peek_response_id`]): that request fails at once.
        response_to: Option<RequestId>,
    },
}

/// One end of a transport: frames in, messages out.
///
/// Dropping `outgoing` (every clone of it) closes the write side; the transport closes
/// `incoming` when the other side goes away.
#[derive(Debug)]
pub struct Connection {
    /// Messages to send.
    pub outgoing: OutboundSender,
    /// Frames received.
    pub incoming: mpsc::Receiver<Inbound>,
    /// What the ids of requests sent on this connection start with. `None`: numbers 1, 2,
    /// 3, ... Several processes that speak to one peer as one session (the instances of a
    /// cluster sharing an HTTP session) each set a prefix of their own, so that the peer
    /// never receives two requests with the same id: `Some("7f3a-")` gives `"7f3a-1"`, ...
    pub request_id_prefix: Option<String>,
}

impl Connection {
    /// A connection whose requests are numbered 1, 2, 3, ...
    pub fn new(outgoing: OutboundSender, incoming: mpsc::Receiver<Inbound>) -> Connection {
        Connection {
            outgoing,
            incoming,
            request_id_prefix: None,
        }
    }
}

/// Limits every transport applies.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest frame accepted, in bytes.
    pub max_frame: usize,
    /// The most bytes of outgoing messages that may wait for a peer that does not read;
    /// beyond that the peer is disconnected (see [`queue`]).
    pub max_queued: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame: DEFAULT_MAX_FRAME,
            max_queued: DEFAULT_MAX_QUEUED,
        }
    }
}

/// `bytes` as people write limits: `4 MiB`, `64 KiB`, or `1000 bytes`.
pub(crate) fn human_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    match bytes {
        0 => "0 bytes".to_owned(),
        b if b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}

/// How many decoded-but-unprocessed frames a transport may queue before it stops reading.
pub(crate) const INBOUND_QUEUE: usize = 256;

#[cfg(test)]
mod tests {
    /// Each connection's inbound queue (tokio's bounded channel) allocates a block of 32
    /// items at once, kept for the connection's life: at 96 bytes an item, an idle HTTP
    /// session held 3 KiB for it; the rare variants are boxed to keep it at 32.
    #[test]
    fn an_inbound_item_stays_small() {
        let size = std::mem::size_of::<super::Inbound>();
        assert!(size <= 32, "Inbound is {size} bytes");
    }
}
