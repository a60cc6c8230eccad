//! What `junction serve conformance` lists beyond the 0.1.16 fixtures: the 0.2.0-alpha.12
//! tools and prompt, and the full JSON Schema 2020-12 input schema, exactly as listed.

use serde_json::{json, Value};

/// The input schema of `json_schema_2020_12_tool`.
pub fn schema_2020_12() -> Value {
    json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false})
}

/// The tools added for 0.2.0-alpha.12, in the order listed (after `json_schema_2020_12_tool`).
pub fn alpha12_tools() -> Vec<Value> {
    let empty = json!({"type": "object", "properties": {}});
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": empty});
    vec![
        tool(
            "test_input_required_result_elicitation",
            "Asks the user's name (input request `user_name`, elicitation)",
        ),
        tool(
            "test_input_required_result_sampling",
            "Asks the client's model a question (input request `capital`, sampling)",
        ),
        tool(
            "test_input_required_result_list_roots",
            "Asks the client's roots (input request `roots`)",
        ),
        tool(
            "test_input_required_result_request_state",
            "Asks a confirmation and answers `state-ok` once the retried request state verifies",
        ),
        tool(
            "test_input_required_result_multiple_inputs",
            "Asks for an elicitation, a sampling and the roots in one round",
        ),
        tool(
            "test_input_required_result_multi_round",
            "Asks for input in two rounds (`step1`, then `step2`)",
        ),
        tool(
            "test_input_required_result_tampered_state",
            "Asks a confirmation; a retry whose request state was altered is refused",
        ),
        tool(
            "test_input_required_result_capabilities",
            "Asks only for the inputs whose capabilities the client declared",
        ),
        tool(
            "test_missing_capability",
            "Needs sampling: without the capability the request is refused",
        ),
        tool(
            "test_streaming_elicitation",
            "Reports progress, then asks the user's name",
        ),
        tool("test_logging_tool", "Logs one message at info"),
        tool(
            "test_trigger_tool_change",
            "Adds or removes a tool, so the tool list changes",
        ),
        tool(
            "test_trigger_prompt_change",
            "Adds or removes a prompt, so the prompt list changes",
        ),
        json!({"name": "test_x_mcp_header",
            "description": "Mirrors region, priority and verbose into Mcp-Param-* headers",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "description": "Mirrored as Mcp-Param-Region", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "description": "Mirrored as Mcp-Param-Priority", "x-mcp-header": "Priority"},
                "verbose": {"type": "boolean", "description": "Mirrored as Mcp-Param-Verbose", "x-mcp-header": "Verbose"},
                "query": {"type": "string", "description": "Not mirrored"}},
                "required": ["region", "query"]}}),
        json!({"name": "greet", "description": "Greets by name, at once (never a task)",
            "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {"name": {"description": "Who to greet.", "type": "string"}},
                "required": ["name"], "title": "Greeting", "type": "object"}}),
        json!({"name": "slow_compute", "description": "Computes for `seconds` seconds; may run as a task",
            "execution": {"taskSupport": "optional"},
            "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {
                    "label": {"default": null, "description": "A label the result repeats.", "type": ["string", "null"]},
                    "seconds": {"default": 0, "description": "How long the computation takes, in seconds (0: at once).", "format": "uint64", "minimum": 0, "type": "integer"}},
                "title": "Compute", "type": "object"}}),
        task_tool(
            "failing_job",
            "Fails after a second with a tool error; always a task",
            "required",
        ),
        task_tool(
            "protocol_error_job",
            "Crashes, so its task fails with a protocol error; always a task",
            "required",
        ),
        task_tool(
            "confirm_delete",
            "Looks the item up, then asks for a confirmation; may run as a task",
            "optional",
        ),
        task_tool(
            "multi_input",
            "Asks for two values at once; may run as a task",
            "optional",
        ),
        task_tool(
            "test_tool_with_task",
            "Asks the user's name first, then runs as a task",
            "required",
        ),
    ]
}

/// A fixture of the tasks extension without arguments.
fn task_tool(name: &str, description: &str, support: &str) -> Value {
    json!({"name": name, "description": description, "execution": {"taskSupport": support},
        "inputSchema": {"type": "object", "properties": {}}})
}

/// The prompt added for 0.2.0-alpha.12 (listed last).
pub fn alpha12_prompt() -> Value {
    json!({"name": "test_input_required_result_prompt",
        "description": "Asks the user for context (input request `context`), then renders it"})
}

/// Every resource `junction serve conformance` lists, exactly as listed.
pub fn resources() -> Value {
    json!([
        {"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
         "description": "A static text resource for testing", "mimeType": "text/plain"},
        {"uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource",
         "description": "A static binary resource (image) for testing", "mimeType": "image/png"},
        {"uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource",
         "description": "A resource that auto-updates every 3 seconds", "mimeType": "text/plain"},
    ])
}

/// Every prompt `junction serve conformance` lists, exactly as listed.
pub fn prompts() -> Vec<Value> {
    vec![
        json!({"name": "test_simple_prompt", "title": "Simple Test Prompt",
            "description": "A simple prompt without arguments"}),
        json!({"name": "test_prompt_with_arguments", "title": "Prompt With Arguments",
            "description": "A prompt with required arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}]}),
        json!({"name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource",
            "description": "A prompt that includes an embedded resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]}),
        json!({"name": "test_prompt_with_image", "title": "Prompt With Image",
            "description": "A prompt that includes image content"}),
        alpha12_prompt(),
    ]
}
