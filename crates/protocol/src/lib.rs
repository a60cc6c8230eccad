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
//!
//! ## Growing with the specification
//!
//! Every revision adds members to the messages, so the message structs are
//! `#[non_exhaustive]`: other crates read and set their public fields, but build them with
//! their constructors and setters (`Tool::new(..).description(..)`,
//! `ListToolsResult::page(..)`, `CallToolResult::text(..)`,
//! `ClientCapabilities::default().with_sampling()`, `SubscriptionFilter::default()
//! .tools_list_changed(true)`), so that a new member is not a breaking change. Unknown members
//! are kept (`extra`) where the schema leaves an object open. Enums whose set the
//! specification grows (content blocks, `resultType`, `cacheScope`, string formats, protocol
//! revisions) are `#[non_exhaustive]` too: match them with a catch-all arm. Sets that are
//! closed, or whose every case a program must treat on purpose (task status, elicitation
//! modes and field kinds, completion references, resource contents, roles, log levels), stay
//! exhaustive, so that a new case is a compile error exactly where it needs handling. The
//! JSON-RPC 2.0 envelope (`Request`, `Notification`, `Response`) is fixed and stays open to
//! struct literals.
//!
//! ```
//! use junction_protocol::stateless::SubscriptionFilter;
//! use junction_protocol::tools::{ListToolsResult, Tool};
//!
//! let page = ListToolsResult::page(vec![Tool::new("search", Tool::empty_input_schema())], None)
//!     .ttl_ms(60_000);
//! assert_eq!(page.tools[0].name, "search");
//! let filter = SubscriptionFilter::default().tools_list_changed(true);
//! assert_eq!(filter.tools_list_changed, Some(true));
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
