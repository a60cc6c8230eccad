//! Turns `junction call`'s flags into one typed request, refusing flags that are missing or
//! that the chosen method does not use.

use std::collections::BTreeMap;

use junction_protocol::completion::{CompleteParams, CompletionRef};
use junction_protocol::logging::LoggingLevel;
use junction_protocol::prompts::GetPromptParams;
use junction_protocol::tools::CallToolParams;
use serde_json::{Map, Value};

use super::{CallArgs, Method};

/// One request `junction call` can make.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Print the server's `initialize` result (the handshake is always made).
    Initialize,
    /// `ping`.
    Ping,
    /// `tools/list`, every page.
    ListTools,
    /// `tools/call`.
    CallTool(CallToolParams),
    /// `resources/list`, every page.
    ListResources,
    /// `resources/templates/list`, every page.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource(String),
    /// `prompts/list`, every page.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt(GetPromptParams),
    /// `completion/complete`.
    Complete(CompleteParams),
    /// `logging/setLevel`.
    SetLevel(LoggingLevel),
    /// `tools/call` as a task, with the ttl to ask for.
    CallToolAsTask(CallToolParams, Option<u64>),
    /// `tasks/list`, every page.
    ListTasks,
    /// `tasks/get`.
    GetTask(String),
    /// `tasks/result`.
    TaskResult(String),
    /// `tasks/cancel`.
    CancelTask(String),
}

/// Which flags carry a method's details, and the methods that use each.
const DETAIL_FLAGS: &[(&str, &[Method])] = &[
    ("--tool", &[Method::ToolsCall]),
    ("--uri", &[Method::ResourcesRead]),
    ("--prompt", &[Method::PromptsGet]),
    (
        "--arg",
        &[
            Method::ToolsCall,
            Method::PromptsGet,
            Method::CompletionComplete,
        ],
    ),
    (
        "--args",
        &[
            Method::ToolsCall,
            Method::PromptsGet,
            Method::CompletionComplete,
        ],
    ),
    ("--ref", &[Method::CompletionComplete]),
    ("--arg-name", &[Method::CompletionComplete]),
    ("--arg-value", &[Method::CompletionComplete]),
    ("--level", &[Method::LoggingSetLevel]),
    ("--task", &[Method::ToolsCall]),
    (
        "--task-id",
        &[Method::TasksGet, Method::TasksResult, Method::TasksCancel],
    ),
];

/// Builds the request, or says which flag is wrong.
pub fn build(args: &CallArgs) -> Result<Request, String> {
    check_flags(args)?;
    let require = |value: &Option<String>, flag: &str, what: &str| {
        value
            .clone()
            .ok_or_else(|| format!("--method {} needs {flag} {what}", args.method.name()))
    };
    Ok(match args.method {
        Method::Initialize => Request::Initialize,
        Method::Ping => Request::Ping,
        Method::ToolsList => Request::ListTools,
        Method::ToolsCall => {
            let mut params = CallToolParams::new(require(&args.tool, "--tool", "NAME")?);
            params.arguments = Some(json_arguments(args)?);
            if args.task {
                Request::CallToolAsTask(params, args.ttl)
            } else {
                Request::CallTool(params)
            }
        }
        Method::TasksList => Request::ListTasks,
        Method::TasksGet => Request::GetTask(require(&args.task_id, "--task-id", "ID")?),
        Method::TasksResult => Request::TaskResult(require(&args.task_id, "--task-id", "ID")?),
        Method::TasksCancel => Request::CancelTask(require(&args.task_id, "--task-id", "ID")?),
        Method::ResourcesList => Request::ListResources,
        Method::ResourcesTemplatesList => Request::ListResourceTemplates,
        Method::ResourcesRead => Request::ReadResource(require(&args.uri, "--uri", "URI")?),
        Method::PromptsList => Request::ListPrompts,
        Method::PromptsGet => {
            let mut params = GetPromptParams::new(require(&args.prompt, "--prompt", "NAME")?);
            let arguments = string_arguments(args)?;
            params.arguments = (!arguments.is_empty()).then_some(arguments);
            Request::GetPrompt(params)
        }
        Method::CompletionComplete => {
            let reference = parse_ref(&require(
                &args.reference,
                "--ref",
                "prompt:NAME or resource:URI",
            )?)?;
            let name = require(
                &args.arg_name,
                "--arg-name",
                "NAME (the argument being completed)",
            )?;
            let value = args.arg_value.clone().unwrap_or_default();
            let mut params = CompleteParams::new(reference, name, value);
            for (key, value) in string_arguments(args)? {
                params = params.resolved(key, value);
            }
            Request::Complete(params)
        }
        Method::LoggingSetLevel => {
            let level = require(&args.level, "--level", "LEVEL")?;
            Request::SetLevel(level.parse().map_err(|e| format!("--level: {e}"))?)
        }
    })
}

