//! [`OAuthClient`]: the client side of MCP authorization for one resource (one MCP
//! endpoint), from a `401` to a token, and keeping the token fresh.
//!
//! On a challenge ([`OAuthClient::challenged`]):
//!
//! 1. A `401` to a token that has a refresh token first tries the refresh.
//! 2. Discovery: the protected resource metadata (the challenge's `resource_metadata`, else
//!    the well-known URLs); its `resource` must be the server's URL or a prefix of it. Then
//!    the first authorization server's metadata, whose `issuer` must be the one looked up.
//!    A server without resource metadata is treated as 2025-03-26 did: the authorization
//!    server sits at the MCP server's origin, with metadata at its root or, lacking that,
//!    `/authorize`, `/token` and `/register`.
//! 3. `S256` must be listed, else nothing is sent.
//! 4. A client: pre-registered, else a Client ID Metadata Document URL (when the server
//!    supports them and one is configured), else one registered earlier with this issuer,
//!    else Dynamic Client Registration.
//! 5. Scopes: the challenge's (joined with those asked for before, for a step-up), else the
//!    resource's `scopes_supported`, else the configured ones, else none; `offline_access`
//!    is added when the authorization server lists it.
//! 6. The user authorizes through the [`UserAgent`]; the answer's `state` must match, and
//!    `iss` is checked as RFC 9207 and the specification require, before anything else is
//!    read from it.
//!    A pre-registered confidential client (a secret or a `private_key_jwt` key) at an
//!    authorization server that grants only `client_credentials` skips steps 4 and 6: it
//!    asks for a token as itself (the ext-auth client credentials extension).
//!    With [`OAuthConfig::cross_app`] and an authorization server that lists the JWT
//!    bearer grant, step 6 is the enterprise IdP's instead of the user's: the ID token is
//!    exchanged there for an ID-JAG, which the pre-registered client presents for the
//!    token ([`cross_app`], SEP-990).
//!    With [`OAuthConfig::workload`] and an authorization server that lists the JWT bearer
//!    grant, the workload's platform JWT is the grant ([`workload`](super::workload),
//!    SEP-1933); no user, no browser.
//! 7. The code is exchanged (PKCE verifier, `resource`), and the tokens stored under the
//!    resource, tagged with the issuer.
//!
//! An authorization server that lists `ES256` for DPoP gets a proof with every token
//! request, and the tokens it binds go out with a proof on every request
//! ([`dpop`], RFC 9449); its nonces are followed.
//!
//! [`OAuthClient::access_token`] gives the token to send, refreshed when it expires within a
//! minute. Tokens granted by an issuer the resource no longer names are dropped.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use reqwest::{StatusCode, Url};

use super::challenge::Challenge;
use super::cross_app::{self, CrossAppAccess};
use super::dpop::{self, DpopKey, Nonces};
use super::metadata::{
    authorization_server, is_secure, origin_of, protected_resource_urls, secure_url,
    AuthorizationServerMetadata, Fetcher, Probe, ProtectedResourceMetadata,
};
use super::pkce::{random_token, Pkce};
use super::registration::{metadata_document_client, register, PreRegistered};
use super::store::{ResourceTokens, TokenStore};
use super::token::{self, callback_parameters, RegisteredClient, Tokens};
use super::user_agent::UserAgent;
use super::workload::WorkloadIdentity;
use super::{canonical_resource, AuthError};
use crate::sync::lock;

/// How many seconds before expiry a token is refreshed.
const REFRESH_MARGIN: u64 = 60;

