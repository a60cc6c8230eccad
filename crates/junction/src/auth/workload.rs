//! Workload identity federation (SEP-1933): a workload with no user and no client secret
//! (a Kubernetes pod, a GitHub Actions job, a cloud VM) gets its access token for the
//! token its platform already issued it.
//!
//! The platform's JWT (a projected service-account token, the Actions OIDC token) is
//! presented at the authorization server's token endpoint as an RFC 7523 JWT bearer grant
//! (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, the JWT as `assertion`, the
//! MCP server as `resource`). The authorization server trusts the platform's issuer and
//! decides from the JWT's claims; nothing else is exchanged. It is used when configured
//! ([`OAuthConfig::workload`](super::OAuthConfig::workload)) and the authorization server
//! lists the grant.
//!
//! The JWT is read when a token is needed, not once: Kubernetes rotates projected tokens
//! in place. A refusal (`invalid_grant` for an expired JWT or a wrong audience,
//! `invalid_scope`, `unauthorized_client`) is reported as the server worded it, and not
//! tried again with another grant.
//!
//! ```
//! use junction::auth::workload::{WorkloadIdentity, WorkloadToken};
//!
//! // Kubernetes: a projected service-account token with the authorization server as
//! // its audience.
//! let pod = WorkloadIdentity {
//!     client_id: Some("my-agent".into()),
//!     token: WorkloadToken::File("/var/run/secrets/tokens/mcp-token".into()),
//! };
//! // A CI job that put its OIDC token in an environment variable.
//! let job = WorkloadIdentity::from_env("MCP_WORKLOAD_TOKEN");
//! assert!(matches!(job.token, WorkloadToken::Env(_)));
//! # let _ = pod;
//! ```

use std::fmt;
use std::path::PathBuf;

use super::AuthError;

/// Where the workload's JWT is, and the client id it presents (if any).
#[derive(Clone, PartialEq, Eq)]
pub struct WorkloadIdentity {
    /// The client id the authorization server knows the workload as; without one the
    /// grant is sent without client identification (RFC 7523 §3.1 makes it optional).
    pub client_id: Option<String>,
    /// The JWT.
    pub token: WorkloadToken,
}

impl WorkloadIdentity {
    /// The JWT in the environment variable `var`, with no client id.
    pub fn from_env(var: impl Into<String>) -> Self {
        WorkloadIdentity {
            client_id: None,
            token: WorkloadToken::Env(var.into()),
        }
    }

    /// The JWT in the file at `path`, with no client id.
    pub fn from_file(path: impl Into<PathBuf>) -> Self {
        WorkloadIdentity {
            client_id: None,
            token: WorkloadToken::File(path.into()),
        }
    }
}

/// Where the workload's JWT comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum WorkloadToken {
    /// A file, read each time (Kubernetes rotates projected tokens in place).
    File(PathBuf),
    /// An environment variable.
    Env(String),
    /// The JWT itself.
    Value(String),
}

impl fmt::Debug for WorkloadToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadToken::File(path) => f.debug_tuple("File").field(path).finish(),
            WorkloadToken::Env(var) => f.debug_tuple("Env").field(var).finish(),
            WorkloadToken::Value(_) => f.debug_tuple("Value").field(&"<redacted>").finish(),
        }
    }
}

impl fmt::Debug for WorkloadIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkloadIdentity")
            .field("client_id", &self.client_id)
            .field("token", &self.token)
            .finish()
    }
}

impl WorkloadToken {
    /// The JWT now, surrounding whitespace trimmed; a missing or empty one is an error
    /// naming where it was looked for.
    pub fn read(&self) -> Result<String, AuthError> {
        let (text, source) = match self {
            WorkloadToken::File(path) => {
                let source = format!("file {}", path.display());
                match std::fs::read_to_string(path) {
                    Ok(text) => (text, source),
                    Err(e) => {
                        return Err(AuthError::Workload {
                            origin: source,
                            reason: e.to_string(),
                        })
                    }
                }
            }
            WorkloadToken::Env(var) => {
                let source = format!("environment variable {var}");
                match std::env::var(var) {
                    Ok(text) => (text, source),
                    Err(e) => {
                        return Err(AuthError::Workload {
                            origin: source,
                            reason: e.to_string(),
                        })
                    }
                }
            }
            WorkloadToken::Value(text) => (text.clone(), "configuration".to_owned()),
        };
        let token = text.trim();
        if token.is_empty() {
            return Err(AuthError::Workload {
                origin: source,
                reason: "it is empty".to_owned(),
            });
        }
        if token.split('.').count() != 3 {
            return Err(AuthError::Workload {
                origin: source,
                reason: "it is not a JWT (three dot-separated parts)".to_owned(),
            });
        }
        Ok(token.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_from_a_file_each_time_and_errors_name_the_source() {
        let path = std::env::temp_dir().join(format!("junction-wif-{}", std::process::id()));
        let token = WorkloadToken::File(path.clone());
        let error = token.read().unwrap_err().to_string();
        assert!(error.contains(&path.display().to_string()), "{error}");
        std::fs::write(&path, "a.b.c\n").unwrap();
        assert_eq!(token.read().unwrap(), "a.b.c");
        std::fs::write(&path, "d.e.f").unwrap();
        assert_eq!(
            token.read().unwrap(),
            "d.e.f",
            "a rotated token is read again"
        );
        std::fs::write(&path, "  ").unwrap();
        assert!(token.read().unwrap_err().to_string().contains("empty"));
        std::fs::write(&path, "not-a-jwt").unwrap();
        assert!(token.read().unwrap_err().to_string().contains("not a JWT"));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_missing_variable_is_named_and_the_value_is_not_printed() {
        let error = WorkloadToken::Env("JUNCTION_TEST_NO_SUCH_VARIABLE".into())
            .read()
            .unwrap_err()
            .to_string();
        assert!(error.contains("JUNCTION_TEST_NO_SUCH_VARIABLE"), "{error}");
        let text = format!("{:?}", WorkloadToken::Value("eyJ.secret.sig".into()));
        assert!(!text.contains("secret"), "{text}");
    }
}
