//! The Anthropic Messages API (`POST {base}/v1/messages`).
//!
//! The agent's turns are streamed: `text_delta`s reach the request's text sink as they
//! arrive, `input_json_delta` pieces are joined per block and parsed when the block stops,
//! `message_delta` brings the stop reason and the output tokens, and an `error` event in the
//! middle is an error (the turn's text so far already shown). Sampling answers are read
//! whole. The system prompt goes as `system`.
//!
//! The conversation becomes alternating `user` / `assistant` messages of content blocks:
//! the user's text and attached context are `text` blocks, the model's calls `tool_use`
//! blocks, and each tool result a `tool_result` block (with `is_error`) at the start of the
//! next user message, as the API requires. A result's images go inside its `tool_result` as
//! `image` blocks (base64 source) when the API takes them (PNG, JPEG, GIF, WebP, at most
//! 5 MiB of base64, see [`super::media`]); audio, which it does not take, and images it would
//! refuse are named in the result's text instead. Tools go as
//! `{name, description, input_schema}`.

use junction::session::BoxFuture;
use junction_protocol::content::{ContentBlock, MediaContent, Role};
use junction_protocol::sampling::{
    CreateMessageParams, CreateMessageResult, SamplingMessageContentBlock, StopReason,
    ToolChoiceMode,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Value};

use super::http::{check_base, join, secret_header, HttpSettings, Transport};
use super::media::{self, Fit, Format, Limits};
use super::sse::SseEvent;
use super::{
    context_text, sampling, Model, ModelError, ModelReply, ModelRequest, ModelTool, Usage,
};
use crate::conversation::{block_text, Conversation, MediaKind, Message, ToolCall, UNKNOWN_BLOCK};

/// Where the API is unless `ANTHROPIC_BASE_URL` says otherwise.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The environment variable holding the API key.
pub const ANTHROPIC_KEY_VARIABLE: &str = "ANTHROPIC_API_KEY";
/// The environment variable that overrides the base URL.
const BASE_URL_VARIABLE: &str = "ANTHROPIC_BASE_URL";
const PROVIDER: &str = "anthropic";
/// `max_tokens` for the agent's turns unless set (the API requires one).
const DEFAULT_MAX_TOKENS: u64 = 4096;
/// What the API takes in images: the four formats it documents, at most 5 MiB of base64
/// each, and (the whole request being capped at 32 MB) 24 MiB of media per request. No audio.
const LIMITS: Limits = Limits {
    provider: PROVIDER,
    images: &[Format::Jpeg, Format::Png, Format::Gif, Format::Webp],
    max_image: 5 * 1024 * 1024,
    audio: &[],
    max_audio: 0,
    budget: 24 * 1024 * 1024,
};

/// A Claude model behind the Messages API.
///
/// Its `Debug` output leaves the API key out.
#[derive(Clone)]
pub struct AnthropicModel {
    model: String,
    key: String,
    base_url: String,
    max_tokens: u64,
    transport: Transport,
}

