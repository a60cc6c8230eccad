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

/// The most bytes of a client's free-form capability members (`experimental`,
/// `extensions`, unknown members) a session keeps by default; larger ones are dropped whole.
pub const KEPT_CAPABILITY_BYTES: usize = 4 * 1024;

/// The longest client name, title, version, description or website a session keeps by
/// default, in bytes; longer ones are cut.
pub const KEPT_INFO_CHARS: usize = 256;

/// How much of a client's `initialize` a session keeps for its life; set with
/// [`ServerBuilder::kept`](super::ServerBuilder::kept).
///
/// ```
/// use junction::server::lifecycle::{Kept, Lifecycle};
/// use junction_protocol::lifecycle::{Implementation, InitializeParams};
/// use junction_protocol::ProtocolVersion;
///
/// let lifecycle = Lifecycle::with_kept(Kept { capability_bytes: 1024, info_bytes: 8 });
/// let offer = InitializeParams::new(ProtocolVersion::V2025_06_18, Implementation::new("a-long-client-name", "1"));
/// lifecycle.initialize(&offer).unwrap();
/// assert_eq!(lifecycle.negotiated().unwrap().info.name, "a-long-c");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// The most bytes (as JSON) of each free-form capability member kept
    /// ([`KEPT_CAPABILITY_BYTES`] by default); a larger member is dropped whole.
    pub capability_bytes: usize,
    /// The most bytes of each client name, title, version, description or website kept
    /// ([`KEPT_INFO_CHARS`] by default); longer ones are cut at a character boundary.
    pub info_bytes: usize,
}

impl Default for Kept {
    fn default() -> Self {
        Kept {
            capability_bytes: KEPT_CAPABILITY_BYTES,
            info_bytes: KEPT_INFO_CHARS,
        }
    }
}

impl Kept {
    fn small<T: serde::Serialize>(&self, value: &T) -> bool {
        serde_json::to_vec(value).is_ok_and(|v| v.len() <= self.capability_bytes)
    }

    fn capabilities(&self, offered: &ClientCapabilities) -> ClientCapabilities {
        let mut kept = offered.clone();
        if !self.small(&kept.experimental) {
            kept.experimental = None;
        }
        if !self.small(&kept.extensions) {
            kept.extensions = None;
        }
        if !self.small(&kept.extra) {
            kept.extra.clear();
        }
        kept
    }

    fn cut(&self, text: &str) -> String {
        let mut end = text.len().min(self.info_bytes);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].to_owned()
    }

    fn info(&self, offered: &Implementation) -> Implementation {
        let cut = |text: &str| self.cut(text);
        // Icons are for showing a server to a person; a server has no use for a client's.
        let mut info = Implementation::new(cut(&offered.name), cut(&offered.version));
        info.title = offered.title.as_deref().map(cut);
        info.description = offered.description.as_deref().map(cut);
        info.website_url = offered.website_url.as_deref().map(cut);
        info
    }
}

/// What the client said about itself in `initialize`, as far as a session keeps it: the
/// capabilities (free-form members only up to [`Kept::capability_bytes`]) and the client's
/// identity (strings cut at [`Kept::info_bytes`], no icons).
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
    kept: Kept,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifecycle {
    /// A session that has not been initialized, keeping the [`Kept`] defaults.
    pub fn new() -> Self {
        Lifecycle::with_kept(Kept::default())
    }

    /// A session that has not been initialized, keeping `kept` of its `initialize`.
    pub fn with_kept(kept: Kept) -> Self {
        Lifecycle {
            phase: Mutex::new(Phase::New),
            kept,
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
        *phase = Phase::Initializing(Arc::new(Negotiated {
            version,
            capabilities: self.kept.capabilities(&params.capabilities),
            info: self.kept.info(&params.client_info),
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
        let defaults = Kept::default();
        let kept_caps = defaults.capabilities(&offered.capabilities);
        let kept = defaults.info(&offered.client_info);
        let size = serde_json::to_vec(&(kept_caps, kept)).unwrap().len();
        assert!(size < 2 * 1024, "kept {size} bytes");
        let small = offer("2025-11-25");
        assert_eq!(
            defaults.capabilities(&small.capabilities),
            small.capabilities
        );
        assert_eq!(defaults.info(&small.client_info), small.client_info);
    }

    #[test]
    fn what_is_kept_follows_the_configured_bounds() {
        let mut offered = offer("2025-11-25");
        offered
            .capabilities
            .extra
            .insert("mid".into(), serde_json::json!("m".repeat(100)));
        offered.client_info.name = "é".repeat(10);
        let tight = Lifecycle::with_kept(Kept {
            capability_bytes: 50,
            info_bytes: 5,
        });
        tight.initialize(&offered).unwrap();
        let kept = tight.negotiated().unwrap();
        assert!(
            kept.capabilities.extra.is_empty(),
            "{:?}",
            kept.capabilities
        );
        assert_eq!(
            kept.info.name, "éé",
            "cut at 5 bytes, on a character boundary"
        );
        let roomy = Lifecycle::with_kept(Kept {
            capability_bytes: 200,
            info_bytes: 20,
        });
        roomy.initialize(&offered).unwrap();
        let kept = roomy.negotiated().unwrap();
        assert!(kept.capabilities.extra.contains_key("mid"));
        assert_eq!(kept.info.name, offered.client_info.name);
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
