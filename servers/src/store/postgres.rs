//! The PostgreSQL side of [`Store`](super::Store): a small pool of `tokio-postgres`
//! connections (deadpool) driven by a runtime of the store's own.
//!
//! The servers' handlers are synchronous code on Tokio's blocking pool (SQLite needs that),
//! so each query is sent to the store's runtime and the caller waits for its answer on a
//! channel. That works from any thread, inside the server's runtime or not, and keeps the
//! connections' background tasks alive whatever the server's runtime does.

use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::NoTls;

use super::{DbError, Row, Schema, Seed, Sql, Value, SEEDED};
use crate::StartError;

/// The most connections one server instance opens.
pub(crate) const POOL_SIZE: usize = 8;
/// How long a call waits for a connection, or for a query's answer, before it fails.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting may take (at start, and when the pool opens a new connection).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The advisory lock instances take while they create and seed the tables, so that three
/// starting together seed once.
const MIGRATION_LOCK: i64 = 0x6a75_6e63_7469_6f6e; // "junction"

/// A pool of connections to one PostgreSQL database. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Postgres {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Dropped where blocking is not allowed (the server's runtime), so do not wait.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `postgres://user@host:port/db`, without the password, for messages.
fn place(config: &tokio_postgres::Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}")
}

impl Postgres {
    /// Connects to `url`, then creates and seeds the tables unless the database already
    /// carries this server's schema.
    pub(crate) fn open(url: &str, schema: &Schema, seed: Seed) -> Result<Postgres, StartError> {
        let mut config =
            tokio_postgres::Config::from_str(url).map_err(|e| StartError::Database {
                path: "the PostgreSQL URL".to_owned(),
                source: DbError::new(format!("it is not a valid connection URL ({e})")),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let place = place(&config);
        let failed = |source: DbError| StartError::Database {
            path: place.clone(),
            source,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("junction-postgres")
            .enable_all()
            .build()
            .map_err(|e| failed(DbError::new(format!("cannot start its runtime: {e}"))))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| failed(DbError::new(e.to_string())))?;
        let postgres = Postgres {
            inner: Arc::new(Inner {
                pool,
                runtime: Some(runtime),
            }),
        };
        postgres.migrate(schema, seed).map_err(failed)?;
        Ok(postgres)
    }

    fn migrate(&self, schema: &Schema, seed: Seed) -> Result<(), DbError> {
        let outcome = self.transaction(|db| {
            db.batch(&format!(
                "SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); \
                 CREATE TABLE IF NOT EXISTS junction_schema \
                 (server TEXT PRIMARY KEY, version BIGINT NOT NULL)"
            ))?;
            let version: i64 = db
                .query_opt(
                    "SELECT version FROM junction_schema WHERE server = $1",
                    &[schema.server.into()],
                )?
                .map(|row| row.get(0))
                .transpose()?
                .unwrap_or(0);
            if version < SEEDED {
                db.batch(schema.postgres)?;
                seed(db)?;
                db.execute(
                    "INSERT INTO junction_schema (server, version) VALUES ($1, $2) \
                     ON CONFLICT (server) DO UPDATE SET version = EXCLUDED.version",
                    &[schema.server.into(), SEEDED.into()],
                )?;
            }
            Ok(Ok(()))
        })?;
        outcome.map_err(DbError::new)
    }

    /// Runs `future` on the store's runtime and waits for it, from any thread.
    fn call<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, DbError> {
        let runtime = self
            .inner
            .runtime
            .as_ref()
            .ok_or_else(|| DbError::new("the database connection is shut down"))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let _ = tx.send(tokio::time::timeout(TIMEOUT, future).await);
        });
        rx.recv()
            .map_err(|_| DbError::new("the database connection is shut down"))?
            .map_err(|_| DbError::new(format!("PostgreSQL did not answer within {TIMEOUT:?}")))
    }

    fn connection(&self) -> Result<Connection, DbError> {
        let pool = self.inner.pool.clone();
        let client = self.call(async move { pool.get().await })?.map_err(|e| {
            let why = match &e {
                deadpool_postgres::PoolError::Backend(e) => describe(e),
                other => other.to_string(),
            };
            DbError::new(format!("no connection to PostgreSQL: {why}"))
        })?;
        Ok(Connection {
            postgres: self.clone(),
            client: Some(client),
            in_transaction: false,
        })
    }

