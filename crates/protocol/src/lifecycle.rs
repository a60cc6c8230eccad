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
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// The image URI.
    pub src: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme it is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
}

impl Icon {
    /// An icon at `src` (an `https:` or `data:` URI).
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the sizes, e.g. `["48x48"]` or `["any"]`.
    pub fn sizes<S: Into<String>>(mut self, sizes: impl IntoIterator<Item = S>) -> Self {
        self.sizes = Some(sizes.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the theme.
    pub fn theme(mut self, theme: Theme) -> Self {
        self.theme = Some(theme);
        self
    }
}

/// `clientInfo` / `serverInfo`: who is speaking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

    /// Sets the display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the website.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// The name to show a person: `title`, then `name`.
    pub fn display_name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

/// The params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeParams {
    /// The revision the client offers (its newest). Kept as a string: a client may offer a
    /// revision this side does not know, and the server must still answer.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
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
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The revision the server chose: the client's if it supports it, otherwise its newest.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
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
    /// The answer choosing `version`, with the server's capabilities and identity.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// Sets the instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The chosen revision, if this side knows it (a client must disconnect otherwise).
    pub fn version(&self) -> Result<ProtocolVersion, crate::version::UnknownVersion> {
        self.protocol_version.parse()
    }
}

request!(
    /// `initialize`: the first request of a handshake-family session.
    Initialize, "initialize", InitializeParams, InitializeResult,
    families = Handshake
);

notification!(
    /// `notifications/initialized`: the client's answer to the initialize result.
    Initialized, "notifications/initialized", NotificationParams,
    families = Handshake
);

request!(
    /// `ping`: either side may send it at any time; the answer is `{}`.
    Ping, "ping", EmptyParams, EmptyResult,
    families = Handshake
);

/// The params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledParams {
    /// The request to stop; required except for task-augmented requests (cancelled with
    /// `tasks/cancel` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
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

impl CancelledParams {
    /// Cancels request `id`.
    pub fn new(id: impl Into<RequestId>) -> Self {
        CancelledParams {
            request_id: Some(id.into()),
            reason: None,
            meta: None,
        }
    }

    /// Sets the reason.
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

impl ProgressParams {
    /// Progress `progress` for the request that sent `token`.
    pub fn new(token: ProgressToken, progress: f64) -> Self {
        ProgressParams {
            progress_token: token,
            progress,
            total: None,
            message: None,
            meta: None,
        }
    }

    /// Sets the total.
    pub fn total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets the message.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
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
    fn builders_give_the_spec_wire_forms() {
        let info = Implementation::new("ExampleServer", "1.0.0")
            .title("Example Server Display Name")
            .description("An example")
            .website_url("https://example.com")
            .icon(
                Icon::new("https://example.com/icon.png")
                    .mime_type("image/png")
                    .sizes(["48x48"])
                    .theme(Theme::Light),
            );
        let result = InitializeResult::new(
            ProtocolVersion::V2025_11_25,
            ServerCapabilities::default().with_tools(true),
            info,
        )
        .instructions("Optional instructions for the client");
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {
                    "name": "ExampleServer", "title": "Example Server Display Name", "version": "1.0.0",
                    "description": "An example", "websiteUrl": "https://example.com",
                    "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}]
                },
                "instructions": "Optional instructions for the client"
            })
        );
        assert_eq!(
            result.server_info.display_name(),
            "Example Server Display Name"
        );
        assert_eq!(
            serde_json::to_value(CancelledParams::new(123).reason("User requested cancellation"))
                .unwrap(),
            json!({"requestId": 123, "reason": "User requested cancellation"})
        );
        assert_eq!(
            serde_json::to_value(
                ProgressParams::new("abc123".into(), 50.0)
                    .total(100.0)
                    .message("Reticulating splines...")
            )
            .unwrap(),
            json!({"progressToken": "abc123", "progress": 50.0, "total": 100.0, "message": "Reticulating splines..."})
        );
        let task_cancel: CancelledParams = serde_json::from_value(json!({})).unwrap();
        assert!(task_cancel.request_id.is_none());
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
