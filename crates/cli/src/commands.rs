//! One module per command.

pub mod auth;
pub mod call;
pub mod chat;
pub mod conformance_client;
pub mod consent;
pub mod demo;
pub mod host_options;
pub mod mcp;
pub mod run;
pub mod serve;
