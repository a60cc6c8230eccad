//! # junction-servers
//!
//! The MCP servers that ship with Junction, one module each, each returning a built
//! [`junction::server::Server`] that any transport can serve. `junction serve NAME` looks
//! `NAME` up in [`registry`] and serves it over stdio or HTTP; a new server joins with one line there.
//!
//! - [`library`]: a lending library: search the catalogue, check out, return, renew and hold
//!   books; the loan policy and each book as resources; a `reading_list` prompt.
//! - [`calendar`]: a personal calendar: search, add and delete events; a summary resource;
//!   a `plan_day` prompt.
//! - [`tasks`]: a to-do list: add, complete and delete tasks (deletion confirmed with the
//!   user through elicitation), summaries written by the host's model through sampling;
//!   subscribable resources; a `weekly_review` prompt.
//! - [`conformance`]: the fixtures of the official MCP conformance suite.
//!
//! The three examples keep their data at [`Options::db`]: a SQLite file, or a PostgreSQL
//! database that several instances of a server share (SQLite in memory when it is `None`),
//! seeded with sample data the first time a database is used.
//!
//! ```
//! let entry = junction_servers::find("library").expect("the library is registered");
//! let server = (entry.build)(&junction_servers::Options::default()).expect("it starts");
//! # drop(server);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod calendar;
pub mod conformance;
pub mod date;
pub mod library;
mod store;
pub mod task_store;
pub mod tasks;

use std::path::PathBuf;

pub use store::DbError;

use junction::server::lifecycle::Kept;
use junction::server::{BuildError, Server, ServerBuilder};

/// How `junction serve` configures a server.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The database, created and seeded when new. `None` keeps the data in memory, seeded
    /// afresh, until the server exits.
    pub db: Option<Db>,
    /// How much of each client's `initialize` a session keeps (`--kept-capability-bytes`,
    /// `--kept-info-bytes`; see [`ServerBuilder::kept`]).
    pub kept: Kept,
    /// The most work matching one URI against one resource template may do
    /// (`--template-match-steps`; see [`ServerBuilder::template_match_steps`]); `None`
    /// leaves the default.
    pub template_match_steps: Option<usize>,
}

impl Options {
    /// `builder` with these bounds.
    pub fn bound(&self, builder: ServerBuilder) -> ServerBuilder {
        let builder = builder.kept(self.kept);
        match self.template_match_steps {
            Some(steps) => builder.template_match_steps(steps),
            None => builder,
        }
    }
}

/// Where a server keeps its data.
///
/// ```
/// use junction_servers::Db;
/// assert!(matches!(Db::parse("postgres://me@127.0.0.1/library"), Db::Postgres(_)));
/// assert!(matches!(Db::parse("library.db"), Db::File(_)));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub enum Db {
    /// A SQLite file.
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`), which
    /// several instances may share.
    Postgres(String),
}

impl Db {
    /// A `postgres://` or `postgresql://` URL, or else the path of a SQLite file.
    pub fn parse(text: &str) -> Db {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Db::Postgres(text.to_owned())
        } else {
            Db::File(PathBuf::from(text))
        }
    }
}

impl From<PathBuf> for Db {
    fn from(path: PathBuf) -> Db {
        Db::File(path)
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Db::File(path) => f.debug_tuple("File").field(path).finish(),
            // The URL may carry a password.
            Db::Postgres(_) => f.debug_tuple("Postgres").finish_non_exhaustive(),
        }
    }
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its definition is invalid.
    #[error("the server is misdefined: {0}")]
    Definition(#[from] BuildError),
    /// Its database could not be opened, created or seeded.
    #[error("cannot use the database {path}: {source}")]
    Database {
        /// The file (or `:memory:`), or the PostgreSQL server without its password.
        path: String,
        /// What the database said.
        #[source]
        source: DbError,
    },
    /// The table of tasks could not be created.
    #[error("cannot keep tasks in the database: {0}")]
    Tasks(String),
}

/// One server `junction serve` can run.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The name given to `junction serve`.
    pub name: &'static str,
    /// One line saying what it offers.
    pub summary: &'static str,
    /// Builds it.
    pub build: fn(&Options) -> Result<Server, StartError>,
}

/// Every server, in the order `junction serve --help` lists them.
pub fn registry() -> &'static [Entry] {
    &[
        Entry {
            name: "library",
            summary: "a lending library's catalogue and loans (SQLite or PostgreSQL)",
            build: library::server,
        },
        Entry {
            name: "calendar",
            summary: "a personal calendar (SQLite or PostgreSQL)",
            build: calendar::server,
        },
        Entry {
            name: "tasks",
            summary: "a to-do list with confirmation and summaries (SQLite or PostgreSQL)",
            build: tasks::server,
        },
        Entry {
            name: "conformance",
            summary: "the fixtures of the MCP conformance suite 0.1.16",
            build: |options| Ok(conformance::server_with(options)?),
        },
    ]
}

/// The server called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Entry> {
    registry().iter().find(|entry| entry.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_server_builds_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for entry in registry() {
            assert!(
                names.insert(entry.name),
                "{} is registered twice",
                entry.name
            );
            assert!(
                (entry.build)(&Options::default()).is_ok(),
                "{} does not build",
                entry.name
            );
        }
        for name in ["library", "calendar", "tasks", "conformance"] {
            assert!(find(name).is_some(), "{name}");
        }
        assert!(find("nope").is_none());
    }
}
