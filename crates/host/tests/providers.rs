//! The Anthropic and OpenAI providers against a local HTTP server on 127.0.0.1 that stands
//! in for the remote API: it records each request (path, headers, JSON body) and answers
//! with the documented response shapes (hosts.md section 7), in order. The agent loop is the
//! real [`Host`] over an in-process junction server.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use junction::server::{tool, Context, Server};
use junction::session::Peer;
use junction_host::agent::DEFAULT_SYSTEM_PROMPT;
use junction_host::consent::ScriptedConsent;
use junction_host::events::{Event, EventSink};
use junction_host::interaction::{Approval, ScriptedInteraction};
use junction_host::mediation::Mediation;
use junction_host::model::{
    AnthropicModel, HttpSettings, Model, ModelError, ModelRequest, OpenAiModel, Usage,
    ANTHROPIC_VERSION,
};
use junction_host::policy::{Action, Policy, Rule};
use junction_host::servers::{ServerSettings, Servers, StartOptions};
use junction_host::{Host, HostError};
use junction_protocol::content::ContentBlock;
use junction_protocol::content::Role;
use junction_protocol::resources::ResourceContents;
use junction_protocol::sampling::{
    CreateMessageParams, SamplingMessage, SamplingMessageContentBlock, StopReason, ToolChoice,
    ToolChoiceMode,
};
use junction_protocol::tools::{CallToolResult, Tool};
use junction_test_support::tap::{tapped, Frames};
use serde_json::{json, Value};

const KEY: &str = "sk-test-not-a-real-key";

/// One request the fake API received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: HeaderMap,
    body: Value,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One answer the fake API gives.
struct Answer {
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    body: String,
}

fn ok(body: Value) -> Answer {
    Answer {
        status: 200,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

fn status(status: u16, body: Value) -> Answer {
    Answer {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

#[derive(Default)]
struct State {
    received: Mutex<Vec<Received>>,
    answers: Mutex<VecDeque<Answer>>,
}

/// The fake API: its base URL (`http://127.0.0.1:PORT`) and what it received.
struct FakeApi {
    base: String,
    state: Arc<State>,
}

impl FakeApi {
    async fn start(answers: Vec<Answer>) -> FakeApi {
        let state = Arc::new(State {
            received: Mutex::default(),
            answers: Mutex::new(answers.into()),
        });
        let shared = state.clone();
        let app = axum::Router::new()
            .fallback(move |uri: Uri, headers: HeaderMap, body: String| {
                let state = shared.clone();
                async move {
                    let body = serde_json::from_str(&body).unwrap_or(Value::String(body));
                    state.received.lock().unwrap().push(Received {
                        path: uri.path().to_owned(),
                        headers,
                        body,
                    });
                    let Some(answer) = state.answers.lock().unwrap().pop_front() else {
                        return (StatusCode::IM_A_TEAPOT, "the fake API has no answer left")
                            .into_response();
                    };
                    let mut response: Response = (
                        StatusCode::from_u16(answer.status).unwrap(),
                        [("content-type", "application/json")],
                        answer.body,
                    )
                        .into_response();
                    for (name, value) in answer.headers {
                        response.headers_mut().insert(name, value.parse().unwrap());
                    }
                    response
                }
            })
            // As large as the providers' own request limits, so media are measured here.
            .layer(axum::extract::DefaultBodyLimit::max(64 * 1024 * 1024));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakeApi { base, state }
    }

    fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }
}

/// Retries without real waiting, so that tests do not depend on time.
fn quick() -> HttpSettings {
    HttpSettings {
        timeout: Duration::from_secs(30),
        max_retries: 2,
        backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    }
}

fn anthropic(api: &FakeApi) -> Arc<AnthropicModel> {
    Arc::new(
        AnthropicModel::new("claude-test", KEY, &api.base)
            .unwrap()
            .http(quick())
            .unwrap(),
    )
}

fn openai(api: &FakeApi) -> Arc<OpenAiModel> {
    Arc::new(
        OpenAiModel::new("gpt-test", Some(KEY.to_owned()), format!("{}/v1", api.base))
            .unwrap()
            .http(quick())
            .unwrap(),
    )
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    city: String,
}

/// A weather server: `forecast` answers, `summarize` asks the client's model (sampling).
fn weather() -> Server {
    Server::builder("weather", "1.0.0")
        .tool(
            tool("forecast", |c: City| async move {
                format!("Rain in {}", c.city)
            })
            .description("The forecast for a city"),
        )
        .tool(tool("summarize", |ctx: Context, c: City| async move {
            let params = CreateMessageParams::new(
                vec![SamplingMessage::user_text(format!(
                    "Write one line about {}",
                    c.city
                ))],
                64,
            )
            .system_prompt("You write one line.");
            match ctx.create_message(params).await {
                Ok(answer) => {
                    let text: Vec<&str> = answer
                        .content
                        .blocks()
                        .iter()
                        .filter_map(|b| b.as_text())
                        .collect();
                    format!("{} wrote: {}", answer.model, text.join(" "))
                }
                Err(e) => format!("sampling failed: {e}"),
            }
        }))
        .build()
        .unwrap()
}

/// A host with `model` over the weather server, every call allowed, sampling approved, and
/// no system prompt (the weather server gives no instructions).
async fn host(model: Arc<dyn Model>) -> (Host, Peer) {
    host_over("weather", &weather(), model).await
}

/// A host with `model` over `server` (named `name`), as [`host`] sets it up.
async fn host_over(name: &str, server: &Server, model: Arc<dyn Model>) -> (Host, Peer) {
    let user = Arc::new(ScriptedInteraction::new().sampling([Approval::Allow]));
    let options = StartOptions::default().mediation(Mediation::new(model.clone(), user));
    let (connection, peer) = tapped(server, Frames::default());
    let mut servers = Servers::new();
    servers
        .add_connection(
            name,
            connection,
            ServerSettings::default(),
            &options,
            &EventSink::discard(),
        )
        .await
        .unwrap();
    let host = Host::new(
        servers,
        Policy::new(vec![Rule::new("*", Action::Allow)]),
        model,
        Arc::new(ScriptedConsent::deny_all()),
        EventSink::discard(),
    )
    .with_system_prompt("");
    (host, peer)
}

/// The tools of a request by name, and the request without them.
fn split_tools(body: &Value) -> (Vec<Value>, Value) {
    let mut rest = body.clone();
    let tools = rest
        .as_object_mut()
        .unwrap()
        .remove("tools")
        .and_then(|t| t.as_array().cloned())
        .unwrap_or_default();
    (tools, rest)
}

fn anthropic_message(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test-20250101",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 7}
    })
}

fn openai_completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1735689600, "model": "gpt-test-2025",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
    })
}

