//! `junction call [OPTIONS] -- COMMAND ARGS...` starts an MCP server over stdio;
//! `junction call URL [OPTIONS]` reaches one over Streamable HTTP (or the 2024-11-05 HTTP+SSE
//! transport when the URL's path ends in `/sse`). Either way it makes the handshake, runs one
//! method and prints its result (like the MCP Inspector's CLI mode).

mod http;
mod request;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail};
use clap::builder::PossibleValuesParser;
use junction::client::{Client, ClientOptions, ConnectError, Negotiation};
use junction::session::RequestOptions;
use junction::transport::child::{self, ChildProcess, CommandSpec, ShutdownTimeouts};
use junction::transport::Limits;
use junction::RequestError;
use junction_protocol::lifecycle::InitializeResult;
use junction_protocol::logging::LoggingLevel;
use junction_protocol::method;
use junction_protocol::version::Family;
use junction_protocol::{ErrorObject, ProtocolVersion};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::render::{self, Outcome};
use request::Request;

const EXIT_CODES: &str = "\
Exit codes:
  0  the result is on stdout
  1  the server answered with a JSON-RPC error (the error object is on stdout)
  2  the tool failed: a result with isError: true (the result is on stdout)
  3  bad usage, or the server could not be started, reached or understood (stderr says why)

Examples:
  junction call --method tools/call --tool echo --arg message=hi -- npx -y @modelcontextprotocol/server-everything
  junction call http://127.0.0.1:3001/mcp --bearer TOKEN --method tools/list";

/// The methods `junction call` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Print the server's answer to the handshake.
    #[value(name = "initialize")]
    Initialize,
    /// Check that the server answers.
    #[value(name = "ping")]
    Ping,
    /// List every tool.
    #[value(name = "tools/list")]
    ToolsList,
    /// Call a tool (--tool, --arg, --args).
    #[value(name = "tools/call")]
    ToolsCall,
    /// List every resource.
    #[value(name = "resources/list")]
    ResourcesList,
    /// List every resource template.
    #[value(name = "resources/templates/list")]
    ResourcesTemplatesList,
    /// Read a resource (--uri).
    #[value(name = "resources/read")]
    ResourcesRead,
    /// List every prompt.
    #[value(name = "prompts/list")]
    PromptsList,
    /// Get a prompt (--prompt, --arg, --args).
    #[value(name = "prompts/get")]
    PromptsGet,
    /// Complete an argument (--ref, --arg-name, --arg-value, --arg).
    #[value(name = "completion/complete")]
    CompletionComplete,
    /// Set the server's log level (--level).
    #[value(name = "logging/setLevel")]
    LoggingSetLevel,
    /// List this caller's tasks.
    #[value(name = "tasks/list")]
    TasksList,
    /// A task's state (--task-id).
    #[value(name = "tasks/get")]
    TasksGet,
    /// Wait for a task's result (--task-id).
    #[value(name = "tasks/result")]
    TasksResult,
    /// Cancel a task (--task-id).
    #[value(name = "tasks/cancel")]
    TasksCancel,
}

impl Method {
    /// The method's name on the command line (the JSON-RPC method, except `initialize`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
            Method::LoggingSetLevel => "logging/setLevel",
            Method::TasksList => "tasks/list",
            Method::TasksGet => "tasks/get",
            Method::TasksResult => "tasks/result",
            Method::TasksCancel => "tasks/cancel",
        }
    }
}

