//! The SQLite side of [`Store`](super::Store): one connection behind a lock, which keeps an
//! in-memory database whole; the queries are small.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::types::{Value as Lite, ValueRef};
use rusqlite::Connection;

use super::{DbError, Row, Schema, Seed, Sql, Value, SEEDED};
use crate::StartError;

/// A shared SQLite connection. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Sqlite {
    connection: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite").finish_non_exhaustive()
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> DbError {
        DbError::new(e.to_string())
    }
}

impl Sqlite {
    /// Opens the file at `path` (memory when `None`), creating and seeding it when new.
    pub(crate) fn open(
        path: Option<&Path>,
        schema: &Schema,
        seed: Seed,
    ) -> Result<Sqlite, StartError> {
        let sqlite = Sqlite::open_plain(path)?;
        let place = path.map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string());
        sqlite
            .transaction(|db| {
                let version: i64 = db
                    .query("PRAGMA user_version", &[])?
                    .first()
                    .map(|row| row.get(0))
                    .transpose()?
                    .unwrap_or(0);
                if version < SEEDED {
                    db.batch(schema.sqlite)?;
                    seed(db)?;
                    db.batch(&format!("PRAGMA user_version = {SEEDED}"))?;
                }
                Ok(Ok(()))
            })
            .and_then(|done: Result<(), String>| done.map_err(DbError::new))
            .map_err(|source| StartError::Database {
                path: place,
                source,
            })?;
        Ok(sqlite)
    }

    /// Opens the file at `path` (memory when `None`) as it is, seeding nothing.
    pub(crate) fn open_plain(path: Option<&Path>) -> Result<Sqlite, StartError> {
        let place = path.map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string());
        let connection = match path {
            Some(path) => Connection::open(path),
            None => Connection::open_in_memory(),
        }
        .map_err(|source| StartError::Database {
            path: place,
            source: source.into(),
        })?;
        Ok(Sqlite {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A handler that panicked mid-query left no transaction open (rusqlite rolls back on
        // drop), so the connection is still usable.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the connection itself (the task store speaks rusqlite).
    pub(crate) fn raw<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        Ok(f(&mut self.lock())?)
    }

    pub(super) fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        f(&mut Lines(&self.lock()))
    }

    pub(super) fn transaction<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<Result<T, String>, DbError>,
    ) -> Result<Result<T, String>, DbError> {
        let mut connection = self.lock();
        let tx = connection.transaction()?;
        let outcome = f(&mut Lines(&tx))?;
        if outcome.is_ok() {
            tx.commit()?;
        }
        Ok(outcome)
    }
}

/// [`Sql`] on a borrowed connection (or transaction).
struct Lines<'c>(&'c Connection);

impl Sql for Lines<'_> {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let mut statement = self.0.prepare_cached(&placeholders(sql))?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params.iter().map(to_lite)))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let values = (0..columns)
                .map(|i| row.get_ref(i).map(from_lite))
                .collect::<rusqlite::Result<_>>()?;
            out.push(Row(values));
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let mut statement = self.0.prepare_cached(&placeholders(sql))?;
        let changed = statement.execute(rusqlite::params_from_iter(params.iter().map(to_lite)))?;
        Ok(changed as u64)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        Ok(self.0.execute_batch(sql)?)
    }
}

/// `$1` becomes `?1`: SQLite reads `$1` as a named parameter, numbered by first use.
fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

fn to_lite(value: &Value) -> Lite {
    match value {
        Value::Null => Lite::Null,
        Value::Int(i) => Lite::Integer(*i),
        Value::Text(s) => Lite::Text(s.clone()),
        Value::Bool(b) => Lite::Integer(i64::from(*b)),
    }
}

fn from_lite(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Text(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Value::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::placeholders;

    #[test]
    fn dollar_placeholders_become_numbered_question_marks() {
        assert_eq!(
            placeholders("SELECT $2, '$' || $10 WHERE a = $1"),
            "SELECT ?2, '$' || ?10 WHERE a = ?1"
        );
    }
}
