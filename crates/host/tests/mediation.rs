//! What servers ask back, end to end: in-process servers (the junction server framework over
//! in-memory connections) whose tools sample, elicit and list roots, against a host with a
//! scripted model and a scripted user.

use std::collections::BTreeMap;
use std::sync::Arc;

use junction::client::Negotiation;
use junction::server::{tool, Context, Server};
use junction::session::Peer;
use junction_host::consent::ScriptedConsent;
use junction_host::conversation::Message;
use junction_host::events::{Event, EventSink};
use junction_host::interaction::{Approval, ElicitationAnswer, ScriptedInteraction};
use junction_host::mediation::Mediation;
use junction_host::model::ScriptedModel;
use junction_host::policy::{Action, Policy, Rule};
use junction_host::servers::{RootsError, ServerSettings, Servers, StartOptions};
use junction_host::{Host, HostError};
use junction_protocol::elicitation::{
    ElicitAction, ElicitParams, FormParams, PrimitiveSchemaDefinition, RequestedSchema, UrlParams,
};
use junction_protocol::roots::Root;
use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
use junction_protocol::ProtocolVersion;
use junction_test_support::tap::{tapped, Frames};
use tokio::sync::mpsc::{self, UnboundedReceiver};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    topic: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A server whose tools ask the client for things; the roots it hears about after a
/// `notifications/roots/list_changed` go to `roots_heard`.
fn asking_server(label: &'static str, roots_heard: mpsc::UnboundedSender<Vec<String>>) -> Server {
    Server::builder(label, "1.0.0")
        .tool(tool(
            "summarize",
            move |ctx: Context, t: Topic| async move {
                let params = CreateMessageParams::new(
                    vec![SamplingMessage::user_text(format!(
                        "Write one line about {}",
                        t.topic
                    ))],
                    64,
                )
                .system_prompt("You write one line.");
                match ctx.create_message(params).await {
                    Ok(answer) => {
                        let text: Vec<&str> = answer
                            .content
                            .blocks()
                            .iter()
                            .filter_map(|b| b.as_text())
                            .collect();
                        format!("{label} got from {}: {}", answer.model, text.join(" "))
                    }
                    Err(e) => format!("{label} sampling failed: {e}"),
                }
            },
        ))
        .tool(tool("ask_name", |ctx: Context, _: Nothing| async move {
            let form = FormParams::new(
                "What is your name?",
                RequestedSchema::new().required("name", PrimitiveSchemaDefinition::string()),
            );
            match ctx.elicit(form).await {
                Ok(r) => match r.action {
                    ElicitAction::Accept => format!(
                        "accepted: {}",
                        serde_json::to_string(&r.content).unwrap_or_default()
                    ),
                    ElicitAction::Decline => "declined".to_owned(),
                    ElicitAction::Cancel => "cancelled".to_owned(),
                },
                Err(e) => format!("elicitation failed: {e}"),
            }
        }))
        .tool(tool(
            "ask_name_as_task",
            |ctx: Context, _: Nothing| async move {
                let form = FormParams::new(
                    "What is your name?",
                    RequestedSchema::new().required("name", PrimitiveSchemaDefinition::string()),
                );
                match ctx.elicit_as_task(form, Some(60_000)).await {
                    Ok(r) => format!(
                        "{:?} as a task: {}",
                        r.action,
                        serde_json::to_string(&r.content).unwrap_or_default()
                    ),
                    Err(e) => format!("elicitation failed: {e}"),
                }
            },
        ))
        .tool(tool(
            "summarize_as_task",
            |ctx: Context, t: Topic| async move {
                let params = CreateMessageParams::new(
                    vec![SamplingMessage::user_text(format!(
                        "One line on {}",
                        t.topic
                    ))],
                    64,
                );
                match ctx.create_message_as_task(params, Some(60_000)).await {
                    Ok(answer) => format!("sampled as a task by {}", answer.model),
                    Err(e) => format!("sampling failed: {e}"),
                }
            },
        ))
        .tool(tool("log_in", |ctx: Context, _: Nothing| async move {
            let url = UrlParams::new(
                "Log in to continue",
                "login-1",
                "https://auth.example/login",
            );
            match ctx.elicit(url).await {
                Ok(r) => format!("{:?}, content {:?}", r.action, r.content),
                Err(e) => format!("elicitation failed: {e}"),
            }
        }))
        .tool(tool("where", |ctx: Context, _: Nothing| async move {
            match ctx.list_roots().await {
                Ok(r) => r
                    .roots
                    .into_iter()
                    .map(|r| r.uri)
                    .collect::<Vec<_>>()
                    .join(" "),
                Err(e) => format!("roots failed: {e}"),
            }
        }))
        .tool(tool("grow", |ctx: Context, _: Nothing| async move {
            let extra = tool("extra", |_: Nothing| async { "more" });
            match ctx.server().add_tool(extra) {
                Ok(()) => "grown".to_owned(),
                Err(e) => format!("could not grow: {e}"),
            }
        }))
        .on_roots_changed(move |changed| {
            let heard = roots_heard.clone();
            tokio::spawn(async move {
                if let Ok(r) = changed.list_roots().await {
                    let _ = heard.send(r.roots.into_iter().map(|r| r.uri).collect());
                }
            });
        })
        .build()
        .unwrap()
}

