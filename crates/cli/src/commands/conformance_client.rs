//! `junction conformance-client URL`: Junction's client as the client under test of the MCP
//! conformance suite (`conformance client --command "junction conformance-client"`).
//!
//! The runner appends the scenario server's URL and sets `MCP_CONFORMANCE_SCENARIO` (and, for
//! scenarios with data, `MCP_CONFORMANCE_CONTEXT`, a JSON object). The command then acts as an
//! unattended MCP host would, whatever the scenario: it connects over Streamable HTTP (the
//! 2024-11-05 HTTP+SSE transport for a `/sse` URL), lists the tools and calls each one with
//! the arguments the context's `toolCalls` gives it, else arguments taken from its input
//! schema (defaults, examples, else a placeholder of the right type). Forms the server asks for are accepted pre-filled with the schema's defaults, as a
//! user who submits them untouched would; URL elicitations are declined (no browser).
//! A server that answers `401` is authorized against as an unattended host would: OAuth
//! discovery, registration (credentials from the context's `client_id` / `client_secret` when
//! it has them, else the Client ID Metadata Document URL when the authorization server
//! accepts one, else Dynamic Client Registration), PKCE, and the authorization server's
//! redirect followed without a browser ([`FollowRedirects`]). A context with an enterprise
//! IdP's ID token (`idp_id_token`, `idp_issuer`, `idp_client_id`, `idp_token_endpoint`)
//! configures cross-app access ([`CrossAppAccess`]); one with a workload JWT (`valid_jwt`)
//! configures workload identity federation ([`WorkloadIdentity`]). DPoP is used where the
//! authorization server offers it. Tokens live in memory only.
//!
//! When the runner names a revision (`MCP_CONFORMANCE_PROTOCOL_VERSION`, 0.2 suites), exactly
//! that one is spoken; otherwise the client negotiates ([`ClientOptions::auto`]: 2026-07-28
//! when the server lists it, else the handshake).
//!
//! Each tool result goes to stdout as one JSON line; exit 0 when every step succeeded, 1
//! otherwise, 3 for bad usage (the reason on stderr).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use std::sync::Arc;

use junction::auth::{
    ClientKey, CrossAppAccess, FollowRedirects, MemoryTokenStore, OAuthClient, OAuthConfig,
    PreRegistered, RegisteredClient, WorkloadIdentity, WorkloadToken,
};
use junction::client::{fill_defaults, Client, ClientOptions, Elicitation};
use junction::transport::http::client::HttpClient;
use junction_protocol::elicitation::{ElicitParams, ElicitResult};
use junction_protocol::tools::{CallToolParams, Tool};
use serde_json::{json, Map, Value};

/// The environment variable naming the scenario.
const SCENARIO: &str = "MCP_CONFORMANCE_SCENARIO";
/// The revision the runner asks for (0.2 suites), e.g. `2026-07-28`.
const PROTOCOL_VERSION: &str = "MCP_CONFORMANCE_PROTOCOL_VERSION";
/// The environment variable carrying the scenario's data.
const CONTEXT: &str = "MCP_CONFORMANCE_CONTEXT";
/// How long to wait for each answer; the suite's own timeout per scenario is 30 s.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(25);
/// How long closing waits for the session's `DELETE`.
const DELETE_WAIT: Duration = Duration::from_secs(5);

/// The arguments of `junction conformance-client`.
#[derive(Debug, clap::Args)]
pub struct ConformanceClientArgs {
    /// The scenario server's MCP endpoint (the runner appends it).
    #[arg(value_name = "URL")]
    url: String,
    /// The URL of this client's metadata document, its client id where the authorization
    /// server supports Client ID Metadata Documents (the suite's authorization servers
    /// know this one).
    #[arg(long, value_name = "URL", default_value = CONFORMANCE_CLIENT_METADATA)]
    client_metadata_url: String,
}

