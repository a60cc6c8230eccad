//! Sampling (schema 2025-11-25, `sampling/createMessage`): a server borrows the host's model,
//! optionally with tools (`tool_use` / `tool_result` blocks, client capability
//! `sampling.tools`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{ContentBlock, MediaContent, Role, TextContent};
use crate::meta::{Meta, RequestMeta, TaskMetadata};
use crate::request;
use crate::tools::Tool;

/// The model asks to call a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The id the matching result refers to.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub input: Map<String, Value>,
    /// `_meta` (kept for prompt caching).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool the model called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The `id` of the tool_use this answers.
    #[serde(rename = "toolUseId")]
    pub tool_use_id: String,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SamplingBlock {
    /// `text`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `image`.
    #[serde(rename = "image")]
    Image(MediaContent),
    /// `audio`.
    #[serde(rename = "audio")]
    Audio(MediaContent),
    /// `tool_use`.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUse),
    /// `tool_result`.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResult),
}

/// A message's content: one block or a list, kept in the form it was sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    One(Box<SamplingBlock>),
    /// Several blocks.
    Many(Vec<SamplingBlock>),
}

impl SamplingContent {
    /// The blocks, whichever form.
    pub fn blocks(&self) -> &[SamplingBlock] {
        match self {
            SamplingContent::One(b) => std::slice::from_ref(b),
            SamplingContent::Many(v) => v,
        }
    }
}

/// One message of the conversation a server sends for sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: SamplingContent::One(Box::new(SamplingBlock::Text(TextContent {
                text: text.into(),
                annotations: None,
                meta: None,
            }))),
            meta: None,
        }
    }
}

/// A model name hint, matched as a substring.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A name or part of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// What the server would like in a model; advisory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelPreferences {
    /// Name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// 0..1: how much cost matters.
    #[serde(
        rename = "costPriority",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_priority: Option<f64>,
    /// 0..1: how much speed matters.
    #[serde(
        rename = "speedPriority",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub speed_priority: Option<f64>,
    /// 0..1: how much capability matters.
    #[serde(
        rename = "intelligencePriority",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub intelligence_priority: Option<f64>,
}

/// Which context the client may add (values other than `none` are soft-deprecated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// Nothing.
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
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call tools.
    None,
}

/// `toolChoice`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// The params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(
        rename = "modelPreferences",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt.
    #[serde(
        rename = "systemPrompt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(
        rename = "includeContext",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to produce.
    #[serde(rename = "maxTokens")]
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(
        rename = "stopSequences",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Tools the model may call (needs client `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How it may call them (needs client `sampling.tools`).
    #[serde(
        rename = "toolChoice",
        default,
        skip_serializing_if = "Option::is_none"
    )]
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
}

/// The result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMessageResult {
    /// Who speaks (normally `assistant`).
    pub role: Role,
    /// What the model produced.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why it stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another string.
    #[serde(
        rename = "stopReason",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

request!(
    /// `sampling/createMessage`: server → client (client capability `sampling`).
    CreateMessage, "sampling/createMessage", CreateMessageParams, CreateMessageResult
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
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "18C"}], "structuredContent": {"c": 18}}]}
            ],
            "maxTokens": 200,
            "systemPrompt": "Be brief.",
            "includeContext": "thisServer",
            "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.8},
            "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"}
        });
        let params: CreateMessageParams = serde_json::from_value(wire.clone()).unwrap();
        assert!(matches!(
            params.messages[0].content,
            SamplingContent::One(_)
        ));
        assert!(matches!(
            params.messages[1].content.blocks()[0],
            SamplingBlock::ToolUse(_)
        ));
        assert_eq!(serde_json::to_value(&params).unwrap(), wire);
    }

    #[test]
    fn result_with_open_stop_reason() {
        let wire = json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "refusal"});
        let r: CreateMessageResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.stop_reason.as_deref(), Some("refusal"));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }
}
