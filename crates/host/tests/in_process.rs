//! The host against real in-process servers (the junction server framework over in-memory
//! connections), with a scripted model and scripted consent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use junction::server::{tool, Server};
use junction::session::Peer;
use junction::transport::memory;
use junction_host::consent::{ConsentAnswer, ScriptedConsent};
use junction_host::conversation::{Message, ToolCall};
use junction_host::events::{Event, EventSink};
use junction_host::model::{ModelReply, ScriptedModel};
use junction_host::naming::ToolNames;
use junction_host::policy::{Action, Policy, Remembered, Rule};
use junction_host::servers::{ServerSettings, Servers, StartOptions};
use junction_host::{Host, Stop};
use junction_protocol::tools::ToolAnnotations;
use junction_test_support::tap::{tapped, Frames};
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedReceiver;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    query: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct BookId {
    id: u32,
}

/// What one in-process server saw.
#[derive(Default)]
struct Seen {
    searches: Mutex<Vec<String>>,
    deletes: AtomicUsize,
    /// Every frame the client sent to this server, as text.
    frames: Frames,
}

impl Seen {
    fn searches(&self) -> Vec<String> {
        self.searches.lock().unwrap().clone()
    }
    fn frames(&self) -> Vec<String> {
        self.frames.lock().unwrap().clone()
    }
}

/// A library with a read-only `search` and a destructive `delete_book`.
fn library(label: &'static str, seen: Arc<Seen>) -> Server {
    let on_search = seen.clone();
    let on_delete = seen;
    Server::builder(label, "1.0.0")
        .tool(
            tool("search", move |q: Query| {
                on_search.searches.lock().unwrap().push(q.query.clone());
                async move { format!("{label} found: {}", q.query) }
            })
            .annotations(ToolAnnotations::default().read_only(true)),
        )
        .tool(
            tool("delete_book", move |b: BookId| {
                on_delete.deletes.fetch_add(1, Ordering::SeqCst);
                async move { format!("deleted book {}", b.id) }
            })
            .annotations(
                ToolAnnotations::default()
                    .read_only(false)
                    .destructive(true),
            ),
        )
        .build()
        .unwrap()
}

struct Setup {
    servers: Servers,
    seen: Vec<Arc<Seen>>,
    _peers: Vec<Peer>,
}

fn settings(trusted: bool) -> ServerSettings {
    if trusted {
        ServerSettings::trusted()
    } else {
        ServerSettings::default()
    }
}

/// Connects one library per (name, trusted) pair.
async fn libraries(specs: &[(&'static str, bool)]) -> Setup {
    let mut servers = Servers::new();
    let mut seen = Vec::new();
    let mut peers = Vec::new();
    for &(name, trusted) in specs {
        let s = Arc::new(Seen::default());
        let (connection, peer) = tapped(&library(name, s.clone()), s.frames.clone());
        servers
            .add_connection(
                name,
                connection,
                settings(trusted),
                &StartOptions::default(),
                &EventSink::discard(),
            )
            .await
            .unwrap();
        seen.push(s);
        peers.push(peer);
    }
    Setup {
        servers,
        seen,
        _peers: peers,
    }
}

fn host(
    setup: Setup,
    policy: Policy,
    script: &str,
    consent: Arc<ScriptedConsent>,
) -> (Host, Vec<Arc<Seen>>, UnboundedReceiver<Event>, Vec<Peer>) {
    let (events, rx) = EventSink::channel();
    let model = ScriptedModel::from_json(script).unwrap();
    let host = Host::new(setup.servers, policy, Arc::new(model), consent, events);
    (host, setup.seen, rx, setup._peers)
}

fn drain(rx: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let mut all = Vec::new();
    while let Ok(e) = rx.try_recv() {
        all.push(e);
    }
    all
}

/// The tool results in the conversation, as (call id, text, is_error).
fn results(host: &Host) -> Vec<(String, String, bool)> {
    host.conversation()
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult {
                call_id,
                text,
                is_error,
                ..
            } => Some((call_id.clone(), text.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

const DELETE_THEN_TEXT: &str = r#"[
    {"toolCalls": [{"id": "c1", "name": "library__delete_book", "arguments": {"id": 7}}]},
    {"text": "I did not delete it."}
]"#;

#[tokio::test]
async fn a_denied_destructive_call_never_reaches_the_server_and_the_model_hears_the_user_declined()
{
    let consent = Arc::new(ScriptedConsent::new([ConsentAnswer::Deny]));
    let (mut host, seen, mut rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(Vec::new()),
        DELETE_THEN_TEXT,
        consent.clone(),
    );
    let outcome = host.send("Delete book 7").await.unwrap();
    assert_eq!(outcome.stop, Stop::Answered);
    assert_eq!(outcome.text.as_deref(), Some("I did not delete it."));

    assert_eq!(seen[0].deletes.load(Ordering::SeqCst), 0);
    assert!(
        seen[0].frames().iter().all(|f| !f.contains("delete_book")),
        "the server received the denied call: {:?}",
        seen[0].frames()
    );
    let results = results(&host);
    assert_eq!(results.len(), 1);
    let (id, text, is_error) = &results[0];
    assert_eq!(id, "c1");
    assert!(is_error);
    assert!(text.contains("declined"), "{text}");

    let asked = consent.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].server, "library");
    assert_eq!(asked[0].tool, "delete_book");
    assert_eq!(asked[0].arguments, json!({"id": 7}));
    let events = drain(&mut rx);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ConsentAnswered {
            answer: ConsentAnswer::Deny,
            ..
        }
    )));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ToolCallDenied { call_id, .. } if call_id == "c1")));
}