#[tokio::test]
async fn anthropic_tool_use_then_text_round_trips_through_the_agent_loop() {
    let api = FakeApi::start(vec![
        ok(anthropic_message(
            json!([
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather__forecast", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_2", "name": "weather__radar", "input": {}}
            ]),
            "tool_use",
        )),
        ok(anthropic_message(
            json!([{"type": "text", "text": "It rains in Oslo."}]),
            "end_turn",
        )),
    ])
    .await;
    let (mut host, _peer) = host(anthropic(&api)).await;
    let outcome = host.send("Weather in Oslo?").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("It rains in Oslo."));
    assert_eq!(outcome.steps, 2);

    let received = api.received();
    assert_eq!(received.len(), 2);
    for r in &received {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.header("x-api-key"), Some(KEY));
        assert_eq!(r.header("anthropic-version"), Some(ANTHROPIC_VERSION));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.header("authorization"), None);
    }
    let (tools, first) = split_tools(&received[0].body);
    assert_eq!(
        first,
        json!({
            "model": "claude-test", "max_tokens": 4096, "tool_choice": {"type": "auto"},
            "stream": true,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}]
        })
    );
    let forecast = tools
        .iter()
        .find(|t| t["name"] == "weather__forecast")
        .expect("the forecast tool is offered");
    assert_eq!(forecast["description"], "The forecast for a city");
    assert_eq!(forecast["input_schema"]["type"], "object");
    assert!(forecast["input_schema"]["properties"]["city"].is_object());
    assert!(tools.iter().any(|t| t["name"] == "weather__summarize"));

    let (_, second) = split_tools(&received[1].body);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages[..2],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather__forecast", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_2", "name": "weather__radar", "input": {}}
            ]}
        ])
        .as_array()
        .unwrap()[..]
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages.len(), 3);
    assert_eq!(
        results[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rain in Oslo"})
    );
    assert_eq!(results[1]["tool_use_id"], "toolu_2");
    assert_eq!(
        results[1]["is_error"], true,
        "an unknown tool is an error result"
    );
}

