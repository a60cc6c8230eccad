//! Where credentials live between runs: a [`TokenStore`].
//!
//! Two kinds of record: the clients registered with each authorization server (keyed by
//! its issuer), and the tokens of each resource (keyed by the resource URL, and tagged with
//! the issuer that granted them, so that tokens from an authorization server the resource
//! no longer names are never sent).
//!
//! [`FileTokenStore`] keeps them in one JSON file per user, created with mode `0600`
//! (written to a temporary file and renamed, so a crash never leaves half a file);
//! [`FileTokenStore::default_path`] is `$XDG_CONFIG_HOME/junction/credentials.json` (else
//! `~/.config/junction/credentials.json`). [`MemoryTokenStore`] keeps them for one process.
//! With the `keyring` feature, `KeyringTokenStore` keeps them in the OS keyring.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::dpop::DpopKey;
use super::token::{RegisteredClient, Tokens};
use crate::sync::lock;

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing the file failed.
    #[error("credential store {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is not a credential store.
    #[error("credential store {path} is not valid: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// No place for the file: neither `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("no configuration directory: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    /// The OS keyring refused (the `keyring` feature's store).
    #[error("keyring {entry}: {reason}")]
    Keyring {
        /// The service and account of the secret.
        entry: String,
        /// The keyring's reason.
        reason: String,
    },
}

/// The tokens of one resource and the issuer that granted them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceTokens {
    /// The authorization server's issuer.
    pub issuer: String,
    /// The tokens.
    pub tokens: Tokens,
}

/// Everything a store holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// Registered clients by issuer.
    #[serde(default)]
    pub clients: BTreeMap<String, RegisteredClient>,
    /// Tokens by resource URL.
    #[serde(default)]
    pub tokens: BTreeMap<String, ResourceTokens>,
    /// The DPoP key the client proves possession with, by issuer: the tokens that issuer
    /// bound to it are useless without it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dpop_keys: BTreeMap<String, DpopKey>,
}

/// A place to keep credentials. Implementations must keep them from other users.
pub trait TokenStore: Send + Sync + Debug {
    /// Everything stored (empty when nothing is).
    fn load(&self) -> Result<Credentials, StoreError>;
    /// Replaces everything stored.
    fn save(&self, credentials: &Credentials) -> Result<(), StoreError>;

    /// Reads, changes and writes back.
    fn update(&self, change: &mut dyn FnMut(&mut Credentials)) -> Result<(), StoreError> {
        let mut credentials = self.load()?;
        change(&mut credentials);
        self.save(&credentials)
    }
}

/// Credentials for this process only.
#[derive(Debug, Default)]
pub struct MemoryTokenStore(Mutex<Credentials>);

impl TokenStore for MemoryTokenStore {
    fn load(&self) -> Result<Credentials, StoreError> {
        Ok(lock(&self.0).clone())
    }
    fn save(&self, credentials: &Credentials) -> Result<(), StoreError> {
        *lock(&self.0) = credentials.clone();
        Ok(())
    }
}

/// Credentials in a JSON file readable by its owner only.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
}

impl FileTokenStore {
    /// A store in the file at `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore { path: path.into() }
    }

    /// The store in the user's configuration directory.
    pub fn in_config_dir() -> Result<Self, StoreError> {
        Ok(Self::new(Self::default_path()?))
    }

    /// `$XDG_CONFIG_HOME/junction/credentials.json`, else under `~/.config`.
    pub fn default_path() -> Result<PathBuf, StoreError> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| Path::new(&h).join(".config"))
            })
            .ok_or(StoreError::NoConfigDir)?;
        Ok(base.join("junction").join("credentials.json"))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.display().to_string(),
            source,
        }
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self) -> Result<Credentials, StoreError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                path: self.path.display().to_string(),
                reason: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
            Err(e) => Err(self.io(e)),
        }
    }

    fn save(&self, credentials: &Credentials) -> Result<(), StoreError> {
        use std::io::Write;
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir).map_err(|e| self.io(e))?;
        }
        let temporary = self.path.with_extension("json.tmp");
        let bytes = serde_json::to_vec_pretty(credentials).map_err(|e| StoreError::Corrupt {
            path: self.path.display().to_string(),
            reason: e.to_string(),
        })?;
        let mut file = private_file(&temporary).map_err(|e| self.io(e))?;
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| self.io(e))?;
        std::fs::rename(&temporary, &self.path).map_err(|e| self.io(e))
    }
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // An existing file keeps its mode on open: narrow it.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::create(path)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Credentials {
        let mut c = Credentials::default();
        c.tokens.insert(
            "https://mcp.example/mcp".into(),
            ResourceTokens {
                issuer: "https://as.example".into(),
                tokens: Tokens {
                    access_token: "at".into(),
                    refresh_token: Some("rt".into()),
                    expires_at: Some(5),
                    scope: None,
                    dpop: false,
                },
            },
        );
        c.dpop_keys
            .insert("https://as.example".into(), DpopKey::generate().unwrap());
        c
    }

    #[test]
    fn the_file_store_round_trips_and_is_private() {
        let dir = std::env::temp_dir().join(format!("junction-store-{}", std::process::id()));
        let store = FileTokenStore::new(dir.join("sub/credentials.json"));
        assert_eq!(store.load().unwrap(), Credentials::default());
        let saved = sample();
        store.save(&saved).unwrap();
        assert_eq!(store.load().unwrap(), saved);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        store
            .update(&mut |c| {
                c.tokens.clear();
            })
            .unwrap();
        assert!(store.load().unwrap().tokens.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupt_file_is_reported_not_overwritten() {
        let dir = std::env::temp_dir().join(format!("junction-corrupt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("credentials.json");
        std::fs::write(&path, "not json").unwrap();
        let err = FileTokenStore::new(&path).load().unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
