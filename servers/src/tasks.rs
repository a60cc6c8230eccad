//! The tasks server: a to-do list kept in SQLite, showing the requests a server sends back
//! to the client.
//!
//! - tools the model calls: `add_task`, `complete_task`, `delete_task` (destructive: it asks
//!   the user to confirm through elicitation when the client can, and otherwise asks the
//!   model to get the user's word and pass `confirm: true`) and `summarize_completed` (asks
//!   the host's model through sampling);
//! - resources the application attaches: `tasks://open` (subscribable: every change sends
//!   `notifications/resources/updated`) and each task at `tasks://{id}`;
//! - a prompt the user picks: `weekly_review`.
//!
//! ```
//! use junction::client::{Client, ClientOptions};
//! use junction::protocol::tools::CallToolParams;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (client_end, server_end) = junction::transport::memory::pair(Default::default());
//! junction_servers::tasks::server(&Default::default()).unwrap().serve(server_end);
//! let client = Client::connect(client_end, ClientOptions::new("doc", "1")).await.unwrap();
//! let arguments = serde_json::json!({"title": "Ship the Q3 report"});
//! let result = client
//!     .call_tool(
//!         CallToolParams::new("add_task").arguments(arguments.as_object().unwrap().clone()),
//!         Default::default(),
//!     )
//!     .await
//!     .unwrap();
//! assert_eq!(result.content[0].as_text(), Some("Created task 17: Ship the Q3 report"));
//! # }
//! ```

use junction::server::{not_found, prompt, resource, template, tool, Context, Server, State};
use junction::RequestError;
use junction_protocol::elicitation::{ElicitAction, FormParams, RequestedSchema};
use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
use junction_protocol::tools::ToolAnnotations;
use junction_protocol::ErrorObject;
use rusqlite::{params, Connection, OptionalExtension};

use crate::date::Date;
use crate::store::{run, Store};
use crate::{Options, StartError};

/// The server's name.
pub const NAME: &str = "tasks";
/// What the server tells a host's model.
pub const INSTRUCTIONS: &str = "The user's to-do list. Use `add_task` when the user wants to \
remember to do something, `complete_task` when they have done it, `delete_task` only when \
they ask to remove a task (it cannot be undone and needs their confirmation), and \
`summarize_completed` when they ask what they have achieved. Tasks are numbered; the open \
ones are at the resource tasks://open.";
/// The URI of the open tasks.
pub const OPEN: &str = "tasks://open";
/// The most tokens `summarize_completed` asks the host's model for.
pub const SUMMARY_TOKENS: u64 = 400;

const SCHEMA: &str = "
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    notes TEXT,
    due TEXT,
    created TEXT NOT NULL,
    completed TEXT
);
";

/// The sample tasks: title, due in days (if any), completed days ago (if done).
const TASKS: &[(&str, Option<i64>, Option<i64>)] = &[
    ("Book the team offsite venue", None, Some(6)),
    ("Renew passport", Some(20), None),
    ("Send the invoice to Northwind", None, Some(4)),
    ("Fix the leaking kitchen tap", Some(3), None),
    ("Draft the Q3 report outline", None, Some(2)),
    ("Call the insurance company", Some(1), None),
    ("Buy a birthday present for Mum", Some(11), None),
    ("Review Priya's pull request", None, Some(1)),
    ("Plan the book club reading", Some(5), None),
    ("Back up the laptop", None, Some(9)),
    ("Water the plants", Some(0), None),
    ("Update the budget spreadsheet", Some(7), None),
    ("Return the library books", Some(2), None),
    ("Write thank-you notes", None, Some(3)),
    ("Clean out the garage", None, None),
    ("Schedule the car service", Some(14), None),
];

