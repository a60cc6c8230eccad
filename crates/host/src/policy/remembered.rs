//! "Always allow" answers, kept in a JSON file across runs.
//!
//! The file holds `{"alwaysAllow": [{"server": "library", "tool": "add_book", "sha256":
//! "…", "definition": {…}}]}`: each answer with the tool's definition as it was when the
//! user answered (see [`super::definition`]). It is written whole to a temporary file and
//! renamed over the old one, so a crash never leaves half a file. Unless told otherwise the
//! file is [`default_consent_file`], in the user's config directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use junction_protocol::tools::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::canonical::canonical;
use super::definition::Definition;
use super::{canonical_pattern, glob_match};
use crate::state_file::{self, StateFileError};

/// Where "always allow" answers are kept unless the config or the command line says:
/// `$XDG_CONFIG_HOME/junction/consent.json`, else `$HOME/.config/junction/consent.json`;
/// `None` when neither variable is set.
pub fn default_consent_file() -> Option<PathBuf> {
    crate::config::scopes::user_config_dir().map(|dir| dir.join("consent.json"))
}

/// What the file holds, as errors name it.
const WHAT: &str = "consent";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    #[serde(default)]
    always_allow: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Clone)]
#[serde(deny_unknown_fields)]
struct Entry {
    server: String,
    tool: String,
    /// The definition the answer was given for; absent in files written before answers
    /// were bound to definitions, which therefore ask once more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    definition: Option<Value>,
}

/// What an earlier answer says about a tool as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recall {
    /// No answer was given for this tool.
    Unknown,
    /// An answer was given for exactly this definition.
    Same,
    /// An answer was given for another definition of this tool; what changed, one line
    /// per field (empty when the earlier definition was not recorded).
    Changed(Vec<String>),
}

type Key = (String, String);

fn key(server: &str, tool: &str) -> Key {
    (server.to_owned(), canonical(tool))
}

/// The tools the user chose to always allow, each with the definition it was allowed in,
/// found by the server's config key and the tool's [canonical](super::canonical()) name.
#[derive(Debug)]
pub struct Remembered {
    path: Option<PathBuf>,
    entries: Mutex<BTreeMap<Key, Entry>>,
}

