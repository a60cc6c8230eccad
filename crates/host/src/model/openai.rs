//! The OpenAI Chat Completions API (`POST {base}/chat/completions`).
//!
//! The agent's turns are streamed: `delta.content` reaches the request's text sink as it
//! arrives, `delta.tool_calls[]` pieces are joined by `index` (the `id` and name come with
//! the first piece; servers that send a whole call at once, an object for `arguments`, or
//! no `index` are taken as they are), the usage comes in the last chunk
//! (`stream_options.include_usage`), and `data: [DONE]` ends it. Sampling answers are read
//! whole. The system prompt is the first message, `role: system`. At OpenAI itself the token
//! limit goes as `max_completion_tokens` (its reasoning models refuse `max_tokens`);
//! compatible servers get `max_tokens`, which they all read.
//!
//! It serves OpenAI itself and the OpenAI-compatible servers (Ollama, llama.cpp's
//! `llama-server`, vLLM) at their `/v1` base URL; a key is optional for those. The
//! conversation becomes `user` messages (text and attached context), `assistant` messages
//! with `tool_calls` (arguments as a JSON string), and one `tool` message per result.
//! `tool` messages carry text only, so the images and audio of a step's results follow its
//! `tool` messages as one `user` message: `image_url` parts with a `data:` URL (PNG, JPEG,
//! GIF, WebP) and `input_audio` parts (WAV, MP3), each introduced by the call it came from;
//! what the API would refuse is named in the result's text instead (see [`super::media`]).
//! Tools go as `{type: function, function: {name, description, parameters}}`.

use junction::session::BoxFuture;
use junction_protocol::content::{ContentBlock, MediaContent, Role};
use junction_protocol::sampling::{
    CreateMessageParams, CreateMessageResult, SamplingMessageContentBlock, StopReason,
    ToolChoiceMode,
};
use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};

use super::http::{check_base, join, secret_header, HttpSettings, Transport};
use super::media::{self, Fit, Format, Limits};
use super::sse::SseEvent;
use super::{
    context_text, sampling, Model, ModelError, ModelReply, ModelRequest, ModelTool, Usage,
};
use crate::conversation::{block_text, Conversation, MediaKind, Message, ToolCall, UNKNOWN_BLOCK};

/// Where the API is unless `OPENAI_BASE_URL` says otherwise.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable holding the API key (optional for local servers).
pub const OPENAI_KEY_VARIABLE: &str = "OPENAI_API_KEY";
/// The environment variable that overrides the base URL.
const BASE_URL_VARIABLE: &str = "OPENAI_BASE_URL";
const PROVIDER: &str = "openai";
/// What a tool result the tool marked as an error starts with: the API has no error flag.
const ERROR_PREFIX: &str = "Error: ";
/// What the API takes in images and audio: the image formats it documents, `input_audio`
/// as WAV or MP3, 20 MiB of base64 each, and (a request being capped at 50 MB) 40 MiB of
/// media per request.
const LIMITS: Limits = Limits {
    provider: PROVIDER,
    images: &[Format::Png, Format::Jpeg, Format::Gif, Format::Webp],
    max_image: 20 * 1024 * 1024,
    audio: &[Format::Wav, Format::Mp3],
    max_audio: 20 * 1024 * 1024,
    budget: 40 * 1024 * 1024,
};

/// A model behind an OpenAI-compatible Chat Completions API.
///
/// Its `Debug` output leaves the API key out.
#[derive(Clone)]
pub struct OpenAiModel {
    model: String,
    key: Option<String>,
    base_url: String,
    max_tokens: Option<u64>,
    transport: Transport,
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("has_key", &self.key.is_some())
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl OpenAiModel {
    /// `model` at `base_url` (which includes `/v1`), with `key` as the bearer token if any.
    pub fn new(
        model: impl Into<String>,
        key: Option<String>,
        base_url: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let base_url = base_url.into();
        check_base(PROVIDER, &base_url)?;
        Ok(OpenAiModel {
            model: model.into(),
            key: key.filter(|k| !k.is_empty()),
            base_url,
            max_tokens: None,
            transport: transport(HttpSettings::default())?,
        })
    }

    /// `model` with the base URL from `OPENAI_BASE_URL` (default [`OPENAI_BASE_URL`]) and
    /// the key from `OPENAI_API_KEY`, which is required at the default URL only.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let key = std::env::var(OPENAI_KEY_VARIABLE)
            .ok()
            .filter(|k| !k.is_empty());
        let base = std::env::var(BASE_URL_VARIABLE)
            .ok()
            .filter(|b| !b.is_empty());
        if key.is_none() && base.is_none() {
            return Err(ModelError::MissingKey {
                provider: PROVIDER,
                variable: OPENAI_KEY_VARIABLE,
            });
        }
        OpenAiModel::new(
            model,
            key,
            base.unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
        )
    }

