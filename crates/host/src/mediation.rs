//! What the host answers when a server asks something of it (MCP 2025-11-25, client
//! features): sampling, elicitation and roots.
//!
//! - Sampling (`sampling/createMessage`) is served by the host's own [`Model`], with only the
//!   messages the server sent: never the host's conversation (`includeContext` is not
//!   declared, so the client refuses requests for it). The server's `sampling` setting
//!   decides: `allow` goes straight to the model; `ask` (the default) puts the request to the
//!   user before the model sees it and the answer to the user before the server does; `deny`
//!   refuses. A refusal answers the server with error -1, "User rejected sampling request",
//!   and the model is not called.
//! - Elicitation (`elicitation/create`, form and URL mode) is put to the user with the
//!   server's name; the answer is accept (with the form's values), decline or cancel. The
//!   client checks accepted values against the requested schema before sending them.
//! - Roots (`roots/list`) are the `file://` URIs set for the server; a server without roots
//!   is not told the capability exists.
//!
//! Each handler is installed per server and knows only that server's name: a request from
//! one server is answered to that server alone. Until the handshake with a server has
//! finished (`Handshake`), every request it sends is refused: the specification lets a
//! server send only pings and logging before the client's `initialized`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use tokio::time::Instant;

use junction::client::{ClientOptions, Elicitation, HandlerError, Roots, Sampling};
use junction::server::task::TaskSettings;
use junction_protocol::elicitation::{ElicitParams, ElicitResult};
use junction_protocol::roots::Root;
use junction_protocol::sampling::{CreateMessageParams, CreateMessageResult};

use crate::events::{Event, EventSink};
use crate::interaction::{
    Approval, ElicitationAnswer, ElicitationRequest, Interaction, SamplingRequest,
};
use crate::model::Model;
use crate::policy::Action;

/// The message of the error a server gets when its sampling request is refused (as in the
/// specification's example).
pub const SAMPLING_REJECTED: &str = "User rejected sampling request";

/// Whether the handshake with one server has finished; the handlers refuse until it has.
#[derive(Debug, Clone, Default)]
pub(crate) struct Handshake(Arc<AtomicBool>);

impl Handshake {
    /// Marks the handshake finished: the server's requests are served from now on.
    pub(crate) fn finish(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Refuses a request that came before the handshake finished.
    fn check(&self, method: &str) -> Result<(), HandlerError> {
        if self.0.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(HandlerError::new(format!(
                "{method} was sent before the handshake finished; the host refuses it"
            )))
        }
    }
}

/// Whether the user is answering a question of one server (an elicitation, a sampling
/// approval or review), and when the last one was answered: a tool call's timeout does not
/// run meanwhile (see [`crate::agent`]).
#[derive(Debug, Clone)]
pub struct Attention(Arc<tokio::sync::watch::Sender<(usize, Instant)>>);

impl Default for Attention {
    fn default() -> Self {
        Attention(Arc::new(tokio::sync::watch::Sender::new((
            0,
            Instant::now(),
        ))))
    }
}

impl Attention {
    /// Runs `question` while it counts as the user's attention.
    async fn during<T>(&self, question: impl std::future::Future<Output = T>) -> T {
        self.0.send_modify(|(pending, _)| *pending += 1);
        let answer = question.await;
        self.0.send_modify(|(pending, answered)| {
            *pending = pending.saturating_sub(1);
            *answered = Instant::now();
        });
        answer
    }

    /// Follows the questions: (how many are open, when the last one was answered).
    pub fn watch(&self) -> tokio::sync::watch::Receiver<(usize, Instant)> {
        self.0.subscribe()
    }
}

/// Who answers servers' sampling and elicitation requests: the host's model and the user.
#[derive(Clone)]
pub struct Mediation {
    model: Arc<dyn Model>,
    interaction: Arc<dyn Interaction>,
}

impl std::fmt::Debug for Mediation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mediation").finish_non_exhaustive()
    }
}

impl Mediation {
    /// Sampling answered by `model`, with `interaction` asking the user.
    pub fn new(model: Arc<dyn Model>, interaction: Arc<dyn Interaction>) -> Self {
        Mediation { model, interaction }
    }

    /// Sets the sampling and elicitation handlers of `server` on `options`.
    pub(crate) fn install(
        &self,
        server: &str,
        sampling: Action,
        events: &EventSink,
        handshake: &Handshake,
        attention: &Attention,
        options: ClientOptions,
    ) -> ClientOptions {
        let handler = Handler {
            mediation: self.clone(),
            server: server.to_owned(),
            sampling,
            events: events.clone(),
            handshake: handshake.clone(),
            attention: attention.clone(),
        };
        let for_elicitation = handler.clone();
        options
            .sampling(
                Sampling::new(move |params, _ctx| {
                    let handler = handler.clone();
                    async move { handler.sample(params).await }
                })
                .with_tools(),
            )
            .elicitation(
                Elicitation::form(move |params, _ctx| {
                    let handler = for_elicitation.clone();
                    async move {
                        handler.handshake.check("elicitation/create")?;
                        Ok(handler.elicit(params).await)
                    }
                })
                .with_url(),
            )
            // A person may take minutes to answer: a server may ask as a task and come back
            // for the answer instead of holding a request open.
            .task_requests(TaskSettings::default())
    }
}

