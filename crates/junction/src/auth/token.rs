//! Tokens and the token endpoint: exchanging a code, refreshing, and authenticating the
//! client there (`client_secret_basic`, `client_secret_post` or `none`).
//!
//! Every request carries the `resource` indicator (RFC 8707). [`Tokens`] and
//! [`RegisteredClient`] print without their secrets, so a `{:?}` in a log leaks nothing.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use reqwest::header::{ACCEPT, AUTHORIZATION};
use reqwest::Url;
use serde::{Deserialize, Serialize};

use super::dpop::{self, DpopKey, Nonces};
use super::metadata::{http_error, secure_url, AuthorizationServerMetadata, Fetcher};
use super::{now_seconds, AuthError};

/// Access (and maybe refresh) token for one resource.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The bearer token sent to the resource.
    pub access_token: String,
    /// Exchanged for a new access token when this one expires or is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (or, when the server did not say, requested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Bound to the client's DPoP key (`token_type: DPoP`): sent as `Authorization: DPoP`
    /// with a proof, never as a bearer token.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dpop: bool,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("dpop", &self.dpop)
            .finish()
    }
}

impl Tokens {
    /// Whether the access token expires within `margin` seconds (or already has).
    pub fn expires_within(&self, margin: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_seconds().saturating_add(margin))
    }
}

/// A client id (and maybe secret or key) an authorization server knows.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredClient {
    /// The client id (a URL for a Client ID Metadata Document).
    pub client_id: String,
    /// The secret of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How to authenticate at the token endpoint, when registration said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URIs registered with it (empty when unknown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirect_uris: Vec<String>,
    /// The private key of a client that authenticates with `private_key_jwt` (RFC 7523);
    /// configuration only, never stored.
    #[serde(skip)]
    pub private_key: Option<ClientKey>,
}

/// A client's signing key for `private_key_jwt` assertions.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientKey {
    /// The PKCS#8 PEM of the private key.
    pub pem: String,
    /// The algorithm (`ES256`, `RS256`, ...).
    pub algorithm: jsonwebtoken::Algorithm,
}

impl ClientKey {
    /// A key from its PEM and the name of its algorithm (`ES256`, `RS256`, `EdDSA`, ...).
    pub fn new(pem: &str, algorithm: &str) -> Result<ClientKey, AuthError> {
        let algorithm = algorithm.parse().map_err(|_| AuthError::Token {
            error: "invalid_client".to_owned(),
            description: Some(format!("unknown signing algorithm {algorithm:?}")),
        })?;
        Ok(ClientKey {
            pem: pem.to_owned(),
            algorithm,
        })
    }
}

impl fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey")
            .field("pem", &"<redacted>")
            .field("algorithm", &self.algorithm)
            .finish()
    }
}

impl fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uris", &self.redirect_uris)
            .field("private_key", &self.private_key)
            .finish()
    }
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuthMethod {
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1).
    Basic,
    /// `client_id` and `client_secret` in the form body.
    Post,
    /// A signed JWT assertion (`private_key_jwt`, RFC 7523).
    PrivateKeyJwt,
    /// A public client: only `client_id`.
    None,
}

