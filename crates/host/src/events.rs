//! What the host reports while it works; a CLI or GUI renders it.
//!
//! The host never prints. Every step it takes (a server starting, text from the model, a
//! tool call, a consent question and its answer, a server's log line) becomes an [`Event`]
//! delivered to an [`EventSink`]: a channel, a callback, or nowhere.

use std::sync::Arc;

use junction_protocol::tools::ToolAnnotations;
use serde_json::Value;
use tokio::sync::mpsc;

use junction_protocol::elicitation::ElicitAction;
use junction_protocol::sampling::CreateMessageResult;

use crate::consent::{ConsentAnswer, ConsentRequest};
use crate::interaction::{ElicitationRequest, SamplingRequest};

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ServerState {
    /// Being started and connected.
    Starting,
    /// Connected and listed.
    Ready {
        /// How many tools it offers.
        tools: usize,
        /// How many prompts it offers.
        prompts: usize,
        /// How many resources and resource templates it offers.
        resources: usize,
    },
    /// Skipped because its config entry says `disabled`.
    Disabled,
    /// Was running and stopped (its process exited, its connection closed); it is started
    /// again on the next call to it, or by a restart.
    Stopped {
        /// Why, in words.
        reason: String,
        /// The last lines it wrote to stderr, if it is a child process.
        stderr_tail: Vec<String>,
    },
    /// Could not be started; the others go on.
    Failed {
        /// Why, in words.
        reason: String,
        /// The last lines it wrote to stderr, if it is a child process.
        stderr_tail: Vec<String>,
    },
}

/// One thing that happened. As JSON (for `junction run --output-format stream-json`), an
/// object whose `event` names the variant in camelCase, with camelCase fields.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// A server changed state.
    ServerStatus {
        /// The server's config key.
        server: String,
        /// Its new state.
        state: ServerState,
    },
    /// The model is being asked (a spinner may turn until its first text or its answer).
    Thinking,
    /// A piece of the model's text, as it arrives; the pieces of one answer joined are the
    /// [`Event::Text`] that follows them.
    TextDelta {
        /// The piece.
        text: String,
    },
    /// The model said something (its whole text for this step).
    Text {
        /// What it said.
        text: String,
    },
    /// The model gave no answer; the turn ends with this error.
    ModelFailed {
        /// Why, in words.
        error: String,
    },
    /// The model finished one answer.
    ModelAnswered {
        /// The tokens it took, when the provider said.
        usage: Option<crate::model::Usage>,
        /// Why it stopped, in the provider's words, when it said.
        stop_reason: Option<String>,
    },
    /// A tool call is about to be decided on and run.
    ToolCallStarted {
        /// The model's id for the call.
        call_id: String,
        /// The server's config key.
        server: String,
        /// The tool's own name.
        tool: String,
        /// The arguments.
        arguments: Value,
    },
    /// The user was asked about a call.
    ConsentAsked {
        /// The call.
        call_id: String,
        /// The question.
        request: ConsentRequest,
    },
    /// The user answered.
    ConsentAnswered {
        /// The call.
        call_id: String,
        /// The answer.
        answer: ConsentAnswer,
    },
    /// A call was not run (a rule, or the user, declined it); the server never saw it.
    ToolCallDenied {
        /// The call.
        call_id: String,
        /// Why.
        reason: String,
    },
    /// A tool call ended (also when it was denied or failed). Calls of one model turn run
    /// concurrently, so finishes may come in any order; the id says which call ended.
    ToolCallFinished {
        /// The call.
        call_id: String,
        /// Whether the model gets an error result.
        is_error: bool,
        /// The text the model gets.
        output: String,
    },
    /// A tool's result was longer than the host lets into the conversation and was cut.
    /// Comes before the call's [`Event::ToolCallFinished`], whose output is the cut text.
    ToolOutputCut {
        /// The call.
        call_id: String,
        /// How many characters the result had.
        total_chars: usize,
        /// How many the conversation keeps.
        kept_chars: usize,
    },
    /// A resource was attached to the conversation.
    ContextAttached {
        /// `@server:uri`.
        source: String,
        /// How many characters of content entered the conversation.
        chars: usize,
    },
    /// A server sent a log message (`notifications/message`).
    LogLine {
        /// The server's config key.
        server: String,
        /// The level, e.g. `info`.
        level: String,
        /// The logger name, if any.
        logger: Option<String>,
        /// The message data.
        data: Value,
    },
    /// A server sent another notification.
    ServerNotification {
        /// The server's config key.
        server: String,
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
    /// A server asked the host's model for a completion (`sampling/createMessage`).
    SamplingRequested {
        /// The request, with the server that sent it.
        request: SamplingRequest,
    },
    /// A sampling request was refused (by policy or by the user); the server got error -1.
    SamplingDenied {
        /// The server's config key.
        server: String,
        /// Why.
        reason: String,
    },
    /// A sampling request was answered; the server got this result.
    SamplingAnswered {
        /// The server's config key.
        server: String,
        /// The answer.
        result: CreateMessageResult,
    },
    /// A server asked the user a question (`elicitation/create`).
    ElicitationRequested {
        /// The question, with the server that asked it.
        request: ElicitationRequest,
    },
    /// The user answered a server's question.
    ElicitationAnswered {
        /// The server's config key.
        server: String,
        /// Accept, decline or cancel.
        action: ElicitAction,
    },
    /// A server said a URL-mode elicitation finished (`notifications/elicitation/complete`).
    ElicitationCompleted {
        /// The server's config key.
        server: String,
        /// The elicitation.
        elicitation_id: String,
    },
    /// A server's tools changed and were listed again; the model sees the new list from its
    /// next step on.
    ToolsChanged {
        /// The server's config key.
        server: String,
        /// The names of its tools now.
        tools: Vec<String>,
    },
    /// A server's prompts changed and were listed again.
    PromptsChanged {
        /// The server's config key.
        server: String,
        /// How many prompts it offers now.
        prompts: usize,
    },
    /// A server's resources changed and were listed again.
    ResourcesChanged {
        /// The server's config key.
        server: String,
        /// How many resources and resource templates it offers now.
        resources: usize,
    },
    /// A resource the host subscribed to changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The server's config key.
        server: String,
        /// The resource.
        uri: String,
    },
    /// The roots offered to a server changed; it was told.
    RootsChanged {
        /// The server's config key.
        server: String,
        /// The root URIs now.
        roots: Vec<String>,
    },
    /// The host noticed a problem that did not stop it (e.g. an answer it could not save).
    Warning {
        /// What happened.
        message: String,
    },
    /// The agent loop stopped because it reached its step limit.
    StepLimitReached {
        /// The limit.
        steps: usize,
    },
    /// The turn was interrupted by the user; its running calls were cancelled.
    Interrupted,
    /// A running tool call reported progress.
    ToolProgress {
        /// The call.
        call_id: String,
        /// Progress so far.
        progress: f64,
        /// The total, when the server knows it.
        total: Option<f64>,
        /// What it is doing, in the server's words.
        message: Option<String>,
    },
    /// A running tool call is a task on its server, and the task's status changed (its
    /// first status included).
    TaskStatus {
        /// The call.
        call_id: String,
        /// The server's id for the task.
        task_id: String,
        /// Where it stands.
        status: junction_protocol::tasks::TaskStatus,
        /// What it is doing, in the server's words.
        message: Option<String>,
    },
}

