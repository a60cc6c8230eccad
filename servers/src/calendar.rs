//! The calendar server: one person's events, kept in SQLite.
//!
//! - tools the model calls: `search` (text and date range, structured results),
//!   `add_event`, and `delete_event` (marked destructive);
//! - a resource the application attaches: `calendar://summary`, the coming two weeks;
//! - a prompt the user picks: `plan_day`, with the date completed from days that have events.
//!
//! Dates are `YYYY-MM-DD` and times `HH:MM`; anything else is a tool error that shows the
//! form with an example.
//!
//! ```
//! use junction::client::{Client, ClientOptions};
//! use junction::protocol::tools::CallToolParams;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (client_end, server_end) = junction::transport::memory::pair(Default::default());
//! junction_servers::calendar::server(&Default::default()).unwrap().serve(server_end);
//! let client = Client::connect(client_end, ClientOptions::new("doc", "1")).await.unwrap();
//! let arguments = serde_json::json!({"title": "Lunch", "date": "tomorrow"});
//! let result = client
//!     .call_tool(
//!         CallToolParams::new("add_event").arguments(arguments.as_object().unwrap().clone()),
//!         Default::default(),
//!     )
//!     .await
//!     .unwrap();
//! assert_eq!(
//!     result.content[0].as_text(),
//!     Some("Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.")
//! );
//! # }
//! ```

use junction::server::{prompt, resource, tool, Json, Server, State};
use junction_protocol::tools::ToolAnnotations;
use junction_protocol::ErrorObject;
use rusqlite::{params, Connection, OptionalExtension};

use crate::date::Date;
use crate::store::{run, Store};
use crate::{Options, StartError};

/// The server's name.
pub const NAME: &str = "calendar";
/// What the server tells a host's model.
pub const INSTRUCTIONS: &str = "The user's personal calendar. Use `search` to find events by \
words and dates before answering questions about the user's schedule, `add_event` to put \
something on the calendar, and `delete_event` (which cannot be undone) only when the user \
asks to remove an event. Dates are YYYY-MM-DD and times HH:MM, 24-hour.";
/// How many days `calendar://summary` looks ahead.
pub const SUMMARY_DAYS: i64 = 14;

const SCHEMA: &str = "
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    date TEXT NOT NULL,
    start TEXT,
    end TEXT,
    location TEXT
);
";