/// The client metadata URL the suite's authorization servers accept.
const CONFORMANCE_CLIENT_METADATA: &str = "https://conformance-test.local/client-metadata.json";

/// Runs the client against the scenario's server.
pub async fn run(args: ConformanceClientArgs) -> ExitCode {
    let (scenario, context) = match read_environment() {
        Ok(read) => read,
        Err(e) => {
            eprintln!("junction conformance-client: {e:#}");
            return ExitCode::from(3);
        }
    };
    tracing::info!(%scenario, url = %args.url, "conformance client starting");
    let mut oauth = OAuthConfig::new("junction-conformance-client");
    oauth.client_metadata_url = Some(args.client_metadata_url.clone());
    oauth.pre_registered = match pre_registered(&context) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("junction conformance-client: {CONTEXT}: {e:#}");
            return ExitCode::from(3);
        }
    };
    oauth.cross_app = cross_app(&context);
    oauth.workload = workload(&context);
    let calls = tool_calls(&context);
    match exercise(&args.url, oauth, &scenario, &calls).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("junction conformance-client: {scenario}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The scenario's name and context; a context that is not a JSON object is refused.
fn read_environment() -> anyhow::Result<(String, Map<String, Value>)> {
    let scenario = std::env::var(SCENARIO)
        .ok()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| anyhow!("{SCENARIO} is not set: this command is run by the conformance suite (`conformance client --command \"junction conformance-client\"`)"))?;
    let mut context = Map::new();
    if let Ok(text) = std::env::var(CONTEXT) {
        context = serde_json::from_str(&text)
            .with_context(|| format!("{CONTEXT} is not a JSON object"))?;
        tracing::info!(keys = ?context.keys().collect::<Vec<_>>(), "scenario context");
    }
    Ok((scenario, context))
}

/// Client credentials the context carries (an id with a secret, or with a private key for
/// `private_key_jwt`), as a host's configuration would.
fn pre_registered(context: &Map<String, Value>) -> anyhow::Result<Option<PreRegistered>> {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    let Some(client_id) = text("client_id") else {
        return Ok(None);
    };
    let private_key = match text("private_key_pem") {
        Some(pem) => {
            let algorithm = text("signing_algorithm").unwrap_or_else(|| "ES256".to_owned());
            Some(ClientKey::new(&pem, &algorithm)?)
        }
        None => None,
    };
    Ok(Some(PreRegistered {
        client: RegisteredClient {
            client_id,
            client_secret: text("client_secret"),
            private_key,
            ..RegisteredClient::default()
        },
        issuer: None,
    }))
}

/// Cross-app access when the context carries an ID token of an enterprise IdP (its issuer,
/// maybe its token endpoint, and this client's id there), as a host signed in with it would.
fn cross_app(context: &Map<String, Value>) -> Option<CrossAppAccess> {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(CrossAppAccess {
        id_token: text("idp_id_token")?,
        idp_issuer: text("idp_issuer")?,
        idp_token_endpoint: text("idp_token_endpoint"),
        idp_client: RegisteredClient {
            client_id: text("idp_client_id")?,
            client_secret: text("idp_client_secret"),
            ..RegisteredClient::default()
        },
    })
}

