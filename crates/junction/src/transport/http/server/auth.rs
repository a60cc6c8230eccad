//! [`BearerAuth`]: an [`HttpServer`](super::HttpServer) as an OAuth 2.1 resource server.
//!
//! Every request to the MCP endpoints must carry `Authorization: Bearer <token>`, which a
//! [`TokenVerifier`] checks:
//!
//! - no token, or one the verifier refuses: `401` with `WWW-Authenticate: Bearer
//!   resource_metadata="…", scope="…"` (and `error="invalid_token"` for a refused one);
//! - a valid token without the required scopes: `403` with `error="insufficient_scope"`
//!   and `scope="…"` naming every scope the request needs, so that the client can ask for
//!   them (step-up authorization);
//! - a token in the query string (`?access_token=`): `400`, whatever else the request has;
//! - a session id created by another subject: `403` (a session belongs to whoever opened it);
//! - the verifier unable to check (its authorization server down): `503`.
//!
//! A token bound to a DPoP key (`cnf.jkt`, RFC 9449) is accepted only as `Authorization:
//! DPoP <token>` with one proof in the `DPoP` header, signed by that key, for this request
//! (`htm`, `htu`), recent (`iat`), for this token (`ath`) and never seen before (`jti`);
//! otherwise `401` with `WWW-Authenticate: DPoP error="invalid_dpop_proof"` (or
//! `invalid_token` for a bound token sent as a bearer token).
//!
//! - [`BearerAuth::require_dpop`]: only DPoP-bound tokens are accepted (an unbound one is
//!   refused with `invalid_token`), the challenges are `DPoP algs="…"` ones, and the
//!   protected resource metadata says so (`dpop_bound_access_tokens_required`,
//!   `dpop_signing_alg_values_supported`);
//! - [`BearerAuth::dpop_nonces`]: proofs must also carry a nonce this server issued
//!   (RFC 9449 §9): one without it, or with an old one, is answered `401` with
//!   `WWW-Authenticate: DPoP error="use_dpop_nonce"` and the nonce to use in the
//!   `DPoP-Nonce` header, which every answer to a DPoP request carries. Nonces are kept in
//!   the process (see [`ServerNonces`](dpop::ServerNonces)).
//!
//! The protected resource metadata (RFC 9728) is served, without authorization, at
//! `/.well-known/oauth-protected-resource<path of the resource>`. While a request is served
//! its caller is [`Identity::current`]; a server session records the identity that opened it
//! ([`Context::identity`](crate::server::Context::identity)).
//!
//! Which scopes a request needs:
//!
//! - [`BearerAuth::required_scopes`]: every request (named in the `401` challenge, so the
//!   client asks for them at its first authorization);
//! - [`BearerAuth::method_scopes`]: the requests of one JSON-RPC method (`tools/call`,
//!   `resources/read`, ...);
//! - [`BearerAuth::tool_scopes`]: the `tools/call` requests of one tool.
//!
//! For the last two the body of a `POST` is read (at most [`BearerAuth::max_body`] bytes)
//! and every message in it is looked at; a body that is not JSON is left for the endpoint
//! to refuse. The protected resource metadata lists every scope named, as
//! `scopes_supported`.
//!
//! ```
//! use std::sync::Arc;
//! use junction::auth::resource::JwtVerifier;
//! use junction::transport::http::server::BearerAuth;
//! # fn protect(verifier: JwtVerifier) -> Result<(), Box<dyn std::error::Error>> {
//! let resource = junction::auth::Url::parse("https://mcp.example.com/mcp")?;
//! let auth = BearerAuth::new(&resource, vec!["https://auth.example.com".into()], Arc::new(verifier))
//!     .required_scopes(["mcp"])
//!     .method_scopes("resources/read", ["files:read"])
//!     .tool_scopes("delete_book", ["books:write"]);
//! # Ok(()) }
//! ```
//!
//! It can protect any axum router with [`BearerAuth::protect`], not only Junction's.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use url::Url;

use crate::auth::metadata::{origin_of, ProtectedResourceMetadata, PROTECTED_RESOURCE_WELL_KNOWN};
use crate::auth::resource::{Identity, TokenVerifier, VerifyError};
use crate::auth::{canonical_resource, dpop};
use crate::sync::lock;
use crate::transport::http::names;
use crate::transport::DEFAULT_MAX_FRAME;

