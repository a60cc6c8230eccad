//! A scriptable authorization server on loopback for the authorization tests: its metadata,
//! a JWKS with an ES256 key, Dynamic Client Registration, an authorization endpoint that
//! redirects at once (misbehaving on request), and a token endpoint issuing JWTs for the
//! requested resource. The attacks on the client need an authorization server that can lie;
//! the real one (oidc-provider) is exercised by the CLI's end-to-end test.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::Uri;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// The issuer's signing key (a test key, P-256).
pub const ISSUER_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRs2U9qdDQzBzk/5C\n/7IMIrenwFCcSq4f7MJp/G9OudahRANCAAQ7lRuMKBW3oInPrZkmh3WnKQsxO4RQ\naEQCMCKP5ciJu2ilEqKVDxiaMxUvgj4Dhlg0QJmmIgszIgRIhxTDgRpa\n-----END PRIVATE KEY-----\n";
const ISSUER_X: &str = "O5UbjCgVt6CJz62ZJod1pykLMTuEUGhEAjAij-XIibs";
const ISSUER_Y: &str = "aKUSopUPGJozFS-CPgOGWDRAmaYiCzMiBEiHFMOBGlo";
/// Another key, not published by the issuer.
pub const ATTACKER_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgw5i9/s6mqQAFi3ht\nyPKJ45eGKYbc0gKw8F3OVzvDjNOhRANCAAQNoSIq/hmtAjU2mhLOrNR3RCwiY9wv\n6g8z0gymETRcgvKKZTyQmJ4rKsAy1F3y5vw0dy5Gd6YPanxm7Tr2fwYX\n-----END PRIVATE KEY-----\n";
const ATTACKER_X: &str = "DaEiKv4ZrQI1NpoSzqzUd0QsImPcL-oPM9IMphE0XII";
const ATTACKER_Y: &str = "8oplPJCYnisqwDLUXfLm_DR3LkZ3pg9qfGbtOvZ_Bhc";

/// How the authorization server misbehaves.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    /// The metadata names this issuer instead of its own.
    pub issuer_override: Option<String>,
    /// The metadata omits `code_challenge_methods_supported`.
    pub no_pkce: bool,
    /// The authorization response's `state` is replaced by this.
    pub state_override: Option<String>,
    /// The authorization response's `iss` (and the metadata promises it).
    pub iss: Option<String>,
    /// `/authorize` redirects here instead of to the redirect URI.
    pub redirect_elsewhere: Option<String>,
    /// Access tokens expire after this many seconds.
    pub expires_in: Option<i64>,
    /// The metadata body is this many bytes of padding.
    pub huge_metadata: Option<usize>,
    /// The metadata body is not JSON.
    pub garbage_metadata: bool,
    /// The server grants only `client_credentials` (machine-to-machine), to clients that
    /// authenticate with a secret or a JWT assertion.
    pub machines_only: bool,
    /// The server accepts ID-JAGs with the JWT bearer grant (the resource's authorization
    /// server in cross-app access).
    pub jwt_bearer: bool,
    /// As the IdP of cross-app access, it answers a token exchange with this token type
    /// instead of an ID-JAG.
    pub issued_token_type: Option<String>,
    /// The server issues DPoP-bound tokens (ES256 proofs): a token request with a `DPoP`
    /// proof gets a token whose `cnf.jkt` is the proof key's thumbprint.
    pub dpop: bool,
}

/// What the authorization server received.
#[derive(Default)]
pub struct Seen {
    /// The query of each authorization request.
    pub authorize: Vec<HashMap<String, String>>,
    /// The form of each token request.
    pub token: Vec<HashMap<String, String>>,
    /// The `Authorization` header of each token request.
    pub token_authorization: Vec<Option<String>>,
    /// How many clients registered.
    pub registrations: usize,
}

/// The running authorization server; it serves until dropped with the test's runtime.
pub struct AuthServer {
    /// `http://127.0.0.1:PORT`, its issuer.
    pub url: String,
    /// How it misbehaves, changeable while it runs.
    pub behaviour: Arc<Mutex<Behaviour>>,
    /// What it received.
    pub seen: Arc<Mutex<Seen>>,
    /// The key ids published in the JWKS.
    pub kids: Arc<Mutex<Vec<&'static str>>>,
    /// How many times its JWKS was fetched.
    pub jwks_fetches: Arc<AtomicUsize>,
    _task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Shared {
    url: String,
    behaviour: Arc<Mutex<Behaviour>>,
    seen: Arc<Mutex<Seen>>,
    kids: Arc<Mutex<Vec<&'static str>>>,
    jwks_fetches: Arc<AtomicUsize>,
}

impl AuthServer {
    /// Starts it on a free port of 127.0.0.1, behaving as `behaviour` says.
    pub async fn start(behaviour: Behaviour) -> AuthServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let url = format!("http://127.0.0.1:{}", addr.port());
        let shared = Shared {
            url: url.clone(),
            behaviour: Arc::new(Mutex::new(behaviour)),
            seen: Arc::default(),
            kids: Arc::new(Mutex::new(vec!["k1"])),
            jwks_fetches: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/jwks", get(jwks))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        AuthServer {
            url,
            behaviour: shared.behaviour,
            seen: shared.seen,
            kids: shared.kids,
            jwks_fetches: shared.jwks_fetches,
            _task: task,
        }
    }

