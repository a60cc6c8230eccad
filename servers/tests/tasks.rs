//! The tasks server end to end through junction's client over the in-memory transport,
//! including the requests it sends back: elicitation, sampling and resource updates.

use std::sync::{Arc, Mutex};

use junction::client::{Client, ClientOptions, Elicitation, Sampling, ServerNotification};
use junction::server::Server;
use junction_protocol::completion::CompletionRef;
use junction_protocol::elicitation::ElicitResult;
use junction_protocol::sampling::CreateMessageResult;
use junction_servers::tasks::{self, Task, OPEN};
use junction_servers::Options;
use junction_test_support::client::*;
use serde_json::json;

fn server() -> Server {
    tasks::server(&Options::default()).unwrap()
}

/// A client whose user answers every confirmation with `answer`.
async fn answering(server: &Server, answer: fn() -> ElicitResult) -> Client {
    let options = ClientOptions::new("test", "1")
        .elicitation(Elicitation::form(move |_, _| async move { Ok(answer()) }));
    connect_with(server, options).await
}

async fn open(client: &Client) -> Vec<Task> {
    serde_json::from_str(&read_text(client, OPEN).await).expect("open tasks decode")
}

async fn task_exists(client: &Client, id: i64) -> bool {
    client.read_resource(&format!("tasks://{id}")).await.is_ok()
}

#[tokio::test]
async fn tools_are_titled_annotated_and_delete_is_destructive() {
    let client = connect(&server()).await;
    assert_tools_fully_described(&client).await;
    assert_eq!(client.instructions().as_deref(), Some(tasks::INSTRUCTIONS));
    let tools = client.list_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "add_task",
            "complete_task",
            "delete_task",
            "summarize_completed"
        ]
    );
    assert!(tools[2].annotations.as_ref().unwrap().is_destructive());
    assert!(tools[3].annotations.as_ref().unwrap().is_read_only());
}

#[tokio::test]
async fn add_and_complete_tasks_with_their_errors() {
    let client = connect(&server()).await;
    assert_eq!(
        ok_text(
            &call(
                &client,
                "add_task",
                json!({"title": "Ship the Q3 report", "due": "2026-11-03"})
            )
            .await
        ),
        "Created task 17: Ship the Q3 report"
    );
    let task: Task = serde_json::from_str(&read_text(&client, "tasks://17").await).unwrap();
    assert_eq!(
        (task.title.as_str(), task.due.as_deref()),
        ("Ship the Q3 report", Some("2026-11-03"))
    );
    assert_eq!(
        error_text(
            &call(
                &client,
                "add_task",
                json!({"title": "x", "due": "tomorrow"})
            )
            .await
        ),
        "Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03."
    );
    assert_eq!(
        error_text(&call(&client, "add_task", json!({"title": "  "})).await),
        "The title is empty. Say in a few words what is to be done."
    );
    let missing = error_text(&call(&client, "add_task", json!({})).await);
    assert!(missing.contains("title"), "{missing}");

    assert_eq!(
        ok_text(&call(&client, "complete_task", json!({"id": 17})).await),
        "Completed task 17: Ship the Q3 report"
    );
    let again = error_text(&call(&client, "complete_task", json!({"id": 17})).await);
    assert!(
        again.starts_with("Task 17 (Ship the Q3 report) was already completed on "),
        "{again}"
    );
    assert_eq!(
        error_text(&call(&client, "complete_task", json!({"id": 99})).await),
        "No task has the number 99. Ask the user which task they mean."
    );
    assert!(open(&client).await.iter().all(|t| t.id != 17));
}

#[tokio::test]
async fn delete_confirmed_by_the_user_through_elicitation_deletes() {
    let server = server();
    let client = answering(&server, || ElicitResult::accept(Default::default())).await;
    assert_eq!(
        ok_text(&call(&client, "delete_task", json!({"id": 15})).await),
        "Deleted task 15: Clean out the garage"
    );
    assert!(!task_exists(&client, 15).await);
}

#[tokio::test]
async fn a_declined_or_cancelled_delete_leaves_the_database_unchanged() {
    let server = server();
    let before = open(&connect(&server).await).await;
    let declining = answering(&server, ElicitResult::decline).await;
    assert_eq!(
        ok_text(&call(&declining, "delete_task", json!({"id": 15})).await),
        "Kept task 15: the user declined to delete it."
    );
    let cancelling = answering(&server, ElicitResult::cancel).await;
    assert_eq!(
        ok_text(
            &call(
                &cancelling,
                "delete_task",
                json!({"id": 15, "confirm": true})
            )
            .await
        ),
        "Kept task 15: the user dismissed the question without deciding."
    );
    assert_eq!(open(&declining).await, before);
}