    pub(super) fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        f(&mut self.connection()?)
    }

    pub(super) fn transaction<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<Result<T, String>, DbError>,
    ) -> Result<Result<T, String>, DbError> {
        let mut connection = self.connection()?;
        connection.batch("BEGIN")?;
        connection.in_transaction = true;
        let outcome = f(&mut connection);
        let end = match &outcome {
            Ok(Ok(_)) => "COMMIT",
            _ => "ROLLBACK",
        };
        connection.batch(end)?;
        connection.in_transaction = false;
        outcome
    }
}

/// One pooled connection, lent to a handler for a call or a transaction.
struct Connection {
    postgres: Postgres,
    /// Moved into each query's future and back: the store's runtime runs it.
    client: Option<Object>,
    in_transaction: bool,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // A transaction left open (a failed ROLLBACK, a panic) must not go back to the pool.
        if self.in_transaction {
            if let Some(client) = self.client.take() {
                drop(Object::take(client));
            }
        }
    }
}

impl Connection {
    fn run<T: Send + 'static>(
        &mut self,
        sql: &str,
        params: &[Value],
        query: impl FnOnce(
            Object,
            String,
            Vec<Value>,
        ) -> std::pin::Pin<
            Box<dyn Future<Output = (Object, Result<T, tokio_postgres::Error>)> + Send>,
        >,
    ) -> Result<T, DbError> {
        let client = self
            .client
            .take()
            .ok_or_else(|| DbError::new("the connection to PostgreSQL was lost"))?;
        let (client, result) =
            self.postgres
                .call(query(client, sql.to_owned(), params.to_vec()))?;
        self.client = Some(client);
        result.map_err(|e| DbError::new(describe(&e)))
    }
}

/// The server's own message when there is one (`tokio_postgres::Error`'s display is only
/// "db error").
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => e.to_string(),
    }
}

fn references(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Sql for Connection {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let rows = self.run(sql, params, |client, sql, params| {
            Box::pin(async move {
                let rows = match client.prepare_cached(&sql).await {
                    Ok(statement) => client.query(&statement, &references(&params)).await,
                    Err(e) => Err(e),
                };
                (client, rows)
            })
        })?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, Value>(i))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Row)
                    .map_err(|e| DbError::new(describe(&e)))
            })
            .collect()
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        self.run(sql, params, |client, sql, params| {
            Box::pin(async move {
                let changed = match client.prepare_cached(&sql).await {
                    Ok(statement) => client.execute(&statement, &references(&params)).await,
                    Err(e) => Err(e),
                };
                (client, changed)
            })
        })
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.run(sql, &[], |client, sql, _| {
            Box::pin(async move {
                let done = client.batch_execute(&sql).await;
                (client, done)
            })
        })
    }
}

fn is_integer(ty: &Type) -> bool {
    matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8)
}

fn is_text(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN
    )
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Bool(b), &Type::BOOL) => b.to_sql(ty, out),
            (Value::Text(s), ty) if is_text(ty) => s.as_str().to_sql(ty, out),
            (value, ty) => Err(format!("{value:?} cannot be passed as {ty}").into()),
        }
    }

    fn accepts(ty: &Type) -> bool {
        is_integer(ty) || is_text(ty) || *ty == Type::BOOL
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Value, Box<dyn std::error::Error + Sync + Send>> {
        Ok(match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::BOOL => Value::Bool(bool::from_sql(ty, raw)?),
            _ => Value::Text(String::from_sql(ty, raw)?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Value, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Value::Null)
    }

    fn accepts(ty: &Type) -> bool {
        <Value as ToSql>::accepts(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: Schema = Schema {
        server: "test",
        sqlite: "",
        postgres: "",
    };

    fn nothing(_: &mut dyn Sql) -> Result<(), DbError> {
        Ok(())
    }

    #[test]
    fn a_bad_url_is_a_clear_error_that_hides_it() {
        let Err(error) = Postgres::open("postgres://me:secret@host:notaport/db", &SCHEMA, nothing)
        else {
            panic!("a bad port is refused");
        };
        let error = error.to_string();
        assert!(error.contains("not a valid connection URL"), "{error}");
        assert!(!error.contains("secret"), "{error}");
    }

    #[test]
    fn a_server_that_is_not_there_is_named_without_its_password() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        // Bound and released: nothing listens there now.
        let url = format!("postgres://me:secret@127.0.0.1:{port}/db");
        let Err(error) = Postgres::open(&url, &SCHEMA, nothing) else {
            panic!("nothing listens there");
        };
        let error = error.to_string();
        assert!(
            error.starts_with(&format!(
                "cannot use the database postgres://me@127.0.0.1:{port}/db:"
            )),
            "{error}"
        );
        assert!(!error.contains("secret"), "{error}");
    }
}
