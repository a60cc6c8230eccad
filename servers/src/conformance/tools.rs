//! The conformance tools (`servers/CONFORMANCE.md` section 2.2), each listed with the
//! reference server's description and input schema.

use std::collections::BTreeMap;
use std::time::Duration;

use junction::server::{tool, Context, ToolDef};
use junction_protocol::content::ContentBlock;
use junction_protocol::elicitation::{ElicitResult, ElicitValue, FormParams, RequestedSchema};
use junction_protocol::resources::ResourceContents;
use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
use junction_protocol::tools::CallToolResult;
use junction_protocol::ProgressToken;
use serde_json::{json, Map, Value};

use super::{ERROR_TEXT, PNG_BASE64, RECONNECTION_TEXT, SIMPLE_TEXT, WAV_BASE64};

/// The pause between two steps of the progress and logging tools, as the reference takes.
const STEP: Duration = Duration::from_millis(50);

/// The form `test_elicitation` sends (the scenario description's, not the reference's).
const USER_FORM: &str = r#"{"type":"object","properties":{
    "username":{"type":"string","description":"User's response"},
    "email":{"type":"string","description":"User's email address"}},
    "required":["username","email"]}"#;

/// The form `test_elicitation_sep1034_defaults` sends: a default for every primitive type.
const DEFAULTS_FORM: &str = r#"{"type":"object","properties":{
    "name":{"type":"string","description":"User name","default":"John Doe"},
    "age":{"type":"integer","description":"User age","default":30},
    "score":{"type":"number","description":"User score","default":95.5},
    "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
    "verified":{"type":"boolean","description":"Verification status","default":true}},
    "required":[]}"#;

/// The form `test_elicitation_sep1330_enums` sends: each enum shape of SEP-1330.
const ENUMS_FORM: &str = r#"{"type":"object","properties":{
    "untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
    "titledSingle":{"type":"string","description":"Select one option with titles",
        "oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
    "legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],
        "enumNames":["Option One","Option Two","Option Three"]},
    "untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,
        "items":{"type":"string","enum":["option1","option2","option3"]}},
    "titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,
        "items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},
    "required":[]}"#;

// The arguments of the argument-less tools (unknown ones are ignored, as the reference
// does). Not documented with `///`, which would become a derived schema's description.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SamplingArguments {
    prompt: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct ElicitationArguments {
    message: String,
}

/// Every conformance tool, in the reference's order.
pub fn all() -> Vec<ToolDef> {
    let none = object(json!({"type": "object", "properties": {}}));
    let bare =
        |def: ToolDef, description: &str| def.description(description).input_schema(none.clone());
    vec![
        bare(
            tool("test_simple_text", simple_text),
            "Tests simple text content response",
        ),
        bare(
            tool("test_image_content", image_content),
            "Tests image content response",
        ),
        bare(
            tool("test_audio_content", audio_content),
            "Tests audio content response",
        ),
        bare(
            tool("test_embedded_resource", embedded_resource),
            "Tests embedded resource content response",
        ),
        bare(
            tool("test_multiple_content_types", multiple_content_types),
            "Tests response with multiple content types (text, image, resource)",
        ),
        bare(
            tool("test_tool_with_logging", with_logging),
            "Tests tool that emits log messages during execution",
        ),
        bare(
            tool("test_error_handling", error_handling),
            "Tests error response handling",
        ),
        bare(
            tool("test_tool_with_progress", with_progress),
            "Tests tool that reports progress notifications",
        ),
        bare(
            tool("test_reconnection", reconnection),
            "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will \
             close the stream mid-call and send the result after client reconnects.",
        ),
        tool("test_sampling", sampling)
            .description("Tests server-initiated sampling (LLM completion request)")
            .input_schema(object(json!({"type": "object", "properties": {
                "prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
                "required": ["prompt"]}))),
        tool("test_elicitation", elicitation)
            .description("Tests server-initiated elicitation (user input request)")
            .input_schema(object(json!({"type": "object", "properties": {
                "message": {"type": "string", "description": "The message to show the user"}},
                "required": ["message"]}))),
        bare(
            tool("test_elicitation_sep1034_defaults", elicitation_defaults),
            "Tests elicitation with default values per SEP-1034",
        ),
        bare(
            tool("test_elicitation_sep1330_enums", elicitation_enums),
            "Tests elicitation with enum schema improvements per SEP-1330",
        ),
        tool("json_schema_2020_12_tool", json_schema_2020_12)
            .description(
                "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            )
            .input_schema(schema_2020_12()),
    ]
}

/// The input schema of `json_schema_2020_12_tool`, listed verbatim: `$schema`, `$defs` with
/// an `$anchor`, a `$ref`, composition (`allOf` / `anyOf`), a conditional (`if` / `then` /
/// `else`) and `additionalProperties` (SEP-1613, SEP-2106).
pub fn schema_2020_12() -> Map<String, Value> {
    object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }))
}