impl Remembered {
    /// Answers that last for this run only.
    pub fn in_memory() -> Self {
        Remembered {
            path: None,
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    /// Reads the answers saved in `path`; a missing file means none yet.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, StateFileError> {
        let path = path.into();
        let entries = state_file::load::<File>(&path, WHAT)?
            .always_allow
            .into_iter()
            .map(|e| (key(&e.server, &e.tool), e))
            .collect();
        Ok(Remembered {
            path: Some(path),
            entries: Mutex::new(entries),
        })
    }

    /// The file, if answers are saved.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the answer given for `tool` of `server`, if any, says about it as it is now.
    pub fn recall(&self, server: &str, tool: &Tool) -> Recall {
        let entries = self.lock();
        let Some(entry) = entries.get(&key(server, &tool.name)) else {
            return Recall::Unknown;
        };
        let now = Definition::of(tool);
        match &entry.definition {
            Some(_) if entry.sha256.as_deref() == Some(now.hash()) => Recall::Same,
            Some(earlier) => Recall::Changed(now.changes(&Definition::from_value(earlier.clone()))),
            None => Recall::Changed(Vec::new()),
        }
    }

    /// Every (server, tool) answered, by server then tool.
    pub fn list(&self) -> Vec<(String, String)> {
        self.lock()
            .values()
            .map(|e| (e.server.clone(), e.tool.clone()))
            .collect()
    }

    /// Adds (or replaces) the answer for `tool` as it is now, and saves the file.
    pub fn insert(&self, server: &str, tool: &Tool) -> Result<(), StateFileError> {
        let definition = Definition::of(tool);
        self.lock().insert(
            key(server, &tool.name),
            Entry {
                server: server.to_owned(),
                tool: tool.name.clone(),
                sha256: Some(definition.hash().to_owned()),
                definition: Some(definition.value().clone()),
            },
        );
        self.save()
    }

    /// Removes the answers for `server` whose tool matches the glob `tool` (by canonical
    /// name); returns the removed (server, tool) pairs after saving the file.
    pub fn remove(
        &self,
        server: &str,
        tool: &str,
    ) -> Result<Vec<(String, String)>, StateFileError> {
        let removed: Vec<(String, String)> = {
            let mut entries = self.lock();
            let pattern = canonical_pattern(tool);
            let gone: Vec<Key> = entries
                .keys()
                .filter(|(s, t)| s == server && glob_match(&pattern, t))
                .cloned()
                .collect();
            gone.iter()
                .filter_map(|k| entries.remove(k))
                .map(|e| (e.server, e.tool))
                .collect()
        };
        if !removed.is_empty() {
            self.save()?;
        }
        Ok(removed)
    }

    fn save(&self) -> Result<(), StateFileError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let always_allow: Vec<Entry> = self.lock().values().cloned().collect();
        state_file::save(path, &File { always_allow })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("junction-host-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("nested").join("consent.json")
    }

    fn tool(name: &str, description: &str) -> Tool {
        Tool::new(name, Tool::empty_input_schema()).description(description)
    }

    #[test]
    fn answers_are_saved_and_read_back() {
        let path = scratch("roundtrip");
        let first = Remembered::load(&path).unwrap();
        let add = tool("add_book", "Adds a book.");
        assert_eq!(first.recall("library", &add), Recall::Unknown);
        first.insert("library", &add).unwrap();
        let second = Remembered::load(&path).unwrap();
        assert_eq!(second.recall("library", &add), Recall::Same);
        assert_eq!(
            second.recall("library", &tool("delete_book", "x")),
            Recall::Unknown
        );
        assert_eq!(second.recall("calendar", &add), Recall::Unknown);
        assert_eq!(
            second.list(),
            [("library".to_owned(), "add_book".to_owned())]
        );
    }

    #[test]
    fn a_changed_definition_is_recalled_with_what_changed() {
        let answers = Remembered::in_memory();
        answers.insert("s", &tool("t", "Reads.")).unwrap();
        let Recall::Changed(changes) = answers.recall("s", &tool("t", "Reads and deletes.")) else {
            panic!("a changed description was not noticed");
        };
        assert_eq!(changes, [r#"description: "Reads." → "Reads and deletes.""#]);
        assert!(matches!(
            answers.recall("s", &tool("T", "Reads.")),
            Recall::Changed(c) if c[0].starts_with("name:")
        ));
    }

    #[test]
    fn an_answer_saved_without_its_definition_asks_again() {
        let path = scratch("old-format");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"alwaysAllow": [{"server": "s", "tool": "t"}]}"#).unwrap();
        let answers = Remembered::load(&path).unwrap();
        assert_eq!(
            answers.recall("s", &tool("t", "x")),
            Recall::Changed(Vec::new())
        );
    }

    #[test]
    fn answers_are_removed_by_server_and_glob() {
        let path = scratch("remove");
        let answers = Remembered::load(&path).unwrap();
        for name in ["add_book", "add_author", "search"] {
            answers.insert("library", &tool(name, "")).unwrap();
        }
        answers.insert("other", &tool("add_book", "")).unwrap();
        let removed = answers.remove("library", "add_*").unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        let reread = Remembered::load(&path).unwrap();
        assert_eq!(
            reread.list(),
            [
                ("library".to_owned(), "search".to_owned()),
                ("other".to_owned(), "add_book".to_owned())
            ]
        );
    }

    #[test]
    fn a_malformed_file_is_reported_and_left_alone() {
        let path = scratch("malformed");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"alwaysAllow\": 3}").unwrap();
        let err = Remembered::load(&path).unwrap_err();
        assert!(err.to_string().contains("consent.json"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"alwaysAllow\": 3}"
        );
    }

    #[test]
    fn in_memory_answers_need_no_file() {
        let answers = Remembered::in_memory();
        answers.insert("s", &tool("t", "")).unwrap();
        assert_eq!(answers.recall("s", &tool("t", "")), Recall::Same);
        assert!(answers.path().is_none());
    }
}
