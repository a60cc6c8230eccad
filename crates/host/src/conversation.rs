//! The conversation: everything the user, the model and the tools said, in order.
//!
//! It lives only in the host. Servers receive tool arguments, resource URIs and prompt
//! arguments, never these messages.

use base64::Engine;
use junction_protocol::content::ContentBlock;
use junction_protocol::resources::ResourceContents;
use junction_protocol::tools::CallToolResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call; its result refers to it.
    pub id: String,
    /// The model name of the tool (see [`crate::naming`]).
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Value,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// The user typed this.
    User {
        /// The text.
        text: String,
    },
    /// The model answered.
    Assistant {
        /// Its text, if any.
        text: Option<String>,
        /// The calls it asked for.
        #[serde(default, rename = "toolCalls")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    ToolResult {
        /// The call's id.
        #[serde(rename = "callId")]
        call_id: String,
        /// The tool's model name.
        name: String,
        /// The result as text.
        text: String,
        /// Whether it is an error the model should react to.
        #[serde(rename = "isError")]
        is_error: bool,
        /// Its images and audio, which the text only names; each provider sends those it
        /// takes (see [`crate::model`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        media: Vec<Media>,
    },
    /// Material the user attached (a resource) or a prompt supplied.
    Context {
        /// Where it came from, e.g. `@library:library://books/1`.
        source: String,
        /// The content as text.
        text: String,
        /// Its images and audio (blobs of an `image/*` or `audio/*` type), which the text
        /// only names; sent as a tool result's are.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        media: Vec<Media>,
    },
}

impl Message {
    /// The images and sounds it carries (a tool result's or an attachment's).
    pub fn media(&self) -> &[Media] {
        match self {
            Message::ToolResult { media, .. } | Message::Context { media, .. } => media,
            Message::User { .. } | Message::Assistant { .. } => &[],
        }
    }
}

/// Whether a [`Media`] is a picture or a sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MediaKind {
    /// An image block, or a resource with an `image/*` type.
    Image,
    /// An audio block, or a resource with an `audio/*` type.
    Audio,
}

/// An image or a sound a tool returned, as it came (base64).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Media {
    /// Picture or sound.
    pub kind: MediaKind,
    /// The type the server declared.
    pub mime_type: String,
    /// The base64 data.
    pub data: String,
}

impl MediaKind {
    /// The kind a MIME type names: `image/*` or `audio/*`; `None` for any other.
    pub fn of(mime_type: &str) -> Option<MediaKind> {
        if mime_type.starts_with("image/") {
            Some(MediaKind::Image)
        } else if mime_type.starts_with("audio/") {
            Some(MediaKind::Audio)
        } else {
            None
        }
    }
}

fn media(kind: MediaKind, mime_type: &str, data: &str) -> Media {
    Media {
        kind,
        mime_type: mime_type.to_owned(),
        data: data.to_owned(),
    }
}

/// The images and sounds of a tool result, in order: its image and audio blocks, and the
/// embedded resources whose blob has an `image/*` or `audio/*` type. (Those behind its
/// resource links are read from the server, see [`linked_media`].)
pub fn result_media(result: &CallToolResult) -> Vec<Media> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(m) => Some(media(MediaKind::Image, &m.mime_type, &m.data)),
            ContentBlock::Audio(m) => Some(media(MediaKind::Audio, &m.mime_type, &m.data)),
            ContentBlock::Resource(e) => contents_media(&e.resource),
            _ => None,
        })
        .collect()
}

/// A resource's content as an image or a sound: a blob with an `image/*` or `audio/*` type.
pub fn contents_media(contents: &ResourceContents) -> Option<Media> {
    let blob = contents.as_blob()?;
    let mime_type = contents.mime_type()?;
    Some(media(MediaKind::of(mime_type)?, mime_type, blob))
}

/// The resource links of a tool result that say they are images or sounds (by their
/// `mimeType`): their content is read from the server and reaches the model as media.
pub fn linked_media(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ResourceLink(link) => link
                .mime_type
                .as_deref()
                .and_then(MediaKind::of)
                .map(|_| link.uri.as_str()),
            _ => None,
        })
        .collect()
}

/// The messages of one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    messages: Vec<Message>,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Conversation::default()
    }

    /// Appends a message.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// The messages, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.messages.clear();
    }
}

/// A tool result as the text the model reads: the text blocks joined by newlines; other
/// blocks described in brackets; `structuredContent` as JSON when there is no text at all.
pub fn result_text(result: &CallToolResult) -> String {
    let parts: Vec<String> = result.content.iter().map(block_text).collect();
    let has_text = result.content.iter().any(|b| b.as_text().is_some());
    match &result.structured_content {
        Some(structured) if !has_text => {
            let mut all = vec![structured.to_string()];
            all.extend(parts);
            all.join("\n")
        }
        _ => parts.join("\n"),
    }
}

/// What [`cap_text`] cut from a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// How many characters the whole text had.
    pub total: usize,
    /// How many were kept (before the marker).
    pub kept: usize,
}

/// `text` cut to its first `max_chars` characters (never inside a character) followed by a
/// marker saying how much was left out, or unchanged when it is short enough.
pub fn cap_text(text: String, max_chars: usize) -> (String, Option<Cut>) {
    let Some((end, _)) = text.char_indices().nth(max_chars) else {
        return (text, None);
    };
    let total = max_chars + text[end..].chars().count();
    let cut = Cut {
        total,
        kept: max_chars,
    };
    let mut capped = text;
    capped.truncate(end);
    capped.push_str(&format!(
        "\n[output cut: {} of {total} characters left out]",
        total - max_chars
    ));
    (capped, Some(cut))
}