#[tokio::test]
async fn delete_without_elicitation_says_how_to_proceed_and_then_honours_confirm() {
    let client = connect(&server()).await;
    assert_eq!(
        error_text(&call(&client, "delete_task", json!({"id": 15})).await),
        "Task 15 ('Clean out the garage') was not deleted: deleting cannot be undone, and this \
         client cannot ask the user to confirm. Ask the user whether to delete it; if they agree, \
         call delete_task again with confirm: true."
    );
    assert!(task_exists(&client, 15).await);
    assert_eq!(
        ok_text(&call(&client, "delete_task", json!({"id": 15, "confirm": true})).await),
        "Deleted task 15: Clean out the garage"
    );
    assert!(!task_exists(&client, 15).await);
    assert_eq!(
        error_text(&call(&client, "delete_task", json!({"id": 15, "confirm": true})).await),
        "No task has the number 15. Ask the user which task they mean."
    );
}

#[tokio::test]
async fn summarize_completed_returns_the_models_text_through_sampling() {
    let asked = Arc::new(Mutex::new(String::new()));
    let seen = asked.clone();
    let options = ClientOptions::new("test", "1").sampling(Sampling::new(move |params, _| {
        let seen = seen.clone();
        async move {
            let text = params.messages[0].content.blocks()[0]
                .as_text()
                .unwrap_or_default()
                .to_owned();
            *seen.lock().unwrap() = text;
            Ok(CreateMessageResult::text(
                "scripted",
                "You finished six things this fortnight.",
            ))
        }
    }));
    let client = connect_with(&server(), options).await;
    assert_eq!(
        ok_text(&call(&client, "summarize_completed", json!({})).await),
        "You finished six things this fortnight."
    );
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.starts_with("Summarize in two or three sentences what I have completed:\n"),
        "{asked}"
    );
    assert_eq!(asked.matches("\n- ").count(), 6, "{asked}");
    assert!(
        asked.contains("- Book the team offsite venue (completed "),
        "{asked}"
    );
}

#[tokio::test]
async fn summarize_completed_without_sampling_fails_informatively() {
    let client = connect(&server()).await;
    let text = error_text(&call(&client, "summarize_completed", json!({})).await);
    assert!(
        text.starts_with(
            "No summary was written: the host's model cannot be asked here (the client did \
             not declare the `sampling` capability). Summarize these completed tasks yourself:\n- "
        ),
        "{text}"
    );
    assert!(
        text.contains("- Review Priya's pull request (completed "),
        "{text}"
    );
}

#[tokio::test]
async fn every_change_sends_an_update_for_the_subscribed_open_list() {
    let server = server();
    let options = ClientOptions::new("test", "1").elicitation(Elicitation::form(|_, _| async {
        Ok(ElicitResult::accept(Default::default()))
    }));
    let client = connect_with(&server, options).await;
    let mut notes = client
        .take_notifications()
        .expect("the notification stream");
    client
        .subscribe(OPEN)
        .await
        .expect("tasks://open is subscribable");
    for (tool, arguments) in [
        ("add_task", json!({"title": "Ship the Q3 report"})),
        ("complete_task", json!({"id": 17})),
        ("delete_task", json!({"id": 17})),
    ] {
        ok_text(&call(&client, tool, arguments).await);
        match notes.recv().await {
            Some(ServerNotification::ResourceUpdated(params)) => {
                assert_eq!(params.uri, OPEN, "after {tool}")
            }
            other => panic!("expected an update after {tool}, got {other:?}"),
        }
    }
    client.unsubscribe(OPEN).await.unwrap();
    ok_text(&call(&client, "add_task", json!({"title": "Quietly"})).await);
    client.ping().await.unwrap();
    assert!(notes.try_recv().is_err(), "no update after unsubscribing");
}

#[tokio::test]
async fn open_list_task_template_completion_and_weekly_review() {
    let client = connect(&server()).await;
    let open = open(&client).await;
    assert_eq!(open.len(), 10);
    assert!(open.iter().all(|t| t.completed.is_none()));
    assert_eq!(open[0].title, "Water the plants", "soonest due first");
    assert!(client.read_resource("tasks://999").await.is_err());
    assert!(client.read_resource("tasks://abc").await.is_err());
    let ids = complete(&client, CompletionRef::resource("tasks://{id}"), "id", "1").await;
    assert_eq!(ids, ["1", "10", "11", "12", "13", "14", "15", "16"]);

    let review = prompt_text(&client, "weekly_review", &[]).await;
    assert!(review.starts_with("Let's do my weekly review"), "{review}");
    assert!(
        review.contains("Completed this week:\n- Book the team offsite venue\n"),
        "{review}"
    );
    assert!(
        !review.contains("Back up the laptop"),
        "completed nine days ago: {review}"
    );
    assert!(review.contains("] Water the plants (due "), "{review}");
}

#[tokio::test]
async fn seeding_is_idempotent() {
    let path = temp_db("tasks-seed");
    for expected in ["Created task 17: First", "Created task 18: Second"] {
        let client = connect(&tasks::server(&at(&path)).unwrap()).await;
        let title = expected.rsplit(": ").next().unwrap();
        assert_eq!(
            ok_text(&call(&client, "add_task", json!({"title": title})).await),
            expected
        );
    }
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
