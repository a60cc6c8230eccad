//! The resource server side of MCP authorization: checking the bearer tokens that reach a
//! protected MCP server.
//!
//! A [`TokenVerifier`] turns a token into the caller's [`Identity`] or refuses it. Two
//! implementations:
//!
//! - [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the issuer's JWKS
//!   (fetched from its metadata's `jwks_uri`, cached, fetched again when a token names an
//!   unknown `kid`); the algorithm is pinned (never `none`, never one the key does not
//!   declare), and `iss`, `aud` (the resource URL), `exp` and `nbf` are checked with a
//!   small leeway.
//! - [`IntrospectionVerifier`]: opaque tokens, asked about at the authorization server's
//!   introspection endpoint (RFC 7662) with the resource server's own client credentials;
//!   `active`, `aud`, `iss` and `exp` are checked.
//!
//! Both fetch over HTTP, so they come with the `http-client` feature.
//!
//! [`BearerAuth`](crate::transport::http::server::BearerAuth) puts a verifier in front of an
//! [`HttpServer`](crate::transport::http::server::HttpServer); handlers read the caller
//! from [`Context::identity`](crate::server::Context::identity).

#[cfg(feature = "http-client")]
mod introspection;
#[cfg(feature = "http-client")]
mod jwt;

#[cfg(feature = "http-client")]
pub use introspection::IntrospectionVerifier;
#[cfg(feature = "http-client")]
pub use jwt::JwtVerifier;

use std::collections::BTreeSet;

use crate::session::BoxFuture;

/// Who is calling: what a validated token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The subject (`sub`): the user, or the client for machine-to-machine tokens.
    pub subject: String,
    /// The client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: BTreeSet<String>,
    /// The issuer.
    pub issuer: Option<String>,
    /// Expiry, seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6): such
    /// a token is accepted only with a proof signed by that key.
    pub key_thumbprint: Option<String>,
}

impl Identity {
    /// Whether every scope in `required` was granted.
    pub fn has_scopes<'a>(&self, required: impl IntoIterator<Item = &'a String>) -> bool {
        required.into_iter().all(|s| self.scopes.contains(s))
    }

    /// The identity the current task serves, set by
    /// [`BearerAuth`](crate::transport::http::server::BearerAuth) while a request is handled.
    pub fn current() -> Option<Identity> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Runs `future` with `identity` as [`Identity::current`].
    pub async fn scope<F: std::future::Future>(identity: Identity, future: F) -> F::Output {
        CURRENT.scope(identity, future).await
    }
}

tokio::task_local! {
    static CURRENT: Identity;
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The token is not valid for this resource (answered `401 invalid_token`).
    #[error("{0}")]
    Invalid(String),
    /// The token could not be checked now (answered `503`).
    #[error("the token could not be checked: {0}")]
    Unavailable(String),
}

/// Checks bearer tokens.
pub trait TokenVerifier: Send + Sync {
    /// The caller's identity, or why the token is refused.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, VerifyError>>;
}

#[cfg(feature = "http-client")]
/// Splits a space-separated `scope` claim (or takes an `scp` array).
pub(crate) fn scopes_of(scope: Option<&serde_json::Value>) -> BTreeSet<String> {
    match scope {
        Some(serde_json::Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

#[cfg(feature = "http-client")]
/// The `cnf.jkt` of a token's claims or introspection answer.
pub(crate) fn key_thumbprint(
    claims: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    claims.get("cnf")?.get("jkt")?.as_str().map(str::to_owned)
}

#[cfg(feature = "http-client")]
/// Whether an `aud` claim (a string or an array) names `audience`.
pub(crate) fn audience_matches(aud: Option<&serde_json::Value>, audience: &str) -> bool {
    match aud {
        Some(serde_json::Value::String(s)) => s == audience,
        Some(serde_json::Value::Array(items)) => items.iter().any(|v| v.as_str() == Some(audience)),
        _ => false,
    }
}

#[cfg(all(test, feature = "http-client"))]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_and_audiences_read_both_shapes() {
        assert_eq!(scopes_of(Some(&json!("a b"))).len(), 2);
        assert_eq!(scopes_of(Some(&json!(["a", "b", 3]))).len(), 2);
        assert!(scopes_of(None).is_empty());
        assert!(audience_matches(
            Some(&json!("https://r/mcp")),
            "https://r/mcp"
        ));
        assert!(audience_matches(
            Some(&json!(["x", "https://r/mcp"])),
            "https://r/mcp"
        ));
        assert!(!audience_matches(
            Some(&json!("https://other/mcp")),
            "https://r/mcp"
        ));
        assert!(!audience_matches(None, "https://r/mcp"));
    }

    #[tokio::test]
    async fn the_current_identity_is_scoped_to_its_task() {
        assert_eq!(Identity::current(), None);
        let who = Identity {
            subject: "alice".into(),
            client_id: None,
            scopes: BTreeSet::new(),
            issuer: None,
            expires_at: None,
            key_thumbprint: None,
        };
        let seen = Identity::scope(who.clone(), async { Identity::current() }).await;
        assert_eq!(seen, Some(who));
        assert_eq!(Identity::current(), None);
    }
}
