//! Logging (schema 2025-11-25): `logging/setLevel` and `notifications/message`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::{EmptyResult, Meta, RequestMeta};
use crate::{notification, request};

/// A syslog severity (RFC 5424), least severe first, so levels compare with `<`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Notice.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Alert.
    Alert,
    /// Emergency.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A level name that is not one of the eight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown logging level {:?}; use one of debug, info, notice, warning, error, critical, alert, emergency",
            self.0
        )
    }
}

impl std::error::Error for UnknownLevel {}

impl FromStr for LoggingLevel {
    type Err = UnknownLevel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoggingLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| UnknownLevel(s.to_owned()))
    }
}

/// The params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetLevelParams {
    /// Send messages at this level and above.
    pub level: LoggingLevel,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoggingMessageParams {
    /// The severity.
    pub level: LoggingLevel,
    /// Which part of the server logged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Anything JSON.
    pub data: Value,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SetLevelParams {
    /// Asks for `level` and above.
    pub fn new(level: LoggingLevel) -> Self {
        SetLevelParams { level, meta: None }
    }
}

impl LoggingMessageParams {
    /// A message at `level` with `data`.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        LoggingMessageParams {
            level,
            logger: None,
            data: data.into(),
            meta: None,
        }
    }

    /// Sets the logger name.
    pub fn logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}

request!(
    /// `logging/setLevel` (server capability `logging`).
    SetLevel, "logging/setLevel", SetLevelParams, EmptyResult,
    families = Handshake, capability = Logging
);
notification!(
    /// `notifications/message`: a log message from the server.
    LoggingMessage, "notifications/message", LoggingMessageParams,
    capability = Logging
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_order_parse_and_reject_unknown_names() {
        assert!(
            LoggingLevel::Debug < LoggingLevel::Info
                && LoggingLevel::Alert < LoggingLevel::Emergency
        );
        assert_eq!(
            "warning".parse::<LoggingLevel>().unwrap(),
            LoggingLevel::Warning
        );
        assert!("verbose"
            .parse::<LoggingLevel>()
            .unwrap_err()
            .to_string()
            .contains("debug, info"));
        assert!(serde_json::from_value::<SetLevelParams>(json!({"level": "loud"})).is_err());
    }

    #[test]
    fn spec_examples_round_trip() {
        let wire = json!({"level": "error", "logger": "database", "data": {"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}});
        let m: LoggingMessageParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(m.level, LoggingLevel::Error);
        assert_eq!(serde_json::to_value(&m).unwrap(), wire);
        assert_eq!(
            serde_json::to_value(LoggingMessageParams::new(
                LoggingLevel::Notice,
                "plain text"
            ))
            .unwrap(),
            json!({"level": "notice", "data": "plain text"})
        );
        assert_eq!(
            serde_json::to_value(SetLevelParams::new(LoggingLevel::Info)).unwrap(),
            json!({"level": "info"})
        );
        for level in LoggingLevel::ALL {
            assert_eq!(serde_json::to_value(level).unwrap(), json!(level.as_str()));
            assert_eq!(level.to_string().parse::<LoggingLevel>().unwrap(), level);
        }
    }

    #[test]
    fn message_wire_form() {
        let m = LoggingMessageParams::new(LoggingLevel::Info, json!({"n": 1})).logger("db");
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"level": "info", "logger": "db", "data": {"n": 1}})
        );
    }
}
