//! Resources (schema 2025-11-25): the descriptions a server lists, the contents it reads,
//! templates, and subscriptions.
//!
//! ```
//! use junction_protocol::resources::{ReadResourceResult, Resource, ResourceContents};
//! let r = Resource::new("file:///project/README.md", "README.md").mime_type("text/markdown");
//! let read = ReadResourceResult::new(vec![ResourceContents::text(&r.uri, "text/markdown", "# Hi")]);
//! assert_eq!(read.contents[0].as_text(), Some("# Hi"));
//! ```

use serde::{Deserialize, Serialize};

use crate::annotations::Annotations;
use crate::lifecycle::Icon;
use crate::meta::{Cursor, EmptyResult, Meta, NotificationParams, PaginatedParams, RequestMeta};
use crate::result_tail::wire_result;
use crate::stateless::InputResponses;
use crate::{notification, request};

/// A resource a server offers (also the body of a `resource_link` content block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
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

/// The contents of a resource: text (`TextResourceContents`) or base64 binary data
/// (`BlobResourceContents`), told apart by which member is present.
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

    /// The MIME type.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                mime_type.as_deref()
            }
        }
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { text, .. } => Some(text),
            ResourceContents::Blob { .. } => None,
        }
    }

    /// The base64 data, for binary contents.
    pub fn as_blob(&self) -> Option<&str> {
        match self {
            ResourceContents::Blob { blob, .. } => Some(blob),
            ResourceContents::Text { .. } => None,
        }
    }
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The template, e.g. `library://books/{isbn}`.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

impl ResourceTemplate {
    /// A URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            meta: None,
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

    /// Sets the MIME type every match shares.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

wire_result! {
    /// The result of `resources/list`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    cached pub struct ListResourcesResult {
        /// One page of resources.
        pub resources: Vec<Resource>,
        /// The cursor of the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }
}

impl ListResourcesResult {
    /// One page of resources, and the cursor of the next page (`None` on the last).
    pub fn page(resources: Vec<Resource>, next_cursor: Option<Cursor>) -> Self {
        Self {
            resources,
            next_cursor,
            ..Self::default()
        }
    }
}

wire_result! {
    /// The result of `resources/templates/list`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    cached pub struct ListResourceTemplatesResult {
        /// One page of templates.
        pub resource_templates: Vec<ResourceTemplate>,
        /// The cursor of the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }
}

impl ListResourceTemplatesResult {
    /// One page of resource templates, and the cursor of the next page (`None` on the last).
    pub fn page(resource_templates: Vec<ResourceTemplate>, next_cursor: Option<Cursor>) -> Self {
        Self {
            resource_templates,
            next_cursor,
            ..Self::default()
        }
    }
}

/// The params of `resources/list`.
pub type ListResourcesParams = PaginatedParams;

/// The params of `resources/templates/list`.
pub type ListResourceTemplatesParams = PaginatedParams;

/// Params naming one resource: `resources/read`, `resources/subscribe`, `resources/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UriParams {
    /// The resource's URI.
    pub uri: String,
    /// `inputResponses` (2026-07-28, `resources/read` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// `requestState` (2026-07-28, `resources/read` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl UriParams {
    /// Params for `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        UriParams {
            uri: uri.into(),
            input_responses: None,
            request_state: None,
            meta: None,
        }
    }
}

/// The params of `resources/read`.
pub type ReadResourceParams = UriParams;
/// The params of `resources/subscribe`.
pub type SubscribeParams = UriParams;
/// The params of `resources/unsubscribe`.
pub type UnsubscribeParams = UriParams;

wire_result! {
    /// The result of `resources/read`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    cached pub struct ReadResourceResult {
        /// One or more contents (a directory may give its children).
        pub contents: Vec<ResourceContents>,
    }
}

impl ReadResourceResult {
    /// A result with these contents.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        ReadResourceResult {
            contents,
            ..Default::default()
        }
    }
}