#[tokio::test]
async fn a_deny_rule_refuses_without_asking() {
    let consent = Arc::new(ScriptedConsent::new([ConsentAnswer::AllowOnce]));
    let (mut host, seen, _rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(vec![Rule::new("*__delete_*", Action::Deny)]),
        DELETE_THEN_TEXT,
        consent.clone(),
    );
    host.send("Delete book 7").await.unwrap();
    assert_eq!(seen[0].deletes.load(Ordering::SeqCst), 0);
    assert!(consent.asked().is_empty());
    let (_, text, is_error) = &results(&host)[0];
    assert!(
        *is_error && text.contains("declined") && text.contains("*__delete_*"),
        "{text}"
    );
}

#[tokio::test]
async fn always_allow_is_asked_once_saved_and_read_back() {
    let file = std::env::temp_dir()
        .join(format!("junction-host-e2e-{}", std::process::id()))
        .join("consent.json");
    let _ = std::fs::remove_file(&file);
    let consent = Arc::new(ScriptedConsent::new([ConsentAnswer::AlwaysAllow]));
    let policy = Policy::with_remembered(Vec::new(), Remembered::load(&file).unwrap());
    let (mut host, seen, _rx, _peers) = host(
        libraries(&[("library", false)]).await,
        policy,
        r#"[
            {"toolCalls": [{"name": "library__delete_book", "arguments": {"id": 1}}]},
            {"toolCalls": [{"name": "library__delete_book", "arguments": {"id": 2}}]},
            {"text": "Both are gone."}
        ]"#,
        consent.clone(),
    );
    host.send("Delete books 1 and 2").await.unwrap();
    assert_eq!(seen[0].deletes.load(Ordering::SeqCst), 2);
    assert_eq!(consent.asked().len(), 1);
    let texts: Vec<String> = results(&host).into_iter().map(|(_, t, _)| t).collect();
    assert_eq!(texts, ["deleted book 1", "deleted book 2"]);

    let reloaded = Policy::with_remembered(Vec::new(), Remembered::load(&file).unwrap());
    let delete = &host.servers().get("library").unwrap().tools();
    let delete = delete.iter().find(|t| t.name == "delete_book").unwrap();
    assert_eq!(
        reloaded.decide("library", delete, false).action,
        Action::Allow
    );
}

