//! The library server end to end through junction's client over the in-memory transport.

use junction_protocol::completion::CompletionRef;
use junction_servers::date::Date;
use junction_servers::library::{self, Book, SearchResults, LOAN_DAYS, POLICY};
use junction_servers::Options;
use junction_test_support::client::*;
use serde_json::json;

const MAPS: &str = "9780000000042"; // Maps of Small Rivers, no copies
const LIGHT: &str = "9780000000011"; // A Brief History of Light, 3 copies
const GARDEN: &str = "9780000000080"; // The Long Winter Garden, on loan (due in 5 days)
const SALT: &str = "9780000000066"; // Salt and Stone, on loan, renewed twice

async fn client() -> junction::client::Client {
    connect(&library::server(&Options::default()).unwrap()).await
}

fn results(value: serde_json::Value) -> SearchResults {
    serde_json::from_value(value).expect("search results decode")
}

#[tokio::test]
async fn tools_are_titled_annotated_and_instructions_are_set() {
    let client = client().await;
    assert_tools_fully_described(&client).await;
    assert_eq!(
        client.instructions().as_deref(),
        Some(library::INSTRUCTIONS)
    );
    let names: Vec<_> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        [
            "search",
            "checkout",
            "return_book",
            "renew",
            "place_hold",
            "inventory_report"
        ]
    );
    let search = client.list_tools().await.unwrap().remove(0);
    assert!(
        search.output_schema.is_some(),
        "search advertises its output schema"
    );
    assert!(search.annotations.unwrap().is_read_only());
}

#[tokio::test]
async fn search_for_science_finds_books_with_copies_and_structured_content_matches_text() {
    let client = client().await;
    let found = results(structured(
        &call(&client, "search", json!({"query": "science"})).await,
    ));
    assert_eq!(found.total, 5);
    assert!(found.results.iter().all(|b| b.subject == "science"));
    assert!(found.results.iter().filter(|b| b.available > 0).count() >= 3);
    assert!(found
        .results
        .iter()
        .any(|b| b.title == "Maps of Small Rivers" && b.available == 0));

    let limited = results(structured(
        &call(
            &client,
            "search",
            json!({"query": "", "subject": "History", "limit": 1}),
        )
        .await,
    ));
    assert_eq!(limited.total, 2);
    assert_eq!(limited.results.len(), 1);
    assert_eq!(limited.results[0].title, "Salt and Stone");

    let none = results(structured(
        &call(&client, "search", json!({"query": "100%_"})).await,
    ));
    assert_eq!(
        none,
        SearchResults {
            results: vec![],
            total: 0
        }
    );
}

#[tokio::test]
async fn missing_and_ill_typed_arguments_are_tool_errors_naming_them() {
    let client = client().await;
    let missing = error_text(&call(&client, "search", json!({})).await);
    assert!(missing.contains("query"), "{missing}");
    let ill_typed =
        error_text(&call(&client, "search", json!({"query": "x", "limit": "ten"})).await);
    assert!(ill_typed.contains("limit"), "{ill_typed}");
    let no_isbn = error_text(&call(&client, "checkout", json!({})).await);
    assert!(no_isbn.contains("isbn"), "{no_isbn}");
}

#[tokio::test]
async fn checkout_of_a_book_with_no_copies_fails_verbatim_and_another_title_succeeds() {
    let client = client().await;
    assert_eq!(
        error_text(&call(&client, "checkout", json!({"isbn": MAPS})).await),
        "No copies of 'Maps of Small Rivers' are available. Search for another title."
    );
    let due = Date::today().plus_days(LOAN_DAYS);
    assert_eq!(
        ok_text(&call(&client, "checkout", json!({"isbn": LIGHT})).await),
        format!("Checked out 'A Brief History of Light'. It is due back on {due}.")
    );
    assert_eq!(
        error_text(&call(&client, "checkout", json!({"isbn": LIGHT})).await),
        format!("You already have 'A Brief History of Light' checked out; it is due on {due}.")
    );
    assert_eq!(
        error_text(&call(&client, "checkout", json!({"isbn": "123"})).await),
        "No book in the catalogue has the ISBN '123'. Use search to find the book's ISBN."
    );
    let book: Book =
        serde_json::from_str(&read_text(&client, &format!("library://books/{LIGHT}")).await)
            .unwrap();
    assert_eq!(book.available, 2);
}

