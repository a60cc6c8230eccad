//! The library's tasks with `--db`: a finished task's result outlives the server that ran
//! it, a task cut off by the end of its server is failed by the next one, and the tasks stay
//! bound to the identity that created them.
//!
//! Each server runs in its own Tokio runtime on its own thread, and "the process ends" is
//! that runtime shutting down: every handler it ran stops where it is, as in a killed process.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use junction::auth::resource::Identity;
use junction::client::{Client, ClientOptions};
use junction::protocol::tasks::TaskStatus;
use junction::protocol::tools::CallToolParams;
use junction::server::Server;
use junction::transport::stdio;
use junction::RequestError;
use junction_servers::{library, Options};

fn person(subject: &str) -> Identity {
    Identity {
        subject: subject.to_owned(),
        client_id: None,
        scopes: BTreeSet::new(),
        issuer: Some("https://issuer.test".to_owned()),
        expires_at: None,
        key_thumbprint: None,
    }
}

/// Connects a client to `server` as `who`, over a stdio framing on a socket pair.
async fn connect(server: &Server, who: &str) -> Client {
    let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
    let (r, w) = theirs.into_split();
    let server = server.clone();
    Identity::scope(person(who), async move {
        server.serve(stdio::connect(r, w, Default::default()));
    })
    .await;
    let (r, w) = ours.into_split();
    let client = Client::connect(
        stdio::connect(r, w, Default::default()),
        ClientOptions::new("c", "1"),
    )
    .await
    .unwrap();
    client.list_tools().await.unwrap();
    client
}

fn report(subject: Option<&str>) -> CallToolParams {
    let params = CallToolParams::new("inventory_report");
    match subject {
        Some(s) => params.argument("subject", s),
        None => params,
    }
}

/// The first server: one task finished, one still counting every shelf when it ends.
fn first_server(db: &Path) -> (String, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ids = runtime.block_on(async {
        let server = library::server(&Options {
            db: Some(db.to_owned().into()),
            ..Options::default()
        })
        .unwrap();
        let alice = connect(&server, "alice").await;
        let done = alice
            .call_tool_as_task(report(Some("cooking")), None, Default::default())
            .await
            .unwrap();
        let result = alice.wait_for_task(&done.task, |_| {}, None).await.unwrap();
        assert!(
            result.content[0]
                .as_text()
                .unwrap()
                .contains("cooking: 1 titles"),
            "{result:?}"
        );
        let running = alice
            .call_tool_as_task(report(None), None, Default::default())
            .await
            .unwrap();
        assert_eq!(
            alice.get_task(&running.task.task_id).await.unwrap().status,
            TaskStatus::Working
        );
        (done.task.task_id, running.task.task_id)
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
    ids
}

fn code(e: RequestError) -> i32 {
    match e {
        RequestError::Remote { error, .. } => error.code.0,
        other => panic!("expected an error from the server, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_outlives_its_server_and_stays_its_owners() {
    let dir = std::env::temp_dir().join(format!("junction-task-restart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("library.db");
    let _ = std::fs::remove_file(&db);
    let path = db.clone();
    let (done, cut_off) = std::thread::spawn(move || first_server(&path))
        .join()
        .unwrap();

    let server = library::server(&Options {
        db: Some(db.clone().into()),
        ..Options::default()
    })
    .unwrap();
    let alice = connect(&server, "alice").await;
    let task = alice.get_task(&done).await.unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    let result = alice.task_result(&done).await.unwrap();
    assert!(result.content[0]
        .as_text()
        .unwrap()
        .contains("cooking: 1 titles"));
    let orphan = alice.get_task(&cut_off).await.unwrap();
    assert_eq!(orphan.status, TaskStatus::Failed);
    assert!(orphan.status_message.unwrap().contains("restarted"));
    assert_eq!(code(alice.task_result(&cut_off).await.unwrap_err()), -32603);
    let listed: Vec<String> = alice
        .list_tasks()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.task_id)
        .collect();
    assert_eq!(listed.len(), 2);
    assert!(listed.contains(&done) && listed.contains(&cut_off));

    let bob = connect(&server, "bob").await;
    assert_eq!(code(bob.get_task(&done).await.unwrap_err()), -32602);
    assert_eq!(code(bob.task_result(&done).await.unwrap_err()), -32602);
    assert_eq!(code(bob.cancel_task(&done).await.unwrap_err()), -32602);
    assert!(bob.list_tasks().await.unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
