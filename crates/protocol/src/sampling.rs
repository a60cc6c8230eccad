//! Sampling (schema 2025-11-25, `sampling/createMessage`): a server borrows the host's model,
//! optionally with tools (`tool_use` / `tool_result` blocks, client capability
//! `sampling.tools`).
//!
//! A message's content is one block or a list; the form that was sent is kept:
//!
//! ```
//! use junction_protocol::sampling::{SamplingContent, SamplingMessage};
//! let m: SamplingMessage = serde_json::from_str(
//!     r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#).unwrap();
//! assert!(matches!(m.content, SamplingContent::Many(_)));
//! assert_eq!(m.content.blocks()[0].as_text(), Some("hi"));
//! ```

use std::borrow::Cow;
use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::content::{AudioContent, ContentBlock, ImageContent, Role, TextContent};
use crate::meta::{Meta, RequestMeta, TaskMetadata};
use crate::request;
use crate::result_tail::wire_result;
use crate::tools::Tool;

/// `ToolUseContent`: the model asks to call a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUseContent {
    /// The id the matching result refers to.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub input: Map<String, Value>,
    /// `_meta` (clients keep it in later requests, for prompt caching).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolUseContent {
    /// A call of `name` with `input`, identified by `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Map<String, Value>) -> Self {
        ToolUseContent {
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
        }
    }
}

/// `ToolResultContent`: the result of a tool the model called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The `id` of the tool_use this answers.
    pub tool_use_id: String,
    /// The unstructured result (same blocks as a tool call result).
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolResultContent {
    /// The result of tool use `tool_use_id`.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolResultContent {
            tool_use_id: tool_use_id.into(),
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }
}

/// `SamplingMessageContentBlock`: one block of a sampling message, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingMessageContentBlock {
    /// `text`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `image`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `audio`.
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `tool_use` (2025-11-25): only in assistant messages.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `tool_result` (2025-11-25): only in user messages.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingMessageContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// A message's content: one block or a list, kept in the form it was sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SamplingContent {
    /// A single block (the only form before 2025-11-25).
    Single(Box<SamplingMessageContentBlock>),
    /// A list of blocks.
    Many(Vec<SamplingMessageContentBlock>),
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Decided by shape, so a bad block reports its own error rather than "no variant".
        match Value::deserialize(d)? {
            list @ Value::Array(_) => serde_json::from_value(list)
                .map(SamplingContent::Many)
                .map_err(D::Error::custom),
            block => serde_json::from_value(block)
                .map(|b| SamplingContent::Single(Box::new(b)))
                .map_err(D::Error::custom),
        }
    }
}

impl SamplingContent {
    /// The blocks, whichever form.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Many(v) => v,
        }
    }

    /// The blocks, owned.
    pub fn into_blocks(self) -> Vec<SamplingMessageContentBlock> {
        match self {
            SamplingContent::Single(b) => vec![*b],
            SamplingContent::Many(v) => v,
        }
    }
}

impl From<SamplingMessageContentBlock> for SamplingContent {
    fn from(block: SamplingMessageContentBlock) -> Self {
        SamplingContent::Single(Box::new(block))
    }
}

impl From<Vec<SamplingMessageContentBlock>> for SamplingContent {
    fn from(blocks: Vec<SamplingMessageContentBlock>) -> Self {
        SamplingContent::Many(blocks)
    }
}

/// One message of the conversation a server sends for sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A message from `role`.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> Self {
        SamplingMessage {
            role,
            content: content.into(),
            meta: None,
        }
    }

    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingMessageContentBlock::text(text))
    }

    /// An assistant message with one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, SamplingMessageContentBlock::text(text))
    }
}

/// A model name hint, matched as a substring. Open: other keys are for the client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelHint {
    /// A name or part of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ModelHint {
    /// A name hint.
    pub fn new(name: impl Into<String>) -> Self {
        ModelHint {
            name: Some(name.into()),
            extra: Map::new(),
        }
    }
}

/// What the server would like in a model; advisory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// 0..1: how much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// 0..1: how much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// 0..1: how much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// Which context the client may add (values other than `none` are soft-deprecated and need
/// client capability `sampling.context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// Nothing (the default).
    None,
    /// The requesting server's context.
    ThisServer,
    /// Every server's context.
    AllServers,
}

/// How the model may use the offered tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools.
    None,
}

/// `toolChoice`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolChoice {
    /// The mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

impl ToolChoice {
    /// `{"mode": mode}`.
    pub fn mode(mode: ToolChoiceMode) -> Self {
        ToolChoice { mode: Some(mode) }
    }
}

/// The params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to produce.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Tools the model may call (needs client `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How it may call them (needs client `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl CreateMessageParams {
    /// A request for at most `max_tokens` tokens answering `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
        }
    }

    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Offers tools, with how they may be used.
    pub fn tools(mut self, tools: Vec<Tool>, choice: Option<ToolChoice>) -> Self {
        self.tools = Some(tools);
        self.tool_choice = choice;
        self
    }

    /// Whether the request needs client capability `sampling.tools`.
    pub fn uses_tools(&self) -> bool {
        self.tools.is_some() || self.tool_choice.is_some()
    }

    /// Whether the request needs client capability `sampling.context`.
    pub fn uses_context(&self) -> bool {
        self.include_context
            .is_some_and(|c| c != IncludeContext::None)
    }
}

/// `stopReason`: an open string with four standard values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StopReason(pub Cow<'static, str>);