fn check_flags(args: &CallArgs) -> Result<(), String> {
    let given = |flag: &str| match flag {
        "--tool" => args.tool.is_some(),
        "--uri" => args.uri.is_some(),
        "--prompt" => args.prompt.is_some(),
        "--arg" => !args.arg.is_empty(),
        "--args" => args.args.is_some(),
        "--ref" => args.reference.is_some(),
        "--arg-name" => args.arg_name.is_some(),
        "--arg-value" => args.arg_value.is_some(),
        "--level" => args.level.is_some(),
        "--task" => args.task,
        "--task-id" => args.task_id.is_some(),
        _ => false,
    };
    for (flag, methods) in DETAIL_FLAGS {
        if given(flag) && !methods.contains(&args.method) {
            let users: Vec<&str> = methods.iter().map(|m| m.name()).collect();
            return Err(format!(
                "{flag} is not used by --method {}; it goes with --method {}",
                args.method.name(),
                users.join(" or ")
            ));
        }
    }
    Ok(())
}

/// Tool arguments: `--args` first, then each `--arg` (a value that parses as JSON is sent as
/// that JSON, anything else as a string).
fn json_arguments(args: &CallArgs) -> Result<Map<String, Value>, String> {
    let mut map = args_object(args)?;
    for (key, value) in &args.arg {
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.clone()));
        map.insert(key.clone(), value);
    }
    Ok(map)
}

/// Prompt and completion arguments are strings: `--args` members that are not strings are
/// sent as their JSON text, `--arg` values as written.
fn string_arguments(args: &CallArgs) -> Result<BTreeMap<String, String>, String> {
    let mut map: BTreeMap<String, String> = args_object(args)?
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(s) => (key, s),
            other => (key, other.to_string()),
        })
        .collect();
    for (key, value) in &args.arg {
        map.insert(key.clone(), value.clone());
    }
    Ok(map)
}

fn args_object(args: &CallArgs) -> Result<Map<String, Value>, String> {
    match &args.args {
        None => Ok(Map::new()),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!("--args must be a JSON object, not {other}")),
            Err(e) => Err(format!("--args is not valid JSON ({e}): {text}")),
        },
    }
}

fn parse_ref(text: &str) -> Result<CompletionRef, String> {
    match text.split_once(':') {
        Some(("prompt", name)) if !name.is_empty() => Ok(CompletionRef::prompt(name)),
        Some(("resource", uri)) if !uri.is_empty() => Ok(CompletionRef::resource(uri)),
        _ => Err(format!(
            "--ref must be prompt:NAME or resource:URI (a template), not {text:?}"
        )),
    }
}

