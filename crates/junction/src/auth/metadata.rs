//! The two metadata documents of MCP authorization and where to find them.
//!
//! - [`ProtectedResourceMetadata`] (RFC 9728): served by the MCP server, it names the
//!   authorization servers. A client finds it at the URL of the `401` challenge, else at
//!   the path-aware well-known URL (`/.well-known/oauth-protected-resource/<path>`), else at
//!   the root one ([`protected_resource_urls`]).
//! - [`AuthorizationServerMetadata`] (RFC 8414 / OpenID Connect Discovery): served by the
//!   authorization server. For an issuer with a path the order is RFC 8414 with path
//!   insertion, OpenID Connect with path insertion, OpenID Connect with the path appended;
//!   without a path, RFC 8414 then OpenID Connect ([`authorization_server_urls`]).
//!
//! [`Fetcher`] reads them: no redirects followed (a document must come from where it was
//! asked for), a size cap, a timeout, and https required except on loopback hosts.
//!
//! ```
//! use junction::auth::metadata::{authorization_server_urls, protected_resource_urls};
//! use reqwest::Url;
//!
//! let prm = protected_resource_urls(&Url::parse("https://ex.com/public/mcp").unwrap());
//! assert_eq!(prm[0].as_str(), "https://ex.com/.well-known/oauth-protected-resource/public/mcp");
//! assert_eq!(prm[1].as_str(), "https://ex.com/.well-known/oauth-protected-resource");
//!
//! let asm = authorization_server_urls(&Url::parse("https://auth.ex.com/tenant1").unwrap());
//! assert_eq!(asm[0].as_str(), "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1");
//! assert_eq!(asm[1].as_str(), "https://auth.ex.com/.well-known/openid-configuration/tenant1");
//! assert_eq!(asm[2].as_str(), "https://auth.ex.com/tenant1/.well-known/openid-configuration");
//! ```

use std::time::Duration;

#[cfg(feature = "http-client")]
use reqwest::StatusCode;
#[cfg(feature = "http-client")]
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use url::Url;

use super::AuthError;

/// The well-known suffix of protected resource metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The largest metadata, registration or token response read by default, in bytes; set
/// with [`Fetcher::max_document`] (for a client, [`OAuthConfig::max_document`](super::OAuthConfig::max_document)).
pub const MAX_DOCUMENT: usize = 256 * 1024;

/// How long one request to an authorization or metadata endpoint may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 §2), the fields MCP uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: the MCP server's canonical URL.
    pub resource: String,
    /// The issuers of the authorization servers that issue tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes needed for basic use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How the token may be presented; MCP allows only the `header` method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// The algorithms the resource accepts DPoP proofs signed with (RFC 9728 §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether the resource accepts only DPoP-bound access tokens (RFC 9728 §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
}

/// OAuth 2.0 Authorization Server Metadata (RFC 8414 §2) or an OpenID Provider
/// configuration, the fields MCP uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; it must equal the one the document was looked up for.
    pub issuer: String,
    /// Where the user authorizes.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Dynamic Client Registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Token introspection (RFC 7662).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// The signing keys of the tokens it issues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// The scopes it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// The grant types it allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// The PKCE methods; MCP clients refuse a server that does not list `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// How clients authenticate at the token endpoint (default `client_secret_basic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether a URL may be a client id (Client ID Metadata Documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// The algorithms it accepts in DPoP proofs (RFC 9449 §5.1); listed, it binds tokens
    /// to the client's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// The endpoints the 2025-03-26 revision assumed when a server published no metadata:
    /// `/authorize`, `/token` and `/register` at the origin of `base`.
    pub fn default_endpoints(base: &Url) -> AuthorizationServerMetadata {
        let origin = origin_of(base);
        AuthorizationServerMetadata {
            issuer: origin.clone(),
            authorization_endpoint: format!("{origin}/authorize"),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            introspection_endpoint: None,
            jwks_uri: None,
            scopes_supported: None,
            grant_types_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: None,
            authorization_response_iss_parameter_supported: None,
            dpop_signing_alg_values_supported: None,
        }
    }

    /// Whether `S256` PKCE is listed.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    }
}

/// `scheme://host[:port]` of a URL, without a trailing slash.
pub fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The resource indicator of an endpoint: no fragment, and no trailing slash at the root.
pub fn canonical_resource(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    if url.path() == "/" && url.query().is_none() {
        origin_of(&url)
    } else {
        url.to_string()
    }
}

/// Where to look for a resource's metadata when its challenge names no URL: path-aware
/// first, then the root.
pub fn protected_resource_urls(resource: &Url) -> Vec<Url> {
    well_known(resource, "oauth-protected-resource", true)
}

/// Where to look for an issuer's metadata, in the order the specification gives.
pub fn authorization_server_urls(issuer: &Url) -> Vec<Url> {
    let origin = origin_of(issuer);
    let path = issuer.path().trim_end_matches('/');
    let texts = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    texts.iter().filter_map(|t| Url::parse(t).ok()).collect()
}

/// `/.well-known/<suffix>` with the URL's path inserted (when it has one), then at the root.
fn well_known(url: &Url, suffix: &str, with_root: bool) -> Vec<Url> {
    let origin = origin_of(url);
    let path = url.path().trim_end_matches('/');
    let mut texts = Vec::new();
    if !path.is_empty() {
        texts.push(format!("{origin}/.well-known/{suffix}{path}"));
    }
    if with_root || path.is_empty() {
        texts.push(format!("{origin}/.well-known/{suffix}"));
    }
    texts.iter().filter_map(|t| Url::parse(t).ok()).collect()
}

