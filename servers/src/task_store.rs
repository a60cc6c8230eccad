//! Tasks kept in the server's SQLite database ([`SqliteTaskStore`]), so that a finished
//! task's result outlives the process: a client that reconnects to the next server on the
//! same `--db` collects it with `tasks/result`.
//!
//! One table, `mcp_tasks`, beside the server's own; each row holds the task's record as JSON
//! and the columns the queries need. Terminal statuses are sticky in SQL: an update only
//! applies to a row still `working` or `input_required`. One server process per database:
//! a new server marks the tasks left unfinished as failed.
//!
//! ```
//! use junction::server::task::{TaskRecord, TaskStore};
//! let store = junction_servers::task_store::SqliteTaskStore::open(None, 100).unwrap();
//! store.insert(&TaskRecord::new("t", "session:a", "tools/call", 1, Some(60_000), None)).unwrap();
//! assert_eq!(store.get("t", 2).unwrap().unwrap().owner, "session:a");
//! assert!(store.get("t", 60_001).unwrap().is_none(), "expired");
//! ```

use std::path::Path;

use junction::server::task::{StoreError, TaskRecord, TaskStore};
use rusqlite::{params, OptionalExtension};

use crate::store::sqlite::Sqlite;
use crate::StartError;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS mcp_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER,
    terminal INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mcp_tasks_by_owner ON mcp_tasks (owner, created_ms, id);
";

/// A [`TaskStore`] in SQLite, bounded to `capacity` tasks (expired ones make room).
#[derive(Debug, Clone)]
pub struct SqliteTaskStore {
    store: Sqlite,
    capacity: usize,
}

impl SqliteTaskStore {
    /// Opens (creating the table when needed) the database at `path`, in memory when `None`.
    pub fn open(path: Option<&Path>, capacity: usize) -> Result<Self, StartError> {
        let store = Sqlite::open_plain(path)?;
        Self::on(store, capacity)
    }

    /// Keeps tasks in `store`, the database a server already uses.
    pub(crate) fn on(store: Sqlite, capacity: usize) -> Result<Self, StartError> {
        store
            .raw(|c| c.execute_batch(SCHEMA))
            .map_err(|e| StartError::Tasks(e.to_string()))?;
        Ok(SqliteTaskStore {
            store,
            capacity: capacity.max(1),
        })
    }

    fn query<T>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        self.store
            .raw(f)
            .map_err(|e| StoreError::Backend(e.to_string()))
    }
}

fn expires(record: &TaskRecord) -> Option<i64> {
    let ttl = record.task.ttl?;
    i64::try_from(record.created_ms.saturating_add(ttl)).ok()
}

fn ms(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn encode(record: &TaskRecord) -> rusqlite::Result<String> {
    serde_json::to_string(record).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))
}

fn decode(text: String) -> rusqlite::Result<TaskRecord> {
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
    })
}

