//! Getting a client id, in the specification's order: pre-registered credentials, a
//! Client ID Metadata Document (a URL as the client id, when the server supports them),
//! then Dynamic Client Registration (RFC 7591, `application_type: "native"`).
//!
//! Clients are bound to the issuer that knows them: a stored registration is only used with
//! that issuer, and pre-registered credentials configured for one issuer are refused by
//! another.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::{Deserialize, Serialize};

use super::metadata::{http_error, secure_url, AuthorizationServerMetadata, Fetcher};
use super::token::RegisteredClient;
use super::AuthError;

/// A client registered out of band (config `oauth: {clientId, clientSecret}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreRegistered {
    /// The client.
    pub client: RegisteredClient,
    /// The issuer it was registered with; `None` accepts the resource's authorization server.
    pub issuer: Option<String>,
}

#[derive(Serialize)]
struct RegistrationRequest<'a> {
    client_name: &'a str,
    redirect_uris: [&'a str; 1],
    grant_types: &'a [&'a str],
    response_types: [&'a str; 1],
    token_endpoint_auth_method: &'a str,
    application_type: &'a str,
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

#[derive(Deserialize)]
struct RegistrationError {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// Registers a client with `server` for `redirect_uri` (RFC 7591). A public client is
/// asked for when the server accepts one, else a confidential one.
pub(crate) async fn register(
    fetcher: &Fetcher,
    server: &AuthorizationServerMetadata,
    client_name: &str,
    redirect_uri: &str,
) -> Result<RegisteredClient, AuthError> {
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(AuthError::NoClient {
            issuer: server.issuer.clone(),
        });
    };
    let url = secure_url("registration endpoint", endpoint)?;
    let methods = server.token_endpoint_auth_methods_supported.as_deref();
    let method = match methods {
        Some(m) if m.iter().any(|m| m == "none") => "none",
        Some(m)
            if !m.iter().any(|m| m == "client_secret_basic")
                && m.iter().any(|m| m == "client_secret_post") =>
        {
            "client_secret_post"
        }
        _ => "client_secret_basic",
    };
    let body = RegistrationRequest {
        client_name,
        redirect_uris: [redirect_uri],
        grant_types: &["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: method,
        application_type: "native",
    };
    let response = fetcher
        .http()
        .post(url.clone())
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body).unwrap_or_default())
        .send()
        .await
        .map_err(|e| http_error(&url, &e))?;
    let status = response.status();
    let bytes = fetcher.read_capped(&url, response).await?;
    if !status.is_success() {
        let reason = match serde_json::from_slice::<RegistrationError>(&bytes) {
            Ok(e) => match e.error_description {
                Some(d) => format!("{}: {d}", e.error),
                None => e.error,
            },
            Err(_) => format!("HTTP {status}"),
        };
        return Err(AuthError::Registration { reason });
    }
    let answer: RegistrationResponse =
        serde_json::from_slice(&bytes).map_err(|e| AuthError::Registration {
            reason: format!("the registration response is not valid: {e}"),
        })?;
    Ok(RegisteredClient {
        client_id: answer.client_id,
        client_secret: answer.client_secret,
        token_endpoint_auth_method: answer
            .token_endpoint_auth_method
            .or_else(|| Some(method.to_owned())),
        redirect_uris: vec![redirect_uri.to_owned()],
        private_key: None,
    })
}

/// A client whose id is the URL of its metadata document: a public client.
pub(crate) fn metadata_document_client(url: &str) -> RegisteredClient {
    RegisteredClient {
        client_id: url.to_owned(),
        client_secret: None,
        token_endpoint_auth_method: Some("none".to_owned()),
        ..RegisteredClient::default()
    }
}