#[tokio::test]
async fn openai_tool_calls_then_text_round_trip_through_the_agent_loop() {
    let api = FakeApi::start(vec![
        ok(openai_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather__forecast", "arguments": "{\"city\":\"Oslo\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "weather__radar", "arguments": "{}"}}
            ]}),
            "tool_calls",
        )),
        ok(openai_completion(
            json!({"role": "assistant", "content": "It rains in Oslo."}),
            "stop",
        )),
    ])
    .await;
    let (mut host, _peer) = host(openai(&api)).await;
    let outcome = host.send("Weather in Oslo?").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("It rains in Oslo."));

    let received = api.received();
    assert_eq!(received.len(), 2);
    for r in &received {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.header("x-api-key"), None);
    }
    let (tools, first) = split_tools(&received[0].body);
    assert_eq!(
        first,
        json!({
            "model": "gpt-test", "tool_choice": "auto",
            "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "Weather in Oslo?"}]
        })
    );
    let forecast = tools
        .iter()
        .find(|t| t["function"]["name"] == "weather__forecast")
        .expect("the forecast tool is offered");
    assert_eq!(forecast["type"], "function");
    assert_eq!(
        forecast["function"]["description"],
        "The forecast for a city"
    );
    assert!(forecast["function"]["parameters"]["properties"]["city"].is_object());

    let (_, second) = split_tools(&received[1].body);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather__forecast", "arguments": "{\"city\":\"Oslo\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "weather__radar", "arguments": "{}"}}
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Rain in Oslo"})
    );
    assert_eq!(messages[3]["tool_call_id"], "call_2");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("Error: There is no tool named"),
        "{}",
        messages[3]
    );
}

#[tokio::test]
async fn a_servers_sampling_request_reaches_the_provider_without_the_host_conversation() {
    let api = FakeApi::start(vec![
        ok(anthropic_message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "weather__summarize", "input": {"city": "Oslo"}}]),
            "tool_use",
        )),
        ok(anthropic_message(
            json!([{"type": "text", "text": "Oslo is wet."}]),
            "end_turn",
        )),
        ok(anthropic_message(
            json!([{"type": "text", "text": "Done."}]),
            "end_turn",
        )),
    ])
    .await;
    let (mut host, _peer) = host(anthropic(&api)).await;
    host.send("Secret plans: summarize Oslo").await.unwrap();
    let received = api.received();
    assert_eq!(received.len(), 3);
    assert_eq!(
        received[1].body,
        json!({
            "model": "claude-test", "max_tokens": 64, "system": "You write one line.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Write one line about Oslo"}]}]
        })
    );
    let last = received[2].body["messages"].to_string();
    assert!(
        last.contains("claude-test-20250101 wrote: Oslo is wet."),
        "the tool got the provider's answer and model name: {last}"
    );
}

#[tokio::test]
async fn openai_sampling_maps_system_prompt_limits_stops_and_required_tools() {
    let api = FakeApi::start(vec![ok(openai_completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"tides\"}"}}
        ]}),
        "tool_calls",
    ))])
    .await;
    let model = openai(&api);
    let params = CreateMessageParams::new(vec![SamplingMessage::user_text("Find tides")], 100)
        .system_prompt("Use tools.")
        .tools(
            vec![Tool::new("lookup", Tool::empty_input_schema())],
            Some(ToolChoice::mode(ToolChoiceMode::Required)),
        );
    let mut params = params;
    params.temperature = Some(0.5);
    params.stop_sequences = Some(vec!["END".to_owned()]);
    let result = model.sample(&params).await.unwrap();
    assert_eq!(result.model, "gpt-test-2025");
    assert_eq!(result.stop_reason, Some(StopReason::TOOL_USE));
    let content = serde_json::to_value(&result.content).unwrap();
    assert_eq!(content["type"], "tool_use");
    assert_eq!(content["id"], "call_9");
    assert_eq!(content["input"], json!({"q": "tides"}));

    let received = api.received();
    assert_eq!(
        received[0].body,
        json!({
            "model": "gpt-test", "max_tokens": 100, "temperature": 0.5, "stop": ["END"],
            "tool_choice": "required",
            "tools": [{"type": "function", "function": {"name": "lookup", "parameters": serde_json::to_value(Tool::empty_input_schema()).unwrap()}}],
            "messages": [
                {"role": "system", "content": "Use tools."},
                {"role": "user", "content": "Find tides"}
            ]
        })
    );
}