impl TaskStore for SqliteTaskStore {
    fn insert(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let capacity = self.capacity;
        let full = self.query(|c| {
            let tx = c.transaction()?;
            let now = ms(record.created_ms);
            tx.execute(
                "DELETE FROM mcp_tasks WHERE expires_ms IS NOT NULL AND expires_ms <= ?1",
                [now],
            )?;
            let count: i64 = tx.query_row("SELECT count(*) FROM mcp_tasks", [], |r| r.get(0))?;
            if usize::try_from(count).unwrap_or(usize::MAX) >= capacity {
                return Ok(true);
            }
            tx.execute(
                "INSERT INTO mcp_tasks (id, owner, created_ms, expires_ms, terminal, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    record.id(),
                    record.owner,
                    now,
                    expires(record),
                    record.task.status.is_terminal(),
                    encode(record)?
                ],
            )?;
            tx.commit()?;
            Ok(false)
        })?;
        if full {
            Err(StoreError::Full(capacity))
        } else {
            Ok(())
        }
    }

    fn get(&self, id: &str, now_ms: u64) -> Result<Option<TaskRecord>, StoreError> {
        self.query(|c| {
            c.query_row(
                "SELECT record FROM mcp_tasks WHERE id = ?1 AND (expires_ms IS NULL OR expires_ms > ?2)",
                params![id, ms(now_ms)],
                |r| r.get::<_, String>(0),
            )
            .optional()?
            .map(decode)
            .transpose()
        })
    }

    fn update(&self, record: &TaskRecord) -> Result<bool, StoreError> {
        self.query(|c| {
            let changed = c.execute(
                "UPDATE mcp_tasks SET terminal = ?1, record = ?2 WHERE id = ?3 AND terminal = 0",
                params![
                    record.task.status.is_terminal(),
                    encode(record)?,
                    record.id()
                ],
            )?;
            Ok(changed == 1)
        })
    }

    fn list(
        &self,
        owner: &str,
        after: Option<(u64, &str)>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let (after_ms, after_id) = after.map_or((-1, ""), |(t, id)| (ms(t), id));
        self.query(|c| {
            let mut statement = c.prepare(
                "SELECT record FROM mcp_tasks WHERE owner = ?1 \
                 AND (expires_ms IS NULL OR expires_ms > ?2) \
                 AND (created_ms > ?3 OR (created_ms = ?3 AND id > ?4)) \
                 ORDER BY created_ms, id LIMIT ?5",
            )?;
            let rows = statement.query_map(
                params![
                    owner,
                    ms(now_ms),
                    after_ms,
                    after_id,
                    i64::try_from(limit).unwrap_or(i64::MAX)
                ],
                |r| r.get::<_, String>(0),
            )?;
            rows.map(|row| row.and_then(decode)).collect()
        })
    }

    fn unfinished(&self) -> Result<Vec<TaskRecord>, StoreError> {
        self.query(|c| {
            let mut statement = c.prepare("SELECT record FROM mcp_tasks WHERE terminal = 0")?;
            let rows = statement.query_map([], |r| r.get::<_, String>(0))?;
            rows.map(|row| row.and_then(decode)).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_protocol::tasks::TaskStatus;

    #[test]
    fn terminal_rows_are_sticky_listing_is_ordered_and_bounded() {
        let store = SqliteTaskStore::open(None, 3).unwrap();
        for (id, at) in [("b", 10), ("a", 10), ("c", 11)] {
            store
                .insert(&TaskRecord::new(
                    id,
                    "me",
                    "tools/call",
                    at,
                    Some(100),
                    None,
                ))
                .unwrap();
        }
        assert!(matches!(
            store.insert(&TaskRecord::new("d", "me", "tools/call", 12, None, None)),
            Err(StoreError::Full(3))
        ));
        let ids = |v: Vec<TaskRecord>| v.into_iter().map(|t| t.task.task_id).collect::<Vec<_>>();
        assert_eq!(
            ids(store.list("me", None, 10, 12).unwrap()),
            ["a", "b", "c"]
        );
        assert_eq!(
            ids(store.list("me", Some((10, "a")), 1, 12).unwrap()),
            ["b"]
        );
        assert!(store.list("you", None, 10, 12).unwrap().is_empty());
        let mut record = store.get("a", 12).unwrap().unwrap();
        record.set_status(TaskStatus::Cancelled, None, 13);
        assert!(store.update(&record).unwrap());
        record.set_status(TaskStatus::Completed, None, 14);
        assert!(!store.update(&record).unwrap());
        assert_eq!(
            store.get("a", 14).unwrap().unwrap().task.status,
            TaskStatus::Cancelled
        );
        assert_eq!(ids(store.unfinished().unwrap()).len(), 2);
        // At 110 the first two have expired and make room.
        store
            .insert(&TaskRecord::new("d", "me", "tools/call", 110, None, None))
            .unwrap();
        assert!(store.get("b", 110).unwrap().is_none());
    }
}
