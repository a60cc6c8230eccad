//! The Streamable HTTP client starts a new session when the server answers `404` for its
//! session (the session was deleted or expired underneath it): the next request is served on
//! a fresh session without the caller noticing, and concurrent requests share one handshake.
//! The client then reports what the new session declared. A `404` to the `GET` resuming a
//! request's broken stream likewise starts a new session and sends the request again.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::server::{prompt, tool, Context, Server};
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::{HttpServer, RunningServer};
use junction::transport::http::SESSION_ID_HEADER;
use junction_test_support::http::{test_server, Nothing, Text};
use tokio::sync::Semaphore;

/// Serves the test server and records each session's id as it starts.
async fn recording_server() -> (RunningServer, Arc<Mutex<Vec<String>>>) {
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let seen = sessions.clone();
    let http = HttpServer::with_control(move |connection, control| {
        if let Some(id) = control.session_id() {
            seen.lock().unwrap().push(id);
        }
        test_server(Arc::new(Semaphore::new(0))).serve(connection);
    });
    (http.bind("127.0.0.1:0").await.unwrap(), sessions)
}

/// Ends `session` on the server, as an operator or an expiry would.
async fn delete(url: &str, session: &str) {
    let status = reqwest::Client::new()
        .delete(url)
        .header(SESSION_ID_HEADER, session)
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success(), "DELETE answered {status}");
}

async fn echo(client: &Client, text: &str) -> String {
    let params = CallToolParams::new("echo").argument("text", text);
    let result = client.call_tool(params, Default::default()).await.unwrap();
    result.content[0].as_text().unwrap().to_owned()
}

#[tokio::test]
async fn a_deleted_session_is_replaced_and_the_request_succeeds() {
    let (server, sessions) = recording_server().await;
    let url = server.url("/mcp");
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("reinit", "1.0.0"))
        .await
        .unwrap();
    assert_eq!(echo(&client, "before").await, "before");
    let first = sessions.lock().unwrap().clone();
    assert_eq!(first.len(), 1, "one session after the handshake");

    delete(&url, &first[0]).await;
    assert_eq!(echo(&client, "after").await, "after");
    let now = sessions.lock().unwrap().clone();
    assert_eq!(now.len(), 2, "a second session was started: {now:?}");
    assert_ne!(now[0], now[1]);

    // The new session is the one in use: deleting it again is survived the same way.
    delete(&url, &now[1]).await;
    assert_eq!(echo(&client, "again").await, "again");
    assert_eq!(sessions.lock().unwrap().len(), 3);
    client.close();
}

#[tokio::test]
async fn concurrent_requests_on_a_deleted_session_share_one_new_session() {
    let (server, sessions) = recording_server().await;
    let url = server.url("/mcp");
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("reinit", "1.0.0"))
        .await
        .unwrap();
    let first = sessions.lock().unwrap()[0].clone();
    delete(&url, &first).await;

    let (a, b, c) = tokio::join!(echo(&client, "a"), echo(&client, "b"), echo(&client, "c"));
    assert_eq!((a.as_str(), b.as_str(), c.as_str()), ("a", "b", "c"));
    let now = sessions.lock().unwrap().clone();
    assert_eq!(now.len(), 2, "one new session for all three: {now:?}");
    client.close();
}

/// Serves sessions that each say which one they are: in their server name, their
/// instructions, and (from the second on) a prompt, so that their capabilities differ.
async fn numbered_server() -> (RunningServer, Arc<Mutex<Vec<String>>>) {
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let seen = sessions.clone();
    let http = HttpServer::with_control(move |connection, control| {
        let number = {
            let mut seen = seen.lock().unwrap();
            seen.push(control.session_id().unwrap_or_default());
            seen.len()
        };
        let mut server = Server::builder(format!("session-{number}"), "1.0.0")
            .instructions(format!("You are talking to session {number}."))
            .tool(tool("echo", |t: Text| async move { t.text }).description("Echoes"));
        if number > 1 {
            server = server.prompt(prompt("greeting", |_| async { "Hello.".to_owned() }));
        }
        server.build().unwrap().serve(connection);
    });
    (http.bind("127.0.0.1:0").await.unwrap(), sessions)
}

#[tokio::test]
async fn the_client_reports_what_the_new_session_declared() {
    let (server, sessions) = numbered_server().await;
    let url = server.url("/mcp");
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("reinit", "1.0.0"))
        .await
        .unwrap();
    assert_eq!(client.server_info().name, "session-1");
    assert_eq!(
        client.instructions().as_deref(),
        Some("You are talking to session 1.")
    );
    assert!(client.server_capabilities().prompts.is_none());

    let first = sessions.lock().unwrap()[0].clone();
    delete(&url, &first).await;
    assert_eq!(echo(&client, "after").await, "after");
    assert_eq!(client.server_info().name, "session-2");
    assert_eq!(
        client.instructions().as_deref(),
        Some("You are talking to session 2.")
    );
    assert!(client.server_capabilities().prompts.is_some());
    // What the new session declares is what the client goes by: its prompt is listed.
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greeting");
    client.close();
}

/// Serves a `fragile` tool whose first call, anywhere, closes its own stream and then
/// deletes its session before answering: the client's `GET` resuming that stream is
/// answered `404`. Later calls answer at once, naming the session that served them.
async fn fragile_server() -> (RunningServer, Arc<Mutex<Vec<String>>>) {
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let seen = sessions.clone();
    let url: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let broken = Arc::new(AtomicBool::new(false));
    let base = url.clone();
    let http = HttpServer::with_control(move |connection, control| {
        let session = control.session_id().unwrap_or_default();
        seen.lock().unwrap().push(session.clone());
        let (url, broken) = (base.clone(), broken.clone());
        let fragile = tool("fragile", move |ctx: Context, _: Nothing| {
            let first = !broken.swap(true, Ordering::SeqCst);
            let closed = first && control.close_stream(ctx.request().id());
            let (url, session) = (url.get().cloned(), session.clone());
            async move {
                if closed {
                    if let Some(url) = url {
                        delete(&url, &session).await;
                    }
                }
                format!("served by {session}")
            }
        });
        Server::builder("fragile", "1.0.0")
            .tool(fragile.description("Breaks its first call's session"))
            .build()
            .unwrap()
            .serve(connection);
    });
    let running = http
        .retry(Duration::from_millis(20))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    url.set(running.url("/mcp")).unwrap();
    (running, sessions)
}

#[tokio::test]
async fn a_404_to_resuming_a_request_stream_sends_the_request_again_on_a_new_session() {
    let (server, sessions) = fragile_server().await;
    let url = server.url("/mcp");
    let connection = HttpClient::new(&url).unwrap().connect();
    let client = Client::connect(connection, ClientOptions::new("reinit", "1.0.0"))
        .await
        .unwrap();
    let params = CallToolParams::new("fragile");
    let result = client.call_tool(params, Default::default()).await.unwrap();
    let text = result.content[0].as_text().unwrap().to_owned();
    let now = sessions.lock().unwrap().clone();
    assert_eq!(now.len(), 2, "a second session was started: {now:?}");
    assert_eq!(text, format!("served by {}", now[1]));
    client.close();
}