#[tokio::test]
async fn return_renew_and_hold_succeed_and_refuse_with_reasons() {
    let client = client().await;
    assert_eq!(
        ok_text(&call(&client, "renew", json!({"isbn": GARDEN})).await),
        format!(
            "Renewed 'The Long Winter Garden'. It is now due back on {}.",
            Date::today().plus_days(5 + LOAN_DAYS)
        )
    );
    assert_eq!(
        error_text(&call(&client, "renew", json!({"isbn": SALT})).await),
        format!(
            "'Salt and Stone' has already been renewed 2 times, the most the policy allows. Please return it by {}.",
            Date::today().plus_days(2)
        )
    );
    assert_eq!(
        error_text(&call(&client, "renew", json!({"isbn": LIGHT})).await),
        "You do not have 'A Brief History of Light' on loan. Use checkout to borrow it."
    );
    assert_eq!(
        ok_text(&call(&client, "return_book", json!({"isbn": SALT})).await),
        "Returned 'Salt and Stone'. Thank you."
    );
    assert_eq!(
        error_text(&call(&client, "return_book", json!({"isbn": SALT})).await),
        "You do not have 'Salt and Stone' on loan, so there is nothing to return."
    );
    assert_eq!(
        ok_text(&call(&client, "place_hold", json!({"isbn": MAPS})).await),
        "Placed a hold on 'Maps of Small Rivers'. You will be told when a copy is returned."
    );
    assert_eq!(
        ok_text(&call(&client, "place_hold", json!({"isbn": MAPS})).await),
        "You already have a hold on 'Maps of Small Rivers'."
    );
    assert_eq!(
        error_text(&call(&client, "place_hold", json!({"isbn": LIGHT})).await),
        "'A Brief History of Light' has 3 copies on the shelf; use checkout to borrow it instead of placing a hold."
    );
    assert_eq!(
        error_text(&call(&client, "place_hold", json!({"isbn": GARDEN})).await),
        "You already have 'The Long Winter Garden' checked out."
    );
}

#[tokio::test]
async fn policy_book_template_completion_and_reading_list_prompt() {
    let client = client().await;
    assert_eq!(read_text(&client, "library://policy").await, POLICY);
    let book: Book =
        serde_json::from_str(&read_text(&client, &format!("library://books/{MAPS}")).await)
            .unwrap();
    assert_eq!(
        (book.title.as_str(), book.available),
        ("Maps of Small Rivers", 0)
    );
    assert!(client.read_resource("library://books/000").await.is_err());

    let isbns = complete(
        &client,
        CompletionRef::resource("library://books/{isbn}"),
        "isbn",
        "97800000000",
    )
    .await;
    assert_eq!(isbns.len(), 9);
    let subjects = complete(
        &client,
        CompletionRef::prompt("reading_list"),
        "subject",
        "s",
    )
    .await;
    assert_eq!(subjects, ["science"]);

    let text = prompt_text(&client, "reading_list", &[("subject", "science")]).await;
    assert!(
        text.starts_with("Put together a reading list about science"),
        "{text}"
    );
    assert!(
        text.contains(
            "- 'Maps of Small Rivers' by Jonah Pike (2022), ISBN 9780000000042, 0 copies available"
        ),
        "{text}"
    );
    assert!(client
        .get_prompt(junction_protocol::prompts::GetPromptParams::new(
            "reading_list"
        ))
        .await
        .is_err());
}

#[tokio::test]
async fn seeding_is_idempotent_and_changes_persist_in_the_database_file() {
    let path = temp_db("library-seed");
    {
        let client = connect(&library::server(&at(&path)).unwrap()).await;
        let all = results(structured(
            &call(&client, "search", json!({"query": "", "limit": 50})).await,
        ));
        assert_eq!(all.total, 10);
        ok_text(&call(&client, "checkout", json!({"isbn": LIGHT})).await);
    }
    let client = connect(&library::server(&at(&path)).unwrap()).await;
    let all = results(structured(
        &call(&client, "search", json!({"query": "", "limit": 50})).await,
    ));
    assert_eq!(all.total, 10, "a second run adds no books");
    let light = all.results.iter().find(|b| b.isbn == LIGHT).unwrap();
    assert_eq!(light.available, 2, "the checkout of the first run is kept");
    drop(client);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
