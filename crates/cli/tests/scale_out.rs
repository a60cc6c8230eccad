//! Scale-out: several `junction serve NAME --http ... --redis ...` instances sharing real
//! Redis, behind a real nginx balancing round-robin without stickiness. Every session must
//! work on every instance, a stream must resume on another instance, the deployment must
//! survive a restart and a lost Redis, and instances sharing one PostgreSQL must agree on
//! who got the last copy of a book.

mod cluster;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use cluster::{read_reply, Cluster, Instance, Mcp, Redis, SseReader};
use junction_test_support::auth::{AuthServer, Behaviour};
use junction_test_support::cli;
use junction_test_support::conformance;
use junction_test_support::peers;
use junction_test_support::ports::free_port;
use junction_test_support::postgres::Postgres;
use junction_test_support::process;
use junction_test_support::sdk_clients::{self, Via, NO_FLAGS};
use serde_json::{json, Value};

/// A generous safety net for what should take well under a second.
const SAFETY: Duration = Duration::from_secs(60);

fn text_of(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {response}"))
        .to_owned()
}

const SESSIONS: usize = 100;
const CALLS: u64 = 100;

/// [`SESSIONS`] sessions opened at `url`, then [`CALLS`] searches in each, the sessions at
/// once and each call waiting for the one before. Asserts that every response answers its
/// own request and that every instance answers a query alike; returns the calls per second.
async fn hundred_by_hundred(url: &str) -> f64 {
    let started = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..SESSIONS {
        let mut mcp = Mcp::new();
        mcp.initialize(url, json!({})).await;
        clients.push(mcp);
    }
    let words = ["dune", "history", "garden", "river"];
    let mut tasks = Vec::new();
    for (n, mcp) in clients.into_iter().enumerate() {
        let url = url.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut answers = std::collections::BTreeMap::new();
            for id in 1..=CALLS {
                let word = words[(n + id as usize) % words.len()];
                let response = mcp
                    .request(
                        &url,
                        id,
                        "tools/call",
                        json!({"name": "search", "arguments": {"query": word}}),
                    )
                    .await;
                assert_eq!(
                    response["id"],
                    json!(id),
                    "the response answers its request"
                );
                answers
                    .entry(word)
                    .or_insert_with(BTreeSet::new)
                    .insert(text_of(&response));
            }
            answers
        }));
    }
    let mut everything = std::collections::BTreeMap::new();
    for task in tasks {
        for (word, texts) in task.await.expect("a session's calls") {
            everything
                .entry(word)
                .or_insert_with(BTreeSet::new)
                .extend(texts);
        }
    }
    let elapsed = started.elapsed();
    for (word, texts) in &everything {
        assert_eq!(
            texts.len(),
            1,
            "every instance answers `{word}` alike: {texts:?}"
        );
    }
    SESSIONS as f64 * CALLS as f64 / elapsed.as_secs_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_sessions_of_hundred_calls_through_nginx_are_each_answered_in_kind() {
    let cluster = Cluster::start("library", 3, &[]);
    let rate = hundred_by_hundred(&cluster.nginx.url()).await;
    eprintln!(
        "scale-out: {SESSIONS} sessions x {CALLS} calls through nginx over 3 instances: {rate:.0} calls/s"
    );
}