/// The params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceUpdatedParams {
    /// The URI that changed (possibly a sub-resource of the subscribed one).
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceUpdatedParams {
    /// `uri` changed.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceUpdatedParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

request!(
    /// `resources/list`.
    ListResources, "resources/list", PaginatedParams, ListResourcesResult,
    capability = Resources, cacheable = true
);
request!(
    /// `resources/templates/list`.
    ListResourceTemplates, "resources/templates/list", PaginatedParams, ListResourceTemplatesResult,
    capability = Resources, cacheable = true
);
request!(
    /// `resources/read`.
    ReadResource, "resources/read", UriParams, ReadResourceResult,
    capability = Resources, cacheable = true, mcp_name = Uri
);
request!(
    /// `resources/subscribe` (server capability `resources.subscribe`; handshake family).
    Subscribe, "resources/subscribe", UriParams, EmptyResult,
    families = Handshake, capability = Resources
);
request!(
    /// `resources/unsubscribe` (handshake family).
    Unsubscribe, "resources/unsubscribe", UriParams, EmptyResult,
    families = Handshake, capability = Resources
);
notification!(
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated, "notifications/resources/updated", ResourceUpdatedParams,
    capability = Resources
);
notification!(
    /// `notifications/resources/list_changed`.
    ResourceListChanged, "notifications/resources/list_changed", NotificationParams,
    capability = Resources
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::Role;
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
        assert_eq!(text.mime_type(), Some("text/plain"));
        let blob: ResourceContents = serde_json::from_value(
            json!({"uri": "test://static-binary", "mimeType": "image/png", "blob": "iVBO"}),
        )
        .unwrap();
        assert_eq!(blob.uri(), "test://static-binary");
        assert_eq!(blob.as_blob(), Some("iVBO"));
        assert!(blob.as_text().is_none());
        assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "x"})).is_err());
    }

    #[test]
    fn resource_with_every_member_round_trips() {
        let wire = json!({
            "uri": "file:///project/README.md",
            "name": "README.md",
            "title": "Project Documentation",
            "description": "The project's readme",
            "mimeType": "text/markdown",
            "annotations": {"audience": ["user"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"},
            "size": 1024,
            "icons": [{"src": "data:image/png;base64,AA==", "mimeType": "image/png"}],
            "_meta": {"io.example/x": 1}
        });
        let r: Resource = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.display_name(), "Project Documentation");
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let built = Resource::new("file:///project/README.md", "README.md")
            .title("Project Documentation")
            .description("The project's readme")
            .mime_type("text/markdown")
            .annotations(
                Annotations::default()
                    .audience([Role::User])
                    .priority(0.8)
                    .last_modified("2025-01-12T15:00:58Z"),
            )
            .size(1024)
            .icon(Icon::new("data:image/png;base64,AA==").mime_type("image/png"));
        assert_eq!(built.meta, None);
        assert_eq!(
            serde_json::to_value(Resource {
                meta: r.meta.clone(),
                ..built
            })
            .unwrap(),
            wire
        );
    }

    #[test]
    fn template_and_read_result_round_trip() {
        let wire = json!({"uriTemplate": "file:///{path}", "name": "Project Files", "title": "📁 Project Files", "description": "Access files", "mimeType": "application/octet-stream"});
        let t: ResourceTemplate = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), wire);
        let built = ResourceTemplate::new("file:///{path}", "Project Files")
            .title("📁 Project Files")
            .description("Access files")
            .mime_type("application/octet-stream");
        assert_eq!(built, t);
        let wire = json!({"contents": [
            {"uri": "test://template/123/data", "mimeType": "application/json", "text": "{\"id\":\"123\"}"},
            {"uri": "file:///logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
        ], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"});
        let r: ReadResourceResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let page: ListResourceTemplatesResult =
            serde_json::from_value(json!({"resourceTemplates": [], "nextCursor": "2"})).unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
    }

    #[test]
    fn list_result_keeps_unknown_members_and_params_wire_forms() {
        let wire = json!({"resources": [{"uri": "file:///a", "name": "a"}], "nextCursor": "n", "vendor": {"x": 1}});
        let page: ListResourcesResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(page.extra.get("vendor"), Some(&json!({"x": 1})));
        assert_eq!(serde_json::to_value(&page).unwrap(), wire);
        assert_eq!(
            serde_json::to_value(UriParams::new("file:///a")).unwrap(),
            json!({"uri": "file:///a"})
        );
        assert_eq!(
            serde_json::to_value(ResourceUpdatedParams::new("file:///a")).unwrap(),
            json!({"uri": "file:///a"})
        );
    }
}