impl std::fmt::Debug for AnthropicModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicModel")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl AnthropicModel {
    /// `model` (e.g. `claude-sonnet-4-5`) at `base_url`, authenticated by `key`.
    pub fn new(
        model: impl Into<String>,
        key: impl Into<String>,
        base_url: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let key = key.into();
        if key.is_empty() {
            return Err(ModelError::MissingKey {
                provider: PROVIDER,
                variable: ANTHROPIC_KEY_VARIABLE,
            });
        }
        let base_url = base_url.into();
        check_base(PROVIDER, &base_url)?;
        Ok(AnthropicModel {
            model: model.into(),
            key,
            base_url,
            max_tokens: DEFAULT_MAX_TOKENS,
            transport: transport(HttpSettings::default())?,
        })
    }

    /// `model` with the key from `ANTHROPIC_API_KEY` (required) and the base URL from
    /// `ANTHROPIC_BASE_URL` (default [`ANTHROPIC_BASE_URL`]).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let key = std::env::var(ANTHROPIC_KEY_VARIABLE).unwrap_or_default();
        let base = std::env::var(BASE_URL_VARIABLE)
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| ANTHROPIC_BASE_URL.to_owned());
        AnthropicModel::new(model, key, base)
    }

    /// Sets `max_tokens` for the agent's turns (sampling uses the request's `maxTokens`).
    pub fn max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets the timeout and retries.
    pub fn http(mut self, settings: HttpSettings) -> Result<Self, ModelError> {
        self.transport = transport(settings)?;
        Ok(self)
    }

    async fn post(&self, body: Value) -> Result<Value, ModelError> {
        let url = join(&self.base_url, "v1/messages");
        self.transport.post(&url, self.headers()?, &body).await
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        let (name, value) =
            secret_header(PROVIDER, HeaderName::from_static("x-api-key"), &self.key)?;
        headers.insert(name, value);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        Ok(headers)
    }
}

fn transport(settings: HttpSettings) -> Result<Transport, ModelError> {
    Transport::new(
        PROVIDER,
        settings,
        format!("set {ANTHROPIC_KEY_VARIABLE} to a valid Anthropic API key"),
    )
}

impl Model for AnthropicModel {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            let mut body = json!({
                "model": self.model,
                "max_tokens": self.max_tokens,
                "stream": true,
                "messages": conversation_messages(request.conversation),
            });
            if let Some(system) = request.system {
                body["system"] = json!(system);
            }
            add_tools(&mut body, request.tools, ToolChoiceMode::Auto);
            let url = join(&self.base_url, "v1/messages");
            let mut stream = Stream::default();
            let whole = self
                .transport
                .post_stream(&url, self.headers()?, &body, |event| {
                    stream.event(&event, &request)
                })
                .await?;
            let reply = match whole {
                Some(answer) => read_answer(&answer)?,
                None => stream.reply()?,
            };
            if matches!(reply.stop_reason.as_deref(), Some("max_tokens" | "refusal")) {
                tracing::warn!(model = %self.model, stop_reason = ?reply.stop_reason, "the model stopped early");
            }
            Ok(reply)
        })
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn sample<'a>(
        &'a self,
        params: &'a CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ModelError>> {
        Box::pin(async move {
            let mut body = json!({
                "model": self.model,
                "max_tokens": params.max_tokens,
                "messages": sampling_messages(params),
            });
            if let Some(system) = params.system_prompt.as_ref().filter(|s| !s.is_empty()) {
                body["system"] = json!(system);
            }
            if let Some(t) = params.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(stop) = params.stop_sequences.as_ref().filter(|s| !s.is_empty()) {
                body["stop_sequences"] = json!(stop);
            }
            let tools = sampling::tools(params);
            let mode = params
                .tool_choice
                .as_ref()
                .and_then(|c| c.mode)
                .unwrap_or(ToolChoiceMode::Auto);
            add_tools(&mut body, &tools, mode);
            let answer = self.post(body).await?;
            let reply = read_answer(&answer)?;
            let model = answer["model"].as_str().unwrap_or(&self.model).to_owned();
            let stop = reply.stop_reason.clone();
            let mut result = sampling::answer(&model, reply);
            if let Some(stop) = stop {
                result = result.stop_reason(stop_reason(&stop));
            }
            Ok(result)
        })
    }
}

/// `tools` and `tool_choice`, only when there are tools (the API refuses a choice without).
fn add_tools(body: &mut Value, tools: &[ModelTool], mode: ToolChoiceMode) {
    if tools.is_empty() {
        return;
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut tool = json!({"name": t.name, "input_schema": t.input_schema});
            if let Some(d) = &t.description {
                tool["description"] = json!(d);
            }
            tool
        })
        .collect();
    body["tools"] = Value::Array(tools);
    body["tool_choice"] = json!({"type": match mode {
        ToolChoiceMode::Auto => "auto",
        ToolChoiceMode::Required => "any",
        ToolChoiceMode::None => "none",
    }});
}