/// The arguments of `junction call`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_CODES)]
pub struct CallArgs {
    /// The server's URL: Streamable HTTP, or HTTP+SSE when the path ends in `/sse`.
    #[arg(value_name = "URL")]
    url: Option<String>,
    /// The method to run.
    #[arg(long, value_enum)]
    method: Method,
    /// The tool to call (tools/call).
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The resource to read (resources/read).
    #[arg(long, value_name = "URI")]
    uri: Option<String>,
    /// The prompt to get (prompts/get).
    #[arg(long, value_name = "NAME")]
    prompt: Option<String>,
    /// An argument (repeatable). For tools a VALUE that parses as JSON is sent as that JSON
    /// (`n=5` is a number, `s="5"` a string), anything else as a string; prompt and
    /// completion arguments are always strings.
    #[arg(long = "arg", value_name = "KEY=VALUE", value_parser = request::key_value)]
    arg: Vec<(String, String)>,
    /// Arguments as one JSON object; --arg values are added over it.
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// What to complete (completion/complete): prompt:NAME or resource:URI-TEMPLATE.
    #[arg(long = "ref", value_name = "REF")]
    reference: Option<String>,
    /// The argument being completed (completion/complete).
    #[arg(long, value_name = "NAME")]
    arg_name: Option<String>,
    /// What has been typed of it so far (completion/complete; empty by default).
    #[arg(long, value_name = "TEXT")]
    arg_value: Option<String>,
    /// Run the tool call as a task (tools/call): the task is printed, status changes are
    /// logged while it runs, then the result is printed.
    #[arg(long)]
    task: bool,
    /// The ttl to ask for the task, in milliseconds (with --task; the server may grant less).
    #[arg(long, value_name = "MS", requires = "task")]
    ttl: Option<u64>,
    /// The task (tasks/get, tasks/result, tasks/cancel).
    #[arg(long, value_name = "ID")]
    task_id: Option<String>,
    /// The log level to set (logging/setLevel).
    #[arg(long, value_parser = PossibleValuesParser::new(LoggingLevel::ALL.map(LoggingLevel::as_str)))]
    level: Option<String>,
    /// The protocol revision to speak: `auto` (the default) probes `server/discover` and
    /// speaks 2026-07-28 when the server has it, else performs the `initialize` handshake
    /// with the newest revision both have; a revision speaks exactly that one.
    #[arg(long, value_name = "VERSION", default_value = "auto",
          value_parser = PossibleValuesParser::new(Negotiation::names()))]
    protocol_version: String,
    /// How long to wait for each answer, in seconds (the handshake included).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    timeout: Duration,
    /// A header sent with every HTTP request, `NAME: VALUE` (repeatable; URL servers only).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = http::header)]
    header: Vec<(String, String)>,
    /// Send `Authorization: Bearer TOKEN` (URL servers only). Without it, a server that
    /// answers 401 is authorized with OAuth as `junction chat` does, sharing its stored
    /// credentials (`junction auth`).
    #[arg(long, value_name = "TOKEN")]
    bearer: Option<String>,
    /// An environment variable for the server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = request::key_value)]
    env: Vec<(String, String)>,
    /// The server's working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The server: a command and its arguments, after `--` (or give a URL instead).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("expected a positive number of seconds, got {text:?}"))
}

/// Runs the call and prints its outcome.
pub async fn run(args: CallArgs) -> ExitCode {
    match call(args).await {
        Ok(outcome) => render::outcome(&outcome),
        Err(e) => render::failure(&e),
    }
}

async fn call(args: CallArgs) -> anyhow::Result<Outcome> {
    let request = request::build(&args).map_err(|e| anyhow!(e))?;
    let options = client_options(&args)?;
    match &args.url {
        Some(url) => {
            if !args.command.is_empty() {
                bail!("give either a URL or a command after `--`, not both");
            }
            let (connection, finished) = http::connect(url, &args)?;
            let client = Client::connect(connection, options)
                .await
                .map_err(|e| match e {
                    // It names the URL itself.
                    ConnectError::Transport(_) => anyhow!(e),
                    e => anyhow!("{url}: {e}"),
                })?;
            let outcome = run_on(&client, request).await;
            client.close();
            http::finish(finished).await;
            outcome
        }
        None => call_process(&args, request, options).await,
    }
}

fn client_options(args: &CallArgs) -> anyhow::Result<ClientOptions> {
    let mut negotiation: Negotiation = args
        .protocol_version
        .parse()
        .map_err(|e| anyhow!("--protocol-version: {e}"))?;
    // `auto` means the newest revision that has the method asked for: `ping`,
    // `logging/setLevel` or the handshake itself (and tasks, which 2026-07-28 carries only
    // as an extension) go by `initialize` without probing `server/discover` first.
    // (`tasks/get` and `tasks/cancel` are in 2026-07-28's table for the extension, whose
    // tasks only the client that follows them sees; a task id given here is a 2025-11-25 one.)
    let task_method = matches!(
        args.method,
        Method::TasksList | Method::TasksGet | Method::TasksResult | Method::TasksCancel
    );
    if negotiation == Negotiation::Auto
        && (args.task || task_method || !serves_stateless(args.method))
    {
        negotiation = Negotiation::Exactly(ProtocolVersion::LATEST_HANDSHAKE);
    }
    // On 2026-07-28 a call the server runs as a task is followed to its end.
    let mut options = ClientOptions::new("junction", env!("CARGO_PKG_VERSION"))
        .negotiation(negotiation)
        .tasks();
    options.session.request_timeout = args.timeout;
    Ok(options)
}