    /// Sets `max_tokens` for the agent's turns (otherwise the server's own limit applies;
    /// sampling uses the request's `maxTokens`).
    pub fn max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the timeout and retries.
    pub fn http(mut self, settings: HttpSettings) -> Result<Self, ModelError> {
        self.transport = transport(settings)?;
        Ok(self)
    }

    async fn post(&self, body: Value) -> Result<Value, ModelError> {
        let url = join(&self.base_url, "chat/completions");
        self.transport.post(&url, self.headers()?, &body).await
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.key {
            let (name, value) = secret_header(PROVIDER, AUTHORIZATION, &format!("Bearer {key}"))?;
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// The member that carries the token limit: OpenAI's own API wants
    /// `max_completion_tokens`, compatible servers read `max_tokens`.
    fn limit_member(&self) -> &'static str {
        let official = reqwest::Url::parse(&self.base_url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h == "api.openai.com"))
            .unwrap_or(false);
        if official {
            "max_completion_tokens"
        } else {
            "max_tokens"
        }
    }
}

fn transport(settings: HttpSettings) -> Result<Transport, ModelError> {
    Transport::new(
        PROVIDER,
        settings,
        format!("set {OPENAI_KEY_VARIABLE} to a valid key for this server"),
    )
}

impl Model for OpenAiModel {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            let mut messages = Vec::new();
            if let Some(system) = request.system {
                messages.push(json!({"role": "system", "content": system}));
            }
            if let Value::Array(rest) = conversation_messages(request.conversation) {
                messages.extend(rest);
            }
            let mut body = json!({
                "model": self.model,
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": messages,
            });
            if let Some(n) = self.max_tokens {
                body[self.limit_member()] = json!(n);
            }
            add_tools(&mut body, request.tools, ToolChoiceMode::Auto);
            let url = join(&self.base_url, "chat/completions");
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
            if reply.stop_reason.as_deref() == Some("length") {
                tracing::warn!(model = %self.model, "the model stopped at its token limit");
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
                "messages": sampling_messages(params),
            });
            body[self.limit_member()] = json!(params.max_tokens);
            if let Some(t) = params.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(stop) = params.stop_sequences.as_ref().filter(|s| !s.is_empty()) {
                body["stop"] = json!(stop);
            }
            let mode = params
                .tool_choice
                .as_ref()
                .and_then(|c| c.mode)
                .unwrap_or(ToolChoiceMode::Auto);
            add_tools(&mut body, &sampling::tools(params), mode);
            let answer = self.post(body).await?;
            let reply = read_answer(&answer)?;
            let finish = reply.stop_reason.clone();
            let model = answer["model"].as_str().unwrap_or(&self.model).to_owned();
            let mut result = sampling::answer(&model, reply);
            if let Some(finish) = finish {
                result = result.stop_reason(stop_reason(&finish));
            }
            Ok(result)
        })
    }
}

/// `tools` and `tool_choice`, only when there are tools.
fn add_tools(body: &mut Value, tools: &[ModelTool], mode: ToolChoiceMode) {
    if tools.is_empty() {
        return;
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut function = json!({"name": t.name, "parameters": t.input_schema});
            if let Some(d) = &t.description {
                function["description"] = json!(d);
            }
            json!({"type": "function", "function": function})
        })
        .collect();
    body["tools"] = Value::Array(tools);
    body["tool_choice"] = json!(match mode {
        ToolChoiceMode::Auto => "auto",
        ToolChoiceMode::Required => "required",
        ToolChoiceMode::None => "none",
    });
}

