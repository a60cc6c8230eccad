//! The server side of MCP. So far: the handshake rules every server session follows
//! ([`lifecycle`]).

pub mod lifecycle;
