//! A server that dies in the middle of a chat: the call in flight becomes a tool error, the
//! chat goes on, `/servers` shows the server stopped with its last stderr lines, and the
//! server comes back (by `/restart NAME`, or by itself on the next call to it). The server
//! is the hostile shell script of the host's tests, crashing on its first `tools/call`.

use junction_test_support::cli;
use junction_test_support::hostile::{tool, Hostile};
use junction_test_support::process::Run;
use serde_json::{json, Value};

/// A script in which the model calls `flaky__work` `calls` times, one turn each, and
/// answers after each call.
fn calling(calls: usize) -> Value {
    let mut turns = Vec::new();
    for n in 1..=calls {
        turns.push(json!({"toolCalls": [{"name": "flaky__work", "arguments": {"n": n}}]}));
        turns.push(json!({"text": format!("answer {n}")}));
    }
    Value::Array(turns)
}

/// `junction chat --yes --no-save` against `server` (called `flaky`), with `input` piped.
fn chat(server: &Hostile, script: Value, input: &str) -> Run {
    chat_with(server, json!({"flaky": server.entry()}), script, input)
}

/// `junction chat --yes --no-save` with `servers` as the config's `mcpServers`, the model
/// playing `script`, and `input` piped; its files live in `server`'s directory.
fn chat_with(server: &Hostile, servers: Value, script: Value, input: &str) -> Run {
    let config = server.path("config.json");
    std::fs::write(&config, json!({ "mcpServers": servers }).to_string()).unwrap();
    let model = server.path("model.json");
    std::fs::write(&model, script.to_string()).unwrap();
    let model = format!("scripted:{}", model.display());
    Run::of(
        cli::host_command(&server.dir)
            .args(["chat", "--yes", "--no-save", "--config"])
            .arg(&config)
            .args(["--model", &model])
            .env("XDG_DATA_HOME", &server.dir)
            .env("XDG_STATE_HOME", &server.dir)
            .env("NO_COLOR", "1"),
        Some(input),
    )
}

fn flaky(name: &str) -> Hostile {
    let server = Hostile::new(name);
    server.write("tools.json", &json!([tool("work", "Does some work")]));
    std::fs::write(server.path("die"), "fatal: the worker ran out of memory\n").unwrap();
    server
}

/// The position of the first line after `after` that starts with `prefix`.
#[track_caller]
fn position(run: &Run, prefix: &str, after: usize) -> usize {
    run.stdout
        .lines()
        .enumerate()
        .skip(after)
        .find(|(_, l)| l.starts_with(prefix))
        .map(|(i, _)| i)
        .unwrap_or_else(|| {
            panic!(
                "no line starting {prefix:?} after line {after}; exit {}\nstdout:\n{}\nstderr:\n{}",
                run.code, run.stdout, run.stderr
            )
        })
}

#[test]
fn a_server_that_dies_mid_call_is_shown_stopped_and_comes_back_with_restart() {
    let server = flaky("restart");
    let input = "crash it\n/servers\n/mcp\n/restart flaky\n/servers\nagain\n/quit\n";
    let run = chat(&server, calling(2), input);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    // The call in flight came back to the model as an error, and the model went on.
    let crashed = position(
        &run,
        "← flaky.work error: The server `flaky` stopped while this call was running",
        0,
    );
    run.assert_line("assistant: answer 1");
    // `/servers` says it stopped, why, and what it wrote last.
    let listed = position(
        &run,
        "  flaky: stopped: its process exited with status 1",
        crashed,
    );
    run.assert_line("    | fatal: the worker ran out of memory");
    // So does `/mcp`, with how to start it again.
    let status = position(
        &run,
        "    stopped: its process exited with status 1 (/restart flaky starts it again)",
        listed,
    );
    // `/restart` starts it again, and says so.
    let restarted = position(&run, "server flaky: ready (1 tool", status);
    let relisted = position(
        &run,
        "  flaky: hostile 1.0.0 (protocol 2025-11-25)",
        restarted,
    );
    // The next call reaches the new process and succeeds.
    position(&run, "← flaky.work ok: ok", relisted);
    run.assert_line("assistant: answer 2");
    assert_eq!(server.received_method("initialize").len(), 2);
    assert_eq!(server.received_method("tools/call").len(), 2);
}