#[tokio::test]
async fn a_401_is_not_retried_and_says_which_variable_to_set() {
    let api = FakeApi::start(vec![status(
        401,
        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    )])
    .await;
    let (mut host, _peer) = host(anthropic(&api)).await;
    let err = host.send("hi").await.unwrap_err();
    let HostError::Model(ModelError::Status {
        status, attempts, ..
    }) = &err
    else {
        panic!("not a status error: {err:?}");
    };
    assert_eq!((*status, *attempts), (401, 1));
    let text = err.to_string();
    assert!(text.contains("invalid x-api-key"), "{text}");
    assert!(text.contains("set ANTHROPIC_API_KEY"), "{text}");
    assert!(!text.contains(KEY) && !format!("{err:?}").contains(KEY));
    assert_eq!(api.received().len(), 1);
}

#[tokio::test]
async fn a_429_is_retried_after_the_time_the_provider_asks() {
    let api = FakeApi::start(vec![
        Answer {
            status: 429,
            headers: vec![("retry-after", "0")],
            body: json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}).to_string(),
        },
        ok(openai_completion(
            json!({"role": "assistant", "content": "Hello."}),
            "stop",
        )),
    ])
    .await;
    let (mut host, _peer) = host(openai(&api)).await;
    let outcome = host.send("hi").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("Hello."));
    let received = api.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body, "the same request again");
}

#[tokio::test]
async fn a_500_is_retried_a_bounded_number_of_times_then_reported() {
    let overloaded = || {
        status(
            500,
            json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
        )
    };
    let api = FakeApi::start(vec![overloaded(), overloaded(), overloaded(), overloaded()]).await;
    let err = anthropic(&api)
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Status {
                status: 500,
                attempts: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "anthropic answered HTTP 500 after 3 attempt(s): Internal server error (api_error)"
    );
    assert_eq!(api.received().len(), 3, "two retries, then no more");
}

#[tokio::test]
async fn malformed_answers_give_a_clear_error() {
    let api = FakeApi::start(vec![
        ok(json!({"id": "msg_01", "type": "message", "role": "assistant"})),
        Answer {
            status: 200,
            headers: Vec::new(),
            body: "<html>gateway</html>".to_owned(),
        },
    ])
    .await;
    let model = anthropic(&api);
    let err = model
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains("no `content` array"), "{err}");
    let err = model
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("the body is not JSON"), "{err}");
    assert!(err.to_string().contains("<html>gateway</html>"), "{err}");

    let api = FakeApi::start(vec![ok(json!({"id": "chatcmpl-1", "choices": []}))]).await;
    let err = openai(&api)
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"openai sent an answer that cannot be read: it has no `choices[0]`: {"choices":[],"id":"chatcmpl-1"}"#
    );
}

#[tokio::test]
async fn an_unreachable_provider_is_named_with_its_url() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let model = OpenAiModel::new("m", None, format!("{base}/v1")).unwrap();
    let err = model
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    let ModelError::Unreachable { url, .. } = &err else {
        panic!("not unreachable: {err:?}");
    };
    assert_eq!(url, &format!("{base}/v1/chat/completions"));
}

#[tokio::test]
async fn a_provider_that_never_answers_times_out_with_a_clear_error() {
    // Accepts connections and reads them, never answering.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let settings = HttpSettings {
        timeout: Duration::from_millis(200),
        ..quick()
    };
    let model = AnthropicModel::new("claude-test", KEY, &base)
        .unwrap()
        .http(settings)
        .unwrap();
    let err = model
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Unreachable { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("no answer within 0.2s (the request timeout)"),
        "{err}"
    );
}

#[test]
fn keys_never_show_in_debug_output_and_bad_settings_are_refused() {
    let model = AnthropicModel::new("claude-test", KEY, "https://api.anthropic.com").unwrap();
    assert!(!format!("{model:?}").contains(KEY));
    let model = OpenAiModel::new("m", Some(KEY.to_owned()), "http://127.0.0.1:1/v1").unwrap();
    assert!(!format!("{model:?}").contains(KEY));
    assert!(matches!(
        AnthropicModel::new("claude-test", "", "https://api.anthropic.com"),
        Err(ModelError::MissingKey {
            variable: "ANTHROPIC_API_KEY",
            ..
        })
    ));
    assert!(matches!(
        OpenAiModel::new("m", None, "localhost:11434"),
        Err(ModelError::Settings { .. })
    ));
}

