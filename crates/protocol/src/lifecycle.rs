//! The handshake (2024-11-05 to 2025-11-25): `initialize`, `notifications/initialized`,
//! `ping`, cancellation, progress, and the identity each side sends (`Implementation`,
//! `Icon`).
//!
//! ```
//! use junction_protocol::lifecycle::{Implementation, InitializeParams};
//! use junction_protocol::ProtocolVersion;
//!
//! let params = InitializeParams::new(ProtocolVersion::LATEST_HANDSHAKE, Implementation::new("junction", "0.1.0"));
//! assert_eq!(
//!     serde_json::to_value(&params).unwrap(),
//!     serde_json::json!({
//!         "protocolVersion": "2025-11-25",
//!         "capabilities": {},
//!         "clientInfo": {"name": "junction", "version": "0.1.0"}
//!     })
//! );
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::meta::{EmptyParams, EmptyResult, Meta, NotificationParams, RequestMeta};
use crate::version::ProtocolVersion;
use crate::{notification, request, ProgressToken, RequestId};

/// The colour theme an icon is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon (2025-11-25): an `https:` or `data:` URI with optional type, sizes and theme.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Icon {
    /// The image URI.
    pub src: String,
    /// Its MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme it is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
}

/// `clientInfo` / `serverInfo`: who is speaking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The version.
    pub version: String,
    /// A description (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A website.
    #[serde(
        rename = "websiteUrl",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub website_url: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            website_url: None,
            icons: None,
        }
    }
}

/// The params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeParams {
    /// The revision the client offers (its newest). Kept as a string: a client may offer a
    /// revision this side does not know, and the server must still answer.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl InitializeParams {
    /// Offers `version` with no capabilities.
    pub fn new(version: ProtocolVersion, client_info: Implementation) -> Self {
        InitializeParams {
            protocol_version: version.as_str().to_owned(),
            capabilities: ClientCapabilities::default(),
            client_info,
            meta: None,
        }
    }
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeResult {
    /// The revision the server chose: the client's if it supports it, otherwise its newest.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    #[serde(rename = "serverInfo")]
    pub server_info: Implementation,
    /// Hints the host may add to the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept (results are open).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InitializeResult {
    /// The chosen revision, if this side knows it (a client must disconnect otherwise).
    pub fn version(&self) -> Result<ProtocolVersion, crate::version::UnknownVersion> {
        self.protocol_version.parse()
    }
}

request!(
    /// `initialize`: the first request of a handshake-family session.
    Initialize, "initialize", InitializeParams, InitializeResult
);

notification!(
    /// `notifications/initialized`: the client's answer to the initialize result.
    Initialized, "notifications/initialized", NotificationParams
);

request!(
    /// `ping`: either side may send it at any time; the answer is `{}`.
    Ping, "ping", EmptyParams, EmptyResult
);

/// The params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelledParams {
    /// The request to stop; required except for task-augmented requests (cancelled with
    /// `tasks/cancel` instead).
    #[serde(rename = "requestId", default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    #[serde(rename = "progressToken")]
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

notification!(
    /// `notifications/cancelled`: either side stops a request it sent.
    Cancelled, "notifications/cancelled", CancelledParams
);

notification!(
    /// `notifications/progress`: progress of a request that asked for it.
    Progress, "notifications/progress", ProgressParams
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::Request;
    use serde_json::json;

    #[test]
    fn initialize_result_round_trips_and_keeps_unknown_members() {
        let wire = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {
                "name": "library", "title": "Library", "version": "1.2.0",
                "description": "Loans", "websiteUrl": "https://example.org",
                "icons": [{"src": "data:image/png;base64,AA==", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}]
            },
            "instructions": "Search before checking out.",
            "_meta": {"io.example/trace": "x"},
            "vendorField": [1, 2]
        });
        let result: InitializeResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(result.version().unwrap(), ProtocolVersion::V2025_06_18);
        assert_eq!(
            result.server_info.icons.as_ref().unwrap()[0].theme,
            Some(Theme::Dark)
        );
        assert_eq!(serde_json::to_value(&result).unwrap(), wire);
    }

    #[test]
    fn an_unknown_offered_version_still_decodes() {
        let params: InitializeParams = serde_json::from_value(json!({
            "protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
        }))
        .unwrap();
        assert_eq!(
            ProtocolVersion::negotiate(&params.protocol_version),
            ProtocolVersion::LATEST_HANDSHAKE
        );
        let result = InitializeResult {
            protocol_version: "2099-01-01".into(),
            capabilities: Default::default(),
            server_info: Implementation::new("s", "1"),
            instructions: None,
            meta: None,
            extra: Default::default(),
        };
        assert!(result
            .version()
            .unwrap_err()
            .to_string()
            .contains("2099-01-01"));
    }

    #[test]
    fn cancellation_and_progress_wire_forms() {
        let c: CancelledParams =
            serde_json::from_value(json!({"requestId": "a", "reason": "user"})).unwrap();
        assert_eq!(c.request_id, Some(RequestId::String("a".into())));
        let p = ProgressParams {
            progress_token: ProgressToken::Number(7),
            progress: 50.0,
            total: Some(100.0),
            message: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"progressToken": 7, "progress": 50.0, "total": 100.0})
        );
    }

    #[test]
    fn method_names() {
        assert_eq!(Initialize::METHOD, "initialize");
        assert_eq!(Ping::METHOD, "ping");
        assert_eq!(
            <Initialized as crate::method::Notification>::METHOD,
            "notifications/initialized"
        );
        assert_eq!(
            serde_json::to_value(EmptyResult::default()).unwrap(),
            json!({})
        );
    }
}
