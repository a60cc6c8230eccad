//! The library server: a lending library's catalogue and one reader's loans, kept in SQLite
//! or in a PostgreSQL database that several instances share (a checkout of the last copy
//! succeeds on one of them only).
//!
//! Each primitive is used the way the specification means it:
//! - tools the model calls: `search` (structured results), `checkout`, `return_book`,
//!   `renew`, `place_hold`, and `inventory_report`, which takes seconds: it may run as a task
//!   (its status message names the shelf being counted, its progress counts the books);
//!   with a SQLite `--db` its tasks are kept in the database and outlive the process;
//! - resources the application attaches: the loan policy `library://policy` and each book
//!   at `library://books/{isbn}` (with ISBN completion);
//! - a prompt the user picks: `reading_list`, with its subject completed from the catalogue.
//!
//! ```
//! use junction::client::{Client, ClientOptions};
//! use junction::protocol::tools::CallToolParams;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (client_end, server_end) = junction::transport::memory::pair(Default::default());
//! let server = junction_servers::library::server(&Default::default()).unwrap();
//! server.serve(server_end);
//! let client = Client::connect(client_end, ClientOptions::new("doc", "1")).await.unwrap();
//! let arguments = serde_json::json!({"isbn": "9780000000042"});
//! let result = client
//!     .call_tool(
//!         CallToolParams::new("checkout").arguments(arguments.as_object().unwrap().clone()),
//!         Default::default(),
//!     )
//!     .await
//!     .unwrap();
//! assert_eq!(result.is_error, Some(true));
//! assert_eq!(
//!     result.content[0].as_text(),
//!     Some("No copies of 'Maps of Small Rivers' are available. Search for another title.")
//! );
//! # }
//! ```

mod catalogue;

use std::sync::Arc;
use std::time::Duration;

use junction::server::{not_found, prompt, resource, template, tool, Context, Json, Server, State};
use junction_protocol::tools::{TaskSupport, ToolAnnotations};
use junction_protocol::ErrorObject;

use crate::date::Date;
use crate::store::{run, DbError, Row, Sql, Store, Value};
use crate::{Options, StartError};

/// The server's name.
pub const NAME: &str = "library";
/// What the server tells a host's model.
pub const INSTRUCTIONS: &str = "A lending library's catalogue and the user's loans. Use \
`search` to find books and their ISBNs, then `checkout`, `return_book`, `renew` or \
`place_hold` with an ISBN. When a book has no copies left, offer another title from the \
search or a hold.";
/// The loan policy (`library://policy`).
pub const POLICY: &str = "Loan policy\n\
- A loan lasts 21 days.\n\
- A loan may be renewed twice, each time for 21 days from its due date.\n\
- A book with no copies on the shelf may be held; the holder is told when a copy returns.\n\
- Late books cost nothing, but a reader with a book 30 days late may borrow no more.\n";
/// How long a loan or a renewal lasts, in days.
pub const LOAN_DAYS: i64 = 21;
/// How many times a loan may be renewed.
pub const MAX_RENEWALS: i64 = 2;

/// One book as `search` and `library://books/{isbn}` report it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Book {
    /// The ISBN, which the other tools take.
    pub isbn: String,
    /// The title.
    pub title: String,
    /// The author.
    pub author: String,
    /// The subject.
    pub subject: String,
    /// The year of publication.
    pub year: i64,
    /// Copies on the shelf now.
    pub available: i64,
}