/// Workload identity when the context carries the workload's platform JWT (`valid_jwt`),
/// as a pod or CI job would have it in a file or variable.
fn workload(context: &Map<String, Value>) -> Option<WorkloadIdentity> {
    let token = context.get("valid_jwt").and_then(Value::as_str)?;
    Some(WorkloadIdentity {
        client_id: context
            .get("client_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        token: WorkloadToken::Value(token.to_owned()),
    })
}

/// The options of an unattended host: forms are submitted with their defaults.
fn options() -> ClientOptions {
    let mut options = ClientOptions::new("junction-conformance-client", env!("CARGO_PKG_VERSION"))
        .elicitation(Elicitation::form(|params, _ctx| async move {
            Ok(match params {
                ElicitParams::Form(form) => {
                    let content = fill_defaults(&form.requested_schema, BTreeMap::new());
                    match form.requested_schema.check(&content) {
                        Ok(()) => ElicitResult::accept(content),
                        Err(reason) => {
                            tracing::warn!(%reason, "declining a form its defaults do not complete");
                            ElicitResult::decline()
                        }
                    }
                }
                ElicitParams::Url(_) => ElicitResult::decline(),
            })
        }));
    options.session.request_timeout = REQUEST_TIMEOUT;
    match std::env::var(PROTOCOL_VERSION)
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(text) => match text.parse() {
            Ok(version) => options.version(version),
            Err(_) => {
                tracing::warn!(%text, "{PROTOCOL_VERSION} names no revision Junction knows; negotiating");
                options.auto()
            }
        },
        None => options.auto(),
    }
}

/// The arguments the context gives for some tools (`toolCalls`: `[{name, arguments}]`), as
/// a host would have them from its user or model; other tools get arguments from their
/// schema.
fn tool_calls(context: &Map<String, Value>) -> BTreeMap<String, Map<String, Value>> {
    context
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|call| {
            let name = call.get("name")?.as_str()?.to_owned();
            let arguments = call.get("arguments")?.as_object()?.clone();
            Some((name, arguments))
        })
        .collect()
}

async fn exercise(
    url: &str,
    oauth: OAuthConfig,
    scenario: &str,
    calls: &BTreeMap<String, Map<String, Value>>,
) -> anyhow::Result<()> {
    let endpoint =
        junction::auth::Url::parse(url).with_context(|| format!("{url} is not a URL"))?;
    let oauth = OAuthClient::new(
        &endpoint,
        oauth,
        Arc::new(MemoryTokenStore::default()),
        Arc::new(FollowRedirects::new()?),
    )?;
    let mut transport = HttpClient::new(url)?.oauth(oauth);
    if url.trim_end_matches('/').ends_with("/sse") {
        transport = transport.legacy();
    }
    let (connection, finished) = transport.start();
    let client = Client::connect(connection, options()).await?;
    tracing::info!(server = %client.server_info().name, protocol = %client.protocol_version(), "connected");
    let outcome = call_every_tool(&client, scenario, calls).await;
    client.close();
    let _ = tokio::time::timeout(DELETE_WAIT, finished.wait()).await;
    outcome
}

async fn call_every_tool(
    client: &Client,
    scenario: &str,
    calls: &BTreeMap<String, Map<String, Value>>,
) -> anyhow::Result<()> {
    if client.server_capabilities().tools.is_none() {
        return Ok(());
    }
    let tools = client.list_tools().await.context("tools/list")?;
    let echoes = schema_echo(scenario, &tools);
    let mut failed = Vec::new();
    for tool in tools {
        let arguments = match calls.get(&tool.name).or_else(|| echoes.get(&tool.name)) {
            Some(arguments) => arguments.clone(),
            None => example_arguments(&tool.input_schema),
        };
        let params = CallToolParams::new(&tool.name).arguments(arguments);
        match client.call_tool(params, Default::default()).await {
            Ok(result) => {
                println!("{}", json!({"tool": tool.name, "result": result}));
                if result.is_error == Some(true) {
                    failed.push(format!("{}: the tool reported an error", tool.name));
                }
            }
            Err(e) => failed.push(format!("{}: {e}", tool.name)),
        }
    }
    if !failed.is_empty() {
        bail!("tools/call failed: {}", failed.join("; "));
    }
    Ok(())
}

/// The scenario whose contract is a schema echo, and its two tools.
const SCHEMA_ECHO: (&str, &str, &str) = (
    "json-schema-2020-12-preservation",
    "json_schema_2020_12_tool",
    "json_schema_echo",
);

