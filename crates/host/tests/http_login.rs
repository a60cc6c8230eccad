//! A person logging in to an OAuth-protected HTTP server for longer than the handshake's
//! request timeout (60 s by default): the handshake request gives up while they are at the
//! authorization server, and the host connects again once the login is done
//! (`servers::start`'s fallback), instead of reporting the server as failed.
//!
//! On real sockets on 127.0.0.1: the scriptable authorization server of the library's auth
//! tests, a Junction server behind `BearerAuth`, and a "browser" (`$BROWSER`, a shell script)
//! that hands the authorization URL to the test, which follows it only after the request
//! timeout has passed. Its own binary: it sets `BROWSER` and `XDG_CONFIG_HOME` for the process.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use junction::auth::resource::JwtVerifier;
use junction::auth::Url;
use junction::server::{tool, Server};
use junction::transport::http::server::{BearerAuth, HttpServer};
use junction_host::config::Config;
use junction_host::consent::ScriptedConsent;
use junction_host::conversation::Message;
use junction_host::events::EventSink;
use junction_host::interaction::ScriptedInteraction;
use junction_host::model::ScriptedModel;
use junction_host::servers::StartOptions;
use junction_host::Host;
use junction_test_support::auth::{AuthServer, Behaviour};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    city: String,
}

/// The handshake's request timeout in this test (the default is 60 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(1);

/// Whether a request to the MCP endpoint carried a token.
type Seen = Arc<Mutex<Vec<bool>>>;

/// A protected `weather` server; returns its URL and, for each request to its MCP endpoint,
/// whether it carried a token.
async fn protected_weather(auth: &AuthServer) -> (String, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = JwtVerifier::discover(&auth.url, &url).await.unwrap();
    let bearer = BearerAuth::new(
        &Url::parse(&url).unwrap(),
        vec![auth.url.clone()],
        Arc::new(verifier),
    );
    let server = Server::builder("weather", "1.0.0")
        .tool(tool("forecast", |q: Query| async move {
            format!("Sunny in {}", q.city)
        }))
        .build()
        .unwrap();
    let seen = Seen::default();
    let log = seen.clone();
    let record = move |request: Request, next: Next| {
        if request.uri().path() == "/mcp" {
            let token = request.headers().contains_key("authorization");
            log.lock().unwrap().push(token);
        }
        next.run(request)
    };
    let app = HttpServer::new(move |c| {
        server.serve(c);
    })
    .authorization(bearer)
    .router()
    .layer(middleware::from_fn(record));
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (url, seen)
}

/// A browser that writes the URL it is given to `dir/url` (for the test to follow), and
/// adds it to `dir/opened` (every URL it was given).
fn recording_browser(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("browser.sh");
    let target = dir.join("url");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nprintf '%s' \"$1\" > '{}.part' && mv '{1}.part' '{1}'\n",
            dir.join("opened").display(),
            target.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    target
}

#[tokio::test]
async fn a_login_longer_than_the_handshake_request_timeout_connects_again_with_the_token() {
    let dir = std::env::temp_dir().join(format!("junction-http-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url_file = recording_browser(&dir);
    std::env::set_var("BROWSER", dir.join("browser.sh"));
    std::env::set_var("XDG_CONFIG_HOME", &dir);
    std::env::remove_var("JUNCTION_TOKEN_STORE");

    let auth = AuthServer::start(Behaviour::default()).await;
    let (url, seen) = protected_weather(&auth).await;

    // The person: opens the URL only once the handshake request has timed out.
    let person = tokio::spawn(async move {
        let authorization_url = loop {
            match std::fs::read_to_string(&url_file) {
                Ok(text) if !text.is_empty() => break text,
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        };
        tokio::time::sleep(REQUEST_TIMEOUT * 3).await;
        // The authorization server redirects at once to the host's loopback listener.
        let answer = reqwest::get(&authorization_url).await.unwrap();
        assert!(answer.status().is_success(), "{}", answer.status());
    });

    let text = json!({
        "mcpServers": {"weather": {"type": "http", "url": url}},
        "junction": {"policy": {"*": "allow"}}
    })
    .to_string();
    let config = Config::parse(&text, Path::new("test.json"), &|_| None).unwrap();
    let mut options = StartOptions::default();
    options.client.session.request_timeout = REQUEST_TIMEOUT;
    let script = r#"[
        {"toolCalls": [{"id": "w", "name": "weather__forecast", "arguments": {"city": "Oslo"}}]},
        {"text": "Done."}
    ]"#;
    let (mut host, failures) = Host::from_config(
        &config,
        &options,
        Arc::new(ScriptedModel::from_json(script).unwrap()),
        Arc::new(ScriptedConsent::deny_all()),
        Arc::new(ScriptedInteraction::new()),
        EventSink::callback(|_| {}),
    )
    .await
    .unwrap();
    person.await.unwrap();
    assert!(failures.is_empty(), "{failures:?}");

    let outcome = host.send("Weather in Oslo").await.unwrap();
    assert_eq!(outcome.text.as_deref(), Some("Done."));
    let answer = host.conversation().messages().iter().find_map(|m| match m {
        Message::ToolResult { call_id, text, .. } if call_id == "w" => Some(text.clone()),
        _ => None,
    });
    assert_eq!(answer.as_deref(), Some("Sunny in Oslo"));
    host.shutdown().await;

    // The first handshake was refused for want of a token; once the token was sent, every
    // request carried it; the person was sent to the authorization server once.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.first(), Some(&false), "{seen:?}");
    let first_token = seen.iter().position(|t| *t).unwrap();
    assert!(seen[first_token..].iter().all(|t| *t), "{seen:?}");
    let opened = std::fs::read_to_string(dir.join("opened")).unwrap();
    assert_eq!(opened.lines().count(), 1, "{opened}");
    assert_eq!(
        auth.seen.lock().unwrap().token.len(),
        1,
        "one token request"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
