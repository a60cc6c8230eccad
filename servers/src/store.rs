//! The database an example server keeps its data in: SQLite at `--db PATH` (or in memory),
//! or PostgreSQL at `--db postgres://...`, created and seeded once, then shared by the
//! server's handlers.
//!
//! The servers' code does not care which: it speaks to a [`Sql`] connection, writes its
//! queries once with `$1`-style placeholders in the SQL that both engines accept (`COALESCE`,
//! `CAST(... AS TEXT)`, `lower(...) LIKE`, `ON CONFLICT DO NOTHING`, `RETURNING`), and
//! reads [`Value`]s back. Only the tables' definitions differ per engine ([`Schema`]).
//!
//! Where two instances of a server could race on the same PostgreSQL rows, the code writes
//! a conditional statement and checks how many rows it changed (`UPDATE books SET
//! available = available - 1 WHERE isbn = $1 AND available > 0`) inside a
//! [`Store::transaction`]: the second writer waits for the first's row lock, sees the new
//! value, and changes nothing.

mod postgres;
pub(crate) mod sqlite;

use crate::{Db, StartError};

/// The schema version a seeded database carries (SQLite's `PRAGMA user_version`, a row of
/// `junction_schema` in PostgreSQL).
const SEEDED: i64 = 1;

/// A server's tables, as each engine spells them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schema {
    /// The server's name: in PostgreSQL, its row in `junction_schema`, so that several
    /// servers may share one database.
    pub(crate) server: &'static str,
    /// The tables in SQLite.
    pub(crate) sqlite: &'static str,
    /// The tables in PostgreSQL.
    pub(crate) postgres: &'static str,
}

/// What fills a new database: runs inside the transaction that creates the tables.
pub(crate) type Seed = fn(&mut dyn Sql) -> Result<(), DbError>;

/// A failed query, or a database that could not be reached.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct DbError(String);

impl DbError {
    pub(crate) fn new(message: impl Into<String>) -> DbError {
        DbError(message.into())
    }
}

/// One value passed to or read from a query.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// SQL `NULL`.
    Null,
    /// An integer (PostgreSQL `SMALLINT`, `INTEGER` or `BIGINT`).
    Int(i64),
    /// Text.
    Text(String),
    /// A boolean (SQLite has none: it reads back as 0 or 1).
    Bool(bool),
}