/// What stands for a content block of a kind newer than this host (content kinds are open:
/// the specification adds them).
pub const UNKNOWN_BLOCK: &str = "[a content block of a kind this host does not know]";

/// One content block as text.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(m) => {
            format!("[image: {}, {} bytes of base64]", m.mime_type, m.data.len())
        }
        ContentBlock::Audio(m) => {
            format!("[audio: {}, {} bytes of base64]", m.mime_type, m.data.len())
        }
        ContentBlock::ResourceLink(r) => format!("[resource link: {} ({})]", r.uri, r.name),
        ContentBlock::Resource(e) => contents_text(&e.resource),
        _ => UNKNOWN_BLOCK.to_owned(),
    }
}

/// Resource contents as text: the text itself, a blob of a text type decoded (when it is
/// valid base64 of UTF-8), or a description of any other blob.
pub fn contents_text(contents: &ResourceContents) -> String {
    if let Some(text) = contents.as_text() {
        return text.to_owned();
    }
    if let Some(text) = contents
        .as_blob()
        .filter(|_| contents.mime_type().is_some_and(is_text_type))
        .and_then(|blob| base64::engine::general_purpose::STANDARD.decode(blob).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
    {
        return text;
    }
    format!(
        "[binary resource {}: {}, {} bytes of base64]",
        contents.uri(),
        contents.mime_type().unwrap_or("unknown type"),
        contents.as_blob().map(str::len).unwrap_or(0)
    )
}

/// Whether a MIME type names text: `text/*`, JSON, XML, YAML, TOML, JavaScript, SQL.
fn is_text_type(mime_type: &str) -> bool {
    let essence = mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/javascript"
                | "application/sql"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_blocks_are_joined_and_other_blocks_described() {
        let result = CallToolResult::content(vec![
            ContentBlock::text("one"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::text("two"),
        ]);
        assert_eq!(
            result_text(&result),
            "one\n[image: image/png, 4 bytes of base64]\ntwo"
        );
    }

    #[test]
    fn text_blobs_are_decoded_and_media_blobs_kept_as_media() {
        let resource = ContentBlock::embedded;
        let result = CallToolResult::content(vec![
            resource(ResourceContents::blob(
                "file:///a.txt",
                "text/plain; charset=utf-8",
                "aGVsbG8gZnJvbSBhIGJsb2I=",
            )),
            // Not UTF-8: described, not decoded.
            resource(ResourceContents::blob(
                "file:///b.txt",
                "text/plain",
                "//4AYmFk",
            )),
            resource(ResourceContents::blob(
                "file:///c.bin",
                "application/octet-stream",
                "AAAA",
            )),
            resource(ResourceContents::blob(
                "file:///d.png",
                "image/png",
                "iVBORw==",
            )),
            ContentBlock::audio("UklGRg==", "audio/wav"),
        ]);
        assert_eq!(
            result_text(&result),
            "hello from a blob\n\
             [binary resource file:///b.txt: text/plain, 8 bytes of base64]\n\
             [binary resource file:///c.bin: application/octet-stream, 4 bytes of base64]\n\
             [binary resource file:///d.png: image/png, 8 bytes of base64]\n\
             [audio: audio/wav, 8 bytes of base64]"
        );
        let media = result_media(&result);
        assert_eq!(
            media,
            vec![
                Media {
                    kind: MediaKind::Image,
                    mime_type: "image/png".into(),
                    data: "iVBORw==".into()
                },
                Media {
                    kind: MediaKind::Audio,
                    mime_type: "audio/wav".into(),
                    data: "UklGRg==".into()
                },
            ]
        );
    }

    #[test]
    fn structured_content_is_used_when_there_is_no_text() {
        let mut result = CallToolResult::structured(serde_json::json!({"sum": 3}));
        result.content.clear();
        assert_eq!(result_text(&result), r#"{"sum":3}"#);
        let with_text = CallToolResult::structured(serde_json::json!({"sum": 3}));
        assert_eq!(
            result_text(&with_text),
            r#"{"sum":3}"#,
            "not repeated when text carries it"
        );
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary_with_a_marker() {
        let (short, cut) = cap_text("héllo".into(), 5);
        assert_eq!((short.as_str(), cut), ("héllo", None));
        let (capped, cut) = cap_text("ééééé-tail".into(), 3);
        assert_eq!(cut, Some(Cut { total: 10, kept: 3 }));
        assert_eq!(capped, "ééé\n[output cut: 7 of 10 characters left out]");
        let (empty, cut) = cap_text("abc".into(), 0);
        assert_eq!(cut, Some(Cut { total: 3, kept: 0 }));
        assert!(empty.starts_with("\n[output cut: 3 of 3"), "{empty}");
    }

    #[test]
    fn messages_round_trip_through_json() {
        let mut c = Conversation::new();
        c.push(Message::User { text: "hi".into() });
        c.push(Message::Assistant {
            text: None,
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "s__t".into(),
                arguments: serde_json::json!({"a": 1}),
            }],
        });
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Conversation>(&json).unwrap(), c);
    }
}
