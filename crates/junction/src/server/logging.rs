//! Logging to the client (`logging/setLevel`, `notifications/message`; every handshake
//! revision).
//!
//! Each session has its own level. Until the client sends `logging/setLevel`, messages at
//! [`DEFAULT_LEVEL`] (`info`) and above are sent: the specification lets a server log before
//! being asked, and clients that never set a level (the conformance suite's logging tool
//! among them) still see informational messages, while `debug` chatter stays off until asked.

use junction_protocol::jsonrpc;
use junction_protocol::logging::{LoggingLevel, LoggingMessageParams};
use junction_protocol::RequestId;
use serde_json::Value;

use crate::session::Peer;

/// The level a session logs at before `logging/setLevel`.
pub const DEFAULT_LEVEL: LoggingLevel = LoggingLevel::Info;

/// Sends one `notifications/message` if `level` passes `threshold` (none: nothing is sent).
pub(super) fn send(
    threshold: Option<LoggingLevel>,
    peer: &Peer,
    level: LoggingLevel,
    logger: Option<&str>,
    data: Value,
    related: Option<RequestId>,
) -> bool {
    if threshold.is_none_or(|t| level < t) {
        return false;
    }
    let mut params = LoggingMessageParams::new(level, data);
    params.logger = logger.map(str::to_owned);
    match jsonrpc::to_raw(&params) {
        Ok(raw) => peer
            .notify_raw("notifications/message", Some(raw), related)
            .is_ok(),
        Err(e) => {
            tracing::warn!(error = %e, "a log message could not be encoded");
            false
        }
    }
}
