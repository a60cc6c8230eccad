//! # junction-host
//!
//! The host side of Junction: it owns the conversation, the model, the policy and the
//! user's consent, and connects to many MCP servers, one [`junction::client::Client`] each.
//! Servers never see the conversation nor each other. The host never prints: it reports
//! what happens as [`events::Event`]s that a CLI or GUI renders.
//!
//! - [`config`]: server definitions from Claude Desktop, `.mcp.json` and VS Code files.
//! - [`servers`]: start every server in parallel, as a child process or over Streamable HTTP
//!   or HTTP+SSE; failures come with their reason and a child's stderr tail; a server that
//!   stops is noticed at once and started again on the next call to it (with back-off) or
//!   on [`Host::restart`].
//! - [`naming`]: tools reach the model as `server__tool`, valid for LLM APIs, never colliding.
//! - [`prompts`]: prompts as `/server:prompt` commands; [`resources`]: `@server:uri` attachments.
//! - [`policy`] and [`consent`]: allow / ask / deny rules, trusted annotations, remembered answers.
//! - [`conversation`], [`model`] and [`agent`]: the messages, the model (Anthropic Messages,
//!   OpenAI-compatible Chat Completions, or a script), and the loop.
//! - [`mediation`] and [`interaction`]: what servers ask back. Sampling is answered by the
//!   host's model from the server's own messages only, after the user approves (or as the
//!   server's `sampling` setting says); elicitation is put to the user with the server's
//!   name; roots are the `file://` URIs set per server, changed at run time with
//!   [`Host::set_roots`].
//! - [`notifications`]: list changes re-list a server's tools, prompts and resources (a
//!   burst costs one listing; the model sees new tools at its next step); other
//!   notifications become events.
//! - [`tool_call`]: one call with a progress token, a timeout that counts only silence,
//!   and cancellation.
//! - [`saved`]: conversations kept as one JSON file per session, to resume.
//! - [`server_log`]: the servers' log messages kept in a file under the state directory.
//! - [`events`]: what the host reports; [`display`]: server text made safe to show.
//!
//! ```
//! use std::sync::Arc;
//! use junction::server::{tool, Server};
//! use junction_host::consent::ScriptedConsent;
//! use junction_host::events::EventSink;
//! use junction_host::interaction::{Approval, ScriptedInteraction};
//! use junction_host::mediation::Mediation;
//! use junction_host::model::ScriptedModel;
//! use junction_host::policy::{Action, Policy, Rule};
//! use junction_host::servers::{ServerSettings, Servers, StartOptions};
//! use junction_host::Host;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Query {
//!     text: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let library = Server::builder("library", "1.0.0")
//!     .tool(tool("search", |q: Query| async move { format!("1 book about {}", q.text) }))
//!     .build()
//!     .unwrap();
//! let (client_end, server_end) = junction::transport::memory::pair(Default::default());
//! let _served = library.serve(server_end);
//!
//! let model = Arc::new(ScriptedModel::from_json(r#"[
//!     {"toolCalls": [{"name": "library__search", "arguments": {"text": "dunes"}}]},
//!     {"text": "There is one book about dunes."}
//! ]"#).unwrap());
//! // Servers may ask the model for completions (after the user approves) and the user for input.
//! let user = Arc::new(ScriptedInteraction::new().sampling([Approval::Allow]));
//! let options = StartOptions::default().mediation(Mediation::new(model.clone(), user));
//! let mut servers = Servers::new();
//! servers.add_connection("library", client_end, ServerSettings::default(), &options, &EventSink::discard()).await.unwrap();
//! let policy = Policy::new(vec![Rule::new("library__search", Action::Allow)]);
//! let mut host = Host::new(servers, policy, model, Arc::new(ScriptedConsent::deny_all()), EventSink::discard());
//! let outcome = host.send("Find me a book about dunes").await.unwrap();
//! assert_eq!(outcome.text.as_deref(), Some("There is one book about dunes."));
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod agent;
pub mod auth;
pub mod config;
pub mod consent;
pub mod conversation;
pub mod display;
pub mod events;
pub mod interaction;
pub mod mediation;
pub mod model;
pub mod naming;
pub mod notifications;
pub mod policy;
pub mod prompts;
pub mod resources;
pub mod saved;
pub mod server_log;
pub mod servers;
pub mod state_file;
pub mod tasks_left;
pub mod tool_call;

pub use agent::{Host, HostError, Stop, TurnOutcome};
