//! The small JSON files the host keeps its state in between runs: the project servers the
//! user approved ([`crate::config::approval`]), the tasks left running
//! ([`crate::tasks_left`]) and the tool pins ([`crate::policy::Pins`]).
//!
//! Each is read whole (a missing file is the empty state; a malformed one an error naming
//! the file, which is left untouched for the user to fix) and written whole to a temporary
//! file renamed over the old one, so a crash never leaves half a file. A change to the file
//! ([`update`]) reads, changes and writes it under an advisory lock on a file beside it
//! (`pins.json.lock`), so that two runs changing it at once both keep their change (on Unix;
//! elsewhere the last writer wins).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Why a state file could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The file is not in the expected shape; it is left untouched.
    #[error("{}: not a {what} file ({reason}); fix or remove it", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What the file holds, as said in the error ("project approvals").
        what: &'static str,
        /// The parser's reason.
        reason: String,
    },
}

/// Reads the state in `path` (a file of `what`); a missing file is `T::default()`.
pub fn load<T: DeserializeOwned + Default>(
    path: &Path,
    what: &'static str,
) -> Result<T, StateFileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| StateFileError::Malformed {
            path: path.to_owned(),
            what,
            reason: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(source) => Err(StateFileError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Applies `change` to the state in `path` as the file holds it now and writes it back,
/// with no other [`update`] of the same file (in this or another process) in between.
/// Returns what `change` returned.
pub fn update<T: Serialize + DeserializeOwned + Default, R>(
    path: &Path,
    what: &'static str,
    change: impl FnOnce(&mut T) -> R,
) -> Result<R, StateFileError> {
    let _lock = Lock::take(path)?;
    let mut state = load(path, what)?;
    let result = change(&mut state);
    save(path, &state)?;
    Ok(result)
}

/// An exclusive advisory lock on `<file>.lock`, held until dropped. The state file itself is
/// replaced by a rename at each save, so a lock on it would not outlive the save.
struct Lock {
    #[cfg(unix)]
    _file: std::fs::File,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock, StateFileError> {
        let io = |source| StateFileError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        #[cfg(unix)]
        {
            let mut name = path.as_os_str().to_owned();
            name.push(".lock");
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&name)
                .map_err(io)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
                .map_err(|e| io(e.into()))?;
            Ok(Lock { _file: file })
        }
        #[cfg(not(unix))]
        Ok(Lock {})
    }
}

/// Writes `state` to `path`, making its directory if needed.
pub fn save<T: Serialize>(path: &Path, state: &T) -> Result<(), StateFileError> {
    let io = |source| StateFileError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(state).map_err(|e| io(e.into()))?;
    crate::config::edit::write_atomically(path, &text).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_missing_file_is_empty_a_saved_one_reads_back_and_a_malformed_one_is_named() {
        let dir = std::env::temp_dir().join(format!("junction-state-{}", std::process::id()));
        let path = dir.join("deeper").join("state.json");
        let empty: BTreeMap<String, u32> = load(&path, "test state").unwrap();
        assert!(empty.is_empty());
        save(&path, &BTreeMap::from([("a".to_owned(), 1u32)])).unwrap();
        let read: BTreeMap<String, u32> = load(&path, "test state").unwrap();
        assert_eq!(read["a"], 1);
        std::fs::write(&path, "[1,").unwrap();
        let error = load::<BTreeMap<String, u32>>(&path, "test state").unwrap_err();
        assert!(
            error.to_string().contains("not a test state file")
                && error.to_string().contains("state.json"),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[1,",
            "left untouched"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
