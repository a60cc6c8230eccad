//! End-to-end tests of `junction run` and `junction chat` over real child processes: the
//! conformance server is this very binary (`junction serve conformance`), the model a script.

use std::path::{Path, PathBuf};

use junction_test_support::cli::{self, junction_exe};
use junction_test_support::process::Run;
use serde_json::{json, Value};

/// A fresh directory for one test's files, removed when the test ends.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("junction-chat-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    Scratch(dir)
}

fn write(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).expect("write a test file");
    path.to_string_lossy().into_owned()
}

fn conformance() -> Value {
    json!({"command": junction_exe(), "args": ["serve", "conformance"]})
}

fn broken() -> Value {
    json!({"command": "sh", "args": ["-c", "echo boom >&2; exit 3"]})
}

/// A script that calls `tool` on the conformance server, then answers.
fn calls(tools: &[&str]) -> Value {
    let calls: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": format!("conformance__{t}"), "arguments": {}}))
        .collect();
    json!([{"toolCalls": calls}, {"text": "The tool said hello."}])
}

/// The variables that choose and reach a model provider; tests set them explicitly.
const PROVIDER_VARIABLES: [&str; 4] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
];

/// `junction ARGS` in `dir`, with `input` on stdin.
fn junction_in(dir: &Path, args: &[&str], input: &str) -> Run {
    junction_env(dir, args, input, &[])
}

