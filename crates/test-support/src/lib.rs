//! What Junction's end-to-end tests share, in one place instead of a copy per crate: running
//! the built `junction` binary and the external interop peers, stand-ins for the parties a
//! test needs to control (a model provider's API, an authorization server that can lie, a
//! hostile MCP server, a PostgreSQL cluster of its own), a raw HTTP client, and the fixtures
//! the conformance and SDK tests expect.
//!
//! Only the integration tests (`tests/`) of the workspace's crates use it, as a
//! dev-dependency; unit tests inside `src/` do not (they would see a second copy of the
//! crate under test). It is not published (`publish = false`), and it panics freely: a
//! failed setup is a failed test.
//!
//! Features: `http-server` and `http-client` (both needed by `http` and `auth`) turn on
//! the junction crate's features of the same names, which forward to them, so that the
//! junction crate's tests build with exactly the feature set under test; `servers` adds
//! `client::at` (options of the example servers).

#![warn(missing_docs)]

#[cfg(all(feature = "http-server", feature = "http-client"))]
pub mod auth;
pub mod cli;
pub mod client;
pub mod conformance;
pub mod fake_model;
pub mod fixtures;
pub mod hostile;
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub mod http;
pub mod peers;
pub mod ports;
pub mod postgres;
pub mod process;
pub mod sdk_clients;
pub mod tap;