/// How an [`OAuthClient`] registers and what it asks for.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// `client_name` in Dynamic Client Registration.
    pub client_name: String,
    /// Credentials registered out of band; used before anything else.
    pub pre_registered: Option<PreRegistered>,
    /// The https URL of this client's metadata document, used as its client id where the
    /// authorization server supports Client ID Metadata Documents.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for when the server's challenge names none (before its
    /// `scopes_supported`).
    pub scopes: Option<Vec<String>>,
    /// Cross-app access through the enterprise IdP, used (with the pre-registered client)
    /// at an authorization server that accepts the JWT bearer grant.
    pub cross_app: Option<CrossAppAccess>,
    /// The workload's platform JWT, presented as a JWT bearer grant at an authorization
    /// server that accepts it (workload identity federation).
    pub workload: Option<WorkloadIdentity>,
    /// The largest metadata, registration or token response read, in bytes
    /// ([`MAX_DOCUMENT`](super::metadata::MAX_DOCUMENT), 256 KiB, by default); a larger one
    /// fails discovery or the exchange with an error saying so.
    pub max_document: usize,
}

impl OAuthConfig {
    /// A configuration that registers as `client_name`.
    pub fn new(client_name: impl Into<String>) -> Self {
        OAuthConfig {
            client_name: client_name.into(),
            pre_registered: None,
            client_metadata_url: None,
            scopes: None,
            cross_app: None,
            workload: None,
            max_document: super::metadata::MAX_DOCUMENT,
        }
    }
}

/// What discovery found.
#[derive(Debug, Clone)]
struct Discovered {
    /// The `resource` indicator to send.
    resource: String,
    /// The issuer (the key of its clients).
    issuer: String,
    server: AuthorizationServerMetadata,
    scopes_supported: Option<Vec<String>>,
    /// No resource metadata: the 2025-03-26 rules (no issuer check).
    legacy: bool,
}

#[derive(Default)]
struct State {
    loaded: bool,
    tokens: Option<ResourceTokens>,
    discovered: Option<Discovered>,
    client: Option<RegisteredClient>,
    /// Scopes asked for so far, joined with a step-up challenge's.
    requested: BTreeSet<String>,
    /// The DPoP key in use, and its issuer.
    dpop_key: Option<(String, DpopKey)>,
}

/// What goes on a request to the resource ([`OAuthClient::credentials_for`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Presented {
    /// The access token (to tell, on a challenge, which token was refused).
    pub token: String,
    /// The `Authorization` value: `Bearer <token>` or `DPoP <token>`.
    pub authorization: String,
    /// The `DPoP` header's proof, for a DPoP-bound token.
    pub proof: Option<String>,
}

impl std::fmt::Debug for Presented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Presented")
            .field("dpop", &self.proof.is_some())
            .finish_non_exhaustive()
    }
}

/// What [`OAuthClient::status`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenStatus {
    /// The issuer that granted the token.
    pub issuer: String,
    /// The granted scopes.
    pub scope: Option<String>,
    /// Expiry, seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// Whether it can be refreshed.
    pub refreshable: bool,
}

/// The OAuth 2.1 client of one MCP endpoint (see the module docs).
pub struct OAuthClient {
    endpoint: Url,
    key: String,
    config: OAuthConfig,
    store: Arc<dyn TokenStore>,
    agent: Arc<dyn UserAgent>,
    fetcher: Fetcher,
    state: Mutex<State>,
    /// Held while tokens change, so that concurrent challenges start one flow.
    renewing: tokio::sync::Mutex<()>,
    /// The authorizations that send the user to the authorization server.
    interactive: tokio::sync::watch::Sender<Interactive>,
    /// The DPoP nonces the servers gave.
    nonces: Nonces,
}

/// Authorizations waiting for the user, and how many have ended.
#[derive(Debug, Clone, Copy, Default)]
struct Interactive {
    waiting: usize,
    ended: u64,
}

/// Counts an authorization as waiting for the user until dropped.
struct Waiting<'a>(&'a tokio::sync::watch::Sender<Interactive>);

