//! The server side of the handshake: version negotiation and the order rules of
//! 2024-11-05 … 2025-11-25.
//!
//! - Before `initialize`, only `initialize` and `ping` are served; anything else gets an
//!   invalid-request error that says what to send first.
//! - `initialize` is answered once, with the client's version when this side speaks it and
//!   the newest otherwise (the client decides whether to go on).
//! - Until `notifications/initialized` arrives, requests other than `ping` are refused; the
//!   server itself may then send only pings and log messages.
//!
//! ```
//! use junction::server::lifecycle::Lifecycle;
//! use junction_protocol::lifecycle::{Implementation, InitializeParams};
//! use junction_protocol::ProtocolVersion;
//!
//! let lifecycle = Lifecycle::new();
//! assert!(lifecycle.admit("tools/list").is_err());
//! let offer = InitializeParams::new(ProtocolVersion::V2025_06_18, Implementation::new("client", "1"));
//! let version = lifecycle.initialize(&offer).unwrap();
//! assert_eq!(version, ProtocolVersion::V2025_06_18);
//! lifecycle.initialized();
//! assert!(lifecycle.admit("tools/list").is_ok());
//! ```

use std::sync::{Arc, Mutex, MutexGuard};

use crate::sync::lock;

use junction_protocol::capabilities::ClientCapabilities;
use junction_protocol::lifecycle::{Implementation, Initialize, InitializeParams, Ping};
use junction_protocol::method::Request;
use junction_protocol::{ErrorObject, ProtocolVersion};

/// Where a session stands in the handshake.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// No `initialize` yet.
    New,
    /// `initialize` answered; waiting for `notifications/initialized`.
    Initializing(Arc<Negotiated>),
    /// Operating.
    Ready(Arc<Negotiated>),
}

/// What the client said about itself in `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct Negotiated {
    /// The negotiated revision.
    pub version: ProtocolVersion,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    pub info: Implementation,
}

/// The handshake state of one session. Shared by the session's handlers.
#[derive(Debug)]
pub struct Lifecycle {
    phase: Mutex<Phase>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifecycle {
    /// A session that has not been initialized.
    pub fn new() -> Self {
        Lifecycle {
            phase: Mutex::new(Phase::New),
        }
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        lock(&self.phase)
    }

    /// Whether a request for `method` may be served now; the error to answer otherwise.
    pub fn admit(&self, method: &str) -> Result<(), ErrorObject> {
        if method == Ping::METHOD {
            return Ok(());
        }
        let initialize = method == Initialize::METHOD;
        match (&*self.phase(), initialize) {
            (Phase::New, true) => Ok(()),
            (Phase::New, false) => Err(ErrorObject::invalid_request(format!(
                "Invalid request: `{method}` was sent before `initialize`; initialize the session first"
            ))),
            (_, true) => Err(ErrorObject::invalid_request(
                "Invalid request: the session is already initialized; `initialize` is sent once",
            )),
            (Phase::Initializing(_), _) => Err(ErrorObject::invalid_request(format!(
                "Invalid request: `{method}` was sent before `notifications/initialized`; send it after the initialize result"
            ))),
            (Phase::Ready(_), _) => Ok(()),
        }
    }

    /// Answers `initialize`: records the client and returns the revision to answer with.
    pub fn initialize(&self, params: &InitializeParams) -> Result<ProtocolVersion, ErrorObject> {
        let mut phase = self.phase();
        if *phase != Phase::New {
            return Err(ErrorObject::invalid_request(
                "Invalid request: the session is already initialized; `initialize` is sent once",
            ));
        }
        let version = ProtocolVersion::negotiate(&params.protocol_version);
        *phase = Phase::Initializing(Arc::new(Negotiated {
            version,
            capabilities: params.capabilities.clone(),
            info: params.client_info.clone(),
        }));
        Ok(version)
    }

    /// Takes `notifications/initialized`. Returns false (and changes nothing) when it comes
    /// before `initialize` or twice.
    pub fn initialized(&self) -> bool {
        let mut phase = self.phase();
        match std::mem::replace(&mut *phase, Phase::New) {
            Phase::Initializing(peer) => {
                *phase = Phase::Ready(peer);
                true
            }
            other => {
                *phase = other;
                false
            }
        }
    }

    /// The client, once `initialize` has been answered.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.client().map(|c| (*c).clone())
    }

    /// The client, once `initialize` has been answered, shared rather than copied.
    pub(crate) fn client(&self) -> Option<Arc<Negotiated>> {
        match &*self.phase() {
            Phase::New => None,
            Phase::Initializing(peer) | Phase::Ready(peer) => Some(peer.clone()),
        }
    }

    /// The negotiated revision, once `initialize` has been answered.
    pub fn version(&self) -> Option<ProtocolVersion> {
        match &*self.phase() {
            Phase::New => None,
            Phase::Initializing(peer) | Phase::Ready(peer) => Some(peer.version),
        }
    }

    /// Whether the server may send requests other than ping (after `initialized`).
    pub fn is_ready(&self) -> bool {
        matches!(*self.phase(), Phase::Ready(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(version: &str) -> InitializeParams {
        let mut p = InitializeParams::new(
            ProtocolVersion::LATEST_HANDSHAKE,
            Implementation::new("c", "1"),
        );
        p.protocol_version = version.to_owned();
        p
    }

    #[test]
    fn requests_before_initialize_are_refused_except_ping() {
        let l = Lifecycle::new();
        assert!(l.admit("ping").is_ok());
        let err = l.admit("tools/call").unwrap_err();
        assert_eq!(err.code.0, -32600);
        assert!(err.message.contains("before `initialize`"));
        assert!(
            !l.initialized(),
            "initialized before initialize must be ignored"
        );
    }

    #[test]
    fn each_handshake_revision_is_echoed_and_unknown_ones_get_the_newest() {
        for v in ProtocolVersion::HANDSHAKE {
            let l = Lifecycle::new();
            assert_eq!(l.initialize(&offer(v.as_str())).unwrap(), v);
        }
        let l = Lifecycle::new();
        assert_eq!(
            l.initialize(&offer("2024-10-07")).unwrap(),
            ProtocolVersion::V2025_11_25
        );
    }

    #[test]
    fn initialized_is_required_and_initialize_happens_once() {
        let l = Lifecycle::new();
        l.initialize(&offer("2025-11-25")).unwrap();
        assert!(l.admit("initialize").is_err());
        assert!(l.initialize(&offer("2025-11-25")).is_err());
        let err = l.admit("tools/list").unwrap_err();
        assert!(err.message.contains("notifications/initialized"));
        assert!(!l.is_ready());
        assert!(l.initialized());
        assert!(l.is_ready() && l.admit("tools/list").is_ok());
        assert!(!l.initialized(), "a second initialized is ignored");
        assert_eq!(l.negotiated().unwrap().info.name, "c");
    }
}
