//! Protocol revisions and the two families they belong to.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A protocol revision Junction speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first public revision (HTTP+SSE transport).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, audio content, tool annotations.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, no batching.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, tools in sampling, tasks.
    V2025_11_25,
    /// 2026-07-28: the stateless family (no initialize, per-request `_meta`).
    V2026_07_28,
}

/// Which way a revision opens a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `initialize` / `notifications/initialized`, sessions on HTTP.
    Handshake,
    /// Version and capabilities in every request's `_meta`; `server/discover`.
    Stateless,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revisions negotiable with `initialize`, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest handshake revision: what a client offers and a server falls back to.
    pub const LATEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The date string on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The family of this revision.
    pub const fn family(self) -> Family {
        match self {
            ProtocolVersion::V2026_07_28 => Family::Stateless,
            _ => Family::Handshake,
        }
    }

    /// The handshake revision a server answers to an `initialize` offering `requested`:
    /// the same one when supported, otherwise the newest.
    pub fn negotiate(requested: &str) -> ProtocolVersion {
        match requested.parse::<ProtocolVersion>() {
            Ok(v) if v.family() == Family::Handshake => v,
            _ => ProtocolVersion::LATEST_HANDSHAKE,
        }
    }

    /// Whether content of this revision may use audio blocks, tool annotations and
    /// `notifications/progress` messages (added in 2025-03-26).
    pub fn has_audio_and_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// Whether structured tool output and elicitation exist (added in 2025-06-18).
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string that is not one Junction speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unsupported protocol version {:?}; supported: ", self.0)?;
        let names: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
        f.write_str(&names.join(", "))
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_echoes_supported_and_falls_back_to_latest() {
        for v in ProtocolVersion::HANDSHAKE {
            assert_eq!(ProtocolVersion::negotiate(v.as_str()), v);
        }
        assert_eq!(
            ProtocolVersion::negotiate("2099-01-01"),
            ProtocolVersion::V2025_11_25
        );
        assert_eq!(
            ProtocolVersion::negotiate("2026-07-28"),
            ProtocolVersion::V2025_11_25
        );
    }

    #[test]
    fn parses_and_prints() {
        assert_eq!(
            "2025-06-18".parse::<ProtocolVersion>().unwrap(),
            ProtocolVersion::V2025_06_18
        );
        assert!("2024-10-07"
            .parse::<ProtocolVersion>()
            .unwrap_err()
            .to_string()
            .contains("2025-11-25"));
        assert_eq!(
            serde_json::to_string(&ProtocolVersion::V2024_11_05).unwrap(),
            "\"2024-11-05\""
        );
    }
}
