//! The SQLite database an example server keeps its data in: opened at `--db PATH` (or in
//! memory), created and seeded once, then shared by the server's handlers.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use crate::StartError;

/// The schema version a seeded database carries (`PRAGMA user_version`).
const SEEDED: i64 = 1;

/// A database shared by one server's handlers (given as the server's
/// [`State`](junction::server::State)). Cheap to clone.
///
/// Handlers reach it through [`Store::run`], on Tokio's blocking pool: SQLite blocks, and an
/// async worker must not. There, each call holds one lock: the queries are small, and one
/// connection keeps an in-memory database whole.
#[derive(Clone)]
pub(crate) struct Store {
    connection: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the database at `path` (in memory when `None`). On first use it runs `schema`
    /// and `seed` in one transaction and marks the database as seeded, so later runs keep
    /// what is there and add nothing.
    pub(crate) fn open(
        path: Option<&Path>,
        schema: &str,
        seed: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> Result<Store, StartError> {
        let place = path.map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string());
        let failed = |source| StartError::Database {
            path: place.clone(),
            source,
        };
        let mut connection = match path {
            Some(path) => Connection::open(path),
            None => Connection::open_in_memory(),
        }
        .map_err(failed)?;
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(failed)?;
        if version < SEEDED {
            let transaction = connection.transaction().map_err(failed)?;
            transaction.execute_batch(schema).map_err(failed)?;
            seed(&transaction).map_err(failed)?;
            transaction
                .pragma_update(None, "user_version", SEEDED)
                .map_err(failed)?;
            transaction.commit().map_err(failed)?;
        }
        Ok(Store {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    /// Opens the database at `path` (in memory when `None`) as it is, seeding nothing.
    pub(crate) fn open_plain(path: Option<&Path>) -> Result<Store, StartError> {
        let place = path.map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string());
        let connection = match path {
            Some(path) => Connection::open(path),
            None => Connection::open_in_memory(),
        }
        .map_err(|source| StartError::Database {
            path: place,
            source,
        })?;
        Ok(Store {
            connection: Arc::new(Mutex::new(connection)),
        })
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

    /// Runs `f` on the connection, on the caller's thread (handlers use [`Store::run`]). A
    /// database failure becomes the sentence a tool error carries.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, String> {
        // A handler that panicked mid-query left no transaction open (rusqlite rolls back on
        // drop), so the connection is still usable.
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut connection).map_err(|e| {
            tracing::error!("database error: {e}");
            format!(
                "The server's database failed ({e}). Try again; if it fails again, tell the user."
            )
        })
    }
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

    const SCHEMA: &str = "CREATE TABLE items (name TEXT NOT NULL);";

    fn seed(connection: &Connection) -> rusqlite::Result<()> {
        connection.execute("INSERT INTO items (name) VALUES ('first')", [])?;
        Ok(())
    }

    fn count(store: &Store) -> i64 {
        store
            .with(|c| c.query_row("SELECT COUNT(*) FROM items", [], |r| r.get(0)))
            .unwrap()
    }

    #[test]
    fn seeds_a_new_file_once_and_keeps_changes_across_opens() {
        let dir = std::env::temp_dir().join(format!("junction-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("seed-once.db");
        let _ = std::fs::remove_file(&path);
        let store = Store::open(Some(&path), SCHEMA, seed).unwrap();
        assert_eq!(count(&store), 1);
        store
            .with(|c| c.execute("INSERT INTO items (name) VALUES ('mine')", []))
            .unwrap();
        drop(store);
        let again = Store::open(Some(&path), SCHEMA, seed).unwrap();
        assert_eq!(count(&again), 2);
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_database_that_cannot_be_opened_is_named_in_the_error() {
        let path = Path::new("/nonexistent-dir-for-junction/x.db");
        let error = Store::open(Some(path), SCHEMA, seed).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("/nonexistent-dir-for-junction/x.db"),
            "{error}"
        );
    }

    #[test]
    fn query_failures_become_a_sentence() {
        let store = Store::open(None, SCHEMA, seed).unwrap();
        let error = store
            .with(|c| c.execute("INSERT INTO nowhere VALUES (1)", []))
            .unwrap_err();
        assert!(
            error.starts_with("The server's database failed (no such table: nowhere)"),
            "{error}"
        );
    }
}
