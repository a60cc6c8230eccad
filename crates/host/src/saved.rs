//! Saved conversations: one JSON file per session, so that a chat or a run can be picked up
//! again (`--continue` for the latest in a directory, `--resume ID` for a given one).
//!
//! The files live under the user's data directory, `$XDG_DATA_HOME/junction/conversations/`
//! (else `~/.local/share/junction/conversations/`), one `ID.json` each, written whole to a
//! temporary file and renamed so that a crash never leaves half a conversation. They hold
//! what the user and the tools said, so the directory is made `0700` and the files `0600`.
//!
//! An id is made of the start time and a random part (`20261203T080512Z-3fa9c1d2`); ids
//! given by the user are checked to be only letters, digits, `-` and `_`, so that
//! `--resume ../../etc/passwd` names no file outside the directory.
//!
//! ```
//! use junction_host::conversation::{Conversation, Message};
//! use junction_host::saved::{ConversationStore, SavedConversation};
//!
//! let dir = std::env::temp_dir().join(format!("junction-saved-doc-{}", std::process::id()));
//! let store = ConversationStore::new(&dir);
//! let mut saved = SavedConversation::start("/home/me/project", "scripted:demo.json");
//! let mut conversation = Conversation::new();
//! conversation.push(Message::User { text: "hello".into() });
//! saved.conversation = conversation;
//! store.save(&mut saved).unwrap();
//! let again = store.load(&saved.id).unwrap();
//! assert_eq!(again.conversation, saved.conversation);
//! let latest = store.latest(Some("/home/me/project")).unwrap().unwrap();
//! assert_eq!(latest.id, saved.id);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::conversation::Conversation;

/// The version of the file format written.
pub const FORMAT_VERSION: u32 = 1;

/// The longest id accepted.
const MAX_ID_CHARS: usize = 64;

/// Why a saved conversation could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    /// No data directory is known (neither `XDG_DATA_HOME` nor `HOME` is set).
    #[error("no place to keep conversations: set XDG_DATA_HOME or HOME")]
    NoDataDirectory,
    /// The id holds characters an id never has.
    #[error("`{0}` is not a conversation id (ids are letters, digits, `-` and `_`)")]
    BadId(String),
    /// No conversation has that id.
    #[error("no saved conversation `{id}` in {}", dir.display())]
    NotFound {
        /// The id asked for.
        id: String,
        /// Where it was looked for.
        dir: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A file is not a saved conversation.
    #[error("{} is not a saved conversation: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// One saved session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedConversation {
    /// The file format's version ([`FORMAT_VERSION`]).
    pub version: u32,
    /// Its id, also the file's name.
    pub id: String,
    /// When it started, RFC 3339 in UTC.
    pub created: String,
    /// When it was last saved, RFC 3339 in UTC.
    pub updated: String,
    /// The working directory it was held in (what `--continue` matches).
    pub directory: String,
    /// The model it was held with, as given (`anthropic:claude-sonnet-4-5`).
    pub model: String,
    /// The messages.
    pub conversation: Conversation,
}

impl SavedConversation {
    /// A new, empty session held in `directory` with `model`, with a fresh id.
    pub fn start(directory: impl Into<String>, model: impl Into<String>) -> Self {
        let now = SystemTime::now();
        let created = rfc3339(now);
        SavedConversation {
            version: FORMAT_VERSION,
            id: new_id(now),
            updated: created.clone(),
            created,
            directory: directory.into(),
            model: model.into(),
            conversation: Conversation::new(),
        }
    }
}

/// A directory of saved conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationStore {
    dir: PathBuf,
}

