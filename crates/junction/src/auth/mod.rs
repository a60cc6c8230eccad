//! MCP authorization (OAuth 2.1) for the client: what an HTTP transport needs to reach a
//! protected server.
//!
//! An [`OAuthClient`] belongs to one MCP endpoint. Given to
//! [`HttpClient::oauth`](crate::transport::http::client::HttpClient::oauth), it puts
//! `Authorization: Bearer` (or, for a DPoP-bound token, `Authorization: DPoP` and a proof)
//! on every request to the endpoint's origin (and nowhere else), and
//! answers a `401` or a `403 insufficient_scope` by discovering the authorization server,
//! registering, sending the user to authorize, and trying the request again (at most three
//! authorizations per request). The pieces, each usable alone:
//!
//! - [`challenge`]: the `WWW-Authenticate` header.
//! - [`metadata`]: protected resource and authorization server metadata, and where to find
//!   them.
//! - [`registration`]: pre-registered clients, Client ID Metadata Documents, Dynamic Client
//!   Registration.
//! - [`pkce`]: PKCE `S256` and `state`.
//! - [`token`]: the token endpoint and its client authentication.
//! - [`cross_app`]: cross-app access through the enterprise IdP (SEP-990).
//! - [`dpop`]: tokens bound to the client's key (DPoP, RFC 9449).
//! - [`workload`]: workload identity federation, a platform's JWT for a token (SEP-1933).
//! - [`store`]: where tokens and clients are kept ([`FileTokenStore`], mode `0600`).
//! - [`user_agent`]: how the user authorizes ([`LoopbackBrowser`], [`FollowRedirects`]).
//! - [`flow`]: the [`OAuthClient`] that ties them together.
//!
//! Tokens and secrets never appear in logs or `Debug` output, and errors name URLs without
//! their queries.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use junction::auth::{FileTokenStore, LoopbackBrowser, OAuthClient, OAuthConfig};
//! use junction::client::{Client, ClientOptions};
//! use junction::transport::http::client::HttpClient;
//!
//! let url = junction::auth::Url::parse("https://mcp.example.com/mcp")?;
//! let oauth = OAuthClient::new(
//!     &url,
//!     OAuthConfig::new("my-host"),
//!     Arc::new(FileTokenStore::in_config_dir()?),
//!     Arc::new(LoopbackBrowser::default()),
//! )?;
//! let connection = HttpClient::new(url.as_str())?.oauth(oauth).connect();
//! let client = Client::connect(connection, ClientOptions::new("my-host", "1.0.0")).await?;
//! # Ok(()) }
//! ```

#[cfg(feature = "http-client")]
pub mod challenge;
#[cfg(feature = "http-client")]
pub mod cross_app;
pub mod dpop;
#[cfg(feature = "http-client")]
pub mod flow;
#[cfg(feature = "keyring")]
pub mod keyring_store;
pub mod metadata;
pub mod pkce;
#[cfg(feature = "http-client")]
pub mod registration;
pub mod resource;
#[cfg(feature = "http-client")]
pub mod store;
#[cfg(feature = "http-client")]
pub mod token;
#[cfg(feature = "http-client")]
pub mod user_agent;
#[cfg(feature = "http-client")]
pub mod workload;

