//! The example servers on a real PostgreSQL (a throwaway cluster from Debian's packages):
//! the same tools as on SQLite, the tables created and seeded once however many instances
//! start together, and the races two instances can run into decided by the database.

use junction_servers::{calendar, library, tasks, Db, Options};
use junction_test_support::client::*;
use junction_test_support::postgres::Postgres;
use serde_json::json;

const STARS: &str = "9780000000035"; // Stars Over the Desert: one copy
const LIGHT: &str = "9780000000011"; // A Brief History of Light: three copies
const BOOKS: i64 = 10;

fn on(url: &str) -> Options {
    Options {
        db: Some(Db::Postgres(url.to_owned())),
        ..Options::default()
    }
}

async fn search_total(client: &junction::client::Client) -> i64 {
    structured(&call(client, "search", json!({"query": ""})).await)["total"]
        .as_i64()
        .expect("a total")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_starting_together_seed_once_and_see_each_others_writes() {
    let pg = Postgres::start();
    let url = pg.database("library");
    let starts: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || library::server(&on(&url)).expect("the library starts"))
        })
        .collect();
    let servers: Vec<_> = starts.into_iter().map(|s| s.join().unwrap()).collect();
    let a = connect(&servers[0]).await;
    let b = connect(&servers[1]).await;
    assert_eq!(search_total(&a).await, BOOKS);
    assert_eq!(search_total(&b).await, BOOKS);
    let text = ok_text(&call(&a, "checkout", json!({"isbn": LIGHT})).await);
    assert!(
        text.starts_with("Checked out 'A Brief History of Light'"),
        "{text}"
    );
    let text = error_text(&call(&b, "checkout", json!({"isbn": LIGHT})).await);
    assert!(
        text.starts_with("You already have 'A Brief History of Light' checked out"),
        "{text}"
    );
    drop((a, b, servers));
    // A later start keeps what is there.
    let again = connect(&library::server(&on(&url)).unwrap()).await;
    assert_eq!(search_total(&again).await, BOOKS);
    let text = ok_text(&call(&again, "return_book", json!({"isbn": LIGHT})).await);
    assert_eq!(text, "Returned 'A Brief History of Light'. Thank you.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_many_checkouts_of_the_last_copy_on_two_instances_exactly_one_wins() {
    let pg = Postgres::start();
    let url = pg.database("library");
    let first = library::server(&on(&url)).unwrap();
    let second = library::server(&on(&url)).unwrap();
    let mut clients = Vec::new();
    for n in 0..8 {
        clients.push(connect(if n % 2 == 0 { &first } else { &second }).await);
    }
    let tries: Vec<_> = clients
        .into_iter()
        .map(|client| {
            tokio::spawn(async move { call(&client, "checkout", json!({"isbn": STARS})).await })
        })
        .collect();
    let mut won = 0;
    for t in tries {
        let result = t.await.unwrap();
        let text = only_text(&result);
        if result.is_error == Some(true) {
            assert!(
                text.starts_with("No copies of 'Stars Over the Desert' are available")
                    || text.starts_with("You already have 'Stars Over the Desert' checked out"),
                "{text}"
            );
        } else {
            assert!(
                text.starts_with("Checked out 'Stars Over the Desert'"),
                "{text}"
            );
            won += 1;
        }
    }
    assert_eq!(won, 1, "exactly one checkout of the last copy succeeds");
    let check = connect(&first).await;
    let book = structured(&call(&check, "search", json!({"query": "stars"})).await);
    assert_eq!(book["results"][0]["available"], 0, "{book}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_lends_renews_holds_and_searches_without_regard_to_case() {
    let pg = Postgres::start();
    let server = library::server(&on(&pg.database("library"))).unwrap();
    let client = connect(&server).await;
    let found = structured(
        &call(
            &client,
            "search",
            json!({"query": "RIVERS", "subject": "Science"}),
        )
        .await,
    );
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["results"][0]["title"], "Maps of Small Rivers");
    let text = error_text(&call(&client, "checkout", json!({"isbn": "9780000000042"})).await);
    assert_eq!(
        text,
        "No copies of 'Maps of Small Rivers' are available. Search for another title."
    );
    let text = ok_text(&call(&client, "place_hold", json!({"isbn": "9780000000042"})).await);
    assert!(text.starts_with("Placed a hold"), "{text}");
    let text = ok_text(&call(&client, "place_hold", json!({"isbn": "9780000000042"})).await);
    assert!(text.starts_with("You already have a hold"), "{text}");
    let text = ok_text(&call(&client, "renew", json!({"isbn": "9780000000080"})).await);
    assert!(
        text.starts_with("Renewed 'The Long Winter Garden'"),
        "{text}"
    );
    let text = error_text(&call(&client, "renew", json!({"isbn": "9780000000066"})).await);
    assert!(text.contains("already been renewed 2 times"), "{text}");
    let text = error_text(&call(&client, "return_book", json!({"isbn": LIGHT})).await);
    assert!(text.starts_with("You do not have"), "{text}");
    let values = complete(
        &client,
        junction_protocol::completion::CompletionRef::prompt("reading_list"),
        "subject",
        "hi",
    )
    .await;
    assert_eq!(values, ["history"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calendar_and_the_tasks_share_one_database() {
    let pg = Postgres::start();
    let url = pg.database("shared");
    let calendar = connect(&calendar::server(&on(&url)).unwrap()).await;
    let tasks = connect(&tasks::server(&on(&url)).unwrap()).await;
    let text = ok_text(
        &call(
            &calendar,
            "add_event",
            json!({"title": "Review", "date": "2031-05-06", "start": "09:00", "end": "10:00"}),
        )
        .await,
    );
    assert!(
        text.starts_with("Added event 7: Review on 2031-05-06 from 09:00 to 10:00"),
        "{text}"
    );
    let found = structured(
        &call(
            &calendar,
            "search",
            json!({"text": "REVIEW", "from": "2031-05-01"}),
        )
        .await,
    );
    assert_eq!(found["events"].as_array().map(Vec::len), Some(1), "{found}");
    assert_eq!(found["events"][0]["end"], "10:00");
    let text = ok_text(&call(&calendar, "delete_event", json!({"id": 7})).await);
    assert!(text.starts_with("Deleted event 7"), "{text}");
    let text = error_text(&call(&calendar, "delete_event", json!({"id": 7})).await);
    assert!(text.starts_with("No event has the id 7"), "{text}");

    let text = ok_text(&call(&tasks, "add_task", json!({"title": "File the report"})).await);
    assert_eq!(text, "Created task 17: File the report");
    let text = ok_text(&call(&tasks, "complete_task", json!({"id": 17})).await);
    assert_eq!(text, "Completed task 17: File the report");
    let text = error_text(&call(&tasks, "complete_task", json!({"id": 17})).await);
    assert!(
        text.starts_with("Task 17 (File the report) was already completed on"),
        "{text}"
    );
    let open = read_text(&tasks, tasks::OPEN).await;
    assert!(!open.contains("File the report"), "{open}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_lost_while_serving_is_a_tool_error_and_recovers_when_it_returns() {
    let mut pg = Postgres::start();
    let server = library::server(&on(&pg.database("library"))).unwrap();
    let client = connect(&server).await;
    assert_eq!(search_total(&client).await, BOOKS);
    pg.stop();
    let text = error_text(&call(&client, "search", json!({"query": ""})).await);
    assert!(text.starts_with("The server's database failed ("), "{text}");
    pg.restart();
    assert_eq!(search_total(&client).await, BOOKS);
}

#[tokio::test]
async fn a_database_that_does_not_exist_is_a_clear_error_at_start() {
    let pg = Postgres::start();
    let url = pg.url("nowhere");
    let Err(error) = library::server(&on(&url)) else {
        panic!("no such database");
    };
    let error = error.to_string();
    assert!(
        error.starts_with(&format!(
            "cannot use the database postgres://junction@127.0.0.1:{}/nowhere:",
            pg.port
        )),
        "{error}"
    );
    assert!(error.contains("\"nowhere\" does not exist"), "{error}");
}
