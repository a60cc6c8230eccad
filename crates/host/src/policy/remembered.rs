//! "Always allow" answers, kept in a JSON file across runs.
//!
//! The file holds `{"alwaysAllow": [{"server": "library", "tool": "add_book"}]}`. It is
//! written whole to a temporary file and renamed over the old one, so a crash never leaves
//! half a file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// Why the answers could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum RememberedError {
    /// The file exists but could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The file is not in the expected shape; it is left untouched.
    #[error("{}: not a consent file ({reason}); fix or remove it", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The parser's reason.
        reason: String,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    #[serde(default)]
    always_allow: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Clone)]
#[serde(deny_unknown_fields)]
struct Entry {
    server: String,
    tool: String,
}

/// The set of (server, tool) pairs the user chose to always allow.
#[derive(Debug)]
pub struct Remembered {
    path: Option<PathBuf>,
    entries: Mutex<BTreeSet<Entry>>,
}

impl Remembered {
    /// Answers that last for this run only.
    pub fn in_memory() -> Self {
        Remembered {
            path: None,
            entries: Mutex::new(BTreeSet::new()),
        }
    }

    /// Reads the answers saved in `path`; a missing file means none yet.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, RememberedError> {
        let path = path.into();
        let entries = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str::<File>(&text)
                .map_err(|e| RememberedError::Malformed {
                    path: path.clone(),
                    reason: e.to_string(),
                })?
                .always_allow
                .into_iter()
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
            Err(source) => return Err(RememberedError::Io { path, source }),
        };
        Ok(Remembered {
            path: Some(path),
            entries: Mutex::new(entries),
        })
    }

    /// The file, if answers are saved.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether `tool` of `server` is always allowed.
    pub fn contains(&self, server: &str, tool: &str) -> bool {
        let entry = Entry {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        self.entries
            .lock()
            .map(|e| e.contains(&entry))
            .unwrap_or(false)
    }

    /// Adds an answer and saves the file.
    pub fn insert(&self, server: &str, tool: &str) -> Result<(), RememberedError> {
        let snapshot = {
            let Ok(mut entries) = self.entries.lock() else {
                return Ok(());
            };
            entries.insert(Entry {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
            entries.iter().cloned().collect::<Vec<_>>()
        };
        let Some(path) = &self.path else {
            return Ok(());
        };
        let io = |source| RememberedError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(&File {
            always_allow: snapshot,
        })
        .map_err(|e| io(std::io::Error::other(e)))?;
        let mut temporary = path.clone().into_os_string();
        temporary.push(".tmp");
        std::fs::write(&temporary, text + "\n").map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
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

    #[test]
    fn answers_are_saved_and_read_back() {
        let path = scratch("roundtrip");
        let first = Remembered::load(&path).unwrap();
        assert!(!first.contains("library", "add_book"));
        first.insert("library", "add_book").unwrap();
        let second = Remembered::load(&path).unwrap();
        assert!(second.contains("library", "add_book"));
        assert!(!second.contains("library", "delete_book"));
        assert!(!second.contains("calendar", "add_book"));
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
        answers.insert("s", "t").unwrap();
        assert!(answers.contains("s", "t"));
        assert!(answers.path().is_none());
    }
}