#[tokio::test]
async fn read_only_hints_are_believed_only_for_trusted_servers() {
    let consent = Arc::new(ScriptedConsent::new([ConsentAnswer::AllowOnce]));
    let (mut host, seen, _rx, _peers) = host(
        libraries(&[("mine", true), ("theirs", false)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"name": "mine__search", "arguments": {"query": "a"}},
                           {"name": "theirs__search", "arguments": {"query": "b"}}]},
            {"text": "ok"}
        ]"#,
        consent.clone(),
    );
    host.send("search both").await.unwrap();
    let asked = consent.asked();
    assert_eq!(asked.len(), 1, "only the untrusted server's tool asks");
    assert_eq!(asked[0].server, "theirs");
    assert!(
        asked[0].reason.contains("not trusted"),
        "{}",
        asked[0].reason
    );
    assert_eq!(seen[0].searches(), ["a"]);
    assert_eq!(seen[1].searches(), ["b"]);
}

#[tokio::test]
async fn two_servers_offering_search_are_told_apart() {
    let (mut host, seen, mut rx, _peers) = host(
        libraries(&[("library", true), ("web", true)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"id": "l", "name": "library__search", "arguments": {"query": "dune"}},
                           {"id": "w", "name": "web__search", "arguments": {"query": "news"}}]},
            {"text": "done"}
        ]"#,
        Arc::new(ScriptedConsent::deny_all()),
    );
    let names = host.tool_names();
    let names: Vec<&str> = names
        .entries()
        .iter()
        .map(|e| e.model_name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "library__delete_book",
            "library__search",
            "web__delete_book",
            "web__search"
        ]
    );
    host.send("search").await.unwrap();
    assert_eq!(seen[0].searches(), ["dune"]);
    assert_eq!(seen[1].searches(), ["news"]);
    let results = results(&host);
    assert_eq!(
        results[0],
        ("l".to_owned(), "library found: dune".to_owned(), false)
    );
    assert_eq!(
        results[1],
        ("w".to_owned(), "web found: news".to_owned(), false)
    );
    let started: Vec<(String, String)> = drain(&mut rx)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolCallStarted { server, tool, .. } => Some((server, tool)),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [
            ("library".to_owned(), "search".to_owned()),
            ("web".to_owned(), "search".to_owned())
        ]
    );
}

#[tokio::test]
async fn names_that_collide_after_sanitizing_reach_the_right_tool() {
    let dotted = Arc::new(AtomicUsize::new(0));
    let underscored = Arc::new(AtomicUsize::new(0));
    let (d, u) = (dotted.clone(), underscored.clone());
    let server = Server::builder("odd", "1.0.0")
        .tool(tool("get.item", move |_: Query| {
            d.fetch_add(1, Ordering::SeqCst);
            async { "dotted" }
        }))
        .tool(tool("get_item", move |_: Query| {
            u.fetch_add(1, Ordering::SeqCst);
            async { "underscored" }
        }))
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair(Default::default());
    let _peer = server.serve(server_end);
    let mut servers = Servers::new();
    servers
        .add_connection(
            "odd",
            client_end,
            ServerSettings::trusted(),
            &StartOptions::default(),
            &EventSink::discard(),
        )
        .await
        .unwrap();
    let names = ToolNames::new(servers.tools());
    let dotted_name = names.model_name("odd", "get.item").unwrap().to_owned();
    let underscored_name = names.model_name("odd", "get_item").unwrap().to_owned();
    assert_ne!(dotted_name, underscored_name);
    let call = |id: &str, name: &str| ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: json!({"query": "x"}),
    };
    let model = ScriptedModel::new([
        ModelReply {
            text: None,
            tool_calls: vec![
                call("1", &dotted_name),
                call("2", &underscored_name),
                call("3", &dotted_name),
            ],
            ..ModelReply::default()
        },
        ModelReply {
            text: Some("ok".to_owned()),
            tool_calls: Vec::new(),
            ..ModelReply::default()
        },
    ]);
    let mut host = Host::new(
        servers,
        Policy::new(vec![Rule::new("odd__*", Action::Allow)]),
        Arc::new(model),
        Arc::new(ScriptedConsent::deny_all()),
        EventSink::discard(),
    );
    host.send("get items").await.unwrap();
    assert_eq!(dotted.load(Ordering::SeqCst), 2);
    assert_eq!(underscored.load(Ordering::SeqCst), 1);
    let texts: Vec<String> = results(&host).into_iter().map(|(_, t, _)| t).collect();
    assert_eq!(texts, ["dotted", "underscored", "dotted"]);
}

