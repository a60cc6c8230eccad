//! One module per command.

pub mod call;
pub mod conformance_client;
pub mod serve;