/// The arguments of the scenario whose contract the context cannot carry:
/// `json-schema-2020-12-preservation` cannot see what a client kept of a tool's schema, so
/// its contract (as the suite's reference client follows it) is that the client hands the
/// `inputSchema` it holds for `json_schema_2020_12_tool` back to `json_schema_echo` as
/// `schema`. What arrives is what the client preserved.
fn schema_echo(scenario: &str, tools: &[Tool]) -> BTreeMap<String, Map<String, Value>> {
    let (echo_scenario, focal, echo) = SCHEMA_ECHO;
    let focal = tools.iter().find(|tool| tool.name == focal);
    match focal {
        Some(focal) if scenario == echo_scenario => {
            let schema = Value::Object(focal.input_schema.clone());
            BTreeMap::from([(
                echo.to_owned(),
                Map::from_iter([("schema".to_owned(), schema)]),
            )])
        }
        _ => BTreeMap::new(),
    }
}

/// Arguments for every required property of an object schema (a tool's input schema).
fn example_arguments(schema: &Map<String, Value>) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    required
        .map(|name| {
            let schema = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
            (name.to_owned(), example_value(schema))
        })
        .collect()
}

/// A value the schema accepts: its default, first example, first enum value or constant,
/// else a placeholder of its type.
fn example_value(schema: &Value) -> Value {
    if let Some(value) = schema.get("default").or_else(|| schema.get("const")) {
        return value.clone();
    }
    for list in ["examples", "enum"] {
        if let Some(first) = schema
            .get(list)
            .and_then(Value::as_array)
            .and_then(|l| l.first())
        {
            return first.clone();
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str),
        Some(kind) => kind.as_str(),
        None => None,
    };
    match kind {
        Some("number") | Some("integer") => {
            json!(schema.get("minimum").and_then(Value::as_i64).unwrap_or(1))
        }
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => Value::Object(
            schema
                .as_object()
                .map(example_arguments)
                .unwrap_or_default(),
        ),
        Some("null") => Value::Null,
        _ => json!("example"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_gives_the_arguments_of_the_tools_it_names() {
        let context = json!({"toolCalls": [
            {"name": "a", "arguments": {"region": "us-west1", "n": 3}},
            {"name": "no-arguments"},
            "not a call"
        ]});
        let calls = tool_calls(context.as_object().unwrap());
        assert_eq!(calls.len(), 1);
        assert_eq!(
            Value::Object(calls["a"].clone()),
            json!({"region": "us-west1", "n": 3})
        );
        assert!(tool_calls(&Map::new()).is_empty());
    }

    #[test]
    fn the_schema_echo_scenario_hands_the_focal_tool_schema_back_verbatim() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"a": {"$anchor": "a", "type": "string"}},
            "type": "object",
            "additionalProperties": false
        });
        let tool = |name: &str, schema: &Value| -> Tool {
            serde_json::from_value(json!({"name": name, "inputSchema": schema})).unwrap()
        };
        let tools = [
            tool("json_schema_2020_12_tool", &schema),
            tool("json_schema_echo", &json!({"type": "object"})),
        ];
        let echoes = schema_echo("json-schema-2020-12-preservation", &tools);
        assert_eq!(
            Value::Object(echoes["json_schema_echo"].clone()),
            json!({ "schema": schema })
        );
        assert!(schema_echo("tools_call", &tools).is_empty());
        assert!(schema_echo("json-schema-2020-12-preservation", &tools[1..]).is_empty());
    }

    #[test]
    fn required_arguments_get_schema_values_or_typed_placeholders() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"},
                "n": {"type": "integer", "minimum": 3},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "flag": {"type": "boolean", "default": true},
                "inner": {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]},
                "optional": {"type": "string"}
            },
            "required": ["a", "n", "mode", "flag", "inner"]
        });
        assert_eq!(
            Value::Object(example_arguments(schema.as_object().unwrap())),
            json!({"a": 1, "n": 3, "mode": "fast", "flag": true, "inner": {"s": "example"}})
        );
    }
}