/// `junction ARGS` in `dir`, with `input` on stdin and only the provider variables in `env`.
fn junction_env(dir: &Path, args: &[&str], input: &str, env: &[(&str, &str)]) -> Run {
    // Answers, pins and user servers stay in the test's directory too.
    let mut command = cli::host_command(&dir.join("config"));
    for variable in PROVIDER_VARIABLES {
        command.env_remove(variable);
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        // Saved conversations stay in the test's directory.
        .env("XDG_DATA_HOME", dir)
        .env_remove("NO_COLOR");
    Run::of(&mut command, Some(input))
}

#[track_caller]
fn assert_lines(run: &Run, expected: &[&str]) {
    assert_lines_in(run, &run.stdout, expected);
}

/// Like [`assert_lines`], in `text` (`run` writes its transcript on stderr).
#[track_caller]
fn assert_lines_in(run: &Run, text: &str, expected: &[&str]) {
    let lines: Vec<&str> = text.lines().collect();
    for line in expected {
        assert!(
            lines.contains(line),
            "line {line:?} missing; exit {}\nstdout:\n{}\nstderr:\n{}",
            run.code,
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn run_calls_a_conformance_tool_and_prints_the_transcript() {
    let dir = scratch("run");
    let config = write(
        &dir,
        "mcp.json",
        &json!({"mcpServers": {"conformance": conformance()}}),
    );
    let script = write(&dir, "script.json", &calls(&["test_simple_text"]));
    let model = format!("scripted:{script}");
    let run = junction_in(
        &dir,
        &[
            "run", "--yes", "--config", &config, "--model", &model, "Say hi",
        ],
        "",
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("server conformance: ready (")),
        "{}",
        run.stderr
    );
    assert_lines_in(
        &run,
        &run.stderr,
        &[
            "you: Say hi",
            "→ call conformance.test_simple_text {}",
            "  not asking: allowed once (--yes)",
            "← conformance.test_simple_text ok: This is a simple text response for testing.",
            "assistant: The tool said hello.",
        ],
    );
    assert_eq!(
        run.stdout, "The tool said hello.\n",
        "stdout holds the answer only"
    );
    assert!(!run.stderr.contains('\x1b'), "no colour on a pipe");
}

#[test]
fn run_denies_calls_that_need_consent_unless_a_rule_allows_them() {
    let dir = scratch("deny");
    let config = write(
        &dir,
        "mcp.json",
        &json!({
            "mcpServers": {"conformance": conformance()},
            "junction": {"policy": {"conformance__test_error_*": "allow"}}
        }),
    );
    let script = write(
        &dir,
        "script.json",
        &calls(&["test_simple_text", "test_error_handling"]),
    );
    let model = format!("scripted:{script}");
    let run = junction_in(
        &dir,
        &["run", "--config", &config, "--model", &model, "Go"],
        "",
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_lines_in(
        &run,
        &run.stderr,
        &[
            "not asking: calls that need consent, sampling and questions are denied (--yes allows calls)",
            "? consent needed for conformance.test_simple_text: `conformance` is not trusted, so its annotations are not believed",
            "  not asking (non-interactive): denied; pass --yes to allow",
            "✗ conformance.test_simple_text was not run: nobody was there to ask",
            "→ call conformance.test_error_handling {}",
            "← conformance.test_error_handling error: This tool intentionally returns an error for testing",
            "assistant: The tool said hello.",
        ],
    );
    assert!(!run
        .stderr
        .contains("consent needed for conformance.test_error_handling"));
}

#[test]
fn a_server_that_exits_at_once_is_reported_with_its_stderr_and_the_run_goes_on() {
    let dir = scratch("broken");
    let config = write(
        &dir,
        "mcp.json",
        &json!({"mcpServers": {"broken": broken(), "conformance": conformance()}}),
    );
    let script = write(&dir, "script.json", &calls(&["test_simple_text"]));
    let model = format!("scripted:{script}");
    let run = junction_in(
        &dir,
        &[
            "run", "--yes", "--config", &config, "--model", &model, "Say hi",
        ],
        "",
    );
    assert_eq!(run.code, 1, "a failed server fails the run\n{}", run.stderr);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("server broken: failed to start:") && l.contains("status 3")),
        "{}",
        run.stderr
    );
    assert_lines_in(
        &run,
        &run.stderr,
        &[
            "  | boom",
            "← conformance.test_simple_text ok: This is a simple text response for testing.",
            "assistant: The tool said hello.",
        ],
    );
    assert!(
        run.stderr.contains("server `broken` did not start"),
        "{}",
        run.stderr
    );
}

#[test]
fn chat_servers_lists_a_server_that_did_not_start_with_its_stderr() {
    let dir = scratch("servers-failed");
    let config = write(
        &dir,
        "mcp.json",
        &json!({"mcpServers": {"broken": broken(), "conformance": conformance()}}),
    );
    let script = write(&dir, "script.json", &json!([{"text": "unused"}]));
    let model = format!("scripted:{script}");
    let chat = junction_in(
        &dir,
        &["chat", "--config", &config, "--model", &model],
        "/servers\n/quit\n",
    );
    assert_eq!(chat.code, 0, "{}", chat.stderr);
    let listing = chat
        .stdout
        .split("> /servers")
        .nth(1)
        .expect("the /servers line is echoed");
    assert!(listing.contains("  conformance: "), "{listing}");
    assert!(listing.contains("servers that did not start:"), "{listing}");
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("  broken: ") && l.contains("status 3")),
        "{listing}"
    );
    assert!(listing.contains("    | boom"), "{listing}");
}

