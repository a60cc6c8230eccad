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

use std::sync::{Mutex, MutexGuard};

use crate::sync::lock;

use junction_protocol::capabilities::ClientCapabilities;
use junction_protocol::lifecycle::{Implementation, InitializeParams};
use junction_protocol::{ErrorObject, ProtocolVersion};

/// Where a session stands in the handshake.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// No `initialize` yet.
    New,
    /// `initialize` answered; waiting for `notifications/initialized`.
    Initializing(Negotiated),
    /// Operating.
    Ready(Negotiated),
}

/// The most bytes of a client's free-form capability members (`experimental`,
/// `extensions`, unknown members) a session keeps; larger ones are dropped whole.
pub const KEPT_CAPABILITY_BYTES: usize = 4 * 1024;

/// The longest client name, title, version, description or website a session keeps, in
/// bytes; longer ones are cut.
pub const KEPT_INFO_CHARS: usize = 256;

fn small<T: serde::Serialize>(value: &T) -> bool {
    serde_json::to_vec(value).is_ok_and(|v| v.len() <= KEPT_CAPABILITY_BYTES)
}

fn kept_capabilities(offered: &ClientCapabilities) -> ClientCapabilities {
    let mut kept = offered.clone();
    if !small(&kept.experimental) {
        kept.experimental = None;
    }
    if !small(&kept.extensions) {
        kept.extensions = None;
    }
    if !small(&kept.extra) {
        kept.extra.clear();
    }
    kept
}

fn cut(text: &str) -> String {
    let mut end = text.len().min(KEPT_INFO_CHARS);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn kept_info(offered: &Implementation) -> Implementation {
    Implementation {
        name: cut(&offered.name),
        title: offered.title.as_deref().map(cut),
        version: cut(&offered.version),
        description: offered.description.as_deref().map(cut),
        website_url: offered.website_url.as_deref().map(cut),
        // Icons are for showing a server to a person; a server has no use for a client's.
        icons: None,
    }
}

/// What the client said about itself in `initialize`, as far as a session keeps it: the
/// capabilities (free-form members only up to [`KEPT_CAPABILITY_BYTES`]) and the client's
/// identity (strings cut at [`KEPT_INFO_CHARS`], no icons).
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
        if method == "ping" {
            return Ok(());
        }
        match (&*self.phase(), method) {
            (Phase::New, "initialize") => Ok(()),
            (Phase::New, _) => Err(ErrorObject::invalid_request(format!(
                "Invalid request: `{method}` was sent before `initialize`; initialize the session first"
            ))),
            (_, "initialize") => Err(ErrorObject::invalid_request(
                "Invalid request: the session is already initialized; `initialize` is sent once",
            )),
            (Phase::Initializing(_), _) => Err(ErrorObject::invalid_request(format!(
                "Invalid request: `{method}` was sent before `notifications/initialized`; send it after the initialize result"
            ))),
            (Phase::Ready(_), _) => Ok(()),
        }
    }

    /// Answers `initialize`: records the client and returns the revision to answer with.
    ///
    /// A session lives long and its `initialize` may be megabytes, so only what serving needs
    /// is kept ([`Negotiated`] documents what): a client cannot make an idle session cost
    /// more than a few KiB.
    pub fn initialize(&self, params: &InitializeParams) -> Result<ProtocolVersion, ErrorObject> {
        let mut phase = self.phase();
        if *phase != Phase::New {
            return Err(ErrorObject::invalid_request(
                "Invalid request: the session is already initialized; `initialize` is sent once",
            ));
        }
        let version = ProtocolVersion::negotiate(&params.protocol_version);
        *phase = Phase::Initializing(Negotiated {
            version,
            capabilities: kept_capabilities(&params.capabilities),
            info: kept_info(&params.client_info),
        });
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
        match &*self.phase() {
            Phase::New => None,
            Phase::Initializing(peer) | Phase::Ready(peer) => Some(peer.clone()),
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

    /// The attack: an `initialize` of 4 MiB was kept whole for the session's 30 idle minutes.
    #[test]
    fn a_bloated_initialize_is_kept_small() {
        let junk = serde_json::Value::String("j".repeat(1024 * 1024));
        let mut offered = offer("2025-11-25");
        offered
            .capabilities
            .extra
            .insert("junk".into(), junk.clone());
        offered.capabilities.experimental =
            Some([("junk".to_owned(), junk.clone())].into_iter().collect());
        offered
            .capabilities
            .extra
            .insert("small".into(), serde_json::json!(1));
        offered.client_info.name = "n".repeat(100_000);
        offered.client_info.description = Some("é".repeat(100_000));
        let kept_caps = kept_capabilities(&offered.capabilities);
        let kept = kept_info(&offered.client_info);
        let size = serde_json::to_vec(&(kept_caps, kept)).unwrap().len();
        assert!(size < 2 * 1024, "kept {size} bytes");
        let small = offer("2025-11-25");
        assert_eq!(kept_capabilities(&small.capabilities), small.capabilities);
        assert_eq!(kept_info(&small.client_info), small.client_info);
    }

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
