//! A tool call running as a task when the chat ends is listed by the next chat, which can
//! collect its result into the conversation: `junction chat` against `junction serve library
//! --http` (2026-07-28, whose tasks a new session may collect), the model a script, the chat
//! ended by SIGTERM in the middle of the library's `inventory_report`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use junction_test_support::cli::{self, HttpServe};
use junction_test_support::process::Run;
use serde_json::{json, Value};

/// A fresh directory for the test's config and state, removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).expect("write a test file");
    path.to_string_lossy().into_owned()
}

/// `junction chat` in `dir` (its config and state there too), with `model` playing.
fn chat(dir: &Path, config: &str, model: &str) -> Command {
    let mut command = cli::host_command(dir);
    command
        .args(["chat", "--yes", "--config", config, "--model"])
        .arg(format!("scripted:{model}"))
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    command
}

/// The tasks the ledger file holds now.
fn ledger(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("junction").join("tasks.json")).unwrap_or_default();
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["tasks"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn a_task_left_running_by_an_ended_chat_is_listed_and_collected_by_the_next() {
    let server = HttpServe::start("library", &[]);
    let dir = std::env::temp_dir().join(format!("junction-tasks-left-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let scratch = Scratch(dir);
    let dir = scratch.0.as_path();
    let config = write(
        dir,
        "mcp.json",
        &json!({"mcpServers": {"library": {"type": "http", "url": server.url}}}),
    );
    let stock = write(
        dir,
        "stock.json",
        &json!([
            {"toolCalls": [{"name": "library__inventory_report", "arguments": {}}]},
            {"text": "Counted."}
        ]),
    );

    // The first chat starts the report, then is ended by SIGTERM while the task runs.
    let mut first = chat(dir, &config, &stock)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("junction chat starts");
    let mut stdin = first.stdin.take().expect("stdin is piped");
    stdin
        .write_all(b"Take stock of the library\n")
        .expect("the message is written");
    let deadline = Instant::now() + Duration::from_secs(60);
    while ledger(dir).is_empty() {
        assert!(Instant::now() < deadline, "the task was never written down");
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &first.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let ended = first.wait_with_output().expect("the chat ends");
    drop(stdin);
    assert!(
        String::from_utf8_lossy(&ended.stderr).contains("stopped by SIGTERM"),
        "{}",
        String::from_utf8_lossy(&ended.stderr)
    );
    let left = ledger(dir);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["server"], "library");
    assert_eq!(left[0]["tool"], "inventory_report");
    let task_id = left[0]["taskId"].as_str().expect("a task id").to_owned();

    // The next chats list it, until its server says it is done.
    let quiet = write(dir, "quiet.json", &json!([{"text": "Noted."}]));
    let mut listed = String::new();
    for _ in 0..120 {
        let run = Run::of(&mut chat(dir, &config, &quiet), Some("/tasks\n/quit\n"));
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stdout
                .contains("1 tool call was left running by an earlier chat; /tasks lists it"),
            "{}",
            run.stdout
        );
        listed = run.stdout;
        if listed.contains("done; /tasks collect adds its result") {
            break;
        }
        assert!(listed.contains("still working"), "{listed}");
        std::thread::sleep(Duration::from_millis(250));
    }
    let row = listed
        .lines()
        .find(|l| l.contains("library__inventory_report"))
        .unwrap_or_default();
    assert!(
        row.contains(&format!("task {task_id}")) && row.contains("done;"),
        "{listed}"
    );

    // Collected by the start of its id: the result joins the conversation the model reads.
    let input = format!(
        "/tasks collect {}\nWhat is in stock?\n/quit\n",
        &task_id[..8]
    );
    let run = Run::of(&mut chat(dir, &config, &quiet), Some(&input));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "+ the result of library__inventory_report is in the conversation; the model reads it with your next message"
        ),
        "{}",
        run.stdout
    );
    assert!(ledger(dir).is_empty(), "collected tasks are forgotten");
    let saved = std::fs::read_dir(dir.join("junction").join("conversations"))
        .expect("the conversation was saved")
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .find(|text| text.contains("What is in stock?"))
        .expect("the conversation with the collected result");
    assert!(
        saved.contains("left running in an earlier chat answered:\\nInventory of"),
        "{saved}"
    );

    let run = Run::of(&mut chat(dir, &config, &quiet), Some("/tasks\n/quit\n"));
    assert!(
        run.stdout
            .contains("no tool call was left running by an earlier chat"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("left running by an earlier chat;"));
    server.stop();
}
