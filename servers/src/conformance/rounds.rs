//! The fixtures of revision 2026-07-28 that the conformance suite 0.2.0-alpha.12 calls:
//! tools and a prompt that ask the client for input (multi round-trip requests, SEP-2322),
//! the diagnostic tools of its `server-stateless` scenario, the hooks that change the tool
//! and prompt lists, and a tool with `x-mcp-header` parameters (SEP-2243).
//!
//! Each input request has a key ([`Context::input_key`]), the name the client answers it
//! under. Over the handshake family the same tools send real server→client requests.

use junction::server::{prompt, tool, Context, PromptDef, ToolDef};
use junction::RequestError;
use junction_protocol::elicitation::{ElicitAction, ElicitResult, FormParams, RequestedSchema};
use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
use junction_protocol::ErrorObject;
use serde_json::{json, Map, Value};

/// The tool the list-changing hook adds and removes.
pub const DYNAMIC_TOOL: &str = "test_dynamic_tool";
/// The prompt the list-changing hook adds and removes.
pub const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

/// A one-field form asking for `field` (a string).
pub(super) fn form(message: &str, field: &str) -> FormParams {
    let schema: RequestedSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {field: {"type": "string", "description": message}},
        "required": [field]
    }))
    .unwrap_or_default();
    FormParams::new(message, schema)
}

/// What the user answered in `field`, or what they did instead.
pub(super) fn answered(result: &ElicitResult, field: &str) -> String {
    match result.action {
        ElicitAction::Accept => result
            .content
            .as_ref()
            .and_then(|c| c.get(field))
            .and_then(|v| serde_json::to_value(v).ok())
            .map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .unwrap_or_default(),
        ElicitAction::Decline => "(declined)".to_owned(),
        ElicitAction::Cancel => "(cancelled)".to_owned(),
    }
}

async fn ask_name(context: &Context, key: &str) -> Result<String, RequestError> {
    let result = context
        .input_key(key)
        .elicit(form("What is your name?", "name"))
        .await?;
    Ok(answered(&result, "name"))
}

async fn ask_model(context: &Context, key: &str, question: &str) -> Result<String, RequestError> {
    let params = CreateMessageParams::new(vec![SamplingMessage::user_text(question)], 100);
    let result = context.input_key(key).create_message(params).await?;
    let text: Vec<&str> = result
        .content
        .blocks()
        .iter()
        .filter_map(|b| b.as_text())
        .collect();
    Ok(text.join(""))
}

async fn ask_roots(context: &Context, key: &str) -> Result<String, RequestError> {
    let result = context.input_key(key).list_roots().await?;
    let uris: Vec<&str> = result.roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(uris.join(", "))
}

pub(super) fn failed(e: RequestError) -> String {
    format!("The input could not be asked for: {e}")
}

async fn elicitation(context: Context, _: NoArguments) -> Result<String, String> {
    let name = ask_name(&context, "user_name").await.map_err(failed)?;
    Ok(format!("Hello, {name}!"))
}

async fn sampling(context: Context, _: NoArguments) -> Result<String, String> {
    let answer = ask_model(&context, "capital", "What is the capital of France?")
        .await
        .map_err(failed)?;
    Ok(format!("The model answered: {answer}"))
}

async fn list_roots(context: Context, _: NoArguments) -> Result<String, String> {
    let roots = ask_roots(&context, "roots").await.map_err(failed)?;
    Ok(format!("The client's roots: {roots}"))
}

/// The answer arrives with the `requestState` of round 1, which the server checks before the
/// handler runs again: reaching this text means the state was valid.
async fn request_state(context: Context, _: NoArguments) -> Result<String, String> {
    let confirm = context
        .input_key("confirm")
        .elicit(form("Confirm to continue", "ok"))
        .await
        .map_err(failed)?;
    Ok(format!(
        "state-ok: the request state was verified (answer: {:?})",
        confirm.action
    ))
}

