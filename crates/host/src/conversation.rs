//! The conversation: everything the user, the model and the tools said, in order.
//!
//! It lives only in the host. Servers receive tool arguments, resource URIs and prompt
//! arguments, never these messages.

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
    },
    /// Material the user attached (a resource) or a prompt supplied.
    Context {
        /// Where it came from, e.g. `@library:library://books/1`.
        source: String,
        /// The content as text.
        text: String,
    },
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
    }
}

/// Resource contents as text: the text itself, or a description of a blob.
pub fn contents_text(contents: &ResourceContents) -> String {
    match contents.as_text() {
        Some(text) => text.to_owned(),
        None => format!(
            "[binary resource {}: {}, {} bytes of base64]",
            contents.uri(),
            contents.mime_type().unwrap_or("unknown type"),
            contents.as_blob().map(str::len).unwrap_or(0)
        ),
    }
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