struct Rig {
    host: Host,
    model: Arc<ScriptedModel>,
    user: Arc<ScriptedInteraction>,
    events: UnboundedReceiver<Event>,
    frames: BTreeMap<&'static str, Frames>,
    roots_heard: BTreeMap<&'static str, UnboundedReceiver<Vec<String>>>,
    servers: BTreeMap<&'static str, Server>,
    _peers: Vec<Peer>,
}

/// A host over one asking server per (name, settings), every tool call allowed.
/// A server spoken to in the handshake family (2025-11-25), where its questions are
/// requests of their own and refusals reach it as JSON-RPC errors.
fn handshake() -> ServerSettings {
    ServerSettings::default().negotiation(Negotiation::Exactly(ProtocolVersion::V2025_11_25))
}

async fn rig(
    specs: Vec<(&'static str, ServerSettings)>,
    script: &str,
    user: ScriptedInteraction,
) -> Rig {
    let model = Arc::new(ScriptedModel::from_json(script).unwrap());
    let user = Arc::new(user);
    let (sink, events) = EventSink::channel();
    let options = StartOptions::default().mediation(Mediation::new(model.clone(), user.clone()));
    let mut servers = Servers::new();
    let mut rig_frames = BTreeMap::new();
    let mut roots_heard = BTreeMap::new();
    let mut built = BTreeMap::new();
    let mut peers = Vec::new();
    for (name, settings) in specs {
        let (tx, rx) = mpsc::unbounded_channel();
        let server = asking_server(name, tx);
        let frames = Frames::default();
        let (connection, peer) = tapped(&server, frames.clone());
        servers
            .add_connection(name, connection, settings, &options, &sink)
            .await
            .unwrap();
        rig_frames.insert(name, frames);
        roots_heard.insert(name, rx);
        built.insert(name, server);
        peers.push(peer);
    }
    let host = Host::new(
        servers,
        Policy::new(vec![Rule::new("*", Action::Allow)]),
        model.clone(),
        Arc::new(ScriptedConsent::deny_all()),
        sink,
    );
    Rig {
        host,
        model,
        user,
        events,
        frames: rig_frames,
        roots_heard,
        servers: built,
        _peers: peers,
    }
}

impl Rig {
    /// The servers whose sampling requests were put to the user, in order.
    fn sampling_asked_by(&self) -> Vec<String> {
        self.user
            .sampling_asked()
            .into_iter()
            .map(|r| r.server)
            .collect()
    }

    fn results(&self) -> Vec<String> {
        self.host
            .conversation()
            .messages()
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    fn drain(&mut self) -> Vec<Event> {
        let mut all = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            all.push(e);
        }
        all
    }

    fn frames(&self, server: &str) -> String {
        self.frames[server].lock().unwrap().join("\n")
    }
}

#[tokio::test]
async fn a_tool_that_samples_gets_the_models_answer_after_the_user_approves_the_request_and_the_answer(
) {
    let mut rig = rig(
        vec![("writer", handshake())],
        r#"[
            {"toolCalls": [{"name": "writer__summarize", "arguments": {"topic": "tides"}}]},
            {"sampling": {"text": "Tides follow the moon."}},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new().sampling([Approval::Allow]),
    )
    .await;
    rig.host.send("Summarize tides").await.unwrap();
    assert_eq!(
        rig.results(),
        ["writer got from scripted: Tides follow the moon."]
    );
    let asked = rig.user.sampling_asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].server, "writer");
    assert_eq!(
        asked[0].params.system_prompt.as_deref(),
        Some("You write one line.")
    );
    assert_eq!(
        asked[0].params.messages,
        [SamplingMessage::user_text("Write one line about tides")]
    );
    assert_eq!(
        rig.user.reviewed().len(),
        1,
        "the answer was shown before it was sent"
    );
    assert_eq!(rig.model.sampled(), [asked[0].params.clone()]);
    let events = rig.drain();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::SamplingRequested { request } if request.server == "writer")));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::SamplingAnswered { server, .. } if server == "writer")));
}