/// How many session owners are remembered; the oldest is forgotten beyond that (its session
/// then accepts no token at all, see [`BearerAuth`]).
const MAX_SESSIONS: usize = 100_000;

/// Bearer token checks in front of an MCP endpoint (see the module docs).
#[derive(Clone)]
pub struct BearerAuth {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    verifier: Arc<dyn TokenVerifier>,
    metadata: ProtectedResourceMetadata,
    metadata_path: String,
    metadata_url: String,
    scopes: ScopeRules,
    max_body: usize,
    owners: Arc<Mutex<Owners>>,
    /// The `jti` of the DPoP proofs accepted within the proof window.
    proofs: Arc<Mutex<SeenProofs>>,
    /// Whether only DPoP-bound tokens are accepted.
    dpop_required: bool,
    /// The nonces DPoP proofs must carry, when this server issues them.
    nonces: Option<Arc<dpop::ServerNonces>>,
}

/// How many DPoP proof ids are remembered; beyond that the oldest are forgotten first
/// (proofs older than the window are refused for their `iat` anyway).
const MAX_PROOFS: usize = 100_000;

/// The DPoP proofs seen, to refuse one presented twice.
#[derive(Debug, Default)]
struct SeenProofs {
    by_jti: HashMap<String, u64>,
    order: VecDeque<String>,
}

impl SeenProofs {
    /// Records `jti` (made at `iat`); false when it was seen already.
    fn first_time(&mut self, jti: &str, iat: u64, now: u64) -> bool {
        while let Some(old) = self.order.front() {
            let expired = self
                .by_jti
                .get(old)
                .is_none_or(|at| at.saturating_add(dpop::PROOF_WINDOW) < now);
            if !expired && self.order.len() < MAX_PROOFS {
                break;
            }
            if let Some(old) = self.order.pop_front() {
                self.by_jti.remove(&old);
            }
        }
        if self.by_jti.contains_key(jti) {
            return false;
        }
        self.by_jti.insert(jti.to_owned(), iat);
        self.order.push_back(jti.to_owned());
        true
    }
}

/// Which scopes which requests need.
#[derive(Debug, Clone, Default)]
struct ScopeRules {
    /// Every request.
    all: Vec<String>,
    /// By JSON-RPC method.
    methods: BTreeMap<String, Vec<String>>,
    /// `tools/call` by tool name.
    tools: BTreeMap<String, Vec<String>>,
}

impl ScopeRules {
    /// Whether the body must be read to know what a request needs.
    fn per_message(&self) -> bool {
        !self.methods.is_empty() || !self.tools.is_empty()
    }

    /// Every scope named, for `scopes_supported`.
    fn named(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        self.all
            .iter()
            .chain(self.methods.values().flatten())
            .chain(self.tools.values().flatten())
            .filter(|s| seen.insert(s.as_str()))
            .cloned()
            .collect()
    }

    /// The scopes a request whose body is `body` needs: the ones of every request, then
    /// those of each message's method and tool, in that order, without repeats.
    fn needed(&self, body: Option<&[u8]>) -> Vec<String> {
        let mut needed = self.all.clone();
        let mut add = |scopes: Option<&Vec<String>>| {
            for scope in scopes.into_iter().flatten() {
                if !needed.contains(scope) {
                    needed.push(scope.clone());
                }
            }
        };
        let messages = match body.and_then(|b| serde_json::from_slice(b).ok()) {
            Some(serde_json::Value::Array(items)) => items,
            Some(one) => vec![one],
            None => Vec::new(),
        };
        for message in &messages {
            let Some(method) = message.get("method").and_then(|m| m.as_str()) else {
                continue;
            };
            add(self.methods.get(method));
            if method == "tools/call" {
                let tool = message.pointer("/params/name").and_then(|n| n.as_str());
                add(tool.and_then(|t| self.tools.get(t)));
            }
        }
        needed
    }
}

#[derive(Default)]
struct Owners {
    by_session: HashMap<String, String>,
    order: VecDeque<String>,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.inner.metadata.resource)
            .field("scopes", &self.inner.scopes)
            .finish_non_exhaustive()
    }
}

