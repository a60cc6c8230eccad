//! Resources (schema 2025-11-25): the descriptions a server lists and the contents it reads.

use serde::{Deserialize, Serialize};

use crate::content::Annotations;
use crate::lifecycle::Icon;
use crate::meta::Meta;

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