/// The figures of docs/scale-out.md: the same load through nginx over three instances on
/// Redis (with and without a shared PostgreSQL), and against one instance alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a measurement, not a check: run with --ignored --nocapture"]
async fn calls_per_second_through_nginx_and_against_one_instance() {
    let alone = Instance::start("library", &[]);
    let one = hundred_by_hundred(&alone.url()).await;
    drop(alone);
    let cluster = Cluster::start("library", 3, &[]);
    let three = hundred_by_hundred(&cluster.nginx.url()).await;
    drop(cluster);
    let pg = Postgres::start();
    let cluster = Cluster::start("library", 3, &["--db".to_owned(), pg.database("library")]);
    let shared = hundred_by_hundred(&cluster.nginx.url()).await;
    eprintln!(
        "scale-out figures ({SESSIONS} sessions x {CALLS} searches): one instance alone, no Redis: \
         {one:.0} calls/s; nginx over 3 instances on Redis: {three:.0} calls/s; the same on one \
         PostgreSQL: {shared:.0} calls/s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_restored_on_another_instance_keeps_its_log_level() {
    let cluster = Cluster::start("conformance", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({})).await;
    // At the default level the tool's log messages make its answer an event stream.
    let logged = mcp
        .send(
            &b,
            1,
            "tools/call",
            json!({"name": "test_tool_with_logging"}),
        )
        .await;
    assert_eq!(
        logged.headers()["content-type"],
        "text/event-stream",
        "logs arrive before the result"
    );
    read_reply(logged).await;
    mcp.request(&a, 2, "logging/setLevel", json!({"level": "emergency"}))
        .await;
    let third = Instance::start("conformance", &["--redis".to_owned(), cluster.redis.url()]);
    let quiet = mcp
        .send(
            &third.url(),
            3,
            "tools/call",
            json!({"name": "test_tool_with_logging"}),
        )
        .await;
    assert_eq!(
        quiet.headers()["content-type"],
        "application/json",
        "an instance that restores the session after setLevel logs nothing below emergency"
    );
}

/// The race of the handshake across instances: `notifications/initialized` taken by B and
/// routed to A over pub/sub, the next request sent to A as soon as B answered `202`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_after_notifications_initialized_posted_to_another_instance_is_served() {
    let cluster = Cluster::start("conformance", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    for round in 0..50 {
        let mut mcp = Mcp::new();
        mcp.open(&a, json!({})).await;
        mcp.notify(&b, "notifications/initialized", json!({})).await;
        let listed = mcp.request(&a, 1, "tools/list", json!({})).await;
        assert!(
            listed["result"]["tools"].is_array(),
            "session {round}: the request is served after the handshake: {listed}"
        );
    }
}

/// Reads `stream` up to the first message that `wanted` picks.
async fn next_message(stream: &mut SseReader, wanted: impl Fn(&Value) -> bool) -> Value {
    loop {
        let event = stream.next().await.expect("the message comes");
        if let Ok(message) = serde_json::from_str::<Value>(&event.data) {
            if wanted(&message) {
                return message;
            }
        }
    }
}

/// Reads `stream` up to the first server-to-client request named `method`.
async fn next_request(stream: &mut SseReader, method: &str) -> Value {
    next_message(stream, |m| m["method"] == method).await
}

/// Reads `stream` up to the response to the client's request `id`.
async fn response_to(stream: &mut SseReader, id: u64) -> Value {
    next_message(stream, |m| {
        m["id"] == json!(id) && m.get("method").is_none()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sampling_response_posted_to_another_instance_reaches_the_waiting_tool() {
    let cluster = Cluster::start("conformance", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({"sampling": {}})).await;
    let response = mcp
        .send(
            &a,
            1,
            "tools/call",
            json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
        )
        .await;
    let mut stream = SseReader::new(response);
    let request = next_request(&mut stream, "sampling/createMessage").await;
    mcp.respond(
        &b,
        &request["id"],
        json!({"role": "assistant", "content": {"type": "text", "text": "from B"},
               "model": "test", "stopReason": "endTurn"}),
    )
    .await;
    let result = response_to(&mut stream, 1).await;
    assert_eq!(text_of(&result), "LLM response: from B");
}

/// Two instances serving one session each ask the client for a sample at the same time:
/// the two requests have different ids (each instance numbers its own, and would otherwise
/// both start at 1), so each answer, posted to the other instance, reaches its own tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_requests_of_one_session_from_two_instances_never_share_an_id() {
    let cluster = Cluster::start("conformance", 2, &[]);
    let urls = [cluster.instances[0].url(), cluster.instances[1].url()];
    let mut mcp = Mcp::new();
    mcp.initialize(&urls[0], json!({"sampling": {}})).await;
    let mut streams = Vec::new();
    let mut requests = Vec::new();
    for (n, url) in urls.iter().enumerate() {
        let call = json!({"name": "test_sampling", "arguments": {"prompt": format!("ask {n}")}});
        let response = mcp.send(url, n as u64 + 1, "tools/call", call).await;
        let mut stream = SseReader::new(response);
        requests.push(next_request(&mut stream, "sampling/createMessage").await);
        streams.push(stream);
    }
    assert_ne!(
        requests[0]["id"], requests[1]["id"],
        "one session, two instances: {requests:?}"
    );
    for (n, request) in requests.iter().enumerate() {
        let other = &urls[1 - n];
        mcp.respond(
            other,
            &request["id"],
            json!({"role": "assistant", "content": {"type": "text", "text": format!("answer {n}")},
                   "model": "test", "stopReason": "endTurn"}),
        )
        .await;
    }
    for (n, stream) in streams.iter_mut().enumerate() {
        let result = response_to(stream, n as u64 + 1).await;
        assert_eq!(text_of(&result), format!("LLM response: answer {n}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_broken_by_sigkill_resumes_through_nginx_on_another_instance() {
    let mut cluster = Cluster::start("conformance", 3, &[]);
    let a = cluster.instances[0].url();
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({"sampling": {}})).await;
    let response = mcp
        .send(
            &a,
            7,
            "tools/call",
            json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
        )
        .await;
    let mut stream = SseReader::new(response);
    let priming = stream.next().await.expect("the priming event");
    let priming_id = priming.id.expect("the priming event has an id");
    let sampling = stream.next().await.expect("the sampling request");
    let sampling_id = sampling.id.clone().expect("events have ids");
    // The tool waits for the client: kill its instance while the stream is open.
    cluster.instances[0].kill();
    let killed = Instant::now();
    assert!(stream.next().await.is_none(), "the stream broke");

    let url = cluster.nginx.url();
    let resumed = mcp.resume(&url, &priming_id).await;
    assert_eq!(resumed.status(), 200, "another instance resumes the stream");
    let mut resumed = SseReader::new(resumed);
    let again = resumed.next().await.expect("the missed event is replayed");
    let latency = killed.elapsed();
    assert_eq!(
        again, sampling,
        "the event after Last-Event-ID, with its id, exactly once"
    );
    let end = resumed.next().await.expect("the request fails cleanly");
    let end: Value = serde_json::from_str(&end.data).expect("a JSON-RPC message");
    assert_eq!(end["id"], json!(7), "the error answers the request");
    assert_eq!(end["error"]["code"], json!(-32603), "{end}");
    assert!(resumed.next().await.is_none(), "and the stream ends");

    // Resuming after the replayed event gives only the failure.
    let after = mcp.resume(&url, &sampling_id).await;
    let mut after = SseReader::new(after);
    let only: Value = serde_json::from_str(&after.next().await.expect("an event").data).unwrap();
    assert_eq!(only["id"], json!(7));
    assert!(only["error"].is_object());
    eprintln!(
        "scale-out: first replayed event {} ms after the SIGKILL",
        latency.as_millis()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_racing_for_the_last_copy_on_three_instances_on_one_postgres_have_one_winner() {
    const STARS: &str = "9780000000035"; // Stars Over the Desert: one copy
    let pg = Postgres::start();
    let db = pg.database("library");
    let cluster = Cluster::start("library", 3, &["--db".to_owned(), db]);
    let url = cluster.nginx.url();
    let mut clients = Vec::new();
    for _ in 0..6 {
        let mut mcp = Mcp::new();
        mcp.initialize(&url, json!({})).await;
        clients.push(mcp);
    }
    let checkout = json!({"name": "checkout", "arguments": {"isbn": STARS}});
    // Each client on its own instance directly, so that the race is between instances.
    let tries: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(n, mcp)| {
            let (mcp, at, checkout) = (
                mcp.clone(),
                cluster.instances[n % 3].url(),
                checkout.clone(),
            );
            tokio::spawn(async move { mcp.request(&at, 1, "tools/call", checkout).await })
        })
        .collect();
    let mut winners = 0;
    for t in tries {
        let reply = tokio::time::timeout(SAFETY, t)
            .await
            .expect("answered")
            .unwrap();
        let text = text_of(&reply);
        if reply["result"]["isError"] == json!(true) {
            assert!(
                text.starts_with("No copies of 'Stars Over the Desert' are available")
                    || text.starts_with("You already have 'Stars Over the Desert' checked out"),
                "{text}"
            );
        } else {
            assert!(
                text.starts_with("Checked out 'Stars Over the Desert'"),
                "{text}"
            );
            winners += 1;
        }
    }
    assert_eq!(winners, 1, "exactly one checkout of the last copy succeeds");
    // Every instance reads the same shelf.
    for instance in &cluster.instances {
        let found = clients[0]
            .request(
                &instance.url(),
                2,
                "tools/call",
                json!({"name": "search", "arguments": {"query": "stars"}}),
            )
            .await;
        assert_eq!(
            found["result"]["structuredContent"]["results"][0]["available"],
            json!(0),
            "{found}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_event_ttl_from_the_command_line_bounds_how_long_events_stay() {
    let redis = Redis::start();
    let flags = [
        "--redis",
        &redis.url(),
        "--sse-always",
        "--redis-event-ttl",
        "5",
    ];
    let instance = Instance::start("library", &flags.map(str::to_owned));
    let mut mcp = Mcp::new();
    mcp.initialize(&instance.url(), json!({})).await;
    let search = json!({"name": "search", "arguments": {"query": "river"}});
    mcp.request(&instance.url(), 1, "tools/call", search).await;
    let session = mcp.session.clone().expect("a session");
    let redis_cli = |args: &[&str]| redis.cli(args);
    // Events are written through by a task of their own: wait for the stream's key.
    let pattern = format!("junction:s:{session}:ev:*");
    let deadline = Instant::now() + SAFETY;
    let key = loop {
        let keys = redis_cli(&["--scan", "--pattern", &pattern]);
        if let Some(key) = keys.lines().next() {
            break key.to_owned();
        }
        assert!(Instant::now() < deadline, "no stream was written to Redis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let ttl: i64 = redis_cli(&["ttl", &key]).parse().expect("a ttl");
    assert!((1..=5).contains(&ttl), "{key} expires in {ttl} s");
}

#[test]
fn postgres_unreachable_at_start_is_a_clear_error() {
    let port = free_port();
    let out = std::process::Command::new(cli::junction_exe())
        .args(["serve", "library", "--http", "127.0.0.1:0", "--db"])
        .arg(format!("postgres://me:secret@127.0.0.1:{port}/library"))
        .output()
        .expect("junction runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "the `library` server cannot start: cannot use the database postgres://me@127.0.0.1:{port}/library:"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("secret"),
        "the password is not shown: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_idle_through_an_instance_restart_keep_working() {
    let mut cluster = Cluster::start("library", 3, &[]);
    let url = cluster.nginx.url();
    let mut clients = Vec::new();
    for _ in 0..6 {
        let mut mcp = Mcp::new();
        mcp.initialize(&url, json!({})).await;
        mcp.request(&url, 1, "ping", json!({})).await;
        clients.push(mcp);
    }
    for instance in &mut cluster.instances {
        instance.terminate();
        instance.restart();
    }
    for mcp in &clients {
        for id in 2..8 {
            let response = mcp.request(&url, id, "ping", json!({})).await;
            assert_eq!(response["id"], json!(id));
            assert!(response["result"].is_object(), "{response}");
        }
    }
}

/// Reads `stream` until `count` notifications named `method` came, then (the session
/// ended through B, whose end follows on the routing channel whatever B published before)
/// until the stream ends; returns every such notification's `params`, in order.
async fn heard(
    mcp: &Mcp,
    b: &str,
    stream: &mut SseReader,
    method: &str,
    count: usize,
) -> Vec<Value> {
    let mut heard = Vec::new();
    while heard.len() < count {
        let message = tokio::time::timeout(SAFETY, next_message(stream, |m| m["method"] == method))
            .await
            .expect("the notification comes");
        heard.push(message["params"].clone());
    }
    assert_eq!(mcp.delete(b).await, 200);
    while let Some(event) = tokio::time::timeout(SAFETY, stream.next())
        .await
        .expect("the stream ends with its session")
    {
        if let Ok(message) = serde_json::from_str::<Value>(&event.data) {
            if message["method"] == method {
                heard.push(message["params"].clone());
            }
        }
    }
    heard
}

/// Changes made through instance B reach a session subscribed on instance A, which holds
/// its standalone stream and which B never served before, once each; so does the change
/// of a resource it subscribed to through B (whose copy of the session holds no stream).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_through_one_instance_reaches_the_subscribers_on_another_once() {
    let pg = Postgres::start();
    let db = pg.database("tasks");
    let cluster = Cluster::start("tasks", 2, &["--db".to_owned(), db]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut listener = Mcp::new();
    listener.initialize(&a, json!({})).await;
    listener
        .request(&a, 1, "resources/subscribe", json!({"uri": "tasks://open"}))
        .await;
    let mut stream = listener.listen(&a).await;
    let mut editor = Mcp::new();
    editor.initialize(&b, json!({})).await;
    // Task 2 is a seeded open task ("Renew passport"); subscribed through B, so only B's
    // copy of the session (which holds no stream) took that subscription.
    let task = "tasks://2";
    listener
        .request(&b, 2, "resources/subscribe", json!({"uri": task}))
        .await;
    let add = json!({"name": "add_task", "arguments": {"title": "call the plumber"}});
    editor.request(&b, 1, "tools/call", add).await;
    let completed = editor
        .request(
            &b,
            2,
            "tools/call",
            json!({"name": "complete_task", "arguments": {"id": 2}}),
        )
        .await;
    assert!(
        text_of(&completed).starts_with("Completed task 2"),
        "{completed}"
    );
    let updated = "notifications/resources/updated";
    let uris: Vec<Value> = heard(&listener, &b, &mut stream, updated, 3)
        .await
        .into_iter()
        .map(|params| params["uri"].clone())
        .collect();
    assert_eq!(
        uris,
        [json!("tasks://open"), json!("tasks://open"), json!(task)],
        "each change once, in order (the new task's own update unheard: not subscribed)"
    );
}

/// A 2026-07-28 client of `url` (no session).
async fn client_2026(url: &str) -> junction::client::Client {
    use junction::client::{Client, ClientOptions};
    use junction::protocol::ProtocolVersion;
    use junction::transport::http::client::HttpClient;
    let (connection, _finished) = HttpClient::new(url).expect("an HTTP client").start();
    let options = ClientOptions::new("scale-test", "1").version(ProtocolVersion::V2026_07_28);
    Client::connect(connection, options)
        .await
        .expect("connects on 2026-07-28")
}

/// Instance B serves only 2026-07-28 requests (no session, so it never serves a shared
/// one): the changes it makes still reach a session subscribed on A, which holds its
/// standalone stream, and a 2026-07-28 `subscriptions/listen` held by A, once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_by_an_instance_that_served_no_session_reach_sessions_and_listens_on_another()
{
    use junction::client::ServerNotification;
    use junction::protocol::stateless::SubscriptionFilter;
    use junction::protocol::tools::CallToolParams;

    let pg = Postgres::start();
    let db = pg.database("tasks");
    let cluster = Cluster::start("tasks", 2, &["--db".to_owned(), db]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let open = "tasks://open";
    let task = "tasks://2";
    let mut session = Mcp::new();
    session.initialize(&a, json!({})).await;
    session
        .request(&a, 1, "resources/subscribe", json!({"uri": open}))
        .await;
    let mut stream = session.listen(&a).await;
    let listener = client_2026(&a).await;
    let mut notifications = listener
        .take_notifications()
        .expect("the notification stream");
    let filter = SubscriptionFilter::default().resource_subscriptions([open, task]);
    let listening = listener
        .listen(filter)
        .await
        .expect("the listen is acknowledged");

    let editor = client_2026(&b).await;
    let add = CallToolParams::new("add_task").argument("title", "call the plumber");
    editor
        .call_tool(add, Default::default())
        .await
        .expect("add_task is answered");
    // Task 2 is a seeded open task: completing it updates the open list, then the task.
    let complete = CallToolParams::new("complete_task").argument("id", 2);
    let completed = editor
        .call_tool(complete, Default::default())
        .await
        .expect("complete_task is answered");
    let text = completed.content[0].as_text().unwrap_or_default();
    assert!(text.starts_with("Completed task 2"), "{text}");

    let mut listened = Vec::new();
    while listened.last().map(String::as_str) != Some(task) {
        let notification = tokio::time::timeout(SAFETY, notifications.recv())
            .await
            .expect("the listen hears the changes made on B")
            .expect("the notification stream stays open");
        if let ServerNotification::ResourceUpdated(params) = notification {
            listened.push(params.uri);
        }
    }
    assert_eq!(
        listened,
        [open, open, task],
        "the listen hears each change once, in order"
    );
    listening.cancel();

    let uris: Vec<Value> = heard(
        &session,
        &b,
        &mut stream,
        "notifications/resources/updated",
        2,
    )
    .await
    .into_iter()
    .map(|params| params["uri"].clone())
    .collect();
    assert_eq!(
        uris,
        [json!(open), json!(open)],
        "the session hears each change once"
    );
}

/// The lists are each instance's own (a tool is code, which Junction cannot carry to another
/// process), so the application makes a list change on every instance (here a call of
/// `test_trigger_tool_change` through each), and each instance announces the change it made
/// to the sessions whose standalone stream it holds and to its listens: every session and
/// every listen hears it once, and every instance lists the new tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_made_on_every_instance_is_announced_once_to_each_session_and_listed_everywhere(
) {
    use junction::client::ServerNotification;
    use junction::protocol::stateless::SubscriptionFilter;

    let cluster = Cluster::start("conformance", 2, &[]);
    let urls = [cluster.instances[0].url(), cluster.instances[1].url()];
    let mut sessions = Vec::new();
    for url in &urls {
        let mut mcp = Mcp::new();
        mcp.initialize(url, json!({})).await;
        let stream = mcp.listen(url).await;
        sessions.push((mcp, stream));
    }
    let listener = client_2026(&urls[0]).await;
    let mut notifications = listener
        .take_notifications()
        .expect("the notification stream");
    let filter = SubscriptionFilter::default().tools_list_changed(true);
    let listening = listener
        .listen(filter)
        .await
        .expect("the listen is acknowledged");

    let mut editor = Mcp::new();
    editor.initialize(&urls[0], json!({})).await;
    for (id, url) in urls.iter().enumerate() {
        let added = editor
            .request(
                url,
                id as u64 + 1,
                "tools/call",
                json!({"name": "test_trigger_tool_change"}),
            )
            .await;
        assert_eq!(text_of(&added), "Added test_dynamic_tool", "{url}");
    }
    for (id, url) in urls.iter().enumerate() {
        let list = editor
            .request(url, id as u64 + 10, "tools/list", json!({}))
            .await;
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .expect("a tool list")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"test_dynamic_tool"),
            "{url} lists it: {names:?}"
        );
    }

    let heard_by_listen = tokio::time::timeout(SAFETY, notifications.recv())
        .await
        .expect("the listen hears the change")
        .expect("the notification stream stays open");
    assert!(
        matches!(heard_by_listen, ServerNotification::ToolListChanged(_)),
        "{heard_by_listen:?}"
    );
    for (n, (mcp, stream)) in sessions.iter_mut().enumerate() {
        let told = heard(mcp, &urls[1], stream, "notifications/tools/list_changed", 1).await;
        assert_eq!(told.len(), 1, "session {n} hears the change once: {told:?}");
    }
    listening.cancel();
    assert!(
        notifications.try_recv().is_err(),
        "the listen heard the change once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_session_is_gone_on_every_instance() {
    let cluster = Cluster::start("library", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({})).await;
    mcp.request(&b, 1, "ping", json!({})).await;
    assert_eq!(mcp.delete(&a).await, 200);
    let gone = mcp.send(&a, 2, "ping", json!({})).await;
    assert_eq!(gone.status(), 404, "{a}");
    // B held a copy: it ends it once the routing channel tells it, in moments.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = mcp.send(&b, 3, "ping", json!({})).await.status();
        if status == 404 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{b} still serves the deleted session: {status}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn redis_unreachable_at_start_is_a_clear_error() {
    let url = format!("redis://127.0.0.1:{}", free_port());
    let run = cli::junction(&["serve", "library", "--http", "127.0.0.1:0", "--redis", &url]);
    assert_ne!(run.code, 0, "junction serve refuses to start");
    assert!(
        run.stderr.contains(&format!("cannot use Redis at {url}")),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "nothing is served: {}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_redis_degrades_to_local_sessions_and_recovers_when_it_returns() {
    let mut redis = Redis::start();
    let flags = ["--redis".to_owned(), redis.url()];
    let a = Instance::start("library", &flags);
    let b = Instance::start("library", &flags);
    let mut held = Mcp::new();
    held.initialize(&a.url(), json!({})).await;

    redis.kill();
    let local = held.request(&a.url(), 1, "ping", json!({})).await;
    assert!(
        local["result"].is_object(),
        "the instance holding a session serves it without Redis"
    );
    let elsewhere = held.send(&b.url(), 2, "ping", json!({})).await;
    assert_eq!(
        elsewhere.status(),
        503,
        "another instance cannot restore it and says so"
    );

    redis.restart();
    let deadline = Instant::now() + SAFETY;
    loop {
        let mut fresh = Mcp::new();
        fresh.initialize(&a.url(), json!({})).await;
        let response = fresh.send(&b.url(), 1, "ping", json!({})).await;
        if response.status() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "sessions are shared again once Redis is back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn the_conformance_suite_passes_through_nginx_over_three_instances() {
    /// How many scenarios `--suite all` runs in 0.1.16.
    const SCENARIOS: usize = 32;
    let cluster = Cluster::start("conformance", 3, &[]);
    // The suite's DNS-rebinding check needs a loopback name it can compare.
    let url = format!("http://localhost:{}/mcp", cluster.nginx.port);
    let out = cluster::scratch("conformance-scale");
    let run = conformance::server_suite(&url, &out);
    let mut checks = std::collections::BTreeMap::new();
    conformance::checks_by_scenario(&out, "", &mut checks);
    let _ = std::fs::remove_dir_all(&out);
    let with = |status: &str| -> Vec<String> {
        checks
            .iter()
            .flat_map(|(scenario, list)| {
                list.iter().filter(|c| c["status"] == status).map(move |c| {
                    format!(
                        "{scenario} / {}: {} {}",
                        c["id"], c["errorMessage"], c["details"]
                    )
                })
            })
            .collect()
    };
    let failures = with("FAILURE");
    assert!(
        failures.is_empty(),
        "failing checks:\n{}\n\nsuite output:\n{}{}",
        failures.join("\n"),
        run.stdout,
        run.stderr
    );
    assert_eq!(
        checks.len(),
        SCENARIOS,
        "every scenario ran\n{}{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    eprintln!(
        "scale-out conformance: {} scenarios, {} checks passed, {} warnings",
        checks.len(),
        with("SUCCESS").len(),
        with("WARNING").len()
    );
}

/// With `--sse-always` the `initialize` result is an event stream, opened before the result
/// exists: the session's record must still reach Redis before the client reads the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_with_sse_always_is_served_by_every_instance() {
    let cluster = Cluster::start("library", 3, &["--sse-always".to_owned()]);
    for round in 0..5 {
        let mut mcp = Mcp::new();
        let init = mcp.initialize(&cluster.instances[0].url(), json!({})).await;
        assert_eq!(
            init["result"]["protocolVersion"],
            cluster::VERSION,
            "{init}"
        );
        for (n, instance) in cluster.instances.iter().enumerate() {
            let id = n as u64 + 1;
            let listed = mcp.send(&instance.url(), id, "tools/list", json!({})).await;
            assert_eq!(
                listed.status(),
                200,
                "session {round}: instance {n} serves a session opened on instance 0"
            );
            let listed = read_reply(listed).await;
            assert!(listed["result"]["tools"].is_array(), "{listed}");
        }
        let url = cluster.nginx.url();
        for id in 10..16 {
            let found = mcp
                .request(
                    &url,
                    id,
                    "tools/call",
                    json!({"name": "search", "arguments": {"query": "river"}}),
                )
                .await;
            assert_eq!(found["id"], json!(id), "{found}");
        }
    }
}

/// The TypeScript and Python SDK clients, through nginx over three instances of `junction
/// serve conformance`, get every fixture exactly as from one server: their requests, their
/// answers to sampling and elicitation and their stream land on whichever instance nginx
/// picks.
#[test]
fn the_sdk_clients_get_every_conformance_fixture_through_nginx_over_three_instances() {
    let cluster = Cluster::start("conformance", 3, &[]);
    let url = cluster.nginx.url();
    let clients = [
        ("ts-client", "JUNCTION_NODE", "JUNCTION_TS_CLIENT"),
        ("py-client", "JUNCTION_PYTHON", "JUNCTION_PY_CLIENT"),
    ];
    for (name, program, script) in clients {
        let (program, script) = (peers::peer(program), peers::peer(script));
        let run = process::run(
            &program,
            &[&script, "--all-conformance", "--answers", "suite", &url],
        );
        sdk_clients::check_sdk_client_output(name, Via::Http(NO_FLAGS), &run);
    }
}

/// The hardening issue's attack on the event store, made on the shared one: answers piling up
/// in one session. Redis keeps the session's events within its byte bound over all its
/// streams (the oldest go, a stream left empty is deleted), the newest answer still resumes
/// on another instance, and resuming a stream Redis dropped ends at once instead of waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_keeps_the_events_of_a_session_within_its_byte_bound() {
    const BOUND: usize = 4096;
    const CALLS: u64 = 30;
    let flags = ["--sse-always", "--redis-session-bytes", &BOUND.to_string()];
    let cluster = Cluster::start("library", 2, &flags.map(str::to_owned));
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({})).await;
    let session = mcp.session.clone().expect("a session");
    let mut primings = Vec::new();
    let mut answered = 0;
    for id in 1..=CALLS {
        let search = json!({"name": "search", "arguments": {"query": "river"}});
        let mut stream = SseReader::new(mcp.send(&a, id, "tools/call", search).await);
        let priming = stream.next().await.expect("the priming event");
        primings.push(priming.id.expect("the priming event has an id"));
        while let Some(event) = stream.next().await {
            answered += event.data.len();
        }
    }
    assert!(
        answered > 2 * BOUND,
        "the answers ({answered} bytes) outgrow the bound"
    );

    // Each event was in Redis before the client got it: what Redis holds is final here.
    let redis = &cluster.redis;
    let key = format!("junction:s:{session}");
    let mut stored = 0;
    let mut events = 0;
    for stream in redis.cli(&["smembers", &format!("{key}:streams")]).lines() {
        let entries = redis.cli(&["xrange", &format!("{key}:ev:{stream}"), "-", "+"]);
        let lines: Vec<&str> = entries.lines().collect();
        for entry in lines.chunks(3) {
            assert_eq!(entry.len(), 3, "an entry is an id, the field d, the data");
            stored += entry[2].len();
            events += 1;
        }
    }
    assert!(
        0 < stored && stored <= BOUND,
        "Redis keeps {stored} bytes of events for the session"
    );
    let counted = redis.cli(&["get", &format!("{key}:evb")]);
    assert_eq!(counted, stored.to_string(), "the session's byte count");
    let indexed = redis.cli(&["llen", &format!("{key}:evi")]);
    assert_eq!(indexed, events.to_string(), "the session's event index");
    let pattern = format!("{key}:ev:*");
    let keys = redis
        .cli(&["--scan", "--pattern", &pattern])
        .lines()
        .count();
    assert!(
        keys < CALLS as usize / 2,
        "the streams left empty are deleted: {keys} remain"
    );

    // The newest answer resumes on the other instance; the oldest stream is gone there.
    let last = primings.last().expect("a priming id");
    let mut resumed = SseReader::new(mcp.resume(&b, last).await);
    let answer = resumed.next().await.expect("the last answer is replayed");
    let answer: Value = serde_json::from_str(&answer.data).expect("a JSON-RPC message");
    assert_eq!(answer["id"], json!(CALLS), "{answer}");
    let dropped = mcp.resume(&b, &primings[0]).await;
    assert_eq!(dropped.status(), 200);
    assert!(
        SseReader::new(dropped).next().await.is_none(),
        "a dropped stream ends at once, with nothing replayed"
    );
}

/// `--max-sessions` bounds the sessions of all the instances sharing Redis, not only each
/// instance's: a new session beyond it ends the one idle the longest on every instance (its
/// client gets 404 and, as the specification says, initializes again), and Redis holds no
/// more records than the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_holds_over_all_instances_sharing_redis() {
    const CAP: usize = 4;
    const OPENED: usize = 7;
    let flags = ["--max-sessions".to_owned(), CAP.to_string()];
    let cluster = Cluster::start("library", 2, &flags);
    let urls = [cluster.instances[0].url(), cluster.instances[1].url()];
    let mut clients = Vec::new();
    for n in 0..OPENED {
        let mut mcp = Mcp::new();
        mcp.initialize(&urls[n % 2], json!({})).await;
        clients.push(mcp);
    }
    let redis = &cluster.redis;
    assert_eq!(redis.cli(&["zcard", "junction:live"]), CAP.to_string());
    let records = redis.cli(&["--scan", "--pattern", "junction:s:*"]);
    let records = records.lines().filter(|k| k.matches(':').count() == 2);
    assert_eq!(records.count(), CAP, "session records in Redis");

    let (ended, live) = clients.split_at(OPENED - CAP);
    for (n, mcp) in ended.iter().enumerate() {
        for url in &urls {
            // The instance holding it learns of the end through the routing channel.
            let deadline = Instant::now() + SAFETY;
            while mcp.send(url, 1, "ping", json!({})).await.status() != 404 {
                assert!(
                    Instant::now() < deadline,
                    "session {n} still served at {url}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    for (n, mcp) in live.iter().enumerate() {
        for (id, url) in urls.iter().enumerate() {
            let response = mcp.send(url, id as u64 + 2, "ping", json!({})).await;
            assert_eq!(response.status(), 200, "session {n} at {url}");
        }
    }
}

/// How many sessions Redis holds busy: scored by a lease that ends after Redis' clock.
fn busy_in_redis(redis: &Redis) -> usize {
    const COUNT: &str = "local t = redis.call('TIME') \
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) \
        return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')";
    let count = redis.cli(&["eval", COUNT, "1", "junction:live"]);
    count.parse().unwrap_or_else(|_| panic!("a count: {count}"))
}

/// `initialize` without a session: the raw answer.
async fn initialize_at(url: &str) -> reqwest::Response {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "scale-test", "version": "1"}});
    Mcp::new().send(url, 0, "initialize", params).await
}

/// The cap over all instances, when every live session is busy (here a tool waiting for the
/// client's sampling answer, on each of two instances), refuses a new session with `503` and
/// `Retry-After` on every instance, as one instance alone does, instead of ending a session
/// in the middle of its request; once the requests are answered, a new session is admitted
/// (after Retry-After) and the cap still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_over_all_instances_answers_503_when_every_session_is_busy() {
    let flags = ["--max-sessions".to_owned(), "2".to_owned()];
    let cluster = Cluster::start("conformance", 2, &flags);
    let urls = [cluster.instances[0].url(), cluster.instances[1].url()];
    let mut waiting = Vec::new();
    for url in &urls {
        let mut mcp = Mcp::new();
        mcp.initialize(url, json!({"sampling": {}})).await;
        let call = json!({"name": "test_sampling", "arguments": {"prompt": "hi"}});
        let mut stream = SseReader::new(mcp.send(url, 1, "tools/call", call).await);
        let request = next_request(&mut stream, "sampling/createMessage").await;
        waiting.push((mcp, url, stream, request));
    }
    let deadline = Instant::now() + SAFETY;
    while busy_in_redis(&cluster.redis) < 2 {
        assert!(
            Instant::now() < deadline,
            "Redis never marked the two sessions busy"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for url in &urls {
        let refused = initialize_at(url).await;
        assert_eq!(refused.status(), 503, "{url}");
        assert_eq!(
            refused
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok()),
            Some("1"),
            "{url}"
        );
    }
    for (mcp, url, stream, request) in &mut waiting {
        mcp.respond(
            url,
            &request["id"],
            json!({"role": "assistant", "content": {"type": "text", "text": "still here"},
                   "model": "test", "stopReason": "endTurn"}),
        )
        .await;
        let result = response_to(stream, 1).await;
        assert_eq!(text_of(&result), "LLM response: still here", "{url}");
    }
    let deadline = Instant::now() + SAFETY;
    loop {
        let response = initialize_at(&urls[0]).await;
        if response.status() == 200 {
            break;
        }
        assert_eq!(response.status(), 503);
        assert!(Instant::now() < deadline, "a new session is never admitted");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert_eq!(cluster.redis.cli(&["zcard", "junction:live"]), "2");
}

/// A legacy HTTP+SSE session (`GET /sse`), whose stream instance A holds, takes its
/// `POST /message` on every instance, in the order the client sent them (here
/// `notifications/initialized` on A, then at once `tools/list` on B, which the server
/// answers only after the handshake): each instance routes the messages to the holder of
/// the stream. Once the stream is closed, B answers `404`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_sse_session_takes_its_messages_on_every_instance_in_order() {
    let cluster = Cluster::start("conformance", 2, &[]);
    let bases: Vec<String> = cluster
        .instances
        .iter()
        .map(|i| i.url().trim_end_matches("/mcp").to_owned())
        .collect();
    let http = reqwest::Client::new();
    let response = http
        .get(format!("{}/sse", bases[0]))
        .header("Accept", "text/event-stream")
        .send()
        .await
        .expect("GET /sse sent");
    assert_eq!(response.status(), 200);
    let mut stream = SseReader::new(response);
    let endpoint = stream.next().await.expect("the endpoint event").data;
    assert!(endpoint.starts_with("/message?sessionId="), "{endpoint}");
    let post = |instance: usize, body: Value| {
        let request = http
            .post(format!("{}{endpoint}", bases[instance]))
            .header("Content-Type", "application/json")
            .body(body.to_string());
        async move { request.send().await.expect("POST sent").status() }
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "scale-test", "version": "1"}}});
    assert_eq!(post(1, initialize).await, 202);
    let initialized = response_to(&mut stream, 1).await;
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(0, notification).await, 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(1, list).await, 202);
    let listed = response_to(&mut stream, 2).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "test_simple_text"}});
    assert_eq!(post(0, call).await, 202);
    let called = response_to(&mut stream, 3).await;
    assert!(called["result"]["content"].is_array(), "{called}");

    drop(stream);
    let deadline = Instant::now() + SAFETY;
    loop {
        let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
        let status = post(1, ping).await;
        if status == 404 {
            break;
        }
        assert_eq!(status, 202);
        assert!(
            Instant::now() < deadline,
            "the closed session is still taken on B"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Issue 11's rule across instances: a session id presented with another subject's token is
/// refused by every instance, whether it holds the session (opened there, or restored) or
/// only finds it in Redis, for requests, notifications, resumptions and DELETE.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn a_session_stays_bound_to_its_subject_on_every_instance() {
    let auth = AuthServer::start(Behaviour::default()).await;
    let audience = "http://127.0.0.1/mcp";
    let flags = ["--auth-issuer", &auth.url, "--auth-audience", audience];
    let cluster = Cluster::start("library", 2, &flags.map(str::to_owned));
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut alice = Mcp::new();
    alice.token = Some(auth.sign(&auth.claims("alice", audience, "")));
    alice.initialize(&a, json!({})).await;
    let mallory = Mcp {
        session: alice.session.clone(),
        token: Some(auth.sign(&auth.claims("mallory", audience, ""))),
        ..Mcp::new()
    };
    let refused = |url: &str| {
        let (url, mallory) = (url.to_owned(), &mallory);
        async move {
            let request = mallory.send(&url, 1, "tools/list", json!({})).await;
            assert_eq!(request.status(), 403, "a request at {url}");
            let cancelled = json!({"requestId": 1});
            let notified = mallory
                .notify_status(&url, "notifications/cancelled", cancelled)
                .await;
            assert_eq!(notified, 403, "a notification at {url}");
            let resumed = mallory.resume(&url, "1-0").await;
            assert_eq!(resumed.status(), 403, "a resumption at {url}");
            assert_eq!(mallory.delete(&url).await, 403, "DELETE at {url}");
        }
    };
    // B has never seen the session: it finds it in Redis only.
    refused(&b).await;
    // A opened it; then B holds a copy restored for its owner.
    refused(&a).await;
    let listed = alice.request(&b, 2, "tools/list", json!({})).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    refused(&b).await;
    for (id, url) in [(3, &a), (4, &b)] {
        let pong = alice.request(url, id, "ping", json!({})).await;
        assert!(
            pong["result"].is_object(),
            "the owner's session lives on: {pong}"
        );
    }
}

/// Revision 2026-07-28 needs no session, but the retry of a multi-round request may reach
/// another instance than its first round: with `--state-key-file` every instance verifies
/// the `requestState` another one sealed. nginx alternates the two instances, so each call's
/// retry lands on the instance that did not answer its first round (with a key per process
/// each retry would be refused as "not produced by this server").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_state_sealed_by_one_instance_verifies_on_another_with_a_shared_key() {
    use junction::client::{Client, ClientOptions, Elicitation};
    use junction::protocol::elicitation::{ElicitResult, ElicitValue};
    use junction::protocol::tools::CallToolParams;
    use junction::protocol::ProtocolVersion;
    use junction::transport::http::client::HttpClient;

    let dir = cluster::scratch("state-key");
    let key = dir.join("state.key");
    std::fs::write(&key, [7u8; 32]).expect("the key file is written");
    let flags = ["--state-key-file".to_owned(), key.display().to_string()];
    let cluster = Cluster::start("conformance", 2, &flags);
    let (connection, _finished) = HttpClient::new(cluster.nginx.url())
        .expect("an HTTP client")
        .start();
    let options = ClientOptions::new("scale-test", "1")
        .version(ProtocolVersion::V2026_07_28)
        .elicitation(Elicitation::form(|_, _| async {
            let ok = ElicitValue::from("yes");
            Ok(ElicitResult::accept([("ok".to_owned(), ok)].into()))
        }));
    let client = Client::connect(connection, options)
        .await
        .expect("connects on 2026-07-28");
    for round in 0..4 {
        let params = CallToolParams::new("test_input_required_result_request_state");
        let result = client
            .call_tool(params, Default::default())
            .await
            .expect("the call is answered");
        let text = result.content[0].as_text().unwrap_or_default();
        assert!(text.starts_with("state-ok"), "call {round}: {text}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A task-augmented `tools/call` of the conformance server's `slow_compute` through `url`:
/// the new task's id.
async fn start_task(mcp: &Mcp, url: &str, id: u64, seconds: u64) -> String {
    let created = mcp
        .request(
            url,
            id,
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": seconds}, "task": {"ttl": 60_000}}),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "a task is created: {created}");
    task["taskId"].as_str().expect("a task id").to_owned()
}

/// 2025-11-25 tasks behind a load balancer: a task created through instance A is got,
/// listed, collected and cancelled through instance B (and through C, started after it),
/// while its handler runs on A; another session sees none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_through_one_instance_is_got_listed_collected_and_cancelled_through_another()
{
    let cluster = Cluster::start("conformance", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({})).await;
    let done = start_task(&mcp, &a, 1, 1).await;

    let got = mcp
        .request(&b, 2, "tasks/get", json!({"taskId": done}))
        .await;
    assert_eq!(
        got["result"]["taskId"],
        json!(done),
        "B finds A's task: {got}"
    );
    let listed = mcp.request(&b, 3, "tasks/list", json!({})).await;
    let ids: Vec<&Value> = listed["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"))
        .iter()
        .map(|t| &t["taskId"])
        .collect();
    assert_eq!(ids, [&json!(done)], "B lists A's task: {listed}");

    // A new instance starting while the task runs leaves it running, and collects it.
    let third = Instance::start("conformance", &["--redis".to_owned(), cluster.redis.url()]);
    let result = mcp
        .request(&third.url(), 4, "tasks/result", json!({"taskId": done}))
        .await;
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("computation: done after 1 s"),
        "the result the call would have answered: {result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(done),
        "tagged with its task: {result}"
    );
    let got = mcp
        .request(&b, 5, "tasks/get", json!({"taskId": done}))
        .await;
    assert_eq!(got["result"]["status"], "completed", "{got}");

    let long = start_task(&mcp, &a, 6, 600).await;
    let cancelled = mcp
        .request(&b, 7, "tasks/cancel", json!({"taskId": long}))
        .await;
    assert_eq!(
        cancelled["result"]["status"], "cancelled",
        "B has A cancel it: {cancelled}"
    );
    let got = mcp
        .request(&a, 8, "tasks/get", json!({"taskId": long}))
        .await;
    assert_eq!(got["result"]["status"], "cancelled", "on A too: {got}");
    let again = mcp
        .request(&b, 9, "tasks/cancel", json!({"taskId": long}))
        .await;
    assert_eq!(again["error"]["code"], -32602, "terminal stays: {again}");
    let got = mcp
        .request(&b, 10, "tasks/get", json!({"taskId": long}))
        .await;
    assert_eq!(got["result"]["status"], "cancelled", "sticky: {got}");

    let mut other = Mcp::new();
    other.initialize(&b, json!({})).await;
    let theirs = other
        .request(&b, 2, "tasks/get", json!({"taskId": done}))
        .await;
    assert_eq!(
        theirs["error"]["code"], -32602,
        "not another session's: {theirs}"
    );
    let listed = other.request(&a, 3, "tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
}

/// A task whose instance died (SIGKILL) is failed by the instance that reads it next once
/// the dead one's heartbeat ran out, and a `tasks/result` waiting on another instance is
/// answered with that failure instead of waiting for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_died_fails_on_the_others() {
    let mut cluster = Cluster::start("conformance", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let mut mcp = Mcp::new();
    mcp.initialize(&a, json!({})).await;
    let id = start_task(&mcp, &a, 1, 600).await;
    let waiting = tokio::spawn({
        let (mcp, b, id) = (mcp.clone(), b.clone(), id.clone());
        async move {
            mcp.request(&b, 2, "tasks/result", json!({"taskId": id}))
                .await
        }
    });
    cluster.instances[0].kill();
    let result = tokio::time::timeout(SAFETY, waiting)
        .await
        .expect("the wait ends")
        .expect("the request is answered");
    assert_eq!(result["error"]["code"], -32603, "{result}");
    let got = mcp.request(&b, 3, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "failed", "{got}");
}

/// A task that ends while Redis is lost is written there, ended, once Redis returns (here
/// empty, as after a restart without persistence), so that other instances do not wait for
/// it until its ttl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ends_while_redis_is_lost_reaches_redis_when_it_returns() {
    let mut redis = Redis::start();
    let a = Instance::start("conformance", &["--redis".to_owned(), redis.url()]);
    let mut mcp = Mcp::new();
    mcp.initialize(&a.url(), json!({})).await;
    let id = start_task(&mcp, &a.url(), 1, 1).await;
    redis.kill();
    let result = mcp
        .request(&a.url(), 2, "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("computation: done after 1 s"),
        "the instance running the task answers without Redis: {result}"
    );
    redis.restart();
    let key = format!("junction:t:{id}");
    let deadline = Instant::now() + SAFETY;
    while redis.cli(&["HGET", &key, "t"]) != "1" {
        assert!(
            Instant::now() < deadline,
            "the ended task reaches Redis once it is back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let record: Value =
        serde_json::from_str(&redis.cli(&["HGET", &key, "r"])).expect("a record as JSON");
    assert_eq!(record["task"]["status"], "completed", "{record}");
}

/// A 2026-07-28 request (no session) of `method` with `params` at `url`, declaring the
/// tasks extension and form elicitation: its response message.
async fn request_2026(
    http: &reqwest::Client,
    url: &str,
    id: u64,
    method: &str,
    mut params: Value,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "scale-test", "version": "1"}
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let response = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
        .send()
        .await
        .expect("request sent");
    assert_eq!(response.status(), 200, "{method} answered");
    read_reply(response).await
}

/// `tasks/get` of task `id` at `url` until `done` holds for the task it answers (the
/// handler runs on meanwhile); that task.
async fn poll_2026(
    http: &reqwest::Client,
    url: &str,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + SAFETY;
    for n in 1.. {
        let got = request_2026(http, url, n, "tasks/get", json!({"taskId": id})).await;
        let task = &got["result"];
        assert_eq!(task["taskId"], json!(id), "{got}");
        if done(task) {
            return task.clone();
        }
        assert!(Instant::now() < deadline, "the task never got there: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    unreachable!("the loop returns or fails")
}

/// 2026-07-28 tasks behind a load balancer carry no session, so their client may be served
/// by any instance: a call that became a task through instance A, whose handler (on A) asks
/// two questions, is seen waiting for them on B, answered one at a time through B (the
/// other question kept pending, on A and B alike), and completes with both answers, seen
/// on A and on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_task_asking_through_one_instance_is_answered_through_another() {
    let cluster = Cluster::start("conformance", 2, &[]);
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let http = reqwest::Client::new();
    let handle = request_2026(
        &http,
        &a,
        1,
        "tools/call",
        json!({"name": "multi_input", "arguments": {}}),
    )
    .await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let id = handle["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();

    let asked = |task: &Value| {
        task["status"] == "input_required"
            && task["inputRequests"]
                .as_object()
                .is_some_and(|r| r.contains_key("first") && r.contains_key("second"))
    };
    let waiting = poll_2026(&http, &b, &id, asked).await;
    assert_eq!(
        waiting["inputRequests"]["first"]["method"], "elicitation/create",
        "B shows what A's handler asks: {waiting}"
    );

    let first = json!({"first": {"action": "accept", "content": {"value": "north"}}});
    let ack = request_2026(
        &http,
        &b,
        10,
        "tasks/update",
        json!({"taskId": id, "inputResponses": first}),
    )
    .await;
    assert_eq!(
        ack["result"]["resultType"], "complete",
        "B acknowledges the update: {ack}"
    );
    for url in [&a, &b] {
        let got = request_2026(&http, url, 11, "tasks/get", json!({"taskId": id})).await;
        let task = &got["result"];
        assert_eq!(task["status"], "input_required", "{got}");
        let keys: Vec<&String> = task["inputRequests"]
            .as_object()
            .unwrap_or_else(|| panic!("input requests: {got}"))
            .keys()
            .collect();
        assert_eq!(keys, ["second"], "the question left stays pending: {got}");
    }

    let second = json!({"second": {"action": "accept", "content": {"value": "south"}}});
    let ack = request_2026(
        &http,
        &b,
        12,
        "tasks/update",
        json!({"taskId": id, "inputResponses": second}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    for url in [&a, &b] {
        let done = poll_2026(&http, url, &id, |t| t["status"] == "completed").await;
        assert_eq!(
            done["result"]["content"][0]["text"], "first: north; second: south",
            "the handler got both answers: {done}"
        );
        assert!(done.get("inputRequests").is_none(), "{done}");
    }
}