#[tokio::test]
async fn the_server_receives_only_tool_arguments_never_the_conversation() {
    const SECRET: &str = "my bank PIN is 4417 and nobody else may know";
    let (mut host, seen, _rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"name": "library__search", "arguments": {"query": "rust"}}]},
            {"text": "Here are rust books."}
        ]"#,
        Arc::new(ScriptedConsent::deny_all()),
    );
    host.send(format!("{SECRET}. Now find books about rust."))
        .await
        .unwrap();
    assert_eq!(seen[0].searches(), ["rust"]);
    let frames = seen[0].frames();
    for frame in &frames {
        assert!(
            !frame.contains("4417") && !frame.contains("bank PIN"),
            "leaked: {frame}"
        );
    }
    let calls: Vec<Value> = frames
        .iter()
        .map(|f| serde_json::from_str::<Value>(f).unwrap())
        .filter(|v| v["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1);
    // Beside the arguments the server gets only the call's progress token and the
    // 2026-07-28 envelope: the revision, the host's capabilities, its name and the log
    // level it asks for (warning by default).
    let mut params = calls[0]["params"].clone();
    let meta = params.as_object_mut().unwrap().remove("_meta").unwrap();
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "warning");
    let mut keys: Vec<&str> = meta
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "io.modelcontextprotocol/clientCapabilities",
            "io.modelcontextprotocol/clientInfo",
            "io.modelcontextprotocol/logLevel",
            "io.modelcontextprotocol/protocolVersion",
            "progressToken"
        ],
        "{meta}"
    );
    assert!(meta["progressToken"].is_number(), "{meta}");
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "junction"
    );
    assert_eq!(
        params,
        json!({"name": "search", "arguments": {"query": "rust"}})
    );
    let secret_in_host = host
        .conversation()
        .messages()
        .iter()
        .any(|m| matches!(m, Message::User { text } if text.contains(SECRET)));
    assert!(secret_in_host, "the conversation keeps what the user typed");
}

#[tokio::test]
async fn the_loop_stops_at_the_step_limit() {
    let (host, seen, mut rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"name": "library__search", "arguments": {"query": "1"}}]},
            {"toolCalls": [{"name": "library__search", "arguments": {"query": "2"}}]},
            {"toolCalls": [{"name": "library__search", "arguments": {"query": "3"}}]}
        ]"#,
        Arc::new(ScriptedConsent::deny_all()),
    );
    let mut host = host.with_max_steps(2);
    let outcome = host.send("loop").await.unwrap();
    assert_eq!(outcome.stop, Stop::StepLimit);
    assert_eq!(outcome.steps, 2);
    assert_eq!(seen[0].searches(), ["1", "2"]);
    assert!(drain(&mut rx).contains(&Event::StepLimitReached { steps: 2 }));
}

#[tokio::test]
async fn unknown_tools_and_non_object_arguments_become_error_results() {
    let (mut host, seen, _rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"id": "a", "name": "library__nope"},
                           {"id": "b", "name": "library__search", "arguments": "rust"},
                           {"id": "c", "name": "library__search", "arguments": {"query": 5}}]},
            {"text": "sorry"}
        ]"#,
        Arc::new(ScriptedConsent::deny_all()),
    );
    host.send("try").await.unwrap();
    let results = results(&host);
    assert_eq!(results.len(), 3);
    assert!(
        results.iter().all(|(_, _, is_error)| *is_error),
        "{results:?}"
    );
    assert!(
        results[0].1.contains("no tool named `library__nope`"),
        "{}",
        results[0].1
    );
    assert!(results[1].1.contains("JSON object"), "{}", results[1].1);
    assert!(
        results[2].1.contains("query"),
        "the server names the bad field: {}",
        results[2].1
    );
    assert!(seen[0].searches().is_empty());
}