/// One task.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Task {
    /// Its number.
    pub id: i64,
    /// What to do.
    pub title: String,
    /// More detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// When it is due, YYYY-MM-DD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// The day it was added.
    pub created: String,
    /// The day it was completed, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// What to do, in a few words.
    title: String,
    /// When it is due, YYYY-MM-DD.
    due: Option<String>,
    /// More detail.
    notes: Option<String>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct IdArgs {
    /// The task's number.
    id: i64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct DeleteArgs {
    /// The task's number.
    id: i64,
    /// Set to true only after the user has said, in this conversation, to delete this task.
    /// Needed when the client cannot ask the user itself.
    #[serde(default)]
    confirm: bool,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// Opens (and on first use seeds) the tasks database and builds the server.
pub fn server(options: &Options) -> Result<Server, StartError> {
    let store = Store::open(options.db.as_deref(), SCHEMA, seed)?;
    Ok(Server::builder(NAME, env!("CARGO_PKG_VERSION"))
        .state(store)
        .title("Tasks")
        .instructions(INSTRUCTIONS)
        .tool(
            tool(
                "add_task",
                |State(s): State<Store>, ctx: Context, a: AddArgs| async move {
                    s.run(move |s| add_task(s, &ctx, a)).await
                },
            )
            .title("Add a task")
            .description(
                "Adds a task to the user's to-do list when they want to remember to do \
                 something. Each call adds another task.",
            )
            .annotations(hints(false, false)),
        )
        .tool(
            tool(
                "complete_task",
                |State(s): State<Store>, ctx: Context, a: IdArgs| async move {
                    s.run(move |s| complete_task(s, &ctx, a.id)).await
                },
            )
            .title("Complete a task")
            .description("Marks a task done when the user says they have finished it.")
            .annotations(hints(false, true)),
        )
        .tool(
            tool(
                "delete_task",
                |State(s): State<Store>, ctx: Context, a: DeleteArgs| delete_task(s, ctx, a),
            )
            .title("Delete a task")
            .description(
                "Removes a task for good. Use it only when the user asks to delete or drop a \
                 task (for a finished task use complete_task). The user is asked to confirm.",
            )
            .annotations(hints(true, true)),
        )
        .tool(
            tool(
                "summarize_completed",
                |State(s): State<Store>, ctx: Context, _: NoArgs| summarize_completed(s, ctx),
            )
            .title("Summarize completed tasks")
            .description(
                "Writes a short summary of what the user has completed, using the host's \
                 model. Use it when the user asks what they have done or achieved.",
            )
            .annotations(
                ToolAnnotations::default()
                    .read_only(true)
                    .idempotent(false)
                    .open_world(false),
            ),
        )
        .resource(
            resource(
                OPEN,
                "open",
                |r| async move { run(r.state(), open_tasks).await },
            )
            .title("Open tasks")
            .description("Every task not yet completed, by due date, as JSON.")
            .mime_type("application/json"),
        )
        .template(
            template("tasks://{id}", "task", |r| async move {
                let Some(id) = r.var("id").and_then(|v| v.parse::<i64>().ok()) else {
                    return Err(not_found(&r.uri));
                };
                match run(r.state(), move |s| s.with(|c| task(c, id))).await {
                    Ok(Some(task)) => to_json(&task),
                    Ok(None) => Err(not_found(&r.uri)),
                    Err(e) => Err(ErrorObject::internal(e)),
                }
            })
            .title("A task")
            .description("One task by its number, as JSON.")
            .mime_type("application/json")
            .complete("id", |r| async move {
                let typed = r.value.clone();
                run(r.state(), move |s| Ok::<_, String>(task_ids(s, &typed)))
                    .await
                    .unwrap_or_default()
            }),
        )
        .prompt(
            prompt("weekly_review", |p| async move {
                run(p.state(), weekly_review).await
            })
            .title("Weekly review")
            .description(
                "Reviews the week: what got done, what is open or overdue, what comes next.",
            ),
        )
        .subscriptions()
        .build()?)
}

fn hints(destructive: bool, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::default()
        .read_only(false)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false)
}

fn seed(connection: &Connection) -> rusqlite::Result<()> {
    let today = Date::today();
    for (title, due, done) in TASKS {
        let created = today.plus_days(-14).to_string();
        let due = due.map(|d| today.plus_days(d).to_string());
        let completed = done.map(|d| today.plus_days(-d).to_string());
        connection.execute(
            "INSERT INTO tasks (title, due, created, completed) VALUES (?1, ?2, ?3, ?4)",
            params![title, due, created, completed],
        )?;
    }
    Ok(())
}

fn add_task(store: &Store, ctx: &Context, args: AddArgs) -> Result<String, String> {
    let title = args.title.trim().to_owned();
    if title.is_empty() {
        return Err("The title is empty. Say in a few words what is to be done.".into());
    }
    let due = match args.due.as_deref() {
        Some(text) => Some(
            Date::parse(text)
                .ok_or_else(|| format!("Date '{text}' is not in YYYY-MM-DD form. Try again, for example 2026-11-03."))?
                .to_string(),
        ),
        None => None,
    };
    let id = store.with(|c| {
        c.execute(
            "INSERT INTO tasks (title, notes, due, created) VALUES (?1, ?2, ?3, ?4)",
            params![title, args.notes, due, Date::today().to_string()],
        )?;
        Ok(c.last_insert_rowid())
    })?;
    changed(ctx, id);
    Ok(format!("Created task {id}: {title}"))
}

fn complete_task(store: &Store, ctx: &Context, id: i64) -> Result<String, String> {
    let task = store
        .with(|c| task(c, id))?
        .ok_or_else(|| unknown_task(id))?;
    if let Some(day) = &task.completed {
        return Err(format!(
            "Task {id} ({}) was already completed on {day}.",
            task.title
        ));
    }
    store.with(|c| {
        c.execute(
            "UPDATE tasks SET completed = ?2 WHERE id = ?1",
            params![id, Date::today().to_string()],
        )
    })?;
    changed(ctx, id);
    Ok(format!("Completed task {id}: {}", task.title))
}

async fn delete_task(store: Store, ctx: Context, args: DeleteArgs) -> Result<String, String> {
    let id = args.id;
    let task = store
        .run(move |s| s.with(|c| task(c, id)))
        .await?
        .ok_or_else(|| unknown_task(id))?;
    let question = FormParams::new(
        format!("Delete task {id}, '{}'? This cannot be undone.", task.title),
        RequestedSchema::new(),
    );
    match ctx.elicit(question).await {
        Ok(answer) => match answer.action {
            ElicitAction::Accept => {}
            ElicitAction::Decline => {
                return Ok(format!("Kept task {id}: the user declined to delete it."))
            }
            ElicitAction::Cancel => {
                return Ok(format!(
                    "Kept task {id}: the user dismissed the question without deciding."
                ))
            }
        },
        Err(RequestError::NotSupported { .. }) if args.confirm => {}
        Err(RequestError::NotSupported { .. }) => {
            return Err(format!(
                "Task {id} ('{}') was not deleted: deleting cannot be undone, and this client \
                 cannot ask the user to confirm. Ask the user whether to delete it; if they \
                 agree, call delete_task again with confirm: true.",
                task.title
            ))
        }
        Err(e) => {
            return Err(format!(
            "Task {id} was not deleted: asking the user to confirm failed ({e}). Try again later."
        ))
        }
    }
    store
        .run(move |s| s.with(|c| c.execute("DELETE FROM tasks WHERE id = ?1", [id])))
        .await?;
    changed(&ctx, id);
    Ok(format!("Deleted task {id}: {}", task.title))
}

async fn summarize_completed(store: Store, ctx: Context) -> Result<String, String> {
    let done = store
        .run(|s| {
            s.with(|c| {
                query_tasks(c, "SELECT id, title, notes, due, created, completed FROM tasks WHERE completed IS NOT NULL ORDER BY completed, id")
            })
        })
        .await?;
    if done.is_empty() {
        return Ok("No tasks are completed yet, so there is nothing to summarize.".into());
    }
    let list: String = done
        .iter()
        .map(|t| {
            format!(
                "- {} (completed {})\n",
                t.title,
                t.completed.as_deref().unwrap_or("")
            )
        })
        .collect();
    let request = CreateMessageParams::new(
        vec![SamplingMessage::user_text(format!(
            "Summarize in two or three sentences what I have completed:\n{list}"
        ))],
        SUMMARY_TOKENS,
    )
    .system_prompt("You write short, warm summaries of finished work. Mention every task.");
    match ctx.create_message(request).await {
        Ok(answer) => answer
            .content
            .blocks()
            .iter()
            .find_map(|block| block.as_text())
            .map(str::to_owned)
            .ok_or_else(|| {
                format!("The host's model answered without text. The completed tasks are:\n{list}")
            }),
        Err(RequestError::NotSupported { reason, .. }) => Err(format!(
            "No summary was written: the host's model cannot be asked here ({reason}). \
             Summarize these completed tasks yourself:\n{list}"
        )),
        Err(e) => Err(format!(
            "No summary was written: the host's model could not be asked ({e}). The completed \
             tasks are:\n{list}"
        )),
    }
}

fn open_tasks(store: &Store) -> Result<String, ErrorObject> {
    let open = store
        .with(|c| {
            query_tasks(c, "SELECT id, title, notes, due, created, completed FROM tasks WHERE completed IS NULL ORDER BY due IS NULL, due, id")
        })
        .map_err(ErrorObject::internal)?;
    to_json(&open)
}

fn weekly_review(store: &Store) -> Result<String, ErrorObject> {
    let today = Date::today();
    let since = today.plus_days(-7).to_string();
    let (done, open) = store
        .with(|c| {
            let done = query_tasks(c, "SELECT id, title, notes, due, created, completed FROM tasks WHERE completed IS NOT NULL ORDER BY completed, id")?;
            let open = query_tasks(c, "SELECT id, title, notes, due, created, completed FROM tasks WHERE completed IS NULL ORDER BY due IS NULL, due, id")?;
            Ok((done, open))
        })
        .map_err(ErrorObject::internal)?;
    let mut text = format!(
        "Let's do my weekly review for the week ending {today}. Celebrate what I finished, \
         flag what is overdue, and suggest the three tasks to do first next week.\n\nCompleted this week:\n"
    );
    for task in done
        .iter()
        .filter(|t| t.completed.as_deref() >= Some(since.as_str()))
    {
        text.push_str(&format!("- {}\n", task.title));
    }
    text.push_str("\nStill open:\n");
    for task in &open {
        let due = match task.due.as_deref() {
            Some(due) if due < today.to_string().as_str() => format!(" (OVERDUE, was due {due})"),
            Some(due) => format!(" (due {due})"),
            None => String::new(),
        };
        text.push_str(&format!("- [{}] {}{due}\n", task.id, task.title));
    }
    Ok(text)
}

/// Tells subscribers that the open list and the task changed.
fn changed(ctx: &Context, id: i64) {
    ctx.server().notify_resource_updated(OPEN);
    ctx.server()
        .notify_resource_updated(&format!("tasks://{id}"));
}

fn task_ids(store: &Store, typed: &str) -> Vec<String> {
    store
        .with(|c| {
            let mut statement = c.prepare(
                "SELECT id FROM tasks WHERE CAST(id AS TEXT) LIKE ?1 || '%' ORDER BY id",
            )?;
            let ids = statement
                .query_map([typed.trim()], |r| r.get::<_, i64>(0))?
                .map(|id| id.map(|id| id.to_string()))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(ids)
        })
        .unwrap_or_default()
}

fn task(c: &Connection, id: i64) -> rusqlite::Result<Option<Task>> {
    c.query_row(
        "SELECT id, title, notes, due, created, completed FROM tasks WHERE id = ?1",
        [id],
        task_from_row,
    )
    .optional()
}

fn query_tasks(c: &Connection, sql: &str) -> rusqlite::Result<Vec<Task>> {
    let mut statement = c.prepare(sql)?;
    let tasks = statement.query_map([], task_from_row)?.collect();
    tasks
}

fn task_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Task> {
    Ok(Task {
        id: r.get(0)?,
        title: r.get(1)?,
        notes: r.get(2)?,
        due: r.get(3)?,
        created: r.get(4)?,
        completed: r.get(5)?,
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, ErrorObject> {
    serde_json::to_string_pretty(value).map_err(|e| ErrorObject::internal(e.to_string()))
}

fn unknown_task(id: i64) -> String {
    format!("No task has the number {id}. Ask the user which task they mean.")
}

#[cfg(test)]
mod tests;