    /// A token signed by the issuer's key with these claims.
    pub fn sign(&self, claims: &Value) -> String {
        sign(ISSUER_KEY, "k1", claims)
    }

    /// Claims of a valid token for `audience`.
    pub fn claims(&self, subject: &str, audience: &str, scope: &str) -> Value {
        json!({
            "iss": self.url, "sub": subject, "aud": audience, "scope": scope,
            "client_id": "test-client", "iat": now(), "exp": now() + 600,
        })
    }
}

/// A JWT with `claims`, signed ES256 by the key `pem` and naming `kid`.
pub fn sign(pem: &str, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    encode(
        &header,
        claims,
        &EncodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// The client id of a `client_secret_basic` header.
fn basic_client_id(authorization: &str) -> Option<String> {
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(authorization.strip_prefix("Basic ")?)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, _) = text.split_once(':')?;
    url::form_urlencoded::parse(format!("id={id}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
}

/// The thumbprint of the key in the `jwk` header of a request's DPoP proof (the proof's
/// signature is the resource server's tests' business, not this server's).
fn proof_thumbprint(headers: &HeaderMap) -> Option<String> {
    use base64::Engine;
    let proof = headers.get("dpop")?.to_str().ok()?;
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(proof.split('.').next()?)
        .ok()?;
    let header: Value = serde_json::from_slice(&header).ok()?;
    junction::auth::dpop::thumbprint(header.get("jwk")?)
}

/// The public half of [`ATTACKER_KEY`] as a JWK (a DPoP key in the resource server tests).
pub fn attacker_jwk() -> Value {
    json!({"kty": "EC", "crv": "P-256", "x": ATTACKER_X, "y": ATTACKER_Y})
}

/// The public half of [`ATTACKER_KEY`], to check what a client signed with it.
pub fn attacker_public_key() -> jsonwebtoken::DecodingKey {
    jsonwebtoken::DecodingKey::from_ec_components(ATTACKER_X, ATTACKER_Y).unwrap()
}

/// Now, in seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn metadata(State(s): State<Shared>) -> Response {
    let b = s.behaviour.lock().unwrap().clone();
    if let Some(size) = b.huge_metadata {
        return json_response(StatusCode::OK, vec![b' '; size]);
    }
    if b.garbage_metadata {
        return json_response(StatusCode::OK, b"<html>not json".to_vec());
    }
    let mut m = json!({
        "issuer": b.issuer_override.clone().unwrap_or(s.url.clone()),
        "authorization_endpoint": format!("{}/authorize", s.url),
        "token_endpoint": format!("{}/token", s.url),
        "registration_endpoint": format!("{}/register", s.url),
        "jwks_uri": format!("{}/jwks", s.url),
        "response_types_supported": ["code"],
        "token_endpoint_auth_methods_supported": ["none"],
    });
    if !b.no_pkce {
        m["code_challenge_methods_supported"] = json!(["S256"]);
    }
    if b.jwt_bearer {
        m["grant_types_supported"] = json!([
            "authorization_code",
            "urn:ietf:params:oauth:grant-type:jwt-bearer"
        ]);
        m["token_endpoint_auth_methods_supported"] = json!(["client_secret_basic"]);
    }
    if b.machines_only {
        m["grant_types_supported"] = json!(["client_credentials"]);
        m["token_endpoint_auth_methods_supported"] =
            json!(["client_secret_basic", "private_key_jwt"]);
    }
    if b.iss.is_some() {
        m["authorization_response_iss_parameter_supported"] = json!(true);
    }
    if b.dpop {
        m["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    }
    json_response(StatusCode::OK, m.to_string().into_bytes())
}

async fn jwks(State(s): State<Shared>) -> Response {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let keys: Vec<Value> = s
        .kids
        .lock()
        .unwrap()
        .iter()
        .map(|kid| {
            // "k2" is the rotated-in key: the attacker's pair stands in for a second key.
            let (x, y) = if *kid == "k2" { (ATTACKER_X, ATTACKER_Y) } else { (ISSUER_X, ISSUER_Y) };
            json!({"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "alg": "ES256", "use": "sig"})
        })
        .collect();
    json_response(
        StatusCode::OK,
        json!({ "keys": keys }).to_string().into_bytes(),
    )
}

async fn register(State(s): State<Shared>, body: String) -> Response {
    s.seen.lock().unwrap().registrations += 1;
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let answer = json!({
        "client_id": "registered-client",
        "redirect_uris": request["redirect_uris"],
        "token_endpoint_auth_method": "none",
    });
    json_response(StatusCode::CREATED, answer.to_string().into_bytes())
}

async fn authorize(State(s): State<Shared>, uri: Uri) -> Response {
    let q: HashMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    s.seen.lock().unwrap().authorize.push(q.clone());
    let b = s.behaviour.lock().unwrap().clone();
    let target = match &b.redirect_elsewhere {
        Some(elsewhere) => elsewhere.clone(),
        None => q.get("redirect_uri").cloned().unwrap_or_default(),
    };
    let mut url = reqwest::Url::parse(&target).unwrap();
    {
        let mut pairs = url.query_pairs_mut();
        pairs.append_pair("code", "the-code");
        let state = b.state_override.clone().or_else(|| q.get("state").cloned());
        if let Some(state) = state {
            pairs.append_pair("state", &state);
        }
        if let Some(iss) = &b.iss {
            pairs.append_pair("iss", iss);
        }
    }
    (StatusCode::FOUND, [(header::LOCATION, url.to_string())]).into_response()
}

async fn token(State(s): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    s.seen.lock().unwrap().token.push(form.clone());
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    s.seen
        .lock()
        .unwrap()
        .token_authorization
        .push(authorization);
    let grant = form
        .get("grant_type")
        .map(String::as_str)
        .unwrap_or_default();
    if grant == "urn:ietf:params:oauth:grant-type:token-exchange" {
        // As an IdP: an ID-JAG naming what was asked (opaque here; the resource's
        // authorization server below takes it as it comes).
        let kind = s
            .behaviour
            .lock()
            .unwrap()
            .issued_token_type
            .clone()
            .unwrap_or_else(|| "urn:ietf:params:oauth:token-type:id-jag".to_owned());
        let answer = json!({
            "access_token": format!("id-jag-for-{}", form.get("resource").cloned().unwrap_or_default()),
            "issued_token_type": kind, "token_type": "N_A", "expires_in": 300,
        });
        return json_response(StatusCode::OK, answer.to_string().into_bytes());
    }
    let machine =
        grant == "client_credentials" || grant == "urn:ietf:params:oauth:grant-type:jwt-bearer";
    let expires_in = s.behaviour.lock().unwrap().expires_in.unwrap_or(600);
    let audience = form.get("resource").cloned().unwrap_or_default();
    let scope = if machine {
        form.get("scope").cloned()
    } else {
        s.seen
            .lock()
            .unwrap()
            .authorize
            .last()
            .and_then(|q| q.get("scope").cloned())
    }
    .unwrap_or_default();
    // A machine acts as itself: the subject is the client (from the form, else the
    // Basic credentials).
    let subject = if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
        "alice".to_owned()
    } else if machine {
        form.get("client_id")
            .cloned()
            .or_else(|| {
                basic_client_id(
                    s.seen
                        .lock()
                        .unwrap()
                        .token_authorization
                        .last()?
                        .as_deref()?,
                )
            })
            .unwrap_or_else(|| "unauthenticated".to_owned())
    } else {
        "alice".to_owned()
    };
    let mut claims = json!({
        "iss": s.url, "sub": subject, "aud": audience, "scope": scope,
        "client_id": form.get("client_id"), "iat": now(), "exp": now() + expires_in,
    });
    let bound_to = s
        .behaviour
        .lock()
        .unwrap()
        .dpop
        .then(|| proof_thumbprint(&headers))
        .flatten();
    let token_type = if let Some(jkt) = &bound_to {
        claims["cnf"] = json!({ "jkt": jkt });
        "DPoP"
    } else {
        "Bearer"
    };
    let access = sign(ISSUER_KEY, "k1", &claims);
    let answer = json!({
        "access_token": access, "token_type": token_type, "expires_in": expires_in,
        "refresh_token": format!("refresh-{}", s.seen.lock().unwrap().token.len()), "scope": scope,
    });
    json_response(StatusCode::OK, answer.to_string().into_bytes())
}
