//! [`KeyringTokenStore`]: credentials in the operating system's keyring (the `keyring`
//! cargo feature): the macOS Keychain, the Windows Credential Manager, or on Linux the
//! kernel's key retention service (the session keyring: kept while the user's login session
//! lasts, not across reboots).
//!
//! The whole store is one secret, the JSON [`Credentials`], under a service and an account
//! name. The Secret Service (GNOME Keyring, KWallet over D-Bus) is not used: its crate needs
//! the D-Bus C library and headers at build time, which are not everywhere; the default
//! store stays the `0600` file ([`FileTokenStore`](super::FileTokenStore)).

use super::store::{Credentials, StoreError, TokenStore};

/// Credentials kept as one secret in the OS keyring.
#[derive(Debug, Clone)]
pub struct KeyringTokenStore {
    service: String,
    account: String,
}

impl KeyringTokenStore {
    /// The secret `account` of `service`.
    pub fn new(service: impl Into<String>, account: impl Into<String>) -> Self {
        KeyringTokenStore {
            service: service.into(),
            account: account.into(),
        }
    }

    /// Junction's: service `junction`, account `credentials`.
    pub fn for_user() -> Self {
        Self::new("junction", "credentials")
    }

    fn entry(&self) -> Result<keyring::Entry, StoreError> {
        keyring::Entry::new(&self.service, &self.account).map_err(|e| self.error(e))
    }

    fn error(&self, e: keyring::Error) -> StoreError {
        StoreError::Keyring {
            entry: format!("{}/{}", self.service, self.account),
            reason: e.to_string(),
        }
    }

    /// Removes the secret (nothing stored is not an error).
    pub fn clear(&self) -> Result<(), StoreError> {
        match self.entry()?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(self.error(e)),
        }
    }
}

impl TokenStore for KeyringTokenStore {
    fn load(&self) -> Result<Credentials, StoreError> {
        match self.entry()?.get_password() {
            Ok(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: format!("keyring {}/{}", self.service, self.account),
                reason: e.to_string(),
            }),
            Err(keyring::Error::NoEntry) => Ok(Credentials::default()),
            Err(e) => Err(self.error(e)),
        }
    }

    fn save(&self, credentials: &Credentials) -> Result<(), StoreError> {
        let text = serde_json::to_string(credentials).map_err(|e| StoreError::Corrupt {
            path: format!("keyring {}/{}", self.service, self.account),
            reason: e.to_string(),
        })?;
        self.entry()?.set_password(&text).map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::ResourceTokens;
    use crate::auth::Tokens;

    /// Against the real keyring of the machine: where there is one, what is saved comes back
    /// and is removed; where there is none (a container without a session keyring), saving
    /// fails with an error that names the keyring, and nothing is half-written.
    #[test]
    fn credentials_round_trip_through_the_os_keyring_or_fail_clearly() {
        let store = KeyringTokenStore::new("junction-test", format!("t{}", std::process::id()));
        let mut credentials = Credentials::default();
        credentials.tokens.insert(
            "https://mcp.example/mcp".into(),
            ResourceTokens {
                issuer: "https://as.example".into(),
                tokens: Tokens {
                    access_token: "at".into(),
                    refresh_token: None,
                    expires_at: Some(1),
                    scope: None,
                    dpop: false,
                },
            },
        );
        match store.save(&credentials) {
            Ok(()) => {
                assert_eq!(store.load().unwrap(), credentials);
                store.clear().unwrap();
                assert_eq!(store.load().unwrap(), Credentials::default());
            }
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("keyring junction-test/t"), "{text}");
                assert!(!text.contains("\"at\""), "{text}");
            }
        }
    }
}