/// A sample event: title, days from the first run, start, end, location.
type SampleEvent = (
    &'static str,
    i64,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

/// The sample events.
const EVENTS: &[SampleEvent] = &[
    ("Team stand-up", 1, Some("09:00"), Some("09:15"), None),
    (
        "Lunch with Priya",
        1,
        Some("12:30"),
        Some("13:30"),
        Some("Café Lumen"),
    ),
    (
        "Dentist appointment",
        2,
        Some("09:30"),
        Some("10:15"),
        Some("Smile Dental, 12 Harbour Street"),
    ),
    (
        "Book club: The Long Winter Garden",
        6,
        Some("19:00"),
        Some("21:00"),
        Some("Library reading room"),
    ),
    (
        "Flight to Lisbon",
        10,
        Some("07:45"),
        None,
        Some("Airport, terminal 2"),
    ),
    ("Mum's birthday", 12, None, None, None),
];

/// One event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// Its id, which `delete_event` takes.
    pub id: i64,
    /// What it is.
    pub title: String,
    /// The day, YYYY-MM-DD.
    pub date: String,
    /// When it starts, HH:MM (none for an all-day event).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// When it ends, HH:MM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// Where it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// The result of `search`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Events {
    /// The matching events, by date and time.
    pub events: Vec<Event>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// Words to find in the title or location (leave out to match every event).
    text: Option<String>,
    /// The first day to include, YYYY-MM-DD.
    from: Option<String>,
    /// The last day to include, YYYY-MM-DD.
    to: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// What the event is.
    title: String,
    /// The day, YYYY-MM-DD.
    date: String,
    /// When it starts, HH:MM (leave out for an all-day event).
    start: Option<String>,
    /// When it ends, HH:MM.
    end: Option<String>,
    /// Where it is.
    location: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct DeleteArgs {
    /// The event's id, as `search` reports it.
    id: i64,
}

/// Opens (and on first use seeds) the calendar's database and builds the server.
pub fn server(options: &Options) -> Result<Server, StartError> {
    let store = Store::open(options.db.as_deref(), SCHEMA, seed)?;
    Ok(Server::builder(NAME, env!("CARGO_PKG_VERSION"))
        .state(store)
        .title("Calendar")
        .instructions(INSTRUCTIONS)
        .tool(
            tool(
                "search",
                |State(s): State<Store>, a: SearchArgs| async move {
                    s.run(move |s| search(s, a)).await
                },
            )
            .title("Search events")
            .description(
                "Finds events whose title or location contains the text, between two dates \
                     (both optional, inclusive). Use it before answering anything about the \
                     user's schedule, and to find an event's id.",
            )
            .annotations(
                ToolAnnotations::default()
                    .read_only(true)
                    .idempotent(true)
                    .open_world(false),
            ),
        )
        .tool(
            tool(
                "add_event",
                |State(s): State<Store>, a: AddArgs| async move {
                    s.run(move |s| add_event(s, a)).await
                },
            )
            .title("Add an event")
            .description(
                "Puts a new event on the calendar when the user asks to schedule, book or \
                     remember something on a day. Each call adds another event.",
            )
            .annotations(
                ToolAnnotations::default()
                    .read_only(false)
                    .destructive(false)
                    .idempotent(false)
                    .open_world(false),
            ),
        )
        .tool(
            tool(
                "delete_event",
                |State(s): State<Store>, a: DeleteArgs| async move {
                    s.run(move |s| delete_event(s, a.id)).await
                },
            )
            .title("Delete an event")
            .description(
                "Removes an event for good. Use it only when the user asks to cancel or \
                     remove that event; find its id with search first.",
            )
            .annotations(
                ToolAnnotations::default()
                    .read_only(false)
                    .destructive(true)
                    .idempotent(true)
                    .open_world(false),
            ),
        )
        .resource(
            resource("calendar://summary", "summary", |r| async move {
                run(r.state(), |s| summary(s).map_err(ErrorObject::internal)).await
            })
            .title("The coming two weeks")
            .description("Today's date and every event of the next 14 days.")
            .mime_type("text/plain"),
        )
        .prompt(
            prompt("plan_day", |p| async move {
                let date = p.arg("date").unwrap_or_default().to_owned();
                run(p.state(), move |s| plan_day(s, &date)).await
            })
            .title("Plan a day")
            .description("Asks for a plan of one day around the events already on it.")
            .required("date", "The day, YYYY-MM-DD")
            .complete("date", |r| async move {
                let typed = r.value.clone();
                run(r.state(), move |s| Ok::<_, String>(event_dates(s, &typed)))
                    .await
                    .unwrap_or_default()
            }),
        )
        .build()?)
}

fn seed(connection: &Connection) -> rusqlite::Result<()> {
    let today = Date::today();
    for (title, days, start, end, location) in EVENTS {
        connection.execute(
            "INSERT INTO events (title, date, start, end, location) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                title,
                today.plus_days(*days).to_string(),
                start,
                end,
                location
            ],
        )?;
    }
    Ok(())
}