fn tool_call(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments.to_string()},
    })
}

/// An assistant message; `content` may be null only beside tool calls, so an empty answer
/// is an empty string.
fn assistant(text: Option<&str>, calls: Vec<Value>) -> Value {
    if calls.is_empty() {
        return json!({"role": "assistant", "content": text.unwrap_or_default()});
    }
    json!({"role": "assistant", "content": text, "tool_calls": calls})
}

fn tool_message(call_id: &str, text: &str, is_error: bool) -> Value {
    let content = if is_error {
        format!("{ERROR_PREFIX}{text}")
    } else {
        text.to_owned()
    };
    json!({"role": "tool", "tool_call_id": call_id, "content": content})
}

fn conversation_messages(conversation: &Conversation) -> Value {
    let plan = media::plan(conversation, &LIMITS);
    let mut messages = Vec::new();
    // The media of the `tool` messages just written, sent once they are all out (nothing
    // may come between an assistant's calls and their results).
    let mut pending: Vec<Value> = Vec::new();
    for (index, message) in conversation.messages().iter().enumerate() {
        if !matches!(message, Message::ToolResult { .. }) {
            flush_media(&mut messages, &mut pending);
        }
        match message {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Context {
                source,
                text,
                media,
            } => {
                let fits = &plan[index];
                let text = media::with_notes(&context_text(source, text), media, fits);
                let parts: Vec<Value> = media::sent(media, fits)
                    .map(|(m, format)| media_part(format, &m.data))
                    .collect();
                let content = if parts.is_empty() {
                    json!(text)
                } else {
                    let mut all = vec![json!({"type": "text", "text": text})];
                    all.extend(parts);
                    Value::Array(all)
                };
                messages.push(json!({"role": "user", "content": content}))
            }
            Message::Assistant { text, tool_calls } => messages.push(assistant(
                text.as_deref(),
                tool_calls.iter().map(tool_call).collect(),
            )),
            Message::ToolResult {
                call_id,
                name,
                text,
                is_error,
                media,
            } => {
                let fits = &plan[index];
                messages.push(tool_message(
                    call_id,
                    &media::with_notes(text, media, fits),
                    *is_error,
                ));
                let mut parts = media::sent(media, fits)
                    .map(|(m, format)| media_part(format, &m.data))
                    .peekable();
                if parts.peek().is_some() {
                    pending.push(json!({"type": "text", "text": format!("The images and audio of the result of call {call_id} ({name}):")}));
                    pending.extend(parts);
                }
            }
        }
    }
    flush_media(&mut messages, &mut pending);
    Value::Array(messages)
}

/// The media gathered from `tool` messages, as the `user` message that follows them.
fn flush_media(messages: &mut Vec<Value>, pending: &mut Vec<Value>) {
    if !pending.is_empty() {
        messages.push(json!({"role": "user", "content": std::mem::take(pending)}));
    }
}

/// An image as an `image_url` part with a `data:` URL, a sound as an `input_audio` part.
fn media_part(format: Format, data: &str) -> Value {
    match format {
        Format::Wav | Format::Mp3 => {
            json!({"type": "input_audio", "input_audio": {"data": data, "format": format.audio_format()}})
        }
        _ => {
            json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{data}", format.mime_type())}})
        }
    }
}

/// A server's image or sound as a content part: one the API takes, or a text naming it and
/// saying why it was left out.
fn sampled_media(kind: MediaKind, media: &MediaContent, budget: &mut usize) -> Value {
    match media::check(kind, &media.mime_type, &media.data, &LIMITS, budget) {
        Fit::Send(format) => media_part(format, &media.data),
        Fit::Note(note) => {
            let what = match kind {
                MediaKind::Image => ContentBlock::Image(media.clone()),
                MediaKind::Audio => ContentBlock::Audio(media.clone()),
            };
            json!({"type": "text", "text": format!("{}\n{note}", block_text(&what))})
        }
    }
}