/// Messages being built: consecutive blocks of one role share a message, since the API
/// wants the roles to alternate.
#[derive(Default)]
struct Messages(Vec<(&'static str, Vec<Value>)>);

impl Messages {
    fn push(&mut self, role: &'static str, block: Value) {
        match self.0.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => self.0.push((role, vec![block])),
        }
    }

    fn into_json(self) -> Value {
        Value::Array(
            self.0
                .into_iter()
                .map(|(role, mut content)| {
                    // Tool results must open a user message, before any text.
                    content.sort_by_key(|b| b["type"] != "tool_result");
                    json!({"role": role, "content": content})
                })
                .collect(),
        )
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn conversation_messages(conversation: &Conversation) -> Value {
    let mut messages = Messages::default();
    let plan = media::plan(conversation, &LIMITS);
    for (index, message) in conversation.messages().iter().enumerate() {
        match message {
            Message::User { text } => messages.push("user", text_block(text)),
            Message::Context {
                source,
                text,
                media,
            } => {
                let fits = &plan[index];
                let text = media::with_notes(&context_text(source, text), media, fits);
                messages.push("user", text_block(&text));
                for (m, format) in media::sent(media, fits) {
                    messages.push("user", image_block(format.mime_type(), &m.data));
                }
            }
            Message::Assistant { text, tool_calls } => {
                // The API refuses empty text blocks.
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    messages.push("assistant", text_block(text));
                }
                for call in tool_calls {
                    messages.push(
                        "assistant",
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}),
                    );
                }
            }
            Message::ToolResult {
                call_id,
                text,
                is_error,
                media,
                ..
            } => {
                let fits = &plan[index];
                let text = media::with_notes(text, media, fits);
                let images: Vec<Value> = media::sent(media, fits)
                    .map(|(m, format)| image_block(format.mime_type(), &m.data))
                    .collect();
                let content = if images.is_empty() {
                    json!(text)
                } else {
                    // The API refuses empty text blocks.
                    let mut blocks: Vec<Value> = (!text.is_empty())
                        .then(|| text_block(&text))
                        .into_iter()
                        .collect();
                    blocks.extend(images);
                    Value::Array(blocks)
                };
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                messages.push("user", block);
            }
        }
    }
    messages.into_json()
}

fn image_block(media_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
}

/// A server's image or sound as a block: an image the API takes, or a text naming it and
/// saying why it was left out (audio, which the API cannot take, always is).
fn sampled_media(kind: MediaKind, media: &MediaContent, budget: &mut usize) -> Value {
    match media::check(kind, &media.mime_type, &media.data, &LIMITS, budget) {
        Fit::Send(format) => image_block(format.mime_type(), &media.data),
        Fit::Note(note) => {
            let what = match kind {
                MediaKind::Image => ContentBlock::Image(media.clone()),
                MediaKind::Audio => ContentBlock::Audio(media.clone()),
            };
            text_block(&format!("{}\n{note}", block_text(&what)))
        }
    }
}