/// The members of a JSON object literal.
fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

async fn simple_text(_: NoArguments) -> &'static str {
    SIMPLE_TEXT
}

async fn image_content(_: NoArguments) -> ContentBlock {
    ContentBlock::image(PNG_BASE64, "image/png")
}

async fn audio_content(_: NoArguments) -> ContentBlock {
    ContentBlock::audio(WAV_BASE64, "audio/wav")
}

async fn embedded_resource(_: NoArguments) -> ContentBlock {
    ContentBlock::embedded(ResourceContents::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

async fn multiple_content_types(_: NoArguments) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG_BASE64, "image/png"),
        ContentBlock::embedded(ResourceContents::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ]
}

/// Three `info` messages, 50 ms apart, related to the call (so over HTTP they travel on
/// its stream, before the result).
async fn with_logging(context: Context, _: NoArguments) -> &'static str {
    context.info("Tool execution started");
    tokio::time::sleep(STEP).await;
    context.info("Tool processing data");
    tokio::time::sleep(STEP).await;
    context.info("Tool execution completed");
    "Tool with logging executed successfully"
}

async fn error_handling(_: NoArguments) -> CallToolResult {
    CallToolResult::error(ERROR_TEXT)
}

/// Reports 0, 50 and 100 of 100, 50 ms apart, then answers with the progress token as text
/// (as the reference does), so a client can check which token the server saw.
///
/// It pauses after the last update too. The TypeScript SDK (1.32.2) dispatches a
/// notification in a microtask but a response at once, dropping the request's progress
/// handler; a last update read in the same chunk as the result is then lost ("unknown
/// token"). Over stdio both easily land in one pipe read, so the pause is still needed.
async fn with_progress(context: Context, _: NoArguments) -> String {
    for step in [0u32, 50, 100] {
        context.progress(
            f64::from(step),
            Some(100.0),
            Some(format!("Completed step {step} of 100")),
        );
        tokio::time::sleep(STEP).await;
    }
    match context.request().progress_token() {
        Some(ProgressToken::Number(n)) => n.to_string(),
        Some(ProgressToken::String(s)) => s.clone(),
        None => "No progress token was sent, so no progress was reported.".to_owned(),
    }
}

/// Over HTTP, closes the call's stream first (SSE polling, SEP-1699): the result is kept
/// and reaches the client when it resumes with `Last-Event-ID`. Elsewhere, or when the
/// stream cannot be closed (stateless mode, a client before 2025-11-25), it simply answers.
async fn reconnection(context: Context, _: NoArguments) -> &'static str {
    if let Some(control) = context.http() {
        let closed = control.close_stream(context.request().id());
        tracing::debug!(closed, "test_reconnection closed its stream");
    }
    RECONNECTION_TEXT
}