impl ConversationStore {
    /// The store in `dir` (created when the first conversation is saved).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ConversationStore { dir: dir.into() }
    }

    /// The store in the user's data directory: `$XDG_DATA_HOME/junction/conversations`,
    /// else `$HOME/.local/share/junction/conversations`.
    pub fn in_data_dir() -> Result<Self, SavedError> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let data = match (var("XDG_DATA_HOME"), var("HOME")) {
            (Some(data), _) => PathBuf::from(data),
            (None, Some(home)) => PathBuf::from(home).join(".local").join("share"),
            (None, None) => return Err(SavedError::NoDataDirectory),
        };
        Ok(ConversationStore::new(
            data.join("junction").join("conversations"),
        ))
    }

    /// Where the files are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of conversation `id`.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, SavedError> {
        check_id(id)?;
        Ok(self.dir.join(format!("{id}.json")))
    }

    /// Writes `saved` (stamping its `updated` time), replacing an earlier save whole.
    pub fn save(&self, saved: &mut SavedConversation) -> Result<(), SavedError> {
        let path = self.path_of(&saved.id)?;
        saved.updated = rfc3339(SystemTime::now());
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| SavedError::Io { path, source }
        };
        create_private_dir(&self.dir).map_err(io(&self.dir))?;
        let text = serde_json::to_vec_pretty(&*saved).map_err(|e| SavedError::Invalid {
            path: path.clone(),
            reason: format!("it could not be encoded: {e}"),
        })?;
        let temporary = self.dir.join(format!(".{}.json.tmp", saved.id));
        write_private(&temporary, &text).map_err(io(&temporary))?;
        std::fs::rename(&temporary, &path).map_err(io(&path))
    }

    /// Reads conversation `id`.
    pub fn load(&self, id: &str) -> Result<SavedConversation, SavedError> {
        let path = self.path_of(id)?;
        match read(&path) {
            Err(SavedError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Err(SavedError::NotFound {
                    id: id.to_owned(),
                    dir: self.dir.clone(),
                })
            }
            other => other,
        }
    }

    /// The conversation saved last, among those held in `directory` when given. Files that
    /// are not saved conversations are passed over (they may be a newer format's).
    pub fn latest(&self, directory: Option<&str>) -> Result<Option<SavedConversation>, SavedError> {
        Ok(self
            .list()?
            .into_iter()
            .filter(|s| directory.is_none_or(|d| s.directory == d))
            .max_by(|a, b| (&a.updated, &a.id).cmp(&(&b.updated, &b.id))))
    }

    /// Every readable saved conversation, in no particular order.
    pub fn list(&self) -> Result<Vec<SavedConversation>, SavedError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(SavedError::Io {
                    path: self.dir.clone(),
                    source,
                })
            }
        };
        let mut all = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let is_saved = path.extension().is_some_and(|e| e == "json")
                && path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(|id| check_id(id).is_ok());
            if !is_saved {
                continue;
            }
            match read(&path) {
                Ok(saved) => all.push(saved),
                Err(e) => tracing::warn!(error = %e, "a saved conversation was passed over"),
            }
        }
        Ok(all)
    }
}