impl BearerAuth {
    /// Protects the resource at `resource` (its public URL, the tokens' audience), whose
    /// tokens come from `authorization_servers` and are checked by `verifier`.
    pub fn new(
        resource: &Url,
        authorization_servers: Vec<String>,
        verifier: Arc<dyn TokenVerifier>,
    ) -> Self {
        let path = resource.path().trim_end_matches('/');
        let metadata_path = format!("{PROTECTED_RESOURCE_WELL_KNOWN}{path}");
        BearerAuth {
            inner: Arc::new(Inner {
                verifier,
                metadata: ProtectedResourceMetadata {
                    resource: canonical_resource(resource),
                    authorization_servers,
                    scopes_supported: None,
                    bearer_methods_supported: Some(vec!["header".to_owned()]),
                    resource_name: None,
                    dpop_signing_alg_values_supported: None,
                    dpop_bound_access_tokens_required: None,
                },
                metadata_url: format!("{}{metadata_path}", origin_of(resource)),
                metadata_path,
                scopes: ScopeRules::default(),
                max_body: DEFAULT_MAX_FRAME,
                owners: Arc::new(Mutex::new(Owners::default())),
                proofs: Arc::new(Mutex::new(SeenProofs::default())),
                dpop_required: false,
                nonces: None,
            }),
        }
    }

    /// Scopes every request needs, named in the `401` challenge.
    pub fn required_scopes<S: Into<String>>(self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.rules(|rules| rules.all = scopes.into_iter().map(Into::into).collect())
    }

    /// Scopes the requests of JSON-RPC `method` need (besides those of every request).
    pub fn method_scopes<S: Into<String>>(
        self,
        method: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.rules(|rules| {
            rules.methods.insert(method.into(), scopes);
        })
    }

    /// Scopes a `tools/call` of the tool `name` needs (besides those of every request and
    /// of `tools/call`).
    pub fn tool_scopes<S: Into<String>>(
        self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.rules(|rules| {
            rules.tools.insert(name.into(), scopes);
        })
    }

    /// The largest body read to find the methods and tools of a request (default 4 MiB, as
    /// the endpoint's); a larger one is refused with `413`.
    pub fn max_body(mut self, bytes: usize) -> Self {
        Arc::make_mut(&mut self.inner).max_body = bytes;
        self
    }

    /// Accepts only DPoP-bound access tokens (RFC 9449 §7.1), and says so in the protected
    /// resource metadata; a bearer token is refused with `invalid_token`.
    pub fn require_dpop(mut self) -> Self {
        let inner = Arc::make_mut(&mut self.inner);
        inner.dpop_required = true;
        inner.metadata.dpop_bound_access_tokens_required = Some(true);
        inner.metadata.dpop_signing_alg_values_supported = Some(
            dpop::ACCEPTED_ALGORITHMS
                .iter()
                .map(|a| (*a).to_owned())
                .collect(),
        );
        self
    }

    /// Requires DPoP proofs to carry a nonce this server issued (RFC 9449 §9); see the
    /// module docs. Fails only when the OS has no random source for the first nonce.
    pub fn dpop_nonces(mut self) -> Result<Self, crate::auth::AuthError> {
        let nonces = dpop::ServerNonces::new()?;
        Arc::make_mut(&mut self.inner).nonces = Some(Arc::new(nonces));
        Ok(self)
    }

    fn rules(mut self, change: impl FnOnce(&mut ScopeRules)) -> Self {
        let inner = Arc::make_mut(&mut self.inner);
        change(&mut inner.scopes);
        let named = inner.scopes.named();
        inner.metadata.scopes_supported = (!named.is_empty()).then_some(named);
        self
    }

    /// The URL of the protected resource metadata document.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The metadata document served.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.inner.metadata
    }

    /// `router` with every route behind the checks, plus the metadata route (open).
    pub fn protect<S: Clone + Send + Sync + 'static>(
        &self,
        router: axum::Router<S>,
    ) -> axum::Router<S> {
        self.protect_sessions(router, false)
    }

    /// Like [`BearerAuth::protect`]; with `shared` (sessions shared between instances), a
    /// session id opened elsewhere passes on to the endpoint, which checks the subject
    /// against the session's shared record.
    pub(super) fn protect_sessions<S: Clone + Send + Sync + 'static>(
        &self,
        router: axum::Router<S>,
        shared: bool,
    ) -> axum::Router<S> {
        let metadata = self.inner.metadata.clone();
        let document = axum::Router::new().route(
            &self.inner.metadata_path,
            axum::routing::get(move || {
                let metadata = metadata.clone();
                async move { json(StatusCode::OK, &metadata) }
            }),
        );
        router
            .layer(middleware::from_fn_with_state(
                (self.inner.clone(), shared),
                check,
            ))
            .merge(document)
    }
}