/// The server's own messages, block for block, images checked as in the conversation.
fn sampling_messages(params: &CreateMessageParams) -> Value {
    let mut messages = Messages::default();
    let mut budget = LIMITS.budget;
    for message in &params.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        for block in message.content.blocks() {
            let block = match block {
                SamplingMessageContentBlock::Text(t) => text_block(&t.text),
                SamplingMessageContentBlock::Image(i) => {
                    sampled_media(MediaKind::Image, i, &mut budget)
                }
                SamplingMessageContentBlock::Audio(a) => {
                    sampled_media(MediaKind::Audio, a, &mut budget)
                }
                SamplingMessageContentBlock::ToolUse(u) => {
                    json!({"type": "tool_use", "id": u.id, "name": u.name, "input": u.input})
                }
                SamplingMessageContentBlock::ToolResult(r) => {
                    let content: Vec<Value> = r
                        .content
                        .iter()
                        .map(|c| match c {
                            ContentBlock::Image(i) => {
                                sampled_media(MediaKind::Image, i, &mut budget)
                            }
                            ContentBlock::Audio(a) => {
                                sampled_media(MediaKind::Audio, a, &mut budget)
                            }
                            other => text_block(&block_text(other)),
                        })
                        .collect();
                    let mut block = json!({"type": "tool_result", "tool_use_id": r.tool_use_id, "content": content});
                    if r.is_error == Some(true) {
                        block["is_error"] = json!(true);
                    }
                    block
                }
                _ => text_block(UNKNOWN_BLOCK),
            };
            messages.push(role, block);
        }
    }
    messages.into_json()
}

fn malformed(reason: impl Into<String>) -> ModelError {
    ModelError::Malformed {
        provider: PROVIDER,
        reason: reason.into(),
    }
}

/// One content block being streamed.
#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// `thinking` and blocks yet unknown: not for the user.
    Other,
}

/// A streamed answer put together event by event.
#[derive(Debug, Default)]
struct Stream {
    blocks: std::collections::BTreeMap<u64, Block>,
    usage: Usage,
    stop: Option<String>,
    done: bool,
}

impl Stream {
    /// Takes one event; `Ok(true)` once the message has stopped.
    fn event(&mut self, event: &SseEvent, request: &ModelRequest<'_>) -> Result<bool, ModelError> {
        if event.name == "ping" || event.data.is_empty() {
            return Ok(false);
        }
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| malformed(format!("an event is not JSON ({e}): {}", event.data)))?;
        let index = || {
            data["index"]
                .as_u64()
                .ok_or_else(|| malformed(format!("a content event has no index: {data}")))
        };
        match data["type"].as_str().unwrap_or(event.name.as_str()) {
            "message_start" => self.count(&data["message"]["usage"]),
            "content_block_start" => {
                let block = &data["content_block"];
                let started = match block["type"].as_str() {
                    Some("text") => {
                        let text = block["text"].as_str().unwrap_or_default().to_owned();
                        request.text_arrived(&text);
                        Block::Text(text)
                    }
                    Some("tool_use") => {
                        let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str())
                        else {
                            return Err(malformed(format!(
                                "a tool_use block lacks its id or name: {block}"
                            )));
                        };
                        Block::ToolUse {
                            id: id.to_owned(),
                            name: name.to_owned(),
                            json: String::new(),
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index()?, started);
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match (self.blocks.get_mut(&index()?), delta["type"].as_str()) {
                    (Some(Block::Text(text)), Some("text_delta")) => {
                        let piece = delta["text"].as_str().unwrap_or_default();
                        request.text_arrived(piece);
                        text.push_str(piece);
                    }
                    (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                        json.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    (None, _) => {
                        return Err(malformed(format!(
                            "a delta for a block that never started: {data}"
                        )))
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(stop) = data["delta"]["stop_reason"].as_str() {
                    self.stop = Some(stop.to_owned());
                }
                self.count(&data["usage"]);
            }
            "message_stop" => {
                self.done = true;
                return Ok(true);
            }
            "error" => {
                let error = &data["error"];
                let message = match (error["message"].as_str(), error["type"].as_str()) {
                    (Some(m), Some(t)) => format!("{m} ({t})"),
                    (Some(m), None) => m.to_owned(),
                    _ => data.to_string(),
                };
                return Err(ModelError::Stream {
                    provider: PROVIDER,
                    message,
                });
            }
            _ => {}
        }
        Ok(false)
    }

    /// Counts the tokens a `usage` object reports (the output count is cumulative).
    fn count(&mut self, usage: &Value) {
        if let Some(n) = usage["input_tokens"].as_u64() {
            self.usage.input_tokens = n;
        }
        if let Some(n) = usage["output_tokens"].as_u64() {
            self.usage.output_tokens = n;
        }
    }

    /// The reply, once the message has stopped.
    fn reply(self) -> Result<ModelReply, ModelError> {
        if !self.done {
            return Err(ModelError::Stream {
                provider: PROVIDER,
                message: "the stream ended before `message_stop`".to_owned(),
            });
        }
        let mut texts = Vec::new();
        let mut tool_calls = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => texts.push(text),
                Block::ToolUse { id, name, json } => {
                    // Arguments that are not JSON reach the loop as a string, which it
                    // answers with an error result the model can read.
                    let arguments = if json.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&json).unwrap_or(Value::String(json))
                    };
                    tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Other => {}
            }
        }
        Ok(ModelReply {
            text: (!texts.is_empty()).then(|| texts.concat()),
            tool_calls,
            usage: Some(self.usage),
            stop_reason: self.stop,
        })
    }
}