impl ClientAuthMethod {
    /// The method for `client` at `server`: the one registration named, else (with a
    /// secret) Basic when the server allows it (the RFC 8414 default), else Post.
    pub fn choose(client: &RegisteredClient, server: &AuthorizationServerMetadata) -> Self {
        if client.private_key.is_some() {
            return Self::PrivateKeyJwt;
        }
        match client.token_endpoint_auth_method.as_deref() {
            Some("client_secret_basic") if client.client_secret.is_some() => return Self::Basic,
            Some("client_secret_post") if client.client_secret.is_some() => return Self::Post,
            Some("none") => return Self::None,
            _ => {}
        }
        if client.client_secret.is_none() {
            return Self::None;
        }
        match &server.token_endpoint_auth_methods_supported {
            None => Self::Basic,
            Some(methods) if methods.iter().any(|m| m == "client_secret_basic") => Self::Basic,
            Some(methods) if methods.iter().any(|m| m == "client_secret_post") => Self::Post,
            Some(_) => Self::None,
        }
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// The DPoP key a token request proves possession of, and where the servers' nonces are
/// kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding<'a> {
    pub key: &'a DpopKey,
    pub nonces: &'a Nonces,
}

/// POSTs a grant to the token endpoint and reads the tokens. `requested_scope` is kept
/// when the answer names none. With `dpop`, the request carries a proof and the answer may
/// be a DPoP-bound token.
pub(crate) async fn request(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client: &RegisteredClient,
    form: Vec<(&'static str, String)>,
    requested_scope: Option<&str>,
    dpop: Option<Binding<'_>>,
) -> Result<Tokens, AuthError> {
    let body = post(fetcher, server, client, form, dpop).await?;
    let answer: TokenResponse = serde_json::from_slice(&body).map_err(|e| AuthError::Token {
        error: "invalid_response".to_owned(),
        description: Some(format!("the token response is not valid: {e}")),
    })?;
    let bound = match answer.token_type.as_deref() {
        None => false,
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => false,
        Some(kind) if kind.eq_ignore_ascii_case("dpop") && dpop.is_some() => true,
        Some(kind) => {
            return Err(AuthError::Token {
                error: "unsupported_token_type".to_owned(),
                description: Some(format!(
                    "the server issued a {kind:?} token, not a Bearer{} token",
                    if dpop.is_some() { " or DPoP" } else { "" }
                )),
            });
        }
    };
    Ok(Tokens {
        access_token: answer.access_token,
        refresh_token: answer.refresh_token,
        expires_at: answer.expires_in.map(|s| now_seconds().saturating_add(s)),
        scope: answer.scope.or_else(|| requested_scope.map(str::to_owned)),
        dpop: bound,
    })
}

/// POSTs `form` to the token endpoint of `server`, authenticated as `client`, and returns
/// the body of a successful answer; an error answer becomes [`AuthError::Token`]. With
/// `dpop`, a proof goes along, and a `use_dpop_nonce` answer naming a new nonce is followed
/// by one more try with it (RFC 9449 §8).
pub(crate) async fn post(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client: &RegisteredClient,
    form: Vec<(&'static str, String)>,
    dpop: Option<Binding<'_>>,
) -> Result<Vec<u8>, AuthError> {
    let url = secure_url("token endpoint", &server.token_endpoint)?;
    let mut nonce_retried = false;
    loop {
        let response = send(fetcher, server, client, form.clone(), &url, dpop).await?;
        let status = response.status();
        let fresh_nonce = dpop.is_some_and(|d| d.nonces.observe(&url, response.headers()));
        let body = fetcher.read_capped(&url, response).await?;
        if status.is_success() {
            return Ok(body);
        }
        let error = serde_json::from_slice::<ErrorResponse>(&body).ok();
        if fresh_nonce
            && !nonce_retried
            && error.as_ref().is_some_and(|e| e.error == dpop::USE_NONCE)
        {
            nonce_retried = true;
            continue;
        }
        return Err(match error {
            Some(e) => AuthError::Token {
                error: e.error,
                description: e.error_description,
            },
            None => AuthError::Token {
                error: format!("HTTP {status}"),
                description: None,
            },
        });
    }
}

/// One token request: the client authenticated as `server` allows, and the proof.
async fn send(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client: &RegisteredClient,
    mut form: Vec<(&'static str, String)>,
    url: &Url,
    dpop: Option<Binding<'_>>,
) -> Result<reqwest::Response, AuthError> {
    let method = ClientAuthMethod::choose(client, server);
    let mut builder = fetcher
        .http()
        .post(url.clone())
        .header(ACCEPT, "application/json");
    if let Some(dpop) = dpop {
        let proof = dpop
            .key
            .proof("POST", url, None, dpop.nonces.get(url).as_deref())?;
        builder = builder.header(dpop::DPOP_HEADER, proof);
    }
    match method {
        ClientAuthMethod::Basic => {
            let secret = client.client_secret.as_deref().unwrap_or_default();
            builder = builder.header(AUTHORIZATION, basic_credentials(&client.client_id, secret));
        }
        ClientAuthMethod::Post => {
            form.push(("client_id", client.client_id.clone()));
            form.push((
                "client_secret",
                client.client_secret.clone().unwrap_or_default(),
            ));
        }
        ClientAuthMethod::PrivateKeyJwt => {
            let assertion = client_assertion(client, &server.issuer)?;
            form.push(("client_id", client.client_id.clone()));
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            form.push(("client_assertion", assertion));
        }
        // A workload with no client id: the JWT bearer grant needs no client (RFC 7523 §3.1).
        ClientAuthMethod::None if client.client_id.is_empty() => {}
        ClientAuthMethod::None => form.push(("client_id", client.client_id.clone())),
    }
    builder
        .form(&form)
        .send()
        .await
        .map_err(|e| http_error(url, &e))
}

/// A `private_key_jwt` assertion: issued by and about the client, for the authorization
/// server's issuer (RFC 7523bis), valid five minutes, with a random `jti`.
fn client_assertion(client: &RegisteredClient, issuer: &str) -> Result<String, AuthError> {
    let Some(key) = &client.private_key else {
        return Err(AuthError::Token {
            error: "invalid_client".to_owned(),
            description: Some("no private key configured".to_owned()),
        });
    };
    let bad_key = |e: jsonwebtoken::errors::Error| AuthError::Token {
        error: "invalid_client".to_owned(),
        description: Some(format!("the client's private key is not usable: {e}")),
    };
    let encoding = match key.algorithm {
        jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
            jsonwebtoken::EncodingKey::from_ec_pem(key.pem.as_bytes())
        }
        jsonwebtoken::Algorithm::EdDSA => {
            jsonwebtoken::EncodingKey::from_ed_pem(key.pem.as_bytes())
        }
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(key.pem.as_bytes()),
    }
    .map_err(bad_key)?;
    let now = now_seconds();
    let claims = serde_json::json!({
        "iss": client.client_id, "sub": client.client_id, "aud": issuer,
        "iat": now, "exp": now + 300, "jti": super::pkce::random_token()?,
    });
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(key.algorithm),
        &claims,
        &encoding,
    )
    .map_err(bad_key)
}

/// Asks for a token as the client itself (the `client_credentials` grant, for machines).
pub(crate) async fn client_credentials(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client: &RegisteredClient,
    resource: &str,
    scope: Option<&str>,
    dpop: Option<Binding<'_>>,
) -> Result<Tokens, AuthError> {
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("resource", resource.to_owned()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    request(fetcher, server, client, form, scope, dpop).await
}

/// Exchanges a refresh token; the old refresh token is kept when no new one comes back.
pub(crate) async fn refresh(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client: &RegisteredClient,
    tokens: &Tokens,
    resource: &str,
    dpop: Option<Binding<'_>>,
) -> Result<Tokens, AuthError> {
    let Some(refresh_token) = &tokens.refresh_token else {
        return Err(AuthError::Token {
            error: "no_refresh_token".to_owned(),
            description: None,
        });
    };
    let form = vec![
        ("grant_type", "refresh_token".to_owned()),
        ("refresh_token", refresh_token.clone()),
        ("resource", resource.to_owned()),
    ];
    let mut fresh = request(fetcher, server, client, form, tokens.scope.as_deref(), dpop).await?;
    if fresh.refresh_token.is_none() {
        fresh.refresh_token = Some(refresh_token.clone());
    }
    Ok(fresh)
}

/// The `Authorization` value of `client_secret_basic`: id and secret form-encoded, then
/// base64 (RFC 6749 §2.3.1).
pub(crate) fn basic_credentials(id: &str, secret: &str) -> String {
    let encode = |t: &str| url::form_urlencoded::byte_serialize(t.as_bytes()).collect::<String>();
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", encode(id), encode(secret)))
    )
}

/// Reads `code`, `state`, `iss`, `error` and `error_description` from a redirect URL.
pub(crate) fn callback_parameters(url: &Url) -> Callback {
    let mut out = Callback::default();
    for (key, value) in url.query_pairs() {
        let slot = match key.as_ref() {
            "code" => &mut out.code,
            "state" => &mut out.state,
            "iss" => &mut out.iss,
            "error" => &mut out.error,
            "error_description" => &mut out.error_description,
            _ => continue,
        };
        slot.get_or_insert(value.into_owned());
    }
    out
}

/// The parameters of an authorization response.
#[derive(Default)]
pub(crate) struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(methods: Option<&[&str]>) -> AuthorizationServerMetadata {
        let mut m = AuthorizationServerMetadata::default_endpoints(
            &Url::parse("https://as.example").unwrap(),
        );
        m.token_endpoint_auth_methods_supported =
            methods.map(|m| m.iter().map(|s| s.to_string()).collect());
        m
    }

    fn client(secret: bool, method: Option<&str>) -> RegisteredClient {
        RegisteredClient {
            client_id: "id".into(),
            client_secret: secret.then(|| "s".into()),
            token_endpoint_auth_method: method.map(str::to_owned),
            ..RegisteredClient::default()
        }
    }

    #[test]
    fn the_auth_method_follows_registration_then_the_server() {
        use ClientAuthMethod as M;
        let choose = ClientAuthMethod::choose;
        assert_eq!(
            choose(&client(true, Some("client_secret_post")), &server(None)),
            M::Post
        );
        assert_eq!(choose(&client(true, None), &server(None)), M::Basic);
        let post_only = server(Some(&["client_secret_post"]));
        assert_eq!(choose(&client(true, None), &post_only), M::Post);
        assert_eq!(
            choose(&client(true, None), &server(Some(&["none"]))),
            M::None
        );
        let basic_only = server(Some(&["client_secret_basic"]));
        assert_eq!(choose(&client(false, None), &basic_only), M::None);
        assert_eq!(choose(&client(true, Some("none")), &server(None)), M::None);
    }

    #[test]
    fn secrets_do_not_show_in_debug_output() {
        let t = Tokens {
            access_token: "AT-secret".into(),
            refresh_token: Some("RT-secret".into()),
            expires_at: None,
            scope: None,
            dpop: false,
        };
        let c = client(true, None);
        let text = format!("{t:?} {c:?}");
        assert!(!text.contains("secret\""), "{text}");
        assert!(!text.contains("AT-secret") && !text.contains("RT-secret"));
    }

    #[test]
    fn callback_parameters_are_decoded() {
        let url =
            Url::parse("http://127.0.0.1:1/cb?code=a%2Bb&state=s&iss=https%3A%2F%2Fas").unwrap();
        let c = callback_parameters(&url);
        assert_eq!(c.code.as_deref(), Some("a+b"));
        assert_eq!(c.state.as_deref(), Some("s"));
        assert_eq!(c.iss.as_deref(), Some("https://as"));
    }
}
