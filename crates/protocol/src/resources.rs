//! Resources (schema 2025-11-25): the descriptions a server lists, the contents it reads,
//! templates, and subscriptions.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Annotations;
use crate::lifecycle::Icon;
use crate::meta::{Cursor, EmptyResult, Meta, NotificationParams, PaginatedParams, RequestMeta};
use crate::{notification, request};

/// A resource a server offers (also the body of a `resource_link` content block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// The programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Its size in bytes, before any encoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Resource {
    /// A URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            icons: None,
            meta: None,
        }
    }
}

/// The contents of a resource: text, or base64 binary data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The URI of what was read.
        uri: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// `_meta`.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
    /// Binary contents.
    Blob {
        /// The URI of what was read.
        uri: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The base64 data.
        blob: String,
        /// `_meta`.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents, already base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: blob.into(),
            meta: None,
        }
    }

    /// The URI of what was read.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contents_decode_by_their_members() {
        let text: ResourceContents = serde_json::from_value(
            json!({"uri": "test://static-text", "mimeType": "text/plain", "text": "t"}),
        )
        .unwrap();
        assert_eq!(
            text,
            ResourceContents::text("test://static-text", "text/plain", "t")
        );
        let blob: ResourceContents = serde_json::from_value(
            json!({"uri": "test://static-binary", "mimeType": "image/png", "blob": "iVBO"}),
        )
        .unwrap();
        assert_eq!(blob.uri(), "test://static-binary");
        assert!(matches!(blob, ResourceContents::Blob { .. }));
        assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "x"})).is_err());
    }

    #[test]
    fn resource_wire_form() {
        let mut r = Resource::new("library://policy", "policy");
        r.mime_type = Some("text/markdown".into());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"uri": "library://policy", "name": "policy", "mimeType": "text/markdown"})
        );
    }
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceTemplate {
    /// The template, e.g. `library://books/{isbn}`.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// The programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type every match shares.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of `resources/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListResourcesResult {
    /// One page of resources.
    pub resources: Vec<Resource>,
    /// The cursor of the next page.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<Cursor>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/templates/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListResourceTemplatesResult {
    /// One page of templates.
    #[serde(rename = "resourceTemplates")]
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<Cursor>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params naming one resource: `resources/read`, `resources/subscribe`, `resources/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UriParams {
    /// The resource's URI.
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl UriParams {
    /// Params for `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        UriParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

/// The result of `resources/read`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// One or more contents (a directory may give its children).
    pub contents: Vec<ResourceContents>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28); absent means `complete`.
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedParams {
    /// The URI that changed (possibly a sub-resource of the subscribed one).
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

request!(
    /// `resources/list`.
    ListResources, "resources/list", PaginatedParams, ListResourcesResult
);
request!(
    /// `resources/templates/list`.
    ListResourceTemplates, "resources/templates/list", PaginatedParams, ListResourceTemplatesResult
);
request!(
    /// `resources/read`.
    ReadResource, "resources/read", UriParams, ReadResourceResult
);
request!(
    /// `resources/subscribe` (server capability `resources.subscribe`).
    Subscribe, "resources/subscribe", UriParams, EmptyResult
);
request!(
    /// `resources/unsubscribe`.
    Unsubscribe, "resources/unsubscribe", UriParams, EmptyResult
);
notification!(
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated, "notifications/resources/updated", ResourceUpdatedParams
);
notification!(
    /// `notifications/resources/list_changed`.
    ResourceListChanged, "notifications/resources/list_changed", NotificationParams
);

#[cfg(test)]
mod method_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn template_and_read_result_round_trip() {
        let wire = json!({"uriTemplate": "test://template/{id}/data", "name": "t", "mimeType": "application/json"});
        let t: ResourceTemplate = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), wire);
        let wire = json!({"contents": [{"uri": "test://template/123/data", "mimeType": "application/json", "text": "{\"id\":\"123\"}"}]});
        let r: ReadResourceResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let page: ListResourceTemplatesResult =
            serde_json::from_value(json!({"resourceTemplates": [], "nextCursor": "2"})).unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
    }
}
