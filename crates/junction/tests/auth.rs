//! MCP authorization across real sockets: Junction's HTTP server behind `BearerAuth`
//! (JWTs checked against the issuer's JWKS), Junction's client with an `OAuthClient`, and a
//! scriptable authorization server (junction_test_support::auth) that can lie. Every attack the issue
//! names is performed here and must fail with a clear error that leaks no token.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::atomic::Ordering;
use std::sync::Arc;

use junction::auth::dpop::{self, DpopKey};
use junction::auth::resource::JwtVerifier;
use junction::auth::{
    pkce, AuthError, ClientKey, CrossAppAccess, FileTokenStore, FollowRedirects, MemoryTokenStore,
    OAuthClient, OAuthConfig, PreRegistered, RegisteredClient, TokenStore, Url, WorkloadIdentity,
    WorkloadToken,
};
use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::server::{tool, Context, Server};
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::{BearerAuth, HttpServer, RunningServer};
use junction_test_support::auth::{
    attacker_jwk, attacker_public_key, now, sign, AuthServer, Behaviour, ATTACKER_KEY,
};
use serde_json::{json, Value};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// A protected MCP server whose `whoami` tool answers the caller's subject.
async fn protected(auth: &AuthServer, scopes: &[&str]) -> (RunningServer, String) {
    let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
    protected_with(auth, move |bearer| bearer.required_scopes(scopes)).await
}

/// [`protected`], its bearer checks set by `configure`; `delete` is a second tool.
async fn protected_with(
    auth: &AuthServer,
    configure: impl FnOnce(BearerAuth) -> BearerAuth,
) -> (RunningServer, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = JwtVerifier::discover(&auth.url, &url).await.unwrap();
    let server = Server::builder("protected", "1.0.0")
        .tool(tool("whoami", |ctx: Context, _: NoArgs| async move {
            ctx.identity()
                .map(|i| i.subject.clone())
                .unwrap_or_default()
        }))
        .tool(tool("delete", |_: NoArgs| async move { "deleted" }))
        .tool(tool("scopes", |ctx: Context, _: NoArgs| async move {
            let caller = ctx
                .caller()
                .map(|i| i.scopes.into_iter().collect::<Vec<_>>().join(" "));
            let opener = ctx.identity().map(|i| i.subject.clone());
            format!(
                "{} as {}",
                caller.unwrap_or_default(),
                opener.unwrap_or_default()
            )
        }))
        .build()
        .unwrap();
    let bearer = configure(BearerAuth::new(
        &Url::parse(&url).unwrap(),
        vec![auth.url.clone()],
        Arc::new(verifier),
    ));
    let running = HttpServer::new(move |c| {
        server.serve(c);
    })
    .authorization(bearer)
    .bind_listener(listener)
    .unwrap();
    (running, url)
}

/// The protected resource metadata document at `metadata_url`.
async fn resource_metadata(metadata_url: &str) -> Value {
    let text = reqwest::get(metadata_url)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

/// POSTs `initialize` with `token` (and a session id); returns status, WWW-Authenticate,
/// session id and body.
async fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
) -> (u16, String, Option<String>, String) {
    post_message(url, token, session, &initialize()).await
}

/// [`post`] with another message.
async fn post_message(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> (u16, String, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(message.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    send(request, "mcp-session-id").await
}

/// Sends `request`; returns status, WWW-Authenticate, the header `other` and body.
async fn send(
    request: reqwest::RequestBuilder,
    other: &str,
) -> (u16, String, Option<String>, String) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let h = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (challenge, other) = (h("www-authenticate").unwrap_or_default(), h(other));
    (status, challenge, other, response.text().await.unwrap())
}

#[tokio::test]
async fn without_a_token_the_server_challenges_and_serves_its_metadata() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;
    let (status, challenge, _, _) = post(&url, None, None).await;
    assert_eq!(status, 401);
    let origin = url.trim_end_matches("/mcp");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"mcp:read\""), "{challenge}");
    let prm = resource_metadata(&metadata_url).await;
    assert_eq!(prm["resource"], url);
    assert_eq!(prm["authorization_servers"], json!([auth.url]));
    assert_eq!(prm["scopes_supported"], json!(["mcp:read"]));
}

