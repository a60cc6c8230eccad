//! # junction-protocol
//!
//! The wire types of the Model Context Protocol, as plain Rust data that serializes to exactly
//! the JSON the specification defines: every request, result, notification and content type of
//! revision 2025-11-25, the older handshake revisions it is negotiated against, and the pieces
//! of the stateless 2026-07-28 family. This crate does no I/O; it depends on serde only.
//!
//! Each method is a marker type implementing [`method::Request`] or
//! [`method::Notification`], so a typed call site knows its params and result types:
//!
//! ```
//! use junction_protocol::method::Request;
//! use junction_protocol::tools::{CallTool, CallToolParams};
//!
//! let params = CallToolParams::new("search").argument("query", "rivers");
//! let wire = serde_json::to_value(&params).unwrap();
//! assert_eq!(wire, serde_json::json!({"name": "search", "arguments": {"query": "rivers"}}));
//! assert_eq!(CallTool::METHOD, "tools/call");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod capabilities;
pub mod completion;
pub mod content;
pub mod elicitation;
pub mod error;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod messages;
pub mod meta;
pub mod method;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod stateless;
pub mod tasks;
pub mod tools;
pub mod version;

pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{Message, Notification, Request, RequestId, Response};
pub use meta::{Cursor, Meta, ProgressToken};
pub use version::ProtocolVersion;