async fn check(
    State((inner, shared)): State<(Arc<Inner>, bool)>,
    request: Request,
    next: Next,
) -> Response {
    if token_in_query(request.uri().query()) {
        return refusal(
            &inner,
            StatusCode::BAD_REQUEST,
            Some("invalid_request"),
            "access tokens are not accepted in the query string; use the Authorization header",
        );
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(access_token);
    let Some((scheme, token)) = presented else {
        return refusal(
            &inner,
            StatusCode::UNAUTHORIZED,
            None,
            "a bearer token is required",
        );
    };
    let identity = match inner.verifier.verify(token).await {
        Ok(identity) => identity,
        Err(VerifyError::Invalid(reason)) => {
            tracing::debug!(%reason, "bearer token refused");
            return refusal(
                &inner,
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                &reason,
            );
        }
        Err(VerifyError::Unavailable(reason)) => {
            tracing::warn!(%reason, "bearer token could not be checked");
            let body = serde_json::json!({"error": "temporarily_unavailable", "error_description": "the token could not be checked; try again later"});
            return json(StatusCode::SERVICE_UNAVAILABLE, &body);
        }
    };
    if let Err((error, reason)) = check_binding(&inner, scheme, token, &identity, &request) {
        tracing::debug!(%reason, "DPoP proof refused");
        return dpop_refusal(&inner, error, &reason);
    }
    let mut response = authorized(&inner, shared, identity, request, next).await;
    if scheme == Scheme::Dpop {
        give_nonce(&inner, &mut response);
    }
    response
}

/// The checks after the token and its binding: scopes, the session's owner; then the
/// request itself.
async fn authorized(
    inner: &Inner,
    shared: bool,
    identity: Identity,
    request: Request,
    next: Next,
) -> Response {
    let (request, needed) = match needed_scopes(inner, request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let missing: Vec<&str> = needed
        .iter()
        .filter(|s| !identity.scopes.contains(*s))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        tracing::debug!(subject = %identity.subject, ?missing, "bearer token lacks a scope");
        return challenge(
            inner,
            StatusCode::FORBIDDEN,
            Some("insufficient_scope"),
            &format!("the token lacks the scope {}", missing.join(" ")),
            &needed,
        );
    }
    let session = request
        .headers()
        .get(names::SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &session {
        let owner = lock(&inner.owners).by_session.get(id).cloned();
        let elsewhere = shared && owner.is_none();
        if !elsewhere && owner.as_deref() != Some(identity.subject.as_str()) {
            tracing::warn!(subject = %identity.subject, "a session id was presented by a subject that did not open it");
            let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "this session belongs to another user"}});
            return json(StatusCode::FORBIDDEN, &body);
        }
    }
    let subject = identity.subject.clone();
    let deleting = request.method() == Method::DELETE;
    let response = Identity::scope(identity, next.run(request)).await;
    let mut owners = lock(&inner.owners);
    match (
        &session,
        response
            .headers()
            .get(names::SESSION_ID)
            .and_then(|v| v.to_str().ok()),
    ) {
        (None, Some(created)) => owners.insert(created.to_owned(), subject),
        (Some(id), _) if deleting && response.status().is_success() => owners.remove(id),
        _ => {}
    }
    response
}

impl Owners {
    fn insert(&mut self, session: String, subject: String) {
        if self.by_session.insert(session.clone(), subject).is_none() {
            self.order.push_back(session);
        }
        while self.order.len() > MAX_SESSIONS {
            if let Some(old) = self.order.pop_front() {
                self.by_session.remove(&old);
            }
        }
    }

    fn remove(&mut self, session: &str) {
        if self.by_session.remove(session).is_some() {
            self.order.retain(|s| s != session);
        }
    }
}

/// How an access token was presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

