//! The tasks server and junction's client both on revision 2026-07-28 (no `initialize`):
//! the confirmation and the summary that the handshake revisions ask for with server→client
//! requests travel as `input_required` results and retries, and notifications arrive on a
//! `subscriptions/listen` stream.

use junction::client::{ClientOptions, Elicitation, Sampling, ServerNotification};
use junction::protocol::ProtocolVersion;
use junction_protocol::elicitation::ElicitResult;
use junction_protocol::sampling::CreateMessageResult;
use junction_servers::tasks;
use junction_servers::Options;
use junction_test_support::client::*;
use serde_json::json;

fn stateless(options: ClientOptions) -> ClientOptions {
    options.version(ProtocolVersion::V2026_07_28)
}

#[tokio::test]
async fn a_delete_is_confirmed_through_input_required_and_happens_once() {
    let server = tasks::server(&Options::default()).unwrap();
    let options =
        stateless(ClientOptions::new("test", "1")).elicitation(Elicitation::form(|_, _| async {
            Ok(ElicitResult::accept(Default::default()))
        }));
    let client = connect_with(&server, options).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(
        ok_text(&call(&client, "delete_task", json!({"id": 15})).await),
        "Deleted task 15: Clean out the garage"
    );
    // The handler ran twice (asking, then with the answer) but deleted once.
    assert_eq!(
        error_text(&call(&client, "delete_task", json!({"id": 15, "confirm": true})).await),
        "No task has the number 15. Ask the user which task they mean."
    );
}

#[tokio::test]
async fn a_declined_delete_keeps_the_task() {
    let server = tasks::server(&Options::default()).unwrap();
    let options =
        stateless(ClientOptions::new("test", "1")).elicitation(Elicitation::form(|_, _| async {
            Ok(ElicitResult::decline())
        }));
    let client = connect_with(&server, options).await;
    assert_eq!(
        ok_text(&call(&client, "delete_task", json!({"id": 15})).await),
        "Kept task 15: the user declined to delete it."
    );
    assert!(client.read_resource("tasks://15").await.is_ok());
}

#[tokio::test]
async fn the_summary_is_written_by_the_clients_model_through_input_required() {
    let server = tasks::server(&Options::default()).unwrap();
    let options =
        stateless(ClientOptions::new("test", "1")).sampling(Sampling::new(|_, _| async {
            Ok(CreateMessageResult::text("scripted", "Six things done."))
        }));
    let client = connect_with(&server, options).await;
    assert_eq!(
        ok_text(&call(&client, "summarize_completed", json!({})).await),
        "Six things done."
    );
}

#[tokio::test]
async fn resource_updates_arrive_on_the_listen_stream() {
    let server = tasks::server(&Options::default()).unwrap();
    let client = connect_with(&server, stateless(ClientOptions::new("test", "1"))).await;
    let mut notifications = client.take_notifications().unwrap();
    client.subscribe(tasks::OPEN).await.unwrap();
    call(&client, "add_task", json!({"title": "Water the plants"})).await;
    loop {
        match notifications
            .recv()
            .await
            .expect("the listen stream stays open")
        {
            ServerNotification::ResourceUpdated(updated) => {
                assert_eq!(updated.uri, tasks::OPEN);
                break;
            }
            // The acknowledgement of the listen request, and anything else, comes first.
            _ => continue,
        }
    }
}
