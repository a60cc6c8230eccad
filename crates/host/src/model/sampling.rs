//! A server's sampling request as a standalone conversation, and the model's reply as the
//! answer to it.
//!
//! [`Model::sample`](super::Model::sample) falls back on these: the request's messages become
//! a fresh [`Conversation`] (the system prompt first, as context), its tools become
//! [`ModelTool`]s under the names the server gave them, and the reply becomes a
//! [`CreateMessageResult`]. Nothing of the host's own conversation is involved.

use std::collections::HashMap;

use junction_protocol::content::{ContentBlock, Role};
use junction_protocol::sampling::{
    CreateMessageParams, CreateMessageResult, SamplingContent, SamplingMessageContentBlock,
    StopReason, ToolUseContent,
};
use junction_protocol::tools::CallToolResult;
use serde_json::Value;

use super::{ModelReply, ModelTool};
use crate::conversation::{
    block_text, result_media, Conversation, Message, ToolCall, UNKNOWN_BLOCK,
};
use crate::naming::clean_description;

/// Where the system prompt is said to come from in the standalone conversation.
pub const SYSTEM_PROMPT_SOURCE: &str = "system prompt";

/// The request's messages as a conversation of their own, and its tools.
pub fn standalone(params: &CreateMessageParams) -> (Conversation, Vec<ModelTool>) {
    let mut conversation = Conversation::new();
    if let Some(system) = params.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        conversation.push(Message::Context {
            source: SYSTEM_PROMPT_SOURCE.to_owned(),
            text: system.clone(),
            media: Vec::new(),
        });
    }
    // Tool results name the call they answer; the tool's name is on the call.
    let mut called: HashMap<String, String> = HashMap::new();
    for message in &params.messages {
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        for block in message.content.blocks() {
            match block {
                SamplingMessageContentBlock::ToolUse(u) => {
                    called.insert(u.id.clone(), u.name.clone());
                    calls.push(ToolCall {
                        id: u.id.clone(),
                        name: u.name.clone(),
                        arguments: Value::Object(u.input.clone()),
                    });
                }
                SamplingMessageContentBlock::ToolResult(r) => {
                    let text = r
                        .content
                        .iter()
                        .map(block_text)
                        .collect::<Vec<_>>()
                        .join("\n");
                    conversation.push(Message::ToolResult {
                        call_id: r.tool_use_id.clone(),
                        name: called.get(&r.tool_use_id).cloned().unwrap_or_default(),
                        text,
                        is_error: r.is_error.unwrap_or(false),
                        media: result_media(&CallToolResult::content(r.content.clone())),
                    });
                }
                SamplingMessageContentBlock::Text(t) => texts.push(t.text.clone()),
                SamplingMessageContentBlock::Image(i) => {
                    texts.push(block_text(&ContentBlock::Image(i.clone())))
                }
                SamplingMessageContentBlock::Audio(a) => {
                    texts.push(block_text(&ContentBlock::Audio(a.clone())))
                }
                _ => texts.push(UNKNOWN_BLOCK.to_owned()),
            }
        }
        let text = (!texts.is_empty()).then(|| texts.join("\n"));
        match message.role {
            Role::User => {
                if let Some(text) = text {
                    conversation.push(Message::User { text });
                }
            }
            Role::Assistant => {
                if text.is_some() || !calls.is_empty() {
                    conversation.push(Message::Assistant {
                        text,
                        tool_calls: calls,
                    });
                }
            }
        }
    }
    (conversation, tools(params))
}

/// The request's tools under the names the server gave them.
pub fn tools(params: &CreateMessageParams) -> Vec<ModelTool> {
    params
        .tools
        .iter()
        .flatten()
        .map(|t| ModelTool {
            name: t.name.clone(),
            description: t
                .description
                .as_deref()
                .or(t.title.as_deref())
                .map(clean_description),
            input_schema: Value::Object(t.input_schema.clone()),
        })
        .collect()
}

/// The model's reply as the answer to a sampling request: its text, then a `tool_use` block
/// per call; `stopReason` is `toolUse` when it calls tools, `endTurn` otherwise.
pub fn answer(model: &str, reply: ModelReply) -> CreateMessageResult {
    let mut blocks = Vec::new();
    if let Some(text) = reply.text {
        blocks.push(SamplingMessageContentBlock::text(text));
    }
    let uses_tools = !reply.tool_calls.is_empty();
    for call in reply.tool_calls {
        let input = match call.arguments {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        blocks.push(SamplingMessageContentBlock::ToolUse(ToolUseContent::new(
            call.id, call.name, input,
        )));
    }
    let content: SamplingContent = if blocks.len() == 1 {
        blocks.remove(0).into()
    } else {
        blocks.into()
    };
    let stop = if uses_tools {
        StopReason::TOOL_USE
    } else {
        StopReason::END_TURN
    };
    CreateMessageResult::new(model, content).stop_reason(stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_protocol::sampling::{SamplingMessage, ToolResultContent};
    use junction_protocol::tools::Tool;

    #[test]
    fn the_request_becomes_a_conversation_of_its_own_messages_only() {
        let params = CreateMessageParams::new(
            vec![
                SamplingMessage::user_text("What is the weather?"),
                SamplingMessage::new(
                    Role::Assistant,
                    vec![SamplingMessageContentBlock::ToolUse(ToolUseContent::new(
                        "u1",
                        "weather",
                        serde_json::from_value(serde_json::json!({"city": "Oslo"})).unwrap(),
                    ))],
                ),
                SamplingMessage::new(
                    Role::User,
                    vec![SamplingMessageContentBlock::ToolResult(
                        ToolResultContent::new("u1", vec![ContentBlock::text("rain")]),
                    )],
                ),
            ],
            50,
        )
        .system_prompt("Be brief.")
        .tools(vec![Tool::new("weather", Tool::empty_input_schema())], None);
        let (conversation, tools) = standalone(&params);
        assert_eq!(
            conversation.messages(),
            &[
                Message::Context {
                    source: SYSTEM_PROMPT_SOURCE.into(),
                    text: "Be brief.".into(),
                    media: Vec::new(),
                },
                Message::User {
                    text: "What is the weather?".into()
                },
                Message::Assistant {
                    text: None,
                    tool_calls: vec![ToolCall {
                        id: "u1".into(),
                        name: "weather".into(),
                        arguments: serde_json::json!({"city": "Oslo"}),
                    }],
                },
                Message::ToolResult {
                    call_id: "u1".into(),
                    name: "weather".into(),
                    text: "rain".into(),
                    is_error: false,
                    media: Vec::new(),
                },
            ]
        );
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "weather");
    }

    #[test]
    fn replies_become_answers_with_the_matching_stop_reason() {
        let text = answer(
            "m",
            ModelReply {
                text: Some("hi".into()),
                tool_calls: Vec::new(),
                ..ModelReply::default()
            },
        );
        assert_eq!(text, CreateMessageResult::text("m", "hi"));
        let call = answer(
            "m",
            ModelReply {
                text: None,
                tool_calls: vec![ToolCall {
                    id: "c".into(),
                    name: "t".into(),
                    arguments: serde_json::json!({"a": 1}),
                }],
                ..ModelReply::default()
            },
        );
        assert_eq!(call.stop_reason, Some(StopReason::TOOL_USE));
        assert!(matches!(
            call.content.blocks(),
            [SamplingMessageContentBlock::ToolUse(u)] if u.name == "t" && u.id == "c"
        ));
    }
}
