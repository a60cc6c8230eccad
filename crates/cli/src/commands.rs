//! One module per command.

pub mod call;
pub mod serve;