fn search(store: &Store, args: SearchArgs) -> Result<Json<Events>, String> {
    let from = args.from.as_deref().map(parse_date).transpose()?;
    let to = args.to.as_deref().map(parse_date).transpose()?;
    if let (Some(from), Some(to)) = (from, to) {
        if to < from {
            return Err(format!(
                "The range ends on {to}, before it starts on {from}. Give a `to` on or after `from`."
            ));
        }
    }
    let pattern = format!(
        "%{}%",
        args.text
            .unwrap_or_default()
            .trim()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let (from, to) = (from.map(|d| d.to_string()), to.map(|d| d.to_string()));
    store
        .with(|c| {
            let mut statement = c.prepare(
                "SELECT id, title, date, start, end, location FROM events \
                 WHERE (title LIKE ?1 ESCAPE '\\' OR IFNULL(location, '') LIKE ?1 ESCAPE '\\') \
                 AND (?2 IS NULL OR date >= ?2) AND (?3 IS NULL OR date <= ?3) \
                 ORDER BY date, IFNULL(start, ''), id",
            )?;
            let events = statement
                .query_map(params![pattern, from, to], event_from_row)?
                .collect::<rusqlite::Result<_>>()?;
            Ok(Events { events })
        })
        .map(Json)
}

fn add_event(store: &Store, args: AddArgs) -> Result<String, String> {
    let title = args.title.trim().to_owned();
    if title.is_empty() {
        return Err(
            "The title is empty. Give the event a short title, for example 'Dentist'.".into(),
        );
    }
    let date = parse_date(&args.date)?;
    let start = args.start.as_deref().map(parse_time).transpose()?;
    let end = args.end.as_deref().map(parse_time).transpose()?;
    match (&start, &end) {
        (None, Some(_)) => return Err(
            "An end time needs a start time. Give `start` too, or neither for an all-day event."
                .into(),
        ),
        (Some(start), Some(end)) if end <= start => {
            return Err(format!(
            "The event ends at {end}, not after it starts at {start}. Give an end after the start."
        ))
        }
        _ => {}
    }
    let event = store.with(|c| {
        c.execute(
            "INSERT INTO events (title, date, start, end, location) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![title, date.to_string(), start, end, args.location],
        )?;
        event(c, c.last_insert_rowid())
    })?;
    match event {
        Some(event) => Ok(format!("Added event {}: {}", event.id, describe(&event))),
        None => {
            Err("The event was saved but could not be read back. Search for it to check.".into())
        }
    }
}

fn delete_event(store: &Store, id: i64) -> Result<String, String> {
    store.with(|c| {
        let Some(event) = event(c, id)? else {
            return Ok(Err(format!(
                "No event has the id {id}. Use search to find the event's id."
            )));
        };
        c.execute("DELETE FROM events WHERE id = ?1", [id])?;
        Ok(Ok(format!("Deleted event {id}: {}", describe(&event))))
    })?
}

fn summary(store: &Store) -> Result<String, String> {
    let today = Date::today();
    let Json(found) = search(
        store,
        SearchArgs {
            text: None,
            from: Some(today.to_string()),
            to: Some(today.plus_days(SUMMARY_DAYS).to_string()),
        },
    )?;
    let mut text = format!("Today is {today}. ");
    if found.events.is_empty() {
        text.push_str(&format!(
            "Nothing is planned in the next {SUMMARY_DAYS} days.\n"
        ));
    } else {
        text.push_str(&format!(
            "The next {SUMMARY_DAYS} days hold {} events:\n",
            found.events.len()
        ));
        for event in &found.events {
            text.push_str(&format!("- [{}] {}\n", event.id, describe(event)));
        }
    }
    Ok(text)
}

fn plan_day(store: &Store, date: &str) -> Result<String, ErrorObject> {
    let day = parse_date(date)
        .map_err(ErrorObject::invalid_params)?
        .to_string();
    let Json(found) = search(
        store,
        SearchArgs {
            text: None,
            from: Some(day.clone()),
            to: Some(day.clone()),
        },
    )
    .map_err(ErrorObject::internal)?;
    let mut text = format!(
        "Help me plan {day}. Suggest an order for the day with time for travel and breaks, \
         and point out anything that clashes.\n\n"
    );
    if found.events.is_empty() {
        text.push_str("Nothing is on my calendar that day yet.");
    } else {
        text.push_str("Already on my calendar:\n");
        for event in &found.events {
            text.push_str(&format!("- {}\n", describe(event)));
        }
    }
    Ok(text)
}

/// The days that have events and start with what was typed, for completion.
fn event_dates(store: &Store, typed: &str) -> Vec<String> {
    store
        .with(|c| {
            let mut statement = c.prepare(
                "SELECT DISTINCT date FROM events WHERE date LIKE ?1 || '%' ORDER BY date",
            )?;
            let dates = statement
                .query_map([typed.trim()], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(dates)
        })
        .unwrap_or_default()
}

/// `Title on DATE from START to END at LOCATION.`
fn describe(event: &Event) -> String {
    let mut text = format!("{} on {}", event.title, event.date);
    match (&event.start, &event.end) {
        (Some(start), Some(end)) => text.push_str(&format!(" from {start} to {end}")),
        (Some(start), None) => text.push_str(&format!(" at {start}")),
        _ => text.push_str(" (all day)"),
    }
    if let Some(location) = &event.location {
        text.push_str(&format!(", at {location}"));
    }
    text.push('.');
    text
}

fn event(c: &Connection, id: i64) -> rusqlite::Result<Option<Event>> {
    c.query_row(
        "SELECT id, title, date, start, end, location FROM events WHERE id = ?1",
        [id],
        event_from_row,
    )
    .optional()
}

fn event_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Event> {
    Ok(Event {
        id: r.get(0)?,
        title: r.get(1)?,
        date: r.get(2)?,
        start: r.get(3)?,
        end: r.get(4)?,
        location: r.get(5)?,
    })
}

fn parse_date(text: &str) -> Result<Date, String> {
    Date::parse(text).ok_or_else(|| {
        format!("Date '{text}' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.")
    })
}

fn parse_time(text: &str) -> Result<String, String> {
    let valid = text.len() == 5
        && text.as_bytes()[2] == b':'
        && matches!((text[..2].parse::<u8>(), text[3..].parse::<u8>()), (Ok(h), Ok(m)) if h < 24 && m < 60)
        && text
            .bytes()
            .enumerate()
            .all(|(i, b)| i == 2 || b.is_ascii_digit());
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "Time '{text}' is not in HH:MM form (24-hour). Try again, for example 09:30."
        ))
    }
}

#[cfg(test)]
mod tests;
