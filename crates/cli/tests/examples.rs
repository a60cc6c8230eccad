//! The example servers as real child processes: `junction serve NAME --db FILE --wire-log
//! FILE`, driven by junction's client over stdio.

use std::path::{Path, PathBuf};

use junction::client::{Client, ClientOptions};
use junction::transport::child::{self, ChildProcess, CommandSpec, ShutdownTimeouts};
use junction_protocol::tools::CallToolResult;
use junction_test_support::cli::junction_exe;
use junction_test_support::client::call_unlisted;
use serde_json::{json, Value};

/// A directory of its own for one test's database and wire log.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("junction-examples-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be created");
    dir
}

async fn start(name: &str, db: &Path, log: &Path) -> (Client, ChildProcess) {
    let spec = CommandSpec::new(junction_exe()).args([
        "serve",
        name,
        "--db",
        db.to_str().unwrap(),
        "--wire-log",
        log.to_str().unwrap(),
    ]);
    let (connection, process) =
        child::spawn(&spec, Default::default()).expect("junction serve starts");
    let client = Client::connect(connection, ClientOptions::new("examples-test", "1"))
        .await
        .unwrap_or_else(|e| panic!("the {name} server answers the handshake: {e}"));
    (client, process)
}

async fn stop(client: Client, mut process: ChildProcess) {
    client.close();
    let status = process.shutdown(ShutdownTimeouts::default()).await.unwrap();
    assert!(
        status.success(),
        "the server exits cleanly when stdin closes: {status}"
    );
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().expect("text content")
}

/// The wire log's lines, each parsed as JSON.
fn wire_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("the wire log was written")
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"))
        })
        .collect()
}

/// Checks that the log holds exactly the handshake and then these tool calls, in order.
fn assert_log_holds_exactly(log: &[Value], calls: &[(&str, Value)]) {
    let methods: Vec<&str> = log
        .iter()
        .map(|m| m["method"].as_str().unwrap_or(""))
        .collect();
    let mut expected = vec!["initialize", "notifications/initialized"];
    expected.extend(std::iter::repeat_n("tools/call", calls.len()));
    assert_eq!(methods, expected, "the received messages: {log:#?}");
    for (message, (name, arguments)) in log[2..].iter().zip(calls) {
        assert_eq!(message["params"]["name"], *name);
        assert_eq!(message["params"]["arguments"], *arguments);
    }
    assert_eq!(log[0]["params"]["clientInfo"]["name"], "examples-test");
}

