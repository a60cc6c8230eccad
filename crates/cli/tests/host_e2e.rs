//! The host end to end over real child processes: junction-host with `junction serve
//! library|calendar|tasks` (this very binary) as its servers, each with its own SQLite file
//! and wire log, and a scripted model.
//!
//! What the wire logs show is what reached each server: the tests read them (and the
//! databases, re-opened after the servers exit) rather than trust the host's account.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use junction_host::config::Config;
use junction_host::consent::{ConsentAnswer, ScriptedConsent};
use junction_host::conversation::Message;
use junction_host::events::{Event, EventSink, ServerState};
use junction_host::interaction::ScriptedInteraction;
use junction_host::model::ScriptedModel;
use junction_host::servers::{StartFailure, StartOptions};
use junction_host::Host;
use junction_protocol::tools::CallToolParams;
use junction_test_support::cli::junction_exe;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::UnboundedReceiver;

const SERVERS: [&str; 3] = ["library", "calendar", "tasks"];
const SECRET: &str = "4711-SECRET";
const NO_COPIES: &str =
    "No copies of 'Maps of Small Rivers' are available. Search for another title.";
const BAD_DATE: &str =
    "Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.";

/// A fresh directory for one test's databases, wire logs and config, removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("junction-host-e2e-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        Scratch(dir)
    }

    fn db(&self, server: &str) -> PathBuf {
        self.0.join(format!("{server}.db"))
    }

    fn wire_log(&self, server: &str) -> PathBuf {
        self.0.join(format!("{server}.wire.jsonl"))
    }

    /// The messages `server` received, one JSON value each.
    fn received(&self, server: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.wire_log(server))
            .unwrap_or_else(|e| panic!("the {server} wire log: {e}"));
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{server}: {e}: {l}")))
            .collect()
    }

    fn raw_log(&self, server: &str) -> String {
        std::fs::read_to_string(self.wire_log(server)).expect("the wire log exists")
    }

    /// The config of the three servers (plus `extra` entries), trusted, with `policy` as
    /// the `junction.policy` section.
    fn config(&self, extra: Value, policy: Value) -> Config {
        let mut servers = Map::new();
        for server in SERVERS {
            servers.insert(
                server.to_owned(),
                json!({
                    "command": junction_exe(),
                    "args": ["serve", server,
                        "--db", self.db(server),
                        "--wire-log", self.wire_log(server)],
                    "trusted": true,
                }),
            );
        }
        if let Value::Object(extra) = extra {
            servers.extend(extra);
        }
        let text = json!({"mcpServers": servers, "junction": {"policy": policy}}).to_string();
        let path = self.0.join("mcp.json");
        std::fs::write(&path, text).expect("write the config");
        Config::load(&path).expect("the config is valid")
    }
}

/// A started host and everything needed to look at what it did.
struct Started {
    host: Host,
    failures: Vec<StartFailure>,
    events: UnboundedReceiver<Event>,
    consent: Arc<ScriptedConsent>,
}

async fn start(config: &Config, script: Value, consent: ScriptedConsent) -> Started {
    let model = Arc::new(ScriptedModel::from_json(&script.to_string()).expect("a valid script"));
    let consent = Arc::new(consent);
    let (sink, events) = EventSink::channel();
    let (host, failures) = Host::from_config(
        config,
        &StartOptions::default(),
        model,
        consent.clone(),
        Arc::new(ScriptedInteraction::new()),
        sink,
    )
    .await
    .expect("the host starts");
    Started {
        host,
        failures,
        events,
        consent,
    }
}

/// One scripted turn calling `calls` (model name, arguments), then a closing text.
fn script(calls: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| json!({"id": format!("c{i}"), "name": name, "arguments": arguments}))
        .collect();
    json!([{"toolCalls": calls}, {"text": "Done."}])
}