/// The scheme and token of an `Authorization: Bearer` or `DPoP` value (the scheme is
/// case-insensitive).
fn access_token(value: &str) -> Option<(Scheme, &str)> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return None;
    };
    (!token.is_empty()).then_some((scheme, token))
}

/// RFC 9449 §7: a bound token only with the DPoP scheme and a good proof by its key; a
/// DPoP-scheme token only when bound. The error code and reason of a refusal.
fn check_binding(
    inner: &Inner,
    scheme: Scheme,
    token: &str,
    identity: &Identity,
    request: &Request,
) -> Result<(), (&'static str, String)> {
    let bound = identity.key_thumbprint.as_deref();
    let bad_proof = |reason: &str| ("invalid_dpop_proof", reason.to_owned());
    match (scheme, bound) {
        (Scheme::Bearer, None) if inner.dpop_required => {
            return Err((
                "invalid_token",
                "this resource accepts only DPoP-bound tokens; present one with the DPoP scheme and a proof"
                    .to_owned(),
            ))
        }
        (Scheme::Bearer, None) => return Ok(()),
        (Scheme::Bearer, Some(_)) => {
            return Err((
                "invalid_token",
                "the token is bound to a DPoP key; present it with the DPoP scheme and a proof"
                    .to_owned(),
            ))
        }
        (Scheme::Dpop, None) => {
            return Err((
                "invalid_token",
                "the token is not bound to a DPoP key; present it as a bearer token".to_owned(),
            ))
        }
        (Scheme::Dpop, Some(_)) => {}
    }
    let mut proofs = request.headers().get_all(dpop::DPOP_HEADER).iter();
    let (Some(proof), None) = (proofs.next(), proofs.next()) else {
        return Err(bad_proof("exactly one DPoP proof header is required"));
    };
    let proof = proof
        .to_str()
        .map_err(|_| bad_proof("the DPoP proof is not text"))?;
    let mut target = Url::parse(&inner.metadata.resource)
        .map_err(|_| bad_proof("the resource URL is not valid"))?;
    target.set_path(request.uri().path());
    let now = crate::auth::now_seconds();
    let verified = dpop::verify_proof(
        proof,
        request.method().as_str(),
        target.as_str(),
        token,
        now,
    )
    .map_err(|reason| bad_proof(&reason))?;
    if bound != Some(verified.thumbprint.as_str()) {
        return Err(bad_proof(
            "the DPoP proof is signed by another key than the token is bound to",
        ));
    }
    if let Some(nonces) = &inner.nonces {
        if !nonces.accepts(verified.nonce.as_deref()) {
            return Err((
                dpop::USE_NONCE,
                "the resource server requires a nonce it issued in the DPoP proof; use the one in the DPoP-Nonce header".to_owned(),
            ));
        }
    }
    if !lock(&inner.proofs).first_time(&verified.jti, verified.iat, now) {
        return Err(bad_proof(
            "the DPoP proof was presented before (replayed jti)",
        ));
    }
    Ok(())
}

/// A `401` with a DPoP challenge (and the nonce to use, when this server issues them).
fn dpop_refusal(inner: &Inner, error: &str, description: &str) -> Response {
    let challenge = format!(
        "DPoP algs=\"{}\", error=\"{error}\", error_description=\"{description}\", resource_metadata=\"{}\"",
        dpop::ACCEPTED_ALGORITHMS.join(" "),
        inner.metadata_url
    );
    let body = serde_json::json!({"error": error, "error_description": description});
    let mut response = json(StatusCode::UNAUTHORIZED, &body);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    give_nonce(inner, &mut response);
    response
}

/// Names the current DPoP nonce in `response`, when this server issues them.
fn give_nonce(inner: &Inner, response: &mut Response) {
    let Some(nonces) = &inner.nonces else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&nonces.current()) {
        response.headers_mut().insert(dpop::NONCE_HEADER, value);
    }
}

fn token_in_query(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes()).any(|(k, _)| k == "access_token")
    })
}

/// The request (its body read back in when it had to be read) and the scopes it needs.
async fn needed_scopes(
    inner: &Inner,
    request: Request,
) -> Result<(Request, Vec<String>), Response> {
    if !inner.scopes.per_message() || request.method() != Method::POST {
        return Ok((request, inner.scopes.all.clone()));
    }
    let (parts, body) = request.into_parts();
    let bytes = super::guard::read_body(body, inner.max_body)
        .await
        .map_err(IntoResponse::into_response)?;
    let needed = inner.scopes.needed(Some(&bytes));
    Ok((
        Request::from_parts(parts, axum::body::Body::from(bytes)),
        needed,
    ))
}