#[tokio::test]
async fn forged_expired_misaddressed_and_unsigned_tokens_are_refused() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &[]).await;
    let good = auth.claims("alice", &url, "");
    let with = |key: &str, value: Value| {
        let mut c = good.clone();
        c[key] = value;
        c
    };
    let unsigned = {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.",
            b64.encode(r#"{"alg":"none","typ":"JWT"}"#),
            b64.encode(good.to_string())
        )
    };
    let attacks = [
        (
            "forged signature",
            sign(ATTACKER_KEY, "k1", &good),
            "signature does not verify",
        ),
        (
            "wrong audience",
            auth.sign(&with("aud", json!("https://elsewhere.example"))),
            "another resource",
        ),
        (
            "token for another resource",
            auth.sign(&with("aud", json!("http://127.0.0.1:1/mcp"))),
            "another resource",
        ),
        (
            "expired",
            auth.sign(&with("exp", json!(now() - 3600))),
            "expired",
        ),
        (
            "not yet valid",
            auth.sign(&with("nbf", json!(now() + 3600))),
            "not valid yet",
        ),
        (
            "wrong issuer",
            auth.sign(&with("iss", json!("https://evil.example"))),
            "another authorization server",
        ),
        (
            "unknown kid",
            sign(ATTACKER_KEY, "k9", &good),
            "does not publish",
        ),
        ("alg none", unsigned, "known algorithm"),
        ("garbage", "not-a-jwt".to_owned(), "known algorithm"),
    ];
    for (name, token, reason) in attacks {
        let (status, challenge, session, body) = post(&url, Some(&token), None).await;
        assert_eq!(status, 401, "{name}: {body}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{name}: {challenge}"
        );
        assert!(challenge.contains(reason), "{name}: {challenge}");
        assert!(session.is_none(), "{name} opened a session");
        assert!(
            !body.contains(&token) && !challenge.contains(&token),
            "{name}: the token is echoed"
        );
    }
    let (status, _, session, _) = post(&url, Some(&auth.sign(&good)), None).await;
    assert_eq!(status, 200);
    assert!(session.is_some());
}

#[tokio::test]
async fn an_unknown_kid_makes_the_server_fetch_the_keys_again() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &[]).await;
    let claims = auth.claims("alice", &url, "");
    let (status, ..) = post(&url, Some(&auth.sign(&claims)), None).await;
    assert_eq!(status, 200);
    let fetches = auth.jwks_fetches.load(Ordering::SeqCst);
    // The issuer rotates a new key in (the "attacker" pair stands in for it).
    auth.kids.lock().unwrap().push("k2");
    let (status, ..) = post(&url, Some(&sign(ATTACKER_KEY, "k2", &claims)), None).await;
    assert_eq!(status, 200);
    assert_eq!(auth.jwks_fetches.load(Ordering::SeqCst), fetches + 1);
}

#[tokio::test]
async fn scopes_query_tokens_and_other_subjects_sessions_are_refused() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;
    let reader = auth.sign(&auth.claims("alice", &url, "mcp:read"));
    let (status, challenge, ..) = post(
        &url,
        Some(&auth.sign(&auth.claims("alice", &url, "other"))),
        None,
    )
    .await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"mcp:read\""), "{challenge}");

    let (status, _, _, body) =
        post(&format!("{url}?access_token={reader}"), Some(&reader), None).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("query string"), "{body}");

    let (status, _, session, _) = post(&url, Some(&reader), None).await;
    assert_eq!(status, 200);
    let session = session.unwrap();
    let mallory = auth.sign(&auth.claims("mallory", &url, "mcp:read"));
    let (status, _, _, body) = post(&url, Some(&mallory), Some(&session)).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("another user"), "{body}");
}

#[tokio::test]
async fn a_legacy_sse_session_belongs_to_the_subject_that_opened_it() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;
    let base = url.trim_end_matches("/mcp");
    let alice = auth.sign(&auth.claims("alice", &url, "mcp:read"));
    let mallory = auth.sign(&auth.claims("mallory", &url, "mcp:read"));
    let mut stream = reqwest::Client::new()
        .get(format!("{base}/sse"))
        .bearer_auth(&alice)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut seen = String::new();
    let mut read_until = async |needle: &str| {
        while !seen.contains(needle) {
            let chunk = stream
                .chunk()
                .await
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        seen.clone()
    };
    let opened = read_until("\n\n").await;
    let endpoint = opened
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the endpoint event")
        .trim()
        .to_owned();
    let message_url = format!("{base}{endpoint}");
    let post = |token: &str| {
        reqwest::Client::new()
            .post(&message_url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(initialize().to_string())
            .send()
    };
    let refused = post(&mallory).await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("another user"));
    let accepted = post(&alice).await.unwrap();
    assert_eq!(accepted.status(), 202);
    let answered = read_until("protocolVersion").await;
    assert_eq!(
        answered.matches("\"id\":1").count(),
        1,
        "only alice's initialize reached the session: {answered}"
    );
}

/// POSTs `initialize` with `authorization` as the `Authorization` header and each of
/// `proofs` as a `DPoP` header; returns status, WWW-Authenticate, DPoP-Nonce and body.
async fn post_dpop(
    url: &str,
    authorization: &str,
    proofs: &[&str],
) -> (u16, String, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("authorization", authorization)
        .body(initialize().to_string());
    for proof in proofs {
        request = request.header("dpop", *proof);
    }
    send(request, "dpop-nonce").await
}

