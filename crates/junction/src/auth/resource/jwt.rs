//! [`JwtVerifier`]: JWT access tokens checked against the issuer's JWKS.

use std::time::{Duration, Instant};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use reqwest::Url;
use serde_json::{Map, Value};

use super::{scopes_of, Identity, TokenVerifier, VerifyError};
use crate::auth::metadata::{
    authorization_server_urls, secure_url, AuthorizationServerMetadata, Fetcher, Probe,
};
use crate::auth::AuthError;
use crate::session::BoxFuture;

/// The algorithms accepted unless told otherwise: asymmetric ones only (a shared-secret
/// algorithm would let anyone holding the public key forge tokens).
pub const DEFAULT_ALGORITHMS: [Algorithm; 3] =
    [Algorithm::RS256, Algorithm::PS256, Algorithm::ES256];

/// The least time between two JWKS fetches caused by unknown `kid`s (the first fetch does
/// not count), so that tokens with made-up key ids cannot make the server hammer the
/// authorization server.
const REFETCH_INTERVAL: Duration = Duration::from_secs(10);

/// Checks JWT access tokens (see the [module docs](super)).
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    jwks_uri: Url,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    fetcher: Fetcher,
    keys: tokio::sync::RwLock<Keys>,
}

#[derive(Default)]
struct Keys {
    set: Option<JwkSet>,
    /// When a token's unknown `kid` last caused a fetch.
    refetched: Option<Instant>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_uri", &self.jwks_uri.as_str())
            .field("algorithms", &self.algorithms)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Tokens from `issuer` for `audience` (the resource URL), signed by a key of the set at
    /// `jwks_uri`.
    pub fn new(issuer: &str, audience: &str, jwks_uri: Url) -> Result<Self, AuthError> {
        Ok(JwtVerifier {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            jwks_uri,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: 30,
            fetcher: Fetcher::new()?,
            keys: tokio::sync::RwLock::new(Keys::default()),
        })
    }

    /// Reads `jwks_uri` from the issuer's metadata (whose `issuer` must be `issuer`).
    pub async fn discover(issuer: &str, audience: &str) -> Result<Self, AuthError> {
        let server = fetch_server_metadata(issuer).await?;
        let jwks = server.jwks_uri.ok_or_else(|| AuthError::Metadata {
            url: issuer.to_owned(),
            reason: "the authorization server metadata has no jwks_uri".to_owned(),
        })?;
        Self::new(issuer, audience, secure_url("JWKS URL", &jwks)?)
    }

    /// The accepted signing algorithms (replacing `DEFAULT_ALGORITHMS`).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Sets the largest key set read from `jwks_uri`, in bytes
    /// ([`MAX_DOCUMENT`](crate::auth::metadata::MAX_DOCUMENT) by default).
    pub fn max_document(mut self, bytes: usize) -> Self {
        self.fetcher = self.fetcher.max_document(bytes);
        self
    }

    /// The clock skew allowed on `exp` and `nbf`, in seconds (30 by default).
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    async fn check(&self, token: &str) -> Result<Identity, VerifyError> {
        let header = decode_header(token).map_err(|_| {
            VerifyError::Invalid("not a JWT signed with a known algorithm".to_owned())
        })?;
        if !self.algorithms.contains(&header.alg) {
            return Err(VerifyError::Invalid(format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway;
        let data = decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
            VerifyError::Invalid(
                match e.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired",
                    ErrorKind::ImmatureSignature => "the token is not valid yet",
                    ErrorKind::InvalidAudience => "the token was issued for another resource",
                    ErrorKind::InvalidIssuer => {
                        "the token was issued by another authorization server"
                    }
                    ErrorKind::InvalidSignature => "the token's signature does not verify",
                    ErrorKind::MissingRequiredClaim(_) => {
                        "the token lacks a required claim (exp, iss, aud, sub)"
                    }
                    _ => "the token is not valid",
                }
                .to_owned(),
            )
        })?;
        let claims = data.claims;
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        Ok(Identity {
            subject: text("sub").unwrap_or_default(),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes: scopes_of(claims.get("scope").or_else(|| claims.get("scp"))),
            issuer: text("iss"),
            expires_at: claims.get("exp").and_then(Value::as_u64),
            key_thumbprint: super::key_thumbprint(&claims),
        })
    }

    /// The key for `kid`, fetching the set again (rate-limited) when it is unknown.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, VerifyError> {
        {
            let keys = self.keys.read().await;
            if let Some(found) = keys.set.as_ref().and_then(|set| pick(set, kid)) {
                return decoding_key(found, alg);
            }
        }
        let mut keys = self.keys.write().await;
        if let Some(found) = keys.set.as_ref().and_then(|set| pick(set, kid)) {
            // Another task fetched it meanwhile.
            return decoding_key(found, alg);
        }
        let recent = keys
            .refetched
            .is_some_and(|at| at.elapsed() < REFETCH_INTERVAL);
        if keys.set.is_none() || !recent {
            let set = match self.fetcher.probe::<JwkSet>(&self.jwks_uri).await {
                Ok(Probe::Found(set)) => set,
                Ok(Probe::Absent(status)) => {
                    return Err(VerifyError::Unavailable(format!(
                        "the JWKS answered HTTP {status}"
                    )))
                }
                Err(e) => return Err(VerifyError::Unavailable(e.to_string())),
            };
            if keys.set.is_some() {
                keys.refetched = Some(Instant::now());
            }
            keys.set = Some(set);
        }
        match keys.set.as_ref().and_then(|set| pick(set, kid)) {
            Some(found) => decoding_key(found, alg),
            None => Err(VerifyError::Invalid(
                "the token names a key the authorization server does not publish".to_owned(),
            )),
        }
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, VerifyError>> {
        Box::pin(self.check(token))
    }
}

/// The key named `kid`; without a `kid`, the only key of the set.
fn pick<'a>(set: &'a JwkSet, kid: Option<&str>) -> Option<&'a Jwk> {
    match kid {
        Some(kid) => set.find(kid),
        None if set.keys.len() == 1 => set.keys.first(),
        None => None,
    }
}

/// The decoding key of `jwk` for `alg`: a key that declares another algorithm is refused.
fn decoding_key(jwk: &Jwk, alg: Algorithm) -> Result<DecodingKey, VerifyError> {
    if let Some(declared) = &jwk.common.key_algorithm {
        if format!("{declared:?}") != format!("{alg:?}") {
            return Err(VerifyError::Invalid(format!(
                "the token's algorithm {alg:?} is not its key's ({declared:?})"
            )));
        }
    }
    DecodingKey::from_jwk(jwk)
        .map_err(|_| VerifyError::Invalid("the signing key is not usable".to_owned()))
}

/// The metadata of `issuer`, looked up in the specification's order, its `issuer` checked.
pub(crate) async fn fetch_server_metadata(
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthError> {
    let fetcher = Fetcher::new()?;
    let url = secure_url("authorization server", issuer)?;
    for candidate in authorization_server_urls(&url) {
        if let Probe::Found(m) = fetcher
            .probe::<AuthorizationServerMetadata>(&candidate)
            .await?
        {
            if m.issuer != issuer {
                return Err(AuthError::IssuerMismatch {
                    expected: issuer.to_owned(),
                    found: m.issuer,
                });
            }
            return Ok(m);
        }
    }
    Err(AuthError::Metadata {
        url: issuer.to_owned(),
        reason: "no authorization server metadata at any well-known URL".to_owned(),
    })
}
