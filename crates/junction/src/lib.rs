//! # junction
//!
//! The Model Context Protocol engine of Junction: the session engine both roles share, the
//! transports, the server framework and the client.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod error;
pub mod session;
pub mod transport;
pub mod uri_template;

pub use error::RequestError;
pub use junction_protocol as protocol;