/// A `text/event-stream` answer: each `(name, data)` one event (no `event:` line when the
/// name is empty, as OpenAI sends them), then `tail` as it is.
fn sse(events: &[(&str, Value)], tail: &str) -> Answer {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.push_str(tail);
    Answer {
        status: 200,
        headers: vec![("content-type", "text/event-stream")],
        body,
    }
}

/// Every event of a host, as they happened.
fn recorded() -> (EventSink, Arc<Mutex<Vec<Event>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    let sink = EventSink::callback(move |e| kept.lock().unwrap().push(e));
    (sink, seen)
}

fn deltas(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// A host with `model` over a weather server that gives instructions, events recorded.
async fn instructed_host(model: Arc<dyn Model>) -> (Host, Arc<Mutex<Vec<Event>>>) {
    let server = Server::builder("weather", "1.0.0")
        .instructions("Give temperatures in Celsius.")
        .tool(tool("forecast", |c: City| async move {
            format!("Rain in {}", c.city)
        }))
        .build()
        .unwrap();
    let (connection, _peer) = tapped(&server, Frames::default());
    let (events, seen) = recorded();
    let mut servers = Servers::new();
    servers
        .add_connection(
            "weather",
            connection,
            ServerSettings::default(),
            &StartOptions::default(),
            &EventSink::discard(),
        )
        .await
        .unwrap();
    let host = Host::new(
        servers,
        Policy::new(vec![Rule::new("*", Action::Allow)]),
        model,
        Arc::new(ScriptedConsent::deny_all()),
        events,
    );
    (host, seen)
}

fn anthropic_stream_start() -> (&'static str, Value) {
    (
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
    )
}

#[tokio::test]
async fn anthropic_streams_text_as_it_comes_and_joins_split_tool_arguments() {
    let api = FakeApi::start(vec![
        sse(
            &[
                anthropic_stream_start(),
                ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
                ("ping", json!({"type": "ping"})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "check."}})),
                ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                ("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "weather__forecast", "input": {}}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"ci"}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ty\": \"Os"}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "lo\"}"}})),
                ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
                ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}})),
                ("message_stop", json!({"type": "message_stop"})),
            ],
            "",
        ),
        sse(
            &[
                anthropic_stream_start(),
                ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It rains "}})),
                ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "in Oslo."}})),
                ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}})),
                ("message_stop", json!({"type": "message_stop"})),
            ],
            "",
        ),
    ])
    .await;
    let (mut host, seen) = instructed_host(anthropic(&api)).await;
    let outcome = host.send("Weather in Oslo?").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("It rains in Oslo."));
    assert_eq!(outcome.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        outcome.usage,
        Usage {
            input_tokens: 40,
            output_tokens: 35
        }
    );
    let events = seen.lock().unwrap().clone();
    assert_eq!(
        deltas(&events),
        ["Let me ", "check.", "It rains ", "in Oslo."],
        "text is handed on piece by piece"
    );
    assert!(events.contains(&Event::ModelAnswered {
        usage: Some(Usage {
            input_tokens: 20,
            output_tokens: 30
        }),
        stop_reason: Some("tool_use".into())
    }));
    let received = api.received();
    assert_eq!(received[0].body["stream"], true);
    let system = received[0].body["system"].as_str().unwrap();
    assert!(system.starts_with(DEFAULT_SYSTEM_PROMPT), "{system}");
    assert!(
        system.ends_with("# Instructions from the MCP server `weather` (its tools are `weather__*`)\nGive temperatures in Celsius."),
        "the server's instructions follow, labelled: {system}"
    );
    let messages = received[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"][1],
        json!({"type": "tool_use", "id": "toolu_1", "name": "weather__forecast", "input": {"city": "Oslo"}}),
        "the pieces of the arguments were joined and parsed"
    );
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rain in Oslo"})
    );
}