#[tokio::test]
async fn a_refused_sampling_request_gets_error_minus_one_and_never_reaches_the_model() {
    let mut rig = rig(
        vec![
            ("asker", handshake()),
            ("blocked", handshake().sampling(Action::Deny)),
            ("free", handshake().sampling(Action::Allow)),
        ],
        r#"[
            {"toolCalls": [
                {"name": "asker__summarize", "arguments": {"topic": "rain"}},
                {"name": "blocked__summarize", "arguments": {"topic": "snow"}},
                {"name": "free__summarize", "arguments": {"topic": "sun"}}
            ]},
            {"sampling": {"text": "The sun shines."}},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new().sampling([Approval::Deny]),
    )
    .await;
    rig.host.send("Summarize the weather").await.unwrap();
    let results = rig.results();
    for refused in &results[..2] {
        assert!(
            refused.contains("User rejected sampling request") && refused.contains("(code -1)"),
            "{refused}"
        );
    }
    assert_eq!(results[2], "free got from scripted: The sun shines.");
    let asked = rig.sampling_asked_by();
    assert_eq!(
        asked,
        ["asker"],
        "only the `ask` server's request was put to the user"
    );
    let sampled = rig.model.sampled();
    assert_eq!(sampled.len(), 1, "the model saw only the allowed request");
    assert_eq!(
        sampled[0].messages,
        [SamplingMessage::user_text("Write one line about sun")]
    );
    let denied: Vec<String> = rig
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::SamplingDenied { server, .. } => Some(server),
            _ => None,
        })
        .collect();
    assert_eq!(denied, ["asker", "blocked"]);
}

#[tokio::test]
async fn an_answer_the_user_withholds_never_reaches_the_server() {
    let mut rig = rig(
        vec![("writer", handshake())],
        r#"[
            {"toolCalls": [{"name": "writer__summarize", "arguments": {"topic": "tides"}}]},
            {"sampling": {"text": "A line the user dislikes."}},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new()
            .sampling([Approval::Allow])
            .reviews([Approval::Deny]),
    )
    .await;
    rig.host.send("Summarize tides").await.unwrap();
    let result = &rig.results()[0];
    assert!(result.contains("(code -1)"), "{result}");
    assert!(!result.contains("dislikes"), "{result}");
    assert!(!rig.frames("writer").contains("dislikes"));
    assert_eq!(rig.model.sampled().len(), 1);
    assert!(rig
        .drain()
        .iter()
        .any(|e| matches!(e, Event::SamplingDenied { server, .. } if server == "writer")));
}

