//! The project servers the user approved, kept in `$XDG_CONFIG_HOME/junction/projects.json`.
//!
//! A project file (`.mcp.json`, `.vscode/mcp.json`) arrives with a cloned repository and may
//! name any command, so the host starts none of its servers until the user said yes, the way
//! Claude Code asks before it starts `.mcp.json` servers. An approval names the file, the
//! server and a SHA-256 of the entry as written ([`ServerConfig::fingerprint`]): an entry
//! changed afterwards (another command, other arguments) is asked about again.
//!
//! [`ServerConfig::fingerprint`]: super::ServerConfig::fingerprint

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ServerConfig;
use crate::state_file::{self, StateFileError};

/// What the file holds, as errors name it.
const WHAT: &str = "project approvals";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    /// Config file → server → fingerprint of the approved entry.
    #[serde(default)]
    approved: BTreeMap<String, BTreeMap<String, String>>,
}

/// The approved project servers.
#[derive(Debug)]
pub struct Approvals {
    path: PathBuf,
    file: File,
}

/// The default file: `projects.json` next to the user config.
pub fn default_approvals_file() -> Option<PathBuf> {
    super::scopes::user_config_dir().map(|d| d.join("projects.json"))
}

/// The key of a config file: its absolute path, so that the same name in another checkout
/// is another project.
fn file_key(config: &Path) -> String {
    std::path::absolute(config)
        .unwrap_or_else(|_| config.to_owned())
        .display()
        .to_string()
}

impl Approvals {
    /// Reads `path`; a missing file means nothing approved yet.
    pub fn load(path: impl Into<PathBuf>) -> Result<Approvals, StateFileError> {
        let path = path.into();
        let file = state_file::load(&path, WHAT)?;
        Ok(Approvals { path, file })
    }

    /// The file the approvals are kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `server`, as it is written now, was approved.
    pub fn is_approved(&self, server: &ServerConfig) -> bool {
        self.file
            .approved
            .get(&file_key(&server.source))
            .and_then(|servers| servers.get(&server.name))
            .is_some_and(|f| *f == server.fingerprint)
    }

    /// Approves `server` as it is written now, and saves (to a new file renamed over the old
    /// one, so that a failed write loses nothing).
    pub fn approve(&mut self, server: &ServerConfig) -> Result<(), StateFileError> {
        self.file
            .approved
            .entry(file_key(&server.source))
            .or_default()
            .insert(server.name.clone(), server.fingerprint.clone());
        state_file::save(&self.path, &self.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn server(text: &str, path: &Path) -> ServerConfig {
        Config::parse(text, path, &|_| None).unwrap().servers[0].clone()
    }

    #[test]
    fn an_approval_holds_for_the_entry_as_written_and_survives_a_reload() {
        let dir = std::env::temp_dir().join(format!("junction-approvals-{}", std::process::id()));
        let store = dir.join("projects.json");
        let config = dir.join(".mcp.json");
        let first = server(r#"{"mcpServers": {"a": {"command": "ls"}}}"#, &config);
        let mut approvals = Approvals::load(&store).unwrap();
        assert!(!approvals.is_approved(&first));
        approvals.approve(&first).unwrap();
        let approvals = Approvals::load(&store).unwrap();
        assert!(approvals.is_approved(&first));
        let changed = server(
            r#"{"mcpServers": {"a": {"command": "rm", "args": ["-rf", "/"]}}}"#,
            &config,
        );
        assert!(!approvals.is_approved(&changed));
        let elsewhere = server(
            r#"{"mcpServers": {"a": {"command": "ls"}}}"#,
            &dir.join("other.json"),
        );
        assert!(!approvals.is_approved(&elsewhere));
        std::fs::write(&store, "{\"approved\": 3}").unwrap();
        assert!(matches!(
            Approvals::load(&store),
            Err(StateFileError::Malformed { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