#[tokio::test]
async fn an_anthropic_error_mid_stream_fails_the_turn_and_keeps_the_user_message() {
    let api = FakeApi::start(vec![sse(
        &[
            anthropic_stream_start(),
            ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half an"}})),
            ("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        ],
        "",
    )])
    .await;
    let (mut host, seen) = instructed_host(anthropic(&api)).await;
    let err = host.send("Weather?").await.unwrap_err();
    assert!(
        matches!(&err, HostError::Model(ModelError::Stream { message, .. }) if message == "Overloaded (overloaded_error)"),
        "{err}"
    );
    assert_eq!(deltas(&seen.lock().unwrap()), ["Half an"]);
    assert_eq!(
        host.conversation().messages().len(),
        1,
        "only the user's message"
    );

    let cut = FakeApi::start(vec![sse(
        &[
            anthropic_stream_start(),
            ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        ],
        "event: content_block_delta\ndata: {\"type\": \"content_blo",
    )])
    .await;
    let err = anthropic(&cut)
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("cannot be read") || err.to_string().contains("message_stop"),
        "{err}"
    );
}

#[tokio::test]
async fn openai_streams_text_and_joins_tool_call_fragments_by_index() {
    let chunk = |delta: Value, finish: Value| {
        (
            "",
            json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let usage = (
        "",
        json!({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}}),
    );
    let api = FakeApi::start(vec![
        sse(
            &[
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                chunk(json!({"content": "Checking"}), Value::Null),
                chunk(json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "weather__forecast", "arguments": ""}}]}), Value::Null),
                chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\""}}]}), Value::Null),
                chunk(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "weather__forecast", "arguments": "{\"city\": \"Bergen\"}"}}]}), Value::Null),
                chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": ": \"Oslo\"}"}}]}), Value::Null),
                chunk(json!({}), json!("tool_calls")),
                usage.clone(),
            ],
            "data: [DONE]\n\n",
        ),
        sse(
            &[
                chunk(json!({"content": "Rain in "}), Value::Null),
                chunk(json!({"content": "both."}), Value::Null),
                chunk(json!({}), json!("stop")),
                usage,
            ],
            "data: [DONE]\n\n",
        ),
    ])
    .await;
    let (mut host, seen) = instructed_host(openai(&api)).await;
    let outcome = host.send("Oslo and Bergen?").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("Rain in both."));
    assert_eq!(outcome.stop_reason.as_deref(), Some("stop"));
    assert_eq!(
        outcome.usage,
        Usage {
            input_tokens: 100,
            output_tokens: 18
        }
    );
    assert_eq!(
        deltas(&seen.lock().unwrap()),
        ["Checking", "Rain in ", "both."]
    );
    let received = api.received();
    let first = &received[0].body;
    assert_eq!(first["stream_options"], json!({"include_usage": true}));
    assert_eq!(first["messages"][0]["role"], "system");
    assert!(first["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("MCP server `weather`"));
    let messages = received[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "Checking", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "weather__forecast", "arguments": "{\"city\":\"Oslo\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "weather__forecast", "arguments": "{\"city\":\"Bergen\"}"}}
        ]})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "Rain in Oslo"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_b", "content": "Rain in Bergen"})
    );
}

#[tokio::test]
async fn openai_stream_errors_and_cut_streams_are_errors() {
    let api = FakeApi::start(vec![
        sse(
            &[
                ("", json!({"choices": [{"index": 0, "delta": {"content": "Hal"}, "finish_reason": null}]})),
                ("", json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}})),
            ],
            "",
        ),
        sse(
            &[("", json!({"choices": [{"index": 0, "delta": {"content": "Hal"}, "finish_reason": null}]}))],
            "",
        ),
    ])
    .await;
    let model = openai(&api);
    let err = model
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Stream { message, .. } if message.contains("had an error")),
        "{err}"
    );
    let err = model
        .respond(ModelRequest::new(&Default::default(), &[]))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("before a `finish_reason`"),
        "{err}"
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A 1x1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
/// The start of a TIFF, which neither provider decodes.
const TIFF: &str = "SUkqAAgAAAA=";

/// A server whose tools return images, audio and embedded resources.
fn camera() -> Server {
    Server::builder("camera", "1.0.0")
        .tool(tool("snapshot", |_: Nothing| async {
            CallToolResult::content(vec![
                ContentBlock::text("A red dot"),
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::image(TIFF, "image/tiff"),
                ContentBlock::audio(WAV, "audio/wav"),
                ContentBlock::embedded(ResourceContents::blob(
                    "file:///notes.txt",
                    "text/plain",
                    "aGVsbG8gZnJvbSBhIGJsb2I=",
                )),
                ContentBlock::embedded(ResourceContents::blob("file:///dot.png", "image/png", PNG)),
            ])
        }))
        .build()
        .unwrap()
}