/// Annotations in a form safe to show: only what the server declared.
pub fn describe_annotations(annotations: Option<&ToolAnnotations>) -> String {
    let Some(a) = annotations else {
        return "no annotations".to_owned();
    };
    let mut parts = Vec::new();
    let mut hint = |name: &str, value: Option<bool>| {
        if let Some(v) = value {
            parts.push(format!("{name}={v}"));
        }
    };
    hint("readOnly", a.read_only_hint);
    hint("destructive", a.destructive_hint);
    hint("idempotent", a.idempotent_hint);
    hint("openWorld", a.open_world_hint);
    if parts.is_empty() {
        "no hints".to_owned()
    } else {
        parts.join(", ")
    }
}

type Callback = Arc<dyn Fn(Event) + Send + Sync>;

/// Where events go. Cheap to clone.
#[derive(Clone, Default)]
pub struct EventSink {
    target: Option<Callback>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("connected", &self.target.is_some())
            .finish()
    }
}

impl EventSink {
    /// A sink whose events arrive on the returned receiver.
    pub fn channel() -> (EventSink, mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        // A receiver that went away just means nobody is watching any more.
        let sink = EventSink::callback(move |event| {
            let _ = tx.send(event);
        });
        (sink, rx)
    }

    /// A sink that calls `f` for each event (keep it short: the host waits for it).
    pub fn callback(f: impl Fn(Event) + Send + Sync + 'static) -> EventSink {
        EventSink {
            target: Some(Arc::new(f)),
        }
    }

    /// A sink that drops everything.
    pub fn discard() -> EventSink {
        EventSink { target: None }
    }

    /// Delivers one event.
    pub fn emit(&self, event: Event) {
        if let Some(target) = &self.target {
            target(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn channel_sinks_deliver_in_order_and_survive_a_dropped_receiver() {
        let (sink, mut rx) = EventSink::channel();
        sink.emit(Event::Text { text: "a".into() });
        sink.emit(Event::StepLimitReached { steps: 2 });
        assert_eq!(rx.recv().await, Some(Event::Text { text: "a".into() }));
        assert_eq!(rx.recv().await, Some(Event::StepLimitReached { steps: 2 }));
        drop(rx);
        sink.emit(Event::Text {
            text: "unseen".into(),
        });
    }

    #[test]
    fn callback_sinks_see_every_event_and_discard_sees_none() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let sink = EventSink::callback(move |e| log.lock().unwrap().push(e));
        sink.clone().emit(Event::Warning {
            message: "w".into(),
        });
        EventSink::discard().emit(Event::Warning {
            message: "x".into(),
        });
        assert_eq!(
            *seen.lock().unwrap(),
            vec![Event::Warning {
                message: "w".into()
            }]
        );
    }

    #[test]
    fn annotations_are_described_as_declared() {
        assert_eq!(describe_annotations(None), "no annotations");
        let a = ToolAnnotations::default()
            .read_only(true)
            .destructive(false);
        assert_eq!(
            describe_annotations(Some(&a)),
            "readOnly=true, destructive=false"
        );
    }
}
