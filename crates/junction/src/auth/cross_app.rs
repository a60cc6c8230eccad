//! Cross-app access (SEP-990, Enterprise-Managed Authorization): the enterprise's identity
//! provider, not a consent screen, grants a user's access to an MCP server.
//!
//! The user signed in to the host once, with the enterprise identity provider (IdP), and the
//! host holds the OpenID Connect ID token of that sign-in. For an MCP server whose
//! authorization server trusts the IdP (it lists the JWT bearer grant), the client, with no
//! browser:
//!
//! 1. exchanges the ID token at the IdP's token endpoint for an Identity Assertion JWT
//!    Authorization Grant (ID-JAG): an RFC 8693 token exchange with
//!    `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, `audience` the
//!    authorization server's issuer and `resource` the MCP server ([`exchange`]);
//! 2. presents the ID-JAG at the authorization server's token endpoint as an RFC 7523 JWT
//!    bearer grant, authenticated as its client registered there, and receives the access
//!    token (`jwt_bearer`).
//!
//! The IdP decides, by policy, whether this user may reach this resource; the ID-JAG is
//! bound to the resource and to the client, so it is useless anywhere else. Configured with
//! [`OAuthConfig::cross_app`](super::OAuthConfig::cross_app) together with the client
//! pre-registered at the MCP server's authorization server
//! ([`OAuthConfig::pre_registered`](super::OAuthConfig::pre_registered)).

use std::fmt;

use serde::Deserialize;

use super::metadata::{authorization_server, secure_url, AuthorizationServerMetadata, Fetcher};
use super::token::{self, RegisteredClient, Tokens};
use super::AuthError;

/// The grant type of an RFC 8693 token exchange.
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The grant type of an RFC 7523 JWT bearer grant.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an Identity Assertion JWT Authorization Grant.
pub const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Where the ID token comes from and how the client is known to the IdP.
#[derive(Clone, PartialEq, Eq)]
pub struct CrossAppAccess {
    /// The IdP's issuer; its metadata names the token endpoint unless
    /// [`idp_token_endpoint`](Self::idp_token_endpoint) does.
    pub idp_issuer: String,
    /// The IdP's token endpoint, when it is known without discovery.
    pub idp_token_endpoint: Option<String>,
    /// The client as the IdP knows it (an id, and a secret or key for a confidential one).
    pub idp_client: RegisteredClient,
    /// The ID token of the user's sign-in with the IdP (its audience is `idp_client`).
    pub id_token: String,
}

impl fmt::Debug for CrossAppAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrossAppAccess")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client", &self.idp_client)
            .field("id_token", &"<redacted>")
            .finish()
    }
}

impl CrossAppAccess {
    /// The IdP's token endpoint as metadata: the configured one, else discovered from the
    /// issuer (RFC 8414 / OpenID Connect discovery, issuer checked).
    async fn idp(&self, fetcher: &Fetcher) -> Result<AuthorizationServerMetadata, AuthError> {
        match &self.idp_token_endpoint {
            Some(endpoint) => {
                secure_url("IdP token endpoint", endpoint)?;
                Ok(AuthorizationServerMetadata {
                    issuer: self.idp_issuer.clone(),
                    authorization_endpoint: String::new(),
                    token_endpoint: endpoint.clone(),
                    registration_endpoint: None,
                    introspection_endpoint: None,
                    jwks_uri: None,
                    scopes_supported: None,
                    grant_types_supported: None,
                    code_challenge_methods_supported: None,
                    token_endpoint_auth_methods_supported: None,
                    client_id_metadata_document_supported: None,
                    authorization_response_iss_parameter_supported: None,
                    dpop_signing_alg_values_supported: None,
                })
            }
            None => authorization_server(fetcher, &self.idp_issuer).await,
        }
    }
}

/// Whether an authorization server accepts the JWT bearer grant (it must list it: the RFC
/// 8414 default is the code grant only).
pub fn accepts_jwt_bearer(server: &AuthorizationServerMetadata) -> bool {
    server
        .grant_types_supported
        .as_ref()
        .is_some_and(|g| g.iter().any(|g| g == JWT_BEARER_GRANT))
}

#[derive(Deserialize)]
struct ExchangeResponse {
    access_token: String,
    #[serde(default)]
    issued_token_type: Option<String>,
}

/// Step 1: the ID-JAG for `resource` at the authorization server `audience`, from the IdP.
pub async fn exchange(
    fetcher: &Fetcher,
    access: &CrossAppAccess,
    audience: &str,
    resource: &str,
    scope: Option<&str>,
) -> Result<String, AuthError> {
    let idp = access.idp(fetcher).await?;
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE_GRANT.to_owned()),
        ("requested_token_type", ID_JAG_TYPE.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
        ("subject_token", access.id_token.clone()),
        ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    let body = token::post(fetcher, &idp, &access.idp_client, form, None).await?;
    let answer: ExchangeResponse = serde_json::from_slice(&body).map_err(|e| AuthError::Token {
        error: "invalid_response".to_owned(),
        description: Some(format!("the IdP's token exchange answer is not valid: {e}")),
    })?;
    // RFC 8693 §2.2.1 makes `issued_token_type` required: anything but an ID-JAG (an access
    // token for the IdP itself, say) must not be sent to another server.
    match answer.issued_token_type.as_deref() {
        Some(ID_JAG_TYPE) => Ok(answer.access_token),
        other => Err(AuthError::Token {
            error: "invalid_response".to_owned(),
            description: Some(format!(
                "the IdP issued {}, not an ID-JAG ({ID_JAG_TYPE})",
                other.unwrap_or("a token of no stated type")
            )),
        }),
    }
}

/// Step 2: the access token for the ID-JAG `assertion`, from the authorization server, as
/// `client`.
pub(crate) async fn jwt_bearer(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client: &RegisteredClient,
    assertion: String,
    resource: &str,
    scope: Option<&str>,
    dpop: Option<token::Binding<'_>>,
) -> Result<Tokens, AuthError> {
    let mut form = vec![
        ("grant_type", JWT_BEARER_GRANT.to_owned()),
        ("assertion", assertion),
        ("resource", resource.to_owned()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope.to_owned()));
    }
    token::request(fetcher, server, client, form, scope, dpop).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_token_does_not_show_in_debug_output() {
        let access = CrossAppAccess {
            idp_issuer: "https://idp.example".into(),
            idp_token_endpoint: None,
            idp_client: RegisteredClient {
                client_id: "host".into(),
                client_secret: Some("idp-secret".into()),
                ..RegisteredClient::default()
            },
            id_token: "eyJ-the-id-token".into(),
        };
        let text = format!("{access:?}");
        assert!(
            !text.contains("eyJ-the-id-token") && !text.contains("idp-secret"),
            "{text}"
        );
    }

    #[test]
    fn only_a_listed_jwt_bearer_grant_counts() {
        let mut server = AuthorizationServerMetadata::default_endpoints(
            &reqwest::Url::parse("https://as.example").unwrap(),
        );
        assert!(!accepts_jwt_bearer(&server));
        server.grant_types_supported = Some(vec!["authorization_code".into()]);
        assert!(!accepts_jwt_bearer(&server));
        server.grant_types_supported = Some(vec![JWT_BEARER_GRANT.into()]);
        assert!(accepts_jwt_bearer(&server));
    }
}