#[tokio::test]
async fn elicitation_accept_decline_and_cancel_each_reach_the_tool_with_the_server_named() {
    let mut rig = rig(
        vec![("desk", handshake())],
        r#"[
            {"toolCalls": [
                {"name": "desk__ask_name"}, {"name": "desk__ask_name"}, {"name": "desk__ask_name"},
                {"name": "desk__ask_name"}, {"name": "desk__log_in"}
            ]},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new().elicitations([
            ElicitationAnswer::Accept(BTreeMap::from([("name".to_owned(), "Ada".into())])),
            ElicitationAnswer::Decline,
            ElicitationAnswer::Cancel,
            ElicitationAnswer::Accept(BTreeMap::from([("age".to_owned(), 36.into())])),
            ElicitationAnswer::Accept(BTreeMap::from([("ignored".to_owned(), "x".into())])),
        ]),
    )
    .await;
    rig.host.send("Who am I?").await.unwrap();
    let results = rig.results();
    assert_eq!(results[0], r#"accepted: {"name":"Ada"}"#);
    assert_eq!(results[1], "declined");
    assert_eq!(results[2], "cancelled");
    assert!(
        results[3].contains("elicitation failed") && results[3].contains("`name` is required"),
        "content that does not match the schema is an error, not an answer: {}",
        results[3]
    );
    assert_eq!(
        results[4], "Accept, content None",
        "URL mode accepts without content"
    );
    let asked = rig.user.elicitations_asked();
    assert_eq!(asked.len(), 5);
    assert!(asked.iter().all(|r| r.server == "desk"));
    assert_eq!(asked[0].params.message(), "What is your name?");
    assert!(
        matches!(&asked[4].params, ElicitParams::Url(u) if u.url == "https://auth.example/login")
    );
    let actions: Vec<ElicitAction> = rig
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::ElicitationAnswered { server, action } if server == "desk" => Some(action),
            _ => None,
        })
        .collect();
    assert_eq!(
        actions,
        [
            ElicitAction::Accept,
            ElicitAction::Decline,
            ElicitAction::Cancel,
            ElicitAction::Accept,
            ElicitAction::Accept
        ]
    );
}