/// Whether 2026-07-28 has `method` (by the protocol's method table).
fn serves_stateless(method: Method) -> bool {
    method::request(method.name()).is_some_and(|info| info.families.serves(Family::Stateless))
}

async fn call_process(
    args: &CallArgs,
    request: Request,
    options: ClientOptions,
) -> anyhow::Result<Outcome> {
    if !args.header.is_empty() {
        bail!("--header is for servers reached by URL; this one is a command");
    }
    let spec = command_spec(args)?;
    let (connection, mut process) =
        child::spawn(&spec, Limits::default()).map_err(|e| anyhow!("{e}"))?;
    let client = match Client::connect(connection, options).await {
        Ok(client) => client,
        Err(e) => {
            let status = stop(&mut process).await;
            return Err(explain(anyhow!("{e}"), &process, status));
        }
    };
    let outcome = run_on(&client, request).await;
    client.close();
    let status = stop(&mut process).await;
    outcome.map_err(|e| match e.downcast_ref::<RequestError>() {
        Some(RequestError::Closed { .. }) => explain(e, &process, status),
        _ => e,
    })
}

/// Logs the server's notifications while the request runs.
async fn run_on(client: &Client, request: Request) -> anyhow::Result<Outcome> {
    tracing::info!(
        server = %client.server_info().name,
        version = %client.server_info().version,
        protocol = %client.protocol_version(),
        "connected"
    );
    if let Some(mut notifications) = client.take_notifications() {
        tokio::spawn(async move {
            while let Some(n) = notifications.recv().await {
                let method = n.method().to_owned();
                let params = match n.into_parts() {
                    Ok((_, Some(raw))) => raw.get().to_owned(),
                    _ => String::new(),
                };
                tracing::info!(target: "junction::call", %method, %params, "server notification");
            }
        });
    }
    perform(client, request).await
}

/// The server command, refusing what `junction call` cannot reach yet.
fn command_spec(args: &CallArgs) -> anyhow::Result<CommandSpec> {
    let Some((program, rest)) = args.command.split_first() else {
        bail!("give the server: a URL (`junction call http://HOST:PORT/mcp --method ping`) or a command after `--` (`junction call --method ping -- junction serve conformance`)");
    };
    if program.starts_with("http://") || program.starts_with("https://") {
        bail!("{program}: a URL goes before the flags, not after `--`: `junction call {program} --method {}`", args.method.name());
    }
    let mut spec = CommandSpec::new(program).args(rest);
    for (key, value) in &args.env {
        spec = spec.env(key, value);
    }
    if let Some(dir) = &args.cwd {
        if !dir.is_dir() {
            bail!("--cwd {}: not a directory", dir.display());
        }
        spec = spec.cwd(dir);
    }
    Ok(spec)
}

/// Runs the request; a JSON-RPC error or a tool error is an outcome, not a failure.
async fn perform(client: &Client, request: Request) -> anyhow::Result<Outcome> {
    let encoded = match request {
        Request::Initialize => {
            let mut init = InitializeResult::new(
                client.protocol_version(),
                client.server_capabilities().clone(),
                client.server_info().clone(),
            );
            init.instructions = client.instructions();
            encode(Ok(init))
        }
        Request::Ping => encode(client.ping().await.map(|()| Map::new())),
        Request::ListTools => encode(client.list_tools().await.map(|t| keyed("tools", t))),
        Request::CallTool(params) => {
            if client.protocol_version() == ProtocolVersion::V2026_07_28 {
                // The tool's schema gives the call its `Mcp-Param-*` headers (and the output
                // schema its result is checked against); a listing that fails leaves the call
                // to say what is wrong.
                if let Err(e) = client.list_tools().await {
                    tracing::debug!(error = %e, "tools/list before tools/call failed");
                }
            }
            let options = RequestOptions::default().on_progress(|update| {
                let total = update.total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = update.message.unwrap_or_default();
                tracing::info!(target: "junction::call", "progress {}{total} {message}", update.progress);
            });
            return tool_outcome(client.call_tool(params, options).await);
        }
        Request::ListResources => {
            encode(client.list_resources().await.map(|r| keyed("resources", r)))
        }
        Request::ListResourceTemplates => encode(
            client
                .list_resource_templates()
                .await
                .map(|t| keyed("resourceTemplates", t)),
        ),
        Request::ReadResource(uri) => encode(client.read_resource(&uri).await),
        Request::ListPrompts => encode(client.list_prompts().await.map(|p| keyed("prompts", p))),
        Request::GetPrompt(params) => encode(client.get_prompt(params).await),
        Request::Complete(params) => encode(client.complete(params).await),
        Request::SetLevel(level) => encode(client.set_level(level).await.map(|()| Map::new())),
        Request::CallToolAsTask(params, ttl) => return call_as_task(client, params, ttl).await,
        Request::ListTasks => encode(client.list_tasks().await.map(|t| keyed("tasks", t))),
        Request::GetTask(id) => encode(client.get_task(&id).await),
        Request::TaskResult(id) => {
            let result = client.task_result(&id).await;
            return tool_outcome(result);
        }
        Request::CancelTask(id) => encode(client.cancel_task(&id).await),
    };
    Ok(match encoded? {
        Ok(value) => Outcome::Result(value),
        Err(error) => Outcome::RpcError(error),
    })
}

