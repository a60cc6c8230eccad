//! The model: given the conversation and the tools, it answers with text and/or tool calls.
//!
//! [`Model`] is what a provider implements: [`AnthropicModel`] speaks the Anthropic Messages
//! API, [`OpenAiModel`] the OpenAI Chat Completions API (OpenAI itself, or Ollama, llama.cpp,
//! vLLM at their `/v1` URL); [`ScriptedModel`] plays a fixed script offline, for demos and
//! tests. The agent's turns are streamed (server-sent events): text reaches
//! [`ModelRequest::on_text`] as it arrives, tool calls are put together from their pieces,
//! and the reply keeps the provider's [`Usage`] and stop reason. The same model also answers
//! servers' sampling requests ([`Model::sample`]), whole: a completion of only the messages
//! the server sent, never of the host's conversation.

mod anthropic;
mod http;
mod media;
mod openai;
pub mod sampling;
mod scripted;
mod sse;

pub use anthropic::{
    AnthropicModel, ANTHROPIC_BASE_URL, ANTHROPIC_KEY_VARIABLE, ANTHROPIC_VERSION,
};
pub use http::HttpSettings;
pub use openai::{OpenAiModel, OPENAI_BASE_URL, OPENAI_KEY_VARIABLE};
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

/// How many tokens an answer took, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens read: the conversation, the tools and the system prompt.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl Usage {
    /// Both counts added.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// One answer of the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelReply {
    /// Text for the user, if any.
    pub text: Option<String>,
    /// Calls to make before asking the model again.
    pub tool_calls: Vec<ToolCall>,
    /// The tokens it took, when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the model stopped, in the provider's words (`end_turn`, `tool_calls`,
    /// `max_tokens`, `length`, ...), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// What is called with each piece of text as it arrives.
pub type TextSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// What the model is asked at one step of the agent loop.
#[derive(Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The system prompt, if any.
    pub system: Option<&'a str>,
    /// The conversation so far.
    pub conversation: &'a Conversation,
    /// The tools it may call.
    pub tools: &'a [ModelTool],
    on_text: Option<TextSink<'a>>,
}

impl std::fmt::Debug for ModelRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRequest")
            .field("system", &self.system)
            .field("conversation", &self.conversation)
            .field("tools", &self.tools)
            .field("on_text", &self.on_text.is_some())
            .finish()
    }
}

impl<'a> ModelRequest<'a> {
    /// The conversation with `tools`, without a system prompt.
    pub fn new(conversation: &'a Conversation, tools: &'a [ModelTool]) -> Self {
        ModelRequest {
            system: None,
            conversation,
            tools,
            on_text: None,
        }
    }

    /// Sets the system prompt.
    pub fn system(mut self, system: Option<&'a str>) -> Self {
        self.system = system.filter(|s| !s.is_empty());
        self
    }

    /// Calls `sink` with each piece of the answer's text as it arrives (all the pieces
    /// joined are the reply's text).
    pub fn on_text(mut self, sink: TextSink<'a>) -> Self {
        self.on_text = Some(sink);
        self
    }

    /// Hands `piece` to the text sink, if any.
    pub fn text_arrived(&self, piece: &str) {
        if let (Some(sink), false) = (self.on_text, piece.is_empty()) {
            sink(piece);
        }
    }
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
    /// A provider needs an API key and none was given.
    #[error("{provider} needs an API key: set {variable}")]
    MissingKey {
        /// The provider, e.g. `anthropic`.
        provider: &'static str,
        /// The environment variable that holds the key.
        variable: &'static str,
    },
    /// A provider's settings are unusable (e.g. a base URL that is not a URL).
    #[error("{provider} cannot be used: {reason}")]
    Settings {
        /// The provider.
        provider: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The provider could not be reached, or did not answer in time.
    #[error("{provider} could not be reached at {url}: {reason}")]
    Unreachable {
        /// The provider.
        provider: &'static str,
        /// The URL asked.
        url: String,
        /// What went wrong (connection refused, timed out, ...).
        reason: String,
    },
    /// The provider answered with an error status (after the retries 429 and 5xx get).
    #[error(
        "{provider} answered HTTP {status} after {attempts} attempt(s): {message}{}",
        advice.as_deref().map(|a| format!(" ({a})")).unwrap_or_default()
    )]
    Status {
        /// The provider.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The provider's own error message (or the start of its body).
        message: String,
        /// How many requests were made.
        attempts: u32,
        /// What to do about it, e.g. which variable to set on 401.
        advice: Option<String>,
    },
    /// The provider reported an error in the middle of a streamed answer (e.g.
    /// `overloaded_error`), or the stream ended before the answer did.
    #[error("{provider} stopped answering mid-way: {message}")]
    Stream {
        /// The provider.
        provider: &'static str,
        /// Its error message, or what was missing.
        message: String,
    },
    /// The provider answered 200 with something that is not the documented shape.
    #[error("{provider} sent an answer that cannot be read: {reason}")]
    Malformed {
        /// The provider.
        provider: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// Attached context as the model reads it: where it came from, then the text.
pub(crate) fn context_text(source: &str, text: &str) -> String {
    format!("Context from {source}:\n{text}")
}

/// A language model.
pub trait Model: Send + Sync {
    /// Answers `request`: the conversation so far under its system prompt, with its tools
    /// available, handing text to [`ModelRequest::text_arrived`] as it comes.
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
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
            let reply = self
                .respond(ModelRequest::new(&conversation, &tools))
                .await?;
            Ok(sampling::answer(self.name(), reply))
        })
    }
}