impl StopReason {
    /// The model ended its turn.
    pub const END_TURN: StopReason = StopReason(Cow::Borrowed("endTurn"));
    /// A stop sequence was met.
    pub const STOP_SEQUENCE: StopReason = StopReason(Cow::Borrowed("stopSequence"));
    /// `maxTokens` was reached.
    pub const MAX_TOKENS: StopReason = StopReason(Cow::Borrowed("maxTokens"));
    /// The model wants to call tools.
    pub const TOOL_USE: StopReason = StopReason(Cow::Borrowed("toolUse"));

    /// Any other (provider-specific) reason.
    pub fn new(reason: impl Into<String>) -> Self {
        StopReason(Cow::Owned(reason.into()))
    }

    /// The string on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

wire_result! {
    /// The result of `sampling/createMessage`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CreateMessageResult {
        /// Who speaks (normally `assistant`).
        pub role: Role,
        /// What the model produced.
        pub content: SamplingContent,
        /// The model that produced it.
        pub model: String,
        /// Why it stopped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stop_reason: Option<StopReason>,
    }
}

impl CreateMessageResult {
    /// An assistant answer from `model`.
    pub fn new(model: impl Into<String>, content: impl Into<SamplingContent>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            result_type: None,
            extra: Map::new(),
        }
    }

    /// An assistant text answer that ended its turn.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(model, SamplingMessageContentBlock::text(text)).stop_reason(StopReason::END_TURN)
    }

    /// Sets why the model stopped.
    pub fn stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }
}

request!(
    /// `sampling/createMessage`: server → client (client capability `sampling`).
    CreateMessage, "sampling/createMessage", CreateMessageParams, CreateMessageResult,
    capability = Sampling
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_loop_round_trips_in_both_content_forms() {
        let wire = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}, "_meta": {"cache": true}}]},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "18C"}], "structuredContent": {"c": 18}, "isError": false}]}
            ],
            "maxTokens": 200,
            "systemPrompt": "Be brief.",
            "includeContext": "thisServer",
            "temperature": 0.1,
            "stopSequences": ["STOP"],
            "metadata": {"provider": "x"},
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}, {"name": "claude", "vendor": "x"}], "costPriority": 0.3, "speedPriority": 0.8, "intelligencePriority": 0.5},
            "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"},
            "task": {"ttl": 60000},
            "_meta": {"progressToken": 1}
        });
        let params: CreateMessageParams = serde_json::from_value(wire.clone()).unwrap();
        assert!(matches!(
            params.messages[0].content,
            SamplingContent::Single(_)
        ));
        assert!(matches!(
            params.messages[1].content.blocks()[0],
            SamplingMessageContentBlock::ToolUse(_)
        ));
        assert!(matches!(
            params.messages[2].content.blocks()[0],
            SamplingMessageContentBlock::ToolResult(_)
        ));
        assert!(params.uses_tools() && params.uses_context());
        assert_eq!(serde_json::to_value(&params).unwrap(), wire);
    }

    #[test]
    fn builders_give_the_spec_wire_forms() {
        let mut input = Map::new();
        input.insert("city".into(), json!("Paris"));
        let params = CreateMessageParams::new(
            vec![
                SamplingMessage::user_text("What is the weather in Paris?"),
                SamplingMessage::new(
                    Role::Assistant,
                    vec![SamplingMessageContentBlock::ToolUse(ToolUseContent::new(
                        "call_1",
                        "get_weather",
                        input,
                    ))],
                ),
                SamplingMessage::new(
                    Role::User,
                    vec![SamplingMessageContentBlock::ToolResult(
                        ToolResultContent::new("call_1", vec![ContentBlock::text("18C, cloudy")]),
                    )],
                ),
            ],
            1000,
        )
        .system_prompt("You are a helpful assistant.")
        .tools(
            vec![Tool::new("get_weather", Tool::empty_input_schema())],
            Some(ToolChoice::mode(ToolChoiceMode::Required)),
        );
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "What is the weather in Paris?"}},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "toolUseId": "call_1", "content": [{"type": "text", "text": "18C, cloudy"}]}]}
                ],
                "maxTokens": 1000,
                "systemPrompt": "You are a helpful assistant.",
                "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
                "toolChoice": {"mode": "required"}
            })
        );
        assert!(!params.uses_context());
        assert_eq!(
            serde_json::to_value(CreateMessageResult::text(
                "claude-3-sonnet-20240307",
                "It is 18C."
            ))
            .unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "It is 18C."}, "model": "claude-3-sonnet-20240307", "stopReason": "endTurn"})
        );
        assert_eq!(
            serde_json::to_value(ModelHint::new("claude")).unwrap(),
            json!({"name": "claude"})
        );
    }

    #[test]
    fn results_with_open_stop_reason_and_media() {
        let wire = json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "refusal"});
        let r: CreateMessageResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.stop_reason, Some(StopReason::new("refusal")));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let wire = json!({
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Calling"},
                {"type": "image", "data": "iVBO", "mimeType": "image/png"},
                {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
                {"type": "tool_use", "id": "a", "name": "t", "input": {}}
            ],
            "model": "m", "stopReason": "toolUse", "resultType": "complete", "vendor": 1
        });
        let r: CreateMessageResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.stop_reason, Some(StopReason::TOOL_USE));
        assert_eq!(r.content.clone().into_blocks().len(), 4);
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn bad_blocks_are_reported() {
        let err = serde_json::from_value::<SamplingMessage>(
            json!({"role": "user", "content": {"type": "resource_link", "uri": "x", "name": "y"}}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("resource_link"), "{err}");
        assert!(serde_json::from_value::<SamplingMessage>(
            json!({"role": "user", "content": [{"type": "tool_use", "id": "a"}]})
        )
        .is_err());
    }
}