/// Parses `KEY=VALUE` (for `--arg` and `--env`); the value may contain `=`.
pub fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: CallArgs,
    }

    fn build_from(flags: &[&str]) -> Result<Request, String> {
        let argv = ["junction-call"]
            .iter()
            .chain(flags)
            .chain(&["--", "server"]);
        let wrapper = Wrapper::try_parse_from(argv).map_err(|e| e.to_string())?;
        build(&wrapper.args)
    }

    #[test]
    fn arg_values_that_parse_as_json_are_json_and_override_args() {
        let Request::CallTool(params) = build_from(&[
            "--method",
            "tools/call",
            "--tool",
            "t",
            "--args",
            r#"{"a": 1, "keep": [true]}"#,
            "--arg",
            "a=2",
            "--arg",
            "s=hello world",
            "--arg",
            r#"q="5""#,
            "--arg",
            "eq=x=y",
        ])
        .unwrap() else {
            panic!("not a tools/call")
        };
        assert_eq!(params.name, "t");
        assert_eq!(
            Value::Object(params.arguments.unwrap()),
            json!({"a": 2, "keep": [true], "s": "hello world", "q": "5", "eq": "x=y"})
        );
    }

    #[test]
    fn a_call_without_arguments_sends_an_empty_object() {
        let Request::CallTool(params) =
            build_from(&["--method", "tools/call", "--tool", "t"]).unwrap()
        else {
            panic!("not a tools/call")
        };
        assert_eq!(params.arguments, Some(Map::new()));
    }

    #[test]
    fn prompt_arguments_are_strings() {
        let Request::GetPrompt(params) = build_from(&[
            "--method",
            "prompts/get",
            "--prompt",
            "p",
            "--args",
            r#"{"n": 5, "s": "x"}"#,
            "--arg",
            "m=7",
        ])
        .unwrap() else {
            panic!("not a prompts/get")
        };
        let expected: BTreeMap<String, String> = [("m", "7"), ("n", "5"), ("s", "x")]
            .map(|(k, v)| (k.into(), v.into()))
            .into();
        assert_eq!(params.arguments, Some(expected));
        let Request::GetPrompt(bare) =
            build_from(&["--method", "prompts/get", "--prompt", "p"]).unwrap()
        else {
            panic!("not a prompts/get")
        };
        assert_eq!(bare.arguments, None);
    }

    #[test]
    fn completion_takes_a_ref_an_argument_and_context() {
        let request = build_from(&[
            "--method",
            "completion/complete",
            "--ref",
            "resource:test://template/{id}/data",
            "--arg-name",
            "id",
            "--arg-value",
            "1",
            "--arg",
            "other=x",
        ])
        .unwrap();
        assert_eq!(
            request,
            Request::Complete(
                CompleteParams::new(
                    CompletionRef::resource("test://template/{id}/data"),
                    "id",
                    "1"
                )
                .resolved("other", "x")
            )
        );
        let prompt = build_from(&[
            "--method",
            "completion/complete",
            "--ref",
            "prompt:greet",
            "--arg-name",
            "name",
        ])
        .unwrap();
        assert_eq!(
            prompt,
            Request::Complete(CompleteParams::new(
                CompletionRef::prompt("greet"),
                "name",
                ""
            ))
        );
    }

    #[test]
    fn missing_required_flags_are_named() {
        let cases: [(&[&str], &str); 6] = [
            (
                &["--method", "tools/call"],
                "--method tools/call needs --tool NAME",
            ),
            (
                &["--method", "resources/read"],
                "--method resources/read needs --uri URI",
            ),
            (
                &["--method", "prompts/get"],
                "--method prompts/get needs --prompt NAME",
            ),
            (
                &["--method", "completion/complete", "--arg-name", "a"],
                "--method completion/complete needs --ref prompt:NAME or resource:URI",
            ),
            (
                &["--method", "completion/complete", "--ref", "prompt:p"],
                "--method completion/complete needs --arg-name NAME (the argument being completed)",
            ),
            (
                &["--method", "logging/setLevel"],
                "--method logging/setLevel needs --level LEVEL",
            ),
        ];
        for (flags, message) in cases {
            assert_eq!(build_from(flags).unwrap_err(), message, "{flags:?}");
        }
    }

    #[test]
    fn flags_the_method_does_not_use_are_refused() {
        assert_eq!(
            build_from(&["--method", "tools/list", "--tool", "t"]).unwrap_err(),
            "--tool is not used by --method tools/list; it goes with --method tools/call"
        );
        assert_eq!(
            build_from(&["--method", "ping", "--arg", "a=1"]).unwrap_err(),
            "--arg is not used by --method ping; it goes with --method tools/call or prompts/get or completion/complete"
        );
    }

    #[test]
    fn malformed_values_are_explained() {
        assert_eq!(
            build_from(&["--method", "tools/call", "--tool", "t", "--args", "[1]"]).unwrap_err(),
            "--args must be a JSON object, not [1]"
        );
        assert!(
            build_from(&["--method", "tools/call", "--tool", "t", "--args", "{"])
                .unwrap_err()
                .starts_with("--args is not valid JSON")
        );
        assert_eq!(
            build_from(&[
                "--method",
                "completion/complete",
                "--ref",
                "tool:x",
                "--arg-name",
                "a"
            ])
            .unwrap_err(),
            "--ref must be prompt:NAME or resource:URI (a template), not \"tool:x\""
        );
        let bad_arg =
            build_from(&["--method", "tools/call", "--tool", "t", "--arg", "novalue"]).unwrap_err();
        assert!(
            bad_arg.contains("expected KEY=VALUE, got \"novalue\""),
            "{bad_arg}"
        );
    }

    #[test]
    fn levels_and_versions_come_from_the_protocol_lists() {
        assert_eq!(
            build_from(&["--method", "logging/setLevel", "--level", "warning"]).unwrap(),
            Request::SetLevel(LoggingLevel::Warning)
        );
        let bad = build_from(&["--method", "logging/setLevel", "--level", "loud"]).unwrap_err();
        assert!(bad.contains("[possible values: debug, info, notice, warning, error, critical, alert, emergency]"), "{bad}");
        let unknown =
            build_from(&["--method", "ping", "--protocol-version", "2025-01-01"]).unwrap_err();
        assert!(
            unknown.contains(
                "[possible values: auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05]"
            ),
            "{unknown}"
        );
    }
}