/// The server's system prompt and messages: tool results as `tool` messages (which must
/// follow the assistant's calls) with their images and audio in the user message after
/// them, text, images and audio as the user's content (the assistant's as text).
fn sampling_messages(params: &CreateMessageParams) -> Value {
    let mut messages = Vec::new();
    let mut budget = LIMITS.budget;
    if let Some(system) = params.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &params.messages {
        let mut parts = Vec::new();
        let mut calls = Vec::new();
        for block in message.content.blocks() {
            match block {
                SamplingMessageContentBlock::Text(t) => {
                    parts.push(json!({"type": "text", "text": t.text}))
                }
                SamplingMessageContentBlock::Image(i) => {
                    parts.push(sampled_media(MediaKind::Image, i, &mut budget))
                }
                SamplingMessageContentBlock::Audio(a) => {
                    parts.push(sampled_media(MediaKind::Audio, a, &mut budget))
                }
                SamplingMessageContentBlock::ToolUse(u) => calls.push(tool_call(&ToolCall {
                    id: u.id.clone(),
                    name: u.name.clone(),
                    arguments: Value::Object(u.input.clone()),
                })),
                SamplingMessageContentBlock::ToolResult(r) => {
                    let text = r
                        .content
                        .iter()
                        .map(block_text)
                        .collect::<Vec<_>>()
                        .join("\n");
                    for block in &r.content {
                        let (kind, m) = match block {
                            ContentBlock::Image(m) => (MediaKind::Image, m),
                            ContentBlock::Audio(m) => (MediaKind::Audio, m),
                            _ => continue,
                        };
                        parts.push(sampled_media(kind, m, &mut budget));
                    }
                    messages.push(tool_message(
                        &r.tool_use_id,
                        &text,
                        r.is_error == Some(true),
                    ));
                }
                _ => parts.push(json!({"type": "text", "text": UNKNOWN_BLOCK})),
            }
        }
        match message.role {
            Role::Assistant => {
                let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                let text = (!text.is_empty()).then(|| text.join("\n"));
                if text.is_some() || !calls.is_empty() {
                    messages.push(assistant(text.as_deref(), calls));
                }
            }
            Role::User if parts.is_empty() => {}
            // Plain text stays a string, the form every compatible server takes.
            Role::User => match parts.as_slice() {
                [part] if part["type"] == "text" => {
                    messages.push(json!({"role": "user", "content": part["text"]}))
                }
                _ => messages.push(json!({"role": "user", "content": parts})),
            },
        }
    }
    Value::Array(messages)
}

fn malformed(reason: impl Into<String>) -> ModelError {
    ModelError::Malformed {
        provider: PROVIDER,
        reason: reason.into(),
    }
}

/// Arguments as sent: a JSON string (some servers send an object, taken as is); a string
/// that is not JSON is kept as a string, which the agent loop answers with an error result
/// the model can read.
fn arguments(sent: &Value) -> Value {
    match sent {
        Value::String(s) if s.trim().is_empty() => json!({}),
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Value::Null => json!({}),
        other => other.clone(),
    }
}

/// `usage` as OpenAI counts it, when present.
fn usage(answer: &Value) -> Option<Usage> {
    let usage = answer.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
    })
}

/// One tool call being streamed.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    /// The argument text so far, or a whole object a server sent.
    arguments: Option<Value>,
    text: String,
}