impl<'a> Waiting<'a> {
    fn start(interactive: &'a tokio::sync::watch::Sender<Interactive>) -> Self {
        interactive.send_modify(|i| i.waiting += 1);
        Waiting(interactive)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|i| {
            i.waiting -= 1;
            i.ended += 1;
        });
    }
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("endpoint", &self.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// The client of the MCP endpoint at `endpoint`, keeping credentials in `store` and
    /// sending the user through `agent`.
    pub fn new(
        endpoint: &Url,
        config: OAuthConfig,
        store: Arc<dyn TokenStore>,
        agent: Arc<dyn UserAgent>,
    ) -> Result<Arc<Self>, AuthError> {
        let fetcher = Fetcher::new()?.max_document(config.max_document);
        Ok(Arc::new(OAuthClient {
            endpoint: endpoint.clone(),
            key: canonical_resource(endpoint),
            config,
            store,
            agent,
            fetcher,
            state: Mutex::new(State::default()),
            renewing: tokio::sync::Mutex::new(()),
            interactive: tokio::sync::watch::Sender::new(Interactive::default()),
            nonces: Nonces::default(),
        }))
    }

    /// Whether an authorization is waiting for the user (at the authorization server's
    /// page): a host gives the person the time they need instead of its startup timeout.
    pub fn authorizing(&self) -> bool {
        self.interactive.borrow().waiting > 0
    }

    /// How many authorizations that sent the user to the authorization server have ended
    /// (granted or not), to learn whether one happened meanwhile.
    pub fn user_authorizations(&self) -> u64 {
        self.interactive.borrow().ended
    }

    /// Returns once no authorization waits for the user.
    pub async fn user_done(&self) {
        let mut watch = self.interactive.subscribe();
        let _ = watch.wait_for(|i| i.waiting == 0).await;
    }

    /// The origin the token may be sent to: the MCP endpoint's.
    pub fn origin(&self) -> String {
        origin_of(&self.endpoint)
    }

    /// The token to send now, refreshed first when it is about to expire; `None` before
    /// authorization (the server's `401` then starts it).
    pub async fn access_token(&self) -> Option<String> {
        let current = self.current()?;
        if !current.tokens.expires_within(REFRESH_MARGIN) {
            return Some(current.tokens.access_token);
        }
        let _guard = self.renewing.lock().await;
        let now = self.current()?;
        if now.tokens != current.tokens {
            return Some(now.tokens.access_token);
        }
        match self.refresh(&Challenge::default()).await {
            Ok(tokens) => Some(tokens.access_token),
            Err(e) => {
                tracing::info!(error = %e, "the token expired and could not be refreshed");
                self.forget_tokens();
                None
            }
        }
    }

    /// What to put on a `method` request to `url` of the resource: `Authorization:
    /// Bearer`, or for a DPoP-bound token `Authorization: DPoP` and a fresh proof (with the
    /// resource's latest nonce); `None` before authorization.
    pub async fn credentials_for(&self, method: &str, url: &Url) -> Option<Presented> {
        let token = self.access_token().await?;
        let current = self.current()?;
        if current.tokens.access_token != token || !current.tokens.dpop {
            return Some(Presented {
                authorization: format!("Bearer {token}"),
                proof: None,
                token,
            });
        }
        let proof = self
            .dpop_key(&current.issuer)
            .and_then(|key| key.proof(method, url, Some(&token), self.nonces.get(url).as_deref()));
        match proof {
            Ok(proof) => Some(Presented {
                authorization: format!("DPoP {token}"),
                proof: Some(proof),
                token,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "no DPoP proof could be made; the token is not sent");
                None
            }
        }
    }

    /// Keeps the `DPoP-Nonce` a response from `url` carries (RFC 9449 §9: a server may
    /// give a new one with any answer).
    pub fn observe(&self, url: &Url, headers: &reqwest::header::HeaderMap) {
        self.nonces.observe(url, headers);
    }

    /// Handles a `401` or `403` answered to a request sent with `sent` (the token, if any):
    /// after `Ok`, send the request again. A `403` other than `insufficient_scope` is
    /// refused. A `401` asking for a DPoP nonce is answered by sending again with the one
    /// [`observe`](Self::observe) kept.
    ///
    /// The renewal runs in a task of its own: when the request that met the challenge is
    /// given up (its timeout, a host reconnecting), a person's login in progress goes on and
    /// its tokens are kept for the next request, rather than being cut off with a dead
    /// redirect listener and started again.
    pub async fn challenged(
        self: &Arc<Self>,
        status: StatusCode,
        www_authenticate: Option<&str>,
        sent: Option<&str>,
    ) -> Result<(), AuthError> {
        let challenge = www_authenticate.map(Challenge::parse).unwrap_or_default();
        if status == StatusCode::UNAUTHORIZED
            && challenge.error.as_deref() == Some(dpop::USE_NONCE)
            && self.nonces.get(&self.endpoint).is_some()
            && self.current().is_some_and(|c| c.tokens.dpop)
        {
            return Ok(());
        }
        if status == StatusCode::FORBIDDEN
            && challenge.error.as_deref() != Some("insufficient_scope")
        {
            return Err(AuthError::Forbidden {
                error: challenge.error,
                description: challenge.error_description,
            });
        }
        let this = Arc::clone(self);
        let sent = sent.map(str::to_owned);
        tokio::spawn(async move { this.renew(status, &challenge, sent.as_deref()).await })
            .await
            .map_err(|e| AuthError::Interrupted(e.to_string()))?
    }

    /// What [`challenged`](Self::challenged) runs: refresh, else authorize, unless another
    /// request renewed the token meanwhile.
    async fn renew(
        &self,
        status: StatusCode,
        challenge: &Challenge,
        sent: Option<&str>,
    ) -> Result<(), AuthError> {
        let _guard = self.renewing.lock().await;
        let current = self.current().map(|c| c.tokens);
        if current.as_ref().map(|t| t.access_token.as_str()) != sent {
            // Another request renewed the token meanwhile.
            return Ok(());
        }
        if status == StatusCode::UNAUTHORIZED
            && current.as_ref().is_some_and(|t| t.refresh_token.is_some())
        {
            match self.refresh(challenge).await {
                Ok(_) => return Ok(()),
                Err(e) => tracing::info!(error = %e, "refresh refused; authorizing again"),
            }
        }
        self.authorize(challenge, status == StatusCode::FORBIDDEN)
            .await
            .map(|_| ())
    }

    /// Runs the authorization flow now, without waiting for a challenge (`junction auth
    /// login`).
    pub async fn login(&self) -> Result<(), AuthError> {
        let _guard = self.renewing.lock().await;
        self.authorize(&Challenge::default(), false)
            .await
            .map(|_| ())
    }

    /// Forgets this resource's tokens (its clients stay registered).
    pub fn logout(&self) -> Result<bool, AuthError> {
        let mut removed = false;
        let key = self.key.clone();
        self.store
            .update(&mut |c| removed = c.tokens.remove(&key).is_some())?;
        let mut state = lock(&self.state);
        state.tokens = None;
        state.loaded = true;
        Ok(removed)
    }

    /// What is stored for this resource.
    pub fn status(&self) -> Option<TokenStatus> {
        self.current().map(|c| TokenStatus {
            issuer: c.issuer,
            scope: c.tokens.scope.clone(),
            expires_at: c.tokens.expires_at,
            refreshable: c.tokens.refresh_token.is_some(),
        })
    }

    /// The stored tokens, read from the store the first time.
    fn current(&self) -> Option<ResourceTokens> {
        let mut state = lock(&self.state);
        if !state.loaded {
            state.loaded = true;
            match self.store.load() {
                Ok(c) => state.tokens = c.tokens.get(&self.key).cloned(),
                Err(e) => tracing::warn!(error = %e, "stored credentials could not be read"),
            }
        }
        state.tokens.clone()
    }

    fn forget_tokens(&self) {
        let key = self.key.clone();
        if let Err(e) = self.store.update(&mut |c| {
            c.tokens.remove(&key);
        }) {
            tracing::warn!(error = %e, "stored credentials could not be updated");
        }
        lock(&self.state).tokens = None;
    }

    fn keep_tokens(&self, issuer: &str, tokens: Tokens) -> Result<Tokens, AuthError> {
        let record = ResourceTokens {
            issuer: issuer.to_owned(),
            tokens: tokens.clone(),
        };
        let key = self.key.clone();
        let stored = record.clone();
        self.store.update(&mut |c| {
            c.tokens.insert(key.clone(), stored.clone());
        })?;
        let mut state = lock(&self.state);
        state.tokens = Some(record);
        state.loaded = true;
        Ok(tokens)
    }

    async fn refresh(&self, challenge: &Challenge) -> Result<Tokens, AuthError> {
        let current = self.current().ok_or(AuthError::NotAuthorized)?;
        let found = self.discovered(challenge).await?;
        if found.issuer != current.issuer {
            return Err(AuthError::IssuerChanged {
                stored: current.issuer,
                now: found.issuer,
            });
        }
        let client = self.known_client(&found)?.ok_or(AuthError::NoClient {
            issuer: found.issuer.clone(),
        })?;
        let key = if current.tokens.dpop || dpop::supported(&found.server) {
            Some(self.dpop_key(&found.issuer)?)
        } else {
            None
        };
        let fresh = token::refresh(
            &self.fetcher,
            &found.server,
            &client,
            &current.tokens,
            &found.resource,
            self.binding(key.as_ref()),
        )
        .await?;
        self.keep_tokens(&found.issuer, fresh)
    }

    /// Discovery, once per process unless a challenge names other metadata.
    async fn discovered(&self, challenge: &Challenge) -> Result<Discovered, AuthError> {
        if challenge.resource_metadata.is_none() {
            if let Some(found) = lock(&self.state).discovered.clone() {
                return Ok(found);
            }
        }
        let found = self.discover(challenge).await?;
        let mut state = lock(&self.state);
        if state
            .tokens
            .as_ref()
            .is_some_and(|t| t.issuer != found.issuer)
        {
            tracing::info!(issuer = %found.issuer, "the resource names another authorization server; its old tokens are dropped");
            state.tokens = None;
            state.client = None;
        }
        state.discovered = Some(found.clone());
        Ok(found)
    }

    async fn discover(&self, challenge: &Challenge) -> Result<Discovered, AuthError> {
        let resource_metadata = match &challenge.resource_metadata {
            Some(url) => {
                let url = secure_url("resource metadata URL", url)?;
                match self
                    .fetcher
                    .probe::<ProtectedResourceMetadata>(&url)
                    .await?
                {
                    Probe::Found(m) => Some(m),
                    Probe::Absent(status) => {
                        return Err(AuthError::Metadata {
                            url: url.to_string(),
                            reason: format!("HTTP {status}"),
                        })
                    }
                }
            }
            None => {
                let mut found = None;
                for url in protected_resource_urls(&self.endpoint) {
                    if let Probe::Found(m) = self.fetcher.probe(&url).await? {
                        found = Some(m);
                        break;
                    }
                }
                found
            }
        };
        let Some(prm) = resource_metadata else {
            return self.discover_legacy().await;
        };
        if !resource_matches(&prm.resource, &self.endpoint) {
            return Err(AuthError::ResourceMismatch {
                resource: prm.resource,
                endpoint: self.endpoint.to_string(),
            });
        }
        let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| {
            AuthError::NoAuthorizationServer {
                resource: prm.resource.clone(),
            }
        })?;
        let server = authorization_server(&self.fetcher, &issuer).await?;
        Ok(Discovered {
            resource: prm.resource,
            issuer,
            server,
            scopes_supported: prm.scopes_supported,
            legacy: false,
        })
    }

    /// 2025-03-26: metadata at the MCP server's origin, else the default endpoints.
    async fn discover_legacy(&self) -> Result<Discovered, AuthError> {
        let origin = origin_of(&self.endpoint);
        let url = Url::parse(&format!("{origin}/.well-known/oauth-authorization-server")).map_err(
            |e| AuthError::Metadata {
                url: origin.clone(),
                reason: e.to_string(),
            },
        )?;
        let server = match self
            .fetcher
            .probe::<AuthorizationServerMetadata>(&url)
            .await?
        {
            Probe::Found(m) => m,
            Probe::Absent(_) => AuthorizationServerMetadata::default_endpoints(&self.endpoint),
        };
        Ok(Discovered {
            resource: self.key.clone(),
            issuer: server.issuer.clone(),
            server,
            scopes_supported: None,
            legacy: true,
        })
    }

    /// A client that needs no registration now: pre-registered, metadata document, stored.
    fn known_client(&self, found: &Discovered) -> Result<Option<RegisteredClient>, AuthError> {
        if let Some(pre) = &self.config.pre_registered {
            if let Some(configured) = &pre.issuer {
                if *configured != found.issuer {
                    return Err(AuthError::ClientIssuerMismatch {
                        configured: configured.clone(),
                        issuer: found.issuer.clone(),
                    });
                }
            }
            return Ok(Some(pre.client.clone()));
        }
        if let (Some(url), Some(true)) = (
            &self.config.client_metadata_url,
            found.server.client_id_metadata_document_supported,
        ) {
            return Ok(Some(metadata_document_client(url)));
        }
        if let Some(client) = lock(&self.state).client.clone() {
            return Ok(Some(client));
        }
        Ok(self.store.load()?.clients.get(&found.issuer).cloned())
    }

    /// The DPoP key of `issuer`: the one in use, else the stored one, else a new one
    /// (stored, so that tokens bound to it stay usable in the next run).
    fn dpop_key(&self, issuer: &str) -> Result<DpopKey, AuthError> {
        if let Some((known, key)) = &lock(&self.state).dpop_key {
            if known == issuer {
                return Ok(key.clone());
            }
        }
        let key = match self.store.load()?.dpop_keys.get(issuer) {
            Some(key) => key.clone(),
            None => {
                let key = DpopKey::generate()?;
                let stored = key.clone();
                self.store.update(&mut |c| {
                    c.dpop_keys.insert(issuer.to_owned(), stored.clone());
                })?;
                key
            }
        };
        lock(&self.state).dpop_key = Some((issuer.to_owned(), key.clone()));
        Ok(key)
    }

    /// The key to bind the tokens of `found` to, when its authorization server binds them.
    fn dpop_for(&self, found: &Discovered) -> Result<Option<DpopKey>, AuthError> {
        if dpop::supported(&found.server) {
            self.dpop_key(&found.issuer).map(Some)
        } else {
            Ok(None)
        }
    }

    fn binding<'a>(&'a self, key: Option<&'a DpopKey>) -> Option<token::Binding<'a>> {
        key.map(|key| token::Binding {
            key,
            nonces: &self.nonces,
        })
    }

    async fn authorize(&self, challenge: &Challenge, step_up: bool) -> Result<Tokens, AuthError> {
        let found = self.discovered(challenge).await?;
        let key = self.dpop_for(&found)?;
        let dpop = self.binding(key.as_ref());
        if let Some(access) = self
            .config
            .cross_app
            .as_ref()
            .filter(|_| cross_app::accepts_jwt_bearer(&found.server))
        {
            let client = match (&self.config.pre_registered, self.known_client(&found)?) {
                (Some(_), Some(client)) => client,
                _ => {
                    return Err(AuthError::CrossAppClient {
                        issuer: found.issuer,
                    })
                }
            };
            let scope = self.select_scope(challenge, &found, step_up);
            let grant = cross_app::exchange(
                &self.fetcher,
                access,
                &found.issuer,
                &found.resource,
                scope.as_deref(),
            )
            .await?;
            let tokens = cross_app::jwt_bearer(
                &self.fetcher,
                &found.server,
                &client,
                grant,
                &found.resource,
                scope.as_deref(),
                dpop,
            )
            .await?;
            return self.keep_tokens(&found.issuer, tokens);
        }
        if let Some(workload) = self
            .config
            .workload
            .as_ref()
            .filter(|_| cross_app::accepts_jwt_bearer(&found.server))
        {
            let assertion = workload.token.read()?;
            let client = match self.known_client(&found)? {
                Some(client) if self.config.pre_registered.is_some() => client,
                _ => RegisteredClient {
                    client_id: workload.client_id.clone().unwrap_or_default(),
                    token_endpoint_auth_method: Some("none".to_owned()),
                    ..RegisteredClient::default()
                },
            };
            let scope = self.select_scope(challenge, &found, step_up);
            let tokens = cross_app::jwt_bearer(
                &self.fetcher,
                &found.server,
                &client,
                assertion,
                &found.resource,
                scope.as_deref(),
                dpop,
            )
            .await?;
            return self.keep_tokens(&found.issuer, tokens);
        }
        if let Some(client) = self.machine_client(&found)? {
            let scope = self.select_scope(challenge, &found, step_up);
            let tokens = token::client_credentials(
                &self.fetcher,
                &found.server,
                &client,
                &found.resource,
                scope.as_deref(),
                dpop,
            )
            .await?;
            return self.keep_tokens(&found.issuer, tokens);
        }
        // From here on the flow is the person's: registering, then their browser.
        let waiting = Waiting::start(&self.interactive);
        if !found.server.supports_s256() {
            return Err(AuthError::NoPkce {
                issuer: found.issuer,
            });
        }
        let authorization_endpoint = secure_url(
            "authorization endpoint",
            &found.server.authorization_endpoint,
        )?;
        let pending = self.agent.prepare().await?;
        let redirect_uri = pending.redirect_uri();
        let client = match self.known_client(&found)? {
            Some(c) if c.redirect_uris.is_empty() || c.redirect_uris.contains(&redirect_uri) => c,
            _ => {
                let client = register(
                    &self.fetcher,
                    &found.server,
                    &self.config.client_name,
                    &redirect_uri,
                )
                .await?;
                let issuer = found.issuer.clone();
                let stored = client.clone();
                self.store.update(&mut |c| {
                    c.clients.insert(issuer.clone(), stored.clone());
                })?;
                client
            }
        };
        lock(&self.state).client = Some(client.clone());

        let scope = self.select_scope(challenge, &found, step_up);
        let pkce = Pkce::new()?;
        let state_value = random_token()?;
        let mut url = authorization_endpoint;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state_value)
                .append_pair("resource", &found.resource);
            if let Some(scope) = &scope {
                query.append_pair("scope", scope);
            }
        }
        let callback = pending.complete(url).await?;
        drop(waiting);
        let answer = callback_parameters(&callback);
        check_issuer(&found, answer.iss.as_deref())?;
        if let Some(error) = answer.error {
            return Err(AuthError::Denied {
                error,
                description: answer.error_description,
            });
        }
        if answer.state.as_deref() != Some(state_value.as_str()) {
            return Err(AuthError::State);
        }
        let code = answer.code.ok_or(AuthError::NoCode)?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", pkce.verifier),
            ("resource", found.resource.clone()),
        ];
        let tokens = token::request(
            &self.fetcher,
            &found.server,
            &client,
            form,
            scope.as_deref(),
            dpop,
        )
        .await?;
        self.keep_tokens(&found.issuer, tokens)
    }

    /// A pre-registered confidential client at an authorization server that grants
    /// `client_credentials` but not `authorization_code`: it acts for itself, with no user.
    fn machine_client(&self, found: &Discovered) -> Result<Option<RegisteredClient>, AuthError> {
        let grants = found
            .server
            .grant_types_supported
            .as_deref()
            .unwrap_or_default();
        let machine = grants.iter().any(|g| g == "client_credentials")
            && !grants.iter().any(|g| g == "authorization_code");
        match self.known_client(found)? {
            Some(c)
                if machine
                    && self.config.pre_registered.is_some()
                    && (c.client_secret.is_some() || c.private_key.is_some()) =>
            {
                Ok(Some(c))
            }
            _ => Ok(None),
        }
    }

    /// The scope parameter (see the module docs, step 5).
    fn select_scope(
        &self,
        challenge: &Challenge,
        found: &Discovered,
        step_up: bool,
    ) -> Option<String> {
        let mut state = lock(&self.state);
        let challenged = challenge.scopes();
        let mut scopes: BTreeSet<String> = if !challenged.is_empty() {
            let mut set: BTreeSet<String> = challenged.into_iter().map(str::to_owned).collect();
            if step_up {
                set.extend(state.requested.iter().cloned());
            }
            set
        } else if let Some(s) = found.scopes_supported.as_ref().filter(|s| !s.is_empty()) {
            s.iter().cloned().collect()
        } else if let Some(s) = &self.config.scopes {
            s.iter().cloned().collect()
        } else {
            BTreeSet::new()
        };
        if !scopes.is_empty()
            && found
                .server
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
        {
            scopes.insert("offline_access".to_owned());
        }
        state.requested.extend(scopes.iter().cloned());
        (!scopes.is_empty()).then(|| scopes.into_iter().collect::<Vec<_>>().join(" "))
    }
}