/// A DPoP proof signed by [`ATTACKER_KEY`] (the key the tokens below are bound to), its
/// public key in the header, with these claims.
fn attacker_proof(claims: &Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.typ = Some("dpop+jwt".to_owned());
    header.jwk = Some(serde_json::from_value(attacker_jwk()).unwrap());
    jsonwebtoken::encode(
        &header,
        claims,
        &jsonwebtoken::EncodingKey::from_ec_pem(ATTACKER_KEY.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// A proof with `alg: none` and no signature, naming the attacker's key.
fn unsigned_proof(claims: &Value) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = json!({"typ": "dpop+jwt", "alg": "none", "jwk": attacker_jwk()});
    format!(
        "{}.{}.",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    )
}

/// A proof signed with HS256 by a secret the attacker chose and put in the header.
fn hmac_proof(claims: &Value) -> String {
    use base64::Engine;
    let secret = b"attacker-chosen-secret";
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.typ = Some("dpop+jwt".to_owned());
    header.jwk = Some(
        serde_json::from_value(json!({
            "kty": "oct",
            "k": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret),
        }))
        .unwrap(),
    );
    jsonwebtoken::encode(
        &header,
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .unwrap()
}

/// A token for `url` bound (`cnf.jkt`) to the key with thumbprint `jkt`.
fn bound_token(auth: &AuthServer, url: &str, jkt: &str) -> String {
    let mut claims = auth.claims("alice", url, "");
    claims["cnf"] = json!({ "jkt": jkt });
    auth.sign(&claims)
}

#[tokio::test]
async fn a_dpop_bound_token_needs_one_fresh_proof_for_this_request_by_its_key() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &[]).await;
    let jkt = dpop::thumbprint(&attacker_jwk()).unwrap();
    let token = bound_token(&auth, &url, &jkt);
    let claims = |change: &dyn Fn(&mut Value)| {
        let mut c = json!({
            "jti": pkce::random_token().unwrap(), "htm": "POST", "htu": url,
            "iat": now(), "ath": dpop::ath(&token),
        });
        change(&mut c);
        c
    };
    let scheme = format!("DPoP {token}");

    let good = attacker_proof(&claims(&|_| {}));
    let (status, _, _, body) = post_dpop(&url, &scheme, &[&good]).await;
    assert_eq!(status, 200, "a good proof: {body}");

    let other_key = DpopKey::generate().unwrap();
    let target = Url::parse(&url).unwrap();
    let remove = |name: &'static str| {
        move |c: &mut Value| {
            c.as_object_mut().unwrap().remove(name);
        }
    };
    let set = |name: &'static str, value: Value| move |c: &mut Value| c[name] = value.clone();
    // One proof each, with the bound token under the DPoP scheme: what is wrong with it,
    // the proof, and how the refusal says so.
    let bad_proofs = [
        (
            "replayed (same jti)",
            good.clone(),
            "presented before (replayed jti)",
        ),
        (
            "for another URL",
            attacker_proof(&claims(&set("htu", json!(url.replace("/mcp", "/admin"))))),
            "for another URL (htu)",
        ),
        (
            "for another origin",
            attacker_proof(&claims(&set("htu", json!("https://mcp.example.com/mcp")))),
            "for another URL (htu)",
        ),
        (
            "for another method",
            attacker_proof(&claims(&set("htm", json!("GET")))),
            "not for a POST request (htm)",
        ),
        (
            "without ath",
            attacker_proof(&claims(&remove("ath"))),
            "not for this access token (ath)",
        ),
        (
            "for another token",
            attacker_proof(&claims(&set("ath", json!(dpop::ath("another-token"))))),
            "not for this access token (ath)",
        ),
        (
            "by another key than cnf.jkt",
            other_key
                .proof("POST", &target, Some(&token), None)
                .unwrap(),
            "signed by another key than the token is bound to",
        ),
        (
            "stale",
            attacker_proof(&claims(&set("iat", json!(now() - 600)))),
            "too old or from the future (iat)",
        ),
        (
            "from the future",
            attacker_proof(&claims(&set("iat", json!(now() + 600)))),
            "too old or from the future (iat)",
        ),
        (
            "without jti",
            attacker_proof(&claims(&remove("jti"))),
            "has no jti",
        ),
        ("not typed dpop+jwt", token.clone(), "typ is not dpop+jwt"),
        (
            "unsigned",
            unsigned_proof(&claims(&|_| {})),
            "header is not valid",
        ),
        (
            "signed with a shared secret",
            hmac_proof(&claims(&|_| {})),
            "not signed with an asymmetric algorithm",
        ),
    ];
    let mut attacks: Vec<(String, String, Vec<String>, &str, &str)> = bad_proofs
        .into_iter()
        .map(|(what, proof, reason)| {
            (
                format!("a proof {what}"),
                scheme.clone(),
                vec![proof],
                "invalid_dpop_proof",
                reason,
            )
        })
        .collect();
    let fresh = || attacker_proof(&claims(&|_| {}));
    let unbound = auth.sign(&auth.claims("alice", &url, ""));
    attacks.extend([
        (
            "no proof".to_owned(),
            scheme.clone(),
            vec![],
            "invalid_dpop_proof",
            "exactly one DPoP proof header is required",
        ),
        (
            "two proofs".to_owned(),
            scheme.clone(),
            vec![fresh(), fresh()],
            "invalid_dpop_proof",
            "exactly one DPoP proof header is required",
        ),
        (
            "the bound token as a bearer token".to_owned(),
            format!("Bearer {token}"),
            vec![fresh()],
            "invalid_token",
            "bound to a DPoP key; present it with the DPoP scheme",
        ),
        (
            "an unbound token with the DPoP scheme".to_owned(),
            format!("DPoP {unbound}"),
            vec![fresh()],
            "invalid_token",
            "not bound to a DPoP key; present it as a bearer token",
        ),
    ]);
    for (name, authorization, proofs, error, reason) in attacks {
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (status, challenge, _, body) = post_dpop(&url, &authorization, &proofs).await;
        assert_eq!(status, 401, "{name}: {body}");
        assert!(challenge.starts_with("DPoP "), "{name}: {challenge}");
        assert!(
            challenge.contains(&format!("error=\"{error}\"")),
            "{name}: {challenge}"
        );
        assert!(challenge.contains(reason), "{name}: {challenge}");
        assert!(body.contains(reason), "{name}: {body}");
        assert!(
            !body.contains(&token) && !challenge.contains(&token),
            "{name}: the token is echoed"
        );
    }

    // The client's own proofs are what the server accepts.
    let client_key = DpopKey::generate().unwrap();
    let token = bound_token(&auth, &url, &client_key.thumbprint());
    let proof = client_key
        .proof("POST", &target, Some(&token), None)
        .unwrap();
    let (status, _, _, body) = post_dpop(&url, &format!("DPoP {token}"), &[&proof]).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_server_requiring_dpop_with_nonces_says_so_and_the_client_follows_its_nonce() {
    let auth = AuthServer::start(Behaviour {
        dpop: true,
        ..Default::default()
    })
    .await;
    let (_server, url) = protected_with(&auth, |b| b.require_dpop().dpop_nonces().unwrap()).await;

    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    let prm = resource_metadata(&metadata_url).await;
    assert_eq!(prm["dpop_bound_access_tokens_required"], true);
    let algs = prm["dpop_signing_alg_values_supported"].as_array().unwrap();
    assert!(algs.contains(&json!("ES256")), "{prm}");
    assert!(!algs.iter().any(|a| a == "none" || a == "HS256"), "{prm}");

    let (status, challenge, _, _) = post(&url, None, None).await;
    assert_eq!(status, 401);
    assert!(
        challenge.starts_with("DPoP algs=\"ES256 ")
            && challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );

    let unbound = auth.sign(&auth.claims("alice", &url, ""));
    let (status, challenge, _, _) = post(&url, Some(&unbound), None).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(
        challenge.contains("accepts only DPoP-bound tokens"),
        "{challenge}"
    );

    // A good proof without the server's nonce is answered with the nonce to use.
    let jkt = dpop::thumbprint(&attacker_jwk()).unwrap();
    let token = bound_token(&auth, &url, &jkt);
    let proof = |nonce: Option<&str>| {
        let mut claims = json!({
            "jti": pkce::random_token().unwrap(), "htm": "POST", "htu": url,
            "iat": now(), "ath": dpop::ath(&token),
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        attacker_proof(&claims)
    };
    let scheme = format!("DPoP {token}");
    for (name, nonce) in [("no nonce", None), ("a made-up nonce", Some("made-up"))] {
        let (status, challenge, given, body) = post_dpop(&url, &scheme, &[&proof(nonce)]).await;
        assert_eq!(status, 401, "{name}: {body}");
        assert!(
            challenge.starts_with("DPoP ") && challenge.contains("error=\"use_dpop_nonce\""),
            "{name}: {challenge}"
        );
        assert!(given.is_some(), "{name}: no DPoP-Nonce header");
    }
    let (_, _, given, _) = post_dpop(&url, &scheme, &[&proof(None)]).await;
    let nonce = given.unwrap();
    let (status, _, again, body) = post_dpop(&url, &scheme, &[&proof(Some(&nonce))]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        again.as_deref(),
        Some(nonce.as_str()),
        "the nonce is named on success too"
    );

    // Junction's client gets a bound token, meets use_dpop_nonce and retries with the nonce.
    let oauth = oauth_client(&url, Arc::new(MemoryTokenStore::default()));
    assert_eq!(whoami(&url, oauth).await, "alice");
    let seen = auth.seen.lock().unwrap();
    assert_eq!(
        seen.token.len(),
        1,
        "one token, bound, served every request"
    );
}

#[tokio::test]
async fn methods_and_tools_need_their_own_scopes_and_the_client_steps_up_to_them() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected_with(&auth, |bearer| {
        bearer
            .required_scopes(["mcp:read"])
            .method_scopes("tools/call", ["mcp:call"])
            .tool_scopes("delete", ["mcp:write"])
    })
    .await;
    let call = |name: &str| json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}});
    let reader = auth.sign(&auth.claims("alice", &url, "mcp:read"));
    let (status, ..) = post(&url, Some(&reader), None).await;
    assert_eq!(
        status, 200,
        "initialize needs only the scopes of every request"
    );
    let (status, challenge, _, body) =
        post_message(&url, Some(&reader), None, &call("whoami")).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp:read mcp:call\""),
        "{challenge}"
    );
    assert!(body.contains("lacks the scope mcp:call"), "{body}");
    let caller = auth.sign(&auth.claims("alice", &url, "mcp:read mcp:call"));
    let (status, challenge, _, body) =
        post_message(&url, Some(&caller), None, &call("delete")).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains("scope=\"mcp:read mcp:call mcp:write\""),
        "{challenge}"
    );
    assert!(body.contains("lacks the scope mcp:write"), "{body}");
    let prm: Value = serde_json::from_str(
        &reqwest::get(format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            url.trim_end_matches("/mcp")
        ))
        .await
        .unwrap()
        .text()
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        prm["scopes_supported"],
        json!(["mcp:read", "mcp:call", "mcp:write"])
    );

    // Junction's client asks for what each challenge names, keeping what it had.
    let connection = HttpClient::new(&url)
        .unwrap()
        .oauth(oauth_client(&url, Arc::new(MemoryTokenStore::default())))
        .connect();
    let client = Client::connect(connection, ClientOptions::new("t", "1"))
        .await
        .unwrap();
    let who = client
        .call_tool(CallToolParams::new("whoami"), Default::default())
        .await
        .unwrap();
    assert_eq!(who.content[0].as_text(), Some("alice"));
    let deleted = client
        .call_tool(CallToolParams::new("delete"), Default::default())
        .await
        .unwrap();
    assert_eq!(deleted.content[0].as_text(), Some("deleted"));
    client.close();
    let seen = auth.seen.lock().unwrap();
    let asked: Vec<&str> = seen
        .authorize
        .iter()
        .map(|a| a.get("scope").map(String::as_str).unwrap_or(""))
        .collect();
    assert_eq!(
        asked,
        [
            "mcp:read",
            "mcp:call mcp:read",
            "mcp:call mcp:read mcp:write"
        ]
    );
}

