//! The errors of the session engine, the client and the server framework.

use std::time::Duration;

use junction_protocol::ErrorObject;

use crate::transport::TransportError;

/// Why a request sent to the peer did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The peer answered with a JSON-RPC error.
    #[error("the peer answered `{method}` with an error: {error}")]
    Remote {
        /// The method that failed.
        method: String,
        /// The error the peer sent.
        error: ErrorObject,
    },
    /// The transport could not carry the request or its answer (a refused connection, an
    /// HTTP error status, a broken stream, a stdio server writing something that is not
    /// JSON-RPC); the error names the URL and status, or the offending line.
    #[error("{error}")]
    Transport {
        /// The method that was sent.
        method: String,
        /// What happened.
        error: TransportError,
    },
    /// No answer came in time; a `notifications/cancelled` was sent.
    #[error("`{method}` timed out after {after:?}")]
    Timeout {
        /// The method that timed out.
        method: String,
        /// How long it waited.
        after: Duration,
    },
    /// The connection closed before the answer came.
    #[error("the connection closed before `{method}` was answered")]
    Closed {
        /// The method that was waiting.
        method: String,
    },
    /// The caller's own cancellation token fired; a `notifications/cancelled` was sent.
    #[error("`{method}` was cancelled by the caller")]
    Cancelled {
        /// The method that was cancelled.
        method: String,
    },
    /// The params could not be serialized.
    #[error("could not encode the params of `{method}`: {source}")]
    Encode {
        /// The method.
        method: String,
        /// The serializer's reason.
        #[source]
        source: serde_json::Error,
    },
    /// The result did not have the shape the method defines.
    #[error("the result of `{method}` is malformed: {source}")]
    Decode {
        /// The method.
        method: String,
        /// The deserializer's reason.
        #[source]
        source: serde_json::Error,
    },
    /// The request was not sent because the peer did not declare the capability it needs.
    #[error("`{method}` was not sent: {reason}")]
    NotSupported {
        /// The method.
        method: String,
        /// Which capability is missing, in words.
        reason: String,
    },
    /// A result was received but it breaks the protocol's rules (for example structured
    /// content that does not match the tool's output schema).
    #[error("the result of `{method}` is invalid: {reason}")]
    Invalid {
        /// The method.
        method: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl RequestError {
    /// The JSON-RPC error the peer sent, if that is what this is.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            RequestError::Remote { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The transport's failure, if that is what this is.
    pub fn transport(&self) -> Option<&TransportError> {
        match self {
            RequestError::Transport { error, .. } => Some(error),
            _ => None,
        }
    }
}