#[tokio::test]
async fn events_follow_the_turn_in_order() {
    let (mut host, _seen, mut rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"text": "Looking.", "toolCalls": [{"id": "s", "name": "library__search", "arguments": {"query": "x"}}]},
            {"text": "Found x."}
        ]"#,
        Arc::new(ScriptedConsent::deny_all()),
    );
    host.send("find x").await.unwrap();
    let events = drain(&mut rx);
    assert_eq!(
        events,
        vec![
            Event::Thinking,
            Event::TextDelta {
                text: "Looking.".into()
            },
            Event::ModelAnswered {
                usage: None,
                stop_reason: None
            },
            Event::Text {
                text: "Looking.".into()
            },
            Event::ToolCallStarted {
                call_id: "s".into(),
                server: "library".into(),
                tool: "search".into(),
                arguments: json!({"query": "x"}),
            },
            Event::ToolCallFinished {
                call_id: "s".into(),
                is_error: false,
                output: "library found: x".into(),
            },
            Event::Thinking,
            Event::TextDelta {
                text: "Found x.".into()
            },
            Event::ModelAnswered {
                usage: None,
                stop_reason: None
            },
            Event::Text {
                text: "Found x.".into()
            },
        ]
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

/// A server whose `first` and `second` both wait at one barrier, so neither can finish
/// unless both run at once; `first` also waits until `second` has finished, so the
/// results come back in the opposite order of the calls.
fn rendezvous() -> Server {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let second_done = Arc::new(tokio::sync::Notify::new());
    let (b1, b2) = (barrier.clone(), barrier);
    let (n1, n2) = (second_done.clone(), second_done);
    Server::builder("rendezvous", "1.0.0")
        .tool(tool("first", move |_: NoArguments| {
            let (barrier, second_done) = (b1.clone(), n1.clone());
            async move {
                barrier.wait().await;
                second_done.notified().await;
                "first done".to_owned()
            }
        }))
        .tool(tool("second", move |_: NoArguments| {
            let (barrier, second_done) = (b2.clone(), n2.clone());
            async move {
                barrier.wait().await;
                second_done.notify_one();
                "second done".to_owned()
            }
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_calls_of_one_turn_run_at_once_and_their_results_keep_the_call_order() {
    let mut servers = Servers::new();
    let (connection, _peer) = tapped(&rendezvous(), Frames::default());
    servers
        .add_connection(
            "meet",
            connection,
            ServerSettings::default(),
            &StartOptions::default(),
            &EventSink::discard(),
        )
        .await
        .unwrap();
    // Both calls ask (untrusted server): the questions come first, one at a time, in order.
    let consent = Arc::new(ScriptedConsent::new([
        ConsentAnswer::AllowOnce,
        ConsentAnswer::AllowOnce,
    ]));
    let (mut host, _seen, mut rx, _peers) = host(
        Setup {
            servers,
            seen: Vec::new(),
            _peers: Vec::new(),
        },
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"id": "a", "name": "meet__first"}, {"id": "b", "name": "meet__second"}]},
            {"text": "both met"}
        ]"#,
        consent.clone(),
    );
    // Only a guard against hanging: run sequentially, `first` would wait forever.
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(60), host.send("meet"))
        .await
        .expect("the two calls did not run at the same time")
        .unwrap();
    assert_eq!(outcome.text.as_deref(), Some("both met"));
    let asked: Vec<String> = consent.asked().into_iter().map(|r| r.tool).collect();
    assert_eq!(asked, ["first", "second"]);
    assert_eq!(
        results(&host),
        [
            ("a".to_owned(), "first done".to_owned(), false),
            ("b".to_owned(), "second done".to_owned(), false),
        ]
    );
    let events = drain(&mut rx);
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStarted { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["a", "b"]);
    assert_eq!(finished, ["b", "a"], "finish events come as calls end");
    let last_question = events
        .iter()
        .rposition(|e| matches!(e, Event::ConsentAnswered { .. }))
        .unwrap();
    let first_finish = events
        .iter()
        .position(|e| matches!(e, Event::ToolCallFinished { .. }))
        .unwrap();
    assert!(
        last_question < first_finish,
        "consent is settled before any call runs"
    );
}