impl From<i64> for Value {
    fn from(value: i64) -> Value {
        Value::Int(value)
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Value {
        Value::Bool(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::Text(value.to_owned())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::Text(value)
    }
}

impl From<&String> for Value {
    fn from(value: &String) -> Value {
        Value::Text(value.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}

/// A Rust type a [`Value`] converts to.
pub(crate) trait FromValue: Sized {
    /// `None` when the value is of another type.
    fn from_value(value: &Value) -> Option<Self>;
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Option<i64> {
        match value {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
}

impl FromValue for bool {
    fn from_value(value: &Value) -> Option<bool> {
        match value {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i != 0),
            _ => None,
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Option<String> {
        match value {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Option<Option<T>> {
        match value {
            Value::Null => Some(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// One row of a query's result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row(Vec<Value>);

impl Row {
    /// Column `index`, as `T`.
    pub(crate) fn get<T: FromValue>(&self, index: usize) -> Result<T, DbError> {
        let value = self
            .0
            .get(index)
            .ok_or_else(|| DbError::new(format!("the query has no column {index}")))?;
        T::from_value(value).ok_or_else(|| {
            DbError::new(format!(
                "column {index} holds {value:?}, not a {}",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// A connection to the server's database, SQLite or PostgreSQL. Placeholders are `$1`,
/// `$2`, ...
pub(crate) trait Sql {
    /// Runs a query and returns its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs a statement and returns how many rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs statements without parameters, separated by `;`.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// The first row of a query, if it has one.
    fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}

/// A database shared by one server's handlers (given as the server's
/// [`State`](junction::server::State)). Cheap to clone.
///
/// Handlers reach it through [`Store::run`], on Tokio's blocking pool: SQLite blocks, and
/// the PostgreSQL calls wait there for the store's own runtime to answer.
#[derive(Clone)]
pub(crate) struct Store {
    backend: Backend,
}

#[derive(Clone)]
enum Backend {
    Sqlite(sqlite::Sqlite),
    Postgres(postgres::Postgres),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the database `db` (SQLite in memory when `None`). On first use it creates the
    /// tables and runs `seed` in one transaction and marks the database as seeded, so later
    /// runs (and other instances on the same PostgreSQL) keep what is there and add nothing.
    pub(crate) fn open(db: Option<&Db>, schema: &Schema, seed: Seed) -> Result<Store, StartError> {
        let backend = match db {
            Some(Db::Postgres(url)) => {
                Backend::Postgres(postgres::Postgres::open(url, schema, seed)?)
            }
            Some(Db::File(path)) => {
                Backend::Sqlite(sqlite::Sqlite::open(Some(path), schema, seed)?)
            }
            None => Backend::Sqlite(sqlite::Sqlite::open(None, schema, seed)?),
        };
        Ok(Store { backend })
    }

    /// The SQLite connection behind this store, if it is SQLite.
    pub(crate) fn sqlite(&self) -> Option<&sqlite::Sqlite> {
        match &self.backend {
            Backend::Sqlite(sqlite) => Some(sqlite),
            Backend::Postgres(_) => None,
        }
    }

    /// Runs `f` with this store on Tokio's blocking pool and waits for it. A task that could
    /// not finish becomes the sentence a tool error carries, as a database failure does.
    pub(crate) async fn run<T, E>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<Unavailable> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .unwrap_or_else(|e| {
                tracing::error!("database task failed: {e}");
                Err(Unavailable.into())
            })
    }

    /// Runs `f` on a connection, on the caller's thread (handlers use [`Store::run`]). A
    /// database failure becomes the sentence a tool error carries.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, DbError>,
    ) -> Result<T, String> {
        match &self.backend {
            Backend::Sqlite(sqlite) => sqlite.with(f),
            Backend::Postgres(pg) => pg.with(f),
        }
        .map_err(sentence)
    }

    /// Runs `f` in one transaction, committed when it returns `Ok(Ok(_))` and rolled back
    /// otherwise: `Ok(Err(why))` is the user's error (a book with no copy left), `Err` the
    /// database's.
    pub(crate) fn transaction<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<Result<T, String>, DbError>,
    ) -> Result<T, String> {
        match &self.backend {
            Backend::Sqlite(sqlite) => sqlite.transaction(f),
            Backend::Postgres(pg) => pg.transaction(f),
        }
        .map_err(sentence)?
    }
}

fn sentence(e: DbError) -> String {
    tracing::error!("database error: {e}");
    format!("The server's database failed ({e}). Try again; if it fails again, tell the user.")
}

/// [`Store::run`] on the store a handler's request carries (see
/// [`State`](junction::server::State)); `None` is a server built without it.
pub(crate) async fn run<T, E>(
    store: Option<Store>,
    f: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<Unavailable> + Send + 'static,
{
    match store {
        Some(store) => store.run(f).await,
        None => Err(Unavailable.into()),
    }
}

/// The database could not be reached: its task failed, or the server has none.
pub(crate) struct Unavailable;

impl From<Unavailable> for String {
    fn from(_: Unavailable) -> String {
        "The server's database is unavailable. Try again; if it fails again, tell the user."
            .to_owned()
    }
}

impl From<Unavailable> for junction::protocol::ErrorObject {
    fn from(why: Unavailable) -> Self {
        junction::protocol::ErrorObject::internal(String::from(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const SCHEMA: Schema = Schema {
        server: "test",
        sqlite: "CREATE TABLE items (name TEXT NOT NULL);",
        postgres: "CREATE TABLE items (name TEXT NOT NULL);",
    };

    fn seed(db: &mut dyn Sql) -> Result<(), DbError> {
        db.execute("INSERT INTO items (name) VALUES ($1)", &["first".into()])?;
        Ok(())
    }

    fn count(store: &Store) -> i64 {
        store
            .with(|db| db.query("SELECT COUNT(*) FROM items", &[])?[0].get(0))
            .unwrap()
    }

    #[test]
    fn seeds_a_new_file_once_and_keeps_changes_across_opens() {
        let dir = std::env::temp_dir().join(format!("junction-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("seed-once.db");
        let _ = std::fs::remove_file(&path);
        let db = Db::File(path.clone());
        let store = Store::open(Some(&db), &SCHEMA, seed).unwrap();
        assert_eq!(count(&store), 1);
        store
            .with(|db| db.execute("INSERT INTO items (name) VALUES ('mine')", &[]))
            .unwrap();
        drop(store);
        let again = Store::open(Some(&db), &SCHEMA, seed).unwrap();
        assert_eq!(count(&again), 2);
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_database_that_cannot_be_opened_is_named_in_the_error() {
        let db = Db::File(PathBuf::from("/nonexistent-dir-for-junction/x.db"));
        let error = Store::open(Some(&db), &SCHEMA, seed).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("/nonexistent-dir-for-junction/x.db"),
            "{error}"
        );
    }

    #[test]
    fn query_failures_become_a_sentence() {
        let store = Store::open(None, &SCHEMA, seed).unwrap();
        let error = store
            .with(|db| db.execute("INSERT INTO nowhere VALUES (1)", &[]))
            .unwrap_err();
        assert!(
            error.starts_with("The server's database failed (no such table: nowhere)"),
            "{error}"
        );
    }

    #[test]
    fn a_transaction_that_ends_in_the_users_error_is_rolled_back() {
        let store = Store::open(None, &SCHEMA, seed).unwrap();
        let outcome: Result<(), String> = store.transaction(|db| {
            db.execute("INSERT INTO items (name) VALUES ('undone')", &[])?;
            Ok(Err("no".to_owned()))
        });
        assert_eq!(outcome, Err("no".to_owned()));
        assert_eq!(count(&store), 1);
        let kept: Result<u64, String> = store.transaction(|db| {
            Ok(Ok(db.execute(
                "INSERT INTO items (name) VALUES ('kept')",
                &[],
            )?))
        });
        assert_eq!(kept, Ok(1));
        assert_eq!(count(&store), 2);
    }

    #[test]
    fn values_convert_to_what_the_row_is_read_as() {
        let row = Row(vec![
            Value::Int(1),
            Value::Null,
            Value::Text("a".into()),
            Value::Bool(true),
        ]);
        assert_eq!(row.get::<bool>(0), Ok(true));
        assert_eq!(row.get::<Option<String>>(1), Ok(None));
        assert_eq!(row.get::<String>(2), Ok("a".to_owned()));
        assert_eq!(row.get::<i64>(3), Ok(1));
        assert!(row.get::<i64>(2).is_err());
        assert!(row.get::<i64>(9).is_err());
    }
}
