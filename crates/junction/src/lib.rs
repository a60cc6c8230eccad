//! # junction
//!
//! The Model Context Protocol engine of Junction: the session engine both roles share, the
//! transports, and the pieces the server framework and the client are built from.
//!
//! - `auth`: the OAuth 2.1 client of MCP authorization (discovery, registration, PKCE,
//!   tokens kept and refreshed), used by the HTTP client transport, and the resource-server
//!   side (with either HTTP feature, below).
//! - [`session`]: the bidirectional JSON-RPC engine: concurrent request handling,
//!   correlation, timeouts, cancellation in both directions, progress.
//! - [`transport`]: stdio, child process, in-memory, Streamable HTTP (with the legacy
//!   HTTP+SSE transport), and a wire-log tap.
//! - [`server::lifecycle`]: the handshake rules of a server session.
//! - [`client`]: the handshake (or, on 2026-07-28, `server/discover`), a capability-checked
//!   method per server feature, and handlers for what servers ask back.
//! - [`server`]: tools, resources, templates, prompts and completions as async functions,
//!   with logging, subscriptions, run-time list changes and server→client requests, served
//!   over any connection.
//! - [`schema`]: input schemas derived from argument types, and argument validation.
//! - [`uri_template`]: RFC 6570 matching for resource templates.
//!
//! ## Features
//!
//! - `http-server` (default): `transport::http::server` (Streamable HTTP on axum and
//!   hyper), the resource-server side of `auth` (`BearerAuth`, DPoP proof checks), and
//!   what a server handler learns of HTTP (`Context::http`, `Context::identity`).
//! - `http-client` (default): `transport::http::client` (on reqwest), the OAuth client of
//!   `auth`, and the token verifiers (`JwtVerifier`, `IntrospectionVerifier`), which fetch
//!   over HTTP.
//! - `redis`: a shared HTTP session store on Redis; implies `http-server`.
//! - `keyring`: `auth::KeyringTokenStore`; implies `http-client`.
//!
//! Without either HTTP feature (`default-features = false`) the crate has stdio, child
//! process, in-memory and tap transports, the session engine, the server framework and the
//! client, and builds neither axum, hyper nor reqwest; [`transport::http`] then holds only
//! what both sides share (the SSE format, the `Mcp-Param-*` headers, header names).
//!
//! ```
//! use junction::session::{Session, SessionOptions};
//! use junction::transport::memory;
//! # use junction::session::{BoxFuture, IncomingRequest, Peer, Service};
//! # use junction_protocol::{jsonrpc, ErrorObject, Notification};
//! # use serde_json::value::RawValue;
//! # struct Pong;
//! # impl Service for Pong {
//! #     fn request<'a>(&'a self, _: IncomingRequest) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
//! #         Box::pin(async { Ok(jsonrpc::empty_object()) })
//! #     }
//! #     fn notification<'a>(&'a self, _: Notification, _: &'a Peer) -> BoxFuture<'a, ()> { Box::pin(async {}) }
//! # }
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (client_end, server_end) = memory::pair(Default::default());
//! let _server = Session::start(server_end, Pong, SessionOptions::default());
//! let client = Session::start(client_end, Pong, SessionOptions::default());
//! let pong = client.request_raw("ping", None, Default::default()).await.unwrap();
//! assert_eq!(pong.get(), "{}");
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(any(feature = "http-server", feature = "http-client"))]
pub mod auth;
pub mod client;
pub mod error;
pub mod schema;
pub mod server;
pub mod session;
mod sync;
pub mod transport;
pub mod uri_template;

pub use error::RequestError;
pub use junction_protocol as protocol;
