//! # junction-protocol
//!
//! The wire layer of the Model Context Protocol as plain Rust data: JSON-RPC 2.0 framing with
//! the error classification MCP asks for, the error codes, the protocol revisions (the
//! handshake family 2024-11-05 to 2025-11-25 and the stateless 2026-07-28) with version
//! negotiation, and the typed-method traits that the message types of each feature implement.
//! This crate does no I/O; it depends on serde only.
//!
//! A frame is decoded once; its `params` stay raw JSON until the code that knows their type
//! reads them:
//!
//! ```
//! use junction_protocol::{Message, ErrorCode};
//!
//! let msg = Message::decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
//! assert_eq!(msg.method(), Some("ping"));
//!
//! let bad = Message::decode(br#"{"jsonrpc":"2.0","id":2}"#).unwrap_err();
//! assert_eq!(bad.error.code, ErrorCode::INVALID_REQUEST);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod annotations;
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
mod result_tail;
pub mod roots;
pub mod sampling;
pub mod stateless;
pub mod task_extension;
pub mod tasks;
pub mod tools;
pub mod version;

pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{Message, Notification, Request, RequestId, Response};
pub use meta::{Cursor, Meta, ProgressToken};
pub use version::ProtocolVersion;
