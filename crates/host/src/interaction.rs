//! Putting a server's requests to the user: sampling approval and review, and elicitation.
//!
//! A server may ask the host's model for a completion (`sampling/createMessage`) or ask the
//! user for input (`elicitation/create`). Either way the user stays in the loop: the host
//! hands the request, always with the name of the server that sent it, to whatever
//! implements [`Interaction`] (the CLI's prompts, a GUI, or [`ScriptedInteraction`] in tests
//! and demos). The host never opens a URL itself: in URL mode the user is shown the URL and
//! decides.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use junction::session::BoxFuture;
use junction_protocol::elicitation::{ElicitParams, ElicitValue};
use junction_protocol::sampling::{CreateMessageParams, CreateMessageResult};

/// A server's request for a completion by the host's model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SamplingRequest {
    /// The server's config key: who asks.
    pub server: String,
    /// What it asks: its messages, system prompt, token limit and tools, as sent.
    pub params: CreateMessageParams,
}

/// A server's question for the user.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ElicitationRequest {
    /// The server's config key: who asks.
    pub server: String,
    /// The question: a form to fill, or a URL to visit.
    pub params: ElicitParams,
}

/// The user's yes or no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Go ahead.
    Allow,
    /// Do not.
    Deny,
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Submitted the form with these values (form mode), or agreed to visit the URL (URL
    /// mode, where the values are ignored).
    Accept(BTreeMap<String, ElicitValue>),
    /// Said no.
    Decline,
    /// Dismissed the question without choosing.
    Cancel,
}

/// Whoever answers on the user's behalf. Each method is awaited by the request it concerns
/// only; other requests and the agent loop go on.
pub trait Interaction: Send + Sync {
    /// May this sampling request reach the model?
    fn approve_sampling<'a>(&'a self, request: &'a SamplingRequest) -> BoxFuture<'a, Approval>;

    /// May this answer of the model be returned to the server?
    fn review_sampling<'a>(
        &'a self,
        request: &'a SamplingRequest,
        answer: &'a CreateMessageResult,
    ) -> BoxFuture<'a, Approval>;

    /// Puts the question to the user (show [`ElicitationRequest::server`] with it).
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer>;
}

/// Answers from lists, in order, and keeps what it was asked.
///
/// Once a list is used up: sampling requests are denied, answers pass review (the user
/// already approved the request), and elicitations are cancelled.
#[derive(Debug, Default)]
pub struct ScriptedInteraction {
    approvals: Mutex<VecDeque<Approval>>,
    reviews: Mutex<VecDeque<Approval>>,
    answers: Mutex<VecDeque<ElicitationAnswer>>,
    sampling_asked: Mutex<Vec<SamplingRequest>>,
    reviewed: Mutex<Vec<CreateMessageResult>>,
    elicitations_asked: Mutex<Vec<ElicitationRequest>>,
}

fn pop<T>(queue: &Mutex<VecDeque<T>>) -> Option<T> {
    queue.lock().ok().and_then(|mut q| q.pop_front())
}

fn record<T>(log: &Mutex<Vec<T>>, item: T) {
    if let Ok(mut log) = log.lock() {
        log.push(item);
    }
}

fn copy<T: Clone>(log: &Mutex<Vec<T>>) -> Vec<T> {
    log.lock().map(|l| l.clone()).unwrap_or_default()
}

impl ScriptedInteraction {
    /// Denies every sampling request and cancels every elicitation.
    pub fn new() -> Self {
        ScriptedInteraction::default()
    }

    /// Answers sampling requests with `approvals`, in order.
    pub fn sampling(self, approvals: impl IntoIterator<Item = Approval>) -> Self {
        ScriptedInteraction {
            approvals: Mutex::new(approvals.into_iter().collect()),
            ..self
        }
    }

    /// Reviews the model's answers with `reviews`, in order.
    pub fn reviews(self, reviews: impl IntoIterator<Item = Approval>) -> Self {
        ScriptedInteraction {
            reviews: Mutex::new(reviews.into_iter().collect()),
            ..self
        }
    }

    /// Answers elicitations with `answers`, in order.
    pub fn elicitations(self, answers: impl IntoIterator<Item = ElicitationAnswer>) -> Self {
        ScriptedInteraction {
            answers: Mutex::new(answers.into_iter().collect()),
            ..self
        }
    }

    /// The sampling requests put to the user so far.
    pub fn sampling_asked(&self) -> Vec<SamplingRequest> {
        copy(&self.sampling_asked)
    }

    /// The answers the user reviewed so far.
    pub fn reviewed(&self) -> Vec<CreateMessageResult> {
        copy(&self.reviewed)
    }

    /// The elicitations put to the user so far.
    pub fn elicitations_asked(&self) -> Vec<ElicitationRequest> {
        copy(&self.elicitations_asked)
    }
}

impl Interaction for ScriptedInteraction {
    fn approve_sampling<'a>(&'a self, request: &'a SamplingRequest) -> BoxFuture<'a, Approval> {
        record(&self.sampling_asked, request.clone());
        let approval = pop(&self.approvals).unwrap_or(Approval::Deny);
        Box::pin(async move { approval })
    }

    fn review_sampling<'a>(
        &'a self,
        _request: &'a SamplingRequest,
        answer: &'a CreateMessageResult,
    ) -> BoxFuture<'a, Approval> {
        record(&self.reviewed, answer.clone());
        let approval = pop(&self.reviews).unwrap_or(Approval::Allow);
        Box::pin(async move { approval })
    }

    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        record(&self.elicitations_asked, request.clone());
        let answer = pop(&self.answers).unwrap_or(ElicitationAnswer::Cancel);
        Box::pin(async move { answer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_protocol::elicitation::{FormParams, RequestedSchema};
    use junction_protocol::sampling::SamplingMessage;

    #[tokio::test]
    async fn scripted_answers_come_in_order_then_the_safe_defaults() {
        let interaction = ScriptedInteraction::new()
            .sampling([Approval::Allow])
            .reviews([Approval::Deny])
            .elicitations([ElicitationAnswer::Decline]);
        let sampling = SamplingRequest {
            server: "s".into(),
            params: CreateMessageParams::new(vec![SamplingMessage::user_text("hi")], 10),
        };
        let answer = CreateMessageResult::text("m", "hello");
        assert_eq!(
            interaction.approve_sampling(&sampling).await,
            Approval::Allow
        );
        assert_eq!(
            interaction.approve_sampling(&sampling).await,
            Approval::Deny
        );
        assert_eq!(
            interaction.review_sampling(&sampling, &answer).await,
            Approval::Deny
        );
        assert_eq!(
            interaction.review_sampling(&sampling, &answer).await,
            Approval::Allow
        );
        let question = ElicitationRequest {
            server: "s".into(),
            params: FormParams::new("name?", RequestedSchema::new()).into(),
        };
        assert_eq!(
            interaction.elicit(&question).await,
            ElicitationAnswer::Decline
        );
        assert_eq!(
            interaction.elicit(&question).await,
            ElicitationAnswer::Cancel
        );
        assert_eq!(interaction.sampling_asked().len(), 2);
        assert_eq!(interaction.reviewed(), vec![answer.clone(), answer]);
        assert_eq!(interaction.elicitations_asked()[0].server, "s");
    }
}
