//! # junction-servers
//!
//! The MCP servers that ship with Junction, one module each, each returning a built
//! [`junction::server::Server`] that any transport can serve. `junction serve NAME` looks
//! `NAME` up in [`registry`] and serves it over stdio or HTTP; a new server joins with one line there.
//!
//! - [`conformance`]: the fixtures of the official MCP conformance suite.
//!
//! ```
//! let entry = junction_servers::find("conformance").expect("the conformance server is registered");
//! let server = (entry.build)().expect("its definition is valid");
//! # drop(server);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod conformance;

use junction::server::{BuildError, Server};
use junction::transport::http::server::SessionControl;

/// One server `junction serve` can run.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The name given to `junction serve`.
    pub name: &'static str,
    /// One line saying what it offers.
    pub summary: &'static str,
    /// Builds it.
    pub build: fn() -> Result<Server, BuildError>,
    /// Builds it for one Streamable HTTP session, for a server that steers its streams
    /// (a new server per session); `None` serves every session from one [`Entry::build`].
    pub build_for_http_session: Option<fn(SessionControl) -> Result<Server, BuildError>>,
}

/// Every server, in the order `junction serve --help` lists them.
pub fn registry() -> &'static [Entry] {
    &[Entry {
        name: "conformance",
        summary: "the fixtures of the MCP conformance suite 0.1.16",
        build: conformance::server,
        build_for_http_session: Some(conformance::server_with_control),
    }]
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
            assert!((entry.build)().is_ok(), "{} does not build", entry.name);
        }
        assert!(find("conformance").is_some());
        assert!(find("nope").is_none());
    }
}
