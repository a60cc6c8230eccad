//! `junction call` and tasks (2025-11-25) against the library server: `tools/call --task
//! [--ttl MS]` prints the task, waits for it and prints the result, over stdio and HTTP;
//! `tasks/list|get|result|cancel` reach the server and print its answers, and a task is
//! visible only to the session that created it (each `junction call` is a session of its
//! own).

use junction_test_support::cli::{junction, junction_exe, HttpServe};
use junction_test_support::process::Run;
use serde_json::Value;

/// The JSON documents `run` printed, in order.
fn documents(run: &Run) -> Vec<Value> {
    serde_json::Deserializer::from_str(&run.stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON documents ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                run.code, run.stdout, run.stderr
            )
        })
}

/// `junction call --method tools/call --tool inventory_report --task ...` on `target` (a
/// URL, or the command after `--`): the created task, then the report.
fn inventory_as_task(target: &[&str], ttl: Option<&str>) -> (Value, Value) {
    let mut args = vec![
        "call",
        "--method",
        "tools/call",
        "--tool",
        "inventory_report",
        "--arg",
        "subject=science",
        "--task",
    ];
    if let Some(ttl) = ttl {
        args.extend(["--ttl", ttl]);
    }
    args.extend_from_slice(target);
    let run = junction(&args);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let docs = documents(&run);
    assert_eq!(docs.len(), 2, "the task, then the result: {docs:#?}");
    (docs[0].clone(), docs[1].clone())
}

/// The report, tied to its task by the related-task `_meta`.
fn assert_report(created: &Value, result: &Value) {
    assert_ne!(
        result.get("isError"),
        Some(&Value::Bool(true)),
        "{result:#}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        created["task"]["taskId"],
        "{result:#}"
    );
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("Inventory of 5 titles:\n- science: 5 titles"),
        "{result:#}"
    );
}

#[test]
fn a_tool_call_as_a_task_prints_the_task_waits_and_prints_the_result_over_stdio() {
    let (created, result) =
        inventory_as_task(&["--", junction_exe(), "serve", "library"], Some("60000"));
    let task = &created["task"];
    assert!(
        task["taskId"].as_str().is_some_and(|id| id.len() >= 16),
        "{created:#}"
    );
    assert_eq!(task["status"], "working", "{created:#}");
    let ttl = task["ttl"].as_u64().expect("the granted ttl");
    assert!(ttl > 0 && ttl <= 60_000, "{created:#}");
    assert_report(&created, &result);
}

#[test]
fn the_task_methods_print_the_servers_answers_and_another_session_sees_no_task() {
    let server = HttpServe::start("library", &[]);
    let url = server.url.as_str();
    let (created, result) = inventory_as_task(&[url], None);
    assert_report(&created, &result);
    let id = created["task"]["taskId"].as_str().expect("a task id");

    // A new `junction call` is a new session: its list is empty, and the task is unknown
    // to it whatever it asks.
    let listed = junction(&["call", url, "--method", "tasks/list"]);
    assert_eq!(listed.code, 0, "{}{}", listed.stdout, listed.stderr);
    assert_eq!(listed.json(), serde_json::json!({"tasks": []}));
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let run = junction(&["call", url, "--method", method, "--task-id", id]);
        assert_eq!(run.code, 1, "{method}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.json()["code"], -32602, "{method}: {}", run.stdout);
    }

    let missing = junction(&["call", url, "--method", "tasks/get"]);
    assert_eq!(missing.code, 3, "{}{}", missing.stdout, missing.stderr);
    assert!(missing.stderr.contains("--task-id"), "{}", missing.stderr);
    server.stop();
}