/// The reply in an answer: its text blocks joined, its `tool_use` blocks as calls (other
/// blocks, such as `thinking`, are not for the user), the `stop_reason` and the usage.
fn read_answer(answer: &Value) -> Result<ModelReply, ModelError> {
    let content = answer["content"]
        .as_array()
        .ok_or_else(|| malformed(format!("it has no `content` array: {answer}")))?;
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block["type"].as_str() {
            Some("text") => texts.push(
                block["text"]
                    .as_str()
                    .ok_or_else(|| malformed(format!("a text block has no text: {block}")))?
                    .to_owned(),
            ),
            Some("tool_use") => {
                let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                    return Err(malformed(format!(
                        "a tool_use block lacks its id or name: {block}"
                    )));
                };
                tool_calls.push(ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments: block.get("input").cloned().unwrap_or(json!({})),
                });
            }
            Some(_) => {}
            None => return Err(malformed(format!("a content block has no type: {block}"))),
        }
    }
    let text = (!texts.is_empty()).then(|| texts.join("\n"));
    let usage = &answer["usage"];
    let usage = usage.is_object().then(|| Usage {
        input_tokens: usage["input_tokens"].as_u64().unwrap_or(0),
        output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
    });
    Ok(ModelReply {
        text,
        tool_calls,
        usage,
        stop_reason: answer["stop_reason"].as_str().map(str::to_owned),
    })
}

fn stop_reason(stop: &str) -> StopReason {
    match stop {
        "end_turn" => StopReason::END_TURN,
        "tool_use" => StopReason::TOOL_USE,
        "max_tokens" => StopReason::MAX_TOKENS,
        "stop_sequence" => StopReason::STOP_SEQUENCE,
        other => StopReason::new(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_blocks_of_one_role_share_a_message_with_tool_results_first() {
        let mut c = Conversation::new();
        c.push(Message::Context {
            source: "@lib:lib://1".into(),
            text: "a book".into(),
            media: Vec::new(),
        });
        c.push(Message::User { text: "hi".into() });
        c.push(Message::Assistant {
            text: Some(String::new()),
            tool_calls: vec![ToolCall {
                id: "t1".into(),
                name: "lib__get".into(),
                arguments: json!({}),
            }],
        });
        c.push(Message::ToolResult {
            call_id: "t1".into(),
            name: "lib__get".into(),
            text: "no".into(),
            is_error: true,
            media: Vec::new(),
        });
        assert_eq!(
            conversation_messages(&c),
            json!([
                {"role": "user", "content": [
                    {"type": "text", "text": "Context from @lib:lib://1:\na book"},
                    {"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "lib__get", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "no", "is_error": true}]}
            ])
        );
    }

    #[test]
    fn an_answer_without_content_is_malformed() {
        let err = read_answer(&json!({"type": "message"})).unwrap_err();
        assert!(err.to_string().contains("no `content` array"), "{err}");
    }
}
