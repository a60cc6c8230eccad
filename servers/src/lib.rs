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
//! The three examples keep their data in SQLite at [`Options::db`] (in memory when it is
//! `None`), seeded with sample data the first time a database is used.
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

use junction::server::{BuildError, Server};

/// How `junction serve` configures a server.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The SQLite database file, created and seeded when new. `None` keeps the data in
    /// memory, seeded afresh, until the server exits.
    pub db: Option<PathBuf>,
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
        /// The file (or `:memory:`).
        path: String,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
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
            summary: "a lending library's catalogue and loans (SQLite)",
            build: library::server,
        },
        Entry {
            name: "calendar",
            summary: "a personal calendar (SQLite)",
            build: calendar::server,
        },
        Entry {
            name: "tasks",
            summary: "a to-do list with confirmation and summaries (SQLite)",
            build: tasks::server,
        },
        Entry {
            name: "conformance",
            summary: "the fixtures of the MCP conformance suite 0.1.16",
            build: |_| Ok(conformance::server()?),
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