/// Whether a URL may carry credentials: https, or http to a loopback host.
pub fn is_secure(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// Parses an endpoint URL and requires it to be secure ([`is_secure`]).
pub fn secure_url(what: &str, text: &str) -> Result<Url, AuthError> {
    let url = Url::parse(text).map_err(|e| AuthError::Metadata {
        url: text.to_owned(),
        reason: format!("the {what} is not a URL: {e}"),
    })?;
    if !is_secure(&url) {
        return Err(AuthError::Insecure {
            what: what.to_owned(),
            url: url.to_string(),
        });
    }
    Ok(url)
}

#[cfg(feature = "http-client")]
/// The HTTP side of discovery, registration and token requests.
#[derive(Debug, Clone)]
pub struct Fetcher {
    http: reqwest::Client,
    max_document: usize,
}

#[cfg(feature = "http-client")]
/// What a well-known probe found.
pub(crate) enum Probe<T> {
    Found(T),
    /// A 4xx: the document is not there; try the next location.
    Absent(StatusCode),
}

#[cfg(feature = "http-client")]
impl Fetcher {
    /// A fetcher that follows no redirects, times out after [`REQUEST_TIMEOUT`] and reads
    /// documents of up to [`MAX_DOCUMENT`] bytes.
    pub fn new() -> Result<Fetcher, AuthError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| AuthError::Http {
                url: String::new(),
                reason: e.to_string(),
            })?;
        Ok(Fetcher {
            http,
            max_document: MAX_DOCUMENT,
        })
    }

    /// Sets the largest metadata, registration, token or introspection response read, in
    /// bytes; a larger one fails with an error saying so.
    pub fn max_document(mut self, bytes: usize) -> Fetcher {
        self.max_document = bytes;
        self
    }

    /// The underlying client (no redirects, timeout set).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// GETs a JSON document: `Absent` for a 4xx, an error for anything else that is not a
    /// 2xx with a JSON body of the expected shape.
    pub(crate) async fn probe<T: DeserializeOwned>(
        &self,
        url: &Url,
    ) -> Result<Probe<T>, AuthError> {
        let response = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| http_error(url, &e))?;
        let status = response.status();
        if status.is_client_error() {
            return Ok(Probe::Absent(status));
        }
        if status.is_redirection() {
            return Err(AuthError::Metadata {
                url: url.to_string(),
                reason: format!("HTTP {status}: metadata is not read through redirects"),
            });
        }
        if !status.is_success() {
            return Err(AuthError::Metadata {
                url: url.to_string(),
                reason: format!("HTTP {status}"),
            });
        }
        let body = self.read_capped(url, response).await?;
        serde_json::from_slice(&body)
            .map(Probe::Found)
            .map_err(|e| AuthError::Metadata {
                url: url.to_string(),
                reason: format!("not a valid metadata document: {e}"),
            })
    }
}

#[cfg(feature = "http-client")]
/// The metadata of the authorization server `issuer`, from the first well-known URL that
/// has it ([`authorization_server_urls`]); its `issuer` must be the one looked up.
pub(crate) async fn authorization_server(
    fetcher: &Fetcher,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthError> {
    let issuer_url = secure_url("authorization server", issuer)?;
    for url in authorization_server_urls(&issuer_url) {
        if let Probe::Found(m) = fetcher.probe::<AuthorizationServerMetadata>(&url).await? {
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

#[cfg(feature = "http-client")]
impl Fetcher {
    /// Reads a body of at most [`Fetcher::max_document`] bytes.
    pub(crate) async fn read_capped(
        &self,
        url: &Url,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, AuthError> {
        let max = self.max_document;
        let too_big = || AuthError::Metadata {
            url: url.to_string(),
            reason: format!("the response is larger than {max} bytes"),
        };
        if response.content_length().is_some_and(|n| n > max as u64) {
            return Err(too_big());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
            if body.len() + chunk.len() > max {
                return Err(too_big());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

#[cfg(feature = "http-client")]
/// A request error with its causes (reqwest's own message hides "Connection refused").
pub(crate) fn http_error(url: &Url, e: &reqwest::Error) -> AuthError {
    let mut reason = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        reason.push_str(": ");
        reason.push_str(&c.to_string());
        cause = c.source();
    }
    AuthError::Http {
        url: without_query(url),
        reason,
    }
}

#[cfg(feature = "http-client")]
/// A URL without its query: authorization and token URLs carry codes and states there.
pub(crate) fn without_query(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_resource_at_the_root_has_one_well_known_url() {
        let urls = protected_resource_urls(&url("https://ex.com/"));
        assert_eq!(
            urls.iter().map(Url::as_str).collect::<Vec<_>>(),
            ["https://ex.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn an_issuer_without_a_path_tries_rfc_8414_then_oidc() {
        let urls = authorization_server_urls(&url("https://auth.ex.com"));
        assert_eq!(
            urls.iter().map(Url::as_str).collect::<Vec<_>>(),
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server",
                "https://auth.ex.com/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn only_https_or_loopback_http_is_secure() {
        assert!(is_secure(&url("https://ex.com/x")));
        assert!(is_secure(&url("http://127.0.0.1:8080/x")));
        assert!(is_secure(&url("http://localhost:1/x")));
        assert!(is_secure(&url("http://[::1]:1/x")));
        assert!(!is_secure(&url("http://ex.com/x")));
        assert!(!is_secure(&url("ftp://127.0.0.1/x")));
        assert!(secure_url("token endpoint", "http://ex.com/token").is_err());
    }

    #[test]
    fn the_2025_03_26_defaults_sit_at_the_origin() {
        let m = AuthorizationServerMetadata::default_endpoints(&url("http://localhost:3/mcp"));
        assert_eq!(m.authorization_endpoint, "http://localhost:3/authorize");
        assert_eq!(m.token_endpoint, "http://localhost:3/token");
        assert!(m.supports_s256());
    }
}
