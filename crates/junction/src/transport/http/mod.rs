//! Streamable HTTP (MCP 2025-11-25, basic/transports), both sides, with the 2024-11-05
//! HTTP+SSE transport for old peers.
//!
//! - [`server::HttpServer`]: the MCP endpoint (POST, GET, DELETE) as an axum router or a
//!   bound server, with sessions, resumable SSE streams, the DNS-rebinding guard and the
//!   legacy endpoints.
//! - [`client::HttpClient`]: a [`Connection`](crate::transport::Connection) for
//!   [`Client::connect`](crate::client::Client::connect) that speaks to such an endpoint,
//!   resumes broken streams and falls back to the legacy transport.
//! - [`sse`]: the event-stream format both use.
//! - [`param`]: the `Mcp-Param-*` headers of 2026-07-28 (`x-mcp-header`), both sides.
//!
//! A client and a server talking over a real socket:
//!
//! ```
//! use junction::client::{Client, ClientOptions};
//! use junction::server::{tool, Server};
//! use junction::transport::http::{client::HttpClient, server::HttpServer};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Who {
//!     name: String,
//! }
//!
//! async fn greet(who: Who) -> String {
//!     format!("Hello, {}!", who.name)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let server = Server::builder("greeter", "1.0.0")
//!     .tool(tool("greet", greet))
//!     .build()
//!     .unwrap();
//! let running = HttpServer::new(move |c| { server.serve(c); })
//!     .bind("127.0.0.1:0")
//!     .await
//!     .unwrap();
//!
//! let connection = HttpClient::new(running.url("/mcp")).unwrap().connect();
//! let client = Client::connect(connection, ClientOptions::new("demo", "1.0.0")).await.unwrap();
//! let params = junction_protocol::tools::CallToolParams::new("greet")
//!     .argument("name", "Ada");
//! let result = client.call_tool(params, Default::default()).await.unwrap();
//! assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
//! client.close();
//! # }
//! ```

#[cfg(feature = "http-client")]
pub mod client;
pub mod param;
#[cfg(feature = "http-server")]
pub mod server;
pub mod sse;

/// The header that carries the session id (`MCP-Session-Id`; header names are
/// case-insensitive).
pub const SESSION_ID_HEADER: &str = "mcp-session-id";

/// The header that carries the negotiated revision after initialization.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// The header a client resumes an event stream with.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// The header that repeats the JSON-RPC method of a 2026-07-28 request.
pub const METHOD_HEADER: &str = "mcp-method";

/// The header that repeats a 2026-07-28 request's tool or prompt name, or resource URI.
pub const NAME_HEADER: &str = "mcp-name";

/// The headers above as [`http::HeaderName`]s: a map looks one up by hashing it, where a
/// `&str` is first parsed and checked as a header name on every lookup or insert.
#[cfg(any(feature = "http-server", feature = "http-client"))]
pub(crate) mod names {
    use http::HeaderName;

    pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static(super::SESSION_ID_HEADER);
    pub(crate) const PROTOCOL_VERSION: HeaderName =
        HeaderName::from_static(super::PROTOCOL_VERSION_HEADER);
    pub(crate) const LAST_EVENT_ID: HeaderName =
        HeaderName::from_static(super::LAST_EVENT_ID_HEADER);
    pub(crate) const METHOD: HeaderName = HeaderName::from_static(super::METHOD_HEADER);
    pub(crate) const NAME: HeaderName = HeaderName::from_static(super::NAME_HEADER);
}