#[tokio::test]
async fn a_long_tool_result_is_cut_with_a_marker_and_an_event() {
    let (host, _seen, mut rx, _peers) = host(
        libraries(&[("library", true)]).await,
        Policy::new(Vec::new()),
        r#"[
            {"toolCalls": [{"id": "s", "name": "library__search", "arguments": {"query": "ééééééééééééééééééééé"}}]},
            {"text": "ok"}
        ]"#,
        Arc::new(ScriptedConsent::deny_all()),
    );
    let mut host = host.with_max_tool_output(20);
    host.send("search").await.unwrap();
    // "library found: " is 15 characters and the query 21 more.
    let (_, text, is_error) = &results(&host)[0];
    assert!(!is_error);
    assert_eq!(
        text,
        "library found: ééééé\n[output cut: 16 of 36 characters left out]"
    );
    let events = drain(&mut rx);
    assert!(events.contains(&Event::ToolOutputCut {
        call_id: "s".into(),
        total_chars: 36,
        kept_chars: 20,
    }));
    assert!(events.iter().any(
        |e| matches!(e, Event::ToolCallFinished { call_id, output, .. } if call_id == "s" && output == text)
    ));
}

/// The attack: a resource of 3 M characters and a prompt of 2 M reached the model whole,
/// past the cap that tool results had.
#[tokio::test]
async fn attached_resources_and_prompt_results_are_cut_like_tool_results() {
    use junction::server::{prompt, resource};
    use junction_host::agent::DEFAULT_MAX_TOOL_OUTPUT;
    use junction_protocol::prompts::PromptMessage;

    let hostile = Server::builder("hoard", "1.0.0")
        .resource(resource("test://huge", "huge", |_| async {
            "r".repeat(3_000_000)
        }))
        .prompt(prompt("huge", |_| async {
            vec![
                PromptMessage::user_text("p".repeat(1_000_000)),
                PromptMessage::assistant_text("q".repeat(1_000_000)),
                PromptMessage::user_text("after the cut"),
            ]
        }))
        .build()
        .unwrap();
    let mut servers = Servers::new();
    let (connection, _peer) = tapped(&hostile, Frames::default());
    servers
        .add_connection(
            "hoard",
            connection,
            ServerSettings::default(),
            &StartOptions::default(),
            &EventSink::discard(),
        )
        .await
        .unwrap();
    let setup = Setup {
        servers,
        seen: Vec::new(),
        _peers: Vec::new(),
    };
    let (mut host, _, mut rx, _) = host(
        setup,
        Policy::new(Vec::new()),
        "[]",
        Arc::new(ScriptedConsent::deny_all()),
    );

    host.attach("@hoard:test://huge").await.unwrap();
    let Some(Message::Context { text, .. }) = host.conversation().messages().last() else {
        panic!("the attachment is in the conversation");
    };
    let kept = "r".repeat(DEFAULT_MAX_TOOL_OUTPUT);
    assert_eq!(
        text,
        &format!("{kept}\n[output cut: 2900000 of 3000000 characters left out]")
    );
    assert!(drain(&mut rx).iter().any(|e| matches!(
        e,
        Event::ContextAttached { chars, .. } if *chars == text.chars().count()
    )));

    assert_eq!(host.apply_prompt("/hoard:huge").await.unwrap(), 3);
    let texts: Vec<&str> = host.conversation().messages()[1..]
        .iter()
        .map(|m| match m {
            Message::User { text } => text.as_str(),
            Message::Assistant {
                text: Some(text), ..
            } => text.as_str(),
            other => panic!("a prompt message, not {other:?}"),
        })
        .collect();
    let total: usize = texts.iter().map(|t| t.chars().count()).sum();
    assert!(
        total < DEFAULT_MAX_TOOL_OUTPUT + 200,
        "{total} characters entered the conversation"
    );
    assert_eq!(
        texts[0],
        format!(
            "{}\n[output cut: 900000 of 1000000 characters left out]",
            "p".repeat(DEFAULT_MAX_TOOL_OUTPUT)
        )
    );
    assert_eq!(
        texts[1],
        "\n[output cut: 1000000 of 1000000 characters left out]"
    );
    assert_eq!(texts[2], "\n[output cut: 13 of 13 characters left out]");
}