/// The result of `search`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchResults {
    /// The matching books, by title, at most `limit` of them.
    pub results: Vec<Book>,
    /// How many books match in all.
    pub total: i64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// Words to find in titles, authors and subjects (empty matches every book).
    query: String,
    /// Only books on this subject, e.g. "science".
    subject: Option<String>,
    /// The most results to return (1 to 50; 10 when not given).
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u32>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct IsbnArgs {
    /// The book's ISBN, as `search` reports it.
    isbn: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct InventoryArgs {
    /// Count only this subject's shelf; every shelf when absent.
    subject: Option<String>,
}

/// How long counting one book takes: the report is meant to take seconds.
pub const COUNT_PAUSE: Duration = Duration::from_millis(300);

/// Opens (and on first use seeds) the library's database and builds the server.
pub fn server(options: &Options) -> Result<Server, StartError> {
    let store = Store::open(options.db.as_ref(), &catalogue::SCHEMA, catalogue::seed)?;
    let mut builder = options.bound(Server::builder(NAME, env!("CARGO_PKG_VERSION")));
    // Tasks outlive the process in a SQLite file; on PostgreSQL they stay in the memory of
    // the instance that runs them, shared with the others through Redis when it is given
    // (see docs/scale-out.md).
    if let (Some(crate::Db::File(_)), Some(sqlite)) = (&options.db, store.sqlite()) {
        let tasks = crate::task_store::SqliteTaskStore::on(sqlite.clone(), 1_000)?;
        builder = builder.task_store(Arc::new(tasks));
    }
    Ok(builder
        .state(store)
        .title("Library")
        .instructions(INSTRUCTIONS)
        .tool(
            tool(
                "search",
                |State(s): State<Store>, a: SearchArgs| async move {
                    s.run(move |s| search(s, a)).await
                },
            )
            .title("Search the catalogue")
            .description(
                "Finds books by words in their title, author or subject, optionally on one \
                     subject. Use it whenever the user asks for books, and to learn a book's \
                     ISBN before calling the other tools. Results include the copies available.",
            )
            .annotations(reading_hints()),
        )
        .tool(
            tool(
                "checkout",
                |State(s): State<Store>, a: IsbnArgs| async move {
                    s.run(move |s| checkout(s, &a.isbn)).await
                },
            )
            .title("Check out a book")
            .description(
                "Borrows a book for the user when they ask to check it out or borrow it. \
                     Fails when no copy is on the shelf; then offer another title or a hold.",
            )
            .annotations(writing_hints(false)),
        )
        .tool(
            tool(
                "return_book",
                |State(s): State<Store>, a: IsbnArgs| async move {
                    s.run(move |s| return_book(s, &a.isbn)).await
                },
            )
            .title("Return a book")
            .description("Returns a book the user has on loan, when they say they brought it back.")
            .annotations(writing_hints(true)),
        )
        .tool(
            tool("renew", |State(s): State<Store>, a: IsbnArgs| async move {
                s.run(move |s| renew(s, &a.isbn)).await
            })
            .title("Renew a loan")
            .description(
                "Extends a loan by 21 days when the user needs a book longer. A loan may be \
                     renewed twice.",
            )
            .annotations(writing_hints(false)),
        )
        .tool(
            tool(
                "place_hold",
                |State(s): State<Store>, a: IsbnArgs| async move {
                    s.run(move |s| place_hold(s, &a.isbn)).await
                },
            )
            .title("Place a hold")
            .description(
                "Reserves a book that has no copies on the shelf, when the user wants it \
                     anyway. For a book with copies available, use checkout instead.",
            )
            .annotations(writing_hints(true)),
        )
        .tool(
            tool("inventory_report", inventory_report)
                .title("Inventory report")
                .description(
                    "Counts every book on the shelves (or one subject's) against the loans and \
                     holds, and reports per subject. Takes a few seconds; use it when the user \
                     asks for an inventory or a stock report.",
                )
                .annotations(reading_hints())
                .task_support(TaskSupport::Optional),
        )
        .resource(
            resource("library://policy", "policy", |_| async { POLICY })
                .title("Loan policy")
                .description("How long loans last, renewals and holds.")
                .mime_type("text/plain"),
        )
        .template(
            template("library://books/{isbn}", "book", |r| async move {
                let isbn = r.var("isbn").unwrap_or_default().to_owned();
                match run(r.state(), move |s| find_book(s, &isbn)).await {
                    Ok(Some(book)) => serde_json::to_string_pretty(&book)
                        .map_err(|e| ErrorObject::internal(e.to_string())),
                    Ok(None) => Err(not_found(&r.uri)),
                    Err(e) => Err(ErrorObject::internal(e)),
                }
            })
            .title("A book in the catalogue")
            .description("One book's record, by ISBN.")
            .mime_type("application/json")
            .complete("isbn", |r| async move {
                let typed = r.value.clone();
                run(r.state(), move |s| {
                    Ok::<_, String>(column_values(
                        s,
                        "SELECT isbn FROM books ORDER BY isbn",
                        &typed,
                    ))
                })
                .await
                .unwrap_or_default()
            }),
        )
        .prompt(
            prompt("reading_list", |p| async move {
                let subject = p.arg("subject").unwrap_or_default().to_owned();
                run(p.state(), move |s| reading_list(s, &subject)).await
            })
            .title("Reading list")
            .description("Asks for a reading list on a subject, from the library's own catalogue.")
            .required("subject", "The subject, e.g. science")
            .complete("subject", |r| async move {
                let typed = r.value.clone();
                run(r.state(), move |s| {
                    Ok::<_, String>(column_values(
                        s,
                        "SELECT DISTINCT subject FROM books ORDER BY subject",
                        &typed,
                    ))
                })
                .await
                .unwrap_or_default()
            }),
        )
        .build()?)
}

/// One shelf's count: subject, then (title, copies on the shelf, on loan, held) per book.
type Shelf = (String, Vec<(String, i64, bool, bool)>);

/// `inventory_report`: walks the shelves book by book, telling the client which shelf it is
/// on (the task's status message) and how many books it counted (progress).
async fn inventory_report(
    State(store): State<Store>,
    ctx: Context,
    args: InventoryArgs,
) -> Result<String, String> {
    let subject = args.subject.map(|s| s.trim().to_owned());
    let shelves = store.run(move |s| shelves(s, subject.as_deref())).await?;
    let total: usize = shelves.iter().map(|(_, books)| books.len()).sum();
    if total == 0 {
        return Err("No shelf has that subject. Search the catalogue for its subjects.".into());
    }
    let mut report = vec![format!("Inventory of {total} titles:")];
    let mut counted = 0usize;
    for (subject, books) in &shelves {
        ctx.task_status(format!("Counting the {subject} shelf"));
        let (mut on_shelf_total, mut loans, mut holds) = (0, 0, 0);
        for (title, on_shelf, on_loan, held) in books {
            tokio::time::sleep(COUNT_PAUSE).await;
            on_shelf_total += on_shelf;
            loans += i64::from(*on_loan);
            holds += i64::from(*held);
            counted += 1;
            ctx.progress(
                counted as f64,
                Some(total as f64),
                Some(format!("counted {title}")),
            );
        }
        report.push(format!(
            "- {subject}: {} titles, {} on the shelf, {loans} on loan, {holds} held",
            books.len(),
            copies(on_shelf_total)
        ));
    }
    Ok(report.join("\n"))
}

fn shelves(store: &Store, subject: Option<&str>) -> Result<Vec<Shelf>, String> {
    store.with(|db| {
        let rows = db.query(
            "SELECT subject, title, available, \
                    EXISTS (SELECT 1 FROM loans l WHERE l.isbn = b.isbn), \
                    EXISTS (SELECT 1 FROM holds h WHERE h.isbn = b.isbn) \
             FROM books b WHERE CAST($1 AS TEXT) IS NULL OR lower(subject) = lower($1) \
             ORDER BY subject, title",
            &[subject.into()],
        )?;
        let mut shelves: Vec<Shelf> = Vec::new();
        for r in rows {
            let subject: String = r.get(0)?;
            let book = (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
            match shelves.last_mut() {
                Some((s, books)) if *s == subject => books.push(book),
                _ => shelves.push((subject, vec![book])),
            }
        }
        Ok(shelves)
    })
}

fn reading_hints() -> ToolAnnotations {
    ToolAnnotations::default()
        .read_only(true)
        .idempotent(true)
        .open_world(false)
}

/// Loans and holds change only this library's records and destroy nothing.
fn writing_hints(idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::default()
        .read_only(false)
        .destructive(false)
        .idempotent(idempotent)
        .open_world(false)
}

fn search(store: &Store, args: SearchArgs) -> Result<Json<SearchResults>, String> {
    let limit = i64::from(args.limit.unwrap_or(10).clamp(1, 50));
    // Lowercased on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
    let pattern = format!("%{}%", escape_like(&args.query.trim().to_lowercase()));
    let subject = args.subject.map(|s| s.trim().to_owned());
    store
        .with(|db| {
            let filter = "FROM books WHERE (lower(title) LIKE $1 ESCAPE '\\' \
                          OR lower(author) LIKE $1 ESCAPE '\\' OR lower(subject) LIKE $1 ESCAPE '\\') \
                          AND (CAST($2 AS TEXT) IS NULL OR lower(subject) = lower($2))";
            let params: [Value; 2] = [pattern.into(), subject.into()];
            let total = db.query(&format!("SELECT COUNT(*) {filter}"), &params)?
                .first()
                .map_or(Ok(0), |r| r.get(0))?;
            let [pattern, subject] = params;
            let results = db
                .query(
                    &format!(
                        "SELECT isbn, title, author, subject, year, available {filter} \
                         ORDER BY title LIMIT $3"
                    ),
                    &[pattern, subject, limit.into()],
                )?
                .iter()
                .map(book_from_row)
                .collect::<Result<_, _>>()?;
            Ok(SearchResults { results, total })
        })
        .map(Json)
}

fn checkout(store: &Store, isbn: &str) -> Result<String, String> {
    let isbn = isbn.trim();
    store.transaction(|db| {
        let Some(book) = book(db, isbn)? else {
            return Ok(Err(unknown_isbn(isbn)));
        };
        let already = |due: String| {
            format!(
                "You already have '{}' checked out; it is due on {due}.",
                book.title
            )
        };
        if let Some((due, _)) = loan(db, isbn)? {
            return Ok(Err(already(due)));
        }
        let none_left = format!(
            "No copies of '{}' are available. Search for another title.",
            book.title
        );
        // Conditional, so that of two instances racing for the last copy one takes it: the
        // other waits for its row lock, then finds no copy and changes nothing.
        let taken = db.execute(
            "UPDATE books SET available = available - 1 WHERE isbn = $1 AND available > 0",
            &[isbn.into()],
        )?;
        if taken == 0 {
            return Ok(Err(none_left));
        }
        let due = Date::today().plus_days(LOAN_DAYS).to_string();
        let lent = db.execute(
            "INSERT INTO loans (isbn, due) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[isbn.into(), due.as_str().into()],
        )?;
        if lent == 0 {
            // Another instance lent it in the meantime; the copy taken above goes back.
            return Ok(Err(already(
                loan(db, isbn)?.map(|l| l.0).unwrap_or_default(),
            )));
        }
        db.execute("DELETE FROM holds WHERE isbn = $1", &[isbn.into()])?;
        Ok(Ok(format!(
            "Checked out '{}'. It is due back on {due}.",
            book.title
        )))
    })
}

fn return_book(store: &Store, isbn: &str) -> Result<String, String> {
    let isbn = isbn.trim();
    store.transaction(|db| {
        let Some(book) = book(db, isbn)? else {
            return Ok(Err(unknown_isbn(isbn)));
        };
        // The delete decides, so that a loan returned twice at once is counted back once.
        let returned = db.execute("DELETE FROM loans WHERE isbn = $1", &[isbn.into()])?;
        if returned == 0 {
            return Ok(Err(format!(
                "You do not have '{}' on loan, so there is nothing to return.",
                book.title
            )));
        }
        db.execute(
            "UPDATE books SET available = available + 1 WHERE isbn = $1",
            &[isbn.into()],
        )?;
        Ok(Ok(format!("Returned '{}'. Thank you.", book.title)))
    })
}

fn renew(store: &Store, isbn: &str) -> Result<String, String> {
    let isbn = isbn.trim();
    store.transaction(|db| {
        let Some(book) = book(db, isbn)? else {
            return Ok(Err(unknown_isbn(isbn)));
        };
        let Some((due, renewals)) = loan(db, isbn)? else {
            return Ok(Err(format!(
                "You do not have '{}' on loan. Use checkout to borrow it.",
                book.title
            )));
        };
        if renewals >= MAX_RENEWALS {
            return Ok(Err(format!(
                "'{}' has already been renewed {MAX_RENEWALS} times, the most the policy allows. \
                 Please return it by {due}.",
                book.title
            )));
        }
        let new_due = Date::parse(&due)
            .unwrap_or_else(Date::today)
            .plus_days(LOAN_DAYS)
            .to_string();
        // Conditional on what was read, so that two renewals at once count as one.
        let renewed = db.execute(
            "UPDATE loans SET due = $2, renewals = renewals + 1 \
             WHERE isbn = $1 AND renewals = $3 AND due = $4",
            &[
                isbn.into(),
                new_due.as_str().into(),
                renewals.into(),
                due.into(),
            ],
        )?;
        if renewed == 0 {
            return Ok(Err(format!(
                "'{}' was renewed or returned at the same moment; check the loan and try again.",
                book.title
            )));
        }
        Ok(Ok(format!(
            "Renewed '{}'. It is now due back on {new_due}.",
            book.title
        )))
    })
}

fn place_hold(store: &Store, isbn: &str) -> Result<String, String> {
    let isbn = isbn.trim();
    store.transaction(|db| {
        let Some(book) = book(db, isbn)? else {
            return Ok(Err(unknown_isbn(isbn)));
        };
        if loan(db, isbn)?.is_some() {
            return Ok(Err(format!(
                "You already have '{}' checked out.",
                book.title
            )));
        }
        if book.available > 0 {
            return Ok(Err(format!(
                "'{}' has {} on the shelf; use checkout to borrow it instead of placing a hold.",
                book.title,
                copies(book.available)
            )));
        }
        let placed = db.execute(
            "INSERT INTO holds (isbn, placed) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[isbn.into(), Date::today().to_string().into()],
        )?;
        Ok(Ok(if placed == 0 {
            format!("You already have a hold on '{}'.", book.title)
        } else {
            format!(
                "Placed a hold on '{}'. You will be told when a copy is returned.",
                book.title
            )
        }))
    })
}

fn reading_list(store: &Store, subject: &str) -> Result<String, ErrorObject> {
    let found = search(
        store,
        SearchArgs {
            query: String::new(),
            subject: Some(subject.to_owned()),
            limit: Some(50),
        },
    )
    .map_err(ErrorObject::internal)?;
    let mut text = format!(
        "Put together a reading list about {subject} for me from the library's catalogue, \
         from introductory to advanced, and say which books I can check out today.\n\n"
    );
    if found.0.results.is_empty() {
        text.push_str(
            "The catalogue has no books on that subject; suggest a nearby subject it does have.",
        );
    } else {
        text.push_str("The catalogue's books on it:\n");
        for book in &found.0.results {
            text.push_str(&format!(
                "- '{}' by {} ({}), ISBN {}, {} available\n",
                book.title,
                book.author,
                book.year,
                book.isbn,
                copies(book.available)
            ));
        }
    }
    Ok(text)
}

fn find_book(store: &Store, isbn: &str) -> Result<Option<Book>, String> {
    store.with(|db| book(db, isbn))
}

fn book(db: &mut dyn Sql, isbn: &str) -> Result<Option<Book>, DbError> {
    db.query_opt(
        "SELECT isbn, title, author, subject, year, available FROM books WHERE isbn = $1",
        &[isbn.trim().into()],
    )?
    .as_ref()
    .map(book_from_row)
    .transpose()
}

/// The reader's loan of `isbn`: due date and renewals used.
fn loan(db: &mut dyn Sql, isbn: &str) -> Result<Option<(String, i64)>, DbError> {
    db.query_opt(
        "SELECT due, renewals FROM loans WHERE isbn = $1",
        &[isbn.trim().into()],
    )?
    .map(|r| Ok((r.get(0)?, r.get(1)?)))
    .transpose()
}

fn book_from_row(r: &Row) -> Result<Book, DbError> {
    Ok(Book {
        isbn: r.get(0)?,
        title: r.get(1)?,
        author: r.get(2)?,
        subject: r.get(3)?,
        year: r.get(4)?,
        available: r.get(5)?,
    })
}

/// The values of a one-column query that start with `typed` (case-insensitive), for
/// completion. A database failure completes nothing.
fn column_values(store: &Store, query: &str, typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    store
        .with(|db| {
            db.query(query, &[])?
                .iter()
                .map(|r| r.get::<String>(0))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect()
}

fn unknown_isbn(isbn: &str) -> String {
    format!("No book in the catalogue has the ISBN '{isbn}'. Use search to find the book's ISBN.")
}

fn copies(n: i64) -> String {
    match n {
        1 => "1 copy".to_owned(),
        n => format!("{n} copies"),
    }
}

/// Makes `%`, `_` and `\` in what the user typed match themselves in a LIKE pattern.
fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

#[cfg(test)]
mod tests;