/// RFC 9207 as the specification applies it: a present `iss` must equal the recorded issuer
/// exactly (no normalisation); an absent one is refused when the server promised it.
fn check_issuer(found: &Discovered, iss: Option<&str>) -> Result<(), AuthError> {
    let expected = &found.server.issuer;
    match iss {
        Some(iss) if iss != expected => Err(AuthError::IssuerResponse {
            expected: expected.clone(),
            found: Some(iss.to_owned()),
        }),
        None if !found.legacy
            && found.server.authorization_response_iss_parameter_supported == Some(true) =>
        {
            Err(AuthError::IssuerResponse {
                expected: expected.clone(),
                found: None,
            })
        }
        _ => Ok(()),
    }
}

/// Whether resource metadata naming `resource` may describe `endpoint`: same origin, and
/// `resource`'s path is the endpoint's or one of its parents.
fn resource_matches(resource: &str, endpoint: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if origin_of(&resource) != origin_of(endpoint) || !is_secure(&resource) && is_secure(endpoint) {
        return false;
    }
    let parent = resource.path().trim_end_matches('/');
    let path = endpoint.path().trim_end_matches('/');
    path == parent || path.starts_with(&format!("{parent}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn canonical_resources_drop_fragments_and_a_root_slash() {
        assert_eq!(
            canonical_resource(&url("HTTPS://Mcp.Example.com/")),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical_resource(&url("https://mcp.example.com:8443/mcp#x")),
            "https://mcp.example.com:8443/mcp"
        );
    }

    #[test]
    fn resource_metadata_must_describe_the_endpoint() {
        let endpoint = url("http://localhost:3000/mcp");
        assert!(resource_matches("http://localhost:3000/mcp", &endpoint));
        assert!(resource_matches("http://localhost:3000", &endpoint));
        assert!(resource_matches("http://localhost:3000/", &endpoint));
        assert!(!resource_matches("https://evil.example.com/mcp", &endpoint));
        assert!(!resource_matches("http://localhost:3000/mcp2", &endpoint));
        assert!(!resource_matches("http://localhost:3001/mcp", &endpoint));
        assert!(!resource_matches("not a url", &endpoint));
    }

    fn discovered(iss_supported: Option<bool>) -> Discovered {
        let mut server = AuthorizationServerMetadata::default_endpoints(&url("https://as.example"));
        server.authorization_response_iss_parameter_supported = iss_supported;
        Discovered {
            resource: "https://mcp.example/mcp".into(),
            issuer: server.issuer.clone(),
            server,
            scopes_supported: None,
            legacy: false,
        }
    }

    #[test]
    fn iss_is_compared_exactly_and_required_when_promised() {
        let promised = discovered(Some(true));
        assert!(check_issuer(&promised, Some("https://as.example")).is_ok());
        assert!(check_issuer(&promised, None).is_err());
        // No normalisation: a trailing slash or another case is another issuer.
        assert!(check_issuer(&promised, Some("https://as.example/")).is_err());
        assert!(check_issuer(&promised, Some("HTTPS://as.example")).is_err());
        let silent = discovered(None);
        assert!(check_issuer(&silent, None).is_ok());
        assert!(check_issuer(&silent, Some("https://other.example")).is_err());
    }
}