#[tokio::test]
async fn a_session_answer_allows_that_tool_until_the_host_exits_without_saving_it() {
    let file = std::env::temp_dir()
        .join(format!("junction-host-session-{}", std::process::id()))
        .join("consent.json");
    let _ = std::fs::remove_file(&file);
    let consent = Arc::new(ScriptedConsent::new([ConsentAnswer::AllowForSession]));
    let policy = Policy::with_remembered(Vec::new(), Remembered::load(&file).unwrap());
    let (mut host, seen, mut rx, _peers) = host(
        libraries(&[("library", false)]).await,
        policy,
        r#"[
            {"toolCalls": [{"name": "library__delete_book", "arguments": {"id": 1}},
                           {"name": "library__delete_book", "arguments": {"id": 2}}]},
            {"toolCalls": [{"name": "library__delete_book", "arguments": {"id": 3}},
                           {"name": "library__search", "arguments": {"query": "x"}}]},
            {"text": "done"}
        ]"#,
        consent.clone(),
    );
    host.send("delete three books, then search").await.unwrap();
    assert_eq!(seen[0].deletes.load(Ordering::SeqCst), 3);
    let asked: Vec<String> = consent.asked().into_iter().map(|r| r.tool).collect();
    assert_eq!(
        asked,
        ["delete_book", "search"],
        "delete asked once; search is another tool"
    );
    assert!(drain(&mut rx).iter().any(|e| matches!(
        e,
        Event::ConsentAnswered {
            answer: ConsentAnswer::AllowForSession,
            ..
        }
    )));
    assert!(!file.exists(), "a session answer is not written");
    let tools = host.servers().get("library").unwrap().tools();
    let delete = tools.iter().find(|t| t.name == "delete_book").unwrap();
    let next_run = Policy::with_remembered(Vec::new(), Remembered::load(&file).unwrap());
    assert_eq!(
        next_run.decide("library", delete, false).action,
        Action::Ask
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// `server` connected as `jobs` with `settings` on `version` (`None`: automatic
/// negotiation), and the frames the host sends it.
async fn jobs(
    server: &Server,
    settings: ServerSettings,
    version: Option<junction_protocol::ProtocolVersion>,
) -> (Setup, Frames) {
    let frames = Frames::default();
    let (connection, peer) = tapped(server, frames.clone());
    let mut options = StartOptions::default();
    if let Some(version) = version {
        options.client = options.client.version(version);
    }
    let mut servers = Servers::new();
    servers
        .add_connection(
            "jobs",
            connection,
            settings,
            &options,
            &EventSink::discard(),
        )
        .await
        .unwrap();
    let setup = Setup {
        servers,
        seen: Vec::new(),
        _peers: vec![peer],
    };
    (setup, frames)
}

/// A tool that must run as a task, reached on `version` (`None`: automatic negotiation).
async fn a_required_task_tool_answers_the_model(
    version: Option<junction_protocol::ProtocolVersion>,
) {
    use junction::server::Context;
    let server = Server::builder("jobs", "1.0.0")
        .tool(
            tool("report", |ctx: Context, _: NoArgs| async move {
                // Busy past its first poll; says whether it ran as a task.
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                format!("report ready (as a task: {})", ctx.task_id().is_some())
            })
            .task_support(junction_protocol::tools::TaskSupport::Required)
            .annotations(ToolAnnotations::default().read_only(true)),
        )
        .build()
        .unwrap();
    let (setup, frames) = jobs(&server, ServerSettings::trusted(), version).await;
    let script = r#"[
        {"toolCalls": [{"id": "c1", "name": "jobs__report", "arguments": {}}]},
        {"text": "Done."}
    ]"#;
    let (mut host, _, _rx, _) = host(
        setup,
        Policy::new(Vec::new()),
        script,
        Arc::new(ScriptedConsent::new([])),
    );
    host.send("Make the report").await.unwrap();
    let (_, text, is_error) = &results(&host)[0];
    assert!(!is_error, "{version:?}: {text}");
    assert_eq!(text, "report ready (as a task: true)", "{version:?}");
    let sent = frames.lock().unwrap().join("\n");
    let polled = if version.is_some() {
        "tasks/result"
    } else {
        "tasks/get"
    };
    assert!(
        sent.contains(polled),
        "{version:?}: the host waited on the task: {sent}"
    );
}

#[tokio::test]
async fn a_tool_that_must_run_as_a_task_is_called_as_one_on_2025_11_25() {
    a_required_task_tool_answers_the_model(Some(junction_protocol::ProtocolVersion::V2025_11_25))
        .await;
}

