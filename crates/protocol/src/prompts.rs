//! Prompts (schema 2025-11-25): templates the user picks, `prompts/list` and `prompts/get`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{ContentBlock, Role};
use crate::lifecycle::Icon;
use crate::meta::{Cursor, Meta, NotificationParams, PaginatedParams, RequestMeta};
use crate::{notification, request};

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// The programmatic name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One message of a prompt: a role and a single content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A user message with text.
    pub fn user_text(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: ContentBlock::text(text),
        }
    }
}

/// The result of `prompts/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListPromptsResult {
    /// One page of prompts.
    pub prompts: Vec<Prompt>,
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

/// The params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt.
    pub name: String,
    /// Its arguments; values are strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
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

request!(
    /// `prompts/list`.
    ListPrompts, "prompts/list", PaginatedParams, ListPromptsResult
);
request!(
    /// `prompts/get`.
    GetPrompt, "prompts/get", GetPromptParams, GetPromptResult
);
notification!(
    /// `notifications/prompts/list_changed`.
    PromptListChanged, "notifications/prompts/list_changed", NotificationParams
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompt_and_result_round_trip() {
        let wire = json!({
            "name": "reading_list", "title": "Reading list", "description": "Books on a subject",
            "arguments": [{"name": "subject", "description": "A subject", "required": true}]
        });
        let p: Prompt = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        let wire = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}
        ]});
        let r: GetPromptResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.messages[0], PromptMessage::user_text("hi"));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn prompt_arguments_must_be_strings() {
        let bad = json!({"name": "p", "arguments": {"n": 3}});
        assert!(serde_json::from_value::<GetPromptParams>(bad).is_err());
    }
}