fn read(path: &Path) -> Result<SavedConversation, SavedError> {
    let text = std::fs::read_to_string(path).map_err(|source| SavedError::Io {
        path: path.to_owned(),
        source,
    })?;
    let saved: SavedConversation =
        serde_json::from_str(&text).map_err(|e| SavedError::Invalid {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    if saved.version != FORMAT_VERSION {
        return Err(SavedError::Invalid {
            path: path.to_owned(),
            reason: format!(
                "it is format version {}, this junction reads version {FORMAT_VERSION}",
                saved.version
            ),
        });
    }
    Ok(saved)
}

/// Letters, digits, `-` and `_`, one to [`MAX_ID_CHARS`] of them.
fn check_id(id: &str) -> Result<(), SavedError> {
    let fine = !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if fine {
        Ok(())
    } else {
        Err(SavedError::BadId(id.chars().take(MAX_ID_CHARS).collect()))
    }
}

/// The start time to the second and 32 random bits: sortable, and distinct for sessions
/// started in the same second.
fn new_id(now: SystemTime) -> String {
    let stamp: String = rfc3339(now)
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    // RandomState is seeded from the operating system's randomness.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        now.duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    format!("{stamp}-{:08x}", hasher.finish() as u32)
}

/// `time` as `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let seconds = time
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    fn temp_store(name: &str) -> ConversationStore {
        let dir = std::env::temp_dir().join(format!(
            "junction-saved-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        ConversationStore::new(dir)
    }

    #[test]
    fn dates_are_civil_dates_in_utc() {
        let at = |s: u64| rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_796_281_512), "2026-12-03T07:05:12Z");
    }

    #[test]
    fn ids_are_sortable_distinct_and_safe_file_names() {
        let now = SystemTime::now();
        let (a, b) = (new_id(now), new_id(now));
        assert_ne!(a, b);
        assert!(check_id(&a).is_ok(), "{a}");
        assert!(a.contains('T') && a.contains('Z'), "{a}");
    }

    #[test]
    fn ids_that_would_leave_the_directory_are_refused() {
        let store = temp_store("bad-ids");
        for bad in ["../../etc/passwd", "a/b", "", ".hidden", "x.json", "a b"] {
            assert!(
                matches!(store.load(bad), Err(SavedError::BadId(_))),
                "{bad:?}"
            );
        }
        let long = "a".repeat(MAX_ID_CHARS + 1);
        assert!(matches!(store.load(&long), Err(SavedError::BadId(_))));
    }

    #[test]
    fn a_conversation_round_trips_and_is_private_to_the_user() {
        let store = temp_store("round-trip");
        let mut saved = SavedConversation::start("/p", "scripted:x");
        saved.conversation.push(Message::User { text: "hi".into() });
        store.save(&mut saved).unwrap();
        saved.conversation.push(Message::Assistant {
            text: Some("hello".into()),
            tool_calls: Vec::new(),
        });
        store.save(&mut saved).unwrap();
        assert_eq!(store.load(&saved.id).unwrap(), saved);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let file = std::fs::metadata(store.path_of(&saved.id).unwrap()).unwrap();
            assert_eq!(file.permissions().mode() & 0o777, 0o600);
            let dir = std::fs::metadata(store.dir()).unwrap();
            assert_eq!(dir.permissions().mode() & 0o777, 0o700);
        }
        let leftovers: Vec<_> = std::fs::read_dir(store.dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        std::fs::remove_dir_all(store.dir()).unwrap();
    }

    #[test]
    fn the_latest_is_per_directory_and_strangers_are_passed_over() {
        let store = temp_store("latest");
        assert_eq!(store.latest(None).unwrap(), None, "no directory yet");
        let mut here_old = SavedConversation::start("/here", "m");
        let mut there = SavedConversation::start("/there", "m");
        let mut here_new = SavedConversation::start("/here", "m");
        for s in [&mut here_old, &mut there, &mut here_new] {
            store.save(s).unwrap();
        }
        // Stamps have one-second resolution: set them apart by hand.
        for (s, stamp) in [
            (&mut here_old, "2026-01-01T00:00:00Z"),
            (&mut there, "2026-01-03T00:00:00Z"),
            (&mut here_new, "2026-01-02T00:00:00Z"),
        ] {
            s.updated = stamp.into();
            let path = store.path_of(&s.id).unwrap();
            std::fs::write(path, serde_json::to_vec(&*s).unwrap()).unwrap();
        }
        std::fs::write(store.dir().join("broken.json"), "{not json").unwrap();
        std::fs::write(store.dir().join("notes.txt"), "hello").unwrap();
        assert_eq!(
            store.latest(Some("/here")).unwrap().unwrap().id,
            here_new.id
        );
        assert_eq!(store.latest(None).unwrap().unwrap().id, there.id);
        assert_eq!(store.latest(Some("/elsewhere")).unwrap(), None);
        assert!(matches!(
            store.load("broken"),
            Err(SavedError::Invalid { .. })
        ));
        assert!(matches!(
            store.load("missing"),
            Err(SavedError::NotFound { .. })
        ));
        std::fs::remove_dir_all(store.dir()).unwrap();
    }
}