/// Each tool result in the conversation: model name, text, whether an error.
fn results(host: &Host) -> Vec<(String, String, bool)> {
    host.conversation()
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult {
                name,
                text,
                is_error,
                ..
            } => Some((name.clone(), text.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The `tools/call` requests in a wire log, as (tool, arguments).
fn tool_calls(received: &[Value]) -> Vec<(String, Value)> {
    received
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| {
            (
                m["params"]["name"].as_str().unwrap_or_default().to_owned(),
                m["params"]["arguments"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_conversation_stays_in_the_host_and_each_server_sees_only_its_own_requests() {
    let dir = Scratch::new("isolation");
    let config = dir.config(json!({}), json!({"tasks__add_task": "allow"}));
    let calls = [
        ("library__search", json!({"query": "science", "limit": 3})),
        ("calendar__search", json!({"text": "dentist"})),
        ("tasks__add_task", json!({"title": "Ship the Q3 report"})),
    ];
    let mut turns = script(&calls);
    // The model repeats the secret too: its text stays in the host as well.
    turns[0]["text"] = json!(format!("I will not share {SECRET} with anyone."));
    let turns = json!([turns[0], {"text": "Done."}, {"text": "Here is your reading list."}]);
    let mut started = start(&config, turns, ScriptedConsent::deny_all()).await;
    assert!(started.failures.is_empty(), "{:?}", started.failures);
    let host = &mut started.host;
    host.attach("@library:library://policy")
        .await
        .expect("attach the policy");
    host.send(format!(
        "My locker code is {SECRET}; never share it. Find science books, my dentist appointment, and note the Q3 report."
    ))
    .await
    .expect("the turn runs");
    host.apply_prompt("/library:reading_list subject=science")
        .await
        .expect("the prompt runs");
    host.run().await.expect("the model answers the prompt");
    let outcome = results(host);
    assert_eq!(outcome.len(), 3, "{outcome:?}");
    assert!(outcome.iter().all(|(_, _, error)| !error), "{outcome:?}");
    assert!(host
        .conversation()
        .messages()
        .iter()
        .any(|m| matches!(m, Message::User { text } if text.contains(SECRET))));
    started.host.shutdown().await;

    for server in SERVERS {
        let raw = dir.raw_log(server);
        assert!(!raw.is_empty(), "{server} received nothing");
        assert!(!raw.contains(SECRET), "{server} saw the secret:\n{raw}");
        assert!(
            !raw.contains("locker"),
            "{server} saw the user's message:\n{raw}"
        );
    }
    assert!(!dir.raw_log("library").to_lowercase().contains("dentist"));
    assert!(dir.raw_log("calendar").to_lowercase().contains("dentist"));
    assert!(!dir.raw_log("calendar").contains("science"));
    assert!(!dir.raw_log("tasks").contains("science"));
    assert!(!dir.raw_log("tasks").to_lowercase().contains("dentist"));

    // Each server received exactly the arguments of its own calls, and else only the
    // handshake, listings, the URI it was asked to read and the arguments of its prompt.
    let expected_calls = |server: &str| -> Vec<(String, Value)> {
        calls
            .iter()
            .filter_map(|(name, args)| {
                let (owner, tool) = name.split_once("__")?;
                (owner == server).then(|| (tool.to_owned(), args.clone()))
            })
            .collect()
    };
    for server in SERVERS {
        let received = dir.received(server);
        assert_eq!(tool_calls(&received), expected_calls(server), "{server}");
        for message in &received {
            let method = message["method"].as_str().unwrap_or_default();
            let params = &without_envelope(server, &message["params"]);
            match method {
                "initialize"
                | "server/discover"
                | "subscriptions/listen"
                | "notifications/initialized"
                | "tools/list"
                | "prompts/list"
                | "resources/list"
                | "resources/templates/list"
                | "tools/call"
                | "ping" => {}
                "resources/read" => {
                    assert_eq!(
                        (server, params),
                        ("library", &json!({"uri": "library://policy"}))
                    )
                }
                "prompts/get" => assert_eq!(
                    (server, params),
                    (
                        "library",
                        &json!({"name": "reading_list", "arguments": {"subject": "science"}})
                    )
                ),
                other => panic!("{server} received an unexpected {other}: {message}"),
            }
        }
    }
}

/// `params` without its `_meta`, once `_meta` is seen to hold nothing but the protocol's
/// envelope (2026-07-28 names the revision, the host's capabilities and its name on every
/// request) and progress tokens: no conversation travels there.
fn without_envelope(server: &str, params: &Value) -> Value {
    const ENVELOPE: &[&str] = &[
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/logLevel",
        "progressToken",
    ];
    let mut params = params.clone();
    if let Some(meta) = params.as_object_mut().and_then(|p| p.remove("_meta")) {
        for key in meta.as_object().into_iter().flat_map(|m| m.keys()) {
            assert!(
                ENVELOPE.contains(&key.as_str()),
                "{server} received `_meta.{key}`: {meta}"
            );
        }
        if let Some(info) = meta.get("io.modelcontextprotocol/clientInfo") {
            assert_eq!(
                info,
                &json!({"name": "junction", "version": env!("CARGO_PKG_VERSION")})
            );
        }
    }
    params
}

/// The arguments to call each tool that returns structured content with.
fn structured_tool_arguments(server: &str, tool: &str) -> Option<Value> {
    match (server, tool) {
        ("library", "search") => Some(json!({"query": "", "limit": 50})),
        ("calendar", "search") => Some(json!({})),
        _ => None,
    }
}

#[tokio::test]
async fn structured_content_equals_the_parsed_text_for_every_tool_that_returns_both() {
    let dir = Scratch::new("structured");
    let config = dir.config(json!({}), json!({}));
    let started = start(
        &config,
        json!([{"text": "unused"}]),
        ScriptedConsent::deny_all(),
    )
    .await;
    assert!(started.failures.is_empty(), "{:?}", started.failures);
    let mut checked = Vec::new();
    for server in started.host.servers().iter() {
        for tool in server.tools() {
            if tool.output_schema.is_none() {
                continue;
            }
            let arguments = structured_tool_arguments(&server.name, &tool.name).unwrap_or_else(|| {
                panic!(
                    "{}.{} declares an output schema: give it arguments in structured_tool_arguments",
                    server.name, tool.name
                )
            });
            let Value::Object(arguments) = arguments else {
                unreachable!("arguments are objects")
            };
            let result = server
                .client
                .call_tool(
                    CallToolParams::new(tool.name.clone()).arguments(arguments),
                    Default::default(),
                )
                .await
                .unwrap_or_else(|e| panic!("{}.{}: {e}", server.name, tool.name));
            let name = format!("{}.{}", server.name, tool.name);
            assert!(!result.failed(), "{name}: {result:?}");
            let structured = result.structured_content.clone().unwrap_or_else(|| {
                panic!("{name} declares an output schema but returned no structuredContent")
            });
            let texts: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
            assert_eq!(texts.len(), 1, "{name}: {result:?}");
            let parsed: Value = serde_json::from_str(texts[0])
                .unwrap_or_else(|e| panic!("{name}: the text is not JSON ({e}): {}", texts[0]));
            assert_eq!(parsed, structured, "{name}");
            assert_ne!(structured, json!({}), "{name} returned an empty object");
            checked.push(name);
        }
    }
    started.host.shutdown().await;
    checked.sort();
    assert_eq!(checked, ["calendar.search", "library.search"]);
}

/// Every row of every table, as text, to compare a database before and after.
fn dump(db: &Path) -> Vec<String> {
    let connection =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|e| panic!("open {}: {e}", db.display()));
    let tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("list the tables");
    let mut rows = Vec::new();
    for table in tables {
        let mut statement = connection
            .prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))
            .expect("select a table");
        let columns = statement.column_count();
        let found: Vec<String> = statement
            .query_map([], |r| {
                let values: rusqlite::Result<Vec<rusqlite::types::Value>> =
                    (0..columns).map(|i| r.get(i)).collect();
                Ok(format!("{table}: {:?}", values?))
            })
            .and_then(|rows| rows.collect())
            .expect("read a table");
        rows.extend(found);
    }
    rows
}

#[tokio::test]
async fn a_denied_destructive_call_never_reaches_the_server_and_the_database_is_unchanged() {
    let dir = Scratch::new("denied");
    // delete_event asks and the user denies; delete_task is denied by a rule.
    let config = dir.config(json!({}), json!({"tasks__delete_*": "deny"}));
    let calls = [
        ("calendar__delete_event", json!({"id": 3})),
        ("tasks__delete_task", json!({"id": 15, "confirm": true})),
    ];
    let mut started = start(
        &config,
        script(&calls),
        ScriptedConsent::new([ConsentAnswer::Deny]),
    )
    .await;
    assert!(started.failures.is_empty(), "{:?}", started.failures);
    let before = [dump(&dir.db("calendar")), dump(&dir.db("tasks"))];
    assert!(
        before[0].iter().any(|r| r.contains("Dentist appointment")),
        "{before:?}"
    );
    started
        .host
        .send("Cancel the dentist and drop task 15.")
        .await
        .expect("the turn runs");
    let outcome = results(&started.host);
    assert_eq!(outcome.len(), 2, "{outcome:?}");
    // The model is told who refused: the user for the call that asked, a rule for the other.
    for (name, text, error) in &outcome {
        assert!(error, "{name}: {text}");
        let expected = if name == "tasks__delete_task" {
            format!("A rule in the user's configuration denied this call of `{name}`")
        } else {
            format!("The user declined this call of `{name}`, so it was not run")
        };
        assert!(text.starts_with(&expected), "{name}: {text}");
    }
    let asked = started.consent.asked();
    assert_eq!(
        asked.len(),
        1,
        "only the call without a rule asks: {asked:?}"
    );
    assert_eq!(
        (asked[0].server.as_str(), asked[0].tool.as_str()),
        ("calendar", "delete_event")
    );
    assert_eq!(asked[0].arguments, json!({"id": 3}));
    // The servers still hold the records.
    for (server, uri_check) in [("calendar", "search"), ("tasks", "tasks://15")] {
        let connected = started.host.servers().get(server).expect("connected");
        if uri_check == "search" {
            let result = connected
                .client
                .call_tool(
                    CallToolParams::new("search").arguments(
                        json!({"text": "dentist"})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    ),
                    Default::default(),
                )
                .await
                .expect("search the calendar");
            let events = &result.structured_content.expect("structured")["events"];
            assert_eq!(events[0]["id"], 3, "{events}");
        } else {
            let read = connected
                .client
                .read_resource(uri_check)
                .await
                .expect("task 15 is still there");
            assert!(
                format!("{read:?}").contains("Clean out the garage"),
                "{read:?}"
            );
        }
    }
    started.host.shutdown().await;
    assert_eq!([dump(&dir.db("calendar")), dump(&dir.db("tasks"))], before);
    for server in ["calendar", "tasks"] {
        let deletes: Vec<_> = tool_calls(&dir.received(server))
            .into_iter()
            .filter(|(tool, _)| tool.starts_with("delete_"))
            .collect();
        assert!(deletes.is_empty(), "{server} received {deletes:?}");
    }
}

#[tokio::test]
async fn a_server_that_exits_at_start_is_reported_with_its_stderr_and_the_others_work() {
    let dir = Scratch::new("broken");
    let config = dir.config(
        json!({"broken": {"command": "sh", "args": ["-c", "echo boom >&2; exit 3"]}}),
        json!({"tasks__add_task": "allow"}),
    );
    let calls = [
        ("library__search", json!({"query": "light"})),
        ("calendar__search", json!({"text": "lunch"})),
        ("tasks__add_task", json!({"title": "Ship the Q3 report"})),
    ];
    let mut started = start(&config, script(&calls), ScriptedConsent::deny_all()).await;
    assert_eq!(started.failures.len(), 1, "{:?}", started.failures);
    let failure = &started.failures[0];
    assert_eq!(failure.server, "broken");
    assert_eq!(failure.stderr_tail, ["boom"]);
    assert!(failure.reason.contains("status 3"), "{}", failure.reason);
    let mut reported = false;
    while let Ok(event) = started.events.try_recv() {
        if let Event::ServerStatus {
            server,
            state: ServerState::Failed { stderr_tail, .. },
        } = event
        {
            assert_eq!(
                (server.as_str(), stderr_tail),
                ("broken", vec!["boom".to_owned()])
            );
            reported = true;
        }
    }
    assert!(reported, "no Failed status event for the broken server");
    let mut names: Vec<&str> = started
        .host
        .servers()
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["calendar", "library", "tasks"]);
    started
        .host
        .send("Look things up.")
        .await
        .expect("the turn runs");
    let outcome = results(&started.host);
    assert_eq!(outcome.len(), 3, "{outcome:?}");
    for (name, text, error) in &outcome {
        assert!(!error, "{name}: {text}");
    }
    assert!(
        outcome[0].1.contains("A Brief History of Light"),
        "{outcome:?}"
    );
    assert!(outcome[1].1.contains("Lunch with Priya"), "{outcome:?}");
    assert!(
        outcome[2]
            .1
            .starts_with("Created task 17: Ship the Q3 report"),
        "{outcome:?}"
    );
    started.host.shutdown().await;
}

#[tokio::test]
async fn both_tool_errors_reach_the_model_verbatim() {
    let dir = Scratch::new("errors");
    let config = dir.config(
        json!({}),
        json!({"library__checkout": "allow", "calendar__add_event": "allow"}),
    );
    let calls = [
        ("library__checkout", json!({"isbn": "9780000000042"})),
        (
            "calendar__add_event",
            json!({"title": "Study session", "date": "tomorrow"}),
        ),
    ];
    let mut started = start(&config, script(&calls), ScriptedConsent::deny_all()).await;
    started
        .host
        .send("Borrow the river book and book a study session.")
        .await
        .expect("the turn runs");
    let outcome = results(&started.host);
    started.host.shutdown().await;
    assert_eq!(
        outcome,
        [
            ("library__checkout".to_owned(), NO_COPIES.to_owned(), true),
            ("calendar__add_event".to_owned(), BAD_DATE.to_owned(), true),
        ]
    );
    assert_eq!(
        tool_calls(&dir.received("library")),
        [("checkout".to_owned(), json!({"isbn": "9780000000042"}))]
    );
}
