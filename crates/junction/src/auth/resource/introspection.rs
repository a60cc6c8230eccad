//! [`IntrospectionVerifier`]: tokens checked at the authorization server (RFC 7662).

use reqwest::header::{ACCEPT, AUTHORIZATION};
use reqwest::Url;
use serde_json::{Map, Value};

use super::{audience_matches, scopes_of, Identity, TokenVerifier, VerifyError};
use crate::auth::metadata::Fetcher;
use crate::auth::now_seconds;
use crate::auth::token::basic_credentials;
use crate::auth::AuthError;
use crate::session::BoxFuture;

/// Asks the introspection endpoint about each token (see the [module docs](super)).
pub struct IntrospectionVerifier {
    endpoint: Url,
    client_id: String,
    client_secret: String,
    audience: String,
    issuer: Option<String>,
    fetcher: Fetcher,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspects at `endpoint`, authenticating as `client_id`/`client_secret`
    /// (`client_secret_basic`); tokens must name `audience` in `aud`.
    pub fn new(
        endpoint: Url,
        client_id: &str,
        client_secret: &str,
        audience: &str,
    ) -> Result<Self, AuthError> {
        Ok(IntrospectionVerifier {
            endpoint,
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            audience: audience.to_owned(),
            issuer: None,
            fetcher: Fetcher::new()?,
        })
    }

    /// Sets the largest introspection answer read, in bytes
    /// ([`MAX_DOCUMENT`](crate::auth::metadata::MAX_DOCUMENT) by default).
    pub fn max_document(mut self, bytes: usize) -> Self {
        self.fetcher = self.fetcher.max_document(bytes);
        self
    }

    /// Also requires `iss`, when the answer has one, to be `issuer`.
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.issuer = Some(issuer.to_owned());
        self
    }

    async fn check(&self, token: &str) -> Result<Identity, VerifyError> {
        let response = self
            .fetcher
            .http()
            .post(self.endpoint.clone())
            .header(ACCEPT, "application/json")
            .header(
                AUTHORIZATION,
                basic_credentials(&self.client_id, &self.client_secret),
            )
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| VerifyError::Unavailable(format!("introspection: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            return Err(VerifyError::Unavailable(format!(
                "introspection answered HTTP {status}"
            )));
        }
        let body = self
            .fetcher
            .read_capped(&self.endpoint, response)
            .await
            .map_err(|e| VerifyError::Unavailable(e.to_string()))?;
        let claims: Map<String, Value> = serde_json::from_slice(&body).map_err(|_| {
            VerifyError::Unavailable("the introspection answer is not JSON".to_owned())
        })?;
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(VerifyError::Invalid("the token is not active".to_owned()));
        }
        if !audience_matches(claims.get("aud"), &self.audience) {
            return Err(VerifyError::Invalid(
                "the token was issued for another resource".to_owned(),
            ));
        }
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        if let (Some(expected), Some(iss)) = (&self.issuer, text("iss")) {
            if *expected != iss {
                return Err(VerifyError::Invalid(
                    "the token was issued by another authorization server".to_owned(),
                ));
            }
        }
        let expires_at = claims.get("exp").and_then(Value::as_u64);
        if expires_at.is_some_and(|exp| exp < now_seconds()) {
            return Err(VerifyError::Invalid("the token has expired".to_owned()));
        }
        Ok(Identity {
            subject: text("sub")
                .or_else(|| text("client_id"))
                .ok_or_else(|| VerifyError::Invalid("the token names no subject".to_owned()))?,
            client_id: text("client_id"),
            scopes: scopes_of(claims.get("scope")),
            issuer: text("iss"),
            expires_at,
            key_thumbprint: super::key_thumbprint(&claims),
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, VerifyError>> {
        Box::pin(self.check(token))
    }
}
