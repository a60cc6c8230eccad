//! The Streamable HTTP client starts a new session when the server answers `404` for its
//! session (the session was deleted or expired underneath it): the next request is served on
//! a fresh session without the caller noticing, and concurrent requests share one handshake.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::test_server;
use junction::client::{Client, ClientOptions};
use junction::protocol::tools::CallToolParams;
use junction::transport::http::client::HttpClient;
use junction::transport::http::server::{HttpServer, RunningServer};
use junction::transport::http::SESSION_ID_HEADER;
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
