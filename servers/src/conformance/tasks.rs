//! The fixtures of the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) that the
//! conformance suite 0.2.0-alpha.12 calls: a tool that never runs as a task, tools that may
//! or must, one whose task waits for the user, one that asks twice at once, one that fails,
//! one whose handler crashes, and one that asks first (a multi round-trip request) and
//! then runs on as a task.
//!
//! The server decides which calls become tasks (see `junction::server::task`): a handler
//! still running after its first poll does, so the fixtures that must wait for input as a
//! task first do a little work (the item is looked up) before they ask.

use std::time::Duration;

use junction::server::task::TaskSupport;
use junction::server::{tool, Context, ToolDef};
use junction_protocol::tools::CallToolResult;

use super::rounds::{answered, failed, form, no_arguments};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Compute {
    /// How long the computation takes, in seconds (0: at once).
    #[serde(default)]
    seconds: u64,
    /// A label the result repeats.
    #[serde(default)]
    label: Option<String>,
}

/// The short work the input-asking fixtures do before they ask.
const LOOKUP: Duration = Duration::from_millis(50);

async fn greet(_: Context, args: Greeting) -> String {
    format!("Hello, {}!", args.name)
}

async fn slow_compute(_: Context, args: Compute) -> String {
    let seconds = args.seconds.min(3600);
    if seconds > 0 {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
    }
    let label = args.label.unwrap_or_else(|| "computation".to_owned());
    format!("{label}: done after {seconds} s")
}

async fn failing_job(_: Context, _: NoArguments) -> CallToolResult {
    tokio::time::sleep(Duration::from_secs(1)).await;
    CallToolResult::error("The job failed: the simulated backend reported an error")
}

/// Its handler panics: the framework fails the task with a JSON-RPC error (-32603).
async fn protocol_error_job(_: Context, _: NoArguments) -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("protocol_error_job crashes on purpose, to show a task failing with a protocol error")
}

async fn confirm_delete(context: Context, _: NoArguments) -> Result<String, String> {
    tokio::time::sleep(LOOKUP).await;
    let confirm = context
        .input_key("confirm")
        .elicit(form("Delete the item? Answer yes to confirm", "confirm"))
        .await
        .map_err(failed)?;
    Ok(format!(
        "Deletion answer: {}",
        answered(&confirm, "confirm")
    ))
}

async fn multi_input(context: Context, _: NoArguments) -> Result<String, String> {
    tokio::time::sleep(LOOKUP).await;
    let (one, two) = (context.input_key("first"), context.input_key("second"));
    let (first, second) = tokio::join!(
        one.elicit(form("What is the first value?", "value")),
        two.elicit(form("What is the second value?", "value")),
    );
    Ok(format!(
        "first: {}; second: {}",
        answered(&first.map_err(failed)?, "value"),
        answered(&second.map_err(failed)?, "value")
    ))
}

/// Asks the user's name as a multi round-trip request, then runs on as a task (it must).
async fn with_task(context: Context, _: NoArguments) -> Result<String, String> {
    let name = context
        .input_key("user_name")
        .elicit(form("What is your name?", "name"))
        .await
        .map_err(failed)?;
    Ok(format!(
        "Hello, {}! (gathered before the task)",
        answered(&name, "name")
    ))
}

/// Every tool of this module.
pub fn tools() -> Vec<ToolDef> {
    vec![
        tool("greet", greet).description("Greets by name, at once (never a task)"),
        tool("slow_compute", slow_compute)
            .description("Computes for `seconds` seconds; may run as a task")
            .task_support(TaskSupport::Optional),
        no_arguments(
            tool("failing_job", failing_job),
            "Fails after a second with a tool error; always a task",
        )
        .task_support(TaskSupport::Required),
        no_arguments(
            tool("protocol_error_job", protocol_error_job),
            "Crashes, so its task fails with a protocol error; always a task",
        )
        .task_support(TaskSupport::Required),
        no_arguments(
            tool("confirm_delete", confirm_delete),
            "Looks the item up, then asks for a confirmation; may run as a task",
        )
        .task_support(TaskSupport::Optional),
        no_arguments(
            tool("multi_input", multi_input),
            "Asks for two values at once; may run as a task",
        )
        .task_support(TaskSupport::Optional),
        no_arguments(
            tool("test_tool_with_task", with_task),
            "Asks the user's name first, then runs as a task",
        )
        .task_support(TaskSupport::Required),
    ]
}
