//! `junction run` as scripts use it: the message on stdin, JSON output, a turn limit,
//! rules for one run, and exit codes that say what happened.

use junction_test_support::cli;
use junction_test_support::hostile::{tool, Hostile};
use junction_test_support::process::Run;
use serde_json::{json, Value};

fn calls_then_answer(calls: usize) -> Value {
    let mut script: Vec<Value> = (0..calls)
        .map(|i| json!({"toolCalls": [{"id": format!("c{i}"), "name": "lib__work", "arguments": {"n": i}}]}))
        .collect();
    script.push(json!({"text": "All done."}));
    Value::Array(script)
}

/// `junction run` against a server `lib` with one tool `work`, `script` as the model.
fn run(server: &Hostile, script: Value, args: &[&str], stdin: &str) -> Run {
    server.write("tools.json", &json!([tool("work", "Works.")]));
    let config = server.path("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"lib": server.entry()}}).to_string(),
    )
    .unwrap();
    let model = server.path("model.json");
    std::fs::write(&model, script.to_string()).unwrap();
    Run::of(
        cli::host_command(&server.path("config"))
            .args(["run", "--config", config.to_str().unwrap()])
            .arg("--model")
            .arg(format!("scripted:{}", model.display()))
            .args(args)
            .env("XDG_DATA_HOME", server.path("data")),
        Some(stdin),
    )
}

#[test]
fn the_message_comes_from_stdin_and_json_output_holds_every_call() {
    let server = Hostile::new("run-json");
    let run = run(
        &server,
        calls_then_answer(1),
        &["--allow", "lib__work", "--output-format", "json"],
        "Please work\n",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("you: Please work"), "{}", run.stderr);
    let out = run.json();
    assert_eq!(out["text"], "All done.");
    assert_eq!(out["stop"], "answered");
    assert_eq!(out["exitCode"], 0);
    assert_eq!(
        out["toolCalls"],
        json!([{"id": "c0", "server": "lib", "tool": "work", "arguments": {"n": 0},
                "consent": "notAsked", "isError": false, "result": "ok"}])
    );
}

#[test]
fn stream_json_writes_one_event_per_line_then_the_summary() {
    let server = Hostile::new("run-stream");
    let run = run(
        &server,
        calls_then_answer(1),
        &["--yes", "--output-format", "stream-json", "go"],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    for kind in [
        "serverStatus",
        "toolCallStarted",
        "consentAsked",
        "consentAnswered",
        "toolCallFinished",
        "text",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    let last = lines.last().unwrap();
    assert_eq!(last["text"], "All done.");
    assert_eq!(last["toolCalls"][0]["consent"], "allowOnce");
}

#[test]
fn max_turns_cuts_the_turn_with_its_own_exit_code() {
    let server = Hostile::new("run-max-turns");
    let run = run(
        &server,
        calls_then_answer(5),
        &["--yes", "--max-turns", "2", "go"],
        "",
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("used all 2 steps"), "{}", run.stderr);
    assert_eq!(server.received_method("tools/call").len(), 2);
}

#[test]
fn every_call_denied_has_its_own_exit_code_and_deny_beats_yes() {
    let server = Hostile::new("run-denied");
    let run = run(
        &server,
        calls_then_answer(1),
        &["--yes", "--deny", "lib__*", "go"],
        "",
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert_eq!(run.stdout, "All done.\n");
    assert!(server.received_method("tools/call").is_empty());
    let nobody = Hostile::new("run-nobody");
    let run = self::run(&nobody, calls_then_answer(1), &["go"], "");
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("nobody was there to ask"),
        "{}",
        run.stderr
    );
}

#[test]
fn no_message_at_all_is_a_usage_error() {
    let server = Hostile::new("run-empty");
    let run = run(&server, calls_then_answer(0), &[], "  \n");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no message"), "{}", run.stderr);
}