#[tokio::test]
async fn handlers_see_the_identity_checked_on_each_request_not_only_at_session_open() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;
    let first = auth.sign(&auth.claims("alice", &url, "mcp:read"));
    let (status, _, session, _) = post(&url, Some(&first), None).await;
    assert_eq!(status, 200);
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, ..) = post_message(&url, Some(&first), Some(&session), &initialized).await;
    assert_eq!(status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "scopes", "arguments": {}}});
    let (status, _, _, body) = post_message(&url, Some(&first), Some(&session), &call).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("mcp:read as alice"), "{body}");
    // A stepped-up token of the same user, in the same session.
    let stepped = auth.sign(&auth.claims("alice", &url, "mcp:read mcp:write"));
    let (status, _, _, body) = post_message(&url, Some(&stepped), Some(&session), &call).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("mcp:read mcp:write as alice"), "{body}");
    // An expired token is refused on the request itself, session or not.
    let mut stale = auth.claims("alice", &url, "mcp:read");
    stale["exp"] = json!(now() - 3600);
    let (status, challenge, _, _) =
        post_message(&url, Some(&auth.sign(&stale)), Some(&session), &call).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("expired"), "{challenge}");
}

/// A machine client (client credentials) with `client`, calling `whoami`: what it answers.
/// Connects to `url` with `oauth` and calls `whoami`; its answer.
async fn whoami(url: &str, oauth: Arc<OAuthClient>) -> String {
    let connection = HttpClient::new(url).unwrap().oauth(oauth).connect();
    let client = Client::connect(connection, ClientOptions::new("t", "1"))
        .await
        .unwrap();
    let result = client
        .call_tool(CallToolParams::new("whoami"), Default::default())
        .await
        .unwrap();
    client.close();
    result.content[0].as_text().unwrap_or_default().to_owned()
}

