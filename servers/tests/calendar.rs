//! The calendar server end to end through junction's client over the in-memory transport.

use junction_protocol::completion::CompletionRef;
use junction_servers::calendar::{self, Event, Events};
use junction_servers::date::Date;
use junction_servers::Options;
use junction_test_support::client::*;
use serde_json::json;

async fn client() -> junction::client::Client {
    connect(&calendar::server(&Options::default()).unwrap()).await
}

fn events(value: serde_json::Value) -> Vec<Event> {
    serde_json::from_value::<Events>(value)
        .expect("events decode")
        .events
}

fn day(n: i64) -> String {
    Date::today().plus_days(n).to_string()
}

#[tokio::test]
async fn tools_are_titled_annotated_and_delete_is_destructive() {
    let client = client().await;
    assert_tools_fully_described(&client).await;
    assert_eq!(
        client.instructions().as_deref(),
        Some(calendar::INSTRUCTIONS)
    );
    let tools = client.list_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search", "add_event", "delete_event"]);
    let hints: Vec<_> = tools
        .iter()
        .map(|t| t.annotations.clone().unwrap())
        .collect();
    assert!(hints[0].is_read_only());
    assert!(!hints[1].is_read_only() && !hints[1].is_destructive());
    assert!(hints[2].is_destructive());
}

#[tokio::test]
async fn search_finds_the_dentist_by_text_and_by_date_range() {
    let client = client().await;
    let found = events(structured(
        &call(&client, "search", json!({"text": "dentist"})).await,
    ));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].title, "Dentist appointment");
    assert_eq!(found[0].date, day(2));
    assert_eq!(found[0].start.as_deref(), Some("09:30"));

    let that_day = events(structured(
        &call(&client, "search", json!({"from": day(2), "to": day(2)})).await,
    ));
    assert_eq!(that_day, found);
    let all = events(structured(&call(&client, "search", json!({})).await));
    assert_eq!(all.len(), 6);
    assert!(
        all.windows(2).all(|w| w[0].date <= w[1].date),
        "sorted by date"
    );
    let nothing = events(structured(
        &call(&client, "search", json!({"text": "dentist", "to": day(1)})).await,
    ));
    assert!(nothing.is_empty());
}

#[tokio::test]
async fn dates_and_times_in_the_wrong_form_are_tool_errors_with_an_example() {
    let client = client().await;
    let bad_date = "Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.";
    assert_eq!(
        error_text(
            &call(
                &client,
                "add_event",
                json!({"title": "Lunch", "date": "tomorrow"})
            )
            .await
        ),
        bad_date
    );
    assert_eq!(
        error_text(&call(&client, "search", json!({"from": "tomorrow"})).await),
        bad_date
    );
    assert_eq!(
        error_text(
            &call(
                &client,
                "add_event",
                json!({"title": "Lunch", "date": "2026-11-03", "start": "noon"})
            )
            .await
        ),
        "Time 'noon' is not in HH:MM form (24-hour). Try again, for example 09:30."
    );
    assert_eq!(
        error_text(
            &call(
                &client,
                "add_event",
                json!({"title": "Lunch", "date": "2026-11-03", "start": "13:00", "end": "12:00"})
            )
            .await
        ),
        "The event ends at 12:00, not after it starts at 13:00. Give an end after the start."
    );
    assert_eq!(
        error_text(&call(&client, "search", json!({"from": "2026-11-03", "to": "2026-11-01"})).await),
        "The range ends on 2026-11-01, before it starts on 2026-11-03. Give a `to` on or after `from`."
    );
    let missing = error_text(&call(&client, "add_event", json!({"title": "Lunch"})).await);
    assert!(missing.contains("date"), "{missing}");
    let ill_typed = error_text(&call(&client, "delete_event", json!({"id": "three"})).await);
    assert!(ill_typed.contains("id"), "{ill_typed}");
}

#[tokio::test]
async fn an_added_event_is_found_and_a_deleted_one_is_gone() {
    let client = client().await;
    assert_eq!(
        ok_text(&call(&client, "add_event", json!({"title": "Team lunch", "date": "2026-11-03", "start": "12:30", "end": "13:30", "location": "Canteen"})).await),
        "Added event 7: Team lunch on 2026-11-03 from 12:30 to 13:30, at Canteen."
    );
    let found = events(structured(
        &call(&client, "search", json!({"text": "team lunch"})).await,
    ));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, 7);
    assert_eq!(
        ok_text(&call(&client, "delete_event", json!({"id": 7})).await),
        "Deleted event 7: Team lunch on 2026-11-03 from 12:30 to 13:30, at Canteen."
    );
    assert_eq!(
        error_text(&call(&client, "delete_event", json!({"id": 7})).await),
        "No event has the id 7. Use search to find the event's id."
    );
    assert!(events(structured(
        &call(&client, "search", json!({"text": "team lunch"})).await
    ))
    .is_empty());
}

#[tokio::test]
async fn summary_resource_and_plan_day_prompt_with_completion() {
    let client = client().await;
    let summary = read_text(&client, "calendar://summary").await;
    assert!(
        summary.starts_with(&format!(
            "Today is {}. The next 14 days hold 6 events:\n",
            day(0)
        )),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "Dentist appointment on {} from 09:30 to 10:15, at Smile Dental, 12 Harbour Street.",
            day(2)
        )),
        "{summary}"
    );

    let text = prompt_text(&client, "plan_day", &[("date", &day(1))]).await;
    assert!(text.contains("- Team stand-up on"), "{text}");
    assert!(text.contains("- Lunch with Priya on"), "{text}");
    let dates = complete(&client, CompletionRef::prompt("plan_day"), "date", "").await;
    assert_eq!(dates.len(), 5);
    assert_eq!(dates[0], day(1));
    let bad = client
        .get_prompt(
            junction_protocol::prompts::GetPromptParams::new("plan_day")
                .argument("date", "tomorrow"),
        )
        .await
        .unwrap_err();
    assert!(
        bad.to_string()
            .contains("Date 'tomorrow' is not in YYYY-MM-DD form."),
        "{bad}"
    );
}

#[tokio::test]
async fn seeding_is_idempotent() {
    let path = temp_db("calendar-seed");
    for _ in 0..2 {
        let client = connect(&calendar::server(&at(&path)).unwrap()).await;
        let dentist = events(structured(
            &call(&client, "search", json!({"text": "dentist"})).await,
        ));
        assert_eq!(dentist.len(), 1, "one dentist appointment after each run");
    }
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
