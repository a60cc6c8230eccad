//! [`BearerAuth`]: an [`HttpServer`](super::HttpServer) as an OAuth 2.1 resource server.
//!
//! Every request to the MCP endpoints must carry `Authorization: Bearer <token>`, which a
//! [`TokenVerifier`] checks:
//!
//! - no token, or one the verifier refuses: `401` with `WWW-Authenticate: Bearer
//!   resource_metadata="…", scope="…"` (and `error="invalid_token"` for a refused one);
//! - a valid token without the required scopes: `403` with `error="insufficient_scope"`
//!   naming them;
//! - a token in the query string (`?access_token=`): `400`, whatever else the request has;
//! - a session id created by another subject: `403` (a session belongs to whoever opened it);
//! - the verifier unable to check (its authorization server down): `503`.
//!
//! The protected resource metadata (RFC 9728) is served, without authorization, at
//! `/.well-known/oauth-protected-resource<path of the resource>`. While a request is served
//! its caller is [`Identity::current`]; a server session records the identity that opened it
//! ([`Context::identity`](crate::server::Context::identity)).
//!
//! It can protect any axum router with [`BearerAuth::protect`], not only Junction's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use reqwest::Url;

use crate::auth::canonical_resource;
use crate::auth::metadata::{origin_of, ProtectedResourceMetadata, PROTECTED_RESOURCE_WELL_KNOWN};
use crate::auth::resource::{Identity, TokenVerifier, VerifyError};
use crate::sync::lock;
use crate::transport::http::SESSION_ID_HEADER;

/// How many session owners are remembered; the oldest is forgotten beyond that (its session
/// then accepts no token at all, see [`BearerAuth`]).
const MAX_SESSIONS: usize = 100_000;

/// Bearer token checks in front of an MCP endpoint (see the module docs).
#[derive(Clone)]
pub struct BearerAuth {
    inner: Arc<Inner>,
}

struct Inner {
    verifier: Arc<dyn TokenVerifier>,
    metadata: ProtectedResourceMetadata,
    metadata_path: String,
    metadata_url: String,
    required: Vec<String>,
    owners: Mutex<Owners>,
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
            .field("required", &self.inner.required)
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
                },
                metadata_url: format!("{}{metadata_path}", origin_of(resource)),
                metadata_path,
                required: Vec::new(),
                owners: Mutex::new(Owners::default()),
            }),
        }
    }

    /// Scopes every request needs (also advertised as `scopes_supported`).
    pub fn required_scopes<S: Into<String>>(self, scopes: impl IntoIterator<Item = S>) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            verifier: shared.verifier.clone(),
            metadata: shared.metadata.clone(),
            metadata_path: shared.metadata_path.clone(),
            metadata_url: shared.metadata_url.clone(),
            required: shared.required.clone(),
            owners: Mutex::new(Owners::default()),
        });
        inner.required = scopes.into_iter().map(Into::into).collect();
        inner.metadata.scopes_supported =
            (!inner.required.is_empty()).then(|| inner.required.clone());
        BearerAuth {
            inner: Arc::new(inner),
        }
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
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let Some(token) = token else {
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
    if !identity.has_scopes(&inner.required) {
        return refusal(
            &inner,
            StatusCode::FORBIDDEN,
            Some("insufficient_scope"),
            "the token lacks the required scope",
        );
    }
    let session = request
        .headers()
        .get(SESSION_ID_HEADER)
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
            .get(SESSION_ID_HEADER)
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

/// The token of an `Authorization: Bearer` value (the scheme is case-insensitive).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn token_in_query(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes()).any(|(k, _)| k == "access_token")
    })
}

/// A refusal with its `WWW-Authenticate` challenge and an OAuth error body.
fn refusal(inner: &Inner, status: StatusCode, error: Option<&str>, description: &str) -> Response {
    let mut challenge = String::from("Bearer");
    let mut params = Vec::new();
    if let Some(error) = error {
        params.push(format!("error=\"{error}\""));
        params.push(format!("error_description=\"{description}\""));
    }
    params.push(format!("resource_metadata=\"{}\"", inner.metadata_url));
    if !inner.required.is_empty() {
        params.push(format!("scope=\"{}\"", inner.required.join(" ")));
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
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert!(token_in_query(Some("a=1&access_token=x")));
        assert!(!token_in_query(Some("a=1")));
        assert!(!token_in_query(None));
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