/// What the snapshot result's text says, before any provider's notes.
const SNAPSHOT_TEXT: &str =
    "A red dot\n[image: image/png, 96 bytes of base64]\n[image: image/tiff, 12 bytes of base64]\n\
     [audio: audio/wav, 60 bytes of base64]\nhello from a blob\n\
     [binary resource file:///dot.png: image/png, 96 bytes of base64]";

#[tokio::test]
async fn anthropic_gets_tool_result_images_as_image_blocks_and_the_rest_named() {
    let api = FakeApi::start(vec![
        ok(anthropic_message(
            json!([
                {"type": "tool_use", "id": "toolu_1", "name": "camera__snapshot", "input": {}}
            ]),
            "tool_use",
        )),
        ok(anthropic_message(
            json!([{"type": "text", "text": "A red dot."}]),
            "end_turn",
        )),
    ])
    .await;
    let (mut host, _peer) = host_over("camera", &camera(), anthropic(&api)).await;
    host.send("What do you see?").await.unwrap();
    let received = api.received();
    assert_eq!(received.len(), 2);
    let messages = received[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 3);
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}});
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                {"type": "text", "text": format!("{}\n\
                    [the image/tiff image above (12 bytes of base64) was not sent to the model: anthropic takes images as JPEG, PNG, GIF and WebP only]\n\
                    [the audio/wav audio above (60 bytes of base64) was not sent to the model: anthropic takes no audio]", SNAPSHOT_TEXT)},
                image,
                image
            ]}
        ]})
    );
}

#[tokio::test]
async fn openai_gets_tool_result_images_and_audio_in_a_user_message_after_the_tool_messages() {
    let api = FakeApi::start(vec![
        ok(openai_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "camera__snapshot", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "camera__snapshot", "arguments": "{}"}}
            ]}),
            "tool_calls",
        )),
        ok(openai_completion(
            json!({"role": "assistant", "content": "A red dot."}),
            "stop",
        )),
    ])
    .await;
    let (mut host, _peer) = host_over("camera", &camera(), openai(&api)).await;
    host.send("What do you see?").await.unwrap();
    let received = api.received();
    assert_eq!(received.len(), 2);
    let messages = received[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 5, "{messages:?}");
    let text = format!(
        "{}\n[the image/tiff image above (12 bytes of base64) was not sent to the model: openai takes images as PNG, JPEG, GIF and WebP only]",
        SNAPSHOT_TEXT
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": text})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_2", "content": text})
    );
    let image =
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}});
    let audio = json!({"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}});
    let media = |call: &str| {
        vec![
            json!({"type": "text", "text": format!("The images and audio of the result of call {call} (camera__snapshot):")}),
            image.clone(),
            audio.clone(),
            image.clone(),
        ]
    };
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": ([media("call_1"), media("call_2")].concat())})
    );
}

#[tokio::test]
async fn sampling_requests_carry_their_images_checked_as_tool_results_are() {
    let image = SamplingMessageContentBlock::Image(junction_protocol::content::MediaContent::new(
        PNG,
        "image/png",
    ));
    let tiff = SamplingMessageContentBlock::Image(junction_protocol::content::MediaContent::new(
        TIFF,
        "image/png",
    ));
    let audio = SamplingMessageContentBlock::Audio(junction_protocol::content::MediaContent::new(
        WAV,
        "audio/wav",
    ));
    // A PNG signature then zeros: 6 MiB of base64, over Anthropic's 5 MiB, under OpenAI's
    // 20 MiB (sampling does not pass the transport's 4 MiB frame limit to get here).
    let poster_data = format!("iVBORw0KGgoA{}", "A".repeat(6 * 1024 * 1024 - 12));
    let poster = SamplingMessageContentBlock::Image(junction_protocol::content::MediaContent::new(
        poster_data.clone(),
        "image/png",
    ));
    let params = CreateMessageParams::new(
        vec![SamplingMessage::new(
            Role::User,
            vec![
                SamplingMessageContentBlock::text("Describe"),
                image,
                tiff,
                audio,
                poster,
            ],
        )],
        10,
    );
    let api = FakeApi::start(vec![
        ok(anthropic_message(
            json!([{"type": "text", "text": "A dot."}]),
            "end_turn",
        )),
        ok(openai_completion(
            json!({"role": "assistant", "content": "A dot."}),
            "stop",
        )),
    ])
    .await;
    anthropic(&api).sample(&params).await.unwrap();
    openai(&api).sample(&params).await.unwrap();
    let received = api.received();
    let tiff_note = |provider: &str, formats: &str| {
        format!("[image: image/png, 12 bytes of base64]\n[the image/png image above (12 bytes of base64) was not sent to the model: {provider} takes images as {formats} only]")
    };
    assert_eq!(
        received[0].body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Describe"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "text", "text": tiff_note("anthropic", "JPEG, PNG, GIF and WebP")},
            {"type": "text", "text": "[audio: audio/wav, 60 bytes of base64]\n[the audio/wav audio above (60 bytes of base64) was not sent to the model: anthropic takes no audio]"},
            {"type": "text", "text": "[image: image/png, 6291456 bytes of base64]\n[the image/png image above (6291456 bytes of base64) was not sent to the model: anthropic takes images of at most 5 MiB of base64]"}
        ]}])
    );
    assert_eq!(
        received[1].body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Describe"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}},
            {"type": "text", "text": tiff_note("openai", "PNG, JPEG, GIF and WebP")},
            {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{poster_data}")}}
        ]}])
    );
}

