//! Asking the user whether a tool call may run.
//!
//! The host never talks to a terminal: it hands a [`ConsentRequest`] to whatever implements
//! [`Consent`] (the CLI's prompt, a GUI, or [`ScriptedConsent`] in tests and demos) and acts
//! on the [`ConsentAnswer`].

use std::collections::VecDeque;
use std::sync::Mutex;

use junction::session::BoxFuture;
use junction_protocol::tools::ToolAnnotations;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One question to the user.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsentRequest {
    /// The server's config key.
    pub server: String,
    /// The tool's own name.
    pub tool: String,
    /// The name the model used.
    pub model_name: String,
    /// The full arguments the server would receive.
    pub arguments: Value,
    /// The tool's annotations as the server declared them (believed only if trusted).
    pub annotations: Option<ToolAnnotations>,
    /// Whether the server is trusted.
    pub trusted: bool,
    /// Why the policy asks.
    pub reason: String,
    /// Whether an [`ConsentAnswer::AlwaysAllow`] or [`ConsentAnswer::AllowForSession`]
    /// would be remembered (not when a rule asks, since the rule would ask again anyway).
    pub rememberable: bool,
    /// When the tool was allowed before in another definition: what changed, one line per
    /// field (`description: "old" → "new"`). The user should read it before answering.
    pub changes: Vec<String>,
    /// Whether the tool's name has look-alike or invisible characters.
    pub disguised: bool,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ConsentAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this call and every later call of this tool until the host exits (not saved).
    AllowForSession,
    /// Run this call and every later call of this tool, remembered across runs.
    AlwaysAllow,
    /// Do not run it.
    Deny,
    /// Nobody could be asked (a run without a person), so it does not run.
    NobodyToAsk,
}

impl ConsentAnswer {
    /// Whether the call runs.
    pub fn allows(self) -> bool {
        !matches!(self, ConsentAnswer::Deny | ConsentAnswer::NobodyToAsk)
    }
}

/// Whoever answers consent questions.
pub trait Consent: Send + Sync {
    /// Asks about one call; the agent loop waits for the answer.
    fn ask<'a>(&'a self, request: &'a ConsentRequest) -> BoxFuture<'a, ConsentAnswer>;
}

/// Answers from a list, in order; once the list is used up every answer is
/// [`ConsentAnswer::Deny`]. Keeps the questions it was asked.
#[derive(Debug, Default)]
pub struct ScriptedConsent {
    answers: Mutex<VecDeque<ConsentAnswer>>,
    asked: Mutex<Vec<ConsentRequest>>,
}

impl ScriptedConsent {
    /// Answers `answers` in order, then denies.
    pub fn new(answers: impl IntoIterator<Item = ConsentAnswer>) -> Self {
        ScriptedConsent {
            answers: Mutex::new(answers.into_iter().collect()),
            asked: Mutex::new(Vec::new()),
        }
    }

    /// Denies everything (for non-interactive runs).
    pub fn deny_all() -> Self {
        ScriptedConsent::default()
    }

    /// The questions asked so far.
    pub fn asked(&self) -> Vec<ConsentRequest> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Consent for ScriptedConsent {
    fn ask<'a>(&'a self, request: &'a ConsentRequest) -> BoxFuture<'a, ConsentAnswer> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(request.clone());
        }
        let answer = self
            .answers
            .lock()
            .ok()
            .and_then(|mut a| a.pop_front())
            .unwrap_or(ConsentAnswer::Deny);
        Box::pin(async move { answer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ConsentRequest {
        ConsentRequest {
            server: "s".into(),
            tool: "t".into(),
            model_name: "s__t".into(),
            arguments: serde_json::json!({"a": 1}),
            annotations: None,
            trusted: false,
            reason: "r".into(),
            rememberable: true,
            changes: Vec::new(),
            disguised: false,
        }
    }

    #[tokio::test]
    async fn scripted_answers_come_in_order_then_deny() {
        let consent = ScriptedConsent::new([
            ConsentAnswer::AlwaysAllow,
            ConsentAnswer::AllowForSession,
            ConsentAnswer::AllowOnce,
        ]);
        assert_eq!(consent.ask(&request()).await, ConsentAnswer::AlwaysAllow);
        assert_eq!(
            consent.ask(&request()).await,
            ConsentAnswer::AllowForSession
        );
        assert_eq!(consent.ask(&request()).await, ConsentAnswer::AllowOnce);
        assert_eq!(consent.ask(&request()).await, ConsentAnswer::Deny);
        assert_eq!(consent.asked().len(), 4);
        assert_eq!(consent.asked()[0].arguments, serde_json::json!({"a": 1}));
    }

    #[test]
    fn only_deny_refuses() {
        assert!(ConsentAnswer::AllowOnce.allows());
        assert!(ConsentAnswer::AllowForSession.allows());
        assert!(ConsentAnswer::AlwaysAllow.allows());
        assert!(!ConsentAnswer::Deny.allows());
        assert!(!ConsentAnswer::NobodyToAsk.allows());
    }
}
