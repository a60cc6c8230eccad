//! Servers' log messages in `junction chat`: shown labelled by server and made safe, kept in
//! the server log file under the state directory, and read back with `/logs`. The server is
//! the hostile shell script of the host's tests, logging before it answers a call.

use junction_test_support::cli;
use junction_test_support::hostile::{tool, Hostile};
use junction_test_support::process::Run;
use serde_json::json;

#[test]
fn log_messages_are_shown_safely_kept_in_the_state_dir_and_listed_by_logs() {
    let server = Hostile::new("logs");
    server.write("tools.json", &json!([tool("work", "Works.")]));
    server.write_lines(
        "before-call.jsonl",
        &[json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "error", "logger": "disk", "data": "full\u{1b}[2J"}})],
    );
    let config = server.path("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"noisy": server.entry()}}).to_string(),
    )
    .unwrap();
    let model = server.path("model.json");
    std::fs::write(
        &model,
        json!([{"toolCalls": [{"name": "noisy__work", "arguments": {}}]}, {"text": "done"}])
            .to_string(),
    )
    .unwrap();
    let run = Run::of(
        cli::host_command(&server.dir)
            .args([
                "chat",
                "--yes",
                "--no-save",
                "--log-level",
                "info",
                "--config",
            ])
            .arg(&config)
            .arg("--model")
            .arg(format!("scripted:{}", model.display()))
            .env("XDG_STATE_HOME", &server.dir)
            .env("NO_COLOR", "1"),
        Some("work\n/logs\n/quit\n"),
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let levels: Vec<_> = server
        .received_method("logging/setLevel")
        .into_iter()
        .map(|m| m["params"]["level"].clone())
        .collect();
    assert_eq!(levels, [json!("info")]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines.contains(&r"[noisy/disk error] full\x1b[2J"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
    let file = server.dir.join("junction").join("server.log");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert_eq!(kept.lines().count(), 1, "{kept}");
    assert!(
        kept.trim_end()
            .ends_with(r" noisy error [disk] full\x1b[2J"),
        "{kept}"
    );
    let listed = lines
        .iter()
        .position(|l| l.starts_with("server log (") && l.ends_with("), last 1:"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        lines[listed + 1].ends_with(r" noisy error [disk] full\x1b[2J"),
        "{}",
        run.stdout
    );
}

/// `junction.maxServerLog` is the size past which `junction run` sets the file aside: with
/// a bound of one byte, the second message moves the first to `server.log.1`.
#[test]
fn the_server_log_is_set_aside_past_the_configured_size() {
    let server = Hostile::new("logs-bound");
    server.write("tools.json", &json!([tool("work", "Works.")]));
    server.write_lines(
        "before-call.jsonl",
        &[json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "error", "data": "disk full"}})],
    );
    let config = server.path("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"noisy": server.entry()}, "junction": {"maxServerLog": 1}})
            .to_string(),
    )
    .unwrap();
    let model = server.path("model.json");
    let call = json!({"name": "noisy__work", "arguments": {}});
    std::fs::write(
        &model,
        json!([{"toolCalls": [call]}, {"toolCalls": [call]}, {"text": "done"}]).to_string(),
    )
    .unwrap();
    let run = Run::of(
        cli::host_command(&server.dir)
            .args(["run", "--yes", "--no-save", "--config"])
            .arg(&config)
            .arg("--model")
            .arg(format!("scripted:{}", model.display()))
            .arg("work twice")
            .env("XDG_STATE_HOME", &server.dir)
            .env("NO_COLOR", "1"),
        None,
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let dir = server.dir.join("junction");
    for file in ["server.log", "server.log.1"] {
        let kept = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(kept.lines().count(), 1, "{file}: {kept}");
        assert!(
            kept.trim_end().ends_with(" noisy error disk full"),
            "{kept}"
        );
    }
}