/// A server with a picture behind a resource link in its tool's result, which can also be
/// attached with `@gallery:file:///dot.png`.
fn gallery() -> Server {
    use junction::server::resource;
    use junction_protocol::resources::Resource;
    Server::builder("gallery", "1.0.0")
        .resource(
            resource("file:///dot.png", "dot", |_| async {
                ResourceContents::blob("file:///dot.png", "image/png", PNG)
            })
            .mime_type("image/png"),
        )
        .tool(tool("show", |_: Nothing| async {
            CallToolResult::content(vec![
                ContentBlock::text("Here it is"),
                ContentBlock::resource_link(
                    Resource::new("file:///dot.png", "dot").mime_type("image/png"),
                ),
                // A link that says it is no image is not read.
                ContentBlock::resource_link(
                    Resource::new("file:///notes.txt", "notes").mime_type("text/plain"),
                ),
            ])
        }))
        .build()
        .unwrap()
}

/// What the gallery's result says, before any provider's notes.
const SHOW_TEXT: &str =
    "Here it is\n[resource link: file:///dot.png (dot)]\n[resource link: file:///notes.txt (notes)]";

/// What an attached dot says, before any provider's notes.
const ATTACHED_TEXT: &str = "Context from @gallery:file:///dot.png:\n\
     [binary resource file:///dot.png: image/png, 96 bytes of base64]";

#[tokio::test]
async fn anthropic_gets_linked_and_attached_images_as_image_blocks() {
    let api = FakeApi::start(vec![
        ok(anthropic_message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "gallery__show", "input": {}}]),
            "tool_use",
        )),
        ok(anthropic_message(
            json!([{"type": "text", "text": "A dot."}]),
            "end_turn",
        )),
    ])
    .await;
    let (mut host, _peer) = host_over("gallery", &gallery(), anthropic(&api)).await;
    host.attach("@gallery:file:///dot.png").await.unwrap();
    host.send("What do you see?").await.unwrap();
    let received = api.received();
    assert_eq!(received.len(), 2);
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}});
    assert_eq!(
        received[1].body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": ATTACHED_TEXT},
                image,
                {"type": "text", "text": "What do you see?"}
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "gallery__show", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                    {"type": "text", "text": SHOW_TEXT},
                    image
                ]}
            ]}
        ])
    );
}

#[tokio::test]
async fn openai_gets_linked_and_attached_images_as_image_parts() {
    let api = FakeApi::start(vec![
        ok(openai_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "gallery__show", "arguments": "{}"}}
            ]}),
            "tool_calls",
        )),
        ok(openai_completion(
            json!({"role": "assistant", "content": "A dot."}),
            "stop",
        )),
    ])
    .await;
    let (mut host, _peer) = host_over("gallery", &gallery(), openai(&api)).await;
    host.attach("@gallery:file:///dot.png").await.unwrap();
    host.send("What do you see?").await.unwrap();
    let received = api.received();
    assert_eq!(received.len(), 2);
    let image =
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}});
    assert_eq!(
        received[1].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": ATTACHED_TEXT}, image]},
            {"role": "user", "content": "What do you see?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "gallery__show", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": SHOW_TEXT},
            {"role": "user", "content": [
                {"type": "text", "text": "The images and audio of the result of call call_1 (gallery__show):"},
                image
            ]}
        ])
    );
}