#[test]
fn without_a_usable_model_run_and_chat_say_so_and_fail() {
    let dir = scratch("nomodel");
    for args in [&["run", "hi"][..], &["chat"][..]] {
        let run = junction_in(&dir, args, "");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(
                "no model: pass --model anthropic:MODEL (key in ANTHROPIC_API_KEY), openai:MODEL"
            ),
            "{}",
            run.stderr
        );
    }
    let run = junction_in(&dir, &["run", "--model", "gemini:pro", "hi"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(r#"unknown model provider "gemini" in "gemini:pro"; use anthropic:MODEL"#),
        "{}",
        run.stderr
    );
    let run = junction_in(&dir, &["run", "--model", "claude", "hi"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(r#"the model "claude" is not PROVIDER:SPEC"#),
        "{}",
        run.stderr
    );
    for (model, said) in [
        (
            "anthropic:claude-sonnet-4-5",
            "anthropic needs an API key: set ANTHROPIC_API_KEY",
        ),
        (
            "openai:gpt-4o",
            "openai needs an API key: set OPENAI_API_KEY",
        ),
    ] {
        let run = junction_in(&dir, &["run", "--model", model, "hi"], "");
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(said), "{}", run.stderr);
    }
    let run = junction_in(&dir, &["run", "--model", "scripted:missing.json", "hi"], "");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("could not read the model script missing.json"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_model_failure_fails_the_run() {
    let dir = scratch("modelfail");
    let script = write(&dir, "script.json", &json!([]));
    let model = format!("scripted:{script}");
    let run = junction_in(&dir, &["run", "--model", &model, "hi"], "");
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stderr.contains("the turn failed"), "{}", run.stderr);
}

#[test]
fn chat_reads_piped_commands_and_messages_until_quit() {
    let dir = scratch("chat");
    let config = write(
        &dir,
        "mcp.json",
        &json!({"mcpServers": {"broken": broken(), "conformance": conformance()}}),
    );
    let script = write(&dir, "script.json", &calls(&["test_simple_text"]));
    let model = format!("scripted:{script}");
    let input =
        "/servers\n/tools\n/help\n/conformance:greet\n/nothing\nHello there\n/quit\nnever read\n";
    let run = junction_in(
        &dir,
        &["chat", "--config", &config, "--model", &model],
        input,
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_lines(
        &run,
        &[
            "  | boom",
            // The start counts what there is; the details are behind the commands.
            "35 tools, 5 prompts, 4 resources from 1 server (/tools, /prompts, /resources list them; /servers, /mcp show the servers)",
            "Type a message, /help for commands, /quit to leave.",
            "> /servers",
            "> /tools",
            "tools (as the model sees them):",
            "  conformance__test_simple_text  Tests simple text content response",
            "  /quit                 leave",
            "> /nothing",
            "unknown command /nothing; /help lists the commands",
            "> Hello there",
            "  not asking (non-interactive): denied; pass --yes to allow",
            "✗ conformance.test_simple_text was not run: nobody was there to ask",
            "assistant: The tool said hello.",
            "> /quit",
        ],
    );
    assert!(
        run.stdout.lines().any(|l| l.starts_with(
            "  conformance: mcp-conformance-test-server 1.0.0 (protocol 2026-07-28), "
        )),
        "{}",
        run.stdout
    );
    // The conformance server offers no prompts yet: the command is refused with what it offers.
    assert!(
        run.stdout
            .contains("error: server `conformance` has no prompt `greet`"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("never read"), "{}", run.stdout);
}

#[test]
fn chat_finds_dot_mcp_json_but_starts_its_servers_only_once_approved() {
    let dir = scratch("discovery");
    let script = write(&dir, "script.json", &json!([{"text": "Hi."}]));
    let model = format!("scripted:{script}");
    let config_home = dir.join("config-home");
    let config_home = config_home.to_str().unwrap();
    let env = [("XDG_CONFIG_HOME", config_home)];
    let run = junction_env(&dir, &["chat", "--model", &model], "hello\n", &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_lines(
        &run,
        &[
            "no servers are configured: pass --config FILE, create ./.mcp.json or add one with `junction mcp add`",
            "0 tools, 0 prompts, 0 resources from 0 servers (/tools, /prompts, /resources list them; /servers, /mcp show the servers)",
            "assistant: Hi.",
        ],
    );
    write(
        &dir,
        ".mcp.json",
        &json!({"mcpServers": {"conformance": conformance()}}),
    );
    let run = junction_env(&dir, &["chat", "--model", &model], "/quit\n", &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_lines(
        &run,
        &[
            "config: .mcp.json (project)",
            "skipped server conformance of project file .mcp.json: it is not approved (approve it in `junction chat` on a terminal, or pass --config .mcp.json to use the file as it is)",
        ],
    );
    let run = junction_env(
        &dir,
        &["chat", "--config", ".mcp.json", "--model", &model],
        "/quit\n",
        &env,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("server conformance: ready")),
        "{}",
        run.stdout
    );
}

/// One request the fake API received: its path, `authorization` header and JSON body.
type Received = (String, Option<String>, Value);

/// A local stand-in for an OpenAI-compatible server (as Ollama or llama.cpp serve at
/// `/v1`): it records each request body and answers with the documented Chat Completions
/// shapes, in order.
struct FakeOpenAi {
    base: String,
    received: std::sync::Arc<std::sync::Mutex<Vec<Received>>>,
    _runtime: tokio::runtime::Runtime,
}

impl FakeOpenAi {
    fn start(answers: Vec<Value>) -> FakeOpenAi {
        use std::sync::{Arc, Mutex};
        let runtime = tokio::runtime::Runtime::new().expect("a runtime for the fake API");
        let received = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(std::collections::VecDeque::from(answers)));
        let seen = received.clone();
        let app = axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: String| {
                let seen = seen.clone();
                let answers = answers.clone();
                async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let body: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
                    seen.lock()
                        .unwrap()
                        .push((uri.path().to_owned(), auth, body));
                    match answers.lock().unwrap().pop_front() {
                        Some(answer) => (
                            axum::http::StatusCode::OK,
                            [("content-type", "application/json")],
                            answer.to_string(),
                        ),
                        None => (
                            axum::http::StatusCode::IM_A_TEAPOT,
                            [("content-type", "text/plain")],
                            "the fake API has no answer left".to_owned(),
                        ),
                    }
                }
            },
        );
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind the fake API");
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(listener, app).await });
        FakeOpenAi {
            base,
            received,
            _runtime: runtime,
        }
    }
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1735689600, "model": "llama3.2",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    })
}

