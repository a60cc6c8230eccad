//! The SDKs' task clients against the library served by `junction serve library --http`
//! (2025-11-25 tasks): the TypeScript SDK's (1.32.2) `experimental.tasks`
//! (tests-interop/ts-tasks-client.mjs) and the Python SDK's (1.30.0; 2.x has none)
//! `session.experimental` (tests-interop/py-tasks-client.py). A task call gets the task, its
//! status messages and the report; listing, getting, collecting and cancelling get what the
//! specification says.
//!
//! Needs `JUNCTION_NODE`, `JUNCTION_NODE_MODULES` and `JUNCTION_PYTHON_TASKS`, which
//! `scripts/test` exports.

use junction_test_support::cli::HttpServe;
use junction_test_support::peers::peer;
use junction_test_support::process::run;
use serde_json::Value;

/// The TypeScript tasks client, next to the other interop peers of this repository.
const TS_TASKS_CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests-interop/ts-tasks-client.mjs"
);

/// The Python tasks client, beside it.
const PY_TASKS_CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests-interop/py-tasks-client.py"
);

#[test]
fn the_typescript_sdk_task_client_follows_cancels_and_collects_our_tasks() {
    let server = HttpServe::start("library", &[]);
    // The SDK is found through JUNCTION_NODE_MODULES, inherited from the environment.
    peer("JUNCTION_NODE_MODULES");
    let ran = run(
        &peer("JUNCTION_NODE"),
        &[
            TS_TASKS_CLIENT,
            &server.url,
            "inventory_report",
            r#"{"subject":"science"}"#,
        ],
    );
    let out = ran.json();
    assert_eq!(ran.code, 0, "{out:#}\n{}", ran.stderr);

    let streamed = out["streamed"].as_array().expect("the stream's messages");
    let first = &streamed[0];
    assert_eq!(first["type"], "taskCreated", "{out:#}");
    assert_eq!(first["status"], "working", "{out:#}");
    let id = first["taskId"].as_str().expect("a task id");
    assert!(
        streamed.iter().any(
            |m| m["type"] == "taskStatus" && m["statusMessage"] == "Counting the science shelf"
        ),
        "the status message reaches the SDK: {out:#}"
    );
    let last = streamed.last().expect("a last message");
    assert_eq!(last["type"], "result", "{out:#}");
    let report = last["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(report.starts_with("Inventory of 5 titles:"), "{out:#}");

    assert_eq!(
        out["listed"],
        serde_json::json!([{"taskId": id, "status": "completed"}])
    );
    assert_eq!(out["got"]["status"], "completed", "{out:#}");
    assert_eq!(out["got"]["ttl"], 60_000, "{out:#}");
    assert_eq!(
        out["payload"]["content"], last["result"]["content"],
        "{out:#}"
    );
    assert_eq!(
        out["payload"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        Value::from(id),
        "{out:#}"
    );
    for answer in ["cancelled", "afterCancel"] {
        assert_eq!(out[answer]["status"], "cancelled", "{answer}: {out:#}");
        assert_ne!(out[answer]["taskId"], Value::from(id), "{out:#}");
    }
    server.stop();
}

#[test]
fn the_python_sdk_task_client_polls_cancels_and_collects_our_tasks() {
    let server = HttpServe::start("library", &[]);
    let ran = run(
        &peer("JUNCTION_PYTHON_TASKS"),
        &[
            PY_TASKS_CLIENT,
            &server.url,
            "inventory_report",
            r#"{"subject":"science"}"#,
        ],
    );
    let out = ran.json();
    assert_eq!(ran.code, 0, "{out:#}\n{}", ran.stderr);

    let created = &out["created"];
    assert_eq!(created["status"], "working", "{out:#}");
    assert_eq!(created["ttl"], 60_000, "{out:#}");
    let id = created["taskId"].as_str().expect("a task id");
    let polled = out["polled"].as_array().expect("the statuses polled");
    assert!(
        polled
            .iter()
            .any(|s| s["statusMessage"] == "Counting the science shelf"),
        "the status message reaches the SDK: {out:#}"
    );
    assert_eq!(
        polled.last().map(|s| &s["status"]),
        Some(&"completed".into())
    );

    let report = out["payload"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(report.starts_with("Inventory of 5 titles:"), "{out:#}");
    assert_eq!(
        out["payload"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        Value::from(id),
        "{out:#}"
    );
    assert_eq!(
        out["listed"],
        serde_json::json!([{"taskId": id, "status": "completed"}])
    );
    for answer in ["cancelled", "afterCancel"] {
        assert_eq!(out[answer]["status"], "cancelled", "{answer}: {out:#}");
        assert_ne!(out[answer]["taskId"], Value::from(id), "{out:#}");
    }
    server.stop();
}