/// A tool's result: `isError` is its own outcome.
fn tool_outcome(
    result: Result<junction_protocol::tools::CallToolResult, RequestError>,
) -> anyhow::Result<Outcome> {
    let is_error = matches!(&result, Ok(r) if r.is_error == Some(true));
    Ok(match encode(result)? {
        Ok(value) if is_error => Outcome::ToolError(value),
        Ok(value) => Outcome::Result(value),
        Err(error) => Outcome::RpcError(error),
    })
}

/// `tools/call --task`: prints the task at once, logs its status changes, cancels it on
/// Ctrl-C, and ends with its result.
async fn call_as_task(
    client: &Client,
    params: junction_protocol::tools::CallToolParams,
    ttl: Option<u64>,
) -> anyhow::Result<Outcome> {
    let created = match client
        .call_tool_as_task(params, ttl, RequestOptions::default())
        .await
    {
        Ok(created) => created,
        Err(RequestError::Remote { error, .. }) => return Ok(Outcome::RpcError(error)),
        Err(e) => return Err(e.into()),
    };
    render::print_json(&created)?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let result = client
        .wait_for_task(
            &created.task,
            |task| {
                let message = task.status_message.as_deref().unwrap_or("");
                tracing::info!(target: "junction::call", task = %task.task_id, "task {} {message}", task.status);
            },
            Some(cancel),
        )
        .await;
    watcher.abort();
    tool_outcome(result)
}

/// A listing with every page merged, under the result's member name.
fn keyed<T>(key: &'static str, items: Vec<T>) -> BTreeMap<&'static str, Vec<T>> {
    BTreeMap::from([(key, items)])
}

/// A result as JSON, or the server's JSON-RPC error; any other failure is an error.
fn encode<T: Serialize>(
    result: Result<T, RequestError>,
) -> anyhow::Result<Result<Value, ErrorObject>> {
    match result {
        Ok(value) => serde_json::to_value(&value)
            .map(Ok)
            .map_err(|e| anyhow!("could not encode the result: {e}")),
        Err(RequestError::Remote { error, .. }) => Ok(Err(error)),
        Err(e) => Err(e.into()),
    }
}

async fn stop(process: &mut ChildProcess) -> Option<std::process::ExitStatus> {
    match process.shutdown(ShutdownTimeouts::default()).await {
        Ok(status) => {
            tracing::debug!(%status, "the server exited");
            Some(status)
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not stop the server");
            None
        }
    }
}

/// Adds how the server ended and its last stderr lines to an error about a lost connection.
fn explain(
    error: anyhow::Error,
    process: &ChildProcess,
    status: Option<std::process::ExitStatus>,
) -> anyhow::Error {
    let mut detail = String::new();
    if let Some(status) = status {
        detail.push_str(&format!("the server exited ({status})"));
    }
    let tail = process.stderr_tail();
    if !tail.is_empty() {
        detail.push_str("; its last stderr lines:\n  ");
        detail.push_str(&tail.join("\n  "));
    }
    if detail.is_empty() {
        error
    } else {
        anyhow!("{error}; {detail}")
    }
}