#[tokio::test]
async fn a_server_may_ask_the_person_as_a_task_and_collects_the_answer_when_it_is_given() {
    let mut rig = rig(
        vec![("desk", handshake())],
        r#"[
            {"toolCalls": [{"name": "desk__ask_name_as_task"}]},
            {"toolCalls": [{"name": "desk__summarize_as_task", "arguments": {"topic": "tides"}}]},
            {"sampling": {"text": "Tides follow the moon."}},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new()
            .elicitations([ElicitationAnswer::Accept(BTreeMap::from([(
                "name".to_owned(),
                "Ada".into(),
            )]))])
            .sampling([Approval::Allow]),
    )
    .await;
    rig.host.send("Who am I?").await.unwrap();
    let results = rig.results();
    assert_eq!(results[0], r#"Accept as a task: {"name":"Ada"}"#);
    assert!(
        results[1].starts_with("sampled as a task by "),
        "{}",
        results[1]
    );
    let frames = rig.frames("desk");
    let init = frames
        .lines()
        .find(|l| l.contains("\"initialize\""))
        .unwrap_or_default();
    assert!(
        init.contains(
            r#""requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}"#
        ),
        "the host declares task-augmented questions: {init}"
    );
    // The host's frames: each question answered at once with a task, then its answer given
    // to the server's `tasks/result`.
    let created = frames.matches(r#""result":{"task":{"taskId""#).count();
    assert_eq!(created, 2, "both questions became tasks: {frames}");
    assert!(
        frames.contains(r#""io.modelcontextprotocol/related-task""#),
        "the answers came back as the tasks' results: {frames}"
    );
}

#[tokio::test]
async fn roots_are_listed_as_configured_and_changes_are_announced_to_servers_that_have_roots() {
    let mut rig = rig(
        vec![
            ("files", handshake().roots([Root::new("file:///srv/notes")])),
            ("plain", handshake()),
        ],
        r#"[
            {"toolCalls": [{"name": "files__where"}, {"name": "plain__where"}]},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new(),
    )
    .await;
    rig.host.send("Where are my files?").await.unwrap();
    let results = rig.results();
    assert_eq!(results[0], "file:///srv/notes");
    assert!(
        results[1].contains("did not declare the `roots` capability"),
        "{}",
        results[1]
    );

    rig.host
        .set_roots("files", vec![Root::new("file:///srv/other")])
        .unwrap();
    let heard = rig.roots_heard.get_mut("files").unwrap().recv().await;
    assert_eq!(heard, Some(vec!["file:///srv/other".to_owned()]));
    assert_eq!(
        rig.host.servers().get("files").unwrap().roots(),
        Some(vec![Root::new("file:///srv/other")])
    );

    let told = rig
        .host
        .set_all_roots(vec![Root::new("file:///srv/third")])
        .unwrap();
    assert_eq!(told, ["files"]);
    let heard = rig.roots_heard.get_mut("files").unwrap().recv().await;
    assert_eq!(heard, Some(vec!["file:///srv/third".to_owned()]));

    let err = rig
        .host
        .set_roots("plain", vec![Root::new("file:///x")])
        .unwrap_err();
    assert!(
        matches!(&err, HostError::Roots(RootsError::NotDeclared(s)) if s == "plain"),
        "{err}"
    );
    let err = rig
        .host
        .set_roots("files", vec![Root::new("https://example.com")])
        .unwrap_err();
    assert!(
        matches!(err, HostError::Roots(RootsError::NotAFileUri(_))),
        "{err}"
    );
    assert_eq!(
        rig.host.servers().get("files").unwrap().roots(),
        Some(vec![Root::new("file:///srv/third")]),
        "a refused change keeps the roots as they were"
    );
    assert!(!rig.frames("plain").contains("roots/list_changed"));
}

#[tokio::test]
async fn a_tools_list_change_reaches_the_models_tool_list() {
    let mut rig = rig(
        vec![("lab", ServerSettings::default())],
        r#"[
            {"toolCalls": [{"name": "lab__grow"}]},
            {"text": "grown"},
            {"text": "I see the new tool."}
        ]"#,
        ScriptedInteraction::new(),
    )
    .await;
    assert!(rig.host.tool_names().resolve("lab__extra").is_none());
    rig.host.send("Grow").await.unwrap();
    let changed = loop {
        match rig.events.recv().await {
            Some(Event::ToolsChanged { server, tools }) => break (server, tools),
            Some(_) => continue,
            None => panic!("the event stream ended before the tools changed"),
        }
    };
    assert_eq!(changed.0, "lab");
    assert!(changed.1.contains(&"extra".to_owned()), "{:?}", changed.1);
    assert!(rig.host.tool_names().resolve("lab__extra").is_some());
    rig.host.send("What can you do now?").await.unwrap();
    let offered = rig.model.offered_tools();
    assert!(!offered[0].contains(&"lab__extra".to_owned()));
    assert!(offered[2].contains(&"lab__extra".to_owned()), "{offered:?}");

    let handle = rig.servers["lab"].handle();
    assert!(handle.remove_tool("extra"));
    loop {
        match rig.events.recv().await {
            Some(Event::ToolsChanged { tools, .. }) => {
                assert!(!tools.contains(&"extra".to_owned()));
                break;
            }
            Some(_) => continue,
            None => panic!("the event stream ended before the tools changed"),
        }
    }
    assert!(rig.host.tool_names().resolve("lab__extra").is_none());
}

#[tokio::test]
async fn the_conversation_never_reaches_a_server_and_each_server_gets_only_its_own_answer() {
    const SECRET: &str = "the cat sleeps under the blue piano";
    // The scripted model answers samplings in the order they arrive; in the handshake
    // family that order is the calls' order (2026-07-28's extra round trip can swap them).
    let mut rig = rig(
        vec![
            ("alpha", handshake().sampling(Action::Allow)),
            ("beta", handshake().sampling(Action::Allow)),
        ],
        r#"[
            {"toolCalls": [
                {"name": "alpha__summarize", "arguments": {"topic": "tides"}},
                {"name": "beta__summarize", "arguments": {"topic": "stars"}}
            ]},
            {"sampling": {"text": "answer for alpha"}},
            {"sampling": {"text": "answer for beta"}},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new(),
    )
    .await;
    rig.host
        .send(format!("My secret: {SECRET}. Summarize tides and stars."))
        .await
        .unwrap();
    assert_eq!(
        rig.results(),
        [
            "alpha got from scripted: answer for alpha",
            "beta got from scripted: answer for beta"
        ]
    );
    for sampled in rig.model.sampled() {
        let text = serde_json::to_string(&sampled).unwrap();
        assert!(
            !text.contains(SECRET),
            "the model got the conversation: {text}"
        );
    }
    let alpha = rig.frames("alpha");
    let beta = rig.frames("beta");
    assert!(!alpha.contains(SECRET) && !beta.contains(SECRET));
    assert!(alpha.contains("answer for alpha") && !alpha.contains("answer for beta"));
    assert!(beta.contains("answer for beta") && !beta.contains("answer for alpha"));
    let requested: Vec<(String, String)> = rig
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::SamplingRequested { request } => Some((
                request.server,
                serde_json::to_string(&request.params.messages).unwrap(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(requested.len(), 2);
    assert!(requested[0].0 == "alpha" && requested[0].1.contains("tides"));
    assert!(requested[1].0 == "beta" && requested[1].1.contains("stars"));
}

#[tokio::test]
async fn on_2026_07_28_a_refused_sampling_fails_the_call_and_never_reaches_the_model() {
    // 2026-07-28 has no way to answer an input request with an error: the call fails here,
    // and the model is told why.
    let mut rig = rig(
        vec![
            ("asker", ServerSettings::default()),
            ("blocked", ServerSettings::default().sampling(Action::Deny)),
        ],
        r#"[
            {"toolCalls": [
                {"name": "asker__summarize", "arguments": {"topic": "rain"}},
                {"name": "blocked__summarize", "arguments": {"topic": "snow"}}
            ]},
            {"text": "done"}
        ]"#,
        ScriptedInteraction::new().sampling([Approval::Deny]),
    )
    .await;
    rig.host.send("Summarize the weather").await.unwrap();
    for refused in rig.results() {
        assert!(
            refused.contains("User rejected sampling request")
                && refused.contains("The call could not be completed"),
            "{refused}"
        );
    }
    assert!(rig.model.sampled().is_empty(), "the model saw no request");
    let asked = rig.sampling_asked_by();
    assert_eq!(asked, ["asker"]);
}

#[tokio::test]
async fn on_2026_07_28_new_roots_are_what_the_server_gets_when_it_next_asks() {
    let mut rig = rig(
        vec![(
            "files",
            ServerSettings::default().roots([Root::new("file:///srv/notes")]),
        )],
        r#"[
            {"toolCalls": [{"name": "files__where"}]},
            {"text": "first"},
            {"toolCalls": [{"name": "files__where"}]},
            {"text": "second"}
        ]"#,
        ScriptedInteraction::new(),
    )
    .await;
    rig.host.send("Where are my files?").await.unwrap();
    rig.host
        .set_roots("files", vec![Root::new("file:///srv/other")])
        .unwrap();
    rig.host.send("And now?").await.unwrap();
    assert_eq!(rig.results(), ["file:///srv/notes", "file:///srv/other"]);
}