/// A refusal naming the scopes of every request.
fn refusal(inner: &Inner, status: StatusCode, error: Option<&str>, description: &str) -> Response {
    challenge(inner, status, error, description, &inner.scopes.all)
}

/// A refusal with its `WWW-Authenticate` challenge (naming `scopes`) and an OAuth error body.
fn challenge(
    inner: &Inner,
    status: StatusCode,
    error: Option<&str>,
    description: &str,
    scopes: &[String],
) -> Response {
    // A resource that takes only DPoP-bound tokens challenges with that scheme (RFC 9449
    // §7.1), naming the algorithms of the proofs it accepts.
    let mut params = Vec::new();
    let mut challenge = if inner.dpop_required {
        params.push(format!("algs=\"{}\"", dpop::ACCEPTED_ALGORITHMS.join(" ")));
        String::from("DPoP")
    } else {
        String::from("Bearer")
    };
    if let Some(error) = error {
        params.push(format!("error=\"{error}\""));
        params.push(format!("error_description=\"{description}\""));
    }
    params.push(format!("resource_metadata=\"{}\"", inner.metadata_url));
    if !scopes.is_empty() {
        params.push(format!("scope=\"{}\"", scopes.join(" ")));
    }
    challenge.push(' ');
    challenge.push_str(&params.join(", "));
    let body = serde_json::json!({
        "error": error.unwrap_or("invalid_request"),
        "error_description": description,
    });
    let mut response = json(status, &body);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// A JSON response.
fn json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_values_and_query_tokens_are_recognised() {
        assert_eq!(access_token("Bearer abc"), Some((Scheme::Bearer, "abc")));
        assert_eq!(access_token("dpop abc"), Some((Scheme::Dpop, "abc")));
        assert_eq!(access_token("Basic abc"), None);
        assert_eq!(access_token("bearer  abc "), Some((Scheme::Bearer, "abc")));
        assert_eq!(access_token("Bearer "), None);
        assert!(token_in_query(Some("a=1&access_token=x")));
        assert!(!token_in_query(Some("a=1")));
        assert!(!token_in_query(None));
    }

    #[test]
    fn each_message_adds_the_scopes_of_its_method_and_tool() {
        let rules = ScopeRules {
            all: vec!["mcp".into()],
            methods: BTreeMap::from([
                ("tools/call".to_owned(), vec!["tools".to_owned()]),
                ("resources/read".to_owned(), vec!["read".to_owned()]),
            ]),
            tools: BTreeMap::from([(
                "delete".to_owned(),
                vec!["write".to_owned(), "mcp".to_owned()],
            )]),
        };
        let call = |name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#
            )
        };
        assert_eq!(
            rules.needed(Some(call("delete").as_bytes())),
            ["mcp", "tools", "write"]
        );
        assert_eq!(
            rules.needed(Some(call("search").as_bytes())),
            ["mcp", "tools"]
        );
        assert_eq!(
            rules.needed(Some(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)),
            ["mcp"]
        );
        let batch = format!(
            r#"[{},{{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{{"uri":"x"}}}}]"#,
            call("delete")
        );
        assert_eq!(
            rules.needed(Some(batch.as_bytes())),
            ["mcp", "tools", "write", "read"]
        );
        // Not JSON, or a response: only the scopes of every request.
        assert_eq!(rules.needed(Some(b"{nope")), ["mcp"]);
        assert_eq!(
            rules.needed(Some(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)),
            ["mcp"]
        );
        assert_eq!(rules.named(), ["mcp", "read", "tools", "write"]);
    }

    #[test]
    fn session_owners_are_bounded() {
        let mut owners = Owners::default();
        for i in 0..MAX_SESSIONS + 5 {
            owners.insert(format!("s{i}"), "alice".into());
        }
        assert_eq!(owners.by_session.len(), MAX_SESSIONS);
        assert!(!owners.by_session.contains_key("s0"));
        owners.remove("s10");
        assert!(!owners.by_session.contains_key("s10"));
    }
}