#[tokio::test]
async fn a_tool_that_must_run_as_a_task_is_followed_as_one_on_2026_07_28() {
    a_required_task_tool_answers_the_model(None).await;
}

/// An `optional` task tool of a server whose `taskAfterMs` is zero, reached on `version`
/// (`None`: automatic negotiation): the host runs it as a task, shows its status, and an
/// interruption cancels the task on the server.
async fn an_interrupted_task_is_cancelled_on_its_server(
    version: Option<junction_protocol::ProtocolVersion>,
) {
    use junction::server::Context;
    use junction_protocol::tasks::TaskStatus;
    /// Tells, when the handler's future ends (the server aborts it when its task is
    /// cancelled), whether it ran as a task.
    struct Ended(Option<tokio::sync::oneshot::Sender<bool>>, bool);
    impl Drop for Ended {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(self.1);
            }
        }
    }
    let (ended_tx, ended_rx) = tokio::sync::oneshot::channel::<bool>();
    let ended_tx = Arc::new(Mutex::new(Some(ended_tx)));
    let server = Server::builder("jobs", "1.0.0")
        .tool(
            tool("count", move |ctx: Context, _: NoArgs| {
                let ended_tx = ended_tx.clone();
                async move {
                    // Past the first poll, so that on 2026-07-28 the call becomes a task.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    let _ended = Ended(ended_tx.lock().unwrap().take(), ctx.task_id().is_some());
                    ctx.task_status("Counting the shelves");
                    ctx.request().cancellation().cancelled().await;
                    "never seen".to_owned()
                }
            })
            .task_support(junction_protocol::tools::TaskSupport::Optional)
            .annotations(ToolAnnotations::default().read_only(true)),
        )
        .build()
        .unwrap();
    let settings = ServerSettings::trusted().task_after(std::time::Duration::ZERO);
    let (setup, frames) = jobs(&server, settings, version).await;
    let script = r#"[
        {"toolCalls": [{"id": "c1", "name": "jobs__count", "arguments": {}}]},
        {"text": "Stopped."}
    ]"#;
    let (mut host, _, mut rx, _) = host(
        setup,
        Policy::new(Vec::new()),
        script,
        Arc::new(ScriptedConsent::new([])),
    );
    let interrupt = host.interrupt_token();
    // The user presses Ctrl-C once the task says what it is doing.
    let watcher = tokio::spawn(async move {
        let mut statuses = Vec::new();
        while let Some(event) = rx.recv().await {
            if let Event::TaskStatus {
                call_id,
                status,
                message,
                ..
            } = event
            {
                assert_eq!(call_id, "c1");
                let told = message.as_deref() == Some("Counting the shelves");
                statuses.push((status, message));
                if told {
                    interrupt.cancel();
                }
            }
        }
        statuses
    });
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        host.send("Count the shelves"),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "{version:?}: the turn did not end: {:?}",
            frames.lock().unwrap()
        )
    })
    .unwrap();
    assert_eq!(outcome.stop, Stop::Interrupted, "{version:?}");
    let ran_as_task = tokio::time::timeout(std::time::Duration::from_secs(10), ended_rx)
        .await
        .expect("the handler was cancelled")
        .unwrap();
    assert!(ran_as_task, "{version:?}: the call ran as a task");
    let sent = frames.lock().unwrap().join("\n");
    assert!(
        sent.contains("tasks/cancel"),
        "{version:?}: the host cancelled the task: {sent}"
    );
    drop(host);
    let statuses = watcher.await.unwrap();
    assert_eq!(
        statuses.last(),
        Some(&(TaskStatus::Working, Some("Counting the shelves".to_owned()))),
        "{version:?}"
    );
}

#[tokio::test]
async fn an_optional_tool_past_the_threshold_runs_as_a_task_and_ctrl_c_cancels_it_on_2025_11_25() {
    an_interrupted_task_is_cancelled_on_its_server(Some(
        junction_protocol::ProtocolVersion::V2025_11_25,
    ))
    .await;
}

#[tokio::test]
async fn an_optional_tool_that_becomes_a_task_is_cancelled_by_ctrl_c_on_2026_07_28() {
    an_interrupted_task_is_cancelled_on_its_server(None).await;
}
