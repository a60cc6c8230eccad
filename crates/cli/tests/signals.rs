//! Signals to `junction run` and `junction chat`: each runs the specification's shutdown for
//! every server before it exits, so no server process outlives the host, and `run` stops
//! even in the middle of a tool call (which is cancelled on its server).

use std::process::{Child, Command, Stdio};

use junction_test_support::cli;
use junction_test_support::hostile::{alive, tool, Hostile};
use serde_json::json;

/// `junction COMMAND` against `servers`, with a model that calls `slow__work` and a stdin
/// left open.
fn start(command: &str, servers: &[&Hostile], extra: &[&str]) -> Child {
    let first = servers[0];
    let entries: serde_json::Map<String, serde_json::Value> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                if i == 0 {
                    "slow".to_owned()
                } else {
                    format!("other{i}")
                },
                s.entry(),
            )
        })
        .collect();
    let config = first.path("config.json");
    std::fs::write(&config, json!({"mcpServers": entries}).to_string()).unwrap();
    let model = first.path("model.json");
    std::fs::write(
        &model,
        json!([
            {"toolCalls": [{"id": "1", "name": "slow__work", "arguments": {}}]},
            {"text": "finished"}
        ])
        .to_string(),
    )
    .unwrap();
    let model = format!("scripted:{}", model.display());
    cli::host_command(&first.path("config"))
        .args([
            command,
            "--config",
            config.to_str().unwrap(),
            "--model",
            &model,
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start junction")
}

fn signal(child: &Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(sent, "could not send SIG{name}");
}

fn hanging(name: &str) -> Hostile {
    let server = Hostile::new(name);
    server.write("tools.json", &json!([tool("work", "Works for ever.")]));
    std::fs::write(server.path("hang"), "").unwrap();
    server
}

#[test]
fn run_stops_on_sigint_during_a_tool_call_and_leaves_no_server_behind() {
    let slow = hanging("run-sigint");
    let other = Hostile::new("run-sigint-other");
    let mut child = start("run", &[&slow, &other], &["--yes", "work"]);
    let _stdin = child.stdin.take();
    slow.wait_for("tools/call");
    let pids = [slow.pid().unwrap(), other.pid().unwrap()];
    signal(&child, "INT");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "stderr:\n{stderr}");
    assert!(
        stderr.contains("stopped by SIGINT; every server was shut down"),
        "{stderr}"
    );
    for pid in pids {
        assert!(!alive(pid), "server {pid} outlived junction run");
    }
    let cancelled = slow.received_method("notifications/cancelled");
    assert_eq!(cancelled.len(), 1, "{:?}", slow.received());
}

#[test]
fn chat_shuts_every_server_down_on_sigterm_sighup_and_sigint() {
    for (name, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let slow = hanging(&format!("chat-{name}"));
        let other = Hostile::new(&format!("chat-{name}-other"));
        let mut child = start("chat", &[&slow, &other], &[]);
        // Kept open: the end of input would end the chat by itself.
        let _stdin = child.stdin.take();
        slow.wait_for("tools/list");
        other.wait_for("tools/list");
        let pids = [slow.pid().unwrap(), other.pid().unwrap()];
        signal(&child, name);
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(code),
            "SIG{name}; stderr:\n{stderr}"
        );
        for pid in pids {
            assert!(
                !alive(pid),
                "server {pid} outlived junction chat after SIG{name}"
            );
        }
    }
}