/// Asks for three inputs of three kinds in one round.
async fn multiple_inputs(context: Context, _: NoArguments) -> Result<String, String> {
    let (name, greeting, roots) = tokio::join!(
        ask_name(&context, "user_name"),
        ask_model(&context, "greeting", "Say hello."),
        ask_roots(&context, "roots"),
    );
    Ok(format!(
        "name: {}; greeting: {}; roots: {}",
        name.map_err(failed)?,
        greeting.map_err(failed)?,
        roots.map_err(failed)?
    ))
}

/// Asks for one input, then, once it is answered, for another.
async fn multi_round(context: Context, _: NoArguments) -> Result<String, String> {
    let name = ask_name(&context, "step1").await.map_err(failed)?;
    let color = context
        .input_key("step2")
        .elicit(form("What is your favourite colour?", "color"))
        .await
        .map_err(failed)?;
    Ok(format!("{name} likes {}", answered(&color, "color")))
}

/// Asks only for what the request's client declared: elicitation and sampling, each when
/// declared.
async fn capabilities(context: Context, _: NoArguments) -> Result<String, String> {
    let declared = context
        .client()
        .map(|c| c.capabilities.clone())
        .unwrap_or_default();
    let name = async {
        if declared.supports_elicitation_form() {
            ask_name(&context, "user_name").await.map(Some)
        } else {
            Ok(None)
        }
    };
    let model = async {
        if declared.supports_sampling() {
            ask_model(&context, "capital", "What is the capital of France?")
                .await
                .map(Some)
        } else {
            Ok(None)
        }
    };
    let (name, model) = tokio::join!(name, model);
    Ok(format!(
        "asked only what was declared: name {:?}, model {:?}",
        name.map_err(failed)?,
        model.map_err(failed)?
    ))
}

/// Needs sampling and reports a tool error without it (on 2026-07-28 the server turns that
/// into `MissingRequiredClientCapability`, -32021).
async fn missing_capability(context: Context, _: NoArguments) -> Result<String, String> {
    let answer = ask_model(&context, "answer", "Say anything.")
        .await
        .map_err(failed)?;
    Ok(format!("The model answered: {answer}"))
}

/// Reports progress, then asks the user (an input request on 2026-07-28, never a request on
/// the response stream).
async fn streaming_elicitation(context: Context, _: NoArguments) -> Result<String, String> {
    context.progress(0.0, Some(1.0), Some("asking the user".to_owned()));
    let name = ask_name(&context, "user_name").await.map_err(failed)?;
    context.progress(1.0, Some(1.0), Some("answered".to_owned()));
    Ok(format!("Hello, {name}!"))
}

/// Logs at `info`: sent only when the request asked for that level.
async fn logging(context: Context, _: NoArguments) -> &'static str {
    context.info("test_logging_tool ran");
    "Logged one message, if the request asked for logs at info or below."
}

/// Adds [`DYNAMIC_TOOL`], or removes it when it is there: the tool list changes each call.
async fn trigger_tool_change(context: Context, _: NoArguments) -> Result<String, String> {
    let server = context.server();
    if server.remove_tool(DYNAMIC_TOOL) {
        return Ok(format!("Removed {DYNAMIC_TOOL}"));
    }
    let added = tool(DYNAMIC_TOOL, |_: NoArguments| async { "dynamic" })
        .description("A tool that test_trigger_tool_change adds and removes");
    server.add_tool(added).map_err(|e| e.to_string())?;
    Ok(format!("Added {DYNAMIC_TOOL}"))
}

/// Adds [`DYNAMIC_PROMPT`], or removes it when it is there.
async fn trigger_prompt_change(context: Context, _: NoArguments) -> Result<String, String> {
    let server = context.server();
    if server.remove_prompt(DYNAMIC_PROMPT) {
        return Ok(format!("Removed {DYNAMIC_PROMPT}"));
    }
    let added = prompt(DYNAMIC_PROMPT, |_| async { "A dynamic prompt.".to_owned() })
        .description("A prompt that test_trigger_prompt_change adds and removes");
    server.add_prompt(added).map_err(|e| e.to_string())?;
    Ok(format!("Added {DYNAMIC_PROMPT}"))
}