async fn machine_calls(auth: &AuthServer, url: &str, client: RegisteredClient) -> String {
    let mut config = OAuthConfig::new("junction-test");
    config.pre_registered = Some(PreRegistered {
        client,
        issuer: Some(auth.url.clone()),
    });
    let oauth = OAuthClient::new(
        &Url::parse(url).unwrap(),
        config,
        Arc::new(MemoryTokenStore::default()),
        Arc::new(FollowRedirects::new().unwrap()),
    )
    .unwrap();
    whoami(url, oauth).await
}

#[tokio::test]
async fn a_workload_presents_its_platform_jwt_read_anew_for_each_token() {
    let auth = AuthServer::start(Behaviour {
        jwt_bearer: true,
        ..Default::default()
    })
    .await;
    let (_server, url) = protected(&auth, &[]).await;
    let dir = std::env::temp_dir().join(format!("junction-wif-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "platform.jwt.one\n").unwrap();
    let mut config = OAuthConfig::new("junction-test");
    config.workload = Some(WorkloadIdentity {
        client_id: Some("my-agent".into()),
        token: WorkloadToken::File(file.clone()),
    });
    let oauth = OAuthClient::new(
        &Url::parse(&url).unwrap(),
        config,
        Arc::new(MemoryTokenStore::default()),
        Arc::new(FollowRedirects::new().unwrap()),
    )
    .unwrap();
    assert_eq!(whoami(&url, oauth.clone()).await, "alice");

    // The platform rotates the token in place; the next grant presents the new one.
    std::fs::write(&file, "platform.jwt.two").unwrap();
    oauth.logout().unwrap();
    oauth.login().await.unwrap();
    {
        let seen = auth.seen.lock().unwrap();
        assert!(seen.authorize.is_empty(), "no browser flow");
        assert_eq!(seen.registrations, 0, "no registration");
        let grants: Vec<(&str, &str, &str)> = seen
            .token
            .iter()
            .map(|t| {
                (
                    t["grant_type"].as_str(),
                    t["assertion"].as_str(),
                    t["client_id"].as_str(),
                )
            })
            .collect();
        let bearer = "urn:ietf:params:oauth:grant-type:jwt-bearer";
        assert_eq!(
            grants,
            [
                (bearer, "platform.jwt.one", "my-agent"),
                (bearer, "platform.jwt.two", "my-agent")
            ]
        );
        assert_eq!(seen.token[0]["resource"], url);
    }

    std::fs::remove_file(&file).unwrap();
    oauth.logout().unwrap();
    let error = oauth.login().await.unwrap_err().to_string();
    assert!(error.contains(&file.display().to_string()), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_machine_client_gets_its_token_with_client_credentials_and_no_user() {
    let auth = AuthServer::start(Behaviour {
        machines_only: true,
        ..Behaviour::default()
    })
    .await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;

    let secret = RegisteredClient {
        client_id: "build-bot".into(),
        client_secret: Some("s3cret:with/odd chars".into()),
        ..RegisteredClient::default()
    };
    assert_eq!(machine_calls(&auth, &url, secret).await, "build-bot");
    {
        let seen = auth.seen.lock().unwrap();
        assert!(seen.authorize.is_empty(), "no user was sent anywhere");
        assert_eq!(seen.registrations, 0);
        let form = &seen.token[0];
        assert_eq!(form["grant_type"], "client_credentials");
        assert_eq!(form["resource"], url);
        assert_eq!(form["scope"], "mcp:read");
        assert!(
            !form.contains_key("client_secret"),
            "the secret goes in the header"
        );
        // client_secret_basic: both parts form-encoded, then base64 (RFC 6749 §2.3.1).
        use base64::Engine;
        let basic = seen.token_authorization[0].as_deref().unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic.strip_prefix("Basic ").unwrap())
            .unwrap();
        assert_eq!(
            String::from_utf8(decoded).unwrap(),
            "build-bot:s3cret%3Awith%2Fodd+chars"
        );
    }

    let keyed = RegisteredClient {
        client_id: "deploy-bot".into(),
        private_key: Some(ClientKey::new(ATTACKER_KEY, "ES256").unwrap()),
        ..RegisteredClient::default()
    };
    assert_eq!(machine_calls(&auth, &url, keyed).await, "deploy-bot");
    let seen = auth.seen.lock().unwrap();
    let form = seen.token.last().unwrap();
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(
        form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    // The assertion is signed with the client's key, by and about the client, for the issuer.
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[&auth.url]);
    validation.set_issuer(&["deploy-bot"]);
    let claims = jsonwebtoken::decode::<Value>(
        &form["client_assertion"],
        &attacker_public_key(),
        &validation,
    )
    .unwrap()
    .claims;
    assert_eq!(claims["sub"], "deploy-bot");
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
}

/// The OAuth client of cross-app access: the host's client at the resource's authorization
/// server `auth`, and the IdP `idp` that holds the user's sign-in.
fn cross_app_client(
    url: &str,
    auth: &AuthServer,
    idp: &AuthServer,
    registered: bool,
) -> Arc<OAuthClient> {
    let mut config = OAuthConfig::new("junction-test");
    config.pre_registered = registered.then(|| PreRegistered {
        client: RegisteredClient {
            client_id: "host-at-as".into(),
            client_secret: Some("as-secret".into()),
            ..RegisteredClient::default()
        },
        issuer: Some(auth.url.clone()),
    });
    config.cross_app = Some(CrossAppAccess {
        idp_issuer: idp.url.clone(),
        idp_token_endpoint: None,
        idp_client: RegisteredClient {
            client_id: "host-at-idp".into(),
            ..RegisteredClient::default()
        },
        id_token: "the-users-id-token".into(),
    });
    OAuthClient::new(
        &Url::parse(url).unwrap(),
        config,
        Arc::new(MemoryTokenStore::default()),
        // No person: a browser would be a failure here.
        Arc::new(FollowRedirects::new().unwrap()),
    )
    .unwrap()
}

#[tokio::test]
async fn cross_app_access_exchanges_the_id_token_at_the_idp_then_presents_the_grant() {
    let idp = AuthServer::start(Behaviour::default()).await;
    let auth = AuthServer::start(Behaviour {
        jwt_bearer: true,
        ..Behaviour::default()
    })
    .await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;
    let oauth = cross_app_client(&url, &auth, &idp, true);
    assert_eq!(whoami(&url, oauth).await, "alice");

    let at_idp = idp.seen.lock().unwrap();
    let exchange = &at_idp.token[0];
    assert_eq!(
        exchange["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(
        exchange["requested_token_type"],
        "urn:ietf:params:oauth:token-type:id-jag"
    );
    assert_eq!(exchange["subject_token"], "the-users-id-token");
    assert_eq!(
        exchange["subject_token_type"],
        "urn:ietf:params:oauth:token-type:id_token"
    );
    assert_eq!(
        exchange["audience"], auth.url,
        "the grant is for the resource's AS"
    );
    assert_eq!(exchange["resource"], url);
    assert_eq!(exchange["client_id"], "host-at-idp");
    assert!(at_idp.authorize.is_empty());
    let at_as = auth.seen.lock().unwrap();
    assert!(at_as.authorize.is_empty(), "no browser, no consent screen");
    let grant = &at_as.token[0];
    assert_eq!(
        grant["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(grant["assertion"], format!("id-jag-for-{url}"));
    assert_eq!(grant["scope"], "mcp:read");
    assert!(
        at_as.token_authorization[0]
            .as_deref()
            .is_some_and(|h| h.starts_with("Basic ")),
        "the client authenticates at the AS"
    );
    assert!(
        !at_as
            .token
            .iter()
            .any(|f| f.values().any(|v| v == "the-users-id-token")),
        "the ID token goes to the IdP only"
    );
}

#[tokio::test]
async fn cross_app_access_refuses_a_wrong_token_type_and_needs_a_registered_client() {
    let idp = AuthServer::start(Behaviour {
        issued_token_type: Some("urn:ietf:params:oauth:token-type:access_token".into()),
        ..Behaviour::default()
    })
    .await;
    let auth = AuthServer::start(Behaviour {
        jwt_bearer: true,
        ..Behaviour::default()
    })
    .await;
    let (_server, url) = protected(&auth, &[]).await;
    let error = cross_app_client(&url, &auth, &idp, true)
        .login()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not an ID-JAG"), "{error}");
    assert!(
        auth.seen.lock().unwrap().token.is_empty(),
        "nothing but an ID-JAG is presented to the AS"
    );

    let error = cross_app_client(&url, &auth, &idp, false)
        .login()
        .await
        .unwrap_err();
    assert!(matches!(error, AuthError::CrossAppClient { .. }), "{error}");
    assert!(error.to_string().contains("oauth.clientId"), "{error}");
}

fn oauth_client(url: &str, store: Arc<dyn TokenStore>) -> Arc<OAuthClient> {
    OAuthClient::new(
        &Url::parse(url).unwrap(),
        OAuthConfig::new("junction-test"),
        store,
        Arc::new(FollowRedirects::new().unwrap()),
    )
    .unwrap()
}

#[tokio::test]
async fn the_client_authorizes_calls_the_tool_as_its_user_and_keeps_the_token_private() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &["mcp:read"]).await;
    let dir = std::env::temp_dir().join(format!("junction-auth-test-{}", std::process::id()));
    let store = Arc::new(FileTokenStore::new(dir.join("credentials.json")));
    let oauth = oauth_client(&url, store.clone());
    assert_eq!(whoami(&url, oauth).await, "alice");

    let seen = auth.seen.lock().unwrap();
    let asked = &seen.authorize[0];
    assert_eq!(asked["code_challenge_method"], "S256");
    assert_eq!(asked["resource"], url);
    assert_eq!(asked["scope"], "mcp:read");
    assert_eq!(seen.token[0]["resource"], url);
    assert_eq!(seen.token[0]["grant_type"], "authorization_code");
    assert_eq!(
        junction::auth::pkce::s256(&seen.token[0]["code_verifier"]),
        asked["code_challenge"]
    );
    drop(seen);
    let stored = store.load().unwrap();
    assert_eq!(stored.tokens[&url].issuer, auth.url);
    assert!(
        stored.clients.contains_key(&auth.url),
        "the registration is kept under its issuer"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_before_use() {
    let auth = AuthServer::start(Behaviour {
        expires_in: Some(30),
        ..Behaviour::default()
    })
    .await;
    let (_server, url) = protected(&auth, &[]).await;
    let oauth = oauth_client(&url, Arc::new(MemoryTokenStore::default()));
    let connection = HttpClient::new(&url)
        .unwrap()
        .oauth(oauth.clone())
        .connect();
    let client = Client::connect(connection, ClientOptions::new("t", "1"))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    client.close();
    let seen = auth.seen.lock().unwrap();
    assert_eq!(seen.authorize.len(), 1, "one authorization");
    let grants: Vec<&str> = seen
        .token
        .iter()
        .map(|t| t["grant_type"].as_str())
        .collect();
    assert!(
        grants.len() >= 2 && grants[1..].iter().all(|g| *g == "refresh_token"),
        "{grants:?}"
    );
    assert!(seen.token[1..].iter().all(|t| t["resource"] == url));
}

/// Runs the client's flow against a misbehaving authorization server; returns its error.
async fn flow_error(behaviour: Behaviour) -> (AuthError, AuthServer) {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (server, url) = protected(&auth, &[]).await;
    *auth.behaviour.lock().unwrap() = behaviour;
    let oauth = oauth_client(&url, Arc::new(MemoryTokenStore::default()));
    let error = oauth.login().await.unwrap_err();
    drop(server);
    assert!(oauth.status().is_none(), "no token kept after: {error}");
    (error, auth)
}

#[tokio::test]
async fn a_forged_or_replayed_state_is_refused_before_the_code_is_used() {
    let (error, auth) = flow_error(Behaviour {
        state_override: Some("replayed-state".into()),
        ..Behaviour::default()
    })
    .await;
    assert!(matches!(error, AuthError::State), "{error}");
    assert!(
        auth.seen.lock().unwrap().token.is_empty(),
        "the code reached the token endpoint"
    );
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused() {
    let (error, auth) = flow_error(Behaviour {
        redirect_elsewhere: Some("http://evil.example/steal".into()),
        ..Behaviour::default()
    })
    .await;
    assert!(error.to_string().contains("another origin"), "{error}");
    assert!(auth.seen.lock().unwrap().token.is_empty());
}

#[tokio::test]
async fn a_mismatched_iss_is_refused_and_its_error_ignored() {
    let (error, auth) = flow_error(Behaviour {
        iss: Some("https://evil.example".into()),
        ..Behaviour::default()
    })
    .await;
    assert!(matches!(error, AuthError::IssuerResponse { .. }), "{error}");
    assert!(auth.seen.lock().unwrap().token.is_empty());
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused() {
    let (error, auth) = flow_error(Behaviour {
        issuer_override: Some("https://evil.example".into()),
        ..Behaviour::default()
    })
    .await;
    assert!(matches!(error, AuthError::IssuerMismatch { .. }), "{error}");
    assert!(auth.seen.lock().unwrap().authorize.is_empty());
}

#[tokio::test]
async fn an_authorization_server_without_s256_gets_nothing() {
    let (error, auth) = flow_error(Behaviour {
        no_pkce: true,
        ..Behaviour::default()
    })
    .await;
    assert!(matches!(error, AuthError::NoPkce { .. }), "{error}");
    let seen = auth.seen.lock().unwrap();
    assert!(seen.authorize.is_empty() && seen.registrations == 0);
}

/// `OAuthConfig::max_document` bounds what discovery reads: 100 KiB of metadata is read
/// whole under the default (and found not to be JSON), refused past a 64 KiB bound.
#[tokio::test]
async fn the_metadata_size_bound_is_the_clients_config() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let (_server, url) = protected(&auth, &[]).await;
    *auth.behaviour.lock().unwrap() = Behaviour {
        huge_metadata: Some(100 * 1024),
        ..Behaviour::default()
    };
    let login = |config: OAuthConfig| {
        let url = Url::parse(&url).unwrap();
        async move {
            let agent = Arc::new(FollowRedirects::new().unwrap());
            let store = Arc::new(MemoryTokenStore::default());
            let oauth = OAuthClient::new(&url, config, store, agent).unwrap();
            oauth.login().await.unwrap_err().to_string()
        }
    };
    let read = login(OAuthConfig::new("junction-test")).await;
    assert!(read.contains("not a valid metadata document"), "{read}");
    let mut bounded = OAuthConfig::new("junction-test");
    bounded.max_document = 64 * 1024;
    let refused = login(bounded).await;
    assert!(
        refused.contains("the response is larger than 65536 bytes"),
        "{refused}"
    );
}

#[tokio::test]
async fn garbage_huge_and_absent_metadata_fail_clearly() {
    let (error, _auth) = flow_error(Behaviour {
        garbage_metadata: true,
        ..Behaviour::default()
    })
    .await;
    assert!(
        error.to_string().contains("not a valid metadata document"),
        "{error}"
    );
    let (error, _auth) = flow_error(Behaviour {
        huge_metadata: Some(10 * 1024 * 1024),
        ..Behaviour::default()
    })
    .await;
    assert!(error.to_string().contains("larger than"), "{error}");

    // An authorization server that is down.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let error = JwtVerifier::discover(&down, "http://127.0.0.1:1/mcp")
        .await
        .unwrap_err();
    assert!(matches!(error, AuthError::Http { .. }), "{error}");
    assert!(error.to_string().contains("onnection refused"), "{error}");
}