#[cfg(feature = "http-client")]
pub use challenge::Challenge;
#[cfg(feature = "http-client")]
pub use cross_app::CrossAppAccess;
#[cfg(feature = "http-client")]
pub use flow::{OAuthClient, OAuthConfig, Presented, TokenStatus};
#[cfg(feature = "keyring")]
pub use keyring_store::KeyringTokenStore;
pub use metadata::{canonical_resource, AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use pkce::Pkce;
#[cfg(feature = "http-client")]
pub use registration::PreRegistered;
#[cfg(feature = "http-client")]
pub use store::{Credentials, FileTokenStore, MemoryTokenStore, StoreError, TokenStore};
#[cfg(feature = "http-client")]
pub use token::{ClientKey, RegisteredClient, Tokens};
/// The URL type of this API (`url::Url`, as reqwest uses it).
pub use url::Url;
#[cfg(feature = "http-client")]
pub use user_agent::{FollowRedirects, LoopbackBrowser, PendingRedirect, UserAgent};
#[cfg(feature = "http-client")]
pub use workload::{WorkloadIdentity, WorkloadToken};

/// Why authorization failed. Messages name what to fix; none carries a token or secret.
///
/// Non-exhaustive: some variants exist only with the `http-client` feature, which another
/// crate of the same build may turn on, and new ways to fail may come.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A request could not be made (connection refused, timeout, TLS).
    #[error("{url}: {reason}")]
    Http {
        /// The URL, without its query.
        url: String,
        /// The cause.
        reason: String,
    },
    /// A metadata document is missing, too large or not valid.
    #[error("metadata at {url}: {reason}")]
    Metadata {
        /// Where it was looked for.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// An endpoint is neither https nor on a loopback host.
    #[error("the {what} {url} is not https (only loopback hosts may use http)")]
    Insecure {
        /// Which endpoint.
        what: String,
        /// Its URL.
        url: String,
    },
    /// The resource metadata describes another resource.
    #[error("the protected resource metadata is for {resource}, not for {endpoint}")]
    ResourceMismatch {
        /// The `resource` of the document.
        resource: String,
        /// The MCP endpoint.
        endpoint: String,
    },
    /// The resource metadata lists no authorization server.
    #[error("the protected resource metadata of {resource} lists no authorization server")]
    NoAuthorizationServer {
        /// The resource.
        resource: String,
    },
    /// The authorization server metadata names another issuer than the one looked up.
    #[error("the authorization server metadata names issuer {found}, not {expected}")]
    IssuerMismatch {
        /// The issuer looked up.
        expected: String,
        /// The one in the document.
        found: String,
    },
    /// The stored tokens came from another authorization server than the resource names.
    #[error("the stored tokens were issued by {stored}, but the resource now names {now}")]
    IssuerChanged {
        /// The issuer of the stored tokens.
        stored: String,
        /// The one named now.
        now: String,
    },
    /// The authorization server does not list PKCE `S256`.
    #[error("the authorization server {issuer} does not support PKCE S256; refusing to authorize")]
    NoPkce {
        /// Its issuer.
        issuer: String,
    },
    /// No client id: nothing pre-registered, no metadata documents, no registration endpoint.
    #[error("no client id for {issuer}: it offers neither Client ID Metadata Documents nor registration; configure a pre-registered client (oauth.clientId)")]
    NoClient {
        /// The issuer.
        issuer: String,
    },
    /// Cross-app access is configured but no client is pre-registered with the
    /// authorization server (the JWT bearer grant is given to registered clients only).
    #[error("cross-app access to {issuer} needs a client registered with it (oauth.clientId and oauth.clientSecret)")]
    CrossAppClient {
        /// The issuer.
        issuer: String,
    },
    /// Pre-registered credentials belong to another authorization server.
    #[error(
        "the configured client is registered with {configured}, but the resource names {issuer}"
    )]
    ClientIssuerMismatch {
        /// The issuer configured.
        configured: String,
        /// The issuer named by the resource.
        issuer: String,
    },
    /// Dynamic Client Registration was refused.
    #[error("client registration failed: {reason}")]
    Registration {
        /// The server's reason.
        reason: String,
    },
    /// The redirect could not be received, or went somewhere it must not.
    #[error("authorization redirect: {reason}")]
    Redirect {
        /// What happened.
        reason: String,
    },
    /// The redirect's `state` is not the one sent (a forged or replayed response).
    #[error("the authorization response's state does not match the request (forged or replayed); ignored")]
    State,
    /// The redirect's `iss` is not the authorization server's (RFC 9207, a mix-up attack).
    #[error("the authorization response's issuer {found:?} is not {expected}; ignored")]
    IssuerResponse {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received.
        found: Option<String>,
    },
    /// The user or the server refused the authorization.
    #[error("authorization refused: {error}{}", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Denied {
        /// The OAuth error code.
        error: String,
        /// The explanation.
        description: Option<String>,
    },
    /// The redirect carries no code.
    #[error("the authorization response carries no code")]
    NoCode,
    /// The token endpoint refused.
    #[error("token request failed: {error}{}", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Token {
        /// The OAuth error code (or the HTTP status).
        error: String,
        /// The explanation.
        description: Option<String>,
    },
    /// A `403` that authorization cannot fix.
    #[error("forbidden{}{}", error.as_deref().map(|e| format!(": {e}")).unwrap_or_default(), description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Forbidden {
        /// The challenge's error code.
        error: Option<String>,
        /// Its description.
        description: Option<String>,
    },
    /// Nothing is stored to refresh.
    #[error("not authorized yet")]
    NotAuthorized,
    /// The credential store failed.
    #[cfg(feature = "http-client")]
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A DPoP proof could not be made, or a server's DPoP answer is not usable.
    #[error("DPoP: {0}")]
    Dpop(String),
    /// The workload identity token could not be read.
    #[error("workload identity token from {origin}: {reason}")]
    Workload {
        /// Where it was looked for (a file, an environment variable).
        origin: String,
        /// What went wrong.
        reason: String,
    },
    /// The authorization's task ended before it did (a panic, or the runtime shutting down).
    #[error("the authorization stopped: {0}")]
    Interrupted(String),
    /// The OS gave no random bytes.
    #[error("no random bytes available: {0}")]
    Random(String),
}

/// Seconds since the Unix epoch.
pub(crate) fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
