//! The model: given the conversation and the tools, it answers with text and/or tool calls.
//!
//! [`Model`] is what a provider implements (Anthropic, OpenAI-compatible, ...);
//! [`ScriptedModel`] plays a fixed script offline, for demos and tests. The same model also
//! answers servers' sampling requests ([`Model::sample`]): a completion of only the messages
//! the server sent, never of the host's conversation.

pub mod sampling;
mod scripted;

pub use scripted::{ScriptedModel, SCRIPTED_MODEL_NAME};

use junction::session::BoxFuture;
use junction_protocol::sampling::{CreateMessageParams, CreateMessageResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{Conversation, ToolCall};

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelTool {
    /// Its model name (matches `^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

/// One answer of the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelReply {
    /// Text for the user, if any.
    pub text: Option<String>,
    /// Calls to make before asking the model again.
    pub tool_calls: Vec<ToolCall>,
}

/// Why the model gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A scripted model was asked for more turns than its script holds.
    #[error("the script has no turn left (it held {turns})")]
    ScriptExhausted {
        /// How many turns the script held.
        turns: usize,
    },
    /// A script could not be read.
    #[error("the model script is invalid: {reason}")]
    Script {
        /// What is wrong.
        reason: String,
    },
    /// A provider failed (network, HTTP status, malformed answer).
    #[error("the model provider failed: {reason}")]
    Provider {
        /// What happened.
        reason: String,
    },
}

/// A language model.
pub trait Model: Send + Sync {
    /// Answers the conversation so far, with `tools` available.
    fn respond<'a>(
        &'a self,
        conversation: &'a Conversation,
        tools: &'a [ModelTool],
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>>;

    /// The model's name, reported as `model` in sampling answers.
    fn name(&self) -> &str {
        "unnamed-model"
    }

    /// Answers a server's sampling request: a completion of `params.messages` under
    /// `params.systemPrompt`, with `params.tools` (named as the server named them) available.
    ///
    /// The default runs [`Model::respond`] on a fresh conversation holding only the request
    /// (see [`sampling::standalone`]); a provider overrides it to pass the system prompt and
    /// `maxTokens` as its API expects.
    fn sample<'a>(
        &'a self,
        params: &'a CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ModelError>> {
        Box::pin(async move {
            let (conversation, tools) = sampling::standalone(params);
            let reply = self.respond(&conversation, &tools).await?;
            Ok(sampling::answer(self.name(), reply))
        })
    }
}