#[test]
fn run_with_an_openai_compatible_server_calls_a_tool_and_prints_the_answer() {
    let dir = scratch("openai");
    let api = FakeOpenAi::start(vec![
        completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "conformance__test_simple_text", "arguments": "{}"}}]}),
            "tool_calls",
        ),
        completion(
            json!({"role": "assistant", "content": "The tool said hello."}),
            "stop",
        ),
    ]);
    let config = write(
        &dir,
        "mcp.json",
        &json!({"mcpServers": {"conformance": conformance()}}),
    );
    let run = junction_env(
        &dir,
        &[
            "run",
            "--yes",
            "--config",
            &config,
            "--model",
            "openai:llama3.2",
            "Say hi",
        ],
        "",
        &[("OPENAI_BASE_URL", &api.base)],
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_lines_in(
        &run,
        &run.stderr,
        &[
            "you: Say hi",
            "→ call conformance.test_simple_text {}",
            "← conformance.test_simple_text ok: This is a simple text response for testing.",
            "assistant: The tool said hello.",
        ],
    );
    assert_eq!(run.stdout, "The tool said hello.\n");
    let received = api.received.lock().unwrap().clone();
    assert_eq!(received.len(), 2);
    for (path, auth, body) in &received {
        assert_eq!(path, "/v1/chat/completions");
        assert_eq!(auth, &None, "no key is sent to a local server without one");
        assert_eq!(body["model"], "llama3.2");
        assert_eq!(body["tool_choice"], "auto");
    }
    let first = received[0].2["messages"].as_array().unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0]["role"], "system");
    assert!(
        first[0]["content"]
            .as_str()
            .unwrap()
            .contains("# Instructions from the MCP server `conformance`"),
        "the server's instructions reach the model, labelled: {}",
        first[0]
    );
    assert_eq!(first[1], json!({"role": "user", "content": "Say hi"}));
    assert_eq!(
        received[1].2["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "This is a simple text response for testing."})
    );
}