#[test]
fn a_stopped_server_is_started_again_on_the_next_call_to_it() {
    let server = flaky("next-call");
    let run = chat(&server, calling(2), "crash it\nagain\n/quit\n");
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let crashed = position(
        &run,
        "← flaky.work error: The server `flaky` stopped while this call was running",
        0,
    );
    let stopped = position(
        &run,
        "server flaky: stopped: its process exited with status 1",
        0,
    );
    let restarted = position(&run, "server flaky: ready (1 tool", crashed.max(stopped));
    position(&run, "← flaky.work ok: ok", restarted);
    run.assert_line("assistant: answer 2");
    assert_eq!(server.received_method("initialize").len(), 2);
}

#[test]
fn a_server_that_failed_to_start_is_started_with_restart() {
    let server = Hostile::new("late");
    server.write("tools.json", &json!([tool("work", "Does some work")]));
    // Its first start fails (the database is not up yet); the next one works.
    let tried = server.path("tried");
    let script = server.path("server.sh");
    let command = format!(
        "if [ -f '{}' ]; then exec sh '{}'; fi; touch '{0}'; echo 'the database is not up yet' >&2; exit 3",
        tried.display(),
        script.display()
    );
    let run = chat_with(
        &server,
        json!({"late": {"command": "sh", "args": ["-c", command]}}),
        json!([{"toolCalls": [{"name": "late__work", "arguments": {}}]}, {"text": "worked"}]),
        "/restart late\nwork\n/servers\n/quit\n",
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let failed = position(&run, "server late: failed to start:", 0);
    run.assert_line("  | the database is not up yet");
    let restarted = position(&run, "restarted late", failed);
    position(&run, "← late.work ok: ok", restarted);
    run.assert_line("assistant: worked");
    position(
        &run,
        "  late: hostile 1.0.0 (protocol 2025-11-25)",
        restarted,
    );
    assert!(
        !run.stdout.contains("servers that did not start:"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_restart_that_fails_leaves_the_server_stopped_saying_why() {
    let server = flaky("no-second-start");
    let tried = server.path("tried");
    let command = format!(
        "if [ -f '{}' ]; then echo 'the port is still taken' >&2; exit 4; fi; touch '{0}'; exec sh '{}'",
        tried.display(),
        server.path("server.sh").display()
    );
    let run = chat_with(
        &server,
        json!({"flaky": {"command": "sh", "args": ["-c", command]}}),
        calling(1),
        "crash it\n/restart flaky\n/servers\n/quit\n",
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let crashed = position(&run, "← flaky.work error: The server `flaky` stopped", 0);
    let refused = position(&run, "error: server `flaky` did not start: ", crashed);
    let listed = position(
        &run,
        "  flaky: stopped: it could not be started again: ",
        refused,
    );
    assert!(
        run.stdout.lines().nth(listed).unwrap().contains("status 4"),
        "{}",
        run.stdout
    );
    position(&run, "    | the port is still taken", listed);
}

#[test]
fn a_run_whose_server_stops_goes_on_then_fails_naming_it() {
    let server = flaky("run");
    let config = server.path("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"flaky": server.entry()}}).to_string(),
    )
    .unwrap();
    let model = server.path("model.json");
    std::fs::write(&model, calling(1).to_string()).unwrap();
    let run = Run::of(
        cli::host_command(&server.dir)
            .args([
                "run",
                "--yes",
                "--no-save",
                "--output-format",
                "json",
                "--config",
            ])
            .arg(&config)
            .arg("--model")
            .arg(format!("scripted:{}", model.display()))
            .arg("crash it")
            .env("XDG_STATE_HOME", &server.dir),
        None,
    );
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let summary = run.json();
    assert_eq!(summary["text"], "answer 1");
    assert_eq!(summary["stoppedServers"], json!(["flaky"]));
    assert_eq!(summary["failedServers"], json!([]));
    let result = &summary["toolCalls"][0];
    assert!(
        result
            .to_string()
            .contains("stopped while this call was running"),
        "{result}"
    );
    assert!(
        run.stderr
            .contains("junction run: server `flaky` stopped during the run"),
        "{}",
        run.stderr
    );
}
