//! Prompts (schema 2025-11-25): templates the user picks, `prompts/list` and `prompts/get`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::content::{ContentBlock, Role};
use crate::lifecycle::Icon;
use crate::meta::{Cursor, Meta, NotificationParams, PaginatedParams, RequestMeta};
use crate::result_tail::wire_result;
use crate::stateless::InputResponses;
use crate::{notification, request};

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl PromptArgument {
    /// An optional argument called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: None,
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

    /// Marks it as required.
    pub fn required(mut self) -> Self {
        self.required = Some(true);
        self
    }

    /// Whether it must be given (absent means no).
    pub fn is_required(&self) -> bool {
        self.required == Some(true)
    }
}

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl Prompt {
    /// A prompt called `name`, without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: None,
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

    /// Adds an argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
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

/// One message of a prompt: a role and a single content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message from `role`.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        PromptMessage { role, content }
    }

    /// An assistant message with text.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: ContentBlock::text(text),
        }
    }

    /// A user message with text.
    pub fn user_text(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: ContentBlock::text(text),
        }
    }
}

wire_result! {
    /// The result of `prompts/list`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    cached pub struct ListPromptsResult {
        /// One page of prompts.
        pub prompts: Vec<Prompt>,
        /// The cursor of the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }
}

impl ListPromptsResult {
    /// One page of prompts, and the cursor of the next page (`None` on the last).
    pub fn page(prompts: Vec<Prompt>, next_cursor: Option<Cursor>) -> Self {
        Self {
            prompts,
            next_cursor,
            ..Self::default()
        }
    }
}

/// The params of `prompts/list`.
pub type ListPromptsParams = PaginatedParams;

/// The params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptParams {
    /// The prompt.
    pub name: String,
    /// Its arguments; values are strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// `inputResponses` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// `requestState` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl GetPromptParams {
    /// Gets prompt `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        GetPromptParams {
            name: name.into(),
            arguments: None,
            input_responses: None,
            request_state: None,
            meta: None,
        }
    }

    /// Adds one argument.
    pub fn argument(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// The value of argument `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.arguments.as_ref()?.get(key).map(String::as_str)
    }
}

wire_result! {
    /// The result of `prompts/get`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct GetPromptResult {
        /// What the prompt is for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// The messages.
        pub messages: Vec<PromptMessage>,
    }
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            messages,
            ..Default::default()
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

request!(
    /// `prompts/list`.
    ListPrompts, "prompts/list", PaginatedParams, ListPromptsResult,
    capability = Prompts, cacheable = true
);
request!(
    /// `prompts/get`.
    GetPrompt, "prompts/get", GetPromptParams, GetPromptResult,
    capability = Prompts, mcp_name = Name
);
notification!(
    /// `notifications/prompts/list_changed`.
    PromptListChanged, "notifications/prompts/list_changed", NotificationParams,
    capability = Prompts
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
    fn builders_give_the_spec_wire_forms() {
        let prompt = Prompt::new("code_review")
            .title("Request Code Review")
            .description("Asks the LLM to analyze code quality and suggest improvements")
            .argument(
                PromptArgument::new("code")
                    .description("The code to review")
                    .required(),
            )
            .argument(PromptArgument::new("style").title("Style"));
        assert_eq!(
            serde_json::to_value(&prompt).unwrap(),
            json!({
                "name": "code_review",
                "title": "Request Code Review",
                "description": "Asks the LLM to analyze code quality and suggest improvements",
                "arguments": [
                    {"name": "code", "description": "The code to review", "required": true},
                    {"name": "style", "title": "Style"}
                ]
            })
        );
        assert!(prompt.arguments.as_ref().unwrap()[0].is_required());
        let params = GetPromptParams::new("code_review")
            .argument("code", "def hello():\n    print('world')");
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({"name": "code_review", "arguments": {"code": "def hello():\n    print('world')"}})
        );
        assert_eq!(params.get("style"), None);
        let result = GetPromptResult::new(vec![
            PromptMessage::user_text("Please review this Python code"),
            PromptMessage::assistant_text("Looks fine."),
        ])
        .description("Code review prompt");
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({
                "description": "Code review prompt",
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Please review this Python code"}},
                    {"role": "assistant", "content": {"type": "text", "text": "Looks fine."}}
                ]
            })
        );
    }

    #[test]
    fn list_result_with_unknown_members_and_result_type() {
        let wire = json!({"prompts": [{"name": "p"}], "nextCursor": "c", "resultType": "complete", "vendor": true});
        let page: ListPromptsResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(page.extra.get("vendor"), Some(&json!(true)));
        assert_eq!(serde_json::to_value(&page).unwrap(), wire);
        let embedded = json!({"messages": [{"role": "user", "content": {"type": "resource", "resource": {"uri": "resource://example", "mimeType": "text/plain", "text": "Resource content"}}}]});
        let r: GetPromptResult = serde_json::from_value(embedded.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), embedded);
    }

    #[test]
    fn prompt_arguments_must_be_strings() {
        let bad = json!({"name": "p", "arguments": {"n": 3}});
        assert!(serde_json::from_value::<GetPromptParams>(bad).is_err());
    }
}
