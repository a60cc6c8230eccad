//! Content blocks (schema 2025-11-25, `ContentBlock`): what tool results, prompt messages and
//! sampling messages carry.
//!
//! ```
//! use junction_protocol::content::ContentBlock;
//! let block = ContentBlock::text("hello");
//! assert_eq!(serde_json::to_value(&block).unwrap(), serde_json::json!({"type": "text", "text": "hello"}));
//! assert_eq!(block.as_text(), Some("hello"));
//! ```

use serde::{Deserialize, Serialize};

pub use crate::annotations::{Annotations, Role};
use crate::meta::Meta;
use crate::resources::{Resource, ResourceContents};

/// `TextContent`: text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Plain text without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Base64-encoded image or audio data: the body of `ImageContent` and `AudioContent`, whose
/// members are the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MediaContent {
    /// The base64 data.
    pub data: String,
    /// Its MIME type, e.g. `image/png` or `audio/wav`.
    pub mime_type: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `ImageContent`: a base64 image with its MIME type (same members as audio).
pub type ImageContent = MediaContent;

/// `AudioContent` (2025-03-26): base64 audio with its MIME type.
pub type AudioContent = MediaContent;

/// `ResourceLink` (2025-06-18): every member of a [`Resource`], under `type: "resource_link"`.
pub type ResourceLink = Resource;

/// `EmbeddedResource`: a resource's contents carried inline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One block of content, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `text`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `image`.
    #[serde(rename = "image")]
    Image(MediaContent),
    /// `audio` (2025-03-26).
    #[serde(rename = "audio")]
    Audio(MediaContent),
    /// `resource_link` (2025-06-18): a pointer to a resource, not its contents.
    #[serde(rename = "resource_link")]
    ResourceLink(Resource),
    /// `resource`: an embedded resource.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(MediaContent::new(data, mime_type))
    }

    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(MediaContent::new(data, mime_type))
    }

    /// A `resource_link` block pointing at `resource`.
    pub fn resource_link(resource: Resource) -> Self {
        ContentBlock::ResourceLink(resource)
    }

    /// An embedded resource block.
    pub fn embedded(resource: ResourceContents) -> Self {
        ContentBlock::Resource(EmbeddedResource {
            resource,
            annotations: None,
            meta: None,
        })
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The `type` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
        }
    }

    /// The block's annotations.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            ContentBlock::Text(t) => t.annotations.as_ref(),
            ContentBlock::Image(m) | ContentBlock::Audio(m) => m.annotations.as_ref(),
            ContentBlock::ResourceLink(r) => r.annotations.as_ref(),
            ContentBlock::Resource(e) => e.annotations.as_ref(),
        }
    }

    /// Sets the block's annotations.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        let slot = match &mut self {
            ContentBlock::Text(t) => &mut t.annotations,
            ContentBlock::Image(m) | ContentBlock::Audio(m) => &mut m.annotations,
            ContentBlock::ResourceLink(r) => &mut r.annotations,
            ContentBlock::Resource(e) => &mut e.annotations,
        };
        *slot = Some(annotations);
        self
    }
}

impl From<TextContent> for ContentBlock {
    fn from(t: TextContent) -> Self {
        ContentBlock::Text(t)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(e: EmbeddedResource) -> Self {
        ContentBlock::Resource(e)
    }
}

impl MediaContent {
    /// Data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        MediaContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(wire: serde_json::Value) -> ContentBlock {
        let block: ContentBlock = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&block).unwrap(), wire);
        block
    }

    #[test]
    fn every_block_kind_round_trips() {
        round_trip(
            json!({"type": "text", "text": "hi", "annotations": {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}}),
        );
        let img = round_trip(json!({"type": "image", "data": "iVBORw0=", "mimeType": "image/png"}));
        assert!(matches!(img, ContentBlock::Image(_)));
        let audio = round_trip(
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "_meta": {"k": 1}}),
        );
        assert!(matches!(audio, ContentBlock::Audio(_)));
        let link = round_trip(
            json!({"type": "resource_link", "uri": "library://books/1", "name": "book", "mimeType": "application/json", "size": 12}),
        );
        assert!(matches!(link, ContentBlock::ResourceLink(r) if r.uri == "library://books/1"));
        round_trip(
            json!({"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "x"}}),
        );
        round_trip(json!({"type": "resource", "resource": {"uri": "test://b", "blob": "AAE="}}));
    }

    #[test]
    fn constructors_give_the_spec_wire_forms() {
        let cases = [
            (
                ContentBlock::image("iVBORw0=", "image/png"),
                json!({"type": "image", "data": "iVBORw0=", "mimeType": "image/png"}),
            ),
            (
                ContentBlock::audio("UklGRg==", "audio/wav"),
                json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}),
            ),
            (
                ContentBlock::resource_link(Resource::new(
                    "file:///project/src/main.rs",
                    "main.rs",
                )),
                json!({"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs"}),
            ),
            (
                ContentBlock::embedded(ResourceContents::text(
                    "file:///project/src/main.rs",
                    "text/x-rust",
                    "fn main() {}",
                )),
                json!({"type": "resource", "resource": {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust", "text": "fn main() {}"}}),
            ),
            (
                ContentBlock::text("hi").with_annotations(
                    Annotations::default()
                        .audience([Role::User])
                        .priority(0.9)
                        .last_modified("2025-01-12T15:00:58Z"),
                ),
                json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.9, "lastModified": "2025-01-12T15:00:58Z"}}),
            ),
        ];
        for (block, wire) in cases {
            assert_eq!(serde_json::to_value(&block).unwrap(), wire);
            assert_eq!(serde_json::from_value::<ContentBlock>(wire).unwrap(), block);
        }
        let annotated =
            ContentBlock::text("x").with_annotations(Annotations::default().priority(1.0));
        assert_eq!(annotated.annotations().and_then(|a| a.priority), Some(1.0));
        assert_eq!(ContentBlock::image("", "image/png").kind(), "image");
        assert_eq!(ContentBlock::image("", "image/png").as_text(), None);
    }

    #[test]
    fn unknown_block_types_are_rejected() {
        assert!(
            serde_json::from_value::<ContentBlock>(json!({"type": "video", "data": ""})).is_err()
        );
        assert!(serde_json::from_value::<ContentBlock>(json!({"type": "text"})).is_err());
    }
}