/// One server's handlers.
#[derive(Clone)]
struct Handler {
    mediation: Mediation,
    server: String,
    sampling: Action,
    events: EventSink,
    handshake: Handshake,
    attention: Attention,
}

impl Handler {
    async fn sample(
        &self,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, HandlerError> {
        self.handshake.check("sampling/createMessage")?;
        let request = SamplingRequest {
            server: self.server.clone(),
            params,
        };
        self.events.emit(Event::SamplingRequested {
            request: request.clone(),
        });
        let interaction = &self.mediation.interaction;
        let refusal = match self.sampling {
            Action::Allow => None,
            Action::Deny => Some("the config denies sampling to this server"),
            Action::Ask => (self
                .attention
                .during(interaction.approve_sampling(&request))
                .await
                == Approval::Deny)
                .then_some("the user declined the request"),
        };
        if let Some(reason) = refusal {
            return Err(self.deny(reason, SAMPLING_REJECTED));
        }
        let result = self
            .mediation
            .model
            .sample(&request.params)
            .await
            .map_err(|e| {
                self.events.emit(Event::SamplingDenied {
                    server: self.server.clone(),
                    reason: format!("the model failed: {e}"),
                });
                HandlerError::new(format!("the host's model failed: {e}"))
            })?;
        if self.sampling == Action::Ask
            && self
                .attention
                .during(interaction.review_sampling(&request, &result))
                .await
                == Approval::Deny
        {
            return Err(self.deny(
                "the user withheld the model's answer",
                "User rejected the sampled message",
            ));
        }
        self.events.emit(Event::SamplingAnswered {
            server: self.server.clone(),
            result: result.clone(),
        });
        Ok(result)
    }

    fn deny(&self, reason: &str, message: &str) -> HandlerError {
        self.events.emit(Event::SamplingDenied {
            server: self.server.clone(),
            reason: reason.to_owned(),
        });
        HandlerError::rejected(message)
    }

    async fn elicit(&self, params: ElicitParams) -> ElicitResult {
        let request = ElicitationRequest {
            server: self.server.clone(),
            params,
        };
        self.events.emit(Event::ElicitationRequested {
            request: request.clone(),
        });
        let answer = self
            .attention
            .during(self.mediation.interaction.elicit(&request))
            .await;
        let result = match (answer, &request.params) {
            (ElicitationAnswer::Accept(content), ElicitParams::Form(_)) => {
                ElicitResult::accept(content)
            }
            // The user agreed to visit the URL; the host itself never opens it.
            (ElicitationAnswer::Accept(_), ElicitParams::Url(_)) => ElicitResult::accept_url(),
            (ElicitationAnswer::Decline, _) => ElicitResult::decline(),
            (ElicitationAnswer::Cancel, _) => ElicitResult::cancel(),
        };
        self.events.emit(Event::ElicitationAnswered {
            server: self.server.clone(),
            action: result.action,
        });
        result
    }
}

/// The roots one server is told about; the host changes them at run time.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedRoots(Arc<RwLock<Vec<Root>>>);

impl SharedRoots {
    pub(crate) fn new(roots: Vec<Root>) -> Self {
        SharedRoots(Arc::new(RwLock::new(roots)))
    }

    pub(crate) fn get(&self) -> Vec<Root> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set(&self, roots: Vec<Root>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = roots;
    }

    /// The `roots/list` handler (declares `roots.listChanged`), refusing until the
    /// handshake has finished.
    pub(crate) fn handler(&self, handshake: &Handshake) -> Roots {
        let roots = self.clone();
        let handshake = handshake.clone();
        Roots::new(move |_ctx| {
            let list = handshake.check("roots/list").map(|()| roots.get());
            async move { list }
        })
    }
}

/// The root for directory `path`: its `file://` URI (of the absolute, symlink-free path;
/// bytes outside the URI's unreserved set and `/` percent-encoded), named by the
/// directory's last component.
pub fn directory_root(path: &std::path::Path) -> std::io::Result<Root> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::fs::canonicalize(path)?;
    if !path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a directory", path.display()),
        ));
    }
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(byte))
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    let root = Root::new(uri);
    Ok(match path.file_name() {
        Some(name) => root.name(name.to_string_lossy()),
        None => root,
    })
}

/// The first root that is not a `file://` URI, if any.
pub fn invalid_root(roots: &[Root]) -> Option<&Root> {
    roots.iter().find(|r| !r.uri.starts_with("file://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_becomes_a_named_file_uri_with_odd_bytes_encoded() {
        let dir = std::env::temp_dir().join(format!("junction root {}%ü", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = directory_root(&dir).unwrap();
        let real = std::fs::canonicalize(&dir).unwrap();
        let parent = real.parent().unwrap().to_str().unwrap();
        assert_eq!(
            root.uri,
            format!(
                "file://{parent}/junction%20root%20{}%25%C3%BC",
                std::process::id()
            )
        );
        assert_eq!(root.name.as_deref(), real.file_name().unwrap().to_str());
        assert!(directory_root(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