#[tokio::test]
async fn library_fails_a_checkout_verbatim_keeps_its_data_and_logs_what_it_received() {
    let dir = scratch("library");
    let (db, log) = (dir.join("library.db"), dir.join("wire.jsonl"));
    let calls = [
        ("search", json!({"query": "science"})),
        ("checkout", json!({"isbn": "9780000000042"})),
        ("checkout", json!({"isbn": "9780000000011"})),
    ];
    let (client, process) = start("library", &db, &log).await;
    let search = call_unlisted(&client, calls[0].0, calls[0].1.clone()).await;
    let parsed: Value = serde_json::from_str(text(&search)).unwrap();
    assert_eq!(search.structured_content.as_ref(), Some(&parsed));
    assert_eq!(parsed["total"], 5);
    let failed = call_unlisted(&client, calls[1].0, calls[1].1.clone()).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(
        text(&failed),
        "No copies of 'Maps of Small Rivers' are available. Search for another title."
    );
    let ok = call_unlisted(&client, calls[2].0, calls[2].1.clone()).await;
    assert!(
        text(&ok).starts_with("Checked out 'A Brief History of Light'."),
        "{ok:?}"
    );
    stop(client, process).await;
    assert_log_holds_exactly(&wire_log(&log), &calls);

    // A second run on the same database adds no books and keeps the loan.
    let (client, process) = start("library", &db, &log).await;
    let all = call_unlisted(&client, "search", json!({"query": "", "limit": 50})).await;
    let all: Value = serde_json::from_str(text(&all)).unwrap();
    assert_eq!(all["total"], 10);
    let light = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["isbn"] == "9780000000011")
        .unwrap();
    assert_eq!(light["available"], 2);
    stop(client, process).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn calendar_rejects_a_bad_date_verbatim_then_adds_the_event() {
    let dir = scratch("calendar");
    let (db, log) = (dir.join("calendar.db"), dir.join("wire.jsonl"));
    let calls = [
        ("search", json!({"text": "dentist"})),
        ("add_event", json!({"title": "Lunch", "date": "tomorrow"})),
        ("add_event", json!({"title": "Lunch", "date": "2026-11-03"})),
    ];
    let (client, process) = start("calendar", &db, &log).await;
    let found = call_unlisted(&client, calls[0].0, calls[0].1.clone()).await;
    let parsed: Value = serde_json::from_str(text(&found)).unwrap();
    assert_eq!(found.structured_content.as_ref(), Some(&parsed));
    assert_eq!(parsed["events"][0]["title"], "Dentist appointment");
    let bad = call_unlisted(&client, calls[1].0, calls[1].1.clone()).await;
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(
        text(&bad),
        "Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03."
    );
    let added = call_unlisted(&client, calls[2].0, calls[2].1.clone()).await;
    assert_eq!(
        text(&added),
        "Added event 7: Lunch on 2026-11-03 (all day)."
    );
    stop(client, process).await;
    assert_log_holds_exactly(&wire_log(&log), &calls);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tasks_without_elicitation_refuse_to_delete_and_the_database_is_unchanged() {
    let dir = scratch("tasks");
    let (db, log) = (dir.join("tasks.db"), dir.join("wire.jsonl"));
    let calls = [
        ("add_task", json!({"title": "Ship the Q3 report"})),
        ("delete_task", json!({"id": 17})),
    ];
    let (client, process) = start("tasks", &db, &log).await;
    let added = call_unlisted(&client, calls[0].0, calls[0].1.clone()).await;
    assert_eq!(text(&added), "Created task 17: Ship the Q3 report");
    let refused = call_unlisted(&client, calls[1].0, calls[1].1.clone()).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).ends_with("call delete_task again with confirm: true."),
        "{refused:?}"
    );
    stop(client, process).await;
    assert_log_holds_exactly(&wire_log(&log), &calls);

    let (client, process) = start("tasks", &db, &log).await;
    let task = client
        .read_resource("tasks://17")
        .await
        .expect("task 17 is still there");
    assert!(task.contents[0]
        .as_text()
        .unwrap()
        .contains("Ship the Q3 report"));
    let next = call_unlisted(&client, "add_task", json!({"title": "Next"})).await;
    assert_eq!(
        text(&next),
        "Created task 18: Next",
        "seeding did not run again"
    );
    stop(client, process).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unusable_database_path_stops_serve_with_a_message() {
    let output = std::process::Command::new(junction_exe())
        .args([
            "serve",
            "library",
            "--db",
            "/nonexistent-junction-dir/library.db",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the `library` server cannot start: cannot use the database /nonexistent-junction-dir/library.db"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "nothing but protocol on stdout");
}

/// Over HTTP the wire log holds what every session received, each message on a line of its
/// own, even when sessions send at the same time.
#[tokio::test]
async fn over_http_the_wire_log_holds_every_sessions_messages_whole() {
    use junction::transport::http::client::HttpClient;
    use tokio::io::AsyncBufReadExt;

    let dir = scratch("http-log");
    let log = dir.join("calendar.jsonl");
    let mut server = tokio::process::Command::new(junction_exe())
        .args(["serve", "calendar", "--http", "127.0.0.1:0", "--wire-log"])
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("junction serve --http starts");
    let mut line = String::new();
    tokio::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .await
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();

    let sessions = (0..4).map(|n| {
        let url = url.clone();
        tokio::spawn(async move {
            let connection = HttpClient::new(&url).unwrap().connect();
            let client = Client::connect(connection, ClientOptions::new("examples-test", "1"))
                .await
                .unwrap();
            for i in 0..5 {
                call_unlisted(
                    &client,
                    "search",
                    json!({"text": format!("session {n} query {i}")}),
                )
                .await;
            }
            client.close();
        })
    });
    for session in sessions {
        session.await.unwrap();
    }
    let log = wire_log(&log);
    for n in 0..4 {
        for i in 0..5 {
            let text = format!("session {n} query {i}");
            let seen = log
                .iter()
                .filter(|m| m["params"]["arguments"]["text"] == text.as_str())
                .count();
            assert_eq!(seen, 1, "{text} is logged once: {log:#?}");
        }
    }
    let initializes = log.iter().filter(|m| m["method"] == "initialize").count();
    assert_eq!(initializes, 4);
}