async fn sampling(context: Context, args: SamplingArguments) -> String {
    let params = CreateMessageParams::new(vec![SamplingMessage::user_text(args.prompt)], 100);
    match context.create_message(params).await {
        Ok(result) => {
            let text: Vec<&str> = result
                .content
                .blocks()
                .iter()
                .filter_map(|b| b.as_text())
                .collect();
            format!("LLM response: {}", text.join(""))
        }
        Err(e) => format!("Sampling not supported or error: {e}"),
    }
}

async fn elicitation(context: Context, args: ElicitationArguments) -> String {
    match elicit(&context, &args.message, USER_FORM).await {
        Ok(answer) => format!("User response: {answer}"),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

async fn elicitation_defaults(context: Context, _: NoArguments) -> String {
    let message = "Please review and update the form fields with defaults";
    match elicit(&context, message, DEFAULTS_FORM).await {
        Ok(answer) => format!("Elicitation completed: {answer}"),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

async fn elicitation_enums(context: Context, _: NoArguments) -> String {
    let message = "Please select options from the enum fields";
    match elicit(&context, message, ENUMS_FORM).await {
        Ok(answer) => format!("Elicitation completed: {answer}"),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

async fn json_schema_2020_12(args: Map<String, Value>) -> String {
    format!(
        "JSON Schema 2020-12 tool called with: {}",
        Value::Object(args)
    )
}

/// Sends a form and describes the answer as `action=<action>, content=<compact JSON>`, the
/// content's members in the form's order and numbers printed as JavaScript prints them, as
/// the reference does.
async fn elicit(context: &Context, message: &str, form: &str) -> Result<String, String> {
    // Parsed from text, not from a `Value`, to keep the fields in the order written.
    let schema: RequestedSchema =
        serde_json::from_str(form).map_err(|e| format!("the form is invalid: {e}"))?;
    let order: Vec<String> = schema.properties.iter().map(|(n, _)| n.clone()).collect();
    let answer: ElicitResult = context
        .elicit(FormParams::new(message, schema))
        .await
        .map_err(|e| e.to_string())?;
    let action = serde_json::to_value(answer.action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let content = answer.content.unwrap_or_default();
    Ok(format!(
        "action={action}, content={}",
        compact(&content, &order)
    ))
}

/// `content` as compact JSON, the names in `order` first.
fn compact(content: &BTreeMap<String, ElicitValue>, order: &[String]) -> String {
    let names = order
        .iter()
        .filter(|n| content.contains_key(*n))
        .chain(content.keys().filter(|n| !order.contains(n)));
    let members: Vec<String> = names
        .filter_map(|name| {
            let value = content.get(name)?;
            Some(format!(
                "{}:{}",
                Value::from(name.as_str()),
                js_value(value)
            ))
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

/// One value as `JSON.stringify` prints it: an integral float loses its `.0`.
fn js_value(value: &ElicitValue) -> String {
    match value {
        ElicitValue::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                format!("{f:.0}")
            }
            _ => n.to_string(),
        },
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicited_content_prints_like_javascript_in_form_order() {
        let content: BTreeMap<String, ElicitValue> = serde_json::from_str(
            r#"{"name":"Jane Smith","age":25,"score":88.0,"status":"inactive","verified":false}"#,
        )
        .unwrap();
        let order: Vec<String> = ["name", "age", "score", "status", "verified"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            compact(&content, &order),
            r#"{"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}"#
        );
    }

    #[test]
    fn every_form_parses_and_keeps_its_field_order() {
        for (form, first) in [
            (USER_FORM, "username"),
            (DEFAULTS_FORM, "name"),
            (ENUMS_FORM, "untitledSingle"),
        ] {
            let schema: RequestedSchema = serde_json::from_str(form).unwrap();
            assert_eq!(schema.properties[0].0, first);
            // Serializing gives back exactly what was written.
            let written: Value = serde_json::from_str(form).unwrap();
            assert_eq!(serde_json::to_value(&schema).unwrap(), written);
        }
    }
}