/// A streamed answer put together chunk by chunk.
#[derive(Debug, Default)]
struct Stream {
    text: String,
    calls: std::collections::BTreeMap<u64, PartialCall>,
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl Stream {
    /// Takes one event; `Ok(true)` at `[DONE]`.
    fn event(&mut self, event: &SseEvent, request: &ModelRequest<'_>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("a chunk is not JSON ({e}): {data}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            return Err(ModelError::Stream {
                provider: PROVIDER,
                message,
            });
        }
        if let Some(usage) = usage(&chunk) {
            self.usage = Some(usage);
        }
        let Some(choice) = chunk["choices"].get(0) else {
            return Ok(false);
        };
        let delta = &choice["delta"];
        if let Some(piece) = delta["content"].as_str() {
            request.text_arrived(piece);
            self.text.push_str(piece);
        }
        if let Some(calls) = delta["tool_calls"].as_array() {
            for piece in calls {
                // Without an index, each piece is a whole call of its own.
                let index = piece["index"].as_u64().unwrap_or(self.calls.len() as u64);
                let call = self.calls.entry(index).or_default();
                if let Some(id) = piece["id"].as_str().filter(|id| !id.is_empty()) {
                    call.id = Some(id.to_owned());
                }
                let function = &piece["function"];
                if let Some(name) = function["name"].as_str() {
                    call.name.push_str(name);
                }
                match &function["arguments"] {
                    Value::String(s) => call.text.push_str(s),
                    Value::Null => {}
                    whole => call.arguments = Some(whole.clone()),
                }
            }
        }
        if let Some(finish) = choice["finish_reason"].as_str() {
            self.finish = Some(finish.to_owned());
        }
        Ok(false)
    }

    /// The reply, once the stream said how it finished (`[DONE]` or a `finish_reason`).
    fn reply(self) -> Result<ModelReply, ModelError> {
        if !self.done && self.finish.is_none() {
            return Err(ModelError::Stream {
                provider: PROVIDER,
                message: "the stream ended before a `finish_reason` or `[DONE]`".to_owned(),
            });
        }
        let mut tool_calls = Vec::new();
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(malformed(format!("streamed tool call {index} has no name")));
            }
            let arguments = match call.arguments {
                Some(whole) => whole,
                None => arguments(&Value::String(call.text)),
            };
            tool_calls.push(ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{index}")),
                name: call.name,
                arguments,
            });
        }
        Ok(ModelReply {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls,
            usage: self.usage,
            stop_reason: self.finish,
        })
    }
}

/// The reply in `choices[0].message` with its `finish_reason` and usage (see
/// [`arguments`] for how arguments are read).
fn read_answer(answer: &Value) -> Result<ModelReply, ModelError> {
    let choice = answer["choices"]
        .get(0)
        .ok_or_else(|| malformed(format!("it has no `choices[0]`: {answer}")))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| malformed(format!("`choices[0]` has no `message`: {choice}")))?;
    let text = match &message["content"] {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::String(_) | Value::Null => None,
        other => return Err(malformed(format!("`content` is not a string: {other}"))),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| malformed(format!("`tool_calls` is not a list: {calls}")))?;
        for (index, call) in calls.iter().enumerate() {
            let function = &call["function"];
            let name = function["name"]
                .as_str()
                .ok_or_else(|| malformed(format!("a tool call has no function name: {call}")))?;
            let arguments = arguments(&function["arguments"]);
            let id = call["id"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("call_{index}"));
            tool_calls.push(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
    }
    Ok(ModelReply {
        text,
        tool_calls,
        usage: usage(answer),
        stop_reason: choice["finish_reason"].as_str().map(str::to_owned),
    })
}

fn stop_reason(finish: &str) -> StopReason {
    match finish {
        "stop" => StopReason::END_TURN,
        "tool_calls" | "function_call" => StopReason::TOOL_USE,
        "length" => StopReason::MAX_TOKENS,
        other => StopReason::new(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_may_be_a_string_an_object_or_unreadable() {
        let answer = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "s__t", "arguments": "{\"q\":1}"}},
            {"type": "function", "function": {"name": "s__t", "arguments": {"q": 2}}},
            {"id": "c", "type": "function", "function": {"name": "s__t", "arguments": "{\"q\":"}}
        ]}}]});
        let reply = read_answer(&answer).unwrap();
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.text, None);
        let args: Vec<(&str, &Value)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), &c.arguments))
            .collect();
        assert_eq!(
            args,
            [
                ("a", &json!({"q": 1})),
                ("call_1", &json!({"q": 2})),
                ("c", &json!("{\"q\":"))
            ]
        );
    }

    #[test]
    fn an_empty_answer_is_sent_back_as_empty_text() {
        assert_eq!(
            assistant(None, Vec::new()),
            json!({"role": "assistant", "content": ""})
        );
    }

    #[test]
    fn error_results_say_so_in_their_content() {
        assert_eq!(
            tool_message("c", "boom", true),
            json!({"role": "tool", "tool_call_id": "c", "content": "Error: boom"})
        );
    }
}