/// Echoes the arguments of the `x-mcp-header` tool.
async fn mirrored(arguments: Map<String, Value>) -> String {
    format!("Called with {}", Value::Object(arguments))
}

/// The input schema of `test_x_mcp_header`: a string, an integer and a boolean mirrored into
/// `Mcp-Param-*` headers, and one parameter that is not.
pub fn mirrored_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Mirrored as Mcp-Param-Region", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "description": "Mirrored as Mcp-Param-Priority", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "description": "Mirrored as Mcp-Param-Verbose", "x-mcp-header": "Verbose"},
            "query": {"type": "string", "description": "Not mirrored"}
        },
        "required": ["region", "query"]
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `def` described by `description`, taking no arguments.
pub(super) fn no_arguments(def: ToolDef, description: &str) -> ToolDef {
    def.description(description).input_schema(
        json!({"type": "object", "properties": {}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

/// Every tool of this module.
pub fn tools() -> Vec<ToolDef> {
    vec![
        no_arguments(
            tool("test_input_required_result_elicitation", elicitation),
            "Asks the user's name (input request `user_name`, elicitation)",
        ),
        no_arguments(
            tool("test_input_required_result_sampling", sampling),
            "Asks the client's model a question (input request `capital`, sampling)",
        ),
        no_arguments(
            tool("test_input_required_result_list_roots", list_roots),
            "Asks the client's roots (input request `roots`)",
        ),
        no_arguments(
            tool("test_input_required_result_request_state", request_state),
            "Asks a confirmation and answers `state-ok` once the retried request state verifies",
        ),
        no_arguments(
            tool(
                "test_input_required_result_multiple_inputs",
                multiple_inputs,
            ),
            "Asks for an elicitation, a sampling and the roots in one round",
        ),
        no_arguments(
            tool("test_input_required_result_multi_round", multi_round),
            "Asks for input in two rounds (`step1`, then `step2`)",
        ),
        no_arguments(
            tool("test_input_required_result_tampered_state", request_state),
            "Asks a confirmation; a retry whose request state was altered is refused",
        ),
        no_arguments(
            tool("test_input_required_result_capabilities", capabilities),
            "Asks only for the inputs whose capabilities the client declared",
        ),
        no_arguments(
            tool("test_missing_capability", missing_capability),
            "Needs sampling: without the capability the request is refused",
        ),
        no_arguments(
            tool("test_streaming_elicitation", streaming_elicitation),
            "Reports progress, then asks the user's name",
        ),
        no_arguments(
            tool("test_logging_tool", logging),
            "Logs one message at info",
        ),
        no_arguments(
            tool("test_trigger_tool_change", trigger_tool_change),
            "Adds or removes a tool, so the tool list changes",
        ),
        no_arguments(
            tool("test_trigger_prompt_change", trigger_prompt_change),
            "Adds or removes a prompt, so the prompt list changes",
        ),
        tool("test_x_mcp_header", mirrored)
            .description("Mirrors region, priority and verbose into Mcp-Param-* headers")
            .input_schema(mirrored_schema()),
    ]
}

/// The prompt that asks for input before it renders.
pub fn input_prompt() -> PromptDef {
    prompt("test_input_required_result_prompt", |p| async move {
        let result = p
            .context
            .input_key("context")
            .elicit(form("What context should the prompt use?", "context"))
            .await
            .map_err(|e| ErrorObject::internal(failed(e)))?;
        Ok::<_, ErrorObject>(format!(
            "Use this context: {}",
            answered(&result, "context")
        ))
    })
    .description("Asks the user for context (input request `context`), then renders it")
}
